//! The catalog's logic, written once for both backends: every [`Metastore`] call as a sequence
//! of named statements ([`Stmt`]) run in one transaction ([`Txn`]). A backend supplies only
//! how a transaction is run ([`Backend`]: SQLite on a blocking thread, PostgreSQL from a pool
//! with serialization retries) and how each statement is spelled in its SQL.

use async_trait::async_trait;
use futures::future::BoxFuture;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::journal::{Intent, IntentKind, IntentState};
use crate::model::{
    partition_name, principal_key, Database, Grant, GrantChange, GrantObject, Partition,
    PrincipalType, Role, Table, BUILTIN_ROLES,
};
use crate::{Metastore, MetastoreError, Result};

/// Every statement the catalog runs. Columns read back are text; parameters are in the order
/// the comment gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stmt {
    /// Creates the schema-version table if missing.
    CreateVersionTable,
    /// The highest migration applied, as text (`0` when none).
    SchemaVersion,
    /// Records migration (version).
    RecordVersion,
    /// `name` of database (name).
    DatabaseExists,
    /// `definition` of database (name).
    GetDatabase,
    /// `name` of every database, sorted.
    ListDatabases,
    /// Inserts database (name, definition).
    InsertDatabase,
    /// Updates database (name, definition).
    UpdateDatabase,
    /// Deletes database (name).
    DeleteDatabase,
    /// `name` of at most one table of database (db).
    AnyTableOf,
    /// `definition` of table (db, name).
    GetTable,
    /// `name` of every table of (db), sorted.
    ListTableNames,
    /// `name, definition` of every table of (db), sorted by name.
    ListTables,
    /// Inserts table (db, name, definition).
    InsertTable,
    /// Renames and redefines table (db, name) as (new db, new name, definition).
    UpdateTable,
    /// Deletes table (db, name).
    DeleteTable,
    /// Deletes the partitions of table (db, name).
    DeletePartitionsOf,
    /// Moves the partitions of table (db, name) to (new db, new name).
    MovePartitions,
    /// `name` of partition (db, table, name).
    PartitionExists,
    /// Inserts partition (db, table, name, definition).
    InsertPartition,
    /// `name, definition` of every partition of (db, table), sorted by name.
    ListPartitions,
    /// Updates partition (db, table, name) to (definition).
    UpdatePartition,
    /// Deletes partition (db, table, name).
    DeletePartition,
    /// `definition` of intent (id).
    GetIntent,
    /// `id` of the intents about table (db, name).
    IntentsOnTable,
    /// Inserts intent (id, owner, db, table, created, definition); `created` is an integer.
    InsertIntent,
    /// Updates intent (id) to (definition).
    UpdateIntent,
    /// Deletes intent (id).
    DeleteIntent,
    /// `definition` of the intents of (owner), oldest first.
    IntentsOf,
    /// `name` of role (name).
    RoleExists,
    /// Inserts role (name, definition).
    InsertRole,
    /// Deletes role (name).
    DeleteRole,
    /// `definition` of every role, sorted by name.
    ListRoles,
    /// Inserts or replaces grant (object, principal, privilege, definition).
    PutGrant,
    /// `definition` of grant (object, principal, privilege).
    GetGrant,
    /// Deletes grant (object, principal, privilege).
    DeleteGrant,
    /// Deletes the grants on (object).
    DeleteGrantsOn,
    /// Deletes the grants held by (principal).
    DeleteGrantsOf,
    /// `definition` of the grants on (object).
    GrantsOn,
    /// `definition` of the grants held by (principal).
    GrantsOf,
    /// `definition` of every grant.
    AllGrants,
}

/// A statement parameter.
#[derive(Debug, Clone, Copy)]
pub enum Arg<'a> {
    /// A text value.
    Text(&'a str),
    /// A 64-bit integer.
    Int(i64),
}

