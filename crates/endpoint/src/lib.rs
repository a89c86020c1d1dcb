//! HiveServer2 endpoints: the binary TCP transport (SASL PLAIN and NOSASL on one port) and the
//! HTTP transport, both mapping TCLIService RPCs onto the gateway.

#![warn(missing_docs)]

pub mod binary;
pub mod http;
pub mod info;
pub mod results;
pub mod service;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use apiary_gateway::Gateway;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How clients authenticate (`hive.server2.authentication`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMode {
    /// SASL PLAIN accepting any user (NOSASL clients are served on the same port too).
    None,
    /// Raw Thrift without SASL only.
    NoSasl,
    /// A checked mode (LDAP, JWT, KERBEROS, or a comma list of them): SASL PLAIN with a
    /// password mode, SASL GSSAPI with Kerberos; NOSASL clients are refused, and every HTTP
    /// request carries Basic credentials, a bearer token, a `Negotiate` token or a login
    /// cookie.
    Password,
}

/// Hive's HTTP login cookie (`hive.server2.thrift.http.cookie.*`).
#[derive(Debug, Clone)]
pub struct HttpCookie {
    /// Issues and checks the cookie's signed value.
    pub signer: Arc<apiary_auth::CookieSigner>,
    /// `Domain` attribute (`...cookie.domain`), if set.
    pub domain: Option<String>,
    /// `Path` attribute (`...cookie.path`), if set.
    pub path: Option<String>,
    /// `HttpOnly` attribute (`...cookie.is.httponly`).
    pub http_only: bool,
}

/// Which transports run (`hive.server2.transport.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportMode {
    /// Binary TCP only.
    Binary,
    /// HTTP only.
    Http,
    /// Both.
    All,
}

/// Settings of the endpoints.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// Address to bind.
    pub bind: String,
    /// Binary port (0 picks a free one).
    pub binary_port: u16,
    /// HTTP port (0 picks a free one).
    pub http_port: u16,
    /// HTTP path of the service, without slashes.
    pub http_path: String,
    /// Which transports run.
    pub transport: TransportMode,
    /// Authentication.
    pub auth: AuthMode,
    /// Largest Thrift message accepted, in bytes.
    pub max_message_size: usize,
    /// Most connections served at once, per transport.
    pub max_connections: usize,
    /// Time allowed for a client's first bytes and SASL handshake.
    pub handshake_timeout: Duration,
    /// A connection with no request for this long is closed.
    pub idle_timeout: Duration,
    /// Time given to open connections to finish at shutdown.
    pub shutdown_grace: Duration,
    /// TLS on both transports (`hive.server2.use.SSL`), or plain sockets.
    pub tls: Option<apiary_tls::ServerTls>,
    /// The HTTP login cookie, when cookies are on and logins are checked.
    pub cookie: Option<HttpCookie>,
    /// Hive's KERBEROS mode on the binary port: the server's identity for SASL GSSAPI
    /// (`hive.server2.authentication.kerberos.*`).
    pub kerberos: Option<Arc<apiary_auth::KerberosAcceptor>>,
    /// Hive's KERBEROS mode over HTTP: the identity for SPNEGO `Negotiate`
    /// (`hive.server2.authentication.spnego.*`).
    pub spnego: Option<Arc<apiary_auth::KerberosAcceptor>>,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        Self {
            bind: "127.0.0.1".into(),
            binary_port: 10000,
            http_port: 10001,
            http_path: "cliservice".into(),
            transport: TransportMode::All,
            auth: AuthMode::None,
            max_message_size: 104_857_600,
            max_connections: 500,
            handshake_timeout: Duration::from_secs(20),
            idle_timeout: Duration::from_secs(3600),
            shutdown_grace: Duration::from_secs(5),
            tls: None,
            cookie: None,
            kerberos: None,
            spnego: None,
        }
    }
}

/// Running endpoints.
#[derive(Debug)]
pub struct Endpoints {
    /// Bound address of the binary transport.
    pub binary_addr: Option<SocketAddr>,
    /// Bound address of the HTTP transport.
    pub http_addr: Option<SocketAddr>,
    tasks: Vec<JoinHandle<()>>,
    shutdown: CancellationToken,
}

/// Error starting an endpoint.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// A password mode without a password check on the gateway: serving would let anyone in.
    #[error(
        "authentication is a password mode but the gateway has no authenticator; refusing to serve"
    )]
    NoAuthenticator,
}

