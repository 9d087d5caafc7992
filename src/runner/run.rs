//! Running a plan: cases in parallel under a concurrency bound, events out, queues accounted.
//!
//! The runner knows nothing about files or terminals. It sends every evidence record down a
//! channel as it happens; the consumers (evidence file, progress, reports) are independent,
//! as in nextest's reporter design.

use super::call::{CallMeta, record, rfc3339};
use super::case::{run_case, run_trial};
use super::queues::{Registry, run_prefix};
use super::schedule::PlannedCase;
use super::target::TargetKind;
use super::{Halt, RunContext};
use crate::classify::{self, StopReason};
use crate::conformance::{self, Profile};
use crate::evidence::Masker;
use crate::evidence::format::{
    CaseEnd, FORMAT, LeftQueue, Phase, Record, RunEnd, RunStart, Verdict,
};
use crate::suite::model::Case;
use chrono::Utc;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use tokio::sync::{Semaphore, mpsc, watch};
use tokio::time::Instant;

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
    /// The timeout of one attempt of a call without a long poll (`--call-timeout`).
    pub call_timeout: std::time::Duration,
    /// Calls in a row without a response after which the target counts as lost.
    pub lost_after: u32,
    /// `--max-duration`: the run stops cleanly (cases cut, teardown done) once it has run this
    /// long.
    pub max_duration: Option<std::time::Duration>,
    /// The run's request count and budget (`--max-requests`), shared with the reachability
    /// check so that it counts too.
    pub usage: Arc<super::policy::Usage>,
    /// `K/N` when this run is one partition of a split selection.
    pub partition: Option<String>,
    /// The run's seed (`--seed`, else random): recorded in `run_start`, and every case's
    /// fault dice are drawn from it, so the same seed and suite inject the same faults.
    pub seed: u64,
    /// `--trials N`: run every case at least N times (a case keeps a larger `trials:`).
    pub trials: Option<u32>,
    /// The run's clock (`--clock`): every timestamp comes from it, and `run_start` names it.
    pub clock: super::RunClock,
    /// `--regions`: the only regions the run may touch (an SCP may allow no others); a case
    /// whose queues are elsewhere is not run (`unsupported`, saying which region).
    pub allowed_regions: Option<Vec<String>>,
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
        partition: settings.partition.clone(),
        seed: Some(settings.seed),
        merged: None,
        clock: Some(settings.clock.kind().as_str().to_string()),
        regions: run_regions(settings, plan),
    }
}

/// Every region the run will touch: its own, and each region the cases that will run name.
fn run_regions(settings: &RunSettings, plan: &[PlannedCase]) -> Vec<String> {
    let mut regions = vec![settings.region.clone()];
    for p in plan.iter().filter(|p| not_runnable(p, settings).is_none()) {
        regions.extend(p.case.regions().into_iter().map(str::to_string));
    }
    regions.sort();
    regions.dedup();
    regions
}

/// Why a planned case is not run at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// It checks another wire protocol than the run's (`protocols:`).
    Protocol,
    /// The target profile says the target cannot run it.
    Unsupported,
    /// Its queues are in a region outside `--regions`.
    Region,
}

/// Why a planned case will not run at all, with its `case_end` (verdict `unsupported`), if
/// it will not.
pub fn not_runnable(planned: &PlannedCase, settings: &RunSettings) -> Option<(Skip, CaseEnd)> {
    let protocols = &planned.case.protocols;
    if !protocols.is_empty() && !protocols.contains(&settings.protocol) {
        let skipped = Unrun::Skipped {
            reason: format!(
                "not run: the case checks the {} protocol only; this run uses {}",
                protocols.join(" and "),
                settings.protocol
            ),
            note: format!("protocols: [{}]", protocols.join(", ")),
        };
        return Some((Skip::Protocol, unrun_end(settings, planned, skipped)));
    }
    if let Some(allowed) = &settings.allowed_regions {
        let outside: Vec<&str> = planned
            .case
            .regions()
            .into_iter()
            .filter(|r| !allowed.iter().any(|a| a == r))
            .collect();
        if !outside.is_empty() {
            let skipped = Unrun::Skipped {
                reason: format!(
                    "not run: the case's queues are in {}, outside --regions {}",
                    outside.join(", "),
                    allowed.join(",")
                ),
                note: format!("regions: [{}]", outside.join(", ")),
            };
            return Some((Skip::Region, unrun_end(settings, planned, skipped)));
        }
    }
    // The profile's own sentence and note (`conformance::unsupported_end`), through the same
    // constructor as every other case_end without a run.
    settings.profile.as_deref().and_then(|p| {
        conformance::unsupported_end(
            p,
            &settings.run_id,
            &planned.suite,
            &planned.case.id,
            &rfc3339(settings.clock.now()),
        )
        .map(|end| (Skip::Unsupported, end))
    })
}

