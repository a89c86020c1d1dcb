//! What the statement families share: the [`Scope`] they run in (the session, seen only
//! through this trait), name resolution, and the errors and helpers more than one family uses.

use std::sync::Arc;

use apiary_metastore::{Database, Table};
use apiary_storage::handler::{CREATED_BY, PARTITION_COLUMNS};
use apiary_storage::ownership;
use datafusion::logical_expr::LogicalPlan;

use crate::error::{HiveError, SqlError};
use crate::journal::recovery::Unavailable;
use crate::parser::{HiveStatement, TableName};

/// What running a statement needs from the session it runs in. The session implements it,
/// and the statement families see the session only through it (their runners are methods
/// of `dyn Scope`), so this module does not depend on the session's.
#[async_trait::async_trait]
pub(crate) trait Scope: Send + Sync {
    /// The catalog.
    fn metastore(&self) -> &Arc<dyn apiary_metastore::Metastore>;
    /// The storage handlers this server knows.
    fn handlers(&self) -> &Arc<crate::Registry>;
    /// The session's user (owner of what it creates).
    fn user(&self) -> &str;
    /// This server's name in the intent journal.
    fn owner(&self) -> &str;
    /// This server's tag in folder names (see [`crate::names::server_tag`]).
    fn server_tag(&self) -> &str;
    /// Tables whose start-up recovery failed.
    fn unavailable(&self) -> &Unavailable;
    /// The warehouse folder.
    fn warehouse(&self) -> &std::path::Path;
    /// The DataFusion context queries are planned in.
    fn context(&self) -> &datafusion::prelude::SessionContext;
    /// A setting of the session (`SET key=value`, `--hiveconf`), if set.
    fn setting(&self, key: &str) -> Option<String>;
    /// The current database.
    fn database(&self) -> String;
    /// Makes `db` (known to exist) the current database.
    fn set_database(&mut self, db: &str);
    /// Records something the statement's user should hear of (the operation log).
    fn note(&self, text: String);
    /// Cancelled when the task running the statement must settle.
    fn interrupt(&self) -> &tokio_util::sync::CancellationToken;
    /// Reloads the catalog names DataFusion's synchronous calls see.
    async fn refresh_catalog(&self) -> Result<(), SqlError>;
    /// Plans a query (SELECT, VALUES, WITH ..), analyzed.
    async fn plan_query(&mut self, text: &str) -> Result<LogicalPlan, SqlError>;
    /// The tables of `tables` the session's user may see (all, without authorization).
    async fn visible(&self, tables: Vec<Table>) -> Result<Vec<Table>, SqlError>;
}

/// Hive's column width in DESCRIBE output.
pub(super) const ALIGN: usize = 20;

pub(super) fn pad(s: &str) -> String {
    format!("{s:<ALIGN$}")
}

/// A table's name as the statement wrote it (Hive's DDL errors name it so).
pub(super) fn as_written(name: &TableName) -> String {
    match &name.db {
        Some(db) => format!("{db}.{}", name.name),
        None => name.name.clone(),
    }
}

/// Refuses table properties only the server sets: `storage_handler` comes from STORED BY
/// (a property naming a handler would route a table through it without the handler's checks,
/// its meta hook or its authorization), a handler's partition columns from PARTITIONED BY, and
/// the operation that created a handler's object from the CREATE itself.
pub(super) fn check_reserved_properties<'a>(
    keys: impl IntoIterator<Item = &'a String>,
) -> Result<(), SqlError> {
    for k in keys {
        let set_by = if k.eq_ignore_ascii_case("storage_handler") {
            "STORED BY"
        } else if k.eq_ignore_ascii_case(PARTITION_COLUMNS) {
            "PARTITIONED BY"
        } else if k.eq_ignore_ascii_case(CREATED_BY) {
            // The proof of which CREATE made a handler's object: DROP deletes by it.
            "the CREATE of a managed non-native table"
        } else {
            continue;
        };
        return Err(SqlError::hive(
            HiveError::Generic,
            format!("Table property {k} is set by {set_by} and cannot be set or unset directly"),
        ));
    }
    Ok(())
}

/// The columns an INSERT writes into `table`: its data columns, then its last `dynamic`
/// partition keys (the dynamic partitions' values).
pub(super) fn written_columns(table: &Table, dynamic: usize) -> Vec<&apiary_metastore::Column> {
    let keys = &table.partition_keys;
    table
        .sd
        .columns
        .iter()
        .chain(&keys[keys.len().saturating_sub(dynamic)..])
        .collect()
}

pub(super) fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

impl dyn Scope {
    pub(super) fn qualify(&self, name: &TableName) -> (String, String) {
        (
            name.db
                .clone()
                .unwrap_or_else(|| self.database().to_string()),
            name.name.clone(),
        )
    }

    pub(super) async fn require_table(&self, name: &TableName) -> Result<Table, SqlError> {
        let (db, t) = self.qualify(name);
        if let Some(reason) = self.unavailable().reason(&db, &t) {
            return Err(Unavailable::error(&db, &t, &reason));
        }
        self.metastore()
            .get_table(&db, &t)
            .await?
            .ok_or_else(|| SqlError::TableNotFound(as_written(name)))
    }

    pub(super) async fn require_database(&self, db: &str) -> Result<Database, SqlError> {
        self.metastore()
            .get_database(db)
            .await?
            .ok_or_else(|| SqlError::DatabaseNotFound(db.to_string()))
    }
}

pub(super) fn move_task_error(e: apiary_storage::StorageError) -> SqlError {
    match e {
        apiary_storage::StorageError::Write(m) => {
            SqlError::execution(format!("org.apache.hadoop.hive.ql.exec.MoveTask. {m}"))
        }
        other => other.into(),
    }
}

/// A DDL error about the catalog's view of the file system (Hive's MetaException).
pub(super) fn meta_error(e: apiary_storage::StorageError) -> SqlError {
    SqlError::ddl_caused(format!("MetaException(message:{e})"), e)
}

/// The table's data folder when Apiary owns it; otherwise the error for `what` (truncate,
/// overwrite) on a table whose files are not Apiary's to delete.
pub(crate) fn owned_root_for(table: &Table, what: &str) -> Result<std::path::PathBuf, SqlError> {
    ownership::owned_root(table).ok_or_else(|| {
        not_owned(
            table,
            what,
            table.sd.location.as_deref().unwrap_or("(no location)"),
        )
    })
}

pub(super) fn not_owned(table: &Table, what: &str, path: &str) -> SqlError {
    SqlError::hive(HiveError::Generic, format!("Cannot {what} table {}: {path} is not a folder Apiary created for this table, so Apiary does not delete the files in it",
        table.qualified_name()
    ))
}

/// The error for a statement given to a family that does not run it (a dispatcher bug).
pub(super) fn misrouted(stmt: &HiveStatement) -> SqlError {
    SqlError::Unsupported(format!(
        "internal error: a statement reached the wrong runner: {:?}",
        std::mem::discriminant(stmt)
    ))
}
