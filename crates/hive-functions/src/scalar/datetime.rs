//! Hive's date functions that take Java `SimpleDateFormat` patterns, which neither DataFusion
//! (chrono's `%` patterns) nor datafusion-spark (Spark's `DateTimeFormatter` subset) read as
//! Hive does: `date_format(d, fmt)`, `from_unixtime(secs [, fmt])` and
//! `unix_timestamp([text [, fmt]])`. A TIMESTAMP is a local date and time; `from_unixtime`
//! and `unix_timestamp` turn instants into local times and back in the session's
//! `hive.local.time.zone` ([`set_time_zone`]), UTC until one is set, as Hive 3+ does.

use std::fmt::Write as _;
use std::sync::Arc;

use arrow::array::timezone::Tz;
use arrow::array::{Array, ArrayRef, AsArray, Int64Builder, StringBuilder};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{DataType, TimeUnit};
use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone as _};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};
use datafusion::prelude::SessionContext;

/// Hive's default pattern of `from_unixtime` and `unix_timestamp`.
const DEFAULT_PATTERN: &str = "yyyy-MM-dd HH:mm:ss";

/// Registers the functions of this module.
pub fn register(ctx: &SessionContext) {
    for f in [
        JavaPatterned::new("date_format", Kind::DateFormat),
        JavaPatterned::new("from_unixtime", Kind::FromUnixtime),
        JavaPatterned::new("unix_timestamp", Kind::UnixTimestamp),
    ] {
        ctx.register_udf(ScalarUDF::from(f));
    }
}

/// Has `from_unixtime`, `unix_timestamp` and `to_unix_timestamp` of this context read and
/// write local times in `zone` (its name, and the zone), UTC for None.
pub fn set_time_zone(ctx: &SessionContext, zone: Option<(&str, Tz)>) {
    let zone = zone.map(|(name, tz)| Zone {
        name: name.to_string(),
        tz,
    });
    let mut from = JavaPatterned::new("from_unixtime", Kind::FromUnixtime);
    from.zone = zone.clone();
    let mut unix = JavaPatterned::new("unix_timestamp", Kind::UnixTimestamp);
    unix.zone = zone;
    ctx.register_udf(ScalarUDF::from(from));
    ctx.register_udf(ScalarUDF::from(unix).with_aliases(["to_unix_timestamp"]));
}

/// A session's time zone, known by its name.
#[derive(Debug, Clone)]
struct Zone {
    name: String,
    tz: Tz,
}

impl PartialEq for Zone {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Zone {}

impl std::hash::Hash for Zone {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state)
    }
}

/// Seconds since 1970-01-01 UTC of a local time in `zone` (UTC for None); a local time a
/// clock change repeats is its earlier instant, one it skips is read an hour on, as Java's
/// calendar reads it.
fn epoch_seconds(local: NaiveDateTime, zone: Option<&Zone>) -> Option<i64> {
    let Some(zone) = zone else {
        return Some(local.and_utc().timestamp());
    };
    let mapped = zone.tz.from_local_datetime(&local);
    mapped
        .earliest()
        .or_else(|| {
            zone.tz
                .from_local_datetime(&(local + chrono::Duration::hours(1)))
                .earliest()
        })
        .map(|t| t.timestamp())
}

/// The local time in `zone` (UTC for None) of an instant, in seconds since 1970-01-01 UTC.
fn local_time(seconds: i64, zone: Option<&Zone>) -> Option<NaiveDateTime> {
    let utc = DateTime::from_timestamp(seconds, 0)?;
    Some(match zone {
        Some(zone) => zone.tz.from_utc_datetime(&utc.naive_utc()).naive_local(),
        None => utc.naive_utc(),
    })
}

/// A Java `SimpleDateFormat` pattern as a chrono format string; Java's error for a letter it
/// does not know.
pub fn java_to_chrono(pattern: &str) -> std::result::Result<String, String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            // '' is a quote; 'text' is literal text.
            if chars.get(i + 1) == Some(&'\'') {
                out.push('\'');
                i += 2;
                continue;
            }
            i += 1;
            while i < chars.len() {
                if chars[i] == '\'' {
                    if chars.get(i + 1) == Some(&'\'') {
                        out.push('\'');
                        i += 2;
                        continue;
                    }
                    break;
                }
                push_literal(&mut out, chars[i]);
                i += 1;
            }
            if i >= chars.len() {
                return Err(format!("Unterminated quote in pattern {pattern}"));
            }
            i += 1;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            push_literal(&mut out, c);
            i += 1;
            continue;
        }
        let mut n = 1;
        while chars.get(i + n) == Some(&c) {
            n += 1;
        }
        i += n;
        out.push_str(match (c, n) {
            ('y' | 'Y', 2) => "%y",
            ('y' | 'Y', _) => "%Y",
            ('M' | 'L', 1) => "%-m",
            ('M' | 'L', 2) => "%m",
            ('M' | 'L', 3) => "%b",
            ('M' | 'L', _) => "%B",
            ('d', 1) => "%-d",
            ('d', _) => "%d",
            ('H', 1) => "%-H",
            ('H', _) => "%H",
            ('k', _) => "%H",
            ('h', 1) => "%-I",
            ('h', _) => "%I",
            ('K', _) => "%I",
            ('m', 1) => "%-M",
            ('m', _) => "%M",
            ('s', 1) => "%-S",
            ('s', _) => "%S",
            ('S', _) => "%3f",
            ('a', _) => "%p",
            ('E', 1..=3) => "%a",
            ('E', _) => "%A",
            ('u', _) => "%u",
            ('D', 1 | 2) => "%-j",
            ('D', _) => "%j",
            ('w', _) => "%V",
            ('z', _) => "%Z",
            ('Z', _) => "%z",
            // Times here are UTC, which Java's ISO zone letter writes as Z.
            ('X', _) => "Z",
            ('G', _) => "AD",
            _ => return Err(format!("Illegal pattern character '{c}'")),
        });
    }
    Ok(out)
}

