//! Hive's n-gram aggregates over sentences (arrays of words, or arrays of them, as
//! `sentences()` gives): `ngrams(expr, n, k [, pf])`, the k most frequent n-grams, and
//! `context_ngrams(expr, context, k [, pf])`, the k most frequent fillings of the NULLs of a
//! context such as `array('i', 'love', NULL)`. Both answer
//! `array<struct<ngram:array<string>, estfrequency:double>>`, most frequent first (ties in
//! word order), NULL when nothing matched.
//!
//! Hive's estimator keeps at most `2 * k * pf` n-grams (pf at least `1000 / k`, 20 by Hive's
//! documentation's default), trimming to the `k * pf` most frequent when it grows past that,
//! so frequencies are exact below that many distinct n-grams and may be under-counted above
//! it. This one trims at the same sizes; where Hive's trim drops one of several n-grams of
//! equal frequency (in its hash map's order), this one drops the last in word order. An
//! n-gram with a NULL word is skipped (Hive's would fail on it).

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Float64Array, ListArray, StringArray, StructArray};
use arrow::buffer::OffsetBuffer;
use arrow::datatypes::{DataType, Field, FieldRef, Fields};
use datafusion::common::{exec_err, plan_err, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Signature, Volatility,
};
use datafusion::prelude::SessionContext;

use crate::args::constant;

/// Registers `ngrams` and `context_ngrams`.
pub fn register(ctx: &SessionContext) {
    ctx.register_udaf(AggregateUDF::from(NGrams::new(Kind::Plain)));
    ctx.register_udaf(AggregateUDF::from(NGrams::new(Kind::Context)));
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// `ngrams(expr, n, k [, pf])`.
    Plain,
    /// `context_ngrams(expr, context, k [, pf])`.
    Context,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct NGrams {
    kind: Kind,
    signature: Signature,
}

impl NGrams {
    fn new(kind: Kind) -> Self {
        Self {
            kind,
            signature: Signature::variadic_any(Volatility::Immutable),
        }
    }

    /// Hive's evaluator name, which its messages start with.
    fn evaluator(&self) -> &'static str {
        match self.kind {
            Kind::Plain => "GenericUDAFnGramEvaluator",
            Kind::Context => "GenericUDAFContextNGramEvaluator",
        }
    }

    fn gram_type() -> DataType {
        DataType::Struct(Fields::from(vec![
            Field::new("ngram", DataType::new_list(DataType::Utf8, true), true),
            Field::new("estfrequency", DataType::Float64, true),
        ]))
    }
}

fn is_text(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Null
    )
}

fn element(t: &DataType) -> Option<&DataType> {
    match t {
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            Some(f.data_type())
        }
        _ => None,
    }
}

fn is_integer(t: &DataType) -> bool {
    t.is_integer() || t.is_null()
}

