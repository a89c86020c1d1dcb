//! GRANT, REVOKE, the role statements (CREATE/DROP ROLE, GRANT/REVOKE ROLE, SET ROLE) and
//! SHOW GRANT / SHOW ROLES / SHOW ROLE GRANT / SHOW CURRENT ROLES / SHOW PRINCIPALS, as Hive's
//! SQL-standard authorizer runs them: each change is one metastore transaction.
//!
//! ```sql
//! GRANT SELECT, INSERT ON TABLE sales TO USER alice WITH GRANT OPTION;
//! REVOKE GRANT OPTION FOR SELECT ON sales FROM USER alice;
//! CREATE ROLE analysts; GRANT analysts TO USER bob WITH ADMIN OPTION;
//! SET ROLE analysts; SHOW GRANT USER alice ON TABLE sales; SHOW CURRENT ROLES;
//! ```

use std::collections::BTreeSet;
use std::sync::Arc;

use apiary_metastore::{
    Grant, GrantChange, GrantObject, Metastore, MetastoreError, PrincipalType, Role, Table,
    BUILTIN_ROLES,
};

use crate::access::decide::{
    holds, object_name, table_object, Authorization, RoleSetting, ADMIN, PUBLIC, RESERVED,
};
use crate::access::decide::{meta, Need, Subject};
use crate::access::needs::{find_table, qualified};
use crate::error::SqlError;
use crate::parser::{AuthzStatement, Principal, TableName, PRIVILEGES};
use crate::prepared::{rows, string_rows, Prepared};

/// The end of Hive's refusals of what only a current admin may do.
const ADMIN_ONLY: &str =
    "User has to belong to ADMIN role and have it as current role, for this action.";

/// Hive's refusal of a command only a current admin may run.
fn not_admin(user: &str, action: &str) -> SqlError {
    SqlError::ddl(format!(
        "Current user : {user} is not allowed to {action}. {ADMIN_ONLY}"
    ))
}

