//! LOAD DATA [LOCAL] INPATH '<file or folder>' [OVERWRITE] INTO TABLE t [PARTITION (p='x')]:
//! the files moved (or, LOCAL, copied) into the table's folder, checked against its format.

use apiary_storage::ownership;
use apiary_storage::write::{self};

use super::scope::*;
use crate::error::{HiveError, SqlError};
use crate::parser::{PartitionSpec, TableName};
use crate::partitions::new_partition;
use crate::prepared::Prepared;
use crate::statement::partition::full_spec;
use crate::task::blocking;

impl dyn Scope {
    pub(super) async fn load_data(
        &mut self,
        path: &str,
        overwrite: bool,
        name: &TableName,
        partition: Option<PartitionSpec>,
    ) -> Result<Prepared, SqlError> {
        let table = self.require_table(name).await?;
        if table.storage_handler().is_some() {
            return Err(SqlError::hive(HiveError::NonNativeLoad, ""));
        }
        let values = match (&partition, table.partition_keys.is_empty()) {
            (None, true) => vec![],
            (Some(_), true) => {
                return Err(SqlError::hive(
                    HiveError::PartitionSpecOnUnpartitioned,
                    format!(" {}", table.qualified_name()),
                ))
            }
            (None, false) => return Err(SqlError::hive(HiveError::NeedPartitionColumns, "")),
            (Some(spec), false) => full_spec(&table, spec)?,
        };
        // LOCAL paths and file: URLs; Hive moves from HDFS, Apiary copies (the source stays).
        let local = path
            .strip_prefix("file://")
            .or_else(|| path.strip_prefix("file:"))
            .unwrap_or(path);
        let src = std::path::PathBuf::from(local);
        let dir = write::partition_dir(&table, &values)?;
        if overwrite {
            let root = owned_root_for(&table, "overwrite")?;
            if !ownership::inside(&root, &dir) {
                return Err(not_owned(&table, "overwrite", &dir.display().to_string()));
            }
        }
        let path = path.to_string();
        let target_dir = dir.clone();
        blocking(move || load_files(&path, &src, &target_dir, overwrite)).await?;
        if !table.partition_keys.is_empty() {
            let part = new_partition(values, Some(dir.display().to_string()));
            self.metastore()
                .add_partitions(&table.database, &table.name, &[part], true)
                .await?;
        }
        Ok(Prepared::Done)
    }
}

/// LOAD DATA's file work: copies the data files of `src` (a file or a folder) into `dir`,
/// after clearing `dir`'s data files for OVERWRITE.
pub(super) fn load_files(
    path: &str,
    src: &std::path::Path,
    dir: &std::path::Path,
    overwrite: bool,
) -> Result<(), SqlError> {
    let files: Vec<std::path::PathBuf> = if src.is_dir() {
        std::fs::read_dir(src)
            .map_err(|e| {
                SqlError::hive(
                    HiveError::InvalidPath,
                    format!("Invalid path '{path}': {e}"),
                )
            })?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .map(|n| apiary_storage::native::is_data_file(&n.to_string_lossy()))
                    .unwrap_or(false)
            })
            .collect()
    } else if src.is_file() {
        vec![src.to_path_buf()]
    } else {
        return Err(SqlError::hive_at(
            HiveError::InvalidPath,
            "Line 1:17 ",
            format!("Path is not legal '{path}': No files matching path {path}"),
        ));
    };
    std::fs::create_dir_all(dir).map_err(|e| SqlError::ddl_caused(e.to_string(), e))?;
    if overwrite {
        write::clear_data_files(dir)?;
    }
    for f in files {
        let name = f.file_name().map(|n| n.to_owned()).unwrap_or_default();
        let mut target = dir.join(&name);
        if target.exists() {
            target = dir.join(format!(
                "{}_copy_{}",
                name.to_string_lossy(),
                uuid::Uuid::new_v4().simple()
            ));
        }
        // LOAD copies from a LOCAL path (Hive moves from HDFS; copying keeps the source).
        std::fs::copy(&f, &target)
            .map_err(|e| SqlError::ddl_caused(format!("{}: {e}", f.display()), e))?;
    }
    Ok(())
}
