//! Running one case: create its queues, run its steps, observe, tear down, judge.
//!
//! A case holds everything an experiment needs to know about itself: which attempt received
//! which handle, which receive was the latest for each message (so an ack with an older handle
//! is known to be stale), how often each message was delivered. Raw handles and bodies live
//! only in this memory; everything that leaves it goes through the case's [`Masker`].

/// Sends one SDK operation through [`CaseRun::call`], with the attempt recorder and the retry
/// policy attached: `send!(self, meta, retry, client.purge_queue().queue_url(&url))`.
macro_rules! send {
    ($run:expr, $meta:expr, $retry:expr, $op:expr) => {
        $run.call($meta, |r| {
            $op.customize()
                .interceptor(r)
                .config_override($retry)
                .send()
        })
    };
}

mod observe;
mod steps;

use observe::compare_outcomes;
use steps::business_key;

use super::RunContext;
use super::call::{CallError, CallMeta, FailureKind, Recorded, record, rfc3339};
use super::expect::{BatchOutcome, Check, Observed, ReceivedMsg, check_step};
use super::queues::{OwnedQueue, create_attributes, create_tags, queue_name, run_prefix};
use super::target::retry_override;
use crate::classify::{self, AckFacts, CaseFacts, CutReason, WindowEnd};
use crate::evidence::format::{
    CaseEnd, CaseStart, EntryEvidence, Finding, MessageEvidence, MessageOutcome, Phase,
    QueueCleanup, Record, Window,
};
use crate::evidence::{Masker, sha256_hex};
use crate::suite::model::{
    Action, Body, Case, HandleRef, Observe, OutcomeClass, OutcomeExpect, QueueDef, Receive,
    Send as SendStep, Step, StepExpect, arn_refs, substitute_arns,
};
use aws_sdk_sqs::types::{
    ChangeMessageVisibilityBatchRequestEntry, DeleteMessageBatchRequestEntry,
    MessageAttributeValue, MessageSystemAttributeName, QueueAttributeName,
    SendMessageBatchRequestEntry,
};
use aws_smithy_types::Blob;
use base64::Engine;
use chrono::Utc;
use md5::{Digest, Md5};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Time a case may run past its computed budget before it is stopped as inconclusive.
const DEADLINE_SLACK: Duration = Duration::from_secs(10);

/// One receive of one message by a named attempt.
#[derive(Debug, Clone)]
struct Receipt {
    handle: String,
    message_id: String,
    label: Option<String>,
    /// Order of this receive among all receives of the case; higher is newer.
    seq: u64,
}

/// A resolved handle reference: the handle, and (attempt name, receipt) when it came from a
/// receive of the suite rather than a literal.
type ResolvedHandle = (String, Option<(String, Receipt)>);

/// A queue of the case, by label.
#[derive(Debug, Clone)]
struct CaseQueue {
    name: String,
    url: Option<String>,
    arn: Option<String>,
    /// Created by this case and not yet deleted (by teardown or a delete-queue step).
    alive: bool,
    created: bool,
}

/// A message the case sent.
#[derive(Debug, Clone, Default)]
struct SentMessage {
    message_id: Option<String>,
    business_key: Option<String>,
}

/// How the case's last observe step went.
#[derive(Debug, Clone)]
struct ObserveRecord {
    window: Window,
    end: WindowEnd,
    /// (label, message id, sightings), in tracking order.
    tracked: Vec<(String, Option<String>, u32)>,
}

/// Why the steps stopped early.
enum Stop {
    Failed,
    Inconclusive,
    Errored,
    Interrupted,
}

/// Runs `case` and returns its closing record (already emitted).
pub async fn run_case(ctx: Arc<RunContext>, suite_path: String, case: Case) -> CaseEnd {
    let mut run = CaseRun::new(ctx, suite_path, case);
    run.execute().await
}

