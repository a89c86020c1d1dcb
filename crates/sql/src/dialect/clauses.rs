//! Hive's SELECT clauses that DataFusion does not have, rewritten into ones it does:
//! `SORT BY`, `DISTRIBUTE BY` and `CLUSTER BY` (one reducer: a total order), `TABLESAMPLE`,
//! and `LATERAL VIEW [OUTER]`: the relation wrapped in a SELECT of its columns and the
//! columns of Hive's table-generating function (`explode`, `stack`, .., whose columns
//! [`apiary_hive_functions::generators`] plans, also for one alone in a select list); and a
//! window's keys that name the select list's aliases.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::helpers::attached_token::AttachedToken;
use datafusion::sql::sqlparser::ast::{
    ExcludeSelectItem, Expr, Ident, LimitClause, ObjectName, ObjectNamePart, OrderBy, OrderByExpr,
    OrderByKind, OrderByOptions, Query, Select, SelectItem, SelectItemQualifiedWildcardKind,
    SetExpr, TableAlias, TableFactor, TableSampleKind, TableSampleUnit, TableWithJoins, VisitMut,
    VisitorMut, WildcardAdditionalOptions,
};

use apiary_hive_functions::generators;

use crate::dialect::syntax::function_name;
use crate::error::SqlError;

/// Rewrites every query of `statement`; the first form that cannot be rewritten is refused.
pub fn rewrite<V: VisitMut>(statement: &mut V) -> Result<(), SqlError> {
    let mut clauses = Clauses { refused: None };
    let _ = statement.visit(&mut clauses);
    match clauses.refused {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

struct Clauses {
    refused: Option<SqlError>,
}

impl VisitorMut for Clauses {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        let result = sort_by(query).and_then(|()| match &mut *query.body {
            // A query's own SELECT: its ORDER BY may name a view's columns too.
            SetExpr::Select(select) => lateral_views(select, query.order_by.as_mut())
                .and_then(|()| selects(&mut query.body)),
            _ => selects(&mut query.body),
        });
        match result {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                self.refused = Some(e);
                ControlFlow::Break(())
            }
        }
    }

    fn pre_visit_table_factor(&mut self, table: &mut TableFactor) -> ControlFlow<()> {
        match sample(table) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                self.refused = Some(e);
                ControlFlow::Break(())
            }
        }
    }
}

fn unsupported(what: &str) -> SqlError {
    SqlError::Unsupported(what.to_string())
}

/// The SELECT whose SORT BY, CLUSTER BY and DISTRIBUTE BY are the query's: its only one, or
/// the last of a UNION's (there they sort the union, as ORDER BY does).
fn last_select(body: &mut SetExpr) -> Option<&mut Select> {
    match body {
        SetExpr::Select(select) => Some(select),
        SetExpr::SetOperation { right, .. } => last_select(right),
        _ => None,
    }
}

/// `SORT BY k` and `CLUSTER BY k` of a query's only SELECT, or of a UNION's last, become its
/// `ORDER BY` (Hive sorts within each reducer; with one reducer that is the whole result),
/// `DISTRIBUTE BY` is dropped (it only chooses the reducer).
fn sort_by(query: &mut Query) -> Result<(), SqlError> {
    let Some(select) = last_select(&mut query.body) else {
        return Ok(());
    };
    if select.sort_by.is_empty() && select.cluster_by.is_empty() {
        select.distribute_by.clear();
        return Ok(());
    }
    if query.order_by.is_some() {
        return Err(unsupported("ORDER BY with SORT BY or CLUSTER BY"));
    }
    let clustered = !select.cluster_by.is_empty();
    let sorted = !select.sort_by.is_empty() || !select.distribute_by.is_empty();
    if clustered && sorted {
        // Hive: "Cannot have both CLUSTER BY and SORT BY (or DISTRIBUTE BY) clauses".
        return Err(SqlError::semantic(
            "Cannot have both CLUSTER BY and SORT BY (or DISTRIBUTE BY) clauses".into(),
        ));
    }
    let mut keys = std::mem::take(&mut select.sort_by);
    keys.extend(
        std::mem::take(&mut select.cluster_by)
            .into_iter()
            .map(|expr| OrderByExpr {
                expr,
                options: OrderByOptions::default(),
                with_fill: None,
            }),
    );
    select.distribute_by.clear();
    query.order_by = Some(OrderBy {
        kind: OrderByKind::Expressions(keys),
        interpolate: None,
    });
    Ok(())
}

