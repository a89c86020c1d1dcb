//! Hive's functions and operators written as DataFusion's: the functions Hive names or types
//! differently (`array(..)`, `map(..)`, the date functions, `pmod`, `size`, `percentile`,
//! `field`, ...), the casts Hive performs (text to integers, a type named as a function),
//! and the list of Hive functions planned this way ([`REWRITTEN_FUNCTIONS`]).

use datafusion::sql::sqlparser::ast::helpers::attached_token::AttachedToken;
use datafusion::sql::sqlparser::ast::CaseWhen;
use datafusion::sql::sqlparser::ast::{
    BinaryOperator, CastKind, DataType, Expr, Function, FunctionArg, FunctionArgExpr,
    FunctionArguments, Ident, ObjectName, ObjectNamePart, TimezoneInfo, UnaryOperator, Value,
    ValueWithSpan,
};

use crate::dialect::syntax::{call, function_name, joined, number, plain_args, try_cast};
use crate::error::{HiveError, SqlError};

/// Hive's `percentile(x, p)` (exact, interpolated) as DataFusion's `percentile_cont` over the
/// value as a DOUBLE, a DOUBLE; with an array of percentiles, an array of them.
/// (`percentile_approx` is Hive's own histogram, in the `apiary-hive-functions` crate.)
pub(crate) fn hive_percentile(e: &mut Expr) {
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
pub(crate) fn as_double(x: Expr) -> Expr {
    Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(x),
        data_type: DataType::Double(datafusion::sql::sqlparser::ast::ExactNumberInfo::None),
        array: false,
        format: None,
    }
}

/// The percentiles of an array of them written in place (`array(0.25, 0.75)`); None for one.
pub(crate) fn listed_percentiles(p: &Expr) -> Option<Vec<Expr>> {
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
pub(crate) fn hive_percentile_disc(e: &mut Expr) -> Result<(), SqlError> {
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

/// `CAST(x AS TINYINT | SMALLINT | INT | BIGINT)` reads text as Hive does: blanks around it
/// ignored, a fraction dropped (`' 1.5 '` is 1), so the text goes through
/// [`apiary_hive_functions::HIVE_INTEGER_TEXT`] first (other values pass through it unchanged).
pub(crate) fn integer_text(e: &mut Expr) {
    if let Expr::Cast {
        expr,
        data_type:
            DataType::TinyInt(_) | DataType::SmallInt(_) | DataType::Int(_) | DataType::BigInt(_),
        ..
    } = e
    {
        **expr = call(
            apiary_hive_functions::HIVE_INTEGER_TEXT,
            vec![(**expr).clone()],
        );
    }
}

/// Hive's casts written as functions of the type's name (`INT(x)`, `bigint('5')`, as
/// Superset's week grains write them): `CAST(x AS <type>)`, NULL where x does not convert.
pub(crate) fn type_named_cast(f: &Function) -> Option<Expr> {
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
            return Some(call(
                apiary_hive_functions::HIVE_CAST_TO_STRING,
                vec![value],
            ));
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
pub(crate) fn hive_pmod(e: &mut Expr) {
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
    "current_catalog",
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
    "likeall",
    "likeany",
    "locate",
    "map",
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
    "size",
    "to_unix_timestamp",
    "tumbling_window",
    "weekofyear",
    "year",
];

/// The field a Hive date function reads (`year(d)` is the year of `d`).
pub(crate) fn date_field(f: &Function) -> Option<&'static str> {
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
pub(crate) fn hive_date_part(e: &mut Expr) {
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

/// Hive's `array(a, b)` is DataFusion's `make_array`; Hive's `map(k1, v1, k2, v2)` becomes
/// DataFusion's `map([k1, k2], [v1, v2])`; the date functions that take a date take a string
/// or timestamp too (`date_add('2026-01-31', 1)`), as a date (NULL when it is none).
pub(crate) fn hive_function(f: &mut Function) {
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
pub(crate) fn hive_operator(f: &Function) -> Option<Expr> {
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
                            .map(|a| call(apiary_hive_functions::HIVE_TO_STRING, vec![a.clone()]))
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
        "current_catalog" if args.is_empty() => Expr::Value(ValueWithSpan::from(
            Value::SingleQuotedString("hive".into()),
        )),
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

/// Hive's ranking window functions answer INT (DataFusion's, an unsigned 64-bit number).
pub(crate) fn ranks(f: &Function) -> bool {
    f.over.is_some()
        && matches!(
            function_name(f).as_deref(),
            Some("row_number" | "rank" | "dense_rank" | "ntile")
        )
}

/// Hive's `size(array|map)`: an INT, and -1 for NULL.
pub(crate) fn hive_size(e: &mut Expr) {
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

/// Functions whose result type depends on a constant argument (`round(d, 2)` is DECIMAL with
/// 2 places): their integer literals stay bare, the form in which a function's typing sees
/// them as constants.
pub(crate) const TYPED_BY_CONSTANTS: [&str; 2] = ["round", "bround"];

/// The patterns of `LIKE ALL (p1, ..)`, which the parser reads as a call of `all`.
pub(crate) fn like_all_patterns(pattern: &Expr) -> Option<Vec<Expr>> {
    match pattern {
        Expr::Function(f) if function_name(f).as_deref() == Some("all") => plain_args(f),
        _ => None,
    }
}
