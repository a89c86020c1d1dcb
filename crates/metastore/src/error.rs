//! Errors of the metastore.

/// What went wrong in a metastore call.
#[derive(Debug, thiserror::Error)]
pub enum MetastoreError {
    /// The object to create exists already.
    #[error("{0} already exists")]
    AlreadyExists(String),
    /// The object named does not exist.
    #[error("{0} does not exist")]
    NoSuchObject(String),
    /// The object's definition is not valid (a name Hive's metastore refuses).
    #[error("{0}")]
    InvalidObject(String),
    /// The change is not allowed in the object's current state.
    #[error("{0}")]
    InvalidOperation(String),
    /// Another writer changed the catalog at the same time; the call may be retried.
    #[error("concurrent change to the catalog: {0}")]
    Conflict(String),
    /// A PostgreSQL transaction lost a serialization race with another server's and was
    /// rolled back; running it again may succeed (the backend retries it a few times first).
    #[error("concurrent change to the catalog: another server changed the same objects at the same time; retry")]
    Raced(#[source] tokio_postgres::Error),
    /// The backing database failed.
    #[error("metastore backend error: {0}")]
    Backend(String),
    /// A stored definition could not be read back.
    #[error("corrupt metastore entry {0}: {1}")]
    Corrupt(String, String),
}

impl From<rusqlite::Error> for MetastoreError {
    fn from(e: rusqlite::Error) -> Self {
        match &e {
            rusqlite::Error::SqliteFailure(f, _)
                if matches!(
                    f.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) =>
            {
                MetastoreError::Conflict(e.to_string())
            }
            _ => MetastoreError::Backend(e.to_string()),
        }
    }
}

impl From<tokio_postgres::Error> for MetastoreError {
    fn from(e: tokio_postgres::Error) -> Self {
        use tokio_postgres::error::SqlState;
        match e.code() {
            Some(c)
                if *c == SqlState::T_R_SERIALIZATION_FAILURE
                    || *c == SqlState::T_R_DEADLOCK_DETECTED =>
            {
                MetastoreError::Raced(e)
            }
            // Two servers creating the same name: the loser sees the primary key.
            Some(c) if *c == SqlState::UNIQUE_VIOLATION => {
                MetastoreError::AlreadyExists("The object (created concurrently)".into())
            }
            Some(c) if *c == SqlState::FOREIGN_KEY_VIOLATION => {
                MetastoreError::NoSuchObject("The database (dropped concurrently)".into())
            }
            _ => MetastoreError::Backend(match e.as_db_error() {
                Some(db) => db.message().to_string(),
                None => e.to_string(),
            }),
        }
    }
}
