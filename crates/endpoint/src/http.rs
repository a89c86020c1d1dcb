//! The HTTP transport: each POST to the configured path carries one binary-protocol message
//! and gets the reply in its body. Credentials come in `Authorization: Basic`.

use std::convert::Infallible;
use std::sync::Arc;

use apiary_gateway::{Client, Gateway, Handle};
use apiary_protocol::ProtocolError;
use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::service::{handle_message, CallOutcome};
use crate::{AuthMode, EndpointConfig};

/// Accepts HTTP connections until `shutdown` fires (see [`crate::accept_loop`]).
pub async fn serve(
    listener: TcpListener,
    gateway: Arc<Gateway>,
    config: Arc<EndpointConfig>,
    shutdown: CancellationToken,
) {
    let (cfg, stop) = (config.clone(), shutdown.clone());
    crate::accept_loop("http", listener, config, shutdown, move |stream, peer, _| {
        let (gw, cfg, stop) = (gateway.clone(), cfg.clone(), stop.clone());
        async move {
            let svc_cfg = cfg.clone();
            let svc = service_fn(move |req| {
                let (gw, cfg) = (gw.clone(), svc_cfg.clone());
                async move { Ok::<_, Infallible>(respond(req, peer, &gw, &cfg).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .header_read_timeout(Some(cfg.handshake_timeout))
                .timer(hyper_util::rt::TokioTimer::new())
                .serve_connection(TokioIo::new(stream), svc);
            tokio::pin!(conn);
            let reason = tokio::select! {
                r = conn.as_mut() => match r {
                    Ok(()) => "client closed the connection".to_string(),
                    Err(e) => format!("HTTP error: {e}"),
                },
                _ = stop.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(cfg.shutdown_grace, conn.as_mut()).await;
                    "server shutting down".to_string()
                }
                _ = tokio::time::sleep(cfg.idle_timeout) => format!("connection open longer than {} s", cfg.idle_timeout.as_secs()),
            };
            tracing::debug!(%peer, reason = %reason, "HTTP connection closed");
        }
    })
    .await;
}

fn plain(status: StatusCode, text: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(text)));
    *r.status_mut() = status;
    r
}

/// The user and password of a Basic `Authorization` header.
fn basic_credentials(req: &Request<Incoming>) -> Option<(String, String)> {
    req.headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Basic ")
                .or_else(|| v.strip_prefix("basic "))
        })
        .and_then(|b64| {
            base64::engine::general_purpose::STANDARD
                .decode(b64.trim())
                .ok()
        })
        .and_then(|raw| {
            let text = String::from_utf8_lossy(&raw).to_string();
            text.split_once(':')
                .map(|(u, p)| (u.to_string(), p.to_string()))
        })
}

/// Hive's answer to a request without valid credentials in a password mode.
fn unauthorized(reason: &str) -> Response<Full<Bytes>> {
    plain(
        StatusCode::UNAUTHORIZED,
        format!("Authentication Error: {reason}"),
    )
}

async fn respond(
    req: Request<Incoming>,
    peer: std::net::SocketAddr,
    gw: &Arc<Gateway>,
    cfg: &EndpointConfig,
) -> Response<Full<Bytes>> {
    let path = req.uri().path().trim_matches('/');
    if path != cfg.http_path.trim_matches('/') {
        return plain(
            StatusCode::NOT_FOUND,
            format!("No HiveServer2 service at /{path}; use /{}", cfg.http_path),
        );
    }
    if req.method() != Method::POST {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "HiveServer2 HTTP transport expects POST".into(),
        );
    }
    let credentials = basic_credentials(&req);
    if cfg.auth == AuthMode::Password {
        // Every request proves who sends it: HTTP sessions outlive connections.
        let Some((user, password)) = &credentials else {
            return unauthorized("no Basic credentials (authorization: Basic ...) in the request");
        };
        if let Err(e) = gw.authenticate(Some(peer.ip()), user, password).await {
            return unauthorized(&e.to_string());
        }
    }
    // Hive's `doAs` query parameter: the user an OpenSession over this request acts as.
    let proxy_user = req.uri().query().and_then(|q| {
        url::form_urlencoded::parse(q.as_bytes())
            .find(|(k, _)| k == "doAs")
            .map(|(_, v)| v.into_owned())
    });
    let client = Client {
        user: credentials
            .map(|(u, _)| u)
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| "anonymous".to_string()),
        address: Some(peer.ip()),
        proxy_user,
    };
    let body = match Limited::new(req.into_body(), cfg.max_message_size)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            tracing::warn!(error = %e, "HTTP request body refused");
            return plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("request refused: {e}"),
            );
        }
    };
    let mut out = Vec::new();
    let mut rest: &[u8] = &body;
    // Sessions over HTTP outlive connections; they end with CloseSession or by idling out.
    let mut opened: Vec<Handle> = Vec::new();
    while !rest.is_empty() {
        match handle_message(gw, &client, rest, &mut opened).await {
            Ok((used, CallOutcome::Reply(r))) => {
                out.extend_from_slice(&r);
                rest = &rest[used.min(rest.len())..];
            }
            Ok((_, CallOutcome::Close(r, why))) => {
                tracing::warn!(reason = %why, "HTTP request rejected");
                if let Some(r) = r {
                    out.extend_from_slice(&r);
                    break;
                }
                return plain(StatusCode::BAD_REQUEST, why);
            }
            Err(ProtocolError::Incomplete) => {
                return plain(StatusCode::BAD_REQUEST, "truncated Thrift message".into());
            }
            Err(e) => return plain(StatusCode::BAD_REQUEST, e.to_string()),
        }
    }
    let mut r = Response::new(Full::new(Bytes::from(out)));
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/x-thrift"),
    );
    r
}
