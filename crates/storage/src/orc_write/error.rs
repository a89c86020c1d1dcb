//! Why an ORC file could not be written.

/// Why an ORC file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OrcWriteError {
    /// A column's Arrow type has no ORC counterpart this writer writes.
    #[error("writing column {column} of type {data_type} to ORC is not supported: {reason}")]
    UnsupportedType {
        /// The column's path (`a`, `a.b`, `a.element`, `m.key`, `m.value`).
        column: String,
        /// The Arrow type.
        data_type: String,
        /// Why.
        reason: String,
    },
    /// A batch does not have the writer's schema.
    #[error("the batch does not match the ORC file's schema: {0}")]
    SchemaMismatch(String),
    /// An array's type differs from the one its column was built for.
    #[error("column {column}: unexpected array of type {data_type}")]
    ArrayMismatch {
        /// The column's path.
        column: String,
        /// The array's Arrow type.
        data_type: String,
    },
    /// A decimal's unscaled value has more digits than the column's precision.
    #[error(
        "column {column}: the decimal with unscaled value {unscaled} does not fit \
         decimal({precision},{scale})"
    )]
    Decimal {
        /// The column's path.
        column: String,
        /// The unscaled value.
        unscaled: i128,
        /// The column's precision.
        precision: u8,
        /// The column's scale.
        scale: i8,
    },
    /// A timestamp ORC cannot store: out of range, or in the last second before
    /// 1970-01-01 00:00:00 with a fraction of a millisecond or more, which ORC's readers misread
    /// (ORC-763).
    #[error(
        "column {column}: the timestamp {value} ({per_second} units a second from the epoch) \
         cannot be stored in ORC (out of range, or between 1969-12-31 23:59:59.001 and \
         1970-01-01 00:00:00, which ORC readers misread: ORC-763)"
    )]
    Timestamp {
        /// The column's path.
        column: String,
        /// The Arrow value.
        value: i64,
        /// Its units a second.
        per_second: i64,
    },
    /// An earlier call failed part-way (a value ORC cannot store, or an I/O error): the columns
    /// may hold different numbers of rows, so the writer takes nothing more and the file is
    /// incomplete.
    #[error("an earlier write to this ORC file failed; the file is incomplete")]
    Failed,
    /// The schema has more columns (counting nested ones) than ORC can number.
    #[error("the schema has too many columns for ORC")]
    TooManyColumns,
    /// Writing to the output failed.
    #[error("writing the ORC file failed: {0}")]
    Io(#[from] std::io::Error),
}
