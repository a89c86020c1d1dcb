//! Errors of the statement layer, with the SQLSTATE and error code Hive gives each.

use apiary_metastore::MetastoreError;
use datafusion::error::DataFusionError;

pub use crate::hive_errors::HiveError;

/// Why a statement failed. `Display` is the detail; [`SqlError::hive_message`] is the whole text
/// a Hive client sees.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    /// The statement does not parse.
    #[error("ParseException line {line}:{column} {detail}")]
    Parse {
        /// 1-based line of the error.
        line: u64,
        /// 0-based column, as Hive counts.
        column: u64,
        /// What the parser expected.
        detail: String,
    },
    /// A table or view that does not exist, named as Hive names it: quoted where a query
    /// names it (`'t'`), as written where DDL does (`t`, `db.t`).
    #[error("SemanticException [Error 10001]: Table not found {0}")]
    TableNotFound(String),
    /// A database that does not exist.
    #[error("SemanticException [Error 10072]: Database does not exist: {0}")]
    DatabaseNotFound(String),
    /// A column reference that resolves to nothing.
    #[error("SemanticException [Error 10004]: Invalid table alias or column reference '{0}'")]
    ColumnNotFound(String),
    /// A function that does not exist.
    #[error("SemanticException [Error 10011]: Invalid function {0}")]
    FunctionNotFound(String),
    /// Any other error found while compiling: with Hive's code when it has one (the text is
    /// built from [`HiveError`]'s table by [`SqlError::hive`]), without one (Hive's 40000)
    /// otherwise.
    #[error("SemanticException {}{message}", error.map(|e| format!("[Error {}]: ", e.code())).unwrap_or_default())]
    Semantic {
        /// Hive's error code.
        error: Option<HiveError>,
        /// The message after the code.
        message: String,
    },
    /// A configuration key a session may not change (`hive.conf.restricted.list`, or a key
    /// the server reads only at start-up), as Hive's `IllegalArgumentException` words it.
    #[error("Cannot modify {0} at runtime. It is in the list of parameters that can't be modified at runtime or is prefixed by a restricted variable")]
    Restricted(String),
    /// The server does not let the statement do this (a path outside
    /// `apiary.fs.allowed.paths`, ...), as Hive's authorization denials read.
    #[error("HiveAccessControlException Permission denied: {0}")]
    Denied(String),
    /// A statement Apiary understands but does not support.
    #[error("SemanticException [Error 10294]: {0}")]
    Unsupported(String),
    /// Failure while running the query (Hive's return code 2), with the error that caused it.
    #[error("{detail}")]
    Execution {
        /// What the client sees after Hive's prefix.
        detail: String,
        /// The underlying error (DataFusion's, the file system's, a handler's), kept for logs
        /// and for callers that look at it.
        #[source]
        cause: Option<Cause>,
    },
    /// The query was cancelled.
    #[error("Query was cancelled")]
    Cancelled,
    /// Variable substitution was refused (too deep, too long), as Hive's IllegalStateException.
    #[error("{0}")]
    Substitution(String),
    /// A DDL task failed (Hive's DDLTask, return code 1): the object exists, is missing, ...
    #[error("{detail}")]
    Ddl {
        /// What the client sees after Hive's prefix.
        detail: String,
        /// The underlying error (a handler's, the file system's), if any.
        #[source]
        cause: Option<Cause>,
    },
    /// The metastore refused or failed a change: a DDL task's error, worded as Hive's
    /// metastore exceptions (`AlreadyExistsException(message:..)`).
    #[error("{}", metastore_text(.0))]
    Metastore(#[from] MetastoreError),
}

/// An error kept as the cause of a [`SqlError`].
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A metastore error in the words of Hive's metastore exceptions.
fn metastore_text(e: &MetastoreError) -> String {
    use MetastoreError as M;
    match e {
        M::AlreadyExists(what) => format!("AlreadyExistsException(message:{what} already exists)"),
        M::NoSuchObject(what) => format!("NoSuchObjectException(message:{what} does not exist)"),
        M::InvalidOperation(m) => format!("InvalidOperationException(message:{m})"),
        M::InvalidObject(m) => format!("InvalidObjectException(message:{m})"),
        other => format!("MetaException(message:{other})"),
    }
}

