//! The accept loop shared by the binary and HTTP transports: connection slots, TLS
//! handshake, graceful shutdown.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::config::EndpointConfig;

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
