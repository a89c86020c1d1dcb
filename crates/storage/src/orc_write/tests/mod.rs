//! Round trips through orc-rust's reader (an independent implementation), and checks of the
//! file's layout and metadata.

use std::io::Write as _;
use std::sync::Arc;

use arrow::array::RecordBatchReader;
use arrow::array::{
    Array, ArrayRef, BinaryArray, BinaryViewArray, BooleanArray, Date32Array, Decimal128Array,
    Decimal32Array, Decimal64Array, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array,
    Int8Array, LargeBinaryArray, LargeListArray, LargeStringArray, ListArray, MapArray,
    RecordBatch, StringArray, StringViewArray, StructArray, TimestampMicrosecondArray,
    TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray, UInt32Array,
};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::compute::concat_batches;
use arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use orc_rust::proto;
use prost::Message;

use super::column::orc_timestamp;
use super::encode::encode_nanos;
use super::{OrcWriteError, OrcWriter};

mod nested;

const ORC_EPOCH: i64 = 1_420_070_400;

fn write_orc(schema: &SchemaRef, batches: &[RecordBatch], stripe_size: Option<usize>) -> Vec<u8> {
    let mut writer = OrcWriter::try_new(Vec::new(), schema.clone()).unwrap();
    if let Some(size) = stripe_size {
        writer = writer.with_stripe_size(size);
    }
    for batch in batches {
        writer.write(batch).unwrap();
    }
    writer.close().unwrap()
}

fn temp_file(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(bytes).unwrap();
    file.flush().unwrap();
    file
}

fn read_orc(bytes: &[u8]) -> (SchemaRef, Vec<RecordBatch>) {
    let file = temp_file(bytes);
    let reader = orc_rust::ArrowReaderBuilder::try_new(file.reopen().unwrap())
        .unwrap()
        .build();
    let schema = reader.schema();
    let batches = reader.collect::<Result<Vec<_>, _>>().unwrap();
    (schema, batches)
}

fn render(array: &dyn Array) -> Vec<String> {
    let options = FormatOptions::default().with_null("NULL");
    let formatter = ArrayFormatter::try_new(array, &options).unwrap();
    (0..array.len())
        .map(|i| formatter.value(i).to_string())
        .collect()
}

/// Asserts that `actual` (read back) holds the values of `expected` (written), column by column:
/// exactly when the types agree, else after casting the written column to the type read back
/// (orc-rust reads timestamps as nanoseconds and all strings as Utf8, for example), and always
/// as rendered text.
fn assert_same(
    schema: &SchemaRef,
    expected: &[RecordBatch],
    actual: (SchemaRef, Vec<RecordBatch>),
) {
    let (actual_schema, actual) = actual;
    let expected = concat_batches(schema, expected).unwrap();
    let actual = concat_batches(&actual_schema, &actual).unwrap();
    assert_eq!(expected.num_rows(), actual.num_rows(), "row count");
    assert_eq!(expected.num_columns(), actual.num_columns(), "column count");
    for (i, field) in schema.fields().iter().enumerate() {
        assert_eq!(actual_schema.field(i).name(), field.name());
        let want = expected.column(i);
        let got = actual.column(i);
        if want.data_type() == got.data_type() {
            assert_eq!(want.as_ref(), got.as_ref(), "column {}", field.name());
        } else if let Ok(cast) = arrow::compute::cast(want, got.data_type()) {
            assert_eq!(
                cast.as_ref(),
                got.as_ref(),
                "column {} (cast)",
                field.name()
            );
        }
        assert_eq!(render(want), render(got), "column {} (text)", field.name());
    }
}

fn round_trip(schema: &SchemaRef, batches: &[RecordBatch]) -> Vec<u8> {
    let bytes = write_orc(schema, batches, None);
    assert_same(schema, batches, read_orc(&bytes));
    bytes
}

