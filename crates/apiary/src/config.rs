//! Server configuration in one typed place: defaults, then the `--config` file, then
//! `--hiveconf` pairs, then the explicit flags. Every key Apiary honours is listed in [`KEYS`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use apiary_endpoint::{AuthMode, EndpointConfig, TransportMode};
use apiary_gateway::GatewayConfig;

/// Every configuration key Apiary reads, with its default and meaning.
pub const KEYS: &[(&str, &str, &str)] = &[
    (
        "hive.server2.thrift.port",
        "10000",
        "port of the binary (TCP) transport; 0 picks a free port",
    ),
    (
        "hive.server2.thrift.http.port",
        "10001",
        "port of the HTTP transport; 0 picks a free port",
    ),
    (
        "hive.server2.thrift.bind.host",
        "127.0.0.1",
        "address both transports bind",
    ),
    ("hive.server2.transport.mode", "all", "binary, http or all"),
    (
        "hive.server2.thrift.http.path",
        "cliservice",
        "URL path of the HTTP transport",
    ),
    (
        "hive.server2.authentication",
        "NONE",
        "NONE (SASL PLAIN, any user; NOSASL clients also served) or NOSASL (raw Thrift only)",
    ),
    (
        "hive.server2.idle.session.timeout",
        "7d",
        "close sessions unused this long (ms unless a unit is given: ms, s, m, h, d)",
    ),
    (
        "hive.server2.idle.operation.timeout",
        "5d",
        "close operations unused this long",
    ),
    (
        "hive.server2.session.check.interval",
        "60s",
        "how often idle sessions and operations are looked for",
    ),
    (
        "hive.server2.thrift.max.worker.threads",
        "500",
        "most connections served at once, per transport",
    ),
    (
        "hive.server2.thrift.max.message.size",
        "104857600",
        "largest Thrift message accepted, in bytes",
    ),
    (
        "hive.server2.thrift.login.timeout",
        "20s",
        "time a client has for its first bytes and SASL handshake",
    ),
    (
        "hive.server2.thrift.resultset.default.fetch.size",
        "1000",
        "rows per fetch advertised to clients",
    ),
    (
        "apiary.connection.idle.timeout",
        "3600s",
        "close a connection with no request for this long",
    ),
    ("apiary.max.sessions", "1000", "most sessions open at once"),
    (
        "apiary.metastore.url",
        "",
        "metastore: empty for the embedded SQLite file in the data dir, or postgresql://user@host:port/db to share one catalog between servers",
    ),
    (
        "apiary.metastore.pool.size",
        "8",
        "PostgreSQL metastore: most connections open at once",
    ),
    (
        "apiary.metastore.connect.timeout",
        "10s",
        "PostgreSQL metastore: time allowed to open a connection",
    ),
    (
        "apiary.metastore.statement.timeout",
        "30s",
        "PostgreSQL metastore: longest a catalog statement or lock wait may take; also how long a call waits for a free connection",
    ),
    (
        "apiary.metastore.retries",
        "8",
        "PostgreSQL metastore: times a transaction that raced another server's is run again before the error reaches the user",
    ),
    (
        "hive.metastore.warehouse.dir",
        "",
        "where managed tables live (empty: <data-dir>/warehouse)",
    ),
    (
        "apiary.failpoints",
        "",
        "for crash tests only: name=abort|error|sleep(ms),... makes the named steps of DDL and INSERT fail (see docs/storage-handlers.md)",
    ),
    (
        "apiary.sql.max.nesting.depth",
        "1000",
        "deepest nesting of expressions and subqueries a statement may have (deeper ones are refused before planning)",
    ),
    (
        "hive.query.timeout.seconds",
        "0",
        "default query timeout in seconds (0: none); a client's queryTimeout wins",
    ),
];

impl ServerConfig {
    /// The warehouse directory: `hive.metastore.warehouse.dir`, or `<data-dir>/warehouse`.
    pub fn warehouse(&self) -> PathBuf {
        match self.hiveconf.get("hive.metastore.warehouse.dir") {
            Some(w) if !w.is_empty() => PathBuf::from(w),
            _ => self.data_dir.join("warehouse"),
        }
    }

