//! The embedded emulator as a raw target: served on its own runtime and threads, so the load
//! generator and the server share the machine the way a client and a separate `sqsprobe
//! serve` process do, not one scheduler.

use std::net::SocketAddr;
use std::thread::JoinHandle;

use tokio::sync::oneshot;

use crate::emulator::{EmulatorConfig, serve};

/// A running emulator; dropping it stops the server and joins its thread.
pub struct EmbeddedServer {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl EmbeddedServer {
    /// Binds 127.0.0.1 on an ephemeral port and serves with as many worker threads as
    /// `sqsprobe serve` would have (one per CPU).
    pub fn start() -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("sqsprobe-bench-emulator")
            .build()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("sqsprobe-bench-emulator".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    let _ = serve(listener, EmulatorConfig::default(), async move {
                        let _ = stopped.await;
                    })
                    .await;
                });
            })?;
        Ok(Self {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for EmbeddedServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
