//! The binary TCP transport: SASL PLAIN (Hive's auth=NONE) and NOSASL on one port, told apart
//! by the first byte a client sends.
//!
//! SASL: frames of 1 status byte + 4-byte big-endian length + payload during the handshake,
//! then 4-byte length + payload per message. NOSASL: a raw TBinaryProtocol stream.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use apiary_auth::KerberosAcceptor;
use apiary_gateway::{Client, Gateway, Handle};
use apiary_protocol::sasl::{
    handshake_frame, handshake_header, parse_plain, unframe, BAD as SASL_BAD,
    COMPLETE as SASL_COMPLETE, ERROR as SASL_ERROR, OK as SASL_OK, START as SASL_START,
};
use apiary_protocol::MessageScanner;
use bytes::BytesMut;
use tokio::io::AsyncBufReadExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::accept::accept_loop;
use crate::config::{AuthMode, EndpointConfig};
use crate::service::{handle_message, CallOutcome};

/// Largest handshake payload accepted (mechanism name, PLAIN credentials).
const MAX_HANDSHAKE_PAYLOAD: usize = 64 * 1024;
/// Bytes read from a NOSASL stream at a time.
const READ_CHUNK: usize = 64 * 1024;

/// Accepts binary connections until `shutdown` fires (see [`accept_loop`]).
pub async fn serve(
    listener: TcpListener,
    gateway: Arc<Gateway>,
    config: Arc<EndpointConfig>,
    shutdown: CancellationToken,
) {
    let (cfg, stop) = (config.clone(), shutdown.clone());
    accept_loop(
        "binary",
        listener,
        config,
        shutdown,
        move |stream, peer, accepted| {
            let (gw, cfg, stop) = (gateway.clone(), cfg.clone(), stop.clone());
            async move {
                let reason = connection(stream, peer, accepted, &gw, &cfg, &stop).await;
                tracing::info!(%peer, reason = %reason, "binary connection closed");
            }
        },
    )
    .await;
}

/// A connection as the binary transport reads it: buffered, so its first byte can be looked
/// at before it is consumed (whether the socket is TLS or not).
type Conn = tokio::io::BufReader<apiary_tls::Stream>;

enum Mode {
    Sasl,
    Raw,
}

/// Serves one connection; returns why it ended.
async fn connection(
    stream: apiary_tls::Stream,
    peer: SocketAddr,
    accepted: tokio::time::Instant,
    gw: &Arc<Gateway>,
    cfg: &EndpointConfig,
    shutdown: &CancellationToken,
) -> String {
    let mut stream = tokio::io::BufReader::new(stream);
    // One login window from the accept: TLS handshake, first bytes, SASL and OpenSession.
    let login_deadline = accepted + cfg.handshake_timeout;
    let peeked = tokio::time::timeout_at(login_deadline, stream.fill_buf()).await;
    let first = match peeked {
        Err(_) => return "handshake timed out before the client sent anything".into(),
        Ok(Err(e)) => return format!("read failed: {e}"),
        Ok(Ok([])) => return "client closed the connection before sending anything".into(),
        Ok(Ok([b, ..])) => *b,
    };
    let (mode, user) = match (first, cfg.auth) {
        (SASL_START, AuthMode::None | AuthMode::Password) => {
            match tokio::time::timeout_at(login_deadline, sasl_handshake(&mut stream, gw, cfg.kerberos.as_deref(), peer)).await {
                Err(_) => return "SASL handshake timed out".into(),
                Ok(Err(reason)) => return reason,
                Ok(Ok(user)) => (Mode::Sasl, user),
            }
        }
        (SASL_START, AuthMode::NoSasl) => {
            return "client started a SASL handshake but the server is configured for NOSASL (hive.server2.authentication=NOSASL); connect with auth=noSasl".into()
        }
        (0x80 | 0x00, AuthMode::Password) => {
            return "a NOSASL client on a port that requires a password (hive.server2.authentication is a password mode)".into()
        }
        (0x80 | 0x00, _) => (Mode::Raw, "anonymous".to_string()),
        (b'A'..=b'Z', _) => {
            let _ = stream
                .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .await;
            let _ = stream.flush().await;
            return "an HTTP request arrived on the binary port; use the HTTP port".into();
        }
        (b, _) => return format!("first byte 0x{b:02x} is neither a SASL START nor a Thrift message"),
    };
    tracing::debug!(%peer, %user, "binary connection ready");
    let mut opened: Vec<Handle> = Vec::new();
    let client = Client {
        user,
        address: Some(peer.ip()),
        proxy_user: None,
    };
    let ctx = Serving {
        client: &client,
        gw,
        cfg,
        shutdown,
        accepted,
    };
    let reason = serve_messages(&mut stream, mode, &ctx, &mut opened).await;
    // A client that goes away without CloseSession must not leak its sessions.
    for h in opened {
        if gw.close_session(&h).is_ok() {
            tracing::info!(%peer, session = %h, "closed session left open by a vanished client");
        }
    }
    reason
}

