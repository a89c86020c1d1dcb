//! Hive's LDAP mode: the user is who a simple bind with their password says they are. Bind
//! names are built as Hive's provider builds them (`hive.server2.authentication.ldap.*`):
//! a user given as a DN or as `name@domain` is used as is; otherwise `name@Domain` when a
//! domain is set, else each `userDNPattern` with `%s` replaced, else `guidKey=name,baseDN`.
//! Each URL is tried in order until one answers; each candidate name is bound until one
//! succeeds. Then, on that bound connection, Hive's filters: `userFilter` (the user's short
//! name must be in the list) and `groupFilter` (the user's DN must be a `groupMembershipKey`
//! of a `groupClassKey` entry named in the list, found by `groupDNPattern` or under `baseDN`).
//! User input is escaped wherever it goes into a DN (RFC 4514) or a filter (RFC 4515), and one
//! deadline covers the whole login, so an unreachable directory fails it instead of hanging.

use std::time::Duration;

use ldap3::{dn_escape, ldap_escape, Ldap, LdapConnAsync, LdapConnSettings, Scope};

use crate::{AuthError, Authenticator};

/// LDAP result code of a bind with wrong credentials.
const INVALID_CREDENTIALS: u32 = 49;

/// Where and how to bind (Hive's keys in brackets).
#[derive(Debug, Clone)]
pub struct LdapConfig {
    /// Directory URLs, tried in order (`hive.server2.authentication.ldap.url`, space-separated).
    pub urls: Vec<String>,
    /// Base DN of users (`...ldap.baseDN`).
    pub base_dn: Option<String>,
    /// Domain appended to short names (`...ldap.Domain`).
    pub domain: Option<String>,
    /// Attribute naming a user under the base DN (`...ldap.guidKey`, default `uid`).
    pub guid_key: String,
    /// DN patterns with `%s` for the user (`...ldap.userDNPattern`, colon-separated).
    pub user_dn_patterns: Vec<String>,
    /// Short names allowed to log in (`...ldap.userFilter`, comma-separated); empty: all.
    pub user_filter: Vec<String>,
    /// Groups whose members may log in (`...ldap.groupFilter`, comma-separated); empty: all.
    pub group_filter: Vec<String>,
    /// Group DN patterns with `%s` for the group name (`...ldap.groupDNPattern`, colon-separated).
    pub group_dn_patterns: Vec<String>,
    /// Attribute of a group naming its members' DNs (`...ldap.groupMembershipKey`, `member`).
    pub group_membership_key: String,
    /// Object class of groups (`...ldap.groupClassKey`, `groupOfNames`).
    pub group_class_key: String,
    /// A service account that searches for the user's DN before the user's bind
    /// (`...ldap.binddn`, Hive 3+), with its password (`...ldap.bindpw`).
    pub bind_dn: Option<(String, String)>,
    /// Time allowed for a whole login (every connect and bind it tries).
    pub timeout: Duration,
    /// TLS for `ldaps://` URLs: the CA certificates trusted (`apiary.authentication.ldap.ca.file`,
    /// else the system's store).
    pub tls: Option<std::sync::Arc<rustls::ClientConfig>>,
}

impl LdapConfig {
    /// Checks what can be checked before the first login.
    pub fn validate(&self) -> Result<(), String> {
        if self.urls.is_empty() {
            return Err(
                "hive.server2.authentication=LDAP needs hive.server2.authentication.ldap.url"
                    .into(),
            );
        }
        for url in &self.urls {
            let lower = url.to_ascii_lowercase();
            if lower.starts_with("ldaps://") {
                if self.tls.is_none() {
                    return Err(format!(
                        "LDAP URL {url}: ldaps:// needs a TLS configuration"
                    ));
                }
            } else if !lower.starts_with("ldap://") {
                return Err(format!(
                    "LDAP URL {url}: only ldap:// and ldaps:// are supported"
                ));
            }
        }
        if let Some(p) = self.user_dn_patterns.iter().find(|p| !p.contains("%s")) {
            return Err(format!(
                "hive.server2.authentication.ldap.userDNPattern {p} has no %s"
            ));
        }
        if let Some(p) = self.group_dn_patterns.iter().find(|p| !p.contains("%s")) {
            return Err(format!(
                "hive.server2.authentication.ldap.groupDNPattern {p} has no %s"
            ));
        }
        if !self.group_filter.is_empty()
            && self.group_dn_patterns.is_empty()
            && self.base_dn.as_deref().is_none_or(str::is_empty)
        {
            return Err(
                "hive.server2.authentication.ldap.groupFilter needs groupDNPattern or baseDN"
                    .into(),
            );
        }
        Ok(())
    }

