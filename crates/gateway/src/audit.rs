//! The audit log: one JSON line per login (accepted or refused, with the client's address),
//! per session opened, refused or closed, and per statement (user, session, text with its
//! secrets masked, and how it ended), appended to a file a deployment can ship
//! (`apiary.audit.log`). Every front end goes through the gateway, so each is audited alike.

use std::io::Write;
use std::net::IpAddr;
use std::path::Path;

use parking_lot::Mutex;

/// What the statement text shows in place of a secret.
const MASK: &str = "******";

/// Words that make a key or property name a secret one.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "bindpw",
    "secret",
    "credential",
    "token",
];

/// One event of the audit log.
#[derive(Debug)]
pub enum AuditEvent<'a> {
    /// A password login was checked.
    Login {
        /// The user name given.
        user: &'a str,
        /// The client's address.
        address: Option<IpAddr>,
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
            accepted,
        } => fields.extend([
            ("event", Some("login".into())),
            ("user", Some(user.to_string())),
            ("address", addr(address)),
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
    let body: Vec<String> = fields
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| format!("\"{k}\":{}", json_string(&v))))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// A JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| lower.contains(w))
}

/// The text with its secrets masked: the value after a secret-named quoted key
/// (`'hive.sql.dbcp.password'='x'`), a URL's `password=` (`...?password=x&..`,
/// `user:x@host`), and the value of `SET <secret key>=x`.
pub fn mask_secrets(text: &str) -> String {
    let trimmed = text.trim_start();
    if trimmed
        .get(..4)
        .is_some_and(|w| w.eq_ignore_ascii_case("set "))
    {
        if let Some((key, _)) = trimmed.get(4..).and_then(|r| r.split_once('=')) {
            if is_secret_name(key) {
                return format!("SET {}={MASK}", key.trim());
            }
        }
    }
    let masked = mask_quoted_values(text);
    let masked = mask_url_field(&masked, "password=");
    mask_url_userinfo(&masked)
}

/// `'secret.key' = 'value'` → `'secret.key' = '******'` (either quote character).
fn mask_quoted_values(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut last_secret_key_end: Option<usize> = None;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' || c == '"' {
            let start = i + 1;
            let mut j = start;
            while j < chars.len() && chars[j] != c {
                if chars[j] == '\\' {
                    j += 1;
                }
                j += 1;
            }
            let end = j.min(chars.len());
            let content: String = chars[start..end].iter().collect();
            // Is this the value of a secret key just before it (`key` `=` `value`)?
            let is_value = last_secret_key_end
                .is_some_and(|k| chars[k..i].iter().collect::<String>().trim() == "=");
            out.push(c);
            if is_value {
                out.push_str(MASK);
                last_secret_key_end = None;
            } else {
                out.push_str(&content);
                last_secret_key_end = is_secret_name(&content).then_some(end + 1);
            }
            if end < chars.len() {
                out.push(c);
            }
            i = end + 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// `<field>value` up to `&`, `;`, a quote or a blank → `<field>******`.
fn mask_url_field(text: &str, field: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    while let Some(at) = lower[pos..].find(field) {
        let start = pos + at + field.len();
        let end = text[start..]
            .find(['&', ';', '\'', '"', ' ', '\n', ')'])
            .map_or(text.len(), |i| start + i);
        out.push_str(&text[pos..start]);
        if end > start {
            out.push_str(MASK);
        }
        pos = end;
    }
    out.push_str(&text[pos..]);
    out
}

/// `scheme://user:password@host` → `scheme://user:******@host`.
fn mask_url_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let authority_end = tail
            .find(['/', '?', '\'', '"', ' ', ';'])
            .unwrap_or(tail.len());
        let authority = &tail[..authority_end];
        match authority
            .rfind('@')
            .and_then(|a| authority[..a].find(':').map(|colon| (colon, a)))
        {
            Some((colon, at)) => {
                out.push_str(&authority[..=colon]);
                out.push_str(MASK);
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[authority_end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_in_statements_are_masked() {
        let create = "CREATE TABLE t (a INT) STORED BY JDBC TBLPROPERTIES ('hive.sql.dbcp.password' = 's3cret', \"hive.sql.table\"='t')";
        let m = mask_secrets(create);
        assert!(!m.contains("s3cret"), "{m}");
        assert!(m.contains("'hive.sql.dbcp.password' = '******'"), "{m}");
        assert!(m.contains("\"hive.sql.table\"='t'"), "{m}");
        let url = "CREATE TABLE t TBLPROPERTIES ('hive.sql.jdbc.url'='jdbc:postgresql://h/db?user=a&password=pw1&ssl=1')";
        assert!(
            mask_secrets(url).contains("password=******&ssl=1"),
            "{}",
            mask_secrets(url)
        );
        let userinfo = "SELECT 'postgresql://bob:hunter2@db:5432/x'";
        assert_eq!(
            mask_secrets(userinfo),
            "SELECT 'postgresql://bob:******@db:5432/x'"
        );
        assert_eq!(
            mask_secrets("set hive.server2.authentication.ldap.bindpw = x"),
            "SET hive.server2.authentication.ldap.bindpw=******"
        );
        assert_eq!(mask_secrets("SELECT 'a', \"b\""), "SELECT 'a', \"b\"");
        assert_eq!(mask_secrets("SELECT 'unterminated"), "SELECT 'unterminated");
        assert_eq!(mask_secrets("x 'password'"), "x 'password'");
    }

    #[test]
    fn lines_are_json() {
        let line = event_json(&AuditEvent::Statement {
            user: "bob",
            session: "s1".into(),
            text: "SELECT \"a\"\n",
            outcome: "FINISHED",
            error: None,
        });
        assert!(line.starts_with("{\"time\":\""), "{line}");
        assert!(
            line.contains("\"statement\":\"SELECT \\\"a\\\"\\n\""),
            "{line}"
        );
        assert!(!line.contains("\"error\""));
    }
}
