//! Hive's numeric functions that neither DataFusion nor datafusion-spark has with Hive's
//! semantics: `round` (HALF_UP on the decimal value Java prints, so `round(1.005, 2)` is
//! 1.01, and the argument's type kept), `bround` (HALF_EVEN), `trunc` of a number, `conv`,
//! `format_number` and `hash` (Java's hash codes).

use arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::SessionContext;

use crate::args::{arg, float, int, text, RowFn};

/// Registers the functions of this module.
pub fn register(ctx: &SessionContext) {
    for f in [
        RowFn::new("round", 1..=2, rounded_type, round_half_up).typed_by_constants(rounded_scale),
        RowFn::new("bround", 1..=2, rounded_type, round_half_even)
            .typed_by_constants(rounded_scale),
        RowFn::new("conv", 3..=3, crate::args::string, conv),
        RowFn::new("format_number", 2..=2, crate::args::string, format_number),
        RowFn::new(
            "hash",
            0..=32,
            crate::args::integer,
            crate::scalar::hash::hash,
        ),
        RowFn::new(
            "murmur_hash",
            0..=32,
            crate::args::integer,
            crate::scalar::hash::murmur_hash,
        ),
    ] {
        ctx.register_udf(ScalarUDF::from(f));
    }
}

/// `round`/`bround`/`trunc` keep an integer's and a decimal's type; anything else is a DOUBLE.
pub(crate) fn rounded_type(args: &[DataType]) -> Result<DataType> {
    Ok(match args.first() {
        Some(t) if t.is_integer() || matches!(t, DataType::Decimal128(_, _)) => t.clone(),
        Some(DataType::Null) => DataType::Float64,
        Some(t) if t.is_numeric() || t.is_null() => DataType::Float64,
        Some(DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) => DataType::Float64,
        Some(t) => return crate::args::wrong_type("round", 0, t),
        None => DataType::Float64,
    })
}

/// A decimal rounded to a constant number of places has that scale (at most its own), and a
/// digit more before the point for a carry; other types as [`rounded_type`].
pub(crate) fn rounded_scale(
    types: &[DataType],
    constants: &[Option<&ScalarValue>],
) -> Result<DataType> {
    if let Some(DataType::Decimal128(p, s)) = types.first() {
        let places = match constants.get(1) {
            None => Some(0),
            Some(Some(v)) => int(v),
            Some(None) => None,
        };
        if let Some(d) = places {
            let scale = d.clamp(0, i64::from(*s)) as i8;
            let whole = i16::from(*p) - i16::from(*s);
            let precision = (whole + i16::from(scale) + 1).clamp(1, 38) as u8;
            return Ok(DataType::Decimal128(precision, scale));
        }
    }
    rounded_type(types)
}

/// How a decimal digit string is rounded to fewer places.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Rounding {
    HalfUp,
    HalfEven,
    Down,
}

/// `v` (digits of a decimal number with `scale` places) rounded to `places` places (which
/// may be negative: tens, hundreds), as a number with `max(places, 0)` places.
fn round_scaled(v: i128, scale: i32, places: i32, mode: Rounding) -> Option<(i128, i32)> {
    if places >= scale {
        return Some((v, scale));
    }
    let drop = u32::try_from(scale - places).ok()?;
    let unit = 10i128.checked_pow(drop)?;
    let (q, r) = (v / unit, v % unit);
    let half = unit / 2;
    let away = match mode {
        Rounding::Down => false,
        Rounding::HalfUp => r.abs() >= half,
        Rounding::HalfEven => r.abs() > half || (r.abs() == half && q % 2 != 0),
    };
    let q = if away { q + v.signum() } else { q };
    if places >= 0 {
        Some((q, places))
    } else {
        // Back to a whole number: q hundreds is q * 100.
        let back = 10i128.checked_pow(u32::try_from(-places).ok()?)?;
        Some((q.checked_mul(back)?, 0))
    }
}

/// The decimal digits and scale of a double as Java's `BigDecimal.valueOf` reads it (its
/// shortest text), or None when it has too many digits for 38.
fn double_digits(f: f64) -> Option<(i128, i32)> {
    let text = format!("{f:e}");
    let (mantissa, exp) = text.split_once('e')?;
    let exp: i32 = exp.parse().ok()?;
    let negative = mantissa.starts_with('-');
    let mantissa = mantissa.trim_start_matches('-');
    let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: i128 = format!("{whole}{frac}").parse().ok()?;
    let scale = i32::try_from(frac.len()).ok()? - exp;
    let (digits, scale) = if scale < 0 {
        (
            digits.checked_mul(10i128.checked_pow(u32::try_from(-scale).ok()?)?)?,
            0,
        )
    } else {
        (digits, scale)
    };
    Some((if negative { -digits } else { digits }, scale))
}

