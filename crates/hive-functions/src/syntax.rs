//! Building and taking apart calls in sqlparser's syntax tree (the tree DataFusion's SQL
//! planner reads): a call's name and plain arguments, a new call. The table-generating
//! functions are planned with them; a dialect rewriting Hive's forms can use them too.

use datafusion::sql::sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentList, FunctionArguments, Ident,
    ObjectName, ObjectNamePart,
};

/// The name `f` calls, lower-cased; None for a qualified name (`db.f`).
pub fn function_name(f: &Function) -> Option<String> {
    match f.name.0.as_slice() {
        [ObjectNamePart::Identifier(id)] => Some(id.value.to_ascii_lowercase()),
        _ => None,
    }
}

/// `f`'s arguments when they are plain expressions (no names, `*`, DISTINCT or clauses).
pub fn plain_args(f: &Function) -> Option<Vec<Expr>> {
    match &f.args {
        FunctionArguments::List(list)
            if list.clauses.is_empty() && list.duplicate_treatment.is_none() =>
        {
            list.args
                .iter()
                .map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e.clone()),
                    _ => None,
                })
                .collect()
        }
        FunctionArguments::None => Some(vec![]),
        _ => None,
    }
}

/// A call of `name` with `args`.
pub fn call(name: &str, args: Vec<Expr>) -> Expr {
    Expr::Function(Function {
        name: ObjectName(vec![ObjectNamePart::Identifier(Ident::new(name))]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args: args
                .into_iter()
                .map(|e| FunctionArg::Unnamed(FunctionArgExpr::Expr(e)))
                .collect(),
            clauses: vec![],
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: vec![],
    })
}
