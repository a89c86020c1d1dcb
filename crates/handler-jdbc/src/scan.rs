//! Reading a JDBC table: a DataFusion table provider that pushes projection, filters and
//! limit into one remote query (when they mean the same there), and the plan node that runs
//! it and streams its rows.

use std::fmt;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::datasource::TableType as DfTableType;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    ReplaceChildrenOptions,
};
use datafusion::sql::unparser::dialect::{Dialect, MySqlDialect, PostgreSqlDialect, SqliteDialect};
use datafusion::sql::unparser::Unparser;

use crate::remote::{fetch, quoted, Kind, Remote};

#[derive(Debug)]
pub(crate) struct JdbcTable {
    pub(crate) remote: Remote,
    pub(crate) schema: SchemaRef,
    /// The remote column name of each field.
    pub(crate) names: Vec<String>,
    pub(crate) hive_name: String,
    /// Whether filters, limits and aggregates run remotely (`apiary.jdbc.pushdown`).
    pub(crate) pushdown: bool,
}

impl JdbcTable {
    fn dialect(&self) -> Box<dyn Dialect> {
        match self.remote.kind {
            Kind::Postgres => Box::new(PostgreSqlDialect {}),
            Kind::Sqlite => Box::new(SqliteDialect {}),
            Kind::Mysql => Box::new(MySqlDialect {}),
        }
    }

    /// Whether an expression is a string (a column of a string type or a string literal).
    pub(crate) fn is_text(&self, e: &Expr) -> bool {
        let t = match e {
            Expr::Column(c) => match self.schema.field_with_name(&c.name) {
                Ok(f) => f.data_type().clone(),
                Err(_) => return true,
            },
            Expr::Literal(v, _) => v.data_type(),
            _ => return true,
        };
        matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
    }

    /// A filter as remote SQL, if it can run there with the same meaning.
    pub(crate) fn filter_sql(&self, e: &Expr) -> Option<String> {
        if !self.pushdown {
            return None;
        }
        let kind = self.remote.kind;
        let mut ok = true;
        let _ = e.apply(|n| {
            let allowed = match n {
                Expr::Column(_) | Expr::IsNull(_) | Expr::IsNotNull(_) | Expr::Not(_) => true,
                Expr::InList(l) => kind != Kind::Mysql || !self.is_text(&l.expr),
                // Strings order by the remote collation, not by bytes as here.
                Expr::Between(b) => !self.is_text(&b.expr),
                Expr::BinaryExpr(b) => {
                    use datafusion::logical_expr::Operator as Op;
                    let text = self.is_text(&b.left) || self.is_text(&b.right);
                    match b.op {
                        Op::Lt | Op::LtEq | Op::Gt | Op::GtEq => !text,
                        // MySQL compares strings case-insensitively by default.
                        Op::Eq | Op::NotEq => !(text && kind == Kind::Mysql),
                        Op::And | Op::Or => true,
                        // Integer division and overflow differ between systems.
                        _ => false,
                    }
                }
                // Only PostgreSQL's LIKE is case-sensitive.
                Expr::Like(l) => kind == Kind::Postgres && !l.case_insensitive,
                Expr::Literal(v, _) => match kind {
                    Kind::Postgres => {
                        !matches!(v.data_type(), DataType::Binary | DataType::List(_))
                    }
                    Kind::Sqlite | Kind::Mysql => {
                        v.data_type().is_numeric()
                            || matches!(v.data_type(), DataType::Utf8 | DataType::Boolean)
                    }
                },
                _ => false,
            };
            if !allowed {
                ok = false;
                return Ok(TreeNodeRecursion::Stop);
            }
            Ok(TreeNodeRecursion::Continue)
        });
        if !ok {
            return None;
        }
        let renamed = e
            .clone()
            .transform(|n| {
                Ok(match n {
                    Expr::Column(c) => {
                        let i = self.schema.index_of(&c.name).ok();
                        let remote = i.map(|i| self.names[i].clone()).unwrap_or(c.name);
                        Transformed::yes(Expr::Column(datafusion::common::Column::new_unqualified(
                            remote,
                        )))
                    }
                    other => Transformed::no(other),
                })
            })
            .ok()?
            .data;
        let dialect = self.dialect();
        let unparser = Unparser::new(dialect.as_ref());
        unparser.expr_to_sql(&renamed).ok().map(|s| s.to_string())
    }

