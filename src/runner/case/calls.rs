//! Call plumbing shared by every step: the configuration of each call, the evidence metadata of a
//! call, abandoning a call on Ctrl-C, and checking a step's response before its rows go out.

use super::*;

impl CaseRun {
    /// The configuration one call runs with: steps and observations follow the case's
    /// `retries:`; setup and teardown always retry (they are the harness's own calls).
    pub(super) fn call_config(&self, phase: Phase) -> aws_sdk_sqs::config::Builder {
        match phase {
            Phase::Step | Phase::Observe => retry_override(self.case.retries),
            Phase::Setup | Phase::Teardown => {
                retry_override(crate::suite::model::RetryPolicy::Standard)
            }
        }
    }

    pub(super) fn meta(
        &self,
        phase: Phase,
        step: Option<&Step>,
        action: &'static str,
        attempt: Option<String>,
        queue: Option<String>,
    ) -> CallMeta {
        CallMeta {
            run_id: self.ctx.run_id.clone(),
            case: self.case.id.clone(),
            phase,
            step: step.map(|s| s.index),
            line: step.map(|s| s.pos.line),
            action,
            attempt,
            queue,
        }
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
        let config = self.call_config(meta.phase);
        let send = |r| send(r, config);
        if finish {
            return record(meta, &self.masker, send).await;
        }
        let started_at = Utc::now();
        let fallback = meta.clone();
        tokio::select! {
            rec = record(meta, &self.masker, send) => rec,
            _ = self.until_stopped() => {
                let why = match self.stop_requested() {
                    Some(Stop::Deadline(_)) => "the case reached its deadline",
                    _ => "the run was interrupted",
                };
                abandoned_call(fallback, started_at, why)
            }
        }
    }

    pub(super) fn emit_rows<O>(&self, rec: &mut Recorded<O>) {
        for row in rec.rows.drain(..) {
            self.emit(Record::Call(row));
        }
    }

    pub(super) fn queue_url(&self, label: &str) -> Result<(String, String), String> {
        let q = self
            .queues
            .get(label)
            .ok_or_else(|| format!("queue `{label}` is not defined in this case"))?;
        match &q.url {
            Some(url) => Ok((url.clone(), q.name.clone())),
            None => Err(format!(
                "queue `{label}` was never created (create: false, or its create-queue step failed)"
            )),
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
            ..obs
        };
        let check = check_step(expect, &obs);
        // The answer this step got, for its findings (a target profile pins it).
        self.last_answer = Some((
            rec.status(),
            error
                .as_ref()
                .and_then(|e| e.code.clone().or_else(|| e.error_type.clone())),
        ));
        // Refused credentials stop the whole run: every other case would hear the same.
        if let (Check::Error(_), Some(err)) = (&check, &error)
            && err.kind == FailureKind::Refused
        {
            self.ctx
                .halt
                .set(HaltReason::CredentialsRefused(err.describe()));
        }
        self.emit_rows(rec);
        check
    }
}

/// The record of a call given up while in flight: one `info` row saying why.
fn abandoned_call<O>(meta: CallMeta, started_at: chrono::DateTime<Utc>, why: &str) -> Recorded<O> {
    let row = crate::evidence::format::Call {
        error_message: Some(format!("abandoned: {why}")),
        ..meta.row(started_at, Utc::now())
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
        }),
        rows: vec![row],
        credentials: Vec::new(),
        final_status: None,
    }
}
