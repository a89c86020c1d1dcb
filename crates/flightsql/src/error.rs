//! Errors of the Flight SQL front end, and the one place they become gRPC statuses.
//!
//! Every failure a call can answer is a [`FlightSqlError`]: a gateway error (the statement,
//! the session, the login, ...) or a failure of the front end's own (a missing or forged
//! bearer token, a malformed ticket, an unknown statement handle, a cancelled query). The one
//! conversion, `impl From<FlightSqlError> for Status`, gives each its gRPC code, the message
//! the client reads, and the SQLSTATE and Hive error code HiveServer2 would report for the
//! same failure in the status's metadata ([`SQLSTATE_KEY`], [`ERROR_CODE_KEY`]). The SQLSTATE
//! and code come from the gateway's one table ([`GatewayError::sql_state`],
//! [`GatewayError::error_code`]): a gateway error carries its own, and each failure of the
//! front end's own borrows those of the gateway error HiveServer2 reports for it, so both
//! front ends say the same thing.

use apiary_gateway::{GatewayError, SqlError};
use arrow_flight::error::FlightError;
use tonic::metadata::{AsciiMetadataValue, MetadataValue};
use tonic::{Code, Status};

/// Status metadata key carrying the SQLSTATE (HiveServer2's `TStatus.sqlState`), set when
/// Hive gives the failure one.
pub const SQLSTATE_KEY: &str = "x-hive-sqlstate";

/// Status metadata key carrying Hive's error code (HiveServer2's `TStatus.errorCode`), set on
/// every error status (0 where Hive has no code, as HiveServer2 sends it).
pub const ERROR_CODE_KEY: &str = "x-hive-error-code";

/// SQLSTATE of a failure of the transport under a call (a client stream that broke off or
/// could not be read): Hive's "communication link failure", which its JDBC driver and
/// HiveServer2 give transport errors.
const TRANSPORT_SQLSTATE: &str = "08S01";

/// Why a Flight SQL call failed.
#[derive(Debug, thiserror::Error)]
pub enum FlightSqlError {
    /// A gateway call failed. Its message, SQLSTATE and Hive code are the gateway's, exactly
    /// as HiveServer2 reports them; the gRPC code follows the kind of failure (an unknown
    /// handle is NOT_FOUND, a timeout DEADLINE_EXCEEDED, a refused login UNAUTHENTICATED, a
    /// failed statement INVALID_ARGUMENT, a cancelled one CANCELLED, ...).
    #[error("{}", .0.message())]
    Gateway(#[from] GatewayError),
    /// The call carries no bearer token, a forged or expired one, or one whose session has
    /// ended; or the handshake's Basic credentials are missing or malformed. UNAUTHENTICATED,
    /// with the SQLSTATE and code of a refused login ([`GatewayError::Authentication`]:
    /// `08S01`, 0).
    #[error("{0}")]
    Unauthenticated(String),
    /// A malformed request: a ticket, descriptor, action or FlightInfo that does not decode,
    /// an unknown action, parameter rows that cannot be read or bound. INVALID_ARGUMENT, with
    /// the SQLSTATE and code of Hive's generic error ([`SqlError::semantic`]: `42000`, 40000).
    #[error("{0}")]
    InvalidArgument(String),
    /// A statement handle (an operation's ticket, a prepared statement) that names nothing
    /// of the caller's session. NOT_FOUND, in HiveServer2's words for an unknown handle
    /// ([`GatewayError::InvalidHandle`]: no SQLSTATE, 0).
    #[error("Invalid OperationHandle: no such statement in this session")]
    UnknownStatement,
    /// The query was cancelled (CancelFlightInfo, CancelQuery, or an HS2 client cancelling
    /// the operation). CANCELLED, with the gateway's words for a cancelled query
    /// ([`SqlError::Cancelled`]: `HY008`, 1000, "Query was cancelled").
    #[error("Query was cancelled")]
    Cancelled,
    /// A fault inside the front end (a schema or batch that cannot be encoded, server facts
    /// that could not be built). INTERNAL, with the SQLSTATE and code of the gateway's
    /// internal error ([`GatewayError::Internal`]: `HY000`, 0).
    #[error("{0}")]
    Internal(String),
    /// A status tonic gave while reading the client's stream (a DoPut that broke off, a
    /// message that could not be decoded). Its own code and message, with the SQLSTATE of a
    /// transport failure (`08S01`) and code 0.
    #[error("{}", .0.message())]
    Transport(Box<Status>),
}

impl FlightSqlError {
    /// An unauthenticated call, with `message` for the client.
    pub fn unauthenticated(message: impl Into<String>) -> Self {
        FlightSqlError::Unauthenticated(message.into())
    }

