//! Running one case: create its queues, run its steps, observe, tear down — gathering facts.
//!
//! A case holds everything an experiment needs to know about itself: which attempt received
//! which handle (so a step can name it), how often each message was delivered, which sends and
//! receives got no definite answer; what its acknowledgements were is read from its own call
//! rows (`classify::ack_history`). It decides nothing: at the end it hands those facts to
//! [`classify::judge`]. Raw handles and bodies live only in this memory; everything that
//! leaves it goes through the case's [`Masker`].
//!
//! The case is kept in parts, one per responsibility, and a step is a function handed the
//! parts it works on (`steps.rs` dispatches; its signature says what a step can touch):
//! - the [`Caller`] (`calls.rs`): the one way the case calls SQS, with what every call needs
//!   (the run's context, the masker, the faults, the denies of `denies.rs`, the stops of
//!   `stop.rs`) and what the current step armed and heard;
//! - the [`Ledger`] (`ledger.rs`): what was sent, received, delivered and acknowledged;
//! - the [`QueueTable`] (`queue_table.rs`): the queues by label, their leases, move tasks;
//! - the [`CaseRecord`] (`record.rs`): what the judge reads besides the ledger.
//!
//! The queues' creation and teardown are `lifecycle.rs`; the steps are by kind in
//! `messages.rs`, `acks.rs`, `observe.rs`, `admin.rs`, `move_tasks.rs`, `permissions.rs` and
//! `deny.rs`.

// First, so that its macros (`call!`, `one_call!`) are in scope in every step file after it.
#[macro_use]
mod calls;
mod acks;
mod admin;
mod denies;
mod deny;
mod ledger;
mod lifecycle;
mod messages;
mod move_tasks;
mod observe;
mod permissions;
mod queue_table;
mod record;
mod steps;
mod stop;

use calls::Caller;
use ledger::Ledger;
use queue_table::QueueTable;
use record::CaseRecord;

use super::call::rfc3339;
use super::context::RunContext;
use super::target::TargetKind;
use chrono::Utc;
use sqsprobe_core::classify::{self, CaseFacts, Check, StepResult, StopReason};
use sqsprobe_core::evidence::Masker;
use sqsprobe_core::evidence::format::{
    CaseEnd, CaseStart, MessageOutcome, QueueCleanup, Record, StepEnd, Window,
};
use sqsprobe_core::suite::model::Case;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// How long past its deadline a case waits for a call that is never abandoned (a create, a
/// teardown delete) before it is cut off regardless.
const DEADLINE_BACKSTOP: Duration = Duration::from_secs(5);

/// Runs `case` and returns its closing record, for the run to map through the target profile
/// and send (a case sends its own `case_start`, calls and steps, not its `case_end`).
pub(crate) async fn run_case(ctx: Arc<RunContext>, suite_path: String, case: Case) -> CaseEnd {
    let mut run = CaseRun::new(ctx, suite_path, case, None);
    run.execute().await.0
}

/// Runs trial `trial` (1-based) of a multi-trial case on its own fresh queues, and returns its
/// `trial_end` (already emitted) with the judgement the trials are pooled from. The case's
/// `case_start` is the caller's, once for all its trials.
pub(crate) async fn run_trial(
    ctx: Arc<RunContext>,
    suite_path: String,
    case: Case,
    trial: u32,
) -> (CaseEnd, classify::Judgement) {
    let mut run = CaseRun::new(ctx, suite_path, case, Some(trial));
    run.execute().await
}

/// One run of a case (or of one trial of it): its parts (see the module doc) and what the
/// case keeps for its own records.
struct CaseRun {
    /// How the case calls SQS: the run's context, the masker, the faults and denies, the
    /// current step's armed state (see `calls.rs`).
    sqs: Caller,
    /// The suite file the case is from, for `case_end`.
    suite: String,
    case: Case,
    /// The case's queues, their visibility timeouts and move tasks (see `queue_table.rs`).
    queues: QueueTable,
    /// What was sent, received, delivered and acknowledged (see `ledger.rs`).
    ledger: Ledger,
    /// The facts the judge reads besides the ledger's, filled in as the case runs.
    record: CaseRecord,
    /// When the case started, on the run's clock and on the monotonic one.
    started_at: chrono::DateTime<Utc>,
    started: Instant,
}

impl CaseRun {
    fn new(ctx: Arc<RunContext>, suite: String, case: Case, trial: Option<u32>) -> Self {
        // Each trial has queues of its own: `<case>-t<k>` in their names.
        let name_key = match trial {
            Some(k) => format!("{}-t{k}", case.id),
            None => case.id.clone(),
        };
        let queues = QueueTable::new(&case, &ctx.run_id, &name_key, &ctx.region);
        let started_at = ctx.clock.now();
        Self {
            sqs: Caller::new(ctx, &case, trial),
            suite,
            case,
            queues,
            ledger: Ledger::default(),
            record: CaseRecord::default(),
            started_at,
            started: Instant::now(),
        }
    }

