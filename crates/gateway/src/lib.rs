//! Apiary's gateway: sessions, operations, result streaming, operation logs, cancellation and
//! expiry. It knows nothing of Thrift; the endpoint crate maps RPCs onto it.

#![warn(missing_docs)]

pub mod audit;
pub mod catalog;
pub mod error;
pub mod handle;
mod impersonation;
mod login;
pub mod operation;

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use apiary_sql::render;
use apiary_sql::{Engine, Prepared, SessionOptions, SqlSession};
pub use apiary_sql::{HiveType, SqlError};
pub use catalog::{CatalogRequest, TableInfo};
pub use error::GatewayError;
pub use error::OperationError;
pub use handle::Handle;
pub use impersonation::{Impersonation, ProxyRule};
pub use operation::{
    FetchedRows, Operation, OperationKind, OperationState, OperationStatus, ResultSource,
};
use parking_lot::Mutex;

/// Limits and timeouts of the gateway.
#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// Sessions unused for this long are closed (`hive.server2.idle.session.timeout`).
    pub session_idle_timeout: Duration,
    /// Operations unused for this long are closed (`hive.server2.idle.operation.timeout`).
    pub operation_idle_timeout: Duration,
    /// Most sessions open at once.
    pub max_sessions: usize,
    /// Most sessions one user may hold (`hive.server2.limit.connections.per.user`; 0 = no limit).
    pub sessions_per_user: usize,
    /// Most sessions from one client address (`hive.server2.limit.connections.per.ipaddress`).
    pub sessions_per_address: usize,
    /// Most sessions of one user from one address
    /// (`hive.server2.limit.connections.per.user.ipaddress`).
    pub sessions_per_user_address: usize,
    /// Most operations a session may hold open at once (`apiary.session.max.operations`).
    pub operations_per_session: usize,
    /// Result bytes a session's operations may hold buffered, ahead of the client's fetches
    /// (`apiary.session.result.buffer.size`).
    pub result_buffer_bytes: usize,
    /// Default rows per fetch advertised to clients.
    pub default_fetch_size: usize,
    /// The password check of a password mode (`hive.server2.authentication=LDAP`); `None`
    /// is NONE, where any user and password are accepted.
    pub authenticator: Option<Arc<dyn apiary_auth::Authenticator>>,
    /// The bearer-token check of Hive's JWT mode (HTTP only); with it and no `authenticator`,
    /// password logins are refused.
    pub jwt: Option<Arc<apiary_auth::JwtVerifier>>,
    /// Whether Hive's KERBEROS mode is on: the front ends accept tickets (the exchange itself
    /// is the transport's, see [`Gateway::ticket_login`]); with it and no `authenticator`,
    /// password logins are refused.
    pub kerberos: bool,
    /// Where logins, sessions and statements are audited (`apiary.audit.log`), if anywhere.
    pub audit: Option<Arc<audit::AuditLog>>,
    /// Who may open sessions as another user.
    pub impersonation: Impersonation,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        Self {
            session_idle_timeout: Duration::from_secs(4 * 3600),
            operation_idle_timeout: Duration::from_secs(2 * 3600),
            max_sessions: 1000,
            sessions_per_user: 100,
            sessions_per_address: 0,
            sessions_per_user_address: 0,
            operations_per_session: 200,
            result_buffer_bytes: 256 << 20,
            default_fetch_size: 1000,
            authenticator: None,
            jwt: None,
            kerberos: false,
            audit: None,
            impersonation: Impersonation::default(),
        }
    }
}

/// Who opens a session: the user and the address the connection comes from.
#[derive(Debug, Clone)]
pub struct Client {
    /// The user name.
    pub user: String,
    /// The client's address, where the transport knows it.
    pub address: Option<IpAddr>,
    /// The user the transport asks to act as (HTTP's `doAs`), if any.
    pub proxy_user: Option<String>,
}

