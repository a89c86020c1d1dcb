//! Parsing the statements of SQL-standard authorization: roles (CREATE / DROP / SET / SHOW
//! ROLE(S), GRANT / REVOKE role), privileges on tables and views (GRANT / REVOKE, SHOW GRANT):
//!
//! ```sql
//! CREATE ROLE r;  DROP ROLE r;  SET ROLE (r | ALL | NONE);
//! SHOW ROLES;  SHOW CURRENT ROLES;  SHOW ROLE GRANT (USER|ROLE) p;  SHOW PRINCIPALS r;
//! GRANT [ROLE] r1, r2 TO (USER|ROLE) p [WITH ADMIN OPTION];
//! REVOKE [ADMIN OPTION FOR] [ROLE] r FROM (USER|ROLE) p;
//! GRANT (SELECT|INSERT|UPDATE|DELETE|ALL) [, ..] ON [TABLE] t TO (USER|ROLE) p [WITH GRANT OPTION];
//! REVOKE [GRANT OPTION FOR] SELECT [, ..] ON [TABLE] t FROM (USER|ROLE) p;
//! SHOW GRANT [(USER|ROLE) p] [ON (ALL | [TABLE] t)];   -- a GROUP principal is refused
//! ```

use super::ast::*;
use super::cursor::P;
use super::lex::*;
use crate::error::SqlError;

/// Whether `sql` is an authorization statement (by its first words), so the caller sends it
/// to [`parse_authz`].
pub fn is_authz(sql: &str) -> bool {
    let words: Vec<String> = sql
        .split_whitespace()
        .take(3)
        .map(|w| w.to_ascii_lowercase())
        .collect();
    let w = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    match w(0) {
        "grant" | "revoke" => true,
        "create" | "drop" | "set" => w(1) == "role",
        "show" => {
            matches!(w(1), "roles" | "grant" | "principals")
                || (w(1) == "current" && w(2) == "roles")
                || (w(1) == "role" && w(2) == "grant")
        }
        _ => false,
    }
}

/// Skips Hive's optional ROLE before the role names of GRANT / REVOKE role (`GRANT ROLE r TO
/// ..`), unless `role` is itself the one name (`GRANT role TO ..`, before `next`).
fn optional_role_keyword(p: &mut P, next: &str) {
    if p.is_kw("role")
        && !p.is_kw_at(1, next)
        && !matches!(p.toks.get(p.pos + 1).map(|t| &t.tok), Some(Tok::Punct(',')))
    {
        p.pos += 1;
    }
}

