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

fn int_list(offsets: Vec<i32>, values: Vec<Option<i32>>, nulls: Option<Vec<bool>>) -> ListArray {
    ListArray::new(
        Arc::new(Field::new_list_field(DataType::Int32, true)),
        OffsetBuffer::new(offsets.into()),
        Arc::new(Int32Array::from(values)),
        nulls.map(NullBuffer::from),
    )
}

#[test]
fn lists_structs_and_maps_round_trip() {
    // list<int>: [1, null, 3], null (over values it must skip), [], [4], null (empty).
    let list = int_list(
        vec![0, 3, 5, 5, 6, 6],
        vec![Some(1), None, Some(3), Some(99), Some(98), Some(4)],
        Some(vec![true, false, true, true, false]),
    );
    // large_list<string> without nulls.
    let large = LargeListArray::new(
        Arc::new(Field::new_list_field(DataType::Utf8, true)),
        OffsetBuffer::new(vec![0i64, 1, 1, 3, 4, 4].into()),
        Arc::new(StringArray::from(vec![
            Some("a"),
            Some("b"),
            None,
            Some("d"),
        ])),
        None,
    );
    // struct<a:int, b:string>, row 1 null with non-null children under it.
    let struct_fields = Fields::from(vec![
        Field::new("a", DataType::Int32, true),
        Field::new("b", DataType::Utf8, true),
    ]);
    let structs = StructArray::new(
        struct_fields,
        vec![
            Arc::new(Int32Array::from(vec![
                Some(1),
                Some(2),
                None,
                Some(4),
                Some(5),
            ])) as ArrayRef,
            Arc::new(StringArray::from(vec![
                Some("x"),
                Some("hidden"),
                Some("z"),
                None,
                Some(""),
            ])),
        ],
        Some(NullBuffer::from(vec![true, false, true, true, false])),
    );
    // map<string, list<int>>: {a: [1], b: null}, null (hiding c), {}, {d: [2, null], e: [3]},
    // {zz: [77]}.
    let map_values = int_list(
        vec![0, 1, 1, 1, 3, 4, 5],
        vec![Some(1), Some(2), None, Some(3), Some(77)],
        Some(vec![true, false, true, true, true, true]),
    );
    let entries = StructArray::new(
        Fields::from(vec![
            Field::new("keys", DataType::Utf8, false),
            Field::new("values", map_values.data_type().clone(), true),
        ]),
        vec![
            Arc::new(StringArray::from(vec!["a", "b", "c", "d", "e", "zz"])) as ArrayRef,
            Arc::new(map_values),
        ],
        None,
    );
    let map = MapArray::new(
        Arc::new(Field::new("entries", entries.data_type().clone(), false)),
        OffsetBuffer::new(vec![0i32, 2, 3, 3, 5, 6].into()),
        entries,
        Some(NullBuffer::from(vec![true, false, true, true, true])),
        false,
    );
    let (schema, batch) = batch_of(vec![
        ("l", Arc::new(list) as ArrayRef),
        ("ll", Arc::new(large)),
        ("st", Arc::new(structs)),
        ("m", Arc::new(map)),
    ]);
    let bytes = round_trip(&schema, std::slice::from_ref(&batch));
    // Sliced batches too: the offsets of lists and maps, and the struct's children, start
    // mid-array.
    let bytes2 = write_orc(&schema, &[batch.slice(1, 3), batch.slice(4, 1)], None);
    assert_same(&schema, &[batch.slice(1, 4)], read_orc(&bytes2));

    let tail = parse_tail(&bytes);
    use proto::r#type::Kind as K;
    let kinds: Vec<i32> = tail.footer.types.iter().map(|t| t.kind.unwrap()).collect();
    assert_eq!(
        kinds,
        [
            K::Struct,
            K::List,
            K::Int,
            K::List,
            K::String,
            K::Struct,
            K::Int,
            K::String,
            K::Map,
            K::String,
            K::List,
            K::Int
        ]
        .map(|k| k as i32)
    );
    assert_eq!(tail.footer.types[0].subtypes, [1, 3, 5, 8]);
    assert_eq!(tail.footer.types[5].field_names, ["a", "b"]);
    assert_eq!(tail.footer.types[8].subtypes, [9, 10]);
    // Statistics: the struct's children see only its 3 non-null rows; the list's child only the
    // 4 elements of its non-null rows.
    let stats = &tail.footer.statistics;
    assert_eq!(stats.len(), 12);
    assert_eq!(stats[0].number_of_values, Some(5));
    assert_eq!(stats[1].number_of_values, Some(3));
    assert_eq!(stats[2].number_of_values, Some(3));
    assert_eq!(stats[2].has_null, Some(true));
    assert_eq!(stats[5].number_of_values, Some(3));
    assert_eq!(stats[6].number_of_values, Some(2));
    assert_eq!(stats[7].number_of_values, Some(2));
    let ints = stats[6].int_statistics.clone().unwrap();
    assert_eq!(
        (ints.minimum, ints.maximum, ints.sum),
        (Some(1), Some(4), Some(5))
    );
    let strings = stats[7].string_statistics.clone().unwrap();
    assert_eq!(strings.minimum.as_deref(), Some("x"));
    assert_eq!(strings.maximum.as_deref(), Some("z"));
}

