//! ALTER TABLE: rename, columns, properties, SerDe properties, location, partitions
//! (`ALTER TABLE t RENAME TO u`, `ALTER TABLE t ADD COLUMNS (c INT)`,
//! `ALTER TABLE t CHANGE c d BIGINT`, `ALTER TABLE t SET TBLPROPERTIES ('k'='v')`,
//! `ALTER TABLE t ADD PARTITION (ds='2026-12-07')`, `ALTER TABLE t DROP PARTITION (..)`);
//! the grammar is in [`crate::parser`]'s `alter.rs`.

use apiary_metastore::{Partition, TableType};
use apiary_storage::handler::AlterOp;
use apiary_storage::ownership;
use apiary_storage::write::{self};

use super::scope::*;
use crate::error::{HiveError, SqlError};
use crate::parser::{AlterTable, TableName};
use crate::partitions::new_partition;
use crate::prepared::Prepared;
use crate::statement::partition::{check_spec_keys, full_spec, spec_matches, spec_text};
use crate::statement::table::{check_duplicates, remove_dir_if_present, to_columns};
use crate::task::blocking;

impl dyn Scope {
    pub(super) async fn alter_table(
        &mut self,
        name: &TableName,
        action: AlterTable,
    ) -> Result<Prepared, SqlError> {
        let table = self.require_table(name).await?;
        let mut t = table.clone();
        // A non-native table allows only what its handler declares (Hive's rule).
        let handler = crate::journal::handler_ddl::handler_of(self.handlers(), &table)?;
        let alter_op = match &action {
            AlterTable::SetProperties(p)
                if !p.contains_key("EXTERNAL") && !p.contains_key("storage_handler") =>
            {
                Some(AlterOp::AddProps)
            }
            AlterTable::UnsetProperties(keys, _)
                if !keys
                    .iter()
                    .any(|k| k == "EXTERNAL" || k == "storage_handler") =>
            {
                Some(AlterOp::DropProps)
            }
            AlterTable::AddColumns(_) => Some(AlterOp::AddCols),
            _ => None,
        };
        if let Some(h) = &handler {
            crate::journal::handler_ddl::check_alter(h.as_ref(), &table, None, alter_op).await?;
        }
        match action {
            AlterTable::Rename(to) => {
                let (db, n) = self.qualify(&to);
                self.require_database(&db).await?;
                t.database = db.clone();
                t.name = n.clone();
                // A foreign key of the table to itself follows the new name.
                for c in &mut t.constraints {
                    if let apiary_metastore::ConstraintKind::ForeignKey {
                        parent_database,
                        parent_table,
                        ..
                    } = &mut c.kind
                    {
                        if *parent_database == table.database && *parent_table == table.name {
                            parent_database.clone_from(&db);
                            parent_table.clone_from(&n);
                        }
                    }
                }
                apiary_metastore::check_table_name(&n)?;
                // Only a folder Apiary made for the table moves with it.
                let moves = table.table_type == TableType::Managed
                    && ownership::owned_root(&table).is_some()
                    && table.sd.location.as_deref()
                        == Some(&self.default_location(&table.database, &table.name).await?);
                if moves {
                    let new_loc = self.default_location(&db, &n).await?;
                    let from = write::local_dir(table.sd.location.as_deref().unwrap_or(""))?;
                    let to_dir = write::local_dir(&new_loc)?;
                    blocking(move || {
                        if !from.exists() {
                            return Ok(());
                        }
                        std::fs::rename(&from, &to_dir).map_err(|e| {
                            SqlError::ddl_caused(
                                format!("Unable to rename {}: {e}", from.display()),
                                e,
                            )
                        })
                    })
                    .await?;
                    t.sd.location = Some(new_loc);
                }
                if let Err(e) = self
                    .metastore()
                    .alter_table(&table.database, &table.name, &t)
                    .await
                {
                    if moves {
                        let _ = std::fs::rename(
                            write::local_dir(t.sd.location.as_deref().unwrap_or(""))?,
                            write::local_dir(table.sd.location.as_deref().unwrap_or(""))?,
                        );
                    }
                    return Err(e.into());
                }
                return Ok(Prepared::Done);
            }
            AlterTable::AddColumns(cols) => {
                t.sd.columns.extend(to_columns(&cols));
                let mut all = t.sd.columns.clone();
                all.extend(t.partition_keys.clone());
                check_duplicates(&all)?;
            }
            AlterTable::ReplaceColumns(cols) => {
                t.sd.columns = to_columns(&cols);
                // Constraints on the columns that went go with them.
                t.constraints = super::constraint::surviving(&table, &t.sd.columns);
                let mut all = t.sd.columns.clone();
                all.extend(t.partition_keys.clone());
                check_duplicates(&all)?;
            }
            AlterTable::ChangeColumn {
                old,
                new,
                constraints,
            } => {
                // A CHECK's text names its columns: renaming one it reads is refused.
                if new.name != old {
                    if let Some(check) = table.constraints.iter().find(|c| match &c.kind {
                        apiary_metastore::ConstraintKind::Check(text) => {
                            crate::dialect::parse_expr(text)
                                .map(|e| super::constraint::referenced_columns(&e).contains(&old))
                                .unwrap_or(false)
                        }
                        _ => false,
                    }) {
                        return Err(SqlError::hive(
                            HiveError::InvalidConstraint,
                            format!(
                                " Column {old} is used by CHECK constraint {}: drop the constraint before renaming the column.",
                                check.name
                            ),
                        ));
                    }
                }
                let Some(c) = t.sd.columns.iter_mut().find(|c| c.name == old) else {
                    return Err(SqlError::hive(HiveError::InvalidColumn, format!(" {old}")));
                };
                c.name.clone_from(&new.name);
                c.type_name = new.type_name;
                if new.comment.is_some() {
                    c.comment = new.comment;
                }
                let mut all = t.sd.columns.clone();
                all.extend(t.partition_keys.clone());
                check_duplicates(&all)?;
                // The column's constraints follow it to its new name.
                for k in &mut t.constraints {
                    for col in &mut k.columns {
                        if *col == old {
                            col.clone_from(&new.name);
                        }
                    }
                }
                let added = self.resolve_constraints(&constraints, &t).await?;
                t.constraints.extend(added);
            }
            AlterTable::AddConstraint(def) => {
                let added = self.resolve_constraints(&[def], &t).await?;
                t.constraints.extend(added);
                if t.constraints
                    .iter()
                    .filter(|c| c.kind == apiary_metastore::ConstraintKind::PrimaryKey)
                    .count()
                    > 1
                {
                    return Err(SqlError::ddl(format!(
                        "MetaException(message:Primary key already exists for: {})",
                        t.qualified_name()
                    )));
                }
            }
            AlterTable::DropConstraint(name) => {
                let before = t.constraints.len();
                t.constraints.retain(|c| c.name != name);
                if t.constraints.len() == before {
                    return Err(SqlError::ddl(format!(
                        "InvalidObjectException(message:The constraint: {name} does not exist for the associated table: {})",
                        t.qualified_name()
                    )));
                }
            }
            AlterTable::SetProperties(p) => {
                check_reserved_properties(p.keys())?;
                if let Some(v) = p.get("EXTERNAL") {
                    t.table_type = if v.eq_ignore_ascii_case("true") {
                        TableType::External
                    } else {
                        TableType::Managed
                    };
                }
                t.parameters.extend(p);
            }
            AlterTable::UnsetProperties(keys, if_exists) => {
                check_reserved_properties(&keys)?;
                for k in keys {
                    if t.parameters.remove(&k).is_none() && !if_exists {
                        return Err(SqlError::hive(
                            HiveError::UnsetNonExistentProperty,
                            format!(
                                " The following property {k} does not exist in {}",
                                table.name
                            ),
                        ));
                    }
                }
            }
            AlterTable::SetSerdeProperties(p) => t.sd.serde.parameters.extend(p),
            AlterTable::SetLocation(l) => t.sd.location = Some(l),
            AlterTable::AddPartitions(if_not_exists, parts) => {
                let mut new = Vec::new();
                for (spec, loc) in parts {
                    let values = full_spec(&table, &spec)?;
                    let location = match loc {
                        Some(l) => Some(l),
                        None => Some(write::partition_dir(&table, &values)?.display().to_string()),
                    };
                    if let Some(l) = &location {
                        if let Ok(d) = write::local_dir(l) {
                            let _ = std::fs::create_dir_all(d);
                        }
                    }
                    new.push(new_partition(values, location));
                }
                self.metastore()
                    .add_partitions(&table.database, &table.name, &new, if_not_exists)
                    .await?;
                return Ok(Prepared::Done);
            }
            AlterTable::DropPartitions(if_exists, specs) => {
                let parts = self
                    .metastore()
                    .list_partitions(&table.database, &table.name)
                    .await?;
                let mut drop = Vec::new();
                for spec in &specs {
                    check_spec_keys(&table, spec)?;
                    let matching: Vec<&Partition> = parts
                        .iter()
                        .filter(|p| spec_matches(&table, spec, &p.values))
                        .collect();
                    if matching.is_empty() && !if_exists {
                        return Err(SqlError::hive(
                            HiveError::InvalidPartition,
                            format!(" {}", spec_text(spec)),
                        ));
                    }
                    drop.extend(matching);
                }
                let values: Vec<Vec<String>> = drop.iter().map(|p| p.values.clone()).collect();
                self.metastore()
                    .drop_partitions(&table.database, &table.name, &values)
                    .await?;
                if table.table_type == TableType::Managed {
                    let root = ownership::owned_root(&table);
                    for p in drop {
                        let dir = match &p.sd.location {
                            Some(l) => write::local_dir(l),
                            None => write::partition_dir(&table, &p.values),
                        };
                        let Ok(d) = dir else { continue };
                        if root
                            .as_ref()
                            .is_some_and(|r| ownership::inside(r, &d) && r != &d)
                        {
                            blocking(move || remove_dir_if_present(&d)).await?;
                        } else {
                            self.note(format!(
                                "kept the files of partition {} at {}: Apiary did not create that folder for table {}",
                                p.name(&table.partition_keys),
                                d.display(),
                                table.qualified_name()
                            ));
                        }
                    }
                }
                return Ok(Prepared::Done);
            }
            AlterTable::PartitionLocation(spec, loc) => {
                let values = full_spec(&table, &spec)?;
                let parts = self
                    .metastore()
                    .list_partitions(&table.database, &table.name)
                    .await?;
                let mut p = parts
                    .into_iter()
                    .find(|p| p.values == values)
                    .ok_or_else(|| {
                        SqlError::hive(
                            HiveError::InvalidPartition,
                            format!(" {}", spec_text(&spec)),
                        )
                    })?;
                p.sd.location = Some(loc);
                self.metastore()
                    .alter_partition(&table.database, &table.name, &p)
                    .await?;
                return Ok(Prepared::Done);
            }
        }
        t.parameters
            .insert("transient_lastDdlTime".into(), now().to_string());
        if let Some(h) = &handler {
            crate::journal::handler_ddl::separate_secrets(h.as_ref(), &mut t);
            crate::journal::handler_ddl::check_alter(h.as_ref(), &table, Some(&t), alter_op)
                .await?;
        }
        self.metastore()
            .alter_table(&table.database, &table.name, &t)
            .await?;
        Ok(Prepared::Done)
    }
}
