//! Hive's text rendering of values: what a HiveServer2 client receives for DECIMAL, DATE,
//! TIMESTAMP, intervals and complex types (which travel as strings), and how nested values are
//! written as JSON-like text (`{"a":1}`, `[1,2]`, `{1:"x"}` for a map with an int key).

use std::fmt::Write;

use arrow::array::temporal_conversions::{as_date, as_datetime};
use arrow::array::{Array, AsArray};
use arrow::datatypes::{
    DataType, Date32Type, Date64Type, DurationMicrosecondType, DurationMillisecondType,
    DurationNanosecondType, DurationSecondType, Float16Type, Float32Type, Float64Type, Int16Type,
    Int32Type, Int64Type, Int8Type, IntervalDayTimeType, IntervalMonthDayNanoType, IntervalUnit,
    IntervalYearMonthType, TimeUnit, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow::util::display::array_value_to_string;
use chrono::NaiveDateTime;

/// The text Hive shows for row `row` of a top-level column, `None` for NULL.
pub fn cell_text(array: &dyn Array, row: usize) -> Option<String> {
    // (A NULL-typed array has no validity buffer: `is_null` says false for its rows.)
    if array.is_null(row) || array.data_type() == &DataType::Null {
        return None;
    }
    let mut out = String::new();
    match array.data_type() {
        DataType::Utf8 => out.push_str(array.as_string::<i32>().value(row)),
        DataType::LargeUtf8 => out.push_str(array.as_string::<i64>().value(row)),
        DataType::Utf8View => out.push_str(array.as_string_view().value(row)),
        DataType::List(_)
        | DataType::LargeList(_)
        | DataType::FixedSizeList(_, _)
        | DataType::Map(_, _)
        | DataType::Struct(_)
        | DataType::Union(_, _) => write_json(&mut out, array, row),
        _ => write_scalar(&mut out, array, row, false),
    }
    Some(out)
}

/// Writes a nested value as Hive's JSON-like text.
fn write_json(out: &mut String, array: &dyn Array, row: usize) {
    if array.is_null(row) || array.data_type() == &DataType::Null {
        out.push_str("null");
        return;
    }
    match array.data_type() {
        DataType::List(_) => {
            if let Some(list) = array.as_list_opt::<i32>() {
                write_list(out, list.value(row).as_ref());
            }
        }
        DataType::LargeList(_) => {
            if let Some(list) = array.as_list_opt::<i64>() {
                write_list(out, list.value(row).as_ref());
            }
        }
        DataType::FixedSizeList(_, _) => {
            if let Some(list) = array.as_fixed_size_list_opt() {
                write_list(out, list.value(row).as_ref());
            }
        }
        DataType::Map(_, _) => {
            if let Some(map) = array.as_map_opt() {
                let entries = map.value(row);
                let (keys, values) = (entries.column(0), entries.column(1));
                out.push('{');
                for i in 0..entries.len() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_json(out, keys.as_ref(), i);
                    out.push(':');
                    write_json(out, values.as_ref(), i);
                }
                out.push('}');
            }
        }
        DataType::Struct(fields) => {
            if let Some(s) = array.as_struct_opt() {
                out.push('{');
                for (i, f) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_quoted(out, f.name());
                    out.push(':');
                    write_json(out, s.column(i).as_ref(), row);
                }
                out.push('}');
            }
        }
        DataType::Union(_, _) => {
            // Hive's text of a union: `{tag:value}`.
            if let Some(u) = array.as_union_opt() {
                let tag = u.type_id(row);
                let _ = write!(out, "{{{tag}:");
                let child = u.child(tag);
                write_json(out, child.as_ref(), u.value_offset(row));
                out.push('}');
            }
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let text = cell_text(array, row).unwrap_or_default();
            write_quoted(out, &text);
        }
        _ => write_scalar(out, array, row, true),
    }
}

fn write_list(out: &mut String, values: &dyn Array) {
    out.push('[');
    for i in 0..values.len() {
        if i > 0 {
            out.push(',');
        }
        write_json(out, values, i);
    }
    out.push(']');
}