/// list<struct<a:int, b:map<string, array<decimal(10,2)>>>>
#[test]
fn deeply_nested_round_trips() {
    let decimals = Decimal128Array::from(vec![
        Some(100),
        Some(-250),
        None,
        Some(99_999_999),
        Some(-1),
        Some(0),
        Some(5),
    ])
    .with_precision_and_scale(10, 2)
    .unwrap();
    let dec_field = Arc::new(Field::new_list_field(DataType::Decimal128(10, 2), true));
    // arrays: [1.00, -2.50], null, [], [null, 999999.99, -0.01], [0.00], [0.05]
    let arrays = ListArray::new(
        dec_field,
        OffsetBuffer::new(vec![0i32, 2, 2, 2, 5, 6, 7].into()),
        Arc::new(decimals),
        Some(NullBuffer::from(vec![true, false, true, true, true, true])),
    );
    let entry_fields = Fields::from(vec![
        Field::new("keys", DataType::Utf8, false),
        Field::new("values", arrays.data_type().clone(), true),
    ]);
    let entries = StructArray::new(
        entry_fields,
        vec![
            Arc::new(StringArray::from(vec!["k1", "k2", "k3", "k4", "k5", "k6"])) as ArrayRef,
            Arc::new(arrays),
        ],
        None,
    );
    // maps: {k1, k2}, {}, null, {k3, k4}, {k5}, {k6}
    let maps = MapArray::new(
        Arc::new(Field::new("entries", entries.data_type().clone(), false)),
        OffsetBuffer::new(vec![0i32, 2, 2, 2, 4, 5, 6].into()),
        entries,
        Some(NullBuffer::from(vec![true, true, false, true, true, true])),
        false,
    );
    let struct_fields = Fields::from(vec![
        Field::new("a", DataType::Int32, true),
        Field::new("b", maps.data_type().clone(), true),
    ]);
    // structs: 6 rows, row 4 null (its map {k5} is hidden under it).
    let structs = StructArray::new(
        struct_fields,
        vec![
            Arc::new(Int32Array::from(vec![
                Some(1),
                None,
                Some(3),
                Some(4),
                Some(5),
                Some(6),
            ])) as ArrayRef,
            Arc::new(maps),
        ],
        Some(NullBuffer::from(vec![true, true, true, true, false, true])),
    );
    // lists: [s0, s1], null (hiding s2), [], [s3, s4, s5]
    let outer = ListArray::new(
        Arc::new(Field::new_list_field(structs.data_type().clone(), true)),
        OffsetBuffer::new(vec![0i32, 2, 3, 3, 6].into()),
        Arc::new(structs),
        Some(NullBuffer::from(vec![true, false, true, true])),
    );
    let id = Int64Array::from(vec![1, 2, 3, 4]);
    let (schema, batch) = batch_of(vec![
        ("id", Arc::new(id) as ArrayRef),
        ("x", Arc::new(outer)),
    ]);
    round_trip(&schema, std::slice::from_ref(&batch));
    // In several batches and one stripe each.
    let parts = [batch.slice(0, 1), batch.slice(1, 2), batch.slice(3, 1)];
    let bytes = write_orc(&schema, &parts, Some(1));
    assert_eq!(parse_tail(&bytes).footer.stripes.len(), 3);
    assert_same(&schema, &parts, read_orc(&bytes));
}

