//! Running one case: create its queues, run its steps, observe, tear down, judge.
//!
//! A case holds everything an experiment needs to know about itself: which attempt received
//! which handle, which receive was the latest for each message (so an ack with an older handle
//! is known to be stale), how often each message was delivered. Raw handles and bodies live
//! only in this memory; everything that leaves it goes through the case's [`Masker`].

/// Sends one SDK operation as a recorded call of the case: `call!(self, meta, <fluent builder>)`.
///
/// This is the one way a case calls SQS. Every SDK attempt becomes an evidence row, and the
/// per-call configuration (see [`CaseRun::call_config`]) is attached here and nowhere else. A
/// call is abandoned (as an `info` row) when the run is interrupted; `call!(finish: ...)` runs
/// to completion instead, for creates, ownership checks and teardown, where dropping the answer
/// could leave a queue behind that nobody knows about.
macro_rules! call {
    ($run:expr, $meta:expr, $op:expr) => {
        $run.call($meta, false, |r, cfg| {
            $op.customize().interceptor(r).config_override(cfg).send()
        })
    };
    (finish: $run:expr, $meta:expr, $op:expr) => {
        $run.call($meta, true, |r, cfg| {
            $op.customize().interceptor(r).config_override(cfg).send()
        })
    };
}

mod acks;
mod admin;
mod calls;
mod lifecycle;
mod messages;
mod move_tasks;
mod observe;
mod steps;

use messages::business_key;
use observe::compare_outcomes;

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
    Action, BatchHandle, BatchSend, BatchVisibility, Body, Case, HandleRef, Observe, OutcomeClass,
    OutcomeExpect, QueueDef, Receive, Send as SendStep, Spanned, Step, StepExpect, arn_refs,
    substitute_arns,
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

/// MD5 hex of a body, as SQS computes MD5OfMessageBody (the SDK does not check it).
fn md5_hex(text: &str) -> String {
    hex::encode(Md5::digest(text.as_bytes()))
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
        assert_eq!(messages::body_text(&Body::Size(1024)).len(), 1024);
        assert_eq!(md5_hex(""), "d41d8cd98f00b204e9800998ecf8427e");
    }
}
