//! Hive's functions that are expressions of DataFusion's own functions and operators:
//! `year(d)` is the year `date_part` reads of `d` as a timestamp, `pmod(a, b)` is
//! `((a % b) + b) % b`, `isnull(a)` is `a IS NULL`, `size(a)` is `cardinality(a)` with -1 for
//! NULL. Each is a registered function ([`ExprFn`]), so a query names it as any other and
//! DESCRIBE FUNCTION finds it; DataFusion's simplifier replaces the call by its expression
//! before the plan runs, where DataFusion's own kernels compute it (a call left unsimplified
//! runs the same expression over its arguments).
//!
//! One function builds the expression from the arguments and their types; the call's result
//! type is the type of that expression over columns of the arguments' types, so the type
//! planned and the expression run cannot disagree.

pub(crate) mod casts;
pub(crate) mod collections;
pub(crate) mod dates;
pub(crate) mod expr_fn;
pub(crate) mod numbers;
pub(crate) mod predicates;
pub(crate) mod strings;

use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::SessionContext;

use crate::forms::expr_fn::ExprFn;

/// Registers each of `functions` in `ctx`.
pub(crate) fn register_all(ctx: &SessionContext, functions: Vec<ExprFn>) {
    for f in functions {
        ctx.register_udf(ScalarUDF::from(f));
    }
}

/// Registers every function of this module's families.
pub(crate) fn register(ctx: &SessionContext) {
    register_all(ctx, predicates::functions());
    register_all(ctx, dates::functions());
    register_all(ctx, numbers::functions());
    register_all(ctx, collections::functions());
    register_all(ctx, strings::functions());
    register_all(ctx, casts::functions());
}

#[cfg(test)]
pub(crate) mod tests {
    use arrow::util::display::array_value_to_string;
    use datafusion::prelude::SessionContext;

    /// The first row `sql` answers on a bare context with Hive's functions, each value as
    /// Arrow writes it (NULL as empty text).
    pub(crate) async fn answers(sql: &str) -> Vec<String> {
        let state = crate::with_hive_planning(
            datafusion::execution::session_state::SessionStateBuilder::new(),
        )
        .build();
        let ctx = SessionContext::new_with_state(state);
        crate::register(&ctx);
        let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
        batches[0]
            .columns()
            .iter()
            .map(|c| array_value_to_string(c, 0).unwrap())
            .collect()
    }

    /// A call the optimizer does not simplify (no optimizer pass) runs the same expression.
    #[tokio::test]
    async fn unsimplified_calls_run_their_expression() {
        use datafusion::prelude::SessionConfig;
        let mut config = SessionConfig::new();
        config.options_mut().optimizer.max_passes = 0;
        let ctx = SessionContext::new_with_config(config);
        crate::register(&ctx);
        let sql = "SELECT pmod(x, 3), year(d), isnull(x), size(make_array(x, x)) \
                   FROM (VALUES (-7, '2026-12-07'), (NULL, NULL)) t(x, d)";
        let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
        let rows: Vec<Vec<String>> = (0..2)
            .map(|r| {
                batches[0]
                    .columns()
                    .iter()
                    .map(|c| array_value_to_string(c, r).unwrap())
                    .collect()
            })
            .collect();
        assert_eq!(rows, [["2", "2026", "false", "2"], ["", "", "true", "2"]]);
    }
}
