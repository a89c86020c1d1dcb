//! Hive's intervals without the INTERVAL keyword: a number, a string or a parenthesized
//! expression followed by a unit (`date '2012-01-01' + 30 days`, `(1) second`,
//! `ts - (n * 2) hours`). Hive's grammar reads these as intervals, not as a value with a
//! column alias; the tokens get the INTERVAL keyword the SQL parser needs, so
//! `30 days` reads as `INTERVAL 30 days`.

use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace};

use crate::dialect::syntax::{is_word, significant};

const UNITS: &[&str] = &[
    "year", "years", "month", "months", "day", "days", "hour", "hours", "minute", "minutes",
    "second", "seconds",
];

/// Puts INTERVAL before each value a unit follows, in place.
pub(crate) fn interval_tokens(tokens: &mut Vec<TokenWithSpan>) {
    let sig = significant(tokens);
    let mut starts = Vec::new();
    for (k, &i) in sig.iter().enumerate() {
        let unit = matches!(&tokens[i].token, Token::Word(w) if w.quote_style.is_none()
            && UNITS.iter().any(|u| w.value.eq_ignore_ascii_case(u)));
        // `day(x)` is a function, `x AS day` an alias.
        if !unit
            || sig
                .get(k + 1)
                .is_some_and(|&n| tokens[n].token == Token::LParen)
        {
            continue;
        }
        let Some(before) = k.checked_sub(1) else {
            continue;
        };
        let start = match &tokens[sig[before]].token {
            Token::Number(_, _) | Token::SingleQuotedString(_) => before,
            Token::RParen => match opening(tokens, &sig, before) {
                // `f(x) day` is a call with an alias, `(SELECT ..) day` a subquery with one;
                // `(x) day` an interval.
                Some(open)
                    if !open
                        .checked_sub(1)
                        .is_some_and(|p| called(&tokens[sig[p]].token))
                        && !sig.get(open + 1).is_some_and(|&n| {
                            is_word(&tokens[n].token, "select") || is_word(&tokens[n].token, "with")
                        }) =>
                {
                    open
                }
                _ => continue,
            },
            _ => continue,
        };
        // Already an interval (`INTERVAL 1 DAY`, `INTERVAL -1 DAY`), or a typed literal with
        // an alias (`DATE '2012-01-01' day`).
        let word_before = |k: usize, w: &str| {
            k.checked_sub(1)
                .is_some_and(|p| is_word(&tokens[sig[p]].token, w))
        };
        let signed = start.checked_sub(1).is_some_and(|p| {
            matches!(tokens[sig[p]].token, Token::Minus | Token::Plus) && word_before(p, "interval")
        });
        let typed = ["interval", "date", "timestamp"]
            .iter()
            .any(|w| word_before(start, w));
        if !signed && !typed {
            starts.push(sig[start]);
        }
    }
    for at in starts.into_iter().rev() {
        tokens.insert(
            at,
            TokenWithSpan::wrap(Token::Whitespace(Whitespace::Space)),
        );
        tokens.insert(at, TokenWithSpan::wrap(Token::make_keyword("INTERVAL")));
    }
}

/// Whether a `(` after `t` opens a call's arguments: `t` is a word other than the keywords
/// an expression may follow.
fn called(t: &Token) -> bool {
    match t {
        Token::Word(w) => !matches!(
            w.keyword,
            Keyword::SELECT
                | Keyword::WHERE
                | Keyword::AND
                | Keyword::OR
                | Keyword::NOT
                | Keyword::ON
                | Keyword::WHEN
                | Keyword::THEN
                | Keyword::ELSE
                | Keyword::HAVING
                | Keyword::DISTINCT
                | Keyword::ALL
        ),
        _ => false,
    }
}

/// The position in `sig` of the `(` that the `)` at `sig[close]` closes.
fn opening(tokens: &[TokenWithSpan], sig: &[usize], close: usize) -> Option<usize> {
    let mut depth = 0usize;
    for k in (0..=close).rev() {
        match tokens[sig[k]].token {
            Token::RParen => depth += 1,
            Token::LParen => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}