    fn select_sql(&self, projection: &[usize], filters: &[String], limit: Option<usize>) -> String {
        let cols: Vec<String> = if projection.is_empty() {
            vec!["1".into()]
        } else {
            projection
                .iter()
                .map(|&i| {
                    let col = quoted(self.remote.kind, &self.names[i]);
                    // Binary travels as hex (decoded in to_batch), everything else as text.
                    let binary = self.schema.field(i).data_type() == &DataType::Binary;
                    match (self.remote.kind, binary) {
                        (Kind::Postgres, true) => format!("encode({col}, 'hex')"),
                        (Kind::Postgres, false) => format!("CAST({col} AS TEXT)"),
                        (Kind::Sqlite | Kind::Mysql, true) => format!("HEX({col})"),
                        (Kind::Sqlite | Kind::Mysql, false) => col,
                    }
                })
                .collect()
        };
        let from = match (&self.remote.table, &self.remote.query) {
            (Some(t), _) => t.sql(),
            (None, Some(q)) => format!("({q}) AS apiary_q"),
            (None, None) => "(SELECT 1) AS apiary_q".into(),
        };
        let mut sql = format!("SELECT {} FROM {from}", cols.join(", "));
        if !filters.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(
                &filters
                    .iter()
                    .map(|f| format!("({f})"))
                    .collect::<Vec<_>>()
                    .join(" AND "),
            );
        }
        if let Some(n) = limit {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        sql
    }
}

#[async_trait]
impl TableProvider for JdbcTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> DfTableType {
        DfTableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DfResult<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| {
                if self.filter_sql(f).is_some() {
                    TableProviderFilterPushDown::Exact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let projection: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.schema.fields().len()).collect(),
        };
        let pushed: Vec<String> = filters.iter().filter_map(|f| self.filter_sql(f)).collect();
        if pushed.len() != filters.len() {
            return Err(DataFusionError::Internal(
                "a filter the JDBC table did not accept was pushed to it".into(),
            ));
        }
        let sql = self.select_sql(&projection, &pushed, limit.filter(|_| self.pushdown));
        let schema = Arc::new(self.schema.project(&projection)?);
        Ok(Arc::new(JdbcScanExec::new(
            self.remote.clone(),
            sql,
            schema,
            self.hive_name.clone(),
        )))
    }
}

/// Runs one query in the remote database and streams its rows.
#[derive(Debug)]
pub struct JdbcScanExec {
    remote: Remote,
    sql: String,
    schema: SchemaRef,
    table: String,
    properties: Arc<PlanProperties>,
}

impl JdbcScanExec {
    pub(crate) fn new(remote: Remote, sql: String, schema: SchemaRef, table: String) -> Self {
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Self {
            remote,
            sql,
            schema,
            table,
            properties,
        }
    }

    /// The SQL sent to the remote database.
    pub fn sql(&self) -> &str {
        &self.sql
    }
}

impl DisplayAs for JdbcScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "JdbcScan: table={} database={} remote_query={}",
            self.table,
            self.remote.kind.name(),
            self.sql
        )
    }
}

impl ExecutionPlan for JdbcScanExec {
    fn name(&self) -> &str {
        "JdbcScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    #[allow(deprecated)]
    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn execute(
        &self,
        _partition: usize,
        _context: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        let (tx, rx) = tokio::sync::mpsc::channel::<DfResult<RecordBatch>>(2);
        let remote = self.remote.clone();
        let sql = self.sql.clone();
        let schema = self.schema.clone();
        tracing::info!(table = %self.table, remote_query = %sql, "JDBC scan");
        let table = self.table.clone();
        tokio::spawn(async move {
            let tx2 = tx.clone();
            match fetch(remote, sql, schema, tx).await {
                Ok(rows) => tracing::info!(table = %table, rows, "JDBC scan received its rows"),
                Err(e) => {
                    let _ = tx2.send(Err(DataFusionError::External(Box::new(e)))).await;
                }
            }
        });
        let stream =
            futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|b| (b, rx)) });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            stream,
        )))
    }
}
