//! The nemesis at work: told of every delete and delivery by the audit's observer (inside the
//! emulator, before the answer is sent), it strikes the consumer's process group when one of
//! its points comes — SIGKILL, or SIGSTOP — and tells the runner what is left to do: start
//! the consumer again after a kill, send SIGCONT once a paused attempt's lease has ended.

use std::sync::Mutex;

use rustix::process::Signal;

use super::spec::{Act, ActKind, On, PAUSE_PAST_LEASE_MS, Point, Strike};
use crate::audit::consumer::signal_group;

/// One event the observer saw.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Event<'a> {
    pub on: On,
    pub at_ms: u64,
    pub message_id: Option<&'a str>,
    pub business_key: Option<&'a str>,
    /// For a delivery: when its lease ends.
    pub lease_until_ms: Option<u64>,
}

/// Where the consumer is, as the nemesis sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Not started yet, or being stopped at the audit's end: no strike.
    Away,
    Up,
    /// Killed; the runner starts it again.
    Down,
    /// Stopped until the emulator's clock reaches this.
    Paused {
        until_ms: u64,
    },
}

#[derive(Debug)]
struct State {
    /// Each point, and whether it has struck.
    points: Vec<(Point, bool)>,
    deletes: u32,
    deliveries: u32,
    group: Option<i32>,
    phase: Phase,
    starts: u32,
}

/// The nemesis of one audit.
#[derive(Debug)]
pub(crate) struct Live {
    state: Mutex<State>,
}

