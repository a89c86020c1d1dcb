//! Hive's `murmur_hash(a, ..)`: the hash Hive 3+ buckets rows by (bucketing version 2), an
//! INT. Each argument's hash is Murmur3's 32-bit hash, with Hive's seed 104729, of the bytes
//! Hive writes for it, and the arguments combine as `31 * h + hash(arg)` from 0:
//!
//! - BOOLEAN is 1 or 0 and TINYINT its value, unhashed; NULL is 0;
//! - SMALLINT, INT, BIGINT and DATE (its day number) hash their big-endian bytes;
//! - FLOAT and DOUBLE hash the big-endian bytes of their bit pattern *read as a number* (Hive
//!   puts `floatToIntBits(f)` into the buffer as a float), so `1.0` hashes as 1065353216.0;
//! - STRING, VARCHAR and BINARY hash their bytes (a CHAR's without the padding);
//! - ARRAY and STRUCT combine their elements as the arguments do; a MAP adds
//!   `murmur(key) ^ hash(value)` per entry, the value's hash being Hive's older `hash()`.
//!
//! Hive's Murmur3 reads the last one to three bytes as signed bytes (sign-extended before the
//! shift), unlike the reference MurmurHash3; this one does the same, so a string ending in
//! non-ASCII bytes hashes as in Hive. TIMESTAMP and DECIMAL, whose hashed bytes are Hive's
//! internal serialized forms, are refused rather than answered differently.

use arrow::array::Array;
use datafusion::common::{exec_err, Result, ScalarValue};

/// Hive's `Murmur3.DEFAULT_SEED`.
const SEED: u32 = 104_729;

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

