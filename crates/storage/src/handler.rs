//! The storage-handler contract: tables whose data another system owns (`STORED BY`).
//!
//! A [`StorageHandler`] gives a table its reader and writer (a DataFusion `TableProvider`
//! with pushdown, and an insert with append or overwrite), an optional [`MetaHook`] that keeps
//! the other system in step with the catalog, the job properties its reader and writer see,
//! which properties are secrets, and what it supports. Every method has a default meaning
//! "not supported". A [`Registry`] finds handlers by Hive class name or short name. Each
//! handler is its own crate (`crates/handler-*`); the `apiary` binary builds the registry and
//! hands it to the engine, so a test can register a handler of its own.
//!
//! Consistency with the catalog: DDL calls the hook inside an intent-journal protocol (see
//! docs/storage-handlers.md). A hook creates objects tagged with the operation id
//! ([`OpTag`]), so recovery can tell an object this operation made from one that was there
//! before, and never deletes the latter.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use apiary_metastore::Table;
use async_trait::async_trait;
use datafusion::catalog::TableProvider;
use datafusion::physical_plan::SendableRecordBatchStream;

/// Table parameter naming the operation that created a managed non-native table's object.
/// The DDL layer sets it; a handler deletes an object at DROP only if the object's tag names
/// that operation, so DROP never removes an object the table did not create.
pub const CREATED_BY: &str = "apiary.handler.op";

/// Table parameter listing, comma-separated, the columns a managed table named in PARTITIONED
/// BY, for a handler whose objects keep their own partitioning
/// ([`Capabilities::partition_columns`]). Those columns are the last of the table's columns
/// (the catalog has no partitions of its own for the table).
pub const PARTITION_COLUMNS: &str = "apiary.partition.columns";

/// Error of a handler or its hook.
#[derive(Debug, thiserror::Error)]
pub enum HandlerError {
    /// The table definition is wrong for this handler (missing or bad property, columns
    /// that do not match the remote object): the DDL is refused, nothing changed.
    #[error("{0}")]
    Definition(String),
    /// The other system failed or could not be reached.
    #[error("{0}")]
    Remote(String),
    /// The handler does not do this.
    #[error("{0}")]
    Unsupported(String),
}

/// Result of a handler call.
pub type HandlerResult<T> = Result<T, HandlerError>;

/// The operation a hook call belongs to: objects created are tagged with `id`.
#[derive(Debug, Clone)]
pub struct OpTag {
    /// The intent id.
    pub id: String,
}

/// What the handler's system holds for a table, as recovery asks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectState {
    /// No object.
    Absent,
    /// An object created by the operation asked about.
    CreatedBy,
    /// An object not created by that operation (it was there before, or another made it).
    Other,
}

/// ALTER TABLE operations, in Hive's names, that a handler may allow on its tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlterOp {
    /// SET TBLPROPERTIES.
    AddProps,
    /// UNSET TBLPROPERTIES.
    DropProps,
    /// ADD COLUMNS.
    AddCols,
}

impl fmt::Display for AlterOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AlterOp::AddProps => "ADDPROPS",
            AlterOp::DropProps => "DROPPROPS",
            AlterOp::AddCols => "ADDCOLS",
        })
    }
}

/// An earlier state of a table to read: Hive's `FOR SYSTEM_VERSION AS OF n` and
/// `FOR SYSTEM_TIME AS OF '<timestamp>'`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AsOf {
    /// The table as its version `n` left it.
    Version(i64),
    /// The table as its last change at or before this time left it (milliseconds since
    /// 1970-01-01 UTC).
    Time(i64),
}

impl AsOf {
    /// The name a table read as of `self` is planned under (`t@v3`, `t@t1764583200000`): the
    /// catalog finds the table and the state in it. No Hive name holds `@`.
    pub fn table_name(&self, table: &str) -> String {
        match self {
            AsOf::Version(v) => format!("{table}@v{v}"),
            AsOf::Time(ms) => format!("{table}@t{ms}"),
        }
    }

    /// The table and the state a name made by [`AsOf::table_name`] stands for.
    pub fn of_table_name(name: &str) -> Option<(&str, AsOf)> {
        let (table, state) = name.rsplit_once('@')?;
        let as_of = match state.split_at_checked(1)? {
            ("v", n) => AsOf::Version(n.parse().ok()?),
            ("t", n) => AsOf::Time(n.parse().ok()?),
            _ => return None,
        };
        Some((table, as_of))
    }
}

