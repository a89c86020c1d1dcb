//! Hive's approximate histogram (its `NumericHistogram`, after Ben-Haim and Tom-Tov's
//! streaming histogram) and the two aggregates built on it: `histogram_numeric(x, nb)` and
//! `percentile_approx(x, p [, nb])`. DataFusion's `approx_percentile_cont` is a t-digest,
//! whose answers differ from Hive's (the median of 1, 2, 3, 4 is 2.0 in Hive); this one
//! follows Hive's steps, its tie-breaks drawn from Java's `Random` with Hive's seed, so a
//! single partition's answer is Hive's to the last bit.

use std::sync::Arc;

use apiary_hive_types::render::java_double;
use arrow::array::{Array, ArrayRef, AsArray, Float64Array, ListArray, StructArray};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field, FieldRef, Fields, Float64Type};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};
use datafusion::prelude::SessionContext;

use crate::args::constant;

/// Registers `histogram_numeric` and `percentile_approx`.
pub fn register(ctx: &SessionContext) {
    ctx.register_udaf(AggregateUDF::from(HistogramAggregate::new(Kind::Histogram)));
    ctx.register_udaf(AggregateUDF::from(HistogramAggregate::new(
        Kind::Percentile,
    )));
}

/// Java's `java.util.Random` (a 48-bit linear congruential generator).
#[derive(Debug, Clone)]
struct JavaRandom {
    seed: u64,
}

const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const MASK: u64 = (1 << 48) - 1;

impl JavaRandom {
    fn new(seed: u64) -> Self {
        Self {
            seed: (seed ^ MULTIPLIER) & MASK,
        }
    }

    fn next(&mut self, bits: u32) -> u64 {
        self.seed = self.seed.wrapping_mul(MULTIPLIER).wrapping_add(0xB) & MASK;
        self.seed >> (48 - bits)
    }

    fn next_double(&mut self) -> f64 {
        ((self.next(26) << 27) + self.next(27)) as f64 * f64::powi(2.0, -53)
    }
}

/// The seed Hive's histogram gives its generator.
const HIVE_SEED: u64 = 31183;

/// At most `nbins` bins of (x, count), sorted by x.
#[derive(Debug, Clone)]
pub(crate) struct NumericHistogram {
    nbins: usize,
    bins: Vec<(f64, f64)>,
    prng: JavaRandom,
}

impl NumericHistogram {
    pub(crate) fn new(nbins: usize) -> Self {
        Self {
            nbins,
            bins: Vec::new(),
            prng: JavaRandom::new(HIVE_SEED),
        }
    }

    /// Counts `v`: in its bin if one has its x, else in a new bin, the closest two bins
    /// merged when there are too many.
    pub(crate) fn add(&mut self, v: f64) {
        let (mut l, mut r, mut bin) = (0, self.bins.len(), 0);
        while l < r {
            bin = (l + r) / 2;
            let x = self.bins[bin].0;
            if x > v {
                r = bin;
            } else if x < v {
                bin += 1;
                l = bin;
            } else {
                break;
            }
        }
        match self.bins.get_mut(bin) {
            Some(b) if b.0 == v => b.1 += 1.0,
            _ => {
                self.bins.insert(bin, (v, 1.0));
                if self.bins.len() > self.nbins {
                    self.trim();
                }
            }
        }
    }

    /// Merges the closest pairs of bins (ties broken at random, as Hive) until `nbins` are left.
    fn trim(&mut self) {
        while self.bins.len() > self.nbins.max(1) {
            let mut smallest = self.bins[1].0 - self.bins[0].0;
            let (mut at, mut ties) = (0, 1u32);
            for i in 1..self.bins.len() - 1 {
                let diff = self.bins[i + 1].0 - self.bins[i].0;
                if diff < smallest {
                    smallest = diff;
                    at = i;
                    ties = 1;
                } else if diff == smallest {
                    ties += 1;
                    if self.prng.next_double() <= 1.0 / f64::from(ties) {
                        at = i;
                    }
                }
            }
            let (x0, y0) = self.bins[at];
            let (x1, y1) = self.bins[at + 1];
            let d = y0 + y1;
            let x = x0 * (y0 / d) + x1 / d * y1;
            self.bins[at] = (x, d);
            self.bins.remove(at + 1);
        }
    }

