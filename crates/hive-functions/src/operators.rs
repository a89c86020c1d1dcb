//! Hive's operators where they differ from DataFusion's, as expression planners: arithmetic
//! and comparisons of mixed types ([`HiveOperators`]) and 0-based array subscripts
//! ([`HiveSubscripts`]).

use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;

/// Hive's arithmetic and comparison operators where their types differ from DataFusion's,
/// planned as the SQL is read (so every name and type above them is the new one's):
/// - `/` of two integers is a DOUBLE (`7 / 2` is 3.5; DataFusion's would be 3), and `/` or `%`
///   by zero is NULL (DataFusion's would be an error, or infinity for doubles); decimals keep
///   DataFusion's DECIMAL division, as Hive's do; `a DIV b` is the BIGINT quotient, NULL by
///   zero;
/// - text in `+ - * / %` is read as a DOUBLE (`7 - '5'` is 2.0);
/// - `= <> < <= > >= <=>` of text and a number, or of a DECIMAL and a DOUBLE, compare DOUBLEs.
/// - `||` writes numbers, booleans and dates as Hive's text before concatenating.
#[derive(Debug)]
pub struct HiveOperators;

impl datafusion::logical_expr::planner::ExprPlanner for HiveOperators {
    fn plan_binary_op(
        &self,
        expr: datafusion::logical_expr::planner::RawBinaryExpr,
        schema: &datafusion::common::DFSchema,
    ) -> Result<
        datafusion::logical_expr::planner::PlannerResult<
            datafusion::logical_expr::planner::RawBinaryExpr,
        >,
    > {
        use datafusion::logical_expr::planner::PlannerResult;
        use datafusion::logical_expr::{lit, BinaryExpr, Expr, ExprSchemable, Operator};
        use datafusion::sql::sqlparser::ast::BinaryOperator;
        if expr.op == BinaryOperator::StringConcat {
            return Ok(concat_as_text(expr, schema));
        }
        let op = match expr.op {
            BinaryOperator::Divide => Operator::Divide,
            BinaryOperator::Modulo => Operator::Modulo,
            BinaryOperator::MyIntegerDivide => Operator::IntegerDivide,
            BinaryOperator::Plus => Operator::Plus,
            BinaryOperator::Minus => Operator::Minus,
            BinaryOperator::Multiply => Operator::Multiply,
            BinaryOperator::Eq => Operator::Eq,
            BinaryOperator::NotEq => Operator::NotEq,
            BinaryOperator::Lt => Operator::Lt,
            BinaryOperator::LtEq => Operator::LtEq,
            BinaryOperator::Gt => Operator::Gt,
            BinaryOperator::GtEq => Operator::GtEq,
            BinaryOperator::Spaceship => Operator::IsNotDistinctFrom,
            _ => return Ok(PlannerResult::Original(expr)),
        };
        let comparison = matches!(
            op,
            Operator::Eq
                | Operator::NotEq
                | Operator::Lt
                | Operator::LtEq
                | Operator::Gt
                | Operator::GtEq
                | Operator::IsNotDistinctFrom
        );
        let (Ok(lt), Ok(rt)) = (expr.left.get_type(schema), expr.right.get_type(schema)) else {
            return Ok(PlannerResult::Original(expr));
        };
        if let Some(planned) = date_arithmetic(op, &expr, &lt, &rt, schema)? {
            return Ok(PlannerResult::Planned(planned));
        }
        let text =
            |t: &DataType| matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
        // A CHAR compares without its padding (`CAST('abc' AS CHAR(10)) = 'abc'` is true).
        let char_typed = |e: &Expr| {
            e.to_field(schema).ok().is_some_and(|(_, f)| {
                f.metadata()
                    .get(apiary_hive_types::types::HIVE_TYPE_KEY)
                    .is_some_and(|t| t.starts_with("char("))
            })
        };
        if comparison
            && text(&lt)
            && text(&rt)
            && (char_typed(&expr.left) || char_typed(&expr.right))
        {
            use datafusion::functions::string::expr_fn::rtrim;
            return Ok(PlannerResult::Planned(Expr::BinaryExpr(BinaryExpr::new(
                Box::new(rtrim(vec![expr.left, lit(" ")])),
                op,
                Box::new(rtrim(vec![expr.right, lit(" ")])),
            ))));
        }
        let operand = |t: &DataType| t.is_numeric() || t.is_null() || text(t);
        if !operand(&lt) || !operand(&rt) {
            return Ok(PlannerResult::Original(expr));
        }
        // Text in arithmetic and comparisons is read as a DOUBLE (`7 - '5'` is 2.0), NULL when it
        // is no number.
        let as_double = |e: Expr, t: &DataType| -> Expr {
            if text(t) {
                Expr::TryCast(datafusion::logical_expr::TryCast::new(
                    Box::new(e),
                    DataType::Float64,
                ))
            } else {
                e
            }
        };
        if comparison {
            // Text against a number compares as DOUBLEs (`'1.0' = 1` is true, `'10' > 9` too),
            // NULL where the text is no number; a DECIMAL against a DOUBLE or FLOAT too (Hive's
            // common type; DataFusion's would be a wide DECIMAL the double does not convert to
            // exactly, so `d = 1000000.75` would be false); anything else as DataFusion does.
            let float = |t: &DataType| matches!(t, DataType::Float32 | DataType::Float64);
            let decimal = crate::coercion::is_decimal;
            let text_and_number = (text(&lt) && rt.is_numeric()) || (lt.is_numeric() && text(&rt));
            let float_and_decimal = (float(&lt) && decimal(&rt)) || (decimal(&lt) && float(&rt));
            if !text_and_number && !float_and_decimal {
                return Ok(PlannerResult::Original(expr));
            }
            let double = |e: Expr, t: &DataType| -> Result<Expr> {
                if text(t) {
                    Ok(as_double(e, t))
                } else {
                    e.cast_to(&DataType::Float64, schema)
                }
            };
            return Ok(PlannerResult::Planned(Expr::BinaryExpr(BinaryExpr::new(
                Box::new(double(expr.left, &lt)?),
                op,
                Box::new(double(expr.right, &rt)?),
            ))));
        }
        let (expr, lt, rt) = if text(&lt) || text(&rt) {
            let (l, r) = (as_double(expr.left, &lt), as_double(expr.right, &rt));
            let retype = |t: DataType| if text(&t) { DataType::Float64 } else { t };
            (
                datafusion::logical_expr::planner::RawBinaryExpr {
                    op: expr.op,
                    left: l,
                    right: r,
                },
                retype(lt),
                retype(rt),
            )
        } else if matches!(op, Operator::Plus | Operator::Minus | Operator::Multiply) {
            return Ok(PlannerResult::Original(expr));
        } else {
            (expr, lt, rt)
        };
        if matches!(op, Operator::Plus | Operator::Minus | Operator::Multiply) {
            return Ok(PlannerResult::Planned(Expr::BinaryExpr(BinaryExpr::new(
                Box::new(expr.left),
                op,
                Box::new(expr.right),
            ))));
        }
        let (op, left, right) = if op == Operator::IntegerDivide {
            // `a DIV b`: both sides as BIGINT (Hive's long division, truncating), a BIGINT.
            (
                Operator::Divide,
                expr.left.cast_to(&DataType::Int64, schema)?,
                expr.right.cast_to(&DataType::Int64, schema)?,
            )
        } else if op == Operator::Divide && lt.is_integer() && rt.is_integer() {
            (
                op,
                expr.left.cast_to(&DataType::Float64, schema)?,
                expr.right.cast_to(&DataType::Float64, schema)?,
            )
        } else {
            (op, expr.left, expr.right)
        };
        // x / 0 and x % 0 are NULL: divide by NULLIF(divisor, 0).
        let right = datafusion::functions::core::expr_fn::nullif(right, lit(0));
        Ok(PlannerResult::Planned(Expr::BinaryExpr(BinaryExpr::new(
            Box::new(left),
            op,
            Box::new(right),
        ))))
    }
}

