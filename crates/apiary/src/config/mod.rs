//! Server configuration in one typed place: defaults, then the `--config` file, then
//! `--hiveconf` pairs, then the explicit flags. Every key Apiary honours is listed in [`KEYS`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use apiary_endpoint::{AuthMode, EndpointConfig, TransportMode};
use apiary_gateway::GatewayConfig;

mod keys;
mod memory;

pub use keys::{KEYS, SECRET_KEYS};
use keys::{SESSION_KEYS, STARTUP_PREFIXES};
pub use memory::*;

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
            self.get(apiary_sql::access::policy::HIDDEN_LIST_KEY),
            SECRET_KEYS.join(",")
        );
        let policy = apiary_sql::Policy::new(
            std::sync::Arc::new(reach),
            self.get(apiary_sql::access::policy::RESTRICTED_LIST_KEY),
            &hidden,
            &startup,
            self.get(apiary_sql::access::policy::UDF_BLACKLIST_KEY),
            self.get(apiary_sql::access::policy::UDF_WHITELIST_KEY),
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
