//! The embedded metastore: one SQLite file (WAL mode), like Hive's embedded Derby. Several
//! processes may open the same file; SQLite serialises their writes.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;
use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::journal::{Intent, IntentKind, IntentState};
use crate::model::{partition_name, Database, Partition, Table};
use crate::{Metastore, MetastoreError, Result};

/// Schema migrations, applied in order; the stored version is the number applied.
const MIGRATIONS: &[&str] = &[
    // 1: databases, tables and partitions as JSON documents keyed by name.
    "CREATE TABLE dbs (name TEXT PRIMARY KEY, definition TEXT NOT NULL);
     CREATE TABLE tbls (db TEXT NOT NULL REFERENCES dbs(name), name TEXT NOT NULL,
                        definition TEXT NOT NULL, PRIMARY KEY (db, name));
     CREATE TABLE partitions (db TEXT NOT NULL, tbl TEXT NOT NULL, name TEXT NOT NULL,
                              definition TEXT NOT NULL, PRIMARY KEY (db, tbl, name));",
    // 2: the intent journal of DDL with side effects in other systems.
    "CREATE TABLE intents (id TEXT PRIMARY KEY, owner TEXT NOT NULL, db TEXT NOT NULL,
                           tbl TEXT NOT NULL, created INTEGER NOT NULL, definition TEXT NOT NULL);",
];

/// The metastore in a SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteMetastore {
    conn: Arc<Mutex<Connection>>,
}

impl SqliteMetastore {
    /// Opens (creating if needed) the metastore at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Self> {
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        migrate(&mut conn)?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// The schema version of the open file.
    pub fn schema_version(&self) -> Result<usize> {
        let conn = self.conn.lock();
        Ok(stored_version(&conn)?)
    }

    /// Runs `f` in one IMMEDIATE transaction on a blocking thread.
    async fn write<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T> + Send + 'static,
    {
        let conn = self.conn.clone();
        run_blocking(move || {
            let mut conn = conn.lock();
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let out = f(&tx)?;
            tx.commit()?;
            Ok(out)
        })
        .await
    }

    /// Runs a read on a blocking thread.
    async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let conn = self.conn.clone();
        run_blocking(move || f(&conn.lock())).await
    }
}

async fn run_blocking<T, F>(f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| MetastoreError::Backend(format!("metastore task failed: {e}")))?
}

fn stored_version(conn: &Connection) -> rusqlite::Result<usize> {
    conn.execute(
        "CREATE TABLE IF NOT EXISTS apiary_schema_version (version INTEGER NOT NULL)",
        [],
    )?;
    let v: Option<i64> = conn
        .query_row("SELECT max(version) FROM apiary_schema_version", [], |r| {
            r.get(0)
        })
        .optional()?
        .flatten();
    Ok(v.unwrap_or(0).max(0) as usize)
}

fn migrate(conn: &mut Connection) -> Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version = stored_version(&tx)?;
    if version > MIGRATIONS.len() {
        return Err(MetastoreError::Backend(format!(
            "the metastore's schema version {version} is newer than this Apiary knows ({}); upgrade Apiary",
            MIGRATIONS.len()
        )));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
        tx.execute_batch(sql)?;
        tx.execute(
            "INSERT INTO apiary_schema_version (version) VALUES (?1)",
            params![(i + 1) as i64],
        )?;
        tracing::info!(version = i + 1, "metastore schema migrated");
    }
    tx.commit()?;
    Ok(())
}

fn to_json<T: Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| MetastoreError::Backend(e.to_string()))
}

fn from_json<T: DeserializeOwned>(what: &str, s: &str) -> Result<T> {
    serde_json::from_str(s).map_err(|e| MetastoreError::Corrupt(what.to_string(), e.to_string()))
}

fn load_table(conn: &Connection, db: &str, name: &str) -> Result<Option<Table>> {
    let def: Option<String> = conn
        .query_row(
            "SELECT definition FROM tbls WHERE db = ?1 AND name = ?2",
            params![db, name],
            |r| r.get(0),
        )
        .optional()?;
    def.map(|d| from_json(&format!("table {db}.{name}"), &d))
        .transpose()
}

