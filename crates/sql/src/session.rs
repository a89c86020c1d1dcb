//! A HiveQL session: Hive's session statements (SET, RESET, USE, SHOW ...) handled here, the
//! rest parsed with sqlparser's Hive dialect, rewritten toward Hive's semantics and planned on
//! DataFusion.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use std::path::{Path, PathBuf};

use crate::dialect::HiveQl;
use apiary_metastore::{Database, Metastore, Table};
use apiary_storage::handler::Registry;
use datafusion::catalog::{CatalogProviderList, MemoryCatalogProviderList};
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion::sql::parser::Statement as DfStatement;
use datafusion::sql::sqlparser::parser::{Parser, ParserError};

use tokio_util::sync::CancellationToken;

use crate::authz::{Need, RoleSetting};
use crate::catalog::HiveCatalog;
use crate::error::{HiveError, SqlError};
use crate::names::{CATALOG, DEFAULT_DATABASE};
use crate::pattern::hive_like;
use crate::policy::Policy;
use crate::prepared::{string_rows, Prepared, QueryPlan};
use crate::rewrite;
use crate::statement::Scope;
use crate::substitute::substitute;
use crate::task::{Task, TaskOutput};

/// The server's list of environment variables `${env:NAME}` may read (none by default).
pub const ENV_ALLOWED_KEY: &str = "apiary.substitute.env.allowed";
/// The key bounding how deeply a statement's expressions and queries nest.
pub const MAX_NESTING_KEY: &str = "apiary.sql.max.nesting.depth";
/// Its default: deep enough for generated SQL (a chain of 1,000 ORs or additions), shallow
/// enough that planning and evaluating it stays far inside a worker's 16 MiB stack.
pub const DEFAULT_MAX_NESTING: usize = 2500;
/// Operators a statement may hold per level of nesting allowed: a single chain of them is a
/// tree that deep, and a bounded one is dropped and visited safely.
const OPERATORS_PER_LEVEL: usize = 50;

/// What every context that plans HiveQL has besides its catalogs and configuration: Hive's
/// 0-based array subscripts (before DataFusion's own planners, so they win), DataFusion's
/// defaults, and Hive's typing rule before DataFusion's coercion. A session's context and the
/// one a view's text is planned in are both built with it, so a view's text means what the
/// same text means in a query.
pub(crate) fn hive_planning(builder: SessionStateBuilder) -> SessionStateBuilder {
    builder
        .with_expr_planners(vec![Arc::new(crate::functions::HiveSubscripts)])
        .with_default_features()
        .with_analyzer_rules(crate::typing::analyzer_rules())
}

/// Shared state of the SQL layer: the catalog and the execution runtime.
#[derive(Debug)]
pub struct Engine {
    handlers: Arc<Registry>,
    owner: String,
    tag: String,
    unavailable: Arc<crate::recovery::Unavailable>,
    catalogs: Arc<MemoryCatalogProviderList>,
    catalog: Arc<HiveCatalog>,
    metastore: Arc<dyn Metastore>,
    warehouse: PathBuf,
    runtime: Arc<RuntimeEnv>,
    defaults: BTreeMap<String, String>,
    policy: Arc<Policy>,
    batch_size: usize,
    /// How long the operation of an interrupted DDL waits for it to settle.
    ddl_settle: std::time::Duration,
    /// Stops the intent journal's sweep when the engine goes.
    _sweep: tokio_util::sync::DropGuard,
}

/// How a session starts: user, database and the configuration a client sent in OpenSession.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// The session's user.
    pub user: String,
    /// `use:database`.
    pub database: Option<String>,
    /// `set:hiveconf:K` entries.
    pub hiveconf: BTreeMap<String, String>,
    /// `set:hivevar:K` entries.
    pub hivevar: BTreeMap<String, String>,
}

/// How an engine runs: the server's configuration, where its data lives, and the memory and
/// disk its queries may use.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// The server's Hive configuration, which every session starts from.
    pub defaults: BTreeMap<String, String>,
    /// Where managed tables live.
    pub warehouse: PathBuf,
    /// This server's name in the intent journal and in its staging and spill folders, so
    /// that start-up recovery touches only its own work. Stable across restarts, distinct
    /// between servers sharing a metastore or a warehouse.
    pub server_id: String,
    /// Memory all running queries may hold together (sorts, joins, aggregations); a query
    /// that needs more spills to disk or fails with "Resources exhausted". `None`: no limit.
    pub memory_pool_bytes: Option<usize>,
    /// Folder for spill files; `None`: spilling is off (a query over the pool fails).
    pub spill_dir: Option<PathBuf>,
    /// Most bytes of spill files at once.
    pub spill_max_bytes: u64,
    /// What sessions may change, see, call and reach.
    pub policy: Arc<Policy>,
    /// How long the operation of a cancelled or timed-out DDL waits for it to settle before it
    /// stops waiting (`apiary.ddl.settle.timeout`); the DDL goes on to its end either way.
    pub ddl_settle: std::time::Duration,
    /// How often the server settles its own DDL left unfinished in the intent journal
    /// (`apiary.ddl.recovery.interval`).
    pub ddl_sweep: std::time::Duration,
}

impl EngineOptions {
    /// Options for tests and tools: the given warehouse, no memory limit, no spilling.
    pub fn new(warehouse: &Path) -> Self {
        Self {
            defaults: BTreeMap::new(),
            warehouse: warehouse.to_path_buf(),
            server_id: warehouse.display().to_string(),
            memory_pool_bytes: None,
            spill_dir: None,
            spill_max_bytes: 0,
            policy: Arc::new(Policy::permissive()),
            ddl_settle: crate::task::TASK_SETTLE,
            ddl_sweep: std::time::Duration::from_secs(10),
        }
    }
}

