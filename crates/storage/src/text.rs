//! LazySimpleSerDe's text encoding of complex values (ARRAY, MAP, STRUCT), both ways.
//!
//! A value nested at level `d` separates its parts with separator `d + 1`: with the defaults,
//! array items and struct fields by `\u{2}`, map entries by `\u{2}` and a key from its value by
//! `\u{3}`; deeper levels use `\u{4}`, `\u{5}`, ... A NULL is the table's NULL text (`\N`).
//! Reading turns each text into JSON and lets Arrow's JSON decoder build the nested arrays.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

use crate::format::TextLayout;
use crate::types::HiveType;

/// The separator of nesting level `level` (1 = collection items, 2 = map keys, ...).
fn separator(layout: &TextLayout, level: usize) -> char {
    match level {
        0 => layout.field_delim as char,
        1 => layout.collection_delim as char,
        2 => layout.map_key_delim as char,
        // Hive's further defaults: \u{4} upwards.
        n => char::from_u32(n as u32 + 1).unwrap_or('\u{4}'),
    }
}

fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends the JSON form of the text `s` of type `t` at nesting `level`.
fn to_json(s: &str, t: &HiveType, level: usize, layout: &TextLayout, out: &mut String) {
    if s == layout.null {
        out.push_str("null");
        return;
    }
    match t {
        HiveType::Array(e) => {
            out.push('[');
            if !s.is_empty() {
                for (i, item) in s.split(separator(layout, level + 1)).enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    to_json(item, e, level + 1, layout, out);
                }
            }
            out.push(']');
        }
        HiveType::Map(k, v) => {
            out.push('{');
            if !s.is_empty() {
                for (i, entry) in s.split(separator(layout, level + 1)).enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let (key, value) = entry
                        .split_once(separator(layout, level + 2))
                        .unwrap_or((entry, layout.null.as_str()));
                    // JSON object keys are strings; Arrow's decoder converts them to the key type.
                    let _ = k;
                    json_string(key, out);
                    out.push(':');
                    to_json(value, v, level + 2, layout, out);
                }
            }
            out.push('}');
        }
        HiveType::Struct(fields) => {
            out.push('{');
            let mut parts = s.split(separator(layout, level + 1));
            for (i, (name, ft)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(name, out);
                out.push(':');
                match parts.next() {
                    Some(p) => to_json(p, ft, level + 1, layout, out),
                    None => out.push_str("null"),
                }
            }
            out.push('}');
        }
        HiveType::Boolean => match s.to_ascii_lowercase().as_str() {
            "true" => out.push_str("true"),
            "false" => out.push_str("false"),
            _ => out.push_str("null"),
        },
        HiveType::TinyInt | HiveType::SmallInt | HiveType::Int | HiveType::BigInt => {
            match s.trim().parse::<i64>() {
                Ok(n) => out.push_str(&n.to_string()),
                Err(_) => out.push_str("null"),
            }
        }
        HiveType::Float | HiveType::Double => match s.trim().parse::<f64>() {
            Ok(f) if f.is_finite() => out.push_str(&f.to_string()),
            _ => out.push_str("null"),
        },
        // Arrow's JSON decoder reads BINARY from hex: the bytes the text stands for, as hex.
        HiveType::Binary => {
            out.push('"');
            for b in binary_of_text(s.as_bytes(), layout.binary_base64) {
                out.push_str(&format!("{b:02x}"));
            }
            out.push('"');
        }
        _ => json_string(s, out),
    }
}

/// Decodes a column of Hive text (one complex value per row) into `field`'s Arrow type; a
/// value that does not decode is NULL, as LazySimpleSerDe reads it.
pub fn decode_complex(
    texts: &StringArray,
    t: &HiveType,
    field: &Field,
    layout: &TextLayout,
) -> Result<ArrayRef, arrow::error::ArrowError> {
    decode_at(texts, t, field, layout, 0)
}

