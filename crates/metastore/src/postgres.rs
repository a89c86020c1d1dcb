//! The metastore in PostgreSQL, so that several Apiary servers share one catalog. Every change
//! is one SERIALIZABLE transaction: two servers racing on the same names get one success and
//! one clean error (`AlreadyExists`, `NoSuchObject`), never a torn catalog. A transaction
//! that loses a serialization race is run again a few times before the error (`Raced`) reaches
//! the user. Connections come from a small pool, with connect, wait and statement timeouts, so
//! a slow or unreachable PostgreSQL fails calls instead of hanging them. The catalog's logic
//! is in [`crate::catalog`], shared with the SQLite backend; this file runs its transactions
//! and spells its statements.

use async_trait::async_trait;
use futures::future::BoxFuture;
use std::time::Duration;

use deadpool_postgres::{
    Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime, Timeouts,
};
use tokio_postgres::types::ToSql;
use tokio_postgres::{GenericClient, IsolationLevel, NoTls};

use crate::catalog::{self, Access, Arg, Backend, Stmt, Txn};
use crate::{MetastoreError, Result};

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
    // 3: SQL-standard authorization: roles, and grants of privileges and role memberships.
    "CREATE TABLE apiary_roles (name TEXT PRIMARY KEY, definition TEXT NOT NULL);
     CREATE TABLE apiary_grants (object TEXT NOT NULL, principal TEXT NOT NULL,
                                 privilege TEXT NOT NULL, definition TEXT NOT NULL,
                                 PRIMARY KEY (object, principal, privilege));
     CREATE INDEX apiary_grants_by_principal ON apiary_grants (principal);",
];

