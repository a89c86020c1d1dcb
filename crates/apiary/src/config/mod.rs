//! Server configuration in one typed place: defaults, then the `--config` file, then
//! `--hiveconf` pairs, then the explicit flags. Every key Apiary honours is listed in [`KEYS`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use apiary_endpoint::{AuthMode, EndpointConfig, TransportMode};
use apiary_gateway::GatewayConfig;

/// Keys whose values are secrets (or may hold credentials): kept out of every session's
/// configuration, so `SET` and `${hiveconf:..}` never show them.
pub const SECRET_KEYS: &[&str] = &[
    "hive.server2.authentication.ldap.bindpw",
    "hive.server2.keystore.password",
    "javax.jdo.option.ConnectionPassword",
    "apiary.metastore.url",
];

/// Keys of [`KEYS`] a session may still change (with `SET`, OpenSession's configuration or
/// a statement's overlay): every other key there is read only at start-up, so a session may
/// not change it.
const SESSION_KEYS: &[&str] = &[
    "hive.query.timeout.seconds",
    "hive.server2.thrift.resultset.default.fetch.size",
];

/// Prefixes of keys only the server sets, besides those of [`KEYS`]: Apiary's own, Hive's
/// authentication, TLS, impersonation and function-list keys, the metastore's connection,
/// and DataFusion's catalog and runtime options.
const STARTUP_PREFIXES: &[&str] = &[
    "apiary.",
    "hive.server2.authentication",
    "hive.server2.keystore",
    "hive.server2.use.SSL",
    "hive.server2.builtin.udf.",
    "hive.server2.enable.doAs",
    "hive.server2.allow.user.substitution",
    "hive.security.",
    "hadoop.proxyuser.",
    "javax.jdo.",
    "datafusion.catalog.",
    "datafusion.runtime.",
    // How names are read: the authorization check reads them the same way.
    "datafusion.sql_parser.",
];

/// The modes `hive.server2.authentication` names.
#[derive(Debug, Default)]
struct AuthModes {
    none: bool,
    nosasl: bool,
    ldap: bool,
    jwt: bool,
    kerberos: bool,
    pam: bool,
}

