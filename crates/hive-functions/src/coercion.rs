//! Hive's typing where it needs the types DataFusion's planner found: an analyzer rule that
//! runs just before DataFusion's type coercion.
//!
//! **Common types** where values of different types meet in one result: the branches of
//! `CASE`, `IF`, `COALESCE` and `NVL`, a simple CASE's operand and its `WHEN` values, and the
//! columns of `UNION [ALL]`. Hive ranks numbers below STRING (its `FunctionRegistry.getCommonClass`), so text meeting a
//! number makes the result a STRING, and the number is written as Hive writes it (`1.0E10`,
//! not Arrow's `10000000000`): `COALESCE(1, 'a')` is the string `'1'`, and
//! `CASE '1.0' WHEN 1 ..` compares `'1.0'` with `'1'` as text. A UNION also turns a DATE or
//! TIMESTAMP meeting text into text (`getCommonClassForUnionAll`). Numbers meeting numbers keep
//! DataFusion's coercion, which gives Hive's types (a DECIMAL and a DOUBLE meet as
//! DECIMAL(30,15) in both). DataFusion's coercion then finds the branches of one type.
//!
//! **IN and BETWEEN** compare as `=`, `<` and `>` do ([`crate::operators::HiveOperators`]):
//! text with numbers as DOUBLEs (`'1.5' IN (1.5, 2)` is true, `'x' IN (1)` NULL), and a
//! DECIMAL with a DOUBLE too (Hive's `getCommonClassForComparison`).
//!
//! **`min` and `max` of a STRUCT or ARRAY** rank a NULL field as Hive does (see
//! [`crate::aggregate`]'s `nested_min_max`).
//!
//! **Numeric aggregates over text** (`sum`, `avg`, the variance family): the text is a
//! DOUBLE, NULL where it is no number (see [`crate::aggregate`]'s `text_as_double`).
//!
//! **Casts Arrow refuses or answers otherwise**: a DATE to a number or BOOLEAN is NULL, a
//! TIMESTAMP to a number its seconds since 1970, a DECIMAL or TIMESTAMP to a BOOLEAN whether it
//! is not zero, text to a BOOLEAN false only for `''`, `'false'`, `'off'`, `'no'` and `'0'`.
//!
//! **Numbers cast to TIMESTAMP**: an integer or BOOLEAN is milliseconds since 1970-01-01
//! (Hive's `hive.int.timestamp.conversion.in.seconds`, false by default), a DOUBLE, FLOAT or
//! DECIMAL seconds with a fraction (`CAST(1.5 AS TIMESTAMP)` is 00:00:01.5). Arrow's cast
//! would read either as the target's own unit (microseconds).

use std::sync::Arc;

use arrow::datatypes::DataType;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::{Cast, ScalarFunction, TryCast};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::utils::merge_schema;
use datafusion::logical_expr::{
    lit, Expr, ExprSchemable, LogicalPlan, Projection, ScalarUDF, Union, WindowFunctionDefinition,
};
use datafusion::optimizer::AnalyzerRule;

use apiary_hive_types::types::is_text;

/// DataFusion's analyzer rules with [`HiveTyping`] just before type coercion.
pub(crate) fn analyzer_rules() -> Vec<Arc<dyn AnalyzerRule + Send + Sync>> {
    let mut rules = datafusion::optimizer::Analyzer::new().rules;
    let at = rules
        .iter()
        .position(|r| r.name() == "type_coercion")
        .unwrap_or(rules.len());
    rules.insert(at, Arc::new(HiveTyping::new()));
    rules
}

