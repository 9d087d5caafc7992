//! The run loop, a dispatcher of events as nextest's runner is.
//!
//! Each turn waits for the next [`Event`] — a case or trial finished, a slot free under
//! `--jobs`, a signal, the run stopping itself — and hands it to its one handler, which
//! updates the run's state, sends the records it closes and starts what may start. The loop
//! ends when nothing waits to start and nothing runs; [`Dispatcher::finish`] then closes the
//! multi-trial cases cut short and sends `run_end`. The records themselves are built in
//! `closing.rs`; the stop is the run's [`Halt`].

use super::closing::{RunClose, Unrun, pooled_end, run_end, unrun_end};
use super::opening::{not_runnable, run_start};
use super::settings::RunSettings;
use super::trials::{TrialResult, TrialSet, trials_of};
use crate::runner::case::{case_start, run_case, run_trial};
use crate::runner::context::RunContext;
use crate::runner::halt::Halt;
use crate::runner::queues::Registry;
use crate::runner::schedule::{PlannedCase, longest_first};
use crate::runner::target::TargetKind;
use sqsprobe_core::classify::{self, StopReason};
use sqsprobe_core::conformance;
use sqsprobe_core::evidence::Masker;
use sqsprobe_core::evidence::format::{CaseEnd, LeftQueue, Record, Verdict};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::task::{Id, JoinSet};
use tokio::time::Instant;

/// What a finished (or interrupted) run produced.
#[derive(Debug)]
pub(crate) struct RunOutcome {
    /// Why the run stopped itself, if it did (one line for the terminal).
    pub halted: Option<StopReason>,
    /// Owned queues that could not be proven deleted: a user must know about these (also in
    /// `run_end.left_queues`).
    pub leftover: Vec<LeftQueue>,
    /// The code the run exits with, as `run_end.exit_code` says.
    pub exit_code: i32,
}

/// Runs every planned case, at most `settings.jobs` at a time, until done or `cancel` turns
/// true. Emits `run_start`, each case's records, and `run_end`.
pub(crate) async fn run_plan(
    client: aws_sdk_sqs::Client,
    masker: Masker,
    plan: Vec<PlannedCase>,
    settings: &RunSettings,
    registry: Registry,
    events: mpsc::UnboundedSender<Record>,
    cancel: watch::Receiver<bool>,
) -> RunOutcome {
    let started = Instant::now();
    let _ = events.send(Record::RunStart(run_start(
        settings,
        &plan,
        settings.clock.now(),
    )));
    let ctx = Arc::new(context(
        client,
        masker,
        settings,
        registry,
        events.clone(),
        cancel,
    ));
    // The time budget: past it the run stops itself like a spent request budget.
    let timer = settings
        .max_duration
        .map(|budget| tokio::spawn(time_budget(ctx.halt.clone(), budget)));
    let mut run = Dispatcher::new(settings, ctx, events, plan);
    while let Some(event) = run.next_event().await {
        run.handle(event);
    }
    if let Some(timer) = timer {
        timer.abort();
    }
    run.finish(started)
}

/// What every case of the run shares.
fn context(
    client: aws_sdk_sqs::Client,
    masker: Masker,
    settings: &RunSettings,
    registry: Registry,
    events: mpsc::UnboundedSender<Record>,
    cancel: watch::Receiver<bool>,
) -> RunContext {
    let http = crate::runner::faults::base_http_client(&client);
    RunContext {
        client,
        run_id: settings.run_id.clone(),
        instance: settings.instance.clone(),
        masker,
        registry,
        events,
        halt: Halt::new(cancel),
        call_timeout: settings.call_timeout,
        health: crate::runner::policy::Health::new(settings.lost_after),
        usage: settings.usage.clone(),
        seed: settings.seed,
        http,
        target: settings.target,
        emulator_chaos: settings
            .emulator_chaos
            .as_deref()
            .and_then(|spec| sqsprobe_emulator::Chaos::parse(spec).ok())
            .filter(|_| settings.target == TargetKind::Embedded),
        region: settings.region.clone(),
        clock: settings.clock,
    }
}

