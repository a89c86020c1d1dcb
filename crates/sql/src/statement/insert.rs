//! INSERT INTO / OVERWRITE of native tables (staged, committed whole) and through storage
//! handlers:
//!
//! ```sql
//! INSERT INTO [TABLE] t [PARTITION (ds='2026-12-07', h)] [(c1, c2)] SELECT .. | VALUES (..), ..;
//! INSERT OVERWRITE TABLE t [PARTITION (ds='2026-12-07') [IF NOT EXISTS]] SELECT ..;
//! ```

use std::collections::BTreeMap;

use apiary_metastore::{Column, Table};
use apiary_storage::handler::{WriteMode, PARTITION_COLUMNS};
use apiary_storage::write::{self, InsertSpec};
use datafusion::logical_expr::LogicalPlan;

use super::scope::*;
use crate::error::{HiveError, SqlError};
use crate::parser::PartitionSpec;
use crate::partitions::register_partitions;
use crate::statement::partition::{check_spec_keys, spec_text, spec_value};
use crate::task::failpoint;

impl dyn Scope {
    /// INSERT INTO/OVERWRITE: plans `query` and checks its columns against the table here;
    /// the returned task writes the rows and registers new partitions.
    pub(crate) async fn insert(
        &mut self,
        table: &Table,
        partition: Option<PartitionSpec>,
        columns: &[String],
        query: &str,
        overwrite: bool,
    ) -> Result<crate::task::Task, SqlError> {
        if table.is_view() {
            return Err(SqlError::hive(
                HiveError::ViewAsTarget,
                format!(": {}", table.qualified_name()),
            ));
        }
        if let Some(handler) = crate::journal::handler_ddl::handler_of(self.handlers(), table)? {
            let caps = handler.capabilities();
            if !(if overwrite {
                caps.overwrite
            } else {
                caps.insert
            }) {
                return Err(SqlError::semantic(format!(
                    "INSERT {} is not supported for a table stored by {}",
                    if overwrite { "OVERWRITE" } else { "INTO" },
                    handler.class_name()
                )));
            }
            // A handler whose object keeps its own partitioning: its partition columns are
            // the partition keys of a view of the table, so PARTITION (..) means what it
            // means for a native table.
            let (plan, partitioned) = match handler_partitions(table, caps.partition_columns) {
                None => {
                    if partition.is_some() {
                        return Err(SqlError::hive(
                            HiveError::PartitionSpecOnUnpartitioned,
                            format!(" {}", table.qualified_name()),
                        ));
                    }
                    (self.insert_plan(table, query, columns, 0).await?, None)
                }
                Some(view) => {
                    let spec = partition_values(&view, partition.as_ref())?;
                    let dynamic = spec.iter().filter(|v| v.is_none()).count();
                    let plan = self.insert_plan(&view, query, columns, dynamic).await?;
                    let plan = with_partition_values(plan, &view, &spec)?;
                    (plan, Some((view, spec)))
                }
            };
            let ctx = self.context().clone();
            let table = table.clone();
            let mut job = handler.job_properties(&table);
            for key in handler.session_keys() {
                if let Some(v) = self.setting(key) {
                    job.0.insert(key.to_string(), v);
                }
            }
            return Ok(crate::task::Task::abortable(async move {
                let mode = match (&partitioned, overwrite) {
                    (_, false) => WriteMode::Append,
                    (None, true) => WriteMode::Overwrite,
                    (Some((view, spec)), true) => {
                        let touched = touched_partitions(&ctx, &plan, view, spec).await?;
                        if touched.is_empty() {
                            // No row: no partition to replace.
                            WriteMode::Append
                        } else {
                            WriteMode::OverwritePartitions(touched)
                        }
                    }
                };
                let failed = |e: apiary_storage::handler::HandlerError| {
                    SqlError::execution_caused(
                        format!("org.apache.hadoop.hive.ql.exec.MoveTask. {e}"),
                        e,
                    )
                };
                let hook = handler.meta_hook();
                if let Some(h) = hook {
                    h.pre_insert_table(&table, overwrite)
                        .await
                        .map_err(failed)?;
                }
                let stream = crate::prepared::execute(&ctx, plan).await?;
                let rows = match handler.insert(&table, job, stream, mode).await {
                    Ok(rows) => rows,
                    Err(e) => {
                        if let Some(h) = hook {
                            if let Err(r) = h.rollback_insert_table(&table, overwrite).await {
                                tracing::warn!(error = %r, "rollback hook of INSERT failed");
                            }
                        }
                        return Err(failed(e));
                    }
                };
                if let Some(h) = hook {
                    h.commit_insert_table(&table, overwrite)
                        .await
                        .map_err(failed)?;
                }
                tracing::info!(table = %table.qualified_name(), rows, overwrite, "insert into a non-native table committed");
                Ok(())
            }));
        }
        let spec = partition_values(table, partition.as_ref())?;
        let dynamic = spec.iter().filter(|v| v.is_none()).count();
        let owned_root = if overwrite {
            Some(owned_root_for(table, "overwrite")?)
        } else {
            None
        };
        let plan = self.insert_plan(table, query, columns, dynamic).await?;
        let ctx = self.context().clone();
        let server_tag = self.server_tag().to_string();
        let metastore = self.metastore().clone();
        let table = table.clone();
        Ok(crate::task::Task::abortable(async move {
            let stream = crate::prepared::execute(&ctx, plan).await?;
            let parts = metastore
                .list_partitions(&table.database, &table.name)
                .await?;
            let dirs: BTreeMap<Vec<String>, Option<String>> = parts
                .iter()
                .map(|p| (p.values.clone(), p.sd.location.clone()))
                .collect();
            let staged = write::insert(
                &table,
                &InsertSpec {
                    partition: spec,
                    overwrite,
                    owned_root,
                    server_tag,
                },
                stream,
                &dirs,
            )
            .await
            .map_err(move_task_error)?;
            // The decision to commit is durable now: partitions first (still empty), then
            // the files; recovery at start-up repeats both if a crash comes in between.
            failpoint("insert.after_manifest").await?;
            register_partitions(metastore.as_ref(), &table, &staged.manifest).await?;
            failpoint("insert.after_partitions").await?;
            let rows = staged.manifest.rows;
            let files = match tokio::task::spawn_blocking(move || staged.commit()).await {
                Ok(r) => r.map_err(move_task_error)?,
                Err(e) => {
                    return Err(SqlError::execution_caused(
                        format!("org.apache.hadoop.hive.ql.exec.MoveTask. file task failed: {e}"),
                        e,
                    ))
                }
            };
            tracing::info!(table = %table.qualified_name(), rows, files, "insert committed");
            Ok(())
        }))
    }

