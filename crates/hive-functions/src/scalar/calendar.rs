//! Hive's month arithmetic: `add_months` (a month's last day stays the last day),
//! `months_between` (Hive's fraction of a 31-day month, rounded to 8 places) and `trunc` of a
//! date to its month, quarter or year (with `trunc` of a number beside it). Dates are read as
//! Hive reads them: a DATE, a TIMESTAMP, or text `yyyy-MM-dd[ HH:mm:ss[.f]]`.

use arrow::datatypes::DataType;
use chrono::{Datelike, NaiveDate, NaiveDateTime, Timelike};
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::SessionContext;

use crate::args::{arg, int, RowFn};
use crate::scalar::numbers::{round_value, rounded_type, trunc_number, Rounding};

/// Registers the functions of this module.
pub fn register(ctx: &SessionContext) {
    for f in [
        RowFn::new("add_months", 2..=3, crate::args::string, add_months),
        RowFn::new("months_between", 2..=3, crate::args::double, months_between),
        RowFn::new("trunc", 1..=2, trunc_type, trunc),
        RowFn::new(
            "to_epoch_milli",
            1..=1,
            |_| Ok(DataType::Int64),
            to_epoch_milli,
        ),
        RowFn::new(
            "datetime_legacy_hybrid_calendar",
            1..=1,
            |t| Ok(t.first().cloned().unwrap_or(DataType::Null)),
            legacy_hybrid,
        ),
    ] {
        ctx.register_udf(ScalarUDF::from(f));
    }
}

/// A value as a date and time, as Hive's date functions read their argument; None for NULL
/// or text that is no date.
pub(crate) fn datetime(v: &ScalarValue) -> Option<NaiveDateTime> {
    use ScalarValue as S;
    let from_micros = |us: i64| chrono::DateTime::from_timestamp_micros(us).map(|d| d.naive_utc());
    match v {
        S::Date32(Some(d)) => {
            NaiveDate::from_num_days_from_ce_opt(d.checked_add(719_163)?)?.and_hms_opt(0, 0, 0)
        }
        S::TimestampSecond(Some(s), _) => from_micros(s.checked_mul(1_000_000)?),
        S::TimestampMillisecond(Some(ms), _) => from_micros(ms.checked_mul(1_000)?),
        S::TimestampMicrosecond(Some(us), _) => from_micros(*us),
        S::TimestampNanosecond(Some(ns), _) => from_micros(ns.div_euclid(1_000)),
        S::Utf8(Some(s)) | S::LargeUtf8(Some(s)) | S::Utf8View(Some(s)) => parse_date_text(s),
        _ => None,
    }
}

fn parse_date_text(s: &str) -> Option<NaiveDateTime> {
    let s = s.trim();
    for pattern in [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, pattern) {
            return Some(t);
        }
    }
    // A date, or a date followed by text Hive ignores.
    let head = s.get(..10).unwrap_or(s);
    NaiveDate::parse_from_str(head, "%Y-%m-%d")
        .ok()
        .filter(|_| s.len() == head.len() || s[head.len()..].starts_with([' ', 'T']))
        .and_then(|d| d.and_hms_opt(0, 0, 0))
}

fn days_in_month(year: i32, month: u32) -> Option<u32> {
    let first = NaiveDate::from_ymd_opt(year, month, 1)?;
    let next = first.checked_add_months(chrono::Months::new(1))?;
    u32::try_from((next - first).num_days()).ok()
}

fn is_last_day(d: NaiveDate) -> bool {
    days_in_month(d.year(), d.month()) == Some(d.day())
}

/// `add_months(start, n [, fmt])`: `start` plus `n` months as text (`yyyy-MM-dd`, or the Java
/// pattern `fmt` over the date with `start`'s time); the last day of a month, or a day the
/// target month lacks, gives the target month's last day.
fn add_months(args: &[ScalarValue]) -> Result<ScalarValue> {
    let none = Ok(ScalarValue::Utf8(None));
    let (Some(start), Some(n)) = (datetime(arg(args, 0)), int(arg(args, 1))) else {
        return none;
    };
    let d = start.date();
    let Some(months) = i64::from(d.year())
        .checked_mul(12)
        .and_then(|m| m.checked_add(i64::from(d.month0())))
        .and_then(|m| m.checked_add(n))
    else {
        return none;
    };
    let (Ok(year), month) = (
        i32::try_from(months.div_euclid(12)),
        months.rem_euclid(12) as u32 + 1,
    ) else {
        return none;
    };
    let Some(last) = days_in_month(year, month) else {
        return none;
    };
    let day = if is_last_day(d) {
        last
    } else {
        d.day().min(last)
    };
    let Some(result) = NaiveDate::from_ymd_opt(year, month, day).map(|r| r.and_time(start.time()))
    else {
        return none;
    };
    let pattern = match args.get(2) {
        None => "%Y-%m-%d".to_string(),
        Some(p) => match crate::args::text(p) {
            None => return none,
            Some(p) => match crate::scalar::datetime::java_to_chrono(&p) {
                Ok(c) => c,
                Err(e) => return exec_err!("{e}"),
            },
        },
    };
    let mut out = String::new();
    use std::fmt::Write as _;
    if write!(out, "{}", result.format(&pattern)).is_err() {
        return exec_err!("cannot format a date with the pattern given to add_months");
    }
    Ok(ScalarValue::Utf8(Some(out)))
}