impl AggregateUDFImpl for NGrams {
    fn name(&self) -> &str {
        match self.kind {
            Kind::Plain => "ngrams",
            Kind::Context => "context_ngrams",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        crate::args::check_arity(self.name(), &(3..=4), args.len())?;
        let words = element(&args[0]).map(|e| element(e).unwrap_or(e));
        if !words.is_some_and(is_text) {
            return plan_err!(
                "{}: Only array<string> or array<array<string>> is allowed, but {} was passed as parameter 1.",
                self.name(),
                apiary_hive_types::HiveType::of(&args[0])
            );
        }
        if self.kind == Kind::Context && !element(&args[1]).is_some_and(is_text) {
            return plan_err!(
                "{}: Only arrays of strings are accepted but {} was passed as parameter 2.",
                self.name(),
                apiary_hive_types::HiveType::of(&args[1])
            );
        }
        let first_integer = if self.kind == Kind::Plain { 1 } else { 2 };
        for (i, t) in args.iter().enumerate().skip(first_integer) {
            if !is_integer(t) {
                return plan_err!(
                    "{}: Only integers are accepted but {} was passed as parameter {}.",
                    self.name(),
                    apiary_hive_types::HiveType::of(t),
                    i + 1
                );
            }
        }
        Ok(DataType::new_list(Self::gram_type(), true))
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(crate::args::list_state(args.name, "ngrams", DataType::Utf8))
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let evaluator = self.evaluator();
        let integer = |i: usize, what: &str| -> Result<Option<i64>> {
            match args.exprs.get(i) {
                Some(e) => {
                    let v = constant(e, &format!("{}'s '{what}'", self.name()))?;
                    Ok(match v.cast_to(&DataType::Int64)? {
                        ScalarValue::Int64(i) => i,
                        _ => None,
                    })
                }
                None => Ok(None),
            }
        };
        let at_least_one = |v: Option<i64>, what: &str| -> Result<Option<usize>> {
            match v {
                None => Ok(None),
                Some(v) if v >= 1 => Ok(usize::try_from(v).ok()),
                Some(v) => {
                    exec_err!("{evaluator} needs '{what}' to be at least 1, but you supplied {v}")
                }
            }
        };
        let k = at_least_one(integer(2, "k")?, "k")?;
        let pf = match args.exprs.get(3) {
            Some(_) => at_least_one(integer(3, "pf")?, "pf")?,
            None => Some(1),
        };
        let (n, context) = match self.kind {
            Kind::Plain => (at_least_one(integer(1, "n")?, "n")?, None),
            Kind::Context => {
                let Some(e) = args.exprs.get(1) else {
                    return plan_err!("context_ngrams requires 3..4 argument(s), got 1");
                };
                let context = match constant(e, "context_ngrams's context")? {
                    ScalarValue::List(a) if !a.is_null(0) => words(&a.value(0))?,
                    ScalarValue::LargeList(a) if !a.is_null(0) => words(&a.value(0))?,
                    _ => vec![],
                };
                if context.is_empty() {
                    return exec_err!(
                        "{evaluator} needs a context array with at least one element."
                    );
                }
                let holes = context.iter().filter(|w| w.is_none()).count();
                if holes == 0 {
                    return exec_err!(
                        "{evaluator} the context array needs to contain at least one 'null' value to indicate what should be counted."
                    );
                }
                (Some(holes), Some(context))
            }
        };
        // A NULL n, k or pf counts nothing (Hive skips every row then).
        let estimator = match (n, k, pf) {
            (Some(n), Some(k), Some(pf)) => Some(Estimator::new(n, k, pf)),
            _ => None,
        };
        Ok(Box::new(NGramAccumulator { estimator, context }))
    }
}

/// The words of a list of strings (NULL words as `None`).
fn words(list: &ArrayRef) -> Result<Vec<Option<String>>> {
    let list = arrow::compute::cast(list, &DataType::Utf8)?;
    Ok(list
        .as_string::<i32>()
        .iter()
        .map(|w| w.map(str::to_string))
        .collect())
}

/// The sentences of one row: its array of words, or each of its arrays of words.
fn sentences(row: &ArrayRef) -> Result<Vec<Vec<Option<String>>>> {
    match row.data_type() {
        DataType::List(_) | DataType::LargeList(_) | DataType::FixedSizeList(..) => {
            let mut out = Vec::with_capacity(row.len());
            for i in 0..row.len() {
                if row.is_null(i) {
                    continue;
                }
                if let Some(inner) = crate::args::list_at(row.as_ref(), i) {
                    out.push(words(&inner)?);
                }
            }
            Ok(out)
        }
        _ => Ok(vec![words(row)?]),
    }
}

/// Hive's `NGramEstimator`: n-gram frequencies, trimmed to the most frequent.
#[derive(Debug)]
struct Estimator {
    n: usize,
    k: usize,
    pf: usize,
    grams: HashMap<Vec<String>, f64>,
}

impl Estimator {
    fn new(n: usize, k: usize, pf: usize) -> Self {
        // Hive's minimum precision: k * pf at least 1000.
        let pf = if k.saturating_mul(pf) < 1000 {
            1000 / k
        } else {
            pf
        };
        Self {
            n,
            k,
            pf,
            grams: HashMap::new(),
        }
    }

    fn add(&mut self, gram: Vec<String>, count: f64) {
        *self.grams.entry(gram).or_insert(0.0) += count;
    }

    fn trim_if_full(&mut self) {
        if self.grams.len() > self.k.saturating_mul(self.pf).saturating_mul(2) {
            self.trim(self.k.saturating_mul(self.pf));
        }
    }

    /// Keeps the `keep` most frequent n-grams.
    fn trim(&mut self, keep: usize) {
        if self.grams.len() <= keep {
            return;
        }
        let mut all: Vec<(Vec<String>, f64)> = self.grams.drain().collect();
        sort_most_frequent_first(&mut all);
        all.truncate(keep);
        self.grams = all.into_iter().collect();
    }

