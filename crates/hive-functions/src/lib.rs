//! Functions Apiary adds to DataFusion for Hive semantics.
//!
//! `hive_typed(value, 'type')` gives a value a Hive type that Arrow cannot express on its own:
//! `varchar(n)` (truncated to n characters), `char(n)` (padded or truncated to n) and
//! `interval_year_month`. The declared type travels in the result field's metadata
//! ([`HIVE_TYPE_KEY`]) so clients see Hive's type name and qualifiers.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, IntervalYearMonthArray, StringArray};
use arrow::datatypes::{DataType, Field, FieldRef, IntervalUnit};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use datafusion::prelude::SessionContext;

use crate::types::{HiveType, HIVE_TYPE_KEY};

pub use crate::strings::{JSON_FIELD, STRUCT_FIELD};

/// Name of the typing function the rewrite inserts.
pub const HIVE_TYPED: &str = "hive_typed";

/// Name of the function the rewrites put where Hive turns a value into text (concat's
/// arguments).
pub const HIVE_TO_STRING: &str = "hive_to_string";
/// The same for `CAST(x AS STRING)`, which writes a BOOLEAN as `TRUE`/`FALSE`.
pub const HIVE_CAST_TO_STRING: &str = "hive_cast_to_string";

/// Name of the function giving `replicate_rows`'s number of copies of a row.
pub const ROW_COPIES: &str = "hive_row_copies";

/// Name of the function the rewrites put before a cast of text to an integer type.
pub const HIVE_INTEGER_TEXT: &str = "hive_integer_text";

/// Functions the rewrites insert, not for users (SHOW FUNCTIONS leaves them out).
pub const INTERNAL: &[&str] = &[
    HIVE_TYPED,
    HIVE_TO_STRING,
    HIVE_CAST_TO_STRING,
    HIVE_INTEGER_TEXT,
    ROW_COPIES,
    JSON_FIELD,
    STRUCT_FIELD,
];

/// Spark's functions (datafusion-spark) that answer as Hive's do, registered under their
/// names and aliases: Hive's argument forms, NULL handling and result types (checked in
/// `tests/sql/functions.slt`). Spark's others differ from Hive (`add_months` keeps no month
/// end, `trunc` takes no number, `hour` no string, `pmod` by a negative number), or Hive has no
/// such function.
const FROM_SPARK: &[&str] = &[
    "base64",
    "bin",
    "ceil",
    "concat_ws",
    "crc32",
    "date_add",
    "date_diff",
    "date_sub",
    "elt",
    "factorial",
    "floor",
    "format_string",
    "from_utc_timestamp",
    "hex",
    "if",
    "last_day",
    "next_day",
    "parse_url",
    "sha1",
    "sha2",
    "shiftleft",
    "shiftright",
    "shiftrightunsigned",
    "soundex",
    "space",
    "str_to_map",
    "substring",
    "to_utc_timestamp",
    "unbase64",
    "unhex",
    "width_bucket",
];

/// Spark's aggregates that answer as Hive's do.
const AGGREGATES_FROM_SPARK: &[&str] = &["collect_list", "collect_set"];

/// The version `version()` reports, Hive's form (`<version> r<revision>`): the Hive release
/// the endpoint answers as, so tools that read it (dbt-hive) see the Hive they talk to.
pub const HIVE_VERSION: &str = "3.1.3";

