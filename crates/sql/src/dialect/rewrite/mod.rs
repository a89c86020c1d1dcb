//! Rewrites of a parsed HiveQL statement so DataFusion gives Hive's answers: Hive's function
//! forms (`array(..)`, `map(k1, v1, ...)`), integer literals typed INT, and unnamed result
//! columns named `_c<position>`.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    visit_expressions_mut, BinaryOperator, CastKind, CharacterLength, DataType, DateTimeField,
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentList, FunctionArguments,
    GroupByExpr, GroupByWithModifier, Ident, ObjectName, ObjectNamePart, Query, SelectItem,
    SetExpr, Statement, TimezoneInfo, UnaryOperator, Value, ValueWithSpan, Visit, VisitMut,
    Visitor, VisitorMut, WindowFrameBound, WindowType,
};

use datafusion::sql::sqlparser::ast::helpers::attached_token::AttachedToken;
use datafusion::sql::sqlparser::ast::CaseWhen;

use crate::error::{HiveError, SqlError};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan};

/// Applies every rewrite to `statement`.
/// How deeply expressions and queries of `statement` nest, counted up to `limit` and no
/// further. DataFusion recurses over expression trees in places it does not protect (clones,
/// drops, evaluation), so a statement deeper than the limit is refused before it is planned.
pub fn nesting_depth(statement: &Statement, limit: usize) -> usize {
    struct Depth {
        now: usize,
        max: usize,
        limit: usize,
    }
    impl Depth {
        fn enter(&mut self) -> ControlFlow<()> {
            self.now += 1;
            self.max = self.max.max(self.now);
            if self.max > self.limit {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }
        fn leave(&mut self) -> ControlFlow<()> {
            self.now = self.now.saturating_sub(1);
            ControlFlow::Continue(())
        }
    }
    impl Visitor for Depth {
        type Break = ();
        fn pre_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
            self.enter()
        }
        fn post_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
            self.leave()
        }
        fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.enter()
        }
        fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.leave()
        }
    }
    let mut d = Depth {
        now: 0,
        max: 0,
        limit,
    };
    let _ = statement.visit(&mut d);
    d.max
}

/// How many tokens of `tokens` are operators that can chain (`+`, `||`, `::`, `AND`, `IS`,
/// `LIKE`, ...). The parser builds a chain of them as a left-deep tree, whose depth only the
/// whole count bounds; a statement with too many is refused before it is parsed, so no
/// deep tree is ever built (dropping one recurses too).
pub fn operator_count(tokens: &[TokenWithSpan]) -> usize {
    tokens
        .iter()
        .filter(|t| match &t.token {
            Token::Word(w) => matches!(
                w.keyword,
                Keyword::AND
                    | Keyword::OR
                    | Keyword::XOR
                    | Keyword::IS
                    | Keyword::IN
                    | Keyword::LIKE
                    | Keyword::ILIKE
                    | Keyword::RLIKE
                    | Keyword::REGEXP
                    | Keyword::SIMILAR
                    | Keyword::BETWEEN
                    | Keyword::COLLATE
                    | Keyword::DIV
                    | Keyword::NOT
                    | Keyword::AT
                    | Keyword::OVERLAPS
            ),
            Token::EOF
            | Token::Number(..)
            | Token::Char(_)
            | Token::SingleQuotedString(_)
            | Token::DoubleQuotedString(_)
            | Token::TripleSingleQuotedString(_)
            | Token::TripleDoubleQuotedString(_)
            | Token::DollarQuotedString(_)
            | Token::SingleQuotedByteStringLiteral(_)
            | Token::DoubleQuotedByteStringLiteral(_)
            | Token::TripleSingleQuotedByteStringLiteral(_)
            | Token::TripleDoubleQuotedByteStringLiteral(_)
            | Token::SingleQuotedRawStringLiteral(_)
            | Token::DoubleQuotedRawStringLiteral(_)
            | Token::TripleSingleQuotedRawStringLiteral(_)
            | Token::TripleDoubleQuotedRawStringLiteral(_)
            | Token::NationalStringLiteral(_)
            | Token::QuoteDelimitedStringLiteral(_)
            | Token::NationalQuoteDelimitedStringLiteral(_)
            | Token::EscapedStringLiteral(_)
            | Token::UnicodeStringLiteral(_)
            | Token::HexStringLiteral(_)
            | Token::Placeholder(_)
            | Token::Comma
            | Token::Whitespace(_)
            | Token::LParen
            | Token::RParen
            | Token::Period
            | Token::Colon
            | Token::SemiColon
            | Token::LBrace
            | Token::RBrace
            | Token::RBracket => false,
            _ => true,
        })
        .count()
}

