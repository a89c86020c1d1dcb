//! Writing a Delta table: the rows of an INSERT streamed into deltalake's writer, which adds
//! their Parquet files and then commits them in one Delta commit (a crash before the commit
//! leaves only files no version names); OVERWRITE removes the old files in the same commit.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use apiary_metastore::Table;
use apiary_storage::handler::{HandlerError, HandlerResult, JobProperties, WriteMode};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use datafusion::catalog::streaming::StreamingTable;
use datafusion::common::{Column, ScalarValue};
use datafusion::datasource::provider_as_source;
use datafusion::error::DataFusionError;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{col, lit, Expr, LogicalPlanBuilder};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::PartitionStream;
use deltalake::kernel::transaction::{CommitProperties, TransactionError};
use deltalake::kernel::Transaction;
use deltalake::protocol::SaveMode;
use deltalake::{DeltaTable, DeltaTableError};
use futures::StreamExt;

use crate::errors::{def_err, remote_err};

/// Session settings naming an INSERT's application transaction, as Delta's Spark writer names
/// them: an INSERT whose (application id, version) the table has recorded at that version or
/// later writes nothing, so a retried INSERT commits once.
pub const TXN_APP_ID: &str = "spark.databricks.delta.write.txnAppId";
/// See [`TXN_APP_ID`].
pub const TXN_VERSION: &str = "spark.databricks.delta.write.txnVersion";

/// Fail point reached when every row of an INSERT has gone to the writer, before its commit.
const ROWS_SENT: &str = "insert.rows_sent";

/// The rows of one INSERT as a partition DataFusion can read once, cast to the Delta table's
/// columns (a value that does not fit is an error, never NULL), counted as they pass.
struct Rows {
    schema: SchemaRef,
    stream: Mutex<Option<SendableRecordBatchStream>>,
    count: Arc<AtomicU64>,
}

impl std::fmt::Debug for Rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rows")
            .field("schema", &self.schema)
            .finish()
    }
}

impl PartitionStream for Rows {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let schema = self.schema.clone();
        let taken = self.stream.lock().ok().and_then(|mut s| s.take());
        let Some(input) = taken else {
            let again = futures::stream::once(async {
                Err(DataFusionError::Execution(
                    "the rows of an INSERT can be read once".into(),
                ))
            });
            return Box::pin(RecordBatchStreamAdapter::new(schema, again));
        };
        let count = self.count.clone();
        let target = schema.clone();
        let strict = CastOptions {
            safe: false,
            ..Default::default()
        };
        // All rows handed to deltalake's writer, before it commits: a fail point, so a test
        // can kill the server between the data files and the commit.
        let sent = futures::stream::once(async {
            apiary_failpoints::reach(ROWS_SENT)
                .await
                .map_err(|e| DataFusionError::External(Box::new(e)))
        })
        .filter_map(|reached| async move { reached.err().map(Err) });
        let cast = input.map(move |batch| {
            let batch = batch?;
            let columns = batch
                .columns()
                .iter()
                .zip(target.fields())
                .map(|(a, f)| cast_with_options(a, f.data_type(), &strict))
                .collect::<Result<Vec<_>, _>>()?;
            let batch = RecordBatch::try_new(target.clone(), columns)?;
            count.fetch_add(batch.num_rows() as u64, Ordering::Relaxed);
            Ok(batch)
        });
        Box::pin(RecordBatchStreamAdapter::new(schema, cast.chain(sent)))
    }
}

/// The predicate naming the rows of `partitions` (each the values of the partition columns):
/// what an INSERT OVERWRITE .. PARTITION replaces. One partition column is an IN list (a
/// long OR chain would nest as deep as there are partitions); several, an OR of ANDs split
/// in halves. An empty string is NULL, as Delta stores it.
fn partitions_predicate(
    partitions: &[Vec<(String, Option<String>)>],
    schema: &Schema,
) -> HandlerResult<Expr> {
    let value_test = |name: &str, value: &Option<String>| -> HandlerResult<(Expr, Option<Expr>)> {
        let field = schema
            .fields()
            .iter()
            .find(|f| f.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| def_err(format!("{name} is not a column of the Delta table")))?;
        let column = col(Column::new_unqualified(field.name()));
        let value = value.as_ref().filter(|v| !v.is_empty());
        let literal = value
            .map(|v| {
                ScalarValue::try_from_string(v.clone(), field.data_type())
                    .map(lit)
                    .map_err(|e| def_err(format!("partition value {v} of {name}: {e}")))
            })
            .transpose()?;
        Ok((column, literal))
    };
    if let Some(first) = partitions.first().filter(|p| p.len() == 1) {
        let name = &first[0].0;
        let mut values = Vec::new();
        let mut null = false;
        let mut column = None;
        for p in partitions {
            let [(n, v)] = p.as_slice() else {
                return Err(def_err("partitions of different columns"));
            };
            if n != name {
                return Err(def_err("partitions of different columns"));
            }
            let (c, literal) = value_test(n, v)?;
            column = Some(c);
            match literal {
                Some(l) => values.push(l),
                None => null = true,
            }
        }
        let Some(column) = column else {
            return Err(def_err("no partition to overwrite"));
        };
        let listed = (!values.is_empty()).then(|| column.clone().in_list(values, false));
        return match (listed, null) {
            (Some(l), true) => Ok(l.or(column.is_null())),
            (Some(l), false) => Ok(l),
            (None, _) => Ok(column.is_null()),
        };
    }
    let terms = partitions
        .iter()
        .map(|values| {
            let tests = values
                .iter()
                .map(|(n, v)| {
                    let (c, literal) = value_test(n, v)?;
                    Ok(match literal {
                        Some(l) => c.eq(l),
                        None => c.is_null(),
                    })
                })
                .collect::<HandlerResult<Vec<_>>>()?;
            balanced(tests, Expr::and).ok_or_else(|| def_err("a partition with no column"))
        })
        .collect::<HandlerResult<Vec<_>>>()?;
    balanced(terms, Expr::or).ok_or_else(|| def_err("no partition to overwrite"))
}

