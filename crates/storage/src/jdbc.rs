//! The JDBC storage handler (`org.apache.hive.storage.jdbc.JdbcStorageHandler`, short name
//! JDBC): a table in a SQL database, named by Hive's properties (`hive.sql.database.type`,
//! `hive.sql.jdbc.url`, `hive.sql.dbcp.username`, `hive.sql.dbcp.password`, `hive.sql.table` or
//! `hive.sql.query`, `hive.sql.schema`). PostgreSQL and SQLite are spoken natively (no JVM).
//!
//! Past Hive: a managed table creates the remote table (tagged with the operation that made
//! it: a table comment in PostgreSQL, a row of `apiary_tags` in SQLite, written in the same
//! remote transaction) and DROP removes it; an external table is checked against the remote
//! columns. Scans push projection, filters and limit into the remote SQL, which EXPLAIN shows.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use apiary_metastore::{Column, Table, TableType};
use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, RecordBatchOptions, StringArray};
use arrow::datatypes::{DataType, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::datasource::TableType as DfTableType;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    ReplaceChildrenOptions,
};
use datafusion::sql::unparser::dialect::{Dialect, MySqlDialect, PostgreSqlDialect, SqliteDialect};
use datafusion::sql::unparser::Unparser;
use futures::StreamExt;
use mysql_async::prelude::Queryable;

use crate::handler::{
    AlterOp, Capabilities, HandlerError, HandlerResult, JobProperties, MetaHook, ObjectState,
    OpTag, StorageHandler, CREATED_BY,
};
use crate::native::column_field;
use crate::types::HiveType;

/// Hive's class name.
pub const CLASS: &str = "org.apache.hive.storage.jdbc.JdbcStorageHandler";
const SERDE: &str = "org.apache.hive.storage.jdbc.JdbcSerDe";
const PASSWORD: &str = "hive.sql.dbcp.password";
/// Properties that say which remote table a JDBC table is.
const CONNECTION_KEYS: &[&str] = &[
    CREATED_BY,
    "hive.sql.database.type",
    "hive.sql.jdbc.url",
    "hive.sql.table",
    "hive.sql.schema",
    "hive.sql.query",
];
/// Table property: `false` reads every row and filters and aggregates here (for comparison).
pub const PUSHDOWN: &str = "apiary.jdbc.pushdown";
/// Rows per batch read from the remote database.
const BATCH_ROWS: usize = 8192;
/// Rows per INSERT statement sent to the remote database.
const INSERT_ROWS: usize = 500;

/// The JDBC handler.
#[derive(Debug, Clone, Copy)]
pub struct JdbcHandler;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Postgres,
    Sqlite,
    Mysql,
}

/// Where a JDBC table's rows are.
#[derive(Clone)]
struct Remote {
    kind: Kind,
    /// PostgreSQL connection settings, or the SQLite file.
    connect: Connect,
    /// `schema.table` as SQL, or None with `query`.
    table: Option<RemoteName>,
    /// `hive.sql.query`.
    query: Option<String>,
}

#[derive(Clone)]
enum Connect {
    Postgres(Box<tokio_postgres::Config>),
    Sqlite(std::path::PathBuf),
    Mysql(Box<mysql_async::Opts>),
}

#[derive(Clone, Debug)]
struct RemoteName {
    kind: Kind,
    schema: Option<String>,
    name: String,
}

/// An identifier as SQL, always quoted (so reserved words work). A plain name is folded as
/// the database folds unquoted names (PostgreSQL: lower case), so `orders` and `ORDERS` mean
/// what they would unquoted.
fn ident(kind: Kind, s: &str) -> String {
    quoted(kind, &RemoteName::stored(s, kind))
}

fn is_plain(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A quoted identifier: `"x"`, or `` `x` `` in MySQL.
fn quoted(kind: Kind, s: &str) -> String {
    match kind {
        Kind::Mysql => format!("`{}`", s.replace('`', "``")),
        _ => format!("\"{}\"", s.replace('"', "\"\"")),
    }
}

/// A string literal; MySQL also treats backslashes as escapes.
fn literal(kind: Kind, s: &str) -> String {
    let s = s.replace('\'', "''");
    match kind {
        Kind::Mysql => format!("'{}'", s.replace('\\', "\\\\")),
        _ => format!("'{s}'"),
    }
}

impl RemoteName {
    fn sql(&self) -> String {
        match &self.schema {
            Some(s) => format!("{}.{}", ident(self.kind, s), ident(self.kind, &self.name)),
            None => ident(self.kind, &self.name),
        }
    }

    /// The name as the catalog stores it (PostgreSQL folds unquoted names to lower case).
    fn stored(s: &str, kind: Kind) -> String {
        if is_plain(s) && kind == Kind::Postgres {
            s.to_lowercase()
        } else {
            s.to_string()
        }
    }
}

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // No connection settings: they hold the password.
        f.debug_struct("Remote")
            .field("kind", &self.kind)
            .field("table", &self.table)
            .finish_non_exhaustive()
    }
}

fn def_err(msg: impl Into<String>) -> HandlerError {
    HandlerError::Definition(msg.into())
}

fn remote_err(e: impl fmt::Display) -> HandlerError {
    HandlerError::Remote(e.to_string())
}

/// A PostgreSQL error with the server's own message (the driver's display is only "db error").
fn pg_err(e: tokio_postgres::Error) -> HandlerError {
    match e.as_db_error() {
        Some(d) => HandlerError::Remote(format!(
            "PostgreSQL: {} ({}: {})",
            d.message(),
            d.severity(),
            d.code().code()
        )),
        None => HandlerError::Remote(format!("PostgreSQL: {e}")),
    }
}

