//! HiveQL as Apiary parses it: sqlparser's Hive dialect, and what Hive accepts that it does
//! not: `ROLLUP(..)`, `CUBE(..)` and `GROUPING SETS (..)` in GROUP BY, and backslash escapes in
//! string literals (`'O\'Neil'`, `'a\tb'`, `'\\'`), which PyHive and impyla send for
//! parameters.

use std::any::TypeId;

use datafusion::sql::sqlparser::dialect::{Dialect, HiveDialect};

/// The dialect every HiveQL statement is parsed with.
#[derive(Debug, Default, Clone, Copy)]
pub struct HiveQl {
    hive: HiveDialect,
}

impl Dialect for HiveQl {
    // The parser asks "is this Hive?" of its dialect for Hive-only forms (INSERT OVERWRITE
    // TABLE, PARTITION, LOAD DATA ..): it is.
    fn dialect(&self) -> TypeId {
        TypeId::of::<HiveDialect>()
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.hive.is_delimited_identifier_start(ch)
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        self.hive.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        self.hive.is_identifier_part(ch)
    }

    fn supports_filter_during_aggregation(&self) -> bool {
        self.hive.supports_filter_during_aggregation()
    }

    fn supports_numeric_prefix(&self) -> bool {
        self.hive.supports_numeric_prefix()
    }

    fn require_interval_qualifier(&self) -> bool {
        self.hive.require_interval_qualifier()
    }

    fn supports_bang_not_operator(&self) -> bool {
        self.hive.supports_bang_not_operator()
    }

    fn supports_load_data(&self) -> bool {
        self.hive.supports_load_data()
    }

    fn supports_table_sample_before_alias(&self) -> bool {
        self.hive.supports_table_sample_before_alias()
    }

    fn supports_group_by_with_modifier(&self) -> bool {
        self.hive.supports_group_by_with_modifier()
    }

    fn supports_from_first_insert(&self) -> bool {
        self.hive.supports_from_first_insert()
    }

    fn supports_group_by_expr(&self) -> bool {
        true
    }

    fn supports_string_literal_backslash_escape(&self) -> bool {
        true
    }

    // `\_` and `\%` keep their backslash, so LIKE 'a\_b' matches a literal underscore.
    fn ignores_wildcard_escapes(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::sqlparser::parser::Parser;

    fn round_trip(sql: &str) -> String {
        Parser::parse_sql(&HiveQl::default(), sql).unwrap()[0].to_string()
    }

    #[test]
    fn hive_forms_still_parse_and_escapes_and_rollup_too() {
        assert_eq!(
            round_trip(r"SELECT 'O\'Neil', 'a\\b'"),
            "SELECT 'O''Neil', 'a\\b'"
        );
        assert!(round_trip("SELECT a FROM t GROUP BY ROLLUP (a)").contains("ROLLUP (a)"));
        assert!(round_trip("SELECT a FROM t GROUP BY a WITH ROLLUP").contains("WITH ROLLUP"));
        assert!(
            round_trip("INSERT OVERWRITE TABLE t PARTITION (p = 1) SELECT 1")
                .starts_with("INSERT OVERWRITE TABLE t PARTITION")
        );
    }
}