    /// The case's `case_start` (`trials` set for a multi-trial case).
    fn case_start(&self, trials: Option<u32>) -> CaseStart {
        case_start(
            &self.sqs.ctx().run_id,
            &self.suite,
            &self.case,
            self.started_at,
            trials,
            self.sqs.ctx().target,
        )
    }

    async fn execute(&mut self) -> (CaseEnd, classify::Judgement) {
        if self.sqs.trial().is_none() {
            self.sqs.emit(Record::CaseStart(self.case_start(None)));
        }

        let backstop = self.sqs.stops().deadline() + DEADLINE_BACKSTOP;
        let ran = tokio::time::timeout_at(backstop, self.setup_and_steps()).await;
        if ran.is_err() {
            // A call that is never abandoned hung past the deadline: cut it off here.
            self.record
                .stopped
                .get_or_insert(StopReason::Deadline(self.sqs.stops().deadline_text()));
        }
        if matches!(self.record.stopped, Some(StopReason::Deadline(_))) {
            lifecycle::sweep_unregistered(&mut self.sqs, &mut self.queues).await;
        }
        let cleanup = lifecycle::teardown(
            &mut self.sqs,
            &mut self.queues,
            &mut self.record.teardown_errors,
        )
        .await;
        self.finish(cleanup)
    }

    async fn setup_and_steps(&mut self) {
        // A stop before anything is created: the case creates nothing (setup's calls are
        // never abandoned, so a case must not begin one once the run is stopping).
        if let Some(stop) = self.sqs.stops().requested() {
            self.record.stopped = Some(stop);
            return;
        }
        if let Err(message) = lifecycle::setup(&mut self.sqs, &mut self.queues, &self.case).await {
            // A setup cut short by a stop is that stop, not a broken target.
            match self.sqs.stops().requested() {
                Some(stop) => self.record.stopped = Some(stop),
                None => self.record.setup_error = Some(self.sqs.masker().mask(&message)),
            }
            return;
        }
        let steps = self.case.steps.clone();
        for step in &steps {
            if let Some(stop) = self.sqs.stops().requested() {
                self.record.stopped = Some(stop);
                return;
            }
            // Before anything of this step is sent, the lift of a deny included: the previous
            // step's fault and wire form are its own. The step arms its own (`begin_step`,
            // `arm_wire`).
            self.sqs.end_step();
            deny::lift(&mut self.sqs, &self.queues, false).await;
            self.sqs.begin_step(step);
            let step_started = self.sqs.ctx().clock.now();
            let check = steps::run(
                &mut self.sqs,
                &self.case,
                &mut self.queues,
                &mut self.ledger,
                &mut self.record.window,
                step,
            )
            .await;
            self.sqs.emit(Record::Step(StepEnd {
                run_id: self.sqs.ctx().run_id.clone(),
                case: self.case.id.clone(),
                step: step.index,
                line: step.pos.line,
                keyword: step.action.keyword().to_string(),
                started_at: rfc3339(step_started),
                ended_at: rfc3339(self.sqs.ctx().clock.now()),
                check: classify::recorded::check_kind(&check),
                trial: self.sqs.trial(),
            }));
            let passed = check == Check::Pass;
            let (status, code) = self.sqs.take_answer();
            self.record.results.push(StepResult {
                index: step.index,
                line: step.pos.line,
                keyword: step.action.keyword().to_string(),
                check: mask_check(self.sqs.masker(), check),
                status,
                code,
            });
            if !passed {
                // A step that could not finish because the case was stopped says so too.
                self.record.stopped = self.sqs.stops().requested();
                return;
            }
        }
    }

    // ----- judgement -----------------------------------------------------------------------