/// Reads a table's JDBC properties (secrets included).
fn remote_of(props: &BTreeMap<String, String>) -> HandlerResult<Remote> {
    let get = |k: &str| props.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let db_type = get("hive.sql.database.type")
        .ok_or_else(|| def_err("Property hive.sql.database.type is required"))?;
    let kind = match db_type.to_ascii_uppercase().as_str() {
        "POSTGRES" | "POSTGRESQL" => Kind::Postgres,
        "SQLITE" => Kind::Sqlite,
        "MYSQL" | "MARIADB" => Kind::Mysql,
        other => {
            return Err(def_err(format!(
                "hive.sql.database.type {other} is not supported here; supported: POSTGRES, MYSQL, SQLITE"
            )))
        }
    };
    let url = get("hive.sql.jdbc.url")
        .ok_or_else(|| def_err("Property hive.sql.jdbc.url is required"))?;
    let connect = match kind {
        Kind::Postgres => {
            let rest = url.strip_prefix("jdbc:postgresql:").ok_or_else(|| {
                def_err(format!(
                    "hive.sql.jdbc.url {url} is not a jdbc:postgresql: URL"
                ))
            })?;
            let parsed = url::Url::parse(&format!("postgresql:{rest}"))
                .map_err(|e| def_err(format!("hive.sql.jdbc.url {url}: {e}")))?;
            let mut c = tokio_postgres::Config::new();
            c.host(parsed.host_str().unwrap_or("localhost"));
            c.port(parsed.port().unwrap_or(5432));
            c.dbname(parsed.path().trim_start_matches('/'));
            c.connect_timeout(std::time::Duration::from_secs(10));
            c.application_name("apiary");
            // Literals and values as this handler writes and reads them, whatever the
            // database's or role's defaults.
            c.options(
                "-c standard_conforming_strings=on -c DateStyle=ISO -c TimeZone=UTC \
                 -c bytea_output=hex -c extra_float_digits=3",
            );
            for (k, v) in parsed.query_pairs() {
                match k.as_ref() {
                    "user" => {
                        c.user(v.as_ref());
                    }
                    "password" => {
                        c.password(v.as_bytes());
                    }
                    _ => {}
                }
            }
            if let Some(u) = get("hive.sql.dbcp.username") {
                c.user(u);
            }
            if let Some(p) = get(PASSWORD) {
                c.password(p);
            }
            Connect::Postgres(Box::new(c))
        }
        Kind::Sqlite => {
            let path = url.strip_prefix("jdbc:sqlite:").ok_or_else(|| {
                def_err(format!("hive.sql.jdbc.url {url} is not a jdbc:sqlite: URL"))
            })?;
            Connect::Sqlite(std::path::PathBuf::from(path))
        }
        Kind::Mysql => {
            let rest = url
                .strip_prefix("jdbc:mysql:")
                .or_else(|| url.strip_prefix("jdbc:mariadb:"))
                .ok_or_else(|| {
                    def_err(format!("hive.sql.jdbc.url {url} is not a jdbc:mysql: URL"))
                })?;
            let parsed = url::Url::parse(&format!("mysql:{rest}"))
                .map_err(|e| def_err(format!("hive.sql.jdbc.url {url}: {e}")))?;
            let mut user = parsed
                .query_pairs()
                .find(|(k, _)| k == "user")
                .map(|(_, v)| v.into_owned());
            let mut pass = parsed
                .query_pairs()
                .find(|(k, _)| k == "password")
                .map(|(_, v)| v.into_owned());
            if let Some(u) = get("hive.sql.dbcp.username") {
                user = Some(u.to_string());
            }
            if let Some(p) = get(PASSWORD) {
                pass = Some(p.to_string());
            }
            let db = parsed.path().trim_start_matches('/').to_string();
            let opts = mysql_async::OptsBuilder::default()
                .ip_or_hostname(parsed.host_str().unwrap_or("localhost").to_string())
                .tcp_port(parsed.port().unwrap_or(3306))
                .user(user)
                .pass(pass)
                .db_name((!db.is_empty()).then_some(db));
            Connect::Mysql(Box::new(opts.into()))
        }
    };
    let table = get("hive.sql.table").map(|t| RemoteName {
        kind,
        schema: get("hive.sql.schema").map(str::to_string),
        name: t.to_string(),
    });
    let query = get("hive.sql.query").map(str::to_string);
    if table.is_none() && query.is_none() {
        return Err(def_err(
            "One of hive.sql.table or hive.sql.query must be set for a JDBC table",
        ));
    }
    Ok(Remote {
        kind,
        connect,
        table,
        query,
    })
}

/// Every property of the table, secrets included.
fn all_properties(table: &Table) -> BTreeMap<String, String> {
    let mut p = table.parameters.clone();
    p.extend(table.secrets.clone());
    p
}

fn remote_of_table(table: &Table) -> HandlerResult<Remote> {
    remote_of(&all_properties(table))
}

/// The remote column type for a Hive column type.
fn remote_type(t: &HiveType, kind: Kind) -> HandlerResult<String> {
    use HiveType as H;
    Ok(match (kind, t) {
        (Kind::Postgres, H::TinyInt | H::SmallInt) => "smallint".into(),
        (Kind::Postgres, H::Int) => "integer".into(),
        (Kind::Postgres, H::BigInt) => "bigint".into(),
        (Kind::Postgres, H::Float) => "real".into(),
        (Kind::Postgres, H::Double) => "double precision".into(),
        (Kind::Postgres, H::Decimal(p, s)) => format!("numeric({p},{s})"),
        (Kind::Postgres, H::String) => "text".into(),
        (Kind::Postgres, H::Varchar(n)) => format!("varchar({n})"),
        (Kind::Postgres, H::Char(n)) => format!("char({n})"),
        (Kind::Postgres, H::Boolean) => "boolean".into(),
        (Kind::Postgres, H::Date) => "date".into(),
        (Kind::Postgres, H::Timestamp) => "timestamp".into(),
        (Kind::Postgres, H::Binary) => "bytea".into(),
        (Kind::Sqlite, H::TinyInt | H::SmallInt | H::Int | H::BigInt | H::Boolean) => {
            "INTEGER".into()
        }
        (Kind::Sqlite, H::Float | H::Double) => "REAL".into(),
        (Kind::Sqlite, H::Decimal(_, _)) => "NUMERIC".into(),
        (Kind::Sqlite, H::String | H::Varchar(_) | H::Char(_) | H::Date | H::Timestamp) => {
            "TEXT".into()
        }
        (Kind::Sqlite, H::Binary) => "BLOB".into(),
        (Kind::Mysql, H::TinyInt) => "TINYINT".into(),
        (Kind::Mysql, H::SmallInt) => "SMALLINT".into(),
        (Kind::Mysql, H::Int) => "INT".into(),
        (Kind::Mysql, H::BigInt) => "BIGINT".into(),
        (Kind::Mysql, H::Float) => "FLOAT".into(),
        (Kind::Mysql, H::Double) => "DOUBLE".into(),
        (Kind::Mysql, H::Decimal(p, s)) => format!("DECIMAL({p},{s})"),
        (Kind::Mysql, H::String) => "LONGTEXT".into(),
        (Kind::Mysql, H::Varchar(n)) => format!("VARCHAR({n})"),
        (Kind::Mysql, H::Char(n)) => format!("CHAR({n})"),
        (Kind::Mysql, H::Boolean) => "BOOLEAN".into(),
        (Kind::Mysql, H::Date) => "DATE".into(),
        (Kind::Mysql, H::Timestamp) => "DATETIME(6)".into(),
        (Kind::Mysql, H::Binary) => "LONGBLOB".into(),
        (_, other) => {
            return Err(HandlerError::Unsupported(format!(
                "a JDBC table cannot have a column of type {other}"
            )))
        }
    })
}

/// Tag text of an object made by operation `op`.
fn tag(op: &OpTag) -> String {
    format!("apiary-op:{}", op.id)
}

async fn pg_connect(c: &tokio_postgres::Config) -> HandlerResult<tokio_postgres::Client> {
    let (client, conn) = c
        .connect(tokio_postgres::NoTls)
        .await
        .map_err(|e| remote_err(format!("cannot connect to PostgreSQL: {e}")))?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::debug!(error = %e, "JDBC connection ended");
        }
    });
    Ok(client)
}

async fn my_connect(o: &mysql_async::Opts) -> HandlerResult<mysql_async::Conn> {
    mysql_async::Conn::new(o.clone())
        .await
        .map_err(|e| remote_err(format!("cannot connect to MySQL: {e}")))
}

fn my_err(e: mysql_async::Error) -> HandlerError {
    HandlerError::Remote(format!("MySQL: {e}"))
}

/// `information_schema` literals for a table's schema (the connection's database when none)
/// and name.
fn my_names(name: &RemoteName) -> (String, String) {
    let schema = match &name.schema {
        Some(s) => literal(Kind::Mysql, s),
        None => "DATABASE()".into(),
    };
    (schema, literal(Kind::Mysql, &name.name))
}

