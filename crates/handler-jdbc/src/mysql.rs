//! MySQL and MariaDB, spoken with mysql_async. MySQL commits DDL on its own, so a managed
//! table's tag is part of the CREATE itself (its table comment).

use async_trait::async_trait;
use futures::StreamExt;
use mysql_async::prelude::Queryable;

use apiary_storage::handler::{HandlerError, HandlerResult};
use apiary_storage::types::HiveType;

use crate::remote::{
    def_err, literal, remote_err, unsupported_type, Batcher, Kind, RemoteDb, RemoteName, RemoteTxn,
    Target,
};

/// A MySQL or MariaDB database.
pub(crate) struct Mysql {
    opts: mysql_async::Opts,
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

impl Mysql {
    /// From `jdbc:mysql://host:port/db?user=..&password=..` (or `jdbc:mariadb:`); `user` and
    /// `password` (Hive's `hive.sql.dbcp.*`) win over the URL's.
    pub(crate) fn from_url(
        url: &str,
        user: Option<&str>,
        password: Option<&str>,
    ) -> HandlerResult<Self> {
        let rest = url
            .strip_prefix("jdbc:mysql:")
            .or_else(|| url.strip_prefix("jdbc:mariadb:"))
            .ok_or_else(|| def_err(format!("hive.sql.jdbc.url {url} is not a jdbc:mysql: URL")))?;
        let parsed = url::Url::parse(&format!("mysql:{rest}"))
            .map_err(|e| def_err(format!("hive.sql.jdbc.url {url}: {e}")))?;
        let from_url = |key: &str| {
            parsed
                .query_pairs()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.into_owned())
        };
        let user = user.map(str::to_string).or_else(|| from_url("user"));
        let pass = password
            .map(str::to_string)
            .or_else(|| from_url("password"));
        let db = parsed.path().trim_start_matches('/').to_string();
        let opts = mysql_async::OptsBuilder::default()
            .ip_or_hostname(parsed.host_str().unwrap_or("localhost").to_string())
            .tcp_port(parsed.port().unwrap_or(3306))
            .user(user)
            .pass(pass)
            .db_name((!db.is_empty()).then_some(db));
        Ok(Self { opts: opts.into() })
    }

    async fn connect(&self) -> HandlerResult<mysql_async::Conn> {
        mysql_async::Conn::new(self.opts.clone())
            .await
            .map_err(|e| remote_err(format!("cannot connect to MySQL: {e}")))
    }
}

/// Rounds of 100 ms that [`RemoteDb::stop_tagged`] waits for killed statements to end.
const STOP_WAIT_ROUNDS: usize = 100;

/// A MySQL transaction; dropping the connection rolls it back.
struct MyTxn(mysql_async::Conn);

#[async_trait]
impl RemoteTxn for MyTxn {
    async fn exec(&mut self, sql: String) -> HandlerResult<()> {
        self.0.query_drop(sql).await.map_err(my_err)
    }

    async fn commit(self: Box<Self>) -> HandlerResult<()> {
        let mut c = self.0;
        c.query_drop("COMMIT").await.map_err(my_err)?;
        let _ = c.disconnect().await;
        Ok(())
    }
}

#[async_trait]
impl RemoteDb for Mysql {
    fn target(&self) -> Target {
        match self.opts.socket() {
            Some(socket) => Target::File(socket.to_string()),
            None => Target::Hosts(vec![(
                self.opts.ip_or_hostname().to_string(),
                self.opts.tcp_port(),
            )]),
        }
    }

    fn column_type(&self, t: &HiveType) -> HandlerResult<String> {
        use HiveType as H;
        Ok(match t {
            H::TinyInt => "TINYINT".into(),
            H::SmallInt => "SMALLINT".into(),
            H::Int => "INT".into(),
            H::BigInt => "BIGINT".into(),
            H::Float => "FLOAT".into(),
            H::Double => "DOUBLE".into(),
            H::Decimal(p, s) => format!("DECIMAL({p},{s})"),
            H::String => "LONGTEXT".into(),
            H::Varchar(n) => format!("VARCHAR({n})"),
            H::Char(n) => format!("CHAR({n})"),
            H::Boolean => "BOOLEAN".into(),
            H::Date => "DATE".into(),
            H::Timestamp => "DATETIME(6)".into(),
            H::Binary => "LONGBLOB".into(),
            other => return Err(unsupported_type(other)),
        })
    }

