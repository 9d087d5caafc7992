//! Why the run is stopping, shared by every case and the run loop: the run's own reason (a
//! spent budget, refused credentials, a lost target) and the signal that interrupts it.
//!
//! The run keeps one [`StopReason`] the way nextest keeps its cancel reason: a greater reason
//! replaces a lesser one (a target lost after a budget ran out is what the run reports), two
//! of one kind keep the first. The order is `classify::stop`'s.

use sqsprobe_core::classify::StopReason;
use std::sync::Arc;
use tokio::sync::watch;

/// The run's stop, shared by every case (see the module doc). Whoever waits on
/// [`Halt::stopped`] wakes at once when the run stops itself.
#[derive(Debug, Clone)]
pub(crate) struct Halt {
    /// Why the run stopped itself, the greatest reason so far.
    own: Arc<watch::Sender<Option<StopReason>>>,
    /// Turns true on Ctrl-C, SIGTERM or SIGHUP.
    signal: watch::Receiver<bool>,
}

impl Halt {
    /// A run not stopping yet, which a signal interrupts when `signal` turns true.
    pub(crate) fn new(signal: watch::Receiver<bool>) -> Halt {
        Halt {
            own: Arc::new(watch::Sender::new(None)),
            signal,
        }
    }

    /// Stops the run for `reason`, unless it is already stopping for a greater or equal one.
    pub(crate) fn set(&self, reason: StopReason) {
        self.own.send_if_modified(|current| {
            let greater = current.as_ref().is_none_or(|c| reason.outranks(c));
            if greater {
                *current = Some(reason);
            }
            greater
        });
    }

    /// Why the run stopped itself, if it did (a signal is not the run's own: see
    /// [`Halt::interrupted`]).
    pub(crate) fn reason(&self) -> Option<StopReason> {
        self.own.borrow().clone()
    }

    /// Whether a signal interrupted the run.
    pub(crate) fn interrupted(&self) -> bool {
        *self.signal.borrow()
    }

    /// Why the run is stopping, if it is: the greater of a signal and the run's own reason.
    pub(crate) fn stop_reason(&self) -> Option<StopReason> {
        StopReason::greatest([
            self.interrupted().then_some(StopReason::Interrupted),
            self.reason(),
        ])
    }

    /// Resolves once the run has stopped itself.
    pub(crate) async fn stopped(&self) {
        let mut rx = self.own.subscribe();
        let _ = rx.wait_for(|r| r.is_some()).await;
    }

    /// Resolves once a signal has interrupted the run.
    pub(crate) async fn signalled(&self) {
        let mut rx = self.signal.clone();
        let _ = rx.wait_for(|s| *s).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_greater_reason_replaces_a_lesser_one_and_a_signal_outranks_them_all() {
        let (tx, rx) = watch::channel(false);
        let halt = Halt::new(rx);
        assert_eq!(halt.stop_reason(), None);
        let budget = StopReason::Budget("the request budget (--max-requests 8)".into());
        halt.set(budget.clone());
        halt.set(StopReason::Budget(
            "the time budget (--max-duration 1s)".into(),
        ));
        assert_eq!(halt.reason(), Some(budget));
        let lost = StopReason::TargetLost("5 calls in a row got no response".into());
        halt.set(lost.clone());
        halt.set(StopReason::CredentialsRefused("AccessDenied".into()));
        assert_eq!(halt.reason(), Some(lost.clone()));
        assert_eq!(halt.stop_reason(), Some(lost.clone()));
        tx.send(true).unwrap();
        assert!(halt.interrupted());
        assert_eq!(halt.stop_reason(), Some(StopReason::Interrupted));
        // The run's own reason stays what it was: `run_end.halted` still says it.
        assert_eq!(halt.reason(), Some(lost));
    }

    #[tokio::test]
    async fn waiters_wake_when_the_run_stops_itself_or_is_signalled() {
        let (tx, rx) = watch::channel(false);
        let halt = Halt::new(rx);
        let waiter = {
            let halt = halt.clone();
            tokio::spawn(async move { halt.stopped().await })
        };
        halt.set(StopReason::Budget("b".into()));
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .expect("woken")
            .expect("joined");
        let signalled = {
            let halt = halt.clone();
            tokio::spawn(async move { halt.signalled().await })
        };
        tx.send(true).unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(5), signalled)
            .await
            .expect("woken")
            .expect("joined");
    }
}