    /// The partial histogram as numbers: `nbins`, then each bin's x and count.
    fn serialize(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(1 + 2 * self.bins.len());
        out.push(self.nbins as f64);
        for (x, y) in &self.bins {
            out.push(*x);
            out.push(*y);
        }
        out
    }

    /// Adds a serialized partial histogram: all bins of both, sorted, trimmed to size.
    fn merge(&mut self, other: &[f64]) {
        let Some((nbins, pairs)) = other.split_first() else {
            return;
        };
        let bins = pairs.chunks_exact(2).map(|p| (p[0], p[1]));
        if self.bins.is_empty() {
            self.nbins = *nbins as usize;
            self.bins = bins.collect();
        } else {
            self.bins.extend(bins);
            self.bins.sort_by(|a, b| a.0.total_cmp(&b.0));
            self.trim();
        }
    }

    /// The value below which a share `q` of the counted values lies, interpolated between
    /// bins as Hive does.
    pub(crate) fn quantile(&self, q: f64) -> Option<f64> {
        let sum: f64 = self.bins.iter().map(|b| b.1).sum();
        let mut csum = 0.0;
        for (i, (x, y)) in self.bins.iter().enumerate() {
            csum += y;
            if csum / sum >= q {
                let Some(i_prev) = i.checked_sub(1) else {
                    return Some(*x);
                };
                let (px, _) = self.bins[i_prev];
                csum -= y;
                return Some(px + (q * sum - csum) * (x - px) / y);
            }
        }
        self.bins.last().map(|b| b.0)
    }
}

/// Which aggregate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// `histogram_numeric(x, nb)`: the bins, as `array<struct<x:double,y:double>>`.
    Histogram,
    /// `percentile_approx(x, p [, nb])`: a DOUBLE, or an array of them for an array of p.
    Percentile,
}

/// The bins of Hive's `percentile_approx` when not given.
const DEFAULT_PERCENTILE_BINS: i64 = 10_000;

#[derive(Debug, PartialEq, Eq, Hash)]
struct HistogramAggregate {
    kind: Kind,
    signature: Signature,
}

impl HistogramAggregate {
    fn new(kind: Kind) -> Self {
        Self {
            kind,
            signature: Signature::variadic_any(Volatility::Immutable),
        }
    }

    fn bin_type() -> DataType {
        DataType::Struct(Fields::from(vec![
            Field::new("x", DataType::Float64, true),
            Field::new("y", DataType::Float64, true),
        ]))
    }
}

pub(crate) fn as_f64(v: &ScalarValue) -> Option<f64> {
    match v.cast_to(&DataType::Float64).ok()? {
        ScalarValue::Float64(f) => f,
        _ => None,
    }
}

fn as_i64(v: &ScalarValue) -> Option<i64> {
    match v.cast_to(&DataType::Int64).ok()? {
        ScalarValue::Int64(i) => i,
        _ => None,
    }
}