impl From<apiary_storage::StorageError> for SqlError {
    fn from(e: apiary_storage::StorageError) -> Self {
        SqlError::execution_caused(format!("org.apache.hadoop.hive.ql.exec.MoveTask. {e}"), e)
    }
}

impl SqlError {
    /// A DDL task's error with no underlying error.
    pub fn ddl(detail: impl Into<String>) -> Self {
        SqlError::Ddl {
            detail: detail.into(),
            cause: None,
        }
    }

    /// A DDL task's error caused by `cause`.
    pub fn ddl_caused(
        detail: impl Into<String>,
        cause: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        SqlError::Ddl {
            detail: detail.into(),
            cause: Some(Box::new(cause)),
        }
    }

    /// An execution error with no underlying error.
    pub fn execution(detail: impl Into<String>) -> Self {
        SqlError::Execution {
            detail: detail.into(),
            cause: None,
        }
    }

    /// An execution error caused by `cause`.
    pub fn execution_caused(
        detail: impl Into<String>,
        cause: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        SqlError::Execution {
            detail: detail.into(),
            cause: Some(Box::new(cause)),
        }
    }

    /// A semantic error with Hive's `error` code: the code's text, then `detail` (which brings
    /// its own separator: `" name"`, `": x"`).
    pub fn hive(error: HiveError, detail: impl Into<String>) -> Self {
        SqlError::Semantic {
            error: Some(error),
            message: format!("{}{}", error.text(), detail.into()),
        }
    }

    /// [`SqlError::hive`] with the statement position Hive puts before the text
    /// (`"Line 1:12 "`).
    pub fn hive_at(error: HiveError, position: &str, detail: impl Into<String>) -> Self {
        SqlError::Semantic {
            error: Some(error),
            message: format!("{position}{}{}", error.text(), detail.into()),
        }
    }

    /// A semantic error Hive reports without a code of its own (40000 on the wire).
    pub fn semantic(message: String) -> Self {
        SqlError::Semantic {
            error: None,
            message,
        }
    }

    /// Hive's SQLSTATE for the error.
    pub fn sql_state(&self) -> &'static str {
        match self {
            SqlError::TableNotFound(_) => "42S02",
            SqlError::Execution { .. } => "08S01",
            SqlError::Cancelled => "HY008",
            SqlError::Ddl { .. } | SqlError::Metastore(_) => "08S01",
            _ => "42000",
        }
    }

    /// Hive's numeric error code.
    pub fn error_code(&self) -> i32 {
        match self {
            SqlError::Semantic { error: Some(e), .. } => e.wire_code(),
            SqlError::Parse { .. }
            | SqlError::Semantic { .. }
            | SqlError::Substitution(_)
            | SqlError::Denied(_) => 40000,
            SqlError::Restricted(_) => 1,
            SqlError::TableNotFound(_) => 10001,
            SqlError::ColumnNotFound(_) => 10004,
            SqlError::FunctionNotFound(_) => 10011,
            SqlError::DatabaseNotFound(_) => 10072,
            SqlError::Unsupported(_) => 10294,
            SqlError::Execution { .. } => 2,
            SqlError::Cancelled => 1000,
            SqlError::Ddl { .. } | SqlError::Metastore(_) => 1,
        }
    }

    /// The message as HiveServer2 words it.
    pub fn hive_message(&self) -> String {
        match self {
            // A row an enabled NOT NULL or CHECK constraint refuses, however the writer
            // that met it reported it: as Hive reports it.
            SqlError::Execution { detail, .. }
                if detail.contains(apiary_hive_functions::CONSTRAINT_VIOLATED) =>
            {
                format!(
                    "Error while processing statement: FAILED: Execution Error, return code 2 from org.apache.hadoop.hive.ql.exec.tez.TezTask. org.apache.hadoop.hive.ql.exec.errors.DataConstraintViolationError: {}",
                    apiary_hive_functions::CONSTRAINT_VIOLATED
                )
            }
            SqlError::Execution { detail, .. } => {
                format!("Error while processing statement: FAILED: Execution Error, return code 2 from {detail}")
            }
            SqlError::Cancelled => "Query was cancelled".to_string(),
            SqlError::Restricted(_) => format!("Error while processing statement: {self}"),
            SqlError::Substitution(detail) => {
                format!("Error running query: java.lang.IllegalStateException: {detail}")
            }
            SqlError::Ddl { .. } | SqlError::Metastore(_) => format!("Error while processing statement: FAILED: Execution Error, return code 1 from org.apache.hadoop.hive.ql.ddl.DDLTask. {self}"),
            other => format!("Error while compiling statement: FAILED: {other}"),
        }
    }

    /// A compile-time error from DataFusion, classified the way Hive reports it.
    pub fn from_planning(e: DataFusionError) -> SqlError {
        let root = e.find_root();
        if let DataFusionError::NotImplemented(what) = root {
            return SqlError::Unsupported(what.clone());
        }
        let e = root.clone_message();
        classify_plan_error(&e)
    }

    /// A runtime error from DataFusion.
    pub fn from_execution(e: DataFusionError) -> SqlError {
        let root = e.find_root();
        let hint = if matches!(root, DataFusionError::ResourcesExhausted(_)) {
            " (the query needs more memory than the server's query memory pool, apiary.memory.pool.size, allows, even after spilling to disk)"
        } else {
            ""
        };
        let message = root.clone_message();
        let detail = format!("org.apache.apiary.exec.DataFusionTask. {message}{hint}");
        SqlError::execution_caused(detail, e)
    }
}