/// Parses an authorization statement.
pub fn parse_authz(sql: &str) -> Result<AuthzStatement, SqlError> {
    let toks = lex(sql)?;
    let mut p = P { sql, toks, pos: 0 };
    let stmt = if p.eat_kws(&["create", "role"]) {
        AuthzStatement::CreateRole(p.ident()?)
    } else if p.eat_kws(&["drop", "role"]) {
        AuthzStatement::DropRole(p.ident()?)
    } else if p.eat_kws(&["set", "role"]) {
        AuthzStatement::SetRole(p.ident()?)
    } else if p.eat_kws(&["show", "roles"]) {
        AuthzStatement::ShowRoles
    } else if p.eat_kws(&["show", "current", "roles"]) {
        AuthzStatement::ShowCurrentRoles
    } else if p.eat_kws(&["show", "role", "grant"]) {
        AuthzStatement::ShowRoleGrant(principal(&mut p)?)
    } else if p.eat_kws(&["show", "principals"]) {
        AuthzStatement::ShowPrincipals(p.ident()?)
    } else if p.eat_kws(&["show", "grant"]) {
        let principal = if p.is_kw("on") || p.peek().is_none() || p.peek() == Some(&Tok::Punct(';'))
        {
            None
        } else {
            Some(principal(&mut p)?)
        };
        let table = if p.eat_kw("on") {
            if p.eat_kw("all") {
                None
            } else {
                p.eat_kw("table");
                Some(p.table_name()?)
            }
        } else {
            None
        };
        AuthzStatement::ShowGrant { principal, table }
    } else if p.eat_kw("grant") {
        if is_privilege(&p) {
            let privileges = privileges(&mut p)?;
            let table = on_table(&mut p)?;
            p.expect_kw("to")?;
            let to = principals(&mut p)?;
            let grant_option = p.eat_kws(&["with", "grant", "option"]);
            AuthzStatement::Grant {
                privileges,
                table,
                to,
                grant_option,
            }
        } else {
            optional_role_keyword(&mut p, "to");
            let roles = names(&mut p)?;
            p.expect_kw("to")?;
            let to = principals(&mut p)?;
            let admin_option = p.eat_kws(&["with", "admin", "option"]);
            AuthzStatement::GrantRole {
                roles,
                to,
                admin_option,
            }
        }
    } else if p.eat_kw("revoke") {
        if p.eat_kws(&["grant", "option", "for"]) {
            let privileges = privileges(&mut p)?;
            let table = on_table(&mut p)?;
            p.expect_kw("from")?;
            let from = principals(&mut p)?;
            AuthzStatement::Revoke {
                privileges,
                table,
                from,
                grant_option_only: true,
            }
        } else if p.eat_kws(&["admin", "option", "for"]) {
            optional_role_keyword(&mut p, "from");
            let roles = names(&mut p)?;
            p.expect_kw("from")?;
            AuthzStatement::RevokeRole {
                roles,
                from: principals(&mut p)?,
                admin_option_only: true,
            }
        } else if is_privilege(&p) {
            let privileges = privileges(&mut p)?;
            let table = on_table(&mut p)?;
            p.expect_kw("from")?;
            AuthzStatement::Revoke {
                privileges,
                table,
                from: principals(&mut p)?,
                grant_option_only: false,
            }
        } else {
            optional_role_keyword(&mut p, "from");
            let roles = names(&mut p)?;
            p.expect_kw("from")?;
            AuthzStatement::RevokeRole {
                roles,
                from: principals(&mut p)?,
                admin_option_only: false,
            }
        }
    } else {
        return Err(p.err("an authorization statement"));
    };
    p.eat_punct(';');
    if p.peek().is_some() {
        return Err(p.err("the end of the statement"));
    }
    Ok(stmt)
}

fn is_privilege(p: &P<'_>) -> bool {
    ["select", "insert", "update", "delete", "all"]
        .iter()
        .any(|k| p.is_kw(k))
        // A role may be called `select`: a privilege list is followed by ON.
        && (p.is_kw_at(1, "on") || p.is_kw_at(1, "privileges") || p.toks.get(p.pos + 1).map(|t| &t.tok) == Some(&Tok::Punct(',')))
}

