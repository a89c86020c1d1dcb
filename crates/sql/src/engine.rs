//! The engine: what every session of a server shares (the catalog provider, the metastore,
//! the storage handlers, the execution runtime and its memory pool, the server's Hive
//! configuration) and how a session is opened on it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use apiary_metastore::{Database, Metastore};
use apiary_storage::handler::Registry;
use datafusion::catalog::{CatalogProviderList, MemoryCatalogProviderList};
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::prelude::SessionConfig;
use tokio_util::sync::CancellationToken;

use crate::access::decide::RoleSetting;
use crate::access::policy::Policy;
use crate::catalog::provider::HiveCatalog;
use crate::error::SqlError;
use crate::names::{CATALOG, DEFAULT_DATABASE};
use crate::SqlSession;

/// Shared state of the SQL layer: the catalog and the execution runtime.
#[derive(Debug)]
pub struct Engine {
    handlers: Arc<Registry>,
    owner: String,
    tag: String,
    unavailable: Arc<crate::journal::recovery::Unavailable>,
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
            crate::journal::recovery::recover(metastore.as_ref(), &handlers, &owner, &tag).await?;
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
        crate::journal::handler_ddl::sweep(
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
        let mut builder = SessionStateBuilder::new()
            .with_runtime_env(self.runtime.clone())
            .with_catalog_list(self.catalogs.clone());
        for rule in self.handlers.optimizer_rules() {
            builder = builder.with_optimizer_rule(rule);
        }
        let ctx = crate::context::hive_context(config, builder);
        let database = Arc::new(parking_lot::Mutex::new(DEFAULT_DATABASE.to_string()));
        apiary_hive_functions::register_session(&ctx, &opts.user, database.clone());
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
        // (The functions are registered in UTC; a server's zone replaces them.)
        if session
            .conf(crate::dialect::time_travel::LOCAL_TIME_ZONE)
            .is_some()
        {
            session.apply_time_zone()?;
        }
        for (k, v) in opts.hiveconf {
            session.set_conf(&k, &v)?;
        }
        if let Some(db) = opts.database.filter(|d| !d.is_empty()) {
            session.use_database(&db)?;
        }
        Ok(session)
    }
}
