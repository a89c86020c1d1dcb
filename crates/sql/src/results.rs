//! What a query's result looks like to a Hive client beyond its rows' values: Hive's unique
//! column names (`hive.resultset.use.unique.column.names`, which columns are named
//! `table.column`) and the order Hive gives rows that no ORDER BY orders but a LIMIT picks
//! from (windowed rows by their windows' keys, grouped rows by their keys).

use std::sync::Arc;

use datafusion::logical_expr::LogicalPlan;

use crate::error::SqlError;

/// The key that has Hive name result columns `t.col` where the query names a table's column
/// through `*` or `t.col`.
pub(crate) const UNIQUE_COLUMN_NAMES: &str = "hive.resultset.use.unique.column.names";

/// A query body's SELECT (in parentheses or not); none for a set operation or VALUES.
pub(crate) fn outer_select(
    body: &datafusion::sql::sqlparser::ast::SetExpr,
) -> Option<&datafusion::sql::sqlparser::ast::Select> {
    use datafusion::sql::sqlparser::ast::SetExpr;
    match body {
        SetExpr::Select(s) => Some(s),
        SetExpr::Query(q) => outer_select(&q.body),
        _ => None,
    }
}

/// What a select list item gives the result, for Hive's unique column names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Item {
    /// `*` or `t.*`: columns named by their table.
    Wildcard,
    /// A bare column, `key`: named without its table.
    Bare,
    /// Anything else: `t.col` is named by its table; aliases and expressions have none.
    Other,
}

pub(crate) fn select_items(select: &datafusion::sql::sqlparser::ast::Select) -> Vec<Item> {
    use datafusion::sql::sqlparser::ast::{Expr, SelectItem};
    select
        .projection
        .iter()
        .map(|item| match item {
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => Item::Wildcard,
            SelectItem::UnnamedExpr(Expr::Identifier(_)) => Item::Bare,
            _ => Item::Other,
        })
        .collect()
}

/// Which of `n` result columns come from bare columns of the select list `items`. Each item
/// but a wildcard gives one column; the wildcards share the rest. With several wildcards the
/// items between them cannot be placed, and count as not bare.
pub(crate) fn bare_columns(items: &[Item], n: usize) -> Vec<bool> {
    let mut bare = vec![false; n];
    let wildcards = items.iter().filter(|i| **i == Item::Wildcard).count();
    let first = items.iter().position(|i| *i == Item::Wildcard);
    let last = items.iter().rposition(|i| *i == Item::Wildcard);
    let (Some(first), Some(last)) = (first, last) else {
        for (i, item) in items.iter().enumerate().take(n) {
            bare[i] = *item == Item::Bare;
        }
        return bare;
    };
    if items.len() - wildcards > n {
        return bare;
    }
    for (i, item) in items[..first].iter().enumerate() {
        bare[i] = *item == Item::Bare;
    }
    for (k, item) in items[last + 1..].iter().rev().enumerate() {
        bare[n - 1 - k] = *item == Item::Bare;
    }
    bare
}

/// A query whose rows come from window functions and that has no ORDER BY, its rows in the
/// order Hive gives them: Hive computes windows on rows sorted by their partition keys
/// (ascending, NULLs first) and the window's ORDER BY, and emits them in that order, so
/// `SELECT .., rank() OVER (PARTITION BY k ORDER BY v) .. LIMIT 10` answers the first
/// partitions. With windows of several specifications, the last one in the select list
/// orders the rows, as Hive computes it last. The sort goes right above the windows; only
/// projections, filters, limits and subquery aliases may stand between them and the top.
/// Under a LIMIT, grouped rows (GROUP BY without grouping sets, DISTINCT) are likewise sorted
/// by their keys, so `SELECT k, count(*) .. GROUP BY k LIMIT 10` gives Hive's first keys.
pub(crate) fn in_window_order(plan: LogicalPlan) -> Result<LogicalPlan, SqlError> {
    place_window_sort(plan, &[], false)
        .map(|t| t.data)
        .map_err(SqlError::from_planning)
}

