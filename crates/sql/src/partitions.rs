//! New partitions in the catalog: shared by the statements that add them (INSERT, LOAD, ALTER
//! TABLE ADD PARTITION, MSCK) and by start-up recovery, which finishes a committed INSERT.

use std::collections::BTreeMap;

use apiary_metastore::{Partition, StorageDescriptor, Table};
use apiary_storage::write;

use crate::error::SqlError;

/// A new partition with these values, stored at `location`.
pub(crate) fn new_partition(values: Vec<String>, location: Option<String>) -> Partition {
    Partition {
        values,
        sd: StorageDescriptor {
            location,
            ..Default::default()
        },
        parameters: BTreeMap::new(),
        create_time: chrono::Utc::now().timestamp(),
    }
}

/// Adds the partitions an INSERT creates to the metastore (those already there are kept).
pub(crate) async fn register_partitions(
    metastore: &dyn apiary_metastore::Metastore,
    table: &Table,
    manifest: &write::CommitManifest,
) -> Result<(), SqlError> {
    let new: Vec<Partition> = manifest
        .new_partitions()
        .into_iter()
        .map(|values| default_partition(table, values))
        .collect();
    if !new.is_empty() {
        metastore
            .add_partitions(&table.database, &table.name, &new, true)
            .await?;
    }
    Ok(())
}

/// A new partition in its default folder under the table (`k=v/...`).
pub(crate) fn default_partition(table: &Table, values: Vec<String>) -> Partition {
    let location = write::partition_dir(table, &values)
        .ok()
        .map(|d| d.display().to_string());
    new_partition(values, location)
}
