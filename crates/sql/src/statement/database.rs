//! CREATE / DROP / ALTER DATABASE and DESCRIBE DATABASE (`CREATE DATABASE IF NOT EXISTS s
//! LOCATION '/data/s'`, `DROP DATABASE s CASCADE`, `ALTER DATABASE s SET DBPROPERTIES
//! ('k'='v')`, `DESCRIBE DATABASE EXTENDED s`).

use apiary_metastore::Database;
use apiary_storage::ownership;
use apiary_storage::write::{self};

use super::scope::*;
use crate::error::SqlError;
use crate::parser::HiveStatement;
use crate::prepared::{rows, Prepared};
use crate::statement::describe::location_text;

impl dyn Scope {
    /// Runs one of this family's statements (the dispatcher routes only those here).
    pub(super) async fn run_database(&mut self, stmt: HiveStatement) -> Result<Prepared, SqlError> {
        match stmt {
            HiveStatement::CreateDatabase {
                if_not_exists,
                name,
                comment,
                location,
                properties,
            } => {
                apiary_metastore::check_database_name(&name)?;
                if self.metastore().get_database(&name).await?.is_some() {
                    if if_not_exists {
                        return Ok(Prepared::Done);
                    }
                    return Err(SqlError::ddl(format!("Database {name} already exists")));
                }
                let location = match location {
                    Some(l) => l,
                    None => ownership::child(self.warehouse(), &format!("{name}.db"))
                        .map_err(meta_error)?
                        .display()
                        .to_string(),
                };
                if let Ok(dir) = write::local_dir(&location) {
                    std::fs::create_dir_all(&dir).map_err(|e| {
                        SqlError::ddl_caused(format!("cannot create {location}: {e}"), e)
                    })?;
                }
                let db = Database {
                    name,
                    comment,
                    location,
                    parameters: properties,
                    owner: self.user().to_string(),
                    create_time: now(),
                };
                self.metastore().create_database(&db).await?;
                Ok(Prepared::Done)
            }
            HiveStatement::DropDatabase {
                if_exists,
                name,
                cascade,
            } => {
                if name == crate::names::DEFAULT_DATABASE {
                    return Err(SqlError::ddl(
                        "InvalidOperationException(message:Can not drop default database)",
                    ));
                }
                let Some(db) = self.metastore().get_database(&name).await? else {
                    if if_exists {
                        return Ok(Prepared::Done);
                    }
                    return Err(SqlError::DatabaseNotFound(name));
                };
                let tables = self.metastore().get_tables(&name).await?;
                if !tables.is_empty() && !cascade {
                    return Err(SqlError::ddl(format!(
                    "InvalidOperationException(message:Database {name} is not empty. One or more tables exist.)"
                )));
                }
                // Each table as DROP TABLE would: non-native ones through their hooks.
                for t in tables {
                    self.drop_one(&t).await?;
                }
                self.metastore().drop_database(&name).await?;
                // Only an emptied folder goes: a LOCATION may hold files that are not ours.
                if let Ok(dir) = write::local_dir(&db.location) {
                    let _ = std::fs::remove_dir(dir);
                }
                if self.database() == name {
                    self.set_database(crate::names::DEFAULT_DATABASE);
                }
                Ok(Prepared::Done)
            }
            HiveStatement::AlterDatabase {
                name,
                properties,
                location,
                owner,
            } => {
                let mut db = self.require_database(&name).await?;
                db.parameters.extend(properties);
                if let Some(l) = location {
                    db.location = l;
                }
                if let Some(o) = owner {
                    db.owner = o;
                }
                self.metastore().alter_database(&db).await?;
                Ok(Prepared::Done)
            }
            HiveStatement::DescribeDatabase { extended, name } => {
                let db = self.require_database(&name).await?;
                let params = if extended && !db.parameters.is_empty() {
                    Some(format!(
                        "{{{}}}",
                        db.parameters
                            .iter()
                            .map(|(k, v)| format!("{k}={v}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                } else {
                    None
                };
                let mut cols = vec!["db_name", "comment", "location", "owner_name", "owner_type"];
                let mut row = vec![
                    Some(db.name.clone()),
                    Some(db.comment.clone().unwrap_or_default()),
                    Some(location_text(&db.location)),
                    Some(db.owner.clone()),
                    Some("USER".into()),
                ];
                if extended {
                    cols.push("parameters");
                    row.push(Some(params.unwrap_or_default()));
                }
                Ok(rows(&cols, vec![row]))
            }
            other => Err(misrouted(&other)),
        }
    }
}