/// Rewrites a statement into what DataFusion plans with Hive's meaning; `zone` is the session's
/// `hive.local.time.zone`, if set (time travel reads a time's text in it).
pub fn to_datafusion(statement: &mut Statement, zone: Option<&str>) -> Result<(), SqlError> {
    crate::time_travel::rewrite(statement, zone)?;
    crate::clauses::rewrite(statement)?;
    let mut grouping = GroupByModifiers { refused: None };
    let _ = statement.visit(&mut grouping);
    let _ = statement.visit(&mut TableFunctionNames);
    if let Some(form) = grouping.refused {
        return Err(SqlError::Unsupported(format!("GROUP BY .. {form}")));
    }
    let mut refused: Option<SqlError> = None;
    let _ = visit_expressions_mut(statement, |e| {
        // Hive's functions that are operators or expressions here.
        if let Some(op) = match &*e {
            Expr::Function(f) => hive_operator(f),
            _ => None,
        } {
            *e = op;
            return ControlFlow::<()>::Continue(());
        }
        if let Expr::Function(f) = &*e {
            if let Some(cast) = type_named_cast(f) {
                *e = cast;
                return ControlFlow::<()>::Continue(());
            }
        }
        match e {
            Expr::Function(f) if function_name(f).as_deref() == Some("size") => hive_size(e),
            Expr::Function(f) if date_field(f).is_some() => hive_date_part(e),
            Expr::Function(f) if function_name(f).as_deref() == Some("pmod") => hive_pmod(e),
            Expr::Function(f) if function_name(f).as_deref() == Some("percentile") => {
                hive_percentile(e)
            }
            Expr::Function(f) if function_name(f).as_deref() == Some("percentile_disc") => {
                if let Err(error) = hive_percentile_disc(e) {
                    refused = Some(error);
                    return ControlFlow::Break(());
                }
            }
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
            Expr::Function(f) if ranks(f) => {
                *e = Expr::Cast {
                    kind: CastKind::Cast,
                    expr: Box::new(e.clone()),
                    data_type: DataType::Int(None),
                    array: false,
                    format: None,
                }
            }
            Expr::Function(f) => hive_function(f),
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
                let any = match &any {
                    Expr::Function(f) => hive_operator(f).unwrap_or(any),
                    _ => any,
                };
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
            // CAST(x AS STRING): x as Hive writes it as text (a DOUBLE as Java does: 1.0E10).
            Expr::Cast {
                expr,
                data_type: DataType::String(None),
                ..
            } => {
                *e = call(
                    crate::functions::HIVE_CAST_TO_STRING,
                    vec![(**expr).clone()],
                )
            }
            _ => {
                microsecond_timestamp(e);
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
    if let Some(error) = refused {
        return Err(error);
    }
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

/// Types the integer literals of every query's SELECT lists INT ([`int_literal`]).
struct IntLiterals;

impl VisitorMut for IntLiterals {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        type_literals(&mut query.body);
        ControlFlow::Continue(())
    }
}

/// [`int_literal`] over the select lists and GROUP BY expressions of a query body (every
/// branch of a set operation).
fn type_literals(body: &mut SetExpr) {
    match body {
        SetExpr::Select(select) => {
            if let GroupByExpr::Expressions(exprs, _) = &mut select.group_by {
                // (A bare number stays: DataFusion reads it as a position.)
                for e in exprs.iter_mut().filter(|e| !matches!(e, Expr::Value(_))) {
                    let _ = visit_expressions_mut(e, |x| {
                        int_literal(x);
                        ControlFlow::<()>::Continue(())
                    });
                }
            }
            for item in select.projection.iter_mut() {
                if let SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } = item
                {
                    let _ = visit_expressions_mut(e, |x| {
                        int_literal(x);
                        ControlFlow::<()>::Continue(())
                    });
                }
            }
        }
        SetExpr::SetOperation { left, right, .. } => {
            type_literals(left);
            type_literals(right);
        }
        SetExpr::Query(q) => type_literals(&mut q.body),
        _ => {}
    }
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

/// Hive's `GROUP BY a, b WITH ROLLUP | WITH CUBE | GROUPING SETS (..)` become DataFusion's
/// `ROLLUP (a, b)`, `CUBE (a, b)` and `GROUPING SETS (..)` (DataFusion would ignore the
/// modifiers and group by the plain list); other modifiers are refused.
struct GroupByModifiers {
    refused: Option<String>,
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
fn grouping_columns(group_by: &GroupByExpr) -> Option<Vec<Expr>> {
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

fn is_grouping_id(e: &Expr) -> bool {
    matches!(e, Expr::Identifier(id) if id.value.eq_ignore_ascii_case("grouping__id"))
}

/// Hive's `GROUPING__ID`: a bit per grouping column, the first the most significant, set
/// where the row aggregates the column away: `grouping(a, b, ..)` as a BIGINT.
fn replace_grouping_id(e: &mut Expr, columns: &[Expr]) {
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

/// Hive's `percentile(x, p)` (exact, interpolated) as DataFusion's `percentile_cont` over the
/// value as a DOUBLE, a DOUBLE; with an array of percentiles, an array of them.
/// (`percentile_approx` is Hive's own histogram, in `histogram.rs`.)
fn hive_percentile(e: &mut Expr) {
    let Expr::Function(f) = e else { return };
    let Some(args) = plain_args(f) else { return };
    let [value, p] = args.as_slice() else { return };
    let one = |p: &Expr| {
        as_double(call(
            "percentile_cont",
            vec![as_double(value.clone()), p.clone()],
        ))
    };
    *e = match listed_percentiles(p) {
        Some(ps) => call("make_array", ps.iter().map(one).collect()),
        None => one(p),
    };
}

/// `CAST(x AS DOUBLE)`.
fn as_double(x: Expr) -> Expr {
    Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(x),
        data_type: DataType::Double(datafusion::sql::sqlparser::ast::ExactNumberInfo::None),
        array: false,
        format: None,
    }
}

/// The percentiles of an array of them written in place (`array(0.25, 0.75)`); None for one.
fn listed_percentiles(p: &Expr) -> Option<Vec<Expr>> {
    match p {
        Expr::Array(a) => Some(a.elem.clone()),
        Expr::Function(g)
            if matches!(function_name(g).as_deref(), Some("array" | "make_array")) =>
        {
            plain_args(g)
        }
        _ => None,
    }
}

/// Hive's `percentile_disc(x, p)` (also `percentile_disc(p) WITHIN GROUP (ORDER BY x [DESC])`):
/// no interpolation, the value at 0-based position `ceil((n - 1) * p)` of the n non-NULL
/// values in order, a DOUBLE (NULL for no values); with an array of percentiles, an array.
/// Written as the sorted list of the values and an element of it.
fn hive_percentile_disc(e: &mut Expr) -> Result<(), SqlError> {
    let Expr::Function(f) = e else { return Ok(()) };
    let wrong = |what: &str| {
        SqlError::hive(
            HiveError::WrongArguments,
            format!(" percentile_disc: {what}"),
        )
    };
    let args = plain_args(f).ok_or_else(|| wrong("takes (input, pc)"))?;
    let (value, p, descending) = match (args.as_slice(), f.within_group.as_slice()) {
        ([value, p], []) => (value.clone(), p.clone(), false),
        ([p], [order]) => (
            order.expr.clone(),
            p.clone(),
            order.options.asc == Some(false),
        ),
        _ => return Err(wrong("takes (input, pc)")),
    };
    let listed = listed_percentiles(&p);
    let ps = listed.clone().unwrap_or_else(|| vec![p.clone()]);
    for p in &ps {
        let (negative, literal) = match p {
            Expr::UnaryOp {
                op: UnaryOperator::Minus,
                expr,
            } => (true, &**expr),
            p => (false, p),
        };
        if let Expr::Value(v) = literal {
            if let Value::Number(n, _) = &v.value {
                let in_range = n
                    .parse::<f64>()
                    .is_ok_and(|p| (0.0..=1.0).contains(&p) && !(negative && p > 0.0));
                if !in_range {
                    return Err(SqlError::Semantic {
                        error: None,
                        message: "Percentile value must be within the range of 0 to 1.".into(),
                    });
                }
            }
        }
    }
    let mut values = call("array_agg", vec![as_double(value.clone())]);
    if let Expr::Function(g) = &mut values {
        g.filter = Some(Box::new(Expr::IsNotNull(Box::new(value.clone()))));
    }
    let direction = Expr::Value(ValueWithSpan::from(Value::SingleQuotedString(
        if descending { "DESC" } else { "ASC" }.into(),
    )));
    let sorted = call("array_sort", vec![values, direction]);
    let last = Expr::BinaryOp {
        left: Box::new(call("count", vec![value])),
        op: BinaryOperator::Minus,
        right: Box::new(number(1)),
    };
    let one = |p: &Expr| {
        let position = Expr::Cast {
            kind: CastKind::Cast,
            expr: Box::new(call(
                "ceil",
                vec![Expr::BinaryOp {
                    left: Box::new(Expr::Nested(Box::new(last.clone()))),
                    op: BinaryOperator::Multiply,
                    right: Box::new(as_double(p.clone())),
                }],
            )),
            data_type: DataType::BigInt(None),
            array: false,
            format: None,
        };
        call(
            "array_element",
            vec![
                sorted.clone(),
                Expr::BinaryOp {
                    left: Box::new(position),
                    op: BinaryOperator::Plus,
                    right: Box::new(number(1)),
                },
            ],
        )
    };
    *e = match listed {
        Some(ps) => call("make_array", ps.iter().map(one).collect()),
        None => one(&p),
    };
    Ok(())
}

/// Whether a numeric literal's text is Hive's DOUBLE: it has an exponent, or a point and more
/// digits than a DECIMAL's 38.
fn double_literal(n: &str) -> bool {
    n.contains(['e', 'E']) || (n.contains('.') && n.bytes().filter(u8::is_ascii_digit).count() > 38)
}

/// `CAST(x AS TINYINT | SMALLINT | INT | BIGINT)` reads text as Hive does: blanks around it
/// ignored, a fraction dropped (`' 1.5 '` is 1), so the text goes through
/// [`crate::functions::HIVE_INTEGER_TEXT`] first (other values pass through it unchanged).
fn integer_text(e: &mut Expr) {
    if let Expr::Cast {
        expr,
        data_type:
            DataType::TinyInt(_) | DataType::SmallInt(_) | DataType::Int(_) | DataType::BigInt(_),
        ..
    } = e
    {
        **expr = call(crate::functions::HIVE_INTEGER_TEXT, vec![(**expr).clone()]);
    }
}

/// Hive's casts written as functions of the type's name (`INT(x)`, `bigint('5')`, as
/// Superset's week grains write them): `CAST(x AS <type>)`, NULL where x does not convert.
fn type_named_cast(f: &Function) -> Option<Expr> {
    use datafusion::sql::sqlparser::ast::ExactNumberInfo;
    let data_type = match function_name(f)?.as_str() {
        "boolean" => DataType::Boolean,
        "tinyint" => DataType::TinyInt(None),
        "smallint" => DataType::SmallInt(None),
        "int" => DataType::Int(None),
        "bigint" => DataType::BigInt(None),
        "float" => DataType::Float(ExactNumberInfo::None),
        "double" => DataType::Double(ExactNumberInfo::None),
        "string" => {
            let [value] = plain_args(f)?.try_into().ok()?;
            return Some(call(crate::functions::HIVE_CAST_TO_STRING, vec![value]));
        }
        "date" => DataType::Date,
        "timestamp" => DataType::Timestamp(Some(6), TimezoneInfo::None),
        "binary" => DataType::Bytea,
        _ => return None,
    };
    let [value] = plain_args(f)?.try_into().ok()?;
    let mut cast = Expr::Cast {
        kind: CastKind::TryCast,
        expr: Box::new(value),
        data_type,
        array: false,
        format: None,
    };
    integer_text(&mut cast);
    Some(cast)
}

/// Hive's `pmod(a, b)`: `((a % b) + b) % b`, NULL when `b` is 0 (Hive's `%` by zero).
fn hive_pmod(e: &mut Expr) {
    let Expr::Function(f) = e else { return };
    let Some(args) = plain_args(f) else { return };
    let [a, b] = args.as_slice() else { return };
    let nested = |x: Expr| Expr::Nested(Box::new(x));
    let zero = Expr::Value(ValueWithSpan::from(Value::Number("0".into(), false)));
    let divisor = call("nullif", vec![b.clone(), zero]);
    let modulo = |x: Expr| Expr::BinaryOp {
        left: Box::new(nested(x)),
        op: BinaryOperator::Modulo,
        right: Box::new(divisor.clone()),
    };
    let plus_b = Expr::BinaryOp {
        left: Box::new(modulo(a.clone())),
        op: BinaryOperator::Plus,
        right: Box::new(nested(b.clone())),
    };
    *e = nested(modulo(plus_b));
}

/// Hive's functions this module turns into others (SHOW FUNCTIONS lists them too).
pub const REWRITTEN_FUNCTIONS: &[&str] = &[
    "array",
    "array_position",
    "array_remove",
    "buildversion",
    "current_catalog",
    "current_schema",
    "day",
    "dayofmonth",
    "dayofweek",
    "e",
    "field",
    "floor_day",
    "floor_hour",
    "floor_minute",
    "floor_month",
    "floor_quarter",
    "floor_second",
    "floor_week",
    "floor_year",
    "hour",
    "index",
    "is_not_distinct_from",
    "isfalse",
    "isnotfalse",
    "isnotnull",
    "isnottrue",
    "isnull",
    "istrue",
    "lcase",
    "likeall",
    "likeany",
    "locate",
    "logged_in_user",
    "map",
    "mid",
    "minute",
    "mod",
    "month",
    "negative",
    "percentile",
    "percentile_disc",
    "pmod",
    "positive",
    "quarter",
    "second",
    "sign",
    "size",
    "sort_array",
    "std",
    "stddev",
    "to_unix_timestamp",
    "tumbling_window",
    "ucase",
    "variance",
    "weekofyear",
    "year",
];

/// The field a Hive date function reads (`year(d)` is the year of `d`).
fn date_field(f: &Function) -> Option<&'static str> {
    Some(match function_name(f)?.as_str() {
        "year" => "year",
        "quarter" => "quarter",
        "month" => "month",
        "day" | "dayofmonth" => "day",
        "hour" => "hour",
        "minute" => "minute",
        "second" => "second",
        "weekofyear" => "week",
        "dayofweek" => "dow",
        _ => return None,
    })
}

/// Hive's `year(x)` .. `second(x)`, `weekofyear(x)` and `dayofweek(x)` (1 for Sunday) of a
/// date, timestamp or string: an INT, NULL when the value is not a date.
fn hive_date_part(e: &mut Expr) {
    let Expr::Function(f) = e else { return };
    let (Some(field), Some(args)) = (date_field(f), plain_args(f)) else {
        return;
    };
    let [arg] = args.as_slice() else { return };
    let timestamp = Expr::Cast {
        kind: CastKind::TryCast,
        expr: Box::new(arg.clone()),
        // Microseconds: nanoseconds would lose dates before 1677 and after 2262.
        data_type: DataType::Timestamp(Some(6), TimezoneInfo::None),
        array: false,
        format: None,
    };
    let text = |s: &str| Expr::Value(ValueWithSpan::from(Value::SingleQuotedString(s.into())));
    let mut part = call("date_part", vec![text(field), timestamp]);
    if field == "dow" {
        part = Expr::BinaryOp {
            left: Box::new(part),
            op: BinaryOperator::Plus,
            right: Box::new(Expr::Value(ValueWithSpan::from(Value::Number(
                "1".into(),
                false,
            )))),
        };
    }
    *e = Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(Expr::Nested(Box::new(part))),
        data_type: DataType::Int(None),
        array: false,
        format: None,
    };
}

pub(crate) fn function_name(f: &Function) -> Option<String> {
    match f.name.0.as_slice() {
        [ObjectNamePart::Identifier(id)] => Some(id.value.to_ascii_lowercase()),
        _ => None,
    }
}

pub(crate) fn plain_args(f: &Function) -> Option<Vec<Expr>> {
    match &f.args {
        FunctionArguments::List(list)
            if list.clauses.is_empty() && list.duplicate_treatment.is_none() =>
        {
            list.args
                .iter()
                .map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e.clone()),
                    _ => None,
                })
                .collect()
        }
        FunctionArguments::None => Some(vec![]),
        _ => None,
    }
}

pub(crate) fn call(name: &str, args: Vec<Expr>) -> Expr {
    Expr::Function(Function {
        name: ObjectName(vec![ObjectNamePart::Identifier(Ident::new(name))]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args: args
                .into_iter()
                .map(|e| FunctionArg::Unnamed(FunctionArgExpr::Expr(e)))
                .collect(),
            clauses: vec![],
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: vec![],
    })
}

/// Hive's `array(a, b)` is DataFusion's `make_array`; Hive's `map(k1, v1, k2, v2)` becomes
/// DataFusion's `map([k1, k2], [v1, v2])`; the date functions that take a date take a string
/// or timestamp too (`date_add('2026-01-31', 1)`), as a date (NULL when it is none).
fn hive_function(f: &mut Function) {
    let Some(name) = function_name(f) else { return };
    match name.as_str() {
        "date_add" | "date_sub" | "last_day" | "next_day" => {
            if let FunctionArguments::List(list) = &mut f.args {
                for (i, arg) in list.args.iter_mut().enumerate() {
                    if let FunctionArg::Unnamed(FunctionArgExpr::Expr(a)) = arg {
                        // The date, and for date_add/date_sub the days as an INT (any
                        // integer Hive takes).
                        let to = match (i, name.as_str()) {
                            (0, _) => DataType::Date,
                            (1, "date_add" | "date_sub") => DataType::Int(None),
                            _ => continue,
                        };
                        *a = try_cast(a.clone(), to);
                    }
                }
            }
        }
        "factorial" | "space" => {
            if let FunctionArguments::List(list) = &mut f.args {
                if let Some(FunctionArg::Unnamed(FunctionArgExpr::Expr(a))) = list.args.first_mut()
                {
                    *a = try_cast(a.clone(), DataType::Int(None));
                }
            }
        }
        // count(DISTINCT a, b): the distinct rows where none is NULL, counted as one struct.
        "count" => {
            let FunctionArguments::List(list) = &mut f.args else {
                return;
            };
            if list.duplicate_treatment.is_none() || list.args.len() < 2 {
                return;
            }
            let Some(args) = list
                .args
                .iter()
                .map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e.clone()),
                    _ => None,
                })
                .collect::<Option<Vec<Expr>>>()
            else {
                return;
            };
            let all_present = joined(
                args.iter().map(|a| Expr::IsNotNull(Box::new(a.clone()))),
                BinaryOperator::And,
            );
            let Some(all_present) = all_present else {
                return;
            };
            let row = Expr::Case {
                case_token: AttachedToken::empty(),
                end_token: AttachedToken::empty(),
                operand: None,
                conditions: vec![CaseWhen {
                    condition: all_present,
                    result: call("struct", args),
                }],
                else_result: None,
            };
            list.args = vec![FunctionArg::Unnamed(FunctionArgExpr::Expr(row))];
        }
        "array" => f.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::new("make_array"))]),
        // Hive's names for DataFusion's functions. Hive's stddev, std and variance are the
        // population's (DataFusion's stddev and variance are the sample's).
        "ucase" | "lcase" | "sign" | "stddev" | "std" | "variance" => {
            let to = match name.as_str() {
                "ucase" => "upper",
                "lcase" => "lower",
                "sign" => "signum",
                "variance" => "var_pop",
                _ => "stddev_pop",
            };
            f.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::new(to))]);
        }
        // Hive's sort_array(a): ascending, NULLs first, as DataFusion's array_sort by default.
        "sort_array" => {
            f.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::new("array_sort"))])
        }
        "map" => {
            let Some(args) = plain_args(f) else { return };
            let is_list = |e: &Expr| {
                matches!(e, Expr::Array(_))
                    || matches!(e, Expr::Function(g) if function_name(g).as_deref() == Some("make_array"))
            };
            if args.len() == 2 && args.iter().all(is_list) {
                return;
            }
            if args.len() % 2 != 0 {
                return;
            }
            let keys = args.iter().step_by(2).cloned().collect();
            let values = args.iter().skip(1).step_by(2).cloned().collect();
            if let Expr::Function(g) = call(
                "map",
                vec![call("make_array", keys), call("make_array", values)],
            ) {
                *f = g;
            }
        }
        _ => {}
    }
}

