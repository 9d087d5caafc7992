//! A bench run's stop request: set by the first Ctrl-C, SIGTERM or SIGHUP, read by every
//! workload loop before it starts another request or cycle, so the phase in flight ends within
//! one call and its queues are still deleted.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Shared by the command and every connection or client of a run.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    /// Asks every loop to stop at its next iteration.
    pub fn request(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether a stop was asked for.
    pub fn requested(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}
