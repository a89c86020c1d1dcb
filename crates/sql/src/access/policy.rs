//! What the server lets a session do, set at start-up: which configuration keys a session may
//! change (`hive.conf.restricted.list` and the keys read only at start-up) or see
//! (`hive.conf.hidden.list`), which built-in functions a query may call
//! (`hive.server2.builtin.udf.blacklist` / `.whitelist`), and which paths and hosts a statement
//! may reach ([`Reach`]).

use std::collections::BTreeSet;
use std::sync::Arc;

use apiary_storage::Reach;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::logical_expr::expr::WindowFunctionDefinition;
use datafusion::logical_expr::{DdlStatement, Expr, LogicalPlan};
use datafusion::sql::sqlparser::ast::Statement as SqlStatement;

use crate::error::SqlError;

/// The key listing what a session may not change.
pub const RESTRICTED_LIST_KEY: &str = "hive.conf.restricted.list";
/// The key listing what a session may not see.
pub const HIDDEN_LIST_KEY: &str = "hive.conf.hidden.list";
/// The key listing built-in functions queries may not call.
pub const UDF_BLACKLIST_KEY: &str = "hive.server2.builtin.udf.blacklist";
/// The key listing the only built-in functions queries may call.
pub const UDF_WHITELIST_KEY: &str = "hive.server2.builtin.udf.whitelist";

/// Hive 4's default `hive.conf.restricted.list`.
pub const DEFAULT_RESTRICTED_LIST: &str = "hive.security.authenticator.manager,hive.security.authorization.manager,hive.security.metastore.authorization.manager,hive.security.metastore.authenticator.manager,hive.users.in.admin.role,hive.server2.xsrf.filter.enabled,hive.server2.csrf.filter.enabled,hive.security.authorization.enabled,hive.distcp.privileged.doAs,hive.server2.authentication.ldap.baseDN,hive.server2.authentication.ldap.url,hive.server2.authentication.ldap.Domain,hive.server2.authentication.ldap.groupDNPattern,hive.server2.authentication.ldap.groupFilter,hive.server2.authentication.ldap.userDNPattern,hive.server2.authentication.ldap.userFilter,hive.server2.authentication.ldap.groupMembershipKey,hive.server2.authentication.ldap.userMembershipKey,hive.server2.authentication.ldap.groupClassKey,hive.server2.authentication.ldap.customLDAPQuery,hive.privilege.synchronizer,hive.privilege.synchronizer.interval,anon.policy.enforce.privileges,anon.policy.grant.admin.users,hive.server2.service.users,hive.server2.graceful.stop.timeout,hive.query.max.length,hive.druid.broker.address.default,hive.druid.coordinator.address.default,hikaricp.,hadoop.bin.path,yarn.bin.path,hive.driver.parallel.compilation.global.limit,hive.zookeeper.ssl.keystore.location,hive.zookeeper.ssl.keystore.password,hive.zookeeper.ssl.keystore.type,hive.zookeeper.ssl.truststore.location,hive.zookeeper.ssl.truststore.password,hive.zookeeper.ssl.truststore.type,hive.iceberg.allow.datafiles.in.table.location.only,hive.hook.proto.base-directory,hive.rewrite.data.policy,hive.query.history.enabled";

/// Keys Hive restricts whatever the list says (its internal variables, its test switch).
const ALWAYS_RESTRICTED: &[&str] = &[
    "hive.added.files.path",
    "hive.added.jars.path",
    "hive.added.archives.path",
    "hive.in.test",
    "hive.conf.internal.variable.list",
    RESTRICTED_LIST_KEY,
    HIDDEN_LIST_KEY,
];

/// Hive 4's default `hive.conf.hidden.list`.
pub const DEFAULT_HIDDEN_LIST: &str = "javax.jdo.option.ConnectionPassword,hive.server2.keystore.password,hive.server2.webui.keystore.password,hive.druid.metadata.password,fs.s3.awsAccessKeyId,fs.s3.awsSecretAccessKey,fs.s3n.awsAccessKeyId,fs.s3n.awsSecretAccessKey,fs.s3a.access.key,fs.s3a.secret.key,fs.s3a.proxy.password,dfs.adls.oauth2.credential,fs.adl.oauth2.credential,fs.azure.account.oauth2.client.secret,hive.zookeeper.ssl.keystore.location,hive.zookeeper.ssl.keystore.password,hive.zookeeper.ssl.truststore.location,hive.zookeeper.ssl.truststore.password";

/// The server's rules for sessions. Built once by the server from its configuration.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    reach: Arc<Reach>,
    /// Keys, or prefixes of keys, a session may not change.
    restricted: Vec<String>,
    /// Keys, or prefixes of keys, a session may not see.
    hidden: Vec<String>,
    /// Functions (lower case) queries may not call.
    udf_blacklist: BTreeSet<String>,
    /// When set, the only functions (lower case) queries may call.
    udf_whitelist: Option<BTreeSet<String>>,
    /// SQL-standard authorization, when on (`hive.security.authorization.enabled`).
    authorization: Option<crate::access::decide::Authorization>,
}

