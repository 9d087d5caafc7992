//! The live board of a run on a terminal: one line per running case with the phase it waits
//! in and the time left in it, cases past their expected time flagged `SLOW` (nextest's
//! style). Pure: records and instants in, lines out; [`super::live`] draws it.
//!
//! What a case is doing is read from its records as they arrive: a `call` row says its phase
//! (setup, a step, the observe window, teardown) and step; a `step` row says that step is over,
//! so the case is in the next one (a sleep makes no call, so this is how a sleep is seen). The
//! plan says what each step waits for (a sleep's length, a window, a receive's wait), which is
//! where "time left" comes from.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use sqsprobe_core::evidence::Record;
use sqsprobe_core::evidence::format::Phase;
use sqsprobe_core::suite::model::{Action, Case};
use sqsprobe_facts::text::escape::terminal as plain;

/// A case is SLOW once it has run this much longer than its planned waits.
pub const SLOW_MARGIN: Duration = Duration::from_secs(2);

/// What the board knows of a case before it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct CasePlan {
    pub id: String,
    /// Per step: its keyword and how long it waits by design (sleep, window, receive wait).
    pub steps: Vec<(&'static str, Option<Duration>)>,
    /// Its planned waits in total ([`sqsprobe_core::suite::case_waits`]).
    pub expected: Duration,
    /// Trials it runs (1 for most).
    pub trials: u32,
}

impl CasePlan {
    /// The plan of `case`, as the board needs it.
    pub fn of(case: &Case) -> CasePlan {
        let steps = case
            .steps
            .iter()
            .map(|s| {
                let waits = match &s.action {
                    Action::Sleep(d) => Some(*d),
                    Action::Observe(o) => Some(o.window),
                    Action::Receive(r) => r.wait,
                    _ => None,
                };
                (s.action.keyword(), waits)
            })
            .collect();
        CasePlan {
            id: case.id.clone(),
            steps,
            expected: sqsprobe_core::suite::case_waits(case),
            trials: case.trials.max(1),
        }
    }
}

/// Where a running case is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Where {
    Setup,
    /// In step `i` (0-based): a call of it was seen, or the step before it finished.
    Step(usize),
    /// In the observe window of step `i`.
    Observe(usize),
    Teardown,
}

#[derive(Debug, Clone)]
struct Running {
    started: Instant,
    at: Where,
    /// When it entered `at`.
    since: Instant,
    trials_done: u32,
}

/// The running cases and how far the run is.
#[derive(Debug, Clone)]
pub struct Board {
    plans: BTreeMap<String, CasePlan>,
    running: BTreeMap<String, Running>,
    /// Start order, so lines keep their place while cases come and go.
    order: Vec<String>,
    done: usize,
    total: usize,
}

impl Board {
    /// A board for a run of `plans` (one per case).
    pub fn new(plans: Vec<CasePlan>) -> Board {
        let total = plans.len();
        Board {
            plans: plans.into_iter().map(|p| (p.id.clone(), p)).collect(),
            running: BTreeMap::new(),
            order: Vec::new(),
            done: 0,
            total,
        }
    }

    /// Cases finished so far, and in the run.
    pub fn counts(&self) -> (usize, usize) {
        (self.done, self.total)
    }

    /// Takes in one record, seen at `now`.
    pub fn apply(&mut self, record: &Record, now: Instant) {
        match record {
            Record::CaseStart(start) => {
                self.running.insert(
                    start.case.clone(),
                    Running {
                        started: now,
                        at: Where::Setup,
                        since: now,
                        trials_done: 0,
                    },
                );
                self.order.retain(|c| c != &start.case);
                self.order.push(start.case.clone());
            }
            Record::Call(call) => {
                let Some(r) = self.running.get_mut(&call.case) else {
                    return;
                };
                let at = match (call.phase, call.step) {
                    (Phase::Setup, _) => Where::Setup,
                    (Phase::Teardown, _) => Where::Teardown,
                    (Phase::Observe, Some(i)) => Where::Observe(i),
                    (Phase::Step, Some(i)) => Where::Step(i),
                    _ => r.at,
                };
                // The observe window runs from its first receive: keep its start.
                if at != r.at {
                    r.at = at;
                    r.since = now;
                }
            }
            Record::Step(step) => {
                if let Some(r) = self.running.get_mut(&step.case) {
                    r.at = Where::Step(step.step + 1);
                    r.since = now;
                }
            }
            Record::TrialEnd(end) => {
                if let Some(r) = self.running.get_mut(&end.case) {
                    r.trials_done += 1;
                }
            }
            Record::CaseEnd(end) => {
                if self.running.remove(&end.case).is_some() || self.plans.contains_key(&end.case) {
                    self.done += 1;
                }
                self.order.retain(|c| c != &end.case);
            }
            _ => {}
        }
    }

    /// The board's lines at `now`, at most `max_lines` (the last says how many more run), each
    /// cut to `width` columns so that none wraps (a wrapped line would break the redraw).
    pub fn lines(&self, now: Instant, width: usize, max_lines: usize) -> Vec<String> {
        let mut out = Vec::new();
        let shown = if self.order.len() > max_lines {
            max_lines.saturating_sub(1)
        } else {
            self.order.len()
        };
        for id in self.order.iter().take(shown) {
            let (Some(r), Some(plan)) = (self.running.get(id), self.plans.get(id)) else {
                continue;
            };
            out.push(cut(&self.line(id, r, plan, now), width));
        }
        if self.order.len() > shown {
            out.push(cut(
                &format!("    ... and {} more running", self.order.len() - shown),
                width,
            ));
        }
        out
    }