/// Registers Apiary's functions in a context.
pub fn register(ctx: &SessionContext) {
    ctx.register_udf(ScalarUDF::from(HiveTyped::new()));
    ctx.register_udf(ScalarUDF::from(Version::new()));
    ctx.register_udf(ScalarUDF::from(HiveToString::new(false)));
    ctx.register_udf(ScalarUDF::from(HiveToString::new(true)));
    ctx.register_udf(ScalarUDF::from(HiveIntegerText::new()));
    for f in datafusion_spark::all_default_scalar_functions() {
        if FROM_SPARK.contains(&f.name()) {
            ctx.register_udf(f.as_ref().clone());
        }
    }
    for f in datafusion_spark::all_default_aggregate_functions() {
        if AGGREGATES_FROM_SPARK.contains(&f.name()) {
            ctx.register_udaf(f.as_ref().clone());
        }
    }
    crate::datetime::register(ctx);
    crate::strings::register(ctx);
    crate::numbers::register(ctx);
    crate::calendar::register(ctx);
    crate::text::register(ctx);
    crate::masking::register(ctx);
    crate::histogram::register(ctx);
    crate::arrays::register(ctx);
    crate::ngrams::register(ctx);
    crate::xpath::register(ctx);
    crate::json_read::register(ctx);
    // (Registered last: DataFusion's own planners leave these operators alone.)
    let _ = datafusion::execution::FunctionRegistry::register_expr_planner(
        &mut *ctx.state_ref().write(),
        Arc::new(HiveOperators),
    );
}

/// Hive's arithmetic and comparison operators where their types differ from DataFusion's,
/// planned as the SQL is read (so every name and type above them is the new one's):
/// - `/` of two integers is a DOUBLE (`7 / 2` is 3.5; DataFusion's would be 3), and `/` or `%`
///   by zero is NULL (DataFusion's would be an error, or infinity for doubles); decimals keep
///   DataFusion's DECIMAL division, as Hive's do; `a DIV b` is the BIGINT quotient, NULL by
///   zero;
/// - text in `+ - * / %` is read as a DOUBLE (`7 - '5'` is 2.0);
/// - `= <> < <= > >= <=>` of text and a number, or of a DECIMAL and a DOUBLE, compare DOUBLEs.
#[derive(Debug)]
struct HiveOperators;

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
        let text =
            |t: &DataType| matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
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
            let decimal = crate::typing::is_decimal;
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

/// `hive_to_string` as a function value, for the rewrites that put it into plans.
pub(crate) fn hive_to_string_udf() -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::from(HiveToString::new(false)))
}

/// `hive_to_string(x)`: x as Hive writes a value as text, as clients are sent it
/// ([`crate::render::cell_text`]: a DOUBLE as Java's `Double.toString`, a TIMESTAMP with a
/// space, a DECIMAL to its scale); text stays as it is. `hive_cast_to_string(x)` is the same
/// but for a BOOLEAN, which Hive's CAST writes `TRUE` or `FALSE`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct HiveToString {
    cast: bool,
    signature: Signature,
}

