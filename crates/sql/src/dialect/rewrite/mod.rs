//! Rewrites of a parsed HiveQL statement so DataFusion gives Hive's answers: Hive's syntax
//! around calls (CAST, `LIKE ANY (..)`, `count(DISTINCT a, b)`, `map()`; the functions
//! themselves are registered by `apiary-hive-functions`), integer literals typed INT, and
//! unnamed result columns named `_c<position>`.

mod functions;
mod group_by;
pub(crate) mod limits;
mod literals;

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    visit_expressions_mut, AccessExpr, BinaryOperator, CastKind, CeilFloorKind, DataType,
    DateTimeField, ExactNumberInfo, Expr, Function, Ident, ObjectNamePart, SelectItem, SetExpr,
    Statement, UnaryOperator, Value, ValueWithSpan, VisitMut, VisitorMut, WindowFrameBound,
    WindowType,
};
pub use limits::{nesting_depth, operator_count};

use crate::dialect::rewrite::functions::{call_forms, integer_text, like_all_patterns};
use crate::dialect::rewrite::group_by::GroupByModifiers;
use crate::dialect::rewrite::literals::{
    double_literal, hive_interval, hive_typed, microsecond_timestamp, type_literals, IntLiterals,
};
use crate::dialect::syntax::call;
use crate::error::SqlError;