/// `months_between(d1, d2 [, round_off])`: whole months when both days are the same day of the
/// month or both a month's last; otherwise the months plus the difference of the times within
/// their months over 31 days; rounded half-up to 8 places unless `round_off` is false.
fn months_between(args: &[ScalarValue]) -> Result<ScalarValue> {
    let none = Ok(ScalarValue::Float64(None));
    let (Some(a), Some(b)) = (datetime(arg(args, 0)), datetime(arg(args, 1))) else {
        return none;
    };
    let round_off = match args.get(2) {
        None => true,
        Some(ScalarValue::Boolean(Some(r))) => *r,
        Some(v) if v.is_null() => return none,
        Some(_) => return exec_err!("The third argument of months_between must be a BOOLEAN"),
    };
    let months = f64::from((a.year() - b.year()) * 12 + (a.month() as i32 - b.month() as i32));
    let (da, db) = (a.date(), b.date());
    let value = if da.day() == db.day() || (is_last_day(da) && is_last_day(db)) {
        months
    } else {
        let seconds =
            |t: &NaiveDateTime| f64::from(t.day() * 86_400 + t.num_seconds_from_midnight());
        months + (seconds(&a) - seconds(&b)) / 2_678_400.0
    };
    if round_off {
        round_value(&ScalarValue::Float64(Some(value)), 8, Rounding::HalfUp)
    } else {
        Ok(ScalarValue::Float64(Some(value)))
    }
}

/// `to_epoch_milli(ts)`: milliseconds since 1970-01-01 00:00:00 UTC.
fn to_epoch_milli(args: &[ScalarValue]) -> Result<ScalarValue> {
    Ok(ScalarValue::Int64(match arg(args, 0) {
        v if matches!(v.data_type(), DataType::Timestamp(_, _)) => {
            datetime(v).map(|t| t.and_utc().timestamp_millis())
        }
        v if v.is_null() => None,
        v => return crate::args::wrong_type("to_epoch_milli", 0, &v.data_type()),
    }))
}

/// The Gregorian calendar's first day (1582-10-15) as days since 1970-01-01.
const GREGORIAN_START: i32 = -141_427;

/// `datetime_legacy_hybrid_calendar(d)`: a date (or timestamp) before 1582-10-15 of the
/// proleptic Gregorian calendar rewritten as the Julian calendar names the same day, as
/// Java's hybrid calendar does; later ones unchanged.
fn legacy_hybrid(args: &[ScalarValue]) -> Result<ScalarValue> {
    let v = arg(args, 0);
    let Some(t) = datetime(v) else {
        return Ok(ScalarValue::Null);
    };
    let days = t.date().num_days_from_ce() - 719_163;
    if days >= GREGORIAN_START {
        return Ok(v.clone());
    }
    // The Julian calendar's year, month and day of the day (the Julian day number is
    // days + 2440588), read as a proleptic Gregorian date.
    let c = i64::from(days) + 2_440_588 + 32_082;
    let d = (4 * c + 3) / 1461;
    let e = c - 1461 * d / 4;
    let m = (5 * e + 2) / 153;
    let day = (e - (153 * m + 2) / 5 + 1) as u32;
    let month = (m + 3 - 12 * (m / 10)) as u32;
    let year = (d - 4800 + m / 10) as i32;
    let Some(julian) = NaiveDate::from_ymd_opt(year, month, day) else {
        return Ok(ScalarValue::Null);
    };
    let moved = julian.and_time(t.time());
    Ok(match v {
        ScalarValue::Date32(_) => {
            ScalarValue::Date32(Some(days + (julian - t.date()).num_days() as i32))
        }
        other => ScalarValue::TimestampMicrosecond(Some(moved.and_utc().timestamp_micros()), None)
            .cast_to(&other.data_type())?,
    })
}

