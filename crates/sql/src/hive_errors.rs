//! Hive's error codes and their texts (as Hive's `ErrorMsg` pairs them), in one table. A
//! statement error carries its code as a field ([`crate::SqlError::Semantic`]), which becomes
//! the `errorCode` of the wire status; the text a client reads is built from this table:
//! `[Error <code>]: <position><text><detail>`, as Hive builds it. The SQLSTATE of every error
//! is chosen in one place, [`crate::SqlError::sql_state`]. A code whose text is empty here is
//! used with more than one message, each given whole at its one place of use.

/// One of Hive's error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HiveError {
    /// 10000: any other semantic error (Hive's GENERIC_ERROR).
    Generic,
    /// 10001.
    InvalidTable,
    /// 10002.
    InvalidColumn,
    /// 10006.
    InvalidPartition,
    /// 10028.
    InvalidPath,
    /// 10035.
    PartitionSpecOnUnpartitioned,
    /// 10036.
    DuplicateColumnNames,
    /// 10094.
    DynamicBeforeStatic,
    /// 10043.
    InvalidTableDdlSerde,
    /// 10044.
    TargetTableColumnMismatch,
    /// 10060.
    StoredByWithRowFormat,
    /// 10062.
    NeedPartitionColumns,
    /// 10065.
    CtasColumnList,
    /// 10068.
    CtasPartitioning,
    /// 10070.
    CtasExternalTable,
    /// 10074.
    ViewColumnCountMismatch,
    /// 10090.
    ViewAsTarget,
    /// 10098.
    NonPartitionColumnInSpec,
    /// 10014.
    WrongArguments,
    /// 10015.
    ArgumentsLengthMismatch,
    /// 10081.
    UdtfMultipleExpressions,
    /// 10083.
    UdtfAliasMismatch,
    /// 10087: a multi-insert writing one table (or partition) twice.
    DuplicateOutput,
    /// 10101.
    NonNativeLoad,
    /// 10131.
    DropTableOnView,
    /// 10134.
    DropViewOnTableOrAlterNonNative,
    /// 10146.
    TruncateNonManaged,
    /// 10147.
    TruncateNonNative,
    /// 10215.
    UnsetNonExistentProperty,
    /// 10241.
    NotPartitioned,
    /// 10305.
    UnknownFileFormat,
    /// 10325.
    InvalidForeignKey,
    /// 10326.
    InvalidConstraint,
}

impl HiveError {
    /// Every code, for the table's own checks.
    pub const ALL: [HiveError; 32] = [
        HiveError::Generic,
        HiveError::InvalidTable,
        HiveError::InvalidColumn,
        HiveError::InvalidPartition,
        HiveError::InvalidPath,
        HiveError::PartitionSpecOnUnpartitioned,
        HiveError::DuplicateColumnNames,
        HiveError::InvalidTableDdlSerde,
        HiveError::TargetTableColumnMismatch,
        HiveError::StoredByWithRowFormat,
        HiveError::NeedPartitionColumns,
        HiveError::CtasColumnList,
        HiveError::CtasPartitioning,
        HiveError::CtasExternalTable,
        HiveError::ViewColumnCountMismatch,
        HiveError::ViewAsTarget,
        HiveError::NonPartitionColumnInSpec,
        HiveError::WrongArguments,
        HiveError::ArgumentsLengthMismatch,
        HiveError::UdtfMultipleExpressions,
        HiveError::UdtfAliasMismatch,
        HiveError::DuplicateOutput,
        HiveError::NonNativeLoad,
        HiveError::DropTableOnView,
        HiveError::DropViewOnTableOrAlterNonNative,
        HiveError::TruncateNonManaged,
        HiveError::TruncateNonNative,
        HiveError::UnsetNonExistentProperty,
        HiveError::NotPartitioned,
        HiveError::UnknownFileFormat,
        HiveError::InvalidForeignKey,
        HiveError::InvalidConstraint,
    ];

