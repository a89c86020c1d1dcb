//! Limits on what a statement may hold before it is planned: how deeply its expressions and
//! queries nest, and how many operators its text has (DataFusion recurses over expression
//! trees where it does not protect its stack).

use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{Expr, Query, Statement, Visit, Visitor};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan};

/// Applies every rewrite to `statement`.
/// How deeply expressions and queries of `statement` nest, counted up to `limit` and no
/// further. DataFusion recurses over expression trees in places it does not protect (clones,
/// drops, evaluation), so a statement deeper than the limit is refused before it is planned.
pub fn nesting_depth(statement: &Statement, limit: usize) -> usize {
    struct Depth {
        now: usize,
        max: usize,
        limit: usize,
    }
    impl Depth {
        fn enter(&mut self) -> ControlFlow<()> {
            self.now += 1;
            self.max = self.max.max(self.now);
            if self.max > self.limit {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }
        fn leave(&mut self) -> ControlFlow<()> {
            self.now = self.now.saturating_sub(1);
            ControlFlow::Continue(())
        }
    }
    impl Visitor for Depth {
        type Break = ();
        fn pre_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
            self.enter()
        }
        fn post_visit_expr(&mut self, _: &Expr) -> ControlFlow<()> {
            self.leave()
        }
        fn pre_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.enter()
        }
        fn post_visit_query(&mut self, _: &Query) -> ControlFlow<()> {
            self.leave()
        }
    }
    let mut d = Depth {
        now: 0,
        max: 0,
        limit,
    };
    let _ = statement.visit(&mut d);
    d.max
}

/// How many tokens of `tokens` are operators that can chain (`+`, `||`, `::`, `AND`, `IS`,
/// `LIKE`, ...). The parser builds a chain of them as a left-deep tree, whose depth only the
/// whole count bounds; a statement with too many is refused before it is parsed, so no
/// deep tree is ever built (dropping one recurses too).
pub fn operator_count(tokens: &[TokenWithSpan]) -> usize {
    tokens
        .iter()
        .filter(|t| match &t.token {
            Token::Word(w) => matches!(
                w.keyword,
                Keyword::AND
                    | Keyword::OR
                    | Keyword::XOR
                    | Keyword::IS
                    | Keyword::IN
                    | Keyword::LIKE
                    | Keyword::ILIKE
                    | Keyword::RLIKE
                    | Keyword::REGEXP
                    | Keyword::SIMILAR
                    | Keyword::BETWEEN
                    | Keyword::COLLATE
                    | Keyword::DIV
                    | Keyword::NOT
                    | Keyword::AT
                    | Keyword::OVERLAPS
            ),
            Token::EOF
            | Token::Number(..)
            | Token::Char(_)
            | Token::SingleQuotedString(_)
            | Token::DoubleQuotedString(_)
            | Token::TripleSingleQuotedString(_)
            | Token::TripleDoubleQuotedString(_)
            | Token::DollarQuotedString(_)
            | Token::SingleQuotedByteStringLiteral(_)
            | Token::DoubleQuotedByteStringLiteral(_)
            | Token::TripleSingleQuotedByteStringLiteral(_)
            | Token::TripleDoubleQuotedByteStringLiteral(_)
            | Token::SingleQuotedRawStringLiteral(_)
            | Token::DoubleQuotedRawStringLiteral(_)
            | Token::TripleSingleQuotedRawStringLiteral(_)
            | Token::TripleDoubleQuotedRawStringLiteral(_)
            | Token::NationalStringLiteral(_)
            | Token::QuoteDelimitedStringLiteral(_)
            | Token::NationalQuoteDelimitedStringLiteral(_)
            | Token::EscapedStringLiteral(_)
            | Token::UnicodeStringLiteral(_)
            | Token::HexStringLiteral(_)
            | Token::Placeholder(_)
            | Token::Comma
            | Token::Whitespace(_)
            | Token::LParen
            | Token::RParen
            | Token::Period
            | Token::Colon
            | Token::SemiColon
            | Token::LBrace
            | Token::RBrace
            | Token::RBracket => false,
            _ => true,
        })
        .count()
}
