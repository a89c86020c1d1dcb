//! The meta hook of JDBC tables: a managed table creates its remote table (tagged with the
//! operation that made it) and DROP removes it, but only the one its CREATE made; an external
//! table is checked against the remote columns.

use std::sync::Arc;

use apiary_metastore::{Column, Table, TableType};
use apiary_storage::handler::{AlterOp, HandlerResult, MetaHook, ObjectState, OpTag, CREATED_BY};
use apiary_storage::types::HiveType;
use apiary_storage::Reach;
use async_trait::async_trait;

use crate::connect::remote_of_table;
use crate::properties::CONNECTION_KEYS;
use crate::remote::{
    all_properties, def_err, ident, query_columns, remote_columns, remote_tag, remote_transaction,
    Remote,
};

/// Tag text of an object made by operation `op`.
fn tag(op: &OpTag) -> String {
    format!("apiary-op:{}", op.id)
}

pub(crate) fn check_columns(table: &Table, remote_cols: &[String]) -> HandlerResult<()> {
    let declared: Vec<String> = table.sd.columns.iter().map(|c| c.name.clone()).collect();
    if declared.len() != remote_cols.len() {
        return Err(def_err(format!(
            "Column numbers do not match. Remote table columns are [{}] and declared table columns in Hive external table are [{}]",
            remote_cols.join(", "),
            declared.join(", ")
        )));
    }
    for (d, r) in declared.iter().zip(remote_cols) {
        if !d.eq_ignore_ascii_case(r) {
            return Err(def_err(format!(
                "Column names do not match. Remote table columns are [{}] and declared table columns in Hive external table are [{}]",
                remote_cols.join(", "),
                declared.join(", ")
            )));
        }
    }
    Ok(())
}

/// The hook, with the server's limits on what tables may reach.
#[derive(Debug, Clone, Default)]
pub(crate) struct JdbcHook {
    pub(crate) reach: Arc<Reach>,
}

#[async_trait]
impl MetaHook for JdbcHook {
    async fn pre_create_table(&self, table: &Table, op: &OpTag) -> HandlerResult<()> {
        let remote = remote_of_table(&self.reach, table)?;
        let existing = remote_columns(&remote).await?;
        if table.table_type == TableType::External {
            return match (&remote.table, existing) {
                (None, _) => {
                    // A query: it must run, and give as many columns as declared.
                    let cols = query_columns(&remote).await?;
                    check_columns(table, &cols)
                }
                (Some(name), None) => Err(def_err(format!(
                    "The remote table {} does not exist in {} (an external JDBC table needs it; a managed one creates it)",
                    name.sql(),
                    remote.kind.name()
                ))),
                (Some(_), Some(cols)) => check_columns(table, &cols),
            };
        }
        let Some(name) = &remote.table else {
            return Err(def_err(
                "A managed JDBC table needs hive.sql.table (hive.sql.query is for external tables)",
            ));
        };
        if existing.is_some() {
            // Made by this very operation before a crash: done already.
            if remote_tag(&remote).await?.as_deref() == Some(tag(op).as_str()) {
                return Ok(());
            }
            return Err(def_err(format!(
                "The remote table {} already exists in {}; declare the table EXTERNAL to use it",
                name.sql(),
                remote.kind.name()
            )));
        }
        let cols = table
            .sd
            .columns
            .iter()
            .map(|c| {
                let t = HiveType::parse(&c.type_name)
                    .ok_or_else(|| def_err(format!("unknown type {}", c.type_name)))?;
                Ok(format!(
                    "{} {}",
                    ident(remote.kind, &c.name),
                    remote.db.column_type(&t)?
                ))
            })
            .collect::<HandlerResult<Vec<_>>>()?;
        let statements = remote.db.create_statements(name, &cols, &tag(op));
        remote_transaction(&remote, statements).await
    }

