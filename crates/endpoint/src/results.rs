//! Arrow schemas and record batches to TCLIService result sets: TTableSchema with Hive type
//! ids and qualifiers, TRowSet as columns (V6 and later) or rows (before V6).

use std::collections::BTreeMap;

use apiary_gateway::render::cell_text;
use apiary_gateway::HiveType;
use apiary_protocol::tcli::{
    TBinaryColumn, TBoolColumn, TBoolValue, TByteColumn, TByteValue, TColumn, TColumnDesc,
    TColumnValue, TDoubleColumn, TDoubleValue, TI16Column, TI16Value, TI32Column, TI32Value,
    TI64Column, TI64Value, TPrimitiveTypeEntry, TRow, TRowSet, TStringColumn, TStringValue,
    TTableSchema, TTypeDesc, TTypeEntry, TTypeId, TTypeQualifierValue, TTypeQualifiers,
};
use apiary_protocol::Binary;
use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{
    ArrowPrimitiveType, DataType, Field, Float16Type, Float32Type, Float64Type, Int16Type,
    Int32Type, Int64Type, Int8Type, Schema, UInt16Type, UInt32Type, UInt8Type,
};

/// Protocol version (counted from V1 = 0) from which result sets travel as columns.
pub const COLUMNAR_FROM: i32 = 5;

/// The Hive type id a client speaking `protocol` (V1 = 0) sees for `t`: types newer than the
/// client's protocol travel as STRING, as their values already do.
pub fn type_id(t: &HiveType, protocol: i32) -> TTypeId {
    let since = match t {
        HiveType::Varchar(_) => 2,
        HiveType::Decimal(_, _) | HiveType::Char(_) => 3,
        HiveType::IntervalYearMonth | HiveType::IntervalDayTime => 7,
        HiveType::TimestampLocalTz => 10,
        _ => 0,
    };
    if protocol < since {
        return TTypeId::STRING_TYPE;
    }
    match t {
        HiveType::Boolean => TTypeId::BOOLEAN_TYPE,
        HiveType::TinyInt => TTypeId::TINYINT_TYPE,
        HiveType::SmallInt => TTypeId::SMALLINT_TYPE,
        HiveType::Int => TTypeId::INT_TYPE,
        HiveType::BigInt => TTypeId::BIGINT_TYPE,
        HiveType::Float => TTypeId::FLOAT_TYPE,
        HiveType::Double => TTypeId::DOUBLE_TYPE,
        HiveType::Decimal(_, _) => TTypeId::DECIMAL_TYPE,
        HiveType::String => TTypeId::STRING_TYPE,
        HiveType::Varchar(_) => TTypeId::VARCHAR_TYPE,
        HiveType::Char(_) => TTypeId::CHAR_TYPE,
        HiveType::Date => TTypeId::DATE_TYPE,
        HiveType::Timestamp => TTypeId::TIMESTAMP_TYPE,
        HiveType::TimestampLocalTz => TTypeId::TIMESTAMPLOCALTZ_TYPE,
        HiveType::Binary => TTypeId::BINARY_TYPE,
        HiveType::IntervalYearMonth => TTypeId::INTERVAL_YEAR_MONTH_TYPE,
        HiveType::IntervalDayTime => TTypeId::INTERVAL_DAY_TIME_TYPE,
        HiveType::Array(_) => TTypeId::ARRAY_TYPE,
        HiveType::Map(_, _) => TTypeId::MAP_TYPE,
        HiveType::Struct(_) => TTypeId::STRUCT_TYPE,
        HiveType::Union(_) => TTypeId::UNION_TYPE,
        HiveType::Null => TTypeId::NULL_TYPE,
    }
}