/// DataFusion's runtime for the options: a memory pool (fair: the operators that can spill
/// share the pool evenly, so each spills a part of it at a time and the copy a spill makes
/// stays small; the others take what is left as they ask; and room kept for an operator's
/// next growth, see [`crate::memory`]) and a disk manager for spill files
/// in a folder of this server's own, emptied at start (what is there was left by a crash).
fn runtime(options: &EngineOptions) -> Result<Arc<RuntimeEnv>, SqlError> {
    use datafusion::execution::disk_manager::{DiskManagerBuilder, DiskManagerMode};
    use datafusion::execution::memory_pool::{FairSpillPool, TrackConsumersPool};
    let mut builder = RuntimeEnvBuilder::new();
    if let Some(bytes) = options.memory_pool_bytes {
        let top = std::num::NonZeroUsize::new(3).unwrap_or(std::num::NonZeroUsize::MIN);
        builder = builder.with_memory_pool(Arc::new(crate::memory::HeadroomPool::new(
            TrackConsumersPool::new(FairSpillPool::new(bytes), top),
            bytes,
        )));
    }
    let disk = match &options.spill_dir {
        Some(dir) => {
            let own = dir.join(format!(
                "apiary-spill-{}",
                crate::names::server_tag(&options.server_id)
            ));
            match std::fs::remove_dir_all(&own) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(SqlError::ddl_caused(
                        format!("cannot empty the spill folder {}: {e}", own.display()),
                        e,
                    ))
                }
            }
            std::fs::create_dir_all(&own).map_err(|e| {
                SqlError::ddl_caused(
                    format!("cannot create the spill folder {}: {e}", own.display()),
                    e,
                )
            })?;
            DiskManagerBuilder::default()
                .with_mode(DiskManagerMode::Directories(vec![own]))
                .with_max_temp_directory_size(options.spill_max_bytes)
        }
        None => DiskManagerBuilder::default().with_mode(DiskManagerMode::Disabled),
    };
    builder
        .with_disk_manager_builder(disk)
        .build_arc()
        .map_err(|e| SqlError::ddl_caused(format!("cannot set up the query runtime: {e}"), e))
}