/// The SELECTs of a query body (through set operations).
fn selects(body: &mut SetExpr) -> Result<(), SqlError> {
    match body {
        SetExpr::Select(select) => {
            if !select.sort_by.is_empty() || !select.cluster_by.is_empty() {
                return Err(unsupported("SORT BY or CLUSTER BY inside a UNION"));
            }
            select.distribute_by.clear();
            window_aliases(select);
            lateral_views(select, None)?;
            generators::in_select_list(select).map_err(SqlError::from_planning)
        }
        SetExpr::SetOperation { left, right, .. } => {
            selects(left)?;
            selects(right)
        }
        _ => Ok(()),
    }
}

/// A window's PARTITION BY and ORDER BY in a grouping SELECT may name the select list's
/// aliases, as in Hive (`max(f) mf, rank() OVER (PARTITION BY si ORDER BY mf) .. GROUP BY
/// si`); DataFusion reads such a name as a column. A name becomes the aliased expression
/// where it cannot be a column: the SELECT groups, the name is no GROUP BY key, and the
/// aliased expression is no plain column and holds no window.
fn window_aliases(select: &mut Select) {
    use datafusion::sql::sqlparser::ast::{
        visit_expressions, visit_expressions_mut, GroupByExpr, WindowType,
    };
    use std::collections::HashMap;
    let GroupByExpr::Expressions(keys, _) = &select.group_by else {
        return;
    };
    if keys.is_empty() {
        return;
    }
    let lower = |i: &Ident| i.value.to_ascii_lowercase();
    let key_names: Vec<String> = keys
        .iter()
        .filter_map(|k| match k {
            Expr::Identifier(i) => Some(lower(i)),
            _ => None,
        })
        .collect();
    let has_window = |e: &Expr| {
        visit_expressions(e, |x| match x {
            Expr::Function(f) if f.over.is_some() => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        })
        .is_break()
    };
    let aliases: HashMap<String, Expr> = select
        .projection
        .iter()
        .filter_map(|item| match item {
            SelectItem::ExprWithAlias { expr, alias }
                if !matches!(expr, Expr::Identifier(_) | Expr::CompoundIdentifier(_))
                    && !key_names.contains(&lower(alias))
                    && !has_window(expr) =>
            {
                Some((lower(alias), expr.clone()))
            }
            _ => None,
        })
        .collect();
    if aliases.is_empty() {
        return;
    }
    let substitute = |e: &mut Expr| {
        if let Expr::Identifier(id) = e {
            if let Some(aliased) = aliases.get(&lower(id)) {
                *e = aliased.clone();
            }
        }
    };
    for item in select.projection.iter_mut() {
        let _ = visit_expressions_mut(item, |e| {
            if let Expr::Function(f) = e {
                if let Some(WindowType::WindowSpec(spec)) = &mut f.over {
                    spec.partition_by.iter_mut().for_each(substitute);
                    spec.order_by
                        .iter_mut()
                        .for_each(|o| substitute(&mut o.expr));
                }
            }
            ControlFlow::<()>::Continue(())
        });
    }
}

/// `TABLESAMPLE (n ROWS)` is the table's first n rows; `(n PERCENT)` and `(nM)` (Hive samples
/// whole blocks, "at least" the size asked) the whole table; `BUCKET x OUT OF y` is refused
/// (Hive's bucket hash is not computed here yet).
fn sample(table: &mut TableFactor) -> Result<(), SqlError> {
    let TableFactor::Table {
        name,
        alias,
        sample,
        ..
    } = table
    else {
        return Ok(());
    };
    let Some(kind) = sample.take() else {
        return Ok(());
    };
    let s = match kind {
        TableSampleKind::BeforeTableAlias(s) | TableSampleKind::AfterTableAlias(s) => s,
    };
    if s.bucket.is_some() {
        return Err(unsupported("TABLESAMPLE (BUCKET x OUT OF y)"));
    }
    let Some(quantity) = s.quantity else {
        return Ok(());
    };
    if !matches!(quantity.unit, Some(TableSampleUnit::Rows)) {
        return Ok(());
    }
    let name = name.clone();
    let alias = alias.clone().unwrap_or_else(|| TableAlias {
        explicit: true,
        name: name
            .0
            .last()
            .and_then(ObjectNamePart::as_ident)
            .cloned()
            .unwrap_or_else(|| Ident::new("t")),
        columns: vec![],
        at: None,
    });
    let mut select = empty_select(vec![SelectItem::Wildcard(
        WildcardAdditionalOptions::default(),
    )]);
    select.from = vec![TableWithJoins {
        relation: plain_table(name),
        joins: vec![],
    }];
    let mut query = query_of(select);
    query.limit_clause = Some(LimitClause::LimitOffset {
        limit: Some(quantity.value),
        offset: None,
        limit_by: vec![],
    });
    *table = TableFactor::Derived {
        lateral: false,
        subquery: Box::new(query),
        alias: Some(alias),
        sample: None,
    };
    Ok(())
}

