//! A queue's wake-up for the long polls waiting on it, paid for only while one waits.
//!
//! Every change that can make a message receivable (a send, a lease or delay that ends, a
//! visibility change, a FIFO delete that unblocks its group, new settings, the queue's
//! deletion) wakes the queue's long polls. A tokio `Notify`'s `notify_waiters` takes its
//! waiter list's lock even when nobody waits, and a batch send wakes once per message; almost
//! always nobody waits. So [`Wakeup`] counts its waiters and only notifies when there is one.
//!
//! Why no wake-up is lost: a long poll counts itself in ([`Wakeup::watch`]) and enables its
//! `Notified` before it looks at the queue under the queue's lock, and a change is made under
//! that lock before the count is read. If the count read 0, the poll counted itself in after
//! that read, so its look came after the change was made and saw it; otherwise it is
//! notified, and its enabled `Notified` keeps the notification until it waits.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;
use tokio::sync::futures::Notified;

/// One queue's wake-up (shared by the queue and the long polls waiting on it).
#[derive(Debug, Default)]
pub(crate) struct Wakeup {
    notify: Notify,
    /// Long polls counted in by [`Wakeup::watch`] and not yet done.
    watching: AtomicUsize,
}

/// A long poll's place in a [`Wakeup`]'s count, given back when dropped.
#[derive(Debug)]
pub(crate) struct Watching(Arc<Wakeup>);

impl Wakeup {
    /// Wakes every long poll waiting now, if one is counted in.
    pub fn wake(&self) {
        if self.watching.load(Ordering::SeqCst) > 0 {
            self.notify.notify_waiters();
        }
    }

    /// Counts a long poll in until the returned guard is dropped; take it before the first
    /// [`Wakeup::notified`] is enabled.
    pub fn watch(self: &Arc<Self>) -> Watching {
        self.watching.fetch_add(1, Ordering::SeqCst);
        Watching(Arc::clone(self))
    }

    /// A future that resolves at the next [`Wakeup::wake`] from its creation (or its
    /// `enable`) on, while a [`Watching`] is held.
    pub fn notified(&self) -> Notified<'_> {
        self.notify.notified()
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        self.0.watching.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    use super::*;

    fn ready(future: std::pin::Pin<&mut Notified<'_>>) -> bool {
        let mut cx = Context::from_waker(Waker::noop());
        matches!(future.poll(&mut cx), Poll::Ready(()))
    }

    #[test]
    fn a_wake_reaches_a_watching_poll_and_no_one_else() {
        let wakeup = Arc::new(Wakeup::default());
        // Nobody watches: the wake is not kept for a later poll (as `notify_waiters`).
        wakeup.wake();
        let watching = wakeup.watch();
        let mut notified = pin!(wakeup.notified());
        notified.as_mut().enable();
        assert!(!ready(notified.as_mut()), "an earlier wake is not seen");
        wakeup.wake();
        assert!(ready(notified.as_mut()), "a wake while watching is seen");
        drop(watching);
        let mut later = pin!(wakeup.notified());
        later.as_mut().enable();
        wakeup.wake();
        assert!(!ready(later.as_mut()), "no one counted in: no notification");
        assert_eq!(wakeup.watching.load(Ordering::SeqCst), 0);
    }
}
