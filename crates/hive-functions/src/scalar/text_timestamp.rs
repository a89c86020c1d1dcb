//! Text read as a TIMESTAMP the way Hive's `Timestamp.valueOf` reads it, for `CAST(text AS
//! TIMESTAMP)` and every function that takes a timestamp's text: blanks around it (a CHAR's
//! padding) are dropped, and the month, day, hour, minute and second may have one digit
//! (`'2001-01-28 0:0:0'`, `'1984-1-1'`). A date alone is its midnight. Text of another shape
//! is read as Arrow reads it (`T` between date and time, a zone offset), and text that is no
//! timestamp is NULL. The fraction keeps microseconds, the precision of Apiary's TIMESTAMP.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, TimestampMicrosecondBuilder};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{DataType, TimeUnit};
use chrono::NaiveDate;
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

const MICROSECONDS: DataType = DataType::Timestamp(TimeUnit::Microsecond, None);

/// `value` (text) as a TIMESTAMP in microseconds, read as Hive reads it.
pub(crate) fn text_as_timestamp(value: Expr) -> Expr {
    Expr::ScalarFunction(ScalarFunction::new_udf(
        Arc::new(ScalarUDF::from(TextTimestamp::default())),
        vec![value],
    ))
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct TextTimestamp {
    signature: Signature,
}

impl Default for TextTimestamp {
    fn default() -> Self {
        Self {
            signature: Signature::string(1, Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for TextTimestamp {
    fn name(&self) -> &str {
        "hive_text_timestamp"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(MICROSECONDS)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let Some(arg) = args.args.first() else {
            return exec_err!("hive_text_timestamp takes one argument");
        };
        let scalar = matches!(arg, ColumnarValue::Scalar(_));
        let array = arg.to_array(args.number_rows)?;
        let text = cast_with_options(&array, &DataType::Utf8, &CastOptions::default())?;
        let text = text.as_string::<i32>();
        let mut out = TimestampMicrosecondBuilder::with_capacity(text.len());
        for value in text.iter() {
            out.append_option(value.and_then(micros_of_text));
        }
        let result: ArrayRef = Arc::new(out.finish());
        Ok(if scalar {
            ColumnarValue::Scalar(datafusion::common::ScalarValue::try_from_array(&result, 0)?)
        } else {
            ColumnarValue::Array(result)
        })
    }
}

/// Microseconds since 1970 of a timestamp's text; None when it is none.
fn micros_of_text(text: &str) -> Option<i64> {
    let text = text.trim();
    if let Some(micros) = hive_shape(text) {
        return Some(micros);
    }
    arrow::compute::kernels::cast_utils::string_to_datetime(&chrono::Utc, text)
        .ok()
        .map(|t| t.naive_utc().and_utc().timestamp_micros())
}

/// A number of one to `max_digits` digits at the start of `rest`, then the byte `after` if
/// given; `rest` moves past both.
fn number(rest: &mut &[u8], max_digits: usize, after: Option<u8>) -> Option<u32> {
    let digits = rest
        .iter()
        .take(max_digits)
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 {
        return None;
    }
    let value = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    *rest = &rest[digits..];
    if let Some(separator) = after {
        *rest = rest.strip_prefix(&[separator])?;
    }
    Some(value)
}

/// `yyyy-M-d[ H:m:s[.fffffffff]]` (one or two digits for every field after the year).
fn hive_shape(text: &str) -> Option<i64> {
    let mut rest = text.as_bytes();
    let year = number(&mut rest, 4, Some(b'-'))?;
    let month = number(&mut rest, 2, Some(b'-'))?;
    let day = number(&mut rest, 2, None)?;
    let date = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, day)?;
    let (mut hour, mut minute, mut second, mut nanos) = (0, 0, 0, 0);
    if let Some(mut time) = rest.strip_prefix(b" ") {
        hour = number(&mut time, 2, Some(b':'))?;
        minute = number(&mut time, 2, Some(b':'))?;
        second = number(&mut time, 2, None)?;
        if let Some(fraction) = time.strip_prefix(b".") {
            if fraction.is_empty() || fraction.len() > 9 || !fraction.iter().all(u8::is_ascii_digit)
            {
                return None;
            }
            let digits = std::str::from_utf8(fraction).ok()?;
            nanos = format!("{digits:0<9}").parse().ok()?;
        } else if !time.is_empty() {
            return None;
        }
    } else if !rest.is_empty() {
        return None;
    }
    let time = date.and_hms_nano_opt(hour, minute, second, nanos)?;
    Some(time.and_utc().timestamp_micros())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> Option<String> {
        micros_of_text(text).and_then(|us| {
            chrono::DateTime::from_timestamp_micros(us).map(|t| t.naive_utc().to_string())
        })
    }

    #[test]
    fn hives_shapes_and_arrows() {
        assert_eq!(
            shown("2001-01-28 0:0:0").as_deref(),
            Some("2001-01-28 00:00:00")
        );
        assert_eq!(shown("1984-1-1").as_deref(), Some("1984-01-01 00:00:00"));
        assert_eq!(
            shown("2011-01-01 01:02:03      ").as_deref(),
            Some("2011-01-01 01:02:03")
        );
        assert_eq!(
            shown("2011-05-06 07:08:09.1234567").as_deref(),
            Some("2011-05-06 07:08:09.123456")
        );
        assert_eq!(
            shown("2011-05-06T07:08:09").as_deref(),
            Some("2011-05-06 07:08:09")
        );
        assert_eq!(shown("2011-02-30"), None);
        assert_eq!(shown("2011-01-01 25:00:00"), None);
        assert_eq!(shown("abc"), None);
        assert_eq!(shown(""), None);
    }
}
