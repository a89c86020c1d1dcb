//! Hive's UNIONTYPE functions: `create_union(tag, v0, v1, ..)` makes a union holding the value
//! of member `tag`; `extract_union(u)` spreads a union over a struct of its members
//! (`tag_0`, `tag_1`, .., NULL but for the member it holds) and `extract_union(u, tag)` is
//! member `tag`'s value or NULL.
//!
//! A union is a sparse Arrow union whose type ids are Hive's tags
//! ([`apiary_hive_types::types::union_fields`]).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, StructArray, UnionArray};
use arrow::datatypes::{DataType, Field, Fields, UnionFields, UnionMode};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use datafusion::prelude::SessionContext;

use crate::args::check_arity;

/// Registers the functions of this module.
pub fn register(ctx: &SessionContext) {
    ctx.register_udf(ScalarUDF::new_from_impl(CreateUnion::new()));
    ctx.register_udf(ScalarUDF::new_from_impl(ExtractUnion::new()));
}

/// `create_union(tag, v0, v1, ..)`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct CreateUnion {
    signature: Signature,
}

impl CreateUnion {
    fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for CreateUnion {
    fn name(&self) -> &str {
        "create_union"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        check_arity(self.name(), &(2..=128), arg_types.len())?;
        if !(arg_types[0].is_integer() || arg_types[0] == DataType::Null) {
            return plan_err!(
                "create_union: the tag must be an integer, got {}",
                apiary_hive_types::HiveType::of(&arg_types[0])
            );
        }
        let mut out = vec![DataType::Int32];
        out.extend(arg_types[1..].iter().cloned());
        Ok(out)
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        check_arity(self.name(), &(2..=128), arg_types.len())?;
        Ok(DataType::Union(
            apiary_hive_types::types::tagged_members(
                arg_types[1..]
                    .iter()
                    .map(|t| Field::new("", t.clone(), true)),
            ),
            UnionMode::Sparse,
        ))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let DataType::Union(fields, _) = args.return_field.data_type().clone() else {
            return exec_err!("create_union: the result is not a union");
        };
        let n = args.number_rows;
        let arrays = args
            .args
            .into_iter()
            .map(|a| a.into_array(n))
            .collect::<Result<Vec<ArrayRef>>>()?;
        let Some((tags, values)) = arrays.split_first() else {
            return exec_err!("create_union requires a tag");
        };
        let Some(tags) = tags.as_primitive_opt::<arrow::datatypes::Int32Type>() else {
            return exec_err!("create_union: the tag is not an integer");
        };
        let mut ids = Vec::with_capacity(n);
        for i in 0..n {
            if tags.is_null(i) {
                return exec_err!("create_union: the tag is NULL");
            }
            let tag = tags.value(i);
            match usize::try_from(tag).ok().filter(|t| *t < values.len()) {
                Some(t) => ids.push(i8::try_from(t).unwrap_or(i8::MAX)),
                None => {
                    return exec_err!(
                        "create_union: tag {tag} names no value (there are {})",
                        values.len()
                    )
                }
            }
        }
        let union = UnionArray::try_new(fields, ids.into(), None, values.to_vec())?;
        Ok(ColumnarValue::Array(Arc::new(union)))
    }
}

/// `extract_union(u[, tag])`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct ExtractUnion {
    signature: Signature,
}