    async fn rollback_create_table(&self, table: &Table, op: &OpTag) -> HandlerResult<()> {
        if table.table_type == TableType::External {
            return Ok(());
        }
        let remote = remote_of_table(&self.reach, table)?;
        // An interrupted CREATE may still be running remotely (MySQL commits DDL by itself):
        // stop it first, or it could complete after this undo.
        remote.db.stop_tagged(&tag(op)).await?;
        if self.object_state(table, op).await? == ObjectState::CreatedBy {
            drop_remote(&remote).await?;
        }
        Ok(())
    }

    async fn commit_drop_table(&self, table: &Table, delete_data: bool) -> HandlerResult<()> {
        if !delete_data {
            return Ok(());
        }
        let remote = remote_of_table(&self.reach, table)?;
        // Only the remote table this table's CREATE made: its tag names that operation.
        let found = remote_tag(&remote).await?;
        let ours = match table.parameters.get(CREATED_BY) {
            Some(op) => found.as_deref() == Some(tag(&OpTag { id: op.clone() }).as_str()),
            None => found
                .as_deref()
                .is_some_and(|t| t.starts_with("apiary-op:")),
        };
        if !ours {
            if remote_columns(&remote).await?.is_some() {
                tracing::warn!(table = %table.qualified_name(), "the remote table is not the one this table created; kept");
            }
            return Ok(());
        }
        drop_remote(&remote).await
    }

    async fn object_state(&self, table: &Table, op: &OpTag) -> HandlerResult<ObjectState> {
        let remote = remote_of_table(&self.reach, table)?;
        if remote.table.is_none() || remote_columns(&remote).await?.is_none() {
            return Ok(ObjectState::Absent);
        }
        Ok(
            if remote_tag(&remote).await?.as_deref() == Some(tag(op).as_str()) {
                ObjectState::CreatedBy
            } else {
                ObjectState::Other
            },
        )
    }

    async fn pre_alter_table(&self, old: &Table, new: &Table, op: AlterOp) -> HandlerResult<()> {
        if op != AlterOp::AddCols {
            // A managed table owns its remote table: pointing it elsewhere would make DROP
            // delete another one.
            let moved = CONNECTION_KEYS
                .iter()
                .find(|k| all_properties(old).get(**k) != all_properties(new).get(**k));
            if let (Some(k), TableType::Managed) = (moved, old.table_type) {
                return Err(def_err(format!(
                    "{k} of a managed JDBC table cannot be changed (the table owns its remote table)"
                )));
            }
            return Ok(());
        }
        let remote = remote_of_table(&self.reach, new)?;
        let added: Vec<&Column> = new.sd.columns[old.sd.columns.len().min(new.sd.columns.len())..]
            .iter()
            .collect();
        if new.table_type == TableType::External || remote.table.is_none() {
            // The remote table must already have them.
            let cols = match &remote.table {
                Some(_) => remote_columns(&remote).await?.unwrap_or_default(),
                None => query_columns(&remote).await?,
            };
            return check_columns(new, &cols);
        }
        let Some(name) = &remote.table else {
            return Ok(());
        };
        // Columns a cut-short earlier attempt already added are not added again.
        let present = remote_columns(&remote).await?.unwrap_or_default();
        let statements = added
            .iter()
            .filter(|c| !present.iter().any(|p| p.eq_ignore_ascii_case(&c.name)))
            .map(|c| {
                let t = HiveType::parse(&c.type_name)
                    .ok_or_else(|| def_err(format!("unknown type {}", c.type_name)))?;
                Ok(format!(
                    "ALTER TABLE {} ADD COLUMN {} {}",
                    name.sql(),
                    ident(remote.kind, &c.name),
                    remote.db.column_type(&t)?
                ))
            })
            .collect::<HandlerResult<Vec<_>>>()?;
        remote_transaction(&remote, statements).await
    }
}

async fn drop_remote(remote: &Remote) -> HandlerResult<()> {
    let Some(name) = &remote.table else {
        return Ok(());
    };
    remote_transaction(remote, remote.db.drop_statements(name)).await
}
