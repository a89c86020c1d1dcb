//! The Hive properties of a JDBC table that the handler's modules share.

use apiary_storage::handler::CREATED_BY;

/// The property holding the remote database's password (a secret).
pub(crate) const PASSWORD: &str = "hive.sql.dbcp.password";
/// Properties that say which remote table a JDBC table is.
pub(crate) const CONNECTION_KEYS: &[&str] = &[
    CREATED_BY,
    "hive.sql.database.type",
    "hive.sql.jdbc.url",
    "hive.sql.table",
    "hive.sql.schema",
    "hive.sql.query",
];
