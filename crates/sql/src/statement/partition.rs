//! Partition specs and folders, `MSCK REPAIR TABLE t` (the partition folders the catalog does
//! not know, added), and the partitions an INSERT creates.

use apiary_metastore::{Partition, Table};
use apiary_storage::write::{self};

use super::scope::*;
use crate::error::{HiveError, SqlError};
use crate::parser::{PartitionSpec, TableName};
use crate::partitions::default_partition;
use crate::prepared::{string_rows, Prepared};
use crate::task::blocking;

impl dyn Scope {
    pub(super) async fn msck(&mut self, name: &TableName) -> Result<Prepared, SqlError> {
        let table = self.require_table(name).await?;
        if table.partition_keys.is_empty() {
            return Ok(Prepared::Done);
        }
        let root = write::local_dir(table.sd.location.as_deref().unwrap_or(""))?;
        let depth = table.partition_keys.len();
        let found = blocking(move || {
            let mut found = Vec::new();
            collect_partition_dirs(&root, String::new(), depth, &mut found);
            Ok::<_, SqlError>(found)
        })
        .await?;
        let values = apiary_storage::native::partition_values_of(&found, &table.partition_keys);
        let known: Vec<Vec<String>> = self
            .metastore()
            .list_partitions(&table.database, &table.name)
            .await?
            .into_iter()
            .map(|p| p.values)
            .collect();
        let new: Vec<Partition> = values
            .into_iter()
            .filter(|v| !known.contains(v))
            .map(|values| default_partition(&table, values))
            .collect();
        let lines: Vec<String> = new
            .iter()
            .map(|p| {
                format!(
                    "Repair: Added partition to metastore {}:{}",
                    table.qualified_name(),
                    p.name(&table.partition_keys)
                )
            })
            .collect();
        // Cancelled while it walked the folders: nothing has changed yet.
        if self.interrupt().is_cancelled() {
            return Err(SqlError::Cancelled);
        }
        self.metastore()
            .add_partitions(&table.database, &table.name, &new, true)
            .await?;
        if lines.is_empty() {
            Ok(Prepared::Done)
        } else {
            Ok(string_rows("result", lines))
        }
    }
}

/// The partition folders under `dir`, `depth` levels deep, as `k=v/...` names.
pub(super) fn collect_partition_dirs(
    dir: &std::path::Path,
    prefix: String,
    depth: usize,
    out: &mut Vec<String>,
) {
    if depth == 0 {
        out.push(prefix);
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type().map(|t| t.is_dir()).unwrap_or(false)
            && name.contains('=')
            && apiary_storage::native::is_data_file(&name)
        {
            let p = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            collect_partition_dirs(&e.path(), p, depth - 1, out);
        }
    }
}

pub(super) fn spec_text(spec: &PartitionSpec) -> String {
    format!(
        "{{{}}}",
        spec.iter()
            .map(|(k, v)| format!("{k}={}", v.clone().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

pub(super) fn check_spec_keys(table: &Table, spec: &PartitionSpec) -> Result<(), SqlError> {
    for (k, _) in spec {
        if !table.partition_keys.iter().any(|p| &p.name == k) {
            return Err(SqlError::hive(
                HiveError::NonPartitionColumnInSpec,
                format!(" {k}"),
            ));
        }
    }
    Ok(())
}

/// The value a partition spec gives key `key` (None: not named, or named without a value).
pub(super) fn spec_value(spec: &PartitionSpec, key: &str) -> Option<String> {
    spec.iter()
        .find(|(n, _)| n == key)
        .and_then(|(_, v)| v.clone())
}

/// Values for every partition key; the spec must name each with a value.
pub(super) fn full_spec(table: &Table, spec: &PartitionSpec) -> Result<Vec<String>, SqlError> {
    check_spec_keys(table, spec)?;
    table
        .partition_keys
        .iter()
        .map(|k| {
            spec_value(spec, &k.name).ok_or_else(|| {
                // Hive's code for a partition it cannot find, with a message of its own.
                SqlError::Semantic {
                    error: Some(HiveError::InvalidPartition),
                    message: format!(
                        "Partition spec {} is missing a value for partition column {}",
                        spec_text(spec),
                        k.name
                    ),
                }
            })
        })
        .collect()
}

pub(super) fn spec_matches(table: &Table, spec: &PartitionSpec, values: &[String]) -> bool {
    spec.iter().all(|(k, v)| match v {
        None => true,
        Some(v) => table
            .partition_keys
            .iter()
            .position(|p| &p.name == k)
            .and_then(|i| values.get(i))
            .is_some_and(|x| x == v),
    })
}
