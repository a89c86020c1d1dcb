//! Hive's table-generating functions (UDTFs): `explode`, `posexplode`, `inline`, `stack`,
//! `json_tuple`, `parse_url_tuple` and `replicate_rows`.
//!
//! A UDTF takes a row's values and gives rows of one or more named columns. DataFusion's
//! table functions take constants only, so each UDTF is planned as select-list expressions of
//! DataFusion's own: `unnest`s (several `unnest`s in one select list are zipped, which is how
//! a UDTF's columns line up) over arrays built from the arguments, and the scalar helpers this
//! crate registers ([`crate::STRUCT_FIELD`], [`crate::JSON_FIELD`], [`crate::ROW_COPIES`]).
//! [`columns`] gives a call's columns, for a caller planning `LATERAL VIEW`; [`in_select_list`]
//! plans a UDTF alone in a select list (`SELECT explode(a) AS x FROM t`), Hive's other form.
//! Both work on sqlparser's syntax tree, before DataFusion's SQL planner reads it.
//!
//! Errors are DataFusion's with Hive's wording: [`crate::WRONG_ARGUMENTS`],
//! [`crate::UDTF_ALIAS_MISMATCH`], [`crate::UDTF_MULTIPLE_EXPRESSIONS`], and a
//! `NotImplemented` for a form planned nowhere.

use datafusion::common::{not_impl_err, plan_err, Result};
use datafusion::sql::sqlparser::ast::helpers::attached_token::AttachedToken;
use datafusion::sql::sqlparser::ast::{
    BinaryOperator, CaseWhen, CastKind, DataType, Expr, Function, Ident, Select, SelectItem, Value,
    ValueWithSpan,
};

use crate::names::{
    JSON_FIELD, ROW_COPIES, STRUCT_FIELD, UDTF_ALIAS_MISMATCH, UDTF_MULTIPLE_EXPRESSIONS,
    WRONG_ARGUMENTS,
};
use crate::syntax::{call, function_name, plain_args};

/// Hive's table-generating functions.
pub const NAMES: &[&str] = &[
    "explode",
    "posexplode",
    "inline",
    "stack",
    "json_tuple",
    "parse_url_tuple",
    "replicate_rows",
];

/// Whether `f` calls one of Hive's table-generating functions.
pub fn is_generator(f: &Function) -> bool {
    function_name(f).is_some_and(|n| NAMES.contains(&n.as_str()))
}

