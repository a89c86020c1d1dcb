//! Every SHOW but the authorization ones (SHOW GRANT, SHOW ROLES, ... run with GRANT in
//! [`super::grant`]):
//!
//! ```sql
//! SHOW DATABASES [LIKE 'sales*'];   SHOW TABLES [IN db] [LIKE 'fact_*|dim_*'];  SHOW VIEWS;
//! SHOW FUNCTIONS [LIKE 'date*'];    SHOW CREATE TABLE t;  SHOW TBLPROPERTIES t [('key')];
//! SHOW COLUMNS IN t [IN db];        SHOW PARTITIONS t [PARTITION (ds='2026-12-07')];
//! ```

use super::scope::*;
use crate::catalog::pattern::hive_like;
use crate::error::{HiveError, SqlError};
use crate::parser::HiveStatement;
use crate::prepared::{rows, string_rows, Prepared};
use crate::statement::partition::spec_matches;

impl dyn Scope {
    /// Runs one of this family's statements (the dispatcher routes only those here).
    pub(super) async fn run_show(&mut self, stmt: HiveStatement) -> Result<Prepared, SqlError> {
        match stmt {
            HiveStatement::ShowDatabases(pattern) => {
                let names = self
                    .metastore()
                    .list_databases()
                    .await?
                    .into_iter()
                    .filter(|n| pattern.as_ref().is_none_or(|p| hive_like(p, n)))
                    .collect();
                Ok(string_rows("database_name", names))
            }
            HiveStatement::ShowFunctions(pattern) => {
                // Hive's pattern (`*` any text, `|` alternatives); `%` as `*` too.
                let pattern = pattern.map(|p| p.replace('%', "*"));
                let names = apiary_hive_functions::list::callable(self.context())
                    .into_iter()
                    .filter(|n| pattern.as_deref().is_none_or(|p| hive_like(p, n)))
                    .collect();
                Ok(string_rows("tab_name", names))
            }
            HiveStatement::ShowCreateTable(name) => {
                let table =
                    crate::journal::handler_ddl::for_display(self.require_table(&name).await?);
                if table.is_view() {
                    return Ok(string_rows(
                        "createtab_stmt",
                        vec![format!(
                            "CREATE VIEW `{}`.`{}` AS {}",
                            table.database,
                            table.name,
                            table.view_text.clone().unwrap_or_default()
                        )],
                    ));
                }
                let text = crate::statement::show_create::show_create_table(&table);
                Ok(string_rows(
                    "createtab_stmt",
                    text.lines().map(str::to_string).collect(),
                ))
            }
            HiveStatement::ShowTblProperties(name, key) => {
                let table =
                    crate::journal::handler_ddl::for_display(self.require_table(&name).await?);
                match key {
                    Some(k) => {
                        let v = table.parameters.get(&k).cloned().unwrap_or_else(|| {
                            format!(
                                "Table {} does not have property: {k}",
                                table.qualified_name()
                            )
                        });
                        Ok(rows(
                            &["prpt_name", "prpt_value"],
                            vec![vec![Some(k), Some(v)]],
                        ))
                    }
                    None => Ok(rows(
                        &["prpt_name", "prpt_value"],
                        table
                            .parameters
                            .iter()
                            .map(|(k, v)| vec![Some(k.clone()), Some(v.clone())])
                            .collect(),
                    )),
                }
            }
            HiveStatement::ShowColumns(name) => {
                let table = self.require_table(&name).await?;
                Ok(string_rows(
                    "field",
                    table
                        .sd
                        .columns
                        .iter()
                        .chain(&table.partition_keys)
                        .map(|c| c.name.clone())
                        .collect(),
                ))
            }
            HiveStatement::ShowPartitions(name, spec) => {
                let table = self.require_table(&name).await?;
                if table.partition_keys.is_empty() {
                    return Err(SqlError::hive(
                        HiveError::NotPartitioned,
                        format!(
                            "Table {} is not a partitioned table",
                            table.qualified_name()
                        ),
                    ));
                }
                let spec = spec.unwrap_or_default();
                let parts = self
                    .metastore()
                    .list_partitions(&table.database, &table.name)
                    .await?;
                Ok(string_rows(
                    "partition",
                    parts
                        .iter()
                        .filter(|p| spec_matches(&table, &spec, &p.values))
                        .map(|p| p.name(&table.partition_keys))
                        .collect(),
                ))
            }
            HiveStatement::ShowTables { views, db, pattern } => {
                let db = db.unwrap_or_else(|| self.database().to_string());
                self.require_database(&db).await?;
                let tables = self
                    .visible(self.metastore().get_tables(&db).await?)
                    .await?;
                let names = tables
                    .iter()
                    .filter(|t| !views || t.is_view())
                    .map(|t| t.name.clone())
                    .filter(|n| pattern.as_ref().is_none_or(|p| hive_like(p, n)))
                    .collect();
                Ok(string_rows("tab_name", names))
            }
            other => Err(misrouted(&other)),
        }
    }
}
