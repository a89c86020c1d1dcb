//! Hive's window specifications: `OVER (DISTRIBUTE BY k SORT BY v ..)` (also in a `WINDOW w AS
//! (..)` clause) is `OVER (PARTITION BY k ORDER BY v ..)`, and the two forms mix. The words are
//! replaced in the statement's tokens, inside a window specification's own parentheses only.

use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan, Word};

use crate::dialect::syntax::{is_word, significant};

/// The words a window specification starts with.
const SPEC_START: &[&str] = &["partition", "distribute", "order", "sort", "rows", "range"];

fn keyword(value: &str, keyword: Keyword) -> Token {
    Token::Word(Word {
        value: value.into(),
        quote_style: None,
        keyword,
    })
}

/// Rewrites `DISTRIBUTE BY` to `PARTITION BY` and `SORT BY` to `ORDER BY` directly inside the
/// parentheses of `OVER (..)` or `AS (..)` that hold a window specification.
pub(crate) fn window_tokens(tokens: &mut [TokenWithSpan]) {
    let significant = significant(tokens);
    let mut k = 0;
    while k + 2 < significant.len() {
        let (before, open, first) = (significant[k], significant[k + 1], significant[k + 2]);
        let opens_spec = (is_word(&tokens[before].token, "over")
            || is_word(&tokens[before].token, "as"))
            && tokens[open].token == Token::LParen
            && SPEC_START.iter().any(|w| is_word(&tokens[first].token, w));
        if !opens_spec {
            k += 1;
            continue;
        }
        // Inside the specification's own parentheses (depth 1).
        let mut depth = 0usize;
        let mut j = k + 1;
        while j + 1 < significant.len() {
            let (at, next) = (significant[j], significant[j + 1]);
            match tokens[at].token {
                Token::LParen => depth += 1,
                Token::RParen => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        break;
                    }
                }
                _ if depth == 1 && is_word(&tokens[next].token, "by") => {
                    if is_word(&tokens[at].token, "distribute") {
                        tokens[at].token = keyword("PARTITION", Keyword::PARTITION);
                    } else if is_word(&tokens[at].token, "sort") {
                        tokens[at].token = keyword("ORDER", Keyword::ORDER);
                    }
                }
                _ => {}
            }
            j += 1;
        }
        k = j.max(k + 1);
    }
}

#[cfg(test)]
mod tests {
    fn rewritten(sql: &str) -> String {
        let statement = crate::dialect::parse_one(sql).unwrap();
        statement.to_string()
    }

    #[test]
    fn distribute_and_sort_by_in_window_specifications() {
        let text = rewritten(
            "SELECT rank() OVER (DISTRIBUTE BY a SORT BY b DESC ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t",
        );
        assert!(
            text.contains("OVER (PARTITION BY a ORDER BY b DESC ROWS"),
            "{text}"
        );
        let text = rewritten("SELECT sum(x) OVER w FROM t WINDOW w AS (distribute by a sort by b)");
        assert!(text.contains("AS (PARTITION BY a ORDER BY b)"), "{text}");
        let text = rewritten("SELECT a FROM t DISTRIBUTE BY a SORT BY b");
        assert!(text.contains("DISTRIBUTE BY a SORT BY b"), "{text}");
        let text = rewritten("SELECT max(x) OVER (PARTITION BY a SORT BY b) FROM t");
        assert!(text.contains("OVER (PARTITION BY a ORDER BY b)"), "{text}");
    }
}
