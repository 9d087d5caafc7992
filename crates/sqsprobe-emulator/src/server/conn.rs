//! One connection's time bounds: a stream wrapper that disconnects clients which are too slow
//! to send a request, or idle too long between requests.
//!
//! hyper's own `header_read_timeout` starts when the server waits for a head, which on a
//! keep-alive connection is also the idle time between requests, so it cannot give a short
//! header bound and a long idle bound at once. This wrapper tells the phases apart:
//! - **waiting**: no byte of the next request yet. Bound: `header_read_timeout` on a new
//!   connection, `idle_timeout` after a response (longer than the SDKs' 90 s pool idle time,
//!   so a pooled connection is not closed under a client).
//! - **head**: the first byte arrived. Bound: `header_read_timeout` from then.
//! - **busy**: the service is handling a request (a long poll may take 20 s). No bound here;
//!   the body read has its own timeout in `request`.
//!
//! The service marks busy and done through a shared [`Activity`]; an expired bound makes the
//! next read fail with `TimedOut`, and hyper closes the connection. The same [`Activity`] tells
//! the accept loop whether the connection is idle — waiting for a request's first byte — and
//! since when, which is what decides who gives way at the connection cap (`pool`).
//!
//! The bound of each phase is an `Instant`; the timer is only armed for it lazily. Resetting a
//! tokio `Sleep` takes the timer driver's lock, and doing it at every phase change (twice a
//! request) was ~2 % of the server's CPU (perf, docs/performance.md). The timer is armed only
//! when a read would wait and the bound is earlier than the timer, and when the timer fires
//! before the bound (the bound moved later since) it is re-armed once. So a connection that
//! keeps sending requests touches the timer about once per `idle_timeout`, and each bound is
//! still met to the timer's resolution.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::{Instant, Sleep};

/// [`Activity::idle_since`] of a connection that is not idle.
const NOT_IDLE: u64 = u64::MAX;

/// What the connections tell the accept loop, shared by all of them.
#[derive(Debug)]
pub(super) struct Gate {
    /// The clock idle times are read on (milliseconds since the server started).
    epoch: Instant,
    /// Set while the accept loop waits at the cap for a connection to become idle: only then
    /// does a request's end wake it, so a request below the cap pays one load for this.
    waiting: AtomicBool,
    /// Woken when a connection becomes idle while [`Gate::waiting`] is set.
    idle: Notify,
}

impl Default for Gate {
    fn default() -> Self {
        Self {
            epoch: Instant::now(),
            waiting: AtomicBool::new(false),
            idle: Notify::new(),
        }
    }
}

impl Gate {
    /// Now, in milliseconds since the server started.
    fn stamp(&self) -> u64 {
        Instant::now()
            .saturating_duration_since(self.epoch)
            .as_millis() as u64
    }

    /// The accept loop is waiting (or no longer) for a connection to become idle.
    pub fn set_waiting(&self, waiting: bool) {
        self.waiting.store(waiting, Ordering::SeqCst);
    }

    /// Resolves once a connection became idle since [`Gate::set_waiting`] (or a stale wake-up
    /// from an earlier wait: the caller looks again either way).
    pub async fn became_idle(&self) {
        self.idle.notified().await;
    }

    /// Now, on the clock of [`Activity::idle_since`].
    pub fn now(&self) -> u64 {
        self.stamp()
    }

    /// Resolves at `stamp` on the clock of [`Activity::idle_since`].
    pub async fn sleep_until(&self, stamp: u64) {
        tokio::time::sleep_until(self.epoch + Duration::from_millis(stamp)).await;
    }
}

/// What the service tells the stream, and the connection tells the accept loop, about
/// requests on this connection.
#[derive(Debug)]
pub(super) struct Activity {
    in_flight: AtomicUsize,
    finished: AtomicU64,
    /// When the connection last began waiting for a request's first byte (its opening, or the
    /// end of its last request), on [`Gate`]'s clock; [`NOT_IDLE`] from a request's first byte
    /// until its end.
    idle_since: AtomicU64,
    /// Set when the accept loop asked this connection to close to make room.
    evicted: AtomicBool,
    close: Notify,
    gate: Arc<Gate>,
}

impl Default for Activity {
    fn default() -> Self {
        Self::new(Arc::default())
    }
}

/// Marks a request in flight for as long as it lives (dropped when the service's future
/// completes or is cancelled).
pub(super) struct Busy(Arc<Activity>);

impl Activity {
    /// A new connection's activity: idle (it has sent nothing yet) from now.
    pub fn new(gate: Arc<Gate>) -> Self {
        Self {
            in_flight: AtomicUsize::new(0),
            finished: AtomicU64::new(0),
            idle_since: AtomicU64::new(gate.stamp()),
            evicted: AtomicBool::new(false),
            close: Notify::new(),
            gate,
        }
    }

    /// A request starts.
    pub fn begin(self: &Arc<Self>) -> Busy {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.idle_since.store(NOT_IDLE, Ordering::SeqCst);
        Busy(Arc::clone(self))
    }

    /// Since when the connection has waited for a request (on [`Gate`]'s clock), if it does.
    pub fn idle_since(&self) -> Option<u64> {
        Some(self.idle_since.load(Ordering::SeqCst)).filter(|&at| at != NOT_IDLE)
    }

    /// Whether the accept loop already asked this connection to close.
    pub fn is_evicted(&self) -> bool {
        self.evicted.load(Ordering::SeqCst)
    }

