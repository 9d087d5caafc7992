//! The audit's history as evidence rows, and the judge's log read back from them (pure).
//!
//! The recorder writes every delivery, acknowledgement, commit, hand-off and nemesis act as a
//! typed row of `evidence.jsonl` as it happens, and, once the consumer has stopped, one
//! `audit_facts` row with what the queues and the ledger file held at the end. [`read`]
//! rebuilds the judge's [`Log`] and [`End`] from those rows alone. The runner judges what it
//! reads back from the file, and `sqsprobe check` does the same later: an audit's verdict is a
//! function of its recorded history, never of what the process happened to hold in memory.
//!
//! The rows carry digests and business keys, never bodies or raw handles: the judge needs
//! neither. A row this reader cannot take (a file written before these rows carried the
//! message's sequence number, a hand-edited line) is an error naming its line, not a skip: a
//! history with a hole in it would judge as if the missing acknowledgement never happened.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::effects::{Channel, Commit, Handoff};
use super::lambda::invocation::{Invocation, LambdaFacts};
use super::log::{AckFact, End, Log};
use super::nemesis::Act;
use sqsprobe_core::evidence::format::{Call, Completion, Phase};
use sqsprobe_emulator::audit::{Ack, AckOp, Delivery};

/// A `delivery` row: one attempt of one message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeliveryRow {
    /// The queue's name (never its ARN or URL).
    pub queue: String,
    pub message_id: String,
    /// The message's sequence number in the emulator's store: one message over its attempts.
    pub message_seq: u64,
    pub business_key: Option<String>,
    /// The attempt: the nonce the receipt handle of this delivery carries.
    pub attempt_nonce: u64,
    pub body_digest: String,
    /// When it was delivered and when its lease ends, on the emulator's clock (epoch ms).
    pub at_ms: u64,
    pub lease_until_ms: u64,
}

/// What an acknowledgement asked, on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum AckOpName {
    Delete,
    ChangeVisibility,
}

/// An `ack` row: one delete or visibility change, with what the effect channels held then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AckRow {
    pub queue: String,
    pub op: AckOpName,
    /// A visibility change's new timeout, in seconds.
    pub visibility_timeout: Option<i64>,
    /// The message and attempt its handle names; both `null` for a handle the emulator never
    /// issued.
    pub message_seq: Option<u64>,
    pub attempt_nonce: Option<u64>,
    pub handle_digest: String,
    pub business_key: Option<String>,
    /// That key's commits at that moment: the most any one channel held (`null`: no channel
    /// could show it yet, or no key).
    pub commits_at_ack: Option<u32>,
    /// A hand-off of the key had been sent since the acknowledged attempt was delivered.
    pub handed_off: bool,
    pub at_ms: u64,
}

/// A `commit` row: a line of the HTTP ledger, or a forward to an output queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CommitRow {
    pub channel: Channel,
    /// The key committed; a line that is no key the audit delivered is masked as a body would
    /// be (it may hold anything).
    pub business_key: Option<String>,
    /// A forward's MessageId, output queue, and where that queue's key is read.
    pub message_id: Option<String>,
    pub queue: Option<String>,
    pub key_at: Option<String>,
    pub at_ms: u64,
}

/// A `handoff` row: a message the consumer sent to a source queue of the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HandoffRow {
    pub message_id: String,
    pub business_key: Option<String>,
    pub queue: String,
    pub key_at: String,
    pub at_ms: u64,
}

/// The `audit_facts` row: what the audit knew at the end, besides the rows before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FactsRow {
    /// The MessageIds the audit sent, in send order.
    pub sent: Vec<String>,
    /// The MessageIds the queues still stored (dead-letter queues included).
    pub remaining: Vec<String>,
    /// Those of them a dead-letter queue held.
    pub dead_lettered: Vec<String>,
    /// The ledger file, per line (masked as a commit row's key is); `null`: never written.
    pub ledger: Option<BTreeMap<String, u32>>,
    /// Whether the plan names an output queue (its forwards are a channel from the start).
    pub outputs: bool,
    /// The queues the audit made (sources, dead-letter and output queues), by name.
    pub queues: Vec<String>,
}