impl Live {
    /// A nemesis that strikes at `points`.
    pub(crate) fn new(points: Vec<Point>) -> Live {
        Live {
            state: Mutex::new(State {
                points: points.into_iter().map(|p| (p, false)).collect(),
                deletes: 0,
                deliveries: 0,
                group: None,
                phase: Phase::Away,
                starts: 0,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts `event` and strikes if a point has come: the act done.
    pub(crate) fn on_event(&self, event: Event<'_>) -> Option<Act> {
        let mut s = self.state();
        let count = match event.on {
            On::Delete => {
                s.deletes += 1;
                s.deletes
            }
            On::Delivery => {
                s.deliveries += 1;
                s.deliveries
            }
        };
        let group = s.group?;
        let phase = s.phase;
        // A kill strikes a consumer up or paused (SIGKILL ends a stopped process too); a pause
        // only one that is up.
        let due = s.points.iter().position(|(p, struck)| {
            !struck
                && p.on == event.on
                && p.count <= count
                && match p.act {
                    Strike::Kill => matches!(phase, Phase::Up | Phase::Paused { .. }),
                    Strike::Pause => phase == Phase::Up,
                }
        })?;
        let point = s.points[due].0;
        let (signal, act, phase) = match point.act {
            Strike::Kill => (Signal::KILL, ActKind::Kill, Phase::Down),
            Strike::Pause => (
                Signal::STOP,
                ActKind::Pause,
                Phase::Paused {
                    until_ms: event.lease_until_ms.unwrap_or(event.at_ms) + PAUSE_PAST_LEASE_MS,
                },
            ),
        };
        if !signal_group(group, signal) {
            return None;
        }
        s.points[due].1 = true;
        s.phase = phase;
        Some(Act {
            act,
            at_ms: event.at_ms,
            on: Some(event.on),
            count: Some(count),
            message_id: event.message_id.map(str::to_string),
            business_key: event.business_key.map(str::to_string),
            start: None,
        })
    }

    /// The consumer was started as the process group `group`: which start it is (1 for the
    /// first).
    pub(crate) fn started(&self, group: Option<i32>) -> u32 {
        let mut s = self.state();
        s.group = group;
        s.phase = Phase::Up;
        s.starts += 1;
        s.starts
    }

    /// How many times the consumer has been started.
    pub(crate) fn starts(&self) -> u32 {
        self.state().starts
    }

    /// Whether the consumer is down by a kill, to be started again.
    pub(crate) fn killed(&self) -> bool {
        self.state().phase == Phase::Down
    }

    /// Whether the consumer is paused.
    pub(crate) fn paused(&self) -> bool {
        matches!(self.state().phase, Phase::Paused { .. })
    }

    /// SIGCONT to a paused consumer whose pause is over at `now_ms`: the act done.
    pub(crate) fn resume_due(&self, now_ms: u64) -> Option<Act> {
        let mut s = self.state();
        let Phase::Paused { until_ms } = s.phase else {
            return None;
        };
        if now_ms < until_ms {
            return None;
        }
        let group = s.group?;
        signal_group(group, Signal::CONT);
        s.phase = Phase::Up;
        Some(Act {
            act: ActKind::Resume,
            at_ms: now_ms,
            on: None,
            count: None,
            message_id: None,
            business_key: None,
            start: None,
        })
    }

    /// No more strikes: the audit is stopping the consumer. A paused one is continued, so
    /// that it can hear its SIGTERM.
    pub(crate) fn stand_down(&self) {
        let mut s = self.state();
        if let (Phase::Paused { .. }, Some(group)) = (s.phase, s.group) {
            signal_group(group, Signal::CONT);
        }
        s.phase = Phase::Away;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::os::unix::process::ExitStatusExt;

    fn event(on: On, at_ms: u64) -> Event<'static> {
        Event {
            on,
            at_ms,
            message_id: Some("m"),
            business_key: Some("b-1"),
            lease_until_ms: Some(at_ms + 1_000),
        }
    }

    /// A `sleep` in a process group of its own, standing in for a consumer.
    fn sleeper() -> std::process::Child {
        std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .expect("sleep runs")
    }

    #[test]
    fn a_kill_strikes_at_its_count_only_while_the_consumer_is_up() {
        let live = Live::new(vec![
            Point {
                act: Strike::Kill,
                on: On::Delete,
                count: 2,
            },
            Point {
                act: Strike::Kill,
                on: On::Delivery,
                count: 1,
            },
        ]);
        // Nothing strikes before the consumer has started.
        assert_eq!(live.on_event(event(On::Delivery, 0)), None);
        let mut child = sleeper();
        assert_eq!(live.started(Some(child.id() as i32)), 1);
        assert_eq!(live.on_event(event(On::Delete, 10)), None, "delete 1 of 2");
        let act = live
            .on_event(event(On::Delete, 20))
            .expect("delete 2 strikes");
        assert_eq!(
            (act.act, act.on, act.count, act.at_ms),
            (ActKind::Kill, Some(On::Delete), Some(2), 20)
        );
        assert!(live.killed());
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(9), "SIGKILL to the group");
        // While it is down, the delivery point (already past its count) waits.
        assert_eq!(live.on_event(event(On::Delivery, 30)), None);
        let mut again = sleeper();
        assert_eq!(live.started(Some(again.id() as i32)), 2);
        let act = live
            .on_event(event(On::Delivery, 40))
            .expect("the first delivery at or past its count once up");
        assert_eq!((act.act, act.count), (ActKind::Kill, Some(3)));
        assert_eq!(again.wait().unwrap().signal(), Some(9));
    }

    #[test]
    fn a_pause_lasts_past_the_lease_of_its_delivery() {
        let live = Live::new(vec![Point {
            act: Strike::Pause,
            on: On::Delivery,
            count: 1,
        }]);
        let mut child = sleeper();
        live.started(Some(child.id() as i32));
        let act = live.on_event(event(On::Delivery, 100)).expect("pauses");
        assert_eq!(act.act, ActKind::Pause);
        assert!(live.paused());
        // The lease ends at 1 100; continued only past it.
        assert_eq!(live.resume_due(1_100), None);
        let resumed = live
            .resume_due(1_100 + PAUSE_PAST_LEASE_MS)
            .expect("resumed");
        assert_eq!(resumed.act, ActKind::Resume);
        assert!(!live.paused());
        live.stand_down();
        assert_eq!(
            live.on_event(event(On::Delivery, 2_000)),
            None,
            "stood down"
        );
        let _ = child.kill();
        let _ = child.wait();
    }
}