/// The type descriptor of a column. Like HiveServer2, a single primitive entry carries the
/// top-level type id (clients read `types[0].primitiveEntry`), with qualifiers for
/// VARCHAR/CHAR length and DECIMAL precision and scale.
pub fn type_desc(t: &HiveType, protocol: i32) -> TTypeDesc {
    let id = type_id(t, protocol);
    let mut q = BTreeMap::new();
    match t {
        _ if id == TTypeId::STRING_TYPE => {}
        HiveType::Varchar(n) | HiveType::Char(n) => {
            q.insert(
                "characterMaximumLength".to_string(),
                TTypeQualifierValue::I32Value(i32::try_from(*n).unwrap_or(i32::MAX)),
            );
        }
        HiveType::Decimal(p, s) => {
            q.insert(
                "precision".to_string(),
                TTypeQualifierValue::I32Value(i32::from(*p)),
            );
            q.insert(
                "scale".to_string(),
                TTypeQualifierValue::I32Value(i32::from(*s)),
            );
        }
        _ => {}
    }
    TTypeDesc {
        types: vec![TTypeEntry::PrimitiveEntry(TPrimitiveTypeEntry {
            r#type: id,
            type_qualifiers: (!q.is_empty()).then_some(TTypeQualifiers { qualifiers: q }),
        })],
    }
}

/// GetResultSetMetadata's schema.
pub fn table_schema(schema: &Schema, protocol: i32) -> TTableSchema {
    TTableSchema {
        columns: schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| TColumnDesc {
                column_name: f.name().clone(),
                type_desc: type_desc(&HiveType::of_field(f), protocol),
                position: i32::try_from(i + 1).unwrap_or(i32::MAX),
                comment: f.metadata().get("comment").cloned(),
            })
            .collect(),
    }
}

/// A batch column whose type is not the one the result schema declares: the rows cannot be
/// encoded as the client was told to expect them.
#[derive(Debug, thiserror::Error)]
#[error("internal error: column {column} holds {found} values where the result schema declares {declared}")]
pub struct ColumnTypeMismatch {
    /// The column's name.
    pub column: String,
    /// The type the schema declares.
    pub declared: DataType,
    /// The type the batch holds.
    pub found: DataType,
}