/// One client session.
pub struct Session {
    handle: Handle,
    /// Who the session acts as (the proxied user when impersonating).
    user: String,
    /// Who logged in: the owner of the session's handles.
    real_user: String,
    address: Option<IpAddr>,
    protocol: i32,
    sql: tokio::sync::Mutex<SqlSession>,
    /// KiB of results its operations may buffer ahead of fetches.
    result_budget: Arc<tokio::sync::Semaphore>,
    operations: Mutex<Vec<Handle>>,
    last_access: Mutex<Instant>,
    client_info: Mutex<BTreeMap<String, String>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("handle", &self.handle)
            .field("user", &self.user)
            .finish()
    }
}

impl Session {
    /// The session's handle.
    pub fn handle(&self) -> Handle {
        self.handle
    }

    /// The user name the client gave.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The protocol version the front end agreed for it.
    pub fn protocol(&self) -> i32 {
        self.protocol
    }

    /// Client information set with SetClientInfo.
    pub fn client_info(&self) -> BTreeMap<String, String> {
        self.client_info.lock().clone()
    }

    fn touch(&self) {
        *self.last_access.lock() = Instant::now();
    }
}

/// What a front end asks for when it opens a session, in neutral terms (the HiveServer2
/// endpoint reads them from OpenSession's `set:hiveconf:`, `set:hivevar:` and `use:database`
/// keys).
#[derive(Debug, Clone, Default)]
pub struct SessionRequest {
    /// The user to act as (`hive.server2.proxy.user`), if not the client's own.
    pub proxy_user: Option<String>,
    /// The database to start in.
    pub database: Option<String>,
    /// Hive configuration to set.
    pub conf: BTreeMap<String, String>,
    /// Hive variables to set.
    pub vars: BTreeMap<String, String>,
    /// The front end's protocol version for this session (HiveServer2's, agreed by the
    /// endpoint), kept for the front end.
    pub protocol: i32,
}

/// Owns every session and operation of the server.
#[derive(Debug)]
pub struct Gateway {
    engine: Arc<Engine>,
    config: GatewayConfig,
    sessions: Mutex<HashMap<[u8; 16], Arc<Session>>>,
    operations: Mutex<HashMap<[u8; 16], Arc<Operation>>>,
}

impl Gateway {
    /// A gateway over `engine`.
    pub fn new(engine: Arc<Engine>, config: GatewayConfig) -> Arc<Self> {
        Arc::new(Self {
            engine,
            config,
            sessions: Mutex::new(HashMap::new()),
            operations: Mutex::new(HashMap::new()),
        })
    }

    /// The gateway's configuration.
    pub fn config(&self) -> &GatewayConfig {
        &self.config
    }

    /// Number of open sessions.
    pub fn session_count(&self) -> usize {
        self.sessions.lock().len()
    }

    /// Number of live operations.
    pub fn operation_count(&self) -> usize {
        self.operations.lock().len()
    }

    fn audit(&self, event: audit::AuditEvent<'_>) {
        if let Some(log) = &self.config.audit {
            log.record(event);
        }
    }

    /// Opens a session for `client`.
    pub async fn open_session(
        &self,
        client: &Client,
        request: SessionRequest,
    ) -> Result<Arc<Session>, GatewayError> {
        let opened = self.open_session_unaudited(client, request).await;
        self.audit(audit::AuditEvent::SessionOpen {
            user: &client.user,
            address: client.address,
            session: opened.as_ref().ok().map(|s| s.handle.to_string()),
            error: opened.as_ref().err().map(GatewayError::message),
        });
        opened
    }

