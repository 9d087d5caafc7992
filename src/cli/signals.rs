//! The signals that stop a command: Ctrl-C (SIGINT), SIGTERM (CI cancellation, `timeout`,
//! Kubernetes) and SIGHUP (a closed terminal). Every command treats the three alike: the first
//! asks for a clean stop, a second means "leave now".

use tokio::signal::unix::{Signal, SignalKind, signal};

/// A listener for SIGINT, SIGTERM and SIGHUP.
pub(super) struct Signals {
    int: Option<Signal>,
    term: Option<Signal>,
    hup: Option<Signal>,
}

impl Signals {
    /// Starts listening. A signal that cannot be listened for (never on Linux) is skipped
    /// rather than failing the command.
    pub(super) fn new() -> Signals {
        Signals {
            int: signal(SignalKind::interrupt()).ok(),
            term: signal(SignalKind::terminate()).ok(),
            hup: signal(SignalKind::hangup()).ok(),
        }
    }

    /// Waits for the next of the three and names it (`SIGTERM`).
    pub(super) async fn next(&mut self) -> &'static str {
        async fn recv(s: &mut Option<Signal>) {
            match s {
                Some(s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        }
        tokio::select! {
            _ = recv(&mut self.int) => "SIGINT",
            _ = recv(&mut self.term) => "SIGTERM",
            _ = recv(&mut self.hup) => "SIGHUP",
        }
    }
}

impl Default for Signals {
    fn default() -> Self {
        Signals::new()
    }
}