    /// Hands the gathered facts to the judge and builds the case's closing record.
    fn finish(&mut self, cleanup: Vec<QueueCleanup>) -> (CaseEnd, classify::Judgement) {
        let facts = CaseFacts {
            line: self.case.pos.line,
            setup_error: self.record.setup_error.clone(),
            steps: self.record.results.clone(),
            steps_planned: self.case.steps.len(),
            stopped: self.record.stopped.clone(),
            window: self.record.window.clone(),
            // A trial's outcome is judged with the other trials' (classify::trials::pool).
            expect_outcome: match self.sqs.trial() {
                Some(_) => None,
                None => self.case.expect.outcome.clone(),
            },
            expect_decision: self.case.expect.decision.as_ref().map(|d| d.value.clone()),
            acks: self.sqs.ack_facts(),
            unacknowledged: self.sqs.unacknowledged(),
            teardown_errors: self.record.teardown_errors.clone(),
            faults_fired: self.sqs.faults_fired(),
            faulted_acks: self.sqs.faulted_acks(),
        };
        // The case is judged on its facts as the evidence holds them, read back: what `sqsprobe
        // check` will read. A record that does not read back is a harness bug, said as one.
        let masker = self.sqs.masker();
        let record = classify::recorded::record_from_facts(
            &facts,
            &self.sqs.ctx().run_id,
            &self.case.id,
            self.sqs.trial(),
            &|s| masker.mask(s),
        );
        let expect = classify::recorded::expect_record(&self.case.expect);
        let judged = match classify::recorded::facts_from_record(&record, expect.as_ref()) {
            Ok(read_back) => classify::judge(&read_back),
            Err(why) => classify::judge(&CaseFacts {
                setup_error: Some(format!(
                    "the case's facts do not read back from their evidence record ({why})"
                )),
                ..facts
            }),
        };
        self.sqs.emit(Record::Facts(record));
        let judged_for_pool = judged.clone();
        let outcomes = judged
            .messages
            .iter()
            .map(|m| MessageOutcome {
                message: m.label.clone(),
                message_id: m.message_id.clone(),
                class: classify::recorded::class_name(m.class),
                reason: m.reason.as_deref().map(|r| self.sqs.masker().mask(r)),
                sightings: m.sightings,
                deliveries: self.ledger.deliveries_of(&m.label),
            })
            .collect();
        let window = self.record.window.as_ref().map(|w| Window {
            step: w.step,
            line: w.line,
            planned_ms: w.planned_ms,
            elapsed_ms: w.elapsed_ms,
            receives_used: w.receives_used,
            receive_budget: w.receive_budget,
            ended: judged
                .window_end
                .as_ref()
                .map(|e| e.label())
                .unwrap_or(sqsprobe_core::evidence::format::WindowEnded::Unknown),
            unknown_receives: w.unknown_receives,
        });
        let findings = judged
            .findings
            .into_iter()
            .map(|f| sqsprobe_core::evidence::format::Finding {
                message: self.sqs.masker().mask(&f.message),
                ..f
            })
            .collect();
        let end = CaseEnd {
            run_id: self.sqs.ctx().run_id.clone(),
            case: self.case.id.clone(),
            suite: self.suite.clone(),
            verdict: judged.verdict,
            reason: self.sqs.masker().mask(&judged.reason),
            findings,
            classification: judged.class.map(classify::recorded::class_name),
            outcomes,
            decision: judged.decision,
            window,
            receives: self.ledger.receives(),
            deliveries: self.ledger.deliveries().clone(),
            queues: cleanup,
            profile_note: None,
            started_at: rfc3339(self.started_at),
            ended_at: rfc3339(self.sqs.ctx().clock.now()),
            duration_ms: self.started.elapsed().as_millis() as u64,
            trial: self.sqs.trial(),
            trials: None,
        };
        if self.sqs.trial().is_some() {
            self.sqs.emit(Record::TrialEnd(end.clone()));
        }
        (end, judged_for_pool)
    }
}

/// The `case_start` of `case`.
pub(crate) fn case_start(
    run_id: &str,
    suite: &str,
    case: &Case,
    at: chrono::DateTime<Utc>,
    trials: Option<u32>,
    target: TargetKind,
) -> CaseStart {
    CaseStart {
        run_id: run_id.to_string(),
        case: case.id.clone(),
        suite: suite.to_string(),
        line: case.pos.line,
        title: case.title.clone(),
        tags: case.tags.clone(),
        behaviour: case.behaviour.clone(),
        sources: case.sources.clone(),
        started_at: rfc3339(at),
        trials,
        emulator_chaos: lifecycle::emulator_chaos(case, target).map(str::to_string),
        area: case.area.clone(),
        aspect: Some(case.aspect.key().to_string()),
        expect: sqsprobe_core::classify::recorded::expect_record(&case.expect),
    }
}

/// A check with its text masked: findings quote server messages, which may quote handles.
fn mask_check(masker: &Masker, check: Check) -> Check {
    match check {
        Check::Pass => Check::Pass,
        Check::Fail(f) => Check::Fail(f.iter().map(|m| masker.mask(m)).collect()),
        Check::Inconclusive(m) => Check::Inconclusive(masker.mask(&m)),
        Check::Error(m) => Check::Error(masker.mask(&m)),
    }
}