/// A number rounded to `places` decimal places with `mode`, keeping its type.
pub(crate) fn round_value(v: &ScalarValue, places: i64, mode: Rounding) -> Result<ScalarValue> {
    let places = places.clamp(-40, 40) as i32;
    Ok(match v {
        ScalarValue::Decimal128(Some(d), p, s) => {
            let (q, qs) = round_scaled(*d, i32::from(*s), places, mode).unwrap_or((0, 0));
            // Back to the argument's scale, so the value keeps its type.
            let factor = 10i128.pow(u32::try_from(i32::from(*s) - qs).unwrap_or(0));
            ScalarValue::Decimal128(q.checked_mul(factor), *p, *s)
        }
        v if v.data_type().is_integer() => {
            let Some(i) = int(v) else {
                return Ok(ScalarValue::Null);
            };
            let (q, _) = round_scaled(i128::from(i), 0, places, mode).unwrap_or((0, 0));
            match i64::try_from(q) {
                Ok(q) => ScalarValue::Int64(Some(q)).cast_to(&v.data_type())?,
                Err(_) => ScalarValue::Null,
            }
        }
        v => {
            let Some(f) = float(v) else {
                return Ok(ScalarValue::Null);
            };
            if !f.is_finite() {
                return Ok(ScalarValue::Float64(Some(f)));
            }
            let rounded = match double_digits(f) {
                Some((d, s)) => match round_scaled(d, s, places, mode) {
                    Some((q, qs)) => format!("{q}e-{qs}").parse::<f64>().unwrap_or(f),
                    None => 0.0,
                },
                // More than 38 digits: a whole number far beyond any place rounded to.
                None => f,
            };
            // Java's -0.0 for a negative number rounded to zero.
            ScalarValue::Float64(Some(if rounded == 0.0 && f < 0.0 {
                -0.0
            } else {
                rounded
            }))
        }
    })
}

fn places_arg(args: &[ScalarValue]) -> Option<i64> {
    match args.get(1) {
        None => Some(0),
        Some(p) => int(p),
    }
}

/// `round(x [, d])`: HALF_UP.
fn round_half_up(args: &[ScalarValue]) -> Result<ScalarValue> {
    match places_arg(args) {
        Some(d) => round_value(arg(args, 0), d, Rounding::HalfUp),
        None => Ok(ScalarValue::Null),
    }
}

/// `bround(x [, d])`: HALF_EVEN (banker's rounding).
fn round_half_even(args: &[ScalarValue]) -> Result<ScalarValue> {
    match places_arg(args) {
        Some(d) => round_value(arg(args, 0), d, Rounding::HalfEven),
        None => Ok(ScalarValue::Null),
    }
}

/// `trunc(x [, d])` of a number: toward zero at `d` places.
pub(crate) fn trunc_number(args: &[ScalarValue]) -> Result<ScalarValue> {
    match places_arg(args) {
        Some(d) => round_value(arg(args, 0), d, Rounding::Down),
        None => Ok(ScalarValue::Null),
    }
}

/// `conv(num, from_base, to_base)`: `num` read in `from_base` up to its first character that
/// is no digit there, through an unsigned 64-bit number (-1 when it overflows), written in
/// `to_base`, upper case; a negative `to_base` writes a signed number. NULL for a base outside
/// 2..36 or an empty number.
fn conv(args: &[ScalarValue]) -> Result<ScalarValue> {
    let none = Ok(ScalarValue::Utf8(None));
    let (Some(num), Some(from), Some(to)) =
        (text(arg(args, 0)), int(arg(args, 1)), int(arg(args, 2)))
    else {
        return none;
    };
    if !(2..=36).contains(&from) || !(2..=36).contains(&to.abs()) || num.is_empty() {
        return none;
    }
    let (negative, digits) = match num.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, num.as_str()),
    };
    let from = from as u32;
    let mut value: u64 = 0;
    for c in digits.chars() {
        let Some(d) = c.to_digit(from) else { break };
        match value
            .checked_mul(u64::from(from))
            .and_then(|v| v.checked_add(u64::from(d)))
        {
            Some(v) => value = v,
            None => {
                value = u64::MAX;
                break;
            }
        }
    }
    let mut signed_out = false;
    if negative && to > 0 {
        value = if (value as i64) < 0 {
            u64::MAX
        } else {
            value.wrapping_neg()
        };
    }
    if to < 0 && (value as i64) < 0 {
        value = value.wrapping_neg();
        signed_out = true;
    }
    let radix = to.unsigned_abs() as u32;
    let mut out = Vec::new();
    loop {
        let d = (value % u64::from(radix)) as u32;
        out.push(std::char::from_digit(d, radix).map_or('0', |c| c.to_ascii_uppercase()));
        value /= u64::from(radix);
        if value == 0 {
            break;
        }
    }
    if (negative || signed_out) && to < 0 {
        out.push('-');
    }
    Ok(ScalarValue::Utf8(Some(out.iter().rev().collect())))
}