    async fn open_session_unaudited(
        &self,
        client: &Client,
        request: SessionRequest,
    ) -> Result<Arc<Session>, GatewayError> {
        let proxy = request
            .proxy_user
            .clone()
            .or_else(|| client.proxy_user.clone())
            .filter(|p| !p.is_empty() && *p != client.user);
        if let Some(p) = &proxy {
            let rules = &self.config.impersonation;
            // Hadoop's `.groups` rule: the groups of the user acted as, from the directory.
            let groups = match (&self.config.authenticator, rules.needs_groups(&client.user)) {
                (Some(auth), true) => auth.groups_of(p).await.unwrap_or_else(|e| {
                    tracing::warn!(user = %p, reason = %e, "cannot read the groups of a proxy user");
                    Vec::new()
                }),
                _ => Vec::new(),
            };
            rules.check(&client.user, p, client.address, &groups)?;
        }
        let user = proxy.as_deref().unwrap_or(client.user.as_str());
        let opts = SessionOptions {
            user: user.to_string(),
            database: request.database,
            hiveconf: request.conf,
            hivevar: request.vars,
        };
        let sql = self.engine.open_session(opts).map_err(|e| match e {
            // Hive's OpenSession wraps the refusal of its SetProcessor so.
            SqlError::Restricted(_) => GatewayError::Refused(format!(
                "Failed to open new session: java.lang.IllegalArgumentException: {e}"
            )),
            other => other.into(),
        })?;
        let session = Arc::new(Session {
            handle: Handle::random(),
            user: user.to_string(),
            real_user: client.user.clone(),
            address: client.address,
            protocol: request.protocol,
            sql: tokio::sync::Mutex::new(sql),
            result_budget: Arc::new(tokio::sync::Semaphore::new(kib(self
                .config
                .result_buffer_bytes))),
            operations: Mutex::new(Vec::new()),
            last_access: Mutex::new(Instant::now()),
            client_info: Mutex::new(BTreeMap::new()),
        });
        {
            // Checked and inserted under one lock, so racing OpenSessions cannot pass a quota.
            let mut sessions = self.sessions.lock();
            check_session_limits(&self.config, &sessions, client)?;
            sessions.insert(session.handle.guid, session.clone());
        }
        Ok(session)
    }

    /// Looks up a session by handle.
    pub fn session(&self, handle: &Handle) -> Result<Arc<Session>, GatewayError> {
        let s = self
            .sessions
            .lock()
            .get(&handle.guid)
            .filter(|s| s.handle.secret == handle.secret)
            .cloned()
            .ok_or_else(|| {
                GatewayError::InvalidHandle(format!(
                    "Invalid SessionHandle: SessionHandle [{handle}]"
                ))
            })?;
        s.touch();
        Ok(s)
    }

    /// The user who logged in to open the session a handle names (a session's, or an operation's session's),
    /// without counting as its use; `None` for a handle the server does not know.
    pub fn owner(&self, handle: &Handle) -> Option<String> {
        let session_of =
            |guid: &[u8; 16]| self.sessions.lock().get(guid).map(|s| s.real_user.clone());
        if let Some(s) = self
            .sessions
            .lock()
            .get(&handle.guid)
            .filter(|s| s.handle.secret == handle.secret)
        {
            return Some(s.real_user.clone());
        }
        let session = self
            .operations
            .lock()
            .get(&handle.guid)
            .filter(|o| o.handle().secret == handle.secret)
            .map(|o| o.session().guid)?;
        session_of(&session)
    }

    /// Whether a session is open (without counting as its use).
    pub fn session_exists(&self, handle: &Handle) -> bool {
        self.sessions
            .lock()
            .get(&handle.guid)
            .is_some_and(|s| s.handle.secret == handle.secret)
    }

    /// Closes a session and every operation it owns.
    pub fn close_session(&self, handle: &Handle) -> Result<(), GatewayError> {
        let session = self.session(handle)?;
        if self.sessions.lock().remove(&handle.guid).is_some() {
            self.audit(audit::AuditEvent::SessionClose {
                user: &session.user,
                session: session.handle.to_string(),
            });
        }
        let ops: Vec<Handle> = std::mem::take(&mut *session.operations.lock());
        for op in ops {
            if let Some(o) = self.operations.lock().remove(&op.guid) {
                o.close();
            }
        }
        Ok(())
    }

    /// Records client information (SetClientInfo).
    pub fn set_client_info(
        &self,
        handle: &Handle,
        info: BTreeMap<String, String>,
    ) -> Result<(), GatewayError> {
        let session = self.session(handle)?;
        session.client_info.lock().extend(info);
        Ok(())
    }

