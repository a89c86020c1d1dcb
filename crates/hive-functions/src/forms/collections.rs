//! Hive's functions of arrays and maps written with DataFusion's: `size(a)` (an INT, -1 for NULL), `index(a, i)` (`a[i]`: 0-based for arrays, a key for
//! maps), `array_position(a, x)` (1-based, 0 when absent), `field(v, v1, ..)` (the position
//! of the first vi equal to v, 0 for none) and `struct(v1, ..)` (fields `col1`, `col2`, ..).

use arrow::datatypes::DataType;
use datafusion::common::{plan_err, ScalarValue};
use datafusion::functions::core::expr_fn::coalesce;
use datafusion::functions_nested::expr_fn::{array_element, cardinality, map_extract};
use datafusion::functions_nested::position::array_position_udf;
use datafusion::logical_expr::type_coercion::binary::{comparison_coercion, type_union_resolution};
use datafusion::logical_expr::{cast, lit, when};

use crate::args::is_list;
use crate::forms::expr_fn::{is_text, take, ExprFn};

/// The element type of a list.
fn element(t: &DataType) -> Option<DataType> {
    match t {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            Some(f.data_type().clone())
        }
        _ => None,
    }
}

/// The key type of a map.
fn map_key(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(fields) => fields.first().map(|f| f.data_type().clone()),
            _ => None,
        },
        _ => None,
    }
}

/// One type all of `types` convert to.
fn common(types: &[DataType]) -> Option<DataType> {
    if types.is_empty() {
        return Some(DataType::Null);
    }
    type_union_resolution(types)
}

/// Hive's `map_keys(m)` or `map_values(m)` on DataFusion's `function`: an empty array for a
/// NULL map, as Hive gives.
fn keys_or_values(
    name: &'static str,
    function: std::sync::Arc<datafusion::logical_expr::ScalarUDF>,
) -> ExprFn {
    ExprFn::new(name, 1..=1, move |args, types| {
        let [m] = take(args)?;
        let fields: Vec<arrow::datatypes::FieldRef> = types
            .iter()
            .map(|t| std::sync::Arc::new(arrow::datatypes::Field::new("m", t.clone(), true)))
            .collect();
        let list = function
            .return_field_from_args(datafusion::logical_expr::ReturnFieldArgs {
                arg_fields: &fields,
                scalar_arguments: &[None],
            })?
            .data_type()
            .clone();
        let item = match &list {
            DataType::List(item) => item.data_type().clone(),
            other => return plan_err!("{name}: unexpected result type {other}"),
        };
        let empty = ScalarValue::List(ScalarValue::new_list_nullable(&[], &item));
        when(m.clone().is_null(), cast(lit(empty), list)).otherwise(function.call(vec![m]))
    })
}