    /// The embedded metastore's SQLite file.
    pub fn metastore_path(&self) -> PathBuf {
        self.data_dir.join("metastore.db")
    }
}

/// Error in the configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read config file {0}: {1}")]
    Read(PathBuf, std::io::Error),
    /// The config file is not valid TOML of the expected shape.
    #[error("config file {0}: {1}")]
    Parse(PathBuf, String),
    /// A `--hiveconf` argument without `=`.
    #[error("--hiveconf expects KEY=VALUE, got '{0}'")]
    Pair(String),
    /// A value of the wrong form.
    #[error("configuration key {key}: '{value}' is not {expected}")]
    Value {
        /// The key.
        key: String,
        /// Its value.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
}

/// The merged configuration.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Folder for the metastore and warehouse.
    pub data_dir: PathBuf,
    /// All Hive keys after merging.
    pub hiveconf: BTreeMap<String, String>,
}

#[derive(serde::Deserialize, Default)]
struct FileConfig {
    data_dir: Option<PathBuf>,
    #[serde(default)]
    hiveconf: BTreeMap<String, toml::Value>,
}

impl ServerConfig {
    /// Merges defaults, file, `--hiveconf` pairs and flag overrides (already as key/value).
    pub fn load(
        file: Option<&PathBuf>,
        data_dir: Option<PathBuf>,
        pairs: &[String],
        overrides: &[(&str, Option<String>)],
    ) -> Result<Self, ConfigError> {
        let mut hiveconf: BTreeMap<String, String> = KEYS
            .iter()
            .map(|(k, v, _)| (k.to_string(), v.to_string()))
            .collect();
        let mut dir = None;
        if let Some(path) = file {
            let text =
                std::fs::read_to_string(path).map_err(|e| ConfigError::Read(path.clone(), e))?;
            let parsed: FileConfig = toml::from_str(&text)
                .map_err(|e| ConfigError::Parse(path.clone(), e.to_string()))?;
            dir = parsed.data_dir;
            for (k, v) in parsed.hiveconf {
                let v = match v {
                    toml::Value::String(s) => s,
                    other => other.to_string(),
                };
                hiveconf.insert(k, v);
            }
        }
        for p in pairs {
            let (k, v) = p
                .split_once('=')
                .ok_or_else(|| ConfigError::Pair(p.clone()))?;
            hiveconf.insert(k.trim().to_string(), v.trim().to_string());
        }
        for (k, v) in overrides {
            if let Some(v) = v {
                hiveconf.insert(k.to_string(), v.clone());
            }
        }
        Ok(Self {
            data_dir: data_dir
                .or(dir)
                .unwrap_or_else(|| PathBuf::from("apiary-data")),
            hiveconf,
        })
    }

    fn get(&self, key: &str) -> &str {
        self.hiveconf.get(key).map(String::as_str).unwrap_or("")
    }

    fn number<T: std::str::FromStr>(&self, key: &str) -> Result<T, ConfigError> {
        let v = self.get(key);
        v.trim().parse().map_err(|_| ConfigError::Value {
            key: key.into(),
            value: v.into(),
            expected: "a number",
        })
    }

    /// A duration in Hive's notation: a number with an optional unit; `default_unit` applies
    /// to a bare number.
    pub fn duration(&self, key: &str, default_unit: &str) -> Result<Duration, ConfigError> {
        parse_duration(self.get(key), default_unit).ok_or_else(|| ConfigError::Value {
            key: key.into(),
            value: self.get(key).into(),
            expected: "a duration (e.g. 3600s, 7d, 500ms)",
        })
    }

