//! Hive's GROUP BY forms DataFusion spells differently: `WITH ROLLUP`, `WITH CUBE`,
//! `GROUPING SETS` and `GROUPING__ID` (Hive's bit order).

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    visit_expressions_mut, CastKind, DataType, Expr, GroupByExpr, GroupByWithModifier, Ident,
    Query, SelectItem, SetExpr, VisitorMut,
};

use crate::dialect::syntax::call;

/// Hive's `GROUP BY a, b WITH ROLLUP | WITH CUBE | GROUPING SETS (..)` become DataFusion's
/// `ROLLUP (a, b)`, `CUBE (a, b)` and `GROUPING SETS (..)` (DataFusion would ignore the
/// modifiers and group by the plain list); other modifiers are refused.
pub(crate) struct GroupByModifiers {
    pub(crate) refused: Option<String>,
}

impl VisitorMut for GroupByModifiers {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        if let SetExpr::Select(select) = &mut *query.body {
            // GROUPING__ID in ORDER BY too, where it names the select's grouping.
            if let Some(columns) = grouping_columns(&select.group_by) {
                if let Some(order_by) = &mut query.order_by {
                    let _ = visit_expressions_mut(order_by, |e| {
                        replace_grouping_id(e, &columns);
                        ControlFlow::<()>::Continue(())
                    });
                }
            }
        }
        let mut bodies = vec![&mut *query.body];
        while let Some(body) = bodies.pop() {
            match body {
                SetExpr::Select(select) => {
                    if let Some(columns) = grouping_columns(&select.group_by) {
                        for item in &mut select.projection {
                            if let SelectItem::UnnamedExpr(e) = item {
                                if is_grouping_id(e) {
                                    *item = SelectItem::ExprWithAlias {
                                        expr: e.clone(),
                                        alias: Ident::new("grouping__id"),
                                    };
                                }
                            }
                        }
                        let _ = visit_expressions_mut(&mut select.projection, |e| {
                            replace_grouping_id(e, &columns);
                            ControlFlow::<()>::Continue(())
                        });
                        let _ = visit_expressions_mut(&mut select.having, |e| {
                            replace_grouping_id(e, &columns);
                            ControlFlow::<()>::Continue(())
                        });
                    }
                    self.rewrite(&mut select.group_by)
                }
                SetExpr::SetOperation { left, right, .. } => {
                    bodies.push(left);
                    bodies.push(right);
                }
                // Nested queries are visited on their own.
                _ => {}
            }
        }
        ControlFlow::Continue(())
    }
}

impl GroupByModifiers {
    fn rewrite(&mut self, group_by: &mut GroupByExpr) {
        let (exprs, modifiers) = match group_by {
            GroupByExpr::Expressions(exprs, modifiers) if !modifiers.is_empty() => {
                (exprs, modifiers)
            }
            GroupByExpr::All(modifiers) if !modifiers.is_empty() => {
                self.refused = Some(format!("ALL {}", modifiers[0]));
                return;
            }
            _ => return,
        };
        for modifier in std::mem::take(modifiers) {
            let singles = || exprs.iter().map(|e| vec![e.clone()]).collect::<Vec<_>>();
            match modifier {
                GroupByWithModifier::Rollup => *exprs = vec![Expr::Rollup(singles())],
                GroupByWithModifier::Cube => *exprs = vec![Expr::Cube(singles())],
                GroupByWithModifier::GroupingSets(sets) => *exprs = vec![sets],
                other => {
                    self.refused = Some(other.to_string());
                    return;
                }
            }
        }
    }
}

/// The columns a GROUP BY with grouping sets groups by, in order (Hive's `GROUP BY a, b WITH
/// ROLLUP`, `.. GROUPING SETS (..)`, or `ROLLUP (a, b)` / `CUBE (..)` / `GROUPING SETS (..)`
/// as the list); None without grouping sets.
pub(crate) fn grouping_columns(group_by: &GroupByExpr) -> Option<Vec<Expr>> {
    let GroupByExpr::Expressions(exprs, modifiers) = group_by else {
        return None;
    };
    if !modifiers.is_empty() {
        return Some(exprs.clone());
    }
    let mut columns: Vec<Expr> = Vec::new();
    let mut sets = false;
    for e in exprs {
        let lists: Vec<&Vec<Expr>> = match e {
            Expr::Rollup(l) | Expr::Cube(l) | Expr::GroupingSets(l) => {
                sets = true;
                l.iter().collect()
            }
            other => {
                if !columns.contains(other) {
                    columns.push(other.clone());
                }
                continue;
            }
        };
        for c in lists.into_iter().flatten() {
            if !columns.contains(c) {
                columns.push(c.clone());
            }
        }
    }
    sets.then_some(columns)
}

pub(crate) fn is_grouping_id(e: &Expr) -> bool {
    matches!(e, Expr::Identifier(id) if id.value.eq_ignore_ascii_case("grouping__id"))
}

/// Hive's `GROUPING__ID`: a bit per grouping column, the first the most significant, set
/// where the row aggregates the column away: `grouping(a, b, ..)` as a BIGINT.
pub(crate) fn replace_grouping_id(e: &mut Expr, columns: &[Expr]) {
    if is_grouping_id(e) {
        *e = Expr::Cast {
            kind: CastKind::Cast,
            expr: Box::new(call("grouping", columns.to_vec())),
            data_type: DataType::BigInt(None),
            array: false,
            format: None,
        };
    }
}
