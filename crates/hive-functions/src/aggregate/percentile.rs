//! Hive's exact percentiles: `percentile(x, p)` (interpolated between the two values around
//! position `(n - 1) * p`) and Hive 4's `percentile_disc(x, p)`, also written
//! `percentile_disc(p) WITHIN GROUP (ORDER BY x [DESC])` (no interpolation: the value at
//! 0-based position `ceil((n - 1) * p)`), of the n non-NULL values as DOUBLEs; with an array
//! of percentiles, an array of answers. NULL when there are no values.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Float64Array, ListArray};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field, FieldRef, Float64Type};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::function::{
    AccumulatorArgs, AggregateFunctionSimplification, StateFieldsArgs,
};
use datafusion::logical_expr::utils::AggregateOrderSensitivity;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Expr, Signature, Volatility,
};
use datafusion::prelude::SessionContext;

use crate::aggregate::histogram::as_f64;
use crate::args::{check_arity, constant, is_list, one_or_listed};
use crate::names::PERCENTILE_OUT_OF_RANGE;

/// Registers `percentile` and `percentile_disc`.
pub(crate) fn register(ctx: &SessionContext) {
    ctx.register_udaf(AggregateUDF::from(ExactPercentile::new(false)));
    ctx.register_udaf(AggregateUDF::from(ExactPercentile::new(true)));
}

/// `percentile` (interpolated) or `percentile_disc` (discrete).
#[derive(Debug, PartialEq, Eq, Hash)]
struct ExactPercentile {
    discrete: bool,
    signature: Signature,
}

impl ExactPercentile {
    fn new(discrete: bool) -> Self {
        Self {
            discrete,
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

/// Whether `p` was an array of percentiles, and the percentiles; Hive's error for one outside
/// 0..1.
fn percentiles(p: &ScalarValue) -> Result<(bool, Vec<f64>)> {
    let (listed, values) = one_or_listed(p)?;
    let mut percentiles = Vec::with_capacity(values.len());
    for i in 0..values.len() {
        match as_f64(&ScalarValue::try_from_array(&values, i)?) {
            Some(p) if (0.0..=1.0).contains(&p) => percentiles.push(p),
            _ => return plan_err!("{PERCENTILE_OUT_OF_RANGE}"),
        }
    }
    Ok((listed, percentiles))
}

impl AggregateUDFImpl for ExactPercentile {
    fn name(&self) -> &str {
        if self.discrete {
            "percentile_disc"
        } else {
            "percentile"
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        check_arity(self.name(), &(2..=2), arg_types.len())?;
        // One percentile as a DOUBLE (DataFusion's percentile_cont takes no other), an array
        // of them as it is.
        let p = if is_list(&arg_types[1]) {
            arg_types[1].clone()
        } else {
            DataType::Float64
        };
        Ok(vec![DataType::Float64, p])
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        check_arity(self.name(), &(2..=2), arg_types.len())?;
        Ok(if is_list(&arg_types[1]) {
            DataType::new_list(DataType::Float64, true)
        } else {
            DataType::Float64
        })
    }

    fn supports_within_group_clause(&self) -> bool {
        self.discrete
    }

    /// Checks a constant percentile as the plan is simplified, so a wrong one is an error of
    /// the statement's compilation, as Hive's is; the call itself stays as it is.
    fn simplify(&self) -> Option<AggregateFunctionSimplification> {
        Some(Box::new(|f: AggregateFunction, _| {
            if let Some(Expr::Literal(p, _)) = f.params.args.get(1) {
                percentiles(p)?;
            }
            Ok(Expr::AggregateFunction(f))
        }))
    }

    /// The values are sorted here: WITHIN GROUP's order only says which way.
    fn order_sensitivity(&self) -> AggregateOrderSensitivity {
        AggregateOrderSensitivity::Insensitive
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(crate::args::list_state(
            args.name,
            "values",
            DataType::Float64,
        ))
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let Some(p) = args.exprs.get(1) else {
            return exec_err!("{} requires 2 argument(s), got 1", self.name());
        };
        let (listed, percentiles) = percentiles(&constant(p, "the percentile")?)?;
        // WITHIN GROUP (ORDER BY x DESC) counts the positions from the largest value.
        let descending = args.order_bys.first().is_some_and(|o| o.options.descending);
        Ok(Box::new(PercentileAccumulator {
            discrete: self.discrete,
            descending,
            listed,
            percentiles,
            values: Vec::new(),
        }))
    }
}

#[derive(Debug)]
struct PercentileAccumulator {
    discrete: bool,
    descending: bool,
    /// Whether the percentiles were given as an array (the answer is one too).
    listed: bool,
    percentiles: Vec<f64>,
    values: Vec<f64>,
}

impl PercentileAccumulator {
    /// The percentile `p` of the values (at least one), which it reorders: the one or two
    /// values around its position are selected, not the whole list sorted.
    fn at(&mut self, p: f64) -> f64 {
        let last = self.values.len() - 1;
        let position = last as f64 * p;
        if self.discrete {
            let i = (position.ceil() as usize).min(last);
            // Counted from the largest value under WITHIN GROUP (ORDER BY x DESC).
            return self.kth(if self.descending { last - i } else { i });
        }
        let (low, high) = (
            position.floor() as usize,
            (position.ceil() as usize).min(last),
        );
        let (_, a, above) = self.values.select_nth_unstable_by(low, f64::total_cmp);
        let a = *a;
        if low == high {
            return a;
        }
        // The next value in order is the least of those selected above the low one.
        let b = above.iter().copied().min_by(f64::total_cmp).unwrap_or(a);
        // Hive's interpolation (UDAFPercentile), whose rounding its answers carry:
        // 157.92999999999998 where `a + f * (b - a)` gives 157.93.
        (high as f64 - position) * a + (position - low as f64) * b
    }

    /// The non-NULL values of `values`.
    fn take(&mut self, values: &Float64Array) {
        if values.null_count() == 0 {
            self.values.extend_from_slice(values.values());
        } else {
            self.values.extend(values.iter().flatten());
        }
    }

    /// The `k`-th smallest value (from 0).
    fn kth(&mut self, k: usize) -> f64 {
        let (_, v, _) = self.values.select_nth_unstable_by(k, f64::total_cmp);
        *v
    }
}

impl Accumulator for PercentileAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(values) = values.first() else {
            return Ok(());
        };
        let values = arrow::compute::cast(values, &DataType::Float64)?;
        self.take(values.as_primitive::<Float64Type>());
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let Some(state) = states.first() else {
            return Ok(());
        };
        let lists = state.as_list::<i32>();
        for i in 0..lists.len() {
            if !lists.is_null(i) {
                let part = lists.value(i);
                self.take(part.as_primitive::<Float64Type>());
            }
        }
        Ok(())
    }

    /// The values as one list (written as one array, not a value at a time).
    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let values = Float64Array::from(self.values.clone());
        let n = values.len();
        let list = ListArray::try_new(
            Arc::new(Field::new_list_field(DataType::Float64, true)),
            OffsetBuffer::from_lengths([n]),
            Arc::new(values),
            None,
        )?;
        Ok(vec![ScalarValue::List(Arc::new(list))])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        if self.values.is_empty() {
            return ScalarValue::try_from(&if self.listed {
                DataType::new_list(DataType::Float64, true)
            } else {
                DataType::Float64
            });
        }
        let percentiles = self.percentiles.clone();
        let answers: Vec<ScalarValue> = percentiles
            .iter()
            .map(|p| ScalarValue::Float64(Some(self.at(*p))))
            .collect();
        if !self.listed {
            return Ok(answers
                .into_iter()
                .next()
                .unwrap_or(ScalarValue::Float64(None)));
        }
        Ok(ScalarValue::List(ScalarValue::new_list_nullable(
            &answers,
            &DataType::Float64,
        )))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self) + (self.values.capacity() + self.percentiles.capacity()) * 8
    }
}

