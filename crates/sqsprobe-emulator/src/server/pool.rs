//! Who is served at the connection cap.
//!
//! At most `max_connections` connections are open at once, which bounds the memory they take
//! (about 15 KB each). A new client at the cap does not wait for a connection to close by
//! itself: SDKs keep pooled keep-alive connections open between requests, up to the server's
//! `idle_timeout`, so a cap's worth of pooled connections would lock every new client out for
//! that long. Instead, as nginx does when its `worker_connections` run out (it closes its
//! "reusable" connections: keep-alive ones between requests and new ones that have sent
//! nothing yet, oldest first), the connection idle longest is closed to make room:
//!
//! - **idle** (waiting for a request's first byte: a pooled connection between requests, or a
//!   new one that has sent nothing) for [`MIN_IDLE`] or longer: closed, longest idle first. A
//!   client of a pooled connection sees it closed between requests, as after an idle timeout;
//!   SDKs open another. So silent connections, however many, hold no slot a new client needs
//!   for longer than [`MIN_IDLE`]. A connection idle for less is left alone, so that a client
//!   whose request is already on its way (just connected, or just answered and sending the
//!   next) is not cut: a new client at a cap held only by such connections waits at most that
//!   long.
//! - **in a request** (its head or body arriving, or the request being served): never closed
//!   to make room. A head must arrive within `header_read_timeout` of its first byte and a
//!   body within `header_read_timeout` of its head, so a slow client holds its slot at most
//!   twice that; a request being served holds it as long as it takes (a long poll: up to
//!   20 s). When every connection is in a request, the next client waits in the listen
//!   backlog until one ends or becomes idle.
//!
//! The accept loop takes one connection at a time; at the cap it closes the idlest connection
//! and waits for its slot. A connection that began a request just as it was asked to close
//! answers that request first (hyper's graceful shutdown), and the loop then closes the next
//! connection that becomes idle. So at most `max_connections` connections are served, plus the
//! one accepted connection waiting for a slot.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;

use super::conn::{Activity, Gate};

/// How long a connection must have been idle before it is closed to make room: far longer
/// than a client takes to send its request once connected, far shorter than any client waits
/// for a connection. It also paces the turnover when clients keep more connections busy than
/// the cap, so it is kept short (docs/emulator.md, "Connections", has the measurements).
pub(super) const MIN_IDLE: std::time::Duration = std::time::Duration::from_millis(100);

/// Which idle connection gives way.
enum Idlest {
    /// This one, idle for [`MIN_IDLE`] or longer.
    Now(Arc<Activity>),
    /// None yet; the idlest one will have been idle for [`MIN_IDLE`] at this stamp.
    At(u64),
    /// No connection is idle.
    None,
}

/// The connections being served, by id (ids grow with the order of acceptance).
#[derive(Debug, Default)]
pub(super) struct Pool {
    /// Touched when a connection opens or closes, and at the cap; never per request.
    live: Mutex<HashMap<u64, Arc<Activity>>>,
    next_id: std::sync::atomic::AtomicU64,
    pub gate: Arc<Gate>,
}

/// A connection's place in the [`Pool`]: it leaves the pool when this is dropped (when its
/// task ends, or is cut at shutdown).
pub(super) struct Member {
    pool: Arc<Pool>,
    id: u64,
}

impl Drop for Member {
    fn drop(&mut self) {
        lock(&self.pool.live).remove(&self.id);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Pool {
    /// Enters a new connection (idle from now: it has sent nothing yet).
    pub fn join(self: &Arc<Self>) -> (Arc<Activity>, Member) {
        let activity = Arc::new(Activity::new(Arc::clone(&self.gate)));
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        lock(&self.live).insert(id, Arc::clone(&activity));
        let member = Member {
            pool: Arc::clone(self),
            id,
        };
        (activity, member)
    }

    /// The connection idle longest that has not been asked to close yet (ties: the one
    /// accepted first), if it has been idle for [`MIN_IDLE`].
    fn idlest(&self) -> Idlest {
        let live = lock(&self.live);
        let idlest = live
            .iter()
            .filter(|(_, a)| !a.is_evicted())
            .filter_map(|(&id, a)| a.idle_since().map(|at| ((at, id), a)))
            .min_by_key(|(order, _)| *order);
        let Some(((since, _), activity)) = idlest else {
            return Idlest::None;
        };
        let ripe = since.saturating_add(MIN_IDLE.as_millis() as u64);
        if ripe <= self.gate.now() {
            Idlest::Now(Arc::clone(activity))
        } else {
            Idlest::At(ripe)
        }
    }

    /// How many connections are being served.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        lock(&self.live).len()
    }

    /// A slot for a connection just accepted at the cap: closes the idlest connection and
    /// waits for its slot. While that one is busy instead (it began a request before it heard,
    /// and answers it first), the next connection to become idle is closed too. `None` once
    /// `stop` resolves. `connections` is reaped meanwhile, so finished tasks free their slots.
    pub async fn make_room(
        &self,
        slots: &Arc<Semaphore>,
        mut stop: Pin<&mut impl Future<Output = ()>>,
        connections: &mut JoinSet<()>,
    ) -> Option<OwnedSemaphorePermit> {
        let mut closing: Option<Arc<Activity>> = None;
        self.gate.set_waiting(true);
        let slot = loop {
            let mut ripe_at = None;
            if closing.as_ref().is_none_or(|c| c.idle_since().is_none()) {
                match self.idlest() {
                    Idlest::Now(idlest) => {
                        idlest.evict();
                        closing = Some(idlest);
                    }
                    Idlest::At(stamp) => ripe_at = Some(stamp),
                    Idlest::None => {}
                }
            }
            tokio::select! {
                () = stop.as_mut() => break None,
                slot = Arc::clone(slots).acquire_owned() => break slot.ok(),
                () = self.gate.became_idle() => {}
                () = self.gate.sleep_until(ripe_at.unwrap_or_default()), if ripe_at.is_some() => {}
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        };
        self.gate.set_waiting(false);
        slot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chosen(pool: &Pool) -> Option<Arc<Activity>> {
        match pool.idlest() {
            Idlest::Now(a) => Some(a),
            _ => None,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_idlest_connection_not_yet_closing_gives_way_once_idle_long_enough() {
        let pool = Arc::new(Pool::default());
        let (a, _ma) = pool.join();
        let (b, mb) = pool.join();
        let (c, _mc) = pool.join();
        // Just opened: none has been idle long enough, and the pool says when one will be.
        assert!(matches!(pool.idlest(), Idlest::At(at) if at == MIN_IDLE.as_millis() as u64));
        tokio::time::advance(MIN_IDLE).await;
        // All three are silent: the first accepted is the idlest.
        assert!(Arc::ptr_eq(&chosen(&pool).unwrap(), &a));
        a.evict();
        assert!(Arc::ptr_eq(&chosen(&pool).unwrap(), &b));
        // A connection in a request is never chosen, and one just answered not yet.
        let busy_b = b.begin();
        let _busy_c = c.begin();
        assert!(matches!(pool.idlest(), Idlest::None));
        drop(busy_b);
        assert!(matches!(pool.idlest(), Idlest::At(_)));
        tokio::time::advance(MIN_IDLE).await;
        assert!(Arc::ptr_eq(&chosen(&pool).unwrap(), &b));
        drop(mb);
        assert_eq!(pool.len(), 2, "a member leaves the pool when dropped");
    }
}
