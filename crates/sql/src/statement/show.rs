//! SHOW CREATE TABLE / TBLPROPERTIES / COLUMNS / PARTITIONS / TABLES.

use super::*;

impl dyn Scope {
    /// Runs one of this family's statements (the dispatcher routes only those here).
    pub(super) async fn run_show(&mut self, stmt: HiveStatement) -> Result<Prepared, SqlError> {
        match stmt {
            HiveStatement::ShowCreateTable(name) => {
                let table = crate::nonnative::for_display(self.require_table(&name).await?);
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
                let text = crate::show::show_create_table(&table);
                Ok(string_rows(
                    "createtab_stmt",
                    text.lines().map(str::to_string).collect(),
                ))
            }
            HiveStatement::ShowTblProperties(name, key) => {
                let table = crate::nonnative::for_display(self.require_table(&name).await?);
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