/// Why a planned case is closed without a run of its own.
#[derive(Debug)]
pub enum Unrun<'a> {
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
pub fn unrun_end(settings: &RunSettings, planned: &PlannedCase, why: Unrun<'_>) -> CaseEnd {
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

/// What a finished (or interrupted) run produced.
#[derive(Debug)]
pub struct RunOutcome {
    pub cases: Vec<CaseEnd>,
    pub interrupted: bool,
    /// Why the run stopped itself, if it did (one line for the terminal).
    pub halted: Option<StopReason>,
    /// Owned queues that could not be proven deleted: a user must know about these (also in
    /// `run_end.left_queues`).
    pub leftover: Vec<LeftQueue>,
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
    clock: super::RunClock,
    run_id: &str,
    usage: &super::policy::Usage,
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
        wait: None,
        trial: None,
        label: None,
        region: None,
        clock,
        wire: None,
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
    usage.add(&rec.rows);
    // The signed request names the run's credentials: from now on every output masks them.
    // The fixed, public keys of the embedded and endpoint targets are no secret.
    for credential in rec
        .credentials
        .iter()
        .filter(|c| !super::target::is_fixed_key(c))
    {
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
    let started_at = settings.clock.now();
    let started = Instant::now();
    let _ = events.send(Record::RunStart(run_start(settings, &plan, started_at)));

    let halt = Halt::new(cancel.clone());
    let http = super::faults::base_http_client(&client);
    let ctx = Arc::new(RunContext {
        client,
        run_id: settings.run_id.clone(),
        instance: settings.instance.clone(),
        masker,
        registry: registry.clone(),
        events: events.clone(),
        cancel: cancel.clone(),
        halt: halt.clone(),
        call_timeout: settings.call_timeout,
        health: super::policy::Health::new(settings.lost_after),
        usage: settings.usage.clone(),
        seed: settings.seed,
        http,
        target: settings.target,
        emulator_chaos: settings
            .emulator_chaos
            .as_deref()
            .and_then(|spec| crate::emulator::Chaos::parse(spec).ok())
            .filter(|_| settings.target == TargetKind::Embedded),
        region: settings.region.clone(),
        clock: settings.clock,
    });
    // The time budget: past it the run stops itself like a spent request budget.
    let timer = settings.max_duration.map(|d| {
        let halt = halt.clone();
        tokio::spawn(async move {
            tokio::time::sleep(d).await;
            halt.set(StopReason::Budget(format!(
                "the time budget (--max-duration {})",
                crate::duration::format(d)
            )));
        })
    });
    let permits = Arc::new(Semaphore::new(settings.jobs.max(1)));
    let mut tasks: tokio::task::JoinSet<Done> = tokio::task::JoinSet::new();
    let mut finished: Vec<(usize, CaseEnd)> = Vec::new();
    // Which case each task runs, so a task that panics still gets a `case_end`.
    // Which unit each task runs, so a task that panics still gets its `case_end`.
    let mut spawned: HashMap<tokio::task::Id, (usize, PlannedCase, Option<u32>)> = HashMap::new();
    // Longest first: the run's wall time is bounded by its longest case, not by the tail.
    // A multi-trial case is one unit per trial, run on fresh queues, concurrently like cases.
    let start_order = super::schedule::longest_first(&plan);
    let mut slots: Vec<Option<PlannedCase>> = plan.into_iter().map(Some).collect();
    let planned: Vec<(usize, PlannedCase)> = start_order
        .into_iter()
        .filter_map(|i| slots[i].take().map(|p| (i, p)))
        .collect();
    let mut pending: HashMap<usize, TrialSet> = HashMap::new();
    let mut units = std::collections::VecDeque::new();
    for (order, p) in planned {
        if let Some((_, end)) = not_runnable(&p, settings) {
            // Cases that cannot run are answered at once, without a slot.
            let _ = events.send(Record::CaseEnd(end.clone()));
            finished.push((order, end));
            continue;
        }
        let n = trials_of(&p.case, settings.trials);
        if n > 1 || p.case.expect.rate.is_some() {
            pending.insert(order, TrialSet::new(n, p.clone(), settings.clock.now()));
            for k in 1..=n {
                units.push_back((order, p.clone(), Some(k)));
            }
        } else {
            units.push_back((order, p, None));
        }
    }
    let mut cancelled = cancel.clone();
    loop {
        if *cancelled.borrow() {
            // Interrupted: what has not started does not start (it has no case_end).
            units.clear();
        }
        if let Some(why) = halt.reason()
            && let Some((order, p, trial)) = units.pop_front()
        {
            match trial {
                None => {
                    let end = unrun_end(settings, &p, Unrun::Halted(&why));
                    let _ = events.send(Record::CaseEnd(end.clone()));
                    finished.push((order, end));
                }
                Some(_) => {
                    if let Some(set) = pending.get_mut(&order) {
                        set.not_run += 1;
                    }
                }
            }
            if let Some(end) = complete(&mut pending, order, settings) {
                let _ = events.send(Record::CaseEnd(end.clone()));
                finished.push((order, end));
            }
            continue;
        }
        if units.is_empty() && tasks.is_empty() {
            break;
        }
        tokio::select! {
            // Finished cases first, so their records go out as soon as they exist.
            biased;
            Some(joined) = tasks.join_next_with_id(), if !tasks.is_empty() => {
                let (order, p, trial) = match &joined {
                    Ok((_, done)) => (done.order, done.planned.clone(), done.trial),
                    Err(e) => match spawned.remove(&e.id()) {
                        Some(unit) => unit,
                        None => continue,
                    },
                };
                spawned.remove(&joined.as_ref().map(|(id, _)| *id).unwrap_or_else(|e| e.id()));
                let outcome = match joined {
                    Ok((_, done)) => Ok((done.end, done.judged)),
                    // A panic in a case is a harness bug: the case ends as an error (its
                    // queues stay in the registry and are reported as left over) instead of
                    // vanishing.
                    Err(join_error) => Err(format!(
                        "internal error: the case task failed ({join_error}); a harness bug"
                    )),
                };
                match (trial, outcome) {
                    (None, Ok((end, _))) => {
                        let end = match settings.profile.as_deref() {
                            Some(prof) => conformance::apply(prof, end),
                            None => end,
                        };
                        let _ = events.send(Record::CaseEnd(end.clone()));
                        finished.push((order, end));
                    }
                    (None, Err(why)) => {
                        let end = unrun_end(settings, &p, Unrun::Failed(why));
                        let _ = events.send(Record::CaseEnd(end.clone()));
                        finished.push((order, end));
                    }
                    (Some(k), result) => {
                        if let Some(set) = pending.get_mut(&order) {
                            set.done(k, result);
                        }
                        if let Some(end) = complete(&mut pending, order, settings) {
                            let _ = events.send(Record::CaseEnd(end.clone()));
                            finished.push((order, end));
                        }
                    }
                }
            }
            permit = permits.clone().acquire_owned(), if !units.is_empty() => {
                let Ok(permit) = permit else { break };
                let Some((order, p, trial)) = units.pop_front() else { continue };
                if let Some(k) = trial
                    && let Some(set) = pending.get_mut(&order)
                    && !set.started
                {
                    // One case_start for all the trials, before the first of them.
                    set.started = true;
                    set.started_at = settings.clock.now();
                    let start = super::case::case_start(
                        &settings.run_id, &p.suite, &p.case, set.started_at, Some(set.n),
                        settings.target,
                    );
                    let _ = events.send(Record::CaseStart(start));
                    let _ = k;
                }
                let ctx = ctx.clone();
                let unit = (order, p.clone(), trial);
                let handle = tasks.spawn(async move {
                    let _permit = permit;
                    let (end, judged) = match trial {
                        Some(k) => {
                            let (end, judged) =
                                run_trial(ctx, p.suite.clone(), p.case.clone(), k).await;
                            (end, Some(judged))
                        }
                        None => (run_case(ctx, p.suite.clone(), p.case.clone()).await, None),
                    };
                    Done { order, planned: p, trial, end, judged }
                });
                spawned.insert(handle.id(), unit);
            }
            _ = cancelled.wait_for(|c| *c), if !units.is_empty() => {}
            _ = halt.stopped(), if !units.is_empty() && halt.reason().is_none() => {}
        }
    }
    // Multi-trial cases cut short (interrupted) still say what their finished trials found;
    // one that had not started has no case_end, like any case that had not.
    let open: Vec<usize> = pending.keys().copied().collect();
    for order in open {
        if let Some(set) = pending.get_mut(&order)
            && set.started
        {
            set.not_run = set.n - set.finished();
        }
        if let Some(end) = complete(&mut pending, order, settings) {
            let _ = events.send(Record::CaseEnd(end.clone()));
            finished.push((order, end));
        }
    }
    if let Some(timer) = timer {
        timer.abort();
    }
    finished.sort_by_key(|(order, _)| *order);
    let cases: Vec<CaseEnd> = finished.into_iter().map(|(_, e)| e).collect();

    let interrupted = *cancel.borrow();
    let leftover: Vec<LeftQueue> = registry
        .remaining()
        .into_iter()
        .map(|q| LeftQueue {
            region: q.region,
            queue: q.name,
            case: q.case,
        })
        .collect();
    let mut verdicts: Vec<Verdict> = cases.iter().map(|c| c.verdict).collect();
    if !leftover.is_empty() {
        verdicts.push(Verdict::Error);
    }
    // A cut run exits with its cut's code: what the cases that finished said is a sample the
    // cut chose (the early finishers), not the run's answer.
    let exit_code = classify::run_exit_code(halt.stop_reason().as_ref(), &verdicts);
    let halted = halt.reason();
    let end = run_end(
        settings,
        started,
        RunClose {
            cases: &cases,
            exit_code,
            interrupted,
            left_queues: leftover.clone(),
            halted: halted.clone(),
        },
    );
    let _ = events.send(Record::RunEnd(end));
    RunOutcome {
        cases,
        interrupted,
        halted,
        leftover,
        exit_code,
    }
}

/// How many trials `case` runs: the larger of `--trials` and its own `trials:` (the flag is
/// a floor: it never lowers a case's own count, which its rate may need).
pub fn trials_of(case: &Case, cli: Option<u32>) -> u32 {
    cli.map_or(case.trials, |n| n.max(case.trials)).max(1)
}

/// What a finished case task hands back.
struct Done {
    order: usize,
    planned: PlannedCase,
    trial: Option<u32>,
    end: CaseEnd,
    judged: Option<classify::Judgement>,
}

/// The trials of one multi-trial case while they run.
struct TrialSet {
    n: u32,
    planned: PlannedCase,
    /// By trial (index k − 1): its `trial_end` and judgement, or why its task failed.
    results: Vec<Option<Result<(CaseEnd, classify::Judgement), String>>>,
    /// Trials that will not run (the run stopped before them).
    not_run: u32,
    started: bool,
    started_at: chrono::DateTime<Utc>,
}

impl TrialSet {
    fn new(n: u32, planned: PlannedCase, now: chrono::DateTime<Utc>) -> TrialSet {
        TrialSet {
            n,
            planned,
            results: (0..n).map(|_| None).collect(),
            not_run: 0,
            started: false,
            started_at: now,
        }
    }

    fn done(&mut self, trial: u32, result: Result<(CaseEnd, Option<classify::Judgement>), String>) {
        let result = result.map(|(end, judged)| {
            let judged = judged.unwrap_or_else(|| classify::Judgement {
                verdict: end.verdict,
                class: None,
                window_end: None,
                messages: Vec::new(),
                decision: end.decision,
                reason: end.reason.clone(),
                findings: end.findings.clone(),
            });
            (end, judged)
        });
        if let Some(slot) = self.results.get_mut(trial as usize - 1) {
            *slot = Some(result);
        }
    }

    fn finished(&self) -> u32 {
        self.results.iter().filter(|r| r.is_some()).count() as u32
    }
}

/// The pooled `case_end` of a multi-trial case once every trial finished (or will not run).
fn complete(
    pending: &mut HashMap<usize, TrialSet>,
    order: usize,
    settings: &RunSettings,
) -> Option<CaseEnd> {
    let set = pending.get(&order)?;
    if set.finished() + set.not_run < set.n || (!set.started && set.finished() == 0) {
        return None;
    }
    let set = pending.remove(&order)?;
    let end = pooled_end(&set, settings);
    Some(match settings.profile.as_deref() {
        Some(p) => conformance::apply(p, end),
        None => end,
    })
}

/// Pools a multi-trial case's trials into its `case_end`.
fn pooled_end(set: &TrialSet, settings: &RunSettings) -> CaseEnd {
    let case = &set.planned.case;
    let mut judged = Vec::new();
    let mut ends = Vec::new();
    for result in set.results.iter().flatten() {
        match result {
            Ok((end, j)) => {
                judged.push(j.clone());
                ends.push(end);
            }
            Err(why) => judged.push(classify::Judgement {
                verdict: Verdict::Error,
                class: None,
                window_end: None,
                messages: Vec::new(),
                decision: None,
                reason: why.clone(),
                findings: Vec::new(),
            }),
        }
    }
    let pooled = classify::trials::pool(
        &judged,
        case.expect.outcome.as_ref(),
        case.expect.rate.as_ref(),
        case.pos.line,
    );
    let mut verdict = pooled.verdict;
    let mut findings = pooled.findings;
    let mut reason = pooled.reason;
    if set.not_run > 0 {
        let line = format!(
            "{} of {} trials did not run (the run stopped before them)",
            set.not_run, set.n
        );
        if verdict == Verdict::Pass {
            verdict = Verdict::Inconclusive;
            reason = line.clone();
        }
        findings.push(crate::evidence::format::Finding {
            step: None,
            line: case.pos.line,
            message: line,
            status: None,
            code: None,
        });
    }
    let mut deliveries: BTreeMap<String, u32> = BTreeMap::new();
    for e in &ends {
        for (k, v) in &e.deliveries {
            *deliveries.entry(k.clone()).or_default() += v;
        }
    }
    let ended_at = settings.clock.now();
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
        started_at: rfc3339(set.started_at),
        ended_at: rfc3339(ended_at),
        duration_ms: (ended_at - set.started_at).num_milliseconds().max(0) as u64,
        trial: None,
        trials: Some(pooled.trials),
    }
}

/// How a run ended, besides what its settings, its clock and its request count say.
#[derive(Debug, Default)]
pub struct RunClose<'a> {
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
}

