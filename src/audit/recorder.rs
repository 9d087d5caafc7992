//! The audit's observer inside the emulator: it keeps every delivery and acknowledgement in
//! order, and at each acknowledgement reads the consumer's ledger — before the emulator
//! answers, so a commit the consumer wrote (and flushed) before its delete is always seen as
//! before it.
//!
//! It hears the other effect channels the same way ([`super::effects`]): a line POSTed to the
//! emulator's ledger before the POST is answered, and a message the consumer sends to one of
//! the plan's queues (a forward to an output queue, a hand-off to a source queue) before the
//! send is answered; so at each acknowledgement it knows exactly what every channel held.
//!
//! It also writes `evidence.jsonl` as things happen (each row flushed as written): every
//! request the consumer made as a `call` row ([`super::calls`]), and the audit's own
//! `delivery`, `ack`, `commit` and `handoff` rows, all digest-only.
//!
//! Under `--nemesis` it tells the nemesis ([`super::nemesis::Live`]) of each delivery and
//! delete once it has recorded it, so a strike lands between the event and its answer, and
//! records what the nemesis did (`nemesis` rows) in the order it happened.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::Serialize;

use super::calls::{self, Known, SETUP_ACCESS_KEY};
use super::effects::{Channel, Commit, Handoff};
use super::history::{AckRow, CommitRow, DeliveryRow, FactsRow, HandoffRow};
use super::key::{KeyMap, Role};
use super::log::{AckFact, End, Log};
use super::nemesis::{Act, Event, Live, On};
use sqsprobe_core::evidence::EvidenceWriter;
use sqsprobe_core::evidence::format::Record;
use sqsprobe_emulator::audit::{Ack, AckOp, AuditObserver, Called, Delivery};

/// Where the recorder writes, and what its rows need to know.
struct Evidence {
    run_id: String,
    writer: EvidenceWriter,
    known: Known,
    /// The first write that failed: the audit says so at the end.
    failed: Option<String>,
    /// Every business key a `delivery` row has named: a ledger line that is one of them is
    /// written as it is, so the history read back matches it to its message.
    keys: std::collections::HashSet<String>,
}

impl Evidence {
    /// A ledger line as a row holds it: a key the history already names as it is; anything
    /// else masked as a body would be (a consumer may write anything to its ledger).
    fn mask_line(&self, line: &str) -> String {
        if self.keys.contains(line) {
            line.to_string()
        } else {
            self.known.masker.mask(line)
        }
    }

    fn write(&mut self, result: std::io::Result<()>) {
        if let Err(e) = result
            && self.failed.is_none()
        {
            self.failed = Some(e.to_string());
        }
    }
}

/// The observer: the log so far, where the consumer's ledger is, and the evidence file.
pub(crate) struct Recorder {
    ledger: PathBuf,
    /// A queue's name → where its messages hold the business key, and its role.
    keys: KeyMap,
    log: Mutex<Log>,
    evidence: Mutex<Option<Evidence>>,
    nemesis: Option<std::sync::Arc<Live>>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("ledger", &self.ledger)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// A recorder reading the ledger at `ledger`; `keys` says where each queue's messages
    /// hold the business key (the default for a queue not named) and which queues are the
    /// plan's sources and outputs.
    pub(crate) fn new(ledger: PathBuf, keys: KeyMap) -> Recorder {
        let mut log = Log::default();
        log.effects.outputs = keys.has_output();
        Recorder {
            ledger,
            keys,
            log: Mutex::new(log),
            evidence: Mutex::new(None),
            nemesis: None,
        }
    }

    /// The same recorder telling `nemesis` of every delivery and delete.
    pub(crate) fn with_nemesis(mut self, nemesis: std::sync::Arc<Live>) -> Recorder {
        self.nemesis = Some(nemesis);
        self
    }

    /// Records one act of the nemesis: in the log and as a `nemesis` row.
    pub(crate) fn act(&self, act: Act) {
        self.write_row("nemesis", &act);
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .nemesis
            .push(act);
    }

    /// Writes every row from now on to `writer`, under `run_id`.
    pub(crate) fn write_to(&self, run_id: &str, writer: EvidenceWriter) {
        let known = Known {
            keys: self.keys.clone(),
            ..Known::default()
        };
        *self.evidence.lock().unwrap_or_else(|e| e.into_inner()) = Some(Evidence {
            run_id: run_id.to_string(),
            writer,
            known,
            failed: None,
            keys: Default::default(),
        });
    }

