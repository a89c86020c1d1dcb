//! Reading a Delta table: deltalake's scan (projection, filters and limit pushed into it, files
//! skipped by partition values and statistics) under a projection that gives the declared
//! names and Hive's types (a Delta `timestamp`, an instant, is read as Hive's TIMESTAMP in
//! UTC).

use std::sync::Arc;

use apiary_metastore::Table;
use apiary_storage::handler::HandlerResult;
use apiary_storage::native::column_field;
use datafusion::catalog::view::ViewTable;
use datafusion::catalog::TableProvider;
use datafusion::common::Column;
use datafusion::datasource::provider_as_source;
use datafusion::logical_expr::{cast, Expr, LogicalPlanBuilder};
use deltalake::DeltaTable;

use crate::errors::{def_err, remote_err};

/// The table's reader over the Delta table `delta` (at the version it was loaded at).
pub(crate) async fn provider(
    table: &Table,
    delta: &DeltaTable,
) -> HandlerResult<Arc<dyn TableProvider>> {
    let scan = delta.table_provider().await.map_err(remote_err)?;
    let found = scan.schema();
    let qualifier = table.name.clone();
    let columns = table
        .sd
        .columns
        .iter()
        .map(|c| {
            let declared = column_field(c).map_err(|e| def_err(e.to_string()))?;
            let Some(field) = found
                .fields()
                .iter()
                .find(|f| f.name().eq_ignore_ascii_case(&c.name))
            else {
                return Err(def_err(format!(
                    "column {} of table {} is not in its Delta table",
                    c.name,
                    table.qualified_name()
                )));
            };
            let value = Expr::Column(Column::new(Some(qualifier.clone()), field.name()));
            let value = if field.data_type() == declared.data_type() {
                value
            } else {
                cast(value, declared.data_type().clone())
            };
            Ok(value.alias(&c.name))
        })
        .collect::<HandlerResult<Vec<_>>>()?;
    let plan = LogicalPlanBuilder::scan(qualifier, provider_as_source(scan), None)
        .and_then(|b| b.project(columns))
        .and_then(|b| b.build())
        .map_err(remote_err)?;
    Ok(Arc::new(ViewTable::new(plan, None)))
}
