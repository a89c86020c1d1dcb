//! Hive's names for DataFusion's own functions, where only the name differs: each DataFusion
//! function registered again with Hive's names as aliases (`ucase` is `upper`). Hive's
//! `stddev`, `std` and `variance` are the population's, so they name DataFusion's `stddev_pop`
//! and `var_pop` (DataFusion's own `stddev` and `variance` are the sample's, and keep their
//! other names: `stddev_samp`, `var_samp`). Hive's `sort_array(a)` sorts ascending with NULLs
//! first, as DataFusion's `array_sort` does by default; Hive 4's `mid` is `substr`; Hive's
//! `array(..)` is `make_array`, its `array_remove` removes every occurrence
//! (`array_remove_all`), and `to_unix_timestamp` is `unix_timestamp`.

use datafusion::prelude::SessionContext;

/// DataFusion's scalar functions and the Hive names they answer to.
const SCALAR: &[(&str, &[&str])] = &[
    ("upper", &["ucase"]),
    ("lower", &["lcase"]),
    ("signum", &["sign"]),
    ("array_sort", &["sort_array"]),
    // Hive 4's `mid(s, pos[, len])`.
    ("substr", &["mid"]),
    ("make_array", &["array"]),
    // Hive's array_remove removes every occurrence (DataFusion's, the first).
    ("array_remove_all", &["array_remove"]),
    // Hive's own, registered before this list.
    ("unix_timestamp", &["to_unix_timestamp"]),
];

/// DataFusion's aggregates and the Hive names they answer to.
const AGGREGATE: &[(&str, &[&str])] = &[
    ("stddev_pop", &["stddev", "std"]),
    ("var_pop", &["variance"]),
];

/// Registers DataFusion's functions under Hive's names too: called after every other function
/// is registered, so each name answers as the function its other name resolves to.
pub(crate) fn register(ctx: &SessionContext) {
    // Looked up under the state's read lock (a context's state is not cloned: this runs for
    // every session and every view planned), registered once it is released.
    let (scalars, aggregates) = {
        let state = ctx.state_ref();
        let state = state.read();
        let scalars: Vec<_> = SCALAR
            .iter()
            .filter_map(|(name, hive)| Some((state.scalar_functions().get(*name)?.clone(), *hive)))
            .collect();
        let aggregates: Vec<_> = AGGREGATE
            .iter()
            .filter_map(|(name, hive)| {
                Some((state.aggregate_functions().get(*name)?.clone(), *hive))
            })
            .collect();
        (scalars, aggregates)
    };
    for (f, hive) in scalars {
        ctx.register_udf(f.as_ref().clone().with_aliases(hive.iter().copied()));
    }
    for (f, hive) in aggregates {
        ctx.register_udaf(f.as_ref().clone().with_aliases(hive.iter().copied()));
    }
}

#[cfg(test)]
mod tests {
    use arrow::util::display::array_value_to_string;
    use datafusion::prelude::SessionContext;

    #[tokio::test]
    async fn hive_names_answer_as_hive_does() {
        let ctx = SessionContext::new();
        crate::register(&ctx);
        let batches = ctx
            .sql(
                "SELECT ucase('a'), lcase('B'), sign(-2.5), sort_array(make_array(3, NULL, 1)), \
                 stddev(x), std(x), variance(x), stddev_samp(x), mid('hello', 2, 3), \
                 buildversion() = version() \
                 FROM (VALUES (1.0), (2.0), (3.0), (4.0)) t(x)",
            )
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let row: Vec<String> = batches[0]
            .columns()
            .iter()
            .map(|c| array_value_to_string(c, 0).unwrap())
            .collect();
        // Population standard deviation and variance of 1..4: sqrt(1.25) and 1.25; the sample's
        // standard deviation stays under its own name.
        assert_eq!(
            row,
            [
                "A",
                "b",
                "-1.0",
                "[, 1, 3]",
                "1.118033988749895",
                "1.118033988749895",
                "1.25",
                "1.2909944487358056",
                "ell",
                "true"
            ]
        );
    }
}