/// A MySQL value as text (the text protocol sends bytes; binary-protocol values are formatted).
fn my_text(v: Option<&mysql_async::Value>) -> Option<String> {
    use mysql_async::Value as V;
    match v? {
        V::NULL => None,
        V::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        V::Int(i) => Some(i.to_string()),
        V::UInt(u) => Some(u.to_string()),
        V::Float(f) => Some(f.to_string()),
        V::Double(d) => Some(d.to_string()),
        V::Date(y, m, d, h, mi, s, us) => Some(format!(
            "{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}.{us:06}"
        )),
        V::Time(neg, d, h, m, s, us) => Some(format!(
            "{}{:02}:{m:02}:{s:02}.{us:06}",
            if *neg { "-" } else { "" },
            u32::from(*h) + d * 24
        )),
    }
}

fn sqlite_open(path: &std::path::Path) -> HandlerResult<rusqlite::Connection> {
    let c = rusqlite::Connection::open(path).map_err(|e| {
        remote_err(format!(
            "cannot open SQLite database {}: {e}",
            path.display()
        ))
    })?;
    c.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(remote_err)?;
    let metastore: bool = c
        .query_row(
            "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'apiary_schema_version'",
            [],
            |r| r.get(0),
        )
        .map_err(remote_err)?;
    if metastore {
        return Err(def_err(format!(
            "{} is an Apiary metastore, not a database for JDBC tables",
            path.display()
        )));
    }
    Ok(c)
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> HandlerResult<T> + Send + 'static,
) -> HandlerResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| remote_err(format!("SQLite task failed: {e}")))?
}

/// A remote table's columns, in order, or None when it does not exist.
async fn remote_columns(remote: &Remote) -> HandlerResult<Option<Vec<String>>> {
    let Some(name) = remote.table.clone() else {
        return Ok(None);
    };
    match &remote.connect {
        Connect::Postgres(c) => {
            let client = pg_connect(c).await?;
            let schema: Option<String> = name
                .schema
                .as_deref()
                .map(|s| RemoteName::stored(s, Kind::Postgres));
            let table = RemoteName::stored(&name.name, Kind::Postgres);
            let rows = client
                .query(
                    "SELECT a.attname::text FROM pg_attribute a JOIN pg_class c ON a.attrelid = c.oid \
                     JOIN pg_namespace n ON c.relnamespace = n.oid \
                     WHERE n.nspname = COALESCE($1, current_schema()) AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped \
                     ORDER BY a.attnum",
                    &[&schema, &table],
                )
                .await
                .map_err(pg_err)?;
            let exists = !client
                .query(
                    "SELECT 1 FROM pg_class c JOIN pg_namespace n ON c.relnamespace = n.oid \
                     WHERE n.nspname = COALESCE($1, current_schema()) AND c.relname = $2",
                    &[&schema, &table],
                )
                .await
                .map_err(pg_err)?
                .is_empty();
            Ok(exists.then(|| rows.iter().map(|r| r.get::<_, String>(0)).collect()))
        }
        Connect::Mysql(o) => {
            let mut conn = my_connect(o).await?;
            let (schema, table) = my_names(&name);
            let cols: Vec<String> = conn
                .query(format!(
                    "SELECT column_name FROM information_schema.columns WHERE table_schema = {schema} \
                     AND table_name = {table} ORDER BY ordinal_position"
                ))
                .await
                .map_err(my_err)?;
            let found: Vec<i64> = conn
                .query(format!(
                    "SELECT 1 FROM information_schema.tables WHERE table_schema = {schema} AND table_name = {table}"
                ))
                .await
                .map_err(my_err)?;
            let _ = conn.disconnect().await;
            Ok((!found.is_empty()).then_some(cols))
        }
        Connect::Sqlite(path) => {
            let path = path.clone();
            blocking(move || {
                let c = sqlite_open(&path)?;
                let exists: bool = c
                    .query_row(
                        "SELECT count(*) > 0 FROM sqlite_master WHERE type IN ('table','view') AND name = ?1",
                        [&name.name],
                        |r| r.get(0),
                    )
                    .map_err(remote_err)?;
                if !exists {
                    return Ok(None);
                }
                let mut st = c
                    .prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")
                    .map_err(remote_err)?;
                let cols = st
                    .query_map([&name.name], |r| r.get::<_, String>(0))
                    .map_err(remote_err)?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(remote_err)?;
                Ok(Some(cols))
            })
            .await
        }
    }
}

/// The tag on a remote table, if any.
async fn remote_tag(remote: &Remote) -> HandlerResult<Option<String>> {
    let Some(name) = remote.table.clone() else {
        return Ok(None);
    };
    match &remote.connect {
        Connect::Postgres(c) => {
            let client = pg_connect(c).await?;
            let row = client
                .query_opt(
                    &format!(
                        "SELECT obj_description(to_regclass({})::oid, 'pg_class')",
                        literal(Kind::Postgres, &name.sql())
                    ),
                    &[],
                )
                .await
                .map_err(pg_err)?;
            Ok(row.and_then(|r| r.get::<_, Option<String>>(0)))
        }
        Connect::Mysql(o) => {
            let mut conn = my_connect(o).await?;
            let (schema, table) = my_names(&name);
            let tags: Vec<String> = conn
                .query(format!(
                    "SELECT table_comment FROM information_schema.tables WHERE table_schema = {schema} AND table_name = {table}"
                ))
                .await
                .map_err(my_err)?;
            let _ = conn.disconnect().await;
            Ok(tags.into_iter().next().filter(|t| !t.is_empty()))
        }
        Connect::Sqlite(path) => {
            let path = path.clone();
            blocking(move || {
                let c = sqlite_open(&path)?;
                let has_tags: bool = c
                    .query_row(
                        "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'apiary_tags'",
                        [],
                        |r| r.get(0),
                    )
                    .map_err(remote_err)?;
                if !has_tags {
                    return Ok(None);
                }
                c.query_row(
                    "SELECT tag FROM apiary_tags WHERE tbl = ?1",
                    [&name.name],
                    |r| r.get::<_, String>(0),
                )
                .map(Some)
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    e => Err(remote_err(e)),
                })
            })
            .await
        }
    }
}

/// Runs statements in one remote transaction.
async fn remote_transaction(remote: &Remote, statements: Vec<String>) -> HandlerResult<()> {
    let mut w = RemoteWriter::begin(remote).await?;
    for s in statements {
        w.exec(s).await?;
    }
    w.commit().await
}

/// An open remote transaction that takes statements one at a time. Dropped without
/// [`RemoteWriter::commit`], it is rolled back (the connection closes; SQLite's thread drops
/// its transaction).
enum RemoteWriter {
    Postgres(tokio_postgres::Client),
    Mysql(mysql_async::Conn),
    Sqlite(
        tokio::sync::mpsc::Sender<Option<String>>,
        tokio::task::JoinHandle<HandlerResult<()>>,
    ),
}

impl RemoteWriter {
    async fn begin(remote: &Remote) -> HandlerResult<Self> {
        Ok(match &remote.connect {
            Connect::Postgres(c) => {
                let client = pg_connect(c).await?;
                client.batch_execute("BEGIN").await.map_err(pg_err)?;
                RemoteWriter::Postgres(client)
            }
            Connect::Mysql(o) => {
                let mut conn = my_connect(o).await?;
                conn.query_drop("START TRANSACTION").await.map_err(my_err)?;
                RemoteWriter::Mysql(conn)
            }
            Connect::Sqlite(path) => {
                let path = path.clone();
                let (tx, mut rx) = tokio::sync::mpsc::channel::<Option<String>>(2);
                let done = tokio::task::spawn_blocking(move || {
                    let mut c = sqlite_open(&path)?;
                    let t = c
                        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                        .map_err(remote_err)?;
                    while let Some(msg) = rx.blocking_recv() {
                        match msg {
                            Some(sql) => t.execute_batch(&sql).map_err(remote_err)?,
                            None => return t.commit().map_err(remote_err),
                        }
                    }
                    Err(remote_err("the write was abandoned"))
                });
                RemoteWriter::Sqlite(tx, done)
            }
        })
    }

