//! Finding and opening the Delta table behind a Hive table: its root folder, checked against
//! the server's reach, and the table loaded from its log.

use apiary_metastore::Table;
use apiary_storage::handler::{HandlerError, HandlerResult};
use apiary_storage::Reach;
use deltalake::{DeltaTable, DeltaTableBuilder, DeltaTableError};
use url::Url;

use crate::errors::{def_err, remote_err};

/// The table's root as a URL: its LOCATION, a local folder.
pub(crate) fn root_url(reach: &Reach, table: &Table) -> HandlerResult<Url> {
    let Some(location) = table
        .sd
        .location
        .as_deref()
        .filter(|l| !l.trim().is_empty())
    else {
        return Err(def_err(
            "table location should be set when creating a Delta table",
        ));
    };
    let url = apiary_storage::native::location_url(location).map_err(|e| def_err(e.to_string()))?;
    if url.scheme() != "file" {
        return Err(def_err(format!(
            "{location}: a Delta table's location must be a folder of this machine (file:)"
        )));
    }
    reach
        .check_path("a Delta table's location", url.path())
        .map_err(|e| def_err(e.to_string()))?;
    // A folder URL ends with '/', so the log is found under it and not beside it.
    let mut url = url;
    if !url.path().ends_with('/') {
        url.set_path(&format!("{}/", url.path()));
    }
    Ok(url)
}

/// The Delta table at `url`, or None when there is none (no folder, or no log in it).
pub(crate) async fn open(url: &Url) -> HandlerResult<Option<DeltaTable>> {
    open_at(url, None).await
}

/// The Delta table at `url` as of `version` (the newest when None), or None when there is no
/// Delta table there.
pub(crate) async fn open_at(url: &Url, version: Option<i64>) -> HandlerResult<Option<DeltaTable>> {
    let Ok(path) = url.to_file_path() else {
        return Err(def_err(format!("{url} is not a local folder")));
    };
    if !path.join("_delta_log").is_dir() {
        return Ok(None);
    }
    let mut builder = DeltaTableBuilder::from_url(url.clone()).map_err(remote_err)?;
    if let Some(v) = version {
        let v = u64::try_from(v)
            .map_err(|_| def_err(format!("{v} is no Delta version (they count from 0)")))?;
        builder = builder.with_version(v);
    }
    match builder.load().await {
        Ok(t) => Ok(Some(t)),
        Err(DeltaTableError::NotATable(_)) | Err(DeltaTableError::InvalidTableLocation(_)) => {
            Ok(None)
        }
        Err(e) => Err(remote_err(e)),
    }
}

/// The Delta table of `table`, which must exist.
pub(crate) async fn existing(reach: &Reach, table: &Table) -> HandlerResult<DeltaTable> {
    let url = root_url(reach, table)?;
    open(&url).await?.ok_or_else(|| not_a_table(&url))
}

pub(crate) fn not_a_table(url: &Url) -> HandlerError {
    let shown = url
        .to_file_path()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| url.to_string());
    def_err(format!(
        "{} does not exist or it's not a Delta table",
        shown.trim_end_matches('/')
    ))
}
