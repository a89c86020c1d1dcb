//! Writing a Delta table: the rows of an INSERT streamed into deltalake's writer, which adds
//! their Parquet files and then commits them in one Delta commit (a crash before the commit
//! leaves only files no version names); OVERWRITE removes the old files in the same commit.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use apiary_metastore::Table;
use apiary_storage::handler::{HandlerResult, WriteMode};
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
use deltalake::protocol::SaveMode;
use deltalake::DeltaTable;
use futures::StreamExt;

use crate::{def_err, remote_err};

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
/// what an INSERT OVERWRITE .. PARTITION replaces.
fn partitions_predicate(
    partitions: &[Vec<(String, Option<String>)>],
    schema: &Schema,
) -> HandlerResult<Expr> {
    let mut any: Option<Expr> = None;
    for values in partitions {
        let mut all: Option<Expr> = None;
        for (name, value) in values {
            let field = schema
                .fields()
                .iter()
                .find(|f| f.name().eq_ignore_ascii_case(name))
                .ok_or_else(|| def_err(format!("{name} is not a column of the Delta table")))?;
            let column = col(Column::new_unqualified(field.name()));
            let test = match value {
                None => column.is_null(),
                Some(v) => {
                    let v = ScalarValue::try_from_string(v.clone(), field.data_type())
                        .map_err(|e| def_err(format!("partition value {v} of {name}: {e}")))?;
                    column.eq(lit(v))
                }
            };
            all = Some(match all {
                None => test,
                Some(a) => a.and(test),
            });
        }
        if let Some(all) = all {
            any = Some(match any {
                None => all,
                Some(a) => a.or(all),
            });
        }
    }
    any.ok_or_else(|| def_err("no partition to overwrite"))
}

/// Writes `rows` (the table's declared columns, in order) into `delta` as one commit, as
/// `mode` says. Returns the rows written.
pub(crate) async fn insert(
    table: &Table,
    delta: DeltaTable,
    rows: SendableRecordBatchStream,
    mode: WriteMode,
) -> HandlerResult<u64> {
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
    write.await.map_err(remote_err)?;
    Ok(count.load(Ordering::Relaxed))
}
