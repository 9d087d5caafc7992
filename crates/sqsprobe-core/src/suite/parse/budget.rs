//! What a case costs in time: its budget (the longest it can take: the runner's deadline for
//! it, and what [`Limits`](crate::suite::Limits) bounds when [`case`](super::case) refuses a
//! case over it) and its expected waits. Counted from the step table ([`super::steps`]: which
//! SQS calls each step makes), so it lives beside the table in the parser; the bounds
//! themselves (`suite/limits.rs`) are handed to the step decoders and import nothing back.

use std::collections::BTreeMap;
use std::time::Duration;

use super::steps::step_calls;
use crate::suite::model::{Action, Case, Fault, FaultKind, QueueDef, QueueKind, RetryPolicy, Step};

/// Allowance for one SQS call in [`case_budget`] (request, response, and a slow endpoint).
pub const CALL_ALLOWANCE: Duration = Duration::from_secs(2);

/// The AWS attribute a receive without `wait` takes its long-poll time from.
const RECEIVE_WAIT_ATTRIBUTE: &str = "ReceiveMessageWaitTimeSeconds";
/// The longest ReceiveMessageWaitTimeSeconds AWS accepts; a larger value is refused, so it
/// is never in effect.
const MAX_RECEIVE_WAIT: Duration = Duration::from_secs(20);

/// The most SQS requests one run of a case (one trial) makes when every call answers at once:
/// a create and a delete per queue under `queues:` the runner creates, each step's calls, an
/// observe's `max_receives` receives (and, with `delete: true`, a delete per receive: what a
/// watch of one message at a time deletes), a deny's two. Under `retries: standard` every call
/// may be tried three times. An estimate for a dry run, not a bound on what a target makes a
/// case do (a batch's failed entries, an observe that sees many messages per receive).
pub fn case_requests(case: &Case) -> CaseRequests {
    let attempts: u64 = match case.retries {
        RetryPolicy::None => 1,
        RetryPolicy::Standard => 3,
    };
    let mut requests = CaseRequests {
        standard: 2 * case.queues.iter().filter(|q| q.create).count() as u64,
        fifo: 0,
    };
    // Upper bound on the price: with any FIFO queue in the case, its message operations are
    // counted at the FIFO rate.
    let any_fifo = case
        .queues
        .iter()
        .chain(case.steps.iter().filter_map(|s| match &s.action {
            Action::CreateQueue(def) => Some(def),
            _ => None,
        }))
        .any(|q| q.kind == QueueKind::Fifo);
    for step in &case.steps {
        for op in step_calls(&step.action) {
            let n = match &step.action {
                Action::Observe(o) if *op != "ReceiveMessage" => u64::from(o.max_receives),
                _ => calls_to(step, op),
            } * attempts;
            let fifo_rate = any_fifo
                && sqsprobe_facts::sqs::operations::by_name(op).is_some_and(|o| o.fifo_billed);
            if fifo_rate {
                requests.fifo += n;
            } else {
                requests.standard += n;
            }
        }
    }
    requests
}

/// SQS requests by the rate they are billed at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CaseRequests {
    /// Billed at the standard rate.
    pub standard: u64,
    /// Billed at the FIFO rate.
    pub fifo: u64,
}

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
    let (waits, calls) = case_waits_and_calls(case);
    // Saturating: a suite of absurd sleeps is refused by its bound, never an overflow.
    waits.saturating_add(CALL_ALLOWANCE.saturating_mul(calls))
}

/// How long a case is expected to take when every call answers at once: its sleeps, receive
/// waits, observe windows and latency faults, as [`case_budget`] counts them, without the
/// per-call allowance. A live run flags a case still running past this (plus a margin) SLOW.
pub fn case_waits(case: &Case) -> Duration {
    case_waits_and_calls(case).0
}

/// The waiting part of [`case_budget`] and the number of calls it allows time for.
fn case_waits_and_calls(case: &Case) -> (Duration, u32) {
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
    (total, calls)
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
