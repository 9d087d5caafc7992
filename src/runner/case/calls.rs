//! How a case calls SQS: the [`Caller`] every step is handed, which makes each call with its
//! configuration, records its attempts as evidence, abandons it when the case is stopped,
//! accounts for its answer (the run's request budget, the target's health, the faults and
//! denies it met) and checks a step's answer against the step's `expect:`.
//!
//! What a step armed for its calls (its `fault:`, its `wire:`) and what they answered is the
//! [`StepState`] the caller holds for the step in progress; everything else a step works on
//! (the ledger, the queue table) is handed to the step beside the caller.

use super::denies::Denies;
use super::queue_table::QueueTable;
use super::stop::Stops;
use crate::runner::call::{AttemptRecorder, CallMeta, Recorded, record};
use crate::runner::context::RunContext;
use crate::runner::faults::{FaultClient, FaultPlan, StepFault};
use crate::runner::query_protocol::{WireForm, WireInterceptor};
use chrono::{DateTime, Utc};
use sqsprobe_core::classify::{CallError, Check, FailureKind, Observed, StopReason, check_step};
use sqsprobe_core::evidence::Masker;
use sqsprobe_core::evidence::format::{Call, Phase, Record};
use sqsprobe_core::suite::model::{Case, RetryPolicy, Step, StepExpect};
use std::sync::Arc;

/// Sends one SDK operation as a recorded call of the case: `call!(sqs, meta, <fluent builder>)`.
///
/// This is the one way a case calls SQS. Every SDK attempt becomes an evidence row, and the
/// per-call configuration (see [`Caller::call`]) is attached here and nowhere else. A call is
/// abandoned (as an `info` row) when the case is stopped; `call!(finish: ...)` runs to
/// completion instead, for creates, ownership checks and teardown, where dropping the answer
/// could leave a queue behind that nobody knows about.
macro_rules! call {
    ($sqs:expr, $meta:expr, $op:expr) => {
        $sqs.call($meta, false, |r, cfg| {
            $op.customize().interceptor(r).config_override(cfg).send()
        })
    };
    (finish: $sqs:expr, $meta:expr, $op:expr) => {
        $sqs.call($meta, true, |r, cfg| {
            $op.customize().interceptor(r).config_override(cfg).send()
        })
    };
}

/// A step that makes one SQS call: `one_call!(sqs, queues, step, "Action", queue_label,
/// <fluent builder>)` builds the call's metadata, makes the call (through [`call!`]), and
/// checks the step's expectations against the answer, returning the step's `Ok(check)`.
///
/// Two optional tails say what the step does with the answer: `view: |rec| <Observed>` for
/// what its expectations read from it (attributes, tags, listed queues), `then: |rec| {..}` for
/// what the case learns from it (a new visibility, a deleted queue, a task handle). The ten
/// administration steps and the permission and move-task steps are each one line of it.
macro_rules! one_call {
    ($sqs:expr, $queues:expr, $step:expr, $action:literal, $queue:expr, $op:expr) => {
        one_call!($sqs, $queues, $step, $action, $queue, $op, view: |_rec| sqsprobe_core::classify::Observed::default())
    };
    ($sqs:expr, $queues:expr, $step:expr, $action:literal, $queue:expr, $op:expr, then: |$rec:ident| $then:block) => {{
        let meta = $sqs.meta($queues, sqsprobe_core::evidence::format::Phase::Step, Some($step), $action, None, $queue);
        let mut $rec = call!($sqs, meta, $op).await;
        $then
        Ok($sqs.check(&$step.expect, &mut $rec, sqsprobe_core::classify::Observed::default()))
    }};
    ($sqs:expr, $queues:expr, $step:expr, $action:literal, $queue:expr, $op:expr, view: |$rec:ident| $view:expr) => {{
        let meta = $sqs.meta($queues, sqsprobe_core::evidence::format::Phase::Step, Some($step), $action, None, $queue);
        let mut rec = call!($sqs, meta, $op).await;
        let view = {
            let $rec = &rec;
            $view
        };
        Ok($sqs.check(&$step.expect, &mut rec, view))
    }};
}

