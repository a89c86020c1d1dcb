//! Hive's functions on a bare DataFusion `SessionContext`, as another DataFusion program uses
//! them: nothing of Apiary but this crate. Expected values are those of Hive's language manual
//! (its examples where it gives one).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use arrow::array::{Array, AsArray};
use arrow::util::display::array_value_to_string;
use datafusion::prelude::SessionContext;

/// Runs `sql` (one row) and returns each column's value as text.
async fn one_row(ctx: &SessionContext, sql: &str) -> Vec<String> {
    let batches = ctx
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    assert_eq!(
        batches.iter().map(|b| b.num_rows()).sum::<usize>(),
        1,
        "{sql}"
    );
    let batch = &batches[0];
    batch
        .columns()
        .iter()
        .map(|c| {
            if c.is_null(0) {
                "NULL".to_string()
            } else if let Some(s) = c.as_string_opt::<i32>() {
                s.value(0).to_string()
            } else {
                array_value_to_string(c, 0).unwrap_or_default()
            }
        })
        .collect()
}

#[tokio::test]
async fn ten_hive_functions_on_a_bare_context() {
    let ctx = SessionContext::new();
    apiary_hive_functions::register(&ctx);
    let cases = [
        ("date_format('2026-12-07', 'yyyy/MM/dd')", "2026/12/07"),
        ("regexp_extract('row-42', 'row-([0-9]+)', 1)", "42"),
        ("format_number(1234567.891, 2)", "1,234,567.89"),
        (r#"get_json_object('{"a":{"b":[1,2]}}', '$.a.b[1]')"#, "2"),
        ("mask('abcD-12')", "xxxX-nn"),
        ("conv('ff', 16, 10)", "255"),
        ("hash('a')", "97"),
        ("add_months('2026-01-31', 1)", "2026-02-28"),
        (
            "months_between('1997-02-28 10:30:00', '1996-10-30')",
            "3.94959677",
        ),
        ("soundex('Miller')", "M460"),
        ("concat_ws('-', 'a', 'b')", "a-b"),
        // Hive's operators, planned by the planner `register` installs.
        ("7 / 2", "3.5"),
        ("1 / 0", "NULL"),
    ];
    let sql = format!(
        "SELECT {}",
        cases.iter().map(|(e, _)| *e).collect::<Vec<_>>().join(", ")
    );
    let got = one_row(&ctx, &sql).await;
    for ((expr, want), got) in cases.iter().zip(&got) {
        assert_eq!(got, want, "{expr}");
    }
}

/// Hive's functions that are expressions of DataFusion's own (`year`, `pmod`, `size`, the
/// predicates, ..) and its exact percentiles are registered functions too.
#[tokio::test]
async fn functions_written_with_datafusions_own() {
    let ctx = SessionContext::new();
    apiary_hive_functions::register(&ctx);
    let got = one_row(
        &ctx,
        "SELECT year('2026-12-07'), dayofweek('2026-12-07'), pmod(-7, 3), \
         size(array(1, 2, 3)), isnull(NULL), locate('b', 'abc'), \
         array_remove(array(1, 2, 1), 1), to_unix_timestamp('1970-01-01 00:01:00'), \
         percentile(x, 0.5), percentile_disc(x, 0.5), round(e(), 3) \
         FROM (VALUES (1), (2), (3), (4)) t(x)",
    )
    .await;
    assert_eq!(
        got,
        ["2026", "2", "2", "3", "true", "2", "[2]", "60", "2.5", "3.0", "2.718"]
    );
}

#[tokio::test]
async fn hive_planning_gives_zero_based_subscripts() {
    use datafusion::execution::session_state::SessionStateBuilder;
    let state = apiary_hive_functions::with_hive_planning(SessionStateBuilder::new()).build();
    let ctx = SessionContext::new_with_state(state);
    apiary_hive_functions::register(&ctx);
    let got = one_row(
        &ctx,
        "SELECT make_array(10, 20, 30)[0], make_array(10, 20)[5]",
    )
    .await;
    assert_eq!(got, ["10", "NULL"]);
}

#[test]
fn the_function_list_covers_what_is_registered() {
    let ctx = SessionContext::new();
    apiary_hive_functions::register(&ctx);
    let names = apiary_hive_functions::list::callable(&ctx);
    for name in [
        "date_format",
        "get_json_object",
        "histogram_numeric",
        "mask",
        "year",
        "pmod",
        "percentile",
        "explode",
        "json_tuple",
        "+",
        "between",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} missing");
    }
    assert!(!names.iter().any(|n| n == apiary_hive_functions::HIVE_TYPED));
    let lines = apiary_hive_functions::list::describe(&ctx, "mask", false);
    assert_eq!(lines, ["masks the given value"]);
    let lines = apiary_hive_functions::list::describe(&ctx, "no_such_fn", false);
    assert_eq!(lines, ["Function 'no_such_fn' does not exist."]);
}