/// [`decode_complex`] of values nested at `level`.
fn decode_at(
    texts: &StringArray,
    t: &HiveType,
    field: &Field,
    layout: &TextLayout,
    level: usize,
) -> Result<ArrayRef, arrow::error::ArrowError> {
    if let (HiveType::Union(members), DataType::Union(fields, _)) = (t, field.data_type()) {
        return decode_union(texts, members, fields, layout, level);
    }
    let schema = Arc::new(Schema::new(vec![field.clone().with_nullable(true)]));
    let mut decoder = arrow::json::ReaderBuilder::new(schema)
        .with_strict_mode(false)
        .build_decoder()?;
    let mut line = String::new();
    for i in 0..texts.len() {
        line.clear();
        line.push('{');
        json_string(field.name(), &mut line);
        line.push(':');
        if texts.is_null(i) {
            line.push_str("null");
        } else {
            to_json(texts.value(i), t, level, layout, &mut line);
        }
        line.push_str("}\n");
        decoder.decode(line.as_bytes())?;
    }
    let batch = decoder.flush()?;
    match batch {
        Some(b) => Ok(b.column(0).clone()),
        None => Ok(arrow::array::new_null_array(field.data_type(), texts.len())),
    }
}

/// Decodes UNIONTYPE values at `level` (a column, or a union's member): each text is its
/// tag, the next level's separator and the value; each member decodes the values tagged with
/// it. A text without a known tag is NULL (the first member's NULL, as a union has no NULL of
/// its own). Unions inside arrays, maps and structs are not read (Arrow's JSON decoder has no
/// unions).
fn decode_union(
    texts: &StringArray,
    members: &[HiveType],
    fields: &arrow::datatypes::UnionFields,
    layout: &TextLayout,
    level: usize,
) -> Result<ArrayRef, arrow::error::ArrowError> {
    let sep = separator(layout, level + 1);
    let mut tags = Vec::with_capacity(texts.len());
    let mut values: Vec<Vec<Option<&str>>> = vec![Vec::with_capacity(texts.len()); members.len()];
    for i in 0..texts.len() {
        let parsed = texts
            .is_valid(i)
            .then(|| texts.value(i))
            .and_then(|t| t.split_once(sep))
            .and_then(|(tag, v)| Some((tag.trim().parse::<usize>().ok()?, v)))
            .filter(|(tag, _)| *tag < members.len());
        let tag = parsed.map_or(0, |(tag, _)| tag);
        tags.push(i8::try_from(tag).unwrap_or(0));
        for (m, column) in values.iter_mut().enumerate() {
            column.push(parsed.and_then(|(t, v)| (t == m).then_some(v)));
        }
    }
    let mut children = Vec::with_capacity(members.len());
    for ((member, (_, f)), column) in members.iter().zip(fields.iter()).zip(values) {
        let texts = StringArray::from(column);
        children.push(decode_at(&texts, member, f, layout, level + 1)?);
    }
    let union = arrow::array::UnionArray::try_new(fields.clone(), tags.into(), None, children)?;
    Ok(Arc::new(union))
}

/// Encodes one complex value of `array` at `row` as Hive text at nesting `level`.
pub fn encode(array: &dyn Array, row: usize, level: usize, layout: &TextLayout, out: &mut String) {
    use arrow::array::AsArray;
    if array.is_null(row) {
        out.push_str(&layout.null);
        return;
    }
    match array.data_type() {
        DataType::List(_) => {
            let list = array.as_list::<i32>();
            let values = list.value(row);
            for i in 0..values.len() {
                if i > 0 {
                    out.push(separator(layout, level + 1));
                }
                encode(values.as_ref(), i, level + 1, layout, out);
            }
        }
        DataType::Map(_, _) => {
            let map = array.as_map();
            let entries = map.value(row);
            for i in 0..entries.len() {
                if i > 0 {
                    out.push(separator(layout, level + 1));
                }
                encode(entries.column(0).as_ref(), i, level + 2, layout, out);
                out.push(separator(layout, level + 2));
                encode(entries.column(1).as_ref(), i, level + 2, layout, out);
            }
        }
        DataType::Struct(_) => {
            let st = array.as_struct();
            for (i, c) in st.columns().iter().enumerate() {
                if i > 0 {
                    out.push(separator(layout, level + 1));
                }
                encode(c.as_ref(), row, level + 1, layout, out);
            }
        }
        // A union is its tag, the separator of the next level, and the value at that level.
        DataType::Union(_, _) => {
            let union = array.as_union();
            let tag = union.type_id(row);
            out.push_str(&tag.to_string());
            out.push(separator(layout, level + 1));
            encode(
                union.child(tag).as_ref(),
                union.value_offset(row),
                level + 1,
                layout,
                out,
            );
        }
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            let one = encode_binary_column(&array.slice(row, 1));
            if one.is_valid(0) {
                out.push_str(one.value(0));
            } else {
                out.push_str(&layout.null);
            }
        }
        _ => {
            let one = array.slice(row, 1);
            match arrow::compute::cast(&one, &DataType::Utf8) {
                Ok(s) => {
                    let s = s.as_string::<i32>();
                    if s.is_valid(0) {
                        out.push_str(s.value(0));
                    } else {
                        out.push_str(&layout.null);
                    }
                }
                Err(_) => out.push_str(&layout.null),
            }
        }
    }
}

