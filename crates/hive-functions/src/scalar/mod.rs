//! Hive's scalar functions, one module per family.

pub(crate) mod arrays;
pub(crate) mod calendar;
pub(crate) mod datetime;
pub(crate) mod ewah;
pub(crate) mod hash;
pub(crate) mod interval;
pub(crate) mod json;
pub(crate) mod mask;
pub(crate) mod match_path;
pub(crate) mod numbers;
pub(crate) mod strings;
pub(crate) mod text;
pub(crate) mod text_timestamp;
pub(crate) mod union;
pub(crate) mod xpath;
