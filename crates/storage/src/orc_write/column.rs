//! The per-column writers: one node for each ORC column (the flattened, pre-order type tree),
//! each holding its streams for the stripe under way and its statistics.
//!
//! A parent hands each child the row ranges of the child's array to write. ORC keeps no value for
//! the rows under a null parent: a struct's children get the struct's non-null rows only, a list's
//! (or map's) children the elements of its non-null rows only, which is what ORC's Java writer
//! writes and what its readers expect (a reader passes the parent's nulls down, and the child
//! consumes nothing for those rows).

use std::ops::Range;

use arrow::array::{
    Array, ArrowPrimitiveType, AsArray, BinaryArray, BinaryViewArray, BooleanArray,
    LargeBinaryArray, LargeStringArray, OffsetSizeTrait, StringArray, StringViewArray,
};
use arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Decimal32Type, Decimal64Type, Float32Type, Float64Type,
    Int16Type, Int32Type, Int64Type, Int8Type, TimeUnit, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
};
use orc_rust::proto;
use orc_rust::proto::r#type::Kind as TypeKind;
use orc_rust::proto::stream::Kind as StreamKind;

use super::encode::{encode_nanos, put_uvarint128, zigzag128, BoolRle, ByteRle, IntRleV1};
use super::error::OrcWriteError;
use super::stats::{ColStats, Typed};

/// Seconds from the Unix epoch to 2015-01-01 00:00:00 UTC, the base of ORC's timestamp seconds.
const ORC_EPOCH_SECONDS: i64 = 1_420_070_400;
/// The largest Hive / ORC decimal precision.
const MAX_DECIMAL_PRECISION: u8 = 38;

/// One finished stream of a stripe.
pub(crate) struct StreamOut {
    pub(crate) kind: StreamKind,
    pub(crate) column: u32,
    pub(crate) bytes: Vec<u8>,
}

/// The writer of one ORC column and, through its children, of its subtree.
pub(crate) struct ColumnWriter {
    id: u32,
    /// The column's path, for messages (`a.b`, `a.element`, `m.key`).
    path: String,
    present: BoolRle,
    nulls_in_stripe: bool,
    stripe_stats: ColStats,
    file_stats: ColStats,
    kind: Kind,
}

enum Kind {
    Boolean {
        data: BoolRle,
    },
    Byte {
        data: ByteRle,
    },
    /// Short, int and long, and dates (days).
    Int {
        data: IntRleV1,
    },
    /// Float (4 bytes) and double (8 bytes), little-endian IEEE 754.
    Floating {
        data: Vec<u8>,
    },
    /// String and binary: the bytes, and each value's length.
    Bytes {
        data: Vec<u8>,
        length: IntRleV1,
    },
    Timestamp {
        seconds: IntRleV1,
        nanos: IntRleV1,
    },
    Decimal {
        data: Vec<u8>,
        scales: IntRleV1,
        precision: u8,
        scale: i8,
        /// 10^precision: every unscaled value must be below it in magnitude.
        bound: u128,
    },
    List {
        length: IntRleV1,
        child: Box<ColumnWriter>,
    },
    Map {
        length: IntRleV1,
        key: Box<ColumnWriter>,
        value: Box<ColumnWriter>,
    },
    Struct {
        children: Vec<ColumnWriter>,
    },
}

fn unsupported(path: &str, data_type: &DataType, reason: &str) -> OrcWriteError {
    OrcWriteError::UnsupportedType {
        column: path.to_string(),
        data_type: data_type.to_string(),
        reason: reason.to_string(),
    }
}

fn orc_type(kind: TypeKind) -> proto::Type {
    proto::Type {
        kind: Some(kind as i32),
        ..Default::default()
    }
}

fn int_stats() -> ColStats {
    ColStats::new(Typed::Int {
        range: None,
        sum: Some(0),
    })
}

fn double_stats() -> ColStats {
    ColStats::new(Typed::Double {
        range: None,
        sum: 0.0,
        nan: false,
    })
}