/// The columns the table-generating function `f` gives, each an expression over the row it
/// applies to and its name: `aliases` (empty: Hive's default names, `col`, `key`/`value`,
/// `pos`/`val`, `col0`.., `c0`..). `outer` (`LATERAL VIEW OUTER`) keeps a row whose array or
/// map is NULL or empty, with NULL columns. None when `f` is no table-generating function.
pub fn columns(f: &Function, aliases: &[Ident], outer: bool) -> Result<Option<Vec<(Expr, Ident)>>> {
    let Some(name) = function_name(f).filter(|n| NAMES.contains(&n.as_str())) else {
        return Ok(None);
    };
    let Some(args) = plain_args(f) else {
        return not_impl_err!("{name} with these arguments");
    };
    let wrong = |what: &str| plan_err!("{WRONG_ARGUMENTS} {name}(): {what}");
    // NULL or empty lists become [NULL] under OUTER, so the row stays.
    let list = |l: Expr| -> Expr {
        if !outer {
            return l;
        }
        Expr::Case {
            case_token: AttachedToken::empty(),
            end_token: AttachedToken::empty(),
            operand: None,
            conditions: vec![CaseWhen {
                condition: Expr::BinaryOp {
                    left: Box::new(call("cardinality", vec![l.clone()])),
                    op: BinaryOperator::Gt,
                    right: Box::new(number(0)),
                },
                result: l,
            }],
            else_result: Some(Box::new(call("make_array", vec![null()]))),
        }
    };
    let unnest = |l: Expr| call("unnest", vec![list(l)]);
    let named = |columns: Vec<Expr>, defaults: &[&str]| -> Result<Option<Vec<(Expr, Ident)>>> {
        let names: Vec<Ident> = if aliases.is_empty() {
            defaults.iter().map(|d| Ident::new(*d)).collect()
        } else if aliases.len() == defaults.len() {
            aliases.to_vec()
        } else {
            return plan_err!(
                "{UDTF_ALIAS_MISMATCH} expected {} aliases but got {}",
                defaults.len(),
                aliases.len()
            );
        };
        Ok(Some(columns.into_iter().zip(names).collect()))
    };
    let numbered = |prefix: &str, n: usize| -> Vec<String> {
        (0..n).map(|i| format!("{prefix}{i}")).collect()
    };
    match name.as_str() {
        // explode(array) gives `col`; explode(map) `key`, `value` (also named by two aliases).
        "explode" => {
            let [a] = args.as_slice() else {
                return wrong("takes only one argument");
            };
            if aliases.len() == 2 || is_map(a) {
                let keys = unnest(call("map_keys", vec![a.clone()]));
                let values = unnest(call("map_values", vec![a.clone()]));
                return named(vec![keys, values], &["key", "value"]);
            }
            named(vec![unnest(a.clone())], &["col"])
        }
        "posexplode" => {
            let [a] = args.as_slice() else {
                return wrong("takes only one argument");
            };
            let positions = call(
                "range",
                vec![number(0), call("cardinality", vec![a.clone()])],
            );
            let position = Expr::Cast {
                kind: CastKind::Cast,
                expr: Box::new(unnest(positions)),
                data_type: DataType::Int(None),
                array: false,
                format: None,
            };
            named(vec![position, unnest(a.clone())], &["pos", "val"])
        }
        // inline(array of structs): one column per field, named by the aliases.
        "inline" => {
            let [a] = args.as_slice() else {
                return wrong("takes only one argument");
            };
            if aliases.is_empty() {
                return not_impl_err!("inline(..) without AS names for its columns");
            }
            let field = |i: usize| {
                call(
                    STRUCT_FIELD,
                    vec![
                        unnest(a.clone()),
                        string(&i.to_string()),
                        string(&aliases.len().to_string()),
                    ],
                )
            };
            Ok(Some(
                aliases
                    .iter()
                    .enumerate()
                    .map(|(i, alias)| (field(i), alias.clone()))
                    .collect(),
            ))
        }
        // stack(n, v1, .., vk): n rows of k/n columns, `col0`, `col1`, ...
        "stack" => {
            let rows = match args.first() {
                Some(Expr::Value(v)) => match &v.value {
                    Value::Number(n, _) => n.parse::<usize>().ok(),
                    _ => None,
                },
                _ => None,
            }
            .filter(|n| *n > 0);
            let Some(rows) = rows else {
                return wrong("The first argument to stack() must be a constant integer");
            };
            let values = &args[1..];
            if rows > values.len().max(1) {
                return wrong("more rows asked than values given");
            }
            let width = values.len().div_ceil(rows).max(1);
            let columns: Vec<Expr> = (0..width)
                .map(|c| {
                    let column = (0..rows)
                        .map(|r| values.get(r * width + c).cloned().unwrap_or_else(null))
                        .collect();
                    call("unnest", vec![call("make_array", column)])
                })
                .collect();
            let defaults = numbered("col", columns.len());
            named(
                columns,
                &defaults.iter().map(String::as_str).collect::<Vec<_>>(),
            )
        }
        // replicate_rows(n, c1, ..): n copies of the row (n, c1, ..), `col0`, `col1`, ...
        "replicate_rows" => {
            let (Some(n), true) = (args.first(), args.len() >= 2) else {
                return wrong("UDTFReplicateRows() expects at least two arguments.");
            };
            let times = call(ROW_COPIES, vec![n.clone()]);
            let columns: Vec<Expr> = args
                .iter()
                .map(|c| unnest(call("array_repeat", vec![c.clone(), times.clone()])))
                .collect();
            let defaults = numbered("col", columns.len());
            named(
                columns,
                &defaults.iter().map(String::as_str).collect::<Vec<_>>(),
            )
        }
        // One row per input row: a field of the JSON object, a part of the URL; `c0`, `c1`, ..
        _ => {
            let Some((subject, keys)) = args.split_first().filter(|(_, k)| !k.is_empty()) else {
                return wrong("takes at least two arguments");
            };
            let columns: Vec<Expr> = keys
                .iter()
                .map(|k| {
                    if name == "json_tuple" {
                        call(JSON_FIELD, vec![subject.clone(), k.clone()])
                    } else {
                        url_part(subject, k)
                    }
                })
                .collect();
            let defaults = numbered("c", columns.len());
            named(
                columns,
                &defaults.iter().map(String::as_str).collect::<Vec<_>>(),
            )
        }
    }
}