/// The entries of a comma-separated list.
fn entries(list: &str) -> impl Iterator<Item = String> + '_ {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

impl Policy {
    /// No rules: every key settable and visible, every function callable, every path and host
    /// reachable (for tests and tools).
    pub fn permissive() -> Self {
        Self::default()
    }

    /// The rules of a server: `restricted_list` and `hidden_list` as Hive reads them (their
    /// own keys are always restricted, hidden keys too), `startup_only` (keys or prefixes the
    /// server reads only at start-up, restricted as well), the function lists (blank: unset)
    /// and what statements may reach.
    pub fn new(
        reach: Arc<Reach>,
        restricted_list: &str,
        hidden_list: &str,
        startup_only: &[&str],
        udf_blacklist: &str,
        udf_whitelist: &str,
    ) -> Self {
        let hidden: Vec<String> = entries(hidden_list).collect();
        let mut restricted: Vec<String> = entries(restricted_list).collect();
        restricted.extend(ALWAYS_RESTRICTED.iter().map(|k| k.to_string()));
        restricted.extend(hidden.iter().cloned());
        restricted.extend(startup_only.iter().map(|k| k.to_string()));
        let lower = |list: &str| -> BTreeSet<String> {
            entries(list).map(|f| f.to_ascii_lowercase()).collect()
        };
        let whitelist = lower(udf_whitelist);
        Self {
            reach,
            restricted,
            hidden,
            udf_blacklist: lower(udf_blacklist),
            udf_whitelist: (!whitelist.is_empty()).then_some(whitelist),
            authorization: None,
        }
    }

    /// Turns SQL-standard authorization on, with the users of the admin role
    /// (`hive.users.in.admin.role`, comma-separated).
    pub fn with_authorization(mut self, admins: &str) -> Self {
        self.authorization = Some(crate::access::decide::Authorization {
            admins: entries(admins).collect(),
        });
        self
    }

    /// SQL-standard authorization, when on.
    pub fn authorization(&self) -> Option<&crate::access::decide::Authorization> {
        self.authorization.as_ref()
    }

    /// What statements may reach.
    pub fn reach(&self) -> &Arc<Reach> {
        &self.reach
    }

    /// Whether `key` is one a session may not see (it or a prefix of it is listed).
    pub fn is_hidden(&self, key: &str) -> bool {
        self.hidden.iter().any(|h| key.starts_with(h.as_str()))
    }

    /// Refuses a key a session may not change (listed, or starting with a listed prefix), as
    /// Hive refuses it.
    pub fn check_settable(&self, key: &str) -> Result<(), SqlError> {
        if self.restricted.iter().any(|r| key.starts_with(r.as_str())) {
            return Err(SqlError::Restricted(key.to_string()));
        }
        Ok(())
    }

    /// Refuses a path a statement names outside the folders it may use; `what` says where
    /// the statement named it (`LOCATION`, `LOAD DATA INPATH`).
    pub fn check_path(&self, what: &str, path: &str) -> Result<(), SqlError> {
        self.reach
            .check_path(what, path)
            .map_err(|e| SqlError::Denied(e.to_string()))
    }

    /// Refuses a statement calling, by the names it is written with (Hive's names), a
    /// function the lists forbid. Nothing is walked when there are no lists.
    pub fn check_called(&self, statement: &SqlStatement) -> Result<(), SqlError> {
        if self.udf_blacklist.is_empty() && self.udf_whitelist.is_none() {
            return Ok(());
        }
        for name in called_functions(statement) {
            if let Some(blocked) = self.blocked_name(&name, &[]) {
                return Err(SqlError::semantic(format!("UDF {blocked} is not allowed")));
            }
        }
        Ok(())
    }