/// The table `name`, with no alias, sample or hint.
fn plain_table(name: ObjectName) -> TableFactor {
    TableFactor::Table {
        name,
        alias: None,
        args: None,
        with_hints: vec![],
        version: None,
        with_ordinality: false,
        partitions: vec![],
        json_path: None,
        sample: None,
        index_hints: vec![],
    }
}

/// `SELECT <projection>` with no other clause yet.
fn empty_select(projection: Vec<SelectItem>) -> Select {
    Select {
        select_token: AttachedToken::empty(),
        optimizer_hints: vec![],
        distinct: None,
        select_modifiers: None,
        top: None,
        top_before_distinct: false,
        projection,
        exclude: None,
        into: None,
        from: vec![],
        lateral_views: vec![],
        prewhere: None,
        selection: None,
        connect_by: vec![],
        group_by: datafusion::sql::sqlparser::ast::GroupByExpr::Expressions(vec![], vec![]),
        cluster_by: vec![],
        distribute_by: vec![],
        sort_by: vec![],
        having: None,
        named_window: vec![],
        qualify: None,
        window_before_qualify: false,
        value_table_mode: None,
        flavor: datafusion::sql::sqlparser::ast::SelectFlavor::Standard,
    }
}

fn query_of(select: Select) -> Query {
    Query {
        with: None,
        body: Box::new(SetExpr::Select(Box::new(select))),
        order_by: None,
        limit_clause: None,
        fetch: None,
        locks: vec![],
        for_clause: None,
        settings: None,
        format_clause: None,
        pipe_operators: vec![],
    }
}

/// `FROM r LATERAL VIEW [OUTER] f(..) x AS c1, .. [LATERAL VIEW ..]`: each view wraps the
/// relation in `(SELECT r.*, <f's columns> FROM r) r`; `x.c1` reads `r.c1`, `x.*` the view's
/// columns, and `r.*` still only r's own.
fn lateral_views(select: &mut Select, order_by: Option<&mut OrderBy>) -> Result<(), SqlError> {
    if select.lateral_views.is_empty() {
        return Ok(());
    }
    let [from] = select.from.as_mut_slice() else {
        return Err(unsupported("LATERAL VIEW over several tables"));
    };
    if !from.joins.is_empty() {
        return Err(unsupported("LATERAL VIEW over a JOIN"));
    }
    let qualifier = match &from.relation {
        TableFactor::Table { alias: Some(a), .. } | TableFactor::Derived { alias: Some(a), .. } => {
            a.name.clone()
        }
        TableFactor::Table {
            name, alias: None, ..
        } => name
            .0
            .last()
            .and_then(ObjectNamePart::as_ident)
            .cloned()
            .ok_or_else(|| unsupported("LATERAL VIEW over this table"))?,
        _ => return Err(unsupported("LATERAL VIEW over this relation")),
    };
    let mut requalify = Requalify {
        views: vec![],
        qualifier: qualifier.clone(),
        depth: 0,
    };
    for view in std::mem::take(&mut select.lateral_views) {
        // A later view may read an earlier one's columns (`x.c`).
        let mut call_expr = view.lateral_view.clone();
        let _ = call_expr.visit(&mut requalify);
        let Expr::Function(f) = &call_expr else {
            return Err(unsupported("LATERAL VIEW of this expression"));
        };
        let generated = generators::columns(f, &view.lateral_col_alias, view.outer)
            .map_err(SqlError::from_planning)?
            .ok_or_else(|| SqlError::FunctionNotFound(function_name(f).unwrap_or_default()))?;
        let mut projection = vec![SelectItem::QualifiedWildcard(
            SelectItemQualifiedWildcardKind::ObjectName(ObjectName(vec![
                ObjectNamePart::Identifier(qualifier.clone()),
            ])),
            WildcardAdditionalOptions::default(),
        )];
        let columns: Vec<Ident> = generated.iter().map(|(_, a)| a.clone()).collect();
        projection.extend(
            generated
                .into_iter()
                .map(|(expr, alias)| SelectItem::ExprWithAlias { expr, alias }),
        );
        let mut inner = empty_select(projection);
        let relation = std::mem::replace(&mut from.relation, plain_table(ObjectName(vec![])));
        inner.from = vec![TableWithJoins {
            relation,
            joins: vec![],
        }];
        from.relation = TableFactor::Derived {
            lateral: false,
            subquery: Box::new(query_of(inner)),
            alias: Some(TableAlias {
                explicit: true,
                name: qualifier.clone(),
                columns: vec![],
                at: None,
            }),
            sample: None,
        };
        let name = view
            .lateral_view_name
            .0
            .last()
            .and_then(ObjectNamePart::as_ident)
            .map(|n| n.value.to_ascii_lowercase())
            .unwrap_or_default();
        requalify.views.push((name, columns));
    }
    let generated: Vec<ObjectName> = requalify
        .views
        .iter()
        .flat_map(|(_, columns)| columns.iter())
        .map(|c| ObjectName(vec![ObjectNamePart::Identifier(c.clone())]))
        .collect();
    let mut projection = vec![];
    for mut item in std::mem::take(&mut select.projection) {
        match &mut item {
            SelectItem::QualifiedWildcard(
                SelectItemQualifiedWildcardKind::ObjectName(name),
                options,
            ) if name.0.len() == 1 => {
                let named = name.0[0]
                    .as_ident()
                    .map(|i| i.value.to_ascii_lowercase())
                    .unwrap_or_default();
                if named == qualifier.value.to_ascii_lowercase() {
                    // r.*: r's own columns, not the views'.
                    options.opt_exclude = Some(ExcludeSelectItem::Multiple(generated.clone()));
                } else if let Some((_, columns)) = requalify.views.iter().find(|(v, _)| *v == named)
                {
                    // x.*: the view's columns.
                    projection.extend(columns.iter().map(|c| {
                        SelectItem::UnnamedExpr(Expr::CompoundIdentifier(vec![
                            qualifier.clone(),
                            c.clone(),
                        ]))
                    }));
                    continue;
                }
            }
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                let _ = e.visit(&mut requalify);
            }
            _ => {}
        }
        projection.push(item);
    }
    select.projection = projection;
    if let Some(e) = &mut select.selection {
        let _ = e.visit(&mut requalify);
    }
    if let Some(e) = &mut select.having {
        let _ = e.visit(&mut requalify);
    }
    if let datafusion::sql::sqlparser::ast::GroupByExpr::Expressions(exprs, _) =
        &mut select.group_by
    {
        for e in exprs {
            let _ = e.visit(&mut requalify);
        }
    }
    if let Some(OrderBy {
        kind: OrderByKind::Expressions(keys),
        ..
    }) = order_by
    {
        for key in keys {
            let _ = key.expr.visit(&mut requalify);
        }
    }
    Ok(())
}

