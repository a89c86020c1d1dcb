//! The handler's errors: a wrong table definition, or a failure of the Delta table.

use apiary_storage::handler::HandlerError;

/// A table definition Delta's handler refuses (Hive's wording in `msg`).
pub(crate) fn def_err(msg: impl Into<String>) -> HandlerError {
    HandlerError::Definition(msg.into())
}

/// A failure of the Delta table or its storage.
pub(crate) fn remote_err(e: impl std::fmt::Display) -> HandlerError {
    HandlerError::Remote(e.to_string())
}
