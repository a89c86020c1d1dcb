//! Hive's SELECT clauses that DataFusion does not have, rewritten into ones it does:
//! `SORT BY`, `DISTRIBUTE BY` and `CLUSTER BY` (one reducer: a total order), `TABLESAMPLE`,
//! and `LATERAL VIEW [OUTER]` with the table-generating functions `explode`, `posexplode`,
//! `inline`, `stack`, `json_tuple` and `parse_url_tuple` (also alone in a select list).

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::helpers::attached_token::AttachedToken;
use datafusion::sql::sqlparser::ast::{
    CastKind, DataType, ExcludeSelectItem, Expr, Function, Ident, LimitClause, ObjectName,
    ObjectNamePart, OrderBy, OrderByExpr, OrderByKind, OrderByOptions, Query, Select, SelectItem,
    SelectItemQualifiedWildcardKind, SetExpr, TableAlias, TableFactor, TableSampleKind,
    TableSampleUnit, TableWithJoins, Value, ValueWithSpan, VisitMut, VisitorMut,
    WildcardAdditionalOptions,
};

use crate::dialect::syntax::{call, function_name, plain_args};
use crate::error::SqlError;
use crate::hive_errors::HiveError;

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

/// `SORT BY k` and `CLUSTER BY k` of a query's only SELECT become its `ORDER BY` (Hive sorts
/// within each reducer; with one reducer that is the whole result), `DISTRIBUTE BY` is
/// dropped (it only chooses the reducer).
fn sort_by(query: &mut Query) -> Result<(), SqlError> {
    let SetExpr::Select(select) = &mut *query.body else {
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
            lateral_views(select, None)?;
            select_list_generator(select)
        }
        SetExpr::SetOperation { left, right, .. } => {
            selects(left)?;
            selects(right)
        }
        _ => Ok(()),
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

fn number(n: usize) -> Expr {
    Expr::Value(ValueWithSpan::from(Value::Number(n.to_string(), false)))
}

fn string(s: &str) -> Expr {
    Expr::Value(ValueWithSpan::from(Value::SingleQuotedString(
        s.to_string(),
    )))
}

fn cast(e: Expr, to: DataType) -> Expr {
    Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(e),
        data_type: to,
        array: false,
        format: None,
    }
}

/// The columns a table-generating function gives, each an expression over the row it
/// applies to (several `unnest`s in one select list are zipped, as Hive's generators' rows).
struct Generated {
    columns: Vec<(Expr, Ident)>,
}

/// Hive's table-generating functions this module plans.
pub(crate) const GENERATORS: &[&str] = &[
    "explode",
    "posexplode",
    "inline",
    "stack",
    "json_tuple",
    "parse_url_tuple",
    "replicate_rows",
];