/// Converts fetched batches into a TRowSet for a session speaking `protocol`. Numeric and
/// binary columns must hold the type the schema declares (the gateway checks that as it
/// produces them); a mismatch is an error, never a panic.
pub fn row_set(
    schema: &Schema,
    batches: &[RecordBatch],
    start_offset: i64,
    protocol: i32,
) -> Result<TRowSet, ColumnTypeMismatch> {
    if protocol >= COLUMNAR_FROM {
        let columns = (0..schema.fields().len())
            .map(|c| {
                // The gateway checks batches against the schema; never index past a short one.
                let arrays: Vec<&dyn Array> = batches
                    .iter()
                    .filter_map(|b| b.columns().get(c).map(|a| a.as_ref()))
                    .collect();
                column(schema.field(c), &arrays)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TRowSet {
            start_row_offset: start_offset,
            rows: vec![],
            columns: Some(columns),
            binary_columns: None,
            column_count: None,
        })
    } else {
        let mut rows = Vec::new();
        for b in batches {
            for r in 0..b.num_rows() {
                rows.push(TRow {
                    col_vals: b.columns().iter().map(|a| cell(a.as_ref(), r)).collect(),
                });
            }
        }
        Ok(TRowSet {
            start_row_offset: start_offset,
            rows,
            columns: None,
            binary_columns: None,
            column_count: None,
        })
    }
}

/// Whether a cell is NULL. Every value of Hive's `void` type (`SELECT NULL`) is, though its
/// array keeps no null mask for `Array::is_null` to read.
fn is_null(a: &dyn Array, r: usize) -> bool {
    a.data_type() == &DataType::Null || a.is_null(r)
}

/// Packs a null mask LSB-first, as the protocol's `nulls` field.
fn null_bitmap(arrays: &[&dyn Array]) -> Binary {
    let n: usize = arrays.iter().map(|a| a.len()).sum();
    let mut bits = vec![0u8; n.div_ceil(8)];
    let mut i = 0;
    for a in arrays {
        for r in 0..a.len() {
            if is_null(*a, r) {
                bits[i / 8] |= 1 << (i % 8);
            }
            i += 1;
        }
    }
    // Like Hive (Java's BitSet.toByteArray), trailing zero bytes are left out: clients treat
    // missing bits as "not null", and some decode every byte they get.
    let len = bits.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
    bits.truncate(len);
    Binary(bits)
}

/// The values of a primitive column, `f` applied to each non-null value (NULL rows get the
/// default, as Hive sends them). Each array is downcast once.
fn primitive<T: ArrowPrimitiveType, V: Default>(
    field: &Field,
    arrays: &[&dyn Array],
    f: impl Fn(T::Native) -> V,
) -> Result<Vec<V>, ColumnTypeMismatch> {
    let mut out = Vec::with_capacity(arrays.iter().map(|a| a.len()).sum());
    for a in arrays {
        let p = a
            .as_primitive_opt::<T>()
            .ok_or_else(|| mismatch(field, *a))?;
        for r in 0..p.len() {
            out.push(if p.is_null(r) {
                V::default()
            } else {
                f(p.value(r))
            });
        }
    }
    Ok(out)
}

fn mismatch(field: &Field, a: &dyn Array) -> ColumnTypeMismatch {
    ColumnTypeMismatch {
        column: field.name().clone(),
        declared: field.data_type().clone(),
        found: a.data_type().clone(),
    }
}

fn column(field: &Field, arrays: &[&dyn Array]) -> Result<TColumn, ColumnTypeMismatch> {
    let nulls = null_bitmap(arrays);
    Ok(match field.data_type() {
        DataType::Boolean => {
            let mut values = Vec::with_capacity(arrays.iter().map(|a| a.len()).sum());
            for a in arrays {
                let b = a.as_boolean_opt().ok_or_else(|| mismatch(field, *a))?;
                values.extend((0..b.len()).map(|r| !b.is_null(r) && b.value(r)));
            }
            TColumn::BoolVal(TBoolColumn { values, nulls })
        }
        DataType::Int8 => TColumn::ByteVal(TByteColumn {
            values: primitive::<Int8Type, _>(field, arrays, |v| v)?,
            nulls,
        }),
        DataType::Int16 => TColumn::I16Val(TI16Column {
            values: primitive::<Int16Type, _>(field, arrays, |v| v)?,
            nulls,
        }),
        DataType::UInt8 => TColumn::I16Val(TI16Column {
            values: primitive::<UInt8Type, _>(field, arrays, i16::from)?,
            nulls,
        }),
        DataType::Int32 => TColumn::I32Val(TI32Column {
            values: primitive::<Int32Type, _>(field, arrays, |v| v)?,
            nulls,
        }),
        DataType::UInt16 => TColumn::I32Val(TI32Column {
            values: primitive::<UInt16Type, _>(field, arrays, i32::from)?,
            nulls,
        }),
        DataType::Int64 => TColumn::I64Val(TI64Column {
            values: primitive::<Int64Type, _>(field, arrays, |v| v)?,
            nulls,
        }),
        DataType::UInt32 => TColumn::I64Val(TI64Column {
            values: primitive::<UInt32Type, _>(field, arrays, i64::from)?,
            nulls,
        }),
        DataType::Float16 => TColumn::DoubleVal(TDoubleColumn {
            values: primitive::<Float16Type, _>(field, arrays, f64::from)?,
            nulls,
        }),
        DataType::Float32 => TColumn::DoubleVal(TDoubleColumn {
            values: primitive::<Float32Type, _>(field, arrays, float_as_double)?,
            nulls,
        }),
        DataType::Float64 => TColumn::DoubleVal(TDoubleColumn {
            values: primitive::<Float64Type, _>(field, arrays, |v| v)?,
            nulls,
        }),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            let mut values = Vec::with_capacity(arrays.iter().map(|a| a.len()).sum());
            for a in arrays {
                for r in 0..a.len() {
                    values.push(if a.is_null(r) {
                        Binary(Vec::new())
                    } else {
                        Binary(
                            binary_value(*a, r)
                                .ok_or_else(|| mismatch(field, *a))?
                                .to_vec(),
                        )
                    });
                }
            }
            TColumn::BinaryVal(TBinaryColumn { values, nulls })
        }
        _ => {
            let mut values = Vec::with_capacity(arrays.iter().map(|a| a.len()).sum());
            for a in arrays {
                values.extend((0..a.len()).map(|r| cell_text(*a, r).unwrap_or_default()));
            }
            TColumn::StringVal(TStringColumn { values, nulls })
        }
    })
}

