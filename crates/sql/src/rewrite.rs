//! Rewrites of a parsed HiveQL statement so DataFusion gives Hive's answers: Hive's function
//! forms (`array(..)`, `map(k1, v1, ...)`), integer literals typed INT, and unnamed result
//! columns named `_c<position>`.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    visit_expressions_mut, CastKind, CharacterLength, DataType, DateTimeField, Expr, Function,
    FunctionArg, FunctionArgExpr, FunctionArgumentList, FunctionArguments, Ident, ObjectName,
    ObjectNamePart, Query, SelectItem, SetExpr, Statement, Value, ValueWithSpan, Visit, Visitor,
};
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

pub fn to_datafusion(statement: &mut Statement) {
    let _ = visit_expressions_mut(statement, |e| {
        match e {
            Expr::Function(f) if function_name(f).as_deref() == Some("size") => hive_size(e),
            Expr::Function(f) => hive_function(f),
            _ => hive_typed(e),
        }
        ControlFlow::<()>::Continue(())
    });
    if let Statement::Query(q) = statement {
        name_result_columns(&mut q.body);
    }
}

fn function_name(f: &Function) -> Option<String> {
    match f.name.0.as_slice() {
        [ObjectNamePart::Identifier(id)] => Some(id.value.to_ascii_lowercase()),
        _ => None,
    }
}

fn plain_args(f: &Function) -> Option<Vec<Expr>> {
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

fn call(name: &str, args: Vec<Expr>) -> Expr {
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
/// DataFusion's `map([k1, k2], [v1, v2])`.
fn hive_function(f: &mut Function) {
    let Some(name) = function_name(f) else { return };
    match name.as_str() {
        "array" => f.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::new("make_array"))]),
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

/// Names unnamed expressions of the outermost SELECT `_c<i>` and types their integer
/// literals INT, as Hive does.
fn name_result_columns(body: &mut SetExpr) {
    match body {
        SetExpr::Select(select) => {
            for (i, item) in select.projection.iter_mut().enumerate() {
                if let SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } = item
                {
                    let _ = visit_expressions_mut(e, |x| {
                        int_literal(x);
                        ControlFlow::<()>::Continue(())
                    });
                }
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

/// An integer literal that fits in 32 bits is Hive's INT.
fn int_literal(e: &mut Expr) {
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
