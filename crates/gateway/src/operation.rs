//! Operations: an explicit state machine, a bounded result buffer fed by a producer task, a
//! cancellation token and a log.
//!
//! A producer task runs the DataFusion stream and pushes batches into a channel that holds at
//! most [`RESULT_BUFFER_BATCHES`] batches, so a client that fetches slowly (or not at all) holds
//! the query back instead of growing the server's memory. The operation is FINISHED as soon as
//! results can be fetched; the rest of the result is produced as the client fetches.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use apiary_sql::{QueryPlan, SqlError, Task, TaskOutput, TASK_SETTLE};
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use std::panic::AssertUnwindSafe;

use futures::{FutureExt, StreamExt};
use parking_lot::Mutex;
use tokio::sync::{mpsc, watch, Notify, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::error::{GatewayError, OperationError};
use crate::handle::Handle;

/// The error of a panic caught in an operation's work.
fn panic_error(payload: &(dyn std::any::Any + Send)) -> GatewayError {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown cause".into());
    tracing::error!(panic = %what, "a query's work panicked; the operation fails");
    GatewayError::Internal(format!(
        "Error while processing statement: FAILED: Execution Error, return code 2 from org.apache.apiary.exec.DataFusionTask. internal error: the query's work failed unexpectedly ({what})"
    ))
}

/// A produced batch checked against the result schema the client was given: the same number
/// of columns, each of the declared type (string, binary and dictionary encodings are turned
/// into the declared one, which loses nothing). Anything else is an error: a value of another
/// type would be read wrongly.
fn conform(schema: &SchemaRef, batch: RecordBatch) -> Result<RecordBatch, String> {
    if batch.num_columns() != schema.fields().len() {
        return Err(format!(
            "the query produced {} columns where its schema has {}",
            batch.num_columns(),
            schema.fields().len()
        ));
    }
    let same = schema
        .fields()
        .iter()
        .zip(batch.columns())
        .all(|(f, a)| a.data_type().equals_datatype(f.data_type()));
    if same {
        return Ok(batch);
    }
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (f, a) in schema.fields().iter().zip(batch.columns()) {
        let (from, to) = (a.data_type(), f.data_type());
        if from.equals_datatype(to) {
            columns.push(a.clone());
        } else if same_family(from, to) {
            columns.push(arrow::compute::cast(a, to).map_err(|e| e.to_string())?);
        } else {
            return Err(format!(
                "column {} holds {from} values where the result schema declares {to}",
                f.name()
            ));
        }
    }
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| e.to_string())
}

/// Encodings of the same values: strings, binaries, or a dictionary of the declared type.
fn same_family(from: &arrow::datatypes::DataType, to: &arrow::datatypes::DataType) -> bool {
    use arrow::datatypes::DataType as T;
    let string = |t: &T| matches!(t, T::Utf8 | T::LargeUtf8 | T::Utf8View);
    let binary = |t: &T| matches!(t, T::Binary | T::LargeBinary | T::BinaryView);
    match from {
        T::Dictionary(_, v) => v.as_ref().equals_datatype(to) || same_family(v, to),
        _ => (string(from) && string(to)) || (binary(from) && binary(to)),
    }
}

/// A batch in an operation's buffer with its share of the session's result budget.
type Buffered = (RecordBatch, Option<OwnedSemaphorePermit>);

/// Batches buffered between the producer and the client's fetches.
pub const RESULT_BUFFER_BATCHES: usize = 2;
/// Log lines kept per operation; older lines are dropped.
const MAX_LOG_LINES: usize = 10_000;

/// The life-cycle states of an operation (HiveServer2's TOperationState).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperationState {
    /// Created, not yet started.
    Initialized,
    /// Accepted, waiting to run.
    Pending,
    /// Running; results not yet available.
    Running,
    /// Results are available (and may still be streaming).
    Finished,
    /// Cancelled by the client.
    Canceled,
    /// Closed; the handle is about to disappear.
    Closed,
    /// Failed.
    Error,
    /// Ran longer than its query timeout.
    TimedOut,
}

impl OperationState {
    /// Whether the operation can no longer change by itself.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            OperationState::Finished
                | OperationState::Canceled
                | OperationState::Closed
                | OperationState::Error
                | OperationState::TimedOut
        )
    }
}