/// The case's caller (see the module doc).
pub(super) struct Caller {
    ctx: Arc<RunContext>,
    /// The case's id and trial (1-based, `None` for a single run), on every row.
    case: String,
    trial: Option<u32>,
    /// How the SDK retries the steps' calls (the case's `retries:`).
    retries: RetryPolicy,
    /// The case's masker: every handle and body it has seen, so no answer quotes one.
    masker: Masker,
    /// The case's faults (its `faults:`, with their counters and dice).
    faults: Arc<FaultPlan>,
    /// Whether the case has `faults:` at all.
    case_faults: bool,
    /// Calls whose answer an injected fault changed (every kind but latency).
    faults_fired: u32,
    /// ReceiveMessage attempts left without a definite answer by an injected fault.
    faulted_receives: u32,
    /// Acknowledgements (delete entries) refused or left unanswered by the case's own fault.
    faulted_acks: u32,
    /// The `deny` steps' policies, which every call's answer is told to.
    denies: Denies,
    /// What stops the case from outside its steps.
    stops: Stops,
    /// What the current step armed and what its calls answered.
    step: StepState,
    /// The rows of the case's receives, deletes and visibility changes, as emitted: the
    /// history its acknowledgements are read from (`classify::ack_history`).
    history: Vec<Call>,
}

impl Caller {
    /// The caller of `case` (trial `trial`) in the run of `ctx`.
    pub(super) fn new(ctx: Arc<RunContext>, case: &Case, trial: Option<u32>) -> Caller {
        // Each trial draws its own fault dice: the same seed gives the same trials.
        let case_key = format!("{}#{}", case.id, trial.unwrap_or(1));
        Caller {
            stops: Stops::new(&ctx, case),
            masker: ctx.masker.clone(),
            faults: Arc::new(FaultPlan::new(&case.faults, ctx.seed, &case_key)),
            ctx,
            case: case.id.clone(),
            trial,
            retries: case.retries,
            case_faults: !case.faults.is_empty(),
            faults_fired: 0,
            faulted_receives: 0,
            faulted_acks: 0,
            denies: Denies::default(),
            step: StepState::default(),
            history: Vec::new(),
        }
    }

    /// What every case of the run shares: the client, the registry, the run's ids and region.
    pub(super) fn ctx(&self) -> &RunContext {
        &self.ctx
    }

    /// The run's SDK client, for a step to build its request with.
    pub(super) fn client(&self) -> aws_sdk_sqs::Client {
        self.ctx.client.clone()
    }

    /// The case's id.
    pub(super) fn case(&self) -> &str {
        &self.case
    }

    /// The trial this case is (1-based) of a multi-trial case, `None` for a single run.
    pub(super) fn trial(&self) -> Option<u32> {
        self.trial
    }

    /// The case's masker.
    pub(super) fn masker(&self) -> &Masker {
        &self.masker
    }

    /// The case's masker, to teach it a handle, a body or a principal the case has seen.
    pub(super) fn masker_mut(&mut self) -> &mut Masker {
        &mut self.masker
    }

    /// What stops the case from outside its steps.
    pub(super) fn stops(&self) -> &Stops {
        &self.stops
    }

    /// The denies the case has set.
    pub(super) fn denies(&self) -> &Denies {
        &self.denies
    }

    /// The denies the case has set, to set or lift one.
    pub(super) fn denies_mut(&mut self) -> &mut Denies {
        &mut self.denies
    }

    /// Calls whose answer the case's own doing changed: an injected fault (every kind but
    /// latency) or a `deny` in force.
    pub(super) fn faults_fired(&self) -> u32 {
        self.faults_fired + self.denies.denied_calls()
    }

    /// ReceiveMessage attempts of the case so far that an injected fault left without a
    /// definite answer (each also counted among the ledger's unknown receives).
    pub(super) fn faulted_receives(&self) -> u32 {
        self.faulted_receives
    }

    /// Acknowledgements refused or left unanswered by the case's own fault so far.
    pub(super) fn faulted_acks(&self) -> u32 {
        self.faulted_acks
    }

    /// Counts `entries` acknowledgements of a delete call that were not done (`done` false),
    /// as the case's fault's doing when its answer was the case's (see
    /// [`CallError::case_made`]).
    pub(super) fn count_faulted_acks(&mut self, error: Option<&CallError>, entries: usize) {
        if error.is_some_and(CallError::case_made) {
            self.faulted_acks += entries as u32;
        }
    }