impl ColumnWriter {
    /// Builds the writer of a column of type `data_type`, appending its ORC type and those of its
    /// subtree to `types` in pre-order (so the column's id is `types.len()` on entry).
    pub(crate) fn build(
        path: String,
        data_type: &DataType,
        types: &mut Vec<proto::Type>,
    ) -> Result<ColumnWriter, OrcWriteError> {
        let id = u32::try_from(types.len()).map_err(|_| OrcWriteError::TooManyColumns)?;
        let index = types.len();
        types.push(orc_type(TypeKind::Struct)); // replaced below
        let (ty, stats, kind) = match data_type {
            DataType::Boolean => (
                orc_type(TypeKind::Boolean),
                ColStats::new(Typed::Bool { trues: 0 }),
                Kind::Boolean {
                    data: BoolRle::default(),
                },
            ),
            DataType::Int8 => (
                orc_type(TypeKind::Byte),
                int_stats(),
                Kind::Byte {
                    data: ByteRle::default(),
                },
            ),
            DataType::Int16 | DataType::Int32 | DataType::Int64 => (
                orc_type(match data_type {
                    DataType::Int16 => TypeKind::Short,
                    DataType::Int32 => TypeKind::Int,
                    _ => TypeKind::Long,
                }),
                int_stats(),
                Kind::Int {
                    data: IntRleV1::signed(),
                },
            ),
            DataType::Float32 | DataType::Float64 => (
                orc_type(if *data_type == DataType::Float32 {
                    TypeKind::Float
                } else {
                    TypeKind::Double
                }),
                double_stats(),
                Kind::Floating { data: Vec::new() },
            ),
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => (
                orc_type(TypeKind::String),
                ColStats::new(Typed::Str {
                    range: None,
                    sum: 0,
                }),
                Kind::Bytes {
                    data: Vec::new(),
                    length: IntRleV1::unsigned(),
                },
            ),
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView => (
                orc_type(TypeKind::Binary),
                ColStats::new(Typed::Binary { sum: 0 }),
                Kind::Bytes {
                    data: Vec::new(),
                    length: IntRleV1::unsigned(),
                },
            ),
            DataType::Date32 => (
                orc_type(TypeKind::Date),
                ColStats::new(Typed::Date { range: None }),
                Kind::Int {
                    data: IntRleV1::signed(),
                },
            ),
            DataType::Timestamp(_, None) => (
                orc_type(TypeKind::Timestamp),
                ColStats::new(Typed::Generic),
                Kind::Timestamp {
                    seconds: IntRleV1::signed(),
                    nanos: IntRleV1::unsigned(),
                },
            ),
            DataType::Timestamp(_, Some(_)) => {
                return Err(unsupported(
                    &path,
                    data_type,
                    "only timestamps without a time zone (Hive's TIMESTAMP) can be written",
                ))
            }
            DataType::Decimal32(precision, scale)
            | DataType::Decimal64(precision, scale)
            | DataType::Decimal128(precision, scale) => {
                let (precision, scale) = (*precision, *scale);
                if precision == 0
                    || precision > MAX_DECIMAL_PRECISION
                    || scale < 0
                    || scale as u8 > precision
                {
                    return Err(unsupported(
                        &path,
                        data_type,
                        "a decimal needs 1 <= precision <= 38 and 0 <= scale <= precision",
                    ));
                }
                let ty = proto::Type {
                    kind: Some(TypeKind::Decimal as i32),
                    precision: Some(u32::from(precision)),
                    scale: Some(scale as u32),
                    ..Default::default()
                };
                (
                    ty,
                    ColStats::new(Typed::Generic),
                    Kind::Decimal {
                        data: Vec::new(),
                        scales: IntRleV1::signed(),
                        precision,
                        scale,
                        bound: 10u128.pow(u32::from(precision)),
                    },
                )
            }
            DataType::List(field) | DataType::LargeList(field) => {
                let child =
                    ColumnWriter::build(format!("{path}.element"), field.data_type(), types)?;
                let ty = proto::Type {
                    kind: Some(TypeKind::List as i32),
                    subtypes: vec![child.id],
                    ..Default::default()
                };
                (
                    ty,
                    ColStats::new(Typed::Generic),
                    Kind::List {
                        length: IntRleV1::unsigned(),
                        child: Box::new(child),
                    },
                )
            }
            DataType::Map(entries, _) => {
                let DataType::Struct(kv) = entries.data_type() else {
                    return Err(unsupported(
                        &path,
                        data_type,
                        "map entries are not a struct",
                    ));
                };
                if kv.len() != 2 {
                    return Err(unsupported(
                        &path,
                        data_type,
                        "map entries need exactly a key and a value",
                    ));
                }
                let key = ColumnWriter::build(format!("{path}.key"), kv[0].data_type(), types)?;
                let value = ColumnWriter::build(format!("{path}.value"), kv[1].data_type(), types)?;
                let ty = proto::Type {
                    kind: Some(TypeKind::Map as i32),
                    subtypes: vec![key.id, value.id],
                    ..Default::default()
                };
                (
                    ty,
                    ColStats::new(Typed::Generic),
                    Kind::Map {
                        length: IntRleV1::unsigned(),
                        key: Box::new(key),
                        value: Box::new(value),
                    },
                )
            }
            DataType::Struct(fields) => {
                let mut children = Vec::with_capacity(fields.len());
                for field in fields {
                    children.push(ColumnWriter::build(
                        format!("{path}.{}", field.name()),
                        field.data_type(),
                        types,
                    )?);
                }
                let ty = proto::Type {
                    kind: Some(TypeKind::Struct as i32),
                    subtypes: children.iter().map(|c| c.id).collect(),
                    field_names: fields.iter().map(|f| f.name().clone()).collect(),
                    ..Default::default()
                };
                (ty, ColStats::new(Typed::Generic), Kind::Struct { children })
            }
            other => {
                return Err(unsupported(
                    &path,
                    other,
                    "Hive's ORC types have no counterpart for it",
                ))
            }
        };
        types[index] = ty;
        Ok(ColumnWriter {
            id,
            path,
            present: BoolRle::default(),
            nulls_in_stripe: false,
            file_stats: stats.empty_like(),
            stripe_stats: stats,
            kind,
        })
    }

