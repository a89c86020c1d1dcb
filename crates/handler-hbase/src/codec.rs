//! Values to cells and back, as Hive's HBaseSerDe stores them: as text (LazySimpleSerDe's form
//! of the value) or, for non-string primitives mapped binary, in HBase's `Bytes.toBytes` form
//! (big-endian integers, IEEE floats and doubles, one byte for a boolean).

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BinaryBuilder, BooleanBuilder, Float32Builder, Float64Builder,
    Int16Builder, Int32Builder, Int64Builder, Int8Builder, MapArray, StringArray, StructArray,
};
use arrow::buffer::OffsetBuffer;
use arrow::compute::CastOptions;
use arrow::datatypes::{DataType, Field, TimeUnit};
use datafusion::common::ScalarValue;

use apiary_storage::format::TextLayout;
use apiary_storage::handler::{HandlerError, HandlerResult};
use apiary_storage::text::{
    binary_of_text, binary_text, decode_complex, encode, java_double, java_float,
};
use apiary_storage::types::HiveType;

use crate::mapping::is_text;

fn remote(e: impl std::fmt::Display) -> HandlerError {
    HandlerError::Remote(e.to_string())
}

/// Whether values of `t` have a binary form (others are text even when mapped `#b`).
pub(crate) fn has_binary_form(t: &HiveType) -> bool {
    matches!(
        t,
        HiveType::Boolean
            | HiveType::TinyInt
            | HiveType::SmallInt
            | HiveType::Int
            | HiveType::BigInt
            | HiveType::Float
            | HiveType::Double
            | HiveType::Binary
    )
}

/// Hive's text of a TIMESTAMP: `yyyy-MM-dd HH:mm:ss` and the fraction's significant digits.
fn timestamp_text(micros: i64) -> Option<String> {
    let t = chrono::DateTime::from_timestamp_micros(micros)?.naive_utc();
    let mut s = t.format("%Y-%m-%d %H:%M:%S").to_string();
    let fraction = micros.rem_euclid(1_000_000);
    if fraction != 0 {
        let digits = format!("{fraction:06}");
        s.push('.');
        s.push_str(digits.trim_end_matches('0'));
    }
    Some(s)
}

/// The cells' bytes of every value of `array` (a column of type `hive`), None for NULL.
pub(crate) fn encode_column(
    array: &ArrayRef,
    hive: &HiveType,
    binary: bool,
    layout: &TextLayout,
) -> HandlerResult<Vec<Option<Vec<u8>>>> {
    let n = array.len();
    let binary = binary && has_binary_form(hive);
    let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(n);
    macro_rules! each {
        ($arr:expr, |$v:ident| $body:expr) => {{
            let a = $arr;
            for i in 0..n {
                out.push(if a.is_null(i) {
                    None
                } else {
                    let $v = a.value(i);
                    Some($body)
                });
            }
        }};
    }
    // An integer: big-endian bytes, or its decimal text.
    macro_rules! int {
        ($t:ty) => {
            each!(array.as_primitive::<$t>(), |v| if binary {
                v.to_be_bytes().to_vec()
            } else {
                v.to_string().into_bytes()
            })
        };
    }
    use arrow::datatypes as t;
    match array.data_type() {
        DataType::Utf8 => each!(array.as_string::<i32>(), |v| v.as_bytes().to_vec()),
        DataType::LargeUtf8 => each!(array.as_string::<i64>(), |v| v.as_bytes().to_vec()),
        DataType::Utf8View => each!(array.as_string_view(), |v| v.as_bytes().to_vec()),
        DataType::Boolean => each!(array.as_boolean(), |v| match (binary, v) {
            // (Hive writes a boolean as Java's DataOutput does: 1, not HBase's 0xff.)
            (true, true) => vec![1],
            (true, false) => vec![0],
            (false, v) => v.to_string().into_bytes(),
        }),
        DataType::Int8 => int!(t::Int8Type),
        DataType::Int16 => int!(t::Int16Type),
        DataType::Int32 => int!(t::Int32Type),
        DataType::Int64 => int!(t::Int64Type),
        DataType::Float32 => each!(array.as_primitive::<t::Float32Type>(), |v| if binary {
            v.to_bits().to_be_bytes().to_vec()
        } else {
            java_float(v).into_bytes()
        }),
        DataType::Float64 => each!(array.as_primitive::<t::Float64Type>(), |v| if binary {
            v.to_bits().to_be_bytes().to_vec()
        } else {
            java_double(v).into_bytes()
        }),
        // Binary mapped binary is its bytes; as text, LazySimpleSerDe writes it in Base64.
        DataType::Binary => each!(array.as_binary::<i32>(), |v| if binary {
            v.to_vec()
        } else {
            binary_text(v).into_bytes()
        }),
        DataType::Timestamp(TimeUnit::Microsecond, None) => {
            let a = array.as_primitive::<t::TimestampMicrosecondType>();
            for i in 0..n {
                out.push(if a.is_null(i) {
                    None
                } else {
                    Some(
                        timestamp_text(a.value(i))
                            .ok_or_else(|| {
                                remote(format!("timestamp {} is out of range", a.value(i)))
                            })?
                            .into_bytes(),
                    )
                });
            }
        }
        DataType::List(_) | DataType::Map(_, _) | DataType::Struct(_) => {
            let mut s = String::new();
            for i in 0..n {
                out.push(if array.is_null(i) {
                    None
                } else {
                    s.clear();
                    encode(array.as_ref(), i, 0, layout, &mut s);
                    Some(s.as_bytes().to_vec())
                });
            }
        }
        // DECIMAL (with its scale), DATE: Arrow's text is Hive's.
        _ => {
            let text = arrow::compute::cast(array, &DataType::Utf8).map_err(remote)?;
            each!(text.as_string::<i32>(), |v| v.as_bytes().to_vec())
        }
    }
    Ok(out)
}

