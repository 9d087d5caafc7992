//! Running a plan: cases in parallel under a concurrency bound, events out, queues accounted.
//!
//! The runner knows nothing about files or terminals. It sends every evidence record down a
//! channel as it happens; the consumers (evidence file, progress, reports) are independent,
//! as in nextest's reporter design.

use super::call::{CallMeta, record, rfc3339};
use super::case::run_case;
use super::queues::{Registry, run_prefix};
use super::target::TargetKind;
use super::{Halt, HaltReason, RunContext};
use crate::classify;
use crate::conformance::{self, Profile};
use crate::evidence::Masker;
use crate::evidence::format::{CaseEnd, FORMAT, Phase, Record, RunEnd, RunStart, Verdict};
use crate::suite::model::Case;
use chrono::Utc;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{Semaphore, mpsc, watch};

/// A case to run and the suite file it came from.
#[derive(Debug, Clone)]
pub struct PlannedCase {
    pub suite: String,
    pub case: Case,
}

/// Everything a run needs besides its cases.
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub run_id: String,
    pub jobs: usize,
    pub target: TargetKind,
    pub endpoint: Option<String>,
    pub region: String,
    pub target_profile: Option<String>,
    pub protocol: String,
    pub suites: Vec<String>,
    /// The target profile: its unsupported cases are not run, and each finished case is
    /// mapped through it (`conformance::apply`) before its `case_end` is sent.
    pub profile: Option<Arc<Profile>>,
    /// The embedded emulator's chaos spec (canonical form) when `--chaos` was given.
    pub emulator_chaos: Option<String>,
    /// This process's instance id (see [`super::queues::INSTANCE_TAG`]).
    pub instance: String,
}

/// The first record of a run: what it is about to do, and against what.
pub fn run_start(
    settings: &RunSettings,
    plan: &[PlannedCase],
    started_at: chrono::DateTime<Utc>,
) -> RunStart {
    RunStart {
        format: FORMAT.to_string(),
        run_id: settings.run_id.clone(),
        sqsprobe_version: env!("CARGO_PKG_VERSION").to_string(),
        target: settings.target.as_str().to_string(),
        endpoint: settings.endpoint.clone(),
        region: settings.region.clone(),
        target_profile: settings.target_profile.clone(),
        protocol: settings.protocol.clone(),
        started_at: rfc3339(started_at),
        suites: settings.suites.clone(),
        cases: plan.iter().map(|p| p.case.id.clone()).collect(),
        emulator_chaos: settings.emulator_chaos.clone(),
    }
}

/// Why a planned case is not run at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// It checks another wire protocol than the run's (`protocols:`).
    Protocol,
    /// The target profile says the target cannot run it.
    Unsupported,
}

/// Why a planned case will not run at all, with its `case_end` (verdict `unsupported`), if
/// it will not.
pub fn not_runnable(planned: &PlannedCase, settings: &RunSettings) -> Option<(Skip, CaseEnd)> {
    let protocols = &planned.case.protocols;
    if !protocols.is_empty() && !protocols.contains(&settings.protocol) {
        let end = conformance::not_run_end(
            &settings.run_id,
            &planned.suite,
            &planned.case.id,
            &rfc3339(Utc::now()),
            format!(
                "not run: the case checks the {} protocol only; this run uses {}",
                protocols.join(" and "),
                settings.protocol
            ),
            format!("protocols: [{}]", protocols.join(", ")),
        );
        return Some((Skip::Protocol, end));
    }
    settings.profile.as_deref().and_then(|p| {
        conformance::unsupported_end(
            p,
            &settings.run_id,
            &planned.suite,
            &planned.case.id,
            &rfc3339(Utc::now()),
        )
        .map(|end| (Skip::Unsupported, end))
    })
}

/// The `case_end` of a case the run did not start because it had stopped itself.
fn halted_end(planned: &PlannedCase, settings: &RunSettings, why: &HaltReason) -> CaseEnd {
    CaseEnd {
        verdict: Verdict::Error,
        profile_note: None,
        ..conformance::not_run_end(
            &settings.run_id,
            &planned.suite,
            &planned.case.id,
            &rfc3339(Utc::now()),
            format!("not run: the run stopped: {}", why.describe()),
            String::new(),
        )
    }
}

/// What a finished (or interrupted) run produced.
#[derive(Debug)]
pub struct RunOutcome {
    pub cases: Vec<CaseEnd>,
    pub interrupted: bool,
    /// Why the run stopped itself, if it did (one line for the terminal).
    pub halted: Option<HaltReason>,
    /// Owned queues that could not be deleted, by name: a user must know about these.
    pub leftover: Vec<String>,
    pub exit_code: i32,
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("failed to reach the target: {0}")]
    Unreachable(String),
    #[error("the target refused this run's credentials or permissions: {0}; nothing was run")]
    CredentialsRefused(String),
}