/// Stops the run once `budget` has passed (`--max-duration`).
async fn time_budget(halt: Halt, budget: std::time::Duration) {
    tokio::time::sleep(budget).await;
    halt.set(StopReason::Budget(format!(
        "the time budget (--max-duration {})",
        sqsprobe_facts::duration::format(budget)
    )));
}

/// One thing to run: a case, or one trial of a multi-trial case.
#[derive(Debug, Clone)]
struct Unit {
    /// The case's place in the plan (the order its `case_end` is reported in).
    order: usize,
    planned: PlannedCase,
    /// The trial (1-based) of a multi-trial case, `None` for a case run once.
    trial: Option<u32>,
}

/// What a unit's task hands back.
enum Ran {
    /// A case's `case_end`, not sent yet: the run maps it through the profile and sends it.
    Case(CaseEnd),
    /// Trial k's `trial_end` (already sent) and judgement, which its case's trials are pooled
    /// from.
    Trial(u32, CaseEnd, classify::Judgement),
}

/// What the run loop waits for.
enum Event {
    /// A unit's task ended: what it ran, or why its task failed (boxed: a `case_end` is
    /// large, the other events are small).
    Finished(Box<(Unit, Result<Ran, String>)>),
    /// A slot is free under `--jobs`, and a unit waits for it.
    Slot(OwnedSemaphorePermit),
    /// A signal interrupted the run while units waited.
    Interrupted,
    /// The run stopped itself while units waited.
    Halted(StopReason),
}

/// The run's state between events.
struct Dispatcher<'a> {
    settings: &'a RunSettings,
    ctx: Arc<RunContext>,
    events: mpsc::UnboundedSender<Record>,
    /// The `--jobs` bound: a running unit holds one permit.
    permits: Arc<Semaphore>,
    /// Units not started yet, in the order they start.
    waiting: VecDeque<Unit>,
    running: JoinSet<Ran>,
    /// Which unit each task runs, so a task that panics still gets its `case_end`.
    spawned: HashMap<Id, Unit>,
    /// Multi-trial cases not closed yet, by plan order.
    trials: BTreeMap<usize, TrialSet>,
    /// Every `case_end` sent, with its case's plan order.
    closed: Vec<(usize, CaseEnd)>,
}

