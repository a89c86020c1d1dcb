//! Hive's intervals: `interval_year_month(x)`, `interval_day_time(x)`, and the function the
//! dialect writes every `INTERVAL ..` as (`INTERVAL '1-2' YEAR TO MONTH`,
//! `INTERVAL '1 2:3:4.5' DAY TO SECOND`, `INTERVAL (n) DAY`).
//!
//! A year-month interval is an `Interval(YearMonth)` (months); a day-time one is a
//! `Duration(Microsecond)`, an exact length of time like Hive's, so `INTERVAL '1' DAY =
//! INTERVAL '24' HOUR` and a TIMESTAMP plus it is a TIMESTAMP, as the engine's timestamps are
//! in microseconds. A text that is no interval of its kind is NULL.

use arrow::datatypes::{DataType, IntervalUnit, TimeUnit};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::SessionContext;

use crate::args::{arg, float, text, RowFn};

/// Registers the functions of this module.
pub fn register(ctx: &SessionContext) {
    for f in [
        RowFn::new(
            "interval_year_month",
            1..=1,
            |_| Ok(YEAR_MONTH),
            |a| interval(arg(a, 0), "year to month"),
        ),
        RowFn::new(
            "interval_day_time",
            1..=1,
            |_| Ok(DAY_TIME),
            |a| interval(arg(a, 0), "day to second"),
        ),
        RowFn::new(
            crate::names::HIVE_INTERVAL,
            2..=2,
            |_| Ok(DAY_TIME),
            |a| match text(arg(a, 1)) {
                Some(unit) => interval(arg(a, 0), &unit),
                None => exec_err!("{}: the unit must be text", crate::names::HIVE_INTERVAL),
            },
        )
        .typed_by_constants(|_, constants| match constants.get(1).copied().flatten() {
            Some(ScalarValue::Utf8(Some(unit))) => Ok(if year_month(unit) {
                YEAR_MONTH
            } else {
                DAY_TIME
            }),
            _ => plan_err!(
                "{}: the unit must be a constant",
                crate::names::HIVE_INTERVAL
            ),
        }),
    ] {
        ctx.register_udf(ScalarUDF::from(f));
    }
}

const YEAR_MONTH: DataType = DataType::Interval(IntervalUnit::YearMonth);
const DAY_TIME: DataType = DataType::Duration(TimeUnit::Microsecond);

const MICROS_PER_SECOND: f64 = 1_000_000.0;

fn year_month(unit: &str) -> bool {
    matches!(
        unit,
        "year" | "years" | "month" | "months" | "year to month"
    )
}

/// `value` as an interval of `unit` (`day`, `hour to second`, ..): a number of units, or
/// Hive's text for the unit's span (`'1-2'`, `'1 2:3:4.5'`, `'2:3'`).
fn interval(value: &ScalarValue, unit: &str) -> Result<ScalarValue> {
    let unit = unit.trim().to_ascii_lowercase();
    if year_month(&unit) {
        let months = match &unit[..] {
            "year to month" => text(value).and_then(|t| year_month_text(&t)),
            u => float(value)
                .filter(|n| n.fract() == 0.0 && n.abs() < f64::from(i32::MAX) / 12.0)
                .map(|n| {
                    let per = if u.starts_with("year") { 12.0 } else { 1.0 };
                    (n * per) as i32
                }),
        };
        return Ok(ScalarValue::IntervalYearMonth(months));
    }
    let seconds = match unit.split_once(" to ") {
        Some((from, to)) => text(value).and_then(|t| day_time_text(&t, from, to)),
        // A whole number of units; seconds may have a fraction.
        None => float(value)
            .filter(|n| n.is_finite() && (unit.starts_with("second") || n.fract() == 0.0))
            .and_then(|n| Some(n * unit_seconds(&unit)?)),
    };
    Ok(ScalarValue::DurationMicrosecond(
        seconds.map(|s| (s * MICROS_PER_SECOND).round() as i64),
    ))
}

fn unit_seconds(unit: &str) -> Option<f64> {
    Some(match unit.trim_end_matches('s') {
        "day" => 86_400.0,
        "hour" => 3_600.0,
        "minute" => 60.0,
        "second" => 1.0,
        _ => return None,
    })
}

/// `[+|-]Y-M`: months.
fn year_month_text(t: &str) -> Option<i32> {
    let (negative, t) = sign(t.trim());
    let (y, m) = t.split_once('-')?;
    let (y, m) = (y.trim().parse::<i32>().ok()?, m.trim().parse::<i32>().ok()?);
    if !(0..12).contains(&m) || y < 0 {
        return None;
    }
    let months = y.checked_mul(12)?.checked_add(m)?;
    Some(if negative { -months } else { months })
}

