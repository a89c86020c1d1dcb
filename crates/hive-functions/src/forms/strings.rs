//! Hive's functions that differ from DataFusion's of the same name only in NULLs and text,
//! and `locate`: `concat(a, ..)` (NULL when any argument is; each written as Hive writes a
//! value as text, a DOUBLE as Java does), `greatest(a, ..)` and `least(a, ..)` (NULL when any
//! argument is; DataFusion's skip NULLs), `locate(sub, s[, pos])` (the 1-based position of
//! sub in s from pos, 0 when absent, when pos < 1 or pos is NULL).

use std::sync::Arc;

use arrow::datatypes::DataType;
use datafusion::common::{plan_err, Result, ScalarValue};
use datafusion::functions::unicode::{strpos, substr};
use datafusion::logical_expr::{cast, lit, when, Expr, ScalarUDF};

use crate::conversion::{hive_cast_to_string_udf, hive_to_string_udf};
use crate::forms::expr_fn::{call_coerced, ExprFn};

/// `NULL` of `t` when any of `args` is NULL, else `value`.
fn null_if_any_null(args: &[Expr], t: &DataType, value: Expr) -> Result<Expr> {
    let any_null = args.iter().map(|a| a.clone().is_null()).reduce(Expr::or);
    match any_null {
        Some(any_null) => Ok(when(any_null, lit(ScalarValue::try_from(t)?)).otherwise(value)?),
        None => Ok(value),
    }
}

/// Hive's `greatest` or `least` on DataFusion's `function`: its coercion (every argument to
/// one type), NULL when any argument is. A FLOAT compared as a DECIMAL is the DECIMAL of its
/// text, as Hive converts it (`-1.1`, not the DOUBLE `-1.100000023841858`): it arrives as
/// text and is read as the DECIMAL here.
fn extreme(name: &'static str, function: Arc<ScalarUDF>) -> ExprFn {
    let coerce = Arc::clone(&function);
    ExprFn::new(name, 1..=usize::MAX, move |args, types| {
        let decimal = types.iter().find(|t| t.is_decimal()).cloned();
        let t = decimal
            .clone()
            .or_else(|| types.first().cloned())
            .unwrap_or(DataType::Null);
        let args: Vec<Expr> = args
            .into_iter()
            .zip(types)
            .map(|(a, at)| match &decimal {
                Some(d) if *at == DataType::Utf8 => cast(a, d.clone()),
                _ => a,
            })
            .collect();
        null_if_any_null(&args, &t, function.call(args.clone()))
    })
    .coerced(move |types| {
        let wanted = coerce.coerce_types(types)?;
        Ok(types
            .iter()
            .zip(wanted)
            .map(|(from, to)| match (from, &to) {
                (DataType::Float16 | DataType::Float32, t) if t.is_decimal() => DataType::Utf8,
                _ => to,
            })
            .collect())
    })
}

/// `lpad`/`rpad(str, len, pad)`: a BOOLEAN string or pad is Hive's text of it (`TRUE`).
fn pad(name: &'static str, function: Arc<ScalarUDF>) -> ExprFn {
    ExprFn::new(name, 3..=3, move |args, types| {
        let (args, types): (Vec<Expr>, Vec<DataType>) = args
            .into_iter()
            .zip(types)
            .map(|(a, t)| match t {
                DataType::Boolean => (hive_cast_to_string_udf().call(vec![a]), DataType::Utf8),
                _ => (a, t.clone()),
            })
            .unzip();
        call_coerced(&function, args, &types)
    })
}

/// The functions of this family.
pub(crate) fn functions() -> Vec<ExprFn> {
    vec![
        ExprFn::new("concat", 1..=usize::MAX, |args, _| {
            let texts = args
                .iter()
                .map(|a| hive_to_string_udf().call(vec![a.clone()]))
                .collect();
            let concat = datafusion::functions::string::concat().call(texts);
            null_if_any_null(&args, &DataType::Utf8, concat)
        }),
        extreme("greatest", datafusion::functions::core::greatest()),
        extreme("least", datafusion::functions::core::least()),
        pad("lpad", datafusion::functions::unicode::lpad()),
        pad("rpad", datafusion::functions::unicode::rpad()),
        // translate(str, from, to) of Hive's texts: a CHAR without its padding.
        ExprFn::new("translate", 3..=3, |args, _| {
            let texts: Vec<Expr> = args
                .into_iter()
                .map(|a| hive_to_string_udf().call(vec![a]))
                .collect();
            Ok(datafusion::functions::unicode::translate().call(texts))
        }),
        // instr(str, substr): 1-based, 0 when absent; numbers and booleans as Hive's text.
        ExprFn::new("instr", 2..=2, |args, _| {
            let texts: Vec<Expr> = args
                .into_iter()
                .map(|a| hive_to_string_udf().call(vec![a]))
                .collect();
            Ok(cast(strpos().call(texts), DataType::Int32))
        }),
        ExprFn::new("locate", 2..=3, |args, _| {
            let mut args = args.into_iter();
            let (Some(sub), Some(s)) = (args.next(), args.next()) else {
                return plan_err!("locate takes (substr, str[, pos])");
            };
            let Some(pos) = args.next() else {
                return Ok(cast(strpos().call(vec![s, sub]), DataType::Int32));
            };
            let found = cast(
                strpos().call(vec![substr().call(vec![s, pos.clone()]), sub]),
                DataType::Int64,
            );
            let zero = lit(0i64);
            let position = when(pos.clone().is_null(), zero.clone())
                .when(pos.clone().lt(lit(1i64)), zero.clone())
                .when(found.clone().eq(zero.clone()), zero)
                .otherwise(found + pos - lit(1i64))?;
            Ok(cast(position, DataType::Int32))
        })
        .coerced(|types| {
            let mut to = vec![DataType::Utf8, DataType::Utf8];
            if types.len() == 3 {
                to.push(DataType::Int64);
            }
            Ok(to)
        }),
    ]
}

#[cfg(test)]
mod tests {
    use crate::forms::tests::answers;

    #[tokio::test]
    async fn nulls_texts_and_positions() {
        assert_eq!(
            answers(
                "SELECT concat('a', 1, 1.5e10), concat('a', NULL), greatest(1, 2.5, 2), \
                 greatest(1, NULL), least('b', 'a'), locate('bar', 'foobarbar'), \
                 locate('bar', 'foobarbar', 5), locate('bar', 'foobarbar', 0), \
                 locate('x', 'foobarbar'), locate('bar', 'foobarbar', NULL)"
            )
            .await,
            ["a11.5E10", "", "2.5", "", "a", "4", "7", "0", "0", "0"]
        );
    }
}