fn numbered_batch(schema: &SchemaRef, start: i64, rows: usize) -> RecordBatch {
    let ids: Vec<i64> = (start..start + rows as i64).collect();
    let texts: Vec<Option<String>> = ids
        .iter()
        .map(|i| (i % 7 != 0).then(|| format!("row {i}")))
        .collect();
    let decs: Vec<Option<i128>> = ids
        .iter()
        .map(|i| (i % 5 != 0).then_some(i128::from(*i) * 1_001 - 500_000))
        .collect();
    RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(ids)) as ArrayRef,
            Arc::new(StringArray::from(texts)),
            Arc::new(
                Decimal128Array::from(decs)
                    .with_precision_and_scale(12, 3)
                    .unwrap(),
            ),
        ],
    )
    .unwrap()
}

fn numbered_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("text", DataType::Utf8, true),
        Field::new("dec", DataType::Decimal128(12, 3), true),
    ]))
}

#[test]
fn many_batches_and_stripes() {
    let schema = numbered_schema();
    let batches: Vec<RecordBatch> = (0..10)
        .map(|i| numbered_batch(&schema, i * 1000, 1000))
        .chain([numbered_batch(&schema, 10_000, 10_000)])
        .collect();
    // One stripe in all.
    let one = write_orc(&schema, &batches, None);
    assert_eq!(parse_tail(&one).footer.stripes.len(), 1);
    assert_same(&schema, &batches, read_orc(&one));
    // A stripe after every batch of 1000, and a few within the batch of 10,000.
    let many = write_orc(&schema, &batches, Some(1));
    let tail = parse_tail(&many);
    assert_eq!(tail.footer.stripes.len(), 10 + 3);
    assert_eq!(tail.footer.number_of_rows, Some(20_000));
    assert_eq!(tail.metadata.stripe_stats.len(), 13);
    let rows: u64 = tail
        .footer
        .stripes
        .iter()
        .map(|s| s.number_of_rows.unwrap())
        .sum();
    assert_eq!(rows, 20_000);
    assert_same(&schema, &batches, read_orc(&many));
    // File statistics agree with the stripes'.
    let ids = tail.footer.statistics[1].int_statistics.clone().unwrap();
    assert_eq!((ids.minimum, ids.maximum), (Some(0), Some(19_999)));
    assert_eq!(ids.sum, Some((0..20_000).sum()));
    let per_stripe: u64 = tail
        .metadata
        .stripe_stats
        .iter()
        .map(|s| s.col_stats[2].number_of_values.unwrap())
        .sum();
    assert_eq!(Some(per_stripe), tail.footer.statistics[2].number_of_values);
    // A middling stripe size cuts somewhere in between.
    let some = write_orc(&schema, &batches, Some(64 * 1024));
    let n = parse_tail(&some).footer.stripes.len();
    assert!(n > 1 && n < 13, "{n} stripes");
    assert_same(&schema, &batches, read_orc(&some));
}

#[test]
fn empty_files_and_empty_batches() {
    let schema = numbered_schema();
    // No batch at all.
    let bytes = write_orc(&schema, &[], None);
    let tail = parse_tail(&bytes);
    assert!(tail.footer.stripes.is_empty());
    assert_eq!(tail.footer.number_of_rows, Some(0));
    let (_, read) = read_orc(&bytes);
    assert_eq!(read.iter().map(|b| b.num_rows()).sum::<usize>(), 0);
    // Only empty batches.
    let empty = RecordBatch::new_empty(schema.clone());
    let bytes = write_orc(&schema, &[empty.clone(), empty.clone()], Some(1));
    assert!(parse_tail(&bytes).footer.stripes.is_empty());
    // Empty batches among others.
    let batches = [
        empty.clone(),
        numbered_batch(&schema, 0, 3),
        empty.clone(),
        numbered_batch(&schema, 3, 2),
        empty,
    ];
    let bytes = write_orc(&schema, &batches, None);
    assert_same(&schema, &batches, read_orc(&bytes));
}