impl Engine {
    /// An engine over `metastore` with the storage handlers of `handlers`, as `options` say.
    /// Creates the `default` database if the metastore has none, and finishes or undoes what
    /// a crash of this server cut short (with those handlers).
    pub async fn open(
        options: EngineOptions,
        metastore: Arc<dyn Metastore>,
        handlers: Arc<Registry>,
    ) -> Result<Self, SqlError> {
        let runtime = runtime(&options)?;
        let EngineOptions {
            defaults,
            warehouse,
            server_id,
            policy,
            ddl_settle,
            ddl_sweep,
            ..
        } = options;
        let warehouse = warehouse.as_path();
        std::fs::create_dir_all(warehouse).map_err(|e| {
            SqlError::ddl_caused(
                format!("cannot create warehouse {}: {e}", warehouse.display()),
                e,
            )
        })?;
        let warehouse = warehouse
            .canonicalize()
            .unwrap_or_else(|_| warehouse.to_path_buf());
        if metastore.get_database(DEFAULT_DATABASE).await?.is_none() {
            let db = Database {
                name: DEFAULT_DATABASE.into(),
                comment: Some("Default Hive database".into()),
                location: warehouse.display().to_string(),
                parameters: BTreeMap::new(),
                owner: "public".into(),
                create_time: chrono::Utc::now().timestamp(),
            };
            match metastore.create_database(&db).await {
                Ok(()) | Err(apiary_metastore::MetastoreError::AlreadyExists(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let owner = server_id;
        let tag = crate::names::server_tag(&owner);
        let unavailable =
            crate::recovery::recover(metastore.as_ref(), &handlers, &owner, &tag).await?;
        let catalogs = Arc::new(MemoryCatalogProviderList::new());
        let catalog = Arc::new(HiveCatalog::new(
            metastore.clone(),
            handlers.clone(),
            unavailable.clone(),
        ));
        catalog.refresh().await?;
        catalogs.register_catalog(CATALOG.to_string(), catalog.clone());
        // DDL that could not finish or undo what it started is settled while the server runs,
        // not only at its next start.
        let sweep = tokio_util::sync::CancellationToken::new();
        crate::nonnative::sweep(
            metastore.clone(),
            handlers.clone(),
            owner.clone(),
            ddl_sweep,
            sweep.clone(),
        );
        Ok(Self {
            handlers,
            owner,
            tag,
            unavailable,
            catalogs,
            catalog,
            metastore,
            warehouse,
            runtime,
            // Sessions never see the server's values of hidden keys.
            defaults: defaults
                .into_iter()
                .filter(|(k, _)| !policy.is_hidden(k))
                .collect(),
            policy,
            batch_size: 8192,
            ddl_settle,
            _sweep: sweep.drop_guard(),
        })
    }

    /// The server-wide Hive configuration sessions start from.
    pub fn defaults(&self) -> &BTreeMap<String, String> {
        &self.defaults
    }

    /// Opens a session. Fails if `use:database` names a database that does not exist.
    pub fn open_session(&self, opts: SessionOptions) -> Result<SqlSession, SqlError> {
        let config = SessionConfig::new()
            .with_default_catalog_and_schema(CATALOG, DEFAULT_DATABASE)
            .with_create_default_catalog_and_schema(false)
            .with_information_schema(true)
            .with_batch_size(self.batch_size)
            .set_bool(
                "datafusion.execution.parquet.schema_force_view_types",
                false,
            );
        let config = hive_reading(config);
        let mut builder = SessionStateBuilder::new().with_config(config);
        for rule in self.handlers.optimizer_rules() {
            builder = builder.with_optimizer_rule(rule);
        }
        let state = hive_planning(
            builder
                .with_runtime_env(self.runtime.clone())
                .with_catalog_list(self.catalogs.clone()),
        )
        .build();
        let ctx = SessionContext::new_with_state(state);
        crate::functions::register(&ctx);
        let database = Arc::new(parking_lot::Mutex::new(DEFAULT_DATABASE.to_string()));
        crate::functions::register_session(&ctx, &opts.user, database.clone());
        let mut session = SqlSession {
            handlers: self.handlers.clone(),
            owner: self.owner.clone(),
            tag: self.tag.clone(),
            unavailable: self.unavailable.clone(),
            ctx,
            catalog: self.catalog.clone(),
            metastore: self.metastore.clone(),
            warehouse: self.warehouse.clone(),
            user: opts.user,
            database,
            hiveconf: self.defaults.clone(),
            defaults: self.defaults.clone(),
            hivevar: opts.hivevar,
            policy: self.policy.clone(),
            notes: Default::default(),
            interrupt: CancellationToken::new(),
            roles: RoleSetting::Default,
            ddl_settle: self.ddl_settle,
        };
        for (k, v) in opts.hiveconf {
            session.set_conf(&k, &v)?;
        }
        if let Some(db) = opts.database.filter(|d| !d.is_empty()) {
            session.use_database(&db)?;
        }
        Ok(session)
    }
}

/// One client's SQL session: current database, Hive configuration and variables, and the
/// DataFusion context it plans with.
pub struct SqlSession {
    handlers: Arc<Registry>,
    owner: String,
    tag: String,
    unavailable: Arc<crate::recovery::Unavailable>,
    ctx: SessionContext,
    catalog: Arc<HiveCatalog>,
    metastore: Arc<dyn Metastore>,
    warehouse: PathBuf,
    user: String,
    /// The current database, shared with the session's running tasks (DROP DATABASE of the
    /// current one moves the session to `default`).
    database: Arc<parking_lot::Mutex<String>>,
    hiveconf: BTreeMap<String, String>,
    defaults: BTreeMap<String, String>,
    hivevar: BTreeMap<String, String>,
    policy: Arc<Policy>,
    /// Things a statement did that its user should hear of (files it kept), for the
    /// operation log.
    notes: Arc<parking_lot::Mutex<Vec<String>>>,
    /// Cancelled when the operation running this (forked) session's task is cancelled or
    /// times out; never for a client's own session.
    interrupt: CancellationToken,
    /// The roles in force (SET ROLE), under SQL-standard authorization.
    roles: RoleSetting,
    /// How long the operation of an interrupted DDL waits for it to settle.
    ddl_settle: std::time::Duration,
}

impl std::fmt::Debug for SqlSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlSession")
            .field("user", &self.user)
            .field("database", &*self.database.lock())
            .finish()
    }
}

impl SqlSession {
    /// The storage handlers this server knows.
    pub fn handlers(&self) -> &Arc<Registry> {
        &self.handlers
    }

    /// This server's name in the intent journal.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The session's user.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// What the last statement noted, for its operation log (emptied by the call).
    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes.lock())
    }

    /// The current database.
    pub fn database(&self) -> String {
        self.database.lock().clone()
    }

    /// A copy of this session for a task to run in: the same context, catalog and current
    /// database; a snapshot of the configuration; notes of its own; an interrupt the task
    /// sets.
    pub(crate) fn fork(&self) -> SqlSession {
        SqlSession {
            handlers: self.handlers.clone(),
            owner: self.owner.clone(),
            tag: self.tag.clone(),
            unavailable: self.unavailable.clone(),
            // A snapshot: a USE after the statement was sent does not move where it runs.
            ctx: SessionContext::new_with_state(self.ctx.state()),
            catalog: self.catalog.clone(),
            metastore: self.metastore.clone(),
            warehouse: self.warehouse.clone(),
            user: self.user.clone(),
            database: Arc::new(parking_lot::Mutex::new(self.database().to_string())),
            hiveconf: self.hiveconf.clone(),
            defaults: self.defaults.clone(),
            hivevar: self.hivevar.clone(),
            policy: self.policy.clone(),
            notes: Default::default(),
            interrupt: CancellationToken::new(),
            roles: self.roles.clone(),
            ddl_settle: self.ddl_settle,
        }
    }

    /// A Hive configuration value of this session.
    pub fn conf(&self, key: &str) -> Option<&str> {
        self.hiveconf.get(key).map(String::as_str)
    }

    /// The metastore.
    pub fn metastore(&self) -> &Arc<dyn Metastore> {
        &self.metastore
    }

    /// The warehouse directory.
    pub fn warehouse(&self) -> &Path {
        &self.warehouse
    }

    /// Reloads the catalog names DataFusion's synchronous calls see.
    pub async fn refresh_catalog(&self) -> Result<(), SqlError> {
        Ok(self.catalog.refresh().await?)
    }

    /// Makes `db` the current database (known to exist).
    fn use_known_database(&mut self, db: &str) {
        let state = self.ctx.state_ref();
        state
            .write()
            .config_mut()
            .options_mut()
            .catalog
            .default_schema = db.to_string();
        *self.database.lock() = db.to_string();
    }

