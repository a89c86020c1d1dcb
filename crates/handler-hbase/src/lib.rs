//! The HBase storage handler (`org.apache.hadoop.hive.hbase.HBaseStorageHandler`, short name
//! HBASE) on the Cloud Bigtable API, which is HBase's data model (row keys, column families and
//! qualifiers, timestamped cells, ordered row ranges), against Google's service or its local
//! emulator (`BIGTABLE_EMULATOR_HOST`).
//!
//! - Hive's properties with Hive's meaning ([`mapping`]): `hbase.columns.mapping`,
//!   `hbase.table.default.storage.type`, `hbase.table.name`; where the table is:
//!   `google.bigtable.project.id` and `google.bigtable.instance.id`.
//! - **Managed** CREATE makes the Bigtable table, one family per mapped family and one empty
//!   family naming the creating operation (the tag, see [`hook`]); DROP deletes it only when
//!   the tag proves this table's CREATE made it. **External** needs the table and its families.
//! - **Reads** ([`scan`]) turn conditions on the row key into row ranges and row sets, and read
//!   only the mapped families and qualifiers.
//! - **Writes** ([`write`]): INSERT INTO as batched mutations, each row atomic; INSERT
//!   OVERWRITE is refused (puts cannot remove the rows already there).

#![warn(missing_docs)]

mod client;
mod codec;
mod hook;
mod keys;
mod location;
mod mapping;
mod rows;
mod scan;
mod write;

use std::sync::Arc;

use apiary_metastore::Table;
use apiary_storage::handler::{
    Capabilities, HandlerError, HandlerResult, JobProperties, MetaHook, StorageHandler, WriteMode,
};
use async_trait::async_trait;
use datafusion::catalog::TableProvider;
use datafusion::execution::SendableRecordBatchStream;

use crate::client::Instances;
use crate::hook::HBaseHook;
use crate::location::Location;
use crate::mapping::Mapping;

/// Hive's class name.
pub const CLASS: &str = "org.apache.hadoop.hive.hbase.HBaseStorageHandler";
/// The HBase handler.
#[derive(Debug, Clone, Default)]
pub struct HBaseHandler {
    hook: HBaseHook,
}

impl HBaseHandler {
    /// A handler that connects to Bigtable instances as its tables name them.
    pub fn new() -> Self {
        Self {
            hook: HBaseHook {
                instances: Arc::new(Instances::default()),
            },
        }
    }
}

#[async_trait]
impl StorageHandler for HBaseHandler {
    fn class_name(&self) -> &'static str {
        CLASS
    }

    fn short_name(&self) -> &'static str {
        "HBASE"
    }

    fn system_name(&self) -> &'static str {
        "HBase"
    }

    fn serde_class(&self) -> &'static str {
        mapping::SERDE
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            managed: true,
            external: true,
            insert: true,
            overwrite: false,
            ..Capabilities::default()
        }
    }

    fn validate(&self, table: &Table) -> HandlerResult<()> {
        Location::of(table)?;
        Mapping::of(table).map(|_| ())
    }

    fn meta_hook(&self) -> Option<&dyn MetaHook> {
        Some(&self.hook)
    }

    async fn table_provider(
        &self,
        table: &Table,
        _job: JobProperties,
    ) -> HandlerResult<Arc<dyn TableProvider>> {
        let mapping = Mapping::of(table)?;
        let (location, instance) = self.hook.open(table).await?;
        Ok(Arc::new(scan::HBaseTable::new(
            table, location, mapping, instance,
        )))
    }

    async fn describe_object(&self, table: &Table) -> HandlerResult<Vec<(String, String)>> {
        let (location, instance) = self.hook.open(table).await?;
        let families = instance.families(&location.table).await?;
        Ok(vec![
            (
                "bigtable.table".into(),
                instance.table_name(&location.table),
            ),
            (
                "bigtable.column.families".into(),
                families
                    .map(|f| f.into_iter().collect::<Vec<_>>().join(","))
                    .unwrap_or_else(|| "(no such table)".into()),
            ),
        ])
    }

    async fn insert(
        &self,
        table: &Table,
        _job: JobProperties,
        rows: SendableRecordBatchStream,
        mode: WriteMode,
    ) -> HandlerResult<u64> {
        if mode.overwrites() {
            return Err(HandlerError::Unsupported(format!(
                "INSERT OVERWRITE is not supported for a table stored by {CLASS}"
            )));
        }
        let mapping = Mapping::of(table)?;
        let (location, instance) = self.hook.open(table).await?;
        write::insert(table, &location, &mapping, &instance, rows).await
    }
}