    async fn exec(&mut self, sql: String) -> HandlerResult<()> {
        match self {
            RemoteWriter::Postgres(c) => c.batch_execute(&sql).await.map_err(pg_err),
            RemoteWriter::Mysql(c) => c.query_drop(sql).await.map_err(my_err),
            RemoteWriter::Sqlite(tx, done) => {
                if tx.send(Some(sql)).await.is_ok() {
                    return Ok(());
                }
                // The thread stopped: its error says why.
                match done.await {
                    Ok(Err(e)) => Err(e),
                    _ => Err(remote_err("the SQLite writer stopped")),
                }
            }
        }
    }

    async fn commit(self) -> HandlerResult<()> {
        match self {
            RemoteWriter::Postgres(c) => c.batch_execute("COMMIT").await.map_err(pg_err),
            RemoteWriter::Mysql(mut c) => {
                c.query_drop("COMMIT").await.map_err(my_err)?;
                let _ = c.disconnect().await;
                Ok(())
            }
            RemoteWriter::Sqlite(tx, done) => {
                let _ = tx.send(None).await;
                done.await
                    .map_err(|e| remote_err(format!("SQLite task failed: {e}")))?
            }
        }
    }
}

/// Checks that the declared columns are the remote table's (count, then names).
fn check_columns(table: &Table, remote_cols: &[String]) -> HandlerResult<()> {
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

struct JdbcHook;

#[async_trait]
impl MetaHook for JdbcHook {
    async fn pre_create_table(&self, table: &Table, op: &OpTag) -> HandlerResult<()> {
        let remote = remote_of_table(table)?;
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
                    kind_name(remote.kind)
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
                kind_name(remote.kind)
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
                    remote_type(&t, remote.kind)?
                ))
            })
            .collect::<HandlerResult<Vec<_>>>()?;
        let mut create = format!("CREATE TABLE {} ({})", name.sql(), cols.join(", "));
        if remote.kind == Kind::Mysql {
            // MySQL commits DDL on its own: the tag is part of the CREATE itself.
            create.push_str(&format!(" COMMENT={}", literal(Kind::Mysql, &tag(op))));
        }
        let mut statements = vec![create];
        match remote.kind {
            Kind::Mysql => {}
            Kind::Postgres => statements.push(format!(
                "COMMENT ON TABLE {} IS {}",
                name.sql(),
                literal(Kind::Postgres, &tag(op))
            )),
            Kind::Sqlite => {
                statements.push(
                    "CREATE TABLE IF NOT EXISTS apiary_tags (tbl TEXT PRIMARY KEY, tag TEXT NOT NULL)"
                        .into(),
                );
                statements.push(format!(
                    "INSERT OR REPLACE INTO apiary_tags (tbl, tag) VALUES ({}, {})",
                    literal(Kind::Sqlite, &name.name),
                    literal(Kind::Sqlite, &tag(op))
                ));
            }
        }
        remote_transaction(&remote, statements).await
    }

    async fn rollback_create_table(&self, table: &Table, op: &OpTag) -> HandlerResult<()> {
        if table.table_type == TableType::External {
            return Ok(());
        }
        let remote = remote_of_table(table)?;
        if self.object_state(table, op).await? == ObjectState::CreatedBy {
            drop_remote(&remote).await?;
        }
        Ok(())
    }

    async fn commit_drop_table(&self, table: &Table, delete_data: bool) -> HandlerResult<()> {
        if !delete_data {
            return Ok(());
        }
        let remote = remote_of_table(table)?;
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
        let remote = remote_of_table(table)?;
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
        let remote = remote_of_table(new)?;
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
                    remote_type(&t, remote.kind)?
                ))
            })
            .collect::<HandlerResult<Vec<_>>>()?;
        remote_transaction(&remote, statements).await
    }
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Postgres => "PostgreSQL",
        Kind::Sqlite => "SQLite",
        Kind::Mysql => "MySQL",
    }
}

async fn drop_remote(remote: &Remote) -> HandlerResult<()> {
    let Some(name) = &remote.table else {
        return Ok(());
    };
    let mut statements = vec![format!("DROP TABLE IF EXISTS {}", name.sql())];
    if remote.kind == Kind::Sqlite {
        statements.push(
            "CREATE TABLE IF NOT EXISTS apiary_tags (tbl TEXT PRIMARY KEY, tag TEXT NOT NULL)"
                .into(),
        );
        statements.push(format!(
            "DELETE FROM apiary_tags WHERE tbl = {}",
            literal(Kind::Sqlite, &name.name)
        ));
    }
    remote_transaction(remote, statements).await
}

/// The columns `hive.sql.query` returns.
async fn query_columns(remote: &Remote) -> HandlerResult<Vec<String>> {
    let q = remote.query.clone().unwrap_or_default();
    match &remote.connect {
        Connect::Postgres(c) => {
            let client = pg_connect(c).await?;
            let st = client
                .prepare(&q)
                .await
                .map_err(|e| def_err(format!("hive.sql.query does not run in PostgreSQL: {e}")))?;
            Ok(st.columns().iter().map(|c| c.name().to_string()).collect())
        }
        Connect::Mysql(o) => {
            let mut conn = my_connect(o).await?;
            let st = conn
                .prep(q.as_str())
                .await
                .map_err(|e| def_err(format!("hive.sql.query does not run in MySQL: {e}")))?;
            Ok(st
                .columns()
                .iter()
                .map(|c| c.name_str().into_owned())
                .collect())
        }
        Connect::Sqlite(path) => {
            let path = path.clone();
            blocking(move || {
                let c = sqlite_open(&path)?;
                let st = c
                    .prepare(&q)
                    .map_err(|e| def_err(format!("hive.sql.query does not run in SQLite: {e}")))?;
                Ok(st.column_names().iter().map(|s| s.to_string()).collect())
            })
            .await
        }
    }
}