/// Writes a non-null primitive value; inside JSON, text-like values are quoted.
fn write_scalar(out: &mut String, array: &dyn Array, row: usize, nested: bool) {
    let dt = array.data_type();
    let text = match dt {
        DataType::Boolean => array.as_boolean().value(row).to_string(),
        DataType::Int8 => array.as_primitive::<Int8Type>().value(row).to_string(),
        DataType::Int16 => array.as_primitive::<Int16Type>().value(row).to_string(),
        DataType::Int32 => array.as_primitive::<Int32Type>().value(row).to_string(),
        DataType::Int64 => array.as_primitive::<Int64Type>().value(row).to_string(),
        DataType::UInt8 => array.as_primitive::<UInt8Type>().value(row).to_string(),
        DataType::UInt16 => array.as_primitive::<UInt16Type>().value(row).to_string(),
        DataType::UInt32 => array.as_primitive::<UInt32Type>().value(row).to_string(),
        DataType::UInt64 => array.as_primitive::<UInt64Type>().value(row).to_string(),
        DataType::Float16 => java_float(f32::from(array.as_primitive::<Float16Type>().value(row))),
        DataType::Float32 => java_float(array.as_primitive::<Float32Type>().value(row)),
        DataType::Float64 => java_double(array.as_primitive::<Float64Type>().value(row)),
        DataType::Date32 => {
            let v = array.as_primitive::<Date32Type>().value(row);
            quoted_if(nested, date_text(as_date::<Date32Type>(i64::from(v))))
        }
        DataType::Date64 => {
            let v = array.as_primitive::<Date64Type>().value(row);
            quoted_if(nested, date_text(as_date::<Date64Type>(v)))
        }
        DataType::Timestamp(unit, tz) => {
            let ts = timestamp_text(array, row, unit);
            let ts = match tz {
                Some(tz) => format!("{ts} {tz}"),
                None => ts,
            };
            quoted_if(nested, ts)
        }
        DataType::Interval(IntervalUnit::YearMonth) => {
            let months = array.as_primitive::<IntervalYearMonthType>().value(row);
            quoted_if(nested, year_month_text(months))
        }
        DataType::Interval(IntervalUnit::DayTime) => {
            let v = array.as_primitive::<IntervalDayTimeType>().value(row);
            let nanos = i128::from(v.days) * NANOS_PER_DAY + i128::from(v.milliseconds) * 1_000_000;
            quoted_if(nested, day_time_text(nanos))
        }
        DataType::Interval(IntervalUnit::MonthDayNano) => {
            let v = array.as_primitive::<IntervalMonthDayNanoType>().value(row);
            let text = if v.months != 0 && v.days == 0 && v.nanoseconds == 0 {
                year_month_text(v.months)
            } else {
                day_time_text(i128::from(v.days) * NANOS_PER_DAY + i128::from(v.nanoseconds))
            };
            quoted_if(nested, text)
        }
        DataType::Duration(unit) => {
            let per = match unit {
                TimeUnit::Second => 1_000_000_000,
                TimeUnit::Millisecond => 1_000_000,
                TimeUnit::Microsecond => 1_000,
                TimeUnit::Nanosecond => 1,
            };
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<DurationSecondType>().value(row),
                TimeUnit::Millisecond => array.as_primitive::<DurationMillisecondType>().value(row),
                TimeUnit::Microsecond => array.as_primitive::<DurationMicrosecondType>().value(row),
                TimeUnit::Nanosecond => array.as_primitive::<DurationNanosecondType>().value(row),
            };
            quoted_if(nested, day_time_text(i128::from(v) * per))
        }
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            let bytes: &[u8] = match dt {
                DataType::Binary => array.as_binary::<i32>().value(row),
                DataType::LargeBinary => array.as_binary::<i64>().value(row),
                _ => array.as_binary_view().value(row),
            };
            quoted_if(nested, String::from_utf8_lossy(bytes).into_owned())
        }
        DataType::Decimal32(_, _)
        | DataType::Decimal64(_, _)
        | DataType::Decimal128(_, _)
        | DataType::Decimal256(_, _) => array_value_to_string(array, row).unwrap_or_default(),
        _ => quoted_if(
            nested,
            array_value_to_string(array, row).unwrap_or_default(),
        ),
    };
    out.push_str(&text);
}

const NANOS_PER_DAY: i128 = 86_400 * 1_000_000_000;

fn quoted_if(nested: bool, s: String) -> String {
    if nested {
        let mut q = String::with_capacity(s.len() + 2);
        write_quoted(&mut q, &s);
        q
    } else {
        s
    }
}

