//! Helpers that build and take apart sqlparser's syntax trees: a function's name and plain
//! arguments and a call (those of `apiary-hive-functions`, which plans the table-generating
//! functions with them), a chain of one operator. The rewrites and the clause handling both
//! use them.

use datafusion::sql::sqlparser::ast::{BinaryOperator, Expr};

pub(crate) use apiary_hive_functions::syntax::{call, function_name, plain_args};

/// The expressions joined by `op` (`a AND b AND c`); None for none.
pub(crate) fn joined(exprs: impl Iterator<Item = Expr>, op: BinaryOperator) -> Option<Expr> {
    exprs.reduce(|l, r| Expr::BinaryOp {
        left: Box::new(l),
        op: op.clone(),
        right: Box::new(r),
    })
}
