//! SQL-standard authorization (`hive.security.authorization.enabled`), as Hive's
//! SQLStdHiveAuthorizer does it: the owner of a table or view holds every privilege on it
//! (with the grant option); others hold what GRANT gave them or one of their current roles;
//! the `public` role is everyone's, and the `admin` role (`hive.users.in.admin.role`, or
//! granted) may do anything once a session has `SET ROLE ADMIN`. Roles and grants live in the
//! metastore, so servers sharing it enforce the same grants.
//!
//! This module decides; the session asks it before a statement runs (what each statement
//! This module decides; what each statement needs is [`crate::access::needs`], and the
//! authorization statements themselves run in [`crate::statement::grant`].

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use apiary_metastore::{
    Database, Grant, GrantObject, Metastore, MetastoreError, PrincipalType, Table,
};

use crate::error::SqlError;
use crate::parser::PRIVILEGES;

/// The role whose current members may do anything.
pub const ADMIN: &str = "admin";
/// The role every user is in.
pub const PUBLIC: &str = "public";
/// Names no role may take (besides `admin` and `public`, which always exist).
pub(crate) const RESERVED: [&str; 3] = ["all", "none", "default"];

/// The server's authorization settings: on when present.
#[derive(Debug, Clone, Default)]
pub struct Authorization {
    /// Users in the admin role (`hive.users.in.admin.role`).
    pub admins: BTreeSet<String>,
}

/// Which of their roles a session uses (SET ROLE).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum RoleSetting {
    /// Every role granted, except admin (a session starts so; SET ROLE ALL).
    #[default]
    Default,
    /// One role (SET ROLE r), or none (SET ROLE NONE).
    Only(Option<String>),
}

/// Who a statement runs as: the user and the roles in force.
#[derive(Debug, Clone)]
pub struct Subject {
    /// The session's user.
    pub user: String,
    /// Current roles, with what they were granted; `public` always.
    pub roles: BTreeSet<String>,
    /// Whether the admin role is current.
    pub admin: bool,
    /// The roles SHOW CURRENT ROLES lists.
    pub shown: Vec<String>,
}

/// What a statement needs on one object.
#[derive(Debug, Clone)]
pub enum Need {
    /// Privileges on a table or view (with the grant option when `grant` is set).
    Privileges {
        /// The table.
        table: Table,
        /// SELECT, INSERT, UPDATE, DELETE.
        privileges: Vec<&'static str>,
        /// Whether they must be held WITH GRANT OPTION.
        grant: bool,
    },
    /// Ownership of a table or view.
    TableOwner(Table),
    /// Ownership of a database (the `default` database is `public`'s: everyone's).
    DatabaseOwner(Database),
    /// The admin role, for what an object of Hive's `object_type` (COMMAND_PARAMS, DFS_URI,
    /// LOCAL_URI, DATABASE, TABLE_OR_VIEW) named `name` would allow.
    Admin {
        /// Hive's object type.
        object_type: &'static str,
        /// The object.
        name: String,
    },
}

pub(crate) fn meta(e: MetastoreError) -> SqlError {
    SqlError::from(e)
}

pub(crate) fn table_object(db: &str, name: &str) -> GrantObject {
    GrantObject::Table {
        database: db.to_string(),
        name: name.to_string(),
    }
}

pub(crate) fn object_name(t: &Table) -> String {
    format!("{}.{}", t.database, t.name)
}

impl Authorization {
    /// Every role `user` holds: granted to them, to those roles in turn, `public`, and
    /// `admin` for the configured admins.
    pub async fn granted_roles(
        &self,
        ms: &dyn Metastore,
        user: &str,
    ) -> Result<BTreeSet<String>, SqlError> {
        let mut out = BTreeSet::from([PUBLIC.to_string()]);
        if self.admins.contains(user) {
            out.insert(ADMIN.to_string());
        }
        let mut todo = vec![(PrincipalType::User, user.to_string())];
        while let Some((kind, name)) = todo.pop() {
            for g in ms.grants_of((kind, &name)).await.map_err(meta)? {
                if let GrantObject::Role { name: role } = g.object {
                    if out.insert(role.clone()) {
                        todo.push((PrincipalType::Role, role));
                    }
                }
            }
        }
        Ok(out)
    }

