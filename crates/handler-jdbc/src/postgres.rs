//! PostgreSQL, spoken with tokio-postgres. A managed table's tag is its table comment,
//! written in the same transaction as the CREATE.

use async_trait::async_trait;
use futures::StreamExt;

use apiary_storage::handler::{HandlerError, HandlerResult};
use apiary_storage::types::HiveType;

use crate::remote::{
    def_err, literal, remote_err, unsupported_type, Batcher, Kind, RemoteDb, RemoteName, RemoteTxn,
    Target,
};

/// A PostgreSQL database.
pub(crate) struct Postgres {
    config: tokio_postgres::Config,
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

impl Postgres {
    /// From `jdbc:postgresql://host:port/db?user=..&password=..`; `user` and `password`
    /// (Hive's `hive.sql.dbcp.*`) win over the URL's.
    pub(crate) fn from_url(
        url: &str,
        user: Option<&str>,
        password: Option<&str>,
    ) -> HandlerResult<Self> {
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
        if let Some(u) = user {
            c.user(u);
        }
        if let Some(p) = password {
            c.password(p);
        }
        Ok(Self { config: c })
    }

    async fn connect(&self) -> HandlerResult<tokio_postgres::Client> {
        let (client, conn) = self
            .config
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
}

/// A PostgreSQL transaction: BEGIN sent, COMMIT at the end; dropping the client closes the
/// connection, and the server rolls the transaction back.
struct PgTxn(tokio_postgres::Client);

#[async_trait]
impl RemoteTxn for PgTxn {
    async fn exec(&mut self, sql: String) -> HandlerResult<()> {
        self.0.batch_execute(&sql).await.map_err(pg_err)
    }

    async fn commit(self: Box<Self>) -> HandlerResult<()> {
        self.0.batch_execute("COMMIT").await.map_err(pg_err)
    }
}

#[async_trait]
impl RemoteDb for Postgres {
    fn target(&self) -> Target {
        let ports = self.config.get_ports();
        let mut hosts = Vec::new();
        for (i, host) in self.config.get_hosts().iter().enumerate() {
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            match host {
                tokio_postgres::config::Host::Tcp(h) => hosts.push((h.clone(), port)),
                // A local socket is a file the server opens.
                tokio_postgres::config::Host::Unix(path) => {
                    return Target::File(path.display().to_string())
                }
            }
        }
        Target::Hosts(hosts)
    }

    fn column_type(&self, t: &HiveType) -> HandlerResult<String> {
        use HiveType as H;
        Ok(match t {
            H::TinyInt | H::SmallInt => "smallint".into(),
            H::Int => "integer".into(),
            H::BigInt => "bigint".into(),
            H::Float => "real".into(),
            H::Double => "double precision".into(),
            H::Decimal(p, s) => format!("numeric({p},{s})"),
            H::String => "text".into(),
            H::Varchar(n) => format!("varchar({n})"),
            H::Char(n) => format!("char({n})"),
            H::Boolean => "boolean".into(),
            H::Date => "date".into(),
            H::Timestamp => "timestamp".into(),
            H::Binary => "bytea".into(),
            other => return Err(unsupported_type(other)),
        })
    }

    fn create_statements(&self, name: &RemoteName, columns: &[String], tag: &str) -> Vec<String> {
        vec![
            format!("CREATE TABLE {} ({})", name.sql(), columns.join(", ")),
            format!(
                "COMMENT ON TABLE {} IS {}",
                name.sql(),
                literal(Kind::Postgres, tag)
            ),
        ]
    }

    async fn columns(&self, name: &RemoteName) -> HandlerResult<Option<Vec<String>>> {
        let client = self.connect().await?;
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

    async fn tag(&self, name: &RemoteName) -> HandlerResult<Option<String>> {
        let client = self.connect().await?;
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

    async fn query_columns(&self, query: &str) -> HandlerResult<Vec<String>> {
        let client = self.connect().await?;
        let st = client
            .prepare(query)
            .await
            .map_err(|e| def_err(format!("hive.sql.query does not run in PostgreSQL: {e}")))?;
        Ok(st.columns().iter().map(|c| c.name().to_string()).collect())
    }

    async fn begin(&self) -> HandlerResult<Box<dyn RemoteTxn>> {
        let client = self.connect().await?;
        client.batch_execute("BEGIN").await.map_err(pg_err)?;
        Ok(Box::new(PgTxn(client)))
    }

    async fn fetch(&self, sql: String, mut batcher: Batcher) -> HandlerResult<u64> {
        let width = batcher.width();
        let client = self.connect().await?;
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
            if !batcher.push(text).await? {
                return Ok(batcher.total());
            }
        }
        batcher.finish().await
    }
}