/// Hive's functions that are operators or expressions here: `isnull(a)`, `isnotnull(a)`,
/// `negative(a)`, `positive(a)`, `e()`, `field(..)`, `locate(..)`.
fn hive_operator(f: &Function) -> Option<Expr> {
    let name = function_name(f)?;
    let args = plain_args(f)?;
    let one = || -> Option<Box<Expr>> {
        match args.as_slice() {
            [a] => Some(Box::new(a.clone())),
            _ => None,
        }
    };
    Some(match name.as_str() {
        "isnull" => Expr::IsNull(one()?),
        "isnotnull" => Expr::IsNotNull(one()?),
        "negative" => Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr: one()?,
        },
        "positive" => Expr::Nested(one()?),
        // field(v, v1, v2, ..): the position of the first vi equal to v, 0 for none or NULL.
        "field" if args.len() >= 2 => Expr::Case {
            case_token: AttachedToken::empty(),
            end_token: AttachedToken::empty(),
            operand: None,
            conditions: args[1..]
                .iter()
                .enumerate()
                .map(|(i, candidate)| CaseWhen {
                    condition: Expr::BinaryOp {
                        left: Box::new(args[0].clone()),
                        op: BinaryOperator::Eq,
                        right: Box::new(candidate.clone()),
                    },
                    result: number(i + 1),
                })
                .collect(),
            else_result: Some(Box::new(number(0))),
        },
        // locate(sub, s[, pos]): the 1-based position of sub in s from pos; 0 when absent,
        // when pos < 1 or pos is NULL.
        "locate" => match args.as_slice() {
            [sub, s] => call("strpos", vec![s.clone(), sub.clone()]),
            [sub, s, pos] => {
                let found = call(
                    "strpos",
                    vec![call("substr", vec![s.clone(), pos.clone()]), sub.clone()],
                );
                let compare = |op, right| Expr::BinaryOp {
                    left: Box::new(found.clone()),
                    op,
                    right: Box::new(right),
                };
                Expr::Case {
                    case_token: AttachedToken::empty(),
                    end_token: AttachedToken::empty(),
                    operand: None,
                    conditions: vec![
                        CaseWhen {
                            condition: Expr::IsNull(Box::new(pos.clone())),
                            result: number(0),
                        },
                        CaseWhen {
                            condition: Expr::BinaryOp {
                                left: Box::new(pos.clone()),
                                op: BinaryOperator::Lt,
                                right: Box::new(number(1)),
                            },
                            result: number(0),
                        },
                        CaseWhen {
                            condition: compare(BinaryOperator::Eq, number(0)),
                            result: number(0),
                        },
                    ],
                    else_result: Some(Box::new(Expr::BinaryOp {
                        left: Box::new(compare(BinaryOperator::Plus, pos.clone())),
                        op: BinaryOperator::Minus,
                        right: Box::new(number(1)),
                    })),
                }
            }
            _ => return None,
        },
        // Hive's concat, greatest and least are NULL when any argument is (DataFusion's
        // skip NULLs).
        "concat" | "greatest" | "least" if !args.is_empty() => {
            let any_null = joined(
                args.iter().map(|a| Expr::IsNull(Box::new(a.clone()))),
                BinaryOperator::Or,
            )?;
            Expr::Case {
                case_token: AttachedToken::empty(),
                end_token: AttachedToken::empty(),
                operand: None,
                conditions: vec![CaseWhen {
                    condition: any_null,
                    result: Expr::Value(ValueWithSpan::from(Value::Null)),
                }],
                else_result: Some(Box::new(if name == "concat" {
                    // Each argument as Hive writes it as text (a DOUBLE as Java does: 1.0E10).
                    call(
                        "concat",
                        args.iter()
                            .map(|a| call(crate::functions::HIVE_TO_STRING, vec![a.clone()]))
                            .collect(),
                    )
                } else {
                    Expr::Function(f.clone())
                })),
            }
        }
        "istrue" => Expr::IsTrue(one()?),
        "isfalse" => Expr::IsFalse(one()?),
        "isnottrue" => Expr::IsNotTrue(one()?),
        "isnotfalse" => Expr::IsNotFalse(one()?),
        "is_not_distinct_from" => match args.as_slice() {
            [a, b] => Expr::IsNotDistinctFrom(Box::new(a.clone()), Box::new(b.clone())),
            _ => return None,
        },
        // mod(a, b) is `a % b` (NULL by zero, as Hive's).
        "mod" => match args.as_slice() {
            [a, b] => Expr::BinaryOp {
                left: Box::new(Expr::Nested(Box::new(a.clone()))),
                op: BinaryOperator::Modulo,
                right: Box::new(Expr::Nested(Box::new(b.clone()))),
            },
            _ => return None,
        },
        // index(a, n) is `a[n]` (0-based for arrays, a key for maps).
        "index" => match args.as_slice() {
            [a, n] => Expr::CompoundFieldAccess {
                root: Box::new(a.clone()),
                access_chain: vec![datafusion::sql::sqlparser::ast::AccessExpr::Subscript(
                    datafusion::sql::sqlparser::ast::Subscript::Index { index: n.clone() },
                )],
            },
            _ => return None,
        },
        "logged_in_user" if args.is_empty() => call("current_user", vec![]),
        "current_schema" if args.is_empty() => call("current_database", vec![]),
        "current_catalog" if args.is_empty() => Expr::Value(ValueWithSpan::from(
            Value::SingleQuotedString("hive".into()),
        )),
        "buildversion" if args.is_empty() => call("version", vec![]),
        "to_unix_timestamp" if !args.is_empty() => call("unix_timestamp", args.clone()),
        // floor_day(ts) .. floor_year(ts): the timestamp truncated, as date_trunc.
        "floor_second" | "floor_minute" | "floor_hour" | "floor_day" | "floor_week"
        | "floor_month" | "floor_quarter" | "floor_year" => match args.as_slice() {
            [t] => call(
                "date_trunc",
                vec![
                    Expr::Value(ValueWithSpan::from(Value::SingleQuotedString(
                        name.trim_start_matches("floor_").into(),
                    ))),
                    try_cast(t.clone(), DataType::Timestamp(Some(6), TimezoneInfo::None)),
                ],
            ),
            _ => return None,
        },
        // mid(s, pos[, len]): Hive 4's other name of substr.
        "mid" if matches!(args.len(), 2 | 3) => call("substr", args.clone()),
        // likeany(s, p1, ..) / likeall(s, p1, ..): s LIKE some / every pattern, with SQL's
        // three-valued OR / AND (NULL when undecided because of a NULL).
        "likeany" | "likeall" if args.len() >= 2 => {
            let op = if name == "likeany" {
                BinaryOperator::Or
            } else {
                BinaryOperator::And
            };
            let likes = args[1..].iter().map(|p| Expr::Like {
                negated: false,
                any: false,
                expr: Box::new(args[0].clone()),
                pattern: Box::new(p.clone()),
                escape_char: None,
            });
            Expr::Nested(Box::new(joined(likes, op)?))
        }
        // tumbling_window(ts, interval[, origin]): the start of the window of ts, windows of
        // the interval's length from the origin (the epoch by default), as date_bin.
        "tumbling_window" => match args.as_slice() {
            [t, width, rest @ ..] if rest.len() <= 1 => {
                let mut bin_args = vec![
                    width.clone(),
                    try_cast(t.clone(), DataType::Timestamp(Some(6), TimezoneInfo::None)),
                ];
                bin_args.extend(rest.iter().map(|o| {
                    try_cast(o.clone(), DataType::Timestamp(Some(6), TimezoneInfo::None))
                }));
                call("date_bin", bin_args)
            }
            _ => return None,
        },
        // Hive's array_remove removes every occurrence; array_position is 0 when absent.
        "array_remove" => call("array_remove_all", args.clone()),
        "array_position" => match args.as_slice() {
            [a, x] => Expr::Case {
                case_token: AttachedToken::empty(),
                end_token: AttachedToken::empty(),
                operand: None,
                conditions: vec![CaseWhen {
                    condition: Expr::BinaryOp {
                        left: Box::new(Expr::IsNull(Box::new(a.clone()))),
                        op: BinaryOperator::Or,
                        right: Box::new(Expr::IsNull(Box::new(x.clone()))),
                    },
                    result: Expr::Value(ValueWithSpan::from(Value::Null)),
                }],
                else_result: Some(Box::new(call(
                    "coalesce",
                    vec![call("array_position", args.clone()), number(0)],
                ))),
            },
            _ => return None,
        },
        "e" if args.is_empty() => call(
            "exp",
            vec![Expr::Value(ValueWithSpan::from(Value::Number(
                "1.0".into(),
                false,
            )))],
        ),
        _ => return None,
    })
}

