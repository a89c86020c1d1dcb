//! What every remote database shares: where a JDBC table's rows are ([`Remote`], read from
//! Hive's `hive.sql.*` properties), names and literals as SQL, the [`RemoteDb`] trait each
//! database implements in its own module, and rows of text turned into Arrow batches.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use apiary_metastore::Table;
use apiary_storage::handler::{HandlerError, HandlerResult};
use apiary_storage::types::HiveType;
use arrow::array::{ArrayRef, AsArray, RecordBatch, RecordBatchOptions, StringArray};
use arrow::datatypes::{DataType, SchemaRef};
use async_trait::async_trait;
use datafusion::error::Result as DfResult;

/// Rows per batch read from the remote database.
const BATCH_ROWS: usize = 8192;

/// The remote database's kind: which SQL it speaks (quoting, literals, what pushdown may
/// send it). Its connection is the [`RemoteDb`] of [`Remote`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Postgres,
    Sqlite,
    Mysql,
}

impl Kind {
    /// The database's name in messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Postgres => "PostgreSQL",
            Kind::Sqlite => "SQLite",
            Kind::Mysql => "MySQL",
        }
    }
}

/// Where a remote database's connection goes, for the server's limits on what statements
/// reach ([`Reach`](apiary_storage::Reach)).
pub(crate) enum Target {
    /// Hosts and ports, as the URL names them.
    Hosts(Vec<(String, u16)>),
    /// A file (SQLite) or a local socket, as the URL names it.
    File(String),
}

/// One remote database: its connection and the SQL it needs for what differs between
/// databases. Each implementation is a module of this crate (`postgres`, `mysql`, `sqlite`).
#[async_trait]
pub(crate) trait RemoteDb: Send + Sync {
    /// The remote column type for a Hive column type.
    fn column_type(&self, t: &HiveType) -> HandlerResult<String>;

    /// Where its connection goes.
    fn target(&self) -> Target;

    /// The statements that create `name` with `columns` (already SQL) and tag it with `tag`,
    /// run in one remote transaction.
    fn create_statements(&self, name: &RemoteName, columns: &[String], tag: &str) -> Vec<String>;

    /// The statements that drop `name` and its tag, run in one remote transaction.
    fn drop_statements(&self, name: &RemoteName) -> Vec<String> {
        vec![format!("DROP TABLE IF EXISTS {}", name.sql())]
    }

    /// Stops statements still running on the remote server that carry `tag` (an interrupted
    /// CREATE whose client went away), and waits until they are gone, so an undo that follows
    /// cannot be overtaken by them. Databases with transactional DDL need nothing: a statement
    /// whose client left never commits.
    async fn stop_tagged(&self, _tag: &str) -> HandlerResult<()> {
        Ok(())
    }

    /// A table's columns, in order, or None when it does not exist.
    async fn columns(&self, name: &RemoteName) -> HandlerResult<Option<Vec<String>>>;

    /// The tag on a table, if any.
    async fn tag(&self, name: &RemoteName) -> HandlerResult<Option<String>>;

    /// The columns `query` returns (it must compile remotely).
    async fn query_columns(&self, query: &str) -> HandlerResult<Vec<String>>;

    /// Opens a remote transaction.
    async fn begin(&self) -> HandlerResult<Box<dyn RemoteTxn>>;

    /// Runs `sql` and hands its rows, as text, to `batcher`; returns how many rows came.
    /// Stops early, without error, when the batcher's receiver is gone.
    async fn fetch(&self, sql: String, batcher: Batcher) -> HandlerResult<u64>;
}

/// An open remote transaction that takes statements one at a time. Dropped without
/// [`RemoteTxn::commit`], it is rolled back (its connection closes, or its thread drops it).
#[async_trait]
pub(crate) trait RemoteTxn: Send {
    /// Runs one statement (or several separated by `;`).
    async fn exec(&mut self, sql: String) -> HandlerResult<()>;
    /// Commits.
    async fn commit(self: Box<Self>) -> HandlerResult<()>;
}

/// Where a JDBC table's rows are.
#[derive(Clone)]
pub(crate) struct Remote {
    pub(crate) kind: Kind,
    /// The connection (settings hold the password).
    pub(crate) db: Arc<dyn RemoteDb>,
    /// `schema.table` as SQL, or None with `query`.
    pub(crate) table: Option<RemoteName>,
    /// `hive.sql.query`.
    pub(crate) query: Option<String>,
}

#[derive(Clone, Debug)]
pub(crate) struct RemoteName {
    pub(crate) kind: Kind,
    pub(crate) schema: Option<String>,
    pub(crate) name: String,
}

/// An identifier as SQL, always quoted (so reserved words work). A plain name is folded as
/// the database folds unquoted names (PostgreSQL: lower case), so `orders` and `ORDERS` mean
/// what they would unquoted.
pub(crate) fn ident(kind: Kind, s: &str) -> String {
    quoted(kind, &RemoteName::stored(s, kind))
}

