//! Hive's FROM-first statements, each body turned into the statement it means:
//!
//! ```sql
//! FROM src [JOIN ..]                                  -- any FROM clause, also a (FROM ..) subquery
//! INSERT OVERWRITE TABLE a [PARTITION (..)] SELECT k, count(1) WHERE .. GROUP BY k
//! INSERT INTO TABLE b SELECT v [LATERAL VIEW ..] ..;  -- one INSERT or several (a multi-insert)
//!
//! FROM src SELECT k WHERE ..;                         -- a query
//! ```
//!
//! A body's select list ends at its first clause (LATERAL VIEW, WHERE, GROUP BY, ..); the FROM
//! clause goes between them, so `FROM src INSERT INTO TABLE a SELECT k WHERE k > 1` is
//! `INSERT INTO TABLE a SELECT k FROM src WHERE k > 1`. A parenthesized query that is itself
//! FROM-first (`FROM (FROM src SELECT ..) t ..`) is rewritten the same way.

use super::lex::{lex, parse_err, Tok, Token};
use crate::error::SqlError;

/// One body of a FROM-first statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Body {
    /// `INSERT OVERWRITE TABLE a PARTITION (..)` as written, or None for a query.
    pub insert: Option<String>,
    /// The body's query with the FROM clause in its place.
    pub query: String,
}

impl Body {
    /// The whole statement: the INSERT's head and its query.
    pub fn text(&self) -> String {
        match &self.insert {
            Some(head) => format!("{head} {}", self.query),
            None => self.query.clone(),
        }
    }
}

/// The clauses that may follow a body's select list.
const CLAUSES: &[&str] = &[
    "lateral",
    "where",
    "group",
    "having",
    "window",
    "order",
    "sort",
    "cluster",
    "distribute",
    "limit",
];

/// The bodies of the FROM-first statement `sql` (which starts with FROM), in order.
pub fn bodies(sql: &str) -> Result<Vec<Body>, SqlError> {
    let toks = lex(sql)?;
    if !toks.first().is_some_and(|t| is_word(&t.tok, "from")) {
        return Err(parse_err(sql, 0, "cannot recognize input: expected FROM"));
    }
    let depth = depths(sql, &toks)?;
    let at0 = |i: usize, kw: &str| depth[i] == 0 && is_word(&toks[i].tok, kw);
    // The FROM clause runs to the first INSERT or SELECT outside parentheses.
    let Some(first) = (1..toks.len()).find(|&i| at0(i, "insert") || at0(i, "select")) else {
        return Err(parse_err(
            sql,
            sql.len(),
            "cannot recognize input near '<EOF>': expected INSERT or SELECT after the FROM clause",
        ));
    };
    if first == 1 {
        return Err(parse_err(
            sql,
            toks[1].start,
            "cannot recognize input: expected a table or subquery after FROM",
        ));
    }
    let from = nested(sql[toks[1].start..toks[first].start].trim())?;
    // Each body: [INSERT .. ] SELECT list [clauses], up to the next INSERT or SELECT.
    let mut starts = vec![];
    let mut awaiting_select = false;
    for i in first..toks.len() {
        if at0(i, "union") {
            return Err(SqlError::Unsupported(
                "UNION of FROM-first queries; put the UNION in a subquery of the FROM clause"
                    .into(),
            ));
        }
        if at0(i, "insert") {
            starts.push(i);
            awaiting_select = true;
        } else if at0(i, "select") {
            if awaiting_select {
                awaiting_select = false;
            } else {
                starts.push(i);
            }
        }
    }
    let mut out = vec![];
    for (n, &start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(toks.len());
        let Some(select) = (start..end).find(|&i| at0(i, "select")) else {
            let at = toks.get(end).map(|t| t.start).unwrap_or(sql.len());
            return Err(parse_err(
                sql,
                at,
                "cannot recognize input: expected SELECT after INSERT",
            ));
        };
        let insert = (select > start).then(|| {
            sql[toks[start].start..toks[select].start]
                .trim()
                .to_string()
        });
        // The select list ends at the body's first clause (`WITHIN GROUP` is no GROUP BY).
        let clause = (select + 1..end).find(|&i| {
            depth[i] == 0
                && CLAUSES.iter().any(|c| is_word(&toks[i].tok, c))
                && !(is_word(&toks[i].tok, "group") && is_word(&toks[i - 1].tok, "within"))
        });
        let text_end = toks.get(end).map(|t| t.start).unwrap_or(sql.len());
        let list_end = clause.map(|i| toks[i].start).unwrap_or(text_end);
        let list = nested(sql[toks[select].start..list_end].trim())?;
        let rest = nested(sql[list_end..text_end].trim())?;
        let query = if rest.is_empty() {
            format!("{list} FROM {from}")
        } else {
            format!("{list} FROM {from} {rest}")
        };
        out.push(Body { insert, query });
    }
    Ok(out)
}