#[async_trait]
impl StorageHandler for JdbcHandler {
    fn class_name(&self) -> &'static str {
        CLASS
    }

    fn short_name(&self) -> &'static str {
        "JDBC"
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
            alter: vec![AlterOp::AddProps, AlterOp::DropProps, AlterOp::AddCols],
            location: false,
        }
    }

    fn secret_keys(&self) -> &'static [&'static str] {
        &[PASSWORD]
    }

    fn optimizer_rules(&self) -> Vec<Arc<dyn datafusion::optimizer::OptimizerRule + Send + Sync>> {
        vec![Arc::new(AggregatePushdown)]
    }

    fn validate(&self, table: &Table) -> HandlerResult<()> {
        remote_of_table(table).map(|_| ())
    }

    fn meta_hook(&self) -> Option<&dyn MetaHook> {
        Some(&JdbcHook)
    }

    fn job_properties(&self, table: &Table) -> JobProperties {
        JobProperties(
            all_properties(table)
                .into_iter()
                .filter(|(k, _)| k.starts_with("hive.sql.") || k == PUSHDOWN)
                .collect(),
        )
    }

    async fn table_provider(
        &self,
        table: &Table,
        job: JobProperties,
    ) -> HandlerResult<Arc<dyn TableProvider>> {
        let remote = remote_of(&job.0)?;
        let fields = table
            .sd
            .columns
            .iter()
            .map(column_field)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| def_err(e.to_string()))?;
        // The remote names of the declared columns (same order), as the database spells them.
        let remote_names = match &remote.table {
            Some(_) => remote_columns(&remote).await?.unwrap_or_default(),
            None => Vec::new(),
        };
        let names = table
            .sd
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                remote_names
                    .get(i)
                    .filter(|r| r.eq_ignore_ascii_case(&c.name))
                    .cloned()
                    .unwrap_or_else(|| c.name.clone())
            })
            .collect();
        let pushdown = !job
            .get(PUSHDOWN)
            .is_some_and(|v| v.eq_ignore_ascii_case("false"));
        Ok(Arc::new(JdbcTable {
            remote,
            schema: Arc::new(Schema::new(fields)),
            names,
            hive_name: table.qualified_name(),
            pushdown,
        }))
    }

    async fn insert(
        &self,
        table: &Table,
        job: JobProperties,
        mut rows: SendableRecordBatchStream,
        overwrite: bool,
    ) -> HandlerResult<u64> {
        let remote = remote_of(&job.0)?;
        let Some(name) = remote.table.clone() else {
            return Err(HandlerError::Unsupported(format!(
                "table {} reads hive.sql.query and cannot be written",
                table.qualified_name()
            )));
        };
        let present = match remote_columns(&remote).await? {
            Some(c) => c,
            None => {
                return Err(remote_err(format!(
                    "the remote table {} does not exist",
                    name.sql()
                )))
            }
        };
        // The declared columns, by their remote spelling.
        let cols: Vec<String> = table
            .sd
            .columns
            .iter()
            .map(|c| {
                let remote_name = present
                    .iter()
                    .find(|p| p.eq_ignore_ascii_case(&c.name))
                    .cloned()
                    .unwrap_or_else(|| c.name.clone());
                quoted(remote.kind, &remote_name)
            })
            .collect();
        let target: SchemaRef = Arc::new(Schema::new(
            table
                .sd
                .columns
                .iter()
                .map(column_field)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| def_err(e.to_string()))?,
        ));
        let types: Vec<HiveType> = table
            .sd
            .columns
            .iter()
            .map(|c| HiveType::parse(&c.type_name).unwrap_or(HiveType::String))
            .collect();
        let head = format!("INSERT INTO {} ({}) VALUES ", name.sql(), cols.join(", "));
        // One remote transaction, fed chunk by chunk as rows arrive (memory stays bounded).
        let mut writer = RemoteWriter::begin(&remote).await?;
        if overwrite {
            writer.exec(format!("DELETE FROM {}", name.sql())).await?;
        }
        let mut count = 0u64;
        let mut values: Vec<String> = Vec::new();
        let strict = arrow::compute::CastOptions {
            safe: false,
            ..Default::default()
        };
        while let Some(batch) = rows.next().await {
            let batch = batch.map_err(remote_err)?;
            if batch.num_columns() != cols.len() {
                return Err(remote_err(format!(
                    "expected {} columns, got {}",
                    cols.len(),
                    batch.num_columns()
                )));
            }
            // Values as the declared types; one that does not convert is an error, not NULL.
            let columns = batch
                .columns()
                .iter()
                .zip(target.fields())
                .map(|(a, f)| arrow::compute::cast_with_options(a, f.data_type(), &strict))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| def_err(format!("a value does not fit its column: {e}")))?;
            for r in 0..batch.num_rows() {
                let row: Vec<String> = columns
                    .iter()
                    .zip(&types)
                    .map(|(a, t)| sql_value(a.as_ref(), r, t, remote.kind))
                    .collect::<HandlerResult<_>>()?;
                values.push(format!("({})", row.join(", ")));
                count += 1;
                if values.len() == INSERT_ROWS {
                    writer.exec(format!("{head}{}", values.join(", "))).await?;
                    values.clear();
                }
            }
        }
        if !values.is_empty() {
            writer.exec(format!("{head}{}", values.join(", "))).await?;
        }
        writer.commit().await?;
        Ok(count)
    }
}

/// A value as a SQL literal for the remote database.
fn sql_value(a: &dyn Array, r: usize, t: &HiveType, kind: Kind) -> HandlerResult<String> {
    if a.is_null(r) || a.data_type() == &DataType::Null {
        return Ok("NULL".into());
    }
    let text = arrow::util::display::array_value_to_string(a, r).map_err(remote_err)?;
    Ok(match t {
        HiveType::TinyInt
        | HiveType::SmallInt
        | HiveType::Int
        | HiveType::BigInt
        | HiveType::Float
        | HiveType::Double
        | HiveType::Decimal(_, _) => {
            if text.parse::<f64>().is_ok_and(f64::is_finite) {
                text
            } else {
                literal(kind, &text)
            }
        }
        HiveType::Boolean if kind == Kind::Sqlite => {
            if a.as_boolean_opt().is_some_and(|b| b.value(r)) {
                "1".into()
            } else {
                "0".into()
            }
        }
        HiveType::Boolean => {
            if a.as_boolean_opt().is_some_and(|b| b.value(r)) {
                "TRUE".into()
            } else {
                "FALSE".into()
            }
        }
        HiveType::Binary if kind == Kind::Postgres => {
            let bytes = a
                .as_binary_opt::<i32>()
                .map(|b| b.value(r).to_vec())
                .unwrap_or_default();
            format!(
                "'\\x{}'::bytea",
                bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
            )
        }
        HiveType::Binary => {
            let bytes = a
                .as_binary_opt::<i32>()
                .map(|b| b.value(r).to_vec())
                .unwrap_or_default();
            format!(
                "X'{}'",
                bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
            )
        }
        _ => literal(kind, &text),
    })
}

/// A JDBC table as DataFusion reads it.
#[derive(Debug)]
struct JdbcTable {
    remote: Remote,
    schema: SchemaRef,
    /// The remote column name of each field.
    names: Vec<String>,
    hive_name: String,
    /// Whether filters, limits and aggregates run remotely (`apiary.jdbc.pushdown`).
    pushdown: bool,
}

impl JdbcTable {
    fn dialect(&self) -> Box<dyn Dialect> {
        match self.remote.kind {
            Kind::Postgres => Box::new(PostgreSqlDialect {}),
            Kind::Sqlite => Box::new(SqliteDialect {}),
            Kind::Mysql => Box::new(MySqlDialect {}),
        }
    }

    /// Whether an expression is a string (a column of a string type or a string literal).
    fn is_text(&self, e: &Expr) -> bool {
        let t = match e {
            Expr::Column(c) => match self.schema.field_with_name(&c.name) {
                Ok(f) => f.data_type().clone(),
                Err(_) => return true,
            },
            Expr::Literal(v, _) => v.data_type(),
            _ => return true,
        };
        matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
    }

