//! Reading a document a key names at start-up (a JWKS URL): `http://`, `https://` (TLS 1.2/1.3,
//! the system's certificate authorities) or a local file (`file://` or a path). One GET, the
//! body read to its end, capped in size; redirects are not followed.

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};

/// Largest document read.
const MAX_BYTES: usize = 4 << 20;

/// The text at `url`.
pub async fn get_text(url: &str) -> Result<String, String> {
    let parsed = url::Url::parse(url);
    let parsed = match parsed {
        Ok(u) if u.scheme() == "http" || u.scheme() == "https" => u,
        Ok(u) if u.scheme() == "file" => {
            let path = u
                .to_file_path()
                .map_err(|()| "not a local file URL".to_string())?;
            return read_file(&path).await;
        }
        Ok(u) if u.scheme().len() > 1 => return Err(format!("unsupported scheme {}", u.scheme())),
        // A plain path (or a Windows drive letter read as a scheme).
        _ => return read_file(std::path::Path::new(url)).await,
    };
    let host = parsed.host_str().ok_or("no host")?.to_string();
    let port = parsed.port_or_known_default().ok_or("no port")?;
    let tcp = tokio::net::TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|e| format!("cannot connect to {host}:{port}: {e}"))?;
    if parsed.scheme() == "https" {
        let config = apiary_tls::client_config(None)?;
        let name = rustls::pki_types::ServerName::try_from(host.clone())
            .map_err(|e| format!("{host}: {e}"))?;
        let tls = tokio_rustls::TlsConnector::from(config)
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS with {host}:{port}: {e}"))?;
        get(tls, &parsed).await
    } else {
        get(tcp, &parsed).await
    }
}

async fn read_file(path: &std::path::Path) -> Result<String, String> {
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() > MAX_BYTES {
        return Err(format!(
            "{} is larger than {MAX_BYTES} bytes",
            path.display()
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text", path.display()))
}

async fn get<S>(stream: S, url: &url::Url) -> Result<String, String>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP: {e}"))?;
    let driver = tokio::spawn(conn);
    let target = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    let authority = match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_string(),
    };
    let request = hyper::Request::get(target)
        .header(hyper::header::HOST, authority)
        .header(hyper::header::ACCEPT, "application/json")
        .body(Empty::<Bytes>::new())
        .map_err(|e| format!("HTTP: {e}"))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("HTTP: {e}"))?;
    let status = response.status();
    let body = Limited::new(response.into_body(), MAX_BYTES)
        .collect()
        .await
        .map_err(|e| format!("HTTP body: {e}"))?
        .to_bytes();
    driver.abort();
    if !status.is_success() {
        return Err(format!("HTTP status {status}"));
    }
    String::from_utf8(body.to_vec()).map_err(|_| "the answer is not UTF-8 text".to_string())
}