fn mix(k: u32, hash: u32) -> u32 {
    let k = k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    (hash ^ k)
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

/// Hive's `Murmur3.hash32(data, length)` with its seed.
pub(crate) fn hash32(data: &[u8]) -> i32 {
    let mut hash = SEED;
    let mut blocks = data.chunks_exact(4);
    for b in &mut blocks {
        hash = mix(u32::from_le_bytes([b[0], b[1], b[2], b[3]]), hash);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        // Each tail byte sign-extended, as Java's `data[i] << n` does.
        let signed = |i: usize, shift: u32| ((i32::from(tail[i] as i8)) << shift) as u32;
        let mut k = 0u32;
        if tail.len() == 3 {
            k ^= signed(2, 16);
        }
        if tail.len() >= 2 {
            k ^= signed(1, 8);
        }
        k ^= signed(0, 0);
        hash ^= k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    }
    // `length` is an int in Java; a longer value is refused before it gets here.
    hash ^= data.len() as u32;
    hash ^= hash >> 16;
    hash = hash.wrapping_mul(0x85eb_ca6b);
    hash ^= hash >> 13;
    hash = hash.wrapping_mul(0xc2b2_ae35);
    hash ^= hash >> 16;
    hash as i32
}

/// `murmur_hash(a, ..)`.
pub(crate) fn murmur_hash(args: &[ScalarValue]) -> Result<ScalarValue> {
    let mut h: i32 = 0;
    for a in args {
        h = h.wrapping_mul(31).wrapping_add(value_hash(a)?);
    }
    Ok(ScalarValue::Int32(Some(h)))
}

/// Java's `Float.floatToIntBits` (one NaN).
fn float_bits(f: f32) -> i32 {
    if f.is_nan() {
        0x7fc0_0000
    } else {
        f.to_bits() as i32
    }
}

/// Java's `Double.doubleToLongBits` (one NaN).
fn double_bits(f: f64) -> i64 {
    if f.is_nan() {
        0x7ff8_0000_0000_0000
    } else {
        f.to_bits() as i64
    }
}

fn value_hash(v: &ScalarValue) -> Result<i32> {
    use ScalarValue as S;
    if v.is_null() {
        return Ok(0);
    }
    Ok(match v {
        S::Boolean(Some(b)) => i32::from(*b),
        S::Int8(Some(i)) => i32::from(*i),
        S::Int16(Some(i)) => hash32(&i.to_be_bytes()),
        S::Int32(Some(i)) | S::Date32(Some(i)) => hash32(&i.to_be_bytes()),
        S::Int64(Some(i)) => hash32(&i.to_be_bytes()),
        // The bits converted to a number, as Java's putFloat(int) / putDouble(long) do.
        S::Float32(Some(f)) => hash32(&(float_bits(*f) as f32).to_be_bytes()),
        S::Float64(Some(f)) => hash32(&(double_bits(*f) as f64).to_be_bytes()),
        S::Utf8(Some(s)) | S::LargeUtf8(Some(s)) | S::Utf8View(Some(s)) => hash32(s.as_bytes()),
        S::Binary(Some(b)) | S::LargeBinary(Some(b)) | S::BinaryView(Some(b)) => hash32(b),
        S::List(a) => elements_hash(a.as_ref())?,
        S::LargeList(a) => elements_hash(a.as_ref())?,
        S::FixedSizeList(a) => elements_hash(a.as_ref())?,
        S::Struct(s) => {
            let mut h: i32 = 0;
            for column in s.columns() {
                let field = ScalarValue::try_from_array(column, 0)?;
                h = h.wrapping_mul(31).wrapping_add(value_hash(&field)?);
            }
            h
        }
        S::Map(m) => {
            let mut h: i32 = 0;
            if !m.is_empty() && !m.is_null(0) {
                let entries = m.value(0);
                for i in 0..entries.len() {
                    let key = ScalarValue::try_from_array(entries.column(0), i)?;
                    let value = ScalarValue::try_from_array(entries.column(1), i)?;
                    h = h.wrapping_add(value_hash(&key)? ^ java_hash(&value)?);
                }
            }
            h
        }
        other => {
            return exec_err!(
                "murmur_hash of a {} value is not supported",
                apiary_hive_types::types::HiveType::of(&other.data_type())
            )
        }
    })
}

/// An array's elements combined as `31 * h + murmur(element)`.
fn elements_hash(list: &dyn Array) -> Result<i32> {
    let mut h: i32 = 0;
    if list.is_empty() || list.is_null(0) {
        return Ok(0);
    }
    let Some(values) = crate::args::list_at(list, 0) else {
        return exec_err!("murmur_hash: {} is not an array", list.data_type());
    };
    for i in 0..values.len() {
        let v = ScalarValue::try_from_array(&values, i)?;
        h = h.wrapping_mul(31).wrapping_add(value_hash(&v)?);
    }
    Ok(h)
}

/// `hash(a, ..)`: Hive's hash code of its arguments, `31 * h + hash(arg)` from 0, each
/// argument's as Java's (an INT its value, a BIGINT `v ^ v >>> 32`, a DOUBLE its bits', a
/// string over its UTF-8 bytes, a BOOLEAN 1 or 0, NULL 0).
pub(crate) fn hash(args: &[ScalarValue]) -> Result<ScalarValue> {
    let mut h: i32 = 0;
    for a in args {
        h = h.wrapping_mul(31).wrapping_add(java_hash(a)?);
    }
    Ok(ScalarValue::Int32(Some(h)))
}

fn long_hash(v: i64) -> i32 {
    (v ^ ((v as u64) >> 32) as i64) as i32
}

pub(crate) fn java_hash(v: &ScalarValue) -> Result<i32> {
    use ScalarValue as S;
    Ok(match v {
        v if v.is_null() => 0,
        S::Boolean(Some(b)) => i32::from(*b),
        S::Int8(Some(i)) => i32::from(*i),
        S::Int16(Some(i)) => i32::from(*i),
        S::Int32(Some(i)) => *i,
        S::Int64(Some(i)) => long_hash(*i),
        S::Float32(Some(f)) => f.to_bits() as i32,
        S::Float64(Some(f)) => {
            // Java's doubleToLongBits: one NaN.
            let bits = if f.is_nan() {
                0x7ff8_0000_0000_0000
            } else {
                f.to_bits() as i64
            };
            long_hash(bits)
        }
        S::Utf8(Some(s)) | S::LargeUtf8(Some(s)) | S::Utf8View(Some(s)) => bytes_hash(s.as_bytes()),
        S::Binary(Some(b)) | S::LargeBinary(Some(b)) | S::BinaryView(Some(b)) => bytes_hash(b),
        other => {
            return exec_err!(
                "hash of a {} value is not supported",
                apiary_hive_types::types::HiveType::of(&other.data_type())
            )
        }
    })
}

fn bytes_hash(b: &[u8]) -> i32 {
    b.iter().fold(0i32, |h, &c| {
        h.wrapping_mul(31).wrapping_add(i32::from(c as i8))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(v: ScalarValue) -> i32 {
        match murmur_hash(&[v]) {
            Ok(ScalarValue::Int32(Some(h))) => h,
            other => panic!("murmur_hash gave {other:?}"),
        }
    }

    /// Values from Hive's own `Murmur3.hash32` (hive-storage-api 2.8.1, run in jshell) over
    /// the bytes Hive's `hashCodeMurmur` writes for each type.
    #[test]
    fn matches_hives_murmur3() {
        assert_eq!(one(ScalarValue::Utf8(Some("abc".into()))), -885_266_671);
        // A tail of bytes above 0x7f: Hive's sign-extended reading.
        assert_eq!(one(ScalarValue::Utf8(Some("aé".into()))), 140_358_898);
        assert_eq!(one(ScalarValue::Utf8(Some(String::new()))), -965_378_730);
        assert_eq!(one(ScalarValue::Int32(Some(1))), 1_321_152_925);
        assert_eq!(one(ScalarValue::Int64(Some(1))), -913_662_660);
        assert_eq!(one(ScalarValue::Int16(Some(7))), -1_257_352_624);
        assert_eq!(one(ScalarValue::Float64(Some(1.5))), 76_905_473);
        assert_eq!(one(ScalarValue::Int8(Some(-3))), -3);
        assert_eq!(one(ScalarValue::Boolean(Some(true))), 1);
        assert_eq!(one(ScalarValue::Int32(None)), 0);
        assert_eq!(
            murmur_hash(&[
                ScalarValue::Utf8(Some("a".into())),
                ScalarValue::Utf8(Some("b".into()))
            ])
            .ok(),
            Some(ScalarValue::Int32(Some(-710_710_698)))
        );
    }
}
