//! A bench run's stop request: set by the first Ctrl-C, SIGTERM or SIGHUP, read by every
//! workload loop before it starts another request or cycle, so the phase in flight ends within
//! one call and its queues are still deleted.
//!
//! It also knows the processes the run started (the scale workloads' `sqsprobe serve`), so
//! the second signal, which leaves at once without unwinding, can kill them first.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Debug, Default)]
struct Inner {
    requested: AtomicBool,
    /// Ids of child processes the run started and has not yet reaped.
    children: Mutex<Vec<u32>>,
}

/// Shared by the command and every connection or client of a run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stop(Arc<Inner>);

impl Stop {
    /// Asks every loop to stop at its next iteration.
    pub(crate) fn request(&self) {
        self.0.requested.store(true, Ordering::SeqCst);
    }

    /// Whether a stop was asked for.
    pub(crate) fn requested(&self) -> bool {
        self.0.requested.load(Ordering::SeqCst)
    }

    /// Records a child process that [`Stop::kill_children`] must kill.
    pub(crate) fn adopt(&self, pid: u32) {
        self.children().push(pid);
    }

    /// Forgets a child, before its owner kills and reaps it (a reaped id may be reused).
    pub(crate) fn release(&self, pid: u32) {
        self.children().retain(|&p| p != pid);
    }

    /// SIGKILLs every adopted child still recorded: for the exit that does not unwind.
    pub(crate) fn kill_children(&self) {
        for pid in self.children().drain(..) {
            kill(pid);
        }
    }

    fn children(&self) -> std::sync::MutexGuard<'_, Vec<u32>> {
        // A poisoned list is still the list: a panic elsewhere must not leave a child behind.
        self.0
            .children
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(unix)]
fn kill(pid: u32) {
    use rustix::process::{Pid, Signal, kill_process};
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        let _ = kill_process(pid, Signal::KILL);
    }
}

#[cfg(not(unix))]
fn kill(_pid: u32) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_children_are_not_killed() {
        let stop = Stop::default();
        stop.adopt(1);
        stop.adopt(2);
        stop.release(1);
        stop.release(2);
        // Nothing recorded: killing sends no signal (pid 1 would be init).
        stop.kill_children();
        assert!(stop.children().is_empty());
        assert!(!stop.requested());
        stop.clone().request();
        assert!(stop.requested());
    }
}
