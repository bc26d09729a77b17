//! The listener: slow and idle clients bounded (issue 39). Every connection
//! must send a request's headers within [`HEADER_READ`], and a kept-alive
//! one must start its next request within the same time; open connections
//! are capped below the open-file limit, and one past the cap is closed at
//! once, so a thousand idle or trickling sockets from one client cannot
//! take every file the process may open and leave `/healthz` unanswered.
//!
//! Hand-written over hyper rather than `axum::serve`, which sets neither a
//! header timeout (hyper's needs a timer) nor a cap. HTTP/1 only: browsers
//! never speak cleartext HTTP/2, and an HTTP/2 connection has no header
//! timer, so it would be a way around both bounds.

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::sync::Arc;
use std::time::Duration;
use streamkeeper::platform::connections;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// How long a client may take to send a request's headers; hyper starts
/// the same timer while a kept-alive connection waits for its next request,
/// so this is the idle keep-alive timeout too. A browser sends its headers
/// in one packet; a proxy keeps its upstream connections busy or reopens.
pub const HEADER_READ: Duration = Duration::from_secs(5);
/// How often a full listener says so in the log, at most.
const FULL_WARNING: Duration = Duration::from_secs(10);

/// The open-file limit this process runs with, and the cap on connections
/// it leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    pub soft_limit: u64,
    pub connections: usize,
}

impl Capacity {
    /// The cap under a soft open-file limit (`platform::connections`).
    pub fn under(soft_limit: u64) -> Self {
        Self {
            soft_limit,
            connections: usize::try_from(connections::cap(soft_limit))
                .unwrap_or(usize::MAX)
                .min(Semaphore::MAX_PERMITS),
        }
    }

    /// This process's: the soft limit raised to the hard one first (what
    /// systemd asks of a program that needs many files; its default soft
    /// limit is 1,024 under a hard one of 524,288), with a warning naming
    /// the limit when it stays low.
    pub fn of_this_process() -> Self {
        // Raising may be refused (a seccomp filter, say): the limit as it is.
        let soft = rlimit::increase_nofile_limit(u64::MAX)
            .or_else(|_| rlimit::Resource::NOFILE.get_soft())
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "could not read the open-file limit; assuming 1024");
                1024
            });
        if connections::is_low(soft) {
            tracing::warn!(
                limit = soft,
                "the open-file limit (RLIMIT_NOFILE) is {soft}: connections are capped at {} \
                 and clients past it are turned away; raise it (LimitNOFILE=65536 in the \
                 systemd unit, ulimit -n elsewhere)",
                Self::under(soft).connections
            );
        }
        Self::under(soft)
    }
}

/// How many connections the kernel may hold for us before we accept them.
/// tokio's `TcpListener::bind` asks for 1,024: in a burst larger than that
/// (the 1,100 sockets of issue 39) the rest wait half-open until the kernel
/// retransmits its SYN-ACK, seconds later, and only then does their header
/// timer start. 4,096 is Linux's default cap (`net.core.somaxconn`).
const BACKLOG: u32 = 4096;

/// Binds the console's address with [`BACKLOG`] (and `SO_REUSEADDR`, as
/// `TcpListener::bind` sets it, so a restart does not wait out TIME_WAIT).
pub fn bind(addr: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// Serves `app` on `listener` until `stop` is cancelled, then lets open
/// requests finish (the caller bounds how long).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    capacity: Capacity,
    stop: CancellationToken,
) {
    let slots = Arc::new(Semaphore::new(capacity.connections));
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ);
    let mut warned: Option<Instant> = None;
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of files or memory, or a connection reset before
                    // it was taken: a moment's pause, not a spin.
                    tracing::warn!(error = %e, "could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stop.cancelled() => break,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            // Closed at once (dropped), not queued: the client sees it and
            // may try again, and nothing waits for a file.
            if warned.is_none_or(|at| at.elapsed() >= FULL_WARNING) {
                warned = Some(Instant::now());
                tracing::warn!(
                    cap = capacity.connections,
                    "open connections at the cap; new ones are closed until some end"
                );
            }
            continue;
        };
        // Small answers are sent as soon as written.
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let service = tower::service_fn(move |mut req: axum::http::Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            app.clone().oneshot(req)
        });
        let conn = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            // A client that went away or was too slow: nothing to report.
            let _ = conn.await;
            drop(slot);
        });
    }
    drop(listener);
    graceful.shutdown().await;
}