/// The table-generating function `f` called with `aliases` (empty: Hive's default names).
/// `outer` keeps a row whose array or map is NULL or empty, with NULL columns.
fn generator(f: &Function, aliases: &[Ident], outer: bool) -> Result<Option<Generated>, SqlError> {
    let Some(name) = function_name(f) else {
        return Ok(None);
    };
    if !GENERATORS.contains(&name.as_str()) {
        return Ok(None);
    }
    let args = plain_args(f).ok_or_else(|| unsupported(&format!("{name} with these arguments")))?;
    let wrong =
        |what: &str| SqlError::hive(HiveError::WrongArguments, format!(" {name}(): {what}"));
    // NULL or empty lists become [NULL] under OUTER, so the row stays.
    let list = |l: Expr| -> Expr {
        if !outer {
            return l;
        }
        Expr::Case {
            case_token: AttachedToken::empty(),
            end_token: AttachedToken::empty(),
            operand: None,
            conditions: vec![datafusion::sql::sqlparser::ast::CaseWhen {
                condition: Expr::BinaryOp {
                    left: Box::new(call("cardinality", vec![l.clone()])),
                    op: datafusion::sql::sqlparser::ast::BinaryOperator::Gt,
                    right: Box::new(number(0)),
                },
                result: l,
            }],
            else_result: Some(Box::new(call(
                "make_array",
                vec![Expr::Value(ValueWithSpan::from(Value::Null))],
            ))),
        }
    };
    let unnest = |l: Expr| call("unnest", vec![list(l)]);
    let names = |defaults: Vec<String>| -> Result<Vec<Ident>, SqlError> {
        if aliases.is_empty() {
            return Ok(defaults.into_iter().map(Ident::new).collect());
        }
        if aliases.len() != defaults.len() {
            return Err(SqlError::hive(
                HiveError::UdtfAliasMismatch,
                format!(
                    " expected {} aliases but got {}",
                    defaults.len(),
                    aliases.len()
                ),
            ));
        }
        Ok(aliases.to_vec())
    };
    let columns: Vec<Expr> = match name.as_str() {
        // explode(array) gives `col`; explode(map) `key`, `value` (named by two aliases).
        "explode" => {
            let [a] = args.as_slice() else {
                return Err(wrong("takes only one argument"));
            };
            if aliases.len() == 2 || is_map(a) {
                let n = names(vec!["key".into(), "value".into()])?;
                return Ok(Some(Generated {
                    columns: vec![
                        unnest(call("map_keys", vec![a.clone()])),
                        unnest(call("map_values", vec![a.clone()])),
                    ]
                    .into_iter()
                    .zip(n)
                    .collect(),
                }));
            }
            vec![unnest(a.clone())]
        }
        "posexplode" => {
            let [a] = args.as_slice() else {
                return Err(wrong("takes only one argument"));
            };
            let positions = call(
                "range",
                vec![number(0), call("cardinality", vec![a.clone()])],
            );
            vec![
                cast(unnest(positions), DataType::Int(None)),
                unnest(a.clone()),
            ]
        }
        "inline" => {
            let [a] = args.as_slice() else {
                return Err(wrong("takes only one argument"));
            };
            if aliases.is_empty() {
                return Err(unsupported("inline(..) without AS names for its columns"));
            }
            return Ok(Some(Generated {
                columns: aliases
                    .iter()
                    .enumerate()
                    .map(|(i, alias)| {
                        (
                            call(
                                apiary_hive_functions::STRUCT_FIELD,
                                vec![
                                    unnest(a.clone()),
                                    string(&i.to_string()),
                                    string(&aliases.len().to_string()),
                                ],
                            ),
                            alias.clone(),
                        )
                    })
                    .collect(),
            }));
        }
        // stack(n, v1, .., vk): n rows of k/n columns, `col0`, `col1`, ...
        "stack" => {
            let rows = match args.first() {
                Some(Expr::Value(v)) => match &v.value {
                    Value::Number(n, _) => n.parse::<usize>().ok(),
                    _ => None,
                },
                _ => None,
            }
            .filter(|n| *n > 0)
            .ok_or_else(|| wrong("The first argument to stack() must be a constant integer"))?;
            let values = &args[1..];
            if rows > values.len().max(1) {
                return Err(wrong("more rows asked than values given"));
            }
            let width = values.len().div_ceil(rows).max(1);
            (0..width)
                .map(|c| {
                    let column = (0..rows)
                        .map(|r| {
                            values
                                .get(r * width + c)
                                .cloned()
                                .unwrap_or(Expr::Value(ValueWithSpan::from(Value::Null)))
                        })
                        .collect();
                    call("unnest", vec![call("make_array", column)])
                })
                .collect()
        }
        // replicate_rows(n, c1, ..): n copies of the row (n, c1, ..), `col0`, `col1`, ...
        "replicate_rows" => {
            let Some(n) = args.first() else {
                return Err(wrong("UDTFReplicateRows() expects at least two arguments."));
            };
            if args.len() < 2 {
                return Err(wrong("UDTFReplicateRows() expects at least two arguments."));
            }
            let times = call(apiary_hive_functions::ROW_COPIES, vec![n.clone()]);
            args.iter()
                .map(|c| unnest(call("array_repeat", vec![c.clone(), times.clone()])))
                .collect()
        }
        // One row per input row: a field of the JSON object, a part of the URL.
        "json_tuple" | "parse_url_tuple" => {
            let Some((subject, keys)) = args.split_first() else {
                return Err(wrong("takes at least two arguments"));
            };
            if keys.is_empty() {
                return Err(wrong("takes at least two arguments"));
            }
            keys.iter()
                .map(|k| {
                    if name == "json_tuple" {
                        call(
                            apiary_hive_functions::JSON_FIELD,
                            vec![subject.clone(), k.clone()],
                        )
                    } else {
                        url_part(subject, k)
                    }
                })
                .collect()
        }
        _ => return Ok(None),
    };
    let defaults = match name.as_str() {
        "explode" => vec!["col".to_string()],
        "posexplode" => vec!["pos".to_string(), "val".to_string()],
        _ => (0..columns.len()).map(|i| format!("c{i}")).collect(),
    };
    let defaults = if name == "stack" || name == "replicate_rows" {
        (0..columns.len()).map(|i| format!("col{i}")).collect()
    } else {
        defaults
    };
    let n = names(defaults)?;
    Ok(Some(Generated {
        columns: columns.into_iter().zip(n).collect(),
    }))
}