/// Hive's error of a DDL task (return code 1) for authorization statements.
fn ddl_error(message: String) -> SqlError {
    SqlError::ddl(message)
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

fn principal_parts(p: &Principal) -> (PrincipalType, &str) {
    match p {
        Principal::User(u) => (PrincipalType::User, u.as_str()),
        Principal::Role(r) => (PrincipalType::Role, r.as_str()),
    }
}

/// Runs an authorization statement for the session of `user`, whose role setting it may
/// change (SET ROLE).
pub async fn run(
    auth: &Authorization,
    ms: &Arc<dyn Metastore>,
    user: &str,
    current_db: &str,
    setting: &mut RoleSetting,
    stmt: AuthzStatement,
) -> Result<Prepared, SqlError> {
    let ms_ref: &dyn Metastore = ms.as_ref();
    let s = auth.subject(ms_ref, user, setting).await?;
    match stmt {
        AuthzStatement::CreateRole(name) => {
            if !s.admin {
                return Err(not_admin(user, "add roles"));
            }
            if RESERVED.contains(&name.as_str()) || BUILTIN_ROLES.contains(&name.as_str()) {
                return Err(ddl_error(format!(
                    "Error create role: Role name cannot be one of the reserved roles: [ALL, DEFAULT, NONE] and cannot be {ADMIN} or {PUBLIC}: {name}"
                )));
            }
            ms.create_role(&Role {
                name: name.clone(),
                owner: user.to_string(),
                create_time: now(),
            })
            .await
            .map_err(|e| match e {
                MetastoreError::AlreadyExists(_) => {
                    ddl_error(format!("Error create role: Role {name} already exists."))
                }
                other => meta(other),
            })?;
            Ok(Prepared::Done)
        }
        AuthzStatement::DropRole(name) => {
            if !s.admin {
                return Err(not_admin(user, "drop role"));
            }
            if name == ADMIN || name == PUBLIC {
                return Err(ddl_error(format!(
                    "Error dropping role: {name} role can't be dropped."
                )));
            }
            ms.drop_role(&name).await.map_err(|e| match e {
                MetastoreError::NoSuchObject(_) => {
                    ddl_error(format!("Error dropping role: Role {name} does not exist"))
                }
                other => meta(other),
            })?;
            Ok(Prepared::Done)
        }
        AuthzStatement::SetRole(name) => {
            *setting = match name.as_str() {
                "all" | "default" => RoleSetting::Default,
                "none" => RoleSetting::Only(None),
                _ => {
                    if !auth.granted_roles(ms_ref, user).await?.contains(&name) {
                        return Err(ddl_error(format!("{user} doesn't belong to role {name}")));
                    }
                    RoleSetting::Only(Some(name))
                }
            };
            Ok(Prepared::Done)
        }
        AuthzStatement::ShowCurrentRoles => Ok(string_rows("role", s.shown)),
        AuthzStatement::ShowRoles => {
            if !s.admin {
                return Err(not_admin(user, "list roles"));
            }
            let mut names: Vec<String> = ms
                .list_roles()
                .await
                .map_err(meta)?
                .into_iter()
                .map(|r| r.name)
                .collect();
            names.extend([ADMIN.to_string(), PUBLIC.to_string()]);
            names.sort();
            Ok(string_rows("role", names))
        }
        AuthzStatement::ShowRoleGrant(who) => {
            let (kind, name) = principal_parts(&who);
            let own = kind == PrincipalType::User && name == user;
            if !own && !s.admin {
                return Err(not_admin(user, "list roles of another principal"));
            }
            let mut out = Vec::new();
            for g in ms.grants_of((kind, name)).await.map_err(meta)? {
                if let GrantObject::Role { name: role } = &g.object {
                    out.push(vec![
                        Some(role.clone()),
                        Some(g.grant_option.to_string()),
                        Some((g.grant_time * 1000).to_string()),
                        Some(g.grantor.clone()),
                    ]);
                }
            }
            if kind == PrincipalType::User && auth.admins.contains(name) {
                out.push(vec![
                    Some(ADMIN.into()),
                    Some("true".into()),
                    Some("0".into()),
                    Some("admin".into()),
                ]);
            }
            out.push(vec![
                Some(PUBLIC.into()),
                Some("false".into()),
                Some("0".into()),
                Some("".into()),
            ]);
            out.sort();
            Ok(rows(
                &["role", "grant_option", "grant_time", "grantor"],
                out,
            ))
        }
        AuthzStatement::ShowPrincipals(role) => {
            if !s.admin {
                return Err(not_admin(user, "list principals of a role"));
            }
            let grants = ms
                .grants_on(&GrantObject::Role { name: role })
                .await
                .map_err(meta)?;
            Ok(rows(
                &[
                    "principal_name",
                    "principal_type",
                    "grant_option",
                    "grantor",
                    "grantor_type",
                    "grant_time",
                ],
                grants
                    .into_iter()
                    .map(|g| {
                        vec![
                            Some(g.principal_name),
                            Some(g.principal_type.as_str().into()),
                            Some(g.grant_option.to_string()),
                            Some(g.grantor),
                            Some(g.grantor_type.as_str().into()),
                            Some((g.grant_time * 1000).to_string()),
                        ]
                    })
                    .collect(),
            ))
        }
        AuthzStatement::GrantRole {
            roles,
            to,
            admin_option,
        } => {
            let mut changes = Vec::new();
            // Role memberships this statement adds, (member, role): a cycle through them is
            // refused as one through the catalog's.
            let mut added: Vec<(String, String)> = Vec::new();
            for role in &roles {
                role_admin(ms_ref, &s, role, "grant").await?;
                for p in &to {
                    let (kind, name) = principal_parts(p);
                    if kind == PrincipalType::Role {
                        if roles_held(ms_ref, role, &added).await?.contains(name) {
                            return Err(ddl_error(format!(
                                "org.apache.hadoop.hive.ql.security.authorization.plugin.HiveAuthzPluginException: Cannot grant role {name} to {role} as {role} already belongs to the role {name}. (no cycles allowed)"
                            )));
                        }
                        added.push((name.to_string(), role.clone()));
                    }
                    changes.push(GrantChange::Put(Grant {
                        object: GrantObject::Role { name: role.clone() },
                        principal_name: name.to_string(),
                        principal_type: kind,
                        privilege: "MEMBER".into(),
                        grant_option: admin_option,
                        grantor: user.to_string(),
                        grantor_type: PrincipalType::User,
                        grant_time: now(),
                    }));
                }
            }
            ms.change_grants(&changes).await.map_err(|e| match e {
                MetastoreError::NoSuchObject(what) => {
                    ddl_error(format!("Error granting roles: {what} does not exist"))
                }
                other => meta(other),
            })?;
            Ok(Prepared::Done)
        }
        AuthzStatement::RevokeRole {
            roles,
            from,
            admin_option_only,
        } => {
            let mut changes = Vec::new();
            for role in &roles {
                role_admin(ms_ref, &s, role, "revoke").await?;
                for p in &from {
                    let (kind, name) = principal_parts(p);
                    changes.push(GrantChange::Revoke {
                        object: GrantObject::Role { name: role.clone() },
                        principal_type: kind,
                        principal_name: name.to_string(),
                        privilege: "MEMBER".into(),
                        option_only: admin_option_only,
                    });
                }
            }
            ms.change_grants(&changes).await.map_err(|e| match e {
                MetastoreError::NoSuchObject(what) => ddl_error(format!(
                    "Error revoking roles: {what}: the principal does not have the role"
                )),
                other => meta(other),
            })?;
            Ok(Prepared::Done)
        }
        AuthzStatement::Grant {
            privileges,
            table: name,
            to,
            grant_option,
        } => {
            let target = grant_target(
                auth,
                ms_ref,
                &s,
                current_db,
                &name,
                &privileges,
                "GRANT_PRIVILEGE",
            )
            .await?;
            let mut changes = Vec::new();
            for p in &to {
                let (kind, holder) = principal_parts(p);
                for privilege in &privileges {
                    changes.push(GrantChange::Put(Grant {
                        object: table_object(&target.database, &target.name),
                        principal_name: holder.to_string(),
                        principal_type: kind,
                        privilege: privilege.clone(),
                        grant_option,
                        grantor: user.to_string(),
                        grantor_type: PrincipalType::User,
                        grant_time: now(),
                    }));
                }
            }
            ms.change_grants(&changes).await.map_err(|e| match e {
                MetastoreError::NoSuchObject(what) => {
                    ddl_error(format!("Error granting privileges: {what} does not exist"))
                }
                other => meta(other),
            })?;
            Ok(Prepared::Done)
        }
        AuthzStatement::Revoke {
            privileges,
            table: name,
            from,
            grant_option_only,
        } => {
            let target = grant_target(
                auth,
                ms_ref,
                &s,
                current_db,
                &name,
                &privileges,
                "REVOKE_PRIVILEGE",
            )
            .await?;
            let object = table_object(&target.database, &target.name);
            let mut changes = Vec::new();
            for p in &from {
                let (kind, holder) = principal_parts(p);
                for privilege in &privileges {
                    changes.push(GrantChange::Revoke {
                        object: object.clone(),
                        principal_type: kind,
                        principal_name: holder.to_string(),
                        privilege: privilege.clone(),
                        option_only: grant_option_only,
                    });
                }
            }
            // All or nothing: the first privilege not held names the error.
            if let Err(e) = ms.change_grants(&changes).await {
                let MetastoreError::NoSuchObject(_) = e else {
                    return Err(meta(e));
                };
                let held = ms.grants_on(&object).await.map_err(meta)?;
                let missing = changes.iter().find_map(|c| match c {
                    GrantChange::Revoke {
                        principal_type,
                        principal_name,
                        privilege,
                        ..
                    } if !held.iter().any(|g| {
                        g.principal_type == *principal_type
                            && g.principal_name == *principal_name
                            && g.privilege == *privilege
                    }) =>
                    {
                        Some((*principal_type, principal_name.clone(), privilege.clone()))
                    }
                    _ => None,
                });
                let (kind, holder, privilege) =
                    missing.unwrap_or((PrincipalType::User, String::new(), String::new()));
                return Err(ddl_error(format!(
                    "Error revoking privileges: Cannot find privilege Privilege [name={privilege}, columns=null] for Principal [name={holder}, type={}] on Object [type=TABLE_OR_VIEW, name={}]",
                    kind.as_str(),
                    object_name(&target)
                )));
            }
            Ok(Prepared::Done)
        }
        AuthzStatement::ShowGrant {
            principal,
            table: on,
        } => show_grant(ms_ref, &s, current_db, principal, on).await,
    }
}

/// The table a GRANT or REVOKE is on, once `s` is found to hold `privileges` on it WITH GRANT
/// OPTION (a denial is a DDL task's error in Hive, with the same words as a query's).
/// The roles `role` holds, itself included: its grants in the catalog and those of
/// `pending` (member, role) pairs not yet written.
async fn roles_held(
    ms: &dyn Metastore,
    role: &str,
    pending: &[(String, String)],
) -> Result<BTreeSet<String>, SqlError> {
    let mut out = BTreeSet::from([role.to_string()]);
    let mut todo = vec![role.to_string()];
    while let Some(name) = todo.pop() {
        let stored = ms
            .grants_of((PrincipalType::Role, &name))
            .await
            .map_err(meta)?
            .into_iter()
            .filter_map(|g| match g.object {
                GrantObject::Role { name } => Some(name),
                _ => None,
            });
        let pending = pending
            .iter()
            .filter(|(member, _)| *member == name)
            .map(|(_, r)| r.clone());
        for r in stored.chain(pending).collect::<Vec<_>>() {
            if out.insert(r.clone()) {
                todo.push(r);
            }
        }
    }
    Ok(out)
}

async fn grant_target(
    auth: &Authorization,
    ms: &dyn Metastore,
    s: &Subject,
    current_db: &str,
    name: &TableName,
    privileges: &[String],
    operation: &str,
) -> Result<Table, SqlError> {
    let Some(target) = find_table(ms, current_db, name).await? else {
        return Err(SqlError::TableNotFound(qualified(current_db, name)));
    };
    let need = Need::Privileges {
        table: target.clone(),
        privileges: static_privileges(privileges),
        grant: true,
    };
    match auth.check(ms, s, operation, &[need]).await {
        Ok(()) => Ok(target),
        Err(SqlError::Denied(text)) => Err(ddl_error(format!("Permission denied: {text}"))),
        Err(e) => Err(e),
    }
}

fn static_privileges(names: &[String]) -> Vec<&'static str> {
    PRIVILEGES
        .iter()
        .copied()
        .filter(|p| names.iter().any(|n| n == p))
        .collect()
}