/// The `run_end` of a run that began at `started`, stamped now: its totals counted from its
/// cases, its requests (every attempt, the reachability check's included) and their price
/// read from the run's count. A merge of partitions combines theirs (`evidence::merge`).
pub fn run_end(settings: &RunSettings, started: Instant, close: RunClose<'_>) -> RunEnd {
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
        cost_usd: Some(crate::sqs::pricing::cost_usd(standard, fifo)),
        left_queues: close.left_queues,
        halted: close.halted.map(|why| why.describe()),
    }
}

/// A run id: UTC time to the second plus 8 random hex digits, safe inside a queue name.
pub fn new_run_id() -> String {
    let now = Utc::now();
    // 32 random bits: two runs started in the same second must not share queue names.
    let salt: u32 = rand::random();
    format!("{}-{salt:08x}", now.format("%Y%m%d-%H%M%S"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::target::{Protocol, TargetConfig, build_client};

    /// Issue 20: `--trials` is a floor: it never lowers a case's own larger `trials:`.
    #[test]
    fn the_trials_flag_never_lowers_a_cases_own_count() {
        let case = |trials: u32| {
            let src = format!(
                "cases:\n  - id: c\n    behaviour: b\n    source: s\n    trials: {trials}\n    \
                 steps:\n      - sleep: 1s\n"
            );
            let suite = crate::suite::parse_suite("t.yaml", &src, &crate::suite::Limits::default())
                .expect("a valid suite");
            suite.cases.into_iter().next().expect("one case")
        };
        assert_eq!(trials_of(&case(15), Some(5)), 15);
        assert_eq!(trials_of(&case(1), Some(5)), 5);
        assert_eq!(trials_of(&case(15), None), 15);
        assert_eq!(trials_of(&case(1), None), 1);
    }

    /// Issue 19: the embedded target's fixed key `sqsprobe` is public: the run's masker must
    /// not take it for a secret, or every queue name reads `<credential>-…`.
    #[tokio::test]
    async fn the_fixed_keys_are_not_masked_as_credentials() {
        let emu = crate::emulator::spawn(
            "127.0.0.1:0".parse().unwrap(),
            crate::emulator::EmulatorConfig::default(),
        )
        .await
        .unwrap();
        let (client, _) = build_client(&TargetConfig {
            kind: TargetKind::Embedded,
            endpoint_url: Some(format!("http://{}", emu.local_addr())),
            region: Some("us-east-1".into()),
            profile: None,
            protocol: Protocol::Json,
        })
        .await;
        let (events, _rx) = mpsc::unbounded_channel();
        let masker = preflight(
            &client,
            crate::runner::RunClock::real(),
            "r1",
            &super::super::policy::Usage::new(None),
            &events,
        )
        .await
        .expect("the emulator answers");
        let name = "sqsprobe-r1-case-q";
        assert_eq!(masker.mask(name), name);
        emu.shutdown().await;
    }
}