    /// Runs a statement. With `run_async` the operation is returned while it runs; otherwise
    /// once its first results are ready (or it failed, which is then returned as the error).
    pub async fn execute_statement(
        &self,
        handle: &Handle,
        statement: &str,
        conf_overlay: &BTreeMap<String, String>,
        run_async: bool,
        query_timeout_secs: i64,
    ) -> Result<Arc<Operation>, GatewayError> {
        let session = self.session(handle)?;
        // Statements of one session are prepared one at a time, so the cap holds.
        let mut sql = session.sql.lock().await;
        self.check_operation_cap(&session)?;
        // Hive applies an overlay's keys as SET does, refusing the restricted ones.
        for key in conf_overlay.keys() {
            sql.check_settable(key).map_err(|e| {
                GatewayError::Refused(format!("Error applying statement specific settings: {e}"))
            })?;
        }
        let timeout = effective_timeout(query_timeout_secs, conf_overlay, &sql);
        let prepared = match sql.compile(statement).await {
            // A change of the session's own state is made now, before its next statement.
            Ok(Prepared::Session(change)) => sql.apply(change).map(|()| Prepared::Done),
            other => other,
        };
        let notes = sql.take_notes();
        drop(sql);
        let (schema, source) = match prepared {
            Ok(Prepared::Query { plan, schema }) => {
                (Some(schema), ResultSource::Plan(Box::new(plan)))
            }
            Ok(Prepared::Rows { schema, batches }) => {
                (Some(schema), ResultSource::Rows(Arc::new(batches)))
            }
            Ok(Prepared::Done | Prepared::Session(_)) => (None, ResultSource::Empty),
            Ok(Prepared::Task(task)) => {
                let output = task.output();
                (
                    output.as_ref().map(|o| o.schema().clone()),
                    ResultSource::Task(Arc::new(parking_lot::Mutex::new(Some(task))), output),
                )
            }
            Err(e) => {
                self.audit(audit::AuditEvent::Statement {
                    user: &session.user,
                    session: session.handle.to_string(),
                    text: statement,
                    outcome: "ERROR",
                    error: Some(e.hive_message()),
                });
                return Err(GatewayError::Sql(e));
            }
        };
        let op = Operation::new(
            session.handle,
            OperationKind::ExecuteStatement,
            statement.to_string(),
            schema,
            source,
            timeout,
            Some((
                session.result_budget.clone(),
                kib(self.config.result_buffer_bytes),
            )),
        );
        op.log(
            "INFO",
            format!(
                "Compiling command(queryId={}): {}",
                op.query_id(),
                statement.trim()
            ),
        );
        op.log("INFO", "Semantic Analysis Completed");
        for note in notes {
            op.log("WARN", note);
        }
        if let Some(log) = self.config.audit.clone() {
            // The statement's line is written when it ends, with how it ended.
            let user = session.user.clone();
            let (session_id, text) = (session.handle.to_string(), statement.to_string());
            op.on_end(Box::new(move |state, error| {
                let outcome = format!("{state:?}").to_ascii_uppercase();
                log.record(audit::AuditEvent::Statement {
                    user: &user,
                    session: session_id,
                    text: &text,
                    outcome: &outcome,
                    error: error.map(|e| e.message),
                });
            }));
        }
        self.register(&session, &op);
        op.start().await;
        if !run_async {
            let state = op.wait_ready().await;
            if matches!(state, OperationState::Error | OperationState::TimedOut) {
                let err = op.status().error.unwrap_or_else(|| OperationError {
                    message: "The operation failed".into(),
                    sql_state: None,
                    code: 0,
                });
                self.close_operation(&op.handle()).ok();
                return Err(GatewayError::Failed(err));
            }
        }
        Ok(op)
    }

