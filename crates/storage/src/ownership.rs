//! Which folders Apiary may delete. Apiary deletes a table's data (DROP of a managed table,
//! TRUNCATE, INSERT OVERWRITE, LOAD DATA OVERWRITE, DROP PARTITION) only inside a folder it
//! created for that table. The proof is a pair: a random token in the table's metastore record
//! ([`Table::data_token`]) and the same token in a hidden marker file ([`MARKER`]) at the root
//! of the folder. A table given someone else's folder as LOCATION, a table whose location was
//! moved with SET LOCATION, or one flipped from EXTERNAL to MANAGED over a folder Apiary did not
//! make, has no matching pair: its files are kept.
//!
//! Readers skip the marker (its name starts with a dot, like every hidden file), and so do
//! Hive and Spark.

use std::path::{Component, Path, PathBuf};

use apiary_metastore::Table;

use crate::native::local_dir;
use crate::StorageError;

/// The marker file at the root of a table folder Apiary owns; it holds the table's token.
pub const MARKER: &str = ".apiary-table";

/// A new token for a table's data folder.
pub fn new_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Creates `dir` for a table and claims it with `token` when it is Apiary's to claim: it did
/// not exist (Apiary creates it), or it is empty but for a marker (an earlier CREATE that
/// crashed before its catalog entry). Returns whether the folder was claimed; a folder that
/// already holds other files is used but not claimed, so its files are never deleted.
pub fn claim(dir: &Path, token: &str) -> Result<bool, StorageError> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(|e| StorageError::io(parent, e))?;
    }
    let claimable = match std::fs::create_dir(dir) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let meta = std::fs::symlink_metadata(dir).map_err(|e| StorageError::io(dir, e))?;
            if !meta.is_dir() {
                return Err(StorageError::Location(format!(
                    "{} exists and is not a folder",
                    dir.display()
                )));
            }
            let mut entries = std::fs::read_dir(dir).map_err(|e| StorageError::io(dir, e))?;
            entries.all(|e| e.is_ok_and(|e| e.file_name() == MARKER))
        }
        Err(e) => return Err(StorageError::io(dir, e)),
    };
    if claimable {
        let marker = dir.join(MARKER);
        std::fs::write(&marker, token).map_err(|e| StorageError::io(&marker, e))?;
    }
    Ok(claimable)
}

/// Whether the folder `dir` carries the marker of `token`.
pub fn marked_by(dir: &Path, token: &str) -> bool {
    std::fs::read_to_string(dir.join(MARKER)).is_ok_and(|t| t.trim() == token)
}

/// The table's root folder when Apiary owns it: the table's location is local, the table's
/// record has a token, and the folder's marker holds the same token.
pub fn owned_root(table: &Table) -> Option<PathBuf> {
    let token = table.data_token.as_deref()?;
    let dir = local_dir(table.sd.location.as_deref()?).ok()?;
    marked_by(&dir, token).then_some(dir)
}

/// Whether `path` lies inside `root` (or is `root`), comparing normalised components; `.` and
/// `..` in either are resolved lexically, so `root/a/../../x` is not inside.
pub fn inside(root: &Path, path: &Path) -> bool {
    match (normalise(root), normalise(path)) {
        (Some(r), Some(p)) => p.starts_with(r),
        _ => false,
    }
}

fn normalise(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    Some(out)
}

/// `parent/name` for a name Apiary computed (a table, a database folder): refused when the
/// name could leave `parent` (empty, `.`, `..`, or holding a separator or NUL).
pub fn child(parent: &Path, name: &str) -> Result<PathBuf, StorageError> {
    let bad = name.is_empty()
        || name == "."
        || name == ".."
        || name.contains(['/', '\\', '\0'])
        || Path::new(name).components().count() != 1;
    if bad {
        return Err(StorageError::Location(format!(
            "'{name}' cannot name a folder inside {}",
            parent.display()
        )));
    }
    Ok(parent.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_new_or_empty_folders_are_claimed() {
        let tmp = tempfile::tempdir().expect("tmp");
        let fresh = tmp.path().join("a/b");
        assert!(claim(&fresh, "t1").expect("claim"));
        assert!(marked_by(&fresh, "t1"));
        assert!(!marked_by(&fresh, "t2"));
        // A crashed CREATE left only its marker: a retry claims the folder again.
        assert!(claim(&fresh, "t2").expect("reclaim"));
        assert!(marked_by(&fresh, "t2"));
        let foreign = tmp.path().join("foreign");
        std::fs::create_dir(&foreign).expect("mkdir");
        std::fs::write(foreign.join("data.csv"), "1").expect("write");
        assert!(!claim(&foreign, "t3").expect("not claimed"));
        assert!(!foreign.join(MARKER).exists());
    }

    #[test]
    fn paths_stay_inside_their_parent() {
        let root = Path::new("/w/db.db/t");
        assert!(inside(root, Path::new("/w/db.db/t/k=1")));
        assert!(inside(root, root));
        assert!(!inside(root, Path::new("/w/db.db/t/../u")));
        assert!(!inside(root, Path::new("/w/db.db/tt")));
        assert!(!inside(root, Path::new("/etc")));
        for bad in ["", ".", "..", "a/b", "../x", "a\0b"] {
            assert!(child(Path::new("/w"), bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            child(Path::new("/w"), "t_1").expect("ok"),
            PathBuf::from("/w/t_1")
        );
    }
}