pub use crate::format::DECODE_BINARY_AS_BASE64;

/// Hive's text of a BINARY value: Base64, standard alphabet with padding, as LazySimpleSerDe
/// writes it.
pub fn binary_text(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A BINARY value read from its text as LazySimpleSerDe reads it: text made only of Base64's
/// characters (either alphabet, `=` and blanks) is decoded leniently, the way Hive's codec
/// does (blanks skipped, decoding stops at the first `=`, a partial last group kept as far as it
/// makes whole bytes); other text, and text that decodes to nothing, is its own bytes. With
/// `base64` off ([`DECODE_BINARY_AS_BASE64`] false) the text is always its own bytes.
pub fn binary_of_text(text: &[u8], base64: bool) -> Vec<u8> {
    fn sextet(b: u8) -> Option<u32> {
        Some(match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    }
    let blank = |b: u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    if !base64
        || !text
            .iter()
            .all(|&b| b == b'=' || blank(b) || sextet(b).is_some())
    {
        return text.to_vec();
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut bits, mut n) = (0u32, 0u32);
    for &b in text {
        if b == b'=' {
            break;
        }
        let Some(v) = sextet(b) else { continue };
        bits = (bits << 6) | v;
        n += 1;
        if n == 4 {
            out.extend_from_slice(&[(bits >> 16) as u8, (bits >> 8) as u8, bits as u8]);
            bits = 0;
            n = 0;
        }
    }
    match n {
        2 => out.push((bits >> 4) as u8),
        3 => out.extend_from_slice(&[(bits >> 10) as u8, (bits >> 2) as u8]),
        _ => {}
    }
    if out.is_empty() {
        text.to_vec()
    } else {
        out
    }
}

/// A column of text read as BINARY ([`binary_of_text`]).
pub fn decode_binary_column(texts: &StringArray, base64: bool) -> arrow::array::BinaryArray {
    texts
        .iter()
        .map(|t| t.map(|t| binary_of_text(t.as_bytes(), base64)))
        .collect()
}

/// A BINARY column as its Hive text ([`binary_text`]).
pub fn encode_binary_column(array: &dyn Array) -> StringArray {
    use arrow::array::AsArray as _;
    match array.data_type() {
        DataType::LargeBinary => array
            .as_binary::<i64>()
            .iter()
            .map(|v| v.map(binary_text))
            .collect(),
        DataType::BinaryView => array
            .as_binary_view()
            .iter()
            .map(|v| v.map(binary_text))
            .collect(),
        _ => array
            .as_binary_opt::<i32>()
            .map(|a| a.iter().map(|v| v.map(binary_text)).collect())
            .unwrap_or_else(|| StringArray::new_null(array.len())),
    }
}

/// A complex column as a column of Hive text.
pub fn encode_column(array: &dyn Array, layout: &TextLayout) -> StringArray {
    let mut out = String::new();
    (0..array.len())
        .map(|i| {
            if array.is_null(i) {
                return None;
            }
            out.clear();
            encode(array, i, 0, layout, &mut out);
            Some(out.clone())
        })
        .collect()
}

pub use apiary_hive_types::java::{java_double, java_float};

#[cfg(test)]
mod tests {

    #[test]
    fn decimal_texts_lose_their_exponent() {
        assert_eq!(plain_decimal("1E-3"), "0.001");
        assert_eq!(plain_decimal("-1.5e2"), "-150");
        assert_eq!(plain_decimal("1.25E1"), "12.5");
        assert_eq!(plain_decimal("+2e0"), "2");
        assert_eq!(plain_decimal("1E-99"), "0");
        assert_eq!(plain_decimal("1E+99"), "1E+99");
        assert_eq!(plain_decimal("3.14"), "3.14");
        assert_eq!(plain_decimal("xe5"), "xe5");
        assert_eq!(
            plain_decimal("1e99999999999999999999"),
            "1e99999999999999999999"
        );
    }
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn binary_text_as_hive_writes_and_reads_it() {
        assert_eq!(binary_text(b"123"), "MTIz");
        assert_eq!(binary_text(&[0xff, 0, 10]), "/wAK");
        assert_eq!(binary_of_text(b"MTIz", true), b"123");
        assert_eq!(binary_of_text(b"/wAK", true), [0xff, 0, 10]);
        // Padding, blanks and the URL-safe alphabet.
        assert_eq!(binary_of_text(b"YQ==", true), b"a");
        assert_eq!(binary_of_text(b"Y Q\n==", true), b"a");
        assert_eq!(binary_of_text(b"_wAK", true), [0xff, 0, 10]);
        // Unpadded partial groups decode as far as they make whole bytes.
        assert_eq!(binary_of_text(b"YWI", true), b"ab");
        // Text with other characters is its own bytes; so is text that decodes to nothing.
        assert_eq!(binary_of_text(b"hello world!", true), b"hello world!");
        assert_eq!(binary_of_text(b"a", true), b"a");
        assert_eq!(binary_of_text(b"", true), b"");
        // Text that happens to be Base64 is decoded, as in Hive ("123" is two bytes).
        assert_eq!(binary_of_text(b"123", true), [0xd7, 0x6d]);
        // Decoding off: always the bytes.
        assert_eq!(binary_of_text(b"MTIz", false), b"MTIz");
    }

    #[test]
    fn complex_text_round_trips() {
        let layout = TextLayout::from_params(&BTreeMap::new());
        let t =
            HiveType::parse("struct<a:array<int>,m:map<string,double>,s:string>").expect("type");
        let field = t.to_field("c");
        let text = "1\u{3}2\u{3}\\N\u{2}x\u{4}1.5\u{3}y\u{4}\\N\u{2}hi";
        let texts = StringArray::from(vec![Some(text), None, Some("\\N")]);
        let decoded = decode_complex(&texts, &t, &field, &layout).expect("decodes");
        assert_eq!(decoded.len(), 3);
        assert!(decoded.is_valid(0) && decoded.is_null(1) && decoded.is_null(2));
        let encoded = encode_column(decoded.as_ref(), &layout);
        assert_eq!(encoded.value(0), text);
        assert!(encoded.is_null(1));
    }

    #[test]
    fn binary_inside_complex_values_is_base64_both_ways() {
        use arrow::array::AsArray as _;
        let layout = TextLayout::from_params(&BTreeMap::new());
        let t = HiveType::parse("array<binary>").expect("type");
        let field = t.to_field("c");
        // Bytes whose Base64 is all hex digits (ABCD) must not be read as hex.
        let text = "ABCD\u{2}/wAK\u{2}\\N";
        let texts = StringArray::from(vec![Some(text)]);
        let decoded = decode_complex(&texts, &t, &field, &layout).expect("decodes");
        let items = decoded.as_list::<i32>().value(0);
        let items = items.as_binary::<i32>();
        assert_eq!(items.value(0), [0x00, 0x10, 0x83]);
        assert_eq!(items.value(1), [0xff, 0x00, 0x0a]);
        assert!(items.is_null(2));
        assert_eq!(encode_column(decoded.as_ref(), &layout).value(0), text);
    }
}

/// A number's text without an exponent (`1E-3` is `0.001`, `-1.5e2` is `-150`), as Java's
/// BigDecimal reads it; text without one, or that is no number, as it is. An exponent past
/// what any DECIMAL holds gives a text that does not convert (NULL), or zero below it.
pub fn plain_decimal(s: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    let Some(at) = s.find(['e', 'E']) else {
        return Cow::Borrowed(s);
    };
    let Ok(exponent) = s[at + 1..].parse::<i64>() else {
        return Cow::Borrowed(s);
    };
    let mantissa = &s[..at];
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, mantissa.strip_prefix('+').unwrap_or(mantissa)),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{int}{frac}");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Cow::Borrowed(s);
    }
    // Where the decimal point falls among the digits.
    let point = i64::try_from(int.len())
        .unwrap_or(i64::MAX)
        .saturating_add(exponent);
    if point > 80 {
        return Cow::Borrowed(s);
    }
    if point < -80 {
        return Cow::Borrowed("0");
    }
    let sign = if negative { "-" } else { "" };
    let text = match usize::try_from(point) {
        Err(_) => format!(
            "{sign}0.{}{digits}",
            "0".repeat(point.unsigned_abs() as usize)
        ),
        Ok(p) if p >= digits.len() => format!("{sign}{digits}{}", "0".repeat(p - digits.len())),
        Ok(p) => format!("{sign}{}.{}", &digits[..p], &digits[p..]),
    };
    Cow::Owned(text)
}

