//! Hive's numeric aggregates over text: `sum`, `avg` and the variance family (`variance`,
//! `var_pop`, `var_samp`, `stddev`, `stddev_pop`, `stddev_samp`, and their aliases) read a
//! STRING argument as a DOUBLE (`sum('1.5')` is 1.5; text that is no number is NULL), where
//! DataFusion's take numbers only. Each is DataFusion's own function under its name, with a
//! text argument coerced to DOUBLE first and every other argument coerced as DataFusion does.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::expr::{
    AggregateFunction, AggregateFunctionParams, WindowFunctionParams,
};
use datafusion::logical_expr::function::{
    AccumulatorArgs, AggregateFunctionSimplification, StateFieldsArgs,
};
use datafusion::logical_expr::type_coercion::functions::fields_with_udf;
use datafusion::logical_expr::utils::AggregateOrderSensitivity;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, Expr, GroupsAccumulator, Operator,
    ReversedUDAF, SetMonotonicity, Signature, StatisticsArgs,
};
use datafusion::prelude::SessionContext;

/// The aggregates that read text as DOUBLE in Hive.
const NUMERIC: &[&str] = &[
    "sum",
    "avg",
    "var_samp",
    "var_pop",
    "stddev_samp",
    "stddev_pop",
];

/// Whether the aggregate named `name` (a function's own name, which its aliases keep:
/// `var_samp` is DataFusion's `var`, `stddev_samp` its `stddev`) reads a text argument as a
/// DOUBLE.
pub(crate) fn reads_text(name: &str) -> bool {
    NUMERIC.contains(&name) || matches!(name, "var" | "stddev")
}

/// Replaces DataFusion's numeric aggregates in `ctx` by ones that also take text.
pub(crate) fn register(ctx: &SessionContext) {
    // Looked up under the state's read lock (cloning a context's state is costly), registered
    // once it is released.
    let found: Vec<Arc<AggregateUDF>> = {
        let state = ctx.state_ref();
        let state = state.read();
        NUMERIC
            .iter()
            .filter_map(|name| state.aggregate_functions().get(*name).cloned())
            .collect()
    };
    for f in found {
        ctx.register_udaf(AggregateUDF::new_from_impl(TextAsDouble::new(f)));
    }
}

/// An aggregate whose text arguments are DOUBLEs.
#[derive(Debug, PartialEq, Eq, Hash)]
struct TextAsDouble {
    inner: Arc<AggregateUDF>,
    signature: Signature,
}

impl TextAsDouble {
    fn new(inner: Arc<AggregateUDF>) -> Self {
        let volatility = inner.signature().volatility;
        Self {
            inner,
            signature: Signature::user_defined(volatility),
        }
    }

    fn wrap(inner: Arc<dyn AggregateUDFImpl>) -> Arc<dyn AggregateUDFImpl> {
        Arc::new(Self::new(Arc::new(AggregateUDF::new_from_shared_impl(
            inner,
        ))))
    }
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

impl AggregateUDFImpl for TextAsDouble {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let fields: Vec<FieldRef> = arg_types
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let t = if is_text(t) {
                    DataType::Float64
                } else {
                    t.clone()
                };
                Arc::new(Field::new(format!("a{i}"), t, true))
            })
            .collect();
        Ok(fields_with_udf(&fields, self.inner.as_ref())?
            .iter()
            .map(|f| f.data_type().clone())
            .collect())
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(arg_types)
    }

    fn return_field(&self, arg_fields: &[FieldRef]) -> Result<FieldRef> {
        self.inner.return_field(arg_fields)
    }

    fn is_nullable(&self) -> bool {
        self.inner.is_nullable()
    }

    fn schema_name(&self, params: &AggregateFunctionParams) -> Result<String> {
        self.inner.inner().schema_name(params)
    }

    fn human_display(&self, params: &AggregateFunctionParams) -> Result<String> {
        self.inner.inner().human_display(params)
    }

    fn window_function_schema_name(&self, params: &WindowFunctionParams) -> Result<String> {
        self.inner.inner().window_function_schema_name(params)
    }

    fn display_name(&self, params: &AggregateFunctionParams) -> Result<String> {
        self.inner.inner().display_name(params)
    }

    fn window_function_display_name(&self, params: &WindowFunctionParams) -> Result<String> {
        self.inner.inner().window_function_display_name(params)
    }

    fn accumulator(&self, acc_args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        self.inner.accumulator(acc_args)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        self.inner.state_fields(args)
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        self.inner.groups_accumulator_supported(args)
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        self.inner.create_groups_accumulator(args)
    }

    fn create_sliding_accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        self.inner.create_sliding_accumulator(args)
    }

    fn with_beneficial_ordering(
        self: Arc<Self>,
        beneficial_ordering: bool,
    ) -> Result<Option<Arc<dyn AggregateUDFImpl>>> {
        Ok(Arc::clone(self.inner.inner())
            .with_beneficial_ordering(beneficial_ordering)?
            .map(Self::wrap))
    }

    fn order_sensitivity(&self) -> AggregateOrderSensitivity {
        self.inner.order_sensitivity()
    }

    fn simplify(&self) -> Option<AggregateFunctionSimplification> {
        self.inner.simplify()
    }

    fn simplify_expr_op_literal(
        &self,
        agg_function: &AggregateFunction,
        arg: &Expr,
        op: Operator,
        lit: &Expr,
        arg_is_left: bool,
    ) -> Result<Option<Expr>> {
        self.inner
            .inner()
            .simplify_expr_op_literal(agg_function, arg, op, lit, arg_is_left)
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        match self.inner.reverse_udf() {
            ReversedUDAF::Reversed(f) => ReversedUDAF::Reversed(Arc::new(
                AggregateUDF::new_from_shared_impl(Self::wrap(Arc::clone(f.inner()))),
            )),
            other => other,
        }
    }

    fn is_descending(&self) -> Option<bool> {
        self.inner.is_descending()
    }

    fn value_from_stats(&self, statistics_args: &StatisticsArgs) -> Option<ScalarValue> {
        self.inner.value_from_stats(statistics_args)
    }

    fn default_value(&self, data_type: &DataType) -> Result<ScalarValue> {
        self.inner.default_value(data_type)
    }

    fn supports_null_handling_clause(&self) -> bool {
        self.inner.supports_null_handling_clause()
    }

    fn supports_within_group_clause(&self) -> bool {
        self.inner.supports_within_group_clause()
    }

    fn set_monotonicity(&self, data_type: &DataType) -> SetMonotonicity {
        self.inner.inner().set_monotonicity(data_type)
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::util::pretty::pretty_format_batches;
    use datafusion::prelude::SessionContext;

    #[tokio::test]
    async fn text_is_a_double() {
        let state = crate::with_hive_planning(
            datafusion::execution::session_state::SessionStateBuilder::new(),
        )
        .build();
        let ctx = SessionContext::new_with_state(state);
        super::register(&ctx);
        let batches = ctx
            .sql(
                "SELECT sum(s), avg(s), var_pop(s), stddev_samp(s), sum(n), avg(n) \
                 FROM (VALUES ('1.5', 1), ('2.5', 2), ('x', 3)) t(s, n)",
            )
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let table = pretty_format_batches(&batches).unwrap().to_string();
        // 'x' is no number: NULL, left out as every NULL is.
        assert!(table.contains("| 4.0 "), "{table}");
        assert!(table.contains("| 2.0 "), "{table}");
        assert!(table.contains("| 0.25 "), "{table}");
        assert!(table.contains("| 6 "), "{table}");
    }
}
