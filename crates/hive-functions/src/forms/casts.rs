//! Hive's casts written as functions of the type's name: `boolean(x)`, `tinyint(x)`,
//! `smallint(x)`, `int(x)`, `bigint(x)`, `float(x)`, `double(x)`, `string(x)`, `date(x)`,
//! `timestamp(x)` and `binary(x)` (Superset's week grains write `timestamp(..)`): the value as
//! that type, NULL where it does not convert. The integer types read text as Hive's casts do
//! (blanks around it ignored, a fraction dropped: `int(' 1.5 ')` is 1); `string(x)` writes a
//! value as Hive's CAST does (a DOUBLE as Java does, a BOOLEAN as `TRUE`).

use arrow::datatypes::{DataType, TimeUnit};
use datafusion::logical_expr::try_cast;

use crate::conversion::{hive_cast_to_string_udf, hive_integer_text_udf};
use crate::forms::expr_fn::{take, ExprFn};

/// The casts and the type each gives.
fn casts() -> Vec<(&'static str, DataType)> {
    vec![
        ("boolean", DataType::Boolean),
        ("tinyint", DataType::Int8),
        ("smallint", DataType::Int16),
        ("int", DataType::Int32),
        ("bigint", DataType::Int64),
        ("float", DataType::Float32),
        ("double", DataType::Float64),
        ("date", DataType::Date32),
        (
            "timestamp",
            DataType::Timestamp(TimeUnit::Microsecond, None),
        ),
        ("binary", DataType::Binary),
    ]
}

/// The functions of this family.
pub(crate) fn functions() -> Vec<ExprFn> {
    let mut functions: Vec<ExprFn> = casts()
        .into_iter()
        .map(|(name, to)| {
            ExprFn::new(name, 1..=1, move |args, types| {
                let [x] = take(args)?;
                if let Some(converted) = crate::coercion::hive_conversion(&x, &types[0], &to) {
                    return Ok(converted);
                }
                let x = if to.is_integer() {
                    hive_integer_text_udf().call(vec![x])
                } else {
                    x
                };
                Ok(try_cast(x, to.clone()))
            })
        })
        .collect();
    functions.push(ExprFn::new("string", 1..=1, |args, _| {
        let [x] = take(args)?;
        Ok(hive_cast_to_string_udf().call(vec![x]))
    }));
    functions
}

#[cfg(test)]
mod tests {
    use crate::forms::tests::answers;

    #[tokio::test]
    async fn casts_named_by_their_type() {
        assert_eq!(
            answers(
                "SELECT int(' 1.5 '), bigint('x'), smallint('12'), double('2.5'), \
                 boolean(1), string(1.0e10), string(true), date('2026-12-07'), \
                 timestamp('2026-12-07 10:00:00'), float('1.25')"
            )
            .await,
            [
                "1",
                "",
                "12",
                "2.5",
                "true",
                "1.0E10",
                "TRUE",
                "2026-12-07",
                "2026-12-07T10:00:00",
                "1.25"
            ]
        );
    }
}