struct CaseRun {
    ctx: Arc<RunContext>,
    suite: String,
    case: Case,
    masker: Masker,
    queues: BTreeMap<String, CaseQueue>,
    /// Creation order, for teardown in reverse.
    created_order: Vec<String>,
    sent: BTreeMap<String, SentMessage>,
    by_id: HashMap<String, String>,
    attempts: HashMap<String, Vec<Receipt>>,
    latest: HashMap<String, u64>,
    seq: u64,
    deliveries: BTreeMap<String, u32>,
    receives: u32,
    acks: AckFacts,
    facts: CaseFacts,
    findings: Vec<Finding>,
    observe: Option<ObserveRecord>,
    move_tasks: HashMap<String, String>,
    started_at: chrono::DateTime<Utc>,
    started: Instant,
}

impl CaseRun {
    fn new(ctx: Arc<RunContext>, suite: String, case: Case) -> Self {
        let mut queues = BTreeMap::new();
        for def in &case.queues {
            queues.insert(
                def.label.clone(),
                Self::queue_entry(&ctx.run_id, &case.id, def),
            );
        }
        for step in &case.steps {
            if let Action::CreateQueue(def) = &step.action {
                queues
                    .entry(def.label.clone())
                    .or_insert_with(|| Self::queue_entry(&ctx.run_id, &case.id, def));
            }
        }
        Self {
            ctx,
            suite,
            case,
            masker: Masker::new(),
            queues,
            created_order: Vec::new(),
            sent: BTreeMap::new(),
            by_id: HashMap::new(),
            attempts: HashMap::new(),
            latest: HashMap::new(),
            seq: 0,
            deliveries: BTreeMap::new(),
            receives: 0,
            acks: AckFacts::default(),
            facts: CaseFacts::default(),
            findings: Vec::new(),
            observe: None,
            move_tasks: HashMap::new(),
            started_at: Utc::now(),
            started: Instant::now(),
        }
    }

    fn queue_entry(run_id: &str, case: &str, def: &QueueDef) -> CaseQueue {
        CaseQueue {
            name: format!(
                "{}{}",
                queue_name(run_id, case, &def.label, def.kind),
                def.name_suffix.as_deref().unwrap_or_default()
            ),
            url: None,
            arn: None,
            alive: false,
            created: false,
        }
    }

    fn emit(&self, record: Record) {
        // The receiver lives as long as the run; if it is gone the run is ending anyway.
        let _ = self.ctx.events.send(record);
    }

    fn interrupted(&self) -> bool {
        *self.ctx.cancel.borrow()
    }

    async fn execute(&mut self) -> CaseEnd {
        self.emit(Record::CaseStart(CaseStart {
            run_id: self.ctx.run_id.clone(),
            case: self.case.id.clone(),
            suite: self.suite.clone(),
            line: self.case.pos.line,
            title: self.case.title.clone(),
            tags: self.case.tags.clone(),
            behaviour: self.case.behaviour.clone(),
            sources: self.case.sources.clone(),
            started_at: rfc3339(self.started_at),
        }));

        let mut stop = None;
        if let Err(message) = self.setup().await {
            // A setup cut short by Ctrl-C is an interruption, not a broken target.
            if self.interrupted() {
                stop = Some(Stop::Interrupted);
            } else {
                self.error(None, self.case.pos.line, message);
                stop = Some(Stop::Errored);
            }
        }
        if stop.is_none() {
            // The budget validate computed, plus slack for a slow target: past it the case
            // stops where it is, as inconclusive, and still tears down.
            let deadline = crate::suite::case_budget(&self.case) + DEADLINE_SLACK;
            let steps = self.case.steps.clone();
            let outcome = tokio::time::timeout(deadline, async {
                for step in &steps {
                    if self.interrupted() {
                        return Some(Stop::Interrupted);
                    }
                    if let Some(s) = self.step(step).await {
                        return Some(s);
                    }
                }
                None
            })
            .await;
            stop = match outcome {
                Ok(s) => s,
                Err(_) => {
                    self.sweep_unregistered().await;
                    self.facts.inconclusive = true;
                    self.findings.push(Finding {
                        step: None,
                        line: self.case.pos.line,
                        message: format!(
                            "the case ran past its deadline ({}: its budget plus {}s)",
                            crate::duration::format(deadline),
                            DEADLINE_SLACK.as_secs()
                        ),
                    });
                    Some(Stop::Inconclusive)
                }
            };
        }
        if matches!(stop, Some(Stop::Interrupted)) {
            self.facts.inconclusive = true;
            self.findings.push(Finding {
                step: None,
                line: self.case.pos.line,
                message: "the run was interrupted before the case finished".to_string(),
            });
        }
        let cleanup = self.teardown().await;
        self.finish(cleanup)
    }

