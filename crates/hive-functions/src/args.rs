//! Scalar functions computed a row at a time over [`ScalarValue`]s: the shape of Hive's
//! less common functions written here (`conv`, `format_number`, the masks, ..), where clear
//! per-value code matters more than columnar speed. Every argument arrives as its own type;
//! the helpers below read one as Hive converts it (text, integer, double), NULL when it does
//! not convert.

use std::ops::RangeInclusive;
use std::sync::Arc;

use arrow::array::{RecordBatch, RecordBatchOptions};
use arrow::compute::CastOptions;
use arrow::datatypes::Schema;
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};
use datafusion::physical_expr::PhysicalExpr;

/// What a row function computes from one row's arguments.
pub(crate) type RowBody = fn(&[ScalarValue]) -> Result<ScalarValue>;
/// The result type of a row function from its argument types.
pub(crate) type ReturnRule = fn(&[DataType]) -> Result<DataType>;
/// The result type from the argument types and the arguments that are constants.
pub(crate) type ConstantsRule = fn(&[DataType], &[Option<&ScalarValue>]) -> Result<DataType>;

/// A scalar function of a row's values.
#[derive(Debug)]
pub(crate) struct RowFn {
    name: &'static str,
    signature: Signature,
    arity: RangeInclusive<usize>,
    ret: ReturnRule,
    constants: Option<ConstantsRule>,
    body: RowBody,
}

impl PartialEq for RowFn {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for RowFn {}

impl std::hash::Hash for RowFn {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state)
    }
}

impl RowFn {
    /// A deterministic function taking `arity` arguments of any type.
    pub(crate) fn new(
        name: &'static str,
        arity: RangeInclusive<usize>,
        ret: ReturnRule,
        body: RowBody,
    ) -> Self {
        // Any number of arguments gets through the signature, so a wrong count gets Hive's
        // text (below) and not DataFusion's list of signatures.
        let accepts = if *arity.start() == 0 {
            Signature::one_of(
                vec![TypeSignature::Nullary, TypeSignature::VariadicAny],
                Volatility::Immutable,
            )
        } else {
            Signature::variadic_any(Volatility::Immutable)
        };
        Self {
            name,
            signature: accepts,
            arity,
            ret,
            constants: None,
            body,
        }
    }

    /// Hive's error for a call with too few or too many arguments (its `checkArgsSize`).
    fn check_arity(&self, n: usize) -> Result<()> {
        check_arity(self.name, &self.arity, n)
    }

    /// The same function, its result type also depending on its constant arguments.
    pub(crate) fn typed_by_constants(mut self, rule: ConstantsRule) -> Self {
        self.constants = Some(rule);
        self
    }

    /// The same function, volatile (never folded into a constant at planning).
    pub(crate) fn volatile(mut self) -> Self {
        self.signature.volatility = Volatility::Volatile;
        self
    }
}