/// Refuses GRANT/REVOKE of `role` by one who is neither a current admin nor holds it WITH
/// ADMIN OPTION.
async fn role_admin(
    ms: &dyn Metastore,
    s: &Subject,
    role: &str,
    verb: &str,
) -> Result<(), SqlError> {
    if s.admin {
        return Ok(());
    }
    let with_admin = ms
        .grants_on(&GrantObject::Role {
            name: role.to_string(),
        })
        .await
        .map_err(meta)?
        .iter()
        .any(|g| g.grant_option && holds(s, g));
    if with_admin {
        Ok(())
    } else {
        Err(SqlError::ddl(format!(
            "Current user : {} is not allowed to {verb} role. User has to belong to ADMIN role and have it as current role, for this action. Otherwise, grantor need to have ADMIN OPTION on role being granted and have it as a current role for this action.",
            s.user
        )))
    }
}

/// SHOW GRANT: Hive's ten columns; owners' implied privileges are shown as grants by the
/// owner to themselves. A non-admin may ask only for their own grants or a current role's.
async fn show_grant(
    ms: &dyn Metastore,
    s: &Subject,
    current_db: &str,
    principal: Option<Principal>,
    on: Option<TableName>,
) -> Result<Prepared, SqlError> {
    // Hive's rule: only a current admin sees others' grants.
    if !s.admin {
        let refusal = match &principal {
            None => Some(format!(
                "User : {} has to specify a user name or role in the show grant.",
                s.user
            )),
            Some(Principal::User(u)) if *u != s.user => Some(format!(
                "User : {} is not allowed check privileges of another user : {u}.",
                s.user
            )),
            Some(Principal::Role(r)) if !s.roles.contains(r) => Some(format!(
                "User : {} is not allowed check privileges of a role it does not belong to : {r}.",
                s.user
            )),
            _ => None,
        };
        if let Some(text) = refusal {
            return Err(ddl_error(format!("{text} {ADMIN_ONLY}")));
        }
    }
    let mut grants: Vec<Grant> = match &on {
        Some(name) => {
            let Some(t) = find_table(ms, current_db, name).await? else {
                return Err(SqlError::TableNotFound(qualified(current_db, name)));
            };
            let mut g = ms
                .grants_on(&table_object(&t.database, &t.name))
                .await
                .map_err(meta)?;
            g.extend(owner_grants(&t));
            g
        }
        None => {
            let mut g = ms.all_grants().await.map_err(meta)?;
            g.retain(|g| matches!(g.object, GrantObject::Table { .. }));
            g
        }
    };
    if let Some(p) = &principal {
        let (kind, name) = principal_parts(p);
        grants.retain(|g| g.principal_type == kind && g.principal_name == name);
        if on.is_none() && kind == PrincipalType::User {
            // ON ALL for a user: the tables they own, too.
            for db in ms.list_databases().await.map_err(meta)? {
                for t in ms.get_tables(&db).await.map_err(meta)? {
                    if t.owner == name {
                        grants.extend(owner_grants(&t));
                    }
                }
            }
        }
    }
    grants.sort_by(|a, b| {
        (&a.object, &a.principal_name, &a.privilege).cmp(&(
            &b.object,
            &b.principal_name,
            &b.privilege,
        ))
    });
    grants.dedup_by(|a, b| {
        a.object == b.object
            && a.principal_name == b.principal_name
            && a.principal_type == b.principal_type
            && a.privilege == b.privilege
    });
    Ok(rows(
        &[
            "database",
            "table",
            "partition",
            "column",
            "principal_name",
            "principal_type",
            "privilege",
            "grant_option",
            "grant_time",
            "grantor",
        ],
        grants
            .into_iter()
            .filter_map(|g| match g.object {
                GrantObject::Table { database, name } => Some(vec![
                    Some(database),
                    Some(name),
                    Some(String::new()),
                    Some(String::new()),
                    Some(g.principal_name),
                    Some(g.principal_type.as_str().into()),
                    Some(g.privilege),
                    Some(g.grant_option.to_string()),
                    Some((g.grant_time * 1000).to_string()),
                    Some(g.grantor),
                ]),
                GrantObject::Role { .. } => None,
            })
            .collect(),
    ))
}

/// The privileges an owner holds on their table, as grants.
fn owner_grants(t: &Table) -> Vec<Grant> {
    PRIVILEGES
        .iter()
        .map(|p| Grant {
            object: table_object(&t.database, &t.name),
            principal_name: t.owner.clone(),
            principal_type: PrincipalType::User,
            privilege: p.to_string(),
            grant_option: true,
            grantor: t.owner.clone(),
            grantor_type: PrincipalType::User,
            grant_time: t.create_time,
        })
        .collect()
}