/// Helper: DataFusion's message without its `Error during planning:` style prefix.
trait CloneMessage {
    fn clone_message(&self) -> String;
}

impl CloneMessage for DataFusionError {
    fn clone_message(&self) -> String {
        match self {
            DataFusionError::Plan(m)
            | DataFusionError::Execution(m)
            | DataFusionError::NotImplemented(m)
            | DataFusionError::Internal(m) => m.clone(),
            DataFusionError::SchemaError(e, _) => e.to_string(),
            DataFusionError::SQL(e, _) => e.to_string(),
            other => other.to_string(),
        }
    }
}

/// DataFusion's account of a call no signature takes, without its advice to report a bug:
/// the call with its argument types and the candidates, when it gives them.
fn signature_detail(msg: &str) -> String {
    let from = msg
        .find("No function matches")
        .or_else(|| msg.find("Failed to coerce"))
        .unwrap_or(0);
    msg[from..]
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("This issue was likely caused by a bug"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn classify_plan_error(msg: &str) -> SqlError {
    // DataFusion: "table 'hive.default.t' not found"
    if let Some(rest) = msg.strip_prefix("table '") {
        if let Some(name) = rest.strip_suffix("' not found") {
            let short = name.rsplit('.').next().unwrap_or(name);
            return SqlError::TableNotFound(format!("'{short}'"));
        }
    }
    // DataFusion: "No field named x. Valid fields are ..." / "No field named t.x ..."
    if let Some(rest) = msg.strip_prefix("No field named ") {
        let col = rest
            .split(". Valid")
            .next()
            .unwrap_or(rest)
            .trim_end_matches('.');
        return SqlError::ColumnNotFound(col.replace('"', ""));
    }
    // DataFusion: "Invalid function 'foo'.\nDid you mean ..."
    if let Some(rest) = msg.strip_prefix("Invalid function '") {
        let name = rest.split('\'').next().unwrap_or(rest);
        return SqlError::FunctionNotFound(name.to_string());
    }
    // Hive's functions say in plain text what Hive gives a code for.
    if let Some((_, detail)) = msg.split_once(apiary_hive_functions::UDTF_ALIAS_MISMATCH) {
        return SqlError::hive(HiveError::UdtfAliasMismatch, detail.to_string());
    }
    if let Some(detail) = msg.strip_prefix(apiary_hive_functions::WRONG_ARGUMENTS) {
        return SqlError::hive(HiveError::WrongArguments, detail.to_string());
    }
    if msg.starts_with(apiary_hive_functions::UDTF_MULTIPLE_EXPRESSIONS) {
        return SqlError::hive(HiveError::UdtfMultipleExpressions, "");
    }
    if msg.contains(apiary_hive_functions::PERCENTILE_OUT_OF_RANGE) {
        return SqlError::Semantic {
            error: None,
            message: apiary_hive_functions::PERCENTILE_OUT_OF_RANGE.into(),
        };
    }
    // A function of ours given too few or too many arguments (Hive's checkArgsSize text).
    if let Some((name, _)) = msg
        .split_once(" requires ")
        .filter(|_| msg.contains(" argument(s), got "))
    {
        return SqlError::hive(
            HiveError::ArgumentsLengthMismatch,
            format!(" '{name}': {msg}"),
        );
    }
    // DataFusion: no signature of the function takes these arguments.
    for marker in [
        "No function matches the given name and argument types '",
        "Failed to coerce arguments to satisfy a call to '",
        "Function '",
    ] {
        if let Some(rest) = msg.split_once(marker).map(|(_, r)| r) {
            let Some((name, _)) = rest.split_once(['\'', '(']) else {
                continue;
            };
            if marker == "Function '" && !msg.contains("failed to match any signature") {
                continue;
            }
            return SqlError::hive(
                HiveError::WrongArguments,
                format!(" '{name}': {}", signature_detail(msg)),
            );
        }
    }
    if msg.starts_with("Unsupported")
        || msg.contains("not supported")
        || msg.contains("Unsupported")
    {
        return SqlError::Unsupported(msg.to_string());
    }
    SqlError::hive(HiveError::Generic, msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datafusion_errors_map_to_hive() {
        let e = SqlError::from_planning(DataFusionError::Plan(
            "table 'hive.default.nope' not found".into(),
        ));
        assert_eq!(e.sql_state(), "42S02");
        assert_eq!(
            e.hive_message(),
            "Error while compiling statement: FAILED: SemanticException [Error 10001]: Table not found 'nope'"
        );
        let e = SqlError::Parse {
            line: 1,
            column: 7,
            detail: "cannot recognize input near 'x'".into(),
        };
        assert_eq!(e.sql_state(), "42000");
        assert!(e.hive_message().contains("ParseException line 1:7"));
    }

    #[test]
    fn a_functions_plain_error_gets_its_hive_code() {
        let e = SqlError::from_planning(DataFusionError::Plan(format!(
            "hive_struct_field: {} expected 2 aliases but got 1",
            apiary_hive_functions::UDTF_ALIAS_MISMATCH
        )));
        assert_eq!(e.error_code(), 10083);
        assert!(
            e.hive_message()
                .ends_with("output by the UDTF expected 2 aliases but got 1"),
            "{}",
            e.hive_message()
        );
    }

    #[test]
    fn causes_are_kept_behind_hive_texts() {
        use std::error::Error as _;
        let e = SqlError::from_execution(DataFusionError::ResourcesExhausted("pool".into()));
        assert_eq!(e.error_code(), 2);
        assert!(e.to_string().contains("apiary.memory.pool.size"));
        let cause = e.source().and_then(|c| c.downcast_ref::<DataFusionError>());
        assert!(matches!(
            cause,
            Some(DataFusionError::ResourcesExhausted(_))
        ));

        let e = SqlError::from(MetastoreError::AlreadyExists("Table default.t".into()));
        assert_eq!(
            e.hive_message(),
            "Error while processing statement: FAILED: Execution Error, return code 1 from org.apache.hadoop.hive.ql.ddl.DDLTask. AlreadyExistsException(message:Table default.t already exists)"
        );
        assert!(matches!(
            e,
            SqlError::Metastore(MetastoreError::AlreadyExists(_))
        ));
        assert!(e.source().is_some_and(|c| c.is::<MetastoreError>()));

        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        let e = SqlError::ddl_caused("cannot create /x: denied", io);
        assert_eq!(e.sql_state(), "08S01");
        assert!(e.source().is_some_and(|c| c.is::<std::io::Error>()));
    }
}
