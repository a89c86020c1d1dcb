//! SQLite files, through rusqlite on blocking threads. A managed table's tag is a row of
//! `apiary_tags`, written in the same transaction as the CREATE.

use std::path::PathBuf;

use async_trait::async_trait;

use apiary_storage::handler::HandlerResult;
use apiary_storage::types::HiveType;

use crate::remote::{
    def_err, literal, remote_err, unsupported_type, Batcher, Kind, RemoteDb, RemoteName, RemoteTxn,
    Target,
};

/// Where a table's tag is kept.
const TAGS_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS apiary_tags (tbl TEXT PRIMARY KEY, tag TEXT NOT NULL)";

/// A SQLite database file.
pub(crate) struct Sqlite {
    path: PathBuf,
}

fn open(path: &std::path::Path) -> HandlerResult<rusqlite::Connection> {
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

impl Sqlite {
    /// From `jdbc:sqlite:<path>`.
    pub(crate) fn from_url(url: &str) -> HandlerResult<Self> {
        let path = url
            .strip_prefix("jdbc:sqlite:")
            .ok_or_else(|| def_err(format!("hive.sql.jdbc.url {url} is not a jdbc:sqlite: URL")))?;
        Ok(Self {
            path: PathBuf::from(path),
        })
    }
}

/// A SQLite transaction on its own blocking thread, fed statements through a channel (None
/// commits). Dropped, the channel closes and the thread drops its transaction.
struct SqliteTxn {
    tx: tokio::sync::mpsc::Sender<Option<String>>,
    done: tokio::task::JoinHandle<HandlerResult<()>>,
}

#[async_trait]
impl RemoteTxn for SqliteTxn {
    async fn exec(&mut self, sql: String) -> HandlerResult<()> {
        if self.tx.send(Some(sql)).await.is_ok() {
            return Ok(());
        }
        // The thread stopped: its error says why.
        match (&mut self.done).await {
            Ok(Err(e)) => Err(e),
            _ => Err(remote_err("the SQLite writer stopped")),
        }
    }

    async fn commit(self: Box<Self>) -> HandlerResult<()> {
        let _ = self.tx.send(None).await;
        self.done
            .await
            .map_err(|e| remote_err(format!("SQLite task failed: {e}")))?
    }
}

#[async_trait]
impl RemoteDb for Sqlite {
    fn target(&self) -> Target {
        Target::File(self.path.display().to_string())
    }

    fn column_type(&self, t: &HiveType) -> HandlerResult<String> {
        use HiveType as H;
        Ok(match t {
            H::TinyInt | H::SmallInt | H::Int | H::BigInt | H::Boolean => "INTEGER".into(),
            H::Float | H::Double => "REAL".into(),
            H::Decimal(_, _) => "NUMERIC".into(),
            H::String | H::Varchar(_) | H::Char(_) | H::Date | H::Timestamp => "TEXT".into(),
            H::Binary => "BLOB".into(),
            other => return Err(unsupported_type(other)),
        })
    }

    fn create_statements(&self, name: &RemoteName, columns: &[String], tag: &str) -> Vec<String> {
        vec![
            format!("CREATE TABLE {} ({})", name.sql(), columns.join(", ")),
            TAGS_TABLE.into(),
            format!(
                "INSERT OR REPLACE INTO apiary_tags (tbl, tag) VALUES ({}, {})",
                literal(Kind::Sqlite, &name.name),
                literal(Kind::Sqlite, tag)
            ),
        ]
    }

    fn drop_statements(&self, name: &RemoteName) -> Vec<String> {
        vec![
            format!("DROP TABLE IF EXISTS {}", name.sql()),
            TAGS_TABLE.into(),
            format!(
                "DELETE FROM apiary_tags WHERE tbl = {}",
                literal(Kind::Sqlite, &name.name)
            ),
        ]
    }

    async fn columns(&self, name: &RemoteName) -> HandlerResult<Option<Vec<String>>> {
        let path = self.path.clone();
        let name = name.name.clone();
        blocking(move || {
            let c = open(&path)?;
            let exists: bool = c
                .query_row(
                    "SELECT count(*) > 0 FROM sqlite_master WHERE type IN ('table','view') AND name = ?1",
                    [&name],
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
                .query_map([&name], |r| r.get::<_, String>(0))
                .map_err(remote_err)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(remote_err)?;
            Ok(Some(cols))
        })
        .await
    }

    async fn tag(&self, name: &RemoteName) -> HandlerResult<Option<String>> {
        let path = self.path.clone();
        let name = name.name.clone();
        blocking(move || {
            let c = open(&path)?;
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
            c.query_row("SELECT tag FROM apiary_tags WHERE tbl = ?1", [&name], |r| {
                r.get::<_, String>(0)
            })
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(remote_err(e)),
            })
        })
        .await
    }

    async fn query_columns(&self, query: &str) -> HandlerResult<Vec<String>> {
        let path = self.path.clone();
        let q = query.to_string();
        blocking(move || {
            let c = open(&path)?;
            let st = c
                .prepare(&q)
                .map_err(|e| def_err(format!("hive.sql.query does not run in SQLite: {e}")))?;
            Ok(st.column_names().iter().map(|s| s.to_string()).collect())
        })
        .await
    }

    async fn begin(&self) -> HandlerResult<Box<dyn RemoteTxn>> {
        let path = self.path.clone();
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Option<String>>(2);
        let done = tokio::task::spawn_blocking(move || {
            let mut c = open(&path)?;
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
        Ok(Box::new(SqliteTxn { tx, done }))
    }

    async fn fetch(&self, sql: String, mut batcher: Batcher) -> HandlerResult<u64> {
        let path = self.path.clone();
        blocking(move || {
            use rusqlite::types::ValueRef;
            let width = batcher.width();
            let c = open(&path)?;
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
                if !batcher.push_blocking(text)? {
                    return Ok(batcher.total());
                }
            }
            batcher.finish_blocking()
        })
        .await
    }
}