    /// An INSERT's query planned: reordered by an explicit column list (NULL for the columns
    /// it leaves out), and checked to give the table's data columns plus `dynamic` partition
    /// values.
    pub(super) async fn insert_plan(
        &mut self,
        table: &Table,
        query: &str,
        columns: &[String],
        dynamic: usize,
    ) -> Result<LogicalPlan, SqlError> {
        // A VALUES row's DEFAULT: the target column's enabled DEFAULT, else NULL.
        let targets: Vec<String> = if columns.is_empty() {
            written_columns(table, dynamic)
                .into_iter()
                .map(|c| c.name.clone())
                .collect()
        } else {
            columns.to_vec()
        };
        let filled =
            crate::parser::values_with_defaults(query, &self.default_texts(table, &targets))?;
        let mut plan = self.plan_query(filled.as_deref().unwrap_or(query)).await?;
        if !columns.is_empty() {
            // A column the list leaves out gets its enabled DEFAULT, else NULL.
            let omitted: Vec<&str> = table
                .sd
                .columns
                .iter()
                .filter(|c| !columns.contains(&c.name))
                .map(|c| c.name.as_str())
                .collect();
            let defaults = self.defaults_of(table, &omitted).await?;
            plan = self.reorder_columns(plan, table, columns, dynamic, &defaults)?;
        }
        let got = plan.schema().fields().len();
        let want = table.sd.columns.len() + dynamic;
        if got != want {
            return Err(SqlError::hive_at(
                HiveError::TargetTableColumnMismatch,
                "Line 1:12 ",
                format!(
                    " '{}': Table insclause-0 has {want} columns, but query has {got} columns.",
                    table.name
                ),
            ));
        }
        let plan = self.as_table_types(plan, table, dynamic)?;
        crate::statement::constraint::enforce(self.context(), plan, table, dynamic)
    }

