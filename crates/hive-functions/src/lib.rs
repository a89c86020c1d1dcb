//! Hive's built-in functions and operator semantics as a DataFusion extension.
//!
//! [`register`] adds Hive's scalar and aggregate functions to a `SessionContext` (Apiary's own
//! implementations, those that are expressions of DataFusion's own functions, and the
//! functions of `datafusion-spark` that answer as Hive's do), together with the planner of Hive's operators (`7 / 2` is 3.5, `/` by zero is
//! NULL, text compared with numbers as DOUBLEs, `DIV`); [`with_hive_planning`] adds, to a
//! session state being built, the planner of Hive's 0-based array subscripts and Hive's
//! coercion rule (before DataFusion's own). [`list`] is what SHOW FUNCTIONS and DESCRIBE
//! FUNCTION answer. Hive's table-generating functions (`explode`, `stack`, ..) take a row's
//! values, which DataFusion's table functions (constants only) do not: [`generators`] plans
//! them on sqlparser's syntax tree, before DataFusion's SQL planner, as `unnest`s and the
//! helpers `register` adds. The crate depends on DataFusion and on `apiary-hive-types` (Hive's
//! type names and value texts) only: any DataFusion program can use it (see the README).
//!
//! Errors are DataFusion's (`plan_err!`/`exec_err!` with Hive's wording); a caller that maps
//! them to Hive's error codes does so by their text.

#![warn(missing_docs)]

use std::sync::Arc;

use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::prelude::SessionContext;

mod aggregate;
mod args;
pub mod coercion;
pub mod conversion;
mod forms;
pub mod generators;
pub mod list;
pub mod names;
mod names_of_datafusion;
pub mod operators;
mod scalar;
mod session;
pub mod syntax;
mod window;

pub use names::*;
pub use operators::{HiveOperators, HiveSubscripts};

/// Spark's functions (datafusion-spark) that answer as Hive's do, registered under their
/// names and aliases: Hive's argument forms, NULL handling and result types (checked in
/// `tests/sql/functions.slt`). Spark's others differ from Hive (`add_months` keeps no month
/// end, `trunc` takes no number, `hour` no string, `pmod` by a negative number), or Hive has no
/// such function.
const FROM_SPARK: &[&str] = &[
    "base64",
    "bin",
    "ceil",
    "concat_ws",
    "crc32",
    "date_add",
    "date_diff",
    "date_sub",
    "elt",
    "factorial",
    "floor",
    "format_string",
    "from_utc_timestamp",
    "hex",
    "if",
    "last_day",
    "next_day",
    "parse_url",
    "sha1",
    "sha2",
    "shiftleft",
    "shiftright",
    "shiftrightunsigned",
    "soundex",
    "space",
    "str_to_map",
    "substring",
    "to_utc_timestamp",
    "unbase64",
    "unhex",
    "width_bucket",
];

/// Spark's aggregates that answer as Hive's do.
const AGGREGATES_FROM_SPARK: &[&str] = &["collect_list", "collect_set"];

/// Registers Hive's functions and the planner of Hive's operators in a context.
pub fn register(ctx: &SessionContext) {
    conversion::register(ctx);
    session::register(ctx);
    for f in datafusion_spark::all_default_scalar_functions() {
        if FROM_SPARK.contains(&f.name()) {
            match forms::dates::with_hive_arguments(Arc::clone(&f)) {
                Some(hive) => ctx.register_udf(datafusion::logical_expr::ScalarUDF::from(hive)),
                None => ctx.register_udf(f.as_ref().clone()),
            };
        }
    }
    for f in datafusion_spark::all_default_aggregate_functions() {
        if AGGREGATES_FROM_SPARK.contains(&f.name()) {
            ctx.register_udaf(f.as_ref().clone());
        }
    }
    scalar::datetime::register(ctx);
    scalar::strings::register(ctx);
    scalar::numbers::register(ctx);
    scalar::calendar::register(ctx);
    scalar::text::register(ctx);
    scalar::interval::register(ctx);
    scalar::union::register(ctx);
    scalar::mask::register(ctx);
    scalar::ewah::register(ctx);
    scalar::match_path::register(ctx);
    aggregate::histogram::register(ctx);
    scalar::arrays::register(ctx);
    aggregate::ngrams::register(ctx);
    scalar::xpath::register(ctx);
    scalar::json::register(ctx);
    forms::register(ctx);
    aggregate::percentile::register(ctx);
    aggregate::text_as_double::register(ctx);
    names_of_datafusion::register(ctx);
    window::register(ctx);
    // (Registered last: DataFusion's own planners leave these operators alone.)
    let _ = datafusion::execution::FunctionRegistry::register_expr_planner(
        &mut *ctx.state_ref().write(),
        Arc::new(HiveOperators),
    );
}

/// What every context that plans HiveQL needs besides its functions: Hive's 0-based array
/// subscripts (before DataFusion's own planners, so they win), DataFusion's defaults, and
/// Hive's coercion rule before DataFusion's. Use it on the builder of a session state, then
/// call [`register`] on the context made from it.
pub fn with_hive_planning(builder: SessionStateBuilder) -> SessionStateBuilder {
    builder
        .with_expr_planners(vec![Arc::new(HiveSubscripts)])
        .with_default_features()
        .with_analyzer_rules(coercion::analyzer_rules())
}

pub use scalar::datetime::set_time_zone;
pub use session::register_session;
