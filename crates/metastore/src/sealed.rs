//! Handler secrets at rest: a table's secret properties (a JDBC password) are written to the
//! metastore and to the intent journal sealed with AES-256-GCM under the server's key (a key
//! file named by `apiary.secrets.key.file`, made with owner-only permissions at first start),
//! never in clear text. The key is installed once per process, before the metastore is
//! opened; servers sharing a metastore share the key file.
//!
//! On disk a table's `secrets` is the text `sealed:v1:<base64 of nonce and ciphertext>`.
//! A table written before sealing (a JSON object) is still read, and sealed when next
//! written.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use base64::Engine as _;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

const PREFIX: &str = "sealed:v1:";
const KEY_LEN: usize = 32;

static KEY: OnceLock<LessSafeKey> = OnceLock::new();

/// Why the key could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The key file could not be read or made.
    #[error("secrets key file {path}: {reason}")]
    File {
        /// Its path.
        path: String,
        /// Why.
        reason: String,
    },
}

/// Loads the key from `path`, making it (32 random bytes, readable by its owner only) if
/// it does not exist, and installs it for this process. A second call keeps the first key.
pub fn install_key_file(path: &Path) -> Result<(), KeyError> {
    let err = |reason: String| KeyError::File {
        path: path.display().to_string(),
        reason,
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut key = [0u8; KEY_LEN];
            SystemRandom::new()
                .fill(&mut key)
                .map_err(|_| err("no random bytes for a new key".into()))?;
            write_new(path, &key).map_err(|e| err(e.to_string()))?;
            key.to_vec()
        }
        Err(e) => return Err(err(e.to_string())),
    };
    if bytes.len() != KEY_LEN {
        return Err(err(format!(
            "holds {} bytes; a key is {KEY_LEN}",
            bytes.len()
        )));
    }
    let key = UnboundKey::new(&AES_256_GCM, &bytes).map_err(|_| err("not a usable key".into()))?;
    let _ = KEY.set(LessSafeKey::new(key));
    Ok(())
}

/// Creates the file with owner-only permissions (failing if it appeared meanwhile).
fn write_new(path: &Path, key: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options.open(path)?;
    f.write_all(key)?;
    f.sync_all()
}

/// Serializes a table's secrets: sealed when a key is installed (the server always installs
/// one), as a plain map otherwise (tests and tools).
pub(crate) fn serialize<S: Serializer>(
    secrets: &BTreeMap<String, String>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let Some(key) = KEY.get() else {
        return secrets.serialize(s);
    };
    let plain = serde_json::to_vec(secrets).map_err(serde::ser::Error::custom)?;
    let mut nonce = [0u8; NONCE_LEN];
    SystemRandom::new()
        .fill(&mut nonce)
        .map_err(|_| serde::ser::Error::custom("no random bytes for a nonce"))?;
    let mut sealed = plain;
    key.seal_in_place_append_tag(
        Nonce::assume_unique_for_key(nonce),
        Aad::empty(),
        &mut sealed,
    )
    .map_err(|_| serde::ser::Error::custom("sealing the table's secrets failed"))?;
    let mut out = nonce.to_vec();
    out.extend_from_slice(&sealed);
    let text = format!(
        "{PREFIX}{}",
        base64::engine::general_purpose::STANDARD.encode(out)
    );
    s.serialize_str(&text)
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OnDisk {
    Sealed(String),
    Plain(BTreeMap<String, String>),
}

/// Reads a table's secrets, sealed or (written before sealing) plain.
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    use serde::de::Error;
    let text = match OnDisk::deserialize(d)? {
        OnDisk::Plain(map) => return Ok(map),
        OnDisk::Sealed(text) => text,
    };
    let b64 = text
        .strip_prefix(PREFIX)
        .ok_or_else(|| D::Error::custom("secrets in an unknown form"))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|_| D::Error::custom("sealed secrets are not base64"))?;
    let key = KEY.get().ok_or_else(|| {
        D::Error::custom("the table's secrets are sealed but no secrets key is installed")
    })?;
    if bytes.len() < NONCE_LEN {
        return Err(D::Error::custom("sealed secrets are cut short"));
    }
    let (nonce, sealed) = bytes.split_at(NONCE_LEN);
    let nonce = Nonce::try_assume_unique_for_key(nonce)
        .map_err(|_| D::Error::custom("sealed secrets are cut short"))?;
    let mut sealed = sealed.to_vec();
    let plain = key
        .open_in_place(nonce, Aad::empty(), &mut sealed)
        .map_err(|_| {
            D::Error::custom(
                "the table's secrets were sealed with another key than apiary.secrets.key.file",
            )
        })?;
    serde_json::from_slice(plain).map_err(D::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Deserialize)]
    struct Holder {
        #[serde(with = "super")]
        secrets: BTreeMap<String, String>,
    }

    #[test]
    fn secrets_are_sealed_and_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys").join("secrets.key");
        install_key_file(&path).unwrap();
        install_key_file(&path).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let mut secrets = BTreeMap::new();
        secrets.insert("hive.sql.dbcp.password".to_string(), "pw-42".to_string());
        let text = serde_json::to_string(&Holder {
            secrets: secrets.clone(),
        })
        .unwrap();
        assert!(!text.contains("pw-42"), "{text}");
        assert!(text.contains(PREFIX));
        let back: Holder = serde_json::from_str(&text).unwrap();
        assert_eq!(back.secrets, secrets);
        // Written before sealing: still read.
        let old: Holder =
            serde_json::from_str(r#"{"secrets":{"hive.sql.dbcp.password":"x"}}"#).unwrap();
        assert_eq!(old.secrets.len(), 1);
        // Tampered: refused, not misread.
        let tampered = text.replace(&text[text.len() - 6..text.len() - 2], "AAAA");
        assert!(serde_json::from_str::<Holder>(&tampered).is_err());
        let short = format!(r#"{{"secrets":"{PREFIX}AAAA"}}"#);
        assert!(serde_json::from_str::<Holder>(&short).is_err());
    }
}