/// A RANGE frame's numeric offsets over one DATE or TIMESTAMP key in Hive's units: days of a
/// DATE, seconds of a TIMESTAMP (`ORDER BY hiredate RANGE 90 PRECEDING` is 90 days, where
/// DataFusion's coercion would read 90 months). Whether an offset changed.
fn range_offsets_in_key_units(
    params: &mut datafusion::logical_expr::expr::WindowFunctionParams,
    schema: &DFSchema,
) -> bool {
    use datafusion::common::ScalarValue;
    use datafusion::logical_expr::{WindowFrameBound, WindowFrameUnits};
    let frame = &mut params.window_frame;
    if frame.units != WindowFrameUnits::Range || params.order_by.len() != 1 {
        return false;
    }
    let Ok(key) = params.order_by[0].expr.get_type(schema) else {
        return false;
    };
    let date = matches!(key, DataType::Date32 | DataType::Date64);
    if !date && !is_timestamp(&key) {
        return false;
    }
    let interval = |v: &ScalarValue| -> Option<ScalarValue> {
        // (The planner gives a RANGE offset as its text, `'90'`, for the coercion to read.)
        let n = match v {
            ScalarValue::Utf8(Some(t)) | ScalarValue::LargeUtf8(Some(t)) => {
                t.trim().parse().ok()?
            }
            v if !v.is_null() && v.data_type().is_numeric() => {
                match v.cast_to(&DataType::Float64).ok()? {
                    ScalarValue::Float64(Some(n)) => n,
                    _ => return None,
                }
            }
            _ => return None,
        };
        if !f64::is_finite(n) {
            return None;
        }
        let (days, nanos) = if date {
            (n.trunc() as i32, 0)
        } else {
            (0, (n * 1e9).round() as i64)
        };
        Some(ScalarValue::new_interval_mdn(0, days, nanos))
    };
    let mut changed = false;
    for bound in [&mut frame.start_bound, &mut frame.end_bound] {
        if let WindowFrameBound::Preceding(v) | WindowFrameBound::Following(v) = bound {
            if let Some(i) = interval(v) {
                *v = i;
                changed = true;
            }
        }
    }
    changed
}

/// The analyzer rule (see the module's text).
#[derive(Debug)]
pub(crate) struct HiveTyping {
    to_string: Arc<ScalarUDF>,
}

/// Which types may meet text and become text with it.
#[derive(Clone, Copy, PartialEq)]
enum Meeting {
    /// CASE, IF, COALESCE, NVL: numbers only.
    Branches,
    /// UNION: numbers, dates and timestamps.
    Union,
}

/// Whether a value of type `t` becomes text where it meets text.
fn turns_to_text(t: &DataType, meeting: Meeting) -> bool {
    t.is_numeric()
        || (meeting == Meeting::Union
            && matches!(
                t,
                DataType::Date32 | DataType::Date64 | DataType::Timestamp(..)
            ))
}

/// Whether values of these types meet as text: some are text, the others text, NULL or of a
/// type that turns to text, and at least one is not text.
fn meet_as_text(types: &[&DataType], meeting: Meeting) -> bool {
    types.iter().any(|t| is_text(t))
        && types.iter().any(|t| turns_to_text(t, meeting))
        && types
            .iter()
            .all(|t| is_text(t) || t.is_null() || turns_to_text(t, meeting))
}

/// The types of `exprs`; None when one cannot be found (they are then left as they are).
fn types_of(exprs: &[&mut Expr], schema: &DFSchema) -> Option<Vec<DataType>> {
    exprs.iter().map(|e| e.get_type(schema).ok()).collect()
}

/// Replaces the expression `e` by `f` of it.
fn rewrap(e: &mut Expr, f: impl FnOnce(Expr) -> Expr) {
    let value = std::mem::replace(e, Expr::Literal(ScalarValue::Null, None));
    *e = f(value);
}

/// The text among the arguments of aggregate `function` read as DOUBLE, NULL where it is no
/// number; whether any was. Hive's `sum` counts such text as 0.0 (it marks its sum as not
/// empty before it reads the number), so `sum('a')` is 0.0 where `avg('a')` is NULL.
fn text_as_double(function: &str, args: &mut [Expr], schema: &DFSchema) -> bool {
    let mut changed = false;
    for arg in args.iter_mut() {
        if arg.get_type(schema).is_ok_and(|t| is_text(&t)) {
            rewrap(arg, |value| {
                let number =
                    Expr::TryCast(TryCast::new(Box::new(value.clone()), DataType::Float64));
                if function != "sum" {
                    return number;
                }
                let zero = datafusion::functions::core::expr_fn::coalesce(vec![number, lit(0f64)]);
                datafusion::logical_expr::when(value.is_not_null(), zero)
                    .otherwise(lit(ScalarValue::Float64(None)))
                    .unwrap_or_else(|_| lit(ScalarValue::Float64(None)))
            });
            changed = true;
        }
    }
    changed
}

