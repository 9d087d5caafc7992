//! The audit's observer inside the emulator: it keeps every delivery and acknowledgement in
//! order, and at each acknowledgement reads the consumer's ledger — before the emulator
//! answers, so a commit the consumer wrote (and flushed) before its delete is always seen as
//! before it.
//!
//! It also writes `evidence.jsonl` as things happen (each row flushed as written): every
//! request the consumer made as a `call` row ([`super::calls`]), and the audit's own
//! `delivery` and `ack` rows, all digest-only.
//!
//! Under `--nemesis` it tells the nemesis ([`super::nemesis::Live`]) of each delivery and
//! delete once it has recorded it, so a strike lands between the event and its answer, and
//! records what the nemesis did (`nemesis` rows) in the order it happened.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::Serialize;

use super::calls::{self, Known};
use super::nemesis::{Act, Event, Live, On};
use super::plan::{KeyPaths, key_on};
use crate::emulator::audit::{Ack, AckOp, AuditObserver, Called, Delivery};
use crate::evidence::EvidenceWriter;
use crate::evidence::format::Record;

/// An acknowledgement, with what the ledger said of its message when it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckFact {
    pub ack: Ack,
    /// The business key of the message its handle names, when the handle names one.
    pub business_key: Option<String>,
    /// How many times the ledger held that key at that moment; `None` when there was no
    /// ledger file yet (or no key to look for).
    pub commits_at_ack: Option<u32>,
}

/// Everything the emulator told the audit, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Log {
    pub deliveries: Vec<Delivery>,
    pub acks: Vec<AckFact>,
    /// Each message's business key (by its store-wide seq), read from its body where the
    /// plan says it sits.
    pub keys: BTreeMap<u64, String>,
    /// What the nemesis did, in order (empty without `--nemesis`).
    pub nemesis: Vec<Act>,
}

impl Log {
    /// The business key of the message `seq`.
    pub fn key(&self, seq: u64) -> Option<String> {
        self.keys.get(&seq).cloned()
    }
}

/// Where the recorder writes, and what its rows need to know.
struct Evidence {
    run_id: String,
    writer: EvidenceWriter,
    known: Known,
    /// The first write that failed: the audit says so at the end.
    failed: Option<String>,
}

impl Evidence {
    fn write(&mut self, result: std::io::Result<()>) {
        if let Err(e) = result
            && self.failed.is_none()
        {
            self.failed = Some(e.to_string());
        }
    }
}

/// The observer: the log so far, where the consumer's ledger is, and the evidence file.
pub struct Recorder {
    ledger: PathBuf,
    /// A queue's name → where its bodies hold the business key.
    keys: KeyPaths,
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

/// A `delivery` row: one attempt of one message.
#[derive(Serialize)]
struct DeliveryRow<'a> {
    message_id: &'a str,
    business_key: Option<&'a str>,
    attempt_nonce: u64,
    body_digest: String,
    at_ms: u64,
    lease_until_ms: u64,
}

/// An `ack` row: one delete or visibility change, with what the ledger held then.
#[derive(Serialize)]
struct AckRow<'a> {
    op: &'static str,
    visibility_timeout: Option<i64>,
    attempt_nonce: Option<u64>,
    handle_digest: &'a str,
    business_key: Option<&'a str>,
    commits_at_ack: Option<u32>,
    at_ms: u64,
}

impl Recorder {
    /// A recorder reading the ledger at `ledger`; `keys` says where each queue's bodies hold
    /// the business key (the default path for a queue not named).
    pub fn new(ledger: PathBuf, keys: KeyPaths) -> Recorder {
        Recorder {
            ledger,
            keys,
            log: Mutex::new(Log::default()),
            evidence: Mutex::new(None),
            nemesis: None,
        }
    }

    /// The same recorder telling `nemesis` of every delivery and delete.
    pub fn with_nemesis(mut self, nemesis: std::sync::Arc<Live>) -> Recorder {
        self.nemesis = Some(nemesis);
        self
    }

    /// Records one act of the nemesis: in the log and as a `nemesis` row.
    pub fn act(&self, act: Act) {
        self.write_row("nemesis", &act);
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .nemesis
            .push(act);
    }

    /// Writes every row from now on to `writer`, under `run_id`.
    pub fn write_to(&self, run_id: &str, writer: EvidenceWriter) {
        let known = Known {
            keys: self.keys.clone(),
            ..Known::default()
        };
        *self.evidence.lock().unwrap_or_else(|e| e.into_inner()) = Some(Evidence {
            run_id: run_id.to_string(),
            writer,
            known,
            failed: None,
        });
    }

    /// Writes one row of the audit's own (`audit_start`, `audit_end`).
    pub fn write_row(&self, kind: &str, data: &impl Serialize) {
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

    /// Closes the evidence file: how many rows it holds, or the first write that failed.
    pub fn finish(&self) -> Result<u64, String> {
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

    /// A copy of the log so far.
    pub fn log(&self) -> Log {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
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
pub fn read_ledger(path: &std::path::Path) -> Option<BTreeMap<String, u32>> {
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
        let key = key_on(&self.keys, Some(&delivery.queue), &delivery.body);
        self.evidence(|ev| {
            let row = DeliveryRow {
                message_id: &delivery.message_id,
                business_key: key.as_deref(),
                attempt_nonce: delivery.nonce,
                body_digest: crate::evidence::sha256_hex(&delivery.body),
                at_ms: delivery.at_ms,
                lease_until_ms: delivery.lease_until_ms,
            };
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
            log.deliveries.push(delivery);
        }
        if let Some(act) = act {
            self.act(act);
        }
    }

    fn acknowledged(&self, ack: Ack) {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        let key = ack.handle.and_then(|(seq, _)| log.key(seq));
        let commits_at_ack = key
            .as_ref()
            .and_then(|k| read_ledger(&self.ledger).map(|l| l.get(k).copied().unwrap_or(0)));
        let fact = AckFact {
            ack,
            business_key: key,
            commits_at_ack,
        };
        self.evidence(|ev| {
            let (op, visibility_timeout) = match fact.ack.op {
                AckOp::Delete => ("delete", None),
                AckOp::ChangeVisibility { timeout_s } => ("change_visibility", Some(timeout_s)),
            };
            let row = AckRow {
                op,
                visibility_timeout,
                attempt_nonce: fact.ack.handle.map(|(_, n)| n),
                handle_digest: &fact.ack.handle_digest,
                business_key: fact.business_key.as_deref(),
                commits_at_ack: fact.commits_at_ack,
                at_ms: fact.ack.at_ms,
            };
            let result = ev.writer.write_row("ack", &row);
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
    }
}
