//! Hive's ranking window functions: `row_number`, `rank`, `dense_rank` and `ntile` answer INT
//! in Hive (DataFusion's answer an unsigned 64-bit number). Each is DataFusion's own function
//! under the same name, with its result cast to INT as it is computed.

use std::ops::Range;
use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::function::{
    ExpressionArgs, PartitionEvaluatorArgs, WindowFunctionSimplification, WindowUDFFieldArgs,
};
use datafusion::logical_expr::window_state::WindowAggState;
use datafusion::logical_expr::{
    LimitEffect, PartitionEvaluator, ReversedUDWF, Signature, WindowUDF, WindowUDFImpl,
};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::prelude::SessionContext;

/// The ranking functions whose result Hive types INT.
const RANKING: &[&str] = &["row_number", "rank", "dense_rank", "ntile"];

/// Replaces DataFusion's ranking functions in `ctx` by ones answering INT.
pub(crate) fn register(ctx: &SessionContext) {
    // Looked up under the state's read lock (cloning a context's state is costly), registered
    // once it is released.
    let found: Vec<Arc<WindowUDF>> = {
        let state = ctx.state_ref();
        let state = state.read();
        RANKING
            .iter()
            .filter_map(|name| state.window_functions().get(*name).cloned())
            .collect()
    };
    for f in found {
        ctx.register_udwf(WindowUDF::new_from_impl(Int32Ranks(f)));
    }
}

/// A ranking window function whose result is cast to INT.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Int32Ranks(Arc<WindowUDF>);

impl WindowUDFImpl for Int32Ranks {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn aliases(&self) -> &[String] {
        self.0.aliases()
    }

    fn signature(&self) -> &Signature {
        self.0.signature()
    }

    fn expressions(&self, expr_args: ExpressionArgs) -> Vec<Arc<dyn PhysicalExpr>> {
        self.0.expressions(expr_args)
    }

    fn partition_evaluator(
        &self,
        args: PartitionEvaluatorArgs,
    ) -> Result<Box<dyn PartitionEvaluator>> {
        Ok(Box::new(Int32Evaluator(
            self.0.partition_evaluator_factory(args)?,
        )))
    }

    fn simplify(&self) -> Option<WindowFunctionSimplification> {
        None
    }

    fn field(&self, field_args: WindowUDFFieldArgs) -> Result<FieldRef> {
        let field = self.0.field(field_args)?;
        Ok(Arc::new(Field::new(
            field.name(),
            DataType::Int32,
            field.is_nullable(),
        )))
    }

    fn sort_options(&self) -> Option<datafusion::arrow::compute::SortOptions> {
        self.0.sort_options()
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        self.0.coerce_types(arg_types)
    }

    fn reverse_expr(&self) -> ReversedUDWF {
        match self.0.reverse_expr() {
            ReversedUDWF::Reversed(f) => {
                ReversedUDWF::Reversed(Arc::new(WindowUDF::new_from_impl(Int32Ranks(f))))
            }
            other => other,
        }
    }

    fn documentation(&self) -> Option<&datafusion::logical_expr::Documentation> {
        self.0.documentation()
    }

    fn limit_effect(&self, args: &[Arc<dyn PhysicalExpr>]) -> LimitEffect {
        self.0.inner().limit_effect(args)
    }
}

/// DataFusion's evaluator, its results cast to INT.
#[derive(Debug)]
struct Int32Evaluator(Box<dyn PartitionEvaluator>);

fn int32(values: ArrayRef) -> Result<ArrayRef> {
    Ok(cast(&values, &DataType::Int32)?)
}

impl PartitionEvaluator for Int32Evaluator {
    fn memoize(&mut self, state: &mut WindowAggState) -> Result<()> {
        self.0.memoize(state)
    }

    fn get_range(&self, idx: usize, n_rows: usize) -> Result<Range<usize>> {
        self.0.get_range(idx, n_rows)
    }

    fn is_causal(&self) -> bool {
        self.0.is_causal()
    }

    fn evaluate_all(&mut self, values: &[ArrayRef], num_rows: usize) -> Result<ArrayRef> {
        int32(self.0.evaluate_all(values, num_rows)?)
    }

    fn evaluate(&mut self, values: &[ArrayRef], range: &Range<usize>) -> Result<ScalarValue> {
        self.0.evaluate(values, range)?.cast_to(&DataType::Int32)
    }

    fn evaluate_all_with_rank(
        &self,
        num_rows: usize,
        ranks_in_partition: &[Range<usize>],
    ) -> Result<ArrayRef> {
        int32(
            self.0
                .evaluate_all_with_rank(num_rows, ranks_in_partition)?,
        )
    }

    fn supports_bounded_execution(&self) -> bool {
        self.0.supports_bounded_execution()
    }

    fn uses_window_frame(&self) -> bool {
        self.0.uses_window_frame()
    }

    fn include_rank(&self) -> bool {
        self.0.include_rank()
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{Array, Int32Array};
    use datafusion::prelude::SessionContext;

    #[tokio::test]
    async fn ranks_are_int() {
        let ctx = SessionContext::new();
        super::register(&ctx);
        let batches = ctx
            .sql(
                "SELECT row_number() OVER (ORDER BY x), rank() OVER (ORDER BY x), \
                 dense_rank() OVER (ORDER BY x), ntile(2) OVER (ORDER BY x) \
                 FROM (VALUES (1), (1), (3)) t(x) ORDER BY 1",
            )
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let column = |i: usize| -> Vec<i32> {
            let a = batches[0].column(i);
            let a = a.as_any().downcast_ref::<Int32Array>().unwrap();
            (0..a.len()).map(|r| a.value(r)).collect()
        };
        assert_eq!(column(0), [1, 2, 3]);
        assert_eq!(column(1), [1, 1, 3]);
        assert_eq!(column(2), [1, 1, 2]);
        assert_eq!(column(3), [1, 1, 2]);
    }
}