    /// The rows converted to the table's column types (the data columns, then the last
    /// `dynamic` partition keys) as `CAST` converts them, so an INSERT stores what a CAST of
    /// the same value gives: a number into a TIMESTAMP is milliseconds when it is an integer
    /// and seconds otherwise, text into an integer is read as Hive reads it, and a value that
    /// does not convert is NULL. Columns of the table's type, and complex columns (which the
    /// writers convert themselves), pass as they are.
    fn as_table_types(
        &self,
        plan: LogicalPlan,
        table: &Table,
        dynamic: usize,
    ) -> Result<LogicalPlan, SqlError> {
        use arrow::datatypes::DataType;
        use datafusion::execution::FunctionRegistry as _;
        use datafusion::logical_expr::{Expr, LogicalPlanBuilder, TryCast};
        let targets = written_columns(table, dynamic);
        let fields = plan.schema().fields().clone();
        let given = plan.schema().columns();
        let mut changed = false;
        let mut exprs = Vec::with_capacity(targets.len());
        for ((field, given), column) in fields.iter().zip(given).zip(targets) {
            let declared = apiary_storage::native::column_field(column)
                .map_err(|e| SqlError::semantic(e.to_string()))?;
            // Under the table's names: a query may give two columns one name (`SELECT d, d`).
            let value = Expr::Column(given);
            let (from, to) = (field.data_type(), declared.data_type());
            if matches!(to, DataType::Union(..)) && !matches!(from, DataType::Union(..)) {
                // Hive converts a union only from a union.
                return Err(SqlError::hive_at(
                    HiveError::TargetTableColumnMismatch,
                    "Line 1:12 ",
                    format!(
                        " '{}': Cannot convert column {} from {} to {}.",
                        table.name,
                        exprs.len(),
                        apiary_storage::types::HiveType::of_field(field),
                        apiary_storage::types::HiveType::of_field(&declared),
                    ),
                ));
            }
            if from == to || to.is_nested() {
                exprs.push(value.alias(&column.name));
                continue;
            }
            changed = true;
            let text = matches!(
                from,
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            );
            let udf = |name: &str| self.context().udf(name).map_err(SqlError::from_planning);
            let converted = if to == &DataType::Utf8 {
                // As CAST(x AS STRING) writes it (a DOUBLE as Java writes it: 1.0E10).
                udf(apiary_hive_functions::HIVE_CAST_TO_STRING)?.call(vec![value])
            } else {
                let value = if to.is_integer() && text {
                    udf(apiary_hive_functions::HIVE_INTEGER_TEXT)?.call(vec![value])
                } else {
                    value
                };
                Expr::TryCast(TryCast::new(Box::new(value), to.clone()))
            };
            exprs.push(converted.alias(&column.name));
        }
        if !changed {
            return Ok(plan);
        }
        LogicalPlanBuilder::from(plan)
            .project(exprs)
            .and_then(|b| b.build())
            .map_err(SqlError::from_planning)
    }