    /// The DataFusion context (shared with running operations).
    pub fn context(&self) -> &SessionContext {
        &self.ctx
    }

    /// What front ends may read of the catalog through this session.
    pub fn catalog_reader(&self) -> crate::metadata::CatalogReader {
        crate::metadata::CatalogReader::new(self.ctx.clone(), self.visibility())
    }

    /// Refuses a key this session may not change (restricted by the server).
    pub fn check_settable(&self, key: &str) -> Result<(), SqlError> {
        self.policy.check_settable(key)
    }

    /// Sets a Hive configuration key; `datafusion.*` keys go to DataFusion's own options.
    /// Keys the server restricts are refused, as Hive refuses them.
    pub fn set_conf(&mut self, key: &str, value: &str) -> Result<(), SqlError> {
        self.policy.check_settable(key)?;
        if key.starts_with("datafusion.") {
            let state = self.ctx.state_ref();
            let mut state = state.write();
            state
                .config_mut()
                .options_mut()
                .set(key, value)
                .map_err(|e| SqlError::hive(HiveError::Generic, e.to_string()))?;
        }
        self.hiveconf.insert(key.to_string(), value.to_string());
        Ok(())
    }

    /// Sets a Hive variable (`${hivevar:name}`).
    pub fn set_var(&mut self, key: &str, value: &str) {
        self.hivevar.insert(key.to_string(), value.to_string());
    }

    fn use_database(&mut self, db: &str) -> Result<(), SqlError> {
        let db = db.trim_matches('`').to_ascii_lowercase();
        if !self.database_names().contains(&db) {
            return Err(SqlError::DatabaseNotFound(db));
        }
        self.use_known_database(&db);
        Ok(())
    }

    fn database_names(&self) -> Vec<String> {
        let mut names = self
            .ctx
            .catalog(CATALOG)
            .map(|c| c.schema_names())
            .unwrap_or_default();
        names.retain(|n| n != "information_schema");
        names.sort();
        names
    }