    /// The column's id (its index in the pre-order type list).
    pub(crate) fn id(&self) -> u32 {
        self.id
    }

    /// Writes the rows `ranges` of `array` (whose type is the one the writer was built for).
    pub(crate) fn write(
        &mut self,
        array: &dyn Array,
        ranges: &[Range<usize>],
    ) -> Result<(), OrcWriteError> {
        let ColumnWriter {
            path,
            present,
            nulls_in_stripe,
            stripe_stats: stats,
            kind,
            ..
        } = self;
        let mismatch = || OrcWriteError::ArrayMismatch {
            column: path.clone(),
            data_type: array.data_type().to_string(),
        };
        let mut rows = Rows {
            array,
            ranges,
            present,
            nulls: nulls_in_stripe,
            stats,
        };
        match kind {
            Kind::Boolean { data } => {
                let a: &BooleanArray = array.as_boolean_opt().ok_or_else(mismatch)?;
                rows.each(|i, stats| {
                    let v = a.value(i);
                    data.write(v);
                    stats.boolean(v);
                    Ok(())
                })
            }
            Kind::Byte { data } => {
                let a = array.as_primitive_opt::<Int8Type>().ok_or_else(mismatch)?;
                rows.each(|i, stats| {
                    let v = a.value(i);
                    data.write(v as u8);
                    stats.int(i64::from(v));
                    Ok(())
                })
            }
            Kind::Int { data } => match array.data_type() {
                DataType::Int16 => rows.ints::<Int16Type>(data, mismatch),
                DataType::Int32 => rows.ints::<Int32Type>(data, mismatch),
                DataType::Int64 => rows.ints::<Int64Type>(data, mismatch),
                DataType::Date32 => {
                    let a = array
                        .as_primitive_opt::<Date32Type>()
                        .ok_or_else(mismatch)?;
                    rows.each(|i, stats| {
                        let v = a.value(i);
                        data.write(i64::from(v));
                        stats.date(v);
                        Ok(())
                    })
                }
                _ => Err(mismatch()),
            },
            Kind::Floating { data } => match array.data_type() {
                DataType::Float32 => {
                    let a = array
                        .as_primitive_opt::<Float32Type>()
                        .ok_or_else(mismatch)?;
                    rows.each(|i, stats| {
                        let v = a.value(i);
                        data.extend_from_slice(&v.to_le_bytes());
                        stats.double(f64::from(v));
                        Ok(())
                    })
                }
                DataType::Float64 => {
                    let a = array
                        .as_primitive_opt::<Float64Type>()
                        .ok_or_else(mismatch)?;
                    rows.each(|i, stats| {
                        let v = a.value(i);
                        data.extend_from_slice(&v.to_le_bytes());
                        stats.double(v);
                        Ok(())
                    })
                }
                _ => Err(mismatch()),
            },
            Kind::Bytes { data, length } => {
                let source = ByteSource::of(array).ok_or_else(mismatch)?;
                let text = source.is_text();
                rows.each(|i, stats| {
                    let v = source.value(i);
                    data.extend_from_slice(v);
                    length.write(v.len() as i64);
                    if text {
                        stats.string(v);
                    } else {
                        stats.binary(v);
                    }
                    Ok(())
                })
            }
            Kind::Timestamp { seconds, nanos } => {
                let (values, per_second): (&[i64], i64) = match array.data_type() {
                    DataType::Timestamp(TimeUnit::Second, None) => (
                        &array
                            .as_primitive_opt::<TimestampSecondType>()
                            .ok_or_else(mismatch)?
                            .values()[..],
                        1,
                    ),
                    DataType::Timestamp(TimeUnit::Millisecond, None) => (
                        &array
                            .as_primitive_opt::<TimestampMillisecondType>()
                            .ok_or_else(mismatch)?
                            .values()[..],
                        1_000,
                    ),
                    DataType::Timestamp(TimeUnit::Microsecond, None) => (
                        &array
                            .as_primitive_opt::<TimestampMicrosecondType>()
                            .ok_or_else(mismatch)?
                            .values()[..],
                        1_000_000,
                    ),
                    DataType::Timestamp(TimeUnit::Nanosecond, None) => (
                        &array
                            .as_primitive_opt::<TimestampNanosecondType>()
                            .ok_or_else(mismatch)?
                            .values()[..],
                        1_000_000_000,
                    ),
                    _ => return Err(mismatch()),
                };
                rows.each(|i, stats| {
                    let (secs, ns) = orc_timestamp(values[i], per_second).ok_or_else(|| {
                        OrcWriteError::Timestamp {
                            column: path.clone(),
                            value: values[i],
                            per_second,
                        }
                    })?;
                    seconds.write(secs);
                    nanos.write(ns as i64);
                    stats.value();
                    Ok(())
                })
            }
            Kind::Decimal {
                data,
                scales,
                precision,
                scale,
                bound,
            } => {
                let (p, s, bound) = (*precision, *scale, *bound);
                let mut put = |v: i128, stats: &mut ColStats| {
                    if v.unsigned_abs() >= bound {
                        return Err(OrcWriteError::Decimal {
                            column: path.clone(),
                            unscaled: v,
                            precision: p,
                            scale: s,
                        });
                    }
                    put_uvarint128(data, zigzag128(v));
                    scales.write(i64::from(s));
                    stats.value();
                    Ok(())
                };
                match array.data_type() {
                    DataType::Decimal32(..) => {
                        let a = array
                            .as_primitive_opt::<Decimal32Type>()
                            .ok_or_else(mismatch)?;
                        rows.each(|i, stats| put(i128::from(a.value(i)), stats))
                    }
                    DataType::Decimal64(..) => {
                        let a = array
                            .as_primitive_opt::<Decimal64Type>()
                            .ok_or_else(mismatch)?;
                        rows.each(|i, stats| put(i128::from(a.value(i)), stats))
                    }
                    DataType::Decimal128(..) => {
                        let a = array
                            .as_primitive_opt::<Decimal128Type>()
                            .ok_or_else(mismatch)?;
                        rows.each(|i, stats| put(a.value(i), stats))
                    }
                    _ => Err(mismatch()),
                }
            }
            Kind::List { length, child } => {
                let child_ranges = match array.data_type() {
                    DataType::List(_) => {
                        let a = array.as_list_opt::<i32>().ok_or_else(mismatch)?;
                        let ranges = rows.lengths(a.value_offsets(), length)?;
                        (ranges, a.values())
                    }
                    DataType::LargeList(_) => {
                        let a = array.as_list_opt::<i64>().ok_or_else(mismatch)?;
                        let ranges = rows.lengths(a.value_offsets(), length)?;
                        (ranges, a.values())
                    }
                    _ => return Err(mismatch()),
                };
                child.write(child_ranges.1.as_ref(), &child_ranges.0)
            }
            Kind::Map { length, key, value } => {
                let a = array.as_map_opt().ok_or_else(mismatch)?;
                let child_ranges = rows.lengths(a.value_offsets(), length)?;
                key.write(a.keys().as_ref(), &child_ranges)?;
                value.write(a.values().as_ref(), &child_ranges)
            }
            Kind::Struct { children } => {
                let a = array.as_struct_opt().ok_or_else(mismatch)?;
                if a.num_columns() != children.len() {
                    return Err(mismatch());
                }
                let mut child_ranges: Vec<Range<usize>> = Vec::new();
                rows.each(|i, stats| {
                    push_range(&mut child_ranges, i..i + 1);
                    stats.value();
                    Ok(())
                })?;
                for (child, column) in children.iter_mut().zip(a.columns()) {
                    child.write(column.as_ref(), &child_ranges)?;
                }
                Ok(())
            }
        }
    }