/// What an operation does (HiveServer2's TOperationType, plus the catalog calls it lacks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperationKind {
    /// ExecuteStatement.
    ExecuteStatement,
    /// GetTypeInfo.
    GetTypeInfo,
    /// GetCatalogs.
    GetCatalogs,
    /// GetSchemas.
    GetSchemas,
    /// GetTables.
    GetTables,
    /// GetTableTypes.
    GetTableTypes,
    /// GetColumns.
    GetColumns,
    /// GetFunctions.
    GetFunctions,
    /// GetPrimaryKeys.
    GetPrimaryKeys,
    /// GetCrossReference.
    GetCrossReference,
}

/// A snapshot of an operation for GetOperationStatus.
#[derive(Debug, Clone)]
pub struct OperationStatus {
    /// Current state.
    pub state: OperationState,
    /// The error, in ERROR and TIMEDOUT states.
    pub error: Option<OperationError>,
    /// Start time, milliseconds since the epoch.
    pub started_ms: i64,
    /// Completion time, milliseconds since the epoch (0 while running).
    pub completed_ms: i64,
    /// Whether the operation has a result set.
    pub has_result_set: bool,
    /// Rows produced so far.
    pub rows_produced: u64,
    /// Whether the producer has reached the end of the result.
    pub complete: bool,
}

/// Where an operation's rows come from.
#[derive(Clone)]
pub enum ResultSource {
    /// A planned query, run (and run again for FETCH_FIRST).
    Plan(Box<QueryPlan>),
    /// Rows computed up front.
    Rows(Arc<Vec<RecordBatch>>),
    /// Work that runs as the operation (DDL, INSERT, CTAS, MSCK), so it can run
    /// asynchronously, time out and be cancelled; taken by the first run. A task with a result
    /// set (MSCK) fills its output, which is fetched once it has finished.
    Task(Arc<Mutex<Option<Task>>>, Option<TaskOutput>),
    /// No result set.
    Empty,
}

/// Rows handed to one FetchResults call.
#[derive(Debug)]
pub struct FetchedRows {
    /// The rows, as slices of the produced batches.
    pub batches: Vec<RecordBatch>,
    /// Offset of the first row within the result.
    pub start_offset: i64,
    /// Whether more rows may follow.
    pub has_more: bool,
}

struct Progress {
    state: OperationState,
    error: Option<OperationError>,
    completed_ms: i64,
    rows_produced: u64,
    complete: bool,
}

struct Reader {
    rx: Option<mpsc::Receiver<Result<Buffered, GatewayError>>>,
    pending: Option<RecordBatch>,
    offset: i64,
    run: CancellationToken,
}

struct Log {
    lines: std::collections::VecDeque<String>,
    read: usize,
}

/// One operation of a session.
pub struct Operation {
    handle: Handle,
    session: Handle,
    kind: OperationKind,
    statement: String,
    query_id: String,
    schema: Option<SchemaRef>,
    source: ResultSource,
    timeout: Option<Duration>,
    /// The session's budget of buffered result KiB; each batch in the channel holds its share.
    result_budget: Option<(Arc<Semaphore>, usize)>,
    /// Signalled whenever a fetch takes a batch from the channel.
    drained: Notify,
    started_ms: i64,
    progress: Mutex<Progress>,
    state_tx: watch::Sender<OperationState>,
    log: Mutex<Log>,
    reader: tokio::sync::Mutex<Reader>,
    cancel: CancellationToken,
    /// Interrupts a task's work (a child of `cancel`, so closing interrupts it too). Apart
    /// from `cancel`, so a task that finished despite a cancel can still serve its rows.
    task_interrupt: CancellationToken,
    /// Set once a task's work has ended (or its settle time after an interruption has passed).
    settled: watch::Sender<bool>,
    /// How long an interrupted task's operation waits for it to settle.
    settle: Duration,
    /// A client asked to cancel a running task: its outcome decides the state (a task that
    /// finished before the interrupt reached it is FINISHED, one that settled is CANCELED).
    cancel_requested: std::sync::atomic::AtomicBool,
    last_access: Mutex<Instant>,
    /// Called once, with the state the operation first ended in and its error (the audit
    /// log's statement line).
    on_end: Mutex<Option<EndHook>>,
}

/// What runs when an operation first ends.
pub(crate) type EndHook = Box<dyn FnOnce(OperationState, Option<OperationError>) + Send>;

