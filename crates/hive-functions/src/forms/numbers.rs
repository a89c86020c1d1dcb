//! Hive's arithmetic written as functions: `e()`, `radians(x)`, `degrees(x)`, `negative(a)`, `positive(a)`, `mod(a, b)`
//! (`a % b`) and `pmod(a, b)` (`((a % b) + b) % b`, the remainder with b's sign), NULL by
//! zero as Hive's `%` is; text is read as a DOUBLE, as in Hive's arithmetic.

use arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue};
use datafusion::functions::core::expr_fn::nullif;
use datafusion::logical_expr::type_coercion::binary::BinaryTypeCoercer;
use datafusion::logical_expr::{cast, lit, BinaryExpr, Expr, Operator};

use crate::forms::expr_fn::{is_text, take, ExprFn};

/// Text (and NULL) as a DOUBLE, other types as they are: Hive's operands of arithmetic.
fn numeric(types: &[DataType]) -> Result<Vec<DataType>> {
    Ok(types
        .iter()
        .map(|t| {
            if is_text(t) || t.is_null() {
                DataType::Float64
            } else {
                t.clone()
            }
        })
        .collect())
}

/// Every argument as a DOUBLE.
fn as_double(types: &[DataType]) -> Result<Vec<DataType>> {
    Ok(vec![DataType::Float64; types.len()])
}

/// `left op right` with both sides cast to the types DataFusion's coercion gives the
/// operator, and the result's type.
fn arithmetic(
    left: Expr,
    left_type: &DataType,
    op: Operator,
    right: Expr,
    right_type: &DataType,
) -> Result<(Expr, DataType)> {
    let coercer = BinaryTypeCoercer::new(left_type, &op, right_type);
    let (lt, rt) = coercer.get_input_types()?;
    let result = coercer.get_result_type()?;
    let as_type = |e: Expr, from: &DataType, to: DataType| {
        if *from == to {
            e
        } else {
            cast(e, to)
        }
    };
    let expr = Expr::BinaryExpr(BinaryExpr::new(
        Box::new(as_type(left, left_type, lt)),
        op,
        Box::new(as_type(right, right_type, rt)),
    ));
    Ok((expr, result))
}

/// `b`, NULL where it is 0 (a remainder by zero is NULL).
fn nonzero(b: Expr, t: &DataType) -> Result<Expr> {
    Ok(nullif(b, lit(ScalarValue::new_zero(t)?)))
}

/// The functions of this family.
pub(crate) fn functions() -> Vec<ExprFn> {
    vec![
        ExprFn::new("e", 0..=0, |_, _| Ok(lit(std::f64::consts::E))),
        // Java 8's Math.toRadians and Math.toDegrees, whose order of operations Hive's
        // answers carry in their last digit (`radians(57.2958)` is 1.000000357564167).
        ExprFn::new("radians", 1..=1, |args, _| {
            let [a] = take(args)?;
            Ok(a / lit(180.0) * lit(std::f64::consts::PI))
        })
        .coerced(as_double),
        ExprFn::new("degrees", 1..=1, |args, _| {
            let [a] = take(args)?;
            Ok(a * lit(180.0) / lit(std::f64::consts::PI))
        })
        .coerced(as_double),
        ExprFn::new("negative", 1..=1, |args, _| {
            let [a] = take(args)?;
            Ok(Expr::Negative(Box::new(a)))
        })
        .coerced(numeric),
        ExprFn::new("positive", 1..=1, |args, _| {
            let [a] = take(args)?;
            Ok(a)
        })
        .coerced(numeric),
        ExprFn::new("mod", 2..=2, |args, types| {
            let [a, b] = take(args)?;
            Ok(arithmetic(
                a,
                &types[0],
                Operator::Modulo,
                nonzero(b, &types[1])?,
                &types[1],
            )?
            .0)
        })
        .coerced(numeric),
        ExprFn::new("pmod", 2..=2, |args, types| {
            let [a, b] = take(args)?;
            let (at, bt) = (&types[0], &types[1]);
            let (m, mt) = arithmetic(a, at, Operator::Modulo, nonzero(b.clone(), bt)?, bt)?;
            let (p, pt) = arithmetic(m, &mt, Operator::Plus, b.clone(), bt)?;
            Ok(arithmetic(p, &pt, Operator::Modulo, nonzero(b, bt)?, bt)?.0)
        })
        .coerced(numeric),
    ]
}

#[cfg(test)]
mod tests {
    use crate::forms::tests::answers;

    #[tokio::test]
    async fn arithmetic_functions() {
        assert_eq!(
            answers(
                "SELECT e(), negative(5), negative('2.5'), positive(-3), mod(7, 3), \
                 mod(7, 0), pmod(-7, 3), pmod(7, -3), pmod(-7.5, 2), pmod(7, 0)"
            )
            .await,
            [
                "2.718281828459045",
                "-5",
                "-2.5",
                "-3",
                "1",
                "",
                "2",
                "-2",
                "0.5",
                ""
            ]
        );
    }
}
