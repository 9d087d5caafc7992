//! The run's clock: real time, or virtual time shared with the embedded emulator
//! (`sqsprobe run --clock virtual`).
//!
//! Under a virtual clock the whole run — runner, cases, the embedded emulator — lives on one
//! current-thread tokio runtime started paused, and the SDK reaches the emulator in-process
//! ([`sqsprobe_emulator::InProcessClient`]), never through a socket. Tokio then *is* a discrete-event
//! scheduler: its clock stands still while any task can run, and when every task is waiting
//! (a `sleep` step, an observe window's long poll, a lease, a delay, a dedup window, a purge
//! cooldown, an attempt timeout) it jumps to the earliest pending deadline. Concurrent cases
//! therefore keep their real-time interleaving: a case's 60 s wait passes only when no other
//! case has anything left to do before it, exactly as on a real clock, so the verdicts are the
//! ones a real-time run gives, in seconds instead of minutes.
//!
//! Why not a scheduler of our own, or cases run one after another: tokio already advances
//! only when the runtime is idle, and every wait in the harness and the emulator is a tokio
//! timer, so one shared clock needs no bookkeeping of who is blocked; serial cases would give
//! the same verdicts but lose the concurrency real runs have. The condition is that nothing
//! waits on the outside world: a socket would let the clock jump while a request is still in
//! the kernel, which is why the virtual clock is refused for every target but the embedded one.
//!
//! Timestamps read from a [`RunClock`] are wall-clock readings: under a virtual clock they start
//! at the real time the run began and advance with virtual time, and `run_start.clock` says
//! `virtual` so that no reader takes them for real ones.

use chrono::{DateTime, TimeZone, Utc};

/// Which clock a run uses (`--clock`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClockKind {
    /// The operating system's clock: waits take real time.
    #[default]
    Real,
    /// Tokio's paused clock, advanced to the next deadline whenever every task waits.
    Virtual,
}

impl ClockKind {
    /// The name recorded in `run_start.clock`.
    pub fn as_str(self) -> &'static str {
        match self {
            ClockKind::Real => "real",
            ClockKind::Virtual => "virtual",
        }
    }
}

/// The clock a run reads its timestamps from; cheap to copy into every case and call.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunClock {
    /// For a virtual clock: the wall time (epoch milliseconds) and tokio instant it started at.
    anchor: Option<(i64, tokio::time::Instant)>,
}

impl RunClock {
    /// The real clock (`Utc::now()`).
    pub fn real() -> RunClock {
        RunClock { anchor: None }
    }

    /// A virtual clock starting now: the current wall time, advanced by tokio's clock. Create
    /// it on the paused runtime the run uses.
    pub fn virtual_from_now() -> RunClock {
        RunClock {
            anchor: Some((Utc::now().timestamp_millis(), tokio::time::Instant::now())),
        }
    }

    /// The clock for `kind`.
    pub fn new(kind: ClockKind) -> RunClock {
        match kind {
            ClockKind::Real => RunClock::real(),
            ClockKind::Virtual => RunClock::virtual_from_now(),
        }
    }

    /// Which kind of clock this is.
    pub fn kind(&self) -> ClockKind {
        match self.anchor {
            None => ClockKind::Real,
            Some(_) => ClockKind::Virtual,
        }
    }

    /// The current time on this clock.
    pub fn now(&self) -> DateTime<Utc> {
        match self.anchor {
            None => Utc::now(),
            Some((epoch_ms, start)) => {
                let elapsed = tokio::time::Instant::now().saturating_duration_since(start);
                let ms = epoch_ms.saturating_add(i64::try_from(elapsed.as_millis()).unwrap_or(0));
                Utc.timestamp_millis_opt(ms)
                    .single()
                    .unwrap_or_else(Utc::now)
            }
        }
    }
}

/// The emulator reads the same clock as the harness: one axis for message timestamps,
/// leases and the run's evidence.
impl sqsprobe_emulator::Clock for RunClock {
    fn now_millis(&self) -> u64 {
        u64::try_from(self.now().timestamp_millis()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn a_virtual_clock_moves_with_tokio_time_only() {
        let clock = RunClock::virtual_from_now();
        assert_eq!(clock.kind(), ClockKind::Virtual);
        let t0 = clock.now();
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(clock.now(), t0, "real time passing does not move it");
        tokio::time::sleep(Duration::from_secs(300)).await;
        assert_eq!((clock.now() - t0).num_seconds(), 300);
        use sqsprobe_emulator::Clock;
        assert_eq!(
            clock.now_millis(),
            u64::try_from(clock.now().timestamp_millis()).unwrap()
        );
    }

    #[test]
    fn the_real_clock_is_the_system_clock() {
        let clock = RunClock::new(ClockKind::Real);
        assert_eq!(clock.kind(), ClockKind::Real);
        let drift = (clock.now() - Utc::now()).num_milliseconds().abs();
        assert!(drift < 1000, "{drift}");
        assert_eq!(ClockKind::Virtual.as_str(), "virtual");
    }
}