    pub(super) fn reorder_columns(
        &self,
        plan: LogicalPlan,
        table: &Table,
        columns: &[String],
        dynamic: usize,
        defaults: &std::collections::HashMap<String, datafusion::common::ScalarValue>,
    ) -> Result<LogicalPlan, SqlError> {
        use datafusion::logical_expr::{col, lit, LogicalPlanBuilder};
        let fields = plan.schema().fields().clone();
        // The dynamic partition columns are the last `dynamic` ones; the list may name them
        // (`INSERT INTO t (a, p) ..`), else their values follow the listed columns.
        let keys = &table.partition_keys;
        let dynamic_keys = &keys[keys.len().saturating_sub(dynamic)..];
        let unlisted = dynamic_keys
            .iter()
            .filter(|k| !columns.contains(&k.name))
            .count();
        if fields.len() != columns.len() + unlisted {
            return Err(SqlError::hive(
                HiveError::TargetTableColumnMismatch,
                format!(
                    " '{}': Table insclause-0 has {} columns, but query has {} columns.",
                    table.name,
                    columns.len() + unlisted,
                    fields.len()
                ),
            ));
        }
        for c in columns {
            let known = table.sd.columns.iter().any(|x| &x.name == c)
                || dynamic_keys.iter().any(|k| &k.name == c);
            if !known {
                return Err(SqlError::hive(HiveError::InvalidColumn, format!(" {c}")));
            }
        }
        let field = |i: usize| col(datafusion::common::Column::from_name(fields[i].name()));
        let mut exprs = Vec::new();
        for c in &table.sd.columns {
            match columns.iter().position(|x| x == &c.name) {
                Some(i) => exprs.push(field(i).alias(&c.name)),
                None => {
                    let value = defaults
                        .get(&c.name)
                        .cloned()
                        .unwrap_or(datafusion::common::ScalarValue::Null);
                    exprs.push(lit(value).alias(&c.name))
                }
            }
        }
        let mut next_unlisted = columns.len();
        for k in dynamic_keys {
            match columns.iter().position(|x| x == &k.name) {
                Some(i) => exprs.push(field(i).alias(&k.name)),
                None => {
                    exprs.push(field(next_unlisted).alias(&k.name));
                    next_unlisted += 1;
                }
            }
        }
        LogicalPlanBuilder::from(plan)
            .project(exprs)
            .and_then(|b| b.build())
            .map_err(SqlError::from_planning)
    }
}

/// The value of each partition key an INSERT's PARTITION clause gives (None: dynamic).
fn partition_values(
    table: &Table,
    partition: Option<&PartitionSpec>,
) -> Result<Vec<Option<String>>, SqlError> {
    Ok(match (partition, table.partition_keys.is_empty()) {
        (None, true) => vec![],
        (Some(_), true) => {
            return Err(SqlError::hive(
                HiveError::PartitionSpecOnUnpartitioned,
                format!(" {}", table.qualified_name()),
            ))
        }
        // Hive 3+ (HIVE-19083): no PARTITION clause is every partition column dynamic.
        (None, false) => vec![None; table.partition_keys.len()],
        (Some(spec), false) => {
            check_spec_keys(table, spec)?;
            if spec.len() != table.partition_keys.len() {
                return Err(SqlError::hive(
                    HiveError::TargetTableColumnMismatch,
                    format!(
                        " '{}': Partition spec {} does not name every partition column",
                        table.name,
                        spec_text(spec)
                    ),
                ));
            }
            let values: Vec<Option<String>> = table
                .partition_keys
                .iter()
                .map(|k| spec_value(spec, &k.name))
                .collect();
            // Dynamic values follow the static ones (Hive's rule): they are the query's last
            // columns, in the keys' order.
            if let Some(d) = values.iter().position(Option::is_none) {
                if let Some(s) = values[d..].iter().position(Option::is_some) {
                    return Err(SqlError::hive(
                        HiveError::DynamicBeforeStatic,
                        format!(" '{}'", table.partition_keys[d + s].name),
                    ));
                }
            }
            values
        }
    })
}