    /// Bytes buffered for the stripe under way, in this column and its subtree (an estimate from
    /// above of the encoded size).
    pub(crate) fn buffered(&self) -> usize {
        self.present.buffered()
            + match &self.kind {
                Kind::Boolean { data } => data.buffered(),
                Kind::Byte { data } => data.buffered(),
                Kind::Int { data } => data.buffered(),
                Kind::Floating { data } => data.len(),
                Kind::Bytes { data, length } => data.len() + length.buffered(),
                Kind::Timestamp { seconds, nanos } => seconds.buffered() + nanos.buffered(),
                Kind::Decimal { data, scales, .. } => data.len() + scales.buffered(),
                Kind::List { length, child } => length.buffered() + child.buffered(),
                Kind::Map { length, key, value } => {
                    length.buffered() + key.buffered() + value.buffered()
                }
                Kind::Struct { children } => children.iter().map(|c| c.buffered()).sum(),
            }
    }

    /// Ends the stripe: appends this subtree's streams, column encodings and stripe statistics
    /// (in pre-order), folds the stripe statistics into the file's, and leaves the writers empty
    /// for the next stripe.
    pub(crate) fn finish_stripe(
        &mut self,
        streams: &mut Vec<StreamOut>,
        encodings: &mut Vec<proto::ColumnEncoding>,
        stats: &mut Vec<proto::ColumnStatistics>,
    ) {
        let id = self.id;
        let mut push = |kind: StreamKind, bytes: Vec<u8>| {
            streams.push(StreamOut {
                kind,
                column: id,
                bytes,
            })
        };
        let present = self.present.finish();
        if self.nulls_in_stripe {
            push(StreamKind::Present, present);
        }
        self.nulls_in_stripe = false;
        match &mut self.kind {
            Kind::Boolean { data } => push(StreamKind::Data, data.finish()),
            Kind::Byte { data } => push(StreamKind::Data, data.finish()),
            Kind::Int { data } => push(StreamKind::Data, data.finish()),
            Kind::Floating { data } => push(StreamKind::Data, std::mem::take(data)),
            Kind::Bytes { data, length } => {
                push(StreamKind::Data, std::mem::take(data));
                push(StreamKind::Length, length.finish());
            }
            Kind::Timestamp { seconds, nanos } => {
                push(StreamKind::Data, seconds.finish());
                push(StreamKind::Secondary, nanos.finish());
            }
            Kind::Decimal { data, scales, .. } => {
                push(StreamKind::Data, std::mem::take(data));
                push(StreamKind::Secondary, scales.finish());
            }
            Kind::List { length, .. } | Kind::Map { length, .. } => {
                push(StreamKind::Length, length.finish());
            }
            Kind::Struct { .. } => {}
        }
        encodings.push(proto::ColumnEncoding {
            kind: Some(proto::column_encoding::Kind::Direct as i32),
            ..Default::default()
        });
        stats.push(self.stripe_stats.to_proto());
        self.file_stats.merge(&self.stripe_stats);
        self.stripe_stats = self.stripe_stats.empty_like();
        match &mut self.kind {
            Kind::List { child, .. } => child.finish_stripe(streams, encodings, stats),
            Kind::Map { key, value, .. } => {
                key.finish_stripe(streams, encodings, stats);
                value.finish_stripe(streams, encodings, stats);
            }
            Kind::Struct { children } => {
                for child in children {
                    child.finish_stripe(streams, encodings, stats);
                }
            }
            _ => {}
        }
    }

