//! Hive's variable substitution: `${hivevar:x}`, `${hiveconf:x}`, `${env:x}`, `${system:x}` and
//! plain `${x}` (hivevar first, then hiveconf). Unknown references stay as written.

use std::collections::BTreeMap;

/// Most passes made, so a variable that refers to itself cannot loop forever (Hive's limit).
const MAX_PASSES: usize = 40;

/// Replaces variable references in `text`.
pub fn substitute(
    text: &str,
    hivevar: &BTreeMap<String, String>,
    hiveconf: &BTreeMap<String, String>,
) -> String {
    let mut current = text.to_string();
    for _ in 0..MAX_PASSES {
        let next = one_pass(&current, hivevar, hiveconf);
        if next == current {
            break;
        }
        current = next;
    }
    current
}

fn one_pass(
    text: &str,
    hivevar: &BTreeMap<String, String>,
    hiveconf: &BTreeMap<String, String>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let name = &after[..end];
        match resolve(name, hivevar, hiveconf) {
            Some(v) => out.push_str(&v),
            None => out.push_str(&rest[start..start + 3 + end]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

fn resolve(
    name: &str,
    hivevar: &BTreeMap<String, String>,
    hiveconf: &BTreeMap<String, String>,
) -> Option<String> {
    if let Some(k) = name.strip_prefix("hivevar:") {
        return hivevar.get(k).cloned();
    }
    if let Some(k) = name.strip_prefix("hiveconf:") {
        return hiveconf.get(k).cloned();
    }
    if let Some(k) = name.strip_prefix("env:") {
        return std::env::var(k).ok();
    }
    if name.strip_prefix("system:").is_some() {
        return None;
    }
    hivevar.get(name).or_else(|| hiveconf.get(name)).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitutes_hive_style() {
        let vars: BTreeMap<_, _> = [
            ("t".to_string(), "42".to_string()),
            ("n".to_string(), "${t}".to_string()),
        ]
        .into_iter()
        .collect();
        let conf: BTreeMap<_, _> = [("a.b".to_string(), "x".to_string())].into_iter().collect();
        assert_eq!(
            substitute(
                "select ${hivevar:t}, '${hiveconf:a.b}', ${n}, ${missing}",
                &vars,
                &conf
            ),
            "select 42, 'x', 42, ${missing}"
        );
        let self_ref: BTreeMap<_, _> = [("x".to_string(), "${x}1".to_string())]
            .into_iter()
            .collect();
        assert!(substitute("${x}", &self_ref, &conf).len() < 200);
    }
}