/// A context with Hive's planning and functions, as Apiary's sessions have.
fn hive_context() -> SessionContext {
    use datafusion::execution::session_state::SessionStateBuilder;
    let state = apiary_hive_functions::with_hive_planning(SessionStateBuilder::new()).build();
    let ctx = SessionContext::new_with_state(state);
    apiary_hive_functions::register(&ctx);
    ctx
}

#[tokio::test]
async fn hives_coercion_rule() {
    let ctx = hive_context();
    // Text meeting a number in COALESCE/CASE is text, the number written as Hive writes it.
    let got = one_row(
        &ctx,
        "SELECT coalesce(NULL, 1, 'a'), CASE WHEN true THEN 1.0E10 ELSE 'x' END, \
         '1.5' IN (1.5, 2), 'x' IN (1), CAST(1.5 AS TIMESTAMP), CAST(1000 AS TIMESTAMP)",
    )
    .await;
    assert_eq!(
        got,
        [
            "1",
            "1.0E10",
            "true",
            "NULL",
            "1970-01-01T00:00:01.500",
            "1970-01-01T00:00:01"
        ]
    );
}

#[tokio::test]
async fn hives_comparisons_of_text_and_numbers() {
    let ctx = hive_context();
    let got = one_row(
        &ctx,
        "SELECT '10' > 9, '1.50' = 1.5, 7 - '5', 7 % 0, CAST(0.1 AS DECIMAL(3,2)) = CAST(0.1 AS DOUBLE)",
    )
    .await;
    assert_eq!(got, ["true", "true", "2.0", "NULL", "true"]);
}

/// A table-generating function alone in a select list, rewritten as the README shows, then
/// planned by DataFusion: one row per element; `stack`'s rows by position.
#[tokio::test]
async fn table_generating_functions_before_planning() {
    use datafusion::sql::sqlparser::ast::{SetExpr, Statement};
    use datafusion::sql::sqlparser::{dialect::HiveDialect, parser::Parser};
    let ctx = hive_context();
    let rows = |sql: &'static str| {
        let ctx = ctx.clone();
        async move {
            let mut statement = Parser::parse_sql(&HiveDialect {}, sql).unwrap().remove(0);
            if let Statement::Query(query) = &mut statement {
                if let SetExpr::Select(select) = query.body.as_mut() {
                    apiary_hive_functions::generators::in_select_list(select).unwrap();
                }
            }
            let batches = ctx
                .sql(&statement.to_string())
                .await
                .unwrap()
                .collect()
                .await
                .unwrap();
            arrow::util::pretty::pretty_format_batches(&batches)
                .unwrap()
                .to_string()
        }
    };
    let table = rows("SELECT explode(array(10, 20)) AS n").await;
    assert_eq!(
        table
            .lines()
            .filter(|l| l.contains("| 10") || l.contains("| 20"))
            .count(),
        2,
        "{table}"
    );
    let table = rows("SELECT stack(2, 'a', 1, 'b', 2)").await;
    assert!(table.contains("| col0 | col1 |"), "{table}");
    assert!(table.contains("| b    | 2    |"), "{table}");
}

#[tokio::test]
async fn ranking_functions_answer_int() {
    let ctx = hive_context();
    let df = ctx
        .sql("SELECT rank() OVER (ORDER BY x) AS r FROM (VALUES (1), (2)) t(x)")
        .await
        .unwrap();
    assert_eq!(
        df.schema().field(0).data_type(),
        &arrow::datatypes::DataType::Int32
    );
}