impl AggregateUDFImpl for HistogramAggregate {
    fn name(&self) -> &str {
        match self.kind {
            Kind::Histogram => "histogram_numeric",
            Kind::Percentile => "percentile_approx",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        let arity = match self.kind {
            Kind::Histogram => 2..=2,
            Kind::Percentile => 2..=3,
        };
        crate::args::check_arity(self.name(), &arity, args.len())?;
        if !(args[0].is_numeric() || args[0].is_null()) {
            return plan_err!(
                "{}: Only numeric type arguments are accepted but {} was passed as parameter 1.",
                self.name(),
                apiary_hive_types::HiveType::of(&args[0])
            );
        }
        Ok(match (self.kind, &args[1]) {
            (Kind::Histogram, _) => DataType::new_list(Self::bin_type(), true),
            (
                Kind::Percentile,
                DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..),
            ) => DataType::new_list(DataType::Float64, true),
            (Kind::Percentile, _) => DataType::Float64,
        })
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(crate::args::list_state(
            args.name,
            "histogram",
            DataType::Float64,
        ))
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let (quantiles, nbins) = match self.kind {
            Kind::Histogram => {
                let nb = args
                    .exprs
                    .get(1)
                    .map(|e| constant(e, "histogram_numeric's number of bins"))
                    .transpose()?;
                let nb = nb.as_ref().and_then(as_i64).unwrap_or(0);
                if nb < 2 {
                    return exec_err!(
                        "GenericUDAFHistogramNumericEvaluator needs nbins to be at least 2, but you supplied {nb}."
                    );
                }
                (None, nb)
            }
            Kind::Percentile => {
                let p = match args.exprs.get(1) {
                    Some(e) => constant(e, "percentile_approx's percentile")?,
                    None => return plan_err!("percentile_approx requires 2..3 argument(s), got 1"),
                };
                let (listed, values) = crate::args::one_or_listed(&p)?;
                let evaluator = if listed {
                    "GenericUDAFMultiplePercentileApproxEvaluator"
                } else {
                    "GenericUDAFSinglePercentileApproxEvaluator"
                };
                let mut qs = Vec::with_capacity(values.len());
                for i in 0..values.len() {
                    let q = as_f64(&ScalarValue::try_from_array(&values, i)?);
                    match q {
                        Some(q) if q > 0.0 && q < 1.0 => qs.push(q),
                        q => {
                            return exec_err!(
                                "{evaluator} requires percentile values to lie strictly between 0 and 1, but you supplied {}",
                                q.map_or("null".to_string(), java_double)
                            )
                        }
                    }
                }
                let nb = match args.exprs.get(2) {
                    Some(e) => {
                        let v = constant(e, "percentile_approx's number of bins")?;
                        match as_i64(&v) {
                            Some(n) if n >= 1 => n,
                            _ => return exec_err!("percentile_approx's number of histogram bins must be a positive integer, but you supplied {v}"),
                        }
                    }
                    None => DEFAULT_PERCENTILE_BINS,
                };
                (Some((listed, qs)), nb)
            }
        };
        Ok(Box::new(HistogramAccumulator {
            histogram: NumericHistogram::new(usize::try_from(nbins).unwrap_or(1)),
            quantiles,
        }))
    }
}

#[derive(Debug)]
struct HistogramAccumulator {
    histogram: NumericHistogram,
    /// For percentile_approx: whether p was an array, and the percentiles.
    quantiles: Option<(bool, Vec<f64>)>,
}