    /// Appends the file statistics of this subtree, in pre-order.
    pub(crate) fn file_stats(&self, out: &mut Vec<proto::ColumnStatistics>) {
        out.push(self.file_stats.to_proto());
        match &self.kind {
            Kind::List { child, .. } => child.file_stats(out),
            Kind::Map { key, value, .. } => {
                key.file_stats(out);
                value.file_stats(out);
            }
            Kind::Struct { children } => {
                for child in children {
                    child.file_stats(out);
                }
            }
            _ => {}
        }
    }
}

/// Splits a timestamp of `per_second` units a second into ORC's stored seconds (relative to
/// 2015-01-01 UTC) and encoded nanoseconds, or `None` when ORC cannot store it.
///
/// ORC's readers (Java's `TimestampTreeReader`, C++ and orc-rust alike) take one second off
/// the stored seconds when the seconds (from the Unix epoch) are negative and the nanoseconds are
/// above 999,999; Java's writer, which truncates toward zero, stores `floor + 1` in that case.
/// So: seconds before 1970 with at least a millisecond of fraction are stored one higher. The
/// last second before the epoch with such a fraction (ORC-763) cannot be stored at all: `-1 + 1`
/// is 0, which no reader adjusts back.
pub(crate) fn orc_timestamp(value: i64, per_second: i64) -> Option<(i64, u64)> {
    let floor_seconds = value.div_euclid(per_second);
    let fraction = value.rem_euclid(per_second);
    let nanos = u32::try_from(fraction * (1_000_000_000 / per_second)).ok()?;
    let stored = if floor_seconds < 0 && nanos > 999_999 {
        if floor_seconds == -1 {
            return None;
        }
        floor_seconds + 1
    } else {
        floor_seconds
    };
    Some((stored.checked_sub(ORC_EPOCH_SECONDS)?, encode_nanos(nanos)))
}

