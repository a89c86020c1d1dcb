//! Every configuration key Apiary honours, with its default and what it does ([`KEYS`], what
//! `apiary --help-keys` and docs/operations.md show), and the keys that are secrets, that a
//! session may set, or that only take effect at start-up.

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
pub(super) const SESSION_KEYS: &[&str] = &[
    "hive.query.timeout.seconds",
    "hive.server2.thrift.resultset.default.fetch.size",
];

/// Prefixes of keys only the server sets, besides those of [`KEYS`]: Apiary's own, Hive's
/// authentication, TLS, impersonation and function-list keys, the metastore's connection,
/// and DataFusion's catalog and runtime options.
pub(super) const STARTUP_PREFIXES: &[&str] = &[
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
        apiary_sql::access::policy::RESTRICTED_LIST_KEY,
        apiary_sql::access::policy::DEFAULT_RESTRICTED_LIST,
        "comma-separated keys (or prefixes) a session may not change; the keys read only at start-up (authentication, TLS, metastore, warehouse, apiary.*) are refused too",
    ),
    (
        apiary_sql::access::policy::HIDDEN_LIST_KEY,
        apiary_sql::access::policy::DEFAULT_HIDDEN_LIST,
        "comma-separated keys (or prefixes) SET never shows and sessions never receive (the server's own secrets, such as ldap.bindpw, are hidden too)",
    ),
    (
        apiary_sql::access::policy::UDF_BLACKLIST_KEY,
        "",
        "comma-separated built-in functions queries may not call (\"UDF f is not allowed\")",
    ),
    (
        apiary_sql::access::policy::UDF_WHITELIST_KEY,
        "",
        "comma-separated built-in functions that alone queries may call (empty: all); the blacklist wins",
    ),
];