impl DeliveryRow {
    /// The row of `delivery`, whose business key is `key`.
    pub(crate) fn of(delivery: &Delivery, key: Option<&str>) -> DeliveryRow {
        DeliveryRow {
            queue: queue_name(&delivery.queue),
            message_id: delivery.message_id.clone(),
            message_seq: delivery.seq,
            business_key: key.map(str::to_string),
            attempt_nonce: delivery.nonce,
            body_digest: sqsprobe_core::evidence::sha256_hex(&delivery.body),
            at_ms: delivery.at_ms,
            lease_until_ms: delivery.lease_until_ms,
        }
    }
}

impl AckRow {
    /// The row of `fact`.
    pub(crate) fn of(fact: &AckFact) -> AckRow {
        let (op, visibility_timeout) = match fact.ack.op {
            AckOp::Delete => (AckOpName::Delete, None),
            AckOp::ChangeVisibility { timeout_s } => (AckOpName::ChangeVisibility, Some(timeout_s)),
        };
        AckRow {
            queue: queue_name(&fact.ack.queue),
            op,
            visibility_timeout,
            message_seq: fact.ack.handle.map(|(seq, _)| seq),
            attempt_nonce: fact.ack.handle.map(|(_, nonce)| nonce),
            handle_digest: fact.ack.handle_digest.clone(),
            business_key: fact.business_key.clone(),
            commits_at_ack: fact.commits_at_ack,
            handed_off: fact.handed_off,
            at_ms: fact.ack.at_ms,
        }
    }
}

/// A queue's name from its store key (an ARN) or URL: the last segment.
fn queue_name(queue: &str) -> String {
    queue.rsplit([':', '/']).next().unwrap_or(queue).to_string()
}

/// A history that cannot be read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReadError {
    /// 1-based line of `evidence.jsonl`, when one line is at fault.
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// An audit's history as its evidence holds it: what the judge reads, and the consumer's calls
/// for the report.
#[derive(Debug, Clone)]
pub(crate) struct History {
    pub log: Log,
    pub end: End,
    /// The consumer's `call` rows, in order.
    pub consumer_calls: Vec<Call>,
    /// Under `--lambda`: the invocations, in order, and the mapping's facts.
    pub lambda: Option<(Vec<Invocation>, LambdaFacts)>,
}

