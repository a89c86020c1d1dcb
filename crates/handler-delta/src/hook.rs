//! The meta hook of Delta tables. A managed table's CREATE makes a new Delta table whose
//! configuration carries the creating operation's id ([`CREATED_BY`]: the log's `metaData`
//! keeps it, and so does every checkpoint, so it outlives log clean-up); DROP and recovery
//! delete the folder only when that tag names the operation. An external table is checked
//! against its log.
//!
//! A folder is deleted by renaming it first to a hidden sibling ([`GRAVE`]) and then deleting
//! that: the rename is atomic, so a crash in the middle never leaves a half-deleted table at
//! the location, and a later drop clears what a crash left in the grave.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use apiary_metastore::{Table, TableType};
use apiary_storage::handler::{HandlerResult, MetaHook, ObjectState, OpTag, CREATED_BY};
use apiary_storage::Reach;
use async_trait::async_trait;
use deltalake::kernel::transaction::CommitProperties;
use deltalake::operations::create::CreateBuilder;
use deltalake::DeltaTable;

use crate::errors::{def_err, remote_err};
use crate::schema::{check, delta_columns, partition_columns};
use crate::table::{not_a_table, open, root_url};

/// Prefix of the hidden sibling a folder is renamed to before it is deleted.
const GRAVE: &str = ".apiary-dropped-";

/// The hook, with the server's limits on which folders tables may use.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeltaHook {
    pub(crate) reach: Arc<Reach>,
}

/// The operation a Delta table's configuration names as its creator.
fn tag_of(delta: &DeltaTable) -> Option<String> {
    delta
        .snapshot()
        .ok()?
        .metadata()
        .configuration()
        .get(CREATED_BY)
        .cloned()
}

/// Deletes the folder `dir` (renamed away first, see the module's text) and what earlier
/// deletions of the same folder left behind.
fn delete_folder(dir: &Path) -> HandlerResult<()> {
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Err(def_err(format!("{} cannot be deleted", dir.display())));
    };
    let name = name.to_string_lossy();
    if dir.exists() {
        let grave = unused(parent.join(format!("{GRAVE}{name}-{}", std::process::id())));
        std::fs::rename(dir, &grave).map_err(|e| remote_err(format!("{}: {e}", dir.display())))?;
    }
    clear_graves(parent, &name)
}

/// Deletes the graves of folder `name` in `parent` (`.apiary-dropped-<name>-<pid>[.<n>]`)
/// that a drop cut short left. A parent that is gone holds none.
fn clear_graves(parent: &Path, name: &str) -> HandlerResult<()> {
    let prefix = format!("{GRAVE}{name}-");
    let is_grave = |file: &str| {
        file.strip_prefix(&prefix).is_some_and(|rest| {
            let (pid, n) = rest.split_once('.').unwrap_or((rest, "0"));
            let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
            digits(pid) && digits(n)
        })
    };
    let entries = match std::fs::read_dir(parent) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(remote_err(format!("{}: {e}", parent.display()))),
    };
    for entry in entries.flatten() {
        if is_grave(&entry.file_name().to_string_lossy()) {
            match std::fs::remove_dir_all(entry.path()) {
                Ok(()) => {}
                // (Another drop of the same folder cleared it first.)
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(remote_err(format!("{}: {e}", entry.path().display()))),
            }
        }
    }
    Ok(())
}

/// `path`, or `path` with a number added when that exists already.
fn unused(path: PathBuf) -> PathBuf {
    let mut candidate = path.clone();
    let mut n = 0u32;
    while candidate.exists() {
        n += 1;
        candidate = PathBuf::from(format!("{}.{n}", path.display()));
    }
    candidate
}

/// Whether `dir` is empty.
fn is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none())
}

/// Whether `dir` holds nothing but a `_delta_log` with no committed version in it: what a
/// CREATE cut short before its first commit leaves (an empty log folder, or a commit file
/// still being written under a temporary name).
fn uncommitted_log_only(dir: &Path) -> bool {
    let log = dir.join("_delta_log");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let only_log = entries.flatten().all(|e| e.file_name() == "_delta_log");
    let committed = |name: &str| {
        name == "_last_checkpoint" || name.ends_with(".json") || name.ends_with(".parquet")
    };
    only_log
        && std::fs::read_dir(&log).is_ok_and(|entries| {
            entries
                .flatten()
                .all(|e| !committed(&e.file_name().to_string_lossy()))
        })
}

fn local(url: &url::Url) -> HandlerResult<PathBuf> {
    url.to_file_path()
        .map_err(|_| def_err(format!("{url} is not a local folder")))
}

