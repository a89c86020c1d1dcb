//! The forms of Hive's calls that are syntax rather than functions: CAST to an integer type
//! reading text as Hive does, `count(DISTINCT a, b)`, `map()`, and `LIKE ALL (..)`. Hive's functions themselves are
//! registered by `apiary-hive-functions`.

use datafusion::sql::sqlparser::ast::helpers::attached_token::AttachedToken;
use datafusion::sql::sqlparser::ast::CaseWhen;
use datafusion::sql::sqlparser::ast::{
    BinaryOperator, DataType, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments,
    Value,
};

use crate::dialect::syntax::{call, function_name, joined, plain_args};

/// `CAST(x AS TINYINT | SMALLINT | INT | BIGINT)` reads text as Hive does: blanks around it
/// ignored, a fraction dropped (`' 1.5 '` is 1), so the text goes through
/// [`apiary_hive_functions::HIVE_INTEGER_TEXT`] first (other values pass through it unchanged).
pub(crate) fn integer_text(e: &mut Expr) {
    if let Expr::Cast {
        expr,
        data_type:
            DataType::TinyInt(_) | DataType::SmallInt(_) | DataType::Int(_) | DataType::BigInt(_),
        ..
    } = e
    {
        **expr = call(
            apiary_hive_functions::HIVE_INTEGER_TEXT,
            vec![(**expr).clone()],
        );
    }
}

/// Calls whose form DataFusion's planner takes differently: Hive's empty `map()` (DataFusion
/// plans `map(..)` itself and wants arguments: it is `map` of two empty arrays), `count(1)`
/// (as `count(*)`), and
/// `count(DISTINCT a, b, ..)`, the distinct rows where none of the values is NULL, counted as
/// one struct (DataFusion's count takes one expression under DISTINCT).
pub(crate) fn call_forms(f: &mut Function) {
    if function_name(f).as_deref() == Some("map") && plain_args(f).is_some_and(|a| a.is_empty()) {
        if let Expr::Function(g) = call(
            "map",
            vec![call("make_array", vec![]), call("make_array", vec![])],
        ) {
            *f = g;
        }
        return;
    }
    if function_name(f).as_deref() != Some("count") {
        return;
    }
    let FunctionArguments::List(list) = &mut f.args else {
        return;
    };
    // count(1), count('x'): a value present on every row counts the rows, as count(*) does
    // (DataFusion plans count(*) as a count of a literal, which would meet this one's name).
    if let [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v)))] = list.args.as_slice() {
        if list.duplicate_treatment.is_none()
            && list.clauses.is_empty()
            && f.over.is_none()
            && !matches!(v.value, Value::Null)
        {
            list.args = vec![FunctionArg::Unnamed(FunctionArgExpr::Wildcard)];
            return;
        }
    }
    if list.duplicate_treatment.is_none() || list.args.len() < 2 {
        return;
    }
    let Some(args) = list
        .args
        .iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e.clone()),
            _ => None,
        })
        .collect::<Option<Vec<Expr>>>()
    else {
        return;
    };
    let all_present = joined(
        args.iter().map(|a| Expr::IsNotNull(Box::new(a.clone()))),
        BinaryOperator::And,
    );
    let Some(all_present) = all_present else {
        return;
    };
    let row = Expr::Case {
        case_token: AttachedToken::empty(),
        end_token: AttachedToken::empty(),
        operand: None,
        conditions: vec![CaseWhen {
            condition: all_present,
            result: call("struct", args),
        }],
        else_result: None,
    };
    list.args = vec![FunctionArg::Unnamed(FunctionArgExpr::Expr(row))];
}

/// Functions whose result type depends on a constant argument (`round(d, 2)` is DECIMAL with
/// 2 places): their integer literals stay bare, the form in which a function's typing sees
/// them as constants.
pub(crate) const TYPED_BY_CONSTANTS: [&str; 3] = ["round", "bround", "extract_union"];

/// The patterns of `LIKE ALL (p1, ..)`, which the parser reads as a call of `all`.
pub(crate) fn like_all_patterns(pattern: &Expr) -> Option<Vec<Expr>> {
    match pattern {
        Expr::Function(f) if function_name(f).as_deref() == Some("all") => plain_args(f),
        _ => None,
    }
}
