//! Call plumbing shared by every step: the configuration of each call, the evidence metadata of a
//! call, abandoning a call on Ctrl-C, and checking a step's response before its rows go out.

use super::*;

impl CaseRun {
    /// The configuration one call runs with (see [`crate::runner::policy`]): its retries
    /// (steps follow the case's `retries:`; the harness's own calls retry briefly, and not at
    /// all once the target is lost) and its attempt timeout (a receive's wait plus the call
    /// timeout; the call timeout for anything else).
    ///
    /// A call about a queue of another region (its `region:`) is signed for that region, which
    /// on AWS also picks that region's endpoint: the one client of the run serves every region.
    pub(super) fn call_config(&self, meta: &CallMeta) -> aws_sdk_sqs::config::Builder {
        // A lost target, or a run a signal is ending: each harness call gets one bounded
        // attempt, so teardown ends within a call timeout per queue.
        let lost = matches!(self.ctx.halt.reason(), Some(StopReason::TargetLost(_)));
        let config = crate::runner::policy::call_config(
            meta.phase,
            self.case.retries,
            meta.wait,
            self.ctx.call_timeout,
            lost || *self.ctx.cancel.borrow(),
        );
        match &meta.region {
            Some(region) => config.region(aws_sdk_sqs::config::Region::new(region.clone())),
            None => config,
        }
    }

