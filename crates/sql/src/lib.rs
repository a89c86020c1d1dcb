//! Apiary's HiveQL statement layer, between the gateway (sessions and operations) and
//! DataFusion. A statement's text goes through it in one direction:
//!
//! - [`compile`]: variables substituted, the statement classified once
//!   ([`parser::classify`]) and parsed by [`parser`] (Hive's DDL, DML and authorization
//!   statements) or by sqlparser in Hive's [`dialect`] (queries, rewritten toward Hive's
//!   semantics), checked by [`access`] control, and compiled into a [`Prepared`];
//! - [`statement`]: each family of statements (databases, tables, views, ALTER, partitions,
//!   INSERT, LOAD, DESCRIBE, SHOW, GRANT and roles) run against the [`session`]'s state;
//! - [`journal`]: DDL on tables another system owns (STORED BY), made crash-consistent through
//!   the metastore's intent journal, and start-up recovery;
//! - [`catalog`]: the metastore as DataFusion's catalog provider, and the catalog answers of
//!   HS2's and JDBC's metadata calls.
//!
//! [`engine`] holds what a server's sessions share; [`context`] builds the DataFusion context
//! every session and view plans with; Hive's functions are the `apiary-hive-functions` crate.
//! `docs/architecture.md` walks a statement through the layers.

#![warn(missing_docs)]

pub mod access;
pub mod catalog;
pub mod compile;
pub mod context;
pub mod dialect;
pub mod engine;
pub mod error;
pub mod hive_errors;
pub mod journal;
mod memory;
pub mod names;
pub mod parser;
mod partitions;
pub mod prepared;
pub mod redact;
mod results;
pub mod session;
pub mod statement;
pub mod task;

pub use access::policy::Policy;
pub use apiary_hive_types::render;
pub use apiary_storage::handler::Registry;
pub use apiary_storage::types;
pub use engine::{Engine, EngineOptions, SessionOptions};
pub use error::SqlError;
pub use prepared::{execute, Prepared, QueryPlan, RowStream, SessionChange};
pub use session::SqlSession;
pub use task::{Task, TaskOutput, TASK_SETTLE};
pub use types::HiveType;
