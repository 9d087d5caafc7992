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
//! next read fail with `TimedOut`, and hyper closes the connection.
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
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// What the service tells the stream about requests on this connection.
#[derive(Debug, Default)]
pub(super) struct Activity {
    in_flight: AtomicUsize,
    finished: AtomicU64,
}

/// Marks a request in flight for as long as it lives (dropped when the service's future
/// completes or is cancelled).
pub(super) struct Busy(Arc<Activity>);

impl Activity {
    /// A request starts.
    pub fn begin(self: &Arc<Self>) -> Busy {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        Busy(Arc::clone(self))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.finished.fetch_add(1, Ordering::SeqCst);
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
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
