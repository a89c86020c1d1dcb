//! Work with a side effect that runs as an operation ([`Task`]), and the helpers such work
//! shares: file-system work off the async workers, fail points.

use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use tokio_util::sync::CancellationToken;

use crate::error::SqlError;

/// How long, by default, the operation of a cancelled or timed-out task waits for it to
/// settle (finish or undo what it was doing, a remote call it was inside included) before it
/// reports the interruption; the work itself goes on to its end (`apiary.ddl.settle.timeout`).
pub const TASK_SETTLE: std::time::Duration = std::time::Duration::from_secs(30);

type TaskWork = Box<
    dyn FnOnce(
            CancellationToken,
        )
            -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), SqlError>> + Send>>
        + Send,
>;

/// Work with a side effect that runs as an operation (DDL, LOAD, INSERT, CTAS), so it can run
/// asynchronously, time out and be cancelled. The operation starts it with a token that is
/// cancelled when the client cancels or the query timeout passes; the work then settles, that
/// is, it ends with [`SqlError::Cancelled`] having either finished or undone what it did (a
/// DDL inside a storage handler's call follows the intent journal). Compiling a statement
/// never runs it.
pub struct Task {
    work: TaskWork,
    notes: Arc<parking_lot::Mutex<Vec<String>>>,
    output: Option<TaskOutput>,
    settle: std::time::Duration,
    committed: Arc<std::sync::atomic::AtomicBool>,
}

tokio::task_local! {
    /// The running task's commit flag ([`Task::committed`]).
    static COMMITTED: Arc<std::sync::atomic::AtomicBool>;
}

/// Says whether the running task's work has passed its commit point (a DDL whose catalog
/// change has committed finishes rather than undoes; a CTAS whose rows failed undoes its
/// table again). Outside a task, nothing.
pub(crate) fn set_committed(committed: bool) {
    let _ = COMMITTED.try_with(|c| c.store(committed, std::sync::atomic::Ordering::SeqCst));
}

/// The result set of a task that has one (MSCK's lines): its schema is known when the
/// statement compiles, its rows once the task has finished.
#[derive(Debug, Clone)]
pub struct TaskOutput {
    schema: SchemaRef,
    rows: Arc<parking_lot::Mutex<Vec<RecordBatch>>>,
}

impl TaskOutput {
    /// An empty result with `schema`.
    pub(crate) fn new(schema: SchemaRef) -> Self {
        Self {
            schema,
            rows: Default::default(),
        }
    }

    /// The result's schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Sets the rows (the task's work does, before it ends).
    pub(crate) fn set(&self, batches: Vec<RecordBatch>) {
        *self.rows.lock() = batches;
    }

    /// The rows, once the task has finished.
    pub fn rows(&self) -> Vec<RecordBatch> {
        self.rows.lock().clone()
    }
}

impl std::fmt::Debug for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Task")
    }
}

impl Task {
    /// Work that holds nothing half done when dropped (an INSERT's staged writer cleans up
    /// after itself): at the interrupt it is dropped.
    pub(crate) fn abortable(
        work: impl std::future::Future<Output = Result<(), SqlError>> + Send + 'static,
    ) -> Self {
        Self::cooperative(Default::default(), move |interrupt| {
            Box::pin(async move {
                tokio::select! {
                    biased;
                    _ = interrupt.cancelled() => Err(SqlError::Cancelled),
                    r = async {
                        // Fail point of the work that runs a query and writes its rows
                        // (INSERT, CTAS's rows, DataFusion's DML).
                        failpoint("task.run").await?;
                        work.await
                    } => r,
                }
            })
        })
    }

    /// Work that watches the interrupt itself and settles at its safe points.
    pub(crate) fn cooperative(
        notes: Arc<parking_lot::Mutex<Vec<String>>>,
        work: impl FnOnce(
                CancellationToken,
            ) -> std::pin::Pin<
                Box<dyn std::future::Future<Output = Result<(), SqlError>> + Send>,
            > + Send
            + 'static,
    ) -> Self {
        Self {
            work: Box::new(work),
            output: None,
            notes,
            settle: TASK_SETTLE,
            committed: Default::default(),
        }
    }

    /// `tasks` run in order as one (a multi-insert's INSERTs), the first failure ending it.
    /// Each commits by itself, as Hive's move of each INSERT's files does: interrupted, the
    /// one running settles and the later ones do not start.
    pub(crate) fn sequence(tasks: Vec<Task>) -> Self {
        let notes: Arc<parking_lot::Mutex<Vec<String>>> = Default::default();
        let settle = tasks.iter().map(Task::settle).max().unwrap_or(TASK_SETTLE);
        let all_notes = notes.clone();
        Self::cooperative(notes, move |interrupt| {
            Box::pin(async move {
                for task in tasks {
                    if interrupt.is_cancelled() {
                        return Err(SqlError::Cancelled);
                    }
                    // The running INSERT's own commit point, not an earlier one's.
                    set_committed(false);
                    let notes = task.notes();
                    let result = task.run(interrupt.clone()).await;
                    all_notes.lock().append(&mut notes.lock());
                    result?;
                }
                Ok(())
            })
        })
        .with_settle(settle)
    }

    /// Whether the work has passed its commit point: interrupted past it, it ends finished,
    /// not undone.
    pub fn committed(&self) -> Arc<std::sync::atomic::AtomicBool> {
        self.committed.clone()
    }

    /// The task with `settle` as the time its operation waits for it to settle once
    /// interrupted.
    pub(crate) fn with_settle(mut self, settle: std::time::Duration) -> Self {
        self.settle = settle;
        self
    }

    /// How long its operation waits for it to settle once interrupted; past that the operation
    /// reports the interruption and the work goes on in the background to its end.
    pub fn settle(&self) -> std::time::Duration {
        self.settle
    }

    /// The task with a result set, which its work fills.
    pub(crate) fn with_output(mut self, output: Option<TaskOutput>) -> Self {
        self.output = output;
        self
    }

    /// The task's result set, if it has one.
    pub fn output(&self) -> Option<TaskOutput> {
        self.output.clone()
    }

    /// Runs the work; `interrupt` is cancelled to make it settle.
    pub async fn run(self, interrupt: CancellationToken) -> Result<(), SqlError> {
        // A task run inside another (a CTAS's rows) shares the outer one's commit flag.
        if COMMITTED.try_with(|_| ()).is_ok() {
            return (self.work)(interrupt).await;
        }
        COMMITTED
            .scope(self.committed, (self.work)(interrupt))
            .await
    }

    /// What the work noted for its user (files it kept), for the operation log.
    pub fn notes(&self) -> Arc<parking_lot::Mutex<Vec<String>>> {
        self.notes.clone()
    }
}

/// Reaches a fail point; an injected failure is an execution error.
pub(crate) async fn failpoint(name: &str) -> Result<(), SqlError> {
    apiary_failpoints::reach(name)
        .await
        .map_err(|e| SqlError::execution_caused(e.to_string(), e))
}

/// Runs file-system work on a blocking thread, off the async workers.
pub(crate) async fn blocking<T, E>(
    f: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Result<T, SqlError>
where
    T: Send + 'static,
    E: Into<SqlError> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r.map_err(Into::into),
        Err(e) => Err(SqlError::execution_caused(
            format!("org.apache.hadoop.hive.ql.exec.MoveTask. file task failed: {e}"),
            e,
        )),
    }
}