/// Adds a table row: its database must exist and the name be free.
fn insert_table(conn: &Connection, table: &Table) -> Result<()> {
    let (db, name) = (table.database.to_lowercase(), table.name.to_lowercase());
    crate::check_table_name(&name)?;
    if !db_exists(conn, &db)? {
        return Err(MetastoreError::NoSuchObject(format!("Database {db}")));
    }
    if load_table(conn, &db, &name)?.is_some() {
        return Err(MetastoreError::AlreadyExists(format!("Table {db}.{name}")));
    }
    conn.execute(
        "INSERT INTO tbls (db, name, definition) VALUES (?1, ?2, ?3)",
        params![db, name, to_json(table)?],
    )?;
    Ok(())
}

/// Removes a table row and its partitions; returns how many table rows went (0 or 1).
fn delete_table(conn: &Connection, db: &str, name: &str) -> Result<usize> {
    let n = conn.execute(
        "DELETE FROM tbls WHERE db = ?1 AND name = ?2",
        params![db, name],
    )?;
    conn.execute(
        "DELETE FROM partitions WHERE db = ?1 AND tbl = ?2",
        params![db, name],
    )?;
    Ok(n)
}

fn load_intent(conn: &Connection, id: &str) -> Result<Intent> {
    let def: Option<String> = conn
        .query_row(
            "SELECT definition FROM intents WHERE id = ?1",
            params![id],
            |r| r.get(0),
        )
        .optional()?;
    match def {
        Some(d) => from_json(&format!("intent {id}"), &d),
        None => Err(MetastoreError::NoSuchObject(format!("intent {id}"))),
    }
}

fn save_intent(conn: &Connection, intent: &Intent) -> Result<()> {
    conn.execute(
        "UPDATE intents SET definition = ?2 WHERE id = ?1",
        params![intent.id, to_json(intent)?],
    )?;
    Ok(())
}

fn db_exists(conn: &Connection, db: &str) -> Result<bool> {
    Ok(conn
        .query_row("SELECT 1 FROM dbs WHERE name = ?1", params![db], |_| Ok(()))
        .optional()?
        .is_some())
}

#[async_trait]
impl Metastore for SqliteMetastore {
    async fn create_database(&self, db: &Database) -> Result<()> {
        let (name, def) = (db.name.to_lowercase(), to_json(db)?);
        crate::check_database_name(&name)?;
        self.write(move |tx| {
            if db_exists(tx, &name)? {
                return Err(MetastoreError::AlreadyExists(format!("Database {name}")));
            }
            tx.execute(
                "INSERT INTO dbs (name, definition) VALUES (?1, ?2)",
                params![name, def],
            )?;
            Ok(())
        })
        .await
    }

    async fn get_database(&self, name: &str) -> Result<Option<Database>> {
        let name = name.to_lowercase();
        self.read(move |c| {
            let def: Option<String> = c
                .query_row(
                    "SELECT definition FROM dbs WHERE name = ?1",
                    params![name],
                    |r| r.get(0),
                )
                .optional()?;
            def.map(|d| from_json(&format!("database {name}"), &d))
                .transpose()
        })
        .await
    }

    async fn list_databases(&self) -> Result<Vec<String>> {
        self.read(|c| {
            let mut st = c.prepare_cached("SELECT name FROM dbs ORDER BY name")?;
            let names = st
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<String>>>()?;
            Ok(names)
        })
        .await
    }

    async fn alter_database(&self, db: &Database) -> Result<()> {
        let (name, def) = (db.name.to_lowercase(), to_json(db)?);
        self.write(move |tx| {
            let n = tx.execute(
                "UPDATE dbs SET definition = ?2 WHERE name = ?1",
                params![name, def],
            )?;
            if n == 0 {
                return Err(MetastoreError::NoSuchObject(format!("Database {name}")));
            }
            Ok(())
        })
        .await
    }

    async fn drop_database(&self, name: &str) -> Result<()> {
        let name = name.to_lowercase();
        self.write(move |tx| {
            if !db_exists(tx, &name)? {
                return Err(MetastoreError::NoSuchObject(format!("Database {name}")));
            }
            let tables: i64 = tx.query_row(
                "SELECT count(*) FROM tbls WHERE db = ?1",
                params![name],
                |r| r.get(0),
            )?;
            if tables > 0 {
                return Err(MetastoreError::InvalidOperation(format!(
                    "Database {name} is not empty. One or more tables exist."
                )));
            }
            tx.execute("DELETE FROM dbs WHERE name = ?1", params![name])?;
            Ok(())
        })
        .await
    }