#[test]
fn columns_of_nulls_only_and_without_nulls() {
    let (schema, batch) = batch_of(vec![
        (
            "n",
            Arc::new(Int32Array::from(vec![None, None, None])) as ArrayRef,
        ),
        (
            "s",
            Arc::new(StringArray::from(vec![None::<&str>, None, None])),
        ),
        (
            "dec",
            Arc::new(
                Decimal128Array::from(vec![None, None, None])
                    .with_precision_and_scale(5, 1)
                    .unwrap(),
            ),
        ),
        ("full", Arc::new(Int32Array::from(vec![1, 2, 3]))),
        ("f", Arc::new(Float64Array::from(vec![f64::NAN, 1.0, -1.0]))),
    ]);
    let bytes = write_orc(&schema, std::slice::from_ref(&batch), None);
    let (read_schema, read) = read_orc(&bytes);
    let read = concat_batches(&read_schema, &read).unwrap();
    for i in 0..4 {
        assert_eq!(batch.column(i).as_ref(), read.column(i).as_ref());
    }
    assert_eq!(render(batch.column(4)), render(read.column(4)));
    let tail = parse_tail(&bytes);
    // PRESENT streams only where the stripe has nulls.
    let present: Vec<u32> = tail.stripe_footers[0]
        .streams
        .iter()
        .filter(|s| s.kind == Some(proto::stream::Kind::Present as i32))
        .map(|s| s.column.unwrap())
        .collect();
    assert_eq!(present, [1, 2, 3]);
    let stats = &tail.footer.statistics;
    assert_eq!(stats[1].number_of_values, Some(0));
    assert_eq!(stats[1].has_null, Some(true));
    assert_eq!(stats[1].int_statistics.clone().unwrap().minimum, None);
    assert_eq!(stats[4].has_null, Some(false));
    // A NaN drops the double range.
    assert!(stats[5].double_statistics.is_none());
}

#[test]
fn file_layout_and_metadata() {
    let (schema, batch) = batch_of(primitives(1));
    let bytes = write_orc(&schema, &[batch.clone(), batch], Some(1));
    let tail = parse_tail(&bytes);
    let ps = &tail.postscript;
    assert_eq!(ps.magic.as_deref(), Some("ORC"));
    assert_eq!(ps.version, [0, 12]);
    assert_eq!(ps.compression, Some(proto::CompressionKind::None as i32));
    assert_eq!(ps.writer_version, Some(6));
    let footer = &tail.footer;
    assert_eq!(footer.header_length, Some(3));
    assert_eq!(footer.row_index_stride, None);
    assert_eq!(footer.number_of_rows, Some(10));
    assert_eq!(footer.statistics.len(), footer.types.len());
    assert_eq!(
        footer.calendar,
        Some(proto::CalendarKind::ProlepticGregorian as i32)
    );
    assert_eq!(footer.stripes.len(), 2);
    assert_eq!(footer.stripes[0].offset, Some(3));
    assert_eq!(
        footer.stripes[1].offset.unwrap(),
        3 + footer.stripes[0].data_length.unwrap() + footer.stripes[0].footer_length.unwrap()
    );
    for (stripe, sf) in footer.stripes.iter().zip(&tail.stripe_footers) {
        assert_eq!(stripe.index_length, Some(0));
        assert_eq!(sf.columns.len(), footer.types.len());
        assert!(sf
            .columns
            .iter()
            .all(|c| c.kind == Some(proto::column_encoding::Kind::Direct as i32)));
        let total: u64 = sf.streams.iter().map(|s| s.length.unwrap()).sum();
        assert_eq!(Some(total), stripe.data_length);
    }
    assert_eq!(tail.metadata.stripe_stats.len(), 2);
    assert_eq!(
        tail.metadata.stripe_stats[0].col_stats.len(),
        footer.types.len()
    );
    // Stats of the byte column: -128, -1, 0, 127 twice over.
    let i8s = footer.statistics[2].int_statistics.clone().unwrap();
    assert_eq!(
        (i8s.minimum, i8s.maximum, i8s.sum),
        (Some(-128), Some(127), Some(-4))
    );
    // The long column's sum: -2 a stripe (each stripe's running sum stays in range).
    let i64s = footer.statistics[5].int_statistics.clone().unwrap();
    assert_eq!(
        (i64s.minimum, i64s.maximum, i64s.sum),
        (Some(i64::MIN), Some(i64::MAX), Some(-4))
    );
    let bools = footer.statistics[1].bucket_statistics.clone().unwrap();
    assert_eq!(bools.count, [4]);
    let dates = footer.statistics[12].date_statistics.clone().unwrap();
    assert_eq!(
        (dates.minimum, dates.maximum),
        (Some(-141_428), Some(11_016))
    );
    let bin = footer.statistics[10].binary_statistics.clone().unwrap();
    assert_eq!(bin.sum, Some(12));
    // orc-rust's metadata agrees.
    let file = temp_file(&bytes);
    let builder = orc_rust::ArrowReaderBuilder::try_new(file.reopen().unwrap()).unwrap();
    assert_eq!(builder.file_metadata().number_of_rows(), 10);
    assert_eq!(builder.file_metadata().stripe_metadatas().len(), 2);
}

