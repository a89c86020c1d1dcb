//! Hive's time travel: `SELECT .. FROM t FOR SYSTEM_VERSION AS OF 3` and
//! `FOR SYSTEM_TIME AS OF '2026-12-01 10:00:00'` (Hive 4's syntax, for tables whose storage
//! keeps versions). The table is planned under a name that carries the state
//! ([`AsOf::table_name`]), which the catalog hands to the table's storage handler; the table's
//! own name stays its alias, so `t.col` still resolves.
//!
//! The time is read as a TIMESTAMP in UTC (Apiary's timestamps have no time zone), and the
//! table's last change at or before it is read.

use std::ops::ControlFlow;

use apiary_storage::handler::AsOf;
use arrow::array::timezone::Tz;
use chrono::TimeZone;
use datafusion::sql::sqlparser::ast::{
    Expr, Ident, ObjectNamePart, Statement, TableAlias, TableFactor, TableVersion, Value, VisitMut,
    VisitorMut,
};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace, Word};

use crate::dialect::syntax::{is_word, significant};
use crate::error::{HiveError, SqlError};

/// `FOR SYSTEM_VERSION AS OF` as the parser's `VERSION AS OF`; and `AT`, `BEFORE`, `CHANGES`
/// not followed by `(` as plain names (with table versioning on, the parser would take them
/// after a table name for Snowflake's versioning clauses, but in Hive they are just names:
/// `FROM attendance at`).
pub(crate) fn version_tokens(tokens: &mut [TokenWithSpan]) {
    let word = |t: &TokenWithSpan, w: &str| is_word(&t.token, w);
    let significant = significant(tokens);
    for (i, at) in significant.iter().enumerate() {
        let next_is_paren = significant
            .get(i + 1)
            .is_some_and(|n| tokens[*n].token == Token::LParen);
        if let Token::Word(w) = &mut tokens[*at].token {
            if w.quote_style.is_none()
                && matches!(w.keyword, Keyword::AT | Keyword::BEFORE | Keyword::CHANGES)
                && !next_is_paren
            {
                w.value = w.value.to_lowercase();
                w.quote_style = Some('`');
                w.keyword = Keyword::NoKeyword;
            }
        }
    }
    for w in significant.windows(4) {
        if word(&tokens[w[0]], "FOR")
            && word(&tokens[w[1]], "SYSTEM_VERSION")
            && word(&tokens[w[2]], "AS")
            && word(&tokens[w[3]], "OF")
        {
            tokens[w[0]].token = Token::Whitespace(Whitespace::Space);
            tokens[w[1]].token = Token::Word(Word {
                value: "VERSION".into(),
                quote_style: None,
                keyword: Keyword::VERSION,
            });
        }
    }
}

/// The session setting naming the time zone a timestamp's text is read in (Hive's; its
/// default, `LOCAL`, is the server's zone, which is UTC here).
pub(crate) const LOCAL_TIME_ZONE: &str = "hive.local.time.zone";

/// The zone `hive.local.time.zone` names (an IANA name or an offset), None for UTC.
pub(crate) fn zone_of(setting: Option<&str>) -> Result<Option<Tz>, SqlError> {
    match setting.map(str::trim) {
        None | Some("") => Ok(None),
        Some(z) if z.eq_ignore_ascii_case("LOCAL") => Ok(None),
        Some(z) => z.parse::<Tz>().map(Some).map_err(|_| {
            SqlError::hive(
                HiveError::Generic,
                format!("{LOCAL_TIME_ZONE}={z} names no time zone (an IANA name such as Europe/Oslo, or an offset such as +01:00)"),
            )
        }),
    }
}

/// Milliseconds since 1970-01-01 UTC of a TIMESTAMP's text, read in `zone` (UTC if None). A
/// local time a clock change skips names no instant; one it repeats is its earlier instant.
fn millis_of(text: &str, zone: Option<&Tz>) -> Option<i64> {
    let text = text.trim();
    let local = [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
    ]
    .iter()
    .find_map(|f| chrono::NaiveDateTime::parse_from_str(text, f).ok())
    .or_else(|| {
        chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .ok()
            .and_then(|d| d.and_hms_opt(0, 0, 0))
    })?;
    match zone {
        None => Some(local.and_utc().timestamp_millis()),
        Some(tz) => tz
            .from_local_datetime(&local)
            .earliest()
            .map(|t| t.timestamp_millis()),
    }
}

