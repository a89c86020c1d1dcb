//! The metastore in PostgreSQL, so that several Apiary servers share one catalog. Every change
//! is one SERIALIZABLE transaction: two servers racing on the same names get one success and
//! one clean error (`AlreadyExists`, `NoSuchObject`), never a torn catalog. A transaction
//! that loses a serialization race is run again a few times before the error (`Raced`) reaches
//! the user. Connections come from a small pool, with connect, wait and statement timeouts, so
//! a slow or unreachable PostgreSQL fails calls instead of hanging them. Same documents and schema versions as the SQLite backend.

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::time::Duration;

use deadpool_postgres::{
    Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime, Timeouts, Transaction,
};
use tokio_postgres::{IsolationLevel, NoTls};

use crate::journal::{Intent, IntentKind, IntentState};
use crate::model::{partition_name, Database, Partition, Table};
use crate::{Metastore, MetastoreError, Result};

/// Schema migrations, applied in order; the stored version is the number applied.
const MIGRATIONS: &[&str] = &[
    // 1: databases, tables and partitions as JSON documents keyed by name.
    "CREATE TABLE apiary_dbs (name TEXT PRIMARY KEY, definition TEXT NOT NULL);
     CREATE TABLE apiary_tbls (db TEXT NOT NULL REFERENCES apiary_dbs(name), name TEXT NOT NULL,
                               definition TEXT NOT NULL, PRIMARY KEY (db, name));
     CREATE TABLE apiary_partitions (db TEXT NOT NULL, tbl TEXT NOT NULL, name TEXT NOT NULL,
                                     definition TEXT NOT NULL, PRIMARY KEY (db, tbl, name));",
    // 2: the intent journal of DDL with side effects in other systems.
    "CREATE TABLE apiary_intents (id TEXT PRIMARY KEY, owner TEXT NOT NULL, db TEXT NOT NULL,
                                  tbl TEXT NOT NULL, created BIGINT NOT NULL, definition TEXT NOT NULL);",
];

/// Lock id that serialises schema migrations between servers.
const MIGRATION_LOCK: i64 = 0x6170_6961_7279;

/// How the metastore reaches PostgreSQL: pool size and timeouts.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// Most connections open at once.
    pub pool_size: usize,
    /// Time allowed to open a connection (TCP connect, startup and login).
    pub connect_timeout: Duration,
    /// Time a call waits for a free connection of the pool.
    pub wait_timeout: Duration,
    /// Longest a metastore statement may run on the server (`statement_timeout`); it also
    /// bounds lock waits (`lock_timeout`) and open transactions left idle.
    pub statement_timeout: Duration,
    /// Times a transaction that lost a serialization race is run again before the error
    /// reaches the user.
    pub retries: u32,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        Self {
            pool_size: 8,
            connect_timeout: Duration::from_secs(10),
            wait_timeout: Duration::from_secs(30),
            statement_timeout: Duration::from_secs(30),
            retries: 8,
        }
    }
}

/// The metastore in a PostgreSQL database, reached through a small pool of connections.
pub struct PostgresMetastore {
    pool: Pool,
    retries: u32,
}

impl std::fmt::Debug for PostgresMetastore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresMetastore").finish_non_exhaustive()
    }
}

impl From<PoolError> for MetastoreError {
    fn from(e: PoolError) -> Self {
        match e {
            PoolError::Backend(e) => e.into(),
            PoolError::Timeout(_) => MetastoreError::Backend(
                "timed out waiting for a metastore connection (PostgreSQL busy or unreachable)"
                    .into(),
            ),
            other => MetastoreError::Backend(other.to_string()),
        }
    }
}

/// Whether a failed transaction was rolled back by the server because it raced another one,
/// so running it again is safe and likely to succeed.
fn serialization_failure(e: &tokio_postgres::Error) -> bool {
    use tokio_postgres::error::SqlState;
    e.code().is_some_and(|c| {
        *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
    })
}