fn date_text(d: Option<chrono::NaiveDate>) -> String {
    d.map(|d| d.format("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

fn timestamp_text(array: &dyn Array, row: usize, unit: &TimeUnit) -> String {
    let dt: Option<NaiveDateTime> = match unit {
        TimeUnit::Second => as_datetime::<TimestampSecondType>(
            array.as_primitive::<TimestampSecondType>().value(row),
        ),
        TimeUnit::Millisecond => as_datetime::<TimestampMillisecondType>(
            array.as_primitive::<TimestampMillisecondType>().value(row),
        ),
        TimeUnit::Microsecond => as_datetime::<TimestampMicrosecondType>(
            array.as_primitive::<TimestampMicrosecondType>().value(row),
        ),
        TimeUnit::Nanosecond => as_datetime::<TimestampNanosecondType>(
            array.as_primitive::<TimestampNanosecondType>().value(row),
        ),
    };
    dt.map(hive_timestamp).unwrap_or_default()
}

/// `yyyy-MM-dd HH:mm:ss[.fffffffff]` with trailing zeros of the fraction removed, as Hive 3+.
pub fn hive_timestamp(dt: NaiveDateTime) -> String {
    let mut s = dt.format("%Y-%m-%d %H:%M:%S").to_string();
    let nanos = dt.and_utc().timestamp_subsec_nanos();
    if nanos > 0 {
        let frac = format!("{nanos:09}");
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    s
}

/// Hive's `interval_year_month` text: `years-months`.
fn year_month_text(months: i32) -> String {
    let sign = if months < 0 { "-" } else { "" };
    let m = months.unsigned_abs();
    format!("{sign}{}-{}", m / 12, m % 12)
}

/// Hive's `interval_day_time` text: `days hh:mm:ss.nnnnnnnnn`.
fn day_time_text(total_nanos: i128) -> String {
    let sign = if total_nanos < 0 { "-" } else { "" };
    let n = total_nanos.unsigned_abs();
    let nanos = n % 1_000_000_000;
    let secs = n / 1_000_000_000;
    format!(
        "{sign}{} {:02}:{:02}:{:02}.{nanos:09}",
        secs / 86_400,
        (secs / 3600) % 24,
        (secs / 60) % 60,
        secs % 60
    )
}

/// Writes `s` as a JSON string literal.
fn write_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

pub use crate::java::{java_double, java_float};

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{
        ArrayRef, Decimal128Array, Int32Array, ListArray, MapArray, StringArray, StructArray,
        TimestampMicrosecondArray,
    };
    use arrow::buffer::OffsetBuffer;
    use arrow::datatypes::{Field, Fields};
    use std::sync::Arc;

    #[test]
    fn primitives_render_as_hive() {
        let ts = TimestampMicrosecondArray::from(vec![Some(1_577_836_800_123_400), Some(0), None]);
        assert_eq!(
            cell_text(&ts, 0).as_deref(),
            Some("2020-01-01 00:00:00.1234")
        );
        assert_eq!(cell_text(&ts, 1).as_deref(), Some("1970-01-01 00:00:00"));
        assert_eq!(cell_text(&ts, 2), None);
        let d = Decimal128Array::from(vec![150])
            .with_precision_and_scale(10, 2)
            .expect("valid");
        assert_eq!(cell_text(&d, 0).as_deref(), Some("1.50"));
        assert_eq!(java_double(1.0), "1.0");
        assert_eq!(java_double(1e10), "1.0E10");
        assert_eq!(java_double(0.25), "0.25");
        assert_eq!(java_double(1.5e-5), "1.5E-5");
        assert_eq!(year_month_text(14), "1-2");
        assert_eq!(
            day_time_text(NANOS_PER_DAY + 3_723_000_000_000),
            "1 01:02:03.000000000"
        );
    }

    #[test]
    fn complex_values_render_as_hive_json() {
        let values = Arc::new(Int32Array::from(vec![Some(1), None, Some(3)])) as ArrayRef;
        let list = ListArray::new(
            Arc::new(Field::new("item", DataType::Int32, true)),
            OffsetBuffer::new(vec![0, 2, 3].into()),
            values,
            None,
        );
        assert_eq!(cell_text(&list, 0).as_deref(), Some("[1,null]"));
        assert_eq!(cell_text(&list, 1).as_deref(), Some("[3]"));

        let s = StructArray::from(vec![
            (
                Arc::new(Field::new("a", DataType::Int32, true)),
                Arc::new(Int32Array::from(vec![1])) as ArrayRef,
            ),
            (
                Arc::new(Field::new("b", DataType::Utf8, true)),
                Arc::new(StringArray::from(vec!["x\"y"])) as ArrayRef,
            ),
        ]);
        assert_eq!(cell_text(&s, 0).as_deref(), Some(r#"{"a":1,"b":"x\"y"}"#));

        let entries = StructArray::from(vec![
            (
                Arc::new(Field::new("key", DataType::Int32, false)),
                Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef,
            ),
            (
                Arc::new(Field::new("value", DataType::Utf8, true)),
                Arc::new(StringArray::from(vec![Some("one"), None])) as ArrayRef,
            ),
        ]);
        let map = MapArray::new(
            Arc::new(Field::new(
                "entries",
                DataType::Struct(Fields::from(vec![
                    Field::new("key", DataType::Int32, false),
                    Field::new("value", DataType::Utf8, true),
                ])),
                false,
            )),
            OffsetBuffer::new(vec![0, 2].into()),
            entries,
            None,
            false,
        );
        assert_eq!(cell_text(&map, 0).as_deref(), Some(r#"{1:"one",2:null}"#));
    }
}
