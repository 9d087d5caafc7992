//! A server the raw driver starts for itself (the embedded emulator, the reference server), on
//! a runtime and thread of its own with one worker per CPU, so the load generator and the
//! server share the machine the way a client and a separate process do, not one scheduler.

use std::future::Future;
use std::net::SocketAddr;
use std::thread::JoinHandle;

use tokio::sync::watch;

/// A running server; dropping it tells the server to stop and joins its thread.
pub struct ServerThread {
    addr: SocketAddr,
    stop: Option<watch::Sender<bool>>,
    thread: Option<JoinHandle<()>>,
}

impl ServerThread {
    /// Binds 127.0.0.1 on an ephemeral port and runs `serve(listener, stop)` on a new
    /// multi-threaded runtime in a thread named `name`; `stop` turns true when this is dropped.
    pub fn start<F, Fut>(name: &str, serve: F) -> std::io::Result<Self>
    where
        F: FnOnce(tokio::net::TcpListener, watch::Receiver<bool>) -> Fut + Send + 'static,
        Fut: Future<Output = ()>,
    {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name(name)
            .build()?;
        let (stop, stopped) = watch::channel(false);
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    serve(listener, stopped).await;
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

impl Drop for ServerThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