    fn error(&mut self, step: Option<usize>, line: u32, message: String) {
        self.facts.errored = true;
        self.findings.push(Finding {
            step,
            line,
            message: self.masker.mask(&message),
        });
    }

    // ----- setup and teardown -------------------------------------------------------------

    /// Creates the case's `queues:`, dead-letter targets first so their ARNs exist.
    async fn setup(&mut self) -> Result<(), String> {
        let defs: Vec<QueueDef> = self
            .case
            .queues
            .iter()
            .filter(|d| d.create)
            .cloned()
            .collect();
        for def in creation_order(defs) {
            let rec = self.create_queue(&def, Phase::Setup, None).await?;
            if let Some(err) = rec.error {
                return Err(format!(
                    "failed to create queue `{}` ({}): {}",
                    def.label,
                    self.queues[&def.label].name,
                    err.describe()
                ));
            }
        }
        Ok(())
    }

    /// CreateQueue for `def`; records the URL and ARN and registers ownership on success.
    async fn create_queue(
        &mut self,
        def: &QueueDef,
        phase: Phase,
        step: Option<&Step>,
    ) -> Result<Recorded<aws_sdk_sqs::operation::create_queue::CreateQueueOutput>, String> {
        // ARNs of other queues this one refers to.
        let mut needed: Vec<String> = Vec::new();
        if let Some(r) = &def.redrive {
            needed.push(r.dlq.value.clone());
        }
        if let Some(crate::suite::model::RedriveAllow::ByQueue(labels)) = &def.redrive_allow {
            needed.extend(labels.iter().map(|l| l.value.clone()));
        }
        // A queue not created yet (a redrive-allow list naming its own source, say) gets the
        // ARN its name will have, never an empty string.
        let mut arns: HashMap<String, String> = HashMap::new();
        for label in needed {
            let arn = self.arn_or_derived(&label).await;
            arns.insert(label, arn);
        }
        self.check_name_is_free(&def.label).await?;
        let attributes = create_attributes(def, &|l| arns.get(l).cloned());
        let attributes = self.resolve_arns(&attributes).await;
        let tags = create_tags(def, &self.ctx.run_id, &self.case.id);
        let name = self.queues[&def.label].name.clone();
        let client = self.ctx.client.clone();
        let retry = self.retry_for(phase);
        let meta = self.meta(phase, step, "CreateQueue", None, Some(name.clone()));
        // Not abandoned on Ctrl-C (unlike other calls): a create whose answer we dropped could
        // leave a queue behind that no one knows about.
        let mut rec = record(meta, &self.masker, |r| {
            let mut req = client.create_queue().queue_name(&name);
            for (k, v) in attributes {
                req = req.attributes(QueueAttributeName::from(k.as_str()), v);
            }
            for (k, v) in tags {
                req = req.tags(k, v);
            }
            req.customize().interceptor(r).config_override(retry).send()
        })
        .await;
        self.emit_rows(&mut rec);
        if let Some(url) = rec.output.as_ref().and_then(|o| o.queue_url()) {
            let url = url.to_string();
            self.adopt(&def.label, &url);
        }
        Ok(rec)
    }

