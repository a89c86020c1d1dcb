//! Hive's array functions that neither DataFusion nor datafusion-spark has: `sort_array_by`;
//! and `replicate_rows`'s count of copies (the rewrite repeats each value that many times).

use std::sync::Arc;

use arrow::array::{Array, AsArray};
use arrow::compute::{lexsort_to_indices, take, SortColumn, SortOptions};
use arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result, ScalarValue};
use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::SessionContext;

use crate::args::{text, RowFn};

/// Registers the functions of this module.
pub fn register(ctx: &SessionContext) {
    ctx.register_udf(ScalarUDF::from(RowFn::new(
        "sort_array_by",
        2..=64,
        sorted_type,
        sort_array_by,
    )));
    ctx.register_udf(ScalarUDF::from(RowFn::new(
        crate::names::ROW_COPIES,
        1..=1,
        |_| Ok(DataType::Int64),
        row_copies,
    )));
}

/// The most copies of one row `replicate_rows` makes: each row's copies are built in memory
/// at once (Hive streams them), so a count beyond this fails the query rather than the server.
pub(crate) const MAX_ROW_COPIES: i64 = 1_000_000;

/// `replicate_rows`'s count: n as a BIGINT, 0 when negative or NULL, an error past
/// [`MAX_ROW_COPIES`].
fn row_copies(args: &[ScalarValue]) -> Result<ScalarValue> {
    let n = crate::args::int(crate::args::arg(args, 0)).unwrap_or(0);
    if n > MAX_ROW_COPIES {
        return exec_err!(
            "replicate_rows: {n} copies of a row asked, more than the {MAX_ROW_COPIES} Apiary makes"
        );
    }
    Ok(ScalarValue::Int64(Some(n.max(0))))
}

/// The result is the array given.
fn sorted_type(args: &[DataType]) -> Result<DataType> {
    match args.first() {
        Some(t @ DataType::List(f)) if matches!(f.data_type(), DataType::Struct(_)) => {
            Ok(t.clone())
        }
        Some(DataType::Null) => Ok(DataType::Null),
        Some(t) => exec_err!(
            "sort_array_by: Argument 1 of function SORT_ARRAY_BY must be array<struct>, but {} was found",
            apiary_hive_types::HiveType::of(t)
        ),
        None => exec_err!("sort_array_by requires 2..64 argument(s), got 0"),
    }
}

/// `sort_array_by(array<struct>, field, .. [, 'ASC' | 'DESC'])`: the structs ordered by the
/// named fields (NULLs first ascending, last descending), stably.
fn sort_array_by(args: &[ScalarValue]) -> Result<ScalarValue> {
    let Some(ScalarValue::List(list)) = args.first() else {
        return Ok(args.first().cloned().unwrap_or(ScalarValue::Null));
    };
    if list.is_null(0) {
        return Ok(ScalarValue::List(list.clone()));
    }
    let mut names: Vec<String> = Vec::new();
    for a in &args[1..] {
        match text(a) {
            Some(n) => names.push(n),
            None => return ScalarValue::try_from(list.data_type()),
        }
    }
    let descending = match names.last().map(|n| n.to_ascii_uppercase()) {
        Some(o) if o == "ASC" || o == "DESC" => {
            names.pop();
            o == "DESC"
        }
        _ => false,
    };
    if names.is_empty() {
        return exec_err!("sort_array_by: at least one field name is needed");
    }
    let values = list.value(0);
    let structs = values.as_struct();
    let mut columns = Vec::with_capacity(names.len() + 1);
    for name in &names {
        let Some(i) = structs
            .fields()
            .iter()
            .position(|f| f.name().eq_ignore_ascii_case(name))
        else {
            return exec_err!("sort_array_by: Invalid struct field name {name}");
        };
        columns.push(SortColumn {
            values: structs.column(i).clone(),
            options: Some(SortOptions {
                descending,
                nulls_first: !descending,
            }),
        });
    }
    // The position last, so equal keys keep their order (a stable sort, as Java's).
    columns.push(SortColumn {
        values: Arc::new(arrow::array::UInt32Array::from_iter_values(
            0..u32::try_from(structs.len()).unwrap_or(u32::MAX),
        )),
        options: None,
    });
    let order = lexsort_to_indices(&columns, None)?;
    let sorted = take(structs, &order, None)?;
    let DataType::List(field) = list.data_type() else {
        return Ok(ScalarValue::List(list.clone()));
    };
    let out = arrow::array::ListArray::try_new(
        field.clone(),
        arrow::buffer::OffsetBuffer::from_lengths([sorted.len()]),
        sorted,
        None,
    )?;
    Ok(ScalarValue::List(Arc::new(out)))
}

#[cfg(test)]
mod tests {
    use arrow::util::display::array_value_to_string;
    use datafusion::prelude::SessionContext;

    /// One value of `expr`, rendered by Arrow.
    async fn value(expr: &str) -> String {
        let ctx = SessionContext::new();
        crate::register(&ctx);
        let batches = ctx
            .sql(&format!("SELECT {expr}"))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        array_value_to_string(batches[0].column(0), 0).unwrap()
    }

    #[tokio::test]
    async fn sort_array_by_sorts_structs_by_their_fields() {
        // Hive's manual: sort_array_by(array(struct('g',100), struct('b',200)), 'col1', 'ASC').
        let people = "make_array(named_struct('name', 'g', 'age', 100), \
                      named_struct('name', 'b', 'age', 200), named_struct('name', 'b', 'age', 50))";
        assert_eq!(
            value(&format!("sort_array_by({people}, 'name')")).await,
            "[{name: b, age: 200}, {name: b, age: 50}, {name: g, age: 100}]"
        );
        assert_eq!(
            value(&format!("sort_array_by({people}, 'name', 'age', 'DESC')")).await,
            "[{name: g, age: 100}, {name: b, age: 200}, {name: b, age: 50}]"
        );
        assert_eq!(
            value(&format!("sort_array_by({people}, 'age')")).await,
            "[{name: b, age: 50}, {name: g, age: 100}, {name: b, age: 200}]"
        );
    }

    #[tokio::test]
    async fn replicate_rows_counts_copies() {
        assert_eq!(value("hive_row_copies(3)").await, "3");
        assert_eq!(value("hive_row_copies(-1)").await, "0");
    }
}