/// A table-generating function alone in a select list (`SELECT explode(a) AS x FROM t`):
/// its columns become the select list. With anything beside it, Hive's error
/// ([`UDTF_MULTIPLE_EXPRESSIONS`]). A select list without one is left as it is.
pub fn in_select_list(select: &mut Select) -> Result<()> {
    let generator = |item: &SelectItem| -> Option<(Function, Vec<Ident>)> {
        match item {
            SelectItem::UnnamedExpr(Expr::Function(f)) if is_generator(f) => {
                Some((f.clone(), vec![]))
            }
            // `AS (a, b)`: the names the dialect joined into one alias.
            SelectItem::ExprWithAlias {
                expr: Expr::Function(f),
                alias,
            } if is_generator(f) => Some((
                f.clone(),
                alias
                    .value
                    .split(crate::names::COLUMN_ALIASES)
                    .map(|name| Ident::new(name.to_lowercase()))
                    .collect(),
            )),
            _ => None,
        }
    };
    let Some((f, aliases)) = select.projection.iter().find_map(generator) else {
        let listed = select.projection.iter().any(|item| {
            matches!(item, SelectItem::ExprWithAlias { alias, .. }
                if alias.value.contains(crate::names::COLUMN_ALIASES))
        });
        if listed {
            return plan_err!(
                "AS (a, b, ..) names the columns of a table-generating function (explode, \
                 posexplode, inline, stack, json_tuple, parse_url_tuple) only"
            );
        }
        return Ok(());
    };
    if select.projection.len() != 1 {
        return plan_err!("{UDTF_MULTIPLE_EXPRESSIONS}");
    }
    if let Some(columns) = columns(&f, &aliases, false)? {
        select.projection = columns
            .into_iter()
            .map(|(expr, alias)| SelectItem::ExprWithAlias { expr, alias })
            .collect();
    }
    Ok(())
}

/// `parse_url_tuple`'s part: `'HOST'`, ..., or `'QUERY:k'` for one query parameter.
fn url_part(url: &Expr, part: &Expr) -> Expr {
    if let Expr::Value(v) = part {
        if let Value::SingleQuotedString(p) = &v.value {
            if let Some((q, key)) = p.split_once(':') {
                if q.eq_ignore_ascii_case("QUERY") {
                    return call("parse_url", vec![url.clone(), string("QUERY"), string(key)]);
                }
            }
        }
    }
    call("parse_url", vec![url.clone(), part.clone()])
}

/// A map written in place (`map(..)`, `str_to_map(..)`): explode gives key and value.
fn is_map(e: &Expr) -> bool {
    matches!(e, Expr::Function(f) if matches!(function_name(f).as_deref(), Some("map" | "str_to_map")))
}

fn number(n: usize) -> Expr {
    Expr::Value(ValueWithSpan::from(Value::Number(n.to_string(), false)))
}

fn string(s: &str) -> Expr {
    Expr::Value(ValueWithSpan::from(Value::SingleQuotedString(
        s.to_string(),
    )))
}

fn null() -> Expr {
    Expr::Value(ValueWithSpan::from(Value::Null))
}

#[cfg(test)]
mod tests {
    use datafusion::sql::sqlparser::dialect::HiveDialect;
    use datafusion::sql::sqlparser::parser::Parser;

    use super::*;