    /// Whether the queue at `url` carries this run's tag. A target without tagging
    /// (ListQueueTags refused) cannot prove it either way and counts as not ours.
    async fn tagged_as_ours(&mut self, name: &str, url: &str) -> bool {
        let client = self.ctx.client.clone();
        let retry = self.retry_for(Phase::Teardown);
        let meta = self.meta(
            Phase::Teardown,
            None,
            "ListQueueTags",
            None,
            Some(name.to_string()),
        );
        let mut rec = record(meta, &self.masker, |r| {
            client
                .list_queue_tags()
                .queue_url(url)
                .customize()
                .interceptor(r)
                .config_override(retry)
                .send()
        })
        .await;
        self.emit_rows(&mut rec);
        rec.output
            .as_ref()
            .and_then(|o| o.tags())
            .and_then(|t| t.get(super::queues::RUN_TAG))
            .is_some_and(|run| *run == self.ctx.run_id)
    }

    /// Refuses to create `label` when a queue of its name already exists that this run does
    /// not hold: CreateQueue would answer with that queue's URL (same name and attributes), and
    /// a queue is only ours if this run created it.
    async fn check_name_is_free(&mut self, label: &str) -> Result<(), String> {
        let q = &self.queues[label];
        if q.alive {
            // Ours already (a create-queue step re-creating the same queue on purpose).
            return Ok(());
        }
        let name = q.name.clone();
        if self.lookup_url(&name, Phase::Setup).await.is_some() {
            return Err(format!(
                "queue {name} already exists and this run did not create it; refusing to use it"
            ));
        }
        Ok(())
    }

    /// GetQueueUrl by name, recorded but never abandoned: the URL if the queue exists.
    async fn lookup_url(&mut self, name: &str, phase: Phase) -> Option<String> {
        let client = self.ctx.client.clone();
        let retry = self.retry_for(phase);
        let meta = self.meta(phase, None, "GetQueueUrl", None, Some(name.to_string()));
        let mut rec = record(meta, &self.masker, |r| {
            client
                .get_queue_url()
                .queue_name(name)
                .customize()
                .interceptor(r)
                .config_override(retry)
                .send()
        })
        .await;
        self.emit_rows(&mut rec);
        rec.output
            .as_ref()
            .and_then(|o| o.queue_url())
            .map(str::to_string)
    }

    /// Registers `url` as this case's queue `label`: teardown will delete it.
    fn adopt(&mut self, label: &str, url: &str) {
        let q = self
            .queues
            .get_mut(label)
            .expect("label resolved at parse time");
        q.url = Some(url.to_string());
        q.alive = true;
        q.created = true;
        let name = q.name.clone();
        if !self.created_order.iter().any(|l| l == label) {
            self.created_order.push(label.to_string());
        }
        self.ctx.registry.add(OwnedQueue {
            name,
            url: url.to_string(),
            case: self.case.id.clone(),
        });
    }

    /// After a case was cut off mid-call (its deadline), a CreateQueue may have taken effect
    /// without our seeing the URL: look each unregistered queue up by name and adopt it if it
    /// carries this run's tag, so teardown deletes it.
    async fn sweep_unregistered(&mut self) {
        let labels: Vec<String> = self
            .queues
            .iter()
            .filter(|(_, q)| q.url.is_none())
            .map(|(l, _)| l.clone())
            .collect();
        for label in labels {
            let name = self.queues[&label].name.clone();
            if let Some(url) = self.lookup_url(&name, Phase::Teardown).await {
                // Only with this run's tag: anything else is left alone, as everywhere else.
                if self.tagged_as_ours(&name, &url).await {
                    self.adopt(&label, &url);
                }
            }
        }
    }