/// `text` with every parenthesized FROM-first query in it rewritten (its one body).
fn nested(text: &str) -> Result<String, SqlError> {
    let toks = lex(text)?;
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i + 1 < toks.len() {
        if toks[i].tok == Tok::Punct('(') && is_word(&toks[i + 1].tok, "from") {
            let close = closing(text, &toks, i)?;
            let inner = &text[toks[i + 1].start..toks[close].start];
            let [body] = bodies(inner)?.try_into().map_err(|_: Vec<Body>| {
                parse_err(
                    text,
                    toks[i + 1].start,
                    "a subquery that starts with FROM holds one SELECT",
                )
            })?;
            if body.insert.is_some() {
                return Err(parse_err(
                    text,
                    toks[i + 1].start,
                    "cannot recognize input: INSERT inside a subquery",
                ));
            }
            out.push_str(&text[copied..toks[i].start]);
            out.push('(');
            out.push_str(&body.query);
            out.push(')');
            copied = toks[close].start + 1;
            i = close + 1;
        } else {
            i += 1;
        }
    }
    out.push_str(&text[copied..]);
    Ok(out)
}

/// The parenthesis depth before each token (an opening one counts inside).
fn depths(sql: &str, toks: &[Token]) -> Result<Vec<usize>, SqlError> {
    let mut depth = 0usize;
    let mut out = Vec::with_capacity(toks.len());
    for t in toks {
        match t.tok {
            Tok::Punct('(') => {
                out.push(depth);
                depth += 1;
            }
            Tok::Punct(')') => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| parse_err(sql, t.start, "cannot recognize input near ')'"))?;
                out.push(depth);
            }
            _ => out.push(depth),
        }
    }
    Ok(out)
}

/// The token closing the parenthesis opened at `open`.
fn closing(sql: &str, toks: &[Token], open: usize) -> Result<usize, SqlError> {
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate().skip(open) {
        match t.tok {
            Tok::Punct('(') => depth += 1,
            Tok::Punct(')') => {
                depth -= 1;
                if depth == 0 {
                    return Ok(i);
                }
            }
            _ => {}
        }
    }
    Err(parse_err(
        sql,
        sql.len(),
        "cannot recognize input near '<EOF>': expected ')'",
    ))
}

fn is_word(t: &Tok, kw: &str) -> bool {
    matches!(t, Tok::Word(w) if w.eq_ignore_ascii_case(kw))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(sql: &str) -> Vec<String> {
        bodies(sql).unwrap().iter().map(Body::text).collect()
    }

    #[test]
    fn a_multi_insert_becomes_one_insert_per_body() {
        let got = texts(
            "FROM src INSERT OVERWRITE TABLE a PARTITION (ds='1') SELECT key, count(1) WHERE key > 1 GROUP BY key \
             INSERT INTO TABLE b SELECT value",
        );
        assert_eq!(
            got,
            [
                "INSERT OVERWRITE TABLE a PARTITION (ds='1') SELECT key, count(1) FROM src WHERE key > 1 GROUP BY key",
                "INSERT INTO TABLE b SELECT value FROM src",
            ]
        );
    }

    #[test]
    fn a_query_a_join_and_lateral_views() {
        assert_eq!(
            texts("FROM src a JOIN src b ON (a.key = b.key) SELECT a.key, b.value LIMIT 3"),
            ["SELECT a.key, b.value FROM src a JOIN src b ON (a.key = b.key) LIMIT 3"]
        );
        assert_eq!(
            texts("from t insert overwrite table x select key, C lateral view explode(array(key)) A as C group by key"),
            ["insert overwrite table x select key, C FROM t lateral view explode(array(key)) A as C group by key"]
        );
        // WITHIN GROUP inside a select list is no GROUP BY.
        assert_eq!(
            texts("FROM t SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) WHERE x > 0"),
            ["SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM t WHERE x > 0"]
        );
    }

    #[test]
    fn subqueries_that_start_with_from() {
        assert_eq!(
            texts("FROM (FROM src s SELECT s.key AS k WHERE s.key < 5) t INSERT INTO TABLE a SELECT t.k"),
            ["INSERT INTO TABLE a SELECT t.k FROM (SELECT s.key AS k FROM src s WHERE s.key < 5) t"]
        );
        assert_eq!(
            texts("FROM (SELECT key FROM src UNION ALL SELECT key FROM src1) u SELECT count(1)"),
            ["SELECT count(1) FROM (SELECT key FROM src UNION ALL SELECT key FROM src1) u"]
        );
    }

    #[test]
    fn malformed() {
        assert!(bodies("FROM src").is_err());
        assert!(bodies("FROM INSERT INTO TABLE a SELECT 1").is_err());
        assert!(bodies("FROM src INSERT INTO TABLE a").is_err());
        assert!(bodies("FROM src SELECT 1 UNION ALL FROM src SELECT 2").is_err());
        assert!(bodies("FROM (src SELECT 1").is_err());
    }
}