#[test]
fn a_predicate_in_orc_rust_keeps_every_row() {
    // No row index and no stride: orc-rust's row-group pruning finds no index and keeps every
    // row.
    let schema = numbered_schema();
    let batch = numbered_batch(&schema, 0, 100);
    let bytes = write_orc(&schema, std::slice::from_ref(&batch), None);
    let file = temp_file(&bytes);
    let reader = orc_rust::ArrowReaderBuilder::try_new(file.reopen().unwrap())
        .unwrap()
        .with_predicate(orc_rust::Predicate::gt(
            "id",
            orc_rust::predicate::PredicateValue::Int64(Some(50)),
        ))
        .build();
    let rows: usize = reader.map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(rows, 100);
}

#[test]
fn unsupported_types_are_refused_with_the_column() {
    let cases: Vec<(Field, &str)> = vec![
        (
            Field::new("u", DataType::UInt32, true),
            "column u of type UInt32",
        ),
        (
            Field::new(
                "tz",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
            "column tz of type Timestamp",
        ),
        (
            Field::new(
                "s",
                DataType::Struct(Fields::from(vec![
                    Field::new("ok", DataType::Int32, true),
                    Field::new("bad", DataType::Float16, true),
                ])),
                true,
            ),
            "column s.bad of type Float16",
        ),
        (
            Field::new_list("l", Field::new_list_field(DataType::Null, true), true),
            "column l.element of type Null",
        ),
        (
            Field::new("neg", DataType::Decimal128(10, -2), true),
            "column neg of type Decimal128(10, -2)",
        ),
        (
            Field::new(
                "dict",
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                true,
            ),
            "column dict of type Dictionary",
        ),
    ];
    for (field, message) in cases {
        let schema = Arc::new(Schema::new(vec![
            Field::new("fine", DataType::Utf8, true),
            field,
        ]));
        let Err(err) = OrcWriter::try_new(Vec::new(), schema) else {
            panic!("{message}: accepted");
        };
        assert!(err.to_string().contains(message), "{err} lacks {message}");
        assert!(matches!(err, OrcWriteError::UnsupportedType { .. }));
    }
}

#[test]
fn batches_of_another_schema_are_refused() {
    let schema = numbered_schema();
    let mut writer = OrcWriter::try_new(Vec::new(), schema).unwrap();
    let (_, other) = batch_of(vec![(
        "x",
        Arc::new(UInt32Array::from(vec![1])) as ArrayRef,
    )]);
    assert!(matches!(
        writer.write(&other),
        Err(OrcWriteError::SchemaMismatch(_))
    ));
    let (_, other) = batch_of(vec![
        ("id", Arc::new(Int32Array::from(vec![1])) as ArrayRef),
        ("text", Arc::new(StringArray::from(vec!["a"]))),
        ("dec", Arc::new(StringArray::from(vec!["a"]))),
    ]);
    assert!(matches!(
        writer.write(&other),
        Err(OrcWriteError::SchemaMismatch(_))
    ));
    // A refused batch changes nothing: the writer goes on.
    let batch = numbered_batch(&numbered_schema(), 0, 10);
    writer.write(&batch).unwrap();
    let bytes = writer.close().unwrap();
    assert_same(&numbered_schema(), &[batch], read_orc(&bytes));
}

#[test]
fn the_writer_is_send() {
    fn is_send<T: Send>() {}
    is_send::<OrcWriter<std::fs::File>>();
    is_send::<OrcWriteError>();
}
