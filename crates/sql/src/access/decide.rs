//! SQL-standard authorization (`hive.security.authorization.enabled`), as Hive's
//! SQLStdHiveAuthorizer does it: the owner of a table or view holds every privilege on it
//! (with the grant option); others hold what GRANT gave them or one of their current roles;
//! the `public` role is everyone's, and the `admin` role (`hive.users.in.admin.role`, or
//! granted) may do anything once a session has `SET ROLE ADMIN`. Roles and grants live in the
//! metastore, so servers sharing it enforce the same grants.
//!
//! This module decides; the session asks it before a statement runs (what each statement
//! needs is [`needs`]), and runs the authorization statements themselves ([`run`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use apiary_metastore::{
    Database, Grant, GrantChange, GrantObject, Metastore, MetastoreError, PrincipalType, Role,
    Table, BUILTIN_ROLES,
};
use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    Ident, ObjectName, Query, Statement as SqlStatement, Visit, Visitor,
};

use crate::ddl::{AlterTable, AuthzStatement, HiveStatement, Principal, TableName, PRIVILEGES};
use crate::error::SqlError;
use crate::prepared::{rows, string_rows, Prepared};
use apiary_storage::handler::{Registry, StorageHandler};

/// The role whose current members may do anything.
pub const ADMIN: &str = "admin";
/// The role every user is in.
pub const PUBLIC: &str = "public";
/// Names no role may take (besides `admin` and `public`, which always exist).
const RESERVED: [&str; 3] = ["all", "none", "default"];

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

fn meta(e: MetastoreError) -> SqlError {
    SqlError::from(e)
}

fn table_object(db: &str, name: &str) -> GrantObject {
    GrantObject::Table {
        database: db.to_string(),
        name: name.to_string(),
    }
}