/// The pause before retry `attempt` (1-based): exponential from 5 ms, jittered, at most 0.5 s.
fn backoff(attempt: u32) -> Duration {
    let base = 5u64.saturating_mul(1 << attempt.min(7));
    let jitter = u64::from(rand_jitter()) % base.max(1);
    Duration::from_millis((base + jitter).min(500))
}

fn rand_jitter() -> u32 {
    // Time-seeded, enough to keep racing servers from retrying in lock step.
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0)
}

/// What one attempt of a transaction ended with.
enum Attempt<T> {
    Done(Result<T>),
    /// Lost a serialization race; the server rolled it back.
    Retry(tokio_postgres::Error),
}

impl PostgresMetastore {
    /// Connects to `url` (`postgresql://user@host:port/db`) and brings the schema up to date.
    pub async fn open(url: &str, options: &PostgresOptions) -> Result<Self> {
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| MetastoreError::Backend(format!("bad PostgreSQL URL: {e}")))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(options.connect_timeout);
        }
        let ms = options.statement_timeout.as_millis().max(1);
        let mut server_options = config.get_options().unwrap_or("").to_string();
        server_options.push_str(&format!(
            " -c statement_timeout={ms} -c lock_timeout={ms} -c idle_in_transaction_session_timeout={}",
            ms.saturating_mul(2)
        ));
        config.options(server_options.trim());
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .timeouts(Timeouts {
                wait: Some(options.wait_timeout),
                create: Some(options.connect_timeout),
                recycle: Some(options.connect_timeout),
            })
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|e| MetastoreError::Backend(e.to_string()))?;
        let mut client = pool.get().await?;
        let tx = client.transaction().await?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS apiary_schema_version (version INTEGER NOT NULL)",
        )
        .await?;
        let row = tx
            .query_one(
                "SELECT coalesce(max(version), 0) FROM apiary_schema_version",
                &[],
            )
            .await?;
        let version = row.get::<_, i32>(0).max(0) as usize;
        if version > MIGRATIONS.len() {
            return Err(MetastoreError::Backend(format!(
                "the metastore's schema version {version} is newer than this Apiary knows ({}); upgrade Apiary",
                MIGRATIONS.len()
            )));
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
            tx.batch_execute(sql).await?;
            tx.execute(
                "INSERT INTO apiary_schema_version (version) VALUES ($1)",
                &[&((i + 1) as i32)],
            )
            .await?;
            tracing::info!(version = i + 1, "metastore schema migrated");
        }
        tx.commit().await?;
        drop(client);
        Ok(Self {
            pool,
            retries: options.retries,
        })
    }

    /// Runs `f` in one SERIALIZABLE transaction on a pooled connection. A transaction that
    /// loses a serialization race (at any statement or at COMMIT, where the server has rolled
    /// it back) runs again, up to the configured number of retries; `f` is cloned for each
    /// attempt. A broken connection during COMMIT is not retried: its outcome is unknown.
    async fn write<T, F>(&self, f: F) -> Result<T>
    where
        F: for<'a> FnOnce(
                &'a Transaction<'a>,
            ) -> std::pin::Pin<
                Box<dyn std::future::Future<Output = Result<T>> + Send + 'a>,
            > + Clone,
    {
        let mut attempt = 0;
        loop {
            match self.attempt(f.clone()).await {
                Attempt::Done(r) => return r,
                Attempt::Retry(e) if attempt < self.retries => {
                    attempt += 1;
                    tracing::debug!(attempt, error = %e, "metastore transaction raced another; retrying");
                    tokio::time::sleep(backoff(attempt)).await;
                }
                Attempt::Retry(e) => return Err(e.into()),
            }
        }
    }

    async fn attempt<T, F>(&self, f: F) -> Attempt<T>
    where
        F: for<'a> FnOnce(
            &'a Transaction<'a>,
        ) -> std::pin::Pin<
            Box<dyn std::future::Future<Output = Result<T>> + Send + 'a>,
        >,
    {
        let mut client = match self.pool.get().await {
            Ok(c) => c,
            Err(e) => return Attempt::Done(Err(e.into())),
        };
        let tx = match client
            .build_transaction()
            .isolation_level(IsolationLevel::Serializable)
            .start()
            .await
        {
            Ok(tx) => tx,
            Err(e) => return Attempt::Done(Err(e.into())),
        };
        let out = match f(&tx).await {
            Ok(v) => v,
            Err(MetastoreError::Raced(e)) => return Attempt::Retry(e),
            Err(e) => return Attempt::Done(Err(e)),
        };
        match tx.commit().await {
            Ok(()) => Attempt::Done(Ok(out)),
            Err(e) if serialization_failure(&e) => Attempt::Retry(e),
            Err(e) => Attempt::Done(Err(e.into())),
        }
    }

    /// Runs one read on a pooled connection; a read that found its connection broken runs
    /// once more on another.
    async fn read_rows(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<tokio_postgres::Row>> {
        let mut retried = false;
        loop {
            let client = self.pool.get().await?;
            match client.query(sql, params).await {
                Ok(rows) => return Ok(rows),
                Err(e) if e.is_closed() && !retried => retried = true,
                Err(e) => return Err(e.into()),
            }
        }
    }
}