fn number(n: usize) -> Expr {
    Expr::Value(ValueWithSpan::from(Value::Number(n.to_string(), false)))
}

/// Hive's ranking window functions answer INT (DataFusion's, an unsigned 64-bit number).
fn ranks(f: &Function) -> bool {
    f.over.is_some()
        && matches!(
            function_name(f).as_deref(),
            Some("row_number" | "rank" | "dense_rank" | "ntile")
        )
}

fn try_cast(e: Expr, to: DataType) -> Expr {
    Expr::Cast {
        kind: CastKind::TryCast,
        expr: Box::new(e),
        data_type: to,
        array: false,
        format: None,
    }
}

/// Hive's `size(array|map)`: an INT, and -1 for NULL.
fn hive_size(e: &mut Expr) {
    let Expr::Function(f) = e else { return };
    let Some(args) = plain_args(f) else { return };
    if args.len() != 1 {
        return;
    }
    let minus_one = Expr::Value(ValueWithSpan::from(Value::Number("-1".into(), false)));
    *e = Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(call("coalesce", vec![call("cardinality", args), minus_one])),
        data_type: DataType::Int(None),
        array: false,
        format: None,
    };
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
            for (i, item) in select.projection.iter_mut().enumerate() {
                if let SelectItem::UnnamedExpr(e) = item {
                    if !matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
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

/// Functions whose result type depends on a constant argument (`round(d, 2)` is DECIMAL with
/// 2 places): their integer literals stay bare, the form in which a function's typing sees
/// them as constants.
const TYPED_BY_CONSTANTS: [&str; 2] = ["round", "bround"];

/// The expressions joined by `op` (`a AND b AND c`); None for none.
fn joined(exprs: impl Iterator<Item = Expr>, op: BinaryOperator) -> Option<Expr> {
    exprs.reduce(|l, r| Expr::BinaryOp {
        left: Box::new(l),
        op: op.clone(),
        right: Box::new(r),
    })
}

/// The patterns of `LIKE ALL (p1, ..)`, which the parser reads as a call of `all`.
fn like_all_patterns(pattern: &Expr) -> Option<Vec<Expr>> {
    match pattern {
        Expr::Function(f) if function_name(f).as_deref() == Some("all") => plain_args(f),
        _ => None,
    }
}

/// An integer literal that fits in 32 bits is Hive's INT (except as an argument of
/// [`TYPED_BY_CONSTANTS`]).
fn int_literal(e: &mut Expr) {
    if let Expr::Function(f) = e {
        if function_name(f).is_some_and(|n| TYPED_BY_CONSTANTS.contains(&n.as_str())) {
            if let FunctionArguments::List(list) = &mut f.args {
                for a in &mut list.args {
                    if let FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) = a {
                        if let Expr::Cast {
                            expr,
                            data_type: DataType::Int(None),
                            ..
                        } = x
                        {
                            if matches!(**expr, Expr::Value(_)) {
                                *x = (**expr).clone();
                            }
                        }
                    }
                }
            }
        }
        return;
    }
    if let Expr::Value(v) = e {
        if let Value::Number(n, false) = &v.value {
            if n.parse::<i32>().is_ok() {
                *e = Expr::Cast {
                    kind: CastKind::Cast,
                    expr: Box::new(e.clone()),
                    data_type: DataType::Int(None),
                    array: false,
                    format: None,
                };
            }
        }
    }
}

/// `CAST(x AS TIMESTAMP)` and `TIMESTAMP '..'` in microseconds, the unit of TIMESTAMP
/// columns, whose range holds Hive's years 0001 to 9999 (DataFusion's default unit,
/// nanoseconds, ends in 1677 and 2262).
fn microsecond_timestamp(e: &mut Expr) {
    let declared = match e {
        Expr::Cast { data_type, .. } => data_type,
        Expr::TypedString(t) => &mut t.data_type,
        _ => return,
    };
    if matches!(declared, DataType::Timestamp(None, TimezoneInfo::None)) {
        *declared = DataType::Timestamp(Some(6), TimezoneInfo::None);
    }
}

/// Gives Hive types Arrow lacks to casts and literals: `CAST(x AS VARCHAR(n))`,
/// `CAST(x AS CHAR(n))` and year-month intervals become `hive_typed(..)` calls.
fn hive_typed(e: &mut Expr) {
    if let Expr::Cast { data_type, .. } = e {
        // Hive's BINARY is DataFusion's BYTEA; STRING stays STRING.
        if matches!(data_type, DataType::Binary(_) | DataType::Varbinary(_)) {
            *data_type = DataType::Bytea;
            return;
        }
    }
    let declared = match e {
        Expr::Cast {
            kind: CastKind::Cast,
            data_type,
            ..
        } => match data_type {
            DataType::Varchar(Some(CharacterLength::IntegerLength { length, .. }))
            | DataType::CharVarying(Some(CharacterLength::IntegerLength { length, .. })) => {
                format!("varchar({length})")
            }
            DataType::Char(Some(CharacterLength::IntegerLength { length, .. }))
            | DataType::Character(Some(CharacterLength::IntegerLength { length, .. })) => {
                format!("char({length})")
            }
            _ => return,
        },
        Expr::Interval(i)
            if matches!(
                i.leading_field,
                Some(
                    DateTimeField::Year
                        | DateTimeField::Years
                        | DateTimeField::Month
                        | DateTimeField::Months
                )
            ) && matches!(
                i.last_field,
                None | Some(DateTimeField::Month | DateTimeField::Months)
            ) =>
        {
            "interval_year_month".to_string()
        }
        _ => return,
    };
    let inner = match &*e {
        Expr::Cast { expr, .. } => Expr::Cast {
            kind: CastKind::Cast,
            expr: expr.clone(),
            data_type: DataType::String(None),
            array: false,
            format: None,
        },
        other => other.clone(),
    };
    let type_name = Expr::Value(ValueWithSpan::from(Value::SingleQuotedString(declared)));
    *e = call(crate::functions::HIVE_TYPED, vec![inner, type_name]);
}
