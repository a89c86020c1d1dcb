//! HiveQL as Apiary parses it: sqlparser's Hive dialect, and what Hive accepts that it does
//! not: `ROLLUP(..)`, `CUBE(..)` and `GROUPING SETS (..)` in GROUP BY, backslash escapes in
//! string literals (`'O\'Neil'`, `'a\tb'`, `'\\'`), which PyHive and impyla send for
//! parameters, adjacent string literals (`'a' 'b'` is `'ab'`), `a DIV b`, `a && b`, and
//! numeric literals with Hive's type suffixes (`1Y`, `1S`, `1L`, `1.5BD`, `1D`).

pub(crate) mod clauses;
mod interval_alt;
pub(crate) mod ptf;
pub(crate) mod rewrite;
pub(crate) mod substitute;
pub(crate) mod syntax;
pub(crate) mod time_travel;
pub(crate) mod window_spec;

use std::any::TypeId;

use datafusion::sql::sqlparser::ast::{
    BinaryOperator, CastKind, DataType, ExactNumberInfo, Expr, Value,
};
use datafusion::sql::sqlparser::dialect::{Dialect, HiveDialect, Precedence};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::{Parser, ParserError};
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

use crate::error::SqlError;

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

    /// Only backquotes name: with Hive's default `hive.support.quoted.identifiers=column`,
    /// `"text"` is a string literal as `'text'` is.
    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        ch == '`'
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

    /// `FOR SYSTEM_TIME AS OF` (and `VERSION AS OF`, which `FOR SYSTEM_VERSION AS OF` is read
    /// as) after a table name: Hive 4's time travel ([`crate::dialect::time_travel`]).
    fn supports_table_versioning(&self) -> bool {
        true
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

    // Hive's grammar reads `'a' 'b'` (on one line or several) as one literal `'ab'`.
    fn supports_string_literal_concatenation(&self) -> bool {
        true
    }

    fn supports_string_literal_concatenation_with_newline(&self) -> bool {
        true
    }

    fn supports_double_ampersand_operator(&self) -> bool {
        true
    }

    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        match parser.peek_token_ref().token {
            // `a && b` binds as AND does (the tokenizer's `&&` is PostgreSQL's overlap).
            Token::Overlap => Some(Ok(self.prec_value(Precedence::And))),
            // Hive's order, tightest first: `^`, `* / % DIV`, `+ -`, `||`, `&`, `|`, then the
            // comparisons (`1 + 1 || 1 + 1` is '22', `0 ^ 1 || '2'` is '12').
            Token::Caret => Some(Ok(
                self.prec_value(Precedence::MulDivModOp) + HIVE_CARET_ABOVE_STAR
            )),
            Token::StringConcat => Some(Ok(
                self.prec_value(Precedence::PlusMinus) - HIVE_CONCAT_BELOW_PLUS
            )),
            _ => None,
        }
    }

    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        _precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        // `a DIV b`: Hive's integer division, as tightly bound as `*` and `/`.
        if !parser.parse_keyword(Keyword::DIV) {
            return None;
        }
        Some(
            parser
                .parse_subexpr(self.prec_value(Precedence::MulDivModOp))
                .map(|right| Expr::BinaryOp {
                    left: Box::new(expr.clone()),
                    op: BinaryOperator::MyIntegerDivide,
                    right: Box::new(right),
                }),
        )
    }

    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        typed_number(parser).map(Ok)
    }
}

/// `^` binds tighter than `*` in Hive (sqlparser's puts it below `+`): this far above `*`.
const HIVE_CARET_ABOVE_STAR: u8 = 5;
/// `||` binds looser than `+` and tighter than `&` (sqlparser's binds it as `*`): this far
/// below `+`, above `&` and `|`.
const HIVE_CONCAT_BELOW_PLUS: u8 = 5;

