//! Bounds on what a case may cost, and the checks that need every file of a run.

use std::collections::BTreeMap;
use std::time::Duration;

use super::diagnostic::Diagnostic;
use super::model::{Action, Case, Fault, FaultKind, Pos, QueueDef, RetryPolicy, Step, Suite};
use super::parse::step_calls;

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
/// A `deny` step counts two calls (setting the policy and removing it); its `for:` does not
/// count, since the next steps go on meanwhile. A `latency` fault adds its delay once for
/// every call it can hit: the attempts of the calls it selects (an observe's up to
/// `max_receives` receives, and up to 10 deletes per receive when it deletes what it sees;
/// three attempts a call under `retries: standard`), less `after`, at most `times`.
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
            Action::Sleep(d) => total = total.saturating_add(*d),
            Action::Observe(o) => {
                total = total.saturating_add(o.window);
                calls = calls.saturating_add(1);
            }
            Action::Receive(r) => {
                let wait = r.wait.unwrap_or_else(|| {
                    queue_wait
                        .get(r.queue.value.as_str())
                        .copied()
                        .unwrap_or(Duration::ZERO)
                });
                total = total.saturating_add(wait);
                calls = calls.saturating_add(1);
            }
            Action::CreateQueue(def) => {
                raise(&mut queue_wait, &def.label, receive_wait_of(def));
                calls = calls.saturating_add(1);
            }
            Action::SetAttributes { queue, attributes } => {
                raise(
                    &mut queue_wait,
                    &queue.value,
                    attributes
                        .get(RECEIVE_WAIT_ATTRIBUTE)
                        .and_then(|v| seconds(v)),
                );
                calls = calls.saturating_add(1);
            }
            Action::Deny(_) => calls = calls.saturating_add(2),
            _ => calls = calls.saturating_add(1),
        }
    }
    let all: Vec<&Step> = case.steps.iter().collect();
    for fault in &case.faults {
        total = total.saturating_add(latency_cost(fault, &all, case.retries));
    }
    for step in &case.steps {
        if let Some(fault) = &step.fault {
            total = total.saturating_add(latency_cost(fault, &[step], case.retries));
        }
    }
    // Saturating: a suite of absurd sleeps is refused by its bound, never an overflow.
    total.saturating_add(CALL_ALLOWANCE.saturating_mul(calls))
}

/// The most delay a fault over `steps` can add: its `delay` for every attempt it can hit.
fn latency_cost(fault: &Fault, steps: &[&Step], retries: RetryPolicy) -> Duration {
    let FaultKind::Latency { delay } = fault.kind else {
        return Duration::ZERO;
    };
    let attempts: u64 = match retries {
        RetryPolicy::None => 1,
        RetryPolicy::Standard => 3,
    };
    let hits: u64 = steps
        .iter()
        .flat_map(|step| fault.actions.iter().map(|op| calls_to(step, &op.value)))
        .sum::<u64>()
        * attempts;
    let hits = hits.saturating_sub(u64::from(fault.after));
    let hits = fault.times.map_or(hits, |t| hits.min(u64::from(t)));
    delay.saturating_mul(u32::try_from(hits).unwrap_or(u32::MAX))
}

/// How many `op` calls a step can make at most.
fn calls_to(step: &Step, op: &str) -> u64 {
    if !step_calls(&step.action).contains(&op) {
        return 0;
    }
    match &step.action {
        Action::Observe(o) if op == "ReceiveMessage" => u64::from(o.max_receives),
        // Each receive answers up to 10 messages, each deleted with its fresh handle.
        Action::Observe(o) => 10 * u64::from(o.max_receives),
        Action::Deny(_) => 2,
        _ => 1,
    }
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