fn object_name(t: &Table) -> String {
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

fn holds(s: &Subject, g: &Grant) -> bool {
    match g.principal_type {
        PrincipalType::User => g.principal_name == s.user,
        PrincipalType::Role => s.roles.contains(&g.principal_name),
    }
}

/// An identifier as DataFusion resolves it: unquoted ones in lower case, quoted ones as written.
fn normalized(ident: &Ident) -> String {
    match ident.quote_style {
        Some(_) => ident.value.clone(),
        None => ident.value.to_lowercase(),
    }
}

/// The WITH clause of one query while its parts are visited: the names it defines, the
/// queries defining them, and how many of the names are in scope at this point.
struct WithScope {
    names: Vec<String>,
    queries: Vec<*const Query>,
    visible: usize,
}

/// Collects the relations a statement reads, telling a reference to a WITH name from one to
/// a table the way DataFusion scopes them: a query's WITH names are seen by its body and by the
/// definitions after each one, and by the queries
/// nested in them, but not by the definition's own body or anything outside the query.
struct Relations {
    scopes: Vec<WithScope>,
    found: Vec<Vec<String>>,
}

impl Relations {
    fn is_cte(&self, name: &str) -> bool {
        self.scopes.iter().any(|s| {
            s.names[..s.visible.min(s.names.len())]
                .iter()
                .any(|n| n == name)
        })
    }

    /// Where `query` is one of the innermost WITH clause's definitions, its index.
    fn definition_index(&self, query: &Query) -> Option<usize> {
        let scope = self.scopes.last()?;
        scope
            .queries
            .iter()
            .position(|q| std::ptr::eq(*q, query as *const Query))
    }
}

impl Visitor for Relations {
    type Break = ();

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if let Some(i) = self.definition_index(query) {
            if let Some(scope) = self.scopes.last_mut() {
                // Even in a RECURSIVE clause the name is checked as a table inside its own
                // definition: DataFusion plans the static term (and a body without UNION)
                // before the name exists, so there it is the catalog's table.
                scope.visible = i;
            }
        }
        if let Some(with) = &query.with {
            self.scopes.push(WithScope {
                names: with
                    .cte_tables
                    .iter()
                    .map(|c| normalized(&c.alias.name))
                    .collect(),
                queries: with
                    .cte_tables
                    .iter()
                    .map(|c| &*c.query as *const Query)
                    .collect(),
                visible: 0,
            });
        }
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
        if query.with.is_some() {
            self.scopes.pop();
        }
        if let Some(i) = self.definition_index(query) {
            if let Some(scope) = self.scopes.last_mut() {
                // The definitions after this one, and the body, see it.
                scope.visible = i + 1;
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, name: &ObjectName) -> ControlFlow<()> {
        let parts: Vec<String> = name
            .0
            .iter()
            .filter_map(|p| p.as_ident().map(normalized))
            .collect();
        let cte = parts.len() == 1 && self.is_cte(&parts[0]);
        if !cte && !parts.is_empty() {
            self.found.push(parts);
        }
        ControlFlow::Continue(())
    }
}

/// The tables and views a statement reads, as written (`db.t` or `t`, normalized as DataFusion
/// does), without references to the names of WITH clauses in scope.
pub fn relations(statement: &SqlStatement) -> Vec<Vec<String>> {
    let mut r = Relations {
        scopes: Vec::new(),
        found: Vec::new(),
    };
    let _ = statement.visit(&mut r);
    r.found
}

/// The catalog tables among `relations` (others are CTEs, table functions, file paths), with
/// unqualified names resolved in `current_db`.
pub async fn tables_read(
    ms: &dyn Metastore,
    current_db: &str,
    relations: &[Vec<String>],
) -> Result<Vec<Table>, SqlError> {
    let mut out: Vec<Table> = Vec::new();
    for parts in relations {
        // The catalog's names are lower case, whatever the quoting.
        let (db, name) = match parts.as_slice() {
            [name] => (current_db.to_string(), name.to_lowercase()),
            [db, name] => (db.to_lowercase(), name.to_lowercase()),
            [_, db, name] => (db.to_lowercase(), name.to_lowercase()),
            _ => continue,
        };
        // A table read as of an earlier state (`t@v3`, as time travel plans it, or typed so)
        // is the table itself.
        let name = match apiary_storage::handler::AsOf::of_table_name(&name) {
            Some((table, _)) => table.to_string(),
            None => name,
        };
        if out.iter().any(|t| t.database == db && t.name == name) {
            continue;
        }
        if let Some(t) = ms.get_table(&db, &name).await.map_err(meta)? {
            out.push(t);
        }
    }
    Ok(out)
}

async fn find_table(
    ms: &dyn Metastore,
    current_db: &str,
    name: &TableName,
) -> Result<Option<Table>, SqlError> {
    let db = name.db.clone().unwrap_or_else(|| current_db.to_string());
    ms.get_table(&db, &name.name).await.map_err(meta)
}

/// What a Hive statement needs, with Hive's name of its operation. Objects that do not exist
/// need nothing here: the statement fails on them by itself. The queries inside statements
/// (INSERT .. SELECT, CTAS) are checked when they are planned; a view's query here, since a
/// view's reader is given what its creator could grant.
pub async fn needs(
    ms: &dyn Metastore,
    handlers: &Registry,
    current_db: &str,
    stmt: &HiveStatement,
) -> Result<(&'static str, Vec<Need>), SqlError> {
    let db_owner = |db: Option<Database>| db.map(Need::DatabaseOwner).into_iter().collect();
    let (operation, mut needs): (&'static str, Vec<Need>) = match stmt {
        HiveStatement::CreateDatabase { .. } => ("CREATEDATABASE", Vec::new()),
        HiveStatement::DescribeDatabase { .. } => ("DESCDATABASE", Vec::new()),
        HiveStatement::DescribeFunction { .. } => ("DESCFUNCTION", Vec::new()),
        HiveStatement::DropDatabase { name, cascade, .. } => {
            let mut needs: Vec<Need> = db_owner(ms.get_database(name).await.map_err(meta)?);
            if *cascade {
                // CASCADE drops the tables too: each must be the caller's.
                for t in ms.get_tables(name).await.map_err(meta)? {
                    needs.push(Need::TableOwner(t));
                }
            }
            ("DROPDATABASE", needs)
        }
        HiveStatement::AlterDatabase { name, owner, .. } => {
            if owner.is_some() {
                (
                    "ALTERDATABASE_OWNER",
                    vec![Need::Admin {
                        object_type: "DATABASE",
                        name: name.clone(),
                    }],
                )
            } else {
                // Hive's SQL-standard mode gives ALTER DATABASE to admins only.
                (
                    "ALTERDATABASE",
                    vec![Need::Admin {
                        object_type: "DATABASE",
                        name: name.clone(),
                    }],
                )
            }
        }
        HiveStatement::CreateTable(ct) => {
            let db = ct
                .name
                .as_ref()
                .and_then(|n| n.db.clone())
                .unwrap_or_else(|| current_db.to_string());
            let mut needs: Vec<Need> = db_owner(ms.get_database(&db).await.map_err(meta)?);
            if let Some(like) = &ct.like {
                // LIKE of a table in another system copies how to reach it (its handler's
                // properties and secrets): only its owner may hand that on. Of a native
                // table, SELECT is enough, as in Hive.
                let source = find_table(ms, current_db, like).await?;
                let need = match &source {
                    Some(source) if source.storage_handler().is_some() => TableNeed::Owner,
                    _ => TableNeed::Privileges(vec!["SELECT"], false),
                };
                needs.extend(on_table(ms, current_db, like, need).await?);
                // The copy's own TBLPROPERTIES may point the source's handler elsewhere.
                if let Some(source) = &source {
                    if let Some(handler) =
                        source.storage_handler().and_then(|c| handlers.resolve(c))
                    {
                        let mut properties = source.sd.serde.parameters.clone();
                        properties.extend(source.parameters.clone());
                        properties.extend(ct.tblproperties.clone());
                        needs.extend(handler_paths(handler.as_ref(), &properties));
                    }
                }
            }
            if let Some(handler) = ct.stored_by.as_deref().and_then(|c| handlers.resolve(c)) {
                let mut properties = ct.handler_serde_props.clone();
                properties.extend(ct.tblproperties.clone());
                needs.extend(handler_paths(handler.as_ref(), &properties));
            }
            let op = if ct.as_select.is_some() {
                "CREATETABLE_AS_SELECT"
            } else {
                "CREATETABLE"
            };
            (op, needs)
        }
        HiveStatement::CreateView {
            name,
            or_replace,
            query,
            ..
        } => {
            let db = name.db.clone().unwrap_or_else(|| current_db.to_string());
            let mut needs: Vec<Need> = db_owner(ms.get_database(&db).await.map_err(meta)?);
            if *or_replace {
                needs.extend(on_table(ms, current_db, name, TableNeed::Owner).await?);
            }
            // The view's readers get what its creator could grant: SELECT WITH GRANT OPTION.
            if let Ok(parsed) = crate::session::parse_one(query) {
                for source in tables_read(ms, current_db, &relations(&parsed)).await? {
                    needs.push(Need::Privileges {
                        table: source,
                        privileges: vec!["SELECT"],
                        grant: true,
                    });
                }
            }
            ("CREATEVIEW", needs)
        }
        // Filtered to what the user may see.
        HiveStatement::ShowTables { .. } => ("SHOWTABLES", Vec::new()),
        HiveStatement::MsckRepair(name) => (
            "MSCK",
            vec![Need::Admin {
                object_type: "TABLE_OR_VIEW",
                name: qualified(current_db, name),
            }],
        ),

        HiveStatement::InsertDirectory { .. } => ("QUERY", Vec::new()),
        // Touches nothing (there are no materialized views).
        HiveStatement::DropMaterializedView { .. } => ("DROP_MATERIALIZED_VIEW", Vec::new()),
        // Listed, so a new statement must say what it needs.
        HiveStatement::DropTable { .. }
        | HiveStatement::Truncate { .. }
        | HiveStatement::AlterTable { .. }
        | HiveStatement::Describe { .. }
        | HiveStatement::ShowCreateTable(_)
        | HiveStatement::ShowTblProperties(..)
        | HiveStatement::ShowColumns(_)
        | HiveStatement::ShowPartitions(..)
        | HiveStatement::LoadData { .. }
        | HiveStatement::Insert { .. } => match table_need(stmt) {
            Some((operation, name, need)) => {
                let mut needs = on_table(ms, current_db, name, need).await?;
                if let HiveStatement::AlterTable { action, .. } = stmt {
                    needs.extend(alter_needs(ms, handlers, current_db, name, action).await?);
                }
                (operation, needs)
            }
            // (table_need covers every statement of this arm.)
            None => (
                "QUERY",
                vec![Need::Admin {
                    object_type: "COMMAND_PARAMS",
                    name: "[unclassified statement]".into(),
                }],
            ),
        },
    };
    // A path can name another table's files (the warehouse is always reachable), and every
    // user is the same user to the file system, so the file-system permissions Hive's URI
    // privileges rest on mean nothing here: naming a path is for admins.
    for (clause, path) in stmt.named_paths() {
        needs.push(Need::Admin {
            object_type: if clause.contains("LOCAL") {
                "LOCAL_URI"
            } else {
                "DFS_URI"
            },
            name: path.to_string(),
        });
    }
    Ok((operation, needs))
}

/// Admin needs for the files of this machine a handler's table with `properties` opens.
fn handler_paths(handler: &dyn StorageHandler, properties: &BTreeMap<String, String>) -> Vec<Need> {
    handler
        .local_paths(properties)
        .into_iter()
        .map(|path| Need::Admin {
            object_type: "STORAGEHANDLER_URI",
            name: path,
        })
        .collect()
}

/// What an ALTER TABLE needs besides the table's ownership: a rename into another database
/// needs that database's (as a CREATE there does); new properties of a handler's table that
/// name files of this machine need an admin.
async fn alter_needs(
    ms: &dyn Metastore,
    handlers: &Registry,
    current_db: &str,
    name: &TableName,
    action: &AlterTable,
) -> Result<Vec<Need>, SqlError> {
    match action {
        AlterTable::Rename(to) => {
            let from_db = name.db.as_deref().unwrap_or(current_db);
            let to_db = to.db.as_deref().unwrap_or(current_db);
            if from_db.eq_ignore_ascii_case(to_db) {
                return Ok(Vec::new());
            }
            Ok(ms
                .get_database(to_db)
                .await
                .map_err(meta)?
                .map(Need::DatabaseOwner)
                .into_iter()
                .collect())
        }
        AlterTable::SetProperties(new) | AlterTable::SetSerdeProperties(new) => {
            let Some(table) = find_table(ms, current_db, name).await? else {
                return Ok(Vec::new());
            };
            let Some(handler) = table.storage_handler().and_then(|c| handlers.resolve(c)) else {
                return Ok(Vec::new());
            };
            let mut properties = table.sd.serde.parameters.clone();
            properties.extend(table.parameters.clone());
            properties.extend(new.clone());
            Ok(handler_paths(handler.as_ref(), &properties))
        }
        _ => Ok(Vec::new()),
    }
}

/// What a statement needs on the one table it names.
enum TableNeed {
    /// Its ownership.
    Owner,
    /// These privileges, with the grant option when set.
    Privileges(Vec<&'static str>, bool),
}

/// Hive's operation, table and need of a statement about one table.
fn table_need(stmt: &HiveStatement) -> Option<(&'static str, &TableName, TableNeed)> {
    let select = |grant| TableNeed::Privileges(vec!["SELECT"], grant);
    let write = |overwrite| {
        let privileges = if overwrite {
            vec!["INSERT", "DELETE"]
        } else {
            vec!["INSERT"]
        };
        TableNeed::Privileges(privileges, false)
    };
    Some(match stmt {
        HiveStatement::DropTable { view, name, .. } => (
            if *view { "DROPVIEW" } else { "DROPTABLE" },
            name,
            TableNeed::Owner,
        ),
        HiveStatement::Truncate { name, .. } => ("TRUNCATETABLE", name, TableNeed::Owner),
        HiveStatement::AlterTable { name, action } => match action {
            AlterTable::AddPartitions(..) => (
                "ALTERTABLE_ADDPARTS",
                name,
                TableNeed::Privileges(vec!["INSERT"], false),
            ),
            AlterTable::DropPartitions(..) => (
                "ALTERTABLE_DROPPARTS",
                name,
                TableNeed::Privileges(vec!["DELETE"], false),
            ),
            AlterTable::Rename(_) => ("ALTERTABLE_RENAME", name, TableNeed::Owner),
            _ => ("ALTERTABLE", name, TableNeed::Owner),
        },
        HiveStatement::Describe { name, .. } => ("DESCTABLE", name, select(false)),
        HiveStatement::ShowCreateTable(name) => ("SHOW_CREATETABLE", name, select(true)),
        HiveStatement::ShowTblProperties(name, _) => ("SHOW_TBLPROPERTIES", name, select(false)),
        HiveStatement::ShowColumns(name) => ("SHOWCOLUMNS", name, select(false)),
        HiveStatement::ShowPartitions(name, _) => ("SHOWPARTITIONS", name, select(false)),
        HiveStatement::LoadData {
            overwrite, table, ..
        } => ("LOAD", table, write(*overwrite)),
        HiveStatement::Insert {
            overwrite, table, ..
        } => ("QUERY", table, write(*overwrite)),
        _ => return None,
    })
}

/// The need on table `name`; none when it does not exist (the statement fails by itself).
async fn on_table(
    ms: &dyn Metastore,
    current_db: &str,
    name: &TableName,
    need: TableNeed,
) -> Result<Vec<Need>, SqlError> {
    let Some(table) = find_table(ms, current_db, name).await? else {
        return Ok(Vec::new());
    };
    Ok(vec![match need {
        TableNeed::Owner => Need::TableOwner(table),
        TableNeed::Privileges(privileges, grant) => Need::Privileges {
            table,
            privileges,
            grant,
        },
    }])
}

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

fn qualified(current_db: &str, name: &TableName) -> String {
    format!("{}.{}", name.db.as_deref().unwrap_or(current_db), name.name)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn read(sql: &str) -> Vec<String> {
        let statement = crate::session::parse_one(sql).unwrap();
        relations(&statement).iter().map(|p| p.join(".")).collect()
    }

    #[test]
    fn with_names_are_scoped_as_datafusion_scopes_them() {
        assert_eq!(
            read("SELECT * FROM a JOIN db.b ON true WHERE x IN (SELECT y FROM c)"),
            ["a", "db.b", "c"]
        );
        // The body sees the WITH name; the definition does not see itself.
        assert_eq!(read("WITH s AS (SELECT * FROM s) SELECT * FROM s"), ["s"]);
        assert!(read("WITH s AS (SELECT 1 AS x) SELECT * FROM s").is_empty());
        // A recursive definition's own name counts as a table there (checked if one exists);
        // the body still sees the WITH name.
        assert_eq!(
            read("WITH RECURSIVE s AS (SELECT 1 AS x UNION ALL SELECT x FROM s) SELECT * FROM s"),
            ["s"]
        );
        // A quoted name keeps its case; an unquoted reference does not match it.
        assert_eq!(read("WITH `S` AS (SELECT 1 AS x) SELECT * FROM s"), ["s"]);
        // A definition sees only the ones before it; a query outside sees none of them.
        assert_eq!(
            read("WITH a AS (SELECT * FROM b), b AS (SELECT 1 AS x) SELECT * FROM a, b"),
            ["b"]
        );
        assert_eq!(
            read("SELECT * FROM t, (WITH t AS (SELECT 1 AS x) SELECT * FROM t) s"),
            ["t"]
        );
        // Nested: an inner query sees the outer WITH.
        assert!(read("WITH t AS (SELECT 1 AS x) SELECT * FROM (SELECT * FROM t) u").is_empty());
    }
}