fn as_of(version: &TableVersion, zone: Option<&Tz>) -> Result<AsOf, SqlError> {
    let refused = |what: &str| {
        SqlError::hive(
            HiveError::Generic,
            format!("{what} takes a literal: FOR SYSTEM_VERSION AS OF <number>, FOR SYSTEM_TIME AS OF '<timestamp>'"),
        )
    };
    match version {
        TableVersion::VersionAsOf(Expr::Value(v)) => match &v.value {
            Value::Number(n, _) => n
                .parse()
                .map(AsOf::Version)
                .map_err(|_| refused("FOR SYSTEM_VERSION AS OF")),
            _ => Err(refused("FOR SYSTEM_VERSION AS OF")),
        },
        TableVersion::ForSystemTimeAsOf(e) | TableVersion::TimestampAsOf(e) => {
            let text = match e {
                Expr::Value(v) => match &v.value {
                    Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Some(s.as_str()),
                    _ => None,
                },
                Expr::TypedString(t) => match &t.value.value {
                    Value::SingleQuotedString(s) => Some(s.as_str()),
                    _ => None,
                },
                _ => None,
            };
            let text = text.ok_or_else(|| refused("FOR SYSTEM_TIME AS OF"))?;
            millis_of(text, zone).map(AsOf::Time).ok_or_else(|| {
                SqlError::hive(
                    HiveError::Generic,
                    format!(
                        "FOR SYSTEM_TIME AS OF: '{text}' is not a timestamp (yyyy-MM-dd HH:mm:ss) of the session's time zone"
                    ),
                )
            })
        }
        _ => Err(SqlError::Unsupported(
            "this form of table versioning; use FOR SYSTEM_VERSION AS OF or FOR SYSTEM_TIME AS OF"
                .into(),
        )),
    }
}

/// Plans each `t FOR SYSTEM_VERSION/SYSTEM_TIME AS OF ..` as the table's state, a time's text
/// read in the session's `hive.local.time.zone` (`zone`: its value, if set).
pub(crate) fn rewrite(statement: &mut Statement, zone: Option<&str>) -> Result<(), SqlError> {
    struct Versions(Option<SqlError>, Option<Tz>);
    impl VisitorMut for Versions {
        type Break = ();
        fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
            let TableFactor::Table {
                name,
                alias,
                version,
                ..
            } = factor
            else {
                return ControlFlow::Continue(());
            };
            let Some(v) = version.take() else {
                return ControlFlow::Continue(());
            };
            let state = match as_of(&v, self.1.as_ref()) {
                Ok(s) => s,
                Err(e) => {
                    self.0 = Some(e);
                    return ControlFlow::Break(());
                }
            };
            let Some(ObjectNamePart::Identifier(last)) = name.0.last_mut() else {
                return ControlFlow::Continue(());
            };
            if alias.is_none() {
                *alias = Some(TableAlias {
                    explicit: true,
                    name: Ident::new(last.value.clone()),
                    columns: vec![],
                    at: None,
                });
            }
            *last = Ident::with_quote('`', state.table_name(&last.value.to_lowercase()));
            ControlFlow::Continue(())
        }
    }
    let mut versions = Versions(None, zone_of(zone)?);
    let _ = statement.visit(&mut versions);
    versions.0.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_read_in_the_sessions_zone() {
        assert_eq!(millis_of("1970-01-01 00:00:01", None), Some(1000));
        assert_eq!(millis_of("1970-01-01 00:00:00.5", None), Some(500));
        assert_eq!(millis_of("1970-01-02", None), Some(86_400_000));
        assert_eq!(millis_of("yesterday", None), None);
        let tokyo = zone_of(Some("Asia/Tokyo")).unwrap();
        assert_eq!(millis_of("1970-01-01 09:00:00", tokyo.as_ref()), Some(0));
        let plus = zone_of(Some("+01:00")).unwrap();
        assert_eq!(millis_of("1970-01-01 01:00:00", plus.as_ref()), Some(0));
        assert!(zone_of(Some("LOCAL")).unwrap().is_none());
        assert!(zone_of(Some("Mars/Olympus")).is_err());
        // 02:30 on 2026-03-29 does not exist in Oslo (clocks go from 02:00 to 03:00).
        let oslo = zone_of(Some("Europe/Oslo")).unwrap();
        assert_eq!(millis_of("2026-03-29 02:30:00", oslo.as_ref()), None);
    }
}
