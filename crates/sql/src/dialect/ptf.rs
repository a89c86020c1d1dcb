//! Hive's partitioned table functions (PTFs) in FROM: `name(ON source [PARTITION BY | DISTRIBUTE
//! BY keys] [ORDER BY | SORT BY keys] arg(value), ..) [alias]`. Hive 4 ships two as built-ins,
//! and both are planned as queries DataFusion runs:
//!
//! - `windowingtablefunction`: the source's rows, partitioned and ordered (the table function
//!   Hive's own windowing runs on; its rows are the source's).
//! - `matchpath`: Hive's `MatchPath`. Its arguments are a pattern of symbols joined by `.`
//!   (each with `+` for one or more rows, `*` for any number), then a name and a condition per
//!   symbol, then, optionally, the result's select list as text. Within each partition, in
//!   order, every row a match of the pattern starts at gives one result row, over the columns
//!   of that row and `tpath`, the array of the rows matched. The matching is
//!   [`apiary_hive_functions::names::MATCH_PATH`]; the rest is SQL: the partition's rows are
//!   gathered with `array_agg(.. ORDER BY ..)`, each symbol's condition evaluated per row.
//!
//! The PTFs of Hive's test suite (`noop`, `noopwithmap`, `noopstreaming`,
//! `noopwithmapstreaming`) are no built-ins and are refused as invalid functions, as any other
//! name.
//!
//! The rewrite works on a statement's tokens, before it is parsed, since sqlparser has no
//! grammar for `ON` in a call; the source's columns come from planning `SELECT * FROM source`.

use datafusion::sql::sqlparser::ast::{Expr, Ident, OrderByExpr, TableFactor, Value};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::Parser;
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan};

use crate::dialect::syntax::{is_word, significant};
use crate::dialect::HiveQl;
use crate::error::SqlError;

/// One PTF call in a statement's tokens.
#[derive(Debug)]
pub(crate) struct Call {
    /// Its tokens: from the function's name to its alias or closing parenthesis, inclusive.
    from: usize,
    to: usize,
    name: String,
    source: TableFactor,
    partition: Vec<Expr>,
    order: Vec<OrderByExpr>,
    args: Vec<Expr>,
    alias: Option<Ident>,
}

/// The PTF calls in `tokens`, outermost only (one inside another's source is expanded when
/// that source is planned), in order.
pub(crate) fn calls(tokens: &[TokenWithSpan]) -> Result<Vec<Call>, SqlError> {
    let sig = significant(tokens);
    let mut found: Vec<Call> = Vec::new();
    for k in 0..sig.len().saturating_sub(2) {
        let (name, open, on) = (sig[k], sig[k + 1], sig[k + 2]);
        let Token::Word(word) = &tokens[name].token else {
            continue;
        };
        if tokens[open].token != Token::LParen || !is_word(&tokens[on].token, "on") {
            continue;
        }
        if found.last().is_some_and(|c| name <= c.to) {
            continue;
        }
        found.push(parse_call(
            tokens,
            name,
            word.value.to_ascii_lowercase(),
            on,
        )?);
    }
    Ok(found)
}

