//! Apiary's HiveQL statement layer: Hive session statements, HiveQL-to-DataFusion rewrites,
//! Hive's type names and value rendering, and Hive-style errors.

#![warn(missing_docs)]

mod arrays;
pub mod authz;
mod calendar;
pub mod catalog;
mod clauses;
pub mod datetime;
pub mod ddl;
pub mod dialect;
pub mod error;
pub mod function_list;
pub mod functions;
mod histogram;
pub mod hive_errors;
mod json_read;
pub mod mask;
mod masking;
mod memory;
pub mod metadata;
mod murmur;
pub mod names;
mod ngrams;
mod nonnative;
mod numbers;
mod partitions;
pub mod pattern;
pub mod policy;
pub mod prepared;
pub mod recovery;
pub mod render;
mod rewrite;
mod rowfn;
pub mod session;
mod show;
mod statement;
mod strings;
mod substitute;
pub mod task;
mod text;
mod time_travel;
mod typing;
mod xpath;
pub use apiary_storage::handler::Registry;
pub use apiary_storage::types;

pub use error::SqlError;
pub use policy::Policy;
pub use prepared::{execute, Prepared, QueryPlan, RowStream};
pub use session::{Engine, EngineOptions, SessionOptions, SqlSession};
pub use task::{Task, TaskOutput, TASK_SETTLE};
pub use types::HiveType;
