//! What SHOW FUNCTIONS lists and DESCRIBE FUNCTION tells: the functions a session can call
//! (DataFusion's and Apiary's registered ones, the table-generating functions the caller
//! plans itself and names, and Hive's operators and keywords, which are syntax here), and
//! Hive's usage texts (`data/hive_functions.tsv`, Hive 4's SHOW FUNCTIONS with each
//! function's description).
//! Hive's functions Apiary leaves out on purpose are listed with the reason in
//! `data/hive_functions_omitted.tsv`; a test checks that every name Hive lists is offered or
//! omitted there.

use datafusion::prelude::SessionContext;

/// Hive 4's functions: `name<TAB>usage<TAB>synonym_of` lines after `#` comments.
pub const HIVE_FUNCTIONS: &str = include_str!("../data/hive_functions.tsv");

/// Hive's functions Apiary does not offer: `name<TAB>reason`.
pub const OMITTED: &str = include_str!("../data/hive_functions_omitted.tsv");

/// The `name<TAB>text` lines of one of the lists above, without comments.
pub fn entries(list: &'static str) -> impl Iterator<Item = (&'static str, &'static str)> {
    list.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.split_once('\t'))
}

/// Hive's operators and keywords that SHOW FUNCTIONS lists as functions, each with an
/// expression that uses it (a test runs every one).
pub const SYNTAX: &[(&str, &str)] = &[
    ("!", "! false"),
    ("!=", "1 != 2"),
    ("%", "7 % 3"),
    ("&", "6 & 3"),
    ("*", "2 * 3"),
    ("+", "1 + 2"),
    ("-", "3 - 1"),
    ("/", "6 / 4"),
    ("<", "1 < 2"),
    ("<=", "1 <= 2"),
    ("<=>", "1 <=> NULL"),
    ("<>", "1 <> 2"),
    ("=", "1 = 1"),
    ("==", "1 == 1"),
    (">", "2 > 1"),
    (">=", "2 >= 1"),
    ("^", "6 ^ 3"),
    ("and", "true AND false"),
    ("between", "2 BETWEEN 1 AND 3"),
    ("case", "CASE 1 WHEN 1 THEN 'a' ELSE 'b' END"),
    ("div", "7 DIV 2"),
    ("in", "1 IN (1, 2)"),
    ("like", "'abc' LIKE 'a%'"),
    ("not", "NOT true"),
    ("or", "true OR false"),
    ("regexp", "'abc' REGEXP 'b'"),
    ("rlike", "'abc' RLIKE 'b'"),
    ("when", "CASE WHEN 1 > 0 THEN 'a' END"),
    ("|", "6 | 3"),
    ("~", "~ 5"),
];

/// Hive's functions by name: (usage, synonym_of).
fn hive_entries() -> impl Iterator<Item = (&'static str, &'static str, &'static str)> {
    HIVE_FUNCTIONS
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let mut parts = l.split('\t');
            (
                parts.next().unwrap_or(""),
                parts.next().unwrap_or(""),
                parts.next().unwrap_or(""),
            )
        })
}

/// Hive's table functions in FROM (`matchpath(ON t ..)`) the statement layer plans.
pub const TABLE_FUNCTIONS: &[&str] = &["matchpath", "windowingtablefunction"];

/// Every name a session can call, sorted, without the internal helpers: the functions
/// registered in `ctx`, the table-generating functions ([`crate::generators`]), the table
/// functions ([`TABLE_FUNCTIONS`]) and Hive's operators.
pub fn callable(ctx: &SessionContext) -> Vec<String> {
    let state = ctx.state();
    let mut names: Vec<String> = state
        .scalar_functions()
        .keys()
        .chain(state.aggregate_functions().keys())
        .chain(state.window_functions().keys())
        .cloned()
        .chain(
            crate::generators::NAMES
                .iter()
                .chain(TABLE_FUNCTIONS)
                .chain(SYNTAX.iter().map(|(n, _)| n))
                .map(|n| n.to_string()),
        )
        .filter(|n| !crate::names::INTERNAL.contains(&n.as_str()) && !n.starts_with("__"))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// DESCRIBE FUNCTION [EXTENDED]: Hive's lines for `name`, one of [`callable`]'s.
pub fn describe(ctx: &SessionContext, name: &str, extended: bool) -> Vec<String> {
    let lower = name.to_ascii_lowercase();
    if !callable(ctx).contains(&lower) {
        return vec![format!("Function '{name}' does not exist.")];
    }
    let entries: Vec<_> = hive_entries().collect();
    let Some((_, usage, synonym_of)) = entries.iter().find(|(n, _, _)| *n == lower) else {
        return vec![format!("There is no documentation for function '{name}'")];
    };
    let mut lines = vec![if usage.is_empty() {
        format!("There is no documentation for function '{name}'")
    } else {
        usage.to_string()
    }];
    if extended {
        // The names sharing the function: what it is a synonym of, and what is one of it.
        let root = if synonym_of.is_empty() {
            lower.as_str()
        } else {
            synonym_of
        };
        let synonyms: Vec<&str> = entries
            .iter()
            .filter(|(n, _, s)| (*n == root || *s == root) && *n != lower)
            .map(|(n, _, _)| *n)
            .collect();
        if !synonyms.is_empty() {
            lines.push(format!("Synonyms: {}", synonyms.join(", ")));
        }
        lines.push("Function type:BUILTIN".into());
    }
    lines
}

/// Hive's function names, each with whether Apiary leaves it out on purpose (and why).
pub fn hive_names() -> Vec<(&'static str, Option<&'static str>)> {
    let omitted: Vec<(&str, &str)> = entries(OMITTED).collect();
    hive_entries()
        .map(|(n, _, _)| {
            let reason = omitted
                .iter()
                .find(|(o, _)| {
                    *o == n || (o.ends_with('*') && n.starts_with(o.trim_end_matches('*')))
                })
                .map(|(_, r)| *r);
            (n, reason)
        })
        .collect()
}
