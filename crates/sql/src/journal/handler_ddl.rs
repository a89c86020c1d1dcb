//! DDL on non-native tables (`STORED BY`), kept consistent with the handler's system across
//! crashes by the metastore's intent journal.
//!
//! CREATE: record the intent (Pending) → the hook creates (managed) or checks (external) the
//! object, tagged with the intent id → one metastore transaction adds the table and marks the
//! intent Committed → the commit hook → the intent is removed.
//! DROP: record the intent → the pre-drop hook → one transaction removes the table and marks
//! the intent Committed → the hook deletes the object (managed; already gone counts as done)
//! → the intent is removed.
//! At start-up [`recover`], and while the server runs its sweep ([`sweep`], for intents no DDL
//! of this process is running), finish Committed intents and undo Pending ones; undoing deletes
//! an object only when its tag names the intent. Fail points sit between the steps.
//!
//! Cancel and query timeout: the operation's interrupt is watched up to the catalog commit. A
//! hook call in progress is abandoned (the JDBC handler's remote transaction is rolled back
//! as its connection closes) and the DDL is undone as a failed one would be, so it ends
//! undone; once the catalog has committed, the DDL runs to its end and ends finished. Either
//! way the work is never dropped half way: its operation stops waiting for it after its settle
//! time, and it goes on to its end in the background.

use std::sync::Arc;

use apiary_metastore::{Intent, IntentKind, IntentState, Metastore, Table};
use apiary_storage::handler::{
    AlterOp, HandlerError, MetaHook, ObjectState, OpTag, Registry, StorageHandler, CREATED_BY,
};
use tokio_util::sync::CancellationToken;

use crate::error::{HiveError, SqlError};
use crate::task::failpoint;

/// Runs a hook call unless the interrupt comes first; `Err(Cancelled)` when it does (the
/// call is dropped where it was).
async fn unless_interrupted<T>(
    interrupt: &CancellationToken,
    call: impl std::future::Future<Output = Result<T, HandlerError>>,
) -> Result<T, SqlError> {
    tokio::select! {
        biased;
        _ = interrupt.cancelled() => Err(SqlError::Cancelled),
        r = call => r.map_err(ddl_error),
    }
}

/// `Err(Cancelled)` once the interrupt is set.
fn check_interrupt(interrupt: &CancellationToken) -> Result<(), SqlError> {
    if interrupt.is_cancelled() {
        return Err(SqlError::Cancelled);
    }
    Ok(())
}

/// A handler error as the DDL task reports it.
pub(crate) fn ddl_error(e: HandlerError) -> SqlError {
    SqlError::ddl_caused(format!("MetaException(message:{e})"), e)
}

/// The handler named in `STORED BY`, or Hive's error listing the registered ones.
pub(crate) fn resolve(
    handlers: &Registry,
    name: &str,
) -> Result<Arc<dyn StorageHandler>, SqlError> {
    handlers.resolve(name).ok_or_else(|| {
        SqlError::semantic(format!(
            "The storage handler specified in the STORED BY clause is not recognized: '{name}'. Registered storage handlers: {}",
            handlers.names().join(", ")
        ))
    })
}

/// The handler of a non-native table.
pub(crate) fn handler_of(
    handlers: &Registry,
    table: &Table,
) -> Result<Option<Arc<dyn StorageHandler>>, SqlError> {
    match table.storage_handler() {
        None => Ok(None),
        Some(class) => handlers.resolve(class).map(Some).ok_or_else(|| {
            SqlError::ddl(format!(
                "Error in loading storage handler.{class} (table {})",
                table.qualified_name()
            ))
        }),
    }
}

/// Moves the handler's secret properties out of the visible parameters.
pub(crate) fn separate_secrets(handler: &dyn StorageHandler, table: &mut Table) {
    for key in handler.secret_keys() {
        if let Some(v) = table.parameters.remove(*key) {
            table.secrets.insert((*key).to_string(), v);
        }
    }
}

fn new_intent(owner: &str, kind: IntentKind, table: &Table, delete_data: bool) -> Intent {
    Intent {
        id: uuid::Uuid::new_v4().to_string(),
        owner: owner.to_string(),
        kind,
        state: IntentState::Pending,
        table: table.clone(),
        delete_data,
        created: chrono::Utc::now().timestamp(),
    }
}