    /// Sends a record to the run's consumers.
    pub(super) fn emit(&self, record: Record) {
        // The receiver lives as long as the run; if it is gone the run is ending anyway.
        let _ = self.ctx.events.send(record);
    }

    /// Emits a call's rows (each attempt's), leaving the call's answer to its caller.
    pub(super) fn emit_rows<O>(&mut self, rec: &mut Recorded<O>) {
        for row in rec.rows.drain(..) {
            if matches!(
                sqsprobe_facts::sqs::operations::single(&row.action),
                "ReceiveMessage" | "DeleteMessage" | "ChangeMessageVisibility"
            ) {
                self.history.push(row.clone());
            }
            self.emit(Record::Call(row));
        }
    }

    /// The messages the case's receive steps returned that no acknowledgement took, read from
    /// its rows.
    pub(super) fn unacknowledged(&self) -> Vec<String> {
        let rows: Vec<&Call> = self.history.iter().collect();
        sqsprobe_core::classify::ack_history::unacknowledged(&rows)
    }

    /// The acknowledgement facts of the case so far, read from its rows.
    pub(super) fn ack_facts(&self) -> sqsprobe_core::classify::AckFacts {
        let rows: Vec<&Call> = self.history.iter().collect();
        sqsprobe_core::classify::ack_history::ack_facts(&rows)
    }

    /// Begins `step`: its `fault:` armed, no wire form (the step arms its own), no answer yet.
    pub(super) fn begin_step(&mut self, step: &Step) {
        self.step = StepState::new(step);
    }

    /// Ends the previous step: its fault and wire form are its own, so what is sent before
    /// the next step begins (a deny falling due, lifted) goes out with neither.
    pub(super) fn end_step(&mut self) {
        self.step = StepState::default();
    }

    /// The answer (status, error code) of the step's last checked call, taken for its result.
    pub(super) fn take_answer(&mut self) -> (Option<u16>, Option<String>) {
        self.step.last_answer.take().unwrap_or_default()
    }

    /// Arms the step's `wire:` for its call: the queue it names is resolved to its URL now.
    pub(super) fn arm_wire(&mut self, queues: &QueueTable, step: &Step) -> Result<(), String> {
        let Some(wire) = &step.wire else {
            return Ok(());
        };
        let to = match &wire.to {
            Some(label) => {
                let url = queues.url(&label.value)?;
                Some((queues.name(&label.value), url))
            }
            None => None,
        };
        let operation = sqsprobe_core::suite::step_calls(&step.action)
            .first()
            .copied()
            .ok_or_else(|| format!("step {} makes no SQS call for `wire`", step.index + 1))?;
        self.step.wire = Some(StepWire {
            operation,
            to_name: to.as_ref().map(|(name, _)| name.clone()),
            form: WireForm {
                method: wire.method,
                to_url: to.map(|(_, url)| url),
                accept: wire.accept,
                no_params: wire.no_params,
                unindexed: wire.unindexed,
            },
        });
        Ok(())
    }

    /// The metadata of a call about the queue labelled `queue` (its name and region come from
    /// `queues`), or about no queue.
    pub(super) fn meta(
        &self,
        queues: &QueueTable,
        phase: Phase,
        step: Option<&Step>,
        action: &'static str,
        attempt: Option<String>,
        queue: Option<&str>,
    ) -> CallMeta {
        let q = queue.and_then(|l| queues.get(l));
        CallMeta {
            run_id: self.ctx.run_id.clone(),
            case: self.case.clone(),
            phase,
            step: step.map(|s| s.index),
            line: step.map(|s| s.pos.line),
            action,
            attempt,
            queue: q.map(|q| q.name.clone()),
            wait: None,
            trial: self.trial,
            label: queue.filter(|_| q.is_some()).map(str::to_string),
            region: q.and_then(|q| q.region.clone()),
            clock: self.ctx.clock,
            wire: self
                .step
                .wire
                .as_ref()
                .filter(|w| phase == Phase::Step && w.operation == action)
                .map(StepWire::evidence),
        }
    }