    fn create_statements(&self, name: &RemoteName, columns: &[String], tag: &str) -> Vec<String> {
        // MySQL commits DDL on its own: the tag is part of the CREATE itself.
        vec![format!(
            "CREATE TABLE {} ({}) COMMENT={}",
            name.sql(),
            columns.join(", "),
            literal(Kind::Mysql, tag)
        )]
    }

    async fn stop_tagged(&self, tag: &str) -> HandlerResult<()> {
        let mut conn = self.connect().await?;
        let find = format!(
            "SELECT id FROM information_schema.processlist WHERE id <> CONNECTION_ID() \
             AND INSTR(info, {}) > 0",
            literal(Kind::Mysql, tag)
        );
        // Killing the statement's connection ends it wherever it is (waiting on a lock, or
        // copying); the thread goes soon after, which the loop waits for.
        for _ in 0..STOP_WAIT_ROUNDS {
            let running: Vec<u64> = conn.query(find.as_str()).await.map_err(my_err)?;
            if running.is_empty() {
                return Ok(());
            }
            for id in running {
                tracing::info!(thread = id, "stopping an interrupted remote statement");
                if let Err(e) = conn.query_drop(format!("KILL {id}")).await {
                    // Gone in between: nothing to stop.
                    tracing::debug!(thread = id, error = %e, "KILL failed");
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        Err(remote_err(format!(
            "an interrupted remote statement tagged {tag} is still running on MySQL after KILL"
        )))
    }

    async fn columns(&self, name: &RemoteName) -> HandlerResult<Option<Vec<String>>> {
        let mut conn = self.connect().await?;
        let (schema, table) = my_names(name);
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

    async fn tag(&self, name: &RemoteName) -> HandlerResult<Option<String>> {
        let mut conn = self.connect().await?;
        let (schema, table) = my_names(name);
        let tags: Vec<String> = conn
            .query(format!(
                "SELECT table_comment FROM information_schema.tables WHERE table_schema = {schema} AND table_name = {table}"
            ))
            .await
            .map_err(my_err)?;
        let _ = conn.disconnect().await;
        Ok(tags.into_iter().next().filter(|t| !t.is_empty()))
    }

    async fn query_columns(&self, query: &str) -> HandlerResult<Vec<String>> {
        let mut conn = self.connect().await?;
        let st = conn
            .prep(query)
            .await
            .map_err(|e| def_err(format!("hive.sql.query does not run in MySQL: {e}")))?;
        Ok(st
            .columns()
            .iter()
            .map(|c| c.name_str().into_owned())
            .collect())
    }

    async fn begin(&self) -> HandlerResult<Box<dyn RemoteTxn>> {
        let mut conn = self.connect().await?;
        conn.query_drop("START TRANSACTION").await.map_err(my_err)?;
        Ok(Box::new(MyTxn(conn)))
    }

    async fn fetch(&self, sql: String, mut batcher: Batcher) -> HandlerResult<u64> {
        let width = batcher.width();
        let mut conn = self.connect().await?;
        let mut result = conn.query_iter(sql.as_str()).await.map_err(my_err)?;
        let stream = result.stream::<mysql_async::Row>().await.map_err(my_err)?;
        if let Some(mut stream) = stream {
            while let Some(row) = stream.next().await {
                let row = row.map_err(my_err)?;
                let text = (0..width).map(|i| my_text(row.as_ref(i))).collect();
                if !batcher.push(text).await? {
                    return Ok(batcher.total());
                }
            }
        }
        batcher.finish().await
    }
}
