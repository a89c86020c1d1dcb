//! The handler's errors: a wrong table definition, or a failure of the Delta table.

use apiary_storage::handler::HandlerError;

pub(crate) fn def_err(msg: impl Into<String>) -> HandlerError {
    HandlerError::Definition(msg.into())
}

pub(crate) fn remote_err(e: impl std::fmt::Display) -> HandlerError {
    HandlerError::Remote(e.to_string())
}