impl Endpoints {
    /// Binds and starts the configured transports.
    pub async fn start(
        gateway: Arc<Gateway>,
        config: EndpointConfig,
    ) -> Result<Self, EndpointError> {
        // Fail closed: a password mode must have a check behind it.
        if config.auth == AuthMode::Password && !gateway.requires_login() {
            return Err(EndpointError::NoAuthenticator);
        }
        let config = Arc::new(config);
        let shutdown = CancellationToken::new();
        let mut out = Endpoints {
            binary_addr: None,
            http_addr: None,
            tasks: Vec::new(),
            shutdown: shutdown.clone(),
        };
        if matches!(config.transport, TransportMode::Binary | TransportMode::All) {
            let l = bind(&config.bind, config.binary_port).await?;
            out.binary_addr = l.local_addr().ok();
            out.tasks.push(tokio::spawn(binary::serve(
                l,
                gateway.clone(),
                config.clone(),
                shutdown.clone(),
            )));
        }
        if matches!(config.transport, TransportMode::Http | TransportMode::All) {
            let l = bind(&config.bind, config.http_port).await?;
            out.http_addr = l.local_addr().ok();
            out.tasks.push(tokio::spawn(http::serve(
                l,
                gateway.clone(),
                config.clone(),
                shutdown.clone(),
            )));
        }
        Ok(out)
    }

    /// Stops accepting, lets open connections finish (bounded by the grace period) and waits.
    pub async fn shutdown(self) {
        self.shutdown.cancel();
        for t in self.tasks {
            let _ = t.await;
        }
    }
}

/// The accept loop every listener runs: accepts until `shutdown`, gives each connection a
/// slot (at most `max_connections` at once; at the limit a new client waits up to twice the
/// login timeout, since connections holding no session are closed after one), and serves it
/// with `serve` in its own task, after its TLS handshake when TLS is on (bounded by the login
/// timeout: a plain client on a TLS port is closed at once, a silent one after the timeout;
/// `serve` gets the time of the accept, so one login window covers handshake and login);
/// at shutdown it waits for open connections up to the grace period.
pub(crate) async fn accept_loop<F, Fut>(
    transport: &'static str,
    listener: TcpListener,
    config: Arc<EndpointConfig>,
    shutdown: CancellationToken,
    serve: F,
) where
    F: Fn(apiary_tls::Stream, SocketAddr, tokio::time::Instant) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let limit = Arc::new(Semaphore::new(config.max_connections));
    let tls = config.tls.as_ref().map(|t| t.acceptor(&[]));
    let serve = Arc::new(serve);
    let tasks = tokio_util::task::TaskTracker::new();
    loop {
        let accepted = tokio::select! {
            _ = shutdown.cancelled() => break,
            a = listener.accept() => a,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                tracing::warn!(transport, error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Some(permit) = wait_for_slot(&limit, &config, &shutdown).await else {
            tracing::warn!(transport, %peer, limit = config.max_connections, "closing connection: no connection slot freed within the login timeout");
            continue;
        };
        let _ = stream.set_nodelay(true);
        let (tls, serve, timeout) = (tls.clone(), serve.clone(), config.handshake_timeout);
        let accepted_at = tokio::time::Instant::now();
        tasks.spawn(async move {
            match apiary_tls::accept(tls.as_ref(), stream, timeout).await {
                Ok(stream) => serve(stream, peer, accepted_at).await,
                Err(reason) => tracing::info!(transport, %peer, %reason, "connection closed"),
            }
            drop(permit);
        });
    }
    tasks.close();
    let _ = tokio::time::timeout(config.shutdown_grace, tasks.wait()).await;
}

/// A connection slot, waiting up to twice the login timeout for one when all are taken.
async fn wait_for_slot(
    limit: &Arc<Semaphore>,
    config: &EndpointConfig,
    shutdown: &CancellationToken,
) -> Option<tokio::sync::OwnedSemaphorePermit> {
    if let Ok(p) = limit.clone().try_acquire_owned() {
        return Some(p);
    }
    tokio::select! {
        _ = shutdown.cancelled() => None,
        r = tokio::time::timeout(config.handshake_timeout * 2, limit.clone().acquire_owned()) => r.ok()?.ok(),
    }
}

async fn bind(host: &str, port: u16) -> Result<TcpListener, EndpointError> {
    let addr = format!("{host}:{port}");
    TcpListener::bind(&addr)
        .await
        .map_err(|source| EndpointError::Bind { addr, source })
}