impl ExtractUnion {
    fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

/// The tag a constant second argument names, checked against the union's members.
fn constant_tag(value: Option<&ScalarValue>, members: &UnionFields) -> Result<usize> {
    let tag = match value.map(|v| v.cast_to(&DataType::Int64)) {
        Some(Ok(ScalarValue::Int64(Some(t)))) => t,
        _ => return plan_err!("extract_union: the tag must be an integer constant"),
    };
    match usize::try_from(tag).ok().filter(|t| *t < members.len()) {
        Some(t) => Ok(t),
        None => plan_err!(
            "extract_union: tag {tag} is not a member of a union of {} types",
            members.len()
        ),
    }
}

/// Member `tag`'s values of `union`, NULL where the union holds another member.
fn member_values(union: &UnionArray, tag: i8) -> Result<ArrayRef> {
    if union.is_dense() {
        return exec_err!("extract_union: dense unions are not read");
    }
    let other: BooleanArray = union.type_ids().iter().map(|t| Some(*t != tag)).collect();
    Ok(arrow::compute::nullif(union.child(tag).as_ref(), &other)?)
}

impl ScalarUDFImpl for ExtractUnion {
    fn name(&self) -> &str {
        "extract_union"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        check_arity(self.name(), &(1..=2), arg_types.len())?;
        Ok(arg_types.to_vec())
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        // (Planned through `return_field_from_args`, which sees the constant tag.)
        plan_err!("extract_union: the result type depends on its arguments")
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<Arc<Field>> {
        check_arity(self.name(), &(1..=2), args.arg_fields.len())?;
        let dt = match args.arg_fields[0].data_type() {
            DataType::Union(members, _) => match args.arg_fields.len() {
                1 => DataType::Struct(
                    members
                        .iter()
                        .map(|(_, f)| Arc::clone(f))
                        .collect::<Fields>(),
                ),
                _ => {
                    let tag =
                        constant_tag(args.scalar_arguments.get(1).copied().flatten(), members)?;
                    let Some((_, f)) = members.iter().nth(tag) else {
                        return plan_err!("extract_union: no member {tag}");
                    };
                    f.data_type().clone()
                }
            },
            // Hive returns any other value as it is.
            other => other.clone(),
        };
        Ok(Arc::new(Field::new(self.name(), dt, true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let n = args.number_rows;
        let Some(first) = args.args.first() else {
            return exec_err!("extract_union requires an argument");
        };
        let value = first.clone().into_array(n)?;
        let Some(union) = value.as_union_opt() else {
            return Ok(ColumnarValue::Array(value));
        };
        let DataType::Union(members, _) = union.data_type() else {
            return exec_err!("extract_union: not a union");
        };
        if let Some(ColumnarValue::Scalar(tag)) = args.args.get(1) {
            let tag = constant_tag(Some(tag), members)?;
            let tag = i8::try_from(tag).unwrap_or(i8::MAX);
            return Ok(ColumnarValue::Array(member_values(union, tag)?));
        }
        let mut fields = Vec::new();
        let mut columns = Vec::new();
        for (id, f) in members.iter() {
            fields.push(Arc::clone(f));
            columns.push(member_values(union, id)?);
        }
        let all = StructArray::try_new(fields.into(), columns, None)?;
        Ok(ColumnarValue::Array(Arc::new(all)))
    }
}

#[cfg(test)]
mod tests {
    async fn one(sql: &str) -> Vec<String> {
        let ctx = datafusion::prelude::SessionContext::new();
        crate::register(&ctx);
        let batches = match ctx.sql(sql).await {
            Ok(df) => df.collect().await,
            Err(e) => Err(e),
        };
        match batches {
            Ok(batches) => batches
                .iter()
                .flat_map(|b| {
                    (0..b.num_rows()).map(move |r| {
                        (0..b.num_columns())
                            .map(|c| {
                                apiary_hive_types::render::cell_text(b.column(c).as_ref(), r)
                                    .unwrap_or_else(|| "NULL".into())
                            })
                            .collect::<Vec<_>>()
                            .join("\t")
                    })
                })
                .collect(),
            Err(e) => vec![format!("ERR {e}")],
        }
    }

    #[tokio::test]
    async fn unions_follow_hive() {
        let cases = [
            ("select create_union(0, 'a', 1)", "{0:\"a\"}"),
            ("select create_union(1, 'a', 1)", "{1:1}"),
            (
                "select create_union(1, 'a', named_struct('col1', 2, 'col2', 'b'))",
                "{1:{\"col1\":2,\"col2\":\"b\"}}",
            ),
            (
                "select extract_union(create_union(1, 'a', 7))",
                "{\"tag_0\":null,\"tag_1\":7}",
            ),
            ("select extract_union(create_union(1, 'a', 7), 1)", "7"),
            ("select extract_union(create_union(1, 'a', 7), 0)", "NULL"),
        ];
        for (sql, want) in cases {
            assert_eq!(one(sql).await, vec![want.to_string()], "{sql}");
        }
        let rows = one("select create_union(if(x < 2, 0, 1), x, concat('v', x)) \
             from (values (1), (2)) t(x) order by x")
        .await;
        assert_eq!(rows, vec!["{0:1}", "{1:\"v2\"}"]);
        for bad in [
            "select create_union(2, 'a', 1)",
            "select create_union('x', 'a', 1)",
            "select extract_union(create_union(0, 'a', 1), 5)",
        ] {
            let got = one(bad).await;
            assert!(got[0].starts_with("ERR "), "{bad}: {got:?}");
        }
    }
}
