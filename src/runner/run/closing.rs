//! The records that close a case or the run, each built in one place:
//! - the `case_end` of a case with no run of its own ([`unrun_end`]: skipped, kept from
//!   starting by the run's stop, or its task failed), on [`CaseEnd::unrun`], which the target
//!   profile's unsupported cases are built on too;
//! - the pooled `case_end` of a multi-trial case ([`pooled_end`]);
//! - the run's `run_end` ([`run_end`]), for a run that ran, one stopped at its reachability
//!   check and an empty partition alike.
//!
//! A case that ran closes itself: its `case_end`, or a trial's `trial_end`, is built from its
//! judgement in one place, `runner::case`'s `finish`.

use super::settings::RunSettings;
use super::trials::TrialSet;
use crate::runner::call::rfc3339;
use crate::runner::schedule::PlannedCase;
use sqsprobe_core::classify::{self, StopReason};
use sqsprobe_core::evidence::format::{CaseEnd, LeftQueue, RunEnd, Verdict};
use std::collections::BTreeMap;
use tokio::time::Instant;

/// Why a planned case is closed without a run of its own.
#[derive(Debug)]
pub(super) enum Unrun<'a> {
    /// It cannot apply to this run (`opening::not_runnable`): verdict `unsupported`, the
    /// sentence saying why, and what skipped it (`protocols: [query]`) in `profile_note`.
    Skipped { reason: String, note: String },
    /// The run stopped before it started: an error when the target broke, inconclusive
    /// otherwise (the stop's verdict).
    Halted(&'a StopReason),
    /// Its task failed (a panic: a harness bug); the sentence says so. Its queues stay in the
    /// registry and are reported as left over.
    Failed(String),
}

/// The `case_end` of `planned`, closed now without a run of its own.
pub(super) fn unrun_end(settings: &RunSettings, planned: &PlannedCase, why: Unrun<'_>) -> CaseEnd {
    let (verdict, reason, note) = match why {
        Unrun::Skipped { reason, note } => (Verdict::Unsupported, reason, Some(note)),
        Unrun::Halted(stop) => (
            stop.verdict(),
            format!("not run: the run stopped: {}", stop.describe()),
            None,
        ),
        Unrun::Failed(why) => (Verdict::Error, why, None),
    };
    CaseEnd::unrun(
        &settings.run_id,
        &planned.suite,
        &planned.case.id,
        &rfc3339(settings.clock.now()),
        verdict,
        reason,
        note,
    )
}

/// The `case_end` of a multi-trial case, its trials pooled (`classify::trials::pool`): every
/// started trial counted, a trial whose task failed as an error, and the trials the run never
/// started named in a finding (a pass with any of them is only inconclusive).
pub(super) fn pooled_end(set: &TrialSet, settings: &RunSettings) -> CaseEnd {
    let case = &set.planned.case;
    let mut judged = Vec::new();
    let mut ends = Vec::new();
    for result in set.results.iter().flatten() {
        match result {
            Ok((end, j)) => {
                judged.push(j.clone());
                ends.push(end);
            }
            Err(why) => judged.push(classify::Judgement::task_failed(why.clone())),
        }
    }
    let pooled = classify::trials::pool(
        &judged,
        case.expect.outcome.as_ref(),
        case.expect.rate.as_ref(),
        case.pos.line,
    );
    let mut pooled = pooled;
    classify::trials::account_not_run(&mut pooled, set.not_run, set.n, case.pos.line);
    let (verdict, reason, findings) = (pooled.verdict, pooled.reason, pooled.findings);
    let mut deliveries: BTreeMap<String, u32> = BTreeMap::new();
    for e in &ends {
        for (k, v) in &e.deliveries {
            *deliveries.entry(k.clone()).or_default() += v;
        }
    }
    let ended_at = settings.clock.now();
    // A set is closed only once a trial started (`TrialSet::is_complete`); a start never
    // noted reads as a case of no duration rather than a made-up one.
    let started_at = set.started_at.unwrap_or(ended_at);
    CaseEnd {
        run_id: settings.run_id.clone(),
        case: case.id.clone(),
        suite: set.planned.suite.clone(),
        verdict,
        reason,
        findings,
        classification: None,
        outcomes: Vec::new(),
        decision: None,
        window: None,
        receives: ends.iter().map(|e| e.receives).sum(),
        deliveries,
        queues: ends.iter().flat_map(|e| e.queues.clone()).collect(),
        profile_note: None,
        started_at: rfc3339(started_at),
        ended_at: rfc3339(ended_at),
        duration_ms: (ended_at - started_at).num_milliseconds().max(0) as u64,
        trial: None,
        trials: Some(pooled.trials),
    }
}

/// How a run ended, besides what its settings, its clock and its request count say.
#[derive(Debug, Default)]
pub(crate) struct RunClose<'a> {
    /// Its `case_end`s: `totals` counts their verdicts.
    pub cases: &'a [CaseEnd],
    /// The one code the run exits with (see `classify::run_exit_code`).
    pub exit_code: i32,
    /// A signal interrupted it.
    pub interrupted: bool,
    /// Owned queues it could not prove deleted.
    pub left_queues: Vec<LeftQueue>,
    /// Why it stopped itself, if it did (`halted`, one line).
    pub halted: Option<StopReason>,
    /// The stop its exit code followed: the greater of a signal and its own (`stop`).
    pub stop: Option<StopReason>,
}

/// The `run_end` of a run that began at `started`, stamped now: its totals counted from its
/// cases, its requests (every attempt, the reachability check's included) and their price
/// read from the run's count. A merge of partitions combines theirs (`evidence::merge`).
pub(crate) fn run_end(settings: &RunSettings, started: Instant, close: RunClose<'_>) -> RunEnd {
    let mut totals: BTreeMap<String, u32> = BTreeMap::new();
    for c in close.cases {
        *totals.entry(c.verdict.as_str().to_string()).or_default() += 1;
    }
    let (standard, fifo) = settings.usage.counts();
    RunEnd {
        run_id: settings.run_id.clone(),
        ended_at: rfc3339(settings.clock.now()),
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        interrupted: close.interrupted,
        totals,
        exit_code: close.exit_code,
        requests: Some(standard + fifo),
        fifo_requests: Some(fifo),
        cost_usd: Some(sqsprobe_facts::sqs::pricing::cost_usd(standard, fifo)),
        left_queues: close.left_queues,
        halted: close.halted.map(|why| why.describe()),
        stop: close.stop.as_ref().map(classify::recorded::stop_facts),
    }
}