/// A scalar function decoding one text column into a complex type, BINARY or DECIMAL (used by
/// the TEXTFILE scan).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct DecodeComplex {
    field: Field,
    hive: HiveType,
    layout: TextLayout,
    signature: datafusion::logical_expr::Signature,
}

impl DecodeComplex {
    /// Decodes to `field` (whose Hive type is `hive`) under `layout`.
    pub fn new(field: Field, hive: HiveType, layout: TextLayout) -> Self {
        Self {
            field,
            hive,
            layout,
            signature: datafusion::logical_expr::Signature::any(
                1,
                datafusion::logical_expr::Volatility::Immutable,
            ),
        }
    }
}

impl datafusion::logical_expr::ScalarUDFImpl for DecodeComplex {
    fn name(&self) -> &str {
        "hive_text_decode"
    }

    fn signature(&self) -> &datafusion::logical_expr::Signature {
        &self.signature
    }

    fn return_type(
        &self,
        _args: &[arrow::datatypes::DataType],
    ) -> datafusion::error::Result<arrow::datatypes::DataType> {
        Ok(self.field.data_type().clone())
    }

    fn invoke_with_args(
        &self,
        args: datafusion::logical_expr::ScalarFunctionArgs,
    ) -> datafusion::error::Result<datafusion::logical_expr::ColumnarValue> {
        let Some(arg) = args.args.into_iter().next() else {
            return datafusion::common::exec_err!("hive_text_decode expects one argument");
        };
        let array = arg.into_array(args.number_rows)?;
        let strings = arrow::compute::cast(&array, &arrow::datatypes::DataType::Utf8)?;
        let strings = strings
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| datafusion::error::DataFusionError::Internal("text column".into()))?;
        let out: ArrayRef = if self.hive == HiveType::Binary {
            Arc::new(decode_binary_column(strings, self.layout.binary_base64))
        } else if matches!(self.hive, HiveType::Decimal(_, _)) {
            // As Hive reads a DECIMAL's text: exponents too, rounded to the scale, NULL when
            // it does not fit.
            let plain: StringArray = strings.iter().map(|v| v.map(plain_decimal)).collect();
            arrow::compute::cast_with_options(
                &plain,
                self.field.data_type(),
                &arrow::compute::CastOptions {
                    safe: true,
                    ..Default::default()
                },
            )?
        } else {
            decode_complex(strings, &self.hive, &self.field, &self.layout)?
        };
        Ok(datafusion::logical_expr::ColumnarValue::Array(out))
    }
}