/// Creates a non-native table: the handler's object and the catalog entry, or neither.
pub(crate) async fn create(
    metastore: &dyn Metastore,
    handler: &dyn StorageHandler,
    owner: &str,
    table: &Table,
    interrupt: &CancellationToken,
) -> Result<(), SqlError> {
    check_interrupt(interrupt)?;
    handler.validate(table).map_err(ddl_error)?;
    let mut intent = new_intent(owner, IntentKind::CreateTable, table, false);
    if table.table_type == apiary_metastore::TableType::Managed {
        intent
            .table
            .parameters
            .insert(CREATED_BY.into(), intent.id.clone());
    }
    let table = &intent.table.clone();
    let op = OpTag {
        id: intent.id.clone(),
    };
    // Until this DDL ends, the journal's sweep leaves its intent to it.
    let _running = Running::start(&intent.id);
    metastore.record_intent(&intent).await?;
    failpoint("create.after_intent").await?;
    let hook = handler.meta_hook();
    if let Some(h) = hook {
        if let Err(e) = unless_interrupted(interrupt, h.pre_create_table(table, &op)).await {
            return Err(undo_create(metastore, hook, table, &op, e).await);
        }
    }
    if let Err(e) = failpoint("create.after_object").await {
        return Err(undo_create(metastore, hook, table, &op, e).await);
    }
    if let Err(e) = check_interrupt(interrupt) {
        return Err(undo_create(metastore, hook, table, &op, e).await);
    }
    if let Err(e) = metastore.commit_create_intent(&intent.id).await {
        // The outcome may be unknown (the connection broke during COMMIT): undo only if the
        // journal can still be turned to Aborting, that is, the commit did not happen.
        match metastore.abort_intent(&intent.id).await {
            Ok(true) => return Err(undo_create(metastore, hook, table, &op, e.into()).await),
            Ok(false) => tracing::info!(intent = %intent.id, "the catalog commit had gone through"),
            Err(_) => return Err(e.into()),
        }
    }
    crate::task::set_committed(true);
    failpoint("create.after_catalog").await?;
    if let Some(h) = hook {
        if let Err(e) = h.commit_create_table(table, &op).await {
            // The table exists on both sides; the intent stays so the sweep repeats the hook.
            tracing::warn!(error = %e, "commit hook of CREATE failed; recovery will retry");
            return Ok(());
        }
    }
    failpoint("create.after_commit_hook").await?;
    metastore.finish_intent(&intent.id).await?;
    Ok(())
}

/// Undoes what a failed CREATE did: the journal first says Aborting (so the create can no
/// longer commit), then the handler removes what this operation made. If that fails, the
/// intent stays and the journal's sweep tries again. Returns `cause`.
async fn undo_create(
    metastore: &dyn Metastore,
    hook: Option<&dyn MetaHook>,
    table: &Table,
    op: &OpTag,
    cause: SqlError,
) -> SqlError {
    match metastore.abort_intent(&op.id).await {
        Ok(true) => {}
        Ok(false) => return cause,
        Err(e) => {
            tracing::warn!(error = %e, intent = %op.id, "cannot mark the CREATE aborted; recovery will settle it");
            return cause;
        }
    }
    let undone = match hook {
        Some(h) => h.rollback_create_table(table, op).await,
        None => Ok(()),
    };
    match undone {
        Ok(()) => {
            if let Err(e) = metastore.finish_intent(&op.id).await {
                tracing::warn!(error = %e, "cannot remove a finished intent");
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, intent = %op.id, "rollback of CREATE failed; recovery will retry")
        }
    }
    cause
}

/// Drops a non-native table: the catalog entry, and for a managed table the handler's
/// object.
pub(crate) async fn drop(
    metastore: &dyn Metastore,
    handler: &dyn StorageHandler,
    owner: &str,
    table: &Table,
    interrupt: &CancellationToken,
) -> Result<(), SqlError> {
    check_interrupt(interrupt)?;
    let delete_data = table.table_type == apiary_metastore::TableType::Managed;
    let intent = new_intent(owner, IntentKind::DropTable, table, delete_data);
    let _running = Running::start(&intent.id);
    metastore.record_intent(&intent).await?;
    failpoint("drop.after_intent").await?;
    let hook = handler.meta_hook();
    let id = intent.id.as_str();
    let abandon = |cause: SqlError| async move {
        // Nothing changed yet: the drop is called off.
        if let Ok(true) = metastore.abort_intent(id).await {
            if let Some(h) = hook {
                let _ = h.rollback_drop_table(table).await;
            }
            let _ = metastore.finish_intent(id).await;
        }
        cause
    };
    if let Some(h) = hook {
        if let Err(e) = unless_interrupted(interrupt, h.pre_drop_table(table)).await {
            return Err(abandon(e).await);
        }
    }
    if let Err(e) = check_interrupt(interrupt) {
        return Err(abandon(e).await);
    }
    if let Err(e) = metastore.commit_drop_intent(&intent.id).await {
        match metastore.abort_intent(&intent.id).await {
            Ok(true) => return Err(abandon(e.into()).await),
            Ok(false) => tracing::info!(intent = %intent.id, "the catalog commit had gone through"),
            Err(_) => return Err(e.into()),
        }
    }
    crate::task::set_committed(true);
    failpoint("drop.after_catalog").await?;
    if let Some(h) = hook {
        if let Err(e) = h.commit_drop_table(table, delete_data).await {
            return Err(SqlError::ddl_caused(
                format!(
                    "MetaException(message:table {} was dropped, but removing its object failed and will be retried: {e})",
                    table.qualified_name()
                ),
                e,
            ));
        }
    }
    failpoint("drop.after_object").await?;
    metastore.finish_intent(&intent.id).await?;
    Ok(())
}