    /// Writes one row of the audit's own (`audit_start`, `audit_end`).
    pub(crate) fn write_row(&self, kind: &str, data: &impl Serialize) {
        if let Some(ev) = self
            .evidence
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            let result = ev.writer.write_row(kind, data);
            ev.write(result);
        }
    }

    /// Writes the `audit_facts` row: what the queues and the ledger file held at the end (the
    /// ledger's lines as a commit row holds them).
    pub(crate) fn write_facts(&self, end: &End) {
        let outputs = self.keys.has_output();
        self.evidence(|ev| {
            let ledger = end.ledger.as_ref().map(|lines| {
                let mut masked: BTreeMap<String, u32> = BTreeMap::new();
                for (line, n) in lines {
                    *masked.entry(ev.mask_line(line)).or_default() += n;
                }
                masked
            });
            let row = FactsRow {
                sent: end.sent.clone(),
                remaining: end.remaining.clone(),
                dead_lettered: end.dead_lettered.clone(),
                ledger,
                outputs,
                queues: end.queues.clone(),
            };
            let result = ev.writer.write_row("audit_facts", &row);
            ev.write(result);
        });
    }

    /// `text` with every handle and body the audit has seen, and anything shaped like an
    /// account id, masked (for what the consumer printed).
    pub(crate) fn mask(&self, text: &str) -> String {
        match self
            .evidence
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            Some(ev) => ev.known.masker.mask(text),
            None => sqsprobe_core::evidence::digest::Masker::default().mask(text),
        }
    }

    /// The first write to the evidence file that failed, if one did.
    pub(crate) fn write_failure(&self) -> Option<String> {
        self.evidence
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|ev| ev.failed.clone())
    }

    /// Closes the evidence file: how many rows it holds, or the first write that failed.
    pub(crate) fn finish(&self) -> Result<u64, String> {
        match self
            .evidence
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            Some(Evidence {
                failed: Some(e), ..
            }) => Err(e),
            Some(ev) => Ok(ev.writer.rows()),
            None => Ok(0),
        }
    }

    /// A copy of the log so far (for the tests: the audit judges what the evidence holds).
    #[cfg(test)]
    pub(crate) fn log(&self) -> Log {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The business key of the message `message_id`, once it has been delivered.
    pub(crate) fn key_of_message(&self, message_id: &str) -> Option<String> {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        let seq = log
            .deliveries
            .iter()
            .rev()
            .find(|d| d.message_id == message_id)?
            .seq;
        log.key(seq)
    }

    /// How many times the ledger holds `key` now, as an acknowledgement would read it.
    pub(crate) fn commits_now(&self, key: &str) -> Option<u32> {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        let file = read_ledger(&self.ledger);
        log.effects.count(file.as_ref(), key)
    }

    fn evidence(&self, write: impl FnOnce(&mut Evidence)) {
        if let Some(ev) = self
            .evidence
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            write(ev);
        }
    }
}

/// The ledger's lines, counted per business key; `None` when the file does not exist.
pub(crate) fn read_ledger(path: &std::path::Path) -> Option<BTreeMap<String, u32>> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut counts = BTreeMap::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        *counts.entry(line.to_string()).or_default() += 1;
    }
    Some(counts)
}

impl AuditObserver for Recorder {
    fn spares(&self, access_key: Option<&str>) -> bool {
        access_key == Some(calls::SETUP_ACCESS_KEY)
    }

    fn delivered(&self, delivery: Delivery) {
        let attributes = (!delivery.attributes.is_empty()).then_some(&delivery.attributes);
        let key = self
            .keys
            .read(Some(&delivery.queue), &delivery.body, attributes);
        self.evidence(|ev| {
            if let Some(k) = &key {
                ev.keys.insert(k.clone());
            }
            let row = DeliveryRow::of(&delivery, key.as_deref());
            let result = ev.writer.write_row("delivery", &row);
            ev.write(result);
        });
        let event = Event {
            on: On::Delivery,
            at_ms: delivery.at_ms,
            message_id: Some(&delivery.message_id),
            business_key: key.as_deref(),
            lease_until_ms: Some(delivery.lease_until_ms),
        };
        let act = self.nemesis.as_ref().and_then(|n| n.on_event(event));
        {
            let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(key) = key {
                log.keys.entry(delivery.seq).or_insert(key);
            }
            log.ids.insert(delivery.message_id.clone());
            log.deliveries.push(delivery);
        }
        if let Some(act) = act {
            self.act(act);
        }
    }