    /// Refuses a plan that calls a blacklisted function (also through a view, or under
    /// another name: an alias, a rewrite), or that names a path (a DataFusion CREATE
    /// EXTERNAL TABLE or COPY) outside the allowed folders. The whitelist is checked on the
    /// names a statement is written with ([`Policy::check_called`]): a plan holds the
    /// functions Hive's forms are rewritten to.
    pub fn check_plan(&self, plan: &LogicalPlan) -> Result<(), SqlError> {
        match plan {
            LogicalPlan::Ddl(DdlStatement::CreateExternalTable(c)) => {
                for location in &c.locations {
                    self.check_path("LOCATION", location)?;
                }
            }
            LogicalPlan::Copy(c) => self.check_path("COPY TO", &c.output_url)?,
            _ => {}
        }
        if self.udf_blacklist.is_empty() {
            return Ok(());
        }
        let mut refused = None;
        plan.apply_with_subqueries(|node| {
            node.apply_expressions(|e| {
                e.apply(|e| {
                    let names: Option<(&str, &[String])> = match e {
                        Expr::ScalarFunction(f) => Some((f.func.name(), f.func.aliases())),
                        Expr::AggregateFunction(f) => Some((f.func.name(), f.func.aliases())),
                        Expr::WindowFunction(w) => Some(match &w.fun {
                            WindowFunctionDefinition::AggregateUDF(f) => (f.name(), f.aliases()),
                            WindowFunctionDefinition::WindowUDF(f) => (f.name(), f.aliases()),
                        }),
                        _ => None,
                    };
                    if let Some((name, aliases)) = names {
                        if let Some(blocked) = self.blacklisted_name(name, aliases) {
                            refused = Some(blocked);
                            return Ok(TreeNodeRecursion::Stop);
                        }
                    }
                    Ok(TreeNodeRecursion::Continue)
                })
            })
        })
        .map_err(SqlError::from_planning)?;
        match refused {
            // Hive's words for a function its lists block (its generic 40000 on the wire).
            Some(name) => Err(SqlError::semantic(format!("UDF {name} is not allowed"))),
            None => Ok(()),
        }
    }

    /// The blacklisted one of a function's names, if any.
    fn blacklisted_name(&self, name: &str, aliases: &[String]) -> Option<String> {
        std::iter::once(name)
            .chain(aliases.iter().map(String::as_str))
            .map(str::to_ascii_lowercase)
            .find(|n| self.udf_blacklist.contains(n))
    }

    /// The name to report when a function, known by `name` and `aliases`, may not be
    /// called: one of its names is blacklisted (that name), or there is a whitelist naming
    /// none of them (`name`). The blacklist wins, as in Hive.
    fn blocked_name(&self, name: &str, aliases: &[String]) -> Option<String> {
        if let Some(listed) = self.blacklisted_name(name, aliases) {
            return Some(listed);
        }
        let all: Vec<String> = std::iter::once(name)
            .chain(aliases.iter().map(String::as_str))
            .map(str::to_ascii_lowercase)
            .collect();
        match &self.udf_whitelist {
            Some(white) if !all.iter().any(|n| white.contains(n)) => Some(name.to_string()),
            _ => None,
        }
    }
}

/// The functions a statement calls, by the names it writes (lower case, unqualified).
fn called_functions(statement: &SqlStatement) -> Vec<String> {
    use datafusion::sql::sqlparser::ast::{visit_expressions, Expr as SqlExpr};
    let mut called = Vec::new();
    let _ = visit_expressions(statement, |e| {
        if let SqlExpr::Function(f) = e {
            let name = f.name.to_string();
            let last = name.rsplit('.').next().unwrap_or(&name);
            called.push(last.trim_matches(['`', '"']).to_ascii_lowercase());
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    called
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> Policy {
        Policy::new(
            Arc::new(Reach::unrestricted()),
            DEFAULT_RESTRICTED_LIST,
            DEFAULT_HIDDEN_LIST,
            &["apiary.", "hive.server2.authentication"],
            "md5, Upper",
            "",
        )
    }

    #[test]
    fn restricted_keys_and_prefixes() {
        let p = policy();
        for key in [
            "hive.security.authorization.enabled",
            "hive.conf.restricted.list",
            "hive.conf.hidden.list",
            "javax.jdo.option.ConnectionPassword",
            "apiary.fs.allowed.paths",
            "hive.server2.authentication.ldap.bindpw",
            "hikaricp.maxConnections",
            "hive.in.test",
        ] {
            assert!(
                matches!(p.check_settable(key), Err(SqlError::Restricted(k)) if k == key),
                "{key}"
            );
        }
        for key in [
            "hive.exec.dynamic.partition.mode",
            "hive.query.timeout.seconds",
            "x",
        ] {
            assert!(p.check_settable(key).is_ok(), "{key}");
        }
        assert!(p.is_hidden("fs.s3a.secret.key"));
        assert!(!p.is_hidden("fs.s3a.endpoint"));
    }

    #[test]
    fn function_lists() {
        let p = policy();
        assert_eq!(p.blocked_name("md5", &[]).as_deref(), Some("md5"));
        assert_eq!(p.blocked_name("upper", &[]).as_deref(), Some("upper"));
        assert_eq!(
            p.blocked_name("ucase", &["upper".into()]).as_deref(),
            Some("upper"),
            "an alias"
        );
        assert_eq!(p.blocked_name("lower", &[]), None);
        let white = Policy::new(Arc::default(), "", "", &[], "sum", "abs,count,sum");
        assert_eq!(white.blocked_name("count", &[]), None);
        assert_eq!(white.blocked_name("avg", &[]).as_deref(), Some("avg"));
        assert_eq!(
            white.blocked_name("sum", &[]).as_deref(),
            Some("sum"),
            "black wins"
        );
    }
}
