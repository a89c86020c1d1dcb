//! The names of the functions Apiary's HiveQL rewrites put into plans (not for users: SHOW
//! FUNCTIONS leaves them out), the Hive functions a dialect turns into other expressions, and
//! the version Hive's `version()` answers.

/// `json_tuple`'s column: the top-level field `key` of a JSON object, as text.
pub const JSON_FIELD: &str = "hive_json_field";
/// `inline`'s column: the field at a position of a struct.
pub const STRUCT_FIELD: &str = "hive_struct_field";

/// Name of the typing function the rewrite inserts.
pub const HIVE_TYPED: &str = "hive_typed";

/// Name of the function the rewrites put where Hive turns a value into text (concat's
/// arguments).
pub const HIVE_TO_STRING: &str = "hive_to_string";
/// The same for `CAST(x AS STRING)`, which writes a BOOLEAN as `TRUE`/`FALSE`.
pub const HIVE_CAST_TO_STRING: &str = "hive_cast_to_string";

/// Name of the function giving `replicate_rows`'s number of copies of a row.
pub const ROW_COPIES: &str = "hive_row_copies";

/// Name of the function the rewrites put before a cast of text to an integer type.
pub const HIVE_INTEGER_TEXT: &str = "hive_integer_text";

/// Hive's `enforce_constraint(cond)`: TRUE, or [`CONSTRAINT_VIOLATED`] when `cond` does not
/// hold. INSERT puts it over the rows of a table with enabled NOT NULL or CHECK constraints.
pub const ENFORCE_CONSTRAINT: &str = "enforce_constraint";

/// The error a row breaking an enabled NOT NULL or CHECK constraint gets (Hive's
/// `DataConstraintViolationError`).
pub const CONSTRAINT_VIOLATED: &str = "Either CHECK or NOT NULL constraint violated!";

/// Name of the function the dialect writes `INTERVAL value unit` as: `hive_interval(value,
/// 'unit')` (`'year to month'`, `'day'`, ..), a year-month or day-time interval.
pub const HIVE_INTERVAL: &str = "hive_interval";

/// Name of the function the rewrite of Hive's `matchpath` table function matches a
/// partition's rows with (`scalar::match_path`).
pub const MATCH_PATH: &str = "hive_matchpath";

/// Functions the rewrites insert, not for users (SHOW FUNCTIONS leaves them out).
pub const INTERNAL: &[&str] = &[
    HIVE_TYPED,
    HIVE_TO_STRING,
    HIVE_CAST_TO_STRING,
    HIVE_INTEGER_TEXT,
    ROW_COPIES,
    JSON_FIELD,
    STRUCT_FIELD,
    HIVE_INTERVAL,
    MATCH_PATH,
];

/// the endpoint answers as, so tools that read it (dbt-hive) see the Hive they talk to.
pub const HIVE_VERSION: &str = "3.1.3";

/// Hive's text for a UDTF given a number of aliases other than its number of columns (Hive's
/// error 10083); a caller that maps engine errors to Hive's codes recognises it.
pub const UDTF_ALIAS_MISMATCH: &str =
    "The number of aliases supplied in the AS clause does not match the number of columns output by the UDTF";

/// Hive's text for an exact percentile (`percentile`, `percentile_disc`) outside 0..1; a
/// caller that maps engine errors to Hive's codes recognises it (a SemanticException).
pub const PERCENTILE_OUT_OF_RANGE: &str = "Percentile value must be within the range of 0 to 1.";

/// Hive's text for a function given arguments it does not take (Hive's error 10014); the
/// table-generating functions start their errors with it.
pub const WRONG_ARGUMENTS: &str = "Wrong arguments";

/// Hive's text for a UDTF with other expressions in its select list (Hive's error 10081).
pub const UDTF_MULTIPLE_EXPRESSIONS: &str =
    "Only a single expression in the SELECT clause is supported with UDTF's";

/// What joins the names of `SELECT udtf(..) AS (a, b)` into the one alias the parser reads
/// (the dialect writes it, the generators split it).
pub const COLUMN_ALIASES: char = '\u{1f}';
