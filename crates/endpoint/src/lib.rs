//! HiveServer2 endpoints: the binary TCP transport (SASL PLAIN and NOSASL on one port) and the
//! HTTP transport, both mapping TCLIService RPCs onto the gateway.

#![warn(missing_docs)]

mod accept;
pub mod binary;
mod config;
pub mod http;
pub mod info;
pub mod results;
pub mod service;

use std::net::SocketAddr;
use std::sync::Arc;

use apiary_gateway::Gateway;
pub use config::{AuthMode, EndpointConfig, HttpCookie, TransportMode};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

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

async fn bind(host: &str, port: u16) -> Result<TcpListener, EndpointError> {
    let addr = format!("{host}:{port}");
    TcpListener::bind(&addr)
        .await
        .map_err(|source| EndpointError::Bind { addr, source })
}
