//! Nested columns (lists, structs, maps, deeply nested), many batches and stripes, empty
//! files, and columns of nulls only, round-tripped through orc-rust's reader.

use super::*;

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