    /// Answers a catalog request as an operation whose rows have JDBC's shapes.
    pub async fn catalog(
        &self,
        handle: &Handle,
        request: CatalogRequest,
    ) -> Result<Arc<Operation>, GatewayError> {
        let session = self.session(handle)?;
        self.check_operation_cap(&session)?;
        let kind = request.kind();
        // The catalog calls read the metastore themselves, so they see other servers' DDL.
        let reader = session.sql.lock().await.catalog_reader();
        let (schema, source) = match request.answer(&reader).await? {
            Prepared::Rows { schema, batches } => {
                (Some(schema), ResultSource::Rows(Arc::new(batches)))
            }
            Prepared::Query { .. } | Prepared::Done | Prepared::Task(_) | Prepared::Session(_) => {
                (None, ResultSource::Empty)
            }
        };
        let op = Operation::new(
            session.handle,
            kind,
            String::new(),
            schema,
            source,
            None,
            None,
        );
        self.register(&session, &op);
        op.start().await;
        op.wait_ready().await;
        Ok(op)
    }

    /// The databases matching `pattern` (JDBC's), sorted.
    pub async fn databases(
        &self,
        handle: &Handle,
        pattern: Option<&str>,
    ) -> Result<Vec<String>, GatewayError> {
        let session = self.session(handle)?;
        let reader = session.sql.lock().await.catalog_reader();
        Ok(reader.database_names(pattern).await?)
    }

    /// The tables and views matching the patterns, with their Arrow schemas.
    pub async fn tables(
        &self,
        handle: &Handle,
        schema_pattern: Option<&str>,
        table_pattern: Option<&str>,
        table_types: Option<&[String]>,
    ) -> Result<Vec<TableInfo>, GatewayError> {
        let session = self.session(handle)?;
        let reader = session.sql.lock().await.catalog_reader();
        Ok(reader
            .table_infos(schema_pattern, table_pattern, table_types)
            .await?)
    }

    /// Refuses a new operation in a session that holds its limit of open ones.
    fn check_operation_cap(&self, session: &Session) -> Result<(), GatewayError> {
        let open = session.operations.lock().len();
        let cap = self.config.operations_per_session;
        if cap > 0 && open >= cap {
            return Err(GatewayError::Busy(format!(
                "Too many open operations in this session ({open}; limit {cap}, \
                 apiary.session.max.operations): close finished statements and retry"
            )));
        }
        Ok(())
    }

    fn register(&self, session: &Session, op: &Arc<Operation>) {
        session.operations.lock().push(op.handle());
        self.operations.lock().insert(op.handle().guid, op.clone());
    }

    /// Looks up an operation by handle.
    pub fn operation(&self, handle: &Handle) -> Result<Arc<Operation>, GatewayError> {
        let op = self
            .operations
            .lock()
            .get(&handle.guid)
            .filter(|o| o.handle().secret == handle.secret)
            .cloned()
            .ok_or_else(|| {
                GatewayError::InvalidHandle(format!(
                    "Invalid OperationHandle: OperationHandle [getHandleIdentifier()={handle}]"
                ))
            })?;
        if let Some(s) = self.sessions.lock().get(&op.session().guid) {
            s.touch();
        }
        Ok(op)
    }

    /// Cancels an operation and waits (up to its task's settle time and a little) until its
    /// work has settled, so that when the client hears back a cancelled DDL is undone (or,
    /// past its commit, finished) and the catalogs agree; a DDL still inside a remote call
    /// then goes on in the background to its end.
    pub async fn cancel_operation(&self, handle: &Handle) -> Result<(), GatewayError> {
        let op = self.operation(handle)?;
        op.cancel()?;
        let bound = op.settle_time() + Duration::from_secs(2);
        if tokio::time::timeout(bound, op.settled()).await.is_err() {
            tracing::warn!(operation = %handle, "a cancelled operation has not settled yet");
        }
        Ok(())
    }

    /// Closes an operation and frees its results.
    pub fn close_operation(&self, handle: &Handle) -> Result<(), GatewayError> {
        let op = self.operation(handle)?;
        self.operations.lock().remove(&handle.guid);
        if let Some(s) = self.sessions.lock().get(&op.session().guid) {
            s.operations.lock().retain(|h| h != handle);
        }
        op.close();
        Ok(())
    }