/// How an INSERT's rows go into a handler's object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteMode {
    /// INSERT INTO: added to what is there.
    Append,
    /// INSERT OVERWRITE of the whole object: they replace every row.
    Overwrite,
    /// INSERT OVERWRITE .. PARTITION of a table whose object keeps its own partitioning
    /// ([`Capabilities::partition_columns`]): they replace the rows of these partitions, each
    /// the values of the partition columns (`None`: NULL), and no others.
    OverwritePartitions(Vec<Vec<(String, Option<String>)>>),
}

impl WriteMode {
    /// Whether rows already there are replaced (Hive's `overwrite` flag of its insert hooks).
    pub fn overwrites(&self) -> bool {
        !matches!(self, WriteMode::Append)
    }
}

/// What a handler supports, for planning and DDL checks.
#[derive(Debug, Clone)]
pub struct Capabilities {
    /// Managed tables (the handler creates and drops the object).
    pub managed: bool,
    /// External tables (the object exists; the handler checks it).
    pub external: bool,
    /// INSERT INTO.
    pub insert: bool,
    /// INSERT OVERWRITE.
    pub overwrite: bool,
    /// ALTER TABLE operations allowed.
    pub alter: Vec<AlterOp>,
    /// Whether LOCATION is meaningful for its tables (a managed table without one gets the
    /// warehouse's folder for it, as a native table does).
    pub location: bool,
    /// Whether PARTITIONED BY is passed to the hook (as [`PARTITION_COLUMNS`]) rather than
    /// refused: the handler's objects keep their own partitioning.
    pub partition_columns: bool,
}

impl Default for Capabilities {
    fn default() -> Self {
        Self {
            managed: false,
            external: false,
            insert: false,
            overwrite: false,
            alter: vec![AlterOp::AddProps, AlterOp::DropProps],
            location: false,
            partition_columns: false,
        }
    }
}

/// Properties handed to a table's reader and writer (Hive's
/// `configureTableJobProperties`): only what the handler picks, secrets included.
#[derive(Debug, Clone, Default)]
pub struct JobProperties(pub BTreeMap<String, String>);

impl JobProperties {
    /// A property's value.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }
}

/// Hooks that keep the handler's system in step with the catalog (Hive's `HiveMetaHook`).
/// Each must be idempotent: recovery may repeat a call that was cut short.
#[async_trait]
pub trait MetaHook: Send + Sync {
    /// Before the table enters the catalog. Managed: create the object, tagged with `op`.
    /// External: check that the object exists and matches the declared columns.
    async fn pre_create_table(&self, table: &Table, op: &OpTag) -> HandlerResult<()>;

    /// The create failed after `pre_create_table`: undo it, deleting only an object that
    /// `op` created.
    async fn rollback_create_table(&self, table: &Table, op: &OpTag) -> HandlerResult<()>;

    /// The table is in the catalog.
    async fn commit_create_table(&self, _table: &Table, _op: &OpTag) -> HandlerResult<()> {
        Ok(())
    }

    /// Before the table leaves the catalog; may refuse the drop.
    async fn pre_drop_table(&self, _table: &Table) -> HandlerResult<()> {
        Ok(())
    }

    /// The drop failed after `pre_drop_table`.
    async fn rollback_drop_table(&self, _table: &Table) -> HandlerResult<()> {
        Ok(())
    }

    /// The table left the catalog: with `delete_data` (managed), delete the object; an
    /// object already gone counts as deleted.
    async fn commit_drop_table(&self, table: &Table, delete_data: bool) -> HandlerResult<()>;

    /// Whether the object exists and who made it, for recovery.
    async fn object_state(&self, table: &Table, op: &OpTag) -> HandlerResult<ObjectState>;

    /// Before an INSERT writes through the handler (Hive's `preInsertTable`).
    async fn pre_insert_table(&self, _table: &Table, _overwrite: bool) -> HandlerResult<()> {
        Ok(())
    }

    /// The handler's write succeeded (Hive's `commitInsertTable`).
    async fn commit_insert_table(&self, _table: &Table, _overwrite: bool) -> HandlerResult<()> {
        Ok(())
    }

    /// The handler's write failed (Hive's `rollbackInsertTable`).
    async fn rollback_insert_table(&self, _table: &Table, _overwrite: bool) -> HandlerResult<()> {
        Ok(())
    }

    /// Before ALTER TABLE `op` changes the catalog entry from `old` to `new`.
    async fn pre_alter_table(&self, _old: &Table, _new: &Table, _op: AlterOp) -> HandlerResult<()> {
        Ok(())
    }
}

/// A storage handler.
#[async_trait]
pub trait StorageHandler: Send + Sync {
    /// Hive's class name, as written in `STORED BY '...'`.
    fn class_name(&self) -> &'static str;

    /// Short name (`STORED BY JDBC`).
    fn short_name(&self) -> &'static str;