/// A number written with one of Hive's type suffixes: `1Y` (TINYINT), `1S` (SMALLINT), `1L`
/// (BIGINT), `1BD` (DECIMAL), `1D` (DOUBLE), as a CAST of the number. The tokenizer gives
/// `1Y` as one word (Hive allows names that start with a digit) and `1.5BD` as a number
/// followed, with no space between, by a word.
fn typed_number(parser: &mut Parser) -> Option<Expr> {
    let suffixed = |word: &str| -> Option<(String, DataType)> {
        let upper = word.to_ascii_uppercase();
        let (digits, ty) = [
            ("BD", DataType::Decimal(ExactNumberInfo::None)),
            ("Y", DataType::TinyInt(None)),
            ("S", DataType::SmallInt(None)),
            ("L", DataType::BigInt(None)),
            ("D", DataType::Double(ExactNumberInfo::None)),
        ]
        .into_iter()
        .find_map(|(suffix, ty)| upper.strip_suffix(suffix).map(|d| (d.to_string(), ty)))?;
        // Integer suffixes take whole numbers; BD and D a decimal point too, D an exponent too.
        let (mantissa, exponent) = match digits.split_once(['E', 'e']) {
            Some((m, e)) if matches!(ty, DataType::Double(_)) => (m, Some(e)),
            _ => (digits.as_str(), None),
        };
        let dots = mantissa.chars().filter(|c| *c == '.').count();
        let numeric = mantissa.chars().all(|c| c.is_ascii_digit() || c == '.')
            && mantissa.chars().any(|c| c.is_ascii_digit())
            && dots <= usize::from(matches!(ty, DataType::Decimal(_) | DataType::Double(_)))
            && exponent.is_none_or(|e| {
                let e = e.strip_prefix(['+', '-']).unwrap_or(e);
                !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())
            });
        numeric.then_some((digits, ty))
    };
    let (digits, data_type) = match &parser.peek_token_ref().token {
        Token::Word(w) if w.quote_style.is_none() => {
            let found = suffixed(&w.value)?;
            parser.advance_token();
            found
        }
        Token::Number(n, false) => {
            let n = n.clone();
            parser.advance_token();
            let suffix = match parser.peek_token_no_skip().token {
                // The number's own digits decide (`1.5L` is 1.5 aliased L, as Hive reads it).
                Token::Word(w) if w.quote_style.is_none() => suffixed(&format!("{n}{}", w.value))
                    .filter(|(digits, _)| digits.eq_ignore_ascii_case(&n))
                    .map(|(_, ty)| ty),
                _ => None,
            };
            let Some(ty) = suffix else {
                parser.prev_token();
                return None;
            };
            parser.advance_token();
            (n, ty)
        }
        _ => return None,
    };
    let data_type = match data_type {
        // Hive's BD literal keeps the digits it has: 1.50BD is DECIMAL(3,2).
        DataType::Decimal(_) => {
            let scale = digits.split_once('.').map_or(0, |(_, f)| f.len()) as u64;
            let precision = (digits.chars().filter(char::is_ascii_digit).count() as u64)
                .max(scale)
                .max(1);
            DataType::Decimal(ExactNumberInfo::PrecisionAndScale(precision, scale as i64))
        }
        other => other,
    };
    // A DECIMAL is cast from the digits as text, so no digit goes through a DOUBLE.
    let value = match data_type {
        DataType::Decimal(_) => Value::SingleQuotedString(digits),
        _ => Value::Number(digits, false),
    };
    Some(Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(Expr::value(value)),
        data_type,
        array: false,
        format: None,
    })
}

/// The tokens of HiveQL text as Apiary parses it: with Hive's escapes, and `FOR
/// SYSTEM_VERSION/SYSTEM_TIME AS OF` and the names it must not take as keywords prepared by
/// [`crate::dialect::time_travel::version_tokens`], and Hive's window specifications made
/// DataFusion's ([`crate::dialect::window_spec::window_tokens`]). Statements and stored view
/// texts go through it.
pub(crate) fn tokenize(text: &str) -> Result<Vec<TokenWithSpan>, ParserError> {
    let text = split_doubled_quotes(text);
    let mut tokens = Tokenizer::new(&HiveQl::default(), &text)
        .with_unescape(true)
        .tokenize_with_location()
        .map_err(|e| ParserError::TokenizerError(e.to_string()))?;
    crate::dialect::time_travel::version_tokens(&mut tokens);
    crate::dialect::window_spec::window_tokens(&mut tokens);
    crate::dialect::interval_alt::interval_tokens(&mut tokens);
    column_alias_lists(&mut tokens);
    lateral_views_without_columns(&mut tokens);
    Ok(tokens)
}

