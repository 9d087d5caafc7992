//! Running one case: create its queues, run its steps, observe, tear down, judge.
//!
//! A case holds everything an experiment needs to know about itself: which attempt received
//! which handle, which receive was the latest for each message (so an ack with an older handle
//! is known to be stale), how often each message was delivered. Raw handles and bodies live
//! only in this memory; everything that leaves it goes through the case's [`Masker`].

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
            self.error(None, self.case.pos.line, message);
            stop = Some(Stop::Errored);
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
        let mut defs: Vec<QueueDef> = self
            .case
            .queues
            .iter()
            .filter(|d| d.create)
            .cloned()
            .collect();
        // A queue whose redrive points at another of the case's queues goes after it.
        defs.sort_by_key(|d| {
            d.redrive.is_some()
                || d.redrive_allow.is_some()
                || d.attributes.values().any(|v| !arn_refs(v).is_empty())
        });
        for def in defs {
            let rec = self.create_queue(&def, Phase::Setup, None).await;
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
    ) -> Recorded<aws_sdk_sqs::operation::create_queue::CreateQueueOutput> {
        // ARNs of other queues this one refers to.
        let mut needed: Vec<String> = Vec::new();
        if let Some(r) = &def.redrive {
            needed.push(r.dlq.value.clone());
        }
        if let Some(crate::suite::model::RedriveAllow::ByQueue(labels)) = &def.redrive_allow {
            needed.extend(labels.iter().map(|l| l.value.clone()));
        }
        for label in needed {
            self.ensure_arn(&label).await;
        }
        let arns: HashMap<String, String> = self
            .queues
            .iter()
            .filter_map(|(l, q)| q.arn.clone().map(|a| (l.clone(), a)))
            .collect();
        let attributes = create_attributes(def, &|l| arns.get(l).cloned());
        let attributes = self.resolve_arns(&attributes).await;
        let tags = create_tags(def, &self.ctx.run_id, &self.case.id);
        let name = self.queues[&def.label].name.clone();
        let client = self.ctx.client.clone();
        let retry = self.retry_for(phase);
        let meta = self.meta(phase, step, "CreateQueue", None, Some(name.clone()));
        let mut rec = self
            .call(meta, |r| {
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
        if let Some(out) = &rec.output
            && let Some(url) = out.queue_url()
        {
            let q = self
                .queues
                .get_mut(&def.label)
                .expect("label resolved at parse time");
            q.url = Some(url.to_string());
            q.alive = true;
            q.created = true;
            if !self.created_order.contains(&def.label) {
                self.created_order.push(def.label.clone());
            }
            self.ctx.registry.add(OwnedQueue {
                name: name.clone(),
                url: url.to_string(),
                case: self.case.id.clone(),
            });
        }
        self.emit_rows(&mut rec);
        rec
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
        let mut rec = self
            .call(meta, |r| {
                client
                    .get_queue_attributes()
                    .queue_url(&url)
                    .attribute_names(QueueAttributeName::QueueArn)
                    .customize()
                    .interceptor(r)
                    .config_override(retry)
                    .send()
            })
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

    /// Steps that make exactly one SQS call. `Err` is a harness-side problem (a reference that
    /// could not be resolved at run time).
    async fn sqs_step(&mut self, step: &Step, action: &Action) -> Result<Check, String> {
        let client = self.ctx.client.clone();
        let retry = self.retry_for(Phase::Step);
        match action {
            Action::Send(send) => {
                let (url, name) = self.queue_url(&send.queue.value)?;
                let body = body_text(&send.body);
                self.masker.add_body(&body);
                let meta = self.meta(Phase::Step, Some(step), "SendMessage", None, Some(name));
                let attrs = message_attributes(send)?;
                let mut rec = self
                    .call(meta, |r| {
                        client
                            .send_message()
                            .queue_url(&url)
                            .message_body(&body)
                            .set_delay_seconds(send.delay.map(|d| d.as_secs() as i32))
                            .set_message_group_id(send.group.clone())
                            .set_message_deduplication_id(send.dedup_id.clone())
                            .set_message_attributes(attrs)
                            .customize()
                            .interceptor(r)
                            .config_override(retry)
                            .send()
                    })
                    .await;
                let mut integrity = Vec::new();
                if let Some(out) = rec.output.take() {
                    let id = out.message_id().unwrap_or_default().to_string();
                    let bk = business_key(&body);
                    self.track_sent(&send.message, &id, bk.clone());
                    if let Some(md5) = out.md5_of_message_body()
                        && md5 != md5_hex(&body)
                    {
                        integrity.push("MD5OfMessageBody in the SendMessage response does not match the body sent".to_string());
                    }
                    let row = rec.last_row();
                    row.message_id = Some(id.clone());
                    row.message = Some(send.message.clone());
                    row.business_key = bk.clone();
                    row.messages.push(MessageEvidence {
                        message_id: id,
                        message: Some(send.message.clone()),
                        business_key: bk,
                        handle_digest: None,
                        body_digest: Some(sha256_hex(&body)),
                        receive_count: None,
                        sequence_number: out.sequence_number().map(str::to_string),
                        md5_ok: out.md5_of_message_body().map(|m| m == md5_hex(&body)),
                    });
                }
                Ok(self.judge(
                    step,
                    &mut rec,
                    Observed {
                        integrity,
                        ..Observed::default()
                    },
                ))
            }
            Action::SendBatch { queue, entries } => {
                let (url, name) = self.queue_url(&queue.value)?;
                let mut request_entries = Vec::new();
                let mut bodies = HashMap::new();
                for e in entries {
                    let body = body_text(&e.send.body);
                    self.masker.add_body(&body);
                    let entry = SendMessageBatchRequestEntry::builder()
                        .id(&e.id)
                        .message_body(&body)
                        .set_delay_seconds(e.send.delay.map(|d| d.as_secs() as i32))
                        .set_message_group_id(e.send.group.clone())
                        .set_message_deduplication_id(e.send.dedup_id.clone())
                        .set_message_attributes(message_attributes(&e.send)?)
                        .build()
                        .map_err(|err| format!("could not build batch entry {}: {err}", e.id))?;
                    bodies.insert(e.id.clone(), (e.send.message.clone(), body));
                    request_entries.push(entry);
                }
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "SendMessageBatch",
                    None,
                    Some(name),
                );
                let mut rec = self
                    .call(meta, |r| {
                        client
                            .send_message_batch()
                            .queue_url(&url)
                            .set_entries(Some(request_entries))
                            .customize()
                            .interceptor(r)
                            .config_override(retry)
                            .send()
                    })
                    .await;
                let mut batch = None;
                let mut integrity = Vec::new();
                if let Some(out) = rec.output.take() {
                    let mut outcome = BatchOutcome::default();
                    let mut entries_ev = Vec::new();
                    for ok in out.successful() {
                        let (label, body) = bodies.get(ok.id()).cloned().unwrap_or_default();
                        let bk = business_key(&body);
                        if !label.is_empty() {
                            self.track_sent(&label, ok.message_id(), bk.clone());
                        }
                        if ok.md5_of_message_body() != md5_hex(&body) {
                            integrity.push(format!(
                                "entry {}: MD5OfMessageBody does not match the body sent",
                                ok.id()
                            ));
                        }
                        outcome.successful.push(ok.id().to_string());
                        entries_ev.push(EntryEvidence {
                            id: ok.id().to_string(),
                            message: Some(label).filter(|l| !l.is_empty()),
                            message_id: Some(ok.message_id().to_string()),
                            handle_digest: None,
                            result: "successful".into(),
                            code: None,
                            sender_fault: None,
                            error_message: None,
                        });
                    }
                    for f in out.failed() {
                        outcome.failed.push((
                            f.id().to_string(),
                            f.code().to_string(),
                            f.sender_fault(),
                        ));
                        entries_ev
                            .push(self.failed_entry(f, bodies.get(f.id()).map(|b| b.0.clone())));
                    }
                    rec.last_row().entries = entries_ev;
                    batch = Some(outcome);
                }
                Ok(self.judge(
                    step,
                    &mut rec,
                    Observed {
                        batch,
                        integrity,
                        ..Observed::default()
                    },
                ))
            }
            Action::Receive(receive) => self.receive_step(step, receive).await,
            Action::Delete { queue, target } => {
                let (handle, info, url, name) = self.resolve_single(queue, target, "delete")?;
                let attempt = info.as_ref().map(|i| i.0.clone());
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "DeleteMessage",
                    attempt,
                    Some(name),
                );
                let mut rec = self
                    .call(meta, |r| {
                        client
                            .delete_message()
                            .queue_url(&url)
                            .receipt_handle(&handle)
                            .customize()
                            .interceptor(r)
                            .config_override(retry)
                            .send()
                    })
                    .await;
                self.note_handle_row(&mut rec, &handle, info.as_ref());
                if let Some((_, receipt)) = &info {
                    self.count_ack(receipt, rec.error.is_some());
                }
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::DeleteBatch { queue, entries } => {
                let targets: Vec<&HandleRef> = entries.iter().map(|e| &e.target).collect();
                let (resolved, url, name) = self.resolve_batch(queue, &targets, "delete-batch")?;
                let request_entries = entries
                    .iter()
                    .zip(&resolved)
                    .map(|(e, (handle, _))| {
                        DeleteMessageBatchRequestEntry::builder()
                            .id(&e.id)
                            .receipt_handle(handle)
                            .build()
                            .map_err(|err| format!("could not build batch entry {}: {err}", e.id))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "DeleteMessageBatch",
                    None,
                    Some(name),
                );
                let mut rec = self
                    .call(meta, |r| {
                        client
                            .delete_message_batch()
                            .queue_url(&url)
                            .set_entries(Some(request_entries))
                            .customize()
                            .interceptor(r)
                            .config_override(retry)
                            .send()
                    })
                    .await;
                // Evidence and ack accounting go by entry id (the last entry wins on duplicates).
                let by_id: HashMap<String, ResolvedHandle> =
                    entries.iter().map(|e| e.id.clone()).zip(resolved).collect();
                let batch = self.handle_batch_result(
                    &mut rec,
                    &by_id,
                    |o: &aws_sdk_sqs::operation::delete_message_batch::DeleteMessageBatchOutput| {
                        (
                            o.successful().iter().map(|s| s.id().to_string()).collect(),
                            o.failed().to_vec(),
                        )
                    },
                    true,
                );
                Ok(self.judge(
                    step,
                    &mut rec,
                    Observed {
                        batch,
                        ..Observed::default()
                    },
                ))
            }
            Action::ChangeVisibility {
                queue,
                target,
                timeout,
            } => {
                let (handle, info, url, name) =
                    self.resolve_single(queue, target, "change-visibility")?;
                let attempt = info.as_ref().map(|i| i.0.clone());
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "ChangeMessageVisibility",
                    attempt,
                    Some(name),
                );
                let secs = timeout.as_secs() as i32;
                let mut rec = self
                    .call(meta, |r| {
                        client
                            .change_message_visibility()
                            .queue_url(&url)
                            .receipt_handle(&handle)
                            .visibility_timeout(secs)
                            .customize()
                            .interceptor(r)
                            .config_override(retry)
                            .send()
                    })
                    .await;
                self.note_handle_row(&mut rec, &handle, info.as_ref());
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::ChangeVisibilityBatch { queue, entries } => {
                let targets: Vec<&HandleRef> = entries.iter().map(|e| &e.target).collect();
                let (resolved, url, name) =
                    self.resolve_batch(queue, &targets, "change-visibility-batch")?;
                let request_entries = entries
                    .iter()
                    .zip(&resolved)
                    .map(|(e, (handle, _))| {
                        ChangeMessageVisibilityBatchRequestEntry::builder()
                            .id(&e.id)
                            .receipt_handle(handle)
                            .visibility_timeout(e.timeout.as_secs() as i32)
                            .build()
                            .map_err(|err| format!("could not build batch entry {}: {err}", e.id))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "ChangeMessageVisibilityBatch",
                    None,
                    Some(name),
                );
                let mut rec = self
                    .call(meta, |r| {
                        client
                            .change_message_visibility_batch()
                            .queue_url(&url)
                            .set_entries(Some(request_entries))
                            .customize()
                            .interceptor(r)
                            .config_override(retry)
                            .send()
                    })
                    .await;
                // Evidence and ack accounting go by entry id (the last entry wins on duplicates).
                let by_id: HashMap<String, ResolvedHandle> =
                    entries.iter().map(|e| e.id.clone()).zip(resolved).collect();
                let batch = self.handle_batch_result(
                    &mut rec,
                    &by_id,
                    |o: &aws_sdk_sqs::operation::change_message_visibility_batch::ChangeMessageVisibilityBatchOutput| {
                        (
                            o.successful().iter().map(|s| s.id().to_string()).collect(),
                            o.failed().to_vec(),
                        )
                    },
                    false,
                );
                Ok(self.judge(
                    step,
                    &mut rec,
                    Observed {
                        batch,
                        ..Observed::default()
                    },
                ))
            }
            Action::GetAttributes { queue, names } => {
                let (url, name) = self.queue_url(&queue.value)?;
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "GetQueueAttributes",
                    None,
                    Some(name),
                );
                let names = names.clone();
                let mut rec = self
                    .call(meta, |r| {
                        let mut req = client.get_queue_attributes().queue_url(&url);
                        for n in &names {
                            req = req.attribute_names(QueueAttributeName::from(n.as_str()));
                        }
                        req.customize().interceptor(r).config_override(retry).send()
                    })
                    .await;
                let attrs = rec.output.as_ref().map(|o| {
                    o.attributes()
                        .map(|a| {
                            a.iter()
                                .map(|(k, v)| (k.as_str().to_string(), v.clone()))
                                .collect::<BTreeMap<_, _>>()
                        })
                        .unwrap_or_default()
                });
                Ok(self.judge(
                    step,
                    &mut rec,
                    Observed {
                        queue_attributes: attrs,
                        ..Observed::default()
                    },
                ))
            }
            Action::SetAttributes { queue, attributes } => {
                let (url, name) = self.queue_url(&queue.value)?;
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "SetQueueAttributes",
                    None,
                    Some(name),
                );
                let attributes = self.resolve_arns(attributes).await;
                let mut rec = self
                    .call(meta, |r| {
                        let mut req = client.set_queue_attributes().queue_url(&url);
                        for (k, v) in attributes {
                            req = req.attributes(QueueAttributeName::from(k.as_str()), v);
                        }
                        req.customize().interceptor(r).config_override(retry).send()
                    })
                    .await;
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::Purge { queue } => {
                let (url, name) = self.queue_url(&queue.value)?;
                let meta = self.meta(Phase::Step, Some(step), "PurgeQueue", None, Some(name));
                let mut rec = self
                    .call(meta, |r| {
                        client
                            .purge_queue()
                            .queue_url(&url)
                            .customize()
                            .interceptor(r)
                            .config_override(retry)
                            .send()
                    })
                    .await;
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::CreateQueue(def) => {
                let mut rec = self.create_queue(def, Phase::Step, Some(step)).await;
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::DeleteQueue { queue } => {
                let (url, name) = self.queue_url(&queue.value)?;
                if !self.ctx.registry.owns(&url) && self.queues[&queue.value].alive {
                    return Err(format!(
                        "refusing to delete {name}: not created by this run"
                    ));
                }
                let meta = self.meta(Phase::Step, Some(step), "DeleteQueue", None, Some(name));
                let mut rec = self
                    .call(meta, |r| {
                        client
                            .delete_queue()
                            .queue_url(&url)
                            .customize()
                            .interceptor(r)
                            .config_override(retry)
                            .send()
                    })
                    .await;
                if rec.error.is_none() {
                    self.ctx.registry.remove(&url);
                    if let Some(q) = self.queues.get_mut(&queue.value) {
                        q.alive = false;
                    }
                }
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::GetQueueUrl { queue } => {
                let name = self
                    .queues
                    .get(&queue.value)
                    .map(|q| q.name.clone())
                    .ok_or_else(|| {
                        format!("queue `{}` is not defined in this case", queue.value)
                    })?;
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "GetQueueUrl",
                    None,
                    Some(name.clone()),
                );
                let mut rec = self
                    .call(meta, |r| {
                        client
                            .get_queue_url()
                            .queue_name(&name)
                            .customize()
                            .interceptor(r)
                            .config_override(retry)
                            .send()
                    })
                    .await;
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::ListQueues { max_results } => {
                // Always this case's own prefix: a listing never reaches other people's queues.
                let prefix = format!("{}{}-", run_prefix(&self.ctx.run_id), self.case.id);
                let meta = self.meta(Phase::Step, Some(step), "ListQueues", None, None);
                let max = *max_results;
                let mut rec = self
                    .call(meta, |r| {
                        client
                            .list_queues()
                            .queue_name_prefix(&prefix)
                            .set_max_results(max)
                            .customize()
                            .interceptor(r)
                            .config_override(retry)
                            .send()
                    })
                    .await;
                let received = rec.output.as_ref().map(|o| {
                    o.queue_urls()
                        .iter()
                        .map(|_| ReceivedMsg::default())
                        .collect::<Vec<_>>()
                });
                let mut expect_view = step.expect.clone();
                expect_view.received.clear();
                let obs = Observed {
                    received: received.filter(|_| step.expect.messages.is_some()),
                    ..Observed::default()
                };
                Ok(self.judge_with(step, &expect_view, &mut rec, obs))
            }
            Action::TagQueue { queue, tags } => {
                let (url, name) = self.queue_url(&queue.value)?;
                let meta = self.meta(Phase::Step, Some(step), "TagQueue", None, Some(name));
                let tags = tags.clone();
                let mut rec = self
                    .call(meta, |r| {
                        let mut req = client.tag_queue().queue_url(&url);
                        for (k, v) in tags {
                            req = req.tags(k, v);
                        }
                        req.customize().interceptor(r).config_override(retry).send()
                    })
                    .await;
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::UntagQueue { queue, keys } => {
                let (url, name) = self.queue_url(&queue.value)?;
                let meta = self.meta(Phase::Step, Some(step), "UntagQueue", None, Some(name));
                let keys = keys.clone();
                let mut rec = self
                    .call(meta, |r| {
                        client
                            .untag_queue()
                            .queue_url(&url)
                            .set_tag_keys(Some(keys))
                            .customize()
                            .interceptor(r)
                            .config_override(retry)
                            .send()
                    })
                    .await;
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::ListQueueTags { queue } => {
                let (url, name) = self.queue_url(&queue.value)?;
                let meta = self.meta(Phase::Step, Some(step), "ListQueueTags", None, Some(name));
                let mut rec = self
                    .call(meta, |r| {
                        client
                            .list_queue_tags()
                            .queue_url(&url)
                            .customize()
                            .interceptor(r)
                            .config_override(retry)
                            .send()
                    })
                    .await;
                let tags = rec.output.as_ref().map(|o| {
                    o.tags()
                        .map(|t| t.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                        .unwrap_or_default()
                });
                Ok(self.judge(
                    step,
                    &mut rec,
                    Observed {
                        queue_attributes: tags,
                        ..Observed::default()
                    },
                ))
            }
            Action::ListDeadLetterSourceQueues { queue } => {
                let (url, name) = self.queue_url(&queue.value)?;
                let meta = self.meta(
                    Phase::Step,
                    Some(step),
                    "ListDeadLetterSourceQueues",
                    None,
                    Some(name),
                );
                let mut rec = self
                    .call(meta, |r| {
                        client
                            .list_dead_letter_source_queues()
                            .queue_url(&url)
                            .customize()
                            .interceptor(r)
                            .config_override(retry)
                            .send()
                    })
                    .await;
                // Each source URL becomes a "received" entry labelled with its queue label, so
                // `received: [main]` and `messages: 1` work here too.
                let by_url: HashMap<String, String> = self
                    .queues
                    .iter()
                    .filter_map(|(l, q)| q.url.clone().map(|u| (u, l.clone())))
                    .collect();
                let received = rec.output.as_ref().map(|o| {
                    o.queue_urls()
                        .iter()
                        .map(|u| ReceivedMsg {
                            label: by_url.get(u).cloned(),
                            ..ReceivedMsg::default()
                        })
                        .collect()
                });
                Ok(self.judge(
                    step,
                    &mut rec,
                    Observed {
                        received,
                        ..Observed::default()
                    },
                ))
            }
            Action::StartMoveTask {
                source,
                destination,
                max_per_second,
                name: task,
            } => {
                self.ensure_arn(&source.value).await;
                let source_arn = self.arn(&source.value)?;
                // An uncreated destination gets the ARN its name would have, so a case can
                // ask for ResourceNotFoundException.
                let dest_arn = match destination {
                    Some(d) => Some(self.arn_or_derived(&d.value).await),
                    None => None,
                };
                let qname = self.queues.get(&source.value).map(|q| q.name.clone());
                let meta = self.meta(Phase::Step, Some(step), "StartMessageMoveTask", None, qname);
                let rate = *max_per_second;
                let mut rec = self
                    .call(meta, |r| {
                        client
                            .start_message_move_task()
                            .source_arn(&source_arn)
                            .set_destination_arn(dest_arn)
                            .set_max_number_of_messages_per_second(rate)
                            .customize()
                            .interceptor(r)
                            .config_override(retry)
                            .send()
                    })
                    .await;
                if let (Some(out), Some(task)) = (&rec.output, task)
                    && let Some(h) = out.task_handle()
                {
                    self.move_tasks.insert(task.clone(), h.to_string());
                }
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::ListMoveTasks { source } => {
                self.ensure_arn(&source.value).await;
                let source_arn = self.arn(&source.value)?;
                let qname = self.queues.get(&source.value).map(|q| q.name.clone());
                let meta = self.meta(Phase::Step, Some(step), "ListMessageMoveTasks", None, qname);
                let mut rec = self
                    .call(meta, |r| {
                        client
                            .list_message_move_tasks()
                            .source_arn(&source_arn)
                            .customize()
                            .interceptor(r)
                            .config_override(retry)
                            .send()
                    })
                    .await;
                // The newest task's fields are checkable as `attributes:` (Status, ...).
                let attrs = rec.output.as_ref().map(|o| {
                    let mut m = BTreeMap::new();
                    if let Some(t) = o.results().first() {
                        if let Some(s) = t.status() {
                            m.insert("Status".to_string(), s.to_string());
                        }
                        m.insert(
                            "ApproximateNumberOfMessagesMoved".to_string(),
                            t.approximate_number_of_messages_moved().to_string(),
                        );
                        if let Some(n) = t.approximate_number_of_messages_to_move() {
                            m.insert(
                                "ApproximateNumberOfMessagesToMove".to_string(),
                                n.to_string(),
                            );
                        }
                    }
                    m.insert("Count".to_string(), o.results().len().to_string());
                    m
                });
                Ok(self.judge(
                    step,
                    &mut rec,
                    Observed {
                        queue_attributes: attrs,
                        ..Observed::default()
                    },
                ))
            }
            Action::CancelMoveTask { task } => {
                let handle = self.move_tasks.get(&task.value).cloned().ok_or_else(|| {
                    format!(
                        "move task `{}` was not started (its start step failed?)",
                        task.value
                    )
                })?;
                let meta = self.meta(Phase::Step, Some(step), "CancelMessageMoveTask", None, None);
                let mut rec = self
                    .call(meta, |r| {
                        client
                            .cancel_message_move_task()
                            .task_handle(&handle)
                            .customize()
                            .interceptor(r)
                            .config_override(retry)
                            .send()
                    })
                    .await;
                Ok(self.judge(step, &mut rec, Observed::default()))
            }
            Action::Sleep(_) | Action::Observe(_) => unreachable!("handled by the caller"),
        }
    }

    fn arn(&self, label: &str) -> Result<String, String> {
        self.queues
            .get(label)
            .and_then(|q| q.arn.clone())
            .ok_or_else(|| format!("queue `{label}` has no ARN (was it created?)"))
    }

    /// Checks the step's expectations, emits the call's rows, and returns the check.
    fn judge<O>(&mut self, step: &Step, rec: &mut Recorded<O>, obs: Observed<'_>) -> Check {
        let expect = step.expect.clone();
        self.judge_with(step, &expect, rec, obs)
    }

    fn judge_with<O>(
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
        self.emit_rows(rec);
        check
    }

    fn failed_entry(
        &self,
        f: &aws_sdk_sqs::types::BatchResultErrorEntry,
        label: Option<String>,
    ) -> EntryEvidence {
        EntryEvidence {
            id: f.id().to_string(),
            message: label.filter(|l| !l.is_empty()),
            message_id: None,
            handle_digest: None,
            result: "failed".into(),
            code: Some(f.code().to_string()),
            sender_fault: Some(f.sender_fault()),
            error_message: f.message().map(|m| self.masker.mask(m)),
        }
    }

    /// Shared by delete-batch and change-visibility-batch: entry evidence, ack accounting.
    fn handle_batch_result<O>(
        &mut self,
        rec: &mut Recorded<O>,
        resolved: &HashMap<String, ResolvedHandle>,
        split: impl Fn(&O) -> (Vec<String>, Vec<aws_sdk_sqs::types::BatchResultErrorEntry>),
        is_ack: bool,
    ) -> Option<BatchOutcome> {
        let out = rec.output.as_ref()?;
        let (successful, failed) = split(out);
        let mut outcome = BatchOutcome::default();
        let mut entries_ev = Vec::new();
        let evidence_for = |id: &str| {
            resolved.get(id).map(|(h, info)| {
                (
                    sha256_hex(h),
                    info.as_ref().and_then(|(_, r)| r.label.clone()),
                    info.as_ref().map(|(_, r)| r.message_id.clone()),
                )
            })
        };
        for id in &successful {
            let (digest, label, mid) = evidence_for(id).unwrap_or_default();
            entries_ev.push(EntryEvidence {
                id: id.clone(),
                message: label,
                message_id: mid,
                handle_digest: Some(digest).filter(|d| !d.is_empty()),
                result: "successful".into(),
                code: None,
                sender_fault: None,
                error_message: None,
            });
            outcome.successful.push(id.clone());
        }
        for f in &failed {
            let mut ev = self.failed_entry(f, None);
            if let Some((digest, label, mid)) = evidence_for(f.id()) {
                ev.handle_digest = Some(digest);
                ev.message = label;
                ev.message_id = mid;
            }
            entries_ev.push(ev);
            outcome
                .failed
                .push((f.id().to_string(), f.code().to_string(), f.sender_fault()));
        }
        if is_ack {
            for (id, (_, info)) in resolved {
                if let Some((_, receipt)) = info {
                    let refused = failed.iter().any(|f| f.id() == id);
                    self.count_ack(receipt, refused);
                }
            }
        }
        rec.last_row().entries = entries_ev;
        Some(outcome)
    }

    // ----- handles and messages ------------------------------------------------------------

    fn track_sent(&mut self, label: &str, message_id: &str, business_key: Option<String>) {
        self.sent.insert(
            label.to_string(),
            SentMessage {
                message_id: Some(message_id.to_string()),
                business_key,
            },
        );
        // A FIFO duplicate is answered with the first message's MessageId; what is received
        // is that first message, so the id keeps the first label.
        self.by_id
            .entry(message_id.to_string())
            .or_insert_with(|| label.to_string());
    }

    /// The handle a reference names, plus (attempt name, receipt) when it came from a receive.
    fn resolve_handle(&mut self, target: &HandleRef) -> Result<ResolvedHandle, String> {
        match target {
            HandleRef::Literal(h) => {
                // Not a secret (the suite wrote it), but masked like any handle so outputs
                // follow one rule: no handle text, only digests.
                self.masker.add_handle(h);
                Ok((h.clone(), None))
            }
            HandleRef::Attempt { attempt, message } => {
                let receipts = self.attempts.get(&attempt.value).ok_or_else(|| {
                    format!("attempt {} has not received anything", attempt.value)
                })?;
                let receipt = match message {
                    Some(m) => receipts
                        .iter()
                        .find(|r| r.label.as_deref() == Some(m.value.as_str()))
                        .ok_or_else(|| {
                            format!(
                                "attempt {} did not receive message {}",
                                attempt.value, m.value
                            )
                        })?,
                    None => receipts
                        .first()
                        .ok_or_else(|| format!("attempt {} received no message", attempt.value))?,
                };
                Ok((
                    receipt.handle.clone(),
                    Some((attempt.value.clone(), receipt.clone())),
                ))
            }
        }
    }

    /// Resolves a single-handle step: the handle, where it came from, and the queue (given,
    /// or the one the attempt received from).
    #[allow(clippy::type_complexity)]
    fn resolve_single(
        &mut self,
        queue: &Option<crate::suite::model::Spanned<String>>,
        target: &HandleRef,
        step: &str,
    ) -> Result<(String, Option<(String, Receipt)>, String, String), String> {
        // (handle, origin, queue url, queue name)
        let (handle, info) = self.resolve_handle(target)?;
        let label = queue
            .as_ref()
            .map(|q| q.value.clone())
            .or_else(|| self.attempt_queue(target))
            .ok_or_else(|| format!("{step} needs `queue:` when it uses a literal handle"))?;
        let (url, name) = self.queue_url(&label)?;
        Ok((handle, info, url, name))
    }

    /// Resolves every entry of a batch step by entry id, and the queue (given, or the one the
    /// first attempt-entry received from).
    fn resolve_batch(
        &mut self,
        queue: &Option<crate::suite::model::Spanned<String>>,
        entries: &[&HandleRef],
        step: &str,
    ) -> Result<(Vec<ResolvedHandle>, String, String), String> {
        // In entry order, not keyed by id: conformance cases send duplicate ids on purpose.
        let mut resolved = Vec::new();
        let mut label = queue.as_ref().map(|q| q.value.clone());
        for target in entries {
            resolved.push(self.resolve_handle(target)?);
            if label.is_none() {
                label = self.attempt_queue(target);
            }
        }
        let label =
            label.ok_or_else(|| format!("{step} needs `queue:` when no entry names an attempt"))?;
        let (url, name) = self.queue_url(&label)?;
        Ok((resolved, url, name))
    }

    /// The queue an attempt received from (so `delete: {attempt: A}` needs no `queue:`).
    fn attempt_queue(&self, target: &HandleRef) -> Option<String> {
        let HandleRef::Attempt { attempt, .. } = target else {
            return None;
        };
        self.case.steps.iter().find_map(|s| match &s.action {
            Action::Receive(r) if r.attempt.as_ref().map(|a| &a.value) == Some(&attempt.value) => {
                Some(r.queue.value.clone())
            }
            _ => None,
        })
    }

    fn note_handle_row<O>(
        &self,
        rec: &mut Recorded<O>,
        handle: &str,
        info: Option<&(String, Receipt)>,
    ) {
        let digest = sha256_hex(handle);
        let bk = info
            .and_then(|(_, r)| r.label.as_ref())
            .and_then(|l| self.sent.get(l))
            .and_then(|s| s.business_key.clone());
        for row in &mut rec.rows {
            row.handle_digest = Some(digest.clone());
            if let Some((_, r)) = info {
                row.message_id = Some(r.message_id.clone());
                row.message = r.label.clone();
                row.business_key = bk.clone();
            }
        }
    }

    fn count_ack(&mut self, receipt: &Receipt, refused: bool) {
        self.acks.acks += 1;
        if self
            .latest
            .get(&receipt.message_id)
            .is_some_and(|&s| s > receipt.seq)
        {
            self.acks.stale_acks += 1;
        }
        if refused {
            self.acks.failed_acks += 1;
        }
    }

    // ----- receive and observe -------------------------------------------------------------

    async fn receive_step(&mut self, step: &Step, receive: &Receive) -> Result<Check, String> {
        let (url, name) = self.queue_url(&receive.queue.value)?;
        let attempt = receive.attempt.as_ref().map(|a| a.value.clone());
        let meta = self.meta(
            Phase::Step,
            Some(step),
            "ReceiveMessage",
            attempt.clone(),
            Some(name),
        );
        let started = std::time::Instant::now();
        let (mut rec, received, integrity) = self
            .receive_call(
                meta,
                &url,
                ReceiveParams {
                    max: receive.max,
                    wait: receive.wait,
                    visibility: receive.visibility_timeout,
                    attribute_names: receive.attribute_names.clone(),
                    message_attribute_names: receive.message_attribute_names.clone(),
                    request_attempt_id: receive.request_attempt_id.clone(),
                },
                attempt.as_deref(),
            )
            .await;
        Ok(self.judge(
            step,
            &mut rec,
            Observed {
                received,
                integrity,
                elapsed: Some(started.elapsed()),
                ..Observed::default()
            },
        ))
    }

    /// One ReceiveMessage: tracks receipts under `attempt`, counts deliveries, verifies MD5s.
    async fn receive_call(
        &mut self,
        meta: CallMeta,
        url: &str,
        p: ReceiveParams,
        attempt: Option<&str>,
    ) -> (
        Recorded<aws_sdk_sqs::operation::receive_message::ReceiveMessageOutput>,
        Option<Vec<ReceivedMsg>>,
        Vec<String>,
    ) {
        let client = self.ctx.client.clone();
        let retry = self.retry_for(meta.phase);
        let mut rec = self
            .call(meta, |r| {
                let mut req = client
                    .receive_message()
                    .queue_url(url)
                    .set_max_number_of_messages(p.max)
                    .set_wait_time_seconds(p.wait.map(|w| w.as_secs() as i32))
                    .set_visibility_timeout(p.visibility.map(|v| v.as_secs() as i32))
                    .set_receive_request_attempt_id(p.request_attempt_id.clone());
                for n in &p.attribute_names {
                    req = req.message_system_attribute_names(MessageSystemAttributeName::from(
                        n.as_str(),
                    ));
                }
                for n in &p.message_attribute_names {
                    req = req.message_attribute_names(n);
                }
                req.customize().interceptor(r).config_override(retry).send()
            })
            .await;
        self.receives += 1;
        let mut integrity = Vec::new();
        let Some(out) = rec.output.as_ref() else {
            return (rec, None, integrity);
        };
        let mut received = Vec::new();
        let mut evidence = Vec::new();
        let mut receipts = Vec::new();
        for m in out.messages() {
            let id = m.message_id().unwrap_or_default().to_string();
            let handle = m.receipt_handle().unwrap_or_default().to_string();
            let body = m.body().unwrap_or_default();
            self.masker.add_handle(&handle);
            self.masker.add_body(body);
            self.seq += 1;
            self.latest.insert(id.clone(), self.seq);
            let label = self.by_id.get(&id).cloned();
            *self
                .deliveries
                .entry(label.clone().unwrap_or_else(|| id.clone()))
                .or_default() += 1;
            let md5_ok = m.md5_of_body().map(|md5| md5 == md5_hex(body));
            if md5_ok == Some(false) {
                integrity.push(format!(
                    "{}: MD5OfBody does not match the body received",
                    label.as_deref().unwrap_or(&id)
                ));
            }
            let attributes: BTreeMap<String, String> = m
                .attributes()
                .map(|a| {
                    a.iter()
                        .map(|(k, v)| (k.as_str().to_string(), v.clone()))
                        .collect()
                })
                .unwrap_or_default();
            let bk = business_key(body);
            evidence.push(MessageEvidence {
                message_id: id.clone(),
                message: label.clone(),
                business_key: bk,
                handle_digest: Some(sha256_hex(&handle)),
                body_digest: Some(sha256_hex(body)),
                receive_count: attributes
                    .get("ApproximateReceiveCount")
                    .and_then(|c| c.parse().ok()),
                sequence_number: attributes.get("SequenceNumber").cloned(),
                md5_ok,
            });
            receipts.push(Receipt {
                handle,
                message_id: id,
                label: label.clone(),
                seq: self.seq,
            });
            received.push(ReceivedMsg { label, attributes });
        }
        if let Some(a) = attempt {
            self.attempts
                .entry(a.to_string())
                .or_default()
                .extend(receipts);
        }
        rec.last_row().messages = evidence;
        (rec, Some(received), integrity)
    }

    /// The bounded observation: polls until the window ends, the budget runs out, every
    /// tracked message was seen, or a receive cannot be trusted.
    async fn observe(&mut self, step: &Step, o: &Observe) -> Result<Check, String> {
        let (url, name) = self.queue_url(&o.queue.value)?;
        let tracked: Vec<String> = if o.messages.is_empty() {
            self.sent.keys().cloned().collect()
        } else {
            o.messages.iter().map(|m| m.value.clone()).collect()
        };
        let mut sightings: BTreeMap<String, u32> = tracked.iter().map(|l| (l.clone(), 0)).collect();
        let start = Instant::now();
        let deadline = start + o.window;
        let mut used = 0u32;
        let mut cancel = self.ctx.cancel.clone();
        let end = loop {
            if !tracked.is_empty() && sightings.values().all(|&n| n > 0) {
                break WindowEnd::AllSeen;
            }
            if self.interrupted() {
                break WindowEnd::Cut(CutReason::Interrupted);
            }
            let now = Instant::now();
            if now >= deadline {
                break WindowEnd::Completed;
            }
            if used >= o.max_receives {
                break WindowEnd::Cut(CutReason::BudgetExhausted { used });
            }
            let remaining = deadline - now;
            // WaitTimeSeconds is whole seconds; never wait past the window by more than the
            // rounding, and short-poll in the last partial second.
            let wait_secs = o.wait.as_secs().min(remaining.as_secs());
            let meta = self.meta(
                Phase::Observe,
                Some(step),
                "ReceiveMessage",
                None,
                Some(name.clone()),
            );
            let (mut rec, received, _integrity) = self
                .receive_call(
                    meta,
                    &url,
                    ReceiveParams {
                        max: Some(10),
                        wait: Some(Duration::from_secs(wait_secs)),
                        visibility: o.visibility_timeout,
                        attribute_names: vec!["All".to_string()],
                        message_attribute_names: Vec::new(),
                        request_attempt_id: None,
                    },
                    None,
                )
                .await;
            used += 1;
            let error = rec.error.clone();
            let handles: Vec<(String, String)> = rec
                .output
                .as_ref()
                .map(|out| {
                    out.messages()
                        .iter()
                        .map(|m| {
                            (
                                m.message_id().unwrap_or_default().to_string(),
                                m.receipt_handle().unwrap_or_default().to_string(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            self.emit_rows(&mut rec);
            if let Some(err) = error {
                break WindowEnd::Cut(cut_reason(&err));
            }
            for m in received.unwrap_or_default() {
                if let Some(label) = &m.label
                    && let Some(n) = sightings.get_mut(label)
                {
                    *n += 1;
                }
            }
            if o.delete_seen {
                for (id, handle) in handles {
                    self.observe_delete(step, &url, &name, &id, &handle).await;
                }
            }
            if wait_secs == 0 {
                // A short poll returns at once; pace the last partial second instead of
                // spending the receive budget on an empty queue.
                let pause = remaining.min(Duration::from_millis(200));
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = cancel.wait_for(|c| *c) => {}
                }
            }
        };

        let elapsed = start.elapsed();
        let window = Window {
            step: step.index,
            line: step.pos.line,
            planned_ms: o.window.as_millis() as u64,
            elapsed_ms: elapsed.as_millis() as u64,
            receives_used: used,
            receive_budget: o.max_receives,
            ended: end.label().to_string(),
        };
        let tracked_rec: Vec<(String, Option<String>, u32)> = tracked
            .iter()
            .map(|l| {
                (
                    l.clone(),
                    self.sent.get(l).and_then(|s| s.message_id.clone()),
                    sightings[l],
                )
            })
            .collect();
        self.observe = Some(ObserveRecord {
            window,
            end: end.clone(),
            tracked: tracked_rec,
        });

        if let WindowEnd::Cut(reason) = &end
            && sightings.values().any(|&n| n == 0)
        {
            // Silence we could not watch to the end proves nothing; sightings still count.
            return Ok(Check::Inconclusive(format!(
                "observation window not completed: {}",
                reason.describe()
            )));
        }
        let classes: BTreeMap<String, OutcomeClass> = sightings
            .iter()
            .map(|(l, &n)| (l.clone(), classify::classify(n, &end)))
            .collect();
        Ok(match &step.expect.outcome {
            Some(expect) => compare_outcomes(expect, &classes),
            None => Check::Pass,
        })
    }

    async fn observe_delete(&mut self, step: &Step, url: &str, name: &str, id: &str, handle: &str) {
        let client = self.ctx.client.clone();
        let retry = self.retry_for(Phase::Observe);
        let meta = self.meta(
            Phase::Observe,
            Some(step),
            "DeleteMessage",
            None,
            Some(name.to_string()),
        );
        let mut rec = self
            .call(meta, |r| {
                client
                    .delete_message()
                    .queue_url(url)
                    .receipt_handle(handle)
                    .customize()
                    .interceptor(r)
                    .config_override(retry)
                    .send()
            })
            .await;
        let label = self.by_id.get(id).cloned();
        for row in &mut rec.rows {
            row.handle_digest = Some(sha256_hex(handle));
            row.message_id = Some(id.to_string());
            row.message = label.clone();
        }
        self.emit_rows(&mut rec);
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

/// Receive parameters shared by receive steps and observation polls.
struct ReceiveParams {
    max: Option<i32>,
    wait: Option<Duration>,
    visibility: Option<Duration>,
    attribute_names: Vec<String>,
    message_attribute_names: Vec<String>,
    request_attempt_id: Option<String>,
}

fn cut_reason(err: &CallError) -> CutReason {
    let code = err
        .code
        .clone()
        .or_else(|| err.error_type.clone())
        .unwrap_or_default();
    match err.kind {
        FailureKind::Throttled => CutReason::Throttled(code),
        FailureKind::NoResponse => {
            CutReason::Transport(err.message.clone().unwrap_or_else(|| "no response".into()))
        }
        FailureKind::Response | FailureKind::ServerError => {
            CutReason::ReceiveFailed(err.describe())
        }
    }
}

/// Compares observed classes with an `outcome:` expectation.
fn compare_outcomes(expect: &OutcomeExpect, got: &BTreeMap<String, OutcomeClass>) -> Check {
    let wanted: Vec<(String, OutcomeClass)> = match expect {
        OutcomeExpect::All(c) => got.keys().map(|l| (l.clone(), c.value)).collect(),
        OutcomeExpect::PerMessage(m) => m.iter().map(|(l, c)| (l.clone(), c.value)).collect(),
    };
    let mut failures = Vec::new();
    let mut unsure = Vec::new();
    for (label, want) in wanted {
        match got.get(&label) {
            None => failures.push(format!(
                "message {label} was not tracked by the observation"
            )),
            Some(OutcomeClass::Inconclusive) => unsure.push(label),
            Some(actual) if *actual != want => failures.push(format!(
                "expected {label}: {}, observed {}",
                want.as_str(),
                actual.as_str()
            )),
            Some(_) => {}
        }
    }
    if !failures.is_empty() {
        Check::Fail(failures)
    } else if !unsure.is_empty() {
        Check::Inconclusive(format!("outcome of {} is inconclusive", unsure.join(", ")))
    } else {
        Check::Pass
    }
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

fn body_text(body: &Body) -> String {
    match body {
        Body::Text(t) => t.clone(),
        Body::Size(n) => "x".repeat(*n),
    }
}

/// `business_key` (or `business_id`) of a JSON object body: a key the suite author put there
/// to be seen, unlike the rest of the body.
fn business_key(body: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let obj = v.as_object()?;
    ["business_key", "business_id"]
        .iter()
        .find_map(|k| obj.get(*k).and_then(|v| v.as_str()).map(str::to_string))
}

fn md5_hex(text: &str) -> String {
    hex::encode(Md5::digest(text.as_bytes()))
}

fn message_attributes(
    send: &SendStep,
) -> Result<Option<HashMap<String, MessageAttributeValue>>, String> {
    if send.attributes.is_empty() {
        return Ok(None);
    }
    let mut map = HashMap::new();
    for a in &send.attributes {
        let mut b = MessageAttributeValue::builder().data_type(&a.data_type);
        if a.data_type.starts_with("Binary") {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(&a.value)
                .map_err(|e| format!("attribute {}: Binary value is not base64: {e}", a.name))?;
            b = b.binary_value(Blob::new(bytes));
        } else {
            b = b.string_value(&a.value);
        }
        let v = b
            .build()
            .map_err(|e| format!("attribute {}: {e}", a.name))?;
        map.insert(a.name.clone(), v);
    }
    Ok(Some(map))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::model::{Pos, Spanned};

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
        let sp = |c| Spanned {
            value: c,
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
        assert_eq!(body_text(&Body::Size(1024)).len(), 1024);
        assert_eq!(md5_hex(""), "d41d8cd98f00b204e9800998ecf8427e");
    }
}