/// A non-native table whose handler keeps its own partitioning, seen as a partitioned table:
/// the columns named in [`PARTITION_COLUMNS`] (its last columns) as partition keys. None when
/// it has none.
fn handler_partitions(table: &Table, handler_partitions: bool) -> Option<Table> {
    let names = table.parameters.get(PARTITION_COLUMNS)?;
    if !handler_partitions {
        return None;
    }
    let names: Vec<&str> = names.split(',').map(str::trim).collect();
    let mut view = table.clone();
    let (keys, data): (Vec<Column>, Vec<Column>) = std::mem::take(&mut view.sd.columns)
        .into_iter()
        .partition(|c| names.contains(&c.name.as_str()));
    view.sd.columns = data;
    view.partition_keys = keys;
    (!view.partition_keys.is_empty()).then_some(view)
}

/// The rows of an INSERT into `view` (its data columns, then the dynamic partition values) as
/// the table's columns: data columns, then every partition column, a static one its value.
fn with_partition_values(
    plan: LogicalPlan,
    view: &Table,
    spec: &[Option<String>],
) -> Result<LogicalPlan, SqlError> {
    use datafusion::logical_expr::{lit, Expr, LogicalPlanBuilder};
    let mut given = plan.schema().columns().into_iter().map(Expr::Column);
    // Data columns under the table's names (a query column may share a partition column's).
    let mut exprs: Vec<Expr> = given
        .by_ref()
        .zip(&view.sd.columns)
        .map(|(e, c)| e.alias(&c.name))
        .collect();
    for (key, value) in view.partition_keys.iter().zip(spec) {
        let e = match value {
            Some(v) => lit(v.clone()),
            None => given.next().ok_or_else(|| {
                SqlError::semantic(format!("no value for partition column {}", key.name))
            })?,
        };
        exprs.push(e.alias(&key.name));
    }
    LogicalPlanBuilder::from(plan)
        .project(exprs)
        .and_then(|b| b.build())
        .map_err(SqlError::from_planning)
}

/// The partitions an INSERT OVERWRITE into `view` replaces: the static values, and each
/// combination of dynamic values its rows hold (read by running the query for them first).
async fn touched_partitions(
    ctx: &datafusion::prelude::SessionContext,
    plan: &LogicalPlan,
    view: &Table,
    spec: &[Option<String>],
) -> Result<Vec<Vec<(String, Option<String>)>>, SqlError> {
    use datafusion::logical_expr::{cast, col, LogicalPlanBuilder};
    let names: Vec<&str> = view
        .partition_keys
        .iter()
        .map(|k| k.name.as_str())
        .collect();
    if spec.iter().all(Option::is_some) {
        return Ok(vec![names
            .iter()
            .zip(spec)
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect()]);
    }
    // Each value as the table's column holds it (a DOUBLE 1.0 into an INT column is 1), then
    // as text.
    let keys = view
        .partition_keys
        .iter()
        .map(|k| {
            let declared = apiary_storage::native::column_field(k)
                .map_err(|e| SqlError::semantic(e.to_string()))?;
            let value = col(datafusion::common::Column::new_unqualified(&k.name));
            Ok(cast(
                cast(value, declared.data_type().clone()),
                arrow::datatypes::DataType::Utf8,
            )
            .alias(&k.name))
        })
        .collect::<Result<Vec<_>, SqlError>>()?;
    let distinct = LogicalPlanBuilder::from(plan.clone())
        .project(keys)
        .and_then(|b| b.distinct())
        .and_then(|b| b.build())
        .map_err(SqlError::from_planning)?;
    let batches = ctx
        .execute_logical_plan(distinct)
        .await
        .map_err(SqlError::from_planning)?
        .collect()
        .await
        .map_err(SqlError::from_execution)?;
    let mut touched = Vec::new();
    for b in &batches {
        for row in 0..b.num_rows() {
            touched.push(
                names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| {
                        let values = b.column(i);
                        let text = (!values.is_null(row))
                            .then(|| apiary_hive_types::render::cell_text(values.as_ref(), row))
                            .flatten();
                        (n.to_string(), text)
                    })
                    .collect(),
            );
        }
    }
    Ok(touched)
}