    fn top(&mut self) -> Vec<(Vec<String>, f64)> {
        let mut all: Vec<(Vec<String>, f64)> = self.grams.drain().collect();
        sort_most_frequent_first(&mut all);
        all.truncate(self.k);
        all
    }
}

/// Most frequent first; equal frequencies in word order.
fn sort_most_frequent_first(all: &mut [(Vec<String>, f64)]) {
    all.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
}

#[derive(Debug)]
struct NGramAccumulator {
    /// None when n, k or pf is NULL: nothing is counted.
    estimator: Option<Estimator>,
    /// For context_ngrams: the context, NULLs where the counted words go.
    context: Option<Vec<Option<String>>>,
}

impl NGramAccumulator {
    fn process(&mut self, sentence: &[Option<String>]) {
        let Some(est) = self.estimator.as_mut() else {
            return;
        };
        match &self.context {
            None => {
                // Hive walks from the last n-gram to the first.
                for window in sentence.windows(est.n).rev() {
                    if let Some(gram) = window.iter().cloned().collect::<Option<Vec<String>>>() {
                        est.add(gram, 1.0);
                        est.trim_if_full();
                    }
                }
            }
            Some(context) => {
                for window in sentence.windows(context.len()).rev() {
                    let mut gram = Vec::with_capacity(est.n);
                    let mut matches = true;
                    for (c, w) in context.iter().zip(window) {
                        match (c, w) {
                            (None, Some(w)) => gram.push(w.clone()),
                            (Some(c), Some(w)) if c == w => {}
                            _ => {
                                matches = false;
                                break;
                            }
                        }
                    }
                    if matches {
                        est.add(gram, 1.0);
                        est.trim_if_full();
                    }
                }
            }
        }
    }
}

impl Accumulator for NGramAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(rows) = values.first() else {
            return Ok(());
        };
        for i in 0..rows.len() {
            if rows.is_null(i) {
                continue;
            }
            let Some(row) = crate::args::list_at(rows.as_ref(), i) else {
                return exec_err!("ngrams takes arrays of strings, not {}", rows.data_type());
            };
            for sentence in sentences(&row)? {
                self.process(&sentence);
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let (Some(state), Some(est)) = (states.first(), self.estimator.as_mut()) else {
            return Ok(());
        };
        let lists = state.as_list::<i32>();
        for i in 0..lists.len() {
            if lists.is_null(i) {
                continue;
            }
            let part = words(&lists.value(i))?;
            for chunk in part.chunks_exact(est.n + 1) {
                let Some((count, gram)) = chunk.split_last() else {
                    continue;
                };
                let count: f64 = count.as_deref().and_then(|c| c.parse().ok()).unwrap_or(0.0);
                if let Some(gram) = gram.iter().cloned().collect::<Option<Vec<String>>>() {
                    est.add(gram, count);
                }
            }
            est.trim(est.k.saturating_mul(est.pf));
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let mut flat = Vec::new();
        if let Some(est) = &self.estimator {
            for (gram, count) in &est.grams {
                flat.extend(gram.iter().map(|w| ScalarValue::Utf8(Some(w.clone()))));
                flat.push(ScalarValue::Utf8(Some(count.to_string())));
            }
        }
        Ok(vec![ScalarValue::List(ScalarValue::new_list_nullable(
            &flat,
            &DataType::Utf8,
        ))])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let top = self
            .estimator
            .as_mut()
            .map(Estimator::top)
            .unwrap_or_default();
        let result_type = DataType::new_list(NGrams::gram_type(), true);
        if top.is_empty() {
            return ScalarValue::try_from(&result_type);
        }
        let words: StringArray = top
            .iter()
            .flat_map(|(gram, _)| gram.iter().map(|w| Some(w.as_str())))
            .collect();
        let grams = ListArray::try_new(
            Arc::new(Field::new_list_field(DataType::Utf8, true)),
            OffsetBuffer::from_lengths(top.iter().map(|(g, _)| g.len())),
            Arc::new(words),
            None,
        )?;
        let counts: Float64Array = top.iter().map(|(_, c)| Some(*c)).collect();
        let DataType::Struct(fields) = NGrams::gram_type() else {
            return exec_err!("ngrams: n-grams are structs");
        };
        let structs = StructArray::try_new(
            fields.clone(),
            vec![Arc::new(grams) as ArrayRef, Arc::new(counts) as ArrayRef],
            None,
        )?;
        let list = ListArray::try_new(
            Arc::new(Field::new_list_field(DataType::Struct(fields), true)),
            OffsetBuffer::from_lengths([top.len()]),
            Arc::new(structs),
            None,
        )?;
        Ok(ScalarValue::List(Arc::new(list)))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self.estimator.as_ref().map_or(0, |e| {
                e.grams
                    .keys()
                    .map(|g| g.iter().map(|w| w.len() + 24).sum::<usize>() + 32)
                    .sum::<usize>()
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentence(words: &str) -> Vec<Option<String>> {
        words.split(' ').map(|w| Some(w.to_string())).collect()
    }

    /// The top n-grams after counting `sentences` with n, k and a context.
    fn top(
        n: usize,
        k: usize,
        context: Option<Vec<Option<String>>>,
        sentences: &[&str],
    ) -> Vec<(Vec<String>, f64)> {
        let mut acc = NGramAccumulator {
            estimator: Some(Estimator::new(n, k, 1)),
            context,
        };
        for s in sentences {
            acc.process(&sentence(s));
        }
        acc.estimator
            .as_mut()
            .map(Estimator::top)
            .unwrap_or_default()
    }

    #[test]
    fn bigrams_most_frequent_first_ties_in_word_order() {
        assert_eq!(
            top(2, 2, None, &["a b c a b", "b c"]),
            vec![
                (vec!["a".to_string(), "b".to_string()], 2.0),
                (vec!["b".to_string(), "c".to_string()], 2.0),
            ]
        );
    }

    #[test]
    fn context_fills_the_nulls() {
        let context = Some(vec![Some("i".into()), Some("love".into()), None]);
        assert_eq!(
            top(
                1,
                5,
                context,
                &["i love rust and i love tea", "i love rust"]
            ),
            vec![
                (vec!["rust".to_string()], 2.0),
                (vec!["tea".to_string()], 1.0)
            ]
        );
    }

    #[test]
    fn precision_is_at_least_a_thousand_n_grams() {
        let e = Estimator::new(2, 5, 1);
        assert_eq!(e.pf, 200);
        let e = Estimator::new(2, 2000, 3);
        assert_eq!(e.pf, 3);
    }
}
