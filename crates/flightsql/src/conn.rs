//! The Flight SQL port's connections: at most a configured number open at once (a client
//! past the cap is refused at accept, and the server goes on serving the others). A new
//! connection must send its first bytes within the login timeout, and a connection from
//! which nothing arrives for the idle timeout is closed. The server pings every connection
//! (HTTP/2 PING) more often than that, so a live client, even one waiting on a long call,
//! always answers in time; a silent socket or a vanished peer loses its slot. A gRPC client
//! whose connection was closed connects again by itself, and its bearer token still names
//! its session. With TLS, each connection's handshake runs in its own task under the login
//! timeout, so a stalled or plain-text client holds up no one else.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};
use tonic::transport::server::{Connected, TcpConnectInfo};

/// An accepted connection holding one of the port's slots until it closes.
pub(crate) struct Conn {
    stream: apiary_tls::Stream,
    info: TcpConnectInfo,
    idle: Duration,
    /// Until the first bytes: the login timeout; then the idle timeout after the last read.
    deadline: Pin<Box<Sleep>>,
    _slot: OwnedSemaphorePermit,
}

impl Conn {
    /// Notes bytes from the client: the idle clock starts again.
    fn active(&mut self) {
        self.deadline.as_mut().reset(Instant::now() + self.idle);
    }

    /// `Err(TimedOut)` once the connection has been idle too long.
    fn expired(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "nothing from the client within the login or idle timeout",
            )),
            Poll::Pending => Ok(()),
        }
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.stream).poll_read(cx, buf) {
            Poll::Ready(r) => {
                if buf.filled().len() > before {
                    self.active();
                }
                Poll::Ready(r)
            }
            Poll::Pending => match self.expired(cx) {
                Ok(()) => Poll::Pending,
                Err(e) => Poll::Ready(Err(e)),
            },
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

impl Connected for Conn {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.info.clone()
    }
}

/// The port's accepted connections, each with a slot, after its TLS handshake when `tls` is
/// set; past `max` open ones a new connection is closed at once. Accepting stops when the
/// stream is dropped (the server shutting down).
pub(crate) fn incoming(
    listener: TcpListener,
    max: usize,
    login: Duration,
    idle: Duration,
    tls: Option<apiary_tls::TlsAcceptor>,
) -> impl Stream<Item = io::Result<Conn>> + Send + 'static {
    let slots = Arc::new(Semaphore::new(max.max(1)));
    let (ready, arrivals) = tokio::sync::mpsc::channel::<Conn>(64);
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                _ = ready.closed() => break,
                a = listener.accept() => a,
            };
            let (stream, peer) = match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors and the like: wait a moment rather than spin.
                    tracing::warn!(error = %e, "Flight SQL accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                tracing::warn!(%peer, max, "Flight SQL connection refused: the port's connection limit (hive.server2.thrift.max.worker.threads) is reached");
                drop(stream);
                continue;
            };
            if let Err(e) = stream.set_nodelay(true) {
                tracing::debug!(error = %e, "cannot set TCP_NODELAY");
            }
            let info = TcpConnectInfo {
                local_addr: stream.local_addr().ok(),
                remote_addr: Some(peer),
            };
            let (ready, tls) = (ready.clone(), tls.clone());
            tokio::spawn(async move {
                let stream = match apiary_tls::accept(tls.as_ref(), stream, login).await {
                    Ok(s) => s,
                    Err(reason) => {
                        tracing::info!(%peer, %reason, "Flight SQL connection closed");
                        return;
                    }
                };
                let conn = Conn {
                    stream,
                    info,
                    idle,
                    deadline: Box::pin(tokio::time::sleep(login)),
                    _slot: slot,
                };
                let _ = ready.send(conn).await;
            });
        }
    });
    futures::stream::unfold(arrivals, |mut arrivals| async move {
        arrivals.recv().await.map(|conn| (Ok(conn), arrivals))
    })
}