fn parse_call(
    tokens: &[TokenWithSpan],
    from: usize,
    name: String,
    on: usize,
) -> Result<Call, SqlError> {
    let rest = tokens[on + 1..].to_vec();
    let dialect = HiveQl::default();
    let mut p = Parser::new(&dialect).with_tokens_with_locations(rest);
    let parse = crate::dialect::parse_error;
    let source = p.parse_table_factor().map_err(parse)?;
    let mut partition = Vec::new();
    if p.parse_keywords(&[Keyword::PARTITION, Keyword::BY])
        || p.parse_keywords(&[Keyword::DISTRIBUTE, Keyword::BY])
    {
        partition = p.parse_comma_separated(Parser::parse_expr).map_err(parse)?;
    }
    let mut order = Vec::new();
    if p.parse_keywords(&[Keyword::ORDER, Keyword::BY])
        || p.parse_keywords(&[Keyword::SORT, Keyword::BY])
    {
        order = p
            .parse_comma_separated(Parser::parse_order_by_expr)
            .map_err(parse)?;
    }
    // Arguments: `name(value)`, the names only labels.
    let mut args = Vec::new();
    while matches!(p.peek_token().token, Token::Word(_)) {
        p.next_token();
        p.expect_token(&Token::LParen).map_err(parse)?;
        args.push(p.parse_expr().map_err(parse)?);
        p.expect_token(&Token::RParen).map_err(parse)?;
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    p.expect_token(&Token::RParen).map_err(parse)?;
    let mut to = on + 1 + p.get_current_index();
    let mut alias = None;
    let explicit = p.parse_keyword(Keyword::AS);
    if let Token::Word(w) = p.peek_token().token {
        if explicit || w.keyword == Keyword::NoKeyword || w.quote_style.is_some() {
            p.next_token();
            alias = Some(match w.quote_style {
                Some(q) => Ident::with_quote(q, w.value),
                None => Ident::new(w.value),
            });
            to = on + 1 + p.get_current_index();
        }
    }
    Ok(Call {
        from,
        to,
        name,
        source,
        partition,
        order,
        args,
        alias,
    })
}

/// `s` as a SQL string literal.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// A column's name as a back-quoted identifier.
fn column(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// Items joined by commas.
fn list(items: Vec<String>) -> String {
    items.join(", ")
}

/// A constant text argument.
fn text_arg(e: &Expr) -> Option<&str> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

fn semantic(name: &str, what: impl std::fmt::Display) -> SqlError {
    SqlError::semantic(format!("{name}: {what}"))
}

impl Call {
    /// Where its tokens start and end (inclusive).
    pub(crate) fn range(&self) -> (usize, usize) {
        (self.from, self.to)
    }

    /// The query whose columns are the source's.
    pub(crate) fn source_query(&self) -> String {
        format!("SELECT * FROM {}", self.source)
    }

    /// The SQL this call stands for, its source having `columns`.
    pub(crate) fn expand(&self, columns: &[String]) -> Result<String, SqlError> {
        let alias = self
            .alias
            .as_ref()
            .map_or_else(|| self.name.clone(), ToString::to_string);
        let order = list(self.order.iter().map(ToString::to_string).collect());
        match self.name.as_str() {
            "windowingtablefunction" => {
                if !self.args.is_empty() {
                    return Err(semantic(&self.name, "takes no arguments"));
                }
                let mut q = format!("SELECT * FROM {}", self.source);
                if !self.partition.is_empty() {
                    let keys = list(self.partition.iter().map(ToString::to_string).collect());
                    q.push_str(&format!(" DISTRIBUTE BY {keys}"));
                }
                if !order.is_empty() {
                    q.push_str(&format!(" SORT BY {order}"));
                }
                Ok(format!("({q}) {alias}"))
            }
            "matchpath" => self.match_path(columns, &order, &alias),
            _ => Err(SqlError::FunctionNotFound(self.name.clone())),
        }
    }

    fn match_path(&self, columns: &[String], order: &str, alias: &str) -> Result<String, SqlError> {
        let name = &self.name;
        let Some(pattern) = self.args.first().and_then(text_arg) else {
            return Err(semantic(
                name,
                "the first argument must be the pattern, a string constant",
            ));
        };
        let rest = &self.args[1..];
        let (symbols, result) = if rest.len() % 2 == 1 {
            let Some(result) = rest.last().and_then(text_arg) else {
                return Err(semantic(
                    name,
                    "the last argument must be the result's select list, a string constant",
                ));
            };
            (&rest[..rest.len() - 1], Some(result))
        } else {
            (rest, None)
        };
        if symbols.is_empty() {
            return Err(semantic(
                name,
                "at least one symbol and its condition are needed",
            ));
        }
        let mut names = Vec::new();
        let mut conditions = Vec::new();
        for pair in symbols.chunks(2) {
            let Some(symbol) = text_arg(&pair[0]) else {
                return Err(semantic(name, "a symbol's name must be a string constant"));
            };
            names.push(symbol.to_ascii_lowercase());
            conditions.push(format!("coalesce({}, false)", pair[1]));
        }
        let mut steps = Vec::new();
        for step in pattern.split('.') {
            let step = step.trim();
            let (symbol, times) = match step.strip_suffix(['+', '*']) {
                Some(s) => (s, &step[s.len()..]),
                None => (step, ""),
            };
            let Some(at) = names.iter().position(|n| n.eq_ignore_ascii_case(symbol)) else {
                return Err(semantic(
                    name,
                    format!("the pattern {pattern:?} names the symbol {symbol:?}, which has no condition"),
                ));
            };
            steps.push(format!("{at}{times}"));
        }
        let row = list(
            columns
                .iter()
                .map(|c| format!("{}, {}", quoted(&c.to_ascii_lowercase()), column(c)))
                .collect(),
        );
        let ordered = if order.is_empty() {
            String::new()
        } else {
            format!(" ORDER BY {order}")
        };
        let group = if self.partition.is_empty() {
            String::new()
        } else {
            let keys = list(self.partition.iter().map(ToString::to_string).collect());
            format!(" GROUP BY {keys}")
        };
        let firsts = list(
            columns
                .iter()
                .map(|c| {
                    format!(
                        "get_field(get_field(`__mp_match`, 'first'), {}) AS {}",
                        quoted(&c.to_ascii_lowercase()),
                        column(c)
                    )
                })
                .collect(),
        );
        let result = result.map_or_else(|| "*".to_string(), str::to_string);
        Ok(format!(
            "(SELECT {result} FROM (SELECT {firsts}, get_field(`__mp_match`, 'tpath') AS tpath FROM \
             (SELECT unnest({matcher}(`__mp_rows`, `__mp_truths`, {spec})) AS `__mp_match` FROM \
             (SELECT array_agg(named_struct({row}){ordered}) AS `__mp_rows`, \
             array_agg(array({truths}){ordered}) AS `__mp_truths` FROM {source}{group}) `__mp_partitions`) \
             `__mp_matches`) `__mp_rows`) {alias}",
            matcher = apiary_hive_functions::names::MATCH_PATH,
            spec = quoted(&steps.join(".")),
            truths = list(conditions),
            source = self.source,
        ))
    }
}

/// Replaces each call's tokens by the tokens of its expansion (`(from, to, text)`, in order).
pub(crate) fn splice(
    tokens: &mut Vec<TokenWithSpan>,
    expansions: Vec<(usize, usize, String)>,
) -> Result<(), SqlError> {
    for (from, to, text) in expansions.into_iter().rev() {
        let replacement = crate::dialect::tokenize(&text).map_err(crate::dialect::parse_error)?;
        tokens.splice(from..=to, replacement);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(sql: &str, columns: &[&str]) -> String {
        let mut tokens = crate::dialect::tokenize(sql).unwrap();
        let calls = calls(&tokens).unwrap();
        let columns: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
        let expansions = calls
            .iter()
            .map(|c| {
                let (from, to) = c.range();
                (from, to, c.expand(&columns).unwrap())
            })
            .collect();
        splice(&mut tokens, expansions).unwrap();
        tokens.iter().map(|t| t.token.to_string()).collect()
    }

    #[test]
    fn matchpath_becomes_a_query_that_parses() {
        let sql = expanded(
            "SELECT * FROM matchpath(ON ft DISTRIBUTE BY a SORT BY b arg1('LATE.LATE+'), \
             arg2('LATE'), arg3(d > 15), arg4('a, size(tpath) AS sz')) m WHERE a = 1",
            &["a", "b", "d"],
        );
        assert!(
            sql.contains("hive_matchpath(`__mp_rows`, `__mp_truths`, '0.0+')"),
            "{sql}"
        );
        assert!(sql.ends_with(") m WHERE a = 1"), "{sql}");
        crate::dialect::parse_one(&sql).unwrap();
    }

    #[test]
    fn unknown_symbols_and_functions_are_refused() {
        let tokens = crate::dialect::tokenize(
            "SELECT * FROM matchpath(ON ft SORT BY b arg1('A.B'), arg2('A'), arg3(d > 1))",
        )
        .unwrap();
        let found = calls(&tokens).unwrap();
        assert!(found[0].expand(&["d".into()]).is_err());
        let tokens = crate::dialect::tokenize("SELECT * FROM noop(ON ft PARTITION BY a)").unwrap();
        let found = calls(&tokens).unwrap();
        assert!(matches!(
            found[0].expand(&["a".into()]),
            Err(SqlError::FunctionNotFound(_))
        ));
    }
}
