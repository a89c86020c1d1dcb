//! Hive's data-masking functions: `mask`, `mask_first_n`, `mask_last_n`, `mask_show_first_n`,
//! `mask_show_last_n` and `mask_hash`. Text is masked character by character (upper case as
//! `X`, lower case as `x`, digits as `n`, other characters kept, each replaceable, `-1`
//! keeping the original); integers digit by digit (as `1`, the sign kept); `mask` of a date
//! sets its day, month and year (0000-01-01). Other types give NULL.

use arrow::datatypes::DataType;
use chrono::{Datelike, NaiveDate};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::SessionContext;
use sha2::Digest;

use crate::args::{arg, int, RowFn};

/// Registers the functions of this module.
pub fn register(ctx: &SessionContext) {
    for f in [
        RowFn::new("mask", 1..=9, same_type, |a| masked(a, Span::All)),
        RowFn::new("mask_first_n", 1..=7, same_type, |a| masked(a, Span::First)),
        RowFn::new("mask_last_n", 1..=7, same_type, |a| masked(a, Span::Last)),
        RowFn::new("mask_show_first_n", 1..=7, same_type, |a| {
            masked(a, Span::AllButFirst)
        }),
        RowFn::new("mask_show_last_n", 1..=7, same_type, |a| {
            masked(a, Span::AllButLast)
        }),
        RowFn::new("mask_hash", 1..=1, |_| Ok(DataType::Utf8), mask_hash),
    ] {
        ctx.register_udf(ScalarUDF::from(f));
    }
}

fn same_type(types: &[DataType]) -> Result<DataType> {
    Ok(match types.first() {
        None | Some(DataType::Null) => DataType::Utf8,
        Some(t) => t.clone(),
    })
}

/// Which characters a masking function masks.
#[derive(Clone, Copy, PartialEq)]
enum Span {
    All,
    First,
    Last,
    AllButFirst,
    AllButLast,
}

/// The replacements: `None` keeps the original character.
struct Masks {
    upper: Option<char>,
    lower: Option<char>,
    digit: Option<char>,
    other: Option<char>,
    number: u32,
}

/// A replacement character argument: the first character of text, `-1` to keep, or the
/// default when absent, NULL or empty.
fn char_arg(v: Option<&ScalarValue>, default: Option<char>) -> Option<char> {
    match v {
        None => default,
        Some(v) if v.is_null() => default,
        Some(v) if v.data_type().is_integer() => match int(v) {
            Some(-1) => None,
            Some(c) => u32::try_from(c).ok().and_then(char::from_u32).or(default),
            None => default,
        },
        Some(v) => crate::args::text(v)
            .and_then(|s| s.chars().next())
            .or(default),
    }
}

/// The digit numbers are masked with: an integer, or text holding one, from 0 to 9; 1
/// otherwise (Hive reads this argument as a number, not as a character).
fn number_arg(v: Option<&ScalarValue>) -> u32 {
    let n = match v {
        Some(v) if v.data_type().is_integer() => int(v),
        Some(v) => crate::args::text(v).and_then(|s| s.trim().parse::<i64>().ok()),
        None => None,
    };
    n.and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n <= 9)
        .unwrap_or(1)
}