fn schema_of(columns: &[(&str, ArrayRef)]) -> SchemaRef {
    Arc::new(Schema::new(
        columns
            .iter()
            .map(|(name, a)| Field::new(*name, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    ))
}

fn batch_of(columns: Vec<(&str, ArrayRef)>) -> (SchemaRef, RecordBatch) {
    let schema = schema_of(&columns);
    let batch = RecordBatch::try_new(
        schema.clone(),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap();
    (schema, batch)
}

/// The PostScript, Footer, Metadata and stripe footers of a file, parsed by hand.
struct Tail {
    postscript: proto::PostScript,
    footer: proto::Footer,
    metadata: proto::Metadata,
    stripe_footers: Vec<proto::StripeFooter>,
}

fn parse_tail(bytes: &[u8]) -> Tail {
    assert_eq!(&bytes[..3], b"ORC");
    let ps_len = usize::from(*bytes.last().unwrap());
    let ps_start = bytes.len() - 1 - ps_len;
    let postscript = proto::PostScript::decode(&bytes[ps_start..bytes.len() - 1]).unwrap();
    let footer_len = postscript.footer_length.unwrap() as usize;
    let footer_start = ps_start - footer_len;
    let footer = proto::Footer::decode(&bytes[footer_start..ps_start]).unwrap();
    let metadata_len = postscript.metadata_length.unwrap() as usize;
    let metadata =
        proto::Metadata::decode(&bytes[footer_start - metadata_len..footer_start]).unwrap();
    assert_eq!(
        footer.content_length.unwrap() as usize,
        footer_start - metadata_len
    );
    let stripe_footers = footer
        .stripes
        .iter()
        .map(|s| {
            let start =
                (s.offset.unwrap() + s.index_length.unwrap() + s.data_length.unwrap()) as usize;
            let end = start + s.footer_length.unwrap() as usize;
            proto::StripeFooter::decode(&bytes[start..end]).unwrap()
        })
        .collect();
    Tail {
        postscript,
        footer,
        metadata,
        stripe_footers,
    }
}

fn primitives(offset: i64) -> Vec<(&'static str, ArrayRef)> {
    let o = offset;
    vec![
        (
            "b",
            Arc::new(BooleanArray::from(vec![
                Some(true),
                None,
                Some(false),
                Some(true),
                None,
            ])) as ArrayRef,
        ),
        (
            "i8",
            Arc::new(Int8Array::from(vec![
                Some(i8::MIN),
                Some(-1),
                None,
                Some(0),
                Some(i8::MAX),
            ])),
        ),
        (
            "i16",
            Arc::new(Int16Array::from(vec![
                Some(i16::MIN),
                None,
                Some(7),
                Some(7),
                Some(i16::MAX),
            ])),
        ),
        (
            "i32",
            Arc::new(Int32Array::from(vec![
                Some(i32::MIN),
                Some(o as i32),
                Some(o as i32 + 1),
                None,
                Some(i32::MAX),
            ])),
        ),
        (
            "i64",
            Arc::new(Int64Array::from(vec![
                Some(i64::MIN),
                Some(i64::MAX),
                None,
                Some(-o),
                Some(0),
            ])),
        ),
        (
            "f32",
            Arc::new(Float32Array::from(vec![
                Some(1.5),
                None,
                Some(-0.0),
                Some(f32::MAX),
                Some(f32::MIN_POSITIVE),
            ])),
        ),
        (
            "f64",
            Arc::new(Float64Array::from(vec![
                Some(-2.25),
                Some(f64::INFINITY),
                None,
                Some(1e300),
                Some(o as f64),
            ])),
        ),
        (
            "s",
            Arc::new(StringArray::from(vec![
                Some("Nevada"),
                Some(""),
                None,
                Some("Bière ✓"),
                Some("California"),
            ])),
        ),
        (
            "ls",
            Arc::new(LargeStringArray::from(vec![
                None,
                Some("x"),
                Some("yy"),
                Some(""),
                None,
            ])),
        ),
        (
            "bin",
            Arc::new(BinaryArray::from(vec![
                Some(&b"\x00\xff"[..]),
                None,
                Some(b""),
                Some(b"abc"),
                Some(b"\x80"),
            ])),
        ),
        (
            "lbin",
            Arc::new(LargeBinaryArray::from(vec![
                None,
                Some(&b"q"[..]),
                None,
                Some(b""),
                Some(b"zz"),
            ])),
        ),
        (
            "d",
            // 1970-01-01, 1969-12-31, a day in 1582, 2000-02-29, null
            Arc::new(Date32Array::from(vec![
                Some(0),
                Some(-1),
                Some(-141_428),
                Some(11_016),
                None,
            ])),
        ),
        (
            "ts",
            Arc::new(TimestampMillisecondArray::from(vec![
                Some(0),
                Some(1_700_000_000_123),
                None,
                Some(-1_500),
                Some(-2_208_988_800_001),
            ])),
        ),
        (
            "dec",
            Arc::new(
                Decimal128Array::from(vec![
                    Some(12_345),
                    Some(-1),
                    None,
                    Some(9_999_999_999),
                    Some(-9_999_999_999),
                ])
                .with_precision_and_scale(10, 3)
                .unwrap(),
            ),
        ),
    ]
}

#[test]
fn every_primitive_type_round_trips_with_nulls() {
    let (schema, batch) = batch_of(primitives(5));
    let bytes = round_trip(&schema, &[batch]);
    let tail = parse_tail(&bytes);
    let kinds: Vec<i32> = tail.footer.types.iter().map(|t| t.kind.unwrap()).collect();
    use proto::r#type::Kind as K;
    let expected = [
        K::Struct,
        K::Boolean,
        K::Byte,
        K::Short,
        K::Int,
        K::Long,
        K::Float,
        K::Double,
        K::String,
        K::String,
        K::Binary,
        K::Binary,
        K::Date,
        K::Timestamp,
        K::Decimal,
    ]
    .map(|k| k as i32);
    assert_eq!(kinds, expected);
    let dec = &tail.footer.types[14];
    assert_eq!((dec.precision, dec.scale), (Some(10), Some(3)));
    assert_eq!(
        tail.footer.types[0].subtypes,
        (1..=14).collect::<Vec<u32>>()
    );
    assert_eq!(tail.footer.types[0].field_names[13], "dec");
}

#[test]
fn view_and_narrow_decimal_types_round_trip() {
    let (schema, batch) = batch_of(vec![
        (
            "sv",
            Arc::new(StringViewArray::from(vec![
                Some("short"),
                None,
                Some("a string longer than twelve bytes"),
            ])) as ArrayRef,
        ),
        (
            "bv",
            Arc::new(BinaryViewArray::from(vec![
                None,
                Some(&b"\x01\x02"[..]),
                Some(&b"another value longer than twelve"[..]),
            ])),
        ),
        (
            "d32",
            Arc::new(
                Decimal32Array::from(vec![Some(-999_999_999), None, Some(1)])
                    .with_precision_and_scale(9, 2)
                    .unwrap(),
            ),
        ),
        (
            "d64",
            Arc::new(
                Decimal64Array::from(vec![Some(123_456_789_012_345_678), Some(0), None])
                    .with_precision_and_scale(18, 4)
                    .unwrap(),
            ),
        ),
    ]);
    let bytes = write_orc(&schema, std::slice::from_ref(&batch), None);
    let (read_schema, read) = read_orc(&bytes);
    let read = concat_batches(&read_schema, &read).unwrap();
    assert_eq!(render(batch.column(0)), render(read.column(0)));
    assert_eq!(render(batch.column(1)), render(read.column(1)));
    assert_eq!(read.column(2).data_type(), &DataType::Decimal128(9, 2));
    assert_eq!(render(batch.column(2)), render(read.column(2)));
    assert_eq!(render(batch.column(3)), render(read.column(3)));
}

#[test]
fn timestamps_of_every_unit_before_and_after_1970() {
    // -2208988800 is 1900-01-01 00:00:00 UTC.
    let secs = [
        0,
        -1,
        -2,
        1,
        -2_208_988_800,
        -8_000_000_000,
        4_102_444_800,
        ORC_EPOCH,
        ORC_EPOCH - 1,
    ];
    let second = TimestampSecondArray::from(
        secs.iter()
            .map(|&s| Some(s))
            .chain([None])
            .collect::<Vec<_>>(),
    );
    // Millis: fractions before 1970, including the one just past ORC-763's second.
    let millis = TimestampMillisecondArray::from(vec![
        Some(-1_500),
        Some(-2_001),
        Some(-1_000),
        Some(-2_208_988_800_000 + 123),
        None,
        Some(1_000),
        Some(999),
        Some(-86_400_000 * 365 * 100 + 1),
        Some(0),
        Some(-2_999),
    ]);
    let micros = TimestampMicrosecondArray::from(vec![
        Some(-1_000_001),
        Some(-1_999_999),
        Some(-2_000_000),
        Some(-1_000_000 + 999), // -1 s + 999 µs: under a millisecond, storable
        Some(1_234_567),
        None,
        Some(-5_000_000_000_000_001),
        Some(-1_000_000),
        Some(i64::from(i32::MAX) * 1_000_000 + 1),
        Some(0),
    ]);
    let nanos = TimestampNanosecondArray::from(vec![
        Some(-1_000_000_001),
        Some(-1_000_000_000 + 999_999), // -1 s + 999_999 ns: storable
        Some(-1_999_999_999),
        Some(-2_000_000_000),
        Some(123_456_789),
        Some(-9_000_000_000_000_000_000 + 7),
        None,
        Some(9_000_000_000_000_000_000 + 100),
        Some(-2_000_001_000),
        Some(-3_100_000_000),
    ]);
    let (schema, batch) = batch_of(vec![
        ("s", Arc::new(second) as ArrayRef),
        ("ms", Arc::new(millis)),
        ("us", Arc::new(micros)),
        ("ns", Arc::new(nanos)),
    ]);
    let bytes = round_trip(&schema, &[batch]);
    let tail = parse_tail(&bytes);
    for footer in &tail.stripe_footers {
        assert_eq!(footer.writer_timezone.as_deref(), Some("UTC"));
    }
}

#[test]
fn timestamp_encoding_follows_orcs_readers() {
    // 1969-12-31 23:59:58.5: floor -2 s, 0.5 s: stored as -1 (the reader takes one off).
    assert_eq!(
        orc_timestamp(-1_500, 1_000),
        Some((-1 - ORC_EPOCH, encode_nanos(500_000_000)))
    );
    // 1969-12-31 23:59:57.999999500: floor -3 s: stored as -2.
    assert_eq!(
        orc_timestamp(-2_000_000_500, 1_000_000_000),
        Some((-2 - ORC_EPOCH, encode_nanos(999_999_500)))
    );
    // Under a millisecond of fraction: stored as the floor, which readers leave alone.
    assert_eq!(
        orc_timestamp(-1_000_000_000 + 500, 1_000_000_000),
        Some((-1 - ORC_EPOCH, encode_nanos(500)))
    );
    assert_eq!(
        orc_timestamp(-2_000_000_000 + 999_999, 1_000_000_000),
        Some((-2 - ORC_EPOCH, encode_nanos(999_999)))
    );
    // At or after the epoch: the plain floor.
    assert_eq!(
        orc_timestamp(1_500, 1_000),
        Some((1 - ORC_EPOCH, encode_nanos(500_000_000)))
    );
    assert_eq!(orc_timestamp(ORC_EPOCH, 1), Some((0, 0)));
    // ORC-763: the last second before the epoch, with a millisecond or more of fraction.
    assert_eq!(orc_timestamp(-500, 1_000), None);
    assert_eq!(orc_timestamp(-1, 1_000), None);
    assert_eq!(orc_timestamp(-1_000_000, 1_000_000_000), None);
    // Out of range.
    assert_eq!(orc_timestamp(i64::MIN, 1), None);
}

#[test]
fn timestamps_orc_cannot_store_are_refused() {
    let (schema, batch) = batch_of(vec![(
        "t",
        Arc::new(TimestampMillisecondArray::from(vec![Some(0), Some(-500)])) as ArrayRef,
    )]);
    let mut writer = OrcWriter::try_new(Vec::new(), schema).unwrap();
    let err = writer.write(&batch).unwrap_err();
    assert!(
        matches!(err, OrcWriteError::Timestamp { ref column, value: -500, .. } if column == "t")
    );
    assert!(err.to_string().contains("ORC-763"), "{err}");
    // The writer is failed for good.
    let (_, fine) = batch_of(vec![(
        "t",
        Arc::new(TimestampMillisecondArray::from(vec![Some(0)])) as ArrayRef,
    )]);
    assert!(matches!(writer.write(&fine), Err(OrcWriteError::Failed)));
    assert!(matches!(writer.close(), Err(OrcWriteError::Failed)));
}

#[test]
fn decimals_negative_and_near_38_digits() {
    let max38: i128 = 10i128.pow(38) - 1;
    let values = vec![
        Some(max38),
        Some(-max38),
        Some(0),
        None,
        Some(-1),
        Some(1),
        Some(i128::from(i64::MIN) * 3),
        Some(i128::from(u64::MAX) + 1),
        Some(-(10i128.pow(37)) + 12_345),
    ];
    let (schema, batch) = batch_of(vec![
        (
            "d38_0",
            Arc::new(
                Decimal128Array::from(values.clone())
                    .with_precision_and_scale(38, 0)
                    .unwrap(),
            ) as ArrayRef,
        ),
        (
            "d38_10",
            Arc::new(
                Decimal128Array::from(values)
                    .with_precision_and_scale(38, 10)
                    .unwrap(),
            ),
        ),
        (
            "d10_2",
            Arc::new(
                Decimal128Array::from(vec![
                    Some(-9_999_999_999),
                    Some(-1),
                    Some(-100),
                    None,
                    Some(123),
                    Some(9_999_999_999),
                    Some(0),
                    Some(-50),
                    Some(5),
                ])
                .with_precision_and_scale(10, 2)
                .unwrap(),
            ),
        ),
        (
            "d38_38",
            Arc::new(
                Decimal128Array::from(vec![
                    Some(max38),
                    Some(-max38),
                    Some(1),
                    None,
                    Some(-1),
                    Some(0),
                    Some(0),
                    Some(0),
                    Some(0),
                ])
                .with_precision_and_scale(38, 38)
                .unwrap(),
            ),
        ),
    ]);
    round_trip(&schema, &[batch]);
}

#[test]
fn decimals_wider_than_their_precision_are_refused() {
    let (schema, batch) = batch_of(vec![(
        "d",
        Arc::new(
            Decimal128Array::from(vec![Some(99_999), Some(100_000)])
                .with_precision_and_scale(5, 2)
                .unwrap(),
        ) as ArrayRef,
    )]);
    let mut writer = OrcWriter::try_new(Vec::new(), schema).unwrap();
    let err = writer.write(&batch).unwrap_err();
    assert!(matches!(
        err,
        OrcWriteError::Decimal {
            unscaled: 100_000,
            precision: 5,
            scale: 2,
            ..
        }
    ));
}