    /// Substitutes variables, parses and plans one statement. Session statements take effect
    /// here; queries are returned as plans for the caller to run.
    pub async fn prepare(&mut self, sql: &str) -> Result<Prepared, SqlError> {
        let text = if self.conf("hive.variable.substitute") == Some("false") {
            sql.to_string()
        } else {
            let depth = self
                .conf("hive.variable.substitute.depth")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(crate::substitute::DEFAULT_DEPTH);
            // A server setting a session cannot raise (read from the server's configuration).
            let env_allowed: Vec<String> = self
                .defaults
                .get(ENV_ALLOWED_KEY)
                .map(|v| {
                    v.split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            substitute(sql, &self.hivevar, &self.hiveconf, &env_allowed, depth)
                .map_err(|e| SqlError::Substitution(e.to_string()))?
        };
        let text = strip_statement(&text);
        let text = text.as_str();
        if text.is_empty() {
            return Ok(Prepared::Done);
        }
        let words: Vec<String> = text
            .split_whitespace()
            .take(4)
            .map(|w| w.to_ascii_lowercase())
            .collect();
        let first = words.first().map(String::as_str).unwrap_or("");
        if crate::ddl::is_authz(text) {
            let stmt = crate::ddl::parse_authz(text)?;
            let Some(auth) = self.policy.authorization() else {
                return Err(SqlError::ddl(
                    "Authorization is not enabled: GRANT, REVOKE and roles need hive.security.authorization.enabled=true in the server's configuration".to_string(),
                ));
            };
            let db = self.database();
            if stmt.changes_grants() {
                // A change of roles or grants is a task, so it runs as an operation (runAsync,
                // queryTimeout and cancel apply): interrupted before its one metastore
                // transaction, it changes nothing; that transaction, once begun, runs to its end.
                let (policy, metastore) = (self.policy.clone(), self.metastore.clone());
                let (user, mut roles) = (self.user.clone(), self.roles.clone());
                let task = Task::cooperative(Default::default(), move |interrupt| {
                    Box::pin(async move {
                        crate::task::failpoint("authz.before_change").await?;
                        if interrupt.is_cancelled() {
                            return Err(SqlError::Cancelled);
                        }
                        let Some(auth) = policy.authorization() else {
                            return Err(SqlError::ddl("authorization is not enabled".to_string()));
                        };
                        crate::authz::run(auth, &metastore, &user, &db, &mut roles, stmt)
                            .await
                            .map(|_| ())
                    })
                });
                return Ok(Prepared::Task(task.with_settle(self.ddl_settle)));
            }
            return crate::authz::run(
                auth,
                &self.metastore,
                &self.user,
                &db,
                &mut self.roles,
                stmt,
            )
            .await;
        }
        match first {
            "set" => return self.set_statement(text[3..].trim()),
            "reset" => {
                let key = text[5..].trim();
                if key.is_empty() {
                    self.hiveconf = self.defaults.clone();
                } else {
                    match self.defaults.get(key) {
                        Some(v) => {
                            let v = v.clone();
                            self.hiveconf.insert(key.to_string(), v);
                        }
                        None => {
                            self.hiveconf.remove(key);
                        }
                    }
                }
                return Ok(Prepared::Done);
            }
            "use" => {
                let db = text[3..].trim().trim_matches('`').to_ascii_lowercase();
                if self.metastore.get_database(&db).await?.is_none() {
                    return Err(SqlError::DatabaseNotFound(db));
                }
                self.use_known_database(&db);
                return Ok(Prepared::Done);
            }
            "create" | "drop" | "alter" | "describe" | "desc" | "show" | "truncate" | "msck"
            | "load" | "insert" => {
                if let Some(stmt) = crate::ddl::parse(text)? {
                    return self.compile_hive(stmt).await;
                }
            }
            _ => {}
        }
        if first == "show"
            && matches!(
                words.get(1).map(String::as_str),
                Some("databases" | "schemas")
            )
        {
            let like = like_pattern(text);
            let names = self
                .metastore
                .list_databases()
                .await?
                .into_iter()
                .filter(|n| like.as_ref().is_none_or(|p| hive_like(p, n)))
                .collect();
            return Ok(string_rows("database_name", names));
        }
        self.plan_sql(text).await
    }

    /// A parsed Hive statement: what only reads (DESCRIBE, SHOW) runs now; INSERT is planned
    /// now and written by its task; every other statement with a side effect becomes a task
    /// that runs it in a fork of this session when its operation starts.
    async fn compile_hive(
        &mut self,
        stmt: crate::ddl::HiveStatement,
    ) -> Result<Prepared, SqlError> {
        for (clause, path) in stmt.named_paths() {
            self.policy.check_path(clause, path)?;
        }
        if let Some(auth) = self.policy.authorization() {
            let (operation, needs) = crate::authz::needs(
                self.metastore.as_ref(),
                &self.handlers,
                &self.database(),
                &stmt,
            )
            .await?;
            let subject = self.subject().await?;
            auth.check(self.metastore.as_ref(), &subject, operation, &needs)
                .await?;
        }
        // (INSERT OVERWRITE DIRECTORY is refused here, once its path has been checked.)
        if stmt.is_read_only()
            || matches!(
                stmt,
                crate::ddl::HiveStatement::Insert { .. }
                    | crate::ddl::HiveStatement::InsertDirectory { .. }
            )
        {
            let scope: &mut dyn Scope = self;
            return scope.run_hive(stmt).await;
        }
        let mut fork = self.fork();
        let notes = fork.notes.clone();
        // MSCK's result set is the lines naming what it added.
        let output = matches!(stmt, crate::ddl::HiveStatement::MsckRepair(_)).then(|| {
            TaskOutput::new(Arc::new(Schema::new(vec![Field::new(
                "result",
                DataType::Utf8,
                true,
            )])))
        });
        let sink = output.clone();
        let task = Task::cooperative(notes, move |interrupt| {
            Box::pin(async move {
                fork.interrupt = interrupt;
                if fork.interrupt.is_cancelled() {
                    return Err(SqlError::Cancelled);
                }
                let scope: &mut dyn Scope = &mut fork;
                match scope.run_hive(stmt).await? {
                    Prepared::Task(inner) => inner.run(fork.interrupt.clone()).await,
                    Prepared::Rows { batches, .. } => {
                        if let Some(sink) = &sink {
                            sink.set(batches);
                        }
                        Ok(())
                    }
                    Prepared::Query { .. } | Prepared::Done => Ok(()),
                }
            })
        });
        Ok(Prepared::Task(
            task.with_output(output).with_settle(self.ddl_settle),
        ))
    }

    /// Who this session's statements run as, under SQL-standard authorization.
    async fn subject(&self) -> Result<crate::authz::Subject, SqlError> {
        match self.policy.authorization() {
            Some(auth) => {
                auth.subject(self.metastore.as_ref(), &self.user, &self.roles)
                    .await
            }
            None => Err(SqlError::ddl("authorization is not enabled".to_string())),
        }
    }

    /// Under SQL-standard authorization, what this session may see of the catalog.
    fn visibility(&self) -> Option<crate::authz::Visibility> {
        self.policy
            .authorization()
            .map(|auth| crate::authz::Visibility {
                auth: auth.clone(),
                metastore: self.metastore.clone(),
                user: self.user.clone(),
                roles: self.roles.clone(),
            })
    }

    /// Under SQL-standard authorization, the tables of `tables` this session may see (any
    /// privilege); all of them otherwise.
    pub async fn visible(&self, tables: Vec<Table>) -> Result<Vec<Table>, SqlError> {
        match self.visibility() {
            Some(v) => v.filter(tables).await,
            None => Ok(tables),
        }
    }

    /// The deepest nesting of expressions and queries a statement may have: a server
    /// setting, which a session cannot raise.
    fn max_nesting(&self) -> usize {
        self.defaults
            .get(MAX_NESTING_KEY)
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_MAX_NESTING)
    }

    /// Plans a query (SELECT, VALUES, WITH ...) and returns its logical plan.
    pub(crate) async fn plan_query(&mut self, text: &str) -> Result<LogicalPlan, SqlError> {
        match self.plan_sql(text).await? {
            // Analyzed, so column types are those of the rows (CTAS, views, INSERT's checks).
            Prepared::Query { plan, .. } => analyze(&self.ctx.state(), plan.plan),
            _ => Err(SqlError::hive(
                HiveError::Generic,
                "expected a query (SELECT or VALUES)",
            )),
        }
    }

    async fn plan_sql(&mut self, text: &str) -> Result<Prepared, SqlError> {
        let dialect = HiveQl::default();
        let tokens = crate::dialect::tokenize(text).map_err(parse_error)?;
        let limit = self.max_nesting();
        let operators = rewrite::operator_count(&tokens);
        if operators > limit.saturating_mul(OPERATORS_PER_LEVEL) {
            return Err(SqlError::hive(HiveError::Generic, format!("the statement has {operators} operators; at most {} are allowed ({OPERATORS_PER_LEVEL} per level of apiary.sql.max.nesting.depth)",
                limit.saturating_mul(OPERATORS_PER_LEVEL)
            )));
        }
        let mut statements = Parser::new(&dialect)
            .with_tokens_with_locations(tokens)
            .parse_statements()
            .map_err(parse_error)?;
        if statements.len() != 1 {
            return Err(SqlError::Parse {
                line: 1,
                column: 0,
                detail: "only one statement may be executed at a time".into(),
            });
        }
        let mut statement = statements.remove(0);
        if rewrite::nesting_depth(&statement, limit) > limit {
            return Err(SqlError::hive(HiveError::Generic, format!("the statement nests expressions or queries more than {limit} levels deep (apiary.sql.max.nesting.depth)"
            )));
        }
        self.policy.check_called(&statement)?;
        if let datafusion::sql::sqlparser::ast::Statement::ShowFunctions { filter } = &statement {
            return Ok(self.show_functions(filter.as_ref()));
        }
        if let Some(auth) = self.policy.authorization() {
            let subject = self.subject().await?;
            let relations = crate::authz::relations(&statement);
            let mut needs: Vec<Need> =
                crate::authz::tables_read(self.metastore.as_ref(), &self.database(), &relations)
                    .await?
                    .into_iter()
                    .map(|table| Need::Privileges {
                        table,
                        privileges: vec!["SELECT"],
                        grant: false,
                    })
                    .collect();
            if relations
                .iter()
                .any(|r| r.len() > 1 && r[r.len() - 2].eq_ignore_ascii_case("information_schema"))
            {
                // DataFusion's catalog views list every table, whatever the grants.
                needs.push(Need::Admin {
                    object_type: "DATABASE",
                    name: "information_schema".into(),
                });
            }
            if !matches!(
                statement,
                datafusion::sql::sqlparser::ast::Statement::Query(_)
                    | datafusion::sql::sqlparser::ast::Statement::Explain { .. }
                    | datafusion::sql::sqlparser::ast::Statement::ShowFunctions { .. }
                    | datafusion::sql::sqlparser::ast::Statement::ShowVariable { .. }
            ) {
                // DataFusion's own DDL and DML (CREATE EXTERNAL TABLE, COPY, its SHOW and
                // DROP forms) bypass Hive's statements: admins only.
                needs.push(Need::Admin {
                    object_type: "COMMAND_PARAMS",
                    name: format!(
                        "[{}]",
                        statement
                            .to_string()
                            .split_whitespace()
                            .take(2)
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                });
            }
            auth.check(self.metastore.as_ref(), &subject, "QUERY", &needs)
                .await?;
        }
        rewrite::to_datafusion(
            &mut statement,
            self.conf(crate::time_travel::LOCAL_TIME_ZONE),
        )?;
        let explain = matches!(
            statement,
            datafusion::sql::sqlparser::ast::Statement::Explain { .. }
        );
        let state = self.ctx.state();
        let plan = state
            .statement_to_plan(DfStatement::Statement(Box::new(statement)))
            .await
            .map_err(SqlError::from_planning)?;
        self.policy.check_plan(&plan)?;
        if let Some(auth) = self.policy.authorization() {
            // What plans into DataFusion's DDL, DML or COPY under another form (SELECT .. INTO,
            // EXPLAIN ANALYZE of a COPY) is for admins too.
            if changes_things(&plan) {
                let subject = self.subject().await?;
                let need = Need::Admin {
                    object_type: "COMMAND_PARAMS",
                    name: format!("[{}]", plan.display()),
                };
                auth.check(self.metastore.as_ref(), &subject, "QUERY", &[need])
                    .await?;
            }
        }
        match &plan {
            LogicalPlan::Ddl(_) | LogicalPlan::Dml(_) | LogicalPlan::Copy(_) => {
                let ctx = self.ctx.clone();
                Ok(Prepared::Task(Task::abortable(async move {
                    let df = ctx
                        .execute_logical_plan(plan)
                        .await
                        .map_err(SqlError::from_planning)?;
                    df.collect().await.map_err(SqlError::from_execution)?;
                    Ok(())
                })))
            }
            LogicalPlan::Statement(_) => Err(SqlError::Unsupported(
                "this statement is not supported; use SET, RESET or USE".into(),
            )),
            _ if explain => self.explain(plan).await,
            _ => {
                let schema = result_schema(&state, &plan)?;
                Ok(Prepared::Query {
                    plan: QueryPlan {
                        ctx: self.ctx.clone(),
                        plan,
                    },
                    schema,
                })
            }
        }
    }

    /// SHOW FUNCTIONS [LIKE 'pattern']: Hive's one column `tab_name`, the names callable in
    /// this session, sorted; the pattern as Hive's (`*` any text, `|` alternatives; `%` too).
    fn show_functions(
        &self,
        filter: Option<&datafusion::sql::sqlparser::ast::ShowStatementFilter>,
    ) -> Prepared {
        use datafusion::sql::sqlparser::ast::ShowStatementFilter;
        let pattern = match filter {
            Some(ShowStatementFilter::Like(p) | ShowStatementFilter::ILike(p))
            | Some(ShowStatementFilter::NoKeyword(p)) => Some(p.replace('%', "*")),
            _ => None,
        };
        let names: Vec<String> = crate::function_list::callable(&self.ctx)
            .into_iter()
            .filter(|n| {
                pattern
                    .as_deref()
                    .is_none_or(|p| crate::pattern::hive_like(p, n))
            })
            .collect();
        string_rows("tab_name", names)
    }

    /// Runs EXPLAIN and returns its text as Hive's one-column `Explain` result.
    async fn explain(&self, plan: LogicalPlan) -> Result<Prepared, SqlError> {
        let df = self
            .ctx
            .execute_logical_plan(plan)
            .await
            .map_err(SqlError::from_planning)?;
        let batches = df.collect().await.map_err(SqlError::from_execution)?;
        let mut lines = Vec::new();
        for b in &batches {
            for row in 0..b.num_rows() {
                let kind = crate::render::cell_text(b.column(0).as_ref(), row).unwrap_or_default();
                let text = crate::render::cell_text(b.column(1).as_ref(), row).unwrap_or_default();
                lines.push(format!("{kind}:"));
                lines.extend(text.lines().map(|l| format!("  {l}")));
            }
        }
        Ok(string_rows("Explain", lines))
    }

    fn set_statement(&mut self, rest: &str) -> Result<Prepared, SqlError> {
        if rest.is_empty() || rest == "-v" {
            let mut lines: Vec<String> = self
                .hiveconf
                .iter()
                .filter(|(k, _)| !self.policy.is_hidden(k))
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            lines.extend(self.hivevar.iter().map(|(k, v)| format!("hivevar:{k}={v}")));
            lines.sort();
            return Ok(string_rows("set", lines));
        }
        match rest.split_once('=') {
            None => {
                let key = rest.trim();
                let conf_key = key.strip_prefix("hiveconf:").unwrap_or(key);
                if !key.starts_with("hivevar:") && self.policy.is_hidden(conf_key) {
                    return Ok(string_rows(
                        "set",
                        vec![format!("{key} is a hidden config")],
                    ));
                }
                let line = match self.lookup(key) {
                    Some(v) => format!("{key}={v}"),
                    None => format!("{key} is undefined"),
                };
                Ok(string_rows("set", vec![line]))
            }
            Some((k, v)) => {
                let (k, v) = (k.trim(), v.trim());
                if k.is_empty() {
                    return Err(SqlError::Parse {
                        line: 1,
                        column: 4,
                        detail: "SET needs a key before '='".into(),
                    });
                }
                if let Some(name) = k.strip_prefix("hivevar:") {
                    self.set_var(name, v);
                } else {
                    let key = k.strip_prefix("hiveconf:").unwrap_or(k);
                    self.set_conf(key, v)?;
                }
                Ok(Prepared::Done)
            }
        }
    }

    fn lookup(&self, key: &str) -> Option<String> {
        if let Some(name) = key.strip_prefix("hivevar:") {
            return self.hivevar.get(name).cloned();
        }
        let key = key.strip_prefix("hiveconf:").unwrap_or(key);
        if let Some(v) = self.hiveconf.get(key) {
            return Some(v.clone());
        }
        if key.starts_with("datafusion.") {
            let state = self.ctx.state();
            return state
                .config_options()
                .entries()
                .into_iter()
                .find(|e| e.key == key)
                .map(|e| e.value.unwrap_or_default());
        }
        None
    }
}

#[async_trait::async_trait]
impl Scope for SqlSession {
    fn metastore(&self) -> &Arc<dyn Metastore> {
        &self.metastore
    }

    fn setting(&self, key: &str) -> Option<String> {
        self.conf(key).map(str::to_string)
    }

    fn handlers(&self) -> &Arc<Registry> {
        &self.handlers
    }

    fn user(&self) -> &str {
        &self.user
    }

    fn owner(&self) -> &str {
        &self.owner
    }

    fn server_tag(&self) -> &str {
        &self.tag
    }

    fn unavailable(&self) -> &crate::recovery::Unavailable {
        &self.unavailable
    }

    fn warehouse(&self) -> &Path {
        &self.warehouse
    }

    fn context(&self) -> &SessionContext {
        &self.ctx
    }

    fn database(&self) -> String {
        self.database.lock().clone()
    }

    fn set_database(&mut self, db: &str) {
        self.use_known_database(db);
    }

    fn note(&self, text: String) {
        self.notes.lock().push(text);
    }

    fn interrupt(&self) -> &CancellationToken {
        &self.interrupt
    }

    async fn refresh_catalog(&self) -> Result<(), SqlError> {
        Ok(self.catalog.refresh().await?)
    }

    async fn plan_query(&mut self, text: &str) -> Result<LogicalPlan, SqlError> {
        SqlSession::plan_query(self, text).await
    }

    async fn visible(&self, tables: Vec<Table>) -> Result<Vec<Table>, SqlError> {
        SqlSession::visible(self, tables).await
    }
}

/// The schema a query's rows will have: that of the analyzed plan, since type coercion (a
/// UNION of a BIGINT and a DOUBLE column gives DOUBLE) can change the planned one.
fn result_schema(
    state: &datafusion::execution::session_state::SessionState,
    plan: &LogicalPlan,
) -> Result<SchemaRef, SqlError> {
    let analyzed = analyze(state, plan.clone())?;
    Ok(Arc::new(analyzed.schema().as_arrow().clone()))
}

/// A plan after DataFusion's analyzer (type coercion and the like): its schema is the one its
/// rows have. Running it analyzes it again, which changes nothing.
fn analyze(
    state: &datafusion::execution::session_state::SessionState,
    plan: LogicalPlan,
) -> Result<LogicalPlan, SqlError> {
    state
        .analyzer()
        .execute_and_check(plan, state.config_options(), |_, _| {})
        .map_err(SqlError::from_planning)
}

/// The statement without its comments outside quoted text (`-- ..` to the end of a line,
/// `/* .. */` anywhere: dbt puts one before or after every statement, and optimizer hints are
/// comments too), the blanks around it and its trailing semicolons.
fn strip_statement(sql: &str) -> String {
    let stripped = without_comments(sql);
    let stripped = stripped.trim().trim_end_matches(';').trim_end();
    // A SET's value is taken as written after the key (`SET p=/a/*/b` keeps its `/*`); only
    // the comments before it go.
    if stripped
        .get(..4)
        .is_some_and(|w| w.eq_ignore_ascii_case("set "))
    {
        let start = leading_comments_end(sql);
        return sql[start..]
            .trim()
            .trim_end_matches(';')
            .trim_end()
            .to_string();
    }
    stripped.to_string()
}

/// Where the statement starts after its leading blanks and comments.
fn leading_comments_end(sql: &str) -> usize {
    let mut rest = sql;
    loop {
        let trimmed = rest.trim_start();
        if let Some(after) = trimmed.strip_prefix("--") {
            rest = after.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(after) = trimmed.strip_prefix("/*") {
            rest = after.split_once("*/").map_or("", |(_, r)| r);
        } else {
            return sql.len() - trimmed.len();
        }
    }
}

/// The text without its comments outside quoted text.
fn without_comments(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' | '`' => {
                out.push(c);
                while let Some(q) = chars.next() {
                    out.push(q);
                    if q == '\\' && c != '`' {
                        if let Some(escaped) = chars.next() {
                            out.push(escaped);
                        }
                    } else if q == c {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                for skipped in chars.by_ref() {
                    if skipped == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for skipped in chars.by_ref() {
                    if last == '*' && skipped == '/' {
                        break;
                    }
                    last = skipped;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// The quoted pattern after LIKE (or the bare quoted pattern Hive also accepts).
fn like_pattern(text: &str) -> Option<String> {
    let start = text.find(['\'', '"'])?;
    let quote = text[start..].chars().next()?;
    let rest = &text[start + 1..];
    let end = rest.find(quote)?;
    Some(rest[..end].to_string())
}

/// One statement in Hive's dialect, parsed (a view's query, to name what it reads).
pub(crate) fn parse_one(
    text: &str,
) -> Result<datafusion::sql::sqlparser::ast::Statement, SqlError> {
    let mut statements = Parser::parse_sql(&HiveQl::default(), text).map_err(parse_error)?;
    match statements.len() {
        1 => Ok(statements.remove(0)),
        _ => Err(SqlError::Parse {
            line: 1,
            column: 0,
            detail: "expected one statement".into(),
        }),
    }
}

fn parse_error(e: ParserError) -> SqlError {
    let msg = match &e {
        ParserError::ParserError(m) | ParserError::TokenizerError(m) => m.clone(),
        ParserError::RecursionLimitExceeded => "statement nested too deeply".into(),
    };
    // sqlparser ends messages with " at Line: L, Column: C".
    let (detail, line, column) = match msg.rsplit_once(" at Line: ") {
        Some((d, pos)) => {
            let mut it = pos.split(", Column: ");
            let line = it.next().and_then(|l| l.trim().parse().ok()).unwrap_or(1);
            let col: u64 = it.next().and_then(|c| c.trim().parse().ok()).unwrap_or(1);
            (d.to_string(), line, col.saturating_sub(1))
        }
        None => (msg, 1, 0),
    };
    SqlError::Parse {
        line,
        column,
        detail: format!("cannot recognize input: {detail}"),
    }
}

/// Whether a DataFusion plan creates, drops or writes something (its DDL, DML or COPY), under
/// EXPLAIN too (EXPLAIN ANALYZE runs it).
fn changes_things(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Ddl(_) | LogicalPlan::Dml(_) | LogicalPlan::Copy(_) => true,
        LogicalPlan::Explain(e) => changes_things(&e.plan),
        LogicalPlan::Analyze(a) => changes_things(&a.input),
        _ => false,
    }
}

/// How every context (a session's, a view's) reads HiveQL's text: strings as Utf8, NULL
/// ordered as the smallest value (first ascending, last descending), and a literal with a
/// decimal point a DECIMAL (`1.5` is `decimal(2,1)`, Hive 3's type for it; the rewrites keep
/// `1e3` a DOUBLE).
pub(crate) fn hive_reading(config: SessionConfig) -> SessionConfig {
    config
        .set_bool("datafusion.sql_parser.map_string_types_to_utf8view", false)
        .set_str("datafusion.sql_parser.default_null_ordering", "nulls_min")
        .set_bool("datafusion.sql_parser.parse_float_as_decimal", true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_stripped() {
        assert_eq!(strip_statement("  -- hello\nselect 1 ;; "), "select 1");
        assert_eq!(strip_statement("-- only a comment"), "");
        assert_eq!(
            strip_statement("/* {\"app\": \"dbt\"} */\n\n  show databases"),
            "show databases"
        );
        assert_eq!(strip_statement("show tables /* x */ ;"), "show tables");
        assert_eq!(
            strip_statement("select '--', \"/*\", 'it\\'s -- no' -- yes\nfrom t"),
            "select '--', \"/*\", 'it\\'s -- no' \nfrom t"
        );
        assert_eq!(strip_statement("select /*+ MAPJOIN(b) */ 1"), "select   1");
        assert_eq!(
            strip_statement("/* dbt */ -- x\n SET p=/a/*/b -- kept;"),
            "SET p=/a/*/b -- kept"
        );
    }
}