fn masked(args: &[ScalarValue], span: Span) -> Result<ScalarValue> {
    let value = arg(args, 0);
    // The count the _n forms take second; `mask` has none.
    let (n, rest) = if span == Span::All {
        (0, args.get(1..).unwrap_or(&[]))
    } else {
        let n = match args.get(1) {
            None => 4,
            Some(v) => int(v).unwrap_or(4).max(0),
        };
        (n as usize, args.get(2..).unwrap_or(&[]))
    };
    let masks = Masks {
        upper: char_arg(rest.first(), Some('X')),
        lower: char_arg(rest.get(1), Some('x')),
        digit: char_arg(rest.get(2), Some('n')),
        other: char_arg(rest.get(3), None),
        number: number_arg(rest.get(4)),
    };
    let masks_at = |len: usize, i: usize| match span {
        Span::All => true,
        Span::First => i < n,
        Span::Last => i + n >= len,
        Span::AllButFirst => i >= n,
        Span::AllButLast => i + n < len,
    };
    Ok(match value {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => {
            let len = s.chars().count();
            let out: String = s
                .chars()
                .enumerate()
                .map(|(i, c)| {
                    if !masks_at(len, i) {
                        return c;
                    }
                    let with = if c.is_uppercase() {
                        masks.upper
                    } else if c.is_lowercase() {
                        masks.lower
                    } else if c.is_ascii_digit() {
                        masks.digit
                    } else {
                        masks.other
                    };
                    with.unwrap_or(c)
                })
                .collect();
            ScalarValue::Utf8(Some(out)).cast_to(&value.data_type())?
        }
        v if v.data_type().is_integer() && !v.is_null() => {
            let Some(i) = int(v) else {
                return Ok(ScalarValue::Null);
            };
            let digits = i.unsigned_abs().to_string();
            let len = digits.len();
            let number = masks.number;
            let out: String = digits
                .chars()
                .enumerate()
                .map(|(k, c)| {
                    if masks_at(len, k) {
                        char::from_digit(number, 10).unwrap_or(c)
                    } else {
                        c
                    }
                })
                .collect();
            match out.parse::<i64>() {
                Ok(m) => {
                    let m = if i < 0 { -m } else { m };
                    ScalarValue::Int64(Some(m))
                        .cast_to(&v.data_type())
                        .unwrap_or(ScalarValue::Null)
                }
                Err(_) => ScalarValue::Null,
            }
        }
        ScalarValue::Date32(Some(days)) if span == Span::All => {
            // The day, month (0 is January) and year arguments; -1 keeps the date's own.
            let part = |i: usize, default: i64| match rest.get(i + 5) {
                None => Some(default),
                Some(v) => match int(v) {
                    Some(-1) => None,
                    Some(x) => Some(x),
                    None => Some(default),
                },
            };
            let Some(date) = NaiveDate::from_num_days_from_ce_opt(days + 719_163) else {
                return Ok(ScalarValue::Null);
            };
            let day = part(0, 1).map_or(date.day(), |d| d.clamp(1, 31) as u32);
            let month = part(1, 0).map_or(date.month(), |m| m.clamp(0, 11) as u32 + 1);
            let year = part(2, 0).map_or(date.year(), |y| y.clamp(0, 9999) as i32);
            match NaiveDate::from_ymd_opt(year, month, day) {
                Some(d) => ScalarValue::Date32(Some(d.num_days_from_ce() - 719_163)),
                None => ScalarValue::Null,
            }
        }
        _ => ScalarValue::Null,
    })
}

/// `mask_hash(value)`: the SHA-256 of text as lower-case hex; NULL for other types.
fn mask_hash(args: &[ScalarValue]) -> Result<ScalarValue> {
    Ok(ScalarValue::Utf8(match arg(args, 0) {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::LargeUtf8(Some(s))
        | ScalarValue::Utf8View(Some(s)) => {
            let digest = sha2::Sha256::digest(s.as_bytes());
            Some(digest.iter().map(|b| format!("{b:02x}")).collect())
        }
        _ => None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> ScalarValue {
        ScalarValue::Utf8(Some(v.into()))
    }

    #[test]
    fn masks_as_hive() {
        assert_eq!(
            masked(&[s("abcd-EFGH-8765-4321")], Span::All).unwrap(),
            s("xxxx-XXXX-nnnn-nnnn")
        );
        assert_eq!(
            masked(
                &[s("abcd-EFGH-8765-4321"), s("U"), s("l"), s("#")],
                Span::All
            )
            .unwrap(),
            s("llll-UUUU-####-####")
        );
        assert_eq!(
            masked(&[s("1234-5678-8765-4321")], Span::First).unwrap(),
            s("nnnn-5678-8765-4321")
        );
        assert_eq!(
            masked(&[s("1234-5678-8765-4321")], Span::Last).unwrap(),
            s("1234-5678-8765-nnnn")
        );
        assert_eq!(
            masked(&[s("1234-5678-8765-4321")], Span::AllButFirst).unwrap(),
            s("1234-nnnn-nnnn-nnnn")
        );
        assert_eq!(
            masked(&[s("1234-5678-8765-4321")], Span::AllButLast).unwrap(),
            s("nnnn-nnnn-nnnn-4321")
        );
        assert_eq!(
            masked(&[ScalarValue::Int32(Some(-1234))], Span::All).unwrap(),
            ScalarValue::Int32(Some(-1111))
        );
        assert_eq!(
            masked(
                &[
                    ScalarValue::Int64(Some(123456)),
                    ScalarValue::Int64(Some(2))
                ],
                Span::First
            )
            .unwrap(),
            ScalarValue::Int64(Some(113456))
        );
        assert_eq!(
            mask_hash(&[s("abc")]).unwrap(),
            s("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
    }
}