    /// Settings of the endpoints.
    pub fn endpoint(&self) -> Result<EndpointConfig, ConfigError> {
        let transport = match self
            .get("hive.server2.transport.mode")
            .to_ascii_lowercase()
            .as_str()
        {
            "binary" => TransportMode::Binary,
            "http" => TransportMode::Http,
            "all" => TransportMode::All,
            other => {
                return Err(ConfigError::Value {
                    key: "hive.server2.transport.mode".into(),
                    value: other.into(),
                    expected: "binary, http or all",
                })
            }
        };
        let auth = match self
            .get("hive.server2.authentication")
            .to_ascii_uppercase()
            .as_str()
        {
            "NONE" => AuthMode::None,
            "NOSASL" => AuthMode::NoSasl,
            other => {
                return Err(ConfigError::Value {
                    key: "hive.server2.authentication".into(),
                    value: other.into(),
                    expected: "NONE or NOSASL",
                })
            }
        };
        Ok(EndpointConfig {
            bind: self.get("hive.server2.thrift.bind.host").to_string(),
            binary_port: self.number("hive.server2.thrift.port")?,
            http_port: self.number("hive.server2.thrift.http.port")?,
            http_path: self
                .get("hive.server2.thrift.http.path")
                .trim_matches('/')
                .to_string(),
            transport,
            auth,
            max_message_size: self.number("hive.server2.thrift.max.message.size")?,
            max_connections: self
                .number::<usize>("hive.server2.thrift.max.worker.threads")?
                .max(1),
            handshake_timeout: self.duration("hive.server2.thrift.login.timeout", "s")?,
            idle_timeout: self.duration("apiary.connection.idle.timeout", "s")?,
            shutdown_grace: Duration::from_secs(5),
        })
    }

    /// How the PostgreSQL metastore connects.
    pub fn postgres(&self) -> Result<apiary_metastore::PostgresOptions, ConfigError> {
        let statement_timeout = self.duration("apiary.metastore.statement.timeout", "s")?;
        Ok(apiary_metastore::PostgresOptions {
            pool_size: self.number::<usize>("apiary.metastore.pool.size")?.max(1),
            connect_timeout: self.duration("apiary.metastore.connect.timeout", "s")?,
            wait_timeout: statement_timeout,
            statement_timeout,
            retries: self.number("apiary.metastore.retries")?,
        })
    }

    /// Settings of the gateway.
    pub fn gateway(&self) -> Result<GatewayConfig, ConfigError> {
        Ok(GatewayConfig {
            session_idle_timeout: self.duration("hive.server2.idle.session.timeout", "ms")?,
            operation_idle_timeout: self.duration("hive.server2.idle.operation.timeout", "ms")?,
            max_sessions: self.number("apiary.max.sessions")?,
            default_fetch_size: self.number("hive.server2.thrift.resultset.default.fetch.size")?,
        })
    }
}

/// Parses `500ms`, `20s`, `5m`, `6h`, `7d` or a bare number in `default_unit`.
pub fn parse_duration(v: &str, default_unit: &str) -> Option<Duration> {
    let v = v.trim().to_ascii_lowercase();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: u64 = num.parse().ok()?;
    let unit = match unit.trim() {
        "" => default_unit,
        u => u,
    };
    Some(match unit {
        "ms" | "msec" | "millis" => Duration::from_millis(n),
        "s" | "sec" | "seconds" => Duration::from_secs(n),
        "m" | "min" | "minutes" => Duration::from_secs(n * 60),
        "h" | "hours" => Duration::from_secs(n * 3600),
        "d" | "days" => Duration::from_secs(n * 86_400),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_like_hive() {
        assert_eq!(
            parse_duration("7d", "ms"),
            Some(Duration::from_secs(604_800))
        );
        assert_eq!(
            parse_duration("1500", "ms"),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(parse_duration("20s", "ms"), Some(Duration::from_secs(20)));
        assert_eq!(parse_duration("x", "ms"), None);
    }

    #[test]
    fn later_sources_win() {
        let c = ServerConfig::load(
            None,
            None,
            &["hive.server2.thrift.port=0".into()],
            &[("hive.server2.thrift.http.port", Some("0".into()))],
        )
        .expect("loads");
        let e = c.endpoint().expect("valid");
        assert_eq!((e.binary_port, e.http_port), (0, 0));
        assert!(ServerConfig::load(None, None, &["novalue".into()], &[]).is_err());
    }
}