    /// A filter as remote SQL, if it can run there with the same meaning.
    fn filter_sql(&self, e: &Expr) -> Option<String> {
        if !self.pushdown {
            return None;
        }
        let kind = self.remote.kind;
        let mut ok = true;
        let _ = e.apply(|n| {
            let allowed = match n {
                Expr::Column(_) | Expr::IsNull(_) | Expr::IsNotNull(_) | Expr::Not(_) => true,
                Expr::InList(l) => kind != Kind::Mysql || !self.is_text(&l.expr),
                // Strings order by the remote collation, not by bytes as here.
                Expr::Between(b) => !self.is_text(&b.expr),
                Expr::BinaryExpr(b) => {
                    use datafusion::logical_expr::Operator as Op;
                    let text = self.is_text(&b.left) || self.is_text(&b.right);
                    match b.op {
                        Op::Lt | Op::LtEq | Op::Gt | Op::GtEq => !text,
                        // MySQL compares strings case-insensitively by default.
                        Op::Eq | Op::NotEq => !(text && kind == Kind::Mysql),
                        Op::And | Op::Or => true,
                        // Integer division and overflow differ between systems.
                        _ => false,
                    }
                }
                // Only PostgreSQL's LIKE is case-sensitive.
                Expr::Like(l) => kind == Kind::Postgres && !l.case_insensitive,
                Expr::Literal(v, _) => match kind {
                    Kind::Postgres => {
                        !matches!(v.data_type(), DataType::Binary | DataType::List(_))
                    }
                    Kind::Sqlite | Kind::Mysql => {
                        v.data_type().is_numeric()
                            || matches!(v.data_type(), DataType::Utf8 | DataType::Boolean)
                    }
                },
                _ => false,
            };
            if !allowed {
                ok = false;
                return Ok(TreeNodeRecursion::Stop);
            }
            Ok(TreeNodeRecursion::Continue)
        });
        if !ok {
            return None;
        }
        let renamed = e
            .clone()
            .transform(|n| {
                Ok(match n {
                    Expr::Column(c) => {
                        let i = self.schema.index_of(&c.name).ok();
                        let remote = i.map(|i| self.names[i].clone()).unwrap_or(c.name);
                        Transformed::yes(Expr::Column(datafusion::common::Column::new_unqualified(
                            remote,
                        )))
                    }
                    other => Transformed::no(other),
                })
            })
            .ok()?
            .data;
        let dialect = self.dialect();
        let unparser = Unparser::new(dialect.as_ref());
        unparser.expr_to_sql(&renamed).ok().map(|s| s.to_string())
    }

    fn select_sql(&self, projection: &[usize], filters: &[String], limit: Option<usize>) -> String {
        let cols: Vec<String> = if projection.is_empty() {
            vec!["1".into()]
        } else {
            projection
                .iter()
                .map(|&i| {
                    let col = quoted(self.remote.kind, &self.names[i]);
                    // Binary travels as hex (decoded in to_batch), everything else as text.
                    let binary = self.schema.field(i).data_type() == &DataType::Binary;
                    match (self.remote.kind, binary) {
                        (Kind::Postgres, true) => format!("encode({col}, 'hex')"),
                        (Kind::Postgres, false) => format!("CAST({col} AS TEXT)"),
                        (Kind::Sqlite | Kind::Mysql, true) => format!("HEX({col})"),
                        (Kind::Sqlite | Kind::Mysql, false) => col,
                    }
                })
                .collect()
        };
        let from = match (&self.remote.table, &self.remote.query) {
            (Some(t), _) => t.sql(),
            (None, Some(q)) => format!("({q}) AS apiary_q"),
            (None, None) => "(SELECT 1) AS apiary_q".into(),
        };
        let mut sql = format!("SELECT {} FROM {from}", cols.join(", "));
        if !filters.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(
                &filters
                    .iter()
                    .map(|f| format!("({f})"))
                    .collect::<Vec<_>>()
                    .join(" AND "),
            );
        }
        if let Some(n) = limit {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        sql
    }
}

#[async_trait]
impl TableProvider for JdbcTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> DfTableType {
        DfTableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DfResult<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| {
                if self.filter_sql(f).is_some() {
                    TableProviderFilterPushDown::Exact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let projection: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.schema.fields().len()).collect(),
        };
        let pushed: Vec<String> = filters.iter().filter_map(|f| self.filter_sql(f)).collect();
        if pushed.len() != filters.len() {
            return Err(DataFusionError::Internal(
                "a filter the JDBC table did not accept was pushed to it".into(),
            ));
        }
        let sql = self.select_sql(&projection, &pushed, limit.filter(|_| self.pushdown));
        let schema = Arc::new(self.schema.project(&projection)?);
        Ok(Arc::new(JdbcScanExec::new(
            self.remote.clone(),
            sql,
            schema,
            self.hive_name.clone(),
        )))
    }
}

/// Runs one query in the remote database and streams its rows.
#[derive(Debug)]
pub struct JdbcScanExec {
    remote: Remote,
    sql: String,
    schema: SchemaRef,
    table: String,
    properties: Arc<PlanProperties>,
}

impl JdbcScanExec {
    fn new(remote: Remote, sql: String, schema: SchemaRef, table: String) -> Self {
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Self {
            remote,
            sql,
            schema,
            table,
            properties,
        }
    }

    /// The SQL sent to the remote database.
    pub fn sql(&self) -> &str {
        &self.sql
    }
}

impl DisplayAs for JdbcScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "JdbcScan: table={} database={} remote_query={}",
            self.table,
            kind_name(self.remote.kind),
            self.sql
        )
    }
}

impl ExecutionPlan for JdbcScanExec {
    fn name(&self) -> &str {
        "JdbcScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    #[allow(deprecated)]
    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn execute(
        &self,
        _partition: usize,
        _context: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        let (tx, rx) = tokio::sync::mpsc::channel::<DfResult<RecordBatch>>(2);
        let remote = self.remote.clone();
        let sql = self.sql.clone();
        let schema = self.schema.clone();
        tracing::info!(table = %self.table, remote_query = %sql, "JDBC scan");
        let table = self.table.clone();
        tokio::spawn(async move {
            let tx2 = tx.clone();
            match fetch(remote, sql, schema, tx).await {
                Ok(rows) => tracing::info!(table = %table, rows, "JDBC scan received its rows"),
                Err(e) => {
                    let _ = tx2.send(Err(DataFusionError::External(Box::new(e)))).await;
                }
            }
        });
        let stream =
            futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|b| (b, rx)) });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            stream,
        )))
    }
}

/// Bytes from hex text (`0a1B`), None if it is not hex.
fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Rows of text (None for NULL) into a batch of `schema`'s types.
fn to_batch(schema: &SchemaRef, rows: &[Vec<Option<String>>]) -> DfResult<RecordBatch> {
    let columns = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let text: StringArray = rows.iter().map(|r| r[i].as_deref()).collect();
            let text: ArrayRef = Arc::new(text);
            let out = match f.data_type() {
                DataType::Boolean => {
                    let b: arrow::array::BooleanArray = text
                        .as_string::<i32>()
                        .iter()
                        .map(|v| v.map(|s| matches!(s, "t" | "true" | "1" | "TRUE")))
                        .collect();
                    Arc::new(b) as ArrayRef
                }
                DataType::Binary => {
                    let b: arrow::array::BinaryArray = text
                        .as_string::<i32>()
                        .iter()
                        .map(|v| v.and_then(decode_hex))
                        .collect();
                    Arc::new(b) as ArrayRef
                }
                t => arrow::compute::cast(&text, t)?,
            };
            Ok(out)
        })
        .collect::<DfResult<Vec<_>>>()?;
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows.len())),
    )?)
}

/// Gathers rows of text into batches of [`BATCH_ROWS`].
struct Batcher {
    schema: SchemaRef,
    rows: Vec<Vec<Option<String>>>,
    total: u64,
}

