//! Apiary's Arrow Flight SQL endpoint: a second front end on the same gateway as
//! HiveServer2, so both share sessions, the metastore, the storage handlers, configuration
//! (`SET`, `USE`), operation logs, limits and cancellation.
//!
//! A client authenticates with the Flight handshake (HTTP Basic user name and password, as
//! HiveServer2's SASL PLAIN carries them) and gets `authorization: Bearer <token>` back; the
//! token names the session it opened and must come with every later call. Queries are
//! operations of that session: GetFlightInfo compiles the statement and starts it, returning
//! at once with the schema and a ticket naming the operation; DoGet streams its batches as
//! the client reads (the operation's two-batch buffer and the session's result budget bound
//! the memory, as for HiveServer2). A statement without a result set (DDL, INSERT, SET)
//! runs to its end inside GetFlightInfo or CommandStatementUpdate, so its error is the
//! call's error.
//!
//! Errors are [`FlightSqlError`]s, and become gRPC statuses in one place: each status carries
//! the SQLSTATE and Hive error code HiveServer2 gives the same failure, in its metadata keys
//! [`SQLSTATE_KEY`] (`x-hive-sqlstate`) and [`ERROR_CODE_KEY`] (`x-hive-error-code`).

#![warn(missing_docs)]

mod conn;
mod error;
mod params;
mod service;
mod types;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use apiary_gateway::Gateway;
use arrow_flight::flight_service_server::FlightServiceServer;
pub use error::{FlightSqlError, ERROR_CODE_KEY, SQLSTATE_KEY};
pub use service::ApiaryFlightSql;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Settings of the Flight SQL endpoint.
#[derive(Debug, Clone)]
pub struct FlightSqlConfig {
    /// Address to bind.
    pub bind: String,
    /// Port (`apiary.flightsql.port`; 0 picks a free one).
    pub port: u16,
    /// Largest message accepted or sent, in bytes (`hive.server2.thrift.max.message.size`).
    pub max_message_size: usize,
    /// Time given to open streams to finish at shutdown.
    pub shutdown_grace: Duration,
    /// Most connections open at once (`hive.server2.thrift.max.worker.threads`, as for each
    /// HiveServer2 transport); more are closed at accept.
    pub max_connections: usize,
    /// Time a new connection has to send its first bytes (`hive.server2.thrift.login.timeout`).
    pub login_timeout: Duration,
    /// A connection from which nothing arrives for this long is closed
    /// (`apiary.connection.idle.timeout`); the server's HTTP/2 pings keep a live client's
    /// connection open, and a client whose connection closed reconnects with its token.
    pub idle_timeout: Duration,
    /// TLS on the port (`hive.server2.use.SSL`), offering ALPN `h2` as gRPC clients expect.
    pub tls: Option<apiary_tls::ServerTls>,
}

impl Default for FlightSqlConfig {
    fn default() -> Self {
        Self {
            bind: "127.0.0.1".into(),
            port: 10003,
            max_message_size: 104_857_600,
            shutdown_grace: Duration::from_secs(5),
            max_connections: 500,
            login_timeout: Duration::from_secs(20),
            idle_timeout: Duration::from_secs(3600),
            tls: None,
        }
    }
}

/// Error starting the endpoint.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
}

/// The running endpoint.
#[derive(Debug)]
pub struct FlightSqlEndpoint {
    /// The bound address.
    pub addr: SocketAddr,
    task: JoinHandle<()>,
    shutdown: CancellationToken,
    grace: Duration,
}

impl FlightSqlEndpoint {
    /// Binds and starts serving.
    pub async fn start(gateway: Arc<Gateway>, config: FlightSqlConfig) -> Result<Self, StartError> {
        let addr = format!("{}:{}", config.bind, config.port);
        let listener = TcpListener::bind(&addr)
            .await
            .map_err(|source| StartError::Bind {
                addr: addr.clone(),
                source,
            })?;
        let bound = listener
            .local_addr()
            .map_err(|source| StartError::Bind { addr, source })?;
        let service = FlightServiceServer::new(ApiaryFlightSql::new(gateway))
            .max_decoding_message_size(config.max_message_size)
            .max_encoding_message_size(config.max_message_size);
        let shutdown = CancellationToken::new();
        let stop = shutdown.clone();
        let incoming = conn::incoming(
            listener,
            config.max_connections,
            config.login_timeout,
            config.idle_timeout,
            config.tls.as_ref().map(|t| t.acceptor(&[b"h2"])),
        );
        // Pings well inside the idle timeout: a live client's answers are the traffic that
        // keeps its connection; one that does not answer is closed by the ping timeout.
        let ping = (config.idle_timeout / 3).clamp(Duration::from_secs(1), Duration::from_secs(60));
        let task = tokio::spawn(async move {
            let served = tonic::transport::Server::builder()
                .http2_keepalive_interval(Some(ping))
                .http2_keepalive_timeout(Some(Duration::from_secs(20)))
                .add_service(service)
                .serve_with_incoming_shutdown(incoming, stop.cancelled_owned())
                .await;
            if let Err(e) = served {
                tracing::error!(error = %e, "the Flight SQL endpoint stopped");
            }
        });
        Ok(Self {
            addr: bound,
            task,
            shutdown,
            grace: config.shutdown_grace,
        })
    }

    /// Stops accepting and waits for open calls (bounded by the grace period).
    pub async fn shutdown(self) {
        self.shutdown.cancel();
        let mut task = self.task;
        if tokio::time::timeout(self.grace, &mut task).await.is_err() {
            task.abort();
        }
    }
}
