//! TLS for Apiary's listeners (`hive.server2.use.SSL`): the server's key and certificate
//! chain from Hive's keystore (`hive.server2.keystore.path` / `.password`: a PKCS#12 file, as
//! `openssl pkcs12 -export` or `keytool` make it, or a PEM file holding the chain and the
//! key), served with rustls, TLS 1.2 and 1.3 only. Every listener turns an accepted socket
//! into a [`Stream`], plain or encrypted, with the handshake under the login timeout, so a
//! client that stalls or speaks plain text to a TLS port costs the server nothing lasting.

#![warn(missing_docs)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

pub use tokio_rustls::TlsAcceptor;

/// What a listener reads and writes: any byte stream a connection can be.
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// An accepted connection: the socket itself, or TLS over it.
pub type Stream = Box<dyn Io>;

/// Why the keystore could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The file could not be read.
    #[error("cannot read the keystore {path} (hive.server2.keystore.path): {source}")]
    Read {
        /// The keystore's path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file holds no usable key and certificate, or the password is wrong.
    #[error("keystore {path}: {reason}")]
    Keystore {
        /// The keystore's path.
        path: String,
        /// What is wrong.
        reason: String,
    },
}

/// The client side of TLS, for the servers Apiary connects to (an LDAP directory over
/// `ldaps://`, a JWKS URL over `https://`): TLS 1.2 and 1.3 with `ring`, trusting the CA
/// certificates of the PEM file `ca_file`, or the system's certificate store without one.
pub fn client_config(ca_file: Option<&Path>) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    match ca_file {
        Some(path) => {
            let data = std::fs::read(path)
                .map_err(|e| format!("cannot read the CA file {}: {e}", path.display()))?;
            let certs = CertificateDer::pem_slice_iter(&data)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("CA file {}: unreadable PEM: {e}", path.display()))?;
            if certs.is_empty() {
                return Err(format!("CA file {} holds no certificate", path.display()));
            }
            for cert in certs {
                roots
                    .add(cert)
                    .map_err(|e| format!("CA file {}: {e}", path.display()))?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
        }
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(Arc::new(config))
}

/// The server side of TLS, loaded once at start-up and shared by every listener.
#[derive(Clone)]
pub struct ServerTls {
    config: Arc<rustls::ServerConfig>,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls").finish_non_exhaustive()
    }
}

impl ServerTls {
    /// Loads the keystore at `path`: PEM when it starts as PEM does, else PKCS#12 opened
    /// with `password`.
    pub fn load(path: &Path, password: &str) -> Result<Self, TlsError> {
        let shown = path.display().to_string();
        let data = std::fs::read(path).map_err(|source| TlsError::Read {
            path: shown.clone(),
            source,
        })?;
        let bad = |reason: String| TlsError::Keystore {
            path: shown.clone(),
            reason,
        };
        let (chain, key) = if is_pem(&data) {
            from_pem(&data).map_err(bad)?
        } else {
            from_pkcs12(&data, password).map_err(bad)?
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .map_err(|e| bad(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| bad(format!("the key does not fit the certificate: {e}")))?;
        Ok(Self {
            config: Arc::new(config),
        })
    }

    /// An acceptor offering `alpn` (`h2` for gRPC, whose clients insist on it; nothing for
    /// HTTP/1.1 and the binary transport).
    pub fn acceptor(&self, alpn: &[&[u8]]) -> TlsAcceptor {
        let mut config = (*self.config).clone();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        TlsAcceptor::from(Arc::new(config))
    }
}

/// The connection `stream` becomes: TLS when `tls` is set, its handshake bounded by
/// `timeout`; the socket itself otherwise. The error says why a handshake failed (a plain
/// client on a TLS port, a stall, an old protocol version), for the server's log.
pub async fn accept(
    tls: Option<&TlsAcceptor>,
    stream: TcpStream,
    timeout: Duration,
) -> Result<Stream, String> {
    let Some(acceptor) = tls else {
        return Ok(Box::new(stream));
    };
    match tokio::time::timeout(timeout, acceptor.accept(stream)).await {
        Err(_) => Err(format!(
            "TLS handshake not finished within {} s",
            timeout.as_secs()
        )),
        Ok(Err(e)) => Err(format!("TLS handshake failed: {e}")),
        Ok(Ok(s)) => Ok(Box::new(s)),
    }
}

fn is_pem(data: &[u8]) -> bool {
    let start = data
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(data.len());
    data[start..].starts_with(b"-----BEGIN")
}

type KeyPair = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

fn from_pem(data: &[u8]) -> Result<KeyPair, String> {
    let chain = CertificateDer::pem_slice_iter(data)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("unreadable PEM certificate: {e}"))?;
    if chain.is_empty() {
        return Err("the PEM file holds no certificate".into());
    }
    let key = PrivateKeyDer::from_pem_slice(data)
        .map_err(|e| format!("the PEM file holds no usable private key: {e}"))?;
    Ok((chain, key))
}

fn from_pkcs12(data: &[u8], password: &str) -> Result<KeyPair, String> {
    use p12_keystore::{KeyStore, Pkcs12ImportPolicy};
    let store = KeyStore::from_pkcs12(data, password, Pkcs12ImportPolicy::Strict).map_err(|e| {
        format!("not a PKCS#12 keystore this password opens (hive.server2.keystore.password): {e}")
    })?;
    let (_, entry) = store
        .private_key_chain()
        .ok_or("the keystore holds no private key with its certificate")?;
    let chain: Vec<CertificateDer<'static>> = entry
        .certs()
        .iter()
        .map(|c| CertificateDer::from(c.as_der().to_vec()))
        .collect();
    if chain.is_empty() {
        return Err("the keystore's key has no certificate".into());
    }
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(entry.key().as_der().to_vec()));
    Ok((chain, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_is_told_from_pkcs12() {
        assert!(is_pem(b"\n  -----BEGIN CERTIFICATE-----\n"));
        assert!(!is_pem(&[0x30, 0x82, 0x01]));
        assert!(!is_pem(b""));
    }

    #[test]
    fn unusable_keystores_are_clear_errors() {
        let dir = std::env::temp_dir().join(format!("apiary-tls-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let missing = ServerTls::load(&dir.join("missing.p12"), "x").expect_err("missing");
        assert!(missing.to_string().contains("cannot read the keystore"));
        let junk = dir.join("junk.p12");
        std::fs::write(&junk, [0x30, 0x03, 0x02, 0x01, 0x00]).expect("write");
        let e = ServerTls::load(&junk, "x").expect_err("junk");
        assert!(e.to_string().contains("not a PKCS#12 keystore"), "{e}");
        let empty_pem = dir.join("empty.pem");
        std::fs::write(
            &empty_pem,
            "-----BEGIN NOTHING-----\n-----END NOTHING-----\n",
        )
        .expect("write");
        let e = ServerTls::load(&empty_pem, "").expect_err("no cert");
        assert!(e.to_string().contains("no certificate"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