/// Hive's KERBEROS mode: the server's identities on the binary and HTTP transports, with
/// their keys read from the keytabs; both `None` in other modes.
#[derive(Debug, Default)]
pub struct Kerberos {
    /// SASL GSSAPI on the binary port (`hive.server2.authentication.kerberos.*`).
    pub binary: Option<std::sync::Arc<apiary_auth::KerberosAcceptor>>,
    /// SPNEGO over HTTP (`hive.server2.authentication.spnego.*`).
    pub http: Option<std::sync::Arc<apiary_auth::KerberosAcceptor>>,
}

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
        "apiary.flightsql.enabled",
        "true",
        "serve Arrow Flight SQL on its own port (same sessions, catalog and limits as HiveServer2)",
    ),
    (
        "apiary.flightsql.port",
        "10003",
        "port of the Arrow Flight SQL endpoint (bound to hive.server2.thrift.bind.host); 0 picks a free port",
    ),
    (
        "hive.server2.thrift.http.path",
        "cliservice",
        "URL path of the HTTP transport",
    ),
    (
        "hive.server2.authentication",
        "NONE",
        "NONE (SASL PLAIN, any user; NOSASL clients also served), NOSASL (raw Thrift only), LDAP (SASL PLAIN, HTTP Basic and the Flight SQL handshake checked by a simple bind; NOSASL refused), PAM (the same logins checked by hive.server2.authentication.pam.services; needs a build with --features pam), KERBEROS (SASL GSSAPI on the binary port, SPNEGO Authorization: Negotiate over HTTP; needs a build with --features kerberos), JWT (HTTP only: Authorization: Bearer, checked against hive.server2.authentication.jwt.jwks.url) or a comma list of LDAP or PAM, KERBEROS and JWT (each transport takes any of its forms; Flight SQL takes LDAP)",
    ),
    (
        "hive.server2.authentication.pam.services",
        "",
        "PAM: comma-separated PAM services (/etc/pam.d/<name>) a login must pass, each with authentication and account management; needs a build with --features pam",
    ),
    (
        "hive.server2.authentication.kerberos.principal",
        "",
        "KERBEROS: the server's principal for SASL GSSAPI on the binary port, hive/_HOST@REALM (_HOST becomes hive.server2.thrift.bind.host, or the machine's host name when that is a wildcard). A client principal of the same realm logs in as its first component (alice@REALM and alice/admin@REALM are alice); another realm's only as krb5.conf's auth_to_local rules map it",
    ),
    (
        "hive.server2.authentication.kerberos.keytab",
        "",
        "KERBEROS: the keytab holding the keys of hive.server2.authentication.kerberos.principal; must exist at start-up, and is read at each login (a rotated keytab takes effect at once)",
    ),
    (
        "hive.server2.authentication.spnego.principal",
        "",
        "KERBEROS over HTTP: the SPNEGO principal, HTTP/_HOST@REALM; unset means the binary port's principal and keytab serve HTTP too",
    ),
    (
        "hive.server2.authentication.spnego.keytab",
        "",
        "KERBEROS over HTTP: the keytab holding the keys of hive.server2.authentication.spnego.principal",
    ),
    (
        "hive.server2.thrift.sasl.qop",
        "auth",
        "SASL quality of protection with KERBEROS: auth (authentication only; integrity and privacy come from TLS, hive.server2.use.SSL). auth-int and auth-conf are refused at start-up",
    ),
    (
        "hive.security.authorization.enabled",
        "false",
        "SQL-standard authorization: owners, GRANT/REVOKE of SELECT, INSERT, UPDATE, DELETE on tables and views to users and roles, roles (CREATE/DROP/GRANT/SET ROLE), checked on every statement and catalog call; kept in the metastore",
    ),
    (
        "hive.users.in.admin.role",
        "",
        "authorization: comma-separated users in the admin role (who may run CREATE ROLE, SHOW ROLES, and anything else, after SET ROLE ADMIN)",
    ),
    (
        "hive.server2.authentication.jwt.jwks.url",
        "",
        "JWT: comma-separated URLs (http://, https:// trusting the system's CAs, file:// or a path) of the JSON Web Key Sets that sign tokens; read once at start-up. A token must verify under a key matching its kid and alg, must not have expired (exp), and names its user in sub",
    ),
    (
        "hive.server2.thrift.http.cookie.auth.enabled",
        "true",
        "HTTP: after a checked login, set Hive's signed hive.server2.auth cookie; requests carrying it skip the login (the key is random per process: cookies end at restart)",
    ),
    (
        "hive.server2.thrift.http.cookie.max.age",
        "86400s",
        "HTTP: how long a login cookie is valid (Max-Age, and checked by the server)",
    ),
    (
        "hive.server2.thrift.http.cookie.domain",
        "",
        "HTTP: Domain attribute of the login cookie (unset: none)",
    ),
    (
        "hive.server2.thrift.http.cookie.path",
        "",
        "HTTP: Path attribute of the login cookie (unset: none)",
    ),
    (
        "hive.server2.thrift.http.cookie.is.httponly",
        "true",
        "HTTP: HttpOnly attribute of the login cookie",
    ),
    (
        "hive.server2.use.SSL",
        "false",
        "TLS (1.2 and 1.3) on the binary, HTTP and Flight SQL ports, with the key and certificate chain of hive.server2.keystore.path",
    ),
    (
        "hive.server2.keystore.path",
        "",
        "TLS: the server's keystore: a PKCS#12 file (openssl pkcs12 -export, keytool -storetype PKCS12) or a PEM file holding the certificate chain and the private key",
    ),
    (
        "hive.server2.keystore.password",
        "",
        "TLS: the PKCS#12 keystore's password",
    ),
    (
        "hive.server2.authentication.ldap.url",
        "",
        "LDAP: directory URLs (ldap://host:port), space-separated, tried in order",
    ),
    (
        "hive.server2.authentication.ldap.baseDN",
        "",
        "LDAP: base DN of users; a user binds as guidKey=user,baseDN",
    ),
    (
        "hive.server2.authentication.ldap.guidKey",
        "uid",
        "LDAP: attribute naming a user under baseDN",
    ),
    (
        "hive.server2.authentication.ldap.Domain",
        "",
        "LDAP: a user binds as user@Domain (Active Directory)",
    ),
    (
        "hive.server2.authentication.ldap.userDNPattern",
        "",
        "LDAP: colon-separated DN patterns with %s for the user, tried in order",
    ),
    (
        "hive.server2.authentication.ldap.userFilter",
        "",
        "LDAP: comma-separated short names allowed to log in (empty: everyone the directory accepts)",
    ),
    (
        "hive.server2.authentication.ldap.groupFilter",
        "",
        "LDAP: comma-separated groups whose members may log in",
    ),
    (
        "hive.server2.authentication.ldap.groupDNPattern",
        "",
        "LDAP: colon-separated group DN patterns with %s for the group name (else groups are looked for under baseDN)",
    ),
    (
        "hive.server2.authentication.ldap.groupMembershipKey",
        "member",
        "LDAP: attribute of a group naming its members' DNs",
    ),
    (
        "hive.server2.authentication.ldap.groupClassKey",
        "groupOfNames",
        "LDAP: object class of groups",
    ),
    (
        "hive.server2.authentication.ldap.binddn",
        "",
        "LDAP: a service account that searches for each user's entry before the user's bind",
    ),
    (
        "hive.server2.authentication.ldap.bindpw",
        "",
        "LDAP: the service account's password",
    ),
    (
        "apiary.authentication.ldap.timeout",
        "10s",
        "LDAP: time allowed for a whole login (every URL and bind it tries); keep it below hive.server2.thrift.login.timeout",
    ),
    (
        "hive.server2.idle.session.timeout",
        "4h",
        "close sessions unused this long (ms unless a unit is given: ms, s, m, h, d)",
    ),
    (
        "hive.server2.idle.operation.timeout",
        "2h",
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
        "apiary.authentication.ldap.ca.file",
        "",
        "LDAP over ldaps://: a PEM file of the CA certificates that sign the directory's certificate (unset: the system's certificate store); TLS 1.2 and 1.3",
    ),
    (
        "hive.server2.thrift.login.timeout",
        "20s",
        "time a client has for its first bytes and SASL handshake; also how long a connection may go without holding a session, and half of how long a new client waits for a free connection slot",
    ),
    (
        "hive.server2.thrift.resultset.default.fetch.size",
        "1000",
        "rows per fetch advertised to clients",
    ),
    (
        "apiary.connection.idle.timeout",
        "3600s",
        "close a connection that holds sessions after no request for this long",
    ),
    ("apiary.max.sessions", "1000", "most sessions open at once"),
    (
        "hive.server2.limit.connections.per.user",
        "",
        "most sessions one user may hold (0: no limit, as Hive's default; unset: a tenth of apiary.max.sessions, rounded up, and always fewer than it when it is 2 or more, so one user cannot take every session: 100 of the default 1000)",
    ),
    (
        "hive.server2.limit.connections.per.ipaddress",
        "0",
        "most sessions from one client address (0: no limit)",
    ),
    (
        "hive.server2.limit.connections.per.user.ipaddress",
        "0",
        "most sessions of one user from one client address (0: no limit)",
    ),
    (
        "apiary.session.max.operations",
        "200",
        "most operations one session may hold open (0: no limit)",
    ),
    (
        "apiary.session.result.buffer.size",
        "256m",
        "result bytes one session's operations may hold ahead of the client's fetches",
    ),
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
        "hive.server2.allow.user.substitution",
        "true",
        "whether a session may act as another user (hive.server2.proxy.user in its configuration, or doAs over HTTP); with a password mode, only as the hadoop.proxyuser.<user>.hosts / .users / .groups rules allow (hosts: client addresses or *; users: names or *; groups: * or group names, looked up in the LDAP directory for the user acted as)",
    ),
    (
        "apiary.secrets.key.file",
        "",
        "the 32-byte key sealing handler secrets (JDBC passwords) in the metastore and the DDL journal (AES-256-GCM); made, owner-only, at first start; servers sharing a metastore need the same file; empty: <data-dir>/secrets.key",
    ),
    (
        "apiary.audit.log",
        "",
        "file the audit log is appended to, one JSON line per login (accepted or refused, with the client's address), session opened, refused or closed, and statement (user, session, text with secrets masked, outcome); empty: <data-dir>/audit.log; none: no audit log",
    ),
    (
        "apiary.failpoints",
        "",
        "for crash tests only: name=abort|error|sleep(ms),... makes the named steps of DDL and INSERT fail (see docs/storage-handlers.md)",
    ),
    (
        "apiary.substitute.env.allowed",
        "",
        "comma-separated environment variables ${env:NAME} may read in statements (a server setting; by default none: the server's environment is not shown to clients)",
    ),
    (
        "apiary.sql.max.nesting.depth",
        "2500",
        "deepest nesting of expressions and subqueries a statement may have (deeper ones are refused before planning)",
    ),
    (
        "apiary.ddl.settle.timeout",
        "30s",
        "how long a cancelled or timed-out DDL's operation waits for it to finish or undo what it started (a remote call it is inside included) before it reports the interruption; the DDL goes on in the background to its end either way",
    ),
    (
        "apiary.ddl.recovery.interval",
        "10s",
        "how often the server settles its own DDL left unfinished in the intent journal (a remote call that failed during an undo, a commit hook that could not run), without waiting for a restart",
    ),
    (
        "apiary.log.format",
        "text",
        "the server log's form on standard error: text (coloured only on a terminal, and never with NO_COLOR set) or json (one JSON object a line, for log shippers)",
    ),
    (
        "apiary.memory.pool.size",
        "50%",
        "memory all running queries may hold together, as a size (512m, 4g) or a share (50%) of the smallest of the machine's memory, the cgroup's limit and what the address-space limit (ulimit -v) leaves once the server's threads, stacks and allocator arenas are set aside; one operator may grow only while as much as it holds stays free for its next growth; a query needing more spills to disk or fails with \"Resources exhausted\"; 0 means no limit",
    ),
    (
        "apiary.spill.dir",
        "",
        "folder for the spill files of queries over the memory pool (empty: <data-dir>/spill; none: no spilling)",
    ),
    (
        "apiary.spill.max.size",
        "100g",
        "most disk space spill files may take at once",
    ),
    (
        "apiary.server.id",
        "",
        "this server's name in the DDL journal and in its staging and spill folders (empty: <host>:<data-dir>); each server sharing a metastore or warehouse needs its own",
    ),
    (
        "hive.query.timeout.seconds",
        "0",
        "default query timeout in seconds (0: none); a client's queryTimeout wins",
    ),
    (
        apiary_storage::reach::ALLOWED_PATHS_KEY,
        "",
        "comma-separated folders statements may name besides the warehouse (LOAD DATA [LOCAL] INPATH, LOCATION, DataFusion's CREATE EXTERNAL TABLE and COPY, jdbc:sqlite: files); each must exist; paths are resolved (file: URLs, .., symbolic links) before the check; empty: no restriction",
    ),
    (
        apiary_storage::reach::ALLOWED_HOSTS_KEY,
        "",
        "comma-separated hosts (host or host:port) JDBC tables may connect to; empty: any host",
    ),
    (
        apiary_sql::policy::RESTRICTED_LIST_KEY,
        apiary_sql::policy::DEFAULT_RESTRICTED_LIST,
        "comma-separated keys (or prefixes) a session may not change; the keys read only at start-up (authentication, TLS, metastore, warehouse, apiary.*) are refused too",
    ),
    (
        apiary_sql::policy::HIDDEN_LIST_KEY,
        apiary_sql::policy::DEFAULT_HIDDEN_LIST,
        "comma-separated keys (or prefixes) SET never shows and sessions never receive (the server's own secrets, such as ldap.bindpw, are hidden too)",
    ),
    (
        apiary_sql::policy::UDF_BLACKLIST_KEY,
        "",
        "comma-separated built-in functions queries may not call (\"UDF f is not allowed\")",
    ),
    (
        apiary_sql::policy::UDF_WHITELIST_KEY,
        "",
        "comma-separated built-in functions that alone queries may call (empty: all); the blacklist wins",
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

    /// The key file sealing handler secrets at rest (`apiary.secrets.key.file`).
    pub fn secrets_key_file(&self) -> PathBuf {
        match self.hiveconf.get("apiary.secrets.key.file") {
            Some(p) if !p.trim().is_empty() => PathBuf::from(p.trim()),
            _ => self.data_dir.join("secrets.key"),
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
    /// A setting that cannot work as given.
    #[error("configuration key {key}: {reason}")]
    Invalid {
        /// The key.
        key: String,
        /// Why.
        reason: String,
    },
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

    /// A duration in seconds (or with a unit) that must not be zero.
    fn nonzero_duration(&self, key: &str) -> Result<Duration, ConfigError> {
        Some(self.duration(key, "s")?)
            .filter(|d| !d.is_zero())
            .ok_or_else(|| ConfigError::Value {
                key: key.into(),
                value: self.get(key).into(),
                expected: "a duration above zero (e.g. 10s)",
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

    /// Settings of the Flight SQL endpoint, or `None` when it is off.
    pub fn flightsql(&self) -> Result<Option<apiary_flightsql::FlightSqlConfig>, ConfigError> {
        let enabled = self
            .get("apiary.flightsql.enabled")
            .trim()
            .to_ascii_lowercase();
        match enabled.as_str() {
            "true" => {}
            "false" => return Ok(None),
            other => {
                return Err(ConfigError::Value {
                    key: "apiary.flightsql.enabled".into(),
                    value: other.into(),
                    expected: "true or false",
                })
            }
        }
        Ok(Some(apiary_flightsql::FlightSqlConfig {
            bind: self.get("hive.server2.thrift.bind.host").to_string(),
            port: self.number("apiary.flightsql.port")?,
            max_message_size: self.number("hive.server2.thrift.max.message.size")?,
            shutdown_grace: Duration::from_secs(5),
            max_connections: self
                .number::<usize>("hive.server2.thrift.max.worker.threads")?
                .max(1),
            login_timeout: self.duration("hive.server2.thrift.login.timeout", "s")?,
            idle_timeout: self.duration("apiary.connection.idle.timeout", "s")?,
            tls: self.tls()?,
        }))
    }

    /// TLS for every listener (`hive.server2.use.SSL`), from Hive's keystore keys.
    pub fn tls(&self) -> Result<Option<apiary_tls::ServerTls>, ConfigError> {
        match self
            .get("hive.server2.use.SSL")
            .trim()
            .to_ascii_lowercase()
            .as_str()
        {
            "false" | "" => return Ok(None),
            "true" => {}
            other => {
                return Err(ConfigError::Value {
                    key: "hive.server2.use.SSL".into(),
                    value: other.into(),
                    expected: "true or false",
                })
            }
        }
        let path = self.get("hive.server2.keystore.path").trim();
        if path.is_empty() {
            return Err(ConfigError::Invalid {
                key: "hive.server2.keystore.path".into(),
                reason: "hive.server2.use.SSL is true but no keystore is named".into(),
            });
        }
        apiary_tls::ServerTls::load(
            std::path::Path::new(path),
            self.get("hive.server2.keystore.password"),
        )
        .map(Some)
        .map_err(|e| ConfigError::Invalid {
            key: "hive.server2.keystore.path".into(),
            reason: e.to_string(),
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
        let modes = self.auth_modes()?;
        let auth = if modes.none {
            AuthMode::None
        } else if modes.nosasl {
            AuthMode::NoSasl
        } else {
            AuthMode::Password
        };
        if modes.jwt
            && !modes.ldap
            && !modes.pam
            && !modes.kerberos
            && transport == TransportMode::Binary
        {
            return Err(ConfigError::Invalid {
                key: "hive.server2.authentication".into(),
                reason: "JWT authentication is only supported in HTTP transport mode".into(),
            });
        }
        let cookie = if auth == AuthMode::Password
            && self.flag("hive.server2.thrift.http.cookie.auth.enabled")?
        {
            let max_age = self.duration("hive.server2.thrift.http.cookie.max.age", "s")?;
            let signer =
                apiary_auth::CookieSigner::new(max_age).map_err(|reason| ConfigError::Invalid {
                    key: "hive.server2.thrift.http.cookie.auth.enabled".into(),
                    reason,
                })?;
            let text = |k: &str| {
                let v = self.get(k).trim();
                (!v.is_empty()).then(|| v.to_string())
            };
            Some(apiary_endpoint::HttpCookie {
                signer: std::sync::Arc::new(signer),
                domain: text("hive.server2.thrift.http.cookie.domain"),
                path: text("hive.server2.thrift.http.cookie.path"),
                http_only: self.flag("hive.server2.thrift.http.cookie.is.httponly")?,
            })
        } else {
            None
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
            tls: self.tls()?,
            cookie,
            // Read before the runtime starts, by `kerberos()`.
            kerberos: None,
            spnego: None,
        })
    }

    /// `hive.server2.authentication`: NONE, NOSASL, or a comma list of checked modes.
    fn auth_modes(&self) -> Result<AuthModes, ConfigError> {
        let value = self.get("hive.server2.authentication");
        let mut modes = AuthModes::default();
        let names: Vec<String> = value
            .split(',')
            .map(|m| m.trim().to_ascii_uppercase())
            .filter(|m| !m.is_empty())
            .collect();
        let wrong = |expected| ConfigError::Value {
            key: "hive.server2.authentication".into(),
            value: value.into(),
            expected,
        };
        for name in &names {
            match name.as_str() {
                "NONE" => modes.none = true,
                "NOSASL" => modes.nosasl = true,
                "LDAP" => modes.ldap = true,
                "JWT" => modes.jwt = true,
                "KERBEROS" => modes.kerberos = true,
                "PAM" => modes.pam = true,
                _ => return Err(wrong(
                    "NONE, NOSASL, LDAP, PAM, KERBEROS, JWT, or a comma list of LDAP or PAM, KERBEROS and JWT",
                )),
            }
        }
        if names.is_empty() {
            modes.none = true;
        }
        if (modes.none || modes.nosasl) && names.len() > 1 {
            return Err(wrong("NONE or NOSASL alone"));
        }
        if modes.ldap && modes.pam {
            return Err(wrong("one password mode: LDAP or PAM"));
        }
        Ok(modes)
    }

    /// A `true`/`false` key.
    fn flag(&self, key: &str) -> Result<bool, ConfigError> {
        match self.get(key).trim().to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            other => Err(ConfigError::Value {
                key: key.into(),
                value: other.into(),
                expected: "true or false",
            }),
        }
    }

    /// The KERBEROS mode's identities, their keys read now. Call before other threads start:
    /// each keytab is named to Kerberos through the environment while its keys are read.
    pub fn kerberos(&self) -> Result<Kerberos, ConfigError> {
        if !self.auth_modes()?.kerberos {
            return Ok(Kerberos::default());
        }
        let qop = self.get("hive.server2.thrift.sasl.qop").trim();
        if !qop.eq_ignore_ascii_case("auth") {
            return Err(ConfigError::Value {
                key: "hive.server2.thrift.sasl.qop".into(),
                value: qop.into(),
                expected: "auth (SASL integrity and privacy layers are not supported; use TLS)",
            });
        }
        let host = match self.get("hive.server2.thrift.bind.host").trim() {
            "" | "0.0.0.0" | "::" | "[::]" => std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map(|h| h.trim().to_string())
                .unwrap_or_else(|_| "localhost".into()),
            h => h.to_string(),
        };
        // `prefix`'s principal and keytab; over HTTP (`spnego`) SPNEGO is accepted around
        // Kerberos 5.
        let acceptor = |prefix: &str, spnego: bool| -> Result<Option<_>, ConfigError> {
            let principal_key = format!("hive.server2.authentication.{prefix}.principal");
            let keytab_key = format!("hive.server2.authentication.{prefix}.keytab");
            let (principal, keytab) = (
                self.get(&principal_key).trim(),
                self.get(&keytab_key).trim(),
            );
            if principal.is_empty() && keytab.is_empty() {
                return Ok(None);
            }
            if principal.is_empty() || keytab.is_empty() {
                return Err(ConfigError::Invalid {
                    key: if principal.is_empty() {
                        principal_key
                    } else {
                        keytab_key
                    },
                    reason: "KERBEROS needs both the principal and its keytab".into(),
                });
            }
            let invalid = |reason: String| ConfigError::Invalid {
                key: principal_key.clone(),
                reason,
            };
            let principal = apiary_auth::Principal::parse(principal, &host).map_err(invalid)?;
            apiary_auth::KerberosAcceptor::new(&principal, std::path::Path::new(keytab), spnego)
                .map(|a| Some(std::sync::Arc::new(a)))
                .map_err(invalid)
        };
        let binary = acceptor("kerberos", false)?;
        let transport = self.get("hive.server2.transport.mode").to_ascii_lowercase();
        if binary.is_none() && transport != "http" {
            return Err(ConfigError::Invalid {
                key: "hive.server2.authentication.kerberos.principal".into(),
                reason:
                    "hive.server2.authentication=KERBEROS needs the server's principal and keytab"
                        .into(),
            });
        }
        let http = match acceptor("spnego", true)? {
            Some(a) => Some(a),
            None => acceptor("kerberos", true)?,
        };
        if http.is_none() && transport != "binary" {
            return Err(ConfigError::Invalid {
                key: "hive.server2.authentication.spnego.principal".into(),
                reason: "KERBEROS over HTTP needs a principal and keytab (spnego, or kerberos)"
                    .into(),
            });
        }
        Ok(Kerberos { binary, http })
    }

    /// The JWT mode's key sets (`hive.server2.authentication.jwt.jwks.url`), loaded now, or
    /// `None` when JWT is not a mode.
    pub async fn jwt(&self) -> Result<Option<apiary_auth::JwtVerifier>, ConfigError> {
        if !self.auth_modes()?.jwt {
            return Ok(None);
        }
        let key = "hive.server2.authentication.jwt.jwks.url";
        let urls: Vec<String> = self
            .get(key)
            .split(',')
            .map(|u| u.trim().to_string())
            .filter(|u| !u.is_empty())
            .collect();
        if urls.is_empty() {
            return Err(ConfigError::Invalid {
                key: key.into(),
                reason: "hive.server2.authentication=JWT needs the URL of a JSON Web Key Set"
                    .into(),
            });
        }
        let timeout = self.duration("hive.server2.thrift.login.timeout", "s")?;
        apiary_auth::JwtVerifier::load(&urls, timeout)
            .await
            .map(Some)
            .map_err(|reason| ConfigError::Invalid {
                key: key.into(),
                reason,
            })
    }

    /// How the engine runs: memory pool, spilling, server id.
    pub fn engine(&self) -> Result<apiary_sql::EngineOptions, ConfigError> {
        let pool = self
            .get("apiary.memory.pool.size")
            .trim()
            .to_ascii_lowercase();
        let available = available_memory();
        let memory_pool_bytes = match pool.as_str() {
            "" | "0" | "unlimited" => None,
            p => {
                let bytes = parse_size(p, available)
                    .filter(|n| *n > 0 || p.ends_with('%'))
                    .ok_or_else(|| ConfigError::Value {
                        key: "apiary.memory.pool.size".into(),
                        value: p.into(),
                        expected: "a size (512m, 4g) or a share (50%)",
                    })?;
                // A share too small to run queries in: say why, rather than fail every query.
                if p.ends_with('%') && bytes < MIN_POOL {
                    return Err(ConfigError::Invalid {
                        key: "apiary.memory.pool.size".into(),
                        reason: format!(
                            "{p} is {} MiB; queries need at least {} MiB (the memory this process may use is {} MiB: the smallest of the machine's, the cgroup's and what the address-space limit, ulimit -v, leaves once the server's threads and stacks are set aside)",
                            bytes >> 20,
                            MIN_POOL >> 20,
                            available >> 20
                        ),
                    });
                }
                if bytes > available {
                    tracing::warn!(
                        "apiary.memory.pool.size={p} ({} MiB) is more than the memory this process may use ({} MiB: the smallest of the machine's, the cgroup's and what the address-space limit leaves); a query's allocation may fail and abort the server",
                        bytes >> 20,
                        available >> 20
                    );
                }
                Some(bytes)
            }
        };
        let spill_dir = match self.get("apiary.spill.dir").trim() {
            "" => Some(self.data_dir.join("spill")),
            "none" => None,
            d => Some(PathBuf::from(d)),
        };
        let spill_max_bytes =
            parse_size(self.get("apiary.spill.max.size"), 0).ok_or_else(|| ConfigError::Value {
                key: "apiary.spill.max.size".into(),
                value: self.get("apiary.spill.max.size").into(),
                expected: "a size (100g)",
            })?;
        let server_id = match self.get("apiary.server.id").trim() {
            "" => {
                let dir = self
                    .data_dir
                    .canonicalize()
                    .unwrap_or_else(|_| self.data_dir.clone());
                format!("{}:{}", hostname(), dir.display())
            }
            id => id.to_string(),
        };
        Ok(apiary_sql::EngineOptions {
            // Sessions start from the server's configuration; the engine leaves out the
            // hidden keys (the policy's list, which holds SECRET_KEYS too), so a client cannot
            // read them back with SET or ${hiveconf:..}.
            defaults: self.hiveconf.clone(),
            warehouse: self.warehouse(),
            server_id,
            memory_pool_bytes,
            spill_dir,
            spill_max_bytes: spill_max_bytes as u64,
            policy: std::sync::Arc::new(self.policy()?),
            ddl_settle: self.duration("apiary.ddl.settle.timeout", "s")?,
            ddl_sweep: self.nonzero_duration("apiary.ddl.recovery.interval")?,
        })
    }

    /// What statements may reach, and what sessions may change, see and call. The warehouse
    /// folder is created here, as it is always allowed.
    pub fn policy(&self) -> Result<apiary_sql::Policy, ConfigError> {
        let warehouse = self.warehouse();
        std::fs::create_dir_all(&warehouse).map_err(|e| ConfigError::Invalid {
            key: "hive.metastore.warehouse.dir".into(),
            reason: format!("cannot create {}: {e}", warehouse.display()),
        })?;
        let reach = apiary_storage::Reach::new(
            Some(self.get(apiary_storage::reach::ALLOWED_PATHS_KEY)),
            &[warehouse.as_path()],
            Some(self.get(apiary_storage::reach::ALLOWED_HOSTS_KEY)),
        )
        .map_err(|e| ConfigError::Invalid {
            key: apiary_storage::reach::ALLOWED_PATHS_KEY.into(),
            reason: e.to_string(),
        })?;
        let startup: Vec<&str> = KEYS
            .iter()
            .map(|(k, _, _)| *k)
            .filter(|k| !SESSION_KEYS.contains(k))
            .chain(STARTUP_PREFIXES.iter().copied())
            .collect();
        let hidden = format!(
            "{},{}",
            self.get(apiary_sql::policy::HIDDEN_LIST_KEY),
            SECRET_KEYS.join(",")
        );
        let policy = apiary_sql::Policy::new(
            std::sync::Arc::new(reach),
            self.get(apiary_sql::policy::RESTRICTED_LIST_KEY),
            &hidden,
            &startup,
            self.get(apiary_sql::policy::UDF_BLACKLIST_KEY),
            self.get(apiary_sql::policy::UDF_WHITELIST_KEY),
        );
        Ok(if self.flag("hive.security.authorization.enabled")? {
            policy.with_authorization(self.get("hive.users.in.admin.role"))
        } else {
            policy
        })
    }

    /// The audit log (`apiary.audit.log`): `<data-dir>/audit.log` by default, `none` for
    /// none.
    pub fn audit(
        &self,
    ) -> Result<Option<std::sync::Arc<apiary_gateway::audit::AuditLog>>, ConfigError> {
        let path = match self.get("apiary.audit.log").trim() {
            "none" => return Ok(None),
            "" => self.data_dir.join("audit.log"),
            p => PathBuf::from(p),
        };
        apiary_gateway::audit::AuditLog::open(&path)
            .map(|log| Some(std::sync::Arc::new(log)))
            .map_err(|e| ConfigError::Invalid {
                key: "apiary.audit.log".into(),
                reason: format!("cannot open {}: {e}", path.display()),
            })
    }

    /// Who may act as whom: `hive.server2.allow.user.substitution`, and in a password mode
    /// the `hadoop.proxyuser.<user>.hosts / .users / .groups` rules.
    pub fn impersonation(&self) -> Result<apiary_gateway::Impersonation, ConfigError> {
        let allowed = match self
            .get("hive.server2.allow.user.substitution")
            .trim()
            .to_ascii_lowercase()
            .as_str()
        {
            "true" | "" => true,
            "false" => false,
            other => {
                return Err(ConfigError::Value {
                    key: "hive.server2.allow.user.substitution".into(),
                    value: other.into(),
                    expected: "true or false",
                })
            }
        };
        let mut rules: BTreeMap<String, apiary_gateway::ProxyRule> = BTreeMap::new();
        for (key, value) in &self.hiveconf {
            let Some(rest) = key.strip_prefix("hadoop.proxyuser.") else {
                continue;
            };
            let Some((user, field)) = rest.rsplit_once('.') else {
                continue;
            };
            let list: Vec<String> = value
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            let rule = rules.entry(user.to_string()).or_default();
            match field {
                "hosts" => rule.hosts = list,
                "users" => rule.users = list,
                "groups" => rule.groups = list,
                _ => {}
            }
        }
        let modes = self.auth_modes()?;
        let checked = !(modes.none || modes.nosasl);
        Ok(apiary_gateway::Impersonation {
            allowed,
            checked,
            rules,
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

    /// The server log's form (`apiary.log.format`).
    pub fn log_format(&self) -> Result<LogFormat, ConfigError> {
        let v = self.get("apiary.log.format");
        match v.trim().to_ascii_lowercase().as_str() {
            "text" | "" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            _ => Err(ConfigError::Value {
                key: "apiary.log.format".into(),
                value: v.into(),
                expected: "text or json",
            }),
        }
    }

    /// Most sessions one user may hold: `hive.server2.limit.connections.per.user` when set
    /// (0 is no limit), else derived from `apiary.max.sessions` by [`derived_sessions_per_user`].
    /// A setting that lets one user take every session is kept, with a warning.
    fn sessions_per_user(&self) -> Result<usize, ConfigError> {
        let key = "hive.server2.limit.connections.per.user";
        let max: usize = self.number("apiary.max.sessions")?;
        if self.get(key).trim().is_empty() {
            return Ok(derived_sessions_per_user(max));
        }
        let per_user: usize = self.number(key)?;
        if max > 1 && (per_user == 0 || per_user >= max) {
            tracing::warn!(
                "{key}={per_user} lets one user hold all apiary.max.sessions={max} sessions and lock every other user out; set it below {max} (or leave it unset: {})",
                derived_sessions_per_user(max)
            );
        }
        Ok(per_user)
    }

    /// Settings of the gateway.
    pub fn gateway(&self) -> Result<GatewayConfig, ConfigError> {
        Ok(GatewayConfig {
            session_idle_timeout: self.duration("hive.server2.idle.session.timeout", "ms")?,
            operation_idle_timeout: self.duration("hive.server2.idle.operation.timeout", "ms")?,
            max_sessions: self.number("apiary.max.sessions")?,
            sessions_per_user: self.sessions_per_user()?,
            sessions_per_address: self.number("hive.server2.limit.connections.per.ipaddress")?,
            sessions_per_user_address: self
                .number("hive.server2.limit.connections.per.user.ipaddress")?,
            operations_per_session: self.number("apiary.session.max.operations")?,
            result_buffer_bytes: parse_size(self.get("apiary.session.result.buffer.size"), 0)
                .filter(|n| *n > 0)
                .ok_or_else(|| ConfigError::Value {
                    key: "apiary.session.result.buffer.size".into(),
                    value: self.get("apiary.session.result.buffer.size").into(),
                    expected: "a size (256m)",
                })?,
            default_fetch_size: self.number("hive.server2.thrift.resultset.default.fetch.size")?,
            authenticator: self.authenticator()?,
            // Loaded by `jwt()`, which reads the key sets over the network.
            jwt: None,
            kerberos: self.auth_modes()?.kerberos,
            audit: self.audit()?,
            impersonation: self.impersonation()?,
        })
    }

    /// The password check of the authentication mode; `None` for NONE and NOSASL.
    fn authenticator(
        &self,
    ) -> Result<Option<std::sync::Arc<dyn apiary_auth::Authenticator>>, ConfigError> {
        let modes = self.auth_modes()?;
        if modes.pam {
            let key = "hive.server2.authentication.pam.services";
            let services = self
                .get(key)
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            let timeout = self.duration("hive.server2.thrift.login.timeout", "s")?;
            return apiary_auth::PamAuthenticator::new(services, timeout)
                .map(|a| Some(std::sync::Arc::new(a) as _))
                .map_err(|reason| ConfigError::Invalid {
                    key: key.into(),
                    reason,
                });
        }
        if !modes.ldap {
            return Ok(None);
        }
        let key = |k: &str| {
            let v = self
                .get(&format!("hive.server2.authentication.ldap.{k}"))
                .trim();
            (!v.is_empty()).then(|| v.to_string())
        };
        let list = |k: &str| -> Vec<String> {
            key(k)
                .map(|v| {
                    v.split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                })
                .unwrap_or_default()
        };
        let config = apiary_auth::LdapConfig {
            urls: self
                .get("hive.server2.authentication.ldap.url")
                .split_whitespace()
                .map(str::to_string)
                .collect(),
            base_dn: key("baseDN"),
            domain: key("Domain"),
            guid_key: key("guidKey").unwrap_or_else(|| "uid".into()),
            user_dn_patterns: key("userDNPattern")
                .map(|p| p.split(':').map(|s| s.trim().to_string()).collect())
                .unwrap_or_default(),
            group_dn_patterns: key("groupDNPattern")
                .map(|p| p.split(':').map(|s| s.trim().to_string()).collect())
                .unwrap_or_default(),
            user_filter: list("userFilter"),
            group_filter: list("groupFilter"),
            group_membership_key: key("groupMembershipKey").unwrap_or_else(|| "member".into()),
            group_class_key: key("groupClassKey").unwrap_or_else(|| "groupOfNames".into()),
            bind_dn: key("binddn").map(|dn| {
                (
                    dn,
                    self.get("hive.server2.authentication.ldap.bindpw")
                        .to_string(),
                )
            }),
            timeout: self.duration("apiary.authentication.ldap.timeout", "s")?,
            tls: match self.get("apiary.authentication.ldap.ca.file").trim() {
                "" => apiary_tls::client_config(None),
                file => apiary_tls::client_config(Some(std::path::Path::new(file))),
            }
            .map(Some)
            .map_err(|reason| ConfigError::Invalid {
                key: "apiary.authentication.ldap.ca.file".into(),
                reason,
            })?,
        };
        let ldap =
            apiary_auth::LdapAuthenticator::new(config).map_err(|reason| ConfigError::Invalid {
                key: "hive.server2.authentication.ldap.url".into(),
                reason,
            })?;
        Ok(Some(std::sync::Arc::new(ldap)))
    }
}

/// The per-user session limit when `hive.server2.limit.connections.per.user` is unset: a tenth
/// of the global cap, rounded up, and below the cap whenever the cap leaves room for two users.
pub fn derived_sessions_per_user(max_sessions: usize) -> usize {
    let tenth = max_sessions.div_ceil(10).max(1);
    if max_sessions >= 2 {
        tenth.min(max_sessions - 1)
    } else {
        tenth
    }
}

/// The server log's form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object a line.
    Json,
}

/// The smallest memory pool a share (`50%`) may come to.
const MIN_POOL: usize = 16 << 20;

/// Parses a size: bytes, or a number with k, m, g or t (powers of 1024, an optional trailing
/// `b`), or a percentage of `whole`.
pub fn parse_size(v: &str, whole: usize) -> Option<usize> {
    let v = v.trim().to_ascii_lowercase();
    if let Some(p) = v.strip_suffix('%') {
        let p: f64 = p.trim().parse().ok()?;
        if !(0.0..=100.0).contains(&p) {
            return None;
        }
        return Some((whole as f64 * p / 100.0) as usize);
    }
    let v = v.strip_suffix('b').unwrap_or(&v);
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let n: usize = num.parse().ok()?;
    let shift = match unit.trim() {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return None,
    };
    n.checked_mul(1usize << shift)
}

/// Stack size of the runtime's worker and blocking threads.
pub const WORKER_STACK: usize = 64 << 20;

/// The glibc allocator's reservation of address space for each of its arenas (64 MiB on
/// 64-bit machines), and how many arenas it keeps per core at most (unless MALLOC_ARENA_MAX
/// says otherwise).
const MALLOC_ARENA: usize = 64 << 20;
const MALLOC_ARENAS_PER_CORE: usize = 8;

/// This process's address-space limit (`ulimit -v`, RLIMIT_AS; the soft limit), if one is
/// set.
pub fn address_space_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find_map(|l| l.strip_prefix("Max address space"))?;
    // "unlimited" does not parse.
    line.split_whitespace().next()?.parse().ok()
}

/// Blocking threads the runtime may start: tokio's default (512), or under an address-space
/// limit as many as a quarter of it holds at [`WORKER_STACK`] each (at least 4), so that
/// thread stacks cannot take the room queries need.
pub fn max_blocking_threads() -> usize {
    match address_space_limit() {
        None => 512,
        Some(limit) => (limit / 4 / WORKER_STACK).clamp(4, 512),
    }
}

/// The address space this process has mapped now (`VmSize`).
fn mapped_now() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmSize:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|kb| kb.parse::<usize>().ok())
        })
        .map(|kb| kb.saturating_mul(1024))
        .unwrap_or(0)
}

/// The memory this process may use: the smallest of the machine's, its cgroup's limit (cgroup
/// v2 `memory.max`, v1 `memory.limit_in_bytes`) and, under an address-space limit
/// (`ulimit -v`), what that limit leaves once the server's own needs are set aside: what it
/// has mapped already (code, libraries, the threads started so far), a stack for every
/// thread the runtime may still start, and the allocator's arenas.
pub fn available_memory() -> usize {
    let limit = machine_or_cgroup_memory();
    match address_space_limit() {
        None => limit,
        Some(space) => {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let blocking = max_blocking_threads();
            // glibc makes an arena only for a thread that finds the others busy: at most one
            // per thread (the workers, the blocking threads, the main thread), and at most
            // its own cap (MALLOC_ARENA_MAX, else 8 per core).
            let arena_cap = std::env::var("MALLOC_ARENA_MAX")
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|n| *n > 0)
                .unwrap_or(cores * MALLOC_ARENAS_PER_CORE);
            let arenas = arena_cap.min(cores + blocking + 1);
            let reserve = mapped_now()
                .saturating_add(blocking.saturating_mul(WORKER_STACK))
                .saturating_add(arenas.saturating_mul(MALLOC_ARENA))
                // Most of it is address space, not memory: whatever the estimate, a quarter
                // of the limit is left to queries.
                .min(space / 4 * 3);
            limit.min(space.saturating_sub(reserve))
        }
    }
}

/// The machine's memory, or its cgroup's limit if lower.
fn machine_or_cgroup_memory() -> usize {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<usize>().ok())
        })
        .map(|kb| kb.saturating_mul(1024))
        .unwrap_or(4 << 30);
    let mut limit = total;
    for limit_file in cgroup_limit_files() {
        if let Some(n) = std::fs::read_to_string(&limit_file)
            .ok()
            .and_then(|t| t.trim().parse::<usize>().ok())
        {
            // v1 reports "no limit" as a huge number; "max" (v2) does not parse.
            limit = limit.min(n);
        }
    }
    limit
}

/// The memory-limit files of this process's cgroups (v2 and v1).
fn cgroup_limit_files() -> Vec<PathBuf> {
    let Ok(groups) = std::fs::read_to_string("/proc/self/cgroup") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let path = path.trim_start_matches('/');
        if controllers.is_empty() {
            for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
                out.push(PathBuf::from(root).join(path).join("memory.max"));
            }
        } else if controllers.split(',').any(|c| c == "memory") {
            out.push(
                PathBuf::from("/sys/fs/cgroup/memory")
                    .join(path)
                    .join("memory.limit_in_bytes"),
            );
        }
    }
    out
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
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
    fn sizes_parse() {
        assert_eq!(parse_size("512m", 0), Some(512 << 20));
        assert_eq!(parse_size("4GB", 0), Some(4 << 30));
        assert_eq!(parse_size("1024", 0), Some(1024));
        assert_eq!(parse_size("50%", 1000), Some(500));
        assert_eq!(parse_size("150%", 1000), None);
        assert_eq!(parse_size("lots", 0), None);
        assert!(available_memory() > 0);
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
