//! Hive's conversions the HiveQL rewrites put into plans: a value as Hive writes it as text
//! (`hive_to_string`, `hive_cast_to_string`), text before its cast to an integer
//! (`hive_integer_text`), and a value given a Hive type Arrow cannot express (`hive_typed`:
//! `varchar(n)` truncated, `char(n)` padded), the declared type
//! travelling in the result field's metadata ([`HIVE_TYPE_KEY`]) so clients see Hive's type
//! name and qualifiers.

use std::collections::HashMap;
use std::sync::Arc;

use apiary_hive_types::types::{HiveType, HIVE_TYPE_KEY};
use arrow::array::{Array, ArrayRef, AsArray, StringArray};
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

use crate::names::{HIVE_CAST_TO_STRING, HIVE_INTEGER_TEXT, HIVE_TO_STRING, HIVE_TYPED};

/// Registers the conversions in a context.
pub(crate) fn register(ctx: &datafusion::prelude::SessionContext) {
    ctx.register_udf(ScalarUDF::from(HiveTyped::new()));
    ctx.register_udf(ScalarUDF::from(HiveToString::new(false)));
    ctx.register_udf(ScalarUDF::from(HiveToString::new(true)));
    ctx.register_udf(ScalarUDF::from(HiveIntegerText::new()));
}

/// `hive_to_string` as a function value, for the rewrites that put it into plans.
pub fn hive_to_string_udf() -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::from(HiveToString::new(false)))
}

/// `hive_cast_to_string` as a function value.
pub fn hive_cast_to_string_udf() -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::from(HiveToString::new(true)))
}

/// `hive_integer_text` as a function value.
pub fn hive_integer_text_udf() -> Arc<ScalarUDF> {
    Arc::new(ScalarUDF::from(HiveIntegerText::new()))
}

/// `hive_to_string(x)`: x as Hive writes a value as text, as clients are sent it
/// ([`apiary_hive_types::render::cell_text`]: a DOUBLE as Java's `Double.toString`, a TIMESTAMP with a
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
        // A CHAR's text is its value without the padding, as Hive converts a CHAR to STRING.
        let char_typed = args
            .arg_fields
            .first()
            .and_then(|f| f.metadata().get(HIVE_TYPE_KEY))
            .is_some_and(|t| t.starts_with("char("));
        let Some(value) = args.args.into_iter().next() else {
            return exec_err!("{HIVE_TO_STRING} takes one argument");
        };
        let cast = self.cast;
        crate::args::per_array(value, n, |array| {
            Ok(match array.data_type() {
                DataType::Utf8 if char_typed => Arc::new(
                    array
                        .as_string::<i32>()
                        .iter()
                        .map(|v| v.map(|v| v.trim_end_matches(' ')))
                        .collect::<StringArray>(),
                ),
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
                        .map(|i| apiary_hive_types::render::cell_text(array.as_ref(), i))
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
        crate::args::per_array(value, n, |array| {
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
        let metadata = HashMap::from([(HIVE_TYPE_KEY.to_string(), t.to_string())]);
        Ok(Arc::new(
            Field::new(self.name(), DataType::Utf8, true).with_metadata(metadata),
        ))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let t = match args
            .return_field
            .metadata()
            .get(HIVE_TYPE_KEY)
            .and_then(|s| HiveType::parse(s))
        {
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