impl Batcher {
    fn new(schema: SchemaRef) -> Self {
        Self {
            schema,
            rows: Vec::with_capacity(BATCH_ROWS),
            total: 0,
        }
    }

    /// Adds a row; returns a batch when one is full.
    fn push(&mut self, row: Vec<Option<String>>) -> HandlerResult<Option<RecordBatch>> {
        self.rows.push(row);
        self.total += 1;
        if self.rows.len() < BATCH_ROWS {
            return Ok(None);
        }
        self.finish()
    }

    /// The rows gathered so far as a batch, if any.
    fn finish(&mut self) -> HandlerResult<Option<RecordBatch>> {
        if self.rows.is_empty() {
            return Ok(None);
        }
        let batch = to_batch(&self.schema, &self.rows).map_err(remote_err)?;
        self.rows.clear();
        Ok(Some(batch))
    }
}

/// Runs `sql` remotely and sends its rows as batches; returns how many rows came.
async fn fetch(
    remote: Remote,
    sql: String,
    schema: SchemaRef,
    tx: tokio::sync::mpsc::Sender<DfResult<RecordBatch>>,
) -> HandlerResult<u64> {
    let width = schema.fields().len();
    let mut batcher = Batcher::new(schema);
    match &remote.connect {
        Connect::Postgres(c) => {
            let client = pg_connect(c).await?;
            let stream = client
                .query_raw(&sql, Vec::<String>::new())
                .await
                .map_err(pg_err)?;
            futures::pin_mut!(stream);
            while let Some(row) = stream.next().await {
                let row = row.map_err(pg_err)?;
                let text = (0..width)
                    .map(|i| row.get::<_, Option<String>>(i))
                    .collect();
                if let Some(b) = batcher.push(text)? {
                    if tx.send(Ok(b)).await.is_err() {
                        return Ok(batcher.total);
                    }
                }
            }
        }
        Connect::Mysql(o) => {
            let mut conn = my_connect(o).await?;
            let mut result = conn.query_iter(sql.as_str()).await.map_err(my_err)?;
            let stream = result.stream::<mysql_async::Row>().await.map_err(my_err)?;
            if let Some(mut stream) = stream {
                while let Some(row) = stream.next().await {
                    let row = row.map_err(my_err)?;
                    let text = (0..width).map(|i| my_text(row.as_ref(i))).collect();
                    if let Some(b) = batcher.push(text)? {
                        if tx.send(Ok(b)).await.is_err() {
                            return Ok(batcher.total);
                        }
                    }
                }
            }
        }
        Connect::Sqlite(path) => {
            let path = path.clone();
            return blocking(move || {
                use rusqlite::types::ValueRef;
                let c = sqlite_open(&path)?;
                let mut st = c.prepare(&sql).map_err(remote_err)?;
                let mut q = st.query([]).map_err(remote_err)?;
                while let Some(row) = q.next().map_err(remote_err)? {
                    let mut text = Vec::with_capacity(width);
                    for i in 0..width {
                        text.push(match row.get_ref(i).map_err(remote_err)? {
                            ValueRef::Null => None,
                            ValueRef::Integer(v) => Some(v.to_string()),
                            ValueRef::Real(v) => Some(v.to_string()),
                            ValueRef::Text(t) | ValueRef::Blob(t) => {
                                Some(String::from_utf8_lossy(t).into_owned())
                            }
                        });
                    }
                    if let Some(b) = batcher.push(text)? {
                        if tx.blocking_send(Ok(b)).is_err() {
                            return Ok(batcher.total);
                        }
                    }
                }
                if let Some(b) = batcher.finish()? {
                    let _ = tx.blocking_send(Ok(b));
                }
                Ok(batcher.total)
            })
            .await;
        }
    }
    if let Some(b) = batcher.finish()? {
        let _ = tx.send(Ok(b)).await;
    }
    Ok(batcher.total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_name_the_remote_table() {
        let mut p = BTreeMap::new();
        p.insert("hive.sql.database.type".into(), "POSTGRES".into());
        p.insert(
            "hive.sql.jdbc.url".into(),
            "jdbc:postgresql://127.0.0.1:5433/shop".into(),
        );
        p.insert("hive.sql.table".into(), "Orders".into());
        p.insert("hive.sql.schema".into(), "sales".into());
        let r = remote_of(&p).expect("valid");
        assert_eq!(r.kind, Kind::Postgres);
        assert_eq!(
            r.table.as_ref().map(|t| t.sql()).as_deref(),
            Some("\"sales\".\"orders\"")
        );
        p.insert("hive.sql.database.type".into(), "ORACLE".into());
        assert!(remote_of(&p).is_err());
        p.insert("hive.sql.database.type".into(), "sqlite".into());
        assert!(
            remote_of(&p).is_err(),
            "a postgresql URL is not a SQLite one"
        );
        p.remove("hive.sql.table");
        p.insert("hive.sql.jdbc.url".into(), "jdbc:sqlite:/tmp/x.db".into());
        assert!(remote_of(&p).is_err(), "no table and no query");
    }

    #[test]
    fn hex_decodes() {
        assert_eq!(decode_hex("0aff10"), Some(vec![0x0a, 0xff, 0x10]));
        assert_eq!(decode_hex("abc"), None);
        assert_eq!(decode_hex("zz"), None);
        assert_eq!(decode_hex(""), Some(vec![]));
    }

    #[test]
    fn identifiers_and_literals_are_quoted() {
        assert_eq!(ident(Kind::Postgres, "Plain_1"), "\"plain_1\"");
        assert_eq!(ident(Kind::Mysql, "order"), "`order`");
        assert_eq!(ident(Kind::Postgres, "Mixed Case"), "\"Mixed Case\"");
        assert_eq!(ident(Kind::Postgres, "a\"b"), "\"a\"\"b\"");
        assert_eq!(literal(Kind::Postgres, "it's"), "'it''s'");
        assert_eq!(literal(Kind::Mysql, "a\\'b"), "'a\\\\''b'");
        assert_eq!(quoted(Kind::Mysql, "we`ird"), "`we``ird`");
    }

    #[test]
    fn declared_columns_are_checked_against_the_remote_ones() {
        let mut t = Table {
            database: "d".into(),
            name: "t".into(),
            owner: String::new(),
            create_time: 0,
            table_type: TableType::External,
            sd: Default::default(),
            partition_keys: vec![],
            parameters: BTreeMap::new(),
            view_text: None,
            view_database: None,
            secrets: BTreeMap::new(),
            data_token: None,
        };
        t.sd.columns = vec![Column {
            name: "id".into(),
            type_name: "int".into(),
            comment: None,
        }];
        let err = check_columns(&t, &["id".into(), "name".into()]).expect_err("mismatch");
        assert_eq!(
            err.to_string(),
            "Column numbers do not match. Remote table columns are [id, name] and declared table columns in Hive external table are [id]"
        );
        assert!(check_columns(&t, &["ID".into()]).is_ok());
    }
}

/// Pushes an aggregation over one JDBC table (GROUP BY columns; COUNT, SUM, MIN, MAX, AVG of
/// columns; the table's pushed filters) into the remote SQL, so only the groups travel. Runs
/// after DataFusion's own rules have moved filters and projections into the scan.
#[derive(Debug, Default)]
pub struct AggregatePushdown;

impl datafusion::optimizer::OptimizerRule for AggregatePushdown {
    fn name(&self) -> &str {
        "jdbc_aggregate_pushdown"
    }

    fn apply_order(&self) -> Option<datafusion::optimizer::ApplyOrder> {
        Some(datafusion::optimizer::ApplyOrder::BottomUp)
    }

    fn rewrite(
        &self,
        plan: datafusion::logical_expr::LogicalPlan,
        _config: &dyn datafusion::optimizer::OptimizerConfig,
    ) -> DfResult<Transformed<datafusion::logical_expr::LogicalPlan>> {
        match push_aggregate(&plan)? {
            Some(new) => Ok(Transformed::yes(new)),
            None => Ok(Transformed::no(plan)),
        }
    }
}

fn push_aggregate(
    plan: &datafusion::logical_expr::LogicalPlan,
) -> DfResult<Option<datafusion::logical_expr::LogicalPlan>> {
    use datafusion::logical_expr::{LogicalPlan, LogicalPlanBuilder};
    let LogicalPlan::Aggregate(agg) = plan else {
        return Ok(None);
    };
    let LogicalPlan::TableScan(scan) = agg.input.as_ref() else {
        return Ok(None);
    };
    if scan.fetch.is_some() {
        return Ok(None);
    }
    let Ok(provider) = datafusion::datasource::source_as_provider(&scan.source) else {
        return Ok(None);
    };
    let Some(table) = provider
        .as_ref()
        .downcast_ref::<JdbcTable>()
        .filter(|t| t.pushdown)
    else {
        return Ok(None);
    };
    let column_sql = |e: &Expr| -> Option<String> {
        match e {
            Expr::Column(c) => {
                let i = table.schema.index_of(&c.name).ok()?;
                Some(quoted(table.remote.kind, &table.names[i]))
            }
            _ => None,
        }
    };
    let mut outputs: Vec<String> = Vec::new();
    let mut groups: Vec<String> = Vec::new();
    for g in &agg.group_expr {
        if table.remote.kind == Kind::Mysql && table.is_text(g) {
            // MySQL groups strings case-insensitively.
            return Ok(None);
        }
        let Some(sql) = column_sql(g) else {
            return Ok(None);
        };
        groups.push(sql.clone());
        outputs.push(sql);
    }
    for a in &agg.aggr_expr {
        let inner = match a {
            Expr::Alias(al) => al.expr.as_ref(),
            other => other,
        };
        let Expr::AggregateFunction(f) = inner else {
            return Ok(None);
        };
        let p = &f.params;
        if p.filter.is_some() || !p.order_by.is_empty() || p.null_treatment.is_some() {
            return Ok(None);
        }
        let name = f.func.name().to_ascii_lowercase();
        if !matches!(name.as_str(), "count" | "sum" | "min" | "max" | "avg") {
            return Ok(None);
        }
        // Only where the remote result is the same as here: strings order and (MySQL)
        // compare by collation, booleans have no MIN/MAX in PostgreSQL, SQLite keeps dates
        // as text.
        let arg_type = match p.args.as_slice() {
            [Expr::Column(c)] => table
                .schema
                .field_with_name(&c.name)
                .ok()
                .map(|f| f.data_type().clone()),
            _ => None,
        };
        let numeric = arg_type.as_ref().is_some_and(|t| t.is_numeric());
        let temporal = arg_type
            .as_ref()
            .is_some_and(|t| matches!(t, DataType::Date32 | DataType::Timestamp(_, _)));
        let fits = match name.as_str() {
            "sum" | "avg" => numeric,
            "min" | "max" => numeric || (temporal && table.remote.kind != Kind::Sqlite),
            _ => {
                !(p.distinct
                    && table.remote.kind == Kind::Mysql
                    && p.args.first().is_some_and(|a| table.is_text(a)))
            }
        };
        if !fits {
            return Ok(None);
        }
        let arg = match p.args.as_slice() {
            [Expr::Literal(v, _)] if name == "count" && !v.is_null() && !p.distinct => "*".into(),
            [e] => match column_sql(e) {
                Some(c) if p.distinct => format!("DISTINCT {c}"),
                Some(c) => c,
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        outputs.push(format!("{}({arg})", name.to_uppercase()));
    }
    let filters: Vec<String> = scan
        .filters
        .iter()
        .map(|f| table.filter_sql(f))
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default();
    if filters.len() != scan.filters.len() {
        return Ok(None);
    }
    let from = match (&table.remote.table, &table.remote.query) {
        (Some(t), _) => t.sql(),
        (None, Some(q)) => format!("({q}) AS apiary_q"),
        (None, None) => return Ok(None),
    };
    let select: Vec<String> = outputs
        .iter()
        .enumerate()
        .map(|(i, o)| match table.remote.kind {
            Kind::Postgres => format!("CAST({o} AS TEXT) AS c{i}"),
            Kind::Sqlite | Kind::Mysql => format!("{o} AS c{i}"),
        })
        .collect();
    let mut sql = format!("SELECT {} FROM {from}", select.join(", "));
    if !filters.is_empty() {
        let f: Vec<String> = filters.iter().map(|f| format!("({f})")).collect();
        sql.push_str(&format!(" WHERE {}", f.join(" AND ")));
    }
    if !groups.is_empty() {
        sql.push_str(&format!(" GROUP BY {}", groups.join(", ")));
    }
    // The remote result, one column per output of the aggregation, named c0, c1, ...
    let out_schema = agg.schema.as_ref();
    let fields: Vec<arrow::datatypes::Field> = out_schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| arrow::datatypes::Field::new(format!("c{i}"), f.data_type().clone(), true))
        .collect();
    let pushed = JdbcQueryTable {
        remote: table.remote.clone(),
        sql,
        schema: Arc::new(Schema::new(fields)),
        hive_name: table.hive_name.clone(),
    };
    let source = datafusion::datasource::provider_as_source(Arc::new(pushed));
    let scan_plan = LogicalPlanBuilder::scan("jdbc_pushdown", source, None)?.build()?;
    let exprs: Vec<Expr> = out_schema
        .iter()
        .enumerate()
        .map(|(i, (qualifier, f))| {
            Expr::Column(datafusion::common::Column::new(
                Some("jdbc_pushdown"),
                format!("c{i}"),
            ))
            .alias_qualified(qualifier.cloned(), f.name())
        })
        .collect();
    Ok(Some(
        LogicalPlanBuilder::from(scan_plan)
            .project(exprs)?
            .build()?,
    ))
}

/// A query already written in the remote SQL (an aggregation pushed down).
#[derive(Debug)]
struct JdbcQueryTable {
    remote: Remote,
    sql: String,
    schema: SchemaRef,
    hive_name: String,
}

#[async_trait]
impl TableProvider for JdbcQueryTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> DfTableType {
        DfTableType::Base
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let (sql, schema) = match projection {
            Some(p) if p.len() != self.schema.fields().len() => {
                let cols: Vec<String> = p
                    .iter()
                    .map(|&i| self.schema.field(i).name().clone())
                    .collect();
                let cols = if cols.is_empty() {
                    vec!["1".to_string()]
                } else {
                    cols
                };
                (
                    format!(
                        "SELECT {} FROM ({}) AS apiary_agg",
                        cols.join(", "),
                        self.sql
                    ),
                    Arc::new(self.schema.project(p)?),
                )
            }
            _ => (self.sql.clone(), self.schema.clone()),
        };
        Ok(Arc::new(JdbcScanExec::new(
            self.remote.clone(),
            sql,
            schema,
            self.hive_name.clone(),
        )))
    }
}