/// The text with a blank between a quoted string and a quote of the same kind right after it:
/// Hive's lexer has no doubled-quote escape, so `'face''book'` is the two literals `'face'`
/// `'book'`, one literal `'facebook'`, and not `face'book`. Backslash escapes, back-quoted
/// names and comments are left as they are.
fn split_doubled_quotes(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("''") && !text.contains("\"\"") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        match c {
            '\'' | '"' => {
                while let Some(d) = chars.next() {
                    out.push(d);
                    if d == '\\' {
                        if let Some(e) = chars.next() {
                            out.push(e);
                        }
                    } else if d == c {
                        if chars.peek() == Some(&c) {
                            out.push(' ');
                        }
                        break;
                    }
                }
            }
            '`' => {
                for d in chars.by_ref() {
                    out.push(d);
                    if d == '`' {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                for d in chars.by_ref() {
                    out.push(d);
                    if d == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                out.push('*');
                chars.next();
                let mut star = false;
                for d in chars.by_ref() {
                    out.push(d);
                    if star && d == '/' {
                        break;
                    }
                    star = d == '*';
                }
            }
            _ => {}
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Hive's `SELECT udtf(..) AS (a, b)`: the names in parentheses after a call's `)` become one
/// alias, joined by [`apiary_hive_functions::COLUMN_ALIASES`], which the generators split
/// again. No other form has `) AS (` followed by a list of bare names. One pass over the
/// tokens.
fn column_alias_lists(tokens: &mut Vec<TokenWithSpan>) {
    use datafusion::sql::sqlparser::tokenizer::{Token, Word};
    use syntax::{is_word, significant};
    let sig = significant(tokens);
    // The names of a list `( a, b, .. )` opening at significant token `k`, and where it ends.
    let list = |k: usize| -> Option<(Vec<String>, usize)> {
        let mut names = Vec::new();
        let mut at = k + 1;
        loop {
            match &tokens.get(*sig.get(at)?)?.token {
                Token::Word(word) => names.push(word.value.clone()),
                _ => return None,
            }
            match &tokens.get(*sig.get(at + 1)?)?.token {
                Token::Comma => at += 2,
                Token::RParen => return Some((names, at + 1)),
                _ => return None,
            }
        }
    };
    let mut lists = Vec::new();
    let mut k = 0;
    while k + 2 < sig.len() {
        let found = tokens[sig[k]].token == Token::RParen
            && is_word(&tokens[sig[k + 1]].token, "as")
            && tokens[sig[k + 2]].token == Token::LParen;
        match found.then(|| list(k + 2)).flatten() {
            Some((names, end)) => {
                lists.push((sig[k + 2], sig[end], names));
                k = end + 1;
            }
            None => k += 1,
        }
    }
    if lists.is_empty() {
        return;
    }
    let mut out = Vec::with_capacity(tokens.len());
    let mut next = lists.into_iter().peekable();
    let mut i = 0;
    while i < tokens.len() {
        if let Some((open, close, names)) = next.next_if(|(open, _, _)| *open == i) {
            let alias = Token::Word(Word {
                value: names.join(&apiary_hive_functions::COLUMN_ALIASES.to_string()),
                quote_style: Some('`'),
                keyword: datafusion::sql::sqlparser::keywords::Keyword::NoKeyword,
            });
            out.push(TokenWithSpan::new(alias, tokens[open].span));
            i = close + 1;
        } else {
            out.push(tokens[i].clone());
            i += 1;
        }
    }
    *tokens = out;
}

/// The clauses that may follow a `LATERAL VIEW` and that sqlparser would take for its column
/// alias (it stops only at WHERE, GROUP, CLUSTER, HAVING and LATERAL).
const AFTER_LATERAL_VIEW: &[&str] = &[
    "limit",
    "order",
    "sort",
    "distribute",
    "window",
    "union",
    "intersect",
    "except",
    "minus",
];

/// Hive's `LATERAL VIEW f(..) t LIMIT 2`, with no column alias before a LIMIT, ORDER BY, SORT
/// BY, DISTRIBUTE BY, WINDOW or UNION: a `WHERE TRUE` (which changes no row) goes before that
/// clause, so sqlparser does not read its keyword as the column's name and the generator's
/// columns keep Hive's default names (`col`, `key` and `value`, ..). One pass over the tokens.
fn lateral_views_without_columns(tokens: &mut Vec<TokenWithSpan>) {
    use syntax::{is_word, significant};
    let sig = significant(tokens);
    let word = |k: usize, w: &str| sig.get(k).is_some_and(|&i| is_word(&tokens[i].token, w));
    let mut at = Vec::new();
    let mut k = 0;
    while k + 2 < sig.len() {
        if !(word(k, "lateral") && word(k + 1, "view")) {
            k += 1;
            continue;
        }
        k += 2;
        if word(k, "outer") {
            k += 1;
        }
        // The generator's call: a name, then its balanced parentheses.
        k += 1;
        if sig.get(k).map(|&i| &tokens[i].token) != Some(&Token::LParen) {
            continue;
        }
        let mut depth = 0usize;
        while let Some(&i) = sig.get(k) {
            match tokens[i].token {
                Token::LParen => depth += 1,
                Token::RParen => depth = depth.saturating_sub(1),
                _ => {}
            }
            k += 1;
            if depth == 0 {
                break;
            }
        }
        // The table alias, then the clause.
        if !matches!(sig.get(k).map(|&i| &tokens[i].token), Some(Token::Word(_))) {
            continue;
        }
        k += 1;
        if AFTER_LATERAL_VIEW.iter().any(|w| word(k, w)) {
            at.push(sig[k]);
        }
    }
    for i in at.into_iter().rev() {
        let span = tokens[i].span;
        let inserted = [
            Token::make_keyword("WHERE"),
            Token::Whitespace(datafusion::sql::sqlparser::tokenizer::Whitespace::Space),
            Token::make_keyword("TRUE"),
            Token::Whitespace(datafusion::sql::sqlparser::tokenizer::Whitespace::Space),
        ];
        tokens.splice(
            i..i,
            inserted.into_iter().map(|t| TokenWithSpan::new(t, span)),
        );
    }
}

/// One statement in Hive's dialect, parsed (a view's query, to name what it reads).
pub(crate) fn parse_one(
    text: &str,
) -> Result<datafusion::sql::sqlparser::ast::Statement, SqlError> {
    let mut statements = Parser::new(&HiveQl::default())
        .with_tokens_with_locations(tokenize(text).map_err(parse_error)?)
        .parse_statements()
        .map_err(parse_error)?;
    match statements.len() {
        1 => Ok(statements.remove(0)),
        _ => Err(SqlError::Parse {
            line: 1,
            column: 0,
            detail: "expected one statement".into(),
        }),
    }
}

/// One expression in Hive's dialect, parsed (a CHECK constraint's), its identifiers lower
/// case as Hive's column names are, back-quoted or not.
pub(crate) fn parse_expr(text: &str) -> Result<datafusion::sql::sqlparser::ast::Expr, SqlError> {
    use datafusion::sql::sqlparser::ast::{visit_expressions_mut, Expr};
    let dialect = HiveQl::default();
    let mut parser =
        Parser::new(&dialect).with_tokens_with_locations(tokenize(text).map_err(parse_error)?);
    let mut expr = parser.parse_expr().map_err(parse_error)?;
    if parser.peek_token().token != datafusion::sql::sqlparser::tokenizer::Token::EOF {
        return Err(SqlError::Parse {
            line: 1,
            column: 0,
            detail: format!("cannot recognize input after the expression in '{text}'"),
        });
    }
    let _ = visit_expressions_mut(&mut expr, |e| {
        match e {
            Expr::Identifier(id) => id.value = id.value.to_lowercase(),
            Expr::CompoundIdentifier(ids) => {
                for id in ids {
                    id.value = id.value.to_lowercase();
                }
            }
            _ => {}
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    Ok(expr)
}

pub(crate) fn parse_error(e: ParserError) -> SqlError {
    let msg = match &e {
        ParserError::ParserError(m) | ParserError::TokenizerError(m) => m.clone(),
        ParserError::RecursionLimitExceeded => "statement nested too deeply".into(),
    };
    // sqlparser ends messages with " at Line: L, Column: C".
    let (detail, line, column) = match msg.rsplit_once(" at Line: ") {
        Some((d, pos)) => {
            let mut it = pos.split(", Column: ");
            let line = it.next().and_then(|l| l.trim().parse().ok()).unwrap_or(1);
            let col: u64 = it.next().and_then(|c| c.trim().parse().ok()).unwrap_or(1);
            (d.to_string(), line, col.saturating_sub(1))
        }
        None => (msg, 1, 0),
    };
    SqlError::Parse {
        line,
        column,
        detail: format!("cannot recognize input: {detail}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::sqlparser::parser::Parser;

    #[test]
    fn doubled_quotes_are_two_literals() {
        for (text, want) in [
            ("'face''book'", "'face' 'book'"),
            ("\"a\"\"b\" ''", "\"a\" \"b\" ''"),
            (
                "'it\\'s' `a''b` -- x''y\n'c'",
                "'it\\'s' `a''b` -- x''y\n'c'",
            ),
            ("/*/ '' */ ''''", "/*/ '' */ '' ''"),
        ] {
            assert_eq!(split_doubled_quotes(text), want, "{text}");
        }
    }

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