/// Rewrites a statement into what DataFusion plans with Hive's meaning; `zone` is the session's
/// `hive.local.time.zone`, if set (time travel reads a time's text in it).
pub fn to_datafusion(statement: &mut Statement, zone: Option<&str>) -> Result<(), SqlError> {
    crate::dialect::time_travel::rewrite(statement, zone)?;
    crate::dialect::clauses::rewrite(statement)?;
    let mut grouping = GroupByModifiers { refused: None };
    let _ = statement.visit(&mut grouping);
    let _ = statement.visit(&mut TableFunctionNames);
    if let Some(form) = grouping.refused {
        return Err(SqlError::Unsupported(format!("GROUP BY .. {form}")));
    }
    let _ = visit_expressions_mut(statement, |e| {
        match e {
            // SUBSTR / SUBSTRING: Hive's (1-based, negative from the end, 0 as 1).
            Expr::Substring {
                expr,
                substring_from: Some(from),
                substring_for,
                ..
            } => {
                let mut args = vec![(**expr).clone(), (**from).clone()];
                args.extend(substring_for.as_deref().cloned());
                *e = call("substring", args);
            }
            Expr::Function(f) => call_forms(f),
            // `arr[0].field`: a struct's field after a subscript, by name (DataFusion takes a
            // dotted field there only as a string).
            Expr::CompoundFieldAccess { access_chain, .. } => {
                for access in access_chain.iter_mut() {
                    if let AccessExpr::Dot(field) = access {
                        if let Expr::Identifier(id) = &*field {
                            let name = match id.quote_style {
                                Some(_) => id.value.clone(),
                                None => id.value.to_ascii_lowercase(),
                            };
                            *field = Expr::value(Value::SingleQuotedString(name));
                        }
                    }
                }
            }
            // `s LIKE ANY (p1, ..)` is likeany(s, p1, ..); `s LIKE ALL (p1, ..)` (which parses
            // as a call of `all`) likeall(s, p1, ..).
            Expr::Like {
                any,
                negated,
                expr,
                pattern,
                ..
            } if *any || like_all_patterns(pattern).is_some() => {
                let (name, patterns) = match like_all_patterns(pattern) {
                    Some(list) if !*any => ("likeall", list),
                    _ => (
                        "likeany",
                        match &**pattern {
                            Expr::Tuple(list) => list.clone(),
                            Expr::Nested(p) => vec![(**p).clone()],
                            p => vec![p.clone()],
                        },
                    ),
                };
                let mut args = vec![(**expr).clone()];
                args.extend(patterns);
                let any = call(name, args);
                *e = if *negated {
                    Expr::UnaryOp {
                        op: UnaryOperator::Not,
                        expr: Box::new(any),
                    }
                } else {
                    any
                };
            }
            // A literal with an exponent is Hive's DOUBLE (one with only a point, a DECIMAL),
            // and so is one with more digits than a DECIMAL holds; read from its text, so it
            // never meets the decimal reader (`1e200` is no DECIMAL).
            Expr::Value(v) if matches!(&v.value, Value::Number(n, _) if double_literal(n)) => {
                let text = match &v.value {
                    Value::Number(n, _) => n.clone(),
                    _ => String::new(),
                };
                *e = Expr::Cast {
                    kind: CastKind::Cast,
                    expr: Box::new(Expr::Value(ValueWithSpan::from(Value::SingleQuotedString(
                        text,
                    )))),
                    data_type: DataType::Double(
                        datafusion::sql::sqlparser::ast::ExactNumberInfo::None,
                    ),
                    array: false,
                    format: None,
                };
            }
            // `!a` is NOT a.
            Expr::UnaryOp { op, .. } if *op == UnaryOperator::BangNot => *op = UnaryOperator::Not,
            // `~a`: every bit of a flipped, a XOR -1.
            Expr::UnaryOp {
                op: UnaryOperator::BitwiseNot,
                expr,
            } => {
                *e = Expr::BinaryOp {
                    left: Box::new(Expr::Nested(expr.clone())),
                    op: BinaryOperator::BitwiseXor,
                    right: Box::new(Expr::Value(ValueWithSpan::from(Value::Number(
                        "-1".into(),
                        false,
                    )))),
                }
            }
            // `a RLIKE p` / `a REGEXP p`: p found anywhere in a (Java's Matcher.find).
            Expr::RLike {
                negated,
                expr,
                pattern,
                ..
            } => {
                let found = call("regexp_like", vec![(**expr).clone(), (**pattern).clone()]);
                *e = if *negated {
                    Expr::UnaryOp {
                        op: UnaryOperator::Not,
                        expr: Box::new(found),
                    }
                } else {
                    found
                };
            }
            // FLOOR(ts TO DAY) (Hive's floor of a timestamp to a unit): floor_day(ts), ...
            Expr::Floor {
                expr,
                field: CeilFloorKind::DateTimeField(field),
            } => {
                let unit = match field {
                    DateTimeField::Year | DateTimeField::Years => Some("year"),
                    DateTimeField::Quarter => Some("quarter"),
                    DateTimeField::Month | DateTimeField::Months => Some("month"),
                    DateTimeField::Week(_) | DateTimeField::Weeks => Some("week"),
                    DateTimeField::Day | DateTimeField::Days => Some("day"),
                    DateTimeField::Hour | DateTimeField::Hours => Some("hour"),
                    DateTimeField::Minute | DateTimeField::Minutes => Some("minute"),
                    DateTimeField::Second | DateTimeField::Seconds => Some("second"),
                    _ => None,
                };
                if let Some(unit) = unit {
                    *e = call(&format!("floor_{unit}"), vec![(**expr).clone()]);
                }
            }
            // CAST(x AS STRING): x as Hive writes it as text (a DOUBLE as Java does: 1.0E10).
            Expr::Cast {
                expr,
                data_type: DataType::String(None),
                ..
            } => {
                *e = call(
                    apiary_hive_functions::HIVE_CAST_TO_STRING,
                    vec![(**expr).clone()],
                )
            }
            _ => {
                // A bare DECIMAL is DECIMAL(10,0) in Hive (DataFusion's, DECIMAL(38,10)).
                if let Expr::Cast {
                    data_type:
                        data_type @ (DataType::Decimal(ExactNumberInfo::None)
                        | DataType::Dec(ExactNumberInfo::None)
                        | DataType::Numeric(ExactNumberInfo::None)),
                    ..
                } = e
                {
                    *data_type = DataType::Decimal(ExactNumberInfo::PrecisionAndScale(10, 0));
                }
                microsecond_timestamp(e);
                hive_interval(e);
                hive_typed(e);
                // Hive's CAST gives NULL for a value that does not convert ('abc' AS INT).
                if matches!(
                    e,
                    Expr::Cast {
                        kind: CastKind::Cast,
                        ..
                    }
                ) {
                    integer_text(e);
                }
                if let Expr::Cast { kind, .. } = e {
                    if *kind == CastKind::Cast {
                        *kind = CastKind::TryCast;
                    }
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
    if let Statement::Query(q) = statement {
        name_result_columns(&mut q.body);
    }
    // Every SELECT's integer literals are INT, in subqueries, WITH queries and each branch of
    // a UNION too (`WITH a AS (SELECT 1 AS id) ..` gives an INT column, as in Hive); the
    // outermost SELECT's, typed twice, keep one cast.
    let _ = statement.visit(&mut IntLiterals);
    let _ = visit_expressions_mut(statement, |e| {
        let int = |t: &DataType| matches!(t, DataType::Int(None));
        if let Expr::Cast {
            kind: CastKind::Cast,
            expr,
            data_type,
            ..
        } = &*e
        {
            if let Expr::Cast {
                kind: CastKind::Cast,
                expr: inner,
                data_type: inner_type,
                ..
            } = &**expr
            {
                if int(data_type) && int(inner_type) && matches!(**inner, Expr::Value(_)) {
                    *e = (**expr).clone();
                }
            }
        }
        // A window frame's offset stays a bare number (`ROWS 1 PRECEDING`), the only form
        // DataFusion takes there.
        if let Expr::Function(Function {
            over: Some(WindowType::WindowSpec(spec)),
            ..
        }) = e
        {
            if let Some(frame) = spec.window_frame.as_mut() {
                for bound in std::iter::once(&mut frame.start_bound).chain(frame.end_bound.as_mut())
                {
                    if let WindowFrameBound::Preceding(Some(offset))
                    | WindowFrameBound::Following(Some(offset)) = bound
                    {
                        if let Expr::Cast { expr, .. } = &**offset {
                            if matches!(**expr, Expr::Value(_)) {
                                *offset = expr.clone();
                            }
                        }
                    }
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
    Ok(())
}

/// Table functions' names in lower case, as every function name is read (`RANGE(10)` is
/// `range(10)`; SQL Lab's formatter upper-cases them).
struct TableFunctionNames;

impl VisitorMut for TableFunctionNames {
    type Break = ();

    fn pre_visit_table_factor(
        &mut self,
        table_factor: &mut datafusion::sql::sqlparser::ast::TableFactor,
    ) -> ControlFlow<()> {
        if let datafusion::sql::sqlparser::ast::TableFactor::Table {
            name,
            args: Some(_),
            ..
        } = table_factor
        {
            if let [ObjectNamePart::Identifier(id)] = name.0.as_mut_slice() {
                if id.quote_style.is_none() {
                    id.value = id.value.to_ascii_lowercase();
                }
            }
        }
        ControlFlow::Continue(())
    }
}

/// The lower-case parts of a column reference (`t.c` is `["t", "c"]`).
fn column_parts(e: &Expr) -> Option<Vec<String>> {
    match e {
        Expr::Identifier(id) => Some(vec![id.value.to_lowercase()]),
        Expr::CompoundIdentifier(ids) => {
            Some(ids.iter().map(|id| id.value.to_lowercase()).collect())
        }
        _ => None,
    }
}

/// The column references a select list has named so far. Two may name one column when they
/// are the same text, or have the same column name and one of them is bare.
#[derive(Default)]
struct SeenColumns {
    written: std::collections::HashSet<Vec<String>>,
    names: std::collections::HashSet<String>,
    bare: std::collections::HashSet<String>,
}

impl SeenColumns {
    fn again(&self, parts: &[String]) -> bool {
        let Some(name) = parts.last() else {
            return false;
        };
        self.written.contains(parts)
            || self.bare.contains(name)
            || (parts.len() == 1 && self.names.contains(name))
    }

    fn add(&mut self, parts: Vec<String>) {
        if let Some(name) = parts.last() {
            self.names.insert(name.clone());
            if parts.len() == 1 {
                self.bare.insert(name.clone());
            }
        }
        self.written.insert(parts);
    }
}

/// Names unnamed expressions of the outermost SELECT `_c<i>`, as Hive does (after typing
/// their literals, so the names are of the typed expressions).
fn name_result_columns(body: &mut SetExpr) {
    if let SetExpr::Select(_) = body {
        // GROUP BY expressions type their literals as the select list does, so
        // `SELECT a / 10 .. GROUP BY a / 10` names one expression.
        type_literals(body);
    }
    match body {
        SetExpr::Select(select) => {
            let mut seen = SeenColumns::default();
            for (i, item) in select.projection.iter_mut().enumerate() {
                if let SelectItem::UnnamedExpr(e) = item {
                    if let Some(parts) = column_parts(e) {
                        // A column named again gets a name of its own, which the result
                        // gives back as written (`SELECT a, c, c`).
                        if seen.again(&parts) {
                            *item = SelectItem::ExprWithAlias {
                                alias: Ident::with_quote(
                                    '`',
                                    format!("{}{}{i}", parts.join("."), crate::names::DUPLICATE),
                                ),
                                expr: e.clone(),
                            };
                        }
                        seen.add(parts);
                    } else {
                        *item = SelectItem::ExprWithAlias {
                            expr: e.clone(),
                            alias: Ident::new(format!("_c{i}")),
                        };
                    }
                }
            }
        }
        SetExpr::SetOperation { left, .. } => name_result_columns(left),
        SetExpr::Query(q) => name_result_columns(&mut q.body),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sql` parsed in Hive's dialect and rewritten, as the text DataFusion is given.
    fn rewritten(sql: &str) -> String {
        let mut statement = crate::dialect::parse_one(sql).unwrap();
        to_datafusion(&mut statement, None).unwrap();
        statement.to_string()
    }

    #[test]
    fn hive_functions_are_left_to_the_registered_ones() {
        // Hive's functions are called by their names (registered by apiary-hive-functions);
        // only the syntax around them is rewritten.
        let text = rewritten("SELECT array(1, 2), pmod(a, 3), year(d) FROM t");
        assert!(
            text.contains("array(CAST(1 AS INT), CAST(2 AS INT))")
                && text.contains("pmod(a, CAST(3 AS INT))")
                && text.contains("year(d)"),
            "{text}"
        );
        let like = rewritten("SELECT s LIKE ANY ('a%', 'b%'), s NOT LIKE ALL ('a%') FROM t");
        assert!(
            like.contains("likeany(s, 'a%', 'b%')") && like.contains("NOT likeall(s, 'a%')"),
            "{like}"
        );
        let count = rewritten("SELECT count(DISTINCT a, b) FROM t");
        assert!(count.contains("struct(a, b)"), "{count}");
    }

    #[test]
    fn unnamed_result_columns_are_named_by_position() {
        let text = rewritten("SELECT a, a + 1, upper(b) FROM t");
        assert!(text.contains("AS _c1") && text.contains("AS _c2"), "{text}");
        assert!(
            !text.contains("AS _c0"),
            "a named column keeps its name: {text}"
        );
    }

    #[test]
    fn integer_literals_are_ints() {
        let text = rewritten("SELECT 1, 3000000000");
        assert!(text.contains("CAST(1 AS INT)"), "{text}");
        assert!(!text.contains("CAST(3000000000 AS INT)"), "{text}");
    }

    #[test]
    fn grouping_sets_forms() {
        let text = rewritten("SELECT a, b, count(*) FROM t GROUP BY a, b WITH ROLLUP");
        assert!(text.contains("ROLLUP"), "{text}");
        assert!(!text.contains("WITH ROLLUP"), "{text}");
    }

    #[test]
    fn limits_count_nesting_and_operators() {
        let statement = crate::dialect::parse_one("SELECT ((((1))))").unwrap();
        assert!(nesting_depth(&statement, 100) >= 4);
        assert_eq!(
            nesting_depth(&statement, 2),
            3,
            "counted to one past the limit only"
        );
        let tokens = crate::dialect::tokenize("SELECT 1 + 2 + 3 * 4").unwrap();
        assert_eq!(operator_count(&tokens), 3);
    }
}