/// Checks that the target answers (a ListQueues limited to this run's prefix, which matches
/// nothing yet) before any case creates a queue, so a wrong endpoint is one clear error rather
/// than one per case.
pub async fn preflight(
    client: &aws_sdk_sqs::Client,
    run_id: &str,
    events: &mpsc::UnboundedSender<Record>,
) -> Result<Masker, RunError> {
    let mut masker = Masker::new();
    let meta = CallMeta {
        run_id: run_id.to_string(),
        case: String::new(),
        phase: Phase::Setup,
        step: None,
        line: None,
        action: "ListQueues",
        attempt: None,
        queue: None,
    };
    let prefix = run_prefix(run_id);
    let mut rec = record(meta, &masker, |r| {
        client
            .list_queues()
            .queue_name_prefix(&prefix)
            .customize()
            .interceptor(r)
            .send()
    })
    .await;
    // The signed request names the run's credentials: from now on every output masks them.
    for credential in &rec.credentials {
        masker.add_credential(credential);
    }
    for mut row in rec.rows.drain(..) {
        row.error_message = row.error_message.map(|m| masker.mask(&m));
        let _ = events.send(Record::Call(row));
    }
    match rec.error {
        None => Ok(masker),
        Some(err) if err.kind == super::call::FailureKind::Refused => {
            Err(RunError::CredentialsRefused(err.describe()))
        }
        Some(err) => Err(RunError::Unreachable(err.describe())),
    }
}

/// Runs every planned case, at most `settings.jobs` at a time, until done or `cancel` turns
/// true. Emits `run_start`, each case's records, and `run_end`.
pub async fn run_plan(
    client: aws_sdk_sqs::Client,
    masker: Masker,
    plan: Vec<PlannedCase>,
    settings: &RunSettings,
    registry: Registry,
    events: mpsc::UnboundedSender<Record>,
    cancel: watch::Receiver<bool>,
) -> RunOutcome {
    let started_at = Utc::now();
    let started = Instant::now();
    let _ = events.send(Record::RunStart(run_start(settings, &plan, started_at)));

    let halt = Halt::default();
    let ctx = Arc::new(RunContext {
        client,
        run_id: settings.run_id.clone(),
        instance: settings.instance.clone(),
        masker,
        registry: registry.clone(),
        events: events.clone(),
        cancel: cancel.clone(),
        halt: halt.clone(),
    });
    let permits = Arc::new(Semaphore::new(settings.jobs.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    let mut finished: Vec<(usize, CaseEnd)> = Vec::new();
    // Which case each task runs, so a task that panics still gets a `case_end`.
    let mut spawned = std::collections::HashMap::new();
    for (order, planned) in plan.into_iter().enumerate() {
        let (suite, case_id) = (planned.suite.clone(), planned.case.id.clone());
        if let Some((_, end)) = not_runnable(&planned, settings) {
            let _ = events.send(Record::CaseEnd(end.clone()));
            finished.push((order, end));
            continue;
        }
        let ctx = ctx.clone();
        let permits = permits.clone();
        let cancel = cancel.clone();
        let halted_settings = settings.clone();
        let handle = tasks.spawn(async move {
            let _permit = permits.acquire_owned().await.ok()?;
            if *cancel.borrow() {
                return None;
            }
            if let Some(why) = ctx.halt.reason() {
                return Some((order, halted_end(&planned, &halted_settings, &why)));
            }
            Some((order, run_case(ctx, planned.suite, planned.case).await))
        });
        spawned.insert(handle.id(), (order, suite, case_id));
    }
    while let Some(joined) = tasks.join_next_with_id().await {
        match joined {
            Ok((_, Some((order, end)))) => {
                let end = match settings.profile.as_deref() {
                    Some(p) => conformance::apply(p, end),
                    None => end,
                };
                let _ = events.send(Record::CaseEnd(end.clone()));
                finished.push((order, end));
            }
            Ok((_, None)) => {}
            Err(join_error) => {
                // A panic in a case is a harness bug: the case ends as an error (its queues
                // stay in the registry and are reported as left over) instead of vanishing.
                if let Some((order, suite, case)) = spawned.remove(&join_error.id()) {
                    let end = conformance::not_run_end(
                        &settings.run_id,
                        &suite,
                        &case,
                        &rfc3339(Utc::now()),
                        format!(
                            "internal error: the case task failed ({join_error}); a harness bug"
                        ),
                        String::new(),
                    );
                    let end = CaseEnd {
                        verdict: Verdict::Error,
                        profile_note: None,
                        ..end
                    };
                    let _ = events.send(Record::CaseEnd(end.clone()));
                    finished.push((order, end));
                }
            }
        }
    }
    finished.sort_by_key(|(order, _)| *order);
    let cases: Vec<CaseEnd> = finished.into_iter().map(|(_, e)| e).collect();

    let interrupted = *cancel.borrow();
    let leftover: Vec<String> = registry.remaining().into_iter().map(|q| q.name).collect();
    let mut verdicts: Vec<Verdict> = cases.iter().map(|c| c.verdict).collect();
    if !leftover.is_empty() {
        verdicts.push(Verdict::Error);
    }
    let mut exit_code = classify::exit_code(&verdicts);
    if interrupted {
        exit_code = crate::exit_code::INTERRUPTED;
    }
    let mut totals: BTreeMap<String, u32> = BTreeMap::new();
    for c in &cases {
        *totals.entry(c.verdict.as_str().to_string()).or_default() += 1;
    }
    let _ = events.send(Record::RunEnd(RunEnd {
        run_id: settings.run_id.clone(),
        ended_at: rfc3339(Utc::now()),
        duration_ms: started.elapsed().as_millis() as u64,
        interrupted,
        totals,
        exit_code,
    }));
    RunOutcome {
        cases,
        interrupted,
        halted: halt.reason(),
        leftover,
        exit_code,
    }
}

/// A run id: UTC time to the second plus 8 random hex digits, safe inside a queue name.
pub fn new_run_id() -> String {
    let now = Utc::now();
    // 32 random bits: two runs started in the same second must not share queue names.
    let salt: u32 = rand::random();
    format!("{}-{salt:08x}", now.format("%Y%m%d-%H%M%S"))
}
