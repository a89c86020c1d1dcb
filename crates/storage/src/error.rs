//! Errors of the storage layer.

use std::path::Path;

/// What went wrong reading or writing table data.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// A column's declared type is not a Hive type Apiary knows.
    #[error("column {0}: unknown type {1}")]
    Type(String, String),
    /// A location could not be understood.
    #[error("invalid location {0}")]
    Location(String),
    /// The format or operation is not supported (yet).
    #[error("{0} is not supported")]
    Unsupported(String),
    /// Writing data failed.
    #[error("writing data failed: {0}")]
    Write(String),
    /// A file-system operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

impl StorageError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        StorageError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