/// `parse_url_tuple`'s part: `'HOST'`, ..., or `'QUERY:k'` for one query parameter.
fn url_part(url: &Expr, part: &Expr) -> Expr {
    if let Expr::Value(v) = part {
        if let Value::SingleQuotedString(p) = &v.value {
            if let Some((q, key)) = p.split_once(':') {
                if q.eq_ignore_ascii_case("QUERY") {
                    return call("parse_url", vec![url.clone(), string("QUERY"), string(key)]);
                }
            }
        }
    }
    call("parse_url", vec![url.clone(), part.clone()])
}

/// A map written in place (`map(..)`, `str_to_map(..)`): explode gives key and value.
fn is_map(e: &Expr) -> bool {
    matches!(e, Expr::Function(f) if matches!(function_name(f).as_deref(), Some("map" | "str_to_map")))
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
        let generated = generator(f, &view.lateral_col_alias, view.outer)?
            .ok_or_else(|| SqlError::FunctionNotFound(function_name(f).unwrap_or_default()))?;
        let mut projection = vec![SelectItem::QualifiedWildcard(
            SelectItemQualifiedWildcardKind::ObjectName(ObjectName(vec![
                ObjectNamePart::Identifier(qualifier.clone()),
            ])),
            WildcardAdditionalOptions::default(),
        )];
        let columns: Vec<Ident> = generated.columns.iter().map(|(_, a)| a.clone()).collect();
        projection.extend(
            generated
                .columns
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

/// A table-generating function alone in a select list (`SELECT explode(a) AS x FROM t`):
/// its columns are the select list. With anything beside it, Hive's error.
fn select_list_generator(select: &mut Select) -> Result<(), SqlError> {
    let position = select.projection.iter().position(|item| match item {
        SelectItem::UnnamedExpr(Expr::Function(f))
        | SelectItem::ExprWithAlias {
            expr: Expr::Function(f),
            ..
        } => function_name(f).is_some_and(|n| GENERATORS.contains(&n.as_str())),
        _ => false,
    });
    let Some(position) = position else {
        return Ok(());
    };
    if select.projection.len() != 1 {
        return Err(SqlError::hive(HiveError::UdtfMultipleExpressions, ""));
    }
    let (f, aliases) = match &select.projection[position] {
        SelectItem::UnnamedExpr(Expr::Function(f)) => (f.clone(), vec![]),
        SelectItem::ExprWithAlias {
            expr: Expr::Function(f),
            alias,
        } => (f.clone(), vec![alias.clone()]),
        _ => return Ok(()),
    };
    let Some(generated) = generator(&f, &aliases, false)? else {
        return Ok(());
    };
    select.projection = generated
        .columns
        .into_iter()
        .map(|(expr, alias)| SelectItem::ExprWithAlias { expr, alias })
        .collect();
    Ok(())
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
