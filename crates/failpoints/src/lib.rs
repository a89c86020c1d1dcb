//! Fail points: named places in multi-step operations (DDL with side effects elsewhere, the
//! commit of an INSERT) where a test can make the server fail, to prove that recovery leaves
//! everything consistent. Off unless configured (`apiary.failpoints`, a comma-separated list of
//! `name=action`), and then only the named points act:
//!
//! - `abort`: the process dies on the spot, as with `kill -9` (no destructors, no flushing);
//! - `error`: the step fails with an error, as a failing remote system would;
//! - `sleep(ms)`: the step waits, so a test can kill the server from outside meanwhile;
//! - `panic`: the step panics, as a bug would, to prove a panic stays inside its operation.

#![warn(missing_docs)]

use std::collections::HashMap;
use std::time::Duration;

use parking_lot::RwLock;

/// What a fail point does when reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// End the process at once.
    Abort,
    /// Fail the step.
    Error,
    /// Pause the step.
    Sleep(Duration),
    /// Panic in the step.
    Panic,
}

static POINTS: RwLock<Option<HashMap<String, Action>>> = RwLock::new(None);

/// Parses and installs a configuration (`name=action,...`); an empty one clears all points.
pub fn configure(spec: &str) -> Result<(), String> {
    let mut map = HashMap::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, action) = item
            .split_once('=')
            .ok_or_else(|| format!("fail point `{item}`: expected name=action"))?;
        let action = match action.trim() {
            "abort" => Action::Abort,
            "error" => Action::Error,
            "panic" => Action::Panic,
            a if a.starts_with("sleep(") && a.ends_with(')') => {
                let ms: u64 = a["sleep(".len()..a.len() - 1]
                    .parse()
                    .map_err(|_| format!("fail point `{item}`: sleep takes milliseconds"))?;
                Action::Sleep(Duration::from_millis(ms))
            }
            other => {
                return Err(format!(
                    "fail point `{item}`: unknown action `{other}` (abort, error, panic, sleep(ms))"
                ))
            }
        };
        map.insert(name.trim().to_string(), action);
    }
    *POINTS.write() = (!map.is_empty()).then_some(map);
    Ok(())
}

/// The error a fail point with action `error` returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injected(pub String);

impl std::fmt::Display for Injected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "injected failure at fail point {}", self.0)
    }
}

impl std::error::Error for Injected {}

/// What reaching `name` does: `Ok(None)` go on, `Ok(Some(d))` pause for `d`, `Err` fail;
/// `abort` never returns.
fn act(name: &str) -> Result<Option<Duration>, Injected> {
    let action = match POINTS.read().as_ref() {
        None => return Ok(None),
        Some(map) => map.get(name).cloned(),
    };
    match action {
        None => Ok(None),
        Some(Action::Abort) => {
            tracing::warn!(point = name, "fail point: aborting the process");
            std::process::abort()
        }
        Some(Action::Error) => {
            tracing::warn!(point = name, "fail point: failing the step");
            Err(Injected(name.to_string()))
        }
        Some(Action::Panic) => {
            tracing::warn!(point = name, "fail point: panicking");
            // Deliberate: tests prove that a panic fails only its own operation.
            #[allow(clippy::panic)]
            {
                panic!("injected panic at fail point {name}")
            }
        }
        Some(Action::Sleep(d)) => {
            tracing::warn!(
                point = name,
                ms = d.as_millis() as u64,
                "fail point: pausing"
            );
            Ok(Some(d))
        }
    }
}

/// Reaches the fail point `name`: nothing happens unless it is configured.
pub async fn reach(name: &str) -> Result<(), Injected> {
    if let Some(d) = act(name)? {
        tokio::time::sleep(d).await;
    }
    Ok(())
}

/// [`reach`] for synchronous code: a `sleep` blocks the thread.
pub fn reach_blocking(name: &str) -> Result<(), Injected> {
    if let Some(d) = act(name)? {
        std::thread::sleep(d);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_actions_and_rejects_bad_ones() {
        assert!(configure("a=abort, b=error ,c=sleep(20), d=panic").is_ok());
        let points = POINTS.read().clone().unwrap_or_default();
        assert_eq!(points.get("a"), Some(&Action::Abort));
        assert_eq!(points.get("b"), Some(&Action::Error));
        assert_eq!(
            points.get("c"),
            Some(&Action::Sleep(Duration::from_millis(20)))
        );
        assert_eq!(points.get("d"), Some(&Action::Panic));
        assert!(configure("a").is_err());
        assert!(configure("a=explode").is_err());
        assert!(configure("a=sleep(x)").is_err());
        assert!(configure("").is_ok());
        assert!(POINTS.read().is_none());
    }
}