    /// `attributes` with each `${arn:<label>}` replaced: a created queue's own ARN, or for a
    /// queue never created (`create: false`) the ARN its name would have, in the account and
    /// region of the case's other queues.
    async fn resolve_arns(
        &mut self,
        attributes: &BTreeMap<String, String>,
    ) -> BTreeMap<String, String> {
        let labels: Vec<String> = attributes
            .values()
            .flat_map(|v| arn_refs(v))
            .map(str::to_string)
            .collect();
        if labels.is_empty() {
            return attributes.clone();
        }
        let mut arns = HashMap::new();
        for l in labels {
            let arn = self.arn_or_derived(&l).await;
            arns.insert(l, arn);
        }
        attributes
            .iter()
            .map(|(k, v)| {
                let value = substitute_arns(v, &|l| arns.get(l).cloned().unwrap_or_default());
                (k.clone(), value)
            })
            .collect()
    }

    /// The ARN of a queue of the case: its own once created, else the ARN its name would have
    /// in the account and region of the case's other queues (for not-found cases).
    async fn arn_or_derived(&mut self, label: &str) -> String {
        self.ensure_arn(label).await;
        if let Some(arn) = self.queues.get(label).and_then(|q| q.arn.clone()) {
            return arn;
        }
        if self.queues.values().all(|q| q.arn.is_none()) {
            let created: Vec<String> = self
                .queues
                .iter()
                .filter(|(_, q)| q.url.is_some())
                .map(|(l, _)| l.clone())
                .collect();
            for l in created {
                self.ensure_arn(&l).await;
            }
        }
        let prefix = self
            .queues
            .values()
            .find_map(|q| q.arn.as_deref().and_then(|a| a.rsplit_once(':')))
            .map(|(p, _)| p.to_string())
            .unwrap_or_else(|| "arn:aws:sqs:us-east-1:000000000000".to_string());
        self.queues
            .get(label)
            .map(|q| format!("{prefix}:{}", q.name))
            .unwrap_or_default()
    }

    /// Fetches the QueueArn of a created queue, once.
    async fn ensure_arn(&mut self, label: &str) {
        let Some(q) = self.queues.get(label) else {
            return;
        };
        if q.arn.is_some() {
            return;
        }
        let Some(url) = q.url.clone() else { return };
        let client = self.ctx.client.clone();
        let meta = self.meta(
            Phase::Setup,
            None,
            "GetQueueAttributes",
            None,
            Some(q.name.clone()),
        );
        let retry = self.retry_for(Phase::Setup);
        let mut rec = send!(
            self,
            meta,
            retry,
            client
                .get_queue_attributes()
                .queue_url(&url)
                .attribute_names(QueueAttributeName::QueueArn)
        )
        .await;
        if let Some(out) = &rec.output {
            let arn = out
                .attributes()
                .and_then(|a| a.get(&QueueAttributeName::QueueArn))
                .cloned();
            if let Some(q) = self.queues.get_mut(label) {
                q.arn = arn;
            }
        }
        self.emit_rows(&mut rec);
    }

    /// Deletes every queue this case created and still owns, newest first.
    async fn teardown(&mut self) -> Vec<QueueCleanup> {
        let mut cleanup = Vec::new();
        let order: Vec<String> = self.created_order.iter().rev().cloned().collect();
        for label in order {
            let q = self.queues[&label].clone();
            let Some(url) = q.url.clone() else { continue };
            if !q.alive {
                cleanup.push(QueueCleanup {
                    queue: q.name.clone(),
                    deleted: true,
                });
                continue;
            }
            // Ownership is checked against the run registry, not inferred from the name.
            if !self.ctx.registry.owns(&url) {
                continue;
            }
            let client = self.ctx.client.clone();
            let meta = self.meta(
                Phase::Teardown,
                None,
                "DeleteQueue",
                None,
                Some(q.name.clone()),
            );
            let retry = self.retry_for(Phase::Teardown);
            let mut rec = record(meta, &self.masker, |r| {
                client
                    .delete_queue()
                    .queue_url(&url)
                    .customize()
                    .interceptor(r)
                    .config_override(retry)
                    .send()
            })
            .await;
            // A queue that is already gone is cleaned up as far as we are concerned. Over the
            // query protocol only the legacy code arrives, not the JSON shape name.
            let gone = rec.error.as_ref().is_some_and(|e| {
                e.matches("QueueDoesNotExist")
                    || e.matches("AWS.SimpleQueueService.NonExistentQueue")
            });
            let deleted = rec.error.is_none() || gone;
            if deleted {
                self.ctx.registry.remove(&url);
                if let Some(q) = self.queues.get_mut(&label) {
                    q.alive = false;
                }
            } else if let Some(err) = rec.error.clone() {
                self.error(
                    None,
                    self.case.pos.line,
                    format!("failed to delete queue {}: {}", q.name, err.describe()),
                );
            }
            self.emit_rows(&mut rec);
            cleanup.push(QueueCleanup {
                queue: q.name.clone(),
                deleted,
            });
        }
        cleanup
    }

