//! Hive's `json_read(json, type)`: JSON text read as a value of a Hive type given as a
//! constant (`json_read('[{"a":1}]', 'array<struct<a:int>>')`). NULL, empty or blank text is
//! NULL; text that is not JSON of that type fails the query (`Error parsing json: ..`), an
//! object key that names no field of the struct too. Struct keys match field names whatever
//! their case, as Hive's reader matches them; map keys stay as written.
//!
//! The reading itself is Arrow's JSON decoder, in strict mode, into the type's Arrow form.

use std::sync::Arc;

use apiary_hive_types::HiveType;
use arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::SessionContext;
use serde_json::Value;

use crate::args::{arg, text, RowFn};

/// Registers `json_read`.
pub fn register(ctx: &SessionContext) {
    ctx.register_udf(ScalarUDF::from(
        RowFn::new("json_read", 2..=2, |_| Ok(DataType::Null), json_read)
            .typed_by_constants(result_type),
    ));
}

/// The declared type, which must be a constant.
fn declared(type_text: Option<&ScalarValue>) -> Result<HiveType> {
    let Some(t) = type_text.and_then(text) else {
        return plan_err!("json_read argument 2 may only be a constant");
    };
    match HiveType::parse(&t) {
        Some(HiveType::Null) | None => {
            plan_err!("json_read: Error parsing typestring: '{t}' is not a Hive type")
        }
        Some(t) => Ok(t),
    }
}

fn result_type(_: &[DataType], constants: &[Option<&ScalarValue>]) -> Result<DataType> {
    Ok(declared(constants.get(1).copied().flatten())?.to_arrow())
}

fn json_read(args: &[ScalarValue]) -> Result<ScalarValue> {
    let t = declared(Some(arg(args, 1)))?;
    let target = t.to_arrow();
    let Some(json) = text(arg(args, 0)).filter(|s| !s.trim().is_empty()) else {
        return ScalarValue::try_from(&target);
    };
    let value: Value = match serde_json::from_str(&json) {
        Ok(v) => v,
        Err(e) => return exec_err!("Error parsing json: {e}"),
    };
    let line = serde_json::json!({ "v": lower_struct_keys(value, &target) }).to_string();
    let schema = Arc::new(Schema::new(vec![Field::new("v", target.clone(), true)]));
    let decoded = arrow::json::ReaderBuilder::new(schema)
        .with_strict_mode(true)
        .build_decoder()
        .and_then(|mut decoder| {
            decoder.decode(line.as_bytes())?;
            decoder.flush()
        });
    match decoded {
        Ok(Some(batch)) if batch.num_rows() == 1 => ScalarValue::try_from_array(batch.column(0), 0),
        Ok(_) => ScalarValue::try_from(&target),
        Err(e) => exec_err!("Error parsing json: {e}"),
    }
}

/// The value with the keys of the objects that are structs in lower case (Hive's field
/// names), so `{"A": 1}` fills the field `a`.
fn lower_struct_keys(value: Value, t: &DataType) -> Value {
    match (value, t) {
        (Value::Object(o), DataType::Struct(fields)) => Value::Object(
            o.into_iter()
                .map(|(k, v)| {
                    let k = k.to_lowercase();
                    let v = match fields.iter().find(|f| f.name() == &k) {
                        Some(f) => lower_struct_keys(v, f.data_type()),
                        None => v,
                    };
                    (k, v)
                })
                .collect(),
        ),
        (Value::Object(o), DataType::Map(entries, _)) => {
            let value_type = match entries.data_type() {
                DataType::Struct(kv) if kv.len() == 2 => Some(kv[1].data_type().clone()),
                _ => None,
            };
            Value::Object(
                o.into_iter()
                    .map(|(k, v)| {
                        let v = match &value_type {
                            Some(vt) => lower_struct_keys(v, vt),
                            None => v,
                        };
                        (k, v)
                    })
                    .collect(),
            )
        }
        (Value::Array(a), DataType::List(f)) => Value::Array(
            a.into_iter()
                .map(|v| lower_struct_keys(v, f.data_type()))
                .collect(),
        ),
        (v, _) => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str, t: &str) -> Result<ScalarValue> {
        json_read(&[
            ScalarValue::Utf8(Some(json.into())),
            ScalarValue::Utf8(Some(t.into())),
        ])
    }

    #[test]
    fn reads_nested_types() {
        let v = read(
            r#"[{"A": 1, "b": ["x"]}, {"a": 2}]"#,
            "array<struct<a:int,b:array<string>>>",
        )
        .unwrap();
        assert_eq!(v.to_string(), "[{a: 1, b: [x]}, {a: 2, b: }]");
        assert_eq!(
            read("[]", "array<struct<a:string>>").unwrap().to_string(),
            "[]"
        );
        assert_eq!(
            read("  ", "array<int>").unwrap(),
            read("", "array<int>").unwrap()
        );
        assert!(read("  ", "array<int>").unwrap().is_null());
    }

    #[test]
    fn refuses_what_is_not_of_the_type() {
        assert!(read(r#"{"zz": 1}"#, "struct<a:int>").is_err());
        assert!(read("[1,", "array<int>").is_err());
        assert!(read("[1]", "array<nothing>").is_err());
    }
}