/// Whether `t` is a DECIMAL of any width.
pub(crate) fn is_decimal(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Decimal32(..)
            | DataType::Decimal64(..)
            | DataType::Decimal128(..)
            | DataType::Decimal256(..)
    )
}

/// Operands of one comparison (IN's value and list, BETWEEN's value and bounds) as DOUBLEs
/// where text meets a number or a DECIMAL a DOUBLE or FLOAT, text that is no number as NULL.
/// Whether they changed.
fn compare_as_doubles(mut operands: Vec<&mut Expr>, schema: &DFSchema) -> bool {
    let Some(types) = types_of(&operands, schema) else {
        return false;
    };
    let any = |f: &dyn Fn(&DataType) -> bool| types.iter().any(f);
    let comparable = types
        .iter()
        .all(|t| t.is_numeric() || t.is_null() || is_text(t));
    let text_and_number = any(&is_text) && any(&|t: &DataType| t.is_numeric());
    let float_and_decimal = any(&|t: &DataType| t.is_floating()) && any(&is_decimal);
    if !comparable || !(text_and_number || float_and_decimal) {
        return false;
    }
    for (e, t) in operands.iter_mut().zip(&types) {
        if *t == DataType::Float64 || t.is_null() {
            continue;
        }
        let text = is_text(t);
        rewrap(e, |value| {
            if text {
                Expr::TryCast(TryCast::new(Box::new(value), DataType::Float64))
            } else {
                Expr::Cast(Cast::new(Box::new(value), DataType::Float64))
            }
        });
    }
    true
}

/// The casts whose answer Hive defines where Arrow's differs or refuses (see the module's
/// text): a DATE to a number or BOOLEAN is NULL; a TIMESTAMP to a number is its seconds
/// since 1970 (an integer type: floored), to a BOOLEAN whether it is not 1970-01-01 00:00:00;
/// a DECIMAL to a BOOLEAN whether it is not 0; text to a BOOLEAN false for '', 'false',
/// 'off', 'no' and '0' (any case), true otherwise; text to a TIMESTAMP or a DATE read as Hive
/// reads it (trimmed, one-digit fields in a timestamp). None where the cast is left as it is.
/// The expressions made have no such cast in them (or one of text already trimmed), so
/// analysing the plan again changes nothing.
pub(crate) fn hive_conversion(value: &Expr, from: &DataType, to: &DataType) -> Option<Expr> {
    use datafusion::functions::datetime::expr_fn::date_part;
    use datafusion::functions::math::expr_fn::floor;
    use datafusion::functions::string::expr_fn::lower;
    let to_number_or_boolean = to.is_numeric() || *to == DataType::Boolean;
    match from {
        DataType::Date32 | DataType::Date64 if to_number_or_boolean => {
            Some(lit(ScalarValue::try_from(to).ok()?))
        }
        DataType::Timestamp(..) if to_number_or_boolean => {
            let seconds = date_part(lit("epoch"), value.clone());
            Some(if *to == DataType::Boolean {
                seconds.not_eq(lit(0f64))
            } else if to.is_integer() {
                Expr::TryCast(TryCast::new(Box::new(floor(seconds)), to.clone()))
            } else {
                Expr::TryCast(TryCast::new(Box::new(seconds), to.clone()))
            })
        }
        // An integer into a narrower integer type wraps, as Java's narrowing does
        // (`CAST(-129 AS TINYINT)` is 127): the low bits, read signed.
        t if t.is_integer() && to.is_signed_integer() && width(t) > width(to) => {
            let bits = width(to);
            let modulus = 1i64 << bits;
            let low = datafusion::logical_expr::binary_expr(
                Expr::TryCast(TryCast::new(Box::new(value.clone()), DataType::Int64)),
                datafusion::logical_expr::Operator::BitwiseAnd,
                lit(modulus - 1),
            );
            let signed = datafusion::logical_expr::when(
                low.clone().gt_eq(lit(modulus / 2)),
                low.clone() - lit(modulus),
            )
            .otherwise(low)
            .ok()?;
            Some(datafusion::functions::core::expr_fn::arrow_cast(
                signed,
                lit(to.to_string()),
            ))
        }
        t if is_decimal(t) && *to == DataType::Boolean => {
            Some(value.clone().not_eq(lit(ScalarValue::new_zero(t).ok()?)))
        }
        // Text to a TIMESTAMP as Hive's `Timestamp.valueOf` reads it (see
        // `scalar::text_timestamp`).
        t if is_text(t) && is_timestamp(to) => {
            let micros = crate::scalar::text_timestamp::text_as_timestamp(value.clone());
            Some(match to {
                DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, _) => micros,
                _ => Expr::TryCast(TryCast::new(Box::new(micros), to.clone())),
            })
        }
        // Text to a DATE as Hive's `Date.valueOf` reads it: without the blanks around it (a
        // CHAR's padding).
        t if is_text(t) && *to == DataType::Date32 && !is_trimmed(value) => {
            Some(Expr::TryCast(TryCast::new(
                Box::new(datafusion::functions::string::expr_fn::btrim(vec![
                    value.clone()
                ])),
                to.clone(),
            )))
        }
        t if is_text(t) && *to == DataType::Boolean => {
            let lowered = lower(value.clone());
            let false_texts = ["", "false", "off", "no", "0"].map(lit);
            Some(
                datafusion::logical_expr::when(
                    value.clone().is_null(),
                    lit(ScalarValue::Boolean(None)),
                )
                .when(lowered.in_list(false_texts.to_vec(), false), lit(false))
                .otherwise(lit(true))
                .ok()?,
            )
        }
        _ => None,
    }
}

