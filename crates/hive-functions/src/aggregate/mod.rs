//! Hive's aggregate functions Apiary implements itself (the others are DataFusion's or
//! `datafusion-spark`'s).

pub(crate) mod histogram;
pub(crate) mod nested_min_max;
pub(crate) mod ngrams;
pub(crate) mod percentile;
pub(crate) mod text_as_double;