impl Accumulator for HistogramAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(values) = values.first() else {
            return Ok(());
        };
        let values = arrow::compute::cast(values, &DataType::Float64)?;
        let values = values.as_primitive::<Float64Type>();
        for v in values.iter().flatten() {
            self.histogram.add(v);
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let Some(state) = states.first() else {
            return Ok(());
        };
        let lists = state.as_list::<i32>();
        for i in 0..lists.len() {
            if lists.is_null(i) {
                continue;
            }
            let part = lists.value(i);
            let part: Vec<f64> = part
                .as_primitive::<Float64Type>()
                .iter()
                .map(|v| v.unwrap_or(0.0))
                .collect();
            self.histogram.merge(&part);
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let values: Vec<ScalarValue> = self
            .histogram
            .serialize()
            .into_iter()
            .map(|v| ScalarValue::Float64(Some(v)))
            .collect();
        Ok(vec![ScalarValue::List(ScalarValue::new_list_nullable(
            &values,
            &DataType::Float64,
        ))])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let empty = self.histogram.bins.is_empty();
        match &self.quantiles {
            None => {
                if empty {
                    return ScalarValue::try_from(&DataType::new_list(
                        HistogramAggregate::bin_type(),
                        true,
                    ));
                }
                let xs: Float64Array = self.histogram.bins.iter().map(|b| Some(b.0)).collect();
                let ys: Float64Array = self.histogram.bins.iter().map(|b| Some(b.1)).collect();
                let DataType::Struct(fields) = HistogramAggregate::bin_type() else {
                    return exec_err!("histogram_numeric: bins are structs");
                };
                let bins = StructArray::try_new(
                    fields.clone(),
                    vec![Arc::new(xs) as ArrayRef, Arc::new(ys) as ArrayRef],
                    None,
                )?;
                let n = bins.len();
                let list = ListArray::try_new(
                    Arc::new(Field::new_list_field(DataType::Struct(fields), true)),
                    OffsetBuffer::from_lengths([n]),
                    Arc::new(bins),
                    None,
                )?;
                Ok(ScalarValue::List(Arc::new(list)))
            }
            Some((listed, qs)) => {
                let value = |q: f64| {
                    ScalarValue::Float64(if empty {
                        None
                    } else {
                        self.histogram.quantile(q)
                    })
                };
                if !*listed {
                    return Ok(qs.first().map_or(ScalarValue::Float64(None), |q| value(*q)));
                }
                if empty {
                    return ScalarValue::try_from(&DataType::new_list(DataType::Float64, true));
                }
                let values: Vec<ScalarValue> = qs.iter().map(|q| value(*q)).collect();
                Ok(ScalarValue::List(ScalarValue::new_list_nullable(
                    &values,
                    &DataType::Float64,
                )))
            }
        }
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self.histogram.bins.capacity() * std::mem::size_of::<(f64, f64)>()
            + self.quantiles.as_ref().map_or(0, |(_, q)| q.capacity() * 8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_random_matches_java() {
        // new java.util.Random(31183).nextDouble(), twice, as Java 17 prints them.
        let mut r = JavaRandom::new(HIVE_SEED);
        assert_eq!(r.next_double(), 0.107_485_272_024_865_46);
        assert_eq!(r.next_double(), 0.893_630_159_548_549);
        // new java.util.Random(0).nextDouble() is 0.730967787376657.
        let mut zero = JavaRandom::new(0);
        assert_eq!(zero.next_double(), 0.730_967_787_376_657);
    }

    #[test]
    fn quantiles_interpolate_between_bins_as_hive() {
        let mut h = NumericHistogram::new(10_000);
        for v in [1.0, 2.0, 3.0, 4.0] {
            h.add(v);
        }
        // Hive's percentile_approx of 1, 2, 3, 4: the median is 2.0, not 2.5.
        assert_eq!(h.quantile(0.5), Some(2.0));
        assert_eq!(h.quantile(0.25), Some(1.0));
        assert_eq!(h.quantile(0.75), Some(3.0));
        let mut h = NumericHistogram::new(10_000);
        for v in [0.0, 0.0, 0.0, 2.0, 4.0, 5.0, 5.0, 5.0, 8.0, 9.0] {
            h.add(v);
        }
        assert_eq!(h.quantile(0.5), Some(4.0));
    }

    #[test]
    fn bins_merge_to_the_limit() {
        let mut h = NumericHistogram::new(3);
        for v in [1.0, 2.0, 10.0, 11.0, 20.0] {
            h.add(v);
        }
        assert_eq!(h.bins, vec![(1.5, 2.0), (10.5, 2.0), (20.0, 1.0)]);
        let mut whole = NumericHistogram::new(3);
        whole.merge(&h.serialize());
        assert_eq!(whole.bins, h.bins);
        whole.merge(&[3.0, 30.0, 1.0]);
        assert_eq!(whole.bins.len(), 3);
        assert_eq!(whole.bins.iter().map(|b| b.1).sum::<f64>(), 6.0);
    }
}