    /// The metadata of a call about the queue labelled `queue` (its name and region come from
    /// the label), or about no queue.
    pub(super) fn meta(
        &self,
        phase: Phase,
        step: Option<&Step>,
        action: &'static str,
        attempt: Option<String>,
        queue: Option<&str>,
    ) -> CallMeta {
        let q = queue.and_then(|l| self.queues.get(l));
        CallMeta {
            run_id: self.ctx.run_id.clone(),
            case: self.case.id.clone(),
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

    /// Arms the step's `wire:` for its call (the step loop cleared the previous step's): the
    /// queue it names is resolved to its URL now.
    pub(super) fn arm_wire(&mut self, step: &Step) -> Result<(), String> {
        let Some(wire) = &step.wire else {
            return Ok(());
        };
        let to = match &wire.to {
            Some(label) => {
                let url = self.queues.url(&label.value)?;
                Some((self.queues.name(&label.value), url))
            }
            None => None,
        };
        let operation = crate::suite::step_calls(&step.action)
            .first()
            .copied()
            .ok_or_else(|| format!("step {} makes no SQS call for `wire`", step.index + 1))?;
        self.step.wire = Some(StepWire {
            operation,
            to_name: to.as_ref().map(|(name, _)| name.clone()),
            form: crate::runner::query_protocol::WireForm {
                method: wire.method,
                to_url: to.map(|(_, url)| url),
                accept: wire.accept,
                no_params: wire.no_params,
            },
        });
        Ok(())
    }

    /// Runs one SDK call with its configuration (use [`call!`]); unless `finish`, the call is
    /// abandoned (as an `info` row) if the run is interrupted or the case reaches its deadline.
    pub(super) async fn call<O, E, F, Fut>(
        &self,
        meta: CallMeta,
        finish: bool,
        send: F,
    ) -> Recorded<O>
    where
        F: FnOnce(crate::runner::call::AttemptRecorder, aws_sdk_sqs::config::Builder) -> Fut,
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
            config = config.interceptor(crate::runner::query_protocol::WireInterceptor(
                w.form.clone(),
            ));
        }
        let (operation, queue) = (meta.action, meta.label.clone());
        let faulty = matches!(meta.phase, Phase::Step | Phase::Observe) && self.has_faults();
        let send = |r: crate::runner::call::AttemptRecorder| {
            // Faults go under the SDK, for the steps' calls only: the harness's own calls
            // (setup, teardown) always reach the target as they are.
            let config = if faulty {
                config.http_client(crate::runner::faults::FaultClient::new(
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
        let rec = if finish {
            record(meta, &self.masker, send).await
        } else {
            let started_at = self.ctx.clock.now();
            let fallback = meta.clone();
            tokio::select! {
                rec = record(meta, &self.masker, send) => rec,
                _ = self.until_stopped() => {
                    let why = match self.stop_requested() {
                        Some(StopReason::Deadline(_)) => "the case reached its deadline".to_string(),
                        Some(StopReason::Interrupted) | None => "the run was interrupted".to_string(),
                        Some(other) => format!("the run stopped ({})", other.cut_short()),
                    };
                    abandoned = true;
                    abandoned_call(fallback, started_at, &why)
                }
            }
        };
        let mut rec = rec;
        self.see_denies(operation, queue.as_deref(), &mut rec);
        self.account(&rec, abandoned);
        rec
    }

    /// Counts a call's requests against the run's budget and its answer against the target's
    /// health; either may stop the run. A call the run abandoned (it was stopping) says
    /// nothing about the target, and once a signal is ending the run nothing declares the
    /// target lost: the signal is the run's cause of stopping.
    fn account<O>(&self, rec: &Recorded<O>, abandoned: bool) {
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
        self.faults_fired
            .fetch_add(fired, std::sync::atomic::Ordering::Relaxed);
        // An injected fault says nothing about the target's health.
        if abandoned
            || *self.ctx.cancel.borrow()
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
        !self.case.faults.is_empty() || self.step.fault.is_armed()
    }

    pub(super) fn emit_rows<O>(&self, rec: &mut Recorded<O>) {
        for row in rec.rows.drain(..) {
            self.emit(Record::Call(row));
        }
    }

    /// Checks the step's expectations, emits the call's rows, and returns the check.
    pub(super) fn judge<O>(
        &mut self,
        step: &Step,
        rec: &mut Recorded<O>,
        obs: Observed<'_>,
    ) -> Check {
        let expect = step.expect.clone();
        self.judge_with(step, &expect, rec, obs)
    }

    pub(super) fn judge_with<O>(
        &mut self,
        _step: &Step,
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
        // answer the case's own fault injected is the case's doing, never the target's.
        if let (Check::Error(_), Some(err)) = (&check, &error)
            && err.kind == FailureKind::Refused
            && err.injected.is_none()
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
fn abandoned_call<O>(meta: CallMeta, started_at: chrono::DateTime<Utc>, why: &str) -> Recorded<O> {
    let row = crate::evidence::format::Call {
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
pub(super) struct StepState {
    /// The answer (status, error code) of the step's last checked call.
    pub last_answer: Option<(Option<u16>, Option<String>)>,
    /// The step's own `fault:`, armed for the step.
    pub fault: crate::runner::faults::StepFault,
    /// The step's `wire:`, resolved (see [`CaseRun::arm_wire`]).
    pub wire: Option<StepWire>,
}

impl StepState {
    /// The state `step` starts with: its `fault:` armed, no wire form (the step arms its own),
    /// no answer yet.
    pub(super) fn new(step: &Step) -> Self {
        StepState {
            last_answer: None,
            fault: crate::runner::faults::StepFault::new(step.fault.as_ref()),
            wire: None,
        }
    }
}

/// A step's `wire:`, resolved for its call.
#[derive(Debug, Clone)]
pub(super) struct StepWire {
    /// The SQS operation the form applies to (the step's own call, not the harness's).
    pub operation: &'static str,
    /// The name of the queue whose URL the request goes to.
    pub to_name: Option<String>,
    pub form: crate::runner::query_protocol::WireForm,
}

impl StepWire {
    /// The call row's `wire` (its `reply` is filled per attempt).
    fn evidence(&self) -> crate::evidence::format::WireEvidence {
        crate::evidence::format::WireEvidence {
            method: self.form.method.as_str().to_string(),
            to: self.to_name.clone(),
            accept: self.form.accept.map(|a| a.as_str().to_string()),
            no_params: self.form.no_params,
            reply: None,
        }
    }
}
