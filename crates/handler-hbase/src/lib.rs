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

mod client;
mod codec;
mod hook;
mod keys;
mod mapping;
mod rows;
mod scan;
mod write;

use std::sync::Arc;

use apiary_metastore::Table;
use async_trait::async_trait;
use datafusion::catalog::TableProvider;
use datafusion::execution::SendableRecordBatchStream;

use apiary_storage::handler::{
    Capabilities, HandlerError, HandlerResult, JobProperties, MetaHook, StorageHandler, WriteMode,
};

use crate::client::Instances;
use crate::hook::HBaseHook;
use crate::mapping::{properties, Mapping};

/// Hive's class name.
pub const CLASS: &str = "org.apache.hadoop.hive.hbase.HBaseStorageHandler";
/// The Bigtable table a Hive table is (TBLPROPERTIES as written, SERDEPROPERTIES lower-cased).
const TABLE_NAME: &str = "hbase.table.name";
/// The Bigtable project and instance (the keys Bigtable's HBase connector reads).
const PROJECT: &str = "google.bigtable.project.id";
const INSTANCE: &str = "google.bigtable.instance.id";
/// Hive's prefix of names in the default database, left out of the derived table name.
const DEFAULT_PREFIX: &str = "default.";

fn def_err(msg: impl Into<String>) -> HandlerError {
    HandlerError::Definition(msg.into())
}

/// Where a Hive table's rows are: a Bigtable project, instance and table id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Location {
    pub(crate) project: String,
    pub(crate) instance: String,
    pub(crate) table: String,
}

impl Location {
    /// The location `table`'s properties name, as Hive's HBaseMetaHook derives the name.
    pub(crate) fn of(table: &Table) -> HandlerResult<Location> {
        let name = match (
            table.parameters.get(TABLE_NAME),
            table.sd.serde.parameters.get(TABLE_NAME),
        ) {
            (Some(n), _) => n.clone(),
            (None, Some(n)) => n.to_lowercase(),
            (None, None) => {
                let full = format!("{}.{}", table.database, table.name).to_lowercase();
                full.strip_prefix(DEFAULT_PREFIX)
                    .map(str::to_string)
                    .unwrap_or(full)
            }
        };
        // Bigtable's table ids: [_a-zA-Z0-9][-_.a-zA-Z0-9]*, at most 50 characters.
        let valid = name.len() <= 50
            && name
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if !valid {
            return Err(def_err(format!(
                "'{name}' cannot name a Bigtable table (letters, digits, '_', '-' and '.', at most 50, not starting with '-' or '.'): set {TABLE_NAME}"
            )));
        }
        let props = properties(table);
        let required = |key: &str| {
            props
                .get(key)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| {
                    def_err(format!(
                        "{key} must be set in TBLPROPERTIES: the Bigtable {} that holds HBase table {name}",
                        if key == PROJECT { "project" } else { "instance" }
                    ))
                })
        };
        Ok(Location {
            project: required(PROJECT)?,
            instance: required(INSTANCE)?,
            table: name,
        })
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::tests::table;

    #[test]
    fn the_table_name_is_derived_as_hive_derives_it() {
        let props = [(PROJECT, "p"), (INSTANCE, "i")];
        let mut t = table(&[("k", "string"), ("a", "string")], ":key,cf:a", &props);
        assert_eq!(Location::of(&t).unwrap().table, "t");
        t.database = "Sales".into();
        assert_eq!(Location::of(&t).unwrap().table, "sales.t");
        t.sd.serde
            .parameters
            .insert(TABLE_NAME.into(), "Other".into());
        assert_eq!(Location::of(&t).unwrap().table, "other");
        t.parameters.insert(TABLE_NAME.into(), "Kept".into());
        assert_eq!(Location::of(&t).unwrap().table, "Kept");
        t.parameters.insert(TABLE_NAME.into(), "no/slash".into());
        assert!(Location::of(&t).is_err());
        t.parameters.remove(TABLE_NAME);
        t.sd.serde.parameters.remove(PROJECT);
        let e = Location::of(&t).unwrap_err().to_string();
        assert!(
            e.starts_with("google.bigtable.project.id must be set"),
            "{e}"
        );
    }
}