/// What serving one connection's messages needs besides the stream.
#[derive(Clone, Copy)]
struct Serving<'a> {
    client: &'a Client,
    gw: &'a Arc<Gateway>,
    cfg: &'a EndpointConfig,
    shutdown: &'a CancellationToken,
    /// When the connection was accepted: the login window counts from then.
    accepted: tokio::time::Instant,
}

async fn serve_messages(
    stream: &mut Conn,
    mode: Mode,
    ctx: &Serving<'_>,
    opened: &mut Vec<Handle>,
) -> String {
    let Serving {
        client,
        gw,
        cfg,
        shutdown,
        accepted,
    } = *ctx;
    // `raw` holds bytes as read from the socket; `buf` the Thrift message stream (the same
    // bytes for NOSASL, the frames' payloads for SASL). One read takes whatever has arrived,
    // so a small call costs one successful recv.
    let mut raw = BytesMut::with_capacity(READ_CHUNK);
    let mut buf = BytesMut::new();
    let mut out: Vec<u8> = Vec::new();
    let mut scanner = MessageScanner::new();
    // The login window started at the accept (TLS handshake and SASL included).
    let mut sessionless_since: Option<Instant> = Some(accepted.into_std());
    loop {
        match mode {
            Mode::Raw => {
                if buf.is_empty() {
                    std::mem::swap(&mut buf, &mut raw);
                } else {
                    buf.extend_from_slice(&raw);
                    raw.clear();
                }
            }
            Mode::Sasl => {
                if let Err(reason) = unframe(&mut raw, &mut buf, cfg.max_message_size) {
                    return reason;
                }
            }
        }
        // Answer every whole message already buffered. The scanner resumes where it stopped,
        // so a message trickled in small pieces is walked once, not once per read.
        while !buf.is_empty() {
            let end = match scanner.feed(&buf) {
                Ok(Some(end)) => end,
                Ok(None) => break,
                Err(e) => return format!("bad message: {e}"),
            };
            scanner.reset();
            match handle_message(gw, client, &buf[..end], opened).await {
                Ok((used, outcome)) => {
                    let _ = buf.split_to(used.min(end));
                    let (reply, close) = match outcome {
                        CallOutcome::Reply(r) => (Some(r), None),
                        CallOutcome::Close(r, why) => (r, Some(why)),
                    };
                    if let Some(r) = reply {
                        if let Err(e) = write_message(stream, &mode, &r, &mut out).await {
                            return format!("write failed (client gone?): {e}");
                        }
                    }
                    if let Some(why) = close {
                        return why;
                    }
                }
                // The slice is whole, so even "incomplete" means a malformed message.
                Err(e) => return format!("bad message: {e}"),
            }
        }
        if buf.len() + raw.len() > cfg.max_message_size {
            return format!(
                "message exceeds the maximum size of {} bytes",
                cfg.max_message_size
            );
        }
        if raw.capacity() - raw.len() < READ_CHUNK / 4 {
            raw.reserve(READ_CHUNK);
        }
        // A connection that holds no session gets the login timeout, counted once from when
        // it last held none (its start, or its last CloseSession), to open one; calls that
        // open nothing do not extend it. One with sessions gets the idle timeout per read.
        if opened.is_empty() {
            sessionless_since.get_or_insert_with(Instant::now);
        } else {
            sessionless_since = None;
        }
        let idle = match sessionless_since {
            Some(since) => cfg.handshake_timeout.saturating_sub(since.elapsed()),
            None => cfg.idle_timeout,
        };
        let read = tokio::select! {
            _ = shutdown.cancelled() => return "server shutting down".into(),
            r = tokio::time::timeout(idle, stream.read_buf(&mut raw)) => r,
        };
        match read {
            Err(_) if opened.is_empty() => {
                return format!(
                "no session opened within the login timeout ({} s); no session opened and silent",
                cfg.handshake_timeout.as_secs()
            )
            }
            Err(_) => return format!("idle for {} s", idle.as_secs()),
            Ok(Err(e)) => return format!("read failed: {e}"),
            Ok(Ok(0)) => {
                return if buf.is_empty() && raw.is_empty() {
                    "client closed the connection".into()
                } else {
                    "client closed the connection in the middle of a message (truncated frame)"
                        .into()
                };
            }
            Ok(Ok(_)) => {}
        }
    }
}

