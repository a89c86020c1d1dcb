//! Who may act as whom: Hive's `hive.server2.allow.user.substitution` and Hadoop's proxy-user
//! rules (`hadoop.proxyuser.<user>.hosts / .users / .groups`), checked when a session asks to
//! run as another user (`hive.server2.proxy.user`).

use std::net::IpAddr;

use crate::{BTreeMap, GatewayError};

/// Who may act as whom (`hive.server2.allow.user.substitution` and Hadoop's
/// `hadoop.proxyuser.<user>.hosts / .users / .groups`).
#[derive(Debug, Clone)]
pub struct Impersonation {
    /// Whether a session may ask for another user at all.
    pub allowed: bool,
    /// Whether logins are checked: without authentication (NONE), any substitution goes, as
    /// in Hive.
    pub checked: bool,
    /// The rules of each real user who may act for others.
    pub rules: BTreeMap<String, ProxyRule>,
}

impl Default for Impersonation {
    fn default() -> Self {
        Self {
            allowed: true,
            checked: false,
            rules: BTreeMap::new(),
        }
    }
}

/// One `hadoop.proxyuser.<user>.*` rule, each list as configured (`*` for any); an unset
/// list allows nothing, as in Hadoop.
#[derive(Debug, Clone, Default)]
pub struct ProxyRule {
    /// Client addresses the real user may impersonate from.
    pub hosts: Vec<String>,
    /// Users it may act as.
    pub users: Vec<String>,
    /// Groups whose members it may act as (`*` for any; else the groups the directory lists
    /// for the user acted as).
    pub groups: Vec<String>,
}

impl Impersonation {
    /// Whether deciding for `real` needs the groups of the user acted as (a `.groups` rule
    /// naming groups).
    pub fn needs_groups(&self, real: &str) -> bool {
        self.checked
            && self
                .rules
                .get(real)
                .is_some_and(|r| r.groups.iter().any(|g| g != "*"))
    }

    /// Whether `real`, connecting from `address`, may act as `proxy`, who is in
    /// `proxy_groups`; Hive's error otherwise.
    pub(crate) fn check(
        &self,
        real: &str,
        proxy: &str,
        address: Option<IpAddr>,
        proxy_groups: &[String],
    ) -> Result<(), GatewayError> {
        if !self.allowed {
            return Err(GatewayError::Proxy(
                "Proxy user substitution is not allowed".into(),
            ));
        }
        if !self.checked {
            return Ok(());
        }
        let denied = || {
            GatewayError::Proxy(format!(
                "Failed to validate proxy privilege of {real} for {proxy}"
            ))
        };
        let rule = self.rules.get(real).ok_or_else(denied)?;
        let address = address.map(|a| a.to_string());
        let host_ok = rule
            .hosts
            .iter()
            .any(|h| h == "*" || Some(h) == address.as_ref());
        let user_ok = rule.users.iter().any(|u| u == "*" || u == proxy)
            || rule
                .groups
                .iter()
                .any(|g| g == "*" || proxy_groups.contains(g));
        if host_ok && user_ok {
            Ok(())
        } else {
            Err(denied())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(hosts: &[&str], users: &[&str], groups: &[&str]) -> Impersonation {
        let list = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
        let mut rules = BTreeMap::new();
        rules.insert(
            "alice".to_string(),
            ProxyRule {
                hosts: list(hosts),
                users: list(users),
                groups: list(groups),
            },
        );
        Impersonation {
            allowed: true,
            checked: true,
            rules,
        }
    }

    #[test]
    fn proxy_rules_follow_hadoop() {
        let local: Option<IpAddr> = "127.0.0.1".parse().ok();
        let other: Option<IpAddr> = "10.0.0.9".parse().ok();
        let r = rules(&["127.0.0.1"], &["bob"], &[]);
        assert!(r.check("alice", "bob", local, &[]).is_ok());
        assert!(
            r.check("alice", "bob", other, &[]).is_err(),
            "host not listed"
        );
        assert!(
            r.check("alice", "bob", None, &[]).is_err(),
            "address unknown"
        );
        assert!(
            r.check("alice", "carol", local, &[]).is_err(),
            "user not listed"
        );
        assert!(r.check("carol", "bob", local, &[]).is_err(), "no rule");
        let any = rules(&["*"], &[], &["*"]);
        assert!(any.check("alice", "carol", other, &[]).is_ok());
        // A groups rule: members of the listed groups (the directory's answer) may be acted as.
        let by_group = rules(&["*"], &[], &["builders"]);
        assert!(by_group.needs_groups("alice") && !by_group.needs_groups("carol"));
        assert!(!any.needs_groups("alice"));
        let builders = ["builders".to_string()];
        assert!(by_group.check("alice", "bob", local, &builders).is_ok());
        assert!(by_group.check("alice", "carol", local, &[]).is_err());
        let none = rules(&[], &["bob"], &[]);
        assert!(
            none.check("alice", "bob", local, &[]).is_err(),
            "hosts unset"
        );
        let unchecked = Impersonation::default();
        assert!(unchecked.check("x", "y", None, &[]).is_ok());
        let off = Impersonation {
            allowed: false,
            ..Impersonation::default()
        };
        let e = off.check("x", "y", None, &[]).err().map(|e| e.message());
        assert_eq!(e.as_deref(), Some("Proxy user substitution is not allowed"));
    }
}