    /// The roles `role` is in, itself included.
    async fn role_closure(
        &self,
        ms: &dyn Metastore,
        role: &str,
    ) -> Result<BTreeSet<String>, SqlError> {
        let mut out = BTreeSet::from([role.to_string()]);
        let mut todo = vec![role.to_string()];
        while let Some(name) = todo.pop() {
            for g in ms
                .grants_of((PrincipalType::Role, &name))
                .await
                .map_err(meta)?
            {
                if let GrantObject::Role { name: r } = g.object {
                    if out.insert(r.clone()) {
                        todo.push(r);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Who a session with `setting` acts as.
    pub async fn subject(
        &self,
        ms: &dyn Metastore,
        user: &str,
        setting: &RoleSetting,
    ) -> Result<Subject, SqlError> {
        let (mut roles, shown) = match setting {
            RoleSetting::Default => {
                let granted = self.granted_roles(ms, user).await?;
                let roles: BTreeSet<String> = granted.into_iter().filter(|r| r != ADMIN).collect();
                let shown = roles.iter().cloned().collect();
                (roles, shown)
            }
            RoleSetting::Only(None) => (BTreeSet::new(), Vec::new()),
            RoleSetting::Only(Some(role)) => {
                // Checked on every statement: a role revoked or dropped since SET ROLE gives
                // nothing.
                if self.granted_roles(ms, user).await?.contains(role) {
                    (self.role_closure(ms, role).await?, vec![role.clone()])
                } else {
                    (BTreeSet::new(), Vec::new())
                }
            }
        };
        roles.insert(PUBLIC.to_string());
        Ok(Subject {
            user: user.to_string(),
            admin: roles.contains(ADMIN),
            roles,
            shown,
        })
    }

    /// The privileges `s` holds on `table`, each with whether it carries the grant option.
    pub async fn privileges(
        &self,
        ms: &dyn Metastore,
        s: &Subject,
        table: &Table,
    ) -> Result<BTreeMap<String, bool>, SqlError> {
        if s.admin || table.owner == s.user {
            return Ok(PRIVILEGES.iter().map(|p| (p.to_string(), true)).collect());
        }
        let mut out = BTreeMap::new();
        for g in ms
            .grants_on(&table_object(&table.database, &table.name))
            .await
            .map_err(meta)?
        {
            if holds(s, &g) {
                *out.entry(g.privilege.clone()).or_insert(false) |= g.grant_option;
            }
        }
        Ok(out)
    }

    /// Whether `s` may see `table` in listings (SHOW TABLES, GetTables): any privilege on it.
    pub async fn may_see(
        &self,
        ms: &dyn Metastore,
        s: &Subject,
        table: &Table,
    ) -> Result<bool, SqlError> {
        Ok(!self.privileges(ms, s, table).await?.is_empty())
    }

    /// Refuses, in Hive's words, a statement (`operation`, Hive's name for it) whose needs
    /// `s` does not meet, listing every one missing.
    pub async fn check(
        &self,
        ms: &dyn Metastore,
        s: &Subject,
        operation: &str,
        needs: &[Need],
    ) -> Result<(), SqlError> {
        if s.admin {
            return Ok(());
        }
        let mut missing = Vec::new();
        for need in needs {
            match need {
                Need::Privileges {
                    table,
                    privileges,
                    grant,
                } => {
                    let held = self.privileges(ms, s, table).await?;
                    let lacking: Vec<String> = privileges
                        .iter()
                        .filter(|p| match held.get(**p) {
                            Some(option) => *grant && !option,
                            None => true,
                        })
                        .map(|p| {
                            if *grant {
                                format!("{p} with grant")
                            } else {
                                p.to_string()
                            }
                        })
                        .collect();
                    if !lacking.is_empty() {
                        missing.push(format!(
                            "[{}] on Object [type=TABLE_OR_VIEW, name={}]",
                            lacking.join(", "),
                            object_name(table)
                        ));
                    }
                }
                Need::TableOwner(table) => {
                    if table.owner != s.user {
                        missing.push(format!(
                            "[OBJECT OWNERSHIP] on Object [type=TABLE_OR_VIEW, name={}]",
                            object_name(table)
                        ));
                    }
                }
                Need::DatabaseOwner(db) => {
                    let public = db.owner == PUBLIC || db.owner.is_empty();
                    if !public && db.owner != s.user {
                        missing.push(format!(
                            "[OBJECT OWNERSHIP] on Object [type=DATABASE, name={}]",
                            db.name
                        ));
                    }
                }
                Need::Admin { object_type, name } => missing.push(format!(
                    "[ADMIN PRIVILEGE] on Object [type={object_type}, name={name}]"
                )),
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        Err(SqlError::Denied(format!(
            "Principal [name={}, type=USER] does not have following privileges for operation {operation} [{}]",
            s.user,
            missing.join(", ")
        )))
    }
}

pub(crate) fn holds(s: &Subject, g: &Grant) -> bool {
    match g.principal_type {
        PrincipalType::User => g.principal_name == s.user,
        PrincipalType::Role => s.roles.contains(&g.principal_name),
    }
}

/// What a session may see of the catalog (SHOW TABLES, GetTables, GetColumns): a table or
/// view on which its user or current roles hold any privilege.
#[derive(Debug, Clone)]
pub struct Visibility {
    /// The server's settings.
    pub auth: Authorization,
    /// The catalog.
    pub metastore: Arc<dyn Metastore>,
    /// The session's user.
    pub user: String,
    /// The session's roles.
    pub roles: RoleSetting,
}

impl Visibility {
    /// The tables of `tables` the session may see.
    pub async fn filter(&self, tables: Vec<Table>) -> Result<Vec<Table>, SqlError> {
        let ms = self.metastore.as_ref();
        let subject = self.auth.subject(ms, &self.user, &self.roles).await?;
        let mut out = Vec::with_capacity(tables.len());
        for t in tables {
            if self.auth.may_see(ms, &subject, &t).await? {
                out.push(t);
            }
        }
        Ok(out)
    }

    /// The tables of `tables` whose columns the session may list (GetColumns): those it
    /// may SELECT from, as Hive asks of GET_COLUMNS.
    pub async fn readable(&self, tables: Vec<Table>) -> Result<Vec<Table>, SqlError> {
        let ms = self.metastore.as_ref();
        let subject = self.auth.subject(ms, &self.user, &self.roles).await?;
        let mut out = Vec::with_capacity(tables.len());
        for t in tables {
            if self
                .auth
                .privileges(ms, &subject, &t)
                .await?
                .contains_key("SELECT")
            {
                out.push(t);
            }
        }
        Ok(out)
    }
}