/// Whether `e` is already text with its blanks trimmed (so analysing again changes nothing).
fn is_trimmed(e: &Expr) -> bool {
    matches!(e, Expr::ScalarFunction(f) if f.func.name() == "btrim")
}

/// The bits of an integer type (64 for an unsigned 64-bit one, whose values do not all fit
/// a signed one of the same width).
fn width(t: &DataType) -> u32 {
    match t {
        DataType::Int8 | DataType::UInt8 => 8,
        DataType::Int16 | DataType::UInt16 => 16,
        DataType::Int32 | DataType::UInt32 => 32,
        _ => 64,
    }
}

fn is_timestamp(t: &DataType) -> bool {
    matches!(t, DataType::Timestamp(_, None))
}

/// A number about to be cast to a TIMESTAMP, as a TIMESTAMP the way Hive reads it (see the
/// module's text), and whether it changed. A value out of range is NULL. The TIMESTAMP comes
/// from `to_timestamp_millis`/`to_timestamp_micros`, not from a cast, so analysing the plan
/// again (INSERT and CTAS plans are) finds a TIMESTAMP there and changes nothing.
fn timestamp_of_number(value: Expr, schema: &DFSchema) -> (Expr, bool) {
    use datafusion::functions::datetime::expr_fn::{to_timestamp_micros, to_timestamp_millis};
    let Ok(t) = value.get_type(schema) else {
        return (value, false);
    };
    let try_cast = |e: Expr, t: DataType| Expr::TryCast(TryCast::new(Box::new(e), t));
    if t.is_integer() || t == DataType::Boolean {
        let millis = try_cast(value, DataType::Int64);
        (to_timestamp_millis(vec![millis]), true)
    } else if t.is_floating() || is_decimal(&t) {
        let seconds = try_cast(value, DataType::Float64);
        let micros = datafusion::functions::math::expr_fn::round(vec![seconds * lit(1_000_000f64)]);
        (
            to_timestamp_micros(vec![try_cast(micros, DataType::Int64)]),
            true,
        )
    } else {
        (value, false)
    }
}

impl HiveTyping {
    fn new() -> Self {
        Self {
            to_string: crate::conversion::hive_to_string_udf(),
        }
    }

    fn text_of(&self, e: Expr) -> Expr {
        Expr::ScalarFunction(ScalarFunction::new_udf(self.to_string.clone(), vec![e]))
    }

