//! Apiary's metastore: the Hive model of databases, tables, partitions and views, behind one
//! async trait ([`Metastore`]) with two backends: an embedded SQLite file ([`SqliteMetastore`],
//! the default) and PostgreSQL ([`PostgresMetastore`]), which several servers can share.
//!
//! The model follows Hive's metastore (database location and parameters; a table's storage
//! descriptor with columns, location, input/output formats, serde and bucketing; partition
//! keys; table parameters; table type). Every object is stored as one JSON document per row,
//! keyed by its names, so the schema stays small and migrations are cheap.

#![warn(missing_docs)]

mod catalog;
mod error;
mod journal;
mod model;
mod postgres;
pub mod sealed;
mod sqlite;

pub use error::MetastoreError;
pub use journal::{Intent, IntentKind, IntentState};
pub use model::{
    escape_path_value, is_valid_name, partition_name, principal_key, unescape_path_value, Column,
    Constraint, ConstraintKind, Database, Grant, GrantChange, GrantObject, Partition,
    PrincipalType, Role, SerDeInfo, SortColumn, StorageDescriptor, Table, TableType, BUILTIN_ROLES,
};
pub use postgres::{PostgresMetastore, PostgresOptions};
pub use sqlite::SqliteMetastore;

use async_trait::async_trait;

/// Refuses a database name Hive's metastore would refuse, with Hive's text.
pub fn check_database_name(name: &str) -> Result<()> {
    if is_valid_name(name) {
        Ok(())
    } else {
        Err(MetastoreError::InvalidObject(format!(
            "{name} is not a valid database name"
        )))
    }
}

/// Refuses a table or view name Hive's metastore would refuse, with Hive's text.
pub fn check_table_name(name: &str) -> Result<()> {
    if is_valid_name(name) {
        Ok(())
    } else {
        Err(MetastoreError::InvalidObject(format!(
            "{name} is not a valid object name"
        )))
    }
}

/// The tables of a listing that could be read back; an unreadable one is logged and left
/// out, so one corrupt entry does not hide a database's other tables (reading it by name
/// still reports it).
pub(crate) fn readable(tables: impl Iterator<Item = Result<model::Table>>) -> Vec<model::Table> {
    tables
        .filter_map(|t| match t {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::warn!(error = %e, "skipping an unreadable table in a listing");
                None
            }
        })
        .collect()
}

/// Result of a metastore call.
pub type Result<T> = std::result::Result<T, MetastoreError>;

/// The catalog: every call is one atomic change or one consistent read. Names are compared
/// in lower case, as Hive does; implementations store them lower-cased.
#[async_trait]
pub trait Metastore: Send + Sync + std::fmt::Debug {
    /// Creates a database; `AlreadyExists` if one has this name.
    async fn create_database(&self, db: &Database) -> Result<()>;
    /// The database called `name`, if any.
    async fn get_database(&self, name: &str) -> Result<Option<Database>>;
    /// Names of all databases, sorted.
    async fn list_databases(&self) -> Result<Vec<String>>;
    /// Replaces a database's definition (comment, location, properties, owner).
    async fn alter_database(&self, db: &Database) -> Result<()>;
    /// Drops an empty database; `InvalidOperation` if it still holds tables.
    async fn drop_database(&self, name: &str) -> Result<()>;

    /// Creates a table; `AlreadyExists` if the database has one by this name, `NoSuchObject`
    /// if the database does not exist.
    async fn create_table(&self, table: &Table) -> Result<()>;
    /// The table `db.name`, if any.
    async fn get_table(&self, db: &str, name: &str) -> Result<Option<Table>>;
    /// Names of the tables and views of `db`, sorted.
    async fn list_tables(&self, db: &str) -> Result<Vec<String>>;
    /// Every readable table of `db` (for catalog listings), sorted by name; an entry that
    /// cannot be read back is logged and left out.
    async fn get_tables(&self, db: &str) -> Result<Vec<Table>>;
    /// Replaces the definition of `db.name` with `table`, which may carry a new name
    /// (RENAME); partitions follow a renamed table.
    async fn alter_table(&self, db: &str, name: &str, table: &Table) -> Result<()>;
    /// Drops a table and its partitions.
    async fn drop_table(&self, db: &str, name: &str) -> Result<()>;

    /// Adds partitions; `AlreadyExists` if one exists, unless `if_not_exists` (then skipped).
    async fn add_partitions(
        &self,
        db: &str,
        table: &str,
        parts: &[Partition],
        if_not_exists: bool,
    ) -> Result<()>;
    /// Partitions of a table, sorted by their names (`k1=v1/k2=v2`).
    async fn list_partitions(&self, db: &str, table: &str) -> Result<Vec<Partition>>;
    /// Replaces one partition's definition (SET LOCATION).
    async fn alter_partition(&self, db: &str, table: &str, part: &Partition) -> Result<()>;
    /// Drops the partitions with these value lists; returns how many existed.
    async fn drop_partitions(&self, db: &str, table: &str, values: &[Vec<String>])
        -> Result<usize>;

    /// Records a new intent (state `Pending`). `AlreadyExists` if the table it creates exists
    /// or another unfinished intent is about the same table.
    async fn record_intent(&self, intent: &Intent) -> Result<()>;

    /// In one transaction: adds `intent.table` to the catalog and marks the intent
    /// `Committed`. `Conflict` unless the intent is `Pending`.
    async fn commit_create_intent(&self, intent_id: &str) -> Result<()>;

    /// In one transaction: removes the intent's table (and its partitions) from the catalog
    /// and marks the intent `Committed`. `Conflict` unless the intent is `Pending`.
    async fn commit_drop_intent(&self, intent_id: &str) -> Result<()>;

    /// Decides to undo an intent: `Pending` becomes `Aborting` (true); `Aborting` stays (true);
    /// `Committed` or gone stays as it is (false): then it must not be undone.
    async fn abort_intent(&self, intent_id: &str) -> Result<bool>;

    /// Removes a finished (or undone) intent.
    async fn finish_intent(&self, intent_id: &str) -> Result<()>;

    /// Unfinished intents of server `owner`, oldest first.
    async fn unfinished_intents(&self, owner: &str) -> Result<Vec<Intent>>;

    /// Creates a role; `AlreadyExists` if one has this name.
    async fn create_role(&self, role: &Role) -> Result<()>;
    /// Drops a role with its memberships and the privileges granted to it; `NoSuchObject` if
    /// there is none.
    async fn drop_role(&self, name: &str) -> Result<()>;
    /// Every role, sorted by name.
    async fn list_roles(&self) -> Result<Vec<Role>>;
    /// Applies grants and revocations as one change: every one applies or none does. A grant
    /// replaces one of the same object, holder and privilege (so a second GRANT can add the
    /// grant option); a revocation of something not granted fails the whole change
    /// (`NoSuchObject`, naming it), as does a grant on a missing table or to a missing role.
    async fn change_grants(&self, changes: &[GrantChange]) -> Result<()>;
    /// The grants on `object`.
    async fn grants_on(&self, object: &GrantObject) -> Result<Vec<Grant>>;
    /// The grants held by a principal.
    async fn grants_of(&self, principal: (PrincipalType, &str)) -> Result<Vec<Grant>>;
    /// Every grant (SHOW GRANT ON ALL).
    async fn all_grants(&self) -> Result<Vec<Grant>>;
}