#[async_trait]
impl MetaHook for DeltaHook {
    async fn pre_create_table(&self, table: &Table, op: &OpTag) -> HandlerResult<()> {
        let url = root_url(&self.reach, table)?;
        let partitions = partition_columns(table);
        let existing = open(&url).await?;
        if table.table_type == TableType::External {
            if !partitions.is_empty() {
                return Err(def_err(format!(
                    "Found partition columns ({}) in table {}:{}. The partition columns in a Delta table will be read from its own metadata and should not be set manually.",
                    partitions.join(","),
                    table.database,
                    table.name
                )));
            }
            let delta = existing.ok_or_else(|| not_a_table(&url))?;
            let schema = delta
                .snapshot()
                .map_err(remote_err)?
                .snapshot()
                .arrow_schema();
            return check(table, &schema);
        }
        let dir = local(&url)?;
        if let Some(delta) = existing {
            // Made by this very operation before a crash: done already.
            if tag_of(&delta).as_deref() == Some(op.id.as_str()) {
                return Ok(());
            }
            return Err(def_err(format!(
                "A Delta table already exists at {}; declare the table EXTERNAL to use it",
                dir.display()
            )));
        }
        if dir.exists() && !is_empty(&dir) && !uncommitted_log_only(&dir) {
            // Its files are not the table's to own (a DROP would delete them).
            return Err(def_err(format!(
                "{} exists and is not empty: a managed Delta table needs a new folder (declare the table EXTERNAL to read a Delta table there)",
                dir.display()
            )));
        }
        let columns = delta_columns(&table.sd.columns)?;
        let configuration: HashMap<String, Option<String>> =
            HashMap::from([(CREATED_BY.to_string(), Some(op.id.clone()))]);
        let commit = CommitProperties::default().with_metadata([(
            "userMetadata".to_string(),
            serde_json::Value::String(format!("created by Apiary operation {}", op.id)),
        )]);
        CreateBuilder::new()
            .with_location(url.as_str())
            .with_table_name(table.name.clone())
            .with_columns(columns)
            .with_partition_columns(partitions)
            .with_configuration(configuration)
            .with_raise_if_key_not_exists(false)
            .with_commit_properties(commit)
            .await
            .map_err(remote_err)?;
        Ok(())
    }

    async fn rollback_create_table(&self, table: &Table, op: &OpTag) -> HandlerResult<()> {
        if table.table_type == TableType::External {
            return Ok(());
        }
        let url = root_url(&self.reach, table)?;
        let dir = local(&url)?;
        match self.object_state(table, op).await? {
            ObjectState::CreatedBy => delete_folder(&dir),
            // A CREATE cut short before its commit may leave a log folder with no version.
            ObjectState::Absent if uncommitted_log_only(&dir) => delete_folder(&dir),
            _ => Ok(()),
        }
    }

    async fn commit_drop_table(&self, table: &Table, delete_data: bool) -> HandlerResult<()> {
        if !delete_data || table.table_type != TableType::Managed {
            return Ok(());
        }
        let url = root_url(&self.reach, table)?;
        let dir = local(&url)?;
        let Some(delta) = open(&url).await? else {
            // Gone already (a drop cut short after its rename): clear what it left. Whatever
            // else is at the location now is not this table's Delta table, and stays.
            if dir.exists() {
                tracing::warn!(table = %table.qualified_name(), location = %dir.display(), "no Delta table at the location of a dropped managed table; what is there is kept");
            }
            return match (dir.parent(), dir.file_name()) {
                (Some(parent), Some(name)) => clear_graves(parent, &name.to_string_lossy()),
                _ => Ok(()),
            };
        };
        let ours = match (table.parameters.get(CREATED_BY), tag_of(&delta)) {
            (Some(expected), Some(found)) => *expected == found,
            _ => false,
        };
        if !ours {
            tracing::warn!(table = %table.qualified_name(), location = %dir.display(), "the Delta table is not the one this table created; kept");
            return Ok(());
        }
        delete_folder(&dir)
    }

    async fn object_state(&self, table: &Table, op: &OpTag) -> HandlerResult<ObjectState> {
        let url = root_url(&self.reach, table)?;
        Ok(match open(&url).await? {
            None => ObjectState::Absent,
            Some(delta) if tag_of(&delta).as_deref() == Some(op.id.as_str()) => {
                ObjectState::CreatedBy
            }
            Some(_) => ObjectState::Other,
        })
    }
}