    /// A malformed request, with `message` for the client.
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        FlightSqlError::InvalidArgument(message.into())
    }

    /// A fault inside the front end, with `message` for the client.
    pub fn internal(message: impl Into<String>) -> Self {
        FlightSqlError::Internal(message.into())
    }

    /// The error as a [`FlightError`], to travel through Arrow's Flight encoder (a DoGet
    /// stream); the conversion from [`FlightError`] takes it back out unchanged.
    pub fn into_flight(self) -> FlightError {
        FlightError::ExternalError(Box::new(self))
    }

    /// The gateway error whose SQLSTATE and Hive code a failure of the front end's own
    /// reports (what HiveServer2 reports for the same failure); `None` for a gateway error
    /// (it has its own) and a transport failure (not the gateway's).
    fn hive_equivalent(&self) -> Option<GatewayError> {
        Some(match self {
            FlightSqlError::Gateway(_) | FlightSqlError::Transport(_) => return None,
            FlightSqlError::Unauthenticated(_) => GatewayError::Authentication(String::new()),
            FlightSqlError::InvalidArgument(_) => {
                GatewayError::Sql(SqlError::semantic(String::new()))
            }
            FlightSqlError::UnknownStatement => GatewayError::InvalidHandle(String::new()),
            FlightSqlError::Cancelled => GatewayError::Sql(SqlError::Cancelled),
            FlightSqlError::Internal(_) => GatewayError::Internal(String::new()),
        })
    }

    /// The SQLSTATE a client is given, where Hive gives the failure one.
    pub fn sql_state(&self) -> Option<String> {
        match self {
            FlightSqlError::Gateway(e) => e.sql_state().map(str::to_string),
            FlightSqlError::Transport(_) => Some(TRANSPORT_SQLSTATE.to_string()),
            other => other
                .hive_equivalent()
                .and_then(|e| e.sql_state().map(str::to_string)),
        }
    }

    /// Hive's error code for the failure, 0 where there is none.
    pub fn error_code(&self) -> i32 {
        match self {
            FlightSqlError::Gateway(e) => e.error_code(),
            FlightSqlError::Transport(_) => 0,
            other => other
                .hive_equivalent()
                .map(|e| e.error_code())
                .unwrap_or_default(),
        }
    }

    /// The gRPC status code of the failure.
    pub fn grpc_code(&self) -> Code {
        match self {
            FlightSqlError::Gateway(e) => match e {
                GatewayError::InvalidHandle(_) => Code::NotFound,
                GatewayError::Timeout(_) => Code::DeadlineExceeded,
                GatewayError::Busy(_) => Code::ResourceExhausted,
                GatewayError::Unsupported(_) => Code::Unimplemented,
                GatewayError::Internal(_) => Code::Internal,
                GatewayError::InvalidState(_) => Code::FailedPrecondition,
                GatewayError::Authentication(_) => Code::Unauthenticated,
                GatewayError::Proxy(_) => Code::PermissionDenied,
                GatewayError::Sql(SqlError::Cancelled) => Code::Cancelled,
                GatewayError::Sql(_) | GatewayError::Failed(_) | GatewayError::Refused(_) => {
                    Code::InvalidArgument
                }
            },
            FlightSqlError::Unauthenticated(_) => Code::Unauthenticated,
            FlightSqlError::InvalidArgument(_) => Code::InvalidArgument,
            FlightSqlError::UnknownStatement => Code::NotFound,
            FlightSqlError::Cancelled => Code::Cancelled,
            FlightSqlError::Internal(_) => Code::Internal,
            FlightSqlError::Transport(s) => s.code(),
        }
    }
}