/// Hive's arithmetic of dates with day-time intervals: a DATE plus or minus one is a
/// TIMESTAMP, and a DATE minus a DATE (or a TIMESTAMP) is a day-time interval, so the DATE is
/// read as the TIMESTAMP of its midnight. (A DATE and a year-month interval stay a DATE, a
/// TIMESTAMP and either interval a TIMESTAMP, as DataFusion has them.)
fn date_arithmetic(
    op: datafusion::logical_expr::Operator,
    expr: &datafusion::logical_expr::planner::RawBinaryExpr,
    lt: &DataType,
    rt: &DataType,
    schema: &datafusion::common::DFSchema,
) -> Result<Option<datafusion::logical_expr::Expr>> {
    use datafusion::arrow::datatypes::TimeUnit;
    use datafusion::logical_expr::{BinaryExpr, ExprSchemable, Operator};
    let date = |t: &DataType| matches!(t, DataType::Date32 | DataType::Date64);
    let timestamp = |t: &DataType| matches!(t, DataType::Timestamp(_, _));
    let day_time = |t: &DataType| matches!(t, DataType::Duration(_));
    let as_timestamp = match op {
        Operator::Plus => (date(lt) && day_time(rt)) || (day_time(lt) && date(rt)),
        Operator::Minus => {
            (date(lt) && (day_time(rt) || date(rt) || timestamp(rt))) || (timestamp(lt) && date(rt))
        }
        _ => false,
    };
    if !as_timestamp {
        return Ok(None);
    }
    let micros = DataType::Timestamp(TimeUnit::Microsecond, None);
    let side = |e: &datafusion::logical_expr::Expr, t: &DataType| {
        if date(t) {
            e.clone().cast_to(&micros, schema)
        } else {
            Ok(e.clone())
        }
    };
    Ok(Some(datafusion::logical_expr::Expr::BinaryExpr(
        BinaryExpr::new(
            Box::new(side(&expr.left, lt)?),
            op,
            Box::new(side(&expr.right, rt)?),
        ),
    )))
}