/// One transaction (or, for reads, one connection) of a backend.
#[async_trait]
pub trait Txn: Send {
    /// Runs a statement that returns rows; every column is read as text.
    async fn query(&mut self, stmt: Stmt, args: &[Arg<'_>]) -> Result<Vec<Vec<String>>>;
    /// Runs a statement that changes rows; returns how many it changed.
    async fn execute(&mut self, stmt: Stmt, args: &[Arg<'_>]) -> Result<u64>;
    /// Runs a script of statements (a schema migration).
    async fn batch(&mut self, sql: &str) -> Result<()>;
}

/// How a backend runs transactions. The trait is public inside a private module, so only
/// this crate's backends implement it (and so get [`Metastore`]). A body borrows the
/// transaction and the call's arguments, so a backend can run it again after a lost
/// serialization race.
pub trait Backend: Send + Sync + std::fmt::Debug + 'static {
    /// Runs `body` as one transaction: for [`Access::Write`] one that changes the catalog
    /// and commits if `body` succeeds; for [`Access::Read`] one consistent read.
    fn transact<A, T, F>(&self, access: Access, args: A, body: F) -> BoxFuture<'_, Result<T>>
    where
        A: Send + Sync + 'static,
        T: Send + 'static,
        F: for<'a> Fn(&'a mut dyn Txn, &'a A) -> BoxFuture<'a, Result<T>> + Send + Sync + 'static;
}

/// Whether a transaction changes the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads only.
    Read,
    /// Changes the catalog.
    Write,
}

/// Brings a backend's schema up to `migrations.len()`, in the caller's transaction.
pub(crate) async fn migrate(tx: &mut dyn Txn, migrations: &[&str]) -> Result<()> {
    let version = schema_version(tx).await?;
    if version > migrations.len() {
        return Err(MetastoreError::Backend(format!(
            "the metastore's schema version {version} is newer than this Apiary knows ({}); upgrade Apiary",
            migrations.len()
        )));
    }
    for (i, sql) in migrations.iter().enumerate().skip(version) {
        tx.batch(sql).await?;
        tx.execute(Stmt::RecordVersion, &[Arg::Int((i + 1) as i64)])
            .await?;
        tracing::info!(version = i + 1, "metastore schema migrated");
    }
    Ok(())
}

/// The number of migrations applied.
pub(crate) async fn schema_version(tx: &mut dyn Txn) -> Result<usize> {
    tx.execute(Stmt::CreateVersionTable, &[]).await?;
    let v = first(tx, Stmt::SchemaVersion, &[]).await?;
    let v = v.as_deref().unwrap_or("0");
    v.parse::<i64>()
        .map(|v| v.max(0) as usize)
        .map_err(|_| MetastoreError::Corrupt("schema version".into(), v.to_string()))
}

fn to_json<T: Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| MetastoreError::Backend(e.to_string()))
}

fn from_json<T: DeserializeOwned>(what: &str, s: &str) -> Result<T> {
    serde_json::from_str(s).map_err(|e| MetastoreError::Corrupt(what.to_string(), e.to_string()))
}

/// The first column of the first row, if any.
async fn first(tx: &mut dyn Txn, stmt: Stmt, args: &[Arg<'_>]) -> Result<Option<String>> {
    Ok(tx
        .query(stmt, args)
        .await?
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next()))
}