    /// The short name of a user as given (`alice` for `alice`, `alice@corp` or `uid=alice,..`).
    pub fn short_name(user: &str) -> String {
        let first = if user.contains('=') {
            user.split(',')
                .next()
                .and_then(|rdn| rdn.split_once('='))
                .map_or(user, |(_, v)| v)
        } else {
            user.split('@').next().unwrap_or(user)
        };
        first.trim().to_lowercase()
    }

    /// Whether `user` passes `userFilter`.
    fn user_allowed(&self, user: &str) -> bool {
        self.user_filter.is_empty() || {
            let short = Self::short_name(user);
            self.user_filter
                .iter()
                .any(|u| u.eq_ignore_ascii_case(&short))
        }
    }

    /// The names to bind as for `user`, in the order Hive's provider tries them.
    pub fn candidates(&self, user: &str) -> Vec<String> {
        if user.contains('=') || user.contains('@') {
            return vec![user.to_string()];
        }
        if let Some(domain) = self.domain.as_deref().filter(|d| !d.is_empty()) {
            return vec![format!("{user}@{domain}")];
        }
        let escaped = dn_escape(user);
        if !self.user_dn_patterns.is_empty() {
            return self
                .user_dn_patterns
                .iter()
                .map(|p| p.replace("%s", &escaped))
                .collect();
        }
        match self.base_dn.as_deref().filter(|b| !b.is_empty()) {
            Some(base) => vec![format!("{}={escaped},{base}", self.guid_key)],
            None => vec![user.to_string()],
        }
    }
}

/// Hive's LDAP authentication.
#[derive(Debug)]
pub struct LdapAuthenticator {
    config: LdapConfig,
}

impl LdapAuthenticator {
    /// An authenticator over `config` (checked with [`LdapConfig::validate`]).
    pub fn new(config: LdapConfig) -> Result<Self, String> {
        config.validate()?;
        Ok(Self { config })
    }

    /// A connection to one directory, with the task driving it (aborted when dropped, so
    /// a call cut off by its deadline keeps no task or socket of ours).
    async fn connect(&self, url: &str) -> Result<(Ldap, AbortOnDrop), String> {
        let mut settings = LdapConnSettings::new().set_conn_timeout(self.config.timeout);
        if let Some(tls) = &self.config.tls {
            // Always our configuration (ring, TLS 1.2/1.3, the configured CAs): ldap3's own
            // would look for a process-wide crypto provider.
            settings = settings.set_config(tls.clone());
        }
        let (conn, ldap) = LdapConnAsync::with_settings(settings, url)
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        let driver = AbortOnDrop(tokio::spawn(async move {
            if let Err(e) = conn.drive().await {
                tracing::debug!(error = %e, "LDAP connection ended");
            }
        }));
        Ok((ldap, driver))
    }

