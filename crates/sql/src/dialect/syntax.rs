//! Helpers that build and take apart sqlparser's syntax trees: a function's name and plain
//! arguments and a call (those of `apiary-hive-functions`, which plans the table-generating
//! functions with them), a chain of one operator. The rewrites and the clause handling both
//! use them; and the token helpers of the rewrites done on a statement's tokens.

use datafusion::sql::sqlparser::ast::{BinaryOperator, Expr};
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan};

pub(crate) use apiary_hive_functions::syntax::{call, function_name, plain_args};

/// The expressions joined by `op` (`a AND b AND c`); None for none.
pub(crate) fn joined(exprs: impl Iterator<Item = Expr>, op: BinaryOperator) -> Option<Expr> {
    exprs.reduce(|l, r| Expr::BinaryOp {
        left: Box::new(l),
        op: op.clone(),
        right: Box::new(r),
    })
}

/// The positions of the tokens that are not whitespace (comments are already gone).
pub(crate) fn significant(tokens: &[TokenWithSpan]) -> Vec<usize> {
    tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)))
        .map(|(i, _)| i)
        .collect()
}

/// Whether `t` is the unquoted word `w` (any case).
pub(crate) fn is_word(t: &Token, w: &str) -> bool {
    matches!(t, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}