/// Hive's text for a day-time span from unit `from` to unit `to` (`'1 2:3:4.5'` for DAY TO
/// SECOND, `'2:3'` for HOUR TO MINUTE): seconds.
fn day_time_text(t: &str, from: &str, to: &str) -> Option<f64> {
    let (negative, t) = sign(t.trim());
    let units = ["day", "hour", "minute", "second"];
    let first = units.iter().position(|u| *u == from)?;
    let last = units.iter().position(|u| *u == to)?;
    if last <= first {
        return None;
    }
    // Days are apart from the rest by a blank; hours, minutes and seconds by colons.
    let mut parts: Vec<&str> = Vec::new();
    let rest = if first == 0 {
        let (d, rest) = t.split_once(char::is_whitespace)?;
        parts.push(d);
        rest.trim()
    } else {
        t
    };
    parts.extend(rest.split(':'));
    if parts.len() != last - first + 1 {
        return None;
    }
    let mut seconds = 0.0;
    for (i, p) in parts.iter().enumerate() {
        let unit = units[first + i];
        let p = p.trim();
        // Digits only (no sign inside); the fields after the first within their range, as
        // Hive's valueOf checks them.
        if p.is_empty()
            || !p
                .bytes()
                .all(|b| b.is_ascii_digit() || (unit == "second" && b == b'.'))
        {
            return None;
        }
        let n: f64 = if unit == "second" {
            p.parse().ok()?
        } else {
            f64::from(p.parse::<u32>().ok()?)
        };
        let limit = match unit {
            "hour" => 24.0,
            "minute" | "second" => 60.0,
            _ => f64::INFINITY,
        };
        if i > 0 && n >= limit {
            return None;
        }
        seconds += n * unit_seconds(unit)?;
    }
    Some(if negative { -seconds } else { seconds })
}

fn sign(t: &str) -> (bool, &str) {
    match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn micros(v: ScalarValue) -> Option<i64> {
        match v {
            ScalarValue::DurationMicrosecond(m) => m,
            other => panic!("not a day-time interval: {other:?}"),
        }
    }

    #[test]
    fn texts_of_each_span() {
        let s = |t: &str| ScalarValue::Utf8(Some(t.into()));
        assert_eq!(
            interval(&s("1-2"), "year to month").ok(),
            Some(ScalarValue::IntervalYearMonth(Some(14)))
        );
        assert_eq!(
            interval(&s("-1-2"), "year to month").ok(),
            Some(ScalarValue::IntervalYearMonth(Some(-14)))
        );
        assert_eq!(
            micros(interval(&s("1 2:3:4.5"), "day to second").unwrap_or(ScalarValue::Null)),
            Some(((86_400 + 2 * 3_600 + 3 * 60) * 1_000_000) + 4_500_000)
        );
        assert_eq!(
            micros(interval(&s("365 0:0:0"), "day to second").unwrap_or(ScalarValue::Null)),
            Some(365 * 86_400 * 1_000_000)
        );
        assert_eq!(
            micros(interval(&s("1:2:3"), "hour to second").unwrap_or(ScalarValue::Null)),
            Some(3_723_000_000)
        );
        assert_eq!(
            micros(interval(&s("-0:30"), "hour to minute").unwrap_or(ScalarValue::Null)),
            Some(-1_800_000_000)
        );
        assert_eq!(
            micros(interval(&s("1 2"), "day to hour").unwrap_or(ScalarValue::Null)),
            Some(26 * 3_600 * 1_000_000)
        );
        // Not an interval of the span: NULL.
        assert_eq!(
            micros(interval(&s("1:2"), "day to second").unwrap_or(ScalarValue::Null)),
            None
        );
        // Out of range fields, signs inside, overflow: NULL.
        for (text, span) in [
            ("0 25:00:00", "day to second"),
            ("1 2:3:-4", "day to second"),
            ("1:61", "hour to minute"),
        ] {
            assert_eq!(
                micros(interval(&s(text), span).unwrap_or(ScalarValue::Null)),
                None,
                "{text}"
            );
        }
        assert_eq!(
            interval(&s("1-12"), "year to month").ok(),
            Some(ScalarValue::IntervalYearMonth(None))
        );
        assert_eq!(
            interval(&s("300000000-0"), "year to month").ok(),
            Some(ScalarValue::IntervalYearMonth(None))
        );
        assert_eq!(
            micros(interval(&s("1.5"), "day").unwrap_or(ScalarValue::Null)),
            None
        );
    }

    #[test]
    fn numbers_of_units() {
        assert_eq!(
            interval(&ScalarValue::Int64(Some(2)), "year").ok(),
            Some(ScalarValue::IntervalYearMonth(Some(24)))
        );
        assert_eq!(
            micros(interval(&ScalarValue::Int64(Some(-3)), "day").unwrap_or(ScalarValue::Null)),
            Some(-3 * 86_400 * 1_000_000)
        );
        assert_eq!(
            micros(
                interval(&ScalarValue::Utf8(Some("1.5".into())), "second")
                    .unwrap_or(ScalarValue::Null)
            ),
            Some(1_500_000)
        );
    }
}