    fn acknowledged(&self, ack: Ack) {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        let key = ack.handle.and_then(|(seq, _)| log.key(seq));
        let commits_at_ack = key.as_ref().and_then(|k| {
            let file = read_ledger(&self.ledger);
            log.effects.count(file.as_ref(), k)
        });
        // A hand-off of the key sent after the acknowledged attempt was delivered carries its
        // work on.
        let delivered_at =
            ack.handle
                .filter(|_| !log.handoffs.is_empty())
                .and_then(|(seq, nonce)| {
                    log.deliveries
                        .iter()
                        .rposition(|d| d.seq == seq && d.nonce == nonce)
                });
        let handed_off = match (&key, delivered_at) {
            (Some(k), Some(at)) => log
                .handoffs
                .iter()
                .any(|h| h.key.as_ref() == Some(k) && h.after_deliveries > at),
            _ => false,
        };
        let fact = AckFact {
            ack,
            business_key: key,
            commits_at_ack,
            handed_off,
        };
        self.evidence(|ev| {
            let result = ev.writer.write_row("ack", &AckRow::of(&fact));
            ev.write(result);
        });
        let act = match (&self.nemesis, fact.ack.op) {
            (Some(nemesis), AckOp::Delete) => {
                let message = fact.ack.handle.and_then(|(seq, _)| {
                    log.deliveries
                        .iter()
                        .find(|d| d.seq == seq)
                        .map(|d| d.message_id.clone())
                });
                nemesis.on_event(Event {
                    on: On::Delete,
                    at_ms: fact.ack.at_ms,
                    message_id: message.as_deref(),
                    business_key: fact.business_key.as_deref(),
                    lease_until_ms: None,
                })
            }
            _ => None,
        };
        log.acks.push(fact);
        drop(log);
        if let Some(act) = act {
            self.act(act);
        }
    }

    fn called(&self, call: &Called<'_>) {
        self.evidence(|ev| {
            ev.known.learn(call);
            let row = calls::row(&ev.run_id, call, &ev.known);
            let result = ev.writer.write(&Record::Call(row));
            ev.write(result);
        });
        if call.access_key != Some(SETUP_ACCESS_KEY) {
            self.sent(call);
        }
    }

    fn ledger(&self, lines: &str) {
        let at_ms = epoch_ms(std::time::SystemTime::now());
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        for line in lines.lines().map(str::trim).filter(|l| !l.is_empty()) {
            log.effects.commit(Channel::Http, line);
            let commit = Commit {
                channel: Channel::Http,
                key: Some(line.to_string()),
                message_id: None,
                queue: None,
                key_at: None,
                at_ms,
            };
            self.evidence(|ev| write_commit(ev, &commit));
            log.commits.push(commit);
        }
    }
}

impl Recorder {
    /// What the consumer's send stored on a queue of the plan: a forward to an output queue
    /// (a commit), or a hand-off to a source queue; told before the send is answered.
    fn sent(&self, call: &Called<'_>) {
        let stored = calls::stored(call);
        if stored.is_empty() {
            return;
        }
        let at_ms = epoch_ms(call.started + call.latency);
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        for m in stored {
            let Some((spec, role)) = self.keys.of(m.queue) else {
                continue;
            };
            let key = spec.read(m.body, m.attributes);
            let queue = m.queue.unwrap_or_default().to_string();
            // A FIFO queue answers a send it deduplicated with the MessageId of the message it
            // already holds: nothing new went out, neither a second commit nor a hand-off.
            if !log.ids.insert(m.message_id.to_string()) {
                continue;
            }
            match role {
                Role::Output => {
                    if let Some(k) = &key {
                        log.effects.commit(Channel::Forward, k);
                    }
                    let commit = Commit {
                        channel: Channel::Forward,
                        key,
                        message_id: Some(m.message_id.to_string()),
                        queue: Some(queue),
                        key_at: Some(spec.written()),
                        at_ms,
                    };
                    self.evidence(|ev| write_commit(ev, &commit));
                    log.commits.push(commit);
                }
                Role::Source => {
                    let handoff = Handoff {
                        message_id: m.message_id.to_string(),
                        key,
                        queue,
                        key_at: spec.written(),
                        at_ms,
                        after_deliveries: log.deliveries.len(),
                    };
                    self.evidence(|ev| {
                        let row = HandoffRow {
                            message_id: handoff.message_id.clone(),
                            business_key: handoff.key.clone(),
                            queue: handoff.queue.clone(),
                            key_at: handoff.key_at.clone(),
                            at_ms,
                        };
                        let result = ev.writer.write_row("handoff", &row);
                        ev.write(result);
                    });
                    log.handoffs.push(handoff);
                }
                // A dead-letter queue is the emulator's to fill, not the consumer's.
                Role::DeadLetter => {}
            }
        }
    }
}

/// Writes a `commit` row.
fn write_commit(ev: &mut Evidence, commit: &Commit) {
    let row = CommitRow {
        channel: commit.channel,
        business_key: commit.key.as_deref().map(|k| ev.mask_line(k)),
        message_id: commit.message_id.clone(),
        queue: commit.queue.clone(),
        key_at: commit.key_at.clone(),
        at_ms: commit.at_ms,
    };
    let result = ev.writer.write_row("commit", &row);
    ev.write(result);
}