impl ScalarUDFImpl for RowFn {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.check_arity(arg_types.len())?;
        (self.ret)(arg_types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        self.check_arity(types.len())?;
        let dt = match self.constants {
            Some(rule) => rule(&types, args.scalar_arguments)?,
            None => (self.ret)(&types)?,
        };
        Ok(Arc::new(Field::new(self.name, dt, true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let ret = args.return_field.data_type().clone();
        let typed = |v: ScalarValue| -> Result<ScalarValue> {
            if v.is_null() {
                ScalarValue::try_from(&ret)
            } else if v.data_type() == ret {
                Ok(v)
            } else {
                v.cast_to(&ret)
            }
        };
        if args
            .args
            .iter()
            .all(|a| matches!(a, ColumnarValue::Scalar(_)))
        {
            let row: Vec<ScalarValue> = args
                .args
                .into_iter()
                .filter_map(|a| match a {
                    ColumnarValue::Scalar(s) => Some(s),
                    ColumnarValue::Array(_) => None,
                })
                .collect();
            return Ok(ColumnarValue::Scalar(typed((self.body)(&row)?)?));
        }
        let n = args.number_rows;
        let arrays = args
            .args
            .into_iter()
            .map(|a| a.into_array(n))
            .collect::<Result<Vec<_>>>()?;
        let mut out = Vec::with_capacity(n);
        let mut row = Vec::with_capacity(arrays.len());
        for i in 0..n {
            row.clear();
            for a in &arrays {
                row.push(ScalarValue::try_from_array(a, i)?);
            }
            out.push(typed((self.body)(&row)?)?);
        }
        if out.is_empty() {
            return Ok(ColumnarValue::Array(arrow::array::new_empty_array(&ret)));
        }
        Ok(ColumnarValue::Array(ScalarValue::iter_to_array(out)?))
    }
}

/// Hive's error for a call of `name` with `n` arguments when it takes `arity` (its
/// `checkArgsSize`): `f requires 2..3 argument(s), got 1`.
pub(crate) fn check_arity(name: &str, arity: &RangeInclusive<usize>, n: usize) -> Result<()> {
    if arity.contains(&n) {
        return Ok(());
    }
    let (min, max) = (arity.start(), arity.end());
    let wanted = if min == max {
        min.to_string()
    } else {
        format!("{min}..{max}")
    };
    plan_err!("{name} requires {wanted} argument(s), got {n}")
}

/// The list at row `i` of an array of lists (List, LargeList or FixedSizeList); None for any
/// other array.
pub(crate) fn list_at(array: &dyn arrow::array::Array, i: usize) -> Option<arrow::array::ArrayRef> {
    use arrow::array::AsArray;
    match array.data_type() {
        DataType::List(_) => Some(array.as_list::<i32>().value(i)),
        DataType::LargeList(_) => Some(array.as_list::<i64>().value(i)),
        DataType::FixedSizeList(..) => Some(array.as_fixed_size_list().value(i)),
        _ => None,
    }
}

/// Applies `f` to a one-argument function's argument as an array (one row for a constant) and
/// gives its result in the same form: a constant for a constant.
pub(crate) fn per_array(
    value: ColumnarValue,
    rows: usize,
    f: impl FnOnce(arrow::array::ArrayRef) -> Result<arrow::array::ArrayRef>,
) -> Result<ColumnarValue> {
    let scalar = matches!(value, ColumnarValue::Scalar(_));
    let out = f(value.into_array(if scalar { 1 } else { rows })?)?;
    if scalar {
        return Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?));
    }
    Ok(ColumnarValue::Array(out))
}

/// `v` cast to `to` as Hive converts a primitive argument; NULL when it does not convert.
fn converted(v: &ScalarValue, to: &DataType) -> Option<ScalarValue> {
    if v.is_null() {
        return None;
    }
    let options = CastOptions {
        safe: true,
        ..Default::default()
    };
    match v.cast_to_with_options(to, &options) {
        Ok(c) if !c.is_null() => Some(c),
        _ => None,
    }
}

/// A value as bytes: a binary's own, anything else its text in UTF-8.
pub(crate) fn bytes(v: &ScalarValue) -> Option<Vec<u8>> {
    match v {
        ScalarValue::Binary(b) | ScalarValue::LargeBinary(b) | ScalarValue::BinaryView(b) => {
            b.clone()
        }
        v => text(v).map(String::into_bytes),
    }
}

/// A value as text (numbers as Hive writes them for the common cases).
pub(crate) fn text(v: &ScalarValue) -> Option<String> {
    match v {
        ScalarValue::Utf8(s) | ScalarValue::LargeUtf8(s) | ScalarValue::Utf8View(s) => s.clone(),
        ScalarValue::Binary(Some(b))
        | ScalarValue::LargeBinary(Some(b))
        | ScalarValue::BinaryView(Some(b)) => Some(String::from_utf8_lossy(b).into_owned()),
        _ => match converted(v, &DataType::Utf8) {
            Some(ScalarValue::Utf8(s)) => s,
            _ => None,
        },
    }
}

/// A value as a 64-bit integer (text read as a number, fractions truncated).
pub(crate) fn int(v: &ScalarValue) -> Option<i64> {
    match v {
        ScalarValue::Utf8(Some(s)) | ScalarValue::LargeUtf8(Some(s)) => {
            let s = s.trim();
            s.parse::<i64>()
                .ok()
                .or_else(|| s.parse::<f64>().ok().and_then(float_to_int))
        }
        ScalarValue::Float64(Some(f)) => float_to_int(*f),
        ScalarValue::Float32(Some(f)) => float_to_int(f64::from(*f)),
        _ => match converted(v, &DataType::Int64) {
            Some(ScalarValue::Int64(i)) => i,
            _ => None,
        },
    }
}

fn float_to_int(f: f64) -> Option<i64> {
    // `as` saturates; a value outside i64 is no integer here.
    (f.is_finite() && f.abs() < 9.2e18).then_some(f.trunc() as i64)
}

/// A value as a double.
pub(crate) fn float(v: &ScalarValue) -> Option<f64> {
    match v {
        ScalarValue::Utf8(Some(s)) | ScalarValue::LargeUtf8(Some(s)) => s.trim().parse().ok(),
        _ => match converted(v, &DataType::Float64) {
            Some(ScalarValue::Float64(f)) => f,
            _ => None,
        },
    }
}

/// The argument at `i`, or NULL when the call has fewer.
pub(crate) fn arg(args: &[ScalarValue], i: usize) -> &ScalarValue {
    args.get(i).unwrap_or(&ScalarValue::Null)
}

/// Return rules used by several functions.
pub(crate) fn string(_: &[DataType]) -> Result<DataType> {
    Ok(DataType::Utf8)
}

pub(crate) fn double(_: &[DataType]) -> Result<DataType> {
    Ok(DataType::Float64)
}

pub(crate) fn integer(_: &[DataType]) -> Result<DataType> {
    Ok(DataType::Int32)
}

/// Hive's error for an argument of a type a function does not take.
pub(crate) fn wrong_type<T>(name: &str, position: usize, t: &DataType) -> Result<T> {
    exec_err!(
        "Argument {} of function {} must be a primitive type, but {} was found",
        position + 1,
        name.to_uppercase(),
        apiary_hive_types::HiveType::of(t)
    )
}
/// A constant argument's value (an error naming the argument when it is not constant).
pub(crate) fn constant(expr: &Arc<dyn PhysicalExpr>, what: &str) -> Result<ScalarValue> {
    let batch = RecordBatch::try_new_with_options(
        Arc::new(Schema::empty()),
        vec![],
        &RecordBatchOptions::new().with_row_count(Some(1)),
    )?;
    match expr.evaluate(&batch) {
        Ok(ColumnarValue::Scalar(s)) => Ok(s),
        Ok(ColumnarValue::Array(a)) if a.len() == 1 => ScalarValue::try_from_array(&a, 0),
        _ => plan_err!("{what} must be a constant"),
    }
}

/// Whether `t` is a list (an array in Hive's terms).
pub(crate) fn is_list(t: &DataType) -> bool {
    matches!(
        t,
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..)
    )
}

/// A constant that is one value or an array of them (a percentile argument): whether it was
/// an array, and its values as an array.
pub(crate) fn one_or_listed(v: &ScalarValue) -> Result<(bool, arrow::array::ArrayRef)> {
    Ok(match v {
        ScalarValue::List(a) => (true, a.value(0)),
        ScalarValue::LargeList(a) => (true, a.value(0)),
        ScalarValue::FixedSizeList(a) => (true, a.value(0)),
        other => (false, other.to_array()?),
    })
}

/// The state of an aggregate that keeps one list of `item` values: one field, named for the
/// call and `what` it holds.
pub(crate) fn list_state(call: &str, what: &str, item: DataType) -> Vec<FieldRef> {
    vec![Arc::new(Field::new(
        format!("{call}[{what}]"),
        DataType::new_list(item, true),
        true,
    ))]
}