fn is_plain(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A quoted identifier: `"x"`, or `` `x` `` in MySQL.
pub(crate) fn quoted(kind: Kind, s: &str) -> String {
    match kind {
        Kind::Mysql => format!("`{}`", s.replace('`', "``")),
        _ => format!("\"{}\"", s.replace('"', "\"\"")),
    }
}

/// A string literal; MySQL also treats backslashes as escapes.
pub(crate) fn literal(kind: Kind, s: &str) -> String {
    let s = s.replace('\'', "''");
    match kind {
        Kind::Mysql => format!("'{}'", s.replace('\\', "\\\\")),
        _ => format!("'{s}'"),
    }
}

impl RemoteName {
    pub(crate) fn sql(&self) -> String {
        match &self.schema {
            Some(s) => format!("{}.{}", ident(self.kind, s), ident(self.kind, &self.name)),
            None => ident(self.kind, &self.name),
        }
    }

    /// The name as the catalog stores it (PostgreSQL folds unquoted names to lower case).
    pub(crate) fn stored(s: &str, kind: Kind) -> String {
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

pub(crate) fn def_err(msg: impl Into<String>) -> HandlerError {
    HandlerError::Definition(msg.into())
}

pub(crate) fn remote_err(e: impl fmt::Display) -> HandlerError {
    HandlerError::Remote(e.to_string())
}

/// Every property of the table, secrets included.
pub(crate) fn all_properties(table: &Table) -> BTreeMap<String, String> {
    let mut p = table.parameters.clone();
    p.extend(table.secrets.clone());
    p
}

/// The remote table's columns, in order; None when it does not exist or the table reads a
/// query.
pub(crate) async fn remote_columns(remote: &Remote) -> HandlerResult<Option<Vec<String>>> {
    match &remote.table {
        Some(name) => remote.db.columns(name).await,
        None => Ok(None),
    }
}

/// The tag on the remote table, if any.
pub(crate) async fn remote_tag(remote: &Remote) -> HandlerResult<Option<String>> {
    match &remote.table {
        Some(name) => remote.db.tag(name).await,
        None => Ok(None),
    }
}

/// The columns `hive.sql.query` returns.
pub(crate) async fn query_columns(remote: &Remote) -> HandlerResult<Vec<String>> {
    let q = remote.query.clone().unwrap_or_default();
    remote.db.query_columns(&q).await
}

/// Runs statements in one remote transaction.
pub(crate) async fn remote_transaction(
    remote: &Remote,
    statements: Vec<String>,
) -> HandlerResult<()> {
    let mut t = remote.db.begin().await?;
    for s in statements {
        t.exec(s).await?;
    }
    t.commit().await
}

/// Runs `sql` remotely and sends its rows as batches of `schema`; returns how many rows came.
pub(crate) async fn fetch(
    remote: Remote,
    sql: String,
    schema: SchemaRef,
    tx: tokio::sync::mpsc::Sender<DfResult<RecordBatch>>,
) -> HandlerResult<u64> {
    remote.db.fetch(sql, Batcher::new(schema, tx)).await
}

/// Bytes from hex text (`0a1B`), None if it is not hex.
pub(crate) fn decode_hex(s: &str) -> Option<Vec<u8>> {
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

/// Gathers rows of text into batches of [`BATCH_ROWS`] and sends each full batch to the
/// scan's receiver.
pub(crate) struct Batcher {
    schema: SchemaRef,
    rows: Vec<Vec<Option<String>>>,
    tx: tokio::sync::mpsc::Sender<DfResult<RecordBatch>>,
    total: u64,
}

impl Batcher {
    pub(crate) fn new(
        schema: SchemaRef,
        tx: tokio::sync::mpsc::Sender<DfResult<RecordBatch>>,
    ) -> Self {
        Self {
            schema,
            rows: Vec::with_capacity(BATCH_ROWS),
            tx,
            total: 0,
        }
    }

    /// Columns per row.
    pub(crate) fn width(&self) -> usize {
        self.schema.fields().len()
    }

    /// Adds a row, sending a batch when one is full; false when the receiver is gone (the
    /// scan was dropped: stop reading).
    pub(crate) async fn push(&mut self, row: Vec<Option<String>>) -> HandlerResult<bool> {
        match self.add(row)? {
            Some(b) => Ok(self.tx.send(Ok(b)).await.is_ok()),
            None => Ok(true),
        }
    }

    /// [`Batcher::push`] from a blocking thread.
    pub(crate) fn push_blocking(&mut self, row: Vec<Option<String>>) -> HandlerResult<bool> {
        match self.add(row)? {
            Some(b) => Ok(self.tx.blocking_send(Ok(b)).is_ok()),
            None => Ok(true),
        }
    }

    /// Sends the rows gathered so far; returns how many rows came in all.
    pub(crate) async fn finish(mut self) -> HandlerResult<u64> {
        if let Some(b) = self.take()? {
            let _ = self.tx.send(Ok(b)).await;
        }
        Ok(self.total)
    }

    /// [`Batcher::finish`] from a blocking thread.
    pub(crate) fn finish_blocking(mut self) -> HandlerResult<u64> {
        if let Some(b) = self.take()? {
            let _ = self.tx.blocking_send(Ok(b));
        }
        Ok(self.total)
    }

    /// How many rows came so far.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    fn add(&mut self, row: Vec<Option<String>>) -> HandlerResult<Option<RecordBatch>> {
        self.rows.push(row);
        self.total += 1;
        if self.rows.len() < BATCH_ROWS {
            return Ok(None);
        }
        self.take()
    }

    /// The rows gathered so far as a batch, if any.
    fn take(&mut self) -> HandlerResult<Option<RecordBatch>> {
        if self.rows.is_empty() {
            return Ok(None);
        }
        let batch = to_batch(&self.schema, &self.rows).map_err(remote_err)?;
        self.rows.clear();
        Ok(Some(batch))
    }
}

/// The error for a column type no remote database here can hold.
pub(crate) fn unsupported_type(t: &HiveType) -> HandlerError {
    HandlerError::Unsupported(format!("a JDBC table cannot have a column of type {t}"))
}