    /// The code and the text Hive gives it (details follow the text).
    fn entry(self) -> (i32, &'static str) {
        use HiveError as E;
        match self {
            E::Generic => (10000, ""),
            E::InvalidTable => (10001, "Table not found"),
            E::WrongArguments => (10014, apiary_hive_functions::WRONG_ARGUMENTS),
            E::ArgumentsLengthMismatch => (10015, "Arguments length mismatch"),
            E::UdtfMultipleExpressions => (10081, apiary_hive_functions::UDTF_MULTIPLE_EXPRESSIONS),
            E::UdtfAliasMismatch => (
                10083,
                apiary_hive_functions::UDTF_ALIAS_MISMATCH,
            ),
            E::InvalidColumn => (10002, "Invalid column reference"),
            E::InvalidPartition => (10006, "Partition not found"),
            // Two messages share this code here: an invalid path, and one matching no file.
            E::InvalidPath => (10028, ""),
            E::PartitionSpecOnUnpartitioned => {
                (10035, "Table is not partitioned but partition spec exists:")
            }
            E::DuplicateColumnNames => (10036, "Duplicate column name:"),
            E::DynamicBeforeStatic => (
                10094,
                "Dynamic partition cannot be the parent of a static partition",
            ),
            E::InvalidTableDdlSerde => (
                10043,
                "Either list of columns or a custom serializer should be specified",
            ),
            E::TargetTableColumnMismatch => (
                10044,
                "Cannot insert into target table because column number/types are different",
            ),
            E::StoredByWithRowFormat => (10060, "STORED BY cannot be used with ROW FORMAT or STORED AS"),
            E::NeedPartitionColumns => (
                10062,
                "Need to specify partition columns because the destination table is partitioned",
            ),
            E::CtasColumnList => (
                10065,
                "CREATE TABLE AS SELECT command cannot specify the list of columns for the target table",
            ),
            E::CtasPartitioning => (
                10068,
                "CREATE-TABLE-AS-SELECT does not support partitioning in the target table",
            ),
            E::CtasExternalTable => (10070, "CREATE-TABLE-AS-SELECT cannot create external table"),
            E::ViewColumnCountMismatch => (
                10074,
                "The number of columns produced by the SELECT clause does not match the number of column names specified by CREATE VIEW",
            ),
            E::ViewAsTarget => (10090, "A view cannot be used as target table for LOAD or INSERT"),
            E::NonPartitionColumnInSpec => {
                (10098, "Non-Partition column appears in the partition specification:")
            }
            E::DuplicateOutput => (10087, "The same output cannot be present multiple times: "),
            E::NonNativeLoad => (10101, "A non-native table cannot be used as target for LOAD"),
            E::DropTableOnView => (
                10131,
                "To drop a base table you need to use DROP TABLE instead of DROP VIEW",
            ),
            // Hive gives two messages this one code.
            E::DropViewOnTableOrAlterNonNative => (10134, ""),
            E::TruncateNonManaged => (10146, "Cannot truncate non-managed table"),
            E::TruncateNonNative => (10147, "Cannot truncate non-native table"),
            E::UnsetNonExistentProperty => (
                10215,
                "Please use the following syntax if not sure whether the property existed or not:\nALTER TABLE tableName UNSET TBLPROPERTIES IF EXISTS (key1, key2, ...)\n",
            ),
            E::NotPartitioned => (10241, ""),
            E::UnknownFileFormat => (10305, "Unrecognized file format in STORED AS clause:"),
            E::InvalidForeignKey => (10325, "Invalid Foreign Key syntax"),
            E::InvalidConstraint => (10326, "Invalid Constraint syntax"),
        }
    }

    /// Hive's numeric code, as the text shows it (`[Error 10000]`).
    pub fn code(self) -> i32 {
        self.entry().0
    }

    /// The code a wire status carries: Hive's own, except that Hive reports its generic
    /// semantic error as 40000.
    pub fn wire_code(self) -> i32 {
        match self {
            HiveError::Generic => 40000,
            other => other.code(),
        }
    }

    /// Hive's text for the code (what comes before the details).
    pub fn text(self) -> &'static str {
        self.entry().1
    }
}

#[cfg(test)]
mod tests {
    use super::HiveError;

    #[test]
    fn codes_are_distinct() {
        let mut codes: Vec<i32> = HiveError::ALL.iter().map(|e| e.code()).collect();
        codes.sort_unstable();
        let n = codes.len();
        codes.dedup();
        assert_eq!(codes.len(), n);
    }
}
