//! A HiveQL session's state: its user, current database, Hive configuration and variables,
//! roles, and the DataFusion context it plans with; the accessors the statement families use
//! (through [`Scope`]). What a statement's text becomes is [`crate::compile`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use apiary_metastore::{Metastore, Table};
use apiary_storage::handler::Registry;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::SessionContext;
use tokio_util::sync::CancellationToken;

use crate::access::decide::RoleSetting;
use crate::access::policy::Policy;
use crate::catalog::provider::HiveCatalog;
use crate::error::{HiveError, SqlError};
use crate::names::CATALOG;
use crate::statement::Scope;

/// The key bounding how deeply a statement's expressions and queries nest.
pub const MAX_NESTING_KEY: &str = "apiary.sql.max.nesting.depth";
/// Its default: deep enough for generated SQL (a chain of 1,000 ORs or additions), shallow
/// enough that planning and evaluating it stays far inside a worker's 16 MiB stack.
pub const DEFAULT_MAX_NESTING: usize = 2500;

/// One client's SQL session: current database, Hive configuration and variables, and the
/// DataFusion context it plans with.
pub struct SqlSession {
    pub(crate) handlers: Arc<Registry>,
    pub(crate) owner: String,
    pub(crate) tag: String,
    pub(crate) unavailable: Arc<crate::journal::recovery::Unavailable>,
    pub(crate) ctx: SessionContext,
    pub(crate) catalog: Arc<HiveCatalog>,
    pub(crate) metastore: Arc<dyn Metastore>,
    pub(crate) warehouse: PathBuf,
    pub(crate) user: String,
    /// The current database, shared with the session's running tasks (DROP DATABASE of the
    /// current one moves the session to `default`).
    pub(crate) database: Arc<parking_lot::Mutex<String>>,
    pub(crate) hiveconf: BTreeMap<String, String>,
    pub(crate) defaults: BTreeMap<String, String>,
    pub(crate) hivevar: BTreeMap<String, String>,
    pub(crate) policy: Arc<Policy>,
    /// Things a statement did that its user should hear of (files it kept), for the
    /// operation log.
    pub(crate) notes: Arc<parking_lot::Mutex<Vec<String>>>,
    /// Cancelled when the operation running this (forked) session's task is cancelled or
    /// times out; never for a client's own session.
    pub(crate) interrupt: CancellationToken,
    /// The roles in force (SET ROLE), under SQL-standard authorization.
    pub(crate) roles: RoleSetting,
    /// How long the operation of an interrupted DDL waits for it to settle.
    pub(crate) ddl_settle: std::time::Duration,
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
    pub(crate) fn use_known_database(&mut self, db: &str) {
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
    pub fn catalog_reader(&self) -> crate::catalog::answers::CatalogReader {
        crate::catalog::answers::CatalogReader::new(self.ctx.clone(), self.visibility())
    }

    /// Refuses a key this session may not change (restricted by the server).
    pub fn check_settable(&self, key: &str) -> Result<(), SqlError> {
        self.policy.check_settable(key)
    }

    /// Sets a Hive configuration key; `datafusion.*` keys go to DataFusion's own options.
    /// Keys the server restricts are refused, as Hive refuses them.
    pub fn set_conf(&mut self, key: &str, value: &str) -> Result<(), SqlError> {
        self.check_conf(key, value)?;
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
        if key == crate::dialect::time_travel::LOCAL_TIME_ZONE {
            self.apply_time_zone()?;
        }
        Ok(())
    }

    /// Has the session's functions of local times (`from_unixtime`, `unix_timestamp`) use
    /// its `hive.local.time.zone`.
    pub(crate) fn apply_time_zone(&self) -> Result<(), SqlError> {
        let setting = self.conf(crate::dialect::time_travel::LOCAL_TIME_ZONE);
        let zone = crate::dialect::time_travel::zone_of(setting)?;
        let named = setting.map(str::trim).zip(zone);
        apiary_hive_functions::set_time_zone(&self.ctx, named);
        Ok(())
    }

    /// Refuses a setting this session may not make: a key restricted by the server, or a
    /// DataFusion option (`datafusion.*`) DataFusion does not take with this value.
    pub(crate) fn check_conf(&self, key: &str, value: &str) -> Result<(), SqlError> {
        self.policy.check_settable(key)?;
        if key.starts_with("datafusion.") {
            let mut options = self
                .ctx
                .state_ref()
                .read()
                .config_options()
                .as_ref()
                .clone();
            options
                .set(key, value)
                .map_err(|e| SqlError::hive(HiveError::Generic, e.to_string()))?;
        }
        Ok(())
    }

    /// Sets a Hive variable (`${hivevar:name}`).
    pub fn set_var(&mut self, key: &str, value: &str) {
        self.hivevar.insert(key.to_string(), value.to_string());
    }

    pub(crate) fn use_database(&mut self, db: &str) -> Result<(), SqlError> {
        let db = db.trim_matches('`').to_ascii_lowercase();
        if !self.database_names().contains(&db) {
            return Err(SqlError::DatabaseNotFound(db));
        }
        self.use_known_database(&db);
        Ok(())
    }

    pub(crate) fn database_names(&self) -> Vec<String> {
        let mut names = self
            .ctx
            .catalog(CATALOG)
            .map(|c| c.schema_names())
            .unwrap_or_default();
        names.retain(|n| n != "information_schema");
        names.sort();
        names
    }

    /// Who this session's statements run as, under SQL-standard authorization.
    pub(crate) async fn subject(&self) -> Result<crate::access::decide::Subject, SqlError> {
        match self.policy.authorization() {
            Some(auth) => {
                auth.subject(self.metastore.as_ref(), &self.user, &self.roles)
                    .await
            }
            None => Err(SqlError::ddl("authorization is not enabled".to_string())),
        }
    }

    /// Under SQL-standard authorization, what this session may see of the catalog.
    pub(crate) fn visibility(&self) -> Option<crate::access::decide::Visibility> {
        self.policy
            .authorization()
            .map(|auth| crate::access::decide::Visibility {
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
    pub(crate) fn max_nesting(&self) -> usize {
        self.defaults
            .get(MAX_NESTING_KEY)
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_MAX_NESTING)
    }

    pub(crate) fn lookup(&self, key: &str) -> Option<String> {
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

    fn unavailable(&self) -> &crate::journal::recovery::Unavailable {
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
