//! Accepting connections and shutting down.
//!
//! Shaped like mini-redis's `server::run`: a library function serving a listener until a
//! shutdown future resolves. At most `max_connections` connections are served at once; at the
//! cap, the connection idle longest is closed to make room for a new one (`pool` states the
//! policy and its bounds). On shutdown the listener closes, long polls answer at once with what
//! they have, idle keep-alive connections close, and requests in flight get `shutdown_grace`
//! to finish before their connections are cut.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, oneshot, watch};
use tokio::task::{JoinHandle, JoinSet};

use super::conn::{Activity, TimedStream};
use super::pool::Pool;
use super::request::handle;
use crate::model::store::Emulator;
use crate::support::config::EmulatorConfig;

/// Serves SQS (and STS GetCallerIdentity) on `listener` until `shutdown` resolves; then stops
/// accepting, lets requests in flight finish within `config.shutdown_grace`, and returns.
pub async fn serve(
    listener: TcpListener,
    config: EmulatorConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    serve_emulator(listener, Arc::new(Emulator::new(config)), shutdown).await
}

async fn serve_emulator(
    listener: TcpListener,
    emu: Arc<Emulator>,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let local = listener.local_addr()?;
    let grace = emu.config.shutdown_grace;
    let slots = Arc::new(Semaphore::new(emu.config.max_connections.max(1)));
    let pool = Arc::new(Pool::default());
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Transient accept errors (EMFILE, aborted handshakes) must not stop the server.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let slot = match Arc::clone(&slots).try_acquire_owned() {
            Ok(slot) => slot,
            Err(_) => match pool
                .make_room(&slots, shutdown.as_mut(), &mut connections)
                .await
            {
                Some(slot) => slot,
                None => break,
            },
        };
        let (activity, member) = pool.join();
        let emu = Arc::clone(&emu);
        let stop = stop_rx.clone();
        connections.spawn(async move {
            serve_connection(emu, stream, local, activity, stop).await;
            // The slot first: a connection that has left the pool but still holds its slot
            // would leave the accept loop at the cap with one connection fewer to choose from.
            drop(slot);
            drop(member);
        });
    }
    drop(listener);
    emu.begin_stop();
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(grace, async {
        while connections.join_next().await.is_some() {}
    });
    if drained.await.is_err() {
        connections.shutdown().await;
    }
    Ok(())
}

/// Serves one connection until the client closes it, a time bound cuts it, the accept loop
/// needs its slot, or the server stops (in the last two cases the request in flight, if any,
/// is answered and the connection closes).
async fn serve_connection(
    emu: Arc<Emulator>,
    stream: TcpStream,
    local: SocketAddr,
    activity: Arc<Activity>,
    mut stop: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let read_timeout = emu.config.header_read_timeout;
    let stream = TimedStream::new(
        stream,
        Arc::clone(&activity),
        read_timeout,
        emu.config.idle_timeout,
    );
    let served = Arc::clone(&activity);
    let service = service_fn(move |req| {
        let emu = Arc::clone(&emu);
        let busy = served.begin();
        async move {
            let response = handle(emu, req, local, read_timeout).await;
            drop(busy);
            Ok::<_, Infallible>(response)
        }
    });
    let connection = http1::Builder::new()
        .keep_alive(true)
        .serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    let closing = async {
        tokio::select! {
            () = async {
                // The guard `wait_for` returns is not Send: drop it before the branch awaits.
                let _ = stop.wait_for(|stopping| *stopping).await;
            } => {}
            () = activity.evicted() => {}
        }
    };
    tokio::select! {
        _ = connection.as_mut() => {}
        () = closing => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}

/// An emulator running on a background task.
#[derive(Debug)]
pub struct RunningEmulator {
    addr: SocketAddr,
    emu: Arc<Emulator>,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

/// The running emulator's state, reachable without a socket: [`InProcess::answer`] answers one
/// HTTP request exactly as a connection would. Cheap to clone.
#[derive(Debug, Clone)]
pub struct InProcess {
    addr: SocketAddr,
    emu: Arc<Emulator>,
}

impl InProcess {
    /// The answer to `request` (its URI's authority, else its `Host` header, names the host
    /// queue URLs are built from, as for a request over the listener).
    pub async fn answer(
        &self,
        request: hyper::Request<bytes::Bytes>,
    ) -> hyper::Response<bytes::Bytes> {
        super::request::answer_whole(&self.emu, request, self.addr).await
    }
}

impl RunningEmulator {
    /// `http://127.0.0.1:PORT`, ready for an SDK's `endpoint_url`.
    pub fn endpoint_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The same emulator without the socket: for a client in this process whose waits must
    /// all be the emulator's own timers (`sqsprobe run --clock virtual`).
    pub fn in_process(&self) -> InProcess {
        InProcess {
            addr: self.addr,
            emu: Arc::clone(&self.emu),
        }
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The emulator's clock now, in epoch milliseconds: the axis of every lease it grants
    /// (for `sqsprobe audit`, which places its own acts on it).
    pub fn now_ms(&self) -> u64 {
        self.emu.now()
    }

    /// What queue `name` of the configured region still holds, read from the store itself
    /// (for `sqsprobe audit`, which must know per message what was never deleted): the
    /// MessageIds stored, and the (visible, in flight, delayed) counts. `None`: no such queue.
    pub fn holding(&self, name: &str) -> Option<(Vec<String>, (usize, usize, usize))> {
        let key = self.emu.arn(&self.emu.config.region, name);
        let state = self.emu.read();
        let queue = state.lock_queue(&key).ok()?;
        Some((queue.stored_message_ids(&self.emu.ids), queue.counts()))
    }

    /// Stops the emulator (as [`serve`] does on shutdown) and waits for it to finish.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = (&mut self.task).await;
    }
}

impl Drop for RunningEmulator {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Starts the emulator on a background task bound to `addr` (`127.0.0.1:0` for an ephemeral
/// port).
pub async fn spawn(addr: SocketAddr, config: EmulatorConfig) -> std::io::Result<RunningEmulator> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let (tx, rx) = oneshot::channel::<()>();
    let emu = Arc::new(Emulator::new(config));
    let task = tokio::spawn(serve_emulator(listener, Arc::clone(&emu), async move {
        let _ = rx.await;
    }));
    Ok(RunningEmulator {
        addr,
        emu,
        shutdown: Some(tx),
        task,
    })
}
