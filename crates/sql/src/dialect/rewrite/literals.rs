//! Hive's literals: integer literals typed INT (Hive's type for them; sqlparser's are
//! BIGINT), Hive's typed literals (`TIMESTAMP '..'` to the microsecond, `1Y`..), and the
//! declared types Arrow cannot express (VARCHAR(n), CHAR(n)) carried by `hive_typed`.

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    visit_expressions_mut, CastKind, CharacterLength, DataType, DateTimeField, Expr, FunctionArg,
    FunctionArgExpr, FunctionArguments, GroupByExpr, OrderBy, OrderByKind, Query, SelectItem,
    SetExpr, TimezoneInfo, UnaryOperator, Value, ValueWithSpan, VisitorMut,
};

use crate::dialect::rewrite::functions::TYPED_BY_CONSTANTS;
use crate::dialect::syntax::{call, function_name};

/// Types the integer literals of every query's SELECT lists INT ([`int_literal`]).
pub(crate) struct IntLiterals;

impl VisitorMut for IntLiterals {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
        type_literals(&mut query.body);
        // ORDER BY names the select list's expressions as written (`ORDER BY count(1)`); a
        // bare number stays, a position.
        if let Some(OrderBy {
            kind: OrderByKind::Expressions(keys),
            ..
        }) = &mut query.order_by
        {
            for key in keys
                .iter_mut()
                .filter(|k| !matches!(k.expr, Expr::Value(_)))
            {
                let _ = visit_expressions_mut(&mut key.expr, |x| {
                    int_literal(x);
                    ControlFlow::<()>::Continue(())
                });
            }
        }
        ControlFlow::Continue(())
    }
}

/// [`int_literal`] over the select lists, GROUP BY and HAVING expressions of a query body
/// (every branch of a set operation).
pub(crate) fn type_literals(body: &mut SetExpr) {
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
            // HAVING names the select list's aggregates as written (`HAVING count(1) > 1`).
            if let Some(having) = &mut select.having {
                let _ = visit_expressions_mut(having, |x| {
                    int_literal(x);
                    ControlFlow::<()>::Continue(())
                });
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

/// Whether a numeric literal's text is Hive's DOUBLE: it has an exponent, or a point and more
/// digits than a DECIMAL's 38.
pub(crate) fn double_literal(n: &str) -> bool {
    n.contains(['e', 'E']) || (n.contains('.') && n.bytes().filter(u8::is_ascii_digit).count() > 38)
}

/// An integer literal that fits in 32 bits is Hive's INT (except as an argument of
/// [`TYPED_BY_CONSTANTS`]).
pub(crate) fn int_literal(e: &mut Expr) {
    if let Expr::Function(f) = e {
        if function_name(f).is_some_and(|n| TYPED_BY_CONSTANTS.contains(&n.as_str())) {
            if let FunctionArguments::List(list) = &mut f.args {
                for a in &mut list.args {
                    if let FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) = a {
                        // `-2` is a minus over the literal: the literal stays bare under it.
                        let x = match x {
                            Expr::UnaryOp {
                                op: UnaryOperator::Minus,
                                expr,
                            } => &mut **expr,
                            x => x,
                        };
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
pub(crate) fn microsecond_timestamp(e: &mut Expr) {
    let declared = match e {
        Expr::Cast { data_type, .. } => data_type,
        Expr::TypedString(t) => &mut t.data_type,
        _ => return,
    };
    if matches!(declared, DataType::Timestamp(None, TimezoneInfo::None)) {
        *declared = DataType::Timestamp(Some(6), TimezoneInfo::None);
    }
}

/// Hive's intervals: `INTERVAL '1-2' YEAR TO MONTH`, `INTERVAL '1 2:3:4' DAY TO SECOND`,
/// `INTERVAL (n) DAY`, .. become `hive_interval(value, 'unit')`, a year-month interval or an
/// exact day-time one, whose value may be any expression. An interval without a unit
/// (`INTERVAL '1 day'`) stays DataFusion's.
pub(crate) fn hive_interval(e: &mut Expr) {
    let Expr::Interval(i) = e else {
        return;
    };
    let unit = |f: &DateTimeField| -> Option<&'static str> {
        Some(match f {
            DateTimeField::Year | DateTimeField::Years => "year",
            DateTimeField::Month | DateTimeField::Months => "month",
            DateTimeField::Day | DateTimeField::Days => "day",
            DateTimeField::Hour | DateTimeField::Hours => "hour",
            DateTimeField::Minute | DateTimeField::Minutes => "minute",
            DateTimeField::Second | DateTimeField::Seconds => "second",
            _ => return None,
        })
    };
    let Some(leading) = i.leading_field.as_ref().and_then(unit) else {
        return;
    };
    let span = match &i.last_field {
        None => leading.to_string(),
        Some(last) => match unit(last) {
            Some(last) => format!("{leading} to {last}"),
            None => return,
        },
    };
    let value = (*i.value).clone();
    let span = Expr::Value(ValueWithSpan::from(Value::SingleQuotedString(span)));
    *e = call(apiary_hive_functions::HIVE_INTERVAL, vec![value, span]);
}

/// Gives Hive types Arrow lacks to casts: `CAST(x AS VARCHAR(n))` and `CAST(x AS CHAR(n))`
/// become `hive_typed(..)` calls.
pub(crate) fn hive_typed(e: &mut Expr) {
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
        _ => return,
    };
    // The value as CAST(x AS STRING) writes it (`TRUE`, a TIMESTAMP with a blank, a CHAR
    // without its padding), then cut or padded to the declared length.
    let inner = match &*e {
        Expr::Cast { expr, .. } => call(
            apiary_hive_functions::HIVE_CAST_TO_STRING,
            vec![(**expr).clone()],
        ),
        other => other.clone(),
    };
    let type_name = Expr::Value(ValueWithSpan::from(Value::SingleQuotedString(declared)));
    *e = call(apiary_hive_functions::HIVE_TYPED, vec![inner, type_name]);
}
