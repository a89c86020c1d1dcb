//! Secrets masked in text a server shows or writes: statements in the audit log, URLs among
//! a table's properties.

/// What a masked secret shows.
pub const MASK: &str = "******";

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

/// A URL with its password masked, in either form (`password=x`, `user:x@host`).
pub fn mask_url(text: &str) -> String {
    mask_url_userinfo(&mask_url_field(text, "password="))
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
    fn urls_are_masked_in_both_forms() {
        assert_eq!(
            mask_url("jdbc:postgresql://h/db?user=a&password=s3&ssl=1"),
            "jdbc:postgresql://h/db?user=a&password=******&ssl=1"
        );
        assert_eq!(
            mask_url("jdbc:mysql://app:pw9@db:3306/x"),
            "jdbc:mysql://app:******@db:3306/x"
        );
        assert_eq!(mask_url("jdbc:sqlite:/x.db"), "jdbc:sqlite:/x.db");
    }
}