/// The one place a Flight SQL failure becomes a gRPC status: its code, the message the client
/// reads, and in the status's metadata the SQLSTATE ([`SQLSTATE_KEY`], when Hive gives one)
/// and Hive's error code ([`ERROR_CODE_KEY`], always, 0 where there is none), as
/// HiveServer2's `TStatus` carries them.
impl From<FlightSqlError> for Status {
    fn from(e: FlightSqlError) -> Self {
        let mut status = Status::new(e.grpc_code(), e.to_string());
        let metadata = status.metadata_mut();
        if let Some(state) = e
            .sql_state()
            .and_then(|s| AsciiMetadataValue::try_from(s).ok())
        {
            metadata.insert(SQLSTATE_KEY, state);
        }
        metadata.insert(ERROR_CODE_KEY, MetadataValue::from(e.error_code()));
        status
    }
}

/// An error out of Arrow's Flight encoder or decoder: one of ours that travelled through it
/// ([`FlightSqlError::into_flight`]) comes back unchanged, a status tonic gave for the
/// client's stream is a [`FlightSqlError::Transport`], anything else (a batch that could not
/// be encoded) is internal.
impl From<FlightError> for FlightSqlError {
    fn from(e: FlightError) -> Self {
        match e {
            FlightError::ExternalError(inner) => match inner.downcast::<FlightSqlError>() {
                Ok(ours) => *ours,
                Err(other) => FlightSqlError::Internal(other.to_string()),
            },
            FlightError::Tonic(status) => FlightSqlError::Transport(status),
            other => FlightSqlError::Internal(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apiary_gateway::OperationError;

    /// The text of a metadata value of `status`.
    fn meta<'a>(status: &'a Status, key: &str) -> Option<&'a str> {
        status.metadata().get(key).and_then(|v| v.to_str().ok())
    }

    #[test]
    fn a_cancelled_query_is_cancelled_with_hive_sqlstate_and_code() {
        let s = Status::from(FlightSqlError::Cancelled);
        assert_eq!(s.code(), Code::Cancelled);
        assert_eq!(s.message(), "Query was cancelled");
        assert_eq!(meta(&s, SQLSTATE_KEY), Some("HY008"));
        assert_eq!(meta(&s, ERROR_CODE_KEY), Some("1000"));
        // The same words as the gateway's cancelled query, whichever front end reports it.
        let gw = GatewayError::Sql(SqlError::Cancelled);
        assert_eq!(s.message(), gw.message());
        assert_eq!(meta(&s, SQLSTATE_KEY), gw.sql_state());
        assert_eq!(
            meta(&s, ERROR_CODE_KEY),
            Some(gw.error_code().to_string().as_str())
        );
        let from_gateway = Status::from(FlightSqlError::from(gw));
        assert_eq!(from_gateway.code(), Code::Cancelled);
        assert_eq!(meta(&from_gateway, SQLSTATE_KEY), Some("HY008"));
    }

    #[test]
    fn a_gateway_error_carries_its_sqlstate_and_code() {
        let e = GatewayError::Sql(SqlError::TableNotFound("'no_such_table'".into()));
        let message = e.message();
        let s = Status::from(FlightSqlError::from(e));
        assert_eq!(s.code(), Code::InvalidArgument);
        assert_eq!(s.message(), message);
        assert!(
            s.message().contains("Table not found 'no_such_table'"),
            "{}",
            s.message()
        );
        assert_eq!(meta(&s, SQLSTATE_KEY), Some("42S02"));
        assert_eq!(meta(&s, ERROR_CODE_KEY), Some("10001"));

        let failed = GatewayError::Failed(OperationError {
            message: "Error while processing statement: FAILED".into(),
            sql_state: Some("08S01".into()),
            code: 2,
        });
        let s = Status::from(FlightSqlError::from(failed));
        assert_eq!(s.code(), Code::InvalidArgument);
        assert_eq!(s.message(), "Error while processing statement: FAILED");
        assert_eq!(meta(&s, SQLSTATE_KEY), Some("08S01"));
        assert_eq!(meta(&s, ERROR_CODE_KEY), Some("2"));

        let s = Status::from(FlightSqlError::from(GatewayError::Timeout(5)));
        assert_eq!(s.code(), Code::DeadlineExceeded);
        assert_eq!(meta(&s, SQLSTATE_KEY), Some("HYT00"));
        assert_eq!(meta(&s, ERROR_CODE_KEY), Some("10320"));

        // No SQLSTATE where Hive gives none; the code is still sent, 0, as HiveServer2 does.
        let s = Status::from(FlightSqlError::from(GatewayError::InvalidHandle(
            "Invalid OperationHandle".into(),
        )));
        assert_eq!(s.code(), Code::NotFound);
        assert_eq!(meta(&s, SQLSTATE_KEY), None);
        assert_eq!(meta(&s, ERROR_CODE_KEY), Some("0"));
    }

    #[test]
    fn an_authentication_failure_is_unauthenticated_with_its_sqlstate() {
        let s = Status::from(FlightSqlError::unauthenticated(
            "invalid or expired bearer token",
        ));
        assert_eq!(s.code(), Code::Unauthenticated);
        assert_eq!(s.message(), "invalid or expired bearer token");
        assert_eq!(meta(&s, SQLSTATE_KEY), Some("08S01"));
        assert_eq!(meta(&s, ERROR_CODE_KEY), Some("0"));
        // A login the gateway refused says the same, in Hive's words.
        let s = Status::from(FlightSqlError::from(GatewayError::Authentication(
            "wrong password".into(),
        )));
        assert_eq!(s.code(), Code::Unauthenticated);
        assert_eq!(s.message(), "Error validating the login");
        assert_eq!(meta(&s, SQLSTATE_KEY), Some("08S01"));
        assert_eq!(meta(&s, ERROR_CODE_KEY), Some("0"));
    }

    #[test]
    fn failures_of_the_front_end_take_the_gateway_words_for_the_same_failure() {
        let s = Status::from(FlightSqlError::invalid_argument("unknown action \"X\""));
        assert_eq!(s.code(), Code::InvalidArgument);
        assert_eq!(meta(&s, SQLSTATE_KEY), Some("42000"));
        assert_eq!(meta(&s, ERROR_CODE_KEY), Some("40000"));

        let s = Status::from(FlightSqlError::UnknownStatement);
        assert_eq!(s.code(), Code::NotFound);
        assert!(s.message().starts_with("Invalid OperationHandle"));
        assert_eq!(meta(&s, SQLSTATE_KEY), None);
        assert_eq!(meta(&s, ERROR_CODE_KEY), Some("0"));

        let s = Status::from(FlightSqlError::internal("no SQL info"));
        assert_eq!(s.code(), Code::Internal);
        assert_eq!(s.message(), "no SQL info");
        assert_eq!(meta(&s, SQLSTATE_KEY), Some("HY000"));
        assert_eq!(meta(&s, ERROR_CODE_KEY), Some("0"));
    }

    #[test]
    fn errors_travel_through_the_flight_encoder_unchanged() {
        let back = FlightSqlError::from(FlightSqlError::Cancelled.into_flight());
        assert!(matches!(back, FlightSqlError::Cancelled), "{back:?}");
        let back =
            FlightSqlError::from(FlightSqlError::from(GatewayError::Timeout(3)).into_flight());
        assert!(
            matches!(back, FlightSqlError::Gateway(GatewayError::Timeout(3))),
            "{back:?}"
        );

        let arrow = FlightError::Arrow(arrow::error::ArrowError::ComputeError("bad".into()));
        let s = Status::from(FlightSqlError::from(arrow));
        assert_eq!(s.code(), Code::Internal);
        assert_eq!(meta(&s, SQLSTATE_KEY), Some("HY000"));

        let tonic = FlightError::Tonic(Box::new(Status::unavailable("the client went away")));
        let s = Status::from(FlightSqlError::from(tonic));
        assert_eq!(s.code(), Code::Unavailable);
        assert_eq!(s.message(), "the client went away");
        assert_eq!(meta(&s, SQLSTATE_KEY), Some("08S01"));
        assert_eq!(meta(&s, ERROR_CODE_KEY), Some("0"));
    }
}
