//! The embedded emulator as a raw target: served on its own runtime and threads
//! ([`ServerThread`]), as a separate `sqsprobe serve` process would be.

use super::server_thread::ServerThread;
use sqsprobe_emulator::{EmulatorConfig, serve};

/// A running emulator; dropping it stops the server and joins its thread.
pub(crate) struct EmbeddedServer(ServerThread);

impl EmbeddedServer {
    /// Binds 127.0.0.1 on an ephemeral port and serves with as many worker threads as
    /// `sqsprobe serve` would have (one per CPU), on the CPUs `pin` names when given.
    pub(crate) fn start(pin: Option<&[usize]>) -> std::io::Result<Self> {
        ServerThread::start("emulator", pin, |listener, mut stop| async move {
            let _ = serve(listener, EmulatorConfig::default(), async move {
                let _ = stop.wait_for(|s| *s).await;
            })
            .await;
        })
        .map(Self)
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn endpoint_url(&self) -> String {
        self.0.endpoint_url()
    }
}