/// Appends `range` to `ranges`, merging it into the last one when they touch.
fn push_range(ranges: &mut Vec<Range<usize>>, range: Range<usize>) {
    if range.is_empty() {
        return;
    }
    match ranges.last_mut() {
        Some(last) if last.end == range.start => last.end = range.end,
        _ => ranges.push(range),
    }
}

/// The rows a column writes in one call, with the column's PRESENT stream and statistics.
struct Rows<'a> {
    array: &'a dyn Array,
    ranges: &'a [Range<usize>],
    present: &'a mut BoolRle,
    nulls: &'a mut bool,
    stats: &'a mut ColStats,
}

impl Rows<'_> {
    /// Records each row's presence, and calls `f` with the index of each non-null row.
    fn each(
        &mut self,
        mut f: impl FnMut(usize, &mut ColStats) -> Result<(), OrcWriteError>,
    ) -> Result<(), OrcWriteError> {
        let nulls = self.array.nulls();
        for range in self.ranges {
            for i in range.clone() {
                let valid = nulls.is_none_or(|n| n.is_valid(i));
                self.present.write(valid);
                if valid {
                    f(i, self.stats)?;
                } else {
                    *self.nulls = true;
                    self.stats.null();
                }
            }
        }
        Ok(())
    }

    /// Writes a short, int or long column.
    fn ints<T: ArrowPrimitiveType>(
        &mut self,
        data: &mut IntRleV1,
        mismatch: impl Fn() -> OrcWriteError,
    ) -> Result<(), OrcWriteError>
    where
        T::Native: Into<i64>,
    {
        let a = self.array.as_primitive_opt::<T>().ok_or_else(mismatch)?;
        self.each(|i, stats| {
            let v: i64 = a.value(i).into();
            data.write(v);
            stats.int(v);
            Ok(())
        })
    }

    /// Writes the LENGTH stream of a list or map column from its offsets, and returns the child
    /// rows of its non-null rows.
    fn lengths<O: OffsetSizeTrait>(
        &mut self,
        offsets: &[O],
        length: &mut IntRleV1,
    ) -> Result<Vec<Range<usize>>, OrcWriteError> {
        let mut child_ranges = Vec::new();
        self.each(|i, stats| {
            let start = offsets[i].as_usize();
            let end = offsets[i + 1].as_usize();
            length.write((end - start) as i64);
            push_range(&mut child_ranges, start..end);
            stats.value();
            Ok(())
        })?;
        Ok(child_ranges)
    }
}