    /// The configuration one call runs with (see [`crate::runner::policy`]): its retries
    /// (steps follow the case's `retries:`; the harness's own calls retry briefly, and not at
    /// all once the target is lost) and its attempt timeout (a receive's wait plus the call
    /// timeout; the call timeout for anything else).
    ///
    /// A call about a queue of another region (its `region:`) is signed for that region, which
    /// on AWS also picks that region's endpoint: the one client of the run serves every region.
    fn call_config(&self, meta: &CallMeta) -> aws_sdk_sqs::config::Builder {
        // A lost target, or a run a signal is ending: each harness call gets one bounded
        // attempt, so teardown ends within a call timeout per queue.
        let lost = matches!(self.ctx.halt.reason(), Some(StopReason::TargetLost(_)));
        let config = crate::runner::policy::call_config(
            meta.phase,
            self.retries,
            meta.wait,
            self.ctx.call_timeout,
            lost || self.stops.interrupted(),
        );
        match &meta.region {
            Some(region) => config.region(aws_sdk_sqs::config::Region::new(region.clone())),
            None => config,
        }
    }

    /// Runs one SDK call with its configuration (use [`call!`]); unless `finish`, the call is
    /// abandoned (as an `info` row) if the run is interrupted or the case reaches its deadline.
    pub(super) async fn call<O, E, F, Fut>(
        &mut self,
        meta: CallMeta,
        finish: bool,
        send: F,
    ) -> Recorded<O>
    where
        F: FnOnce(AttemptRecorder, aws_sdk_sqs::config::Builder) -> Fut,
        Fut: std::future::Future<
                Output = Result<
                    O,
                    aws_sdk_sqs::error::SdkError<E, aws_smithy_runtime_api::http::Response>,
                >,
            >,
        E: aws_sdk_sqs::error::ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
        O: aws_sdk_sqs::operation::RequestId,
    {
        let mut config = self.call_config(&meta);
        if meta.wire.is_some()
            && let Some(w) = &self.step.wire
        {
            config = config.interceptor(WireInterceptor(w.form.clone()));
        }
        let (operation, queue) = (meta.action, meta.label.clone());
        let faulty = matches!(meta.phase, Phase::Step | Phase::Observe) && self.has_faults();
        let send = |r: AttemptRecorder| {
            // Faults go under the SDK, for the steps' calls only: the harness's own calls
            // (setup, teardown) always reach the target as they are.
            let config = if faulty {
                config.http_client(FaultClient::new(
                    self.ctx.http.clone(),
                    self.faults.clone(),
                    &self.step.fault,
                    r.clone(),
                ))
            } else {
                config
            };
            send(r, config)
        };
        let mut abandoned = false;
        let mut rec = if finish {
            record(meta, &self.masker, send).await
        } else {
            let started_at = self.ctx.clock.now();
            let fallback = meta.clone();
            tokio::select! {
                rec = record(meta, &self.masker, send) => rec,
                _ = self.stops.until_requested() => {
                    abandoned = true;
                    abandoned_call(fallback, started_at, self.stops.why_cut())
                }
            }
        };
        self.denies.see(operation, queue.as_deref(), &mut rec.error);
        self.account(&rec, abandoned);
        if operation == "ReceiveMessage" {
            // As the ledger counts unknown receives: every attempt without a definite answer.
            self.faulted_receives += rec
                .rows
                .iter()
                .filter(|r| {
                    r.completion == sqsprobe_core::evidence::format::Completion::Info
                        && r.fault.as_ref().is_some_and(|f| f.kind != "latency")
                })
                .count() as u32;
        }
        rec
    }

    /// Counts a call's requests against the run's budget and its answer against the target's
    /// health; either may stop the run. A call the run abandoned (it was stopping) says
    /// nothing about the target, and once a signal is ending the run nothing declares the
    /// target lost: the signal is the run's cause of stopping.
    fn account<O>(&mut self, rec: &Recorded<O>, abandoned: bool) {
        if self.ctx.usage.add(&rec.rows) {
            let max = self.ctx.usage.max().unwrap_or_default();
            self.ctx.halt.set(StopReason::Budget(format!(
                "the request budget (--max-requests {max})"
            )));
        }
        let fired = rec
            .rows
            .iter()
            .filter(|r| r.fault.as_ref().is_some_and(|f| f.kind != "latency"))
            .count() as u32;
        self.faults_fired += fired;
        // An injected fault says nothing about the target's health.
        if abandoned
            || self.stops.interrupted()
            || rec.error.as_ref().is_some_and(|e| e.injected.is_some())
        {
            return;
        }
        let silent = rec
            .error
            .as_ref()
            .filter(|e| e.kind == FailureKind::NoResponse)
            .map(|e| e.describe());
        if let Some(why) = self.ctx.health.note(silent.as_deref()) {
            self.ctx.halt.set(StopReason::TargetLost(why));
        }
    }