/// The log and the end as the rows of `text` (an audit's `evidence.jsonl`) record them.
///
/// A `call` row of the consumer's counts towards the queues it used; under `--lambda`, the
/// `lambda_invocation` rows and the `lambda_facts` row are the Lambda findings' input. Rows of
/// other types (`audit_start`, `consumer_start`, `audit_end`) are not the
/// judge's input and are passed over; a row of one of the judge's types that does not read is
/// an error, and so is a history without its `audit_facts` row (the audit did not finish).
pub(crate) fn read(text: &str) -> Result<History, ReadError> {
    let mut log = Log::default();
    let mut end = None;
    let mut consumer_calls = Vec::new();
    let mut invocations = Vec::new();
    let mut lambda_facts = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |message: String| ReadError {
            line: Some(i + 1),
            message,
        };
        #[derive(Deserialize)]
        struct Envelope {
            #[serde(rename = "type")]
            kind: String,
            #[serde(default)]
            data: serde_json::Value,
        }
        let row: Envelope =
            serde_json::from_str(line).map_err(|e| at(format!("not a JSON row: {e}")))?;
        let data = |what: &str| {
            let what = what.to_string();
            move |e: serde_json::Error| at(format!("a `{what}` row that does not read: {e}"))
        };
        match row.kind.as_str() {
            "delivery" => {
                let d: DeliveryRow = serde_json::from_value(row.data).map_err(data("delivery"))?;
                if let Some(key) = &d.business_key {
                    log.keys.entry(d.message_seq).or_insert_with(|| key.clone());
                }
                log.ids.insert(d.message_id.clone());
                log.deliveries.push(Delivery {
                    queue: d.queue,
                    message_id: d.message_id,
                    seq: d.message_seq,
                    nonce: d.attempt_nonce,
                    body: String::new(),
                    attributes: serde_json::Map::new(),
                    at_ms: d.at_ms,
                    lease_until_ms: d.lease_until_ms,
                });
            }
            "ack" => {
                let a: AckRow = serde_json::from_value(row.data).map_err(data("ack"))?;
                let op = match (a.op, a.visibility_timeout) {
                    (AckOpName::Delete, None) => AckOp::Delete,
                    (AckOpName::ChangeVisibility, Some(timeout_s)) => {
                        AckOp::ChangeVisibility { timeout_s }
                    }
                    (AckOpName::Delete, Some(_)) => {
                        return Err(at("a delete `ack` row with a visibility_timeout".into()));
                    }
                    (AckOpName::ChangeVisibility, None) => {
                        return Err(at(
                            "a change_visibility `ack` row without its visibility_timeout".into(),
                        ));
                    }
                };
                let handle = match (a.message_seq, a.attempt_nonce) {
                    (Some(seq), Some(nonce)) => Some((seq, nonce)),
                    (None, None) => None,
                    _ => {
                        return Err(at(
                            "an `ack` row with one of message_seq and attempt_nonce".into()
                        ));
                    }
                };
                log.acks.push(AckFact {
                    ack: Ack {
                        queue: a.queue,
                        op,
                        handle,
                        handle_digest: a.handle_digest,
                        at_ms: a.at_ms,
                    },
                    business_key: a.business_key,
                    commits_at_ack: a.commits_at_ack,
                    handed_off: a.handed_off,
                });
            }
            "commit" => {
                let c: CommitRow = serde_json::from_value(row.data).map_err(data("commit"))?;
                if c.channel == Channel::File {
                    return Err(at(
                        "a `commit` row on the file channel (the file is read, not logged)".into(),
                    ));
                }
                if let Some(k) = &c.business_key {
                    log.effects.commit(c.channel, k);
                }
                if let Some(id) = &c.message_id {
                    log.ids.insert(id.clone());
                }
                log.commits.push(Commit {
                    channel: c.channel,
                    key: c.business_key,
                    message_id: c.message_id,
                    queue: c.queue,
                    key_at: c.key_at,
                    at_ms: c.at_ms,
                });
            }
            "handoff" => {
                let h: HandoffRow = serde_json::from_value(row.data).map_err(data("handoff"))?;
                log.ids.insert(h.message_id.clone());
                log.handoffs.push(Handoff {
                    message_id: h.message_id,
                    key: h.business_key,
                    queue: h.queue,
                    key_at: h.key_at,
                    at_ms: h.at_ms,
                    // The rows are in the order the recorder heard them: the deliveries read
                    // so far are those it had heard of when the hand-off was sent.
                    after_deliveries: log.deliveries.len(),
                });
            }
            "call" => {
                let call: Call = serde_json::from_value(row.data).map_err(data("call"))?;
                if call.phase == Phase::Consumer
                    && let Some(queue) = &call.queue
                {
                    let refused = call.completion == Completion::Fail;
                    log.queues.called(&call.action, queue, refused);
                }
                if call.phase == Phase::Consumer {
                    consumer_calls.push(call);
                }
            }
            "lambda_invocation" => {
                let invocation: Invocation =
                    serde_json::from_value(row.data).map_err(data("lambda_invocation"))?;
                invocations.push(invocation);
            }
            "lambda_facts" => {
                if lambda_facts.is_some() {
                    return Err(at("a second `lambda_facts` row".into()));
                }
                let facts: LambdaFacts =
                    serde_json::from_value(row.data).map_err(data("lambda_facts"))?;
                lambda_facts = Some(facts);
            }
            "nemesis" => {
                let act: Act = serde_json::from_value(row.data).map_err(data("nemesis"))?;
                log.nemesis.push(act);
            }
            "audit_facts" => {
                if end.is_some() {
                    return Err(at("a second `audit_facts` row".into()));
                }
                let f: FactsRow = serde_json::from_value(row.data).map_err(data("audit_facts"))?;
                log.effects.outputs = f.outputs;
                end = Some(End {
                    sent: f.sent,
                    remaining: f.remaining,
                    dead_lettered: f.dead_lettered,
                    ledger: f.ledger,
                    queues: f.queues,
                });
            }
            _ => {}
        }
    }
    let end = end.ok_or_else(|| ReadError {
        line: None,
        message: "no `audit_facts` row: the audit did not finish, so there is nothing to judge"
            .into(),
    })?;
    let lambda = match (lambda_facts, invocations.is_empty()) {
        (Some(facts), _) => Some((invocations, facts)),
        (None, true) => None,
        (None, false) => {
            return Err(ReadError {
                line: None,
                message: "`lambda_invocation` rows without the `lambda_facts` row: the \
                          Lambda audit did not finish"
                    .into(),
            });
        }
    };
    Ok(History {
        log,
        end,
        consumer_calls,
        lambda,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::nemesis::{ActKind, On};

    fn row(kind: &str, data: &impl Serialize) -> String {
        serde_json::json!({"type": kind, "data": data}).to_string()
    }

    fn delivery(seq: u64, nonce: u64, at_ms: u64) -> Delivery {
        Delivery {
            queue: "arn:aws:sqs:us-east-1:000000000000:orders".into(),
            message_id: format!("m-{seq}"),
            seq,
            nonce,
            body: format!(r#"{{"business_key": "b-{seq}"}}"#),
            attributes: serde_json::Map::new(),
            at_ms,
            lease_until_ms: at_ms + 1000,
        }
    }

    fn facts() -> FactsRow {
        FactsRow {
            sent: vec!["m-1".into(), "m-2".into()],
            remaining: vec!["m-2".into()],
            dead_lettered: vec![],
            ledger: Some(BTreeMap::from([("b-1".to_string(), 1)])),
            outputs: false,
            queues: vec!["orders".into()],
        }
    }

    /// A log written as rows and read back judges as the log itself does.
    #[test]
    fn a_history_read_back_judges_as_the_log_it_was_written_from() {
        let (d1, d2, d1b) = (
            delivery(1, 1, 100),
            delivery(2, 2, 110),
            delivery(1, 3, 1200),
        );
        let ack = |d: &Delivery, op: AckOp, at_ms: u64, commits: Option<u32>| AckFact {
            ack: Ack {
                queue: d.queue.clone(),
                op,
                handle: Some((d.seq, d.nonce)),
                handle_digest: format!("digest-{}-{}", d.seq, d.nonce),
                at_ms,
            },
            business_key: Some(format!("b-{}", d.seq)),
            commits_at_ack: commits,
            handed_off: false,
        };
        let acks = [
            ack(&d1, AckOp::ChangeVisibility { timeout_s: 5 }, 150, Some(0)),
            ack(&d1, AckOp::Delete, 1300, Some(1)),
            ack(&d1b, AckOp::Delete, 1400, Some(1)),
        ];
        let handoff = HandoffRow {
            message_id: "m-9".into(),
            business_key: Some("b-2".into()),
            queue: "orders".into(),
            key_at: "business_key".into(),
            at_ms: 120,
        };
        let kill = Act {
            act: ActKind::Kill,
            at_ms: 1250,
            on: Some(On::Delivery),
            count: Some(3),
            message_id: Some("m-1".into()),
            business_key: Some("b-1".into()),
            start: None,
        };
        let text = [
            row("audit_start", &serde_json::json!({"anything": 1})),
            row("delivery", &DeliveryRow::of(&d1, Some("b-1"))),
            row("ack", &AckRow::of(&acks[0])),
            row("delivery", &DeliveryRow::of(&d2, Some("b-2"))),
            row("handoff", &handoff),
            row("delivery", &DeliveryRow::of(&d1b, Some("b-1"))),
            row("nemesis", &kill),
            row("ack", &AckRow::of(&acks[1])),
            row("ack", &AckRow::of(&acks[2])),
            row("audit_facts", &facts()),
            row("audit_end", &serde_json::json!({"clean": false})),
        ]
        .join("\n");
        let History { log, end, .. } = read(&text).unwrap();
        assert_eq!(log.deliveries.len(), 3);
        assert_eq!(
            log.acks,
            acks.iter()
                .map(|a| {
                    let mut a = a.clone();
                    a.ack.queue = "orders".into();
                    a
                })
                .collect::<Vec<_>>()
        );
        assert_eq!(log.handoffs[0].after_deliveries, 2);
        assert_eq!(log.nemesis, vec![kill]);
        assert_eq!(log.key(1).as_deref(), Some("b-1"));
        assert!(log.ids.contains("m-9"));
        assert_eq!(end.ledger, facts().ledger);

        // The same log held in memory (bodies and ARNs, which the judge does not read).
        let mut memory = log.clone();
        for (d, full) in memory.deliveries.iter_mut().zip([&d1, &d2, &d1b]) {
            *d = full.clone();
        }
        let judged = crate::audit::judge::judge(&log, &end);
        let from_memory = crate::audit::judge::judge(&memory, &end);
        assert_eq!(
            serde_json::to_value(&judged).unwrap(),
            serde_json::to_value(&from_memory).unwrap()
        );
        assert!(
            !judged.findings.is_empty(),
            "the history has something to find"
        );
    }

    /// A Lambda audit's invocations and facts read back as written; invocations without the
    /// facts are an audit that did not finish, and an outcome the mapping never names is
    /// refused.
    #[test]
    fn the_lambda_rows_read_back_and_an_unfinished_lambda_history_is_refused() {
        use crate::audit::lambda::invocation::{Invoked, Outcome};
        let invocation = Invocation {
            request_id: "r-1".into(),
            started_ms: 10,
            ended_ms: 20,
            records: vec![Invoked {
                message_id: "m-1".into(),
                business_key: Some("b-1".into()),
                group: None,
                receive_count: 1,
                commits_before: Some(0),
                commits_after: Some(1),
            }],
            outcome: Outcome::Partial,
            error_type: None,
            wrong_identifier: None,
            returned: vec![0],
            reset: false,
        };
        let facts_row = LambdaFacts {
            batch_size: 10,
            batching_window_ms: 0,
            report_batch_item_failures: true,
            function_timeout_ms: 3000,
            concurrency: 1,
            fifo: false,
            dead_letter: false,
            visibility_timeout_s: 30,
            init_errors: vec![],
        };
        let text = [
            row("lambda_invocation", &invocation),
            row("lambda_facts", &facts_row),
            row("audit_facts", &facts()),
        ]
        .join("\n");
        let read_back = read(&text).unwrap().lambda.unwrap();
        assert_eq!(read_back, (vec![invocation.clone()], facts_row));

        let unfinished = [
            row("lambda_invocation", &invocation),
            row("audit_facts", &facts()),
        ];
        assert!(
            read(&unfinished.join("\n"))
                .unwrap_err()
                .message
                .contains("lambda_facts")
        );

        let mut odd = serde_json::to_value(&invocation).unwrap();
        odd["outcome"] = "mostly_fine".into();
        let text = [row("lambda_invocation", &odd), row("audit_facts", &facts())].join("\n");
        assert_eq!(read(&text).unwrap_err().line, Some(1));
    }

    #[test]
    fn a_history_that_did_not_finish_or_has_a_bad_row_is_refused_with_its_line() {
        let d = row("delivery", &DeliveryRow::of(&delivery(1, 1, 0), None));
        let err = read(&d).unwrap_err();
        assert!(err.message.contains("audit_facts"), "{err}");

        let mut old = serde_json::to_value(DeliveryRow::of(&delivery(1, 1, 0), None)).unwrap();
        old.as_object_mut().unwrap().remove("message_seq");
        let text = [row("delivery", &old), row("audit_facts", &facts())].join("\n");
        let err = read(&text).unwrap_err();
        assert_eq!(err.line, Some(1));
        assert!(err.to_string().contains("message_seq"), "{err}");

        let mut ack = serde_json::to_value(AckRow::of(&AckFact {
            ack: Ack {
                queue: "q".into(),
                op: AckOp::Delete,
                handle: None,
                handle_digest: "x".into(),
                at_ms: 1,
            },
            business_key: None,
            commits_at_ack: None,
            handed_off: false,
        }))
        .unwrap();
        ack["visibility_timeout"] = 3.into();
        let text = [row("ack", &ack), row("audit_facts", &facts())].join("\n");
        assert_eq!(read(&text).unwrap_err().line, Some(1));

        let twice = [row("audit_facts", &facts()), row("audit_facts", &facts())].join("\n");
        assert_eq!(read(&twice).unwrap_err().line, Some(2));
        assert_eq!(read("{not json").unwrap_err().line, Some(1));
    }
}