impl<'a> Dispatcher<'a> {
    /// The run's state before its first event: the cases that cannot run answered at once,
    /// the others waiting longest first (the run's wall time is then bounded by its longest
    /// case, not by the tail), a multi-trial case as one unit per trial, run on fresh queues
    /// concurrently like cases.
    fn new(
        settings: &'a RunSettings,
        ctx: Arc<RunContext>,
        events: mpsc::UnboundedSender<Record>,
        plan: Vec<PlannedCase>,
    ) -> Dispatcher<'a> {
        let mut run = Dispatcher {
            settings,
            ctx,
            events,
            permits: Arc::new(Semaphore::new(settings.jobs.max(1))),
            waiting: VecDeque::new(),
            running: JoinSet::new(),
            spawned: HashMap::new(),
            trials: BTreeMap::new(),
            closed: Vec::new(),
        };
        let start_order = longest_first(&plan);
        let mut slots: Vec<Option<PlannedCase>> = plan.into_iter().map(Some).collect();
        for order in start_order {
            let Some(planned) = slots.get_mut(order).and_then(Option::take) else {
                continue;
            };
            if let Some((_, end)) = not_runnable(&planned, settings) {
                run.close_case(order, end);
                continue;
            }
            let n = trials_of(&planned.case, settings.trials);
            if n > 1 || planned.case.expect.rate.is_some() {
                run.trials.insert(order, TrialSet::new(n, planned.clone()));
                run.waiting.extend((1..=n).map(|k| Unit {
                    order,
                    planned: planned.clone(),
                    trial: Some(k),
                }));
            } else {
                run.waiting.push_back(Unit {
                    order,
                    planned,
                    trial: None,
                });
            }
        }
        run
    }

    /// The next event, or `None` once nothing waits to start and nothing runs.
    ///
    /// A signal or a halt is seen before any other event while units wait, so nothing starts
    /// after it; while they run, finished units come first, so their records go out as soon
    /// as they exist.
    async fn next_event(&mut self) -> Option<Event> {
        let halt = self.ctx.halt.clone();
        loop {
            if !self.waiting.is_empty() {
                if halt.interrupted() {
                    return Some(Event::Interrupted);
                }
                if let Some(why) = halt.reason() {
                    return Some(Event::Halted(why));
                }
            } else if self.running.is_empty() {
                return None;
            }
            tokio::select! {
                biased;
                Some(joined) = self.running.join_next_with_id(), if !self.running.is_empty() => {
                    let (id, result) = match joined {
                        Ok((id, ran)) => (id, Ok(ran)),
                        Err(failed) => (
                            failed.id(),
                            Err(format!(
                                "internal error: the case task failed ({failed}); a harness bug"
                            )),
                        ),
                    };
                    if let Some(unit) = self.spawned.remove(&id) {
                        return Some(Event::Finished(Box::new((unit, result))));
                    }
                }
                // The semaphore is never closed; were it, nothing more could start.
                permit = self.permits.clone().acquire_owned(), if !self.waiting.is_empty() => {
                    return permit.ok().map(Event::Slot);
                }
                // Both are read at the top of the next turn.
                _ = halt.signalled(), if !self.waiting.is_empty() => {}
                _ = halt.stopped(), if !self.waiting.is_empty() => {}
                else => {}
            }
        }
    }

    /// Hands `event` to its handler.
    fn handle(&mut self, event: Event) {
        match event {
            Event::Finished(finished) => {
                let (unit, result) = *finished;
                self.on_finished(unit, result)
            }
            Event::Slot(permit) => self.on_slot(permit),
            Event::Interrupted => self.on_interrupted(),
            Event::Halted(why) => self.on_halted(&why),
        }
    }

    /// A unit finished: a case is closed; a trial joins its case's set, which is closed once
    /// its last trial is in.
    fn on_finished(&mut self, unit: Unit, result: Result<Ran, String>) {
        match (unit.trial, result) {
            (_, Ok(Ran::Case(end))) => {
                let end = self.through_profile(end);
                self.close_case(unit.order, end);
            }
            (_, Ok(Ran::Trial(k, end, judged))) => {
                self.trial_done(unit.order, k, Ok((end, judged)));
            }
            // A panic in a case is a harness bug: the case ends as an error instead of
            // vanishing.
            (None, Err(why)) => {
                let end = unrun_end(self.settings, &unit.planned, Unrun::Failed(why));
                self.close_case(unit.order, end);
            }
            (Some(k), Err(why)) => self.trial_done(unit.order, k, Err(why)),
        }
    }

    /// A slot is free: the next unit starts in it (a multi-trial case's `case_start` goes out
    /// once, before its first trial).
    fn on_slot(&mut self, permit: OwnedSemaphorePermit) {
        // A stop that came with the slot (the permit of a case that just ended, ready before
        // its result) wins: nothing starts after a stop. The next turn hands it over.
        if self.ctx.halt.stop_reason().is_some() {
            drop(permit);
            return;
        }
        let Some(unit) = self.waiting.pop_front() else {
            return;
        };
        if unit.trial.is_some()
            && let Some(set) = self.trials.get_mut(&unit.order)
        {
            let now = self.settings.clock.now();
            if set.start(now) {
                let start = case_start(
                    &self.settings.run_id,
                    &unit.planned.suite,
                    &unit.planned.case,
                    now,
                    Some(set.n),
                    self.settings.target,
                );
                let _ = self.events.send(Record::CaseStart(start));
            }
        }
        let ctx = self.ctx.clone();
        let (suite, case, trial) = (
            unit.planned.suite.clone(),
            unit.planned.case.clone(),
            unit.trial,
        );
        let task = self.running.spawn(async move {
            let _permit = permit;
            match trial {
                Some(k) => {
                    let (end, judged) = run_trial(ctx, suite, case, k).await;
                    Ran::Trial(k, end, judged)
                }
                None => Ran::Case(run_case(ctx, suite, case).await),
            }
        });
        self.spawned.insert(task.id(), unit);
    }

    /// A signal: what has not started does not start, and has no `case_end`.
    fn on_interrupted(&mut self) {
        self.waiting.clear();
    }

    /// The run stopped itself: every waiting case is closed as not run for `why`; a waiting
    /// trial counts as one its case did not run, and a case none of whose trials started is
    /// not run.
    fn on_halted(&mut self, why: &StopReason) {
        for unit in std::mem::take(&mut self.waiting) {
            match unit.trial {
                None => {
                    let end = unrun_end(self.settings, &unit.planned, Unrun::Halted(why));
                    self.close_case(unit.order, end);
                }
                Some(_) => {
                    if let Some(set) = self.trials.get_mut(&unit.order) {
                        set.skip_one();
                    }
                    // A case none of whose trials started is closed as a case not run, as
                    // one run once would be; else its started trials are pooled.
                    if self
                        .trials
                        .get(&unit.order)
                        .is_some_and(TrialSet::never_ran)
                    {
                        if let Some(set) = self.trials.remove(&unit.order) {
                            let end = unrun_end(self.settings, &set.planned, Unrun::Halted(why));
                            self.close_case(unit.order, end);
                        }
                    } else {
                        self.close_trials(unit.order);
                    }
                }
            }
        }
    }

    fn trial_done(&mut self, order: usize, trial: u32, result: TrialResult) {
        if let Some(set) = self.trials.get_mut(&order) {
            set.done(trial, result);
        }
        self.close_trials(order);
    }

    /// Closes the multi-trial case at `order` with its pooled `case_end`, once it is complete.
    fn close_trials(&mut self, order: usize) {
        if !self.trials.get(&order).is_some_and(TrialSet::is_complete) {
            return;
        }
        if let Some(set) = self.trials.remove(&order) {
            let end = self.through_profile(pooled_end(&set, self.settings));
            self.close_case(order, end);
        }
    }

    /// A finished case's `case_end` mapped through the target profile, if the run has one.
    fn through_profile(&self, end: CaseEnd) -> CaseEnd {
        match self.settings.profile.as_deref() {
            Some(profile) => conformance::apply(profile, end),
            None => end,
        }
    }

    /// Sends the `case_end` of the case at `order` and keeps it for the run's outcome.
    fn close_case(&mut self, order: usize, end: CaseEnd) {
        let _ = self.events.send(Record::CaseEnd(end.clone()));
        self.closed.push((order, end));
    }

    /// After the last event: multi-trial cases cut short still say what their finished
    /// trials found (one that had not started has no `case_end`, like any case that had
    /// not); then the run's exit code, and `run_end`.
    fn finish(mut self, started: Instant) -> RunOutcome {
        let open: Vec<usize> = self.trials.keys().copied().collect();
        for order in open {
            if let Some(set) = self.trials.get_mut(&order) {
                set.none_left();
            }
            self.close_trials(order);
        }
        self.closed.sort_by_key(|(order, _)| *order);
        let cases: Vec<CaseEnd> = self.closed.into_iter().map(|(_, end)| end).collect();

        let halt = &self.ctx.halt;
        let interrupted = halt.interrupted();
        let leftover: Vec<LeftQueue> = self
            .ctx
            .registry
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
        let exit_code = classify::run_exit_code(halt.stop_reason().as_ref(), &verdicts);
        let halted = halt.reason();
        let end = run_end(
            self.settings,
            started,
            RunClose {
                cases: &cases,
                exit_code,
                interrupted,
                left_queues: leftover.clone(),
                halted: halted.clone(),
                stop: halt.stop_reason(),
            },
        );
        let _ = self.events.send(Record::RunEnd(end));
        RunOutcome {
            halted,
            leftover,
            exit_code,
        }
    }
}