    /// The groups (`cn`s of `groupClassKey` entries whose `groupMembershipKey` names the
    /// user's DN) of `user` in one directory, read anonymously or as the service account.
    async fn groups_at(&self, url: &str, user: &str) -> Result<Vec<String>, String> {
        let (mut ldap, _driver) = self.connect(url).await?;
        let candidates = self.config.candidates(user);
        let dns = match &self.config.bind_dn {
            None => candidates,
            Some((dn, pw)) => self.find_user(&mut ldap, dn, pw, &candidates).await?,
        };
        let c = &self.config;
        let bases: Vec<String> = if c.group_dn_patterns.is_empty() {
            vec![c.base_dn.clone().unwrap_or_default()]
        } else {
            c.group_dn_patterns
                .iter()
                .filter_map(|p| split_first_rdn(p).map(|(_, parent)| parent.to_string()))
                .collect()
        };
        let mut groups = Vec::new();
        for dn in &dns {
            let filter = format!(
                "(&(objectClass={})({}={}))",
                ldap_escape(c.group_class_key.as_str()),
                ldap_escape(c.group_membership_key.as_str()),
                ldap_escape(dn.as_str())
            );
            for base in &bases {
                let r = ldap
                    .search(base, Scope::Subtree, &filter, vec!["cn"])
                    .await
                    .map_err(|e| format!("{url}: {e}"))?;
                if r.1.rc != 0 && r.1.rc != 32 {
                    return Err(format!(
                        "{url}: LDAP search failed ({}): {}",
                        r.1.rc, r.1.text
                    ));
                }
                for entry in r.0 {
                    let entry = ldap3::SearchEntry::construct(entry);
                    groups.extend(entry.attrs.get("cn").cloned().unwrap_or_default());
                }
            }
        }
        let _ = tokio::time::timeout(self.config.timeout, ldap.unbind()).await;
        groups.sort();
        groups.dedup();
        Ok(groups)
    }

    /// Binds each candidate name on one directory; `Ok(true)` when one bound.
    async fn try_url(&self, url: &str, names: &[String], password: &str) -> Result<bool, String> {
        let (mut ldap, _driver) = self.connect(url).await?;
        let found;
        let names = match &self.config.bind_dn {
            None => names,
            Some((dn, pw)) => match self.find_user(&mut ldap, dn, pw, names).await {
                Ok(f) => {
                    found = f;
                    found.as_slice()
                }
                Err(e) => {
                    let _ = tokio::time::timeout(self.config.timeout, ldap.unbind()).await;
                    return Err(format!("{url}: {e}"));
                }
            },
        };
        let mut outcome = Ok(false);
        for name in names {
            let bind = tokio::time::timeout(self.config.timeout, ldap.simple_bind(name, password));
            match bind.await {
                Err(_) => {
                    outcome = Err(format!("{url}: bind timed out"));
                    break;
                }
                Ok(Err(e)) => {
                    outcome = Err(format!("{url}: {e}"));
                    break;
                }
                Ok(Ok(r)) if r.rc == 0 => {
                    outcome = self
                        .in_groups(&mut ldap, name)
                        .await
                        .map_err(|e| format!("{url}: {e}"));
                    break;
                }
                Ok(Ok(r)) if r.rc == INVALID_CREDENTIALS => {}
                Ok(Ok(r)) => tracing::info!(rc = r.rc, text = %r.text, "LDAP bind refused"),
            }
        }
        let _ = tokio::time::timeout(self.config.timeout, ldap.unbind()).await;
        outcome
    }
}

impl LdapAuthenticator {
    /// Search mode: binds as the service account and finds the user's entry, named by the
    /// attribute of each candidate's first RDN under its parent; the DNs found (none for an
    /// unknown user) are what the user then binds as.
    async fn find_user(
        &self,
        ldap: &mut Ldap,
        bind_dn: &str,
        bind_pw: &str,
        candidates: &[String],
    ) -> Result<Vec<String>, String> {
        let r = ldap
            .simple_bind(bind_dn, bind_pw)
            .await
            .map_err(|e| e.to_string())?;
        if r.rc != 0 {
            return Err(format!(
                "the service account (hive.server2.authentication.ldap.binddn) could not bind: {}",
                r.rc
            ));
        }
        let mut found = Vec::new();
        for candidate in candidates {
            // `uid=alice,ou=people,dc=t`: look for uid=alice under ou=people,dc=t.
            let Some((rdn, parent)) = split_first_rdn(candidate) else {
                continue;
            };
            let Some((attr, value)) = rdn.split_once('=') else {
                continue;
            };
            // The candidate's value is DN-escaped (`\2c`); the filter wants it plain, then
            // filter-escaped.
            let Ok(value) = ldap3::ldap_unescape(value) else {
                continue;
            };
            let filter = format!("({}={})", ldap_escape(attr), ldap_escape(value.as_ref()));
            let r = ldap
                .search(parent, Scope::Subtree, &filter, vec!["1.1"])
                .await
                .map_err(|e| e.to_string())?;
            if r.1.rc != 0 && r.1.rc != 32 {
                return Err(format!("LDAP search failed ({}): {}", r.1.rc, r.1.text));
            }
            // Exactly one entry, or the name is ambiguous and no one logs in with it.
            if let [entry] = r.0.as_slice() {
                found.push(ldap3::SearchEntry::construct(entry.clone()).dn);
            }
        }
        Ok(found)
    }

