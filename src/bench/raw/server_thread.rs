//! A server the raw driver starts for itself (the embedded emulator, the reference server), on
//! a runtime and thread of its own with one worker per CPU, so the load generator and the
//! server share the machine the way a client and a separate process do, not one scheduler.

use std::future::Future;
use std::net::SocketAddr;
use std::thread::JoinHandle;

use tokio::sync::watch;

use super::cpu::SERVER_THREAD_PREFIX;
use super::pin::pin_this_thread;

/// A running server; dropping it tells the server to stop and joins its thread.
pub(crate) struct ServerThread {
    addr: SocketAddr,
    stop: Option<watch::Sender<bool>>,
    thread: Option<JoinHandle<()>>,
}

impl ServerThread {
    /// Binds 127.0.0.1 on an ephemeral port and runs `serve(listener, stop)` on a new
    /// multi-threaded runtime in threads named [`SERVER_THREAD_PREFIX`] + `role` (so their
    /// CPU is told from the client's), each pinned to `pin` when given; `stop` turns true when
    /// this is dropped.
    pub(crate) fn start<F, Fut>(
        role: &str,
        pin: Option<&[usize]>,
        serve: F,
    ) -> std::io::Result<Self>
    where
        F: FnOnce(tokio::net::TcpListener, watch::Receiver<bool>) -> Fut + Send + 'static,
        Fut: Future<Output = ()>,
    {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let name = format!("{SERVER_THREAD_PREFIX}{role}");
        let pin: Option<Vec<usize>> = pin.map(<[usize]>::to_vec);
        let pin_here = pin.clone();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name(&name)
            .on_thread_start(move || {
                if let Some(cpus) = &pin {
                    // A CPU the process may use: setting it does not fail but for a CPU
                    // taken offline meanwhile, and then the thread runs where it may.
                    let _ = pin_this_thread(cpus);
                }
            })
            .build()?;
        let (stop, stopped) = watch::channel(false);
        let thread = std::thread::Builder::new().name(name).spawn(move || {
            if let Some(cpus) = &pin_here {
                let _ = pin_this_thread(cpus);
            }
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
    pub(crate) fn endpoint_url(&self) -> String {
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