    /// Whether this case injects faults at all (its `faults:` or the current step's `fault:`).
    fn has_faults(&self) -> bool {
        self.case_faults || self.step.fault.is_armed()
    }

    /// Checks `expect` against a step's call (its answer, and what the step read from it in
    /// `obs`), emits the call's rows, and returns the check.
    pub(super) fn check<O>(
        &mut self,
        expect: &StepExpect,
        rec: &mut Recorded<O>,
        obs: Observed<'_>,
    ) -> Check {
        let error = rec.error.clone();
        let obs = Observed {
            error: error.as_ref(),
            status: rec.status(),
            reply: rec.reply.as_deref(),
            ..obs
        };
        let check = check_step(expect, &obs);
        // The answer this step got, for its findings (a target profile pins it).
        self.step.last_answer = Some((
            rec.status(),
            error
                .as_ref()
                .and_then(|e| e.code.clone().or_else(|| e.error_type.clone())),
        ));
        // Refused credentials stop the whole run: every other case would hear the same. An
        // answer the case's own fault made is the case's doing, never the target's (a latency
        // it injected changes no answer).
        if let (Check::Error(_), Some(err)) = (&check, &error)
            && err.kind == FailureKind::Refused
            && !err.case_made()
        {
            self.ctx
                .halt
                .set(StopReason::CredentialsRefused(err.describe()));
        }
        self.emit_rows(rec);
        check
    }
}

/// The record of a call given up while in flight: one `info` row saying why.
fn abandoned_call<O>(meta: CallMeta, started_at: DateTime<Utc>, why: &str) -> Recorded<O> {
    let row = sqsprobe_core::evidence::format::Call {
        error_message: Some(format!("abandoned: {why}")),
        ..meta.row(started_at, meta.clock.now())
    };
    Recorded {
        output: None,
        error: Some(CallError {
            kind: FailureKind::NoResponse,
            code: None,
            error_type: None,
            status: None,
            sender_fault: None,
            message: Some(format!("abandoned: {why}")),
            injected: None,
            denied: false,
        }),
        rows: vec![row],
        credentials: Vec::new(),
        final_status: None,
        reply: None,
    }
}

/// What the current step armed for its calls and what they answered; begun afresh for each
/// step.
#[derive(Debug, Default)]
struct StepState {
    /// The answer (status, error code) of the step's last checked call.
    last_answer: Option<(Option<u16>, Option<String>)>,
    /// The step's own `fault:`, armed for the step.
    fault: StepFault,
    /// The step's `wire:`, resolved (see [`Caller::arm_wire`]).
    wire: Option<StepWire>,
}

impl StepState {
    /// The state `step` starts with: its `fault:` armed, no wire form (the step arms its own),
    /// no answer yet.
    fn new(step: &Step) -> Self {
        StepState {
            last_answer: None,
            fault: StepFault::new(step.fault.as_ref()),
            wire: None,
        }
    }
}

/// A step's `wire:`, resolved for its call.
#[derive(Debug, Clone)]
struct StepWire {
    /// The SQS operation the form applies to (the step's own call, not the harness's).
    operation: &'static str,
    /// The name of the queue whose URL the request goes to.
    to_name: Option<String>,
    form: WireForm,
}

impl StepWire {
    /// The call row's `wire` (its `reply` is filled per attempt).
    fn evidence(&self) -> sqsprobe_core::evidence::format::WireEvidence {
        sqsprobe_core::evidence::format::WireEvidence {
            method: self.form.method.as_str().to_string(),
            to: self.to_name.clone(),
            accept: self.form.accept.map(|a| a.as_str().to_string()),
            no_params: self.form.no_params,
            unindexed: self.form.unindexed,
            reply: None,
        }
    }
}
