//! The audit's observer inside the emulator: it keeps every delivery and acknowledgement in
//! order, and at each acknowledgement reads the consumer's ledger — before the emulator
//! answers, so a commit the consumer wrote (and flushed) before its delete is always seen as
//! before it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::emulator::audit::{Ack, AuditObserver, Delivery};
use crate::evidence::business_key;

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
}

/// The observer: the log so far, and where the consumer's ledger is.
#[derive(Debug)]
pub struct Recorder {
    ledger: PathBuf,
    log: Mutex<Log>,
}

impl Recorder {
    pub fn new(ledger: PathBuf) -> Recorder {
        Recorder {
            ledger,
            log: Mutex::new(Log::default()),
        }
    }

    /// A copy of the log so far.
    pub fn log(&self) -> Log {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
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
    fn delivered(&self, delivery: Delivery) {
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .deliveries
            .push(delivery);
    }

    fn acknowledged(&self, ack: Ack) {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        let key = ack.handle.and_then(|(seq, _)| {
            log.deliveries
                .iter()
                .rev()
                .find(|d| d.seq == seq)
                .and_then(|d| business_key(&d.body))
        });
        let commits_at_ack = key
            .as_ref()
            .and_then(|k| read_ledger(&self.ledger).map(|l| l.get(k).copied().unwrap_or(0)));
        log.acks.push(AckFact {
            ack,
            business_key: key,
            commits_at_ack,
        });
    }
}