/// ALTER TABLE on a non-native table: only what its handler allows (Hive's rule), and the
/// handler's alter hook runs before the catalog changes.
pub(crate) async fn check_alter(
    handler: &dyn StorageHandler,
    old: &Table,
    new: Option<&Table>,
    op: Option<AlterOp>,
) -> Result<(), SqlError> {
    let allowed = handler.capabilities().alter;
    let Some(op) = op.filter(|o| allowed.contains(o)) else {
        let list: Vec<String> = allowed.iter().map(ToString::to_string).collect();
        return Err(SqlError::hive(
            HiveError::DropViewOnTableOrAlterNonNative,
            format!(
                "ALTER TABLE can only be used for [{}] to a non-native table  {}",
                list.join(", "),
                old.name
            ),
        ));
    };
    if let (Some(h), Some(new)) = (handler.meta_hook(), new) {
        h.pre_alter_table(old, new, op).await.map_err(ddl_error)?;
    }
    Ok(())
}

/// The intents whose DDL runs in this process now: recovery and the journal's sweep leave
/// them to it.
static RUNNING: std::sync::LazyLock<parking_lot::Mutex<std::collections::HashSet<String>>> =
    std::sync::LazyLock::new(Default::default);

/// An intent marked as running in this process until dropped.
struct Running(String);

impl Running {
    /// Marks intent `id` as running here, unless it already is.
    fn start(id: &str) -> Option<Self> {
        RUNNING
            .lock()
            .insert(id.to_string())
            .then(|| Self(id.to_string()))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.lock().remove(&self.0);
    }
}

/// This server's unfinished intents that no DDL of this process is running, each claimed
/// for the caller. The journal is read again once they are claimed: a DDL that ended between
/// the first read and its claim has removed its intent, which is then not settled again.
async fn unsettled(metastore: &dyn Metastore, owner: &str) -> Vec<(Intent, Running)> {
    let read = |intents: Result<Vec<Intent>, _>| match intents {
        Ok(i) => i,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read the intent journal");
            Vec::new()
        }
    };
    let mut claimed: std::collections::HashMap<String, Running> =
        read(metastore.unfinished_intents(owner).await)
            .into_iter()
            .filter_map(|i| Running::start(&i.id).map(|r| (i.id, r)))
            .collect();
    if claimed.is_empty() {
        return Vec::new();
    }
    read(metastore.unfinished_intents(owner).await)
        .into_iter()
        .filter_map(|i| claimed.remove(&i.id).map(|r| (i, r)))
        .collect()
}

/// Finishes or undoes the DDL this server (`owner`) had under way when it stopped. An intent
/// that cannot be settled now (its system unreachable) stays for the journal's sweep
/// ([`sweep`]) or the next start.
pub async fn recover(metastore: &dyn Metastore, handlers: &Registry, owner: &str) {
    for (intent, _running) in unsettled(metastore, owner).await {
        settle_intent(metastore, handlers, intent).await;
    }
}