async fn write_message(
    stream: &mut Conn,
    mode: &Mode,
    bytes: &[u8],
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    match mode {
        Mode::Raw => {
            stream.write_all(bytes).await?;
            stream.flush().await
        }
        Mode::Sasl => {
            let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
            out.clear();
            out.extend_from_slice(&len.to_be_bytes());
            out.extend_from_slice(bytes);
            let r = match stream.write_all(out).await {
                Ok(()) => stream.flush().await,
                Err(e) => Err(e),
            };
            if out.capacity() > READ_CHUNK {
                *out = Vec::new();
            }
            r
        }
    }
}

async fn read_sasl_frame(stream: &mut Conn) -> Result<(u8, Vec<u8>), String> {
    let mut head = [0u8; 5];
    stream
        .read_exact(&mut head)
        .await
        .map_err(|e| format!("SASL handshake cut short: {e}"))?;
    let (status, len) = handshake_header(head);
    if len > MAX_HANDSHAKE_PAYLOAD {
        return Err(format!(
            "SASL frame of {len} bytes exceeds the handshake limit"
        ));
    }
    let mut payload = vec![0u8; len];
    stream
        .read_exact(&mut payload)
        .await
        .map_err(|e| format!("SASL handshake cut short: {e}"))?;
    Ok((status, payload))
}

async fn send_sasl(stream: &mut Conn, status: u8, payload: &[u8]) {
    if stream
        .write_all(&handshake_frame(status, payload))
        .await
        .is_ok()
    {
        let _ = stream.flush().await;
    }
}

/// Runs the server side of a SASL handshake (PLAIN, or GSSAPI when Kerberos is on); returns
/// the authenticated user.
async fn sasl_handshake(
    stream: &mut Conn,
    gw: &Gateway,
    kerberos: Option<&KerberosAcceptor>,
    peer: SocketAddr,
) -> Result<String, String> {
    let (status, mech) = read_sasl_frame(stream).await?;
    if status != SASL_START {
        send_sasl(stream, SASL_ERROR, b"Expected START status").await;
        return Err(format!("SASL: expected START, got status {status}"));
    }
    let mech = String::from_utf8_lossy(&mech).to_string();
    // PLAIN carries a password (NONE or a password mode; refused by the gateway under JWT
    // alone); GSSAPI a Kerberos ticket. With Kerberos and no password mode, only GSSAPI is
    // offered, as Hive's KERBEROS mode does.
    let offered = if mech.eq_ignore_ascii_case("PLAIN") {
        kerberos.is_none() || gw.takes_passwords()
    } else {
        mech.eq_ignore_ascii_case("GSSAPI") && kerberos.is_some()
    };
    if !offered {
        let msg = format!("Unsupported mechanism type {mech}");
        send_sasl(stream, SASL_BAD, msg.as_bytes()).await;
        return Err(format!("SASL: {msg}"));
    }
    if let Some(acceptor) = kerberos.filter(|_| mech.eq_ignore_ascii_case("GSSAPI")) {
        return gssapi_handshake(stream, acceptor, gw, peer).await;
    }
    let (status, response) = read_sasl_frame(stream).await?;
    if status != SASL_OK && status != SASL_COMPLETE {
        send_sasl(stream, SASL_ERROR, b"Expected OK or COMPLETE status").await;
        return Err(format!(
            "SASL: expected the PLAIN response, got status {status}"
        ));
    }
    let Some(plain) = parse_plain(&response) else {
        send_sasl(
            stream,
            SASL_ERROR,
            b"Invalid PLAIN message: expected authzid NUL user NUL password",
        )
        .await;
        return Err("SASL: malformed PLAIN response".into());
    };
    let user = String::from_utf8_lossy(plain.user).to_string();
    if gw.requires_login() {
        let password = String::from_utf8_lossy(plain.password);
        if let Err(e) = gw.authenticate(Some(peer.ip()), &user, &password).await {
            send_sasl(stream, SASL_BAD, e.to_string().as_bytes()).await;
            return Err(format!("SASL: login of {user:?} refused"));
        }
    }
    if user.is_empty() {
        send_sasl(
            stream,
            SASL_BAD,
            b"Error validating the login: no user name",
        )
        .await;
        return Err("SASL: empty user name".into());
    }
    // Authenticated, or authentication NONE, where any user and password are accepted.
    send_sasl(stream, SASL_COMPLETE, b"").await;
    Ok(user)
}