/// The values of a string or binary array of any layout, as bytes.
enum ByteSource<'a> {
    Utf8(&'a StringArray),
    LargeUtf8(&'a LargeStringArray),
    Utf8View(&'a StringViewArray),
    Binary(&'a BinaryArray),
    LargeBinary(&'a LargeBinaryArray),
    BinaryView(&'a BinaryViewArray),
}

impl<'a> ByteSource<'a> {
    fn of(array: &'a dyn Array) -> Option<Self> {
        Some(match array.data_type() {
            DataType::Utf8 => ByteSource::Utf8(array.as_string_opt::<i32>()?),
            DataType::LargeUtf8 => ByteSource::LargeUtf8(array.as_string_opt::<i64>()?),
            DataType::Utf8View => ByteSource::Utf8View(array.as_string_view_opt()?),
            DataType::Binary => ByteSource::Binary(array.as_binary_opt::<i32>()?),
            DataType::LargeBinary => ByteSource::LargeBinary(array.as_binary_opt::<i64>()?),
            DataType::BinaryView => ByteSource::BinaryView(array.as_binary_view_opt()?),
            _ => return None,
        })
    }

    fn is_text(&self) -> bool {
        matches!(
            self,
            ByteSource::Utf8(_) | ByteSource::LargeUtf8(_) | ByteSource::Utf8View(_)
        )
    }

    fn value(&self, i: usize) -> &'a [u8] {
        match self {
            ByteSource::Utf8(a) => a.value(i).as_bytes(),
            ByteSource::LargeUtf8(a) => a.value(i).as_bytes(),
            ByteSource::Utf8View(a) => a.value(i).as_bytes(),
            ByteSource::Binary(a) => a.value(i),
            ByteSource::LargeBinary(a) => a.value(i),
            ByteSource::BinaryView(a) => a.value(i),
        }
    }
}
