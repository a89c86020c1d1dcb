//! Aggregates pushed into the remote database: an optimizer rule that turns a GROUP BY over
//! one JDBC table into one remote query (where the answer is the same there), read through
//! a table of that query.

use std::sync::Arc;

use arrow::datatypes::{DataType, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::tree_node::Transformed;
use datafusion::datasource::TableType as DfTableType;
use datafusion::error::Result as DfResult;
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;

use crate::remote::{quoted, Kind, Remote};
use crate::scan::{JdbcScanExec, JdbcTable};

/// Pushes an aggregation over one JDBC table (GROUP BY columns; COUNT, SUM, MIN, MAX, AVG of
/// columns; the table's pushed filters) into the remote SQL, so only the groups travel. Runs
/// after DataFusion's own rules have moved filters and projections into the scan.
#[derive(Debug, Default)]
pub struct AggregatePushdown;

impl datafusion::optimizer::OptimizerRule for AggregatePushdown {
    fn name(&self) -> &str {
        "jdbc_aggregate_pushdown"
    }

    fn apply_order(&self) -> Option<datafusion::optimizer::ApplyOrder> {
        Some(datafusion::optimizer::ApplyOrder::BottomUp)
    }

    fn rewrite(
        &self,
        plan: datafusion::logical_expr::LogicalPlan,
        _config: &dyn datafusion::optimizer::OptimizerConfig,
    ) -> DfResult<Transformed<datafusion::logical_expr::LogicalPlan>> {
        match push_aggregate(&plan)? {
            Some(new) => Ok(Transformed::yes(new)),
            None => Ok(Transformed::no(plan)),
        }
    }
}

fn push_aggregate(
    plan: &datafusion::logical_expr::LogicalPlan,
) -> DfResult<Option<datafusion::logical_expr::LogicalPlan>> {
    use datafusion::logical_expr::{LogicalPlan, LogicalPlanBuilder};
    let LogicalPlan::Aggregate(agg) = plan else {
        return Ok(None);
    };
    let LogicalPlan::TableScan(scan) = agg.input.as_ref() else {
        return Ok(None);
    };
    if scan.fetch.is_some() {
        return Ok(None);
    }
    let Ok(provider) = datafusion::datasource::source_as_provider(&scan.source) else {
        return Ok(None);
    };
    let Some(table) = provider
        .as_ref()
        .downcast_ref::<JdbcTable>()
        .filter(|t| t.pushdown)
    else {
        return Ok(None);
    };
    let column_sql = |e: &Expr| -> Option<String> {
        match e {
            Expr::Column(c) => {
                let i = table.schema.index_of(&c.name).ok()?;
                Some(quoted(table.remote.kind, &table.names[i]))
            }
            _ => None,
        }
    };
    let mut outputs: Vec<String> = Vec::new();
    let mut groups: Vec<String> = Vec::new();
    for g in &agg.group_expr {
        if table.remote.kind == Kind::Mysql && table.is_text(g) {
            // MySQL groups strings case-insensitively.
            return Ok(None);
        }
        let Some(sql) = column_sql(g) else {
            return Ok(None);
        };
        groups.push(sql.clone());
        outputs.push(sql);
    }
    for a in &agg.aggr_expr {
        let inner = match a {
            Expr::Alias(al) => al.expr.as_ref(),
            other => other,
        };
        let Expr::AggregateFunction(f) = inner else {
            return Ok(None);
        };
        let p = &f.params;
        if p.filter.is_some() || !p.order_by.is_empty() || p.null_treatment.is_some() {
            return Ok(None);
        }
        let name = f.func.name().to_ascii_lowercase();
        if !matches!(name.as_str(), "count" | "sum" | "min" | "max" | "avg") {
            return Ok(None);
        }
        // Only where the remote result is the same as here: strings order and (MySQL)
        // compare by collation, booleans have no MIN/MAX in PostgreSQL, SQLite keeps dates
        // as text.
        let arg_type = match p.args.as_slice() {
            [Expr::Column(c)] => table
                .schema
                .field_with_name(&c.name)
                .ok()
                .map(|f| f.data_type().clone()),
            _ => None,
        };
        let numeric = arg_type.as_ref().is_some_and(|t| t.is_numeric());
        let temporal = arg_type
            .as_ref()
            .is_some_and(|t| matches!(t, DataType::Date32 | DataType::Timestamp(_, _)));
        let fits = match name.as_str() {
            "sum" | "avg" => numeric,
            "min" | "max" => numeric || (temporal && table.remote.kind != Kind::Sqlite),
            _ => {
                !(p.distinct
                    && table.remote.kind == Kind::Mysql
                    && p.args.first().is_some_and(|a| table.is_text(a)))
            }
        };
        if !fits {
            return Ok(None);
        }
        let arg = match p.args.as_slice() {
            [Expr::Literal(v, _)] if name == "count" && !v.is_null() && !p.distinct => "*".into(),
            [e] => match column_sql(e) {
                Some(c) if p.distinct => format!("DISTINCT {c}"),
                Some(c) => c,
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        outputs.push(format!("{}({arg})", name.to_uppercase()));
    }
    let filters: Vec<String> = scan
        .filters
        .iter()
        .map(|f| table.filter_sql(f))
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default();
    if filters.len() != scan.filters.len() {
        return Ok(None);
    }
    let from = match (&table.remote.table, &table.remote.query) {
        (Some(t), _) => t.sql(),
        (None, Some(q)) => format!("({q}) AS apiary_q"),
        (None, None) => return Ok(None),
    };
    let select: Vec<String> = outputs
        .iter()
        .enumerate()
        .map(|(i, o)| match table.remote.kind {
            Kind::Postgres => format!("CAST({o} AS TEXT) AS c{i}"),
            Kind::Sqlite | Kind::Mysql => format!("{o} AS c{i}"),
        })
        .collect();
    let mut sql = format!("SELECT {} FROM {from}", select.join(", "));
    if !filters.is_empty() {
        let f: Vec<String> = filters.iter().map(|f| format!("({f})")).collect();
        sql.push_str(&format!(" WHERE {}", f.join(" AND ")));
    }
    if !groups.is_empty() {
        sql.push_str(&format!(" GROUP BY {}", groups.join(", ")));
    }
    // The remote result, one column per output of the aggregation, named c0, c1, ...
    let out_schema = agg.schema.as_ref();
    let fields: Vec<arrow::datatypes::Field> = out_schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| arrow::datatypes::Field::new(format!("c{i}"), f.data_type().clone(), true))
        .collect();
    let pushed = JdbcQueryTable {
        remote: table.remote.clone(),
        sql,
        schema: Arc::new(Schema::new(fields)),
        hive_name: table.hive_name.clone(),
    };
    let source = datafusion::datasource::provider_as_source(Arc::new(pushed));
    let scan_plan = LogicalPlanBuilder::scan("jdbc_pushdown", source, None)?.build()?;
    let exprs: Vec<Expr> = out_schema
        .iter()
        .enumerate()
        .map(|(i, (qualifier, f))| {
            Expr::Column(datafusion::common::Column::new(
                Some("jdbc_pushdown"),
                format!("c{i}"),
            ))
            .alias_qualified(qualifier.cloned(), f.name())
        })
        .collect();
    Ok(Some(
        LogicalPlanBuilder::from(scan_plan)
            .project(exprs)?
            .build()?,
    ))
}

/// A query already written in the remote SQL (an aggregation pushed down).
#[derive(Debug)]
struct JdbcQueryTable {
    remote: Remote,
    sql: String,
    schema: SchemaRef,
    hive_name: String,
}

#[async_trait]
impl TableProvider for JdbcQueryTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> DfTableType {
        DfTableType::Base
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let (sql, schema) = match projection {
            Some(p) if p.len() != self.schema.fields().len() => {
                let cols: Vec<String> = p
                    .iter()
                    .map(|&i| self.schema.field(i).name().clone())
                    .collect();
                let cols = if cols.is_empty() {
                    vec!["1".to_string()]
                } else {
                    cols
                };
                (
                    format!(
                        "SELECT {} FROM ({}) AS apiary_agg",
                        cols.join(", "),
                        self.sql
                    ),
                    Arc::new(self.schema.project(p)?),
                )
            }
            _ => (self.sql.clone(), self.schema.clone()),
        };
        Ok(Arc::new(JdbcScanExec::new(
            self.remote.clone(),
            sql,
            schema,
            self.hive_name.clone(),
        )))
    }
}