/// Reads the client's next SASL response during a handshake (status OK or COMPLETE).
async fn read_sasl_response(stream: &mut Conn) -> Result<Vec<u8>, String> {
    let (status, payload) = read_sasl_frame(stream).await?;
    if status != SASL_OK && status != SASL_COMPLETE {
        send_sasl(stream, SASL_ERROR, b"Expected OK or COMPLETE status").await;
        return Err(format!("SASL: expected a response, got status {status}"));
    }
    Ok(payload)
}

/// SASL GSSAPI (RFC 4752), as Hive's KERBEROS mode runs it: the client's tokens until the
/// Kerberos context is established, then the security-layer exchange (only "no security
/// layer", Hive's default QOP `auth`, is offered), sealed with the context's keys. Returns the
/// user the client's principal maps to.
async fn gssapi_handshake(
    stream: &mut Conn,
    acceptor: &KerberosAcceptor,
    gw: &Gateway,
    peer: SocketAddr,
) -> Result<String, String> {
    /// The security-layer offer: bit 0 "none" only, and no receive buffer (RFC 4752 §3.3).
    const NO_SECURITY_LAYER: [u8; 4] = [0x01, 0, 0, 0];
    let mut exchange = acceptor.start();
    let address = Some(peer.ip());
    // The client's initial response carries its first token.
    loop {
        let token = read_sasl_response(stream).await?;
        let reply = match exchange.step_blocking(token).await {
            Ok((next, reply)) => {
                exchange = next;
                reply
            }
            Err(e) => {
                let _ = gw.ticket_login(address, Err(e));
                // Hive's (Java's SASL server's) words for a refused ticket.
                send_sasl(stream, SASL_BAD, b"GSS initiate failed").await;
                return Err("SASL GSSAPI: ticket refused".into());
            }
        };
        if !exchange.is_complete() {
            send_sasl(stream, SASL_OK, &reply.unwrap_or_default()).await;
            continue;
        }
        // The last token (mutual authentication) goes out; the client answers it with an
        // empty response before the security layer is negotiated.
        if let Some(reply) = reply {
            send_sasl(stream, SASL_OK, &reply).await;
            read_sasl_response(stream).await?;
        }
        break;
    }
    let refuse = |e: apiary_auth::AuthError| e.to_string();
    let login = match exchange.login() {
        Ok(login) => login,
        Err(e) => {
            let msg = e.to_string();
            let _ = gw.ticket_login(address, Err(e));
            send_sasl(stream, SASL_BAD, msg.as_bytes()).await;
            return Err("SASL GSSAPI: client name refused".into());
        }
    };
    let offer = match exchange.wrap(&NO_SECURITY_LAYER) {
        Ok(offer) => offer,
        Err(e) => {
            let msg = refuse(e);
            let _ = gw.ticket_login(address, Err(apiary_auth::AuthError::Refused(msg.clone())));
            send_sasl(stream, SASL_BAD, b"GSS initiate failed").await;
            return Err(format!("SASL GSSAPI: {msg}"));
        }
    };
    send_sasl(stream, SASL_OK, &offer).await;
    let answer = read_sasl_response(stream).await?;
    let chosen = match exchange.unwrap(&answer) {
        Ok(chosen) if chosen.len() >= 4 => chosen,
        _ => {
            send_sasl(
                stream,
                SASL_BAD,
                b"Error validating the login: bad security layer answer",
            )
            .await;
            return Err("SASL GSSAPI: unreadable security-layer answer".into());
        }
    };
    if chosen[0] & NO_SECURITY_LAYER[0] == 0 {
        send_sasl(
            stream,
            SASL_BAD,
            b"Only the auth QOP (no security layer) is supported (hive.server2.thrift.sasl.qop=auth)",
        )
        .await;
        return Err("SASL GSSAPI: client asked for a security layer".into());
    }
    // The authorization identity, when given, must be the client itself (as Hive's callback
    // has it): acting as another user is impersonation's business.
    let authzid = String::from_utf8_lossy(&chosen[4..]).to_string();
    if !authzid.is_empty() && authzid != login.principal && authzid != login.user {
        let msg = format!(
            "Error validating the login: {} may not act as {authzid}",
            login.principal
        );
        let _ = gw.ticket_login(address, Err(apiary_auth::AuthError::Refused(msg.clone())));
        send_sasl(stream, SASL_BAD, msg.as_bytes()).await;
        return Err("SASL GSSAPI: authorization identity refused".into());
    }
    let user = gw
        .ticket_login(address, Ok(login))
        .map_err(|e| e.to_string())?;
    send_sasl(stream, SASL_COMPLETE, b"").await;
    Ok(user)
}