fn to_json<T: Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| MetastoreError::Backend(e.to_string()))
}

fn from_json<T: DeserializeOwned>(what: &str, s: &str) -> Result<T> {
    serde_json::from_str(s).map_err(|e| MetastoreError::Corrupt(what.to_string(), e.to_string()))
}

async fn load_table(tx: &Transaction<'_>, db: &str, name: &str) -> Result<Option<Table>> {
    let rows = tx
        .query(
            "SELECT definition FROM apiary_tbls WHERE db = $1 AND name = $2",
            &[&db, &name],
        )
        .await?;
    rows.first()
        .map(|r| from_json(&format!("table {db}.{name}"), r.get::<_, &str>(0)))
        .transpose()
}

/// Adds a table row: its database must exist and the name be free.
async fn insert_table(tx: &Transaction<'_>, table: &Table) -> Result<()> {
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
        "INSERT INTO apiary_tbls (db, name, definition) VALUES ($1, $2, $3)",
        &[&db, &name, &def],
    )
    .await?;
    Ok(())
}

/// Removes a table row and its partitions; returns how many table rows went (0 or 1).
async fn delete_table(tx: &Transaction<'_>, db: &str, name: &str) -> Result<u64> {
    let n = tx
        .execute(
            "DELETE FROM apiary_tbls WHERE db = $1 AND name = $2",
            &[&db, &name],
        )
        .await?;
    tx.execute(
        "DELETE FROM apiary_partitions WHERE db = $1 AND tbl = $2",
        &[&db, &name],
    )
    .await?;
    Ok(n)
}

async fn load_intent(tx: &Transaction<'_>, id: &str) -> Result<Intent> {
    let rows = tx
        .query(
            "SELECT definition FROM apiary_intents WHERE id = $1",
            &[&id],
        )
        .await?;
    match rows.first() {
        Some(r) => from_json(&format!("intent {id}"), r.get::<_, &str>(0)),
        None => Err(MetastoreError::NoSuchObject(format!("intent {id}"))),
    }
}

async fn save_intent(tx: &Transaction<'_>, intent: &Intent) -> Result<()> {
    let def = to_json(intent)?;
    tx.execute(
        "UPDATE apiary_intents SET definition = $2 WHERE id = $1",
        &[&intent.id, &def],
    )
    .await?;
    Ok(())
}

async fn db_exists(tx: &Transaction<'_>, db: &str) -> Result<bool> {
    Ok(!tx
        .query("SELECT 1 FROM apiary_dbs WHERE name = $1", &[&db])
        .await?
        .is_empty())
}