/// [`in_window_order`] below `plan`; `named` are the columns the select list above names,
/// last first; `limited`, whether a LIMIT above takes some of the rows: then grouped rows
/// (GROUP BY, DISTINCT) come sorted by their keys, NULLs first, as Hive's reducer emits
/// them, so the LIMIT keeps Hive's rows.
fn place_window_sort(
    plan: LogicalPlan,
    named: &[String],
    limited: bool,
) -> datafusion::common::Result<datafusion::common::tree_node::Transformed<LogicalPlan>> {
    use datafusion::common::tree_node::Transformed;
    use datafusion::logical_expr::{Distinct, Expr, LogicalPlanBuilder, Projection};
    let sorted_by_columns = |plan: LogicalPlan, n: usize| {
        let keys: Vec<datafusion::logical_expr::SortExpr> = plan
            .schema()
            .columns()
            .into_iter()
            .take(n)
            .map(|c| Expr::Column(c).sort(true, true))
            .collect();
        LogicalPlanBuilder::from(plan).sort(keys)?.build()
    };
    match plan {
        LogicalPlan::Aggregate(ref a)
            if limited
                && !a.group_expr.is_empty()
                && !a
                    .group_expr
                    .iter()
                    .any(|e| matches!(e, Expr::GroupingSet(_))) =>
        {
            let n = a.group_expr.len();
            Ok(Transformed::yes(sorted_by_columns(plan, n)?))
        }
        LogicalPlan::Distinct(Distinct::All(_)) if limited => {
            let n = plan.schema().fields().len();
            Ok(Transformed::yes(sorted_by_columns(plan, n)?))
        }
        LogicalPlan::Window(_) => {
            let mut specs = Vec::new();
            let mut node = &plan;
            while let LogicalPlan::Window(w) = node {
                for e in &w.window_expr {
                    specs.push((e.schema_name().to_string(), e));
                }
                node = w.input.as_ref();
            }
            let chosen = named
                .iter()
                .find_map(|n| specs.iter().find(|(name, _)| name == n))
                .or_else(|| specs.first());
            let function = match chosen.map(|(_, e)| *e) {
                Some(Expr::Alias(a)) => a.expr.as_ref(),
                Some(e) => e,
                None => return Ok(Transformed::no(plan)),
            };
            let Expr::WindowFunction(f) = function else {
                return Ok(Transformed::no(plan));
            };
            let mut keys: Vec<datafusion::logical_expr::SortExpr> = f
                .params
                .partition_by
                .iter()
                .map(|e| e.clone().sort(true, true))
                .collect();
            keys.extend(f.params.order_by.iter().cloned());
            if keys.is_empty() {
                return Ok(Transformed::no(plan));
            }
            let sorted = LogicalPlanBuilder::from(plan).sort(keys)?.build()?;
            Ok(Transformed::yes(sorted))
        }
        LogicalPlan::Projection(p) => {
            // (Which window orders the rows matters only right above the windows.)
            let window_below = matches!(p.input.as_ref(), LogicalPlan::Window(_));
            let named: Vec<String> = p
                .expr
                .iter()
                .filter(|_| window_below)
                .rev()
                .flat_map(|e| {
                    let mut refs: Vec<String> = e
                        .column_refs()
                        .into_iter()
                        .map(|c| c.name.clone())
                        .collect();
                    refs.sort();
                    refs
                })
                .collect();
            let placed = place_window_sort(Arc::unwrap_or_clone(p.input.clone()), &named, limited)?;
            if !placed.transformed {
                return Ok(Transformed::no(LogicalPlan::Projection(p)));
            }
            let projection = Projection::try_new(p.expr, Arc::new(placed.data))?;
            Ok(Transformed::yes(LogicalPlan::Projection(projection)))
        }
        LogicalPlan::Limit(_) | LogicalPlan::Filter(_) | LogicalPlan::SubqueryAlias(_) => {
            let Some(input) = plan.inputs().first().map(|i| (*i).clone()) else {
                return Ok(Transformed::no(plan));
            };
            let limited = limited || matches!(&plan, LogicalPlan::Limit(l) if l.fetch.is_some());
            let placed = place_window_sort(input, named, limited)?;
            if !placed.transformed {
                return Ok(Transformed::no(plan));
            }
            let exprs = plan.expressions();
            Ok(Transformed::yes(
                plan.with_new_exprs(exprs, vec![placed.data])?,
            ))
        }
        other => Ok(Transformed::no(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_columns_are_placed_around_wildcards() {
        use Item::{Bare, Other, Wildcard};
        assert_eq!(bare_columns(&[Bare, Other], 2), [true, false]);
        assert_eq!(
            bare_columns(&[Bare, Wildcard, Bare], 5),
            [true, false, false, false, true]
        );
        // Between two wildcards nothing can be placed.
        assert_eq!(
            bare_columns(&[Wildcard, Bare, Wildcard], 4),
            [false, false, false, false]
        );
        assert_eq!(bare_columns(&[Bare, Bare, Wildcard], 1), [false]);
    }
}