/// A FLOAT widened the way Hive does it (through its decimal text), so 0.1f reads as 0.1.
fn float_as_double(v: f32) -> f64 {
    if v.is_finite() {
        format!("{v}").parse().unwrap_or(f64::from(v))
    } else {
        f64::from(v)
    }
}

fn binary_value(a: &dyn Array, r: usize) -> Option<&[u8]> {
    match a.data_type() {
        DataType::Binary => a.as_binary_opt::<i32>().map(|b| b.value(r)),
        DataType::LargeBinary => a.as_binary_opt::<i64>().map(|b| b.value(r)),
        _ => a.as_binary_view_opt().map(|b| b.value(r)),
    }
}

fn cell(a: &dyn Array, r: usize) -> TColumnValue {
    let null = is_null(a, r);
    macro_rules! opt {
        ($e:expr) => {
            if null {
                None
            } else {
                Some($e)
            }
        };
    }
    match a.data_type() {
        DataType::Boolean => TColumnValue::BoolVal(TBoolValue {
            value: opt!(a.as_boolean().value(r)),
        }),
        DataType::Int8 => TColumnValue::ByteVal(TByteValue {
            value: opt!(a.as_primitive::<Int8Type>().value(r)),
        }),
        DataType::Int16 => TColumnValue::I16Val(TI16Value {
            value: opt!(a.as_primitive::<Int16Type>().value(r)),
        }),
        DataType::Int32 => TColumnValue::I32Val(TI32Value {
            value: opt!(a.as_primitive::<Int32Type>().value(r)),
        }),
        DataType::Int64 => TColumnValue::I64Val(TI64Value {
            value: opt!(a.as_primitive::<Int64Type>().value(r)),
        }),
        DataType::Float32 => TColumnValue::DoubleVal(TDoubleValue {
            value: opt!(float_as_double(a.as_primitive::<Float32Type>().value(r))),
        }),
        DataType::Float64 => TColumnValue::DoubleVal(TDoubleValue {
            value: opt!(a.as_primitive::<Float64Type>().value(r)),
        }),
        _ => TColumnValue::StringVal(TStringValue {
            value: cell_text(a, r),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, Int32Array, StringArray};
    use arrow::datatypes::Field;
    use std::sync::Arc;

    #[test]
    fn columns_carry_null_bitmaps() {
        let schema = Schema::new(vec![
            Field::new("i", DataType::Int32, true),
            Field::new("s", DataType::Utf8, true),
        ]);
        let b = RecordBatch::try_new(
            Arc::new(schema.clone()),
            vec![
                Arc::new(Int32Array::from(vec![Some(1), None, Some(3)])) as ArrayRef,
                Arc::new(StringArray::from(vec![None, Some("b"), Some("c")])) as ArrayRef,
            ],
        )
        .expect("batch");
        let rs = row_set(&schema, &[b.clone(), b.slice(2, 1)], 0, 5).expect("encodes");
        let cols = rs.columns.expect("columnar");
        match &cols[0] {
            TColumn::I32Val(c) => {
                assert_eq!(c.values, vec![1, 0, 3, 3]);
                assert_eq!(c.nulls, Binary(vec![0b0010]));
            }
            other => panic!("unexpected {other:?}"),
        }
        let rows = row_set(&schema, std::slice::from_ref(&b), 0, 4)
            .expect("encodes")
            .rows;
        let wrong = Schema::new(vec![
            Field::new("i", DataType::Float64, true),
            Field::new("s", DataType::Utf8, true),
        ]);
        let b2 =
            RecordBatch::try_new(Arc::new(schema.clone()), b.columns().to_vec()).expect("batch");
        let err = row_set(&wrong, &[b2], 0, 5).expect_err("types differ");
        assert!(err.to_string().contains("column i holds Int32"), "{err}");
        assert_eq!(rows.len(), 3);
        assert_eq!(
            rows[1].col_vals[0],
            TColumnValue::I32Val(TI32Value { value: None })
        );
    }
}