/// The functions of this family.
pub(crate) fn functions() -> Vec<ExprFn> {
    vec![
        ExprFn::new("size", 1..=1, |args, _| {
            let [a] = take(args)?;
            when(a.clone().is_null(), lit(-1i32)).otherwise(cast(cardinality(a), DataType::Int32))
        }),
        ExprFn::new("index", 2..=2, |args, types| {
            let [a, i] = take(args)?;
            if is_list(&types[0]) {
                // 0-based; a negative or too-large index is NULL.
                let found = array_element(a, i.clone() + lit(1i64));
                return when(i.gt_eq(lit(0i64)), found).end();
            }
            Ok(array_element(map_extract(a, i), lit(1i64)))
        })
        .coerced(|types| {
            if is_list(&types[0]) {
                return Ok(vec![types[0].clone(), DataType::Int64]);
            }
            match map_key(&types[0]) {
                Some(k) => Ok(vec![types[0].clone(), k]),
                None => plan_err!("index takes an array or a map, not {}", types[0]),
            }
        }),
        ExprFn::new("array_position", 2..=2, |args, _| {
            let [a, x] = take(args)?;
            let found = array_position_udf().call(vec![a.clone(), x.clone()]);
            when(a.is_null().or(x.is_null()), lit(ScalarValue::Int32(None)))
                .otherwise(cast(coalesce(vec![found, lit(0u64)]), DataType::Int32))
        })
        .coerced(|types| match element(&types[0]) {
            Some(e) if types[1].is_null() => Ok(vec![types[0].clone(), e]),
            Some(e) => match comparison_coercion(&e, &types[1]) {
                Some(_) => Ok(vec![types[0].clone(), e]),
                None => plan_err!(
                    "array_position cannot look for {} in {}",
                    types[1],
                    types[0]
                ),
            },
            None if types[0].is_null() => Ok(types.to_vec()),
            None => plan_err!("array_position takes an array, not {}", types[0]),
        }),
        // Hive names the fields of struct(v1, ..) col1, col2, .. (DataFusion's c0, c1, ..).
        ExprFn::new("struct", 1..=usize::MAX, |args, _| {
            let named = args
                .into_iter()
                .enumerate()
                .flat_map(|(i, v)| [lit(format!("col{}", i + 1)), v])
                .collect();
            Ok(datafusion::functions::core::expr_fn::named_struct(named))
        }),
        keys_or_values(
            "map_keys",
            datafusion::functions_nested::map_keys::map_keys_udf(),
        ),
        keys_or_values(
            "map_values",
            datafusion::functions_nested::map_values::map_values_udf(),
        ),
        ExprFn::new("field", 2..=usize::MAX, |args, types| {
            let mut args = args.into_iter();
            let Some(v) = args.next() else {
                return plan_err!("field takes a value and candidates");
            };
            // Text never equals a number here (Hive compares values of one kind only):
            // `field('66', 66)` is 0.
            let kind = |t: &DataType| (is_text(t), t.is_numeric());
            // NULL equals nothing: `field(NULL, ..)` is 0, a NULL candidate never matches.
            let apart = |t: &DataType| {
                let (a, b) = (kind(&types[0]), kind(t));
                (a.0 && b.1) || (a.1 && b.0) || t.is_null() || types[0].is_null()
            };
            let mut case: Option<datafusion::logical_expr::conditional_expressions::CaseBuilder> =
                None;
            for (i, candidate) in args.enumerate() {
                if types.get(i + 1).is_some_and(apart) {
                    continue;
                }
                let position = lit(i32::try_from(i + 1).unwrap_or(i32::MAX));
                let condition = v.clone().eq(candidate);
                case = Some(match case {
                    None => when(condition, position),
                    Some(mut c) => {
                        c.when(condition, position);
                        c
                    }
                });
            }
            match case {
                Some(mut c) => Ok(c.otherwise(lit(0i32))?),
                None => Ok(lit(0i32)),
            }
        })
        .coerced(|types| {
            // Numbers to their common type, text to text: a value is compared with the
            // candidates of its kind only.
            let numbers: Vec<DataType> = types.iter().filter(|t| t.is_numeric()).cloned().collect();
            if types.iter().any(is_text) && !numbers.is_empty() {
                let number = common(&numbers).unwrap_or(DataType::Float64);
                return Ok(types
                    .iter()
                    .map(|t| {
                        if t.is_numeric() {
                            number.clone()
                        } else {
                            t.clone()
                        }
                    })
                    .collect());
            }
            match common(types) {
                Some(t) => Ok(vec![t; types.len()]),
                None => plan_err!("field: the values must have one common type"),
            }
        }),
    ]
}

#[cfg(test)]
mod tests {
    use crate::forms::tests::answers;

    #[tokio::test]
    async fn maps_sizes_and_positions() {
        assert_eq!(
            answers(
                "SELECT map('a', 1, 'b', 2.5), size(make_array(1, 2, 3)), \
                 size(CAST(NULL AS INT[])), size(map('a', 1)), index(make_array(10, 20), 0), \
                 index(make_array(10, 20), 5), index(map('a', 1), 'a'), \
                 array_position(make_array(3, 4, 5), 5), array_position(make_array(3), 9), \
                 array_position(make_array(3), NULL), field('b', 'a', 'b', 'c'), field('z', 'a'), \
                 field(NULL, 'a'), struct(1, 'a')"
            )
            .await,
            [
                "{a: 1.0, b: 2.5}",
                "3",
                "-1",
                "1",
                "10",
                "",
                "1",
                "3",
                "0",
                "",
                "2",
                "0",
                "0",
                "{col1: 1, col2: a}"
            ]
        );
    }
}