/// `format_number(x, d)`: `#,###,###.##` with `d` places, HALF_EVEN on the exact value;
/// `format_number(x, 'pattern')` with a Java `DecimalFormat` pattern of `#`, `0`, `,`, `.`.
fn format_number(args: &[ScalarValue]) -> Result<ScalarValue> {
    let value = arg(args, 0);
    let spec = arg(args, 1);
    if value.is_null() || spec.is_null() {
        return Ok(ScalarValue::Utf8(None));
    }
    if !value.data_type().is_numeric() && !value.data_type().is_null() {
        return exec_err!(
            "Argument 1 of function FORMAT_NUMBER must be \"tinyint\" or \"smallint\" or \"int\" or \"bigint\" or \"double\" or \"float\" or \"decimal\", but \"{}\" was found",
            apiary_hive_types::types::HiveType::of(&value.data_type())
        );
    }
    let pattern = match spec {
        ScalarValue::Utf8(Some(p))
        | ScalarValue::LargeUtf8(Some(p))
        | ScalarValue::Utf8View(Some(p)) => Pattern::parse(p),
        other => {
            let Some(d) = int(other) else {
                return Ok(ScalarValue::Utf8(None));
            };
            if d < 0 {
                return exec_err!(
                    "Argument 2 of function FORMAT_NUMBER must be >= 0, but \"{d}\" was found"
                );
            }
            Pattern {
                min_int: 1,
                min_frac: d as usize,
                max_frac: d as usize,
                group: 3,
            }
        }
    };
    Ok(ScalarValue::Utf8(Some(pattern.format(value))))
}

/// The parts of a `DecimalFormat` pattern this reads.
struct Pattern {
    min_int: usize,
    min_frac: usize,
    max_frac: usize,
    /// Digits per group (0: no grouping).
    group: usize,
}

impl Pattern {
    fn parse(p: &str) -> Pattern {
        let p = p.split(';').next().unwrap_or(p);
        let (int_part, frac_part) = p.split_once('.').unwrap_or((p, ""));
        let group = int_part.rfind(',').map_or(0, |i| {
            int_part[i + 1..]
                .chars()
                .filter(|c| matches!(c, '#' | '0'))
                .count()
        });
        Pattern {
            min_int: int_part.chars().filter(|&c| c == '0').count(),
            min_frac: frac_part.chars().filter(|&c| c == '0').count(),
            max_frac: frac_part.chars().filter(|c| matches!(c, '0' | '#')).count(),
            group,
        }
    }

    fn format(&self, value: &ScalarValue) -> String {
        // The exact digits at max_frac places, half-even (Rust's formatting of a double is
        // exact and rounds ties to even, as DecimalFormat).
        let fixed = match value {
            ScalarValue::Decimal128(Some(d), _, s) => {
                let (q, qs) =
                    round_scaled(*d, i32::from(*s), self.max_frac as i32, Rounding::HalfEven)
                        .unwrap_or((0, 0));
                decimal_text(q, qs as usize, self.max_frac)
            }
            v if v.data_type().is_integer() => int(v).map_or_else(String::new, |i| {
                format!("{i}.{}", "0".repeat(self.max_frac))
            }),
            v => {
                let f = float(v).unwrap_or(f64::NAN);
                if f.is_nan() {
                    return "\u{FFFD}".into();
                }
                if f.is_infinite() {
                    return if f > 0.0 { "\u{221E}" } else { "-\u{221E}" }.into();
                }
                format!("{:.*}", self.max_frac, f)
            }
        };
        let negative = fixed.starts_with('-');
        let fixed = fixed.trim_start_matches('-');
        let (whole, frac) = fixed.split_once('.').unwrap_or((fixed, ""));
        let mut frac = frac.trim_end_matches('0').to_string();
        while frac.len() < self.min_frac {
            frac.push('0');
        }
        let whole = whole.trim_start_matches('0');
        let whole = format!(
            "{}{whole}",
            "0".repeat(self.min_int.saturating_sub(whole.len()))
        );
        let mut grouped = String::new();
        for (i, c) in whole.chars().enumerate() {
            if self.group > 0 && i > 0 && (whole.len() - i) % self.group == 0 {
                grouped.push(',');
            }
            grouped.push(c);
        }
        let zero = grouped.chars().all(|c| c == '0' || c == ',') && frac.chars().all(|c| c == '0');
        let mut out = String::new();
        if negative && !zero {
            out.push('-');
        }
        out.push_str(&grouped);
        if !frac.is_empty() {
            out.push('.');
            out.push_str(&frac);
        }
        out
    }
}

