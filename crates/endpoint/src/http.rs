//! The HTTP transport: each POST to the configured path carries one binary-protocol message
//! and gets the reply in its body. Credentials come in `Authorization: Basic` (password
//! modes) or `Authorization: Bearer` (JWT), or in Hive's signed login cookie.

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

use crate::accept::accept_loop;
use crate::config::{AuthMode, EndpointConfig};
use crate::service::{handle_message, CallOutcome};

/// Accepts HTTP connections until `shutdown` fires (see [`accept_loop`]).
pub async fn serve(
    listener: TcpListener,
    gateway: Arc<Gateway>,
    config: Arc<EndpointConfig>,
    shutdown: CancellationToken,
) {
    let (cfg, stop) = (config.clone(), shutdown.clone());
    accept_loop("http", listener, config, shutdown, move |stream, peer, _| {
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

/// What a request's `Authorization` header says.
enum Credentials {
    Basic(String, String),
    Bearer(String),
    /// A SPNEGO token (`Authorization: Negotiate`), decoded.
    Negotiate(Vec<u8>),
}

fn credentials(req: &Request<Incoming>) -> Option<Credentials> {
    let value = req
        .headers()
        .get(hyper::header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .trim();
    let (scheme, rest) = value.split_once(' ')?;
    if scheme.eq_ignore_ascii_case("Bearer") {
        return Some(Credentials::Bearer(rest.trim().to_string()));
    }
    if scheme.eq_ignore_ascii_case("Negotiate") {
        // Hive's JDBC driver writes `Negotiate : <token>` (its server's decoder skips the
        // colon); the colon is skipped here too.
        let token = base64::engine::general_purpose::STANDARD
            .decode(rest.trim().trim_start_matches(':').trim_start())
            .ok()?;
        return Some(Credentials::Negotiate(token));
    }
    if !scheme.eq_ignore_ascii_case("Basic") {
        return None;
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(rest.trim())
        .ok()?;
    let text = String::from_utf8_lossy(&raw);
    let (user, password) = text.split_once(':')?;
    Some(Credentials::Basic(user.to_string(), password.to_string()))
}

/// Hive's answer to a request without valid credentials in a checked mode; with Kerberos on,
/// it asks for a `Negotiate` token (optionally carrying the server's own).
fn unauthorized(cfg: &EndpointConfig, reason: &str) -> Response<Full<Bytes>> {
    let mut r = plain(
        StatusCode::UNAUTHORIZED,
        format!("Authentication Error: {reason}"),
    );
    if cfg.spnego.is_some() {
        r.headers_mut().insert(
            hyper::header::WWW_AUTHENTICATE,
            hyper::header::HeaderValue::from_static("Negotiate"),
        );
    }
    r
}

/// Accepts a one-leg SPNEGO exchange: the user and the server's answer token, if any; or
/// the reason to give the client.
async fn negotiate(
    token: &[u8],
    peer: std::net::SocketAddr,
    gw: &Gateway,
    cfg: &EndpointConfig,
) -> Result<(String, Option<Vec<u8>>), String> {
    let Some(acceptor) = &cfg.spnego else {
        return Err("Kerberos is not enabled (hive.server2.authentication)".into());
    };
    let address = Some(peer.ip());
    let refused = |e: apiary_auth::AuthError| {
        let msg = e.to_string();
        let _ = gw.ticket_login(address, Err(e));
        msg
    };
    let (exchange, reply) = acceptor
        .start()
        .step_blocking(token.to_vec())
        .await
        .map_err(refused)?;
    if !exchange.is_complete() {
        // HTTP sessions are stateless between requests: a mechanism needing a second leg
        // is not offered.
        return Err(refused(apiary_auth::AuthError::Refused(
            "the SPNEGO exchange needs more than one round trip; use Kerberos 5".into(),
        )));
    }
    let login = exchange.login().map_err(refused)?;
    let user = gw
        .ticket_login(address, Ok(login))
        .map_err(|e| e.to_string())?;
    Ok((user, reply))
}

/// Who sends a request, and the login cookie to set on the answer, if any.
struct Login {
    user: String,
    set_cookie: Option<String>,
    /// The server's SPNEGO answer token (mutual authentication), base64.
    negotiate: Option<String>,
}

/// Proves who sends a request, as Hive's servlet does: with logins checked, a valid login
/// cookie is enough; otherwise a bearer token (JWT mode) or Basic credentials (password mode)
/// must be valid, and the answer sets a fresh cookie. Without checks, the Basic user is
/// taken at its word (`anonymous` when none is given).
async fn login(
    req: &Request<Incoming>,
    peer: std::net::SocketAddr,
    gw: &Gateway,
    cfg: &EndpointConfig,
) -> Result<Login, Response<Full<Bytes>>> {
    let given = credentials(req);
    if cfg.auth != AuthMode::Password {
        let user = match given {
            Some(Credentials::Basic(user, _)) if !user.is_empty() => user,
            _ => "anonymous".to_string(),
        };
        return Ok(Login {
            user,
            set_cookie: None,
            negotiate: None,
        });
    }
    if let Some(cookie) = &cfg.cookie {
        let values = req
            .headers()
            .get_all(hyper::header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok());
        let known = apiary_auth::cookie::cookie_values(values, apiary_auth::cookie::COOKIE_NAME)
            .find_map(|v| cookie.signer.verify(v));
        if let Some(user) = known {
            return Ok(Login {
                user,
                set_cookie: None,
                negotiate: None,
            });
        }
    }
    // Every request proves who sends it: HTTP sessions outlive connections.
    // (A token's login cookie ends when the token does.)
    let mut negotiated = None;
    let (user, until) = match given {
        None => {
            return Err(unauthorized(
                cfg,
                "no credentials in the request (authorization: Basic, Bearer or Negotiate)",
            ))
        }
        Some(Credentials::Bearer(token)) => {
            let login = gw
                .authenticate_bearer(Some(peer.ip()), &token)
                .map_err(|e| unauthorized(cfg, &e.to_string()))?;
            (login.user, login.expires)
        }
        Some(Credentials::Basic(user, password)) => {
            gw.authenticate(Some(peer.ip()), &user, &password)
                .await
                .map_err(|e| unauthorized(cfg, &e.to_string()))?;
            (user, None)
        }
        Some(Credentials::Negotiate(token)) => {
            let (user, reply) = negotiate(&token, peer, gw, cfg)
                .await
                .map_err(|msg| unauthorized(cfg, &msg))?;
            negotiated = reply.map(|t| base64::engine::general_purpose::STANDARD.encode(t));
            (user, None)
        }
    };
    let set_cookie = cfg.cookie.as_ref().map(|c| {
        let (value, max_age) = c.signer.issue_until(&user, until);
        let mut text = format!(
            "{}={value}; Max-Age={max_age}",
            apiary_auth::cookie::COOKIE_NAME,
        );
        if let Some(d) = &c.domain {
            text.push_str(&format!("; Domain={d}"));
        }
        if let Some(p) = &c.path {
            text.push_str(&format!("; Path={p}"));
        }
        if cfg.tls.is_some() {
            text.push_str("; Secure");
        }
        if c.http_only {
            text.push_str("; HttpOnly");
        }
        text
    });
    Ok(Login {
        user,
        set_cookie,
        negotiate: negotiated,
    })
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
    let login = match login(&req, peer, gw, cfg).await {
        Ok(l) => l,
        Err(refused) => return refused,
    };
    // Hive's `doAs` query parameter: the user an OpenSession over this request acts as.
    let proxy_user = req.uri().query().and_then(|q| {
        url::form_urlencoded::parse(q.as_bytes())
            .find(|(k, _)| k == "doAs")
            .map(|(_, v)| v.into_owned())
    });
    let client = Client {
        user: login.user,
        address: Some(peer.ip()),
        proxy_user,
    };
    let mut r = serve_messages(req.into_body(), &client, gw, cfg).await;
    if let Some(cookie) = login
        .set_cookie
        .and_then(|c| hyper::header::HeaderValue::from_str(&c).ok())
    {
        r.headers_mut().insert(hyper::header::SET_COOKIE, cookie);
    }
    if let Some(token) = login
        .negotiate
        .and_then(|t| hyper::header::HeaderValue::from_str(&format!("Negotiate {t}")).ok())
    {
        r.headers_mut()
            .insert(hyper::header::WWW_AUTHENTICATE, token);
    }
    r
}

/// Runs the Thrift messages of a request's body for `client` and answers their replies.
async fn serve_messages(
    body: Incoming,
    client: &Client,
    gw: &Arc<Gateway>,
    cfg: &EndpointConfig,
) -> Response<Full<Bytes>> {
    let body = match Limited::new(body, cfg.max_message_size).collect().await {
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
        match handle_message(gw, client, rest, &mut opened).await {
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