    /// The other system's name as Hive's messages write it (`LOCATION may not be specified
    /// for HBase.`); by default the short name.
    fn system_name(&self) -> &'static str {
        self.short_name()
    }

    /// The SerDe class Hive shows for its tables.
    fn serde_class(&self) -> &'static str {
        "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
    }

    /// What it supports.
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    /// Table properties that are secrets: kept out of the visible parameters.
    fn secret_keys(&self) -> &'static [&'static str] {
        &[]
    }

    /// Files of this machine that a table with these properties (TBLPROPERTIES and
    /// SERDEPROPERTIES together) would make the handler open, as Hive 4's handlers name their
    /// object for authorization (`getURIForAuth`): every user is the same user to the file
    /// system, so with authorization on, naming one is for admins, as a LOCATION is.
    fn local_paths(&self, _properties: &std::collections::BTreeMap<String, String>) -> Vec<String> {
        Vec::new()
    }

    /// Session settings (`SET key=value`) its writer reads: an INSERT copies those set into
    /// the job properties it hands to [`StorageHandler::insert`] (the Delta handler's
    /// application transaction id). Default: none.
    fn session_keys(&self) -> &'static [&'static str] {
        &[]
    }

    /// Checks a definition before anything happens (required properties, their values).
    fn validate(&self, _table: &Table) -> HandlerResult<()> {
        Ok(())
    }

    /// The meta hook, if the handler keeps an object in step with the catalog.
    fn meta_hook(&self) -> Option<&dyn MetaHook> {
        None
    }

    /// The properties its reader and writer see for `table`: by default the table's
    /// `hive.*`-free parameters are not passed; handlers pick what they need.
    fn job_properties(&self, _table: &Table) -> JobProperties {
        JobProperties::default()
    }

    /// Logical optimizer rules that push work into its system (aggregates, joins), added to
    /// every session.
    fn optimizer_rules(&self) -> Vec<Arc<dyn datafusion::optimizer::OptimizerRule + Send + Sync>> {
        Vec::new()
    }

    /// The table's reader.
    async fn table_provider(
        &self,
        table: &Table,
        _job: JobProperties,
    ) -> HandlerResult<Arc<dyn TableProvider>> {
        Err(HandlerError::Unsupported(format!(
            "{} cannot read table {}",
            self.class_name(),
            table.qualified_name()
        )))
    }

    /// What DESCRIBE FORMATTED shows of the handler's object under Table Parameters (the Delta
    /// handler: its version and partition columns). By default nothing.
    async fn describe_object(&self, _table: &Table) -> HandlerResult<Vec<(String, String)>> {
        Ok(Vec::new())
    }

    /// The table's reader as of an earlier state (time travel). By default there is none.
    async fn table_provider_as_of(
        &self,
        table: &Table,
        _job: JobProperties,
        _as_of: AsOf,
    ) -> HandlerResult<Arc<dyn TableProvider>> {
        Err(HandlerError::Unsupported(format!(
            "table {} ({}) keeps no earlier versions to read",
            table.qualified_name(),
            self.class_name()
        )))
    }

    /// Writes `rows` (the table's columns, in order) in one transaction of its system, as
    /// `mode` says. Returns the rows written.
    async fn insert(
        &self,
        table: &Table,
        _job: JobProperties,
        _rows: SendableRecordBatchStream,
        _mode: WriteMode,
    ) -> HandlerResult<u64> {
        Err(HandlerError::Unsupported(format!(
            "{} cannot write table {}",
            self.class_name(),
            table.qualified_name()
        )))
    }
}

/// The handlers a server knows, by class name and short name.
#[derive(Clone, Default)]
pub struct Registry {
    handlers: Vec<Arc<dyn StorageHandler>>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Registry {
    /// Adds a handler.
    pub fn register(&mut self, handler: Arc<dyn StorageHandler>) {
        self.handlers.push(handler);
    }

    /// The handler named `name`: a class name (exact) or a short name (any case).
    pub fn resolve(&self, name: &str) -> Option<Arc<dyn StorageHandler>> {
        self.handlers
            .iter()
            .find(|h| h.class_name() == name || h.short_name().eq_ignore_ascii_case(name))
            .cloned()
    }

    /// Every handler's optimizer rules.
    pub fn optimizer_rules(
        &self,
    ) -> Vec<Arc<dyn datafusion::optimizer::OptimizerRule + Send + Sync>> {
        self.handlers
            .iter()
            .flat_map(|h| h.optimizer_rules())
            .collect()
    }

    /// `class (SHORT)` for each handler, for error messages.
    pub fn names(&self) -> Vec<String> {
        self.handlers
            .iter()
            .map(|h| format!("{} ({})", h.class_name(), h.short_name()))
            .collect()
    }
}
