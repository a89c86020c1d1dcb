//! The metastore seen from the engine and the front ends: DataFusion's catalog provider over
//! it ([`provider`]: databases as schemas, tables as table providers, views planned from their
//! text), the answers of HiveServer2's and JDBC's catalog calls ([`answers`]: GetTables,
//! GetColumns, ...), and Hive's name patterns they and SHOW .. LIKE match with ([`pattern`]).

pub mod answers;
pub mod pattern;
pub mod provider;