/// `a || b` is Hive's concat: operands that are not text are written as Hive writes them
/// (`1 || 1` is `'11'`, `1.2 || 1.7` is `'1.21.7'`); NULL stays NULL.
fn concat_as_text(
    expr: datafusion::logical_expr::planner::RawBinaryExpr,
    schema: &datafusion::common::DFSchema,
) -> datafusion::logical_expr::planner::PlannerResult<
    datafusion::logical_expr::planner::RawBinaryExpr,
> {
    use datafusion::logical_expr::planner::{PlannerResult, RawBinaryExpr};
    use datafusion::logical_expr::{BinaryExpr, Expr, ExprSchemable, Operator};
    let (Ok(lt), Ok(rt)) = (expr.left.get_type(schema), expr.right.get_type(schema)) else {
        return PlannerResult::Original(expr);
    };
    // Lists concatenate as DataFusion's `||` does; only scalars are Hive's text.
    let scalar = |t: &DataType| {
        t.is_numeric()
            || matches!(
                t,
                DataType::Boolean | DataType::Date32 | DataType::Timestamp(..)
            )
    };
    if !scalar(&lt) && !scalar(&rt) {
        return PlannerResult::Original(expr);
    }
    let RawBinaryExpr { left, right, .. } = expr;
    let text = |e: Expr, t: &DataType| -> Expr {
        if scalar(t) {
            crate::conversion::hive_to_string_udf().call(vec![e])
        } else {
            e
        }
    };
    PlannerResult::Planned(Expr::BinaryExpr(BinaryExpr::new(
        Box::new(text(left, &lt)),
        Operator::StringConcat,
        Box::new(text(right, &rt)),
    )))
}

/// Hive's array subscripts count from 0 (`arr[0]` is the first element; a negative or
/// too-large index is NULL); DataFusion's count from 1 and from the end when negative. Runs
/// before DataFusion's own planners and only takes list subscripts; map and struct access
/// are left to them. It also names the fields of a struct literal as Hive does.
#[derive(Debug)]
pub struct HiveSubscripts;

impl datafusion::logical_expr::planner::ExprPlanner for HiveSubscripts {
    fn plan_field_access(
        &self,
        expr: datafusion::logical_expr::planner::RawFieldAccessExpr,
        schema: &datafusion::common::DFSchema,
    ) -> Result<
        datafusion::logical_expr::planner::PlannerResult<
            datafusion::logical_expr::planner::RawFieldAccessExpr,
        >,
    > {
        use datafusion::logical_expr::planner::PlannerResult;
        use datafusion::logical_expr::{lit, when, ExprSchemable, GetFieldAccess};
        let is_list = matches!(
            expr.expr.get_type(schema)?,
            DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(_, _)
        );
        match (&expr.field_access, is_list) {
            (GetFieldAccess::ListIndex { key }, true) => {
                let key = key.as_ref().clone();
                let element = datafusion::functions_nested::expr_fn::array_element(
                    expr.expr.clone(),
                    key.clone() + lit(1i64),
                );
                Ok(PlannerResult::Planned(
                    when(key.gt_eq(lit(0i64)), element).end()?,
                ))
            }
            _ => Ok(PlannerResult::Original(expr)),
        }
    }

    /// A struct written as a literal (`STRUCT(1, 'a')` in dialects that read it so) names its
    /// fields as Hive's `struct(..)` does: `col1`, `col2`, ..
    fn plan_struct_literal(
        &self,
        args: Vec<datafusion::logical_expr::Expr>,
        is_named_struct: bool,
    ) -> Result<datafusion::logical_expr::planner::PlannerResult<Vec<datafusion::logical_expr::Expr>>>
    {
        use datafusion::logical_expr::planner::PlannerResult;
        if is_named_struct {
            return Ok(PlannerResult::Original(args));
        }
        let named = args
            .into_iter()
            .enumerate()
            .flat_map(|(i, v)| [datafusion::logical_expr::lit(format!("col{}", i + 1)), v])
            .collect();
        Ok(PlannerResult::Planned(
            datafusion::functions::core::expr_fn::named_struct(named),
        ))
    }
}
