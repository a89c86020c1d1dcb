//! Start-up recovery, in one place: what a crash of this server cut short is finished or
//! undone before the server takes clients. Scoped to this server's own work (staging folders
//! carrying its tag, journal intents it owns), so servers sharing a metastore and a warehouse
//! leave each other's running work alone. One table that cannot be recovered is logged and
//! marked unavailable; the server comes up for everything else.

use std::collections::BTreeMap;
use std::sync::Arc;

use apiary_metastore::{Metastore, Table};
use apiary_storage::handler::Registry;
use apiary_storage::write;
use parking_lot::RwLock;

use crate::error::SqlError;

/// Tables whose recovery failed at start-up, by `db.table`, with the reason; statements that
/// read or write such a table fail with that reason (DROP still works).
#[derive(Debug, Default)]
pub struct Unavailable(RwLock<BTreeMap<String, String>>);

impl Unavailable {
    /// The reason `db.table` is unavailable, if it is.
    pub fn reason(&self, db: &str, table: &str) -> Option<String> {
        self.0
            .read()
            .get(&format!("{}.{}", db.to_lowercase(), table.to_lowercase()))
            .cloned()
    }

    /// Marks `db.table` unavailable.
    fn mark(&self, qualified: String, reason: String) {
        self.0.write().insert(qualified, reason);
    }

    /// Clears a mark (the table was dropped).
    pub fn clear(&self, db: &str, table: &str) {
        self.0
            .write()
            .remove(&format!("{}.{}", db.to_lowercase(), table.to_lowercase()));
    }

    /// The error a statement on an unavailable table gets.
    pub fn error(db: &str, table: &str, reason: &str) -> SqlError {
        SqlError::ddl(format!(
            "MetaException(message:table {db}.{table} is unavailable: its recovery at start-up failed ({reason}); see the server log, or DROP it)"
        ))
    }
}

/// Runs every start-up recovery of server `owner` (tagged `tag` in folder names).
pub async fn recover(
    metastore: &dyn Metastore,
    handlers: &Registry,
    owner: &str,
    tag: &str,
) -> Result<Arc<Unavailable>, SqlError> {
    let unavailable = Arc::new(Unavailable::default());
    for db in metastore.list_databases().await? {
        let names = match metastore.list_tables(&db).await {
            Ok(n) => n,
            Err(e) => {
                tracing::error!(database = %db, error = %e, "cannot list the tables of a database at start-up");
                continue;
            }
        };
        for name in names {
            let qualified = format!("{db}.{name}");
            let table = match metastore.get_table(&db, &name).await {
                Ok(Some(t)) => t,
                Ok(None) => continue,
                Err(e) => {
                    tracing::error!(table = %qualified, error = %e, "cannot read a table at start-up; marked unavailable");
                    unavailable.mark(qualified, e.to_string());
                    continue;
                }
            };
            if let Err(e) = recover_inserts(metastore, &table, tag).await {
                tracing::error!(table = %qualified, error = %e, "cannot finish an interrupted insert; table marked unavailable");
                unavailable.mark(qualified, e.to_string());
            }
        }
    }
    crate::journal::handler_ddl::recover(metastore, handlers, owner).await;
    Ok(unavailable)
}

/// Finishes or discards the INSERTs into `table` that a crash of this server cut short. A
/// staging folder with a commit manifest had decided to commit: its partitions are
/// registered and its files moved into place (both idempotent). One without had not: its
/// files were never visible, and it is removed. Other servers' staging folders are left.
async fn recover_inserts(
    metastore: &dyn Metastore,
    table: &Table,
    tag: &str,
) -> Result<(), SqlError> {
    let Some(dir) = table
        .sd
        .location
        .as_deref()
        .and_then(|l| write::local_dir(l).ok())
    else {
        return Ok(());
    };
    let tag = tag.to_string();
    let staged = crate::task::blocking(move || {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(_) => return Ok::<_, SqlError>(Vec::new()),
        };
        Ok(entries
            .flatten()
            .filter(|e| write::is_own_staging(&e.file_name().to_string_lossy(), &tag))
            .map(|e| e.path())
            .collect::<Vec<_>>())
    })
    .await?;
    for path in staged {
        let manifest = {
            let p = path.clone();
            crate::task::blocking(move || Ok::<_, SqlError>(write::pending_commit(&p))).await?
        };
        if let Some(manifest) = manifest {
            tracing::info!(table = %table.qualified_name(), path = %path.display(), "finishing an insert that had committed before a crash");
            crate::partitions::register_partitions(metastore, table, &manifest).await?;
            crate::task::blocking(move || manifest.apply()).await?;
        } else {
            tracing::info!(table = %table.qualified_name(), path = %path.display(), "removing staging left by an interrupted insert");
        }
        crate::task::blocking(move || match std::fs::remove_dir_all(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(apiary_storage::StorageError::io(&path, e)),
        })
        .await?;
    }
    Ok(())
}