impl std::fmt::Debug for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operation")
            .field("handle", &self.handle)
            .field("kind", &self.kind)
            .field("state", &self.state())
            .finish()
    }
}

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl Operation {
    /// A new operation in the PENDING state. Call [`Operation::start`] to run it.
    pub(crate) fn new(
        session: Handle,
        kind: OperationKind,
        statement: String,
        schema: Option<SchemaRef>,
        source: ResultSource,
        timeout: Option<Duration>,
        result_budget: Option<(Arc<Semaphore>, usize)>,
    ) -> Arc<Self> {
        let handle = Handle::random();
        let query_id = format!(
            "apiary_{}_{}",
            chrono::Utc::now().format("%Y%m%d%H%M%S"),
            handle
        );
        let (state_tx, _) = watch::channel(OperationState::Pending);
        let settle = match &source {
            ResultSource::Task(task, _) => task.lock().as_ref().map(Task::settle),
            _ => None,
        }
        .unwrap_or(TASK_SETTLE);
        let cancel = CancellationToken::new();
        let task_interrupt = cancel.child_token();
        Arc::new(Self {
            handle,
            session,
            kind,
            statement,
            query_id,
            schema,
            source,
            timeout,
            result_budget,
            drained: Notify::new(),
            started_ms: now_ms(),
            progress: Mutex::new(Progress {
                state: OperationState::Pending,
                error: None,
                completed_ms: 0,
                rows_produced: 0,
                complete: false,
            }),
            state_tx,
            log: Mutex::new(Log {
                lines: std::collections::VecDeque::new(),
                read: 0,
            }),
            reader: tokio::sync::Mutex::new(Reader {
                rx: None,
                pending: None,
                offset: 0,
                run: CancellationToken::new(),
            }),
            cancel,
            task_interrupt,
            settled: watch::channel(false).0,
            settle,
            cancel_requested: Default::default(),
            last_access: Mutex::new(Instant::now()),
            on_end: Mutex::new(None),
        })
    }

    /// Runs `hook` when the operation first ends (FINISHED, ERROR, CANCELED, TIMEDOUT, or
    /// CLOSED before any of those).
    pub(crate) fn on_end(&self, hook: EndHook) {
        *self.on_end.lock() = Some(hook);
    }

    /// The operation's handle.
    pub fn handle(&self) -> Handle {
        self.handle
    }

    /// The owning session's handle.
    pub fn session(&self) -> Handle {
        self.session
    }

    /// What the operation does.
    pub fn kind(&self) -> OperationKind {
        self.kind
    }

    /// The statement text (empty for catalog calls).
    pub fn statement(&self) -> &str {
        &self.statement
    }

    /// The query id (GetQueryId).
    pub fn query_id(&self) -> &str {
        &self.query_id
    }

    /// The result schema, if the operation has a result set.
    pub fn schema(&self) -> Option<&SchemaRef> {
        self.schema.as_ref()
    }

    /// Whether the operation returns rows.
    pub fn has_result_set(&self) -> bool {
        self.schema.is_some()
    }

    /// The current state.
    pub fn state(&self) -> OperationState {
        self.progress.lock().state
    }

    /// Time since a client last used this operation.
    pub fn idle_for(&self) -> Duration {
        self.last_access.lock().elapsed()
    }

    fn touch(&self) {
        *self.last_access.lock() = Instant::now();
    }

    /// A snapshot for GetOperationStatus.
    pub fn status(&self) -> OperationStatus {
        self.touch();
        let p = self.progress.lock();
        OperationStatus {
            state: p.state,
            error: p.error.clone(),
            started_ms: self.started_ms,
            completed_ms: p.completed_ms,
            has_result_set: self.has_result_set(),
            rows_produced: p.rows_produced,
            complete: p.complete,
        }
    }

    /// Appends a line to the operation log.
    pub fn log(&self, level: &str, line: impl AsRef<str>) {
        let mut log = self.log.lock();
        if log.lines.len() >= MAX_LOG_LINES {
            log.lines.pop_front();
            log.read = log.read.saturating_sub(1);
        }
        let stamp = chrono::Local::now().format("%Y-%m-%d %H:%M:%S%.3f");
        log.lines
            .push_back(format!("{stamp} {level:<5} : {}", line.as_ref()));
    }

    /// Log lines not yet read (or all of them from the start when `from_start`).
    pub fn read_log(&self, from_start: bool, max_lines: usize) -> Vec<String> {
        self.touch();
        let mut log = self.log.lock();
        if from_start {
            log.read = 0;
        }
        let end = log
            .lines
            .len()
            .min(log.read.saturating_add(max_lines.max(1)));
        let out = log.lines.range(log.read..end).cloned().collect();
        log.read = end;
        out
    }

    /// Moves to `state` unless the operation already ended; returns whether it moved.
    fn transition(&self, state: OperationState, error: Option<OperationError>) -> bool {
        let mut p = self.progress.lock();
        let allowed = match p.state {
            OperationState::Closed => false,
            OperationState::Canceled | OperationState::Error | OperationState::TimedOut => {
                state == OperationState::Closed
            }
            OperationState::Finished => matches!(
                state,
                OperationState::Closed | OperationState::Canceled | OperationState::Error
            ),
            _ => true,
        };
        if !allowed || p.state == state {
            return false;
        }
        p.state = state;
        if error.is_some() {
            p.error = error;
        }
        let ended = state.is_terminal() && p.completed_ms == 0;
        if ended {
            p.completed_ms = now_ms();
        }
        let error = p.error.clone();
        drop(p);
        self.state_tx.send_replace(state);
        let hook = if ended {
            self.on_end.lock().take()
        } else {
            None
        };
        if let Some(hook) = hook {
            hook(state, error);
        }
        true
    }

    /// Fails the operation with `err`.
    pub(crate) fn fail(&self, err: &GatewayError) {
        let state = match err {
            GatewayError::Timeout(_) => OperationState::TimedOut,
            _ => OperationState::Error,
        };
        self.log("ERROR", err.message());
        self.transition(state, Some(OperationError::from(err)));
        // Nothing can be fetched from a failed operation: its buffer goes now.
        self.drop_buffered();
    }

    /// Starts producing results in the background.
    pub(crate) async fn start(self: &Arc<Self>) {
        self.log(
            "INFO",
            format!("Executing command(queryId={})", self.query_id),
        );
        self.transition(OperationState::Running, None);
        if matches!(self.source, ResultSource::Empty) {
            self.progress.lock().complete = true;
            self.log("INFO", "OK");
            self.transition(OperationState::Finished, None);
            return;
        }
        if let ResultSource::Task(task, output) = &self.source {
            let has_rows = output.is_some();
            let Some(task) = task.lock().take() else {
                return;
            };
            let op = Arc::clone(self);
            tokio::spawn(async move {
                let result = op.run_task(task).await;
                match result {
                    Ok(Ok(())) => {
                        if op.cancel_requested.load(Ordering::SeqCst) {
                            op.log(
                                "INFO",
                                "The statement had finished before the cancel reached it",
                            );
                        }
                        if has_rows {
                            // Its rows are fetched like any result; the producer finishes
                            // the operation once they are buffered.
                            let mut reader = op.reader.lock().await;
                            op.spawn_producer(&mut reader, false);
                        } else {
                            op.progress.lock().complete = true;
                            op.log("INFO", "OK");
                            op.transition(OperationState::Finished, None);
                        }
                    }
                    // Closed (or cancelled before it ran): the state says so already.
                    Ok(Err(SqlError::Cancelled)) if op.state() != OperationState::Running => {}
                    Ok(Err(SqlError::Cancelled)) if op.cancel_requested.load(Ordering::SeqCst) => {
                        if op.transition(OperationState::Canceled, None) {
                            op.log("INFO", "Query was cancelled");
                        }
                    }
                    Ok(Err(SqlError::Cancelled)) => {
                        let secs = op.timeout.map(|t| t.as_secs()).unwrap_or(0);
                        op.fail(&GatewayError::Timeout(secs));
                    }
                    Ok(Err(e)) => op.fail(&GatewayError::Sql(e)),
                    Err(panicked) => op.fail(&panicked),
                }
                op.settled.send_replace(true);
            });
            return;
        }
        let mut reader = self.reader.lock().await;
        self.spawn_producer(&mut reader, false);
    }

    /// Runs a task to its end. A cancel or the query timeout interrupts it, and it then has
    /// its settle time ([`Task::settle`], [`apiary_sql::TASK_SETTLE`] by default) to finish or
    /// undo what it was doing. Past that the operation reports the interruption, but the work
    /// is not dropped: it runs as a task of its own and goes on to its end, so a DDL stuck in a
    /// remote call (a table lock) still finishes, or is undone, through the intent journal
    /// once the call returns, and the catalog and the handler's system agree without a
    /// restart.
    async fn run_task(&self, task: Task) -> Result<Result<(), SqlError>, GatewayError> {
        let interrupt = self.task_interrupt.child_token();
        let notes = task.notes();
        let settle = task.settle();
        let committed = task.committed();
        let query = self.query_id.clone();
        let token = interrupt.clone();
        let work = tokio::spawn(async move {
            let r = AssertUnwindSafe(task.run(token.clone()))
                .catch_unwind()
                .await;
            if token.is_cancelled() {
                tracing::info!(%query, "an interrupted task has settled");
            }
            r
        });
        let work = work.map(|joined| match joined {
            Ok(r) => r,
            // The work is never aborted, and its panics are caught inside it.
            Err(e) => Err(Box::new(e.to_string()) as Box<dyn std::any::Any + Send>),
        });
        tokio::pin!(work);
        let deadline = async {
            match self.timeout {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        let interrupted = tokio::select! {
            r = &mut work => Some(r),
            _ = interrupt.cancelled() => None,
            _ = deadline => None,
        };
        let r = match interrupted {
            Some(r) => r,
            None => {
                interrupt.cancel();
                match tokio::time::timeout(settle, &mut work).await {
                    Ok(r) => r,
                    Err(_) if committed.load(Ordering::SeqCst) => {
                        // Past its commit, the statement finishes: its state says so.
                        tracing::warn!(query = %self.query_id, "an interrupted task past its commit did not settle in time; it finishes in the background");
                        self.log("WARN", "The statement had committed when the interruption reached it; what is left of it finishes in the background");
                        Ok(Ok(()))
                    }
                    Err(_) => {
                        tracing::warn!(query = %self.query_id, "an interrupted task did not settle in time; it goes on in the background, and its DDL ends undone through the intent journal");
                        self.log("WARN", "The statement did not settle in time after the interruption; it is undone in the background");
                        Ok(Err(SqlError::Cancelled))
                    }
                }
            }
        };
        for note in std::mem::take(&mut *notes.lock()) {
            self.log("WARN", note);
        }
        r.map_err(|panic| panic_error(panic.as_ref()))
    }

    /// How long the operation waits for its interrupted task to settle.
    pub fn settle_time(&self) -> Duration {
        self.settle
    }

    /// Waits until the operation's work has ended (a cancelled task has settled, or its settle
    /// time has passed); at once for queries, whose work stops when cancelled.
    pub async fn settled(&self) {
        if !matches!(self.source, ResultSource::Task(..)) {
            return;
        }
        let mut rx = self.settled.subscribe();
        let _ = rx.wait_for(|done| *done).await;
    }

    /// Waits until the operation leaves PENDING and RUNNING.
    pub async fn wait_ready(&self) -> OperationState {
        let mut rx = self.state_tx.subscribe();
        loop {
            let s = *rx.borrow_and_update();
            if !matches!(
                s,
                OperationState::Pending | OperationState::Running | OperationState::Initialized
            ) {
                return s;
            }
            if rx.changed().await.is_err() {
                return self.state();
            }
        }
    }

    fn spawn_producer(self: &Arc<Self>, reader: &mut Reader, rerun: bool) {
        reader.run.cancel();
        let run = self.cancel.child_token();
        let (tx, rx) = mpsc::channel(RESULT_BUFFER_BATCHES);
        reader.rx = Some(rx);
        reader.pending = None;
        reader.offset = 0;
        reader.run = run.clone();
        let op = Arc::clone(self);
        tokio::spawn(async move {
            let on_panic = tx.clone();
            let work = AssertUnwindSafe(op.produce(tx, rerun)).catch_unwind();
            tokio::select! {
                _ = run.cancelled() => {}
                r = work => {
                    // A panic anywhere in the query's work fails this operation with a
                    // message; the reader sees the error instead of a short result.
                    if let Err(panic) = r {
                        op.produce_error(&on_panic, panic_error(panic.as_ref())).await;
                    }
                }
            }
        });
    }

    async fn produce(&self, tx: mpsc::Sender<Result<Buffered, GatewayError>>, rerun: bool) {
        let started = Instant::now();
        let deadline = self.timeout.map(|t| tokio::time::Instant::now() + t);
        let mut stream: apiary_sql::RowStream = match &self.source {
            ResultSource::Plan(plan) => {
                let run = plan.stream();
                let result = match deadline {
                    Some(d) => tokio::time::timeout_at(d, run)
                        .await
                        .unwrap_or_else(|_| Err(SqlError::Cancelled)),
                    None => run.await,
                };
                match result {
                    Ok(s) => s,
                    Err(SqlError::Cancelled) => return self.time_out(&tx).await,
                    Err(e) => return self.produce_error(&tx, GatewayError::Sql(e)).await,
                }
            }
            ResultSource::Rows(batches) => {
                let batches: Vec<_> = batches.iter().cloned().map(Ok).collect();
                Box::pin(futures::stream::iter(batches))
            }
            ResultSource::Task(_, Some(output)) => {
                let batches: Vec<_> = output.rows().into_iter().map(Ok).collect();
                Box::pin(futures::stream::iter(batches))
            }
            ResultSource::Empty | ResultSource::Task(_, None) => return,
        };
        let mut ready = rerun;
        let mut rows: u64 = 0;
        loop {
            let next = match (ready, deadline) {
                (false, Some(d)) => match tokio::time::timeout_at(d, stream.next()).await {
                    Ok(n) => n,
                    Err(_) => return self.time_out(&tx).await,
                },
                _ => stream.next().await,
            };
            match next {
                None => break,
                Some(Err(e)) => {
                    return self.produce_error(&tx, GatewayError::Sql(e)).await;
                }
                Some(Ok(batch)) => {
                    if batch.num_rows() == 0 {
                        continue;
                    }
                    let checked = match &self.schema {
                        Some(schema) => conform(schema, batch),
                        None => Ok(batch),
                    };
                    let batch = match checked {
                        Ok(b) => b,
                        Err(detail) => {
                            let err = GatewayError::Sql(SqlError::execution(format!(
                                "org.apache.apiary.exec.DataFusionTask. internal error: {detail}"
                            )));
                            return self.produce_error(&tx, err).await;
                        }
                    };
                    if let Err(e) = apiary_failpoints::reach("query.batch").await {
                        let err = GatewayError::Sql(SqlError::execution_caused(e.to_string(), e));
                        return self.produce_error(&tx, err).await;
                    }
                    rows += batch.num_rows() as u64;
                    if !rerun {
                        self.progress.lock().rows_produced = rows;
                    }
                    if !ready {
                        ready = true;
                        self.log("INFO", "First results are ready to fetch");
                        self.transition(OperationState::Finished, None);
                    }
                    let permit = self.reserve(&tx, &batch).await;
                    if tx.send(Ok((batch, permit))).await.is_err() {
                        return;
                    }
                }
            }
        }
        if !rerun {
            self.progress.lock().complete = true;
            self.log(
                "INFO",
                format!(
                    "Completed executing command(queryId={}); Time taken: {:.3} seconds; rows produced: {rows}",
                    self.query_id,
                    started.elapsed().as_secs_f64()
                ),
            );
            self.transition(OperationState::Finished, None);
        }
    }

    /// Takes the batch's share of the session's result budget. While the budget is spent the
    /// producer waits for fetches to free some; an operation with nothing buffered goes ahead
    /// without a share, so every operation can make progress and the session exceeds its
    /// budget by at most one batch per operation.
    async fn reserve(
        &self,
        tx: &mpsc::Sender<Result<Buffered, GatewayError>>,
        batch: &RecordBatch,
    ) -> Option<OwnedSemaphorePermit> {
        let (budget, total) = self.result_budget.as_ref()?;
        // A batch bigger than the whole budget takes all of it, not a wait that never ends.
        let want = crate::kib(batch.get_array_memory_size()).min(*total);
        let want = u32::try_from(want).unwrap_or(u32::MAX);
        loop {
            let drained = self.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            if let Ok(p) = budget.clone().try_acquire_many_owned(want) {
                return Some(p);
            }
            if tx.capacity() == tx.max_capacity() {
                return None;
            }
            tokio::select! {
                p = budget.clone().acquire_many_owned(want) => return p.ok(),
                _ = drained => {}
            }
        }
    }

    async fn produce_error(
        &self,
        tx: &mpsc::Sender<Result<Buffered, GatewayError>>,
        err: GatewayError,
    ) {
        self.fail(&err);
        let _ = tx.send(Err(err)).await;
    }

    async fn time_out(&self, tx: &mpsc::Sender<Result<Buffered, GatewayError>>) {
        let secs = self.timeout.map(|t| t.as_secs()).unwrap_or(0);
        self.produce_error(tx, GatewayError::Timeout(secs)).await;
        self.cancel.cancel();
    }

    fn invalid_handle(&self) -> GatewayError {
        GatewayError::InvalidHandle(format!(
            "Invalid OperationHandle: OperationHandle [opType={:?}, getHandleIdentifier()={}]",
            self.kind, self.handle
        ))
    }

    /// Cancels the operation: stops DataFusion's work and drops buffered results. A running
    /// task is interrupted and its outcome decides the state (it may have finished first);
    /// a finished task stays FINISHED: what it did is done.
    pub fn cancel(&self) -> Result<(), GatewayError> {
        self.touch();
        let task = matches!(self.source, ResultSource::Task(..));
        match self.state() {
            OperationState::Closed => Err(self.invalid_handle()),
            OperationState::Canceled | OperationState::Error | OperationState::TimedOut => Ok(()),
            OperationState::Finished if task => Ok(()),
            OperationState::Running if task => {
                self.cancel_requested.store(true, Ordering::SeqCst);
                self.task_interrupt.cancel();
                Ok(())
            }
            _ => {
                self.cancel.cancel();
                if self.transition(OperationState::Canceled, None) {
                    self.log("INFO", "Query was cancelled");
                }
                self.drop_buffered();
                Ok(())
            }
        }
    }

    /// Drops the batches buffered for fetching (and their share of the session's result
    /// budget), once no fetch can take them any more. A fetch in progress keeps the buffer;
    /// closing the operation frees it then.
    fn drop_buffered(&self) {
        if let Ok(mut reader) = self.reader.try_lock() {
            reader.rx = None;
            reader.pending = None;
        }
    }

    /// Closes the operation and frees its resources.
    pub(crate) fn close(&self) {
        self.cancel.cancel();
        self.transition(OperationState::Closed, None);
    }

    /// Fetches up to `max_rows` rows; `from_start` re-reads from the first row (FETCH_FIRST).
    pub async fn fetch(
        self: &Arc<Self>,
        max_rows: usize,
        from_start: bool,
    ) -> Result<FetchedRows, GatewayError> {
        self.touch();
        let max_rows = max_rows.max(1);
        self.check_fetchable()?;
        let mut reader = self.reader.lock().await;
        if from_start && (reader.offset > 0 || reader.pending.is_some()) {
            self.spawn_producer(&mut reader, true);
        }
        let start_offset = reader.offset;
        let mut batches = Vec::new();
        let mut taken = 0usize;
        let mut has_more = true;
        while taken < max_rows {
            let batch = match reader.pending.take() {
                Some(b) => b,
                None => {
                    let Some(rx) = reader.rx.as_mut() else {
                        has_more = false;
                        break;
                    };
                    let next = tokio::select! {
                        n = rx.recv() => n,
                        _ = self.cancel.cancelled() => None,
                    };
                    self.drained.notify_waiters();
                    match next {
                        // The batch's share of the budget is freed as it leaves the buffer.
                        Some(Ok((b, _permit))) => b,
                        Some(Err(e)) => return Err(e),
                        None => {
                            self.check_fetchable()?;
                            has_more = false;
                            break;
                        }
                    }
                }
            };
            let want = max_rows - taken;
            if batch.num_rows() > want {
                batches.push(batch.slice(0, want));
                reader.pending = Some(batch.slice(want, batch.num_rows() - want));
                taken += want;
            } else {
                taken += batch.num_rows();
                batches.push(batch);
            }
        }
        reader.offset += taken as i64;
        Ok(FetchedRows {
            batches,
            start_offset,
            has_more,
        })
    }

    fn check_fetchable(&self) -> Result<(), GatewayError> {
        let p = self.progress.lock();
        match p.state {
            OperationState::Canceled => Err(GatewayError::InvalidState(
                "Query was cancelled; no results can be fetched".into(),
            )),
            OperationState::Closed => Err(self.invalid_handle()),
            OperationState::Error | OperationState::TimedOut => Err(GatewayError::InvalidState(
                p.error
                    .as_ref()
                    .map(|e| e.message.clone())
                    .unwrap_or_else(|| "The operation failed".into()),
            )),
            _ => Ok(()),
        }
    }
}
