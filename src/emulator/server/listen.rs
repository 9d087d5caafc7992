//! Accepting connections and shutting down.
//!
//! Shaped like mini-redis's `server::run`: a library function serving a listener until a
//! shutdown future resolves.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};

use super::request::handle;
use crate::emulator::model::store::Emulator;
use crate::emulator::support::config::EmulatorConfig;

/// Serves SQS on `listener` until `shutdown` resolves; then stops accepting, closes open
/// connections and returns.
pub async fn serve(
    listener: TcpListener,
    config: EmulatorConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let local = listener.local_addr()?;
    let emu = Arc::new(Emulator::new(config));
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => {
                let (stream, _) = match accepted {
                    Ok(pair) => pair,
                    // Transient accept errors (EMFILE, aborted handshakes) must not stop the server.
                    Err(_) => {
                        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let emu = Arc::clone(&emu);
                connections.spawn(async move {
                    let service = service_fn(move |req| {
                        let emu = Arc::clone(&emu);
                        async move { Ok::<_, Infallible>(handle(emu, req, local).await) }
                    });
                    let _ = http1::Builder::new()
                        .keep_alive(true)
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    connections.shutdown().await;
    Ok(())
}

/// An emulator running on a background task.
#[derive(Debug)]
pub struct RunningEmulator {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl RunningEmulator {
    /// `http://127.0.0.1:PORT`, ready for an SDK's `endpoint_url`.
    pub fn endpoint_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the emulator and waits for it to finish.
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
    let task = tokio::spawn(serve(listener, config, async move {
        let _ = rx.await;
    }));
    Ok(RunningEmulator {
        addr,
        shutdown: Some(tx),
        task,
    })
}