/// The first `N` bytes of `b`, if it has that many (as HBase's `Bytes.toXxx` read them).
fn first<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
    b.get(..N)?.try_into().ok()
}

/// The values of cells (None: no cell) as a column of type `hive` (Arrow type of `field`): a
/// cell that does not decode is NULL, as Hive's lazy objects read it.
pub(crate) fn decode_column(
    cells: &[Option<&[u8]>],
    hive: &HiveType,
    field: &Field,
    binary: bool,
    layout: &TextLayout,
) -> HandlerResult<ArrayRef> {
    let binary = binary && has_binary_form(hive);
    macro_rules! fixed {
        ($builder:ty, $n:literal, |$b:ident| $conv:expr) => {{
            let mut out = <$builder>::with_capacity(cells.len());
            for c in cells {
                out.append_option(c.and_then(|c| first::<$n>(c)).map(|$b| $conv));
            }
            Arc::new(out.finish()) as ArrayRef
        }};
    }
    let array: ArrayRef = match (hive, binary) {
        (HiveType::Boolean, true) => fixed!(BooleanBuilder, 1, |b| b[0] != 0),
        (HiveType::TinyInt, true) => fixed!(Int8Builder, 1, |b| i8::from_be_bytes(b)),
        (HiveType::SmallInt, true) => fixed!(Int16Builder, 2, |b| i16::from_be_bytes(b)),
        (HiveType::Int, true) => fixed!(Int32Builder, 4, |b| i32::from_be_bytes(b)),
        (HiveType::BigInt, true) => fixed!(Int64Builder, 8, |b| i64::from_be_bytes(b)),
        (HiveType::Float, true) => {
            fixed!(Float32Builder, 4, |b| f32::from_bits(u32::from_be_bytes(b)))
        }
        (HiveType::Double, true) => {
            fixed!(Float64Builder, 8, |b| f64::from_bits(u64::from_be_bytes(b)))
        }
        (HiveType::Binary, true) => {
            let mut out = BinaryBuilder::new();
            for c in cells {
                out.append_option(*c);
            }
            Arc::new(out.finish())
        }
        // As text, a binary value is Base64 when it reads as Base64, else its bytes (Hive's
        // LazyBinary).
        (HiveType::Binary, false) => {
            let mut out = BinaryBuilder::new();
            for c in cells {
                out.append_option(c.map(|c| binary_of_text(c, layout.binary_base64)));
            }
            Arc::new(out.finish())
        }
        (HiveType::Boolean, false) => {
            let mut out = BooleanBuilder::with_capacity(cells.len());
            for c in cells {
                out.append_option(c.and_then(|c| {
                    let s = std::str::from_utf8(c).ok()?;
                    if s.eq_ignore_ascii_case("true") {
                        Some(true)
                    } else if s.eq_ignore_ascii_case("false") {
                        Some(false)
                    } else {
                        None
                    }
                }));
            }
            Arc::new(out.finish())
        }
        (t, _) => {
            // Numbers and dates are read as Hive reads text: blanks around them are not part
            // of one; strings and complex values keep theirs.
            let trim = !t.is_complex() && !is_text(t);
            let texts: StringArray = cells
                .iter()
                .map(|c| {
                    c.map(|c| {
                        let s = String::from_utf8_lossy(c);
                        if trim {
                            s.trim().to_string()
                        } else {
                            s.into_owned()
                        }
                    })
                })
                .collect();
            if t.is_complex() {
                decode_complex(&texts, t, field, layout).map_err(remote)?
            } else if matches!(t, HiveType::String) {
                Arc::new(texts)
            } else {
                let options = CastOptions {
                    safe: true,
                    ..Default::default()
                };
                arrow::compute::cast_with_options(&texts, field.data_type(), &options)
                    .map_err(remote)?
            }
        }
    };
    if array.data_type() != field.data_type() {
        return arrow::compute::cast(&array, field.data_type()).map_err(remote);
    }
    Ok(array)
}

