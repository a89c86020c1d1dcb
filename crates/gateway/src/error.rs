//! Errors of the gateway. The endpoint turns each into a wire status in one place.

use apiary_sql::SqlError;

/// Why a gateway call failed.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// A session or operation handle the server does not know (or no longer knows).
    #[error("{0}")]
    InvalidHandle(String),
    /// The statement failed to compile or run.
    #[error(transparent)]
    Sql(#[from] SqlError),
    /// The call is not valid in the operation's current state.
    #[error("{0}")]
    InvalidState(String),
    /// The call is understood but not supported by this server.
    #[error("{0}")]
    Unsupported(String),
    /// The query ran longer than its timeout.
    #[error("Query timed out after {0} seconds")]
    Timeout(u64),
    /// A request refused before any work for what it asked (a configuration key a session
    /// may not change, in OpenSession or a statement's overlay), in Hive's words: no SQLSTATE,
    /// code 0.
    #[error("{0}")]
    Refused(String),
    /// OpenSession asked to act as a user it may not (`hive.server2.proxy.user`), in Hive's
    /// words.
    #[error("{0}")]
    Proxy(String),
    /// The server is at its session limit.
    #[error("{0}")]
    Busy(String),
    /// A fault inside the server (a broken invariant, a panic caught in a query's work): the
    /// operation fails with this message and the server goes on.
    #[error("{0}")]
    Internal(String),
    /// A login was refused (wrong credentials, or the directory could not be asked). The
    /// reason is for the server log; clients are told only Hive's words.
    #[error("Error validating the login")]
    Authentication(String),
    /// An operation failed; its recorded error.
    #[error("{}", .0.message)]
    Failed(OperationError),
}

/// An error as GetOperationStatus reports it.
#[derive(Debug, Clone)]
pub struct OperationError {
    /// Full message.
    pub message: String,
    /// SQLSTATE.
    pub sql_state: Option<String>,
    /// Hive error code.
    pub code: i32,
}

impl From<&GatewayError> for OperationError {
    fn from(e: &GatewayError) -> Self {
        let mut cause = std::error::Error::source(e);
        while let Some(c) = cause {
            tracing::debug!(cause = %c, "operation error caused by");
            cause = c.source();
        }
        Self {
            message: e.message(),
            sql_state: e.sql_state().map(str::to_string),
            code: e.error_code(),
        }
    }
}

impl GatewayError {
    /// SQLSTATE for the error, where Hive gives one.
    pub fn sql_state(&self) -> Option<&str> {
        match self {
            GatewayError::Failed(e) => e.sql_state.as_deref(),
            GatewayError::Sql(e) => Some(e.sql_state()),
            GatewayError::Timeout(_) => Some("HYT00"),
            GatewayError::InvalidState(_) => Some("HY010"),
            GatewayError::Internal(_) => Some("HY000"),
            GatewayError::Unsupported(_) => Some("HYC00"),
            GatewayError::Authentication(_) | GatewayError::Proxy(_) => Some("08S01"),
            GatewayError::InvalidHandle(_) | GatewayError::Busy(_) | GatewayError::Refused(_) => {
                None
            }
        }
    }

    /// Hive's error code, 0 where there is none.
    pub fn error_code(&self) -> i32 {
        match self {
            GatewayError::Sql(e) => e.error_code(),
            GatewayError::Timeout(_) => 10320,
            GatewayError::Failed(e) => e.code,
            _ => 0,
        }
    }

    /// The message a client sees.
    pub fn message(&self) -> String {
        match self {
            GatewayError::Sql(e) => e.hive_message(),
            GatewayError::Failed(e) => e.message.clone(),
            other => other.to_string(),
        }
    }
}