/// The catalog's statements in PostgreSQL's SQL.
fn sql(stmt: Stmt) -> &'static str {
    match stmt {
        Stmt::CreateVersionTable => {
            "CREATE TABLE IF NOT EXISTS apiary_schema_version (version INTEGER NOT NULL)"
        }
        Stmt::SchemaVersion => "SELECT coalesce(max(version), 0)::text FROM apiary_schema_version",
        Stmt::RecordVersion => "INSERT INTO apiary_schema_version (version) VALUES ($1::bigint)",
        Stmt::DatabaseExists => "SELECT name FROM apiary_dbs WHERE name = $1",
        Stmt::GetDatabase => "SELECT definition FROM apiary_dbs WHERE name = $1",
        Stmt::ListDatabases => "SELECT name FROM apiary_dbs ORDER BY name",
        Stmt::InsertDatabase => "INSERT INTO apiary_dbs (name, definition) VALUES ($1, $2)",
        Stmt::UpdateDatabase => "UPDATE apiary_dbs SET definition = $2 WHERE name = $1",
        Stmt::DeleteDatabase => "DELETE FROM apiary_dbs WHERE name = $1",
        Stmt::AnyTableOf => "SELECT name FROM apiary_tbls WHERE db = $1 LIMIT 1",
        Stmt::GetTable => "SELECT definition FROM apiary_tbls WHERE db = $1 AND name = $2",
        Stmt::ListTableNames => "SELECT name FROM apiary_tbls WHERE db = $1 ORDER BY name",
        Stmt::ListTables => {
            "SELECT name, definition FROM apiary_tbls WHERE db = $1 ORDER BY name"
        }
        Stmt::InsertTable => {
            "INSERT INTO apiary_tbls (db, name, definition) VALUES ($1, $2, $3)"
        }
        Stmt::UpdateTable => {
            "UPDATE apiary_tbls SET db = $3, name = $4, definition = $5 WHERE db = $1 AND name = $2"
        }
        Stmt::DeleteTable => "DELETE FROM apiary_tbls WHERE db = $1 AND name = $2",
        Stmt::DeletePartitionsOf => "DELETE FROM apiary_partitions WHERE db = $1 AND tbl = $2",
        Stmt::MovePartitions => {
            "UPDATE apiary_partitions SET db = $3, tbl = $4 WHERE db = $1 AND tbl = $2"
        }
        Stmt::PartitionExists => {
            "SELECT name FROM apiary_partitions WHERE db = $1 AND tbl = $2 AND name = $3"
        }
        Stmt::InsertPartition => {
            "INSERT INTO apiary_partitions (db, tbl, name, definition) VALUES ($1, $2, $3, $4)"
        }
        Stmt::ListPartitions => {
            "SELECT name, definition FROM apiary_partitions WHERE db = $1 AND tbl = $2 ORDER BY name"
        }
        Stmt::UpdatePartition => {
            "UPDATE apiary_partitions SET definition = $4 WHERE db = $1 AND tbl = $2 AND name = $3"
        }
        Stmt::DeletePartition => {
            "DELETE FROM apiary_partitions WHERE db = $1 AND tbl = $2 AND name = $3"
        }
        Stmt::GetIntent => "SELECT definition FROM apiary_intents WHERE id = $1",
        Stmt::IntentsOnTable => "SELECT id FROM apiary_intents WHERE db = $1 AND tbl = $2",
        Stmt::InsertIntent => {
            "INSERT INTO apiary_intents (id, owner, db, tbl, created, definition) VALUES ($1, $2, $3, $4, $5, $6)"
        }
        Stmt::UpdateIntent => "UPDATE apiary_intents SET definition = $2 WHERE id = $1",
        Stmt::DeleteIntent => "DELETE FROM apiary_intents WHERE id = $1",
        Stmt::IntentsOf => {
            "SELECT definition FROM apiary_intents WHERE owner = $1 ORDER BY created, id"
        }
        Stmt::RoleExists => "SELECT name FROM apiary_roles WHERE name = $1",
        Stmt::InsertRole => "INSERT INTO apiary_roles (name, definition) VALUES ($1, $2)",
        Stmt::DeleteRole => "DELETE FROM apiary_roles WHERE name = $1",
        Stmt::ListRoles => "SELECT definition FROM apiary_roles ORDER BY name",
        Stmt::PutGrant => {
            "INSERT INTO apiary_grants (object, principal, privilege, definition) VALUES ($1, $2, $3, $4)
             ON CONFLICT (object, principal, privilege) DO UPDATE SET definition = excluded.definition"
        }
        Stmt::GetGrant => {
            "SELECT definition FROM apiary_grants WHERE object = $1 AND principal = $2 AND privilege = $3"
        }
        Stmt::DeleteGrant => {
            "DELETE FROM apiary_grants WHERE object = $1 AND principal = $2 AND privilege = $3"
        }
        Stmt::DeleteGrantsOn => "DELETE FROM apiary_grants WHERE object = $1",
        Stmt::DeleteGrantsOf => "DELETE FROM apiary_grants WHERE principal = $1",
        Stmt::GrantsOn => {
            "SELECT definition FROM apiary_grants WHERE object = $1 ORDER BY principal, privilege"
        }
        Stmt::GrantsOf => {
            "SELECT definition FROM apiary_grants WHERE principal = $1 ORDER BY object, privilege"
        }
        Stmt::AllGrants => {
            "SELECT definition FROM apiary_grants ORDER BY object, principal, privilege"
        }
    }
}

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
    /// Worth running again: a write lost a serialization race (the server rolled it back),
    /// or a read found its connection broken.
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
        catalog::migrate(&mut PgTxn::new(&*tx), MIGRATIONS).await?;
        tx.commit().await?;
        drop(client);
        Ok(Self {
            pool,
            retries: options.retries,
        })
    }

    /// One attempt of a write: a SERIALIZABLE transaction on a pooled connection.
    async fn attempt<A, T, F>(&self, args: &A, body: &F) -> Attempt<T>
    where
        F: for<'a> Fn(&'a mut dyn Txn, &'a A) -> BoxFuture<'a, Result<T>>,
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
        let out = match body(&mut PgTxn::new(&*tx), args).await {
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

    /// One attempt of a read; one that found its connection broken may run again.
    async fn read_once<A, T, F>(&self, args: &A, body: &F) -> Attempt<T>
    where
        F: for<'a> Fn(&'a mut dyn Txn, &'a A) -> BoxFuture<'a, Result<T>>,
    {
        let client = match self.pool.get().await {
            Ok(c) => c,
            Err(e) => return Attempt::Done(Err(e.into())),
        };
        let mut txn = PgTxn::new(&**client);
        let out = body(&mut txn, args).await;
        match (out, txn.closed.take()) {
            (Err(_), Some(e)) => Attempt::Retry(e),
            (out, _) => Attempt::Done(out),
        }
    }
}