    // ----- calls ---------------------------------------------------------------------------

    fn retry_for(&self, phase: Phase) -> aws_sdk_sqs::config::Builder {
        match phase {
            Phase::Step | Phase::Observe => retry_override(self.case.retries),
            Phase::Setup | Phase::Teardown => {
                retry_override(crate::suite::model::RetryPolicy::Standard)
            }
        }
    }

    fn meta(
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

    /// Runs one SDK call, abandoning it (as an `info` row) if the run is interrupted.
    async fn call<O, E, F, Fut>(&self, meta: CallMeta, send: F) -> Recorded<O>
    where
        F: FnOnce(super::call::AttemptRecorder) -> Fut,
        Fut: std::future::Future<
                Output = Result<
                    O,
                    aws_sdk_sqs::error::SdkError<E, aws_smithy_runtime_api::http::Response>,
                >,
            >,
        E: aws_sdk_sqs::error::ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
        O: aws_sdk_sqs::operation::RequestId,
    {
        let mut cancel = self.ctx.cancel.clone();
        let started_at = Utc::now();
        let fallback = meta.clone();
        tokio::select! {
            rec = record(meta, &self.masker, send) => rec,
            _ = cancel.wait_for(|c| *c) => interrupted_call(fallback, started_at),
        }
    }

    fn emit_rows<O>(&self, rec: &mut Recorded<O>) {
        for row in rec.rows.drain(..) {
            self.emit(Record::Call(row));
        }
    }

    fn queue_url(&self, label: &str) -> Result<(String, String), String> {
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

    // ----- steps ---------------------------------------------------------------------------

    /// Runs one step; `Some(stop)` ends the case's steps.
    async fn step(&mut self, step: &Step) -> Option<Stop> {
        let line = step.pos.line;
        let outcome = match &step.action {
            Action::Sleep(d) => {
                let mut cancel = self.ctx.cancel.clone();
                tokio::select! {
                    _ = tokio::time::sleep(*d) => return None,
                    _ = cancel.wait_for(|c| *c) => return Some(Stop::Interrupted),
                }
            }
            Action::Observe(o) => self.observe(step, o).await,
            other => self.sqs_step(step, other).await,
        };
        match outcome {
            Ok(Check::Pass) => None,
            Ok(Check::Fail(failures)) => {
                self.facts.failed = true;
                for f in failures {
                    let message =
                        format!("step {} ({}): {f}", step.index + 1, step.action.keyword());
                    self.findings.push(Finding {
                        step: Some(step.index),
                        line,
                        message: self.masker.mask(&message),
                    });
                }
                Some(Stop::Failed)
            }
            Ok(Check::Inconclusive(why)) => {
                self.facts.inconclusive = true;
                let message = format!("step {} ({}): {why}", step.index + 1, step.action.keyword());
                self.findings.push(Finding {
                    step: Some(step.index),
                    line,
                    message: self.masker.mask(&message),
                });
                Some(if self.interrupted() {
                    Stop::Interrupted
                } else {
                    Stop::Inconclusive
                })
            }
            Err(message) => {
                let message = format!(
                    "step {} ({}): {message}",
                    step.index + 1,
                    step.action.keyword()
                );
                self.error(Some(step.index), line, message);
                Some(Stop::Errored)
            }
        }
    }

    // ----- judgement -----------------------------------------------------------------------

    fn finish(&mut self, cleanup: Vec<QueueCleanup>) -> CaseEnd {
        let mut outcomes = Vec::new();
        let mut class = None;
        let mut window = None;
        if let Some(obs) = &self.observe {
            let classes: Vec<OutcomeClass> = obs
                .tracked
                .iter()
                .map(|(_, _, n)| classify::classify(*n, &obs.end))
                .collect();
            class = classify::overall(classes.iter().copied());
            for ((label, id, n), c) in obs.tracked.iter().zip(&classes) {
                outcomes.push(MessageOutcome {
                    message: label.clone(),
                    message_id: id.clone(),
                    class: c.as_str().to_string(),
                    reason: match (&obs.end, c) {
                        (WindowEnd::Cut(r), OutcomeClass::Inconclusive) => Some(r.describe()),
                        _ => None,
                    },
                    sightings: *n,
                    deliveries: self.deliveries.get(label).copied().unwrap_or(0),
                });
            }
            window = Some(obs.window.clone());
            // The case-level outcome expectation, unless the steps already stopped the case.
            if let Some(expect) = &self.case.expect.outcome
                && !self.facts.failed
                && !self.facts.errored
            {
                let map: BTreeMap<String, OutcomeClass> = obs
                    .tracked
                    .iter()
                    .zip(&classes)
                    .map(|((l, _, _), c)| (l.clone(), *c))
                    .collect();
                match compare_outcomes(expect, &map) {
                    Check::Pass => {}
                    Check::Fail(f) => {
                        self.facts.failed = true;
                        for message in f {
                            self.findings.push(Finding {
                                step: None,
                                line: self.case.pos.line,
                                message,
                            });
                        }
                    }
                    Check::Inconclusive(why) => {
                        self.facts.inconclusive = true;
                        self.findings.push(Finding {
                            step: None,
                            line: self.case.pos.line,
                            message: why,
                        });
                    }
                }
            }
        } else if self.case.expect.outcome.is_some() && !self.facts.failed && !self.facts.errored {
            self.facts.inconclusive = true;
            self.findings.push(Finding {
                step: None,
                line: self.case.pos.line,
                message: "the case expects an outcome, but its observe step never ran".to_string(),
            });
        }
        let decision = classify::decide(class, self.acks);
        let verdict = classify::verdict(&self.facts);
        let reason = match self.findings.first() {
            Some(f) => f.message.clone(),
            None => match class {
                Some(c) => format!("every expectation held; observation: {}", c.as_str()),
                None => "every expectation held".to_string(),
            },
        };
        let ended_at = Utc::now();

        CaseEnd {
            run_id: self.ctx.run_id.clone(),
            case: self.case.id.clone(),
            suite: self.suite.clone(),
            verdict,
            reason,
            findings: self.findings.clone(),
            classification: class.map(|c| c.as_str().to_string()),
            outcomes,
            decision,
            window,
            receives: self.receives,
            deliveries: self.deliveries.clone(),
            queues: cleanup,
            profile_note: None,
            started_at: rfc3339(self.started_at),
            ended_at: rfc3339(ended_at),
            duration_ms: self.started.elapsed().as_millis() as u64,
        }
    }
}

/// The order to create a case's queues in: a dead-letter queue before every queue whose
/// redrive points at it (transitively); otherwise as written. A redrive cycle, which SQS could
/// not create either, keeps the written order for what is left.
fn creation_order(mut pending: Vec<QueueDef>) -> Vec<QueueDef> {
    let mut ordered: Vec<QueueDef> = Vec::with_capacity(pending.len());
    while !pending.is_empty() {
        let ready = pending.iter().position(|d| {
            d.redrive.as_ref().is_none_or(|r| {
                !pending
                    .iter()
                    .any(|p| p.label == r.dlq.value && p.label != d.label)
            })
        });
        ordered.push(pending.remove(ready.unwrap_or(0)));
    }
    ordered
}

fn interrupted_call<O>(meta: CallMeta, started_at: chrono::DateTime<Utc>) -> Recorded<O> {
    let row = crate::evidence::format::Call {
        error_message: Some("abandoned: the run was interrupted".to_string()),
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
            message: Some("interrupted".to_string()),
        }),
        rows: vec![row],
    }
}