    /// Closes sessions and operations idle past their timeouts; returns how many of each.
    pub fn expire_idle(&self) -> (usize, usize) {
        let idle_ops: Vec<Handle> = self
            .operations
            .lock()
            .values()
            .filter(|o| o.idle_for() > self.config.operation_idle_timeout)
            .map(|o| o.handle())
            .collect();
        for h in &idle_ops {
            let _ = self.close_operation(h);
        }
        let idle_sessions: Vec<Handle> = self
            .sessions
            .lock()
            .values()
            .filter(|s| s.last_access.lock().elapsed() > self.config.session_idle_timeout)
            .map(|s| s.handle)
            .collect();
        for h in &idle_sessions {
            let _ = self.close_session(h);
        }
        (idle_sessions.len(), idle_ops.len())
    }

    /// Closes everything (server shutdown).
    pub fn close_all(&self) {
        let all: Vec<Handle> = self.sessions.lock().values().map(|s| s.handle).collect();
        for h in all {
            let _ = self.close_session(&h);
        }
    }
}

/// Refuses a session past the global cap or the per-user and per-address quotas, with
/// Hive's texts for the latter.
fn check_session_limits(
    limits: &GatewayConfig,
    sessions: &HashMap<[u8; 16], Arc<Session>>,
    client: &Client,
) -> Result<(), GatewayError> {
    if sessions.len() >= limits.max_sessions {
        return Err(GatewayError::Busy(format!(
            "Too many open sessions ({}); close some and retry",
            limits.max_sessions
        )));
    }
    let (mut by_user, mut by_address, mut by_both) = (0, 0, 0);
    for s in sessions.values() {
        let same_user = s.real_user == client.user;
        let same_address = client.address.is_some() && s.address == client.address;
        by_user += usize::from(same_user);
        by_address += usize::from(same_address);
        by_both += usize::from(same_user && same_address);
    }
    let address = client.address.map(|a| a.to_string()).unwrap_or_default();
    if limits.sessions_per_user > 0 && by_user >= limits.sessions_per_user {
        return Err(GatewayError::Busy(format!(
            "Connection limit per user reached (user: {} limit: {})",
            client.user, limits.sessions_per_user
        )));
    }
    if limits.sessions_per_address > 0 && by_address >= limits.sessions_per_address {
        return Err(GatewayError::Busy(format!(
            "Connection limit per ipaddress reached (ipaddress: {address} limit: {})",
            limits.sessions_per_address
        )));
    }
    if limits.sessions_per_user_address > 0 && by_both >= limits.sessions_per_user_address {
        return Err(GatewayError::Busy(format!(
            "Connection limit per user:ipaddress reached (user:ipaddress: {}:{address} limit: {})",
            client.user, limits.sessions_per_user_address
        )));
    }
    Ok(())
}

/// Bytes as KiB permits of a result budget (at least one, at most what a semaphore holds).
pub(crate) fn kib(bytes: usize) -> usize {
    bytes
        .div_ceil(1024)
        .clamp(1, tokio::sync::Semaphore::MAX_PERMITS)
}

/// The query timeout: the request's, else `hive.query.timeout.seconds` from the overlay or the
/// session; zero or less means none.
fn effective_timeout(
    request_secs: i64,
    overlay: &BTreeMap<String, String>,
    sql: &SqlSession,
) -> Option<Duration> {
    let conf = overlay
        .get("hive.query.timeout.seconds")
        .map(String::as_str)
        .or_else(|| sql.conf("hive.query.timeout.seconds"))
        .and_then(|v| v.trim().trim_end_matches('s').parse::<i64>().ok())
        .unwrap_or(0);
    let secs = if request_secs > 0 { request_secs } else { conf };
    u64::try_from(secs)
        .ok()
        .filter(|s| *s > 0)
        .map(Duration::from_secs)
}