impl Backend for PostgresMetastore {
    /// A write is one SERIALIZABLE transaction on a pooled connection. One that loses a
    /// serialization race (at any statement or at COMMIT, where the server has rolled it
    /// back) runs again, up to the configured number of retries; a broken connection during
    /// COMMIT is not retried: its outcome is unknown. A read runs on a pooled connection
    /// outside a transaction (every read is one statement), and once more on another
    /// connection if it found its own broken.
    fn transact<A, T, F>(&self, access: Access, args: A, body: F) -> BoxFuture<'_, Result<T>>
    where
        A: Send + Sync + 'static,
        T: Send + 'static,
        F: for<'a> Fn(&'a mut dyn Txn, &'a A) -> BoxFuture<'a, Result<T>> + Send + Sync + 'static,
    {
        Box::pin(async move {
            let retries = match access {
                Access::Write => self.retries,
                Access::Read => 1,
            };
            let mut attempt = 0;
            loop {
                let outcome = match access {
                    Access::Write => self.attempt(&args, &body).await,
                    Access::Read => self.read_once(&args, &body).await,
                };
                match outcome {
                    Attempt::Done(r) => return r,
                    Attempt::Retry(e) if attempt < retries => {
                        attempt += 1;
                        tracing::debug!(attempt, error = %e, "metastore call raced another or lost its connection; retrying");
                        tokio::time::sleep(backoff(attempt)).await;
                    }
                    Attempt::Retry(e) => return Err(e.into()),
                }
            }
        })
    }
}

/// A PostgreSQL connection or transaction; notes whether a statement found the connection
/// closed, so a read can run again on another.
struct PgTxn<'c, C> {
    client: &'c C,
    closed: Option<tokio_postgres::Error>,
}

impl<'c, C> PgTxn<'c, C> {
    fn new(client: &'c C) -> Self {
        Self {
            client,
            closed: None,
        }
    }

    fn failed(&mut self, e: tokio_postgres::Error) -> MetastoreError {
        if e.is_closed() {
            let kept = MetastoreError::Backend(e.to_string());
            self.closed = Some(e);
            return kept;
        }
        e.into()
    }
}

fn params<'a>(args: &'a [Arg<'a>]) -> Vec<&'a (dyn ToSql + Sync)> {
    args.iter()
        .map(|a| match a {
            Arg::Text(s) => s as &(dyn ToSql + Sync),
            Arg::Int(i) => i as &(dyn ToSql + Sync),
        })
        .collect()
}

#[async_trait]
impl<C: GenericClient + Sync> Txn for PgTxn<'_, C> {
    async fn query(&mut self, stmt: Stmt, args: &[Arg<'_>]) -> Result<Vec<Vec<String>>> {
        let rows = match self.client.query(sql(stmt), &params(args)).await {
            Ok(rows) => rows,
            Err(e) => return Err(self.failed(e)),
        };
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let mut cols = Vec::with_capacity(row.len());
            for i in 0..row.len() {
                match row.try_get::<_, String>(i) {
                    Ok(v) => cols.push(v),
                    Err(e) => return Err(self.failed(e)),
                }
            }
            out.push(cols);
        }
        Ok(out)
    }

    async fn execute(&mut self, stmt: Stmt, args: &[Arg<'_>]) -> Result<u64> {
        match self.client.execute(sql(stmt), &params(args)).await {
            Ok(n) => Ok(n),
            Err(e) => Err(self.failed(e)),
        }
    }

    async fn batch(&mut self, sql: &str) -> Result<()> {
        match self.client.batch_execute(sql).await {
            Ok(()) => Ok(()),
            Err(e) => Err(self.failed(e)),
        }
    }
}