/// MD5 hex of a body, as SQS computes MD5OfMessageBody (the SDK does not check it).
fn md5_hex(text: &str) -> String {
    hex::encode(Md5::digest(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::model::{Pos, Spanned};

    #[test]
    fn dead_letter_queues_are_created_before_their_sources() {
        let def = |label: &str, dlq: Option<&str>| QueueDef {
            label: label.to_string(),
            create: true,
            redrive: dlq.map(|d| crate::suite::model::Redrive {
                dlq: Spanned {
                    value: d.to_string(),
                    pos: Pos::default(),
                },
                max_receive_count: 1,
            }),
            ..QueueDef::default()
        };
        // a → b → c, written in that order: c first, then b, then a.
        let order: Vec<String> = creation_order(vec![
            def("a", Some("b")),
            def("b", Some("c")),
            def("c", None),
        ])
        .into_iter()
        .map(|d| d.label)
        .collect();
        assert_eq!(order, ["c", "b", "a"]);
        // A cycle still yields every queue once.
        let order = creation_order(vec![def("x", Some("y")), def("y", Some("x"))]);
        assert_eq!(order.len(), 2);
    }

    #[test]
    fn business_keys_come_only_from_json_bodies() {
        assert_eq!(
            business_key(r#"{"business_key":"b-1","x":1}"#),
            Some("b-1".into())
        );
        assert_eq!(business_key(r#"{"business_id":"b-2"}"#), Some("b-2".into()));
        assert_eq!(business_key("business_key=b-1"), None);
        assert_eq!(business_key(r#"{"business_key":7}"#), None);
    }

    #[test]
    fn outcome_expectations_fail_on_mismatch_and_defer_on_inconclusive() {
        let sp = |c: OutcomeClass| Spanned {
            value: c.into(),
            pos: Pos::default(),
        };
        let got = BTreeMap::from([
            ("m1".to_string(), OutcomeClass::NoRedeliveryWithinWindow),
            ("m2".to_string(), OutcomeClass::ObservedRedelivery),
        ]);
        let per = OutcomeExpect::PerMessage(BTreeMap::from([
            ("m1".to_string(), sp(OutcomeClass::NoRedeliveryWithinWindow)),
            ("m2".to_string(), sp(OutcomeClass::ObservedRedelivery)),
        ]));
        assert_eq!(compare_outcomes(&per, &got), Check::Pass);
        let all = OutcomeExpect::All(sp(OutcomeClass::NoRedeliveryWithinWindow));
        match compare_outcomes(&all, &got) {
            Check::Fail(f) => assert_eq!(
                f,
                vec!["expected m2: no_redelivery_within_window, observed observed_redelivery"]
            ),
            other => panic!("{other:?}"),
        }
        let unsure = BTreeMap::from([("m1".to_string(), OutcomeClass::Inconclusive)]);
        assert!(matches!(
            compare_outcomes(&all, &unsure),
            Check::Inconclusive(_)
        ));
    }

    #[test]
    fn generated_bodies_have_the_exact_size() {
        assert_eq!(steps::body_text(&Body::Size(1024)).len(), 1024);
        assert_eq!(md5_hex(""), "d41d8cd98f00b204e9800998ecf8427e");
    }
}