/// Milliseconds since the Unix epoch, the emulator's clock.
fn epoch_ms(t: std::time::SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::key::KeySpec;
    use serde_json::json;

    fn recorder() -> Recorder {
        let mut keys = KeyMap::default();
        keys.insert("orders".into(), KeySpec::default(), Role::Source);
        keys.insert("out".into(), KeySpec::parse("order").unwrap(), Role::Output);
        Recorder::new(PathBuf::from("/nonexistent/sqsprobe/ledger.txt"), keys)
    }

    fn deliver(r: &Recorder, seq: u64, id: &str, body: &str) {
        r.delivered(Delivery {
            queue: "arn:aws:sqs:us-east-1:000000000000:orders".into(),
            message_id: id.into(),
            seq,
            nonce: seq,
            body: body.into(),
            attributes: Default::default(),
            at_ms: 0,
            lease_until_ms: 10_000,
        });
    }

    fn delete(r: &Recorder, seq: u64) -> AckFact {
        r.acknowledged(Ack {
            queue: "arn:aws:sqs:us-east-1:000000000000:orders".into(),
            op: AckOp::Delete,
            handle: Some((seq, seq)),
            handle_digest: "00".repeat(32),
            at_ms: 100,
        });
        r.log().acks.last().cloned().unwrap()
    }

    fn send(r: &Recorder, queue: &str, body: &str, id: &str, access_key: &str) {
        let params =
            json!({"QueueUrl": format!("http://h/000000000000/{queue}"), "MessageBody": body});
        let answer = json!({"MessageId": id});
        r.called(&Called {
            operation: "SendMessage",
            params: params.as_object().unwrap(),
            answer: Ok(&answer),
            protocol: "json",
            request_id: "r",
            sdk_attempt: None,
            access_key: Some(access_key),
            started: std::time::SystemTime::now(),
            latency: std::time::Duration::ZERO,
        });
    }

    /// A forward to the output queue is the commit of its key from that moment; the audit's
    /// own sends are none.
    #[test]
    fn a_forward_commits_its_key_before_the_delete_is_heard() {
        let r = recorder();
        deliver(&r, 1, "m1", r#"{"business_key": "b-1"}"#);
        // Before anything: the output queue is a channel, and it holds nothing yet.
        assert_eq!(delete(&r, 1).commits_at_ack, Some(0));
        send(&r, "out", r#"{"order": "b-1"}"#, "f1", SETUP_ACCESS_KEY);
        assert_eq!(
            delete(&r, 1).commits_at_ack,
            Some(0),
            "the audit's own send"
        );
        send(&r, "out", r#"{"order": "b-1"}"#, "f1", "consumer");
        assert_eq!(delete(&r, 1).commits_at_ack, Some(1));
        let log = r.log();
        assert_eq!(log.commits.len(), 1);
        assert_eq!(log.commits[0].message_id.as_deref(), Some("f1"));
        assert_eq!(log.effects.forwards["b-1"], 1);
        // A FIFO queue deduplicated a second forward: the same MessageId, no second commit.
        send(&r, "out", r#"{"order": "b-1"}"#, "f1", "consumer");
        assert_eq!(delete(&r, 1).commits_at_ack, Some(1));
        // A forward whose key the output queue cannot read is kept, unread.
        send(&r, "out", "{}", "f2", "consumer");
        assert_eq!(r.log().commits[1].key, None);
    }

    /// A hand-off counts for the attempts delivered before it, never for the new message's
    /// own delivery.
    #[test]
    fn a_hand_off_covers_the_attempts_delivered_before_it() {
        let r = recorder();
        deliver(&r, 1, "m1", r#"{"business_key": "b-1"}"#);
        assert!(!delete(&r, 1).handed_off);
        send(
            &r,
            "orders",
            r#"{"business_key": "b-1", "retry": 1}"#,
            "h1",
            "consumer",
        );
        assert!(delete(&r, 1).handed_off);
        deliver(&r, 2, "h1", r#"{"business_key": "b-1", "retry": 1}"#);
        let carrier = delete(&r, 2);
        assert!(!carrier.handed_off);
        assert_eq!(carrier.commits_at_ack, Some(0));
        assert_eq!(r.log().handoffs[0].after_deliveries, 1);
    }

    /// The HTTP ledger's lines are commits as they are heard.
    #[test]
    fn the_http_ledger_counts_each_line() {
        let mut keys = KeyMap::default();
        keys.insert("orders".into(), KeySpec::default(), Role::Source);
        let r = Recorder::new(PathBuf::from("/nonexistent/ledger.txt"), keys);
        deliver(&r, 1, "m1", r#"{"business_key": "b-1"}"#);
        assert_eq!(delete(&r, 1).commits_at_ack, None, "no channel yet");
        r.ledger("b-1\n\n  b-2  \nb-1");
        assert_eq!(delete(&r, 1).commits_at_ack, Some(2));
        assert_eq!(r.log().effects.http["b-2"], 1);
    }
}
