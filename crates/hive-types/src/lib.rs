//! Hive's types and value texts, the leaf every layer of Apiary shares: [`types::HiveType`]
//! (Hive's type names parsed and mapped to Arrow and back), [`render`] (the text Hive shows for
//! a value, as HiveServer2 clients receive it) and [`java`] (Java's `Double.toString`, which
//! Hive prints for doubles). It depends on Arrow and chrono only, so the storage layer, the
//! function library and the front ends can all use it.

#![warn(missing_docs)]

pub mod java;
pub mod render;
pub mod types;

pub use types::HiveType;