#[async_trait]
impl Metastore for PostgresMetastore {
    async fn create_database(&self, db: &Database) -> Result<()> {
        let (name, def) = (db.name.to_lowercase(), to_json(db)?);
        crate::check_database_name(&name)?;
        self.write(move |tx| {
            Box::pin(async move {
                if db_exists(tx, &name).await? {
                    return Err(MetastoreError::AlreadyExists(format!("Database {name}")));
                }
                tx.execute(
                    "INSERT INTO apiary_dbs (name, definition) VALUES ($1, $2)",
                    &[&name, &def],
                )
                .await?;
                Ok(())
            })
        })
        .await
    }

    async fn get_database(&self, name: &str) -> Result<Option<Database>> {
        let name = name.to_lowercase();
        let rows = self
            .read_rows(
                "SELECT definition FROM apiary_dbs WHERE name = $1",
                &[&name],
            )
            .await?;
        rows.first()
            .map(|r| from_json(&format!("database {name}"), r.get::<_, &str>(0)))
            .transpose()
    }

    async fn list_databases(&self) -> Result<Vec<String>> {
        let rows = self
            .read_rows("SELECT name FROM apiary_dbs ORDER BY name", &[])
            .await?;
        Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect())
    }

    async fn alter_database(&self, db: &Database) -> Result<()> {
        let (name, def) = (db.name.to_lowercase(), to_json(db)?);
        self.write(move |tx| {
            Box::pin(async move {
                let n = tx
                    .execute(
                        "UPDATE apiary_dbs SET definition = $2 WHERE name = $1",
                        &[&name, &def],
                    )
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
        let name = name.to_lowercase();
        self.write(move |tx| {
            Box::pin(async move {
                if !db_exists(tx, &name).await? {
                    return Err(MetastoreError::NoSuchObject(format!("Database {name}")));
                }
                let n: i64 = tx
                    .query_one("SELECT count(*) FROM apiary_tbls WHERE db = $1", &[&name])
                    .await?
                    .get(0);
                if n > 0 {
                    return Err(MetastoreError::InvalidOperation(format!(
                        "Database {name} is not empty. One or more tables exist."
                    )));
                }
                tx.execute("DELETE FROM apiary_dbs WHERE name = $1", &[&name])
                    .await?;
                Ok(())
            })
        })
        .await
    }

    async fn create_table(&self, table: &Table) -> Result<()> {
        let table = table.clone();
        self.write(move |tx| Box::pin(async move { insert_table(tx, &table).await }))
            .await
    }

    async fn get_table(&self, db: &str, name: &str) -> Result<Option<Table>> {
        let (db, name) = (db.to_lowercase(), name.to_lowercase());
        let rows = self
            .read_rows(
                "SELECT definition FROM apiary_tbls WHERE db = $1 AND name = $2",
                &[&db, &name],
            )
            .await?;
        rows.first()
            .map(|r| from_json(&format!("table {db}.{name}"), r.get::<_, &str>(0)))
            .transpose()
    }

    async fn list_tables(&self, db: &str) -> Result<Vec<String>> {
        let db = db.to_lowercase();
        let rows = self
            .read_rows(
                "SELECT name FROM apiary_tbls WHERE db = $1 ORDER BY name",
                &[&db],
            )
            .await?;
        Ok(rows.iter().map(|r| r.get::<_, String>(0)).collect())
    }

    async fn get_tables(&self, db: &str) -> Result<Vec<Table>> {
        let db = db.to_lowercase();
        let rows = self
            .read_rows(
                "SELECT name, definition FROM apiary_tbls WHERE db = $1 ORDER BY name",
                &[&db],
            )
            .await?;
        Ok(crate::readable(rows.iter().map(|r| {
            from_json(
                &format!("table {db}.{}", r.get::<_, &str>(0)),
                r.get::<_, &str>(1),
            )
        })))
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
            Box::pin(async move {
                if load_table(tx, &db, &name).await?.is_none() {
                    return Err(MetastoreError::NoSuchObject(format!("Table {db}.{name}")));
                }
                if (new_db.as_str(), new_name.as_str()) != (db.as_str(), name.as_str()) {
                    if !db_exists(tx, &new_db).await? {
                        return Err(MetastoreError::NoSuchObject(format!("Database {new_db}")));
                    }
                    if load_table(tx, &new_db, &new_name).await?.is_some() {
                        return Err(MetastoreError::AlreadyExists(format!(
                            "Table {new_db}.{new_name}"
                        )));
                    }
                    tx.execute(
                        "UPDATE apiary_partitions SET db = $3, tbl = $4 WHERE db = $1 AND tbl = $2",
                        &[&db, &name, &new_db, &new_name],
                    )
                    .await?;
                }
                tx.execute(
                    "UPDATE apiary_tbls SET db = $3, name = $4, definition = $5 WHERE db = $1 AND name = $2",
                    &[&db, &name, &new_db, &new_name, &def],
                )
                .await?;
                Ok(())
            })
        })
        .await
    }

    async fn drop_table(&self, db: &str, name: &str) -> Result<()> {
        let (db, name) = (db.to_lowercase(), name.to_lowercase());
        self.write(move |tx| {
            Box::pin(async move {
                if delete_table(tx, &db, &name).await? == 0 {
                    return Err(MetastoreError::NoSuchObject(format!("Table {db}.{name}")));
                }
                Ok(())
            })
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
            Box::pin(async move {
                let t = load_table(tx, &db, &tbl)
                    .await?
                    .ok_or_else(|| MetastoreError::NoSuchObject(format!("Table {db}.{tbl}")))?;
                for p in &parts {
                    let name = t.partition_name_of(p)?;
                    let exists = !tx
                        .query(
                            "SELECT 1 FROM apiary_partitions WHERE db = $1 AND tbl = $2 AND name = $3",
                            &[&db, &tbl, &name],
                        )
                        .await?
                        .is_empty();
                    if exists {
                        if if_not_exists {
                            continue;
                        }
                        return Err(MetastoreError::AlreadyExists(format!(
                            "Partition {name} of table {db}.{tbl}"
                        )));
                    }
                    tx.execute(
                        "INSERT INTO apiary_partitions (db, tbl, name, definition) VALUES ($1, $2, $3, $4)",
                        &[&db, &tbl, &name, &to_json(p)?],
                    )
                    .await?;
                }
                Ok(())
            })
        })
        .await
    }

    async fn list_partitions(&self, db: &str, table: &str) -> Result<Vec<Partition>> {
        let (db, tbl) = (db.to_lowercase(), table.to_lowercase());
        let rows = self
            .read_rows(
                "SELECT name, definition FROM apiary_partitions WHERE db = $1 AND tbl = $2 ORDER BY name",
                &[&db, &tbl],
            )
            .await?;
        rows.iter()
            .map(|r| {
                from_json(
                    &format!("partition {db}.{tbl}/{}", r.get::<_, &str>(0)),
                    r.get::<_, &str>(1),
                )
            })
            .collect()
    }

    async fn alter_partition(&self, db: &str, table: &str, part: &Partition) -> Result<()> {
        let (db, tbl) = (db.to_lowercase(), table.to_lowercase());
        let part = part.clone();
        self.write(move |tx| {
            Box::pin(async move {
                let t = load_table(tx, &db, &tbl)
                    .await?
                    .ok_or_else(|| MetastoreError::NoSuchObject(format!("Table {db}.{tbl}")))?;
                let name = partition_name(&t.partition_keys, &part.values);
                let n = tx
                    .execute(
                        "UPDATE apiary_partitions SET definition = $4 WHERE db = $1 AND tbl = $2 AND name = $3",
                        &[&db, &tbl, &name, &to_json(&part)?],
                    )
                    .await?;
                if n == 0 {
                    return Err(MetastoreError::NoSuchObject(format!(
                        "Partition {name} of table {db}.{tbl}"
                    )));
                }
                Ok(())
            })
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
            Box::pin(async move {
                let t = load_table(tx, &db, &tbl)
                    .await?
                    .ok_or_else(|| MetastoreError::NoSuchObject(format!("Table {db}.{tbl}")))?;
                let mut dropped = 0;
                for v in &values {
                    let name = partition_name(&t.partition_keys, v);
                    dropped += tx
                        .execute(
                            "DELETE FROM apiary_partitions WHERE db = $1 AND tbl = $2 AND name = $3",
                            &[&db, &tbl, &name],
                        )
                        .await? as usize;
                }
                Ok(dropped)
            })
        })
        .await
    }

    async fn record_intent(&self, intent: &Intent) -> Result<()> {
        let intent = intent.clone();
        let def = to_json(&intent)?;
        self.write(move |tx| {
            Box::pin(async move {
                let (db, name) = (&intent.table.database, &intent.table.name);
                let busy = tx
                    .query(
                        "SELECT id FROM apiary_intents WHERE db = $1 AND tbl = $2",
                        &[db, name],
                    )
                    .await?;
                if let Some(other) = busy.first() {
                    return Err(MetastoreError::InvalidOperation(format!(
                        "table {db}.{name} has an unfinished operation {} (running, or interrupted: an interrupted one is settled when its server starts)",
                        other.get::<_, &str>(0)
                    )));
                }
                if intent.kind == IntentKind::CreateTable {
                    if !db_exists(tx, db).await? {
                        return Err(MetastoreError::NoSuchObject(format!("Database {db}")));
                    }
                    if load_table(tx, db, name).await?.is_some() {
                        return Err(MetastoreError::AlreadyExists(format!("Table {db}.{name}")));
                    }
                }
                tx.execute(
                    "INSERT INTO apiary_intents (id, owner, db, tbl, created, definition) VALUES ($1, $2, $3, $4, $5, $6)",
                    &[&intent.id, &intent.owner, db, name, &intent.created, &def],
                )
                .await?;
                Ok(())
            })
        })
        .await
    }

    async fn commit_create_intent(&self, intent_id: &str) -> Result<()> {
        let id = intent_id.to_string();
        self.write(move |tx| {
            Box::pin(async move {
                let mut intent = load_intent(tx, &id).await?;
                intent.require_pending()?;
                insert_table(tx, &intent.table).await?;
                intent.state = IntentState::Committed;
                save_intent(tx, &intent).await
            })
        })
        .await
    }

    async fn commit_drop_intent(&self, intent_id: &str) -> Result<()> {
        let id = intent_id.to_string();
        self.write(move |tx| {
            Box::pin(async move {
                let mut intent = load_intent(tx, &id).await?;
                intent.require_pending()?;
                delete_table(tx, &intent.table.database, &intent.table.name).await?;
                intent.state = IntentState::Committed;
                save_intent(tx, &intent).await
            })
        })
        .await
    }

    async fn abort_intent(&self, intent_id: &str) -> Result<bool> {
        let id = intent_id.to_string();
        self.write(move |tx| {
            Box::pin(async move {
                let mut intent = match load_intent(tx, &id).await {
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
        let id = intent_id.to_string();
        self.write(move |tx| {
            Box::pin(async move {
                tx.execute("DELETE FROM apiary_intents WHERE id = $1", &[&id])
                    .await?;
                Ok(())
            })
        })
        .await
    }

    async fn unfinished_intents(&self, owner: &str) -> Result<Vec<Intent>> {
        let owner = owner.to_string();
        let rows = self
            .read_rows(
                "SELECT definition FROM apiary_intents WHERE owner = $1 ORDER BY created, id",
                &[&owner],
            )
            .await?;
        rows.iter()
            .map(|r| from_json("intent", r.get::<_, &str>(0)))
            .collect()
    }
}
