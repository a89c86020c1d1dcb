//! Errors of the wire codec.

/// Why a message could not be decoded.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ProtocolError {
    /// The input ended before the value did (or claims more bytes than it has).
    #[error("message is incomplete")]
    Incomplete,
    /// The bytes are not a valid Thrift binary protocol message.
    #[error("invalid Thrift message: {0}")]
    Invalid(String),
    /// A required field of a struct was not sent.
    #[error("Required field '{field}' is unset! Struct:{structure}")]
    MissingField {
        /// The struct's IDL name.
        structure: &'static str,
        /// The field's IDL name.
        field: &'static str,
    },
}

impl ProtocolError {
    /// An [`ProtocolError::Invalid`] with the given reason.
    pub fn invalid(msg: impl Into<String>) -> Self {
        ProtocolError::Invalid(msg.into())
    }
}