#[cfg(test)]
mod tests {
    use crate::forms::tests::answers;

    #[tokio::test]
    async fn interpolated_and_discrete() {
        let from = "FROM (VALUES (1), (2), (3), (4), (NULL)) t(x)";
        assert_eq!(
            answers(&format!(
                "SELECT percentile(x, 0.5), percentile(x, 0), percentile(x, 1), \
                 percentile(x, make_array(0.25, 0.75)), percentile_disc(x, 0.5), \
                 percentile_disc(x, 0.25), percentile_disc(0.5) WITHIN GROUP (ORDER BY x DESC) \
                 {from}"
            ))
            .await,
            ["2.5", "1.0", "4.0", "[1.75, 3.25]", "3.0", "2.0", "2.0"]
        );
        assert_eq!(
            answers("SELECT percentile(x, 0.5) FROM (VALUES (1)) t(x) WHERE x > 1").await,
            [""]
        );
        // Unordered values with a repeat: the positions are of the values in order.
        let from = "FROM (VALUES (5), (1), (4), (2), (3), (3)) t(x)";
        assert_eq!(
            answers(&format!(
                "SELECT percentile(x, make_array(0.5, 0.9, 0.1)), percentile_disc(x, 0.9), \
                 percentile_disc(0.9) WITHIN GROUP (ORDER BY x DESC) {from}"
            ))
            .await,
            ["[3.0, 4.5, 1.5]", "5.0", "1.0"]
        );
        // Hive's rounding of the interpolation (udf_percentile: keys 40..49 of src).
        let from = "FROM (VALUES (41), (42), (42), (43), (44), (47)) t(x)";
        assert_eq!(
            answers(&format!(
                "SELECT percentile(x, 0.99), percentile(x, make_array(0.99)) {from}"
            ))
            .await,
            ["46.849999999999994", "[46.849999999999994]"]
        );
    }
}