fn privileges(p: &mut P<'_>) -> Result<Vec<String>, SqlError> {
    let mut out: Vec<String> = Vec::new();
    loop {
        if p.eat_kw("all") {
            p.eat_kw("privileges");
            out.extend(PRIVILEGES.iter().map(|s| s.to_string()));
        } else if let Some(k) = PRIVILEGES.iter().find(|k| p.is_kw(k)) {
            p.pos += 1;
            out.push(k.to_string());
        } else {
            return Err(p.err("a privilege (SELECT, INSERT, UPDATE, DELETE or ALL)"));
        }
        if !p.eat_punct(',') {
            break;
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn on_table(p: &mut P<'_>) -> Result<TableName, SqlError> {
    p.expect_kw("on")?;
    if p.is_kw("database") || p.is_kw("schema") || p.is_kw("uri") || p.is_kw("server") {
        return Err(SqlError::semantic(
            "Privileges on databases, URIs and servers are not supported by SQL standard authorization; grant them on a table or view".into(),
        ));
    }
    p.eat_kw("table");
    p.table_name()
}

fn names(p: &mut P<'_>) -> Result<Vec<String>, SqlError> {
    let mut out = vec![p.ident()?];
    while p.eat_punct(',') {
        out.push(p.ident()?);
    }
    Ok(out)
}

fn principal(p: &mut P<'_>) -> Result<Principal, SqlError> {
    if p.eat_kw("user") {
        // User names keep their case.
        match p.peek().cloned() {
            Some(Tok::Word(w)) | Some(Tok::Quoted(w)) => {
                p.pos += 1;
                Ok(Principal::User(w))
            }
            _ => Err(p.err("a user name")),
        }
    } else if p.eat_kw("role") {
        Ok(Principal::Role(p.ident()?))
    } else if p.is_kw("group") {
        Err(SqlError::semantic(
            "Invalid principal type in principal GROUP: only USER and ROLE are supported".into(),
        ))
    } else {
        Err(p.err("USER or ROLE"))
    }
}

fn principals(p: &mut P<'_>) -> Result<Vec<Principal>, SqlError> {
    let mut out = vec![principal(p)?];
    while p.eat_punct(',') {
        out.push(principal(p)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(db: Option<&str>, name: &str) -> TableName {
        TableName {
            db: db.map(str::to_string),
            name: name.into(),
        }
    }

    #[test]
    fn statements_are_recognised_by_their_first_words() {
        for s in [
            "GRANT SELECT ON t TO USER bob",
            "revoke r from user x",
            "CREATE ROLE r",
            "drop role r",
            "set role admin",
            "SHOW ROLES",
            "show current roles",
            "SHOW ROLE GRANT USER bob",
            "show grant",
            "SHOW PRINCIPALS r",
        ] {
            assert!(is_authz(s), "{s}");
        }
        for s in [
            "SET x=1",
            "SHOW TABLES",
            "CREATE TABLE role (a INT)",
            "show create table t",
        ] {
            assert!(!is_authz(s), "{s}");
        }
    }

    #[test]
    fn grants_parse() {
        assert_eq!(
            parse_authz(
                "GRANT SELECT, insert ON TABLE db.t TO USER Bob, ROLE Analysts WITH GRANT OPTION"
            )
            .unwrap(),
            AuthzStatement::Grant {
                privileges: vec!["INSERT".into(), "SELECT".into()],
                table: t(Some("db"), "t"),
                to: vec![
                    Principal::User("Bob".into()),
                    Principal::Role("analysts".into())
                ],
                grant_option: true,
            }
        );
        assert_eq!(
            parse_authz("REVOKE GRANT OPTION FOR ALL PRIVILEGES ON t FROM USER bob").unwrap(),
            AuthzStatement::Revoke {
                privileges: vec![
                    "DELETE".into(),
                    "INSERT".into(),
                    "SELECT".into(),
                    "UPDATE".into()
                ],
                table: t(None, "t"),
                from: vec![Principal::User("bob".into())],
                grant_option_only: true,
            }
        );
        assert_eq!(
            parse_authz("GRANT ROLE analysts TO ROLE leads").unwrap(),
            AuthzStatement::GrantRole {
                roles: vec!["analysts".into()],
                to: vec![Principal::Role("leads".into())],
                admin_option: false,
            }
        );
        assert_eq!(
            parse_authz("grant analysts to user bob with admin option").unwrap(),
            AuthzStatement::GrantRole {
                roles: vec!["analysts".into()],
                to: vec![Principal::User("bob".into())],
                admin_option: true,
            }
        );
        assert_eq!(
            parse_authz("SHOW GRANT USER bob ON ALL").unwrap(),
            AuthzStatement::ShowGrant {
                principal: Some(Principal::User("bob".into())),
                table: None,
            }
        );
        assert_eq!(
            parse_authz("SHOW GRANT ON TABLE t").unwrap(),
            AuthzStatement::ShowGrant {
                principal: None,
                table: Some(t(None, "t")),
            }
        );
        assert!(parse_authz("GRANT SELECT ON DATABASE d TO USER bob").is_err());
        assert!(parse_authz("GRANT SELECT ON t TO GROUP g").is_err());
        assert!(parse_authz("GRANT SELECT ON t TO bob").is_err());
        assert!(parse_authz("GRANT SELECT ON t TO USER bob extra").is_err());
    }
}
