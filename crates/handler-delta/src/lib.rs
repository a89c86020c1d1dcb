//! The Delta Lake storage handler (`io.delta.hive.DeltaStorageHandler`, short name DELTA): a
//! table whose rows and history are a Delta table (a folder of Parquet files and its
//! `_delta_log`), read and written through `deltalake` on Apiary's DataFusion.
//!
//! - **External**, as Hive's connector: LOCATION is the Delta table's root; the declared
//!   columns must be the log's (names, order, types, with the connector's wording); PARTITIONED
//!   BY is refused (the log has the partitioning); DROP keeps everything.
//! - **Managed** (beyond Hive): CREATE makes a new Delta table at the table's location (under
//!   the warehouse unless given), PARTITIONED BY naming its partition columns, its
//!   configuration tagged with the creating operation ([`CREATED_BY`]); DROP deletes the folder
//!   only when the tag names this table's CREATE ([`hook`]).
//! - **Reads** go through deltalake's scan: projection, filters (partition values and file
//!   statistics skip files) and limit pushed into it ([`read`]).
//! - **Writes**: INSERT INTO appends and INSERT OVERWRITE replaces, each one Delta commit
//!   ([`write`]).

#![warn(missing_docs)]

mod errors;
mod hook;
mod read;
mod schema;
mod table;
mod write;

use std::sync::Arc;

use apiary_metastore::Table;
use apiary_storage::handler::{
    AlterOp, AsOf, Capabilities, HandlerResult, JobProperties, MetaHook, StorageHandler, WriteMode,
    CREATED_BY,
};
use apiary_storage::Reach;
use async_trait::async_trait;
use datafusion::catalog::TableProvider;
use datafusion::execution::SendableRecordBatchStream;
pub use write::{TXN_APP_ID, TXN_VERSION};

use crate::errors::{def_err, remote_err};
use crate::hook::DeltaHook;
use crate::table::{existing, not_a_table, open, open_at, root_url};

/// Hive's class name.
pub const CLASS: &str = "io.delta.hive.DeltaStorageHandler";
/// The SerDe Hive's connector names for its tables.
const SERDE: &str = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe";

/// The Delta handler.
#[derive(Debug, Clone, Default)]
pub struct DeltaHandler {
    hook: DeltaHook,
}

impl DeltaHandler {
    /// A handler whose tables may use only the folders `reach` allows.
    pub fn new(reach: Arc<Reach>) -> Self {
        Self {
            hook: DeltaHook { reach },
        }
    }
}

#[async_trait]
impl StorageHandler for DeltaHandler {
    fn class_name(&self) -> &'static str {
        CLASS
    }

    fn short_name(&self) -> &'static str {
        "DELTA"
    }

    fn serde_class(&self) -> &'static str {
        SERDE
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            managed: true,
            external: true,
            insert: true,
            overwrite: true,
            alter: vec![AlterOp::AddProps, AlterOp::DropProps],
            location: true,
            partition_columns: true,
        }
    }

    fn session_keys(&self) -> &'static [&'static str] {
        &[TXN_APP_ID, TXN_VERSION]
    }

    fn validate(&self, table: &Table) -> HandlerResult<()> {
        root_url(&self.hook.reach, table).map(|_| ())
    }

    fn meta_hook(&self) -> Option<&dyn MetaHook> {
        Some(&self.hook)
    }

    fn job_properties(&self, table: &Table) -> JobProperties {
        JobProperties(
            table
                .parameters
                .iter()
                .filter(|(k, _)| k.as_str() == CREATED_BY)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        )
    }

    async fn table_provider(
        &self,
        table: &Table,
        _job: JobProperties,
    ) -> HandlerResult<Arc<dyn TableProvider>> {
        let delta = existing(&self.hook.reach, table).await?;
        read::provider(table, &delta).await
    }

    async fn describe_object(&self, table: &Table) -> HandlerResult<Vec<(String, String)>> {
        let delta = existing(&self.hook.reach, table).await?;
        let snapshot = delta.snapshot().map_err(remote_err)?;
        Ok(vec![
            ("delta.version".into(), snapshot.version().to_string()),
            (
                "delta.partitionColumns".into(),
                snapshot.metadata().partition_columns().join(","),
            ),
        ])
    }

    async fn table_provider_as_of(
        &self,
        table: &Table,
        _job: JobProperties,
        as_of: AsOf,
    ) -> HandlerResult<Arc<dyn TableProvider>> {
        let url = root_url(&self.hook.reach, table)?;
        let delta = match as_of {
            AsOf::Version(v) => open_at(&url, Some(v)).await?,
            AsOf::Time(ms) => {
                let when = chrono::DateTime::from_timestamp_millis(ms)
                    .ok_or_else(|| def_err(format!("{ms} ms is no time")))?;
                match open(&url).await? {
                    Some(mut delta) => {
                        delta.load_with_datetime(when).await.map_err(remote_err)?;
                        // deltalake gives the first version for an earlier time; Hive's
                        // answer is that the table had no state then.
                        let state = delta.snapshot().map_err(remote_err)?;
                        let committed = state.version_timestamp(state.version());
                        if committed.is_some_and(|t| t > ms) {
                            return Err(def_err(format!(
                                "table {} has no version at or before {} (its first commit is later)",
                                table.qualified_name(),
                                when.format("%Y-%m-%d %H:%M:%S%.3f")
                            )));
                        }
                        Some(delta)
                    }
                    None => None,
                }
            }
        };
        let delta = delta.ok_or_else(|| not_a_table(&url))?;
        read::provider(table, &delta).await
    }

    async fn insert(
        &self,
        table: &Table,
        job: JobProperties,
        rows: SendableRecordBatchStream,
        mode: WriteMode,
    ) -> HandlerResult<u64> {
        let txn = write::AppTransaction::of(&job)?;
        let delta = existing(&self.hook.reach, table).await?;
        write::insert(table, delta, rows, mode, txn).await
    }
}
