//! Apiary's HiveQL statement layer: Hive session statements, HiveQL-to-DataFusion rewrites,
//! Hive's type names and value rendering, and Hive-style errors.

#![warn(missing_docs)]

pub mod error;
pub mod functions;
pub mod metadata;
pub mod pattern;
pub mod render;
mod rewrite;
pub mod session;
mod substitute;
pub mod types;

pub use error::SqlError;
pub use session::{execute, Engine, Prepared, SessionOptions, SqlSession};
pub use types::HiveType;