/// `digits` with `scale` places as text with `places` places.
fn decimal_text(digits: i128, scale: usize, places: usize) -> String {
    let negative = digits < 0;
    let mut s = digits.unsigned_abs().to_string();
    if s.len() <= scale {
        s = format!("{}{s}", "0".repeat(scale + 1 - s.len()));
    }
    let (whole, frac) = s.split_at(s.len() - scale);
    let mut frac = frac.to_string();
    while frac.len() < places {
        frac.push('0');
    }
    format!("{}{whole}.{frac}", if negative { "-" } else { "" })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::hash::hash;

    fn s(v: &str) -> ScalarValue {
        ScalarValue::Utf8(Some(v.into()))
    }

    fn i(v: i64) -> ScalarValue {
        ScalarValue::Int64(Some(v))
    }

    fn d(v: f64) -> ScalarValue {
        ScalarValue::Float64(Some(v))
    }

    #[test]
    fn rounding_is_on_the_printed_decimal() {
        assert_eq!(round_half_up(&[d(1.005), i(2)]).unwrap(), d(1.01));
        assert_eq!(round_half_up(&[d(-2.5)]).unwrap(), d(-3.0));
        assert_eq!(round_half_even(&[d(2.5)]).unwrap(), d(2.0));
        assert_eq!(round_half_even(&[d(3.5)]).unwrap(), d(4.0));
        assert_eq!(round_half_even(&[d(8.25), i(1)]).unwrap(), d(8.2));
        assert_eq!(round_half_up(&[i(1250), i(-2)]).unwrap(), i(1300));
        assert_eq!(round_half_even(&[i(1250), i(-2)]).unwrap(), i(1200));
        assert_eq!(trunc_number(&[d(-3.789), i(2)]).unwrap(), d(-3.78));
        assert_eq!(round_half_up(&[d(1e300), i(2)]).unwrap(), d(1e300));
    }

    #[test]
    fn conv_as_hive() {
        let c = |n: &str, f: i64, t: i64| conv(&[s(n), i(f), i(t)]).unwrap();
        assert_eq!(c("100", 2, 10), s("4"));
        assert_eq!(c("-10", 16, -10), s("-16"));
        assert_eq!(c("-10", 10, 16), s("FFFFFFFFFFFFFFF6"));
        assert_eq!(c("12z", 10, 16), s("C"));
        assert_eq!(c("zz", 10, 16), s("0"));
        assert_eq!(c("FFFFFFFFFFFFFFFFFF", 16, 10), s("18446744073709551615"));
        assert_eq!(c("1", 1, 10), ScalarValue::Utf8(None));
    }

    #[test]
    fn format_number_as_decimal_format() {
        let f = |v: ScalarValue, p: ScalarValue| format_number(&[v, p]).unwrap();
        assert_eq!(f(d(12332.123456), i(4)), s("12,332.1235"));
        assert_eq!(f(d(0.125), i(2)), s("0.12"));
        assert_eq!(f(i(1234567), i(0)), s("1,234,567"));
        assert_eq!(f(d(12332.2), s("##################.###")), s("12332.2"));
        assert_eq!(f(d(-0.001), i(2)), s("0.00"));
        assert!(format_number(&[d(1.0), i(-1)]).is_err());
    }

    #[test]
    fn hash_as_java() {
        assert_eq!(hash(&[s("abc")]).unwrap(), ScalarValue::Int32(Some(96354)));
        assert_eq!(hash(&[i(1)]).unwrap(), ScalarValue::Int32(Some(1)));
        assert_eq!(
            hash(&[ScalarValue::Int32(Some(1)), ScalarValue::Int32(Some(2))]).unwrap(),
            ScalarValue::Int32(Some(33))
        );
        assert_eq!(
            hash(&[ScalarValue::Null]).unwrap(),
            ScalarValue::Int32(Some(0))
        );
    }
}