    fn function(sql: &str) -> Function {
        let e = Parser::new(&HiveDialect {})
            .try_with_sql(sql)
            .and_then(|mut p| p.parse_expr())
            .unwrap();
        match e {
            Expr::Function(f) => f,
            other => panic!("not a call: {other}"),
        }
    }

    fn planned(sql: &str, aliases: &[&str]) -> Vec<(String, String)> {
        let aliases: Vec<Ident> = aliases.iter().map(|a| Ident::new(*a)).collect();
        columns(&function(sql), &aliases, false)
            .unwrap()
            .unwrap()
            .into_iter()
            .map(|(e, n)| (e.to_string(), n.value))
            .collect()
    }

    #[test]
    fn hive_default_names() {
        let names =
            |sql: &str| -> Vec<String> { planned(sql, &[]).into_iter().map(|(_, n)| n).collect() };
        assert_eq!(names("explode(a)"), ["col"]);
        assert_eq!(names("explode(map('k', 1))"), ["key", "value"]);
        assert_eq!(names("posexplode(a)"), ["pos", "val"]);
        assert_eq!(names("stack(2, 1, 'a', 2, 'b')"), ["col0", "col1"]);
        assert_eq!(names("replicate_rows(2, 'a')"), ["col0", "col1"]);
        assert_eq!(names("json_tuple(j, 'a', 'b')"), ["c0", "c1"]);
        assert_eq!(names("parse_url_tuple(u, 'HOST')"), ["c0"]);
    }

    #[test]
    fn stack_fills_rows_by_position() {
        let columns = planned("stack(2, 1, 'a', 2)", &["n", "s"]);
        assert_eq!(columns[0], ("unnest(make_array(1, 2))".into(), "n".into()));
        assert_eq!(
            columns[1],
            ("unnest(make_array('a', NULL))".into(), "s".into())
        );
    }

    #[test]
    fn outer_keeps_a_row_for_an_empty_list() {
        let f = function("explode(a)");
        let columns = columns(&f, &[], true).unwrap().unwrap();
        let text = columns[0].0.to_string();
        assert!(text.contains("cardinality(a) > 0"), "{text}");
        assert!(text.contains("make_array(NULL)"), "{text}");
    }

    #[test]
    fn hive_errors() {
        let error = |sql: &str, aliases: &[&str]| -> String {
            let aliases: Vec<Ident> = aliases.iter().map(|a| Ident::new(*a)).collect();
            columns(&function(sql), &aliases, false)
                .unwrap_err()
                .to_string()
        };
        assert!(error("explode(a, b)", &[])
            .contains("Wrong arguments explode(): takes only one argument"));
        assert!(error("stack(x, 1)", &[]).contains("must be a constant integer"));
        assert!(error("posexplode(a)", &["p"])
            .contains("output by the UDTF expected 2 aliases but got 1"));
        assert!(error("inline(a)", &[]).contains("not implemented"));
        assert!(columns(&function("upper(a)"), &[], false)
            .unwrap()
            .is_none());
    }

    #[test]
    fn alone_in_a_select_list() {
        let parse = |sql: &str| -> Select {
            let statement = Parser::new(&HiveDialect {})
                .try_with_sql(sql)
                .and_then(|mut p| p.parse_statement())
                .unwrap();
            let datafusion::sql::sqlparser::ast::Statement::Query(q) = statement else {
                panic!("not a query");
            };
            match *q.body {
                datafusion::sql::sqlparser::ast::SetExpr::Select(s) => *s,
                _ => panic!("not a SELECT"),
            }
        };
        let mut select = parse("SELECT explode(arr) AS x FROM t");
        in_select_list(&mut select).unwrap();
        assert_eq!(select.projection.len(), 1);
        assert_eq!(select.projection[0].to_string(), "unnest(arr) AS x");
        let mut select = parse("SELECT id, explode(arr) FROM t");
        let e = in_select_list(&mut select).unwrap_err().to_string();
        assert!(e.contains(UDTF_MULTIPLE_EXPRESSIONS), "{e}");
    }
}