    fn line(&self, id: &str, r: &Running, plan: &CasePlan, now: Instant) -> String {
        let elapsed = now.saturating_duration_since(r.started);
        let label = if elapsed > plan.expected + SLOW_MARGIN {
            "SLOW"
        } else {
            "RUNNING"
        };
        let in_phase = now.saturating_duration_since(r.since);
        let phase = match r.at {
            Where::Setup => "creating queues".to_string(),
            Where::Teardown => "tearing down".to_string(),
            Where::Step(i) if i >= plan.steps.len() => "judging".to_string(),
            Where::Step(i) => {
                let (keyword, waits) = plan.steps[i];
                match (keyword, waits) {
                    ("observe", _) => format!("step {} observe", i + 1),
                    (k, Some(w)) => format!("step {} {k}: {} left", i + 1, left(w, in_phase)),
                    (k, None) => format!("step {} {k}", i + 1),
                }
            }
            Where::Observe(i) => {
                let window = plan.steps.get(i).and_then(|s| s.1).unwrap_or_default();
                format!(
                    "step {} observe: {} left of {}",
                    i + 1,
                    left(window, in_phase),
                    secs(window)
                )
            }
        };
        let trials = if plan.trials > 1 {
            format!("  (trials {}/{} done)", r.trials_done, plan.trials)
        } else {
            String::new()
        };
        format!(
            "{label:>16} [{:>6.1}s] {}  {phase}{trials}",
            elapsed.as_secs_f64(),
            plain(id)
        )
    }
}

/// `1.2s`: what remains of `of` after `spent`, never negative.
fn left(of: Duration, spent: Duration) -> String {
    secs(of.saturating_sub(spent))
}

fn secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

fn cut(line: &str, width: usize) -> String {
    if width == 0 || line.chars().count() <= width {
        return line.to_string();
    }
    let mut s: String = line.chars().take(width.saturating_sub(1)).collect();
    s.push('…');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_core::evidence::fixtures;
    use sqsprobe_core::evidence::format::{StepEnd, Verdict};

    fn step_end(case: &str, step: usize) -> Record {
        Record::Step(StepEnd {
            run_id: fixtures::RUN.to_string(),
            case: case.to_string(),
            step,
            line: 10,
            keyword: "receive".to_string(),
            started_at: fixtures::at(0),
            ended_at: fixtures::at(0),
            check: sqsprobe_core::evidence::facts::CheckKind::Pass,
            trial: None,
        })
    }

    fn observe_call(case: &str, step: usize) -> Record {
        let mut call = fixtures::call(case, Phase::Observe, "ReceiveMessage", 0, 1);
        call.step = Some(step);
        Record::Call(call)
    }

    fn case_end(case: &str) -> Record {
        Record::CaseEnd(fixtures::case_end(case, Verdict::Pass, "ok", &[]))
    }

    fn plan() -> CasePlan {
        CasePlan {
            id: "stale-handle".into(),
            steps: vec![
                ("send", None),
                ("receive", None),
                ("sleep", Some(Duration::from_millis(1500))),
                ("observe", Some(Duration::from_secs(4))),
            ],
            expected: Duration::from_millis(5500),
            trials: 1,
        }
    }

    #[test]
    fn a_case_is_followed_through_its_phases() {
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let mut board = Board::new(vec![plan()]);
        board.apply(&fixtures::case_start("stale-handle", 3), at(0));
        assert!(board.lines(at(10), 0, 10)[0].contains("creating queues"));

        // Step 1 (the receive) finished: the sleep is next, and makes no call.
        board.apply(&step_end("stale-handle", 1), at(200));
        let line = &board.lines(at(700), 0, 10)[0];
        assert!(line.contains("step 3 sleep: 1.0s left"), "{line}");

        board.apply(&observe_call("stale-handle", 3), at(1700));
        board.apply(&observe_call("stale-handle", 3), at(2700));
        let line = &board.lines(at(2700), 0, 10)[0];
        assert!(
            line.contains("step 4 observe: 3.0s left of 4.0s"),
            "the window runs from its first receive: {line}"
        );
        assert!(line.trim_start().starts_with("RUNNING"), "{line}");

        // Past its planned 5.5 s by more than the margin: SLOW.
        assert!(
            board.lines(at(7600), 0, 10)[0]
                .trim_start()
                .starts_with("SLOW")
        );

        board.apply(&case_end("stale-handle"), at(8000));
        assert!(board.lines(at(8000), 0, 10).is_empty());
        assert_eq!(board.counts(), (1, 1));
    }

    #[test]
    fn lines_never_wrap_and_overflow_is_counted() {
        let t0 = Instant::now();
        let plans: Vec<CasePlan> = (0..5)
            .map(|i| CasePlan {
                id: format!("case-with-a-long-name-{i}"),
                ..plan()
            })
            .collect();
        let mut board = Board::new(plans);
        for i in 0..5 {
            board.apply(
                &fixtures::case_start(&format!("case-with-a-long-name-{i}"), 3),
                t0,
            );
        }
        let lines = board.lines(t0, 30, 3);
        assert_eq!(lines.len(), 3);
        assert!(lines.iter().all(|l| l.chars().count() <= 30), "{lines:?}");
        assert!(lines[2].contains("3 more running"), "{lines:?}");
    }
}