    /// Whether the user bound as `dn` passes `groupFilter`, asked on the user's own bound
    /// connection.
    async fn in_groups(&self, ldap: &mut Ldap, dn: &str) -> Result<bool, String> {
        let c = &self.config;
        if c.group_filter.is_empty() {
            return Ok(true);
        }
        let member = format!(
            "(&(objectClass={})({}={}))",
            ldap_escape(c.group_class_key.as_str()),
            ldap_escape(c.group_membership_key.as_str()),
            ldap_escape(dn)
        );
        for group in &c.group_filter {
            let found = if c.group_dn_patterns.is_empty() {
                let base = c.base_dn.as_deref().unwrap_or_default();
                let filter = format!("(&{member}(cn={}))", ldap_escape(group.as_str()));
                self.search(ldap, base, Scope::Subtree, &filter).await?
            } else {
                let mut any = false;
                for p in &c.group_dn_patterns {
                    let base = p.replace("%s", &dn_escape(group.as_str()));
                    if self.search(ldap, &base, Scope::Base, &member).await? {
                        any = true;
                        break;
                    }
                }
                any
            };
            if found {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether a search finds any entry; a base that does not exist finds none.
    async fn search(
        &self,
        ldap: &mut Ldap,
        base: &str,
        scope: Scope,
        filter: &str,
    ) -> Result<bool, String> {
        const NO_SUCH_OBJECT: u32 = 32;
        let r = ldap
            .search(base, scope, filter, vec!["1.1"])
            .await
            .map_err(|e| e.to_string())?;
        match r.1.rc {
            0 => Ok(!r.0.is_empty()),
            NO_SUCH_OBJECT => Ok(false),
            rc => Err(format!("LDAP search failed ({rc}): {}", r.1.text)),
        }
    }
}

#[async_trait::async_trait]
impl Authenticator for LdapAuthenticator {
    fn mode(&self) -> &'static str {
        "LDAP"
    }

    async fn groups_of(&self, user: &str) -> Result<Vec<String>, AuthError> {
        let lookup = async {
            let mut last = String::from("no LDAP URL");
            for url in &self.config.urls {
                match self.groups_at(url, user).await {
                    Ok(groups) => return Ok(groups),
                    Err(e) => last = e,
                }
            }
            Err(AuthError::Unavailable(last))
        };
        tokio::time::timeout(self.config.timeout, lookup)
            .await
            .unwrap_or_else(|_| {
                Err(AuthError::Unavailable(
                    "the directory did not answer in time".into(),
                ))
            })
    }

    async fn authenticate(&self, user: &str, password: &str) -> Result<(), AuthError> {
        // One deadline for the whole login (every URL and name), so a slow directory fails
        // the login with an answer inside the client's login timeout.
        match tokio::time::timeout(self.config.timeout, self.bind_any(user, password)).await {
            Ok(r) => r,
            Err(_) => Err(AuthError::Unavailable(format!(
                "the LDAP servers did not answer within {} s",
                self.config.timeout.as_secs()
            ))),
        }
    }
}

impl LdapAuthenticator {
    /// Tries each URL, then each bind name on it, until one bind succeeds.
    async fn bind_any(&self, user: &str, password: &str) -> Result<(), AuthError> {
        if !self.config.user_allowed(user) {
            return Err(AuthError::Refused(format!(
                "Error validating LDAP user: {user} is not in userFilter"
            )));
        }
        let names = self.config.candidates(user);
        let mut unreachable = Vec::new();
        for url in &self.config.urls {
            match self.try_url(url, &names, password).await {
                Ok(true) => return Ok(()),
                Ok(false) => {
                    return Err(AuthError::Refused(format!(
                    "Error validating LDAP user: {user} (wrong credentials, or not in groupFilter)"
                )))
                }
                Err(e) => unreachable.push(e),
            }
        }
        Err(AuthError::Unavailable(format!(
            "no LDAP server answered: {}",
            unreachable.join("; ")
        )))
    }
}

/// Aborts a spawned task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A DN's first RDN and the rest (its parent), splitting at the first unescaped comma.
fn split_first_rdn(dn: &str) -> Option<(&str, &str)> {
    let bytes = dn.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b',' => return Some((&dn[..i], dn[i + 1..].trim_start())),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> LdapConfig {
        LdapConfig {
            urls: vec!["ldap://127.0.0.1:1".into()],
            base_dn: Some("ou=people,dc=apiary,dc=test".into()),
            domain: None,
            guid_key: "uid".into(),
            user_dn_patterns: vec![],
            user_filter: vec![],
            group_filter: vec![],
            group_dn_patterns: vec![],
            group_membership_key: "member".into(),
            group_class_key: "groupOfNames".into(),
            bind_dn: None,
            timeout: Duration::from_secs(1),
            tls: None,
        }
    }

    #[test]
    fn first_rdn_splits_at_the_first_unescaped_comma() {
        assert_eq!(
            split_first_rdn("uid=a\\2cb,ou=p,dc=t"),
            Some(("uid=a\\2cb", "ou=p,dc=t"))
        );
        assert_eq!(
            split_first_rdn("uid=a\\,b,ou=p"),
            Some(("uid=a\\,b", "ou=p"))
        );
        assert_eq!(split_first_rdn("dc=t"), None);
    }

    #[test]
    fn short_names_and_user_filter() {
        assert_eq!(LdapConfig::short_name("Alice"), "alice");
        assert_eq!(LdapConfig::short_name("alice@corp.test"), "alice");
        assert_eq!(LdapConfig::short_name("uid=alice,ou=p,dc=t"), "alice");
        let c = LdapConfig {
            user_filter: vec!["alice".into(), "carol".into()],
            ..config()
        };
        assert!(c.user_allowed("ALICE") && c.user_allowed("carol@corp") && !c.user_allowed("bob"));
        let g = LdapConfig {
            group_filter: vec!["analysts".into()],
            base_dn: None,
            ..config()
        };
        assert!(
            g.validate().is_err(),
            "a group filter needs somewhere to look"
        );
    }

    #[test]
    fn bind_names_follow_hive_and_escape_input() {
        let c = config();
        assert_eq!(
            c.candidates("alice"),
            ["uid=alice,ou=people,dc=apiary,dc=test"]
        );
        assert_eq!(
            c.candidates("a,b+c"),
            ["uid=a\\2cb\\2bc,ou=people,dc=apiary,dc=test"]
        );
        assert_eq!(c.candidates("cn=x,dc=y"), ["cn=x,dc=y"]);
        let p = LdapConfig {
            user_dn_patterns: vec!["uid=%s,ou=a,dc=t".into(), "cn=%s,ou=b,dc=t".into()],
            ..config()
        };
        assert_eq!(
            p.candidates("bob"),
            ["uid=bob,ou=a,dc=t", "cn=bob,ou=b,dc=t"]
        );
        let d = LdapConfig {
            domain: Some("corp.test".into()),
            ..config()
        };
        assert_eq!(d.candidates("bob"), ["bob@corp.test"]);
    }

    #[test]
    fn configuration_is_checked() {
        assert!(config().validate().is_ok());
        let none = LdapConfig {
            urls: vec![],
            ..config()
        };
        assert!(none.validate().is_err());
        let tls = LdapConfig {
            urls: vec!["ldaps://h".into()],
            ..config()
        };
        assert!(tls.validate().is_err());
        let tls = LdapConfig {
            tls: apiary_tls::client_config(None).ok(),
            ..tls
        };
        assert!(tls.validate().is_ok());
        let other = LdapConfig {
            urls: vec!["http://h".into()],
            ..tls
        };
        assert!(other.validate().is_err());
    }

    #[tokio::test]
    async fn an_unreachable_directory_is_unavailable_not_refused() {
        let a = LdapAuthenticator::new(config()).map_err(|e| e.to_string());
        let Ok(a) = a else {
            panic!("config refused");
        };
        let r = a.authenticate("alice", "pw").await;
        assert!(matches!(r, Err(AuthError::Unavailable(_))), "{r:?}");
    }
}
