//! Hive's variable substitution: `${hivevar:x}`, `${hiveconf:x}`, `${env:x}`, `${system:x}` and
//! plain `${x}` (hivevar first, then hiveconf). Unknown references stay as written, and so
//! does `${env:X}` unless the server names `X` in `apiary.substitute.env.allowed`: the server's
//! environment (credentials, paths) is not every client's to read. Bounded as
//! Hive bounds it (`hive.variable.substitute.depth` passes) and in length, so a variable that
//! refers to itself fails the statement with Hive's error instead of looping or growing.

use std::collections::BTreeMap;

/// Hive's default for `hive.variable.substitute.depth`: passes made before a text that keeps
/// changing (a variable that refers to itself) is refused.
pub const DEFAULT_DEPTH: usize = 40;
/// Longest text substitution may produce: `x=${x}${x}` doubles each pass, and must fail, not
/// grow until the process runs out of memory.
pub const MAX_LENGTH: usize = 16 << 20;

/// The most passes a session may ask for with `hive.variable.substitute.depth`: each pass may
/// copy up to [`MAX_LENGTH`] bytes, so the work of one statement stays bounded.
pub const MAX_DEPTH: usize = 1000;

/// Why substitution was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SubstituteError {
    /// Still changing after `depth` passes (Hive's text).
    #[error("Variable substitution depth is deeper than {depth} for expression {expr}")]
    TooDeep {
        /// The depth allowed.
        depth: usize,
        /// The start of the text.
        expr: String,
    },
    /// The result would exceed [`MAX_LENGTH`].
    #[error("Variable substitution result is longer than {max} characters for expression {expr}")]
    TooLong {
        /// The length allowed.
        max: usize,
        /// The start of the text.
        expr: String,
    },
}

/// The start of `text` for an error message.
fn excerpt(text: &str) -> String {
    let mut end = text.len().min(200);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if end < text.len() {
        format!("{}...", &text[..end])
    } else {
        text.to_string()
    }
}

/// Replaces variable references in `text`, as Hive does: pass after pass until nothing
/// changes, at most `depth` passes, the result at most [`MAX_LENGTH`] long.
pub fn substitute(
    text: &str,
    hivevar: &BTreeMap<String, String>,
    hiveconf: &BTreeMap<String, String>,
    env_allowed: &[String],
    depth: usize,
) -> Result<String, SubstituteError> {
    if !text.contains("${") {
        return Ok(text.to_string());
    }
    let depth = depth.min(MAX_DEPTH);
    let mut current = text.to_string();
    for _ in 0..=depth {
        let (next, resolved) =
            one_pass(&current, hivevar, hiveconf, env_allowed).ok_or_else(|| {
                SubstituteError::TooLong {
                    max: MAX_LENGTH,
                    expr: excerpt(text),
                }
            })?;
        // As Hive: passes go on while a pass resolves any variable, even to the same text
        // (`x=${x}` is too deep, not a fixed point).
        if !resolved {
            return Ok(current);
        }
        current = next;
    }
    Err(SubstituteError::TooDeep {
        depth,
        expr: excerpt(text),
    })
}

/// One pass over `text` and whether it resolved any variable; `None` once the result grows
/// past [`MAX_LENGTH`].
fn one_pass(
    text: &str,
    hivevar: &BTreeMap<String, String>,
    hiveconf: &BTreeMap<String, String>,
    env_allowed: &[String],
) -> Option<(String, bool)> {
    let mut resolved = false;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return (out.len() <= MAX_LENGTH).then_some((out, resolved));
        };
        let name = &after[..end];
        match resolve(name, hivevar, hiveconf, env_allowed) {
            Some(v) => {
                resolved = true;
                out.push_str(&v)
            }
            None => out.push_str(&rest[start..start + 3 + end]),
        }
        if out.len() > MAX_LENGTH {
            return None;
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    (out.len() <= MAX_LENGTH).then_some((out, resolved))
}

fn resolve(
    name: &str,
    hivevar: &BTreeMap<String, String>,
    hiveconf: &BTreeMap<String, String>,
    env_allowed: &[String],
) -> Option<String> {
    if let Some(k) = name.strip_prefix("hivevar:") {
        return hivevar.get(k).cloned();
    }
    if let Some(k) = name.strip_prefix("hiveconf:") {
        return hiveconf.get(k).cloned();
    }
    if let Some(k) = name.strip_prefix("env:") {
        return env_allowed
            .iter()
            .any(|a| a == k)
            .then(|| std::env::var(k).ok())
            .flatten();
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
                &conf,
                &[],
                DEFAULT_DEPTH
            ),
            Ok("select 42, 'x', 42, ${missing}".to_string())
        );
        let self_ref: BTreeMap<_, _> = [("x".to_string(), "${x}1".to_string())]
            .into_iter()
            .collect();
        assert_eq!(
            substitute("${x}", &self_ref, &conf, &[], DEFAULT_DEPTH),
            Err(SubstituteError::TooDeep {
                depth: 40,
                expr: "${x}".into()
            })
        );
        let fixed: BTreeMap<_, _> = [("x".to_string(), "${x}".to_string())]
            .into_iter()
            .collect();
        assert!(matches!(
            substitute("${x}", &fixed, &conf, &[], DEFAULT_DEPTH),
            Err(SubstituteError::TooDeep { .. })
        ));
        let doubling: BTreeMap<_, _> = [("x".to_string(), "${x}${x}".to_string())]
            .into_iter()
            .collect();
        let err = substitute("select '${x}'", &doubling, &conf, &[], DEFAULT_DEPTH)
            .expect_err("doubles past the limit");
        assert!(matches!(err, SubstituteError::TooLong { .. }), "{err}");
    }

    #[test]
    fn the_environment_is_read_only_where_the_server_allows() {
        let none = BTreeMap::new();
        // PATH is set in every test environment.
        let path = std::env::var("PATH").unwrap_or_default();
        assert_eq!(
            substitute("${env:PATH}", &none, &none, &[], DEFAULT_DEPTH),
            Ok("${env:PATH}".to_string())
        );
        assert_eq!(
            substitute("${env:PATH}", &none, &none, &["PATH".into()], DEFAULT_DEPTH),
            Ok(path)
        );
    }
}