/// `exprs` joined by `join` as a tree split in halves (its depth grows as the logarithm).
fn balanced(mut exprs: Vec<Expr>, join: fn(Expr, Expr) -> Expr) -> Option<Expr> {
    if exprs.len() <= 1 {
        return exprs.pop();
    }
    let right = exprs.split_off(exprs.len() / 2);
    Some(join(balanced(exprs, join)?, balanced(right, join)?))
}

/// A failed write: a conflict with another writer's commit says that nothing was written and
/// the statement can be run again.
fn commit_error(e: DeltaTableError) -> HandlerError {
    let conflict = matches!(
        &e,
        DeltaTableError::VersionAlreadyExists(_)
            | DeltaTableError::Transaction {
                source: TransactionError::CommitConflict(_)
                    | TransactionError::MaxCommitAttempts(_)
                    | TransactionError::VersionAlreadyExists(_)
            }
    );
    if conflict {
        HandlerError::Remote(format!(
            "{e} (another writer committed to the Delta table meanwhile; this INSERT wrote nothing and can be run again)"
        ))
    } else {
        remote_err(e)
    }
}

/// An INSERT's application transaction (Delta's `txn` action): an application id and a
/// version that the commit records, so that a retry of the same INSERT is recognised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AppTransaction {
    app_id: String,
    version: i64,
}

impl AppTransaction {
    /// The transaction the session settings name, if any (both or neither must be set).
    pub(crate) fn of(job: &JobProperties) -> HandlerResult<Option<AppTransaction>> {
        let get = |k: &str| job.get(k).map(str::trim).filter(|v| !v.is_empty());
        match (get(TXN_APP_ID), get(TXN_VERSION)) {
            (None, None) => Ok(None),
            (Some(app_id), Some(v)) => {
                let version = v.parse::<i64>().ok().filter(|v| *v >= 0).ok_or_else(|| {
                    def_err(format!("{TXN_VERSION}={v} is not a version (a number from 0)"))
                })?;
                Ok(Some(AppTransaction {
                    app_id: app_id.to_string(),
                    version,
                }))
            }
            _ => Err(def_err(format!(
                "{TXN_APP_ID} and {TXN_VERSION} are set together: an INSERT's application transaction needs both"
            ))),
        }
    }
}

/// Writes `rows` (the table's declared columns, in order) into `delta` as one commit, as
/// `mode` says, recording `txn` in it. When the table has recorded `txn`'s application at
/// that version or later, the INSERT was committed before: nothing is written. Returns the
/// rows written.
pub(crate) async fn insert(
    table: &Table,
    delta: DeltaTable,
    rows: SendableRecordBatchStream,
    mode: WriteMode,
    txn: Option<AppTransaction>,
) -> HandlerResult<u64> {
    if let Some(t) = &txn {
        let recorded = delta
            .snapshot()
            .map_err(remote_err)?
            .transaction_version(delta.log_store().as_ref(), &t.app_id)
            .await
            .map_err(remote_err)?;
        if recorded.is_some_and(|v| v >= t.version) {
            tracing::info!(table = %table.qualified_name(), app_id = %t.app_id, version = t.version, "INSERT already committed as this application transaction; nothing written");
            return Ok(0);
        }
    }
    let found = delta
        .snapshot()
        .map_err(remote_err)?
        .snapshot()
        .arrow_schema();
    // The Delta columns in the declared order (they are the same columns: CREATE checked or
    // made them).
    let fields = table
        .sd
        .columns
        .iter()
        .map(|c| {
            found
                .fields()
                .iter()
                .find(|f| f.name().eq_ignore_ascii_case(&c.name))
                .cloned()
                .ok_or_else(|| {
                    def_err(format!(
                        "column {} of table {} is not in its Delta table",
                        c.name,
                        table.qualified_name()
                    ))
                })
        })
        .collect::<HandlerResult<Vec<_>>>()?;
    let schema: SchemaRef = Arc::new(Schema::new(fields));
    let count = Arc::new(AtomicU64::new(0));
    let input = Rows {
        schema: schema.clone(),
        stream: Mutex::new(Some(rows)),
        count: count.clone(),
    };
    let source = StreamingTable::try_new(schema, vec![Arc::new(input)]).map_err(remote_err)?;
    let plan =
        LogicalPlanBuilder::scan("apiary_insert", provider_as_source(Arc::new(source)), None)
            .and_then(|b| b.build())
            .map_err(remote_err)?;
    let mut write = delta.write(Vec::<RecordBatch>::new()).with_input_plan(plan);
    write = match &mode {
        WriteMode::Append => write.with_save_mode(SaveMode::Append),
        WriteMode::Overwrite => write.with_save_mode(SaveMode::Overwrite),
        // Rows outside the partitions are refused by deltalake: the query made them inside.
        WriteMode::OverwritePartitions(partitions) => write
            .with_save_mode(SaveMode::Overwrite)
            .with_replace_where(partitions_predicate(partitions, &found)?),
    };
    if let Some(t) = txn {
        write = write.with_commit_properties(
            CommitProperties::default()
                .with_application_transaction(Transaction::new(t.app_id, t.version)),
        );
    }
    write.await.map_err(commit_error)?;
    Ok(count.load(Ordering::Relaxed))
}