    /// Writes as text those of `exprs` that are not text, when they meet as text. Whether
    /// any changed; an expression whose type cannot be found leaves all as they are.
    fn unify(&self, mut exprs: Vec<&mut Expr>, schema: &DFSchema) -> bool {
        let Some(types) = types_of(&exprs, schema) else {
            return false;
        };
        if !meet_as_text(&types.iter().collect::<Vec<_>>(), Meeting::Branches) {
            return false;
        }
        for (e, t) in exprs.iter_mut().zip(&types) {
            if turns_to_text(t, Meeting::Branches) {
                rewrap(e, |value| self.text_of(value));
            }
        }
        true
    }

    fn expr(&self, e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
        if let Expr::Cast(Cast { expr, field }) | Expr::TryCast(TryCast { expr, field }) = &e {
            let converted = expr
                .get_type(schema)
                .ok()
                .and_then(|from| hive_conversion(expr, &from, field.data_type()));
            if let Some(converted) = converted {
                return Ok(Transformed::yes(converted));
            }
        }
        match e {
            Expr::ScalarFunction(mut f) => {
                let branches: Vec<&mut Expr> = match (f.func.name(), f.args.len()) {
                    ("coalesce" | "nvl", _) => f.args.iter_mut().collect(),
                    ("if", 3) => f.args.iter_mut().skip(1).collect(),
                    _ => Vec::new(),
                };
                let changed = !branches.is_empty() && self.unify(branches, schema);
                Ok(Transformed::new_transformed(
                    Expr::ScalarFunction(f),
                    changed,
                ))
            }
            Expr::Case(mut case) => {
                let results: Vec<&mut Expr> = case
                    .when_then_expr
                    .iter_mut()
                    .map(|(_, then)| then.as_mut())
                    .chain(case.else_expr.iter_mut().map(|e| e.as_mut()))
                    .collect();
                let mut changed = self.unify(results, schema);
                if let Some(operand) = case.expr.as_mut() {
                    let compared: Vec<&mut Expr> = std::iter::once(operand.as_mut())
                        .chain(
                            case.when_then_expr
                                .iter_mut()
                                .map(|(when, _)| when.as_mut()),
                        )
                        .collect();
                    changed |= self.unify(compared, schema);
                }
                Ok(Transformed::new_transformed(Expr::Case(case), changed))
            }
            Expr::Cast(Cast { expr, field }) if is_timestamp(field.data_type()) => {
                let (value, changed) = timestamp_of_number(*expr, schema);
                Ok(Transformed::new_transformed(
                    Expr::Cast(Cast {
                        expr: Box::new(value),
                        field,
                    }),
                    changed,
                ))
            }
            Expr::TryCast(TryCast { expr, field }) if is_timestamp(field.data_type()) => {
                let (value, changed) = timestamp_of_number(*expr, schema);
                Ok(Transformed::new_transformed(
                    Expr::TryCast(TryCast {
                        expr: Box::new(value),
                        field,
                    }),
                    changed,
                ))
            }
            // Hive's `min` and `max` of a STRUCT or ARRAY rank NULL fields apart.
            Expr::AggregateFunction(mut f)
                if matches!(f.func.name(), "min" | "max")
                    && !crate::aggregate::nested_min_max::is_nested(&f.func) =>
            {
                let nested = f
                    .params
                    .args
                    .first()
                    .and_then(|a| a.get_type(schema).ok())
                    .and_then(|t| crate::aggregate::nested_min_max::for_nested(f.func.name(), &t));
                let changed = nested.is_some();
                if let Some(nested) = nested {
                    f.func = nested;
                }
                Ok(Transformed::new_transformed(
                    Expr::AggregateFunction(f),
                    changed,
                ))
            }
            // Hive's numeric aggregates read text as a DOUBLE, NULL where it is no number.
            Expr::AggregateFunction(mut f)
                if crate::aggregate::text_as_double::reads_text(f.func.name()) =>
            {
                let changed = text_as_double(f.func.name(), &mut f.params.args, schema);
                Ok(Transformed::new_transformed(
                    Expr::AggregateFunction(f),
                    changed,
                ))
            }
            Expr::WindowFunction(mut w) => {
                let mut changed = range_offsets_in_key_units(&mut w.params, schema);
                if matches!(&w.fun, WindowFunctionDefinition::AggregateUDF(f)
                    if crate::aggregate::text_as_double::reads_text(f.name()))
                {
                    changed |= text_as_double(w.fun.name(), &mut w.params.args, schema);
                }
                Ok(Transformed::new_transformed(
                    Expr::WindowFunction(w),
                    changed,
                ))
            }
            Expr::InList(mut in_list) => {
                let operands: Vec<&mut Expr> = std::iter::once(in_list.expr.as_mut())
                    .chain(in_list.list.iter_mut())
                    .collect();
                let changed = compare_as_doubles(operands, schema);
                Ok(Transformed::new_transformed(Expr::InList(in_list), changed))
            }
            Expr::Between(mut between) => {
                let operands = vec![
                    between.expr.as_mut(),
                    between.low.as_mut(),
                    between.high.as_mut(),
                ];
                let changed = compare_as_doubles(operands, schema);
                Ok(Transformed::new_transformed(
                    Expr::Between(between),
                    changed,
                ))
            }
            other => Ok(Transformed::no(other)),
        }
    }

