//! The audit log: one JSON line per login (accepted or refused, with the client's address),
//! per session opened, refused or closed, and per statement (user, session, text with its
//! secrets masked, and how it ended), appended to a file a deployment can ship
//! (`apiary.audit.log`). Every front end goes through the gateway, so each is audited alike.

use std::io::Write;
use std::net::IpAddr;
use std::path::Path;

use apiary_sql::redact::mask_secrets;
use parking_lot::Mutex;

/// One event of the audit log.
#[derive(Debug)]
pub enum AuditEvent<'a> {
    /// A password login was checked.
    Login {
        /// The user name given (or the token's, for a JWT; blank when it was refused).
        user: &'a str,
        /// The client's address.
        address: Option<IpAddr>,
        /// How the client proved who it is: `password` or `JWT`.
        method: &'a str,
        /// Whether it was accepted.
        accepted: bool,
    },
    /// A session was opened, or refused (`error`).
    SessionOpen {
        /// The session's user.
        user: &'a str,
        /// The client's address.
        address: Option<IpAddr>,
        /// The session's handle, when it opened.
        session: Option<String>,
        /// Why it was refused.
        error: Option<String>,
    },
    /// A session ended.
    SessionClose {
        /// The session's user.
        user: &'a str,
        /// The session's handle.
        session: String,
    },
    /// A statement ended (or could not start).
    Statement {
        /// The session's user.
        user: &'a str,
        /// The session's handle.
        session: String,
        /// The statement, its secrets masked.
        text: &'a str,
        /// FINISHED, ERROR, CANCELED, TIMEDOUT or CLOSED.
        outcome: &'a str,
        /// The error, if it failed.
        error: Option<String>,
    },
}

/// An append-only audit file.
#[derive(Debug)]
pub struct AuditLog {
    out: Mutex<std::fs::File>,
}

impl AuditLog {
    /// Opens (or creates, readable by its owner only) the audit file at `path`.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        Ok(Self {
            out: Mutex::new(options.open(path)?),
        })
    }

    /// Appends one event as a line. A write that fails is reported in the server log; the
    /// work it describes goes on.
    pub fn record(&self, event: AuditEvent<'_>) {
        let line = format!("{}\n", event_json(&event));
        if let Err(e) = self.out.lock().write_all(line.as_bytes()) {
            tracing::error!(error = %e, "cannot write the audit log");
        }
    }
}

fn event_json(event: &AuditEvent<'_>) -> String {
    let time = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let addr = |a: &Option<IpAddr>| a.map(|a| a.to_string());
    let mut fields: Vec<(&str, Option<String>)> = vec![("time", Some(time))];
    match event {
        AuditEvent::Login {
            user,
            address,
            method,
            accepted,
        } => fields.extend([
            ("event", Some("login".into())),
            ("user", Some(user.to_string())),
            ("address", addr(address)),
            ("method", Some(method.to_string())),
            (
                "outcome",
                Some(if *accepted { "accepted" } else { "refused" }.into()),
            ),
        ]),
        AuditEvent::SessionOpen {
            user,
            address,
            session,
            error,
        } => fields.extend([
            ("event", Some("session_open".into())),
            ("user", Some(user.to_string())),
            ("address", addr(address)),
            ("session", session.clone()),
            (
                "outcome",
                Some(if error.is_none() { "opened" } else { "refused" }.into()),
            ),
            ("error", error.clone()),
        ]),
        AuditEvent::SessionClose { user, session } => fields.extend([
            ("event", Some("session_close".into())),
            ("user", Some(user.to_string())),
            ("session", Some(session.clone())),
        ]),
        AuditEvent::Statement {
            user,
            session,
            text,
            outcome,
            error,
        } => fields.extend([
            ("event", Some("statement".into())),
            ("user", Some(user.to_string())),
            ("session", Some(session.clone())),
            ("statement", Some(mask_secrets(text))),
            ("outcome", Some(outcome.to_string())),
            ("error", error.as_deref().map(mask_secrets)),
        ]),
    }
    let body: serde_json::Map<String, serde_json::Value> = fields
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k.to_string(), serde_json::Value::String(v))))
        .collect();
    serde_json::Value::Object(body).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_json() {
        let line = event_json(&AuditEvent::Statement {
            user: "bob",
            session: "s1".into(),
            text: "SELECT \"a\"\n",
            outcome: "FINISHED",
            error: None,
        });
        let parsed: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(parsed["statement"], "SELECT \"a\"\n");
        assert!(parsed["time"].as_str().is_some_and(|t| t.ends_with('Z')));
        assert!(
            line.contains("\"statement\":\"SELECT \\\"a\\\"\\n\""),
            "{line}"
        );
        assert!(!line.contains("\"error\""));
    }
}
