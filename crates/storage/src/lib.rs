//! Apiary's storage layer: Hive's types mapped to Arrow, the native file formats Hive writes,
//! scanning native tables (with partition pruning) and writing them atomically.

#![warn(missing_docs)]

mod constants;
mod error;
pub mod format;
pub mod handler;
pub mod native;
pub mod orc_write;
pub mod ownership;
pub mod reach;
pub mod text;
mod text_source;
pub mod write;

pub use apiary_hive_types::types;
pub use error::StorageError;
pub use format::NativeFormat;
pub use native::NativeTable;
pub use reach::{Reach, ReachError};