    fn node(&self, plan: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
        if let LogicalPlan::Union(union) = plan {
            return self.union(union);
        }
        let mut schema = merge_schema(&plan.inputs());
        if let LogicalPlan::TableScan(scan) = &plan {
            // A scan's pushed filters name the table's columns.
            if let Ok(source) =
                DFSchema::try_from_qualified_schema(scan.table_name.clone(), &scan.source.schema())
            {
                schema.merge(&source);
            }
        }
        let names = NamePreserver::new(&plan);
        let rewritten = plan.map_expressions(|expr| {
            let name = names.save(&expr);
            expr.transform_up(|e| self.expr(e, &schema))
                .map(|t| t.update_data(|e| name.restore(e)))
        })?;
        // Always: a node above a rewritten one (a UNION's projections) must see its new types.
        rewritten.map_data(|plan| plan.recompute_schema())
    }

    /// A UNION's columns where text meets numbers, dates or timestamps: each input's other
    /// values written as text under a projection.
    fn union(&self, union: Union) -> Result<Transformed<LogicalPlan>> {
        let width = union.schema.fields().len();
        let as_text: Vec<bool> = (0..width)
            .map(|i| {
                let types: Vec<&DataType> = union
                    .inputs
                    .iter()
                    .filter_map(|p| p.schema().fields().get(i).map(|f| f.data_type()))
                    .collect();
                types.len() == union.inputs.len() && meet_as_text(&types, Meeting::Union)
            })
            .collect();
        if !as_text.contains(&true) {
            return Ok(Transformed::no(LogicalPlan::Union(union)));
        }
        let mut inputs = Vec::with_capacity(union.inputs.len());
        for input in &union.inputs {
            let schema = input.schema().clone();
            let exprs: Vec<Expr> = schema
                .iter()
                .enumerate()
                .map(|(i, (qualifier, field))| {
                    let column = Expr::Column(Column::from((qualifier, field)));
                    if as_text[i] && turns_to_text(field.data_type(), Meeting::Union) {
                        self.text_of(column)
                            .alias_qualified(qualifier.cloned(), field.name())
                    } else {
                        column
                    }
                })
                .collect();
            match Projection::try_new(exprs, input.clone()) {
                Ok(p) => inputs.push(Arc::new(LogicalPlan::Projection(p))),
                // (Columns of one name twice: left to DataFusion's coercion.)
                Err(_) => return Ok(Transformed::no(LogicalPlan::Union(union))),
            }
        }
        Ok(Transformed::yes(LogicalPlan::Union(
            Union::try_new_with_loose_types(inputs)?,
        )))
    }
}

impl AnalyzerRule for HiveTyping {
    fn name(&self) -> &str {
        "hive_typing"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        Ok(plan
            .transform_up_with_subqueries(|plan| self.node(plan))?
            .data)
    }
}
