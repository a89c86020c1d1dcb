//! What a statement needs under SQL-standard authorization: the privileges on the tables and
//! views it reads or changes (found by walking its parsed form), the URIs it names, and the
//! admin role for the statements only an admin may run.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use apiary_metastore::{Database, Metastore, Table};
use apiary_storage::handler::{Registry, StorageHandler};
use datafusion::sql::sqlparser::ast::{
    Ident, ObjectName, Query, Statement as SqlStatement, Visit, Visitor,
};

use crate::access::decide::{meta, Need};
use crate::error::SqlError;
use crate::parser::{AlterTable, HiveStatement, TableName};

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

pub(crate) async fn find_table(
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
            if let Ok(parsed) = crate::dialect::parse_one(query) {
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
        HiveStatement::ShowDatabases(_) => ("SHOWDATABASES", Vec::new()),
        HiveStatement::ShowFunctions(_) => ("SHOWFUNCTIONS", Vec::new()),
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

/// A table's name as `db.name`, in the current database when the statement names none.
pub(crate) fn qualified(current_db: &str, name: &TableName) -> String {
    format!("{}.{}", name.db.as_deref().unwrap_or(current_db), name.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(sql: &str) -> Vec<String> {
        let statement = crate::dialect::parse_one(sql).unwrap();
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