    /// Asks the connection to close to make room: at once if it is idle, after the request
    /// it is serving otherwise (hyper's graceful shutdown: a request under way is answered).
    pub fn evict(&self) {
        self.evicted.store(true, Ordering::SeqCst);
        self.close.notify_one();
    }

    /// Resolves once [`Activity::evict`] was called.
    pub async fn evicted(&self) {
        self.close.notified().await;
    }

    /// The first byte of a request arrived: the connection is no longer idle.
    fn head_started(&self) {
        self.idle_since.store(NOT_IDLE, Ordering::SeqCst);
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let activity = &self.0;
        activity.finished.fetch_add(1, Ordering::SeqCst);
        activity.in_flight.fetch_sub(1, Ordering::SeqCst);
        activity
            .idle_since
            .store(activity.gate.stamp(), Ordering::SeqCst);
        if activity.gate.waiting.load(Ordering::SeqCst) {
            activity.gate.idle.notify_one();
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Waiting,
    Head,
    Busy,
}

/// A stream that fails its reads once the current phase's bound has passed.
pub(super) struct TimedStream<S> {
    inner: S,
    activity: Arc<Activity>,
    phase: Phase,
    finished_seen: u64,
    /// When the current phase's bound passes (unused while busy).
    bound: Instant,
    /// Wakes the reader at or before `bound`, never after it while the reader waits.
    timer: Pin<Box<Sleep>>,
    header_timeout: Duration,
    idle_timeout: Duration,
}

impl<S> TimedStream<S> {
    /// Wraps a freshly accepted stream: its first request must arrive within `header_timeout`.
    pub fn new(
        inner: S,
        activity: Arc<Activity>,
        header_timeout: Duration,
        idle_timeout: Duration,
    ) -> Self {
        Self {
            inner,
            activity,
            phase: Phase::Waiting,
            finished_seen: 0,
            bound: Instant::now() + header_timeout,
            timer: Box::pin(tokio::time::sleep(header_timeout)),
            header_timeout,
            idle_timeout,
        }
    }

    /// Brings the phase up to date with what the service did since the last read.
    fn sync_phase(&mut self) {
        let finished = self.activity.finished.load(Ordering::SeqCst);
        if finished != self.finished_seen {
            self.finished_seen = finished;
            self.phase = Phase::Waiting;
            self.bound = Instant::now() + self.idle_timeout;
        }
        if self.activity.in_flight.load(Ordering::SeqCst) > 0 {
            self.phase = Phase::Busy;
        }
    }

    /// Whether the current bound has passed; otherwise the timer is armed to wake the reader
    /// by the bound.
    fn bound_passed(&mut self, cx: &mut Context<'_>) -> bool {
        if self.bound < self.timer.deadline() {
            self.timer.as_mut().reset(self.bound);
        }
        while self.timer.as_mut().poll(cx).is_ready() {
            if Instant::now() >= self.bound {
                return true;
            }
            // The bound moved later since the timer was armed: wait on for the rest.
            self.timer.as_mut().reset(self.bound);
        }
        false
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for TimedStream<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.sync_phase();
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before && this.phase == Phase::Waiting {
                    this.phase = Phase::Head;
                    this.bound = Instant::now() + this.header_timeout;
                    this.activity.head_started();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                if this.phase != Phase::Busy && this.bound_passed(cx) {
                    let what = if this.phase == Phase::Head {
                        "request head not received in time"
                    } else {
                        "connection idle too long"
                    };
                    return Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, what)));
                }
                Poll::Pending
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for TimedStream<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt, duplex};

    const HEAD: Duration = Duration::from_secs(2);
    const IDLE: Duration = Duration::from_secs(10);

    #[tokio::test(start_paused = true)]
    async fn a_silent_new_connection_times_out_after_the_header_bound() {
        let (_client, server) = duplex(64);
        let mut stream = TimedStream::new(server, Arc::default(), HEAD, IDLE);
        let started = Instant::now();
        let err = stream.read(&mut [0; 8]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(started.elapsed(), HEAD);
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_head_is_cut_and_an_idle_keep_alive_gets_the_longer_bound() {
        let (mut client, server) = duplex(64);
        let activity = Arc::new(Activity::default());
        let mut stream = TimedStream::new(server, Arc::clone(&activity), HEAD, IDLE);
        client.write_all(b"POST").await.unwrap();
        assert_eq!(stream.read(&mut [0; 4]).await.unwrap(), 4);
        // The first byte started the head bound: the rest never comes.
        let err = stream.read(&mut [0; 8]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);

        let (_client, server) = duplex(64);
        let mut stream = TimedStream::new(server, Arc::clone(&activity), HEAD, IDLE);
        drop(activity.begin());
        let started = Instant::now();
        let err = stream.read(&mut [0; 8]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert_eq!(
            started.elapsed(),
            IDLE,
            "after a response the idle bound applies"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_busy_connection_is_not_bounded() {
        let (mut client, server) = duplex(64);
        let activity = Arc::new(Activity::default());
        let mut stream = TimedStream::new(server, Arc::clone(&activity), HEAD, IDLE);
        let busy = activity.begin();
        let reader = tokio::spawn(async move {
            let mut buf = [0; 4];
            stream.read_exact(&mut buf).await.map(|_| buf)
        });
        tokio::time::sleep(IDLE * 3).await;
        client.write_all(b"body").await.unwrap();
        assert_eq!(&reader.await.unwrap().unwrap(), b"body");
        drop(busy);
    }
}