/// The first column of every row.
async fn column(tx: &mut dyn Txn, stmt: Stmt, args: &[Arg<'_>]) -> Result<Vec<String>> {
    Ok(tx
        .query(stmt, args)
        .await?
        .into_iter()
        .filter_map(|r| r.into_iter().next())
        .collect())
}

/// The (name, definition) pairs a listing returns.
async fn pairs(tx: &mut dyn Txn, stmt: Stmt, args: &[Arg<'_>]) -> Result<Vec<(String, String)>> {
    tx.query(stmt, args)
        .await?
        .into_iter()
        .map(|r| {
            let mut r = r.into_iter();
            match (r.next(), r.next()) {
                (Some(n), Some(d)) => Ok((n, d)),
                _ => Err(MetastoreError::Backend(format!(
                    "{stmt:?} returned fewer than two columns"
                ))),
            }
        })
        .collect()
}

async fn db_exists(tx: &mut dyn Txn, db: &str) -> Result<bool> {
    Ok(first(tx, Stmt::DatabaseExists, &[Arg::Text(db)])
        .await?
        .is_some())
}

async fn load_table(tx: &mut dyn Txn, db: &str, name: &str) -> Result<Option<Table>> {
    first(tx, Stmt::GetTable, &[Arg::Text(db), Arg::Text(name)])
        .await?
        .map(|d| from_json(&format!("table {db}.{name}"), &d))
        .transpose()
}

async fn require_table(tx: &mut dyn Txn, db: &str, name: &str) -> Result<Table> {
    load_table(tx, db, name)
        .await?
        .ok_or_else(|| MetastoreError::NoSuchObject(format!("Table {db}.{name}")))
}

/// Adds a table row: its database must exist and the name be free.
async fn insert_table(tx: &mut dyn Txn, table: &Table) -> Result<()> {
    let (db, name) = (table.database.to_lowercase(), table.name.to_lowercase());
    crate::check_table_name(&name)?;
    if !db_exists(tx, &db).await? {
        return Err(MetastoreError::NoSuchObject(format!("Database {db}")));
    }
    if load_table(tx, &db, &name).await?.is_some() {
        return Err(MetastoreError::AlreadyExists(format!("Table {db}.{name}")));
    }
    let def = to_json(table)?;
    tx.execute(
        Stmt::InsertTable,
        &[Arg::Text(&db), Arg::Text(&name), Arg::Text(&def)],
    )
    .await?;
    Ok(())
}

/// Removes a table row and its partitions; returns how many table rows went (0 or 1).
async fn delete_table(tx: &mut dyn Txn, db: &str, name: &str) -> Result<u64> {
    let key = [Arg::Text(db), Arg::Text(name)];
    let n = tx.execute(Stmt::DeleteTable, &key).await?;
    tx.execute(Stmt::DeletePartitionsOf, &key).await?;
    let object = table_object(db, name).key();
    tx.execute(Stmt::DeleteGrantsOn, &[Arg::Text(&object)])
        .await?;
    Ok(n)
}

/// Refuses a role that is neither stored nor built in.
async fn require_role(tx: &mut dyn Txn, name: &str) -> Result<()> {
    if BUILTIN_ROLES.contains(&name)
        || first(tx, Stmt::RoleExists, &[Arg::Text(name)])
            .await?
            .is_some()
    {
        Ok(())
    } else {
        Err(MetastoreError::NoSuchObject(format!("Role {name}")))
    }
}

fn table_object(db: &str, name: &str) -> GrantObject {
    GrantObject::Table {
        database: db.to_string(),
        name: name.to_string(),
    }
}

async fn grants(tx: &mut dyn Txn, stmt: Stmt, args: &[Arg<'_>]) -> Result<Vec<Grant>> {
    column(tx, stmt, args)
        .await?
        .iter()
        .map(|d| from_json("grant", d))
        .collect()
}

async fn store_grant(tx: &mut dyn Txn, grant: &Grant) -> Result<()> {
    let def = to_json(grant)?;
    let (object, principal) = (grant.object.key(), grant.principal_key());
    tx.execute(
        Stmt::PutGrant,
        &[
            Arg::Text(&object),
            Arg::Text(&principal),
            Arg::Text(&grant.privilege),
            Arg::Text(&def),
        ],
    )
    .await?;
    Ok(())
}

/// The intent `id`; `NoSuchObject` if there is none.
async fn load_intent(tx: &mut dyn Txn, id: &str) -> Result<Intent> {
    match first(tx, Stmt::GetIntent, &[Arg::Text(id)]).await? {
        Some(d) => from_json(&format!("intent {id}"), &d),
        None => Err(MetastoreError::NoSuchObject(format!("intent {id}"))),
    }
}

async fn save_intent(tx: &mut dyn Txn, intent: &Intent) -> Result<()> {
    let def = to_json(intent)?;
    tx.execute(
        Stmt::UpdateIntent,
        &[Arg::Text(&intent.id), Arg::Text(&def)],
    )
    .await?;
    Ok(())
}

#[async_trait]
impl<B: Backend> Metastore for B {
    async fn create_database(&self, db: &Database) -> Result<()> {
        let name = db.name.to_lowercase();
        crate::check_database_name(&name)?;
        let def = to_json(db)?;
        self.transact(Access::Write, (name, def), |tx, (name, def)| {
            Box::pin(async move {
                if db_exists(tx, name).await? {
                    return Err(MetastoreError::AlreadyExists(format!("Database {name}")));
                }
                tx.execute(Stmt::InsertDatabase, &[Arg::Text(name), Arg::Text(def)])
                    .await?;
                Ok(())
            })
        })
        .await
    }

    async fn get_database(&self, name: &str) -> Result<Option<Database>> {
        self.transact(Access::Read, name.to_lowercase(), |tx, name| {
            Box::pin(async move {
                first(tx, Stmt::GetDatabase, &[Arg::Text(name)])
                    .await?
                    .map(|d| from_json(&format!("database {name}"), &d))
                    .transpose()
            })
        })
        .await
    }

    async fn list_databases(&self) -> Result<Vec<String>> {
        self.transact(Access::Read, (), |tx, ()| {
            Box::pin(column(tx, Stmt::ListDatabases, &[]))
        })
        .await
    }

    async fn alter_database(&self, db: &Database) -> Result<()> {
        let (name, def) = (db.name.to_lowercase(), to_json(db)?);
        self.transact(Access::Write, (name, def), |tx, (name, def)| {
            Box::pin(async move {
                let n = tx
                    .execute(Stmt::UpdateDatabase, &[Arg::Text(name), Arg::Text(def)])
                    .await?;
                if n == 0 {
                    return Err(MetastoreError::NoSuchObject(format!("Database {name}")));
                }
                Ok(())
            })
        })
        .await
    }

    async fn drop_database(&self, name: &str) -> Result<()> {
        self.transact(Access::Write, name.to_lowercase(), |tx, name| {
            Box::pin(async move {
                if !db_exists(tx, name).await? {
                    return Err(MetastoreError::NoSuchObject(format!("Database {name}")));
                }
                if first(tx, Stmt::AnyTableOf, &[Arg::Text(name)])
                    .await?
                    .is_some()
                {
                    return Err(MetastoreError::InvalidOperation(format!(
                        "Database {name} is not empty. One or more tables exist."
                    )));
                }
                tx.execute(Stmt::DeleteDatabase, &[Arg::Text(name)]).await?;
                Ok(())
            })
        })
        .await
    }

    async fn create_table(&self, table: &Table) -> Result<()> {
        self.transact(Access::Write, table.clone(), |tx, table| {
            Box::pin(insert_table(tx, table))
        })
        .await
    }

    async fn get_table(&self, db: &str, name: &str) -> Result<Option<Table>> {
        self.transact(
            Access::Read,
            (db.to_lowercase(), name.to_lowercase()),
            |tx, (db, name)| Box::pin(load_table(tx, db, name)),
        )
        .await
    }

    async fn list_tables(&self, db: &str) -> Result<Vec<String>> {
        self.transact(Access::Read, db.to_lowercase(), |tx, db| {
            Box::pin(async move { column(tx, Stmt::ListTableNames, &[Arg::Text(db)]).await })
        })
        .await
    }

    async fn get_tables(&self, db: &str) -> Result<Vec<Table>> {
        self.transact(Access::Read, db.to_lowercase(), |tx, db| {
            Box::pin(async move {
                let rows = pairs(tx, Stmt::ListTables, &[Arg::Text(db)]).await?;
                Ok(crate::readable(
                    rows.iter()
                        .map(|(n, d)| from_json(&format!("table {db}.{n}"), d)),
                ))
            })
        })
        .await
    }

    async fn alter_table(&self, db: &str, name: &str, table: &Table) -> Result<()> {
        let (db, name) = (db.to_lowercase(), name.to_lowercase());
        let (new_db, new_name, def) = (
            table.database.to_lowercase(),
            table.name.to_lowercase(),
            to_json(table)?,
        );
        if new_name != name {
            crate::check_table_name(&new_name)?;
        }
        self.transact(
            Access::Write,
            (db, name, new_db, new_name, def),
            |tx, (db, name, new_db, new_name, def)| {
                Box::pin(async move {
                    require_table(tx, db, name).await?;
                    let (old, new) = (
                        [Arg::Text(db), Arg::Text(name)],
                        [Arg::Text(new_db), Arg::Text(new_name)],
                    );
                    if (new_db, new_name) != (db, name) {
                        if !db_exists(tx, new_db).await? {
                            return Err(MetastoreError::NoSuchObject(format!("Database {new_db}")));
                        }
                        if load_table(tx, new_db, new_name).await?.is_some() {
                            return Err(MetastoreError::AlreadyExists(format!(
                                "Table {new_db}.{new_name}"
                            )));
                        }
                        tx.execute(Stmt::MovePartitions, &[old[0], old[1], new[0], new[1]])
                            .await?;
                    }
                    tx.execute(
                        Stmt::UpdateTable,
                        &[old[0], old[1], new[0], new[1], Arg::Text(def)],
                    )
                    .await?;
                    if (new_db, new_name) != (db, name) {
                        // Privileges follow the table to its new name.
                        let from = table_object(db, name).key();
                        let moved = grants(tx, Stmt::GrantsOn, &[Arg::Text(&from)]).await?;
                        tx.execute(Stmt::DeleteGrantsOn, &[Arg::Text(&from)])
                            .await?;
                        for mut g in moved {
                            g.object = table_object(new_db, new_name);
                            store_grant(tx, &g).await?;
                        }
                    }
                    Ok(())
                })
            },
        )
        .await
    }

    async fn drop_table(&self, db: &str, name: &str) -> Result<()> {
        self.transact(
            Access::Write,
            (db.to_lowercase(), name.to_lowercase()),
            |tx, (db, name)| {
                Box::pin(async move {
                    if delete_table(tx, db, name).await? == 0 {
                        return Err(MetastoreError::NoSuchObject(format!("Table {db}.{name}")));
                    }
                    Ok(())
                })
            },
        )
        .await
    }

    async fn add_partitions(
        &self,
        db: &str,
        table: &str,
        parts: &[Partition],
        if_not_exists: bool,
    ) -> Result<()> {
        self.transact(
            Access::Write,
            (db.to_lowercase(), table.to_lowercase(), parts.to_vec()),
            move |tx, (db, tbl, parts)| {
                Box::pin(async move {
                    let t = require_table(tx, db, tbl).await?;
                    for p in parts {
                        let name = t.partition_name_of(p)?;
                        let key = [Arg::Text(db), Arg::Text(tbl), Arg::Text(&name)];
                        if first(tx, Stmt::PartitionExists, &key).await?.is_some() {
                            if if_not_exists {
                                continue;
                            }
                            return Err(MetastoreError::AlreadyExists(format!(
                                "Partition {name} of table {db}.{tbl}"
                            )));
                        }
                        let def = to_json(p)?;
                        tx.execute(
                            Stmt::InsertPartition,
                            &[key[0], key[1], key[2], Arg::Text(&def)],
                        )
                        .await?;
                    }
                    Ok(())
                })
            },
        )
        .await
    }

    async fn list_partitions(&self, db: &str, table: &str) -> Result<Vec<Partition>> {
        self.transact(
            Access::Read,
            (db.to_lowercase(), table.to_lowercase()),
            |tx, (db, tbl)| {
                Box::pin(async move {
                    pairs(tx, Stmt::ListPartitions, &[Arg::Text(db), Arg::Text(tbl)])
                        .await?
                        .iter()
                        .map(|(n, d)| from_json(&format!("partition {db}.{tbl}/{n}"), d))
                        .collect()
                })
            },
        )
        .await
    }

    async fn alter_partition(&self, db: &str, table: &str, part: &Partition) -> Result<()> {
        self.transact(
            Access::Write,
            (db.to_lowercase(), table.to_lowercase(), part.clone()),
            |tx, (db, tbl, part)| {
                Box::pin(async move {
                    let t = require_table(tx, db, tbl).await?;
                    let name = partition_name(&t.partition_keys, &part.values);
                    let def = to_json(part)?;
                    let n = tx
                        .execute(
                            Stmt::UpdatePartition,
                            &[
                                Arg::Text(db),
                                Arg::Text(tbl),
                                Arg::Text(&name),
                                Arg::Text(&def),
                            ],
                        )
                        .await?;
                    if n == 0 {
                        return Err(MetastoreError::NoSuchObject(format!(
                            "Partition {name} of table {db}.{tbl}"
                        )));
                    }
                    Ok(())
                })
            },
        )
        .await
    }

    async fn drop_partitions(
        &self,
        db: &str,
        table: &str,
        values: &[Vec<String>],
    ) -> Result<usize> {
        self.transact(
            Access::Write,
            (db.to_lowercase(), table.to_lowercase(), values.to_vec()),
            |tx, (db, tbl, values)| {
                Box::pin(async move {
                    let t = require_table(tx, db, tbl).await?;
                    let mut dropped = 0;
                    for v in values {
                        let name = partition_name(&t.partition_keys, v);
                        dropped += tx
                            .execute(
                                Stmt::DeletePartition,
                                &[Arg::Text(db), Arg::Text(tbl), Arg::Text(&name)],
                            )
                            .await? as usize;
                    }
                    Ok(dropped)
                })
            },
        )
        .await
    }

    async fn record_intent(&self, intent: &Intent) -> Result<()> {
        let def = to_json(intent)?;
        self.transact(
            Access::Write,
            (intent.clone(), def),
            |tx, (intent, def)| {
                Box::pin(async move {
                    let (db, name) = (&intent.table.database, &intent.table.name);
                    let key = [Arg::Text(db), Arg::Text(name)];
                    if let Some(other) = first(tx, Stmt::IntentsOnTable, &key).await? {
                        return Err(MetastoreError::InvalidOperation(format!(
                            "table {db}.{name} has an unfinished operation {other} (running, or interrupted: an interrupted one is settled when its server starts)"
                        )));
                    }
                    if intent.kind == IntentKind::CreateTable {
                        if !db_exists(tx, db).await? {
                            return Err(MetastoreError::NoSuchObject(format!("Database {db}")));
                        }
                        if load_table(tx, db, name).await?.is_some() {
                            return Err(MetastoreError::AlreadyExists(format!(
                                "Table {db}.{name}"
                            )));
                        }
                    }
                    tx.execute(
                        Stmt::InsertIntent,
                        &[
                            Arg::Text(&intent.id),
                            Arg::Text(&intent.owner),
                            key[0],
                            key[1],
                            Arg::Int(intent.created),
                            Arg::Text(def),
                        ],
                    )
                    .await?;
                    Ok(())
                })
            },
        )
        .await
    }

    async fn commit_create_intent(&self, intent_id: &str) -> Result<()> {
        self.transact(Access::Write, intent_id.to_string(), |tx, id| {
            Box::pin(async move {
                let mut intent = load_intent(tx, id).await?;
                intent.require_pending()?;
                insert_table(tx, &intent.table).await?;
                intent.state = IntentState::Committed;
                save_intent(tx, &intent).await
            })
        })
        .await
    }

    async fn commit_drop_intent(&self, intent_id: &str) -> Result<()> {
        self.transact(Access::Write, intent_id.to_string(), |tx, id| {
            Box::pin(async move {
                let mut intent = load_intent(tx, id).await?;
                intent.require_pending()?;
                delete_table(tx, &intent.table.database, &intent.table.name).await?;
                intent.state = IntentState::Committed;
                save_intent(tx, &intent).await
            })
        })
        .await
    }

    async fn abort_intent(&self, intent_id: &str) -> Result<bool> {
        self.transact(Access::Write, intent_id.to_string(), |tx, id| {
            Box::pin(async move {
                let mut intent = match load_intent(tx, id).await {
                    Ok(i) => i,
                    Err(MetastoreError::NoSuchObject(_)) => return Ok(false),
                    Err(e) => return Err(e),
                };
                match intent.state {
                    IntentState::Committed => Ok(false),
                    IntentState::Aborting => Ok(true),
                    IntentState::Pending => {
                        intent.state = IntentState::Aborting;
                        save_intent(tx, &intent).await?;
                        Ok(true)
                    }
                }
            })
        })
        .await
    }

    async fn finish_intent(&self, intent_id: &str) -> Result<()> {
        self.transact(Access::Write, intent_id.to_string(), |tx, id| {
            Box::pin(async move {
                tx.execute(Stmt::DeleteIntent, &[Arg::Text(id)]).await?;
                Ok(())
            })
        })
        .await
    }

    async fn unfinished_intents(&self, owner: &str) -> Result<Vec<Intent>> {
        self.transact(Access::Read, owner.to_string(), |tx, owner| {
            Box::pin(async move {
                column(tx, Stmt::IntentsOf, &[Arg::Text(owner)])
                    .await?
                    .iter()
                    .map(|d| from_json("intent", d))
                    .collect()
            })
        })
        .await
    }
    async fn create_role(&self, role: &Role) -> Result<()> {
        let mut role = role.clone();
        role.name = role.name.to_lowercase();
        self.transact(Access::Write, role, |tx, role| {
            Box::pin(async move {
                if first(tx, Stmt::RoleExists, &[Arg::Text(&role.name)])
                    .await?
                    .is_some()
                {
                    return Err(MetastoreError::AlreadyExists(format!("Role {}", role.name)));
                }
                let def = to_json(role)?;
                tx.execute(Stmt::InsertRole, &[Arg::Text(&role.name), Arg::Text(&def)])
                    .await?;
                Ok(())
            })
        })
        .await
    }

    async fn drop_role(&self, name: &str) -> Result<()> {
        self.transact(Access::Write, name.to_lowercase(), |tx, name| {
            Box::pin(async move {
                if tx.execute(Stmt::DeleteRole, &[Arg::Text(name)]).await? == 0 {
                    return Err(MetastoreError::NoSuchObject(format!("Role {name}")));
                }
                let object = GrantObject::Role { name: name.clone() }.key();
                tx.execute(Stmt::DeleteGrantsOn, &[Arg::Text(&object)])
                    .await?;
                let holder = principal_key(PrincipalType::Role, name);
                tx.execute(Stmt::DeleteGrantsOf, &[Arg::Text(&holder)])
                    .await?;
                Ok(())
            })
        })
        .await
    }

    async fn list_roles(&self) -> Result<Vec<Role>> {
        self.transact(Access::Read, (), |tx, ()| {
            Box::pin(async move {
                column(tx, Stmt::ListRoles, &[])
                    .await?
                    .iter()
                    .map(|d| from_json("role", d))
                    .collect()
            })
        })
        .await
    }

    async fn change_grants(&self, changes: &[GrantChange]) -> Result<()> {
        self.transact(Access::Write, changes.to_vec(), |tx, changes| {
            Box::pin(async move {
                for change in changes {
                    match change {
                        GrantChange::Put(grant) => {
                            match &grant.object {
                                GrantObject::Role { name } => require_role(tx, name).await?,
                                GrantObject::Table { database, name } => {
                                    require_table(tx, database, name).await?;
                                }
                            }
                            if grant.principal_type == PrincipalType::Role {
                                require_role(tx, &grant.principal_name).await?;
                            }
                            store_grant(tx, grant).await?;
                        }
                        GrantChange::Revoke {
                            object,
                            principal_type,
                            principal_name,
                            privilege,
                            option_only,
                        } => {
                            let (object_key, holder) =
                                (object.key(), principal_key(*principal_type, principal_name));
                            let key = [
                                Arg::Text(&object_key),
                                Arg::Text(&holder),
                                Arg::Text(privilege),
                            ];
                            let Some(def) = first(tx, Stmt::GetGrant, &key).await? else {
                                return Err(MetastoreError::NoSuchObject(format!(
                                    "{privilege} of {holder} on {object_key}"
                                )));
                            };
                            if *option_only {
                                let mut g: Grant = from_json("grant", &def)?;
                                g.grant_option = false;
                                store_grant(tx, &g).await?;
                            } else {
                                tx.execute(Stmt::DeleteGrant, &key).await?;
                            }
                        }
                    }
                }
                Ok(())
            })
        })
        .await
    }

    async fn grants_on(&self, object: &GrantObject) -> Result<Vec<Grant>> {
        self.transact(Access::Read, object.key(), |tx, key| {
            Box::pin(async move { grants(tx, Stmt::GrantsOn, &[Arg::Text(key)]).await })
        })
        .await
    }

    async fn grants_of(&self, principal: (PrincipalType, &str)) -> Result<Vec<Grant>> {
        let key = principal_key(principal.0, principal.1);
        self.transact(Access::Read, key, |tx, key| {
            Box::pin(async move { grants(tx, Stmt::GrantsOf, &[Arg::Text(key)]).await })
        })
        .await
    }

    async fn all_grants(&self) -> Result<Vec<Grant>> {
        self.transact(Access::Read, (), |tx, ()| {
            Box::pin(async move { grants(tx, Stmt::AllGrants, &[]).await })
        })
        .await
    }
}