impl HiveToString {
    fn new(cast: bool) -> Self {
        Self {
            cast,
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for HiveToString {
    fn name(&self) -> &str {
        if self.cast {
            HIVE_CAST_TO_STRING
        } else {
            HIVE_TO_STRING
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let n = args.number_rows;
        let Some(value) = args.args.into_iter().next() else {
            return exec_err!("{HIVE_TO_STRING} takes one argument");
        };
        let cast = self.cast;
        crate::rowfn::per_array(value, n, |array| {
            Ok(match array.data_type() {
                DataType::Utf8 => array,
                DataType::LargeUtf8 | DataType::Utf8View | DataType::Null => {
                    arrow::compute::cast(&array, &DataType::Utf8)?
                }
                DataType::Boolean if cast => Arc::new(
                    array
                        .as_boolean()
                        .iter()
                        .map(|b| b.map(|b| if b { "TRUE" } else { "FALSE" }))
                        .collect::<StringArray>(),
                ),
                _ => Arc::new(
                    (0..array.len())
                        .map(|i| crate::render::cell_text(array.as_ref(), i))
                        .collect::<StringArray>(),
                ),
            })
        })
    }
}

/// `hive_integer_text(x)`: text as Hive's integer casts read it (its `LazyInteger`): blanks
/// around it ignored, a sign, digits, and a fraction of digits that is dropped; the digits
/// alone come out (`' -1.5 '` is `'-1'`), NULL for anything else. A value that is not text
/// comes out as it went in.
#[derive(Debug, PartialEq, Eq, Hash)]
struct HiveIntegerText {
    signature: Signature,
}

impl HiveIntegerText {
    fn new() -> Self {
        Self {
            signature: Signature::any(1, Volatility::Immutable),
        }
    }
}

/// The integer part of `s` as Hive's integer parsing accepts it (`'.5'` is 0: its parse stops
/// at the point with nothing read).
fn integer_part(s: &str) -> Option<&str> {
    let s = s.trim();
    let digits_from = usize::from(s.starts_with(['+', '-']));
    let (whole, fraction, point) = match s.split_once('.') {
        Some((w, f)) => (w, f, true),
        None => (s, "", false),
    };
    let number = whole.get(digits_from..)?;
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(number) || !all_digits(fraction) {
        return None;
    }
    match (number.is_empty(), point) {
        (false, _) => Some(whole),
        (true, true) => Some("0"),
        (true, false) => None,
    }
}

impl ScalarUDFImpl for HiveIntegerText {
    fn name(&self) -> &str {
        HIVE_INTEGER_TEXT
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        match arg_types {
            [DataType::LargeUtf8 | DataType::Utf8View] => Ok(DataType::Utf8),
            [t] => Ok(t.clone()),
            _ => plan_err!("{HIVE_INTEGER_TEXT} takes one argument"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let n = args.number_rows;
        let Some(value) = args.args.into_iter().next() else {
            return exec_err!("{HIVE_INTEGER_TEXT} takes one argument");
        };
        if !matches!(
            value.data_type(),
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
        ) {
            return Ok(value);
        }
        crate::rowfn::per_array(value, n, |array| {
            let texts = arrow::compute::cast(&array, &DataType::Utf8)?;
            let cleaned: StringArray = texts
                .as_string::<i32>()
                .iter()
                .map(|s| s.and_then(integer_part))
                .collect();
            Ok(Arc::new(cleaned))
        })
    }
}

/// Hive's `version()`: `3.1.3 r<revision>`, the revision naming this Apiary build.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Version {
    signature: Signature,
}

impl Version {
    fn new() -> Self {
        Self {
            signature: Signature::exact(vec![], Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for Version {
    fn name(&self) -> &str {
        "version"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, _args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        Ok(ColumnarValue::Scalar(ScalarValue::Utf8(Some(format!(
            "{HIVE_VERSION} rapiary-{}",
            env!("CARGO_PKG_VERSION")
        )))))
    }
}

/// Registers the functions that answer for a session's user. Not in the contexts views are
/// planned in: `current_user()` in a view would otherwise answer with a user fixed there
/// instead of the querying one, so it is refused in views for now.
pub fn register_session(
    ctx: &SessionContext,
    user: &str,
    database: Arc<parking_lot::Mutex<String>>,
) {
    // Hive's `current_user()`: the session's user, the authenticated one when a password
    // mode is on; `current_database()`: the session's current database (what USE chose).
    let user = Arc::new(parking_lot::Mutex::new(user.to_string()));
    for (name, value) in [("current_user", user), ("current_database", database)] {
        ctx.register_udf(ScalarUDF::from(SessionText {
            name,
            value,
            signature: Signature::exact(vec![], Volatility::Stable),
        }));
    }
}

/// A function of no arguments answering a text the session holds.
#[derive(Debug)]
struct SessionText {
    name: &'static str,
    value: Arc<parking_lot::Mutex<String>>,
    signature: Signature,
}

impl PartialEq for SessionText {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && Arc::ptr_eq(&self.value, &other.value)
    }
}

impl Eq for SessionText {}

impl std::hash::Hash for SessionText {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state)
    }
}

impl ScalarUDFImpl for SessionText {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, _args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        Ok(ColumnarValue::Scalar(ScalarValue::Utf8(Some(
            self.value.lock().clone(),
        ))))
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct HiveTyped {
    signature: Signature,
}

impl HiveTyped {
    fn new() -> Self {
        // Volatile keeps the optimizer from folding it into a literal without its metadata.
        Self {
            signature: Signature::any(2, Volatility::Volatile),
        }
    }
}

fn declared(args: &[Option<&ScalarValue>]) -> Result<HiveType> {
    let text = match args.get(1) {
        Some(Some(ScalarValue::Utf8(Some(s)))) => s.clone(),
        _ => return plan_err!("hive_typed expects a constant type name"),
    };
    if text == "interval_year_month" {
        return Ok(HiveType::IntervalYearMonth);
    }
    match HiveType::parse(&text) {
        Some(t @ (HiveType::Varchar(_) | HiveType::Char(_))) => Ok(t),
        _ => plan_err!("hive_typed: unsupported type {text}"),
    }
}

impl ScalarUDFImpl for HiveTyped {
    fn name(&self) -> &str {
        HIVE_TYPED
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        // return_field_from_args decides; this is only reached by callers without arguments.
        Ok(DataType::Utf8)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let t = declared(args.scalar_arguments)?;
        let dt = match t {
            HiveType::IntervalYearMonth => DataType::Interval(IntervalUnit::YearMonth),
            _ => DataType::Utf8,
        };
        let metadata = HashMap::from([(HIVE_TYPE_KEY.to_string(), t.to_string())]);
        Ok(Arc::new(
            Field::new(self.name(), dt, true).with_metadata(metadata),
        ))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let t = match args
            .return_field
            .metadata()
            .get(HIVE_TYPE_KEY)
            .and_then(|s| {
                if s == "interval_year_month" {
                    Some(HiveType::IntervalYearMonth)
                } else {
                    HiveType::parse(s)
                }
            }) {
            Some(t) => t,
            None => return exec_err!("hive_typed: missing declared type"),
        };
        let Some(value) = args.args.into_iter().next() else {
            return exec_err!("hive_typed expects two arguments");
        };
        let array = value.into_array(args.number_rows)?;
        let out: ArrayRef = match t {
            HiveType::Varchar(n) => Arc::new(map_strings(&array, |s| {
                s.chars().take(n as usize).collect()
            })?),
            HiveType::Char(n) => Arc::new(map_strings(&array, |s| {
                let mut v: String = s.chars().take(n as usize).collect();
                let len = v.chars().count();
                v.extend(std::iter::repeat_n(' ', n as usize - len));
                v
            })?),
            HiveType::IntervalYearMonth => match array.data_type() {
                DataType::Interval(IntervalUnit::MonthDayNano) => {
                    let a = array.as_primitive::<arrow::datatypes::IntervalMonthDayNanoType>();
                    Arc::new(
                        a.iter()
                            .map(|v| v.map(|v| v.months))
                            .collect::<IntervalYearMonthArray>(),
                    )
                }
                DataType::Interval(IntervalUnit::YearMonth) => array,
                other => return exec_err!("cannot read {other} as interval_year_month"),
            },
            _ => return exec_err!("hive_typed: unsupported type"),
        };
        Ok(ColumnarValue::Array(out))
    }
}

fn map_strings(array: &ArrayRef, f: impl Fn(&str) -> String) -> Result<StringArray> {
    let cast = arrow::compute::cast(array, &DataType::Utf8)?;
    let strings = cast.as_string::<i32>();
    Ok((0..strings.len())
        .map(|i| (!strings.is_null(i)).then(|| f(strings.value(i))))
        .collect())
}

/// Hive's array subscripts count from 0 (`arr[0]` is the first element; a negative or
/// too-large index is NULL); DataFusion's count from 1 and from the end when negative. Runs
/// before DataFusion's own planners and only takes list subscripts; map and struct access
/// are left to them.
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
}
