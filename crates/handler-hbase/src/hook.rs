//! The meta hook of HBase tables on Bigtable. Bigtable tables have no properties to carry a
//! tag, so a managed CREATE makes, in the same atomic CreateTable call, one more column family
//! named after the creating operation (`apiary-op-<intent id>`, [`tag_family`]). No column
//! maps it, so reads never see it; DROP and recovery delete a table only when that family
//! names the operation that created it.

use std::collections::BTreeSet;
use std::sync::Arc;

use apiary_metastore::{Table, TableType};
use apiary_storage::handler::{
    HandlerError, HandlerResult, MetaHook, ObjectState, OpTag, CREATED_BY,
};
use async_trait::async_trait;

use crate::client::{Instance, Instances};
use crate::location::Location;
use crate::mapping::Mapping;

/// Prefix of the family that tags a table with the operation that created it.
pub(crate) const TAG_PREFIX: &str = "apiary-op-";

/// The tag family of operation `id`.
pub(crate) fn tag_family(id: &str) -> String {
    format!("{TAG_PREFIX}{id}")
}

fn def_err(msg: impl Into<String>) -> HandlerError {
    HandlerError::Definition(msg.into())
}

/// The hook, with the server's Bigtable connections.
#[derive(Debug, Clone, Default)]
pub(crate) struct HBaseHook {
    pub(crate) instances: Arc<Instances>,
}

impl HBaseHook {
    /// Where `table` is, and its instance's clients.
    pub(crate) async fn open(&self, table: &Table) -> HandlerResult<(Location, Arc<Instance>)> {
        let location = Location::of(table)?;
        let instance = self
            .instances
            .get(&location.project, &location.instance)
            .await?;
        Ok((location, instance))
    }
}

#[async_trait]
impl MetaHook for HBaseHook {
    async fn pre_create_table(&self, table: &Table, op: &OpTag) -> HandlerResult<()> {
        let mapping = Mapping::of(table)?;
        let (location, instance) = self.open(table).await?;
        let name = &location.table;
        let existing = instance.families(name).await?;
        if table.table_type == TableType::External {
            let Some(families) = existing else {
                return Err(def_err(format!(
                    "HBase table {name} doesn't exist while the table is declared as an external table."
                )));
            };
            if let Some(missing) = mapping.families().iter().find(|f| !families.contains(*f)) {
                return Err(def_err(format!(
                    "Column Family {missing} is not defined in hbase table {name}"
                )));
            }
            return Ok(());
        }
        let tag = tag_family(&op.id);
        let already = || {
            def_err(format!(
                "Table {name} already exists within HBase; use CREATE EXTERNAL TABLE instead to register it in Hive."
            ))
        };
        match existing {
            // Made by this very operation before a crash: done already.
            Some(families) if families.contains(&tag) => return Ok(()),
            Some(_) => return Err(already()),
            None => {}
        }
        let mut families: BTreeSet<String> = mapping.families();
        if let Some(bad) = families.iter().find(|f| f.starts_with(TAG_PREFIX)) {
            return Err(def_err(format!(
                "column family {bad}: names starting with {TAG_PREFIX} are Apiary's own"
            )));
        }
        families.insert(tag);
        if !instance.create(name, &families).await? {
            // Another made a table of that name between the look and the create.
            return Err(already());
        }
        Ok(())
    }

    async fn rollback_create_table(&self, table: &Table, op: &OpTag) -> HandlerResult<()> {
        if table.table_type == TableType::External {
            return Ok(());
        }
        if self.object_state(table, op).await? == ObjectState::CreatedBy {
            let (location, instance) = self.open(table).await?;
            instance.delete(&location.table).await?;
        }
        Ok(())
    }

    async fn commit_drop_table(&self, table: &Table, delete_data: bool) -> HandlerResult<()> {
        if !delete_data || table.table_type != TableType::Managed {
            return Ok(());
        }
        let (location, instance) = self.open(table).await?;
        let Some(families) = instance.families(&location.table).await? else {
            return Ok(());
        };
        let ours = table
            .parameters
            .get(CREATED_BY)
            .is_some_and(|id| families.contains(&tag_family(id)));
        if !ours {
            tracing::warn!(table = %table.qualified_name(), bigtable = %location.table, "the Bigtable table is not the one this table created; kept");
            return Ok(());
        }
        instance.delete(&location.table).await
    }

    async fn object_state(&self, table: &Table, op: &OpTag) -> HandlerResult<ObjectState> {
        let (location, instance) = self.open(table).await?;
        Ok(match instance.families(&location.table).await? {
            None => ObjectState::Absent,
            Some(f) if f.contains(&tag_family(&op.id)) => ObjectState::CreatedBy,
            Some(_) => ObjectState::Other,
        })
    }
}