/// Rewrites `x.c` (x a lateral view's name) to the wrapped relation's `r.c`, in this
/// query's expressions only (a subquery's `x` is its own).
struct Requalify {
    views: Vec<(String, Vec<Ident>)>,
    qualifier: Ident,
    depth: usize,
}

impl VisitorMut for Requalify {
    type Break = ();

    fn pre_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
        self.depth = self.depth.saturating_sub(1);
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if self.depth > 0 {
            return ControlFlow::Continue(());
        }
        if let Expr::CompoundIdentifier(parts) = e {
            if parts.len() >= 2 {
                let first = parts[0].value.to_ascii_lowercase();
                if self.views.iter().any(|(v, _)| *v == first) {
                    parts[0] = self.qualifier.clone();
                }
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sql` parsed in Hive's dialect with its clauses rewritten, as text.
    fn rewritten(sql: &str) -> String {
        let mut statement = crate::dialect::parse_one(sql).unwrap();
        rewrite(&mut statement).unwrap();
        statement.to_string()
    }

    #[test]
    fn sort_distribute_and_cluster_by_become_order_by() {
        let text = rewritten("SELECT a, b FROM t DISTRIBUTE BY a SORT BY b DESC");
        assert!(text.contains("ORDER BY b DESC"), "{text}");
        let text = rewritten("SELECT a FROM t CLUSTER BY a");
        assert!(text.contains("ORDER BY a"), "{text}");
    }

    #[test]
    fn lateral_view_explode_becomes_unnest() {
        let text = rewritten("SELECT id, x FROM t LATERAL VIEW explode(arr) v AS x");
        assert!(text.to_ascii_lowercase().contains("unnest"), "{text}");
        assert!(!text.contains("LATERAL VIEW"), "{text}");
    }

    #[test]
    fn a_generator_alone_in_the_select_list() {
        let text = rewritten("SELECT explode(arr) AS x FROM t");
        assert!(text.to_ascii_lowercase().contains("unnest"), "{text}");
        assert!(!text.to_ascii_lowercase().contains("explode"), "{text}");
    }
}