/// While `stop` is not cancelled, every `every` settles this server's unfinished intents that
/// no DDL of this process is running: those whose DDL failed to finish or undo what it
/// started (a remote call that failed, a hook that could not be run) and those it left when
/// its work ended early. Each is settled in a task of its own, so one whose system does not
/// answer holds up no other.
pub fn sweep(
    metastore: Arc<dyn Metastore>,
    handlers: Arc<Registry>,
    owner: String,
    every: std::time::Duration,
    stop: CancellationToken,
) {
    // An intent that could not be settled is tried again after twice as long each time (up to
    // an hour), so a system that stays unreachable does not fill the log.
    let backoff: Arc<parking_lot::Mutex<std::collections::HashMap<String, Backoff>>> =
        Default::default();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(every) => {}
            }
            let now = std::time::Instant::now();
            for (intent, running) in unsettled(metastore.as_ref(), &owner).await {
                if backoff.lock().get(&intent.id).is_some_and(|b| b.next > now) {
                    continue;
                }
                let (metastore, handlers, backoff) =
                    (metastore.clone(), handlers.clone(), backoff.clone());
                tokio::spawn(async move {
                    let _running = running;
                    let id = intent.id.clone();
                    let settled = settle_intent(metastore.as_ref(), &handlers, intent).await;
                    let mut backoff = backoff.lock();
                    if settled {
                        backoff.remove(&id);
                    } else {
                        let wait = backoff
                            .get(&id)
                            .map_or(every, |b| (b.wait * 2).min(MAX_BACKOFF));
                        backoff.insert(
                            id,
                            Backoff {
                                wait,
                                next: std::time::Instant::now() + wait,
                            },
                        );
                    }
                });
            }
        }
    });
}

/// When the sweep tries an intent it could not settle again.
struct Backoff {
    wait: std::time::Duration,
    next: std::time::Instant,
}

/// The longest wait between two tries of an intent the sweep could not settle.
const MAX_BACKOFF: std::time::Duration = std::time::Duration::from_secs(3600);

/// Finishes (Committed) or undoes (Pending, Aborting) one unfinished intent; one that cannot be
/// settled now stays in the journal. Whether it left the journal.
async fn settle_intent(metastore: &dyn Metastore, handlers: &Registry, mut intent: Intent) -> bool {
    let table = intent.table.qualified_name();
    let handler = match handler_of(handlers, &intent.table) {
        Ok(Some(h)) => h,
        _ => {
            tracing::warn!(intent = %intent.id, %table, "no handler for an unfinished intent; left in the journal");
            return false;
        }
    };
    let op = OpTag {
        id: intent.id.clone(),
    };
    if intent.state == IntentState::Pending {
        // Undo only what can no longer commit.
        match metastore.abort_intent(&intent.id).await {
            Ok(true) => intent.state = IntentState::Aborting,
            // It committed meanwhile: the next sweep finishes it.
            Ok(false) => return false,
            Err(e) => {
                tracing::warn!(error = %e, "cannot settle an intent now");
                return false;
            }
        }
    }
    match settle(handler.meta_hook(), &intent, &op).await {
        Ok(what) => {
            tracing::info!(intent = %intent.id, %table, kind = ?intent.kind, state = ?intent.state, what, "recovered an interrupted DDL");
            match metastore.finish_intent(&intent.id).await {
                Ok(_) => true,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot remove a recovered intent");
                    false
                }
            }
        }
        Err(e) => {
            tracing::warn!(intent = %intent.id, %table, error = %e, "cannot recover an interrupted DDL now; left in the journal");
            false
        }
    }
}

async fn settle(
    hook: Option<&dyn MetaHook>,
    intent: &Intent,
    op: &OpTag,
) -> Result<&'static str, HandlerError> {
    let Some(h) = hook else {
        return Ok("no hook");
    };
    let t = &intent.table;
    Ok(match (intent.kind, intent.state) {
        (IntentKind::CreateTable, IntentState::Pending | IntentState::Aborting) => {
            if h.object_state(t, op).await? == ObjectState::CreatedBy {
                h.rollback_create_table(t, op).await?;
                "create undone: removed the object it had made"
            } else {
                "create undone: nothing of it remained"
            }
        }
        (IntentKind::CreateTable, IntentState::Committed) => {
            h.commit_create_table(t, op).await?;
            "create finished"
        }
        (IntentKind::DropTable, IntentState::Pending | IntentState::Aborting) => {
            h.rollback_drop_table(t).await?;
            "drop undone: the table is still there"
        }
        (IntentKind::DropTable, IntentState::Committed) => {
            h.commit_drop_table(t, intent.delete_data).await?;
            "drop finished"
        }
    })
}

/// A table as DESCRIBE, SHOW CREATE TABLE and SHOW TBLPROPERTIES show it: secrets among the
/// properties, masked.
pub(crate) fn for_display(mut table: Table) -> Table {
    for k in std::mem::take(&mut table.secrets).into_keys() {
        table.parameters.insert(k, MASK.into());
    }
    // A password written into a connection URL (`...?password=x`, `user:x@host`) is masked
    // as well.
    for v in table.parameters.values_mut() {
        *v = crate::redact::mask_url(v);
    }
    table
}

/// What a secret property shows.
pub(crate) use crate::redact::MASK;