    async fn create_table(&self, table: &Table) -> Result<()> {
        let table = table.clone();
        self.write(move |tx| insert_table(tx, &table)).await
    }

    async fn get_table(&self, db: &str, name: &str) -> Result<Option<Table>> {
        let (db, name) = (db.to_lowercase(), name.to_lowercase());
        self.read(move |c| load_table(c, &db, &name)).await
    }

    async fn list_tables(&self, db: &str) -> Result<Vec<String>> {
        let db = db.to_lowercase();
        self.read(move |c| {
            let mut st = c.prepare_cached("SELECT name FROM tbls WHERE db = ?1 ORDER BY name")?;
            let names = st
                .query_map(params![db], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<String>>>()?;
            Ok(names)
        })
        .await
    }

    async fn get_tables(&self, db: &str) -> Result<Vec<Table>> {
        let db = db.to_lowercase();
        self.read(move |c| {
            let mut st =
                c.prepare_cached("SELECT name, definition FROM tbls WHERE db = ?1 ORDER BY name")?;
            let rows = st
                .query_map(params![db], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(crate::readable(
                rows.iter()
                    .map(|(n, d)| from_json(&format!("table {db}.{n}"), d)),
            ))
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
        self.write(move |tx| {
            if load_table(tx, &db, &name)?.is_none() {
                return Err(MetastoreError::NoSuchObject(format!("Table {db}.{name}")));
            }
            if (new_db.as_str(), new_name.as_str()) != (db.as_str(), name.as_str()) {
                if !db_exists(tx, &new_db)? {
                    return Err(MetastoreError::NoSuchObject(format!("Database {new_db}")));
                }
                if load_table(tx, &new_db, &new_name)?.is_some() {
                    return Err(MetastoreError::AlreadyExists(format!(
                        "Table {new_db}.{new_name}"
                    )));
                }
                tx.execute(
                    "UPDATE partitions SET db = ?3, tbl = ?4 WHERE db = ?1 AND tbl = ?2",
                    params![db, name, new_db, new_name],
                )?;
            }
            tx.execute(
                "UPDATE tbls SET db = ?3, name = ?4, definition = ?5 WHERE db = ?1 AND name = ?2",
                params![db, name, new_db, new_name, def],
            )?;
            Ok(())
        })
        .await
    }

    async fn drop_table(&self, db: &str, name: &str) -> Result<()> {
        let (db, name) = (db.to_lowercase(), name.to_lowercase());
        self.write(move |tx| {
            if delete_table(tx, &db, &name)? == 0 {
                return Err(MetastoreError::NoSuchObject(format!("Table {db}.{name}")));
            }
            Ok(())
        })
        .await
    }

    async fn add_partitions(
        &self,
        db: &str,
        table: &str,
        parts: &[Partition],
        if_not_exists: bool,
    ) -> Result<()> {
        let (db, tbl) = (db.to_lowercase(), table.to_lowercase());
        let parts = parts.to_vec();
        self.write(move |tx| {
            let t = load_table(tx, &db, &tbl)?
                .ok_or_else(|| MetastoreError::NoSuchObject(format!("Table {db}.{tbl}")))?;
            for p in &parts {
                let name = t.partition_name_of(p)?;
                let exists = tx
                    .query_row(
                        "SELECT 1 FROM partitions WHERE db = ?1 AND tbl = ?2 AND name = ?3",
                        params![db, tbl, name],
                        |_| Ok(()),
                    )
                    .optional()?
                    .is_some();
                if exists {
                    if if_not_exists {
                        continue;
                    }
                    return Err(MetastoreError::AlreadyExists(format!(
                        "Partition {name} of table {db}.{tbl}"
                    )));
                }
                tx.execute(
                    "INSERT INTO partitions (db, tbl, name, definition) VALUES (?1, ?2, ?3, ?4)",
                    params![db, tbl, name, to_json(p)?],
                )?;
            }
            Ok(())
        })
        .await
    }

    async fn list_partitions(&self, db: &str, table: &str) -> Result<Vec<Partition>> {
        let (db, tbl) = (db.to_lowercase(), table.to_lowercase());
        self.read(move |c| {
            let mut st = c.prepare_cached(
                "SELECT name, definition FROM partitions WHERE db = ?1 AND tbl = ?2 ORDER BY name",
            )?;
            let rows = st
                .query_map(params![db, tbl], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            rows.iter()
                .map(|(n, d)| from_json(&format!("partition {db}.{tbl}/{n}"), d))
                .collect()
        })
        .await
    }

    async fn alter_partition(&self, db: &str, table: &str, part: &Partition) -> Result<()> {
        let (db, tbl) = (db.to_lowercase(), table.to_lowercase());
        let part = part.clone();
        self.write(move |tx| {
            let t = load_table(tx, &db, &tbl)?
                .ok_or_else(|| MetastoreError::NoSuchObject(format!("Table {db}.{tbl}")))?;
            let name = partition_name(&t.partition_keys, &part.values);
            let n = tx.execute(
                "UPDATE partitions SET definition = ?4 WHERE db = ?1 AND tbl = ?2 AND name = ?3",
                params![db, tbl, name, to_json(&part)?],
            )?;
            if n == 0 {
                return Err(MetastoreError::NoSuchObject(format!(
                    "Partition {name} of table {db}.{tbl}"
                )));
            }
            Ok(())
        })
        .await
    }

    async fn drop_partitions(
        &self,
        db: &str,
        table: &str,
        values: &[Vec<String>],
    ) -> Result<usize> {
        let (db, tbl) = (db.to_lowercase(), table.to_lowercase());
        let values = values.to_vec();
        self.write(move |tx| {
            let t = load_table(tx, &db, &tbl)?
                .ok_or_else(|| MetastoreError::NoSuchObject(format!("Table {db}.{tbl}")))?;
            let mut dropped = 0;
            for v in &values {
                let name = partition_name(&t.partition_keys, v);
                dropped += tx.execute(
                    "DELETE FROM partitions WHERE db = ?1 AND tbl = ?2 AND name = ?3",
                    params![db, tbl, name],
                )?;
            }
            Ok(dropped)
        })
        .await
    }

    async fn record_intent(&self, intent: &Intent) -> Result<()> {
        let intent = intent.clone();
        let def = to_json(&intent)?;
        self.write(move |tx| {
            let (db, name) = (&intent.table.database, &intent.table.name);
            let busy: Option<String> = tx
                .query_row(
                    "SELECT id FROM intents WHERE db = ?1 AND tbl = ?2",
                    params![db, name],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(other) = busy {
                return Err(MetastoreError::InvalidOperation(format!(
                    "table {db}.{name} has an unfinished operation {other} (running, or interrupted: an interrupted one is settled when its server starts)"
                )));
            }
            if intent.kind == IntentKind::CreateTable {
                if !db_exists(tx, db)? {
                    return Err(MetastoreError::NoSuchObject(format!("Database {db}")));
                }
                if load_table(tx, db, name)?.is_some() {
                    return Err(MetastoreError::AlreadyExists(format!("Table {db}.{name}")));
                }
            }
            tx.execute(
                "INSERT INTO intents (id, owner, db, tbl, created, definition) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![intent.id, intent.owner, db, name, intent.created, def],
            )?;
            Ok(())
        })
        .await
    }

    async fn commit_create_intent(&self, intent_id: &str) -> Result<()> {
        let id = intent_id.to_string();
        self.write(move |tx| {
            let mut intent = load_intent(tx, &id)?;
            intent.require_pending()?;
            insert_table(tx, &intent.table)?;
            intent.state = IntentState::Committed;
            save_intent(tx, &intent)
        })
        .await
    }

    async fn commit_drop_intent(&self, intent_id: &str) -> Result<()> {
        let id = intent_id.to_string();
        self.write(move |tx| {
            let mut intent = load_intent(tx, &id)?;
            intent.require_pending()?;
            delete_table(tx, &intent.table.database, &intent.table.name)?;
            intent.state = IntentState::Committed;
            save_intent(tx, &intent)
        })
        .await
    }

    async fn abort_intent(&self, intent_id: &str) -> Result<bool> {
        let id = intent_id.to_string();
        self.write(move |tx| {
            let mut intent = match load_intent(tx, &id) {
                Ok(i) => i,
                Err(MetastoreError::NoSuchObject(_)) => return Ok(false),
                Err(e) => return Err(e),
            };
            match intent.state {
                IntentState::Committed => Ok(false),
                IntentState::Aborting => Ok(true),
                IntentState::Pending => {
                    intent.state = IntentState::Aborting;
                    save_intent(tx, &intent)?;
                    Ok(true)
                }
            }
        })
        .await
    }

    async fn finish_intent(&self, intent_id: &str) -> Result<()> {
        let id = intent_id.to_string();
        self.write(move |tx| {
            tx.execute("DELETE FROM intents WHERE id = ?1", params![id])?;
            Ok(())
        })
        .await
    }

    async fn unfinished_intents(&self, owner: &str) -> Result<Vec<Intent>> {
        let owner = owner.to_string();
        self.read(move |c| {
            let mut st = c.prepare_cached(
                "SELECT definition FROM intents WHERE owner = ?1 ORDER BY created, id",
            )?;
            let defs = st
                .query_map(params![owner], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<String>>>()?;
            defs.iter().map(|d| from_json("intent", d)).collect()
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Column, StorageDescriptor, TableType};
    use std::collections::BTreeMap;

    fn db(name: &str) -> Database {
        Database {
            name: name.into(),
            comment: None,
            location: format!("/w/{name}.db"),
            parameters: BTreeMap::new(),
            owner: "u".into(),
            create_time: 0,
        }
    }

    fn table(db: &str, name: &str) -> Table {
        Table {
            database: db.into(),
            name: name.into(),
            owner: "u".into(),
            create_time: 0,
            table_type: TableType::Managed,
            sd: StorageDescriptor {
                columns: vec![Column {
                    name: "a".into(),
                    type_name: "int".into(),
                    comment: None,
                }],
                num_buckets: -1,
                ..Default::default()
            },
            partition_keys: vec![Column {
                name: "p".into(),
                type_name: "string".into(),
                comment: None,
            }],
            parameters: BTreeMap::new(),
            view_text: None,
            view_database: None,
            secrets: Default::default(),
            data_token: None,
        }
    }

    #[tokio::test]
    async fn objects_persist_and_conflicts_are_refused() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| MetastoreError::Backend(e.to_string()))?;
        let path = dir.path().join("metastore.db");
        {
            let ms = SqliteMetastore::open(&path)?;
            ms.create_database(&db("d")).await?;
            assert!(matches!(
                ms.create_database(&db("d")).await,
                Err(MetastoreError::AlreadyExists(_))
            ));
            ms.create_table(&table("d", "t")).await?;
            assert!(matches!(
                ms.create_table(&table("nodb", "t")).await,
                Err(MetastoreError::NoSuchObject(_))
            ));
            let part = Partition {
                values: vec!["x/y".into()],
                sd: StorageDescriptor::default(),
                parameters: BTreeMap::new(),
                create_time: 0,
            };
            ms.add_partitions("d", "t", std::slice::from_ref(&part), false)
                .await?;
            assert!(ms
                .add_partitions("d", "t", std::slice::from_ref(&part), false)
                .await
                .is_err());
            ms.add_partitions("d", "t", &[part], true).await?;
            assert!(matches!(
                ms.drop_database("d").await,
                Err(MetastoreError::InvalidOperation(_))
            ));
        }
        let ms = SqliteMetastore::open(&path)?;
        assert_eq!(ms.schema_version()?, MIGRATIONS.len());
        assert_eq!(ms.list_databases().await?, vec!["d".to_string()]);
        assert_eq!(ms.get_table("D", "T").await?, Some(table("d", "t")));
        let parts = ms.list_partitions("d", "t").await?;
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].name(&table("d", "t").partition_keys), "p=x%2Fy");
        let mut renamed = table("d", "t2");
        renamed.parameters.insert("k".into(), "v".into());
        ms.alter_table("d", "t", &renamed).await?;
        assert_eq!(ms.list_tables("d").await?, vec!["t2".to_string()]);
        assert_eq!(ms.list_partitions("d", "t2").await?.len(), 1);
        assert_eq!(
            ms.drop_partitions("d", "t2", &[vec!["x/y".into()]]).await?,
            1
        );
        ms.drop_table("d", "t2").await?;
        ms.drop_database("d").await?;
        assert!(ms.list_databases().await?.is_empty());
        Ok(())
    }
}