fn push_literal(out: &mut String, c: char) {
    if c == '%' {
        out.push_str("%%");
    } else {
        out.push(c);
    }
}

#[derive(Debug, PartialEq, Eq, Hash, Clone, Copy)]
enum Kind {
    /// `date_format(date|timestamp|string, pattern)`: STRING.
    DateFormat,
    /// `from_unixtime(bigint [, pattern])`: STRING.
    FromUnixtime,
    /// `unix_timestamp()`, `unix_timestamp(date|timestamp|string [, pattern])`: BIGINT.
    UnixTimestamp,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct JavaPatterned {
    name: &'static str,
    kind: Kind,
    signature: Signature,
    /// The session's zone of local times; UTC when None.
    zone: Option<Zone>,
}

impl JavaPatterned {
    fn new(name: &'static str, kind: Kind) -> Self {
        let arities = match kind {
            Kind::DateFormat => vec![TypeSignature::Any(2)],
            Kind::FromUnixtime => vec![TypeSignature::Any(1), TypeSignature::Any(2)],
            Kind::UnixTimestamp => vec![
                TypeSignature::Nullary,
                TypeSignature::Any(1),
                TypeSignature::Any(2),
            ],
        };
        // unix_timestamp() reads the clock.
        let volatility = if kind == Kind::UnixTimestamp {
            Volatility::Stable
        } else {
            Volatility::Immutable
        };
        Self {
            name,
            kind,
            signature: Signature::one_of(arities, volatility),
            zone: None,
        }
    }
}

/// The values of `v` cast to `to` (NULL where a value does not convert), `rows` long.
fn column(v: &ColumnarValue, to: &DataType, rows: usize) -> Result<ArrayRef> {
    let array = v.to_array(rows)?;
    let options = CastOptions {
        safe: true,
        ..Default::default()
    };
    Ok(cast_with_options(&array, to, &options)?)
}

/// Chrono patterns of a pattern column, converted once per distinct pattern.
struct Patterns {
    last: Option<(String, String)>,
}

impl Patterns {
    fn chrono(&mut self, java: &str) -> Result<&str> {
        let fresh = !matches!(&self.last, Some((j, _)) if j == java);
        if fresh {
            match java_to_chrono(java) {
                Ok(c) => self.last = Some((java.to_string(), c)),
                Err(e) => return exec_err!("{e}"),
            }
        }
        Ok(self.last.as_ref().map(|(_, c)| c.as_str()).unwrap_or(""))
    }
}

fn micros_to_datetime(us: i64) -> Option<NaiveDateTime> {
    DateTime::from_timestamp_micros(us).map(|d| d.naive_utc())
}

/// Reads the start of `text` with a chrono pattern: a date and time, or a date at midnight.
/// What follows the pattern is ignored, as Java's `SimpleDateFormat.parse` ignores it
/// (`unix_timestamp('2024-03-15 13:45:30.123')` reads the seconds and leaves the millis).
fn parse(text: &str, pattern: &str) -> Option<NaiveDateTime> {
    let text = text.trim();
    NaiveDateTime::parse_and_remainder(text, pattern)
        .ok()
        .map(|(t, _)| t)
        .or_else(|| {
            NaiveDate::parse_and_remainder(text, pattern)
                .ok()
                .and_then(|(d, _)| d.and_hms_opt(0, 0, 0))
        })
}

impl ScalarUDFImpl for JavaPatterned {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(match self.kind {
            Kind::UnixTimestamp => DataType::Int64,
            _ => DataType::Utf8,
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let ts = DataType::Timestamp(TimeUnit::Microsecond, None);
        let pattern_arg = args.args.get(1);
        let patterns = match pattern_arg {
            Some(p) => Some(column(p, &DataType::Utf8, rows)?),
            None => None,
        };
        let pattern_at = |i: usize| -> Option<String> {
            match &patterns {
                Some(p) => {
                    let p = p.as_string::<i32>();
                    (!p.is_null(i)).then(|| p.value(i).to_string())
                }
                None => Some(DEFAULT_PATTERN.to_string()),
            }
        };
        let mut cache = Patterns { last: None };
        let out: ArrayRef = match self.kind {
            Kind::DateFormat | Kind::FromUnixtime => {
                let Some(first) = args.args.first() else {
                    return exec_err!("{} needs an argument", self.name);
                };
                let values: Vec<Option<NaiveDateTime>> = if self.kind == Kind::DateFormat {
                    let a = column(first, &ts, rows)?;
                    let a = a.as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
                    (0..rows)
                        .map(|i| {
                            (!a.is_null(i))
                                .then(|| micros_to_datetime(a.value(i)))
                                .flatten()
                        })
                        .collect()
                } else {
                    let a = column(first, &DataType::Int64, rows)?;
                    let a = a.as_primitive::<arrow::datatypes::Int64Type>();
                    (0..rows)
                        .map(|i| {
                            (!a.is_null(i))
                                .then(|| local_time(a.value(i), self.zone.as_ref()))
                                .flatten()
                        })
                        .collect()
                };
                let mut b = StringBuilder::with_capacity(rows, rows * 19);
                for (i, v) in values.into_iter().enumerate() {
                    match (v, pattern_at(i)) {
                        (Some(v), Some(p)) => {
                            let fmt = cache.chrono(&p)?;
                            // Written, not to_string(): a pattern chrono cannot render for
                            // a value is an error here, never a panic.
                            let mut text = String::new();
                            if write!(text, "{}", v.and_utc().format(fmt)).is_err() {
                                return exec_err!("cannot format a date with pattern {p}");
                            }
                            b.append_value(text);
                        }
                        _ => b.append_null(),
                    }
                }
                Arc::new(b.finish())
            }
            Kind::UnixTimestamp => {
                let Some(first) = args.args.first() else {
                    let now = chrono::Utc::now().timestamp();
                    return Ok(ColumnarValue::Scalar(now.into()));
                };
                let mut b = Int64Builder::with_capacity(rows);
                let a = first.to_array(rows)?;
                if matches!(
                    a.data_type(),
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
                ) {
                    let text = column(first, &DataType::Utf8, rows)?;
                    let text = text.as_string::<i32>();
                    for i in 0..rows {
                        let parsed = match (text.is_null(i), pattern_at(i)) {
                            (false, Some(p)) => parse(text.value(i), cache.chrono(&p)?),
                            _ => None,
                        };
                        b.append_option(parsed.and_then(|d| epoch_seconds(d, self.zone.as_ref())));
                    }
                } else {
                    let t = column(first, &ts, rows)?;
                    let t = t.as_primitive::<arrow::datatypes::TimestampMicrosecondType>();
                    for i in 0..rows {
                        let local = (!t.is_null(i))
                            .then(|| micros_to_datetime(t.value(i)))
                            .flatten();
                        b.append_option(local.and_then(|d| epoch_seconds(d, self.zone.as_ref())));
                    }
                }
                Arc::new(b.finish())
            }
        };
        Ok(ColumnarValue::Array(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_patterns_become_chrono_patterns() {
        assert_eq!(
            java_to_chrono("yyyy-MM-dd HH:mm:ss").unwrap(),
            "%Y-%m-%d %H:%M:%S"
        );
        assert_eq!(java_to_chrono("MMM yyyy").unwrap(), "%b %Y");
        assert_eq!(java_to_chrono("EEEE, d MMMM yy").unwrap(), "%A, %-d %B %y");
        assert_eq!(
            java_to_chrono("HH 'o''clock' 100%").unwrap(),
            "%H o'clock 100%%"
        );
        assert_eq!(
            java_to_chrono("yyyyMMdd'T'HHmmss.SSS").unwrap(),
            "%Y%m%dT%H%M%S.%3f"
        );
        assert_eq!(
            java_to_chrono("yyyy-MM-dd q").unwrap_err(),
            "Illegal pattern character 'q'"
        );
        assert!(java_to_chrono("'open").is_err());
    }

    #[test]
    fn every_pattern_letter_formats_without_panicking() {
        let t = parse(
            "2026-01-02 03:04:05",
            &java_to_chrono(DEFAULT_PATTERN).unwrap(),
        )
        .unwrap();
        for letters in [
            "G", "y", "Y", "M", "L", "w", "D", "d", "u", "E", "a", "H", "k", "K", "h", "m", "s",
            "S", "z", "Z", "X",
        ] {
            let fmt = java_to_chrono(&letters.repeat(4)).unwrap();
            let mut text = String::new();
            assert!(
                write!(text, "{}", t.and_utc().format(&fmt)).is_ok(),
                "{letters}"
            );
        }
        let fmt = java_to_chrono("z Z X").unwrap();
        assert_eq!(t.and_utc().format(&fmt).to_string(), "UTC +0000 Z");
    }

    #[test]
    fn texts_parse_with_date_only_patterns_too() {
        let p = java_to_chrono("yyyy-MM-dd").unwrap();
        assert_eq!(
            parse("2026-01-02", &p).unwrap().and_utc().timestamp(),
            1_767_312_000
        );
        assert!(parse("2026-13-02", &p).is_none());
        let p = java_to_chrono(DEFAULT_PATTERN).unwrap();
        assert_eq!(
            parse("1970-01-01 00:01:40", &p)
                .unwrap()
                .and_utc()
                .timestamp(),
            100
        );
    }
}