/// Whether a `trunc` call truncates a date: its second argument is text (the format).
fn truncates_date(types: &[DataType]) -> bool {
    matches!(
        types.get(1),
        Some(DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
    )
}

fn trunc_type(types: &[DataType]) -> Result<DataType> {
    if truncates_date(types) {
        Ok(DataType::Utf8)
    } else {
        rounded_type(types)
    }
}

/// `trunc(date, fmt)`: the first day of the date's month (`MONTH`, `MON`, `MM`), quarter
/// (`QUARTER`, `Q`) or year (`YEAR`, `YYYY`, `YY`) as `yyyy-MM-dd`, NULL for another format;
/// `trunc(x [, d])` of a number: toward zero at `d` places.
fn trunc(args: &[ScalarValue]) -> Result<ScalarValue> {
    let types: Vec<DataType> = args.iter().map(|a| a.data_type()).collect();
    if !truncates_date(&types) {
        return trunc_number(args);
    }
    let none = Ok(ScalarValue::Utf8(None));
    let (Some(t), Some(fmt)) = (datetime(arg(args, 0)), crate::args::text(arg(args, 1))) else {
        return none;
    };
    let d = t.date();
    let month = match fmt.as_str() {
        "MONTH" | "MON" | "MM" => d.month(),
        "QUARTER" | "Q" => (d.month0() / 3) * 3 + 1,
        "YEAR" | "YYYY" | "YY" => 1,
        _ => return none,
    };
    Ok(ScalarValue::Utf8(
        NaiveDate::from_ymd_opt(d.year(), month, 1).map(|f| f.format("%Y-%m-%d").to_string()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> ScalarValue {
        ScalarValue::Utf8(Some(v.into()))
    }

    fn i(v: i64) -> ScalarValue {
        ScalarValue::Int64(Some(v))
    }

    #[test]
    fn add_months_keeps_month_ends() {
        assert_eq!(
            add_months(&[s("2009-08-31"), i(1)]).unwrap(),
            s("2009-09-30")
        );
        assert_eq!(
            add_months(&[s("2017-02-28"), i(1)]).unwrap(),
            s("2017-03-31")
        );
        assert_eq!(
            add_months(&[s("2016-01-15"), i(-2)]).unwrap(),
            s("2015-11-15")
        );
        assert_eq!(
            add_months(&[s("2017-12-31 14:15:16"), i(2), s("YYYY-MM-dd HH:mm:ss")]).unwrap(),
            s("2018-02-28 14:15:16")
        );
        assert_eq!(
            add_months(&[s("nope"), i(1)]).unwrap(),
            ScalarValue::Utf8(None)
        );
    }

    #[test]
    fn months_between_as_hive() {
        let m = |a: &str, b: &str| months_between(&[s(a), s(b)]).unwrap();
        assert_eq!(
            m("1997-02-28 10:30:00", "1996-10-30"),
            ScalarValue::Float64(Some(3.94959677))
        );
        assert_eq!(
            m("2003-03-31", "2003-02-28"),
            ScalarValue::Float64(Some(1.0))
        );
        assert_eq!(
            m("2003-03-15", "2003-02-15"),
            ScalarValue::Float64(Some(1.0))
        );
    }

    #[test]
    fn legacy_calendar_moves_days_before_the_reform() {
        let date = |y, m, d| {
            let days = (NaiveDate::from_ymd_opt(y, m, d).unwrap()
                - NaiveDate::from_ymd_opt(1970, 1, 1).unwrap())
            .num_days() as i32;
            ScalarValue::Date32(Some(days))
        };
        assert_eq!(
            legacy_hybrid(&[date(1582, 10, 10)]).unwrap(),
            date(1582, 9, 30)
        );
        assert_eq!(
            legacy_hybrid(&[date(2020, 1, 1)]).unwrap(),
            date(2020, 1, 1)
        );
        assert_eq!(
            legacy_hybrid(&[date(1000, 1, 1)]).unwrap(),
            date(999, 12, 27)
        );
    }

    #[test]
    fn trunc_dates_and_numbers() {
        assert_eq!(
            trunc(&[s("2015-03-17 10:00:00"), s("MM")]).unwrap(),
            s("2015-03-01")
        );
        assert_eq!(trunc(&[s("2015-08-17"), s("Q")]).unwrap(), s("2015-07-01"));
        assert_eq!(
            trunc(&[s("2015-03-17"), s("YEAR")]).unwrap(),
            s("2015-01-01")
        );
        assert_eq!(
            trunc(&[s("2015-03-17"), s("DAY")]).unwrap(),
            ScalarValue::Utf8(None)
        );
        assert_eq!(
            trunc(&[ScalarValue::Float64(Some(1234.567)), i(-2)]).unwrap(),
            ScalarValue::Float64(Some(1200.0))
        );
    }
}