/// A map column from each row's cells (qualifier, value): keys decoded as the key type (an
/// entry whose key does not decode is left out), values as the value type. A row with no cell
/// in the family or prefix has an empty map, as Hive reads it.
pub(crate) fn decode_map(
    rows: &[Vec<(&[u8], &[u8])>],
    hive: &HiveType,
    field: &Field,
    key_binary: bool,
    value_binary: bool,
    layout: &TextLayout,
) -> HandlerResult<ArrayRef> {
    let (HiveType::Map(kt, vt), DataType::Map(entries, sorted)) = (hive, field.data_type()) else {
        return Err(remote(format!("column {} is not a map", field.name())));
    };
    let DataType::Struct(kv) = entries.data_type() else {
        return Err(remote(format!("column {} is not a map", field.name())));
    };
    let (Some(kf), Some(vf)) = (kv.first(), kv.get(1)) else {
        return Err(remote(format!("column {} is not a map", field.name())));
    };
    let keys: Vec<Option<&[u8]>> = rows.iter().flatten().map(|(k, _)| Some(*k)).collect();
    let values: Vec<Option<&[u8]>> = rows.iter().flatten().map(|(_, v)| Some(*v)).collect();
    let keys = decode_column(&keys, kt, kf, key_binary, layout)?;
    let values = decode_column(&values, vt, vf, value_binary, layout)?;
    // Entries whose key is NULL are dropped (a map key cannot be NULL); of entries whose keys
    // decode equal ("1" and "01" as INT), the last is kept, as Hive's map keeps it.
    let mut keep = vec![false; keys.len()];
    let mut offsets = vec![0i32];
    let mut at = 0usize;
    for row in rows {
        let mut seen = std::collections::HashSet::new();
        let mut kept = 0i32;
        for i in (at..at + row.len()).rev() {
            if keys.is_valid(i)
                && seen.insert(ScalarValue::try_from_array(&keys, i).map_err(remote)?)
            {
                keep[i] = true;
                kept += 1;
            }
        }
        at += row.len();
        let last = offsets.last().copied().unwrap_or(0);
        offsets.push(last + kept);
    }
    let keep = arrow::array::BooleanArray::from(keep);
    let keys = arrow::compute::filter(&keys, &keep).map_err(remote)?;
    let values = arrow::compute::filter(&values, &keep).map_err(remote)?;
    let entries_array =
        StructArray::try_new(kv.clone(), vec![keys, values], None).map_err(remote)?;
    let map = MapArray::try_new(
        entries.clone(),
        OffsetBuffer::new(offsets.into()),
        entries_array,
        None,
        *sorted,
    )
    .map_err(remote)?;
    Ok(Arc::new(map))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Float64Array, Int32Array, TimestampMicrosecondArray};

    fn layout() -> TextLayout {
        TextLayout::from_params(&Default::default())
    }

    #[test]
    fn binary_forms_are_hbases_bytes_to_bytes() {
        let a: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), Some(-1), None]));
        let cells = encode_column(&a, &HiveType::Int, true, &layout()).unwrap();
        assert_eq!(
            cells,
            vec![Some(vec![0, 0, 0, 1]), Some(vec![0xff; 4]), None]
        );
        let d: ArrayRef = Arc::new(Float64Array::from(vec![1.5]));
        let cells = encode_column(&d, &HiveType::Double, true, &layout()).unwrap();
        assert_eq!(cells[0].as_deref(), Some(&1.5f64.to_be_bytes()[..]));
        let text = encode_column(&d, &HiveType::Double, false, &layout()).unwrap();
        assert_eq!(text[0].as_deref(), Some(&b"1.5"[..]));
        // Round trip.
        let owned = encode_column(&a, &HiveType::Int, true, &layout()).unwrap();
        let refs2: Vec<Option<&[u8]>> = owned.iter().map(|c| c.as_deref()).collect();
        let back = decode_column(
            &refs2,
            &HiveType::Int,
            &Field::new("x", DataType::Int32, true),
            true,
            &layout(),
        )
        .unwrap();
        assert_eq!(
            back.as_ref(),
            &Int32Array::from(vec![Some(1), Some(-1), None]) as &dyn Array
        );
    }

    #[test]
    fn text_that_does_not_parse_is_null() {
        let cells: Vec<Option<&[u8]>> = vec![Some(b"12"), Some(b"x"), Some(b" 7 "), None];
        let back = decode_column(
            &cells,
            &HiveType::Int,
            &Field::new("x", DataType::Int32, true),
            false,
            &layout(),
        )
        .unwrap();
        assert_eq!(
            back.as_ref(),
            &Int32Array::from(vec![Some(12), None, Some(7), None]) as &dyn Array
        );
        // A 3-byte cell is no binary INT.
        let cells: Vec<Option<&[u8]>> = vec![Some(&[0, 0, 1])];
        let back = decode_column(
            &cells,
            &HiveType::Int,
            &Field::new("x", DataType::Int32, true),
            true,
            &layout(),
        )
        .unwrap();
        assert!(back.is_null(0));
    }

    #[test]
    fn map_keys_that_decode_equal_keep_the_last_entry() {
        let hive = HiveType::parse("map<int,string>").unwrap();
        let field = hive.to_field("m");
        let rows: Vec<Vec<(&[u8], &[u8])>> = vec![
            vec![
                (b"01", b"first"),
                (b"1", b"second"),
                (b"x", b"no key"),
                (b"2", b"two"),
            ],
            vec![],
        ];
        let m = decode_map(&rows, &hive, &field, false, false, &layout()).unwrap();
        let m = m.as_map();
        assert_eq!(m.value_length(0), 2);
        assert_eq!(m.value_length(1), 0);
        let keys = m.keys().as_primitive::<arrow::datatypes::Int32Type>();
        let values = m.values().as_string::<i32>();
        let got: Vec<(i32, &str)> = (0..2).map(|i| (keys.value(i), values.value(i))).collect();
        assert_eq!(got, vec![(1, "second"), (2, "two")]);
    }

    #[test]
    fn timestamps_are_written_as_hive_prints_them() {
        let a: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![
            1_764_583_200_000_000,
            1_764_583_200_120_000,
        ]));
        let cells = encode_column(&a, &HiveType::Timestamp, false, &layout()).unwrap();
        assert_eq!(cells[0].as_deref(), Some(&b"2025-12-01 10:00:00"[..]));
        assert_eq!(cells[1].as_deref(), Some(&b"2025-12-01 10:00:00.12"[..]));
    }
}
