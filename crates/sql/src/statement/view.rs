//! CREATE [OR REPLACE] VIEW [IF NOT EXISTS] v [(c COMMENT '..', ..)] AS SELECT ..: the
//! query planned once to check it and name its columns, stored with its text.

use apiary_metastore::{Column, StorageDescriptor, Table, TableType};
use datafusion::logical_expr::LogicalPlan;

use super::scope::*;
use crate::error::{HiveError, SqlError};
use crate::parser::HiveStatement;
use crate::prepared::Prepared;
use crate::statement::table::{check_duplicates, column_name};
use crate::types::HiveType;

impl dyn Scope {
    /// Runs one of this family's statements (the dispatcher routes only those here).
    pub(super) async fn run_view(&mut self, stmt: HiveStatement) -> Result<Prepared, SqlError> {
        match stmt {
            HiveStatement::CreateView {
                if_not_exists,
                or_replace,
                name,
                columns,
                comment,
                properties,
                query,
            } => {
                let (db, vname) = self.qualify(&name);
                apiary_metastore::check_table_name(&vname)?;
                self.require_database(&db).await?;
                let existing = self.metastore().get_table(&db, &vname).await?;
                if let Some(t) = &existing {
                    if if_not_exists {
                        return Ok(Prepared::Done);
                    }
                    if !or_replace || !t.is_view() {
                        return Err(SqlError::ddl(format!(
                        "AlreadyExistsException(message:Table hive.{db}.{vname} already exists)"
                    )));
                    }
                }
                let tokens =
                    crate::dialect::tokenize(&query).map_err(crate::dialect::parse_error)?;
                if !crate::dialect::ptf::calls(&tokens)?.is_empty() {
                    // A view's text is planned again when read, apart from a statement's
                    // expansion of table functions.
                    return Err(SqlError::Unsupported(
                        "a view over a table function (matchpath, windowingtablefunction) is not supported; use a table (CREATE TABLE .. AS SELECT)".into(),
                    ));
                }
                let plan = self.plan_query(&query).await?;
                if calls_current_user(&plan) {
                    // Views are planned again for each query without the querying session's
                    // user, so the view would fail or answer for the wrong user.
                    return Err(SqlError::Unsupported(
                        "current_user() in a view is not supported".into(),
                    ));
                }
                let fields = plan.schema().fields().clone();
                if !columns.is_empty() && columns.len() != fields.len() {
                    return Err(SqlError::hive(
                        HiveError::ViewColumnCountMismatch,
                        format!(": {} columns, {} names", fields.len(), columns.len()),
                    ));
                }
                let cols: Vec<Column> = fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| Column {
                        name: columns
                            .get(i)
                            .cloned()
                            .unwrap_or_else(|| column_name(f.name())),
                        type_name: HiveType::of_field(f).to_string(),
                        comment: None,
                    })
                    .collect();
                check_duplicates(&cols)?;
                let mut parameters = properties;
                if let Some(c) = comment {
                    parameters.insert("comment".into(), c);
                }
                parameters.insert("transient_lastDdlTime".into(), now().to_string());
                let view = Table {
                    database: db.clone(),
                    name: vname.clone(),
                    owner: self.user().to_string(),
                    create_time: now(),
                    table_type: TableType::VirtualView,
                    sd: StorageDescriptor {
                        columns: cols,
                        num_buckets: -1,
                        ..Default::default()
                    },
                    partition_keys: vec![],
                    parameters,
                    view_text: Some(query),
                    view_database: Some(self.database().to_string()),
                    secrets: Default::default(),
                    data_token: None,
                    constraints: Vec::new(),
                };
                match existing {
                    Some(_) => self.metastore().alter_table(&db, &vname, &view).await?,
                    None => self.metastore().create_table(&view).await?,
                }
                Ok(Prepared::Done)
            }
            other => Err(misrouted(&other)),
        }
    }
}

/// Whether a plan (its subqueries included) calls `current_user()`.
fn calls_current_user(plan: &LogicalPlan) -> bool {
    use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
    use datafusion::logical_expr::Expr;
    let mut found = false;
    let walked = plan.apply_with_subqueries(|node| {
        for e in node.expressions() {
            if e.exists(|e| Ok(matches!(e, Expr::ScalarFunction(f) if f.name() == "current_user")))?
            {
                found = true;
                return Ok(TreeNodeRecursion::Stop);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    });
    // A plan that cannot be walked is refused too: better an error than a view that answers
    // for the wrong user.
    found || walked.is_err()
}
