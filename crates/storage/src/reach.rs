//! What a statement may reach on the server: the folders it may name
//! (`apiary.fs.allowed.paths`) and the hosts and files a storage handler may open
//! (`apiary.jdbc.allowed.hosts`, and the same folders for file-naming URLs). Unset, each is
//! unrestricted, as Hive is.
//!
//! A path is resolved before it is compared: `file:` URLs become paths, relative paths are
//! taken from the server's working folder, `..` and symbolic links are followed as the file
//! system would (the longest part of the path that exists is canonicalized; a part that does
//! not exist yet may not hold `..`). A path is allowed when it is one of the folders or inside
//! one, compared by whole components (`/data2` is not inside `/data`).

use std::path::{Component, Path, PathBuf};

/// The key naming the folders statements may use besides the warehouse.
pub const ALLOWED_PATHS_KEY: &str = "apiary.fs.allowed.paths";
/// The key naming the hosts handlers may connect to.
pub const ALLOWED_HOSTS_KEY: &str = "apiary.jdbc.allowed.hosts";

/// Why a path or host was refused. The texts name what the statement named, never what a
/// file holds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReachError {
    /// The path is outside every allowed folder.
    #[error("{what} {path} is outside the folders statements may use ({ALLOWED_PATHS_KEY})")]
    Path {
        /// What named it (`LOAD DATA INPATH`, `LOCATION`, ...).
        what: String,
        /// The path as the statement gave it.
        path: String,
    },
    /// The path is not a local one, or cannot be resolved, while folders are restricted.
    #[error("{what} {path} cannot be checked against {ALLOWED_PATHS_KEY}: {reason}")]
    Unresolvable {
        /// What named it.
        what: String,
        /// The path as the statement gave it.
        path: String,
        /// Why.
        reason: String,
    },
    /// The host is not on the allowed list.
    #[error(
        "host {host} is not among the hosts storage handlers may connect to ({ALLOWED_HOSTS_KEY})"
    )]
    Host {
        /// `host:port` as the URL gave it.
        host: String,
    },
}

/// One entry of the host list: a host name or address, with or without a port.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HostRule {
    host: String,
    port: Option<u16>,
}

/// The server's limits on what statements reach. Built once at start-up.
#[derive(Debug, Clone, Default)]
pub struct Reach {
    /// Canonical folders; `None`: any path.
    folders: Option<Vec<PathBuf>>,
    /// Hosts; `None`: any host.
    hosts: Option<Vec<HostRule>>,
}

impl Reach {
    /// No limits.
    pub fn unrestricted() -> Self {
        Self::default()
    }

    /// The limits `allowed_paths` (comma-separated folders, `None` or blank: no limit) and
    /// `allowed_hosts` (comma-separated `host` or `host:port`, `None` or blank: no limit)
    /// give; the folders in `always` (the warehouse) are allowed whenever folders are
    /// limited. A folder that does not exist is an error: a typo would otherwise lock out
    /// what the operator meant to allow.
    pub fn new(
        allowed_paths: Option<&str>,
        always: &[&Path],
        allowed_hosts: Option<&str>,
    ) -> Result<Self, ReachError> {
        let folders = match list(allowed_paths) {
            None => None,
            Some(entries) => {
                let mut folders = Vec::new();
                for entry in entries
                    .iter()
                    .map(String::as_str)
                    .chain(always.iter().filter_map(|p| p.to_str()).collect::<Vec<_>>())
                {
                    let dir = local_paths(entry).and_then(|p| {
                        p.last()
                            .ok_or_else(|| "the path is empty".to_string())?
                            .canonicalize()
                            .map_err(|e| format!("the folder cannot be opened: {e}"))
                    });
                    match dir {
                        Ok(d) => folders.push(d),
                        Err(reason) => {
                            return Err(ReachError::Unresolvable {
                                what: ALLOWED_PATHS_KEY.into(),
                                path: entry.to_string(),
                                reason,
                            })
                        }
                    }
                }
                Some(folders)
            }
        };
        let hosts = list(allowed_hosts).map(|entries| {
            entries
                .iter()
                .map(|e| host_rule(e))
                .collect::<Vec<HostRule>>()
        });
        Ok(Self { folders, hosts })
    }

    /// Whether folders are limited.
    pub fn limits_paths(&self) -> bool {
        self.folders.is_some()
    }

