//! GetInfo: what the server says about itself to JDBC, ODBC and BI drivers.

use apiary_protocol::tcli::{
    TGetInfoResp, TGetInfoType as T, TGetInfoValue as V, TStatus, TStatusCode,
};

/// The server name GetInfo reports.
pub const SERVER_NAME: &str = "Apiary";
/// The DBMS name GetInfo reports: Hive's, since BI drivers pick their SQL flavour by it.
pub const DBMS_NAME: &str = "Apache Hive";
/// The Hive version whose behaviour Apiary follows.
pub const DBMS_VER: &str = "3.1.3";

fn value(t: T, user: &str) -> Option<V> {
    Some(match t {
        T::CLI_SERVER_NAME => V::StringValue(SERVER_NAME.into()),
        T::CLI_DBMS_NAME => V::StringValue(DBMS_NAME.into()),
        T::CLI_DBMS_VER => V::StringValue(DBMS_VER.into()),
        T::CLI_MAX_DRIVER_CONNECTIONS | T::CLI_MAX_CONCURRENT_ACTIVITIES => V::SmallIntValue(0),
        T::CLI_DATA_SOURCE_NAME => V::StringValue(String::new()),
        // SQL_FD_FETCH_NEXT
        T::CLI_FETCH_DIRECTION => V::IntegerBitmask(1),
        T::CLI_SEARCH_PATTERN_ESCAPE => V::StringValue("\\".into()),
        T::CLI_ACCESSIBLE_TABLES | T::CLI_ACCESSIBLE_PROCEDURES => V::StringValue("N".into()),
        // SQL_CB_CLOSE
        T::CLI_CURSOR_COMMIT_BEHAVIOR => V::SmallIntValue(1),
        T::CLI_DATA_SOURCE_READ_ONLY => V::StringValue("N".into()),
        T::CLI_DEFAULT_TXN_ISOLATION => V::IntegerFlag(0),
        // SQL_IC_LOWER: identifiers are case-insensitive and stored in lower case.
        T::CLI_IDENTIFIER_CASE => V::SmallIntValue(2),
        T::CLI_IDENTIFIER_QUOTE_CHAR => V::StringValue("`".into()),
        T::CLI_MAX_COLUMN_NAME_LEN
        | T::CLI_MAX_SCHEMA_NAME_LEN
        | T::CLI_MAX_TABLE_NAME_LEN
        | T::CLI_MAX_CATALOG_NAME_LEN
        | T::CLI_MAX_CURSOR_NAME_LEN => V::SmallIntValue(128),
        T::CLI_MAX_IDENTIFIER_LEN => V::SmallIntValue(128),
        // SQL_SCCO_READ_ONLY
        T::CLI_SCROLL_CONCURRENCY => V::IntegerBitmask(1),
        // SQL_TC_NONE
        T::CLI_TXN_CAPABLE => V::SmallIntValue(0),
        T::CLI_USER_NAME => V::StringValue(user.into()),
        T::CLI_TXN_ISOLATION_OPTION => V::IntegerBitmask(0),
        T::CLI_INTEGRITY => V::StringValue("N".into()),
        // SQL_GD_ANY_COLUMN | SQL_GD_ANY_ORDER
        T::CLI_GETDATA_EXTENSIONS => V::IntegerBitmask(3),
        // SQL_NC_LOW: NULLs sort first in ascending order, as Hive.
        T::CLI_NULL_COLLATION => V::SmallIntValue(1),
        // SQL_AT_ADD_COLUMN
        T::CLI_ALTER_TABLE => V::IntegerBitmask(1),
        T::CLI_ORDER_BY_COLUMNS_IN_SELECT => V::StringValue("N".into()),
        T::CLI_SPECIAL_CHARACTERS => V::StringValue(String::new()),
        T::CLI_MAX_COLUMNS_IN_GROUP_BY
        | T::CLI_MAX_COLUMNS_IN_INDEX
        | T::CLI_MAX_COLUMNS_IN_ORDER_BY
        | T::CLI_MAX_COLUMNS_IN_SELECT
        | T::CLI_MAX_COLUMNS_IN_TABLE
        | T::CLI_MAX_TABLES_IN_SELECT => V::SmallIntValue(0),
        T::CLI_MAX_INDEX_SIZE | T::CLI_MAX_ROW_SIZE | T::CLI_MAX_STATEMENT_LEN => V::IntegerFlag(0),
        T::CLI_MAX_USER_NAME_LEN => V::SmallIntValue(128),
        // SQL_OJ_LEFT | SQL_OJ_RIGHT | SQL_OJ_FULL | SQL_OJ_NESTED | SQL_OJ_NOT_ORDERED |
        // SQL_OJ_INNER | SQL_OJ_ALL_COMPARISON_OPS
        T::CLI_OJ_CAPABILITIES => V::IntegerBitmask(0x7f),
        T::CLI_XOPEN_CLI_YEAR => V::StringValue("1995".into()),
        T::CLI_CURSOR_SENSITIVITY => V::IntegerFlag(0),
        T::CLI_DESCRIBE_PARAMETER => V::StringValue("N".into()),
        T::CLI_CATALOG_NAME => V::StringValue("N".into()),
        T::CLI_COLLATION_SEQ => V::StringValue("UTF-8".into()),
        T::CLI_ODBC_KEYWORDS => V::StringValue(String::new()),
        _ => return None,
    })
}

/// Answers GetInfo; an unknown type is an ERROR with `infoValue` still set, as the wire requires.
pub fn get_info(t: T, user: &str) -> TGetInfoResp {
    match value(t, user) {
        Some(v) => TGetInfoResp {
            status: TStatus {
                status_code: TStatusCode::SUCCESS_STATUS,
                ..Default::default()
            },
            info_value: v,
        },
        None => TGetInfoResp {
            status: TStatus {
                status_code: TStatusCode::ERROR_STATUS,
                error_message: Some(format!("Unrecognized GetInfoType value: {}", t.0)),
                sql_state: Some("HY096".into()),
                error_code: Some(0),
                info_messages: None,
            },
            info_value: V::StringValue(String::new()),
        },
    }
}
