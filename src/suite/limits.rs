//! Bounds on what a case may cost, and the checks that need every file of a run.

use std::collections::BTreeMap;
use std::time::Duration;

use super::diagnostic::Diagnostic;
use super::model::{Action, Case, Pos, QueueDef, Suite};

/// Allowance for one SQS call in [`case_budget`] (request, response, and a slow endpoint).
pub const CALL_ALLOWANCE: Duration = Duration::from_secs(2);

/// Bounds every case must stay within; a case over them is refused at parse time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest [`case_budget`] a case may have (default 5 minutes).
    pub max_case_duration: Duration,
    /// The same for cases tagged `slow`, which run only when asked and may wait out SQS's own
    /// long intervals (the 5-minute FIFO deduplication window): default 15 minutes.
    pub max_slow_case_duration: Duration,
    /// The most ReceiveMessage calls one `observe` step may make (default 100).
    pub max_observe_receives: u32,
    /// The largest suite file read, in bytes (default 4 MiB); a larger one is an invalid
    /// suite, refused before it is read whole.
    pub max_suite_bytes: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_case_duration: Duration::from_secs(5 * 60),
            max_slow_case_duration: Duration::from_secs(15 * 60),
            max_observe_receives: 100,
            max_suite_bytes: 4 * 1024 * 1024,
        }
    }
}

impl Limits {
    /// The bound that applies to `case`: the slow one for cases tagged `slow`.
    pub fn max_for(&self, case: &Case) -> Duration {
        if case.tags.iter().any(|t| t == "slow") {
            self.max_slow_case_duration
        } else {
            self.max_case_duration
        }
    }
}

/// The AWS attribute a receive without `wait` takes its long-poll time from.
const RECEIVE_WAIT_ATTRIBUTE: &str = "ReceiveMessageWaitTimeSeconds";
/// The longest ReceiveMessageWaitTimeSeconds AWS accepts; a larger value is refused, so it
/// is never in effect.
const MAX_RECEIVE_WAIT: Duration = Duration::from_secs(20);

/// The longest a case can take: every sleep, every receive's wait, every observe window,
/// plus [`CALL_ALLOWANCE`] per SQS call. The calls are each step that calls SQS (an observe
/// counts one, for the receive in flight when its window closes) and a create and a delete
/// for each queue under `queues:` that the runner creates. The runner uses it as the case's
/// deadline.
///
/// A receive without `wait:` long-polls for its queue's ReceiveMessageWaitTimeSeconds, as AWS
/// does: the most that queue may have at that step, from `queues:`, `create-queue` and
/// `set-attributes` (typed `receive_wait` or the raw attribute), at most 20 s.
pub fn case_budget(case: &Case) -> Duration {
    let mut total = Duration::ZERO;
    let mut calls: u32 = case.queues.iter().filter(|q| q.create).count() as u32 * 2;
    let mut queue_wait: BTreeMap<&str, Duration> = BTreeMap::new();
    for def in &case.queues {
        raise(&mut queue_wait, &def.label, receive_wait_of(def));
    }
    for step in &case.steps {
        match &step.action {
            Action::Sleep(d) => total += *d,
            Action::Observe(o) => {
                total += o.window;
                calls += 1;
            }
            Action::Receive(r) => {
                total += r.wait.unwrap_or_else(|| {
                    queue_wait
                        .get(r.queue.value.as_str())
                        .copied()
                        .unwrap_or(Duration::ZERO)
                });
                calls += 1;
            }
            Action::CreateQueue(def) => {
                raise(&mut queue_wait, &def.label, receive_wait_of(def));
                calls += 1;
            }
            Action::SetAttributes { queue, attributes } => {
                raise(
                    &mut queue_wait,
                    &queue.value,
                    attributes
                        .get(RECEIVE_WAIT_ATTRIBUTE)
                        .and_then(|v| seconds(v)),
                );
                calls += 1;
            }
            _ => calls += 1,
        }
    }
    total + CALL_ALLOWANCE * calls
}

/// Raises `label`'s longest possible wait to `wait`, capped at what AWS accepts.
fn raise<'c>(waits: &mut BTreeMap<&'c str, Duration>, label: &'c str, wait: Option<Duration>) {
    if let Some(w) = wait {
        let w = w.min(MAX_RECEIVE_WAIT);
        let entry = waits.entry(label).or_default();
        *entry = (*entry).max(w);
    }
}

/// The wait a queue definition sets: the raw attribute (applied last) or the typed key,
/// whichever is longer.
fn receive_wait_of(def: &QueueDef) -> Option<Duration> {
    let raw = def
        .attributes
        .get(RECEIVE_WAIT_ATTRIBUTE)
        .and_then(|v| seconds(v));
    raw.max(def.receive_wait)
}

/// A whole number of seconds as AWS reads an attribute value (`"20"`).
fn seconds(value: &str) -> Option<Duration> {
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// Checks across the files of one run: a case id may be used once (ids go into queue names
/// and evidence). The error is at the later case and names the first one's `file:line`.
pub fn check_run(suites: &[Suite]) -> Vec<Diagnostic> {
    let mut seen: BTreeMap<&str, (&str, Pos)> = BTreeMap::new();
    let mut diags = Vec::new();
    for suite in suites {
        for case in &suite.cases {
            match seen.get(case.id.as_str()) {
                Some((path, first)) => diags.push(
                    Diagnostic::new(
                        &suite.path,
                        case.pos,
                        case.id.chars().count() as u32,
                        format!(
                            "duplicate case id `{}`, first used at {path}:{}",
                            case.id, first.line
                        ),
                    )
                    .with_hint("case ids are unique across every suite of a run"),
                ),
                None => {
                    seen.insert(&case.id, (&suite.path, case.pos));
                }
            }
        }
    }
    diags
}