    /// Checks a path a statement names; `what` says where it was named (`LOCATION`).
    pub fn check_path(&self, what: &str, path: &str) -> Result<(), ReachError> {
        let Some(folders) = &self.folders else {
            return Ok(());
        };
        let readings = local_paths(path).map_err(|reason| ReachError::Unresolvable {
            what: what.to_string(),
            path: path.to_string(),
            reason,
        })?;
        // Every way the text may be read as a path must land inside a folder.
        for reading in readings {
            let resolved = resolve(&reading).map_err(|reason| ReachError::Unresolvable {
                what: what.to_string(),
                path: path.to_string(),
                reason,
            })?;
            if !folders.iter().any(|f| resolved.starts_with(f)) {
                return Err(ReachError::Path {
                    what: what.to_string(),
                    path: path.to_string(),
                });
            }
        }
        Ok(())
    }

    /// Checks a host and port a handler is about to connect to.
    pub fn check_host(&self, host: &str, port: u16) -> Result<(), ReachError> {
        let Some(rules) = &self.hosts else {
            return Ok(());
        };
        let wanted = normalize_host(host);
        if rules
            .iter()
            .any(|r| r.host == wanted && r.port.is_none_or(|p| p == port))
        {
            Ok(())
        } else {
            Err(ReachError::Host {
                host: format!("{host}:{port}"),
            })
        }
    }
}

/// The entries of a comma-separated list; `None` when the list is unset or blank.
fn list(value: Option<&str>) -> Option<Vec<String>> {
    let entries: Vec<String> = value?
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    (!entries.is_empty()).then_some(entries)
}

/// `host`, `host:port`, `[v6]:port` or a bare IPv6 address as a rule.
fn host_rule(entry: &str) -> HostRule {
    if let Some(rest) = entry.strip_prefix('[') {
        if let Some((host, after)) = rest.split_once(']') {
            let port = after.strip_prefix(':').and_then(|p| p.parse().ok());
            return HostRule {
                host: normalize_host(host),
                port,
            };
        }
    }
    match entry.rsplit_once(':') {
        // One colon: host:port. More: a bare IPv6 address.
        Some((host, port)) if !host.contains(':') => HostRule {
            host: normalize_host(host),
            port: port.parse().ok(),
        },
        _ => HostRule {
            host: normalize_host(entry),
            port: None,
        },
    }
}

