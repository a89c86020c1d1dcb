//! Running the statements of [`crate::parser`], one module per family: [`database`], [`table`]
//! (CREATE / DROP / TRUNCATE), [`view`], [`alter`], [`partition`] (and MSCK), [`insert`],
//! [`load`], [`describe`] and [`show`]. This module dispatches a parsed statement to its
//! family and holds what the families share (name resolution, rows, file work off the async
//! workers, fail points).

mod alter;
mod constraint;
mod database;
mod describe;
pub(crate) mod grant;
mod insert;
mod load;
mod partition;
mod scope;
mod show;
pub(crate) mod show_create;
mod table;
mod view;

pub(crate) use self::scope::Scope;
use self::scope::*;
use crate::error::SqlError;
use crate::parser::{AlterTable, HiveStatement};
use crate::prepared::{string_rows, Prepared};
use crate::statement::describe::describe;

impl dyn Scope {
    /// Runs one parsed Hive statement.
    pub(crate) async fn run_hive(&mut self, stmt: HiveStatement) -> Result<Prepared, SqlError> {
        let renames = matches!(
            stmt,
            HiveStatement::CreateDatabase { .. }
                | HiveStatement::DropDatabase { .. }
                | HiveStatement::CreateTable(_)
                | HiveStatement::CreateView { .. }
                | HiveStatement::DropTable { .. }
                | HiveStatement::AlterTable {
                    action: AlterTable::Rename(_),
                    ..
                }
        );
        let out = self.run_hive_inner(stmt).await;
        if renames {
            // Keep DataFusion's synchronous name lists in step with what the DDL changed.
            let _ = self.refresh_catalog().await;
        }
        out
    }

    async fn run_hive_inner(&mut self, stmt: HiveStatement) -> Result<Prepared, SqlError> {
        match stmt {
            s @ (HiveStatement::CreateDatabase { .. }
            | HiveStatement::DropDatabase { .. }
            | HiveStatement::AlterDatabase { .. }
            | HiveStatement::DescribeDatabase { .. }) => self.run_database(s).await,
            HiveStatement::CreateTable(ct) => self.create_table(*ct).await,
            s @ HiveStatement::CreateView { .. } => self.run_view(s).await,
            s @ (HiveStatement::DropTable { .. } | HiveStatement::Truncate { .. }) => {
                self.run_table(s).await
            }
            HiveStatement::AlterTable { name, action } => self.alter_table(&name, action).await,
            HiveStatement::DropMaterializedView { if_exists, name } => {
                if if_exists {
                    Ok(Prepared::Done)
                } else {
                    Err(SqlError::TableNotFound(as_written(&name)))
                }
            }
            HiveStatement::DescribeFunction { extended, name } => Ok(string_rows(
                "tab_name",
                apiary_hive_functions::list::describe(
                    self.context(),
                    &name,
                    extended,
                ),
            )),
            HiveStatement::Describe {
                extended,
                formatted,
                name,
                column,
                partition: _,
            } => {
                // Hive names a missing database before a missing table (10072).
                if let Some(db) = &name.db {
                    self.require_database(db).await?;
                }
                let mut table = crate::journal::handler_ddl::for_display(self.require_table(&name).await?);
                if formatted {
                    if let Some(h) = crate::journal::handler_ddl::handler_of(self.handlers(), &table)? {
                        // The catalog's entry is shown even when the object cannot be read.
                        match h.describe_object(&table).await {
                            Ok(facts) => table.parameters.extend(facts),
                            Err(e) => {
                                tracing::warn!(table = %table.qualified_name(), error = %e, "cannot describe the handler's object")
                            }
                        }
                    }
                }
                describe(&table, extended, formatted, column.as_deref())
            }
            s @ (HiveStatement::ShowCreateTable(..)
            | HiveStatement::ShowTblProperties(..)
            | HiveStatement::ShowColumns(..)
            | HiveStatement::ShowPartitions(..)
            | HiveStatement::ShowTables { .. }
            | HiveStatement::ShowDatabases(_)
            | HiveStatement::ShowFunctions(_)) => self.run_show(s).await,
            HiveStatement::MsckRepair(name) => self.msck(&name).await,
            HiveStatement::LoadData {
                local: _,
                path,
                overwrite,
                table,
                partition,
            } => self.load_data(&path, overwrite, &table, partition).await,
            HiveStatement::Insert {
                overwrite,
                table,
                partition,
                columns,
                query,
            } => {
                let table = self.require_table(&table).await?;
                let task = self
                    .insert(&table, partition, &columns, &query, overwrite)
                    .await?;
                Ok(Prepared::Task(task))
            }
            HiveStatement::InsertDirectory { .. } => Err(SqlError::Unsupported(
                "INSERT OVERWRITE [LOCAL] DIRECTORY is not supported; write into a table with a LOCATION instead".into(),
            )),
        }
    }
}
