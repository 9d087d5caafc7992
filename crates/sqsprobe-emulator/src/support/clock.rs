//! Injectable time: every deadline in the emulator is epoch milliseconds read from a [`Clock`].
//!
//! Storing deadlines as wall-clock milliseconds keeps message timestamps (`SentTimestamp`) and
//! deadlines (leases, delays, retention, dedup windows) on one axis. Waiting is always done with
//! `tokio::time::sleep`, so a clock that follows tokio's time ([`TokioClock`]) lets tests drive
//! leases and windows with `tokio::time::pause()` / `advance()` instead of sleeping.

use std::time::{SystemTime, UNIX_EPOCH};

/// A source of the current time in milliseconds since the Unix epoch.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Milliseconds since the Unix epoch.
    fn now_millis(&self) -> u64;
}

fn system_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The operating system's wall clock.
///
/// Do not combine with a paused tokio clock: sleeps would be virtual while time is real.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_millis(&self) -> u64 {
        system_millis()
    }
}

/// Wall-clock time anchored once, then advanced by tokio's monotonic clock.
///
/// With a paused runtime it moves only on `tokio::time::advance` or auto-advance; otherwise it
/// tracks real time (and is immune to wall-clock jumps). This is the emulator's default.
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    epoch_at_start: u64,
    start: tokio::time::Instant,
}

impl TokioClock {
    /// Anchors at the current wall-clock time and tokio instant.
    pub fn new() -> Self {
        Self {
            epoch_at_start: system_millis(),
            start: tokio::time::Instant::now(),
        }
    }
}

impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for TokioClock {
    fn now_millis(&self) -> u64 {
        let elapsed = tokio::time::Instant::now().saturating_duration_since(self.start);
        self.epoch_at_start + elapsed.as_millis() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn tokio_clock_follows_paused_time() {
        let clock = TokioClock::new();
        let t0 = clock.now_millis();
        tokio::time::advance(std::time::Duration::from_secs(90)).await;
        assert_eq!(clock.now_millis() - t0, 90_000);
    }
}