fn normalize_host(host: &str) -> String {
    host.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// The local absolute paths a statement's path text may be read as: a `file:` URL (any
/// case) both as the URL it is and as the text after its scheme (what LOAD DATA opens);
/// other schemes are refused; a relative path is taken from the working folder. A `file:`
/// URL with a query or a fragment is refused: readers disagree on what it names.
fn local_paths(text: &str) -> Result<Vec<PathBuf>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("the path is empty".into());
    }
    if text.contains('\0') {
        return Err("the path holds a NUL character".into());
    }
    let scheme = text.split_once(':').map(|(s, _)| s).filter(|s| {
        s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    match scheme {
        Some(s) if s.eq_ignore_ascii_case("file") => {
            let rest = &text[s.len() + 1..];
            if rest.contains(['?', '#']) {
                return Err("a file URL with a query or fragment".into());
            }
            let url = url::Url::parse(&format!("file:{rest}"))
                .map_err(|e| format!("not a valid file URL: {e}"))?;
            if url
                .host_str()
                .is_some_and(|h| !h.is_empty() && h != "localhost")
            {
                return Err("a file URL naming another host".into());
            }
            let parsed = url
                .to_file_path()
                .map_err(|_| "not a valid file URL".to_string())?;
            let raw = rest.trim_start_matches('/');
            let raw = raw.strip_prefix("localhost/").unwrap_or(raw);
            Ok(vec![PathBuf::from(format!("/{raw}")), parsed])
        }
        Some(s) => Err(format!("{s}: paths are not local files")),
        None if text.starts_with('/') => Ok(vec![PathBuf::from(text)]),
        None => Ok(vec![std::env::current_dir()
            .map_err(|e| format!("the server's working folder is unknown: {e}"))?
            .join(text)]),
    }
}

/// The path with `..` and links resolved as the file system would: the longest prefix that
/// exists is canonicalized and the rest (which cannot hold `..`) appended.
fn resolve(path: &Path) -> Result<PathBuf, String> {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(canonical) => {
                let mut out = canonical;
                for part in rest.iter().rev() {
                    out.push(part);
                }
                return Ok(out);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A link whose target is missing is not a new name: whatever is made
                // through it lands where it points.
                if std::fs::symlink_metadata(&existing).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Err(
                        "the path goes through a symbolic link whose target does not exist".into(),
                    );
                }
                let name = match existing.components().next_back() {
                    Some(Component::Normal(name)) => name.to_os_string(),
                    Some(Component::CurDir) => std::ffi::OsString::new(),
                    Some(Component::ParentDir) => {
                        return Err(
                            "the path climbs (..) out of a folder that does not exist".into()
                        )
                    }
                    _ => return Err("no part of the path exists".into()),
                };
                if !existing.pop() {
                    return Err("no part of the path exists".into());
                }
                if !name.is_empty() {
                    rest.push(name);
                }
            }
            Err(e) => return Err(format!("the path cannot be resolved: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(dir: &Path, allowed: &str) -> Reach {
        let warehouse = dir.join("warehouse");
        std::fs::create_dir_all(&warehouse).unwrap();
        Reach::new(Some(allowed), &[&warehouse], None).unwrap()
    }

    #[test]
    fn unset_means_unrestricted() {
        let r = Reach::new(None, &[], Some(" ")).unwrap();
        assert!(r.check_path("LOCATION", "/etc").is_ok());
        assert!(r.check_host("example.com", 5432).is_ok());
        assert!(!r.limits_paths());
    }

    #[test]
    fn paths_inside_allowed_folders_pass_and_others_fail() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(data.join("in")).unwrap();
        std::fs::create_dir_all(dir.path().join("data2")).unwrap();
        let r = reach(dir.path(), data.to_str().unwrap());
        let ok = |p: &Path| r.check_path("LOCATION", p.to_str().unwrap());
        assert!(ok(&data).is_ok());
        assert!(ok(&data.join("in")).is_ok());
        assert!(ok(&data.join("new/deeper")).is_ok(), "not yet existing");
        assert!(
            ok(&dir.path().join("warehouse/db.db/t")).is_ok(),
            "the warehouse"
        );
        assert!(ok(&dir.path().join("data2")).is_err(), "whole components");
        assert!(ok(&data.join("../data2")).is_err(), "..");
        assert!(ok(&data.join("in/../../data2/x")).is_err(), ".. then new");
        assert!(
            ok(&data.join("nope/../../x")).is_err(),
            ".. in the missing part"
        );
        assert!(r.check_path("LOCATION", "/etc/passwd").is_err());
        assert!(r.check_path("LOCATION", "file:///etc").is_err());
        let url = format!("file://{}", data.join("in").display());
        assert!(r.check_path("LOCATION", &url).is_ok());
        assert!(r.check_path("LOCATION", "hdfs://nn/x").is_err());
        assert!(r.check_path("LOCATION", "file://otherhost/x").is_err());
        assert!(r.check_path("LOCATION", "").is_err());
        // Scheme case, fragments and .. that URL parsing would fold away.
        assert!(r.check_path("LOCATION", "File:/etc").is_err());
        assert!(r.check_path("LOCATION", "FILE:etc").is_err());
        let hashed = format!("file://{}/d#/../../../../etc/passwd", data.display());
        assert!(r.check_path("LOAD DATA INPATH", &hashed).is_err());
        let climbing = format!("file://{}/in/../../data2", data.display());
        assert!(r.check_path("LOAD DATA INPATH", &climbing).is_err());
        assert!(r.check_path("LOCATION", "s3a://bucket/x").is_err());
    }

    #[test]
    fn a_dangling_link_is_not_a_new_name() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside/new.db"), data.join("dangling"))
            .unwrap();
        let r = reach(dir.path(), data.to_str().unwrap());
        let err = r
            .check_path("hive.sql.jdbc.url", data.join("dangling").to_str().unwrap())
            .unwrap_err();
        assert!(matches!(err, ReachError::Unresolvable { .. }), "{err}");
    }

    #[test]
    fn symbolic_links_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, data.join("link")).unwrap();
        let r = reach(dir.path(), data.to_str().unwrap());
        let err = r
            .check_path("LOAD DATA INPATH", data.join("link/f").to_str().unwrap())
            .unwrap_err();
        assert!(matches!(err, ReachError::Path { .. }), "{err}");
        assert!(err.to_string().contains(ALLOWED_PATHS_KEY));
    }

    #[test]
    fn a_missing_allowed_folder_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        assert!(Reach::new(Some(missing.to_str().unwrap()), &[], None).is_err());
    }

    #[test]
    fn hosts_match_by_name_and_port() {
        let r = Reach::new(None, &[], Some("db.example.com, 127.0.0.1:5432,[::1]:3306")).unwrap();
        assert!(r.check_host("DB.example.com", 1).is_ok());
        assert!(r.check_host("127.0.0.1", 5432).is_ok());
        assert!(r.check_host("127.0.0.1", 5433).is_err());
        assert!(r.check_host("::1", 3306).is_ok());
        assert!(r.check_host("[::1]", 3306).is_ok());
        assert!(r.check_host("10.0.0.1", 5432).is_err());
        assert!(r.check_host("db.example.com.evil", 1).is_err());
    }
}
