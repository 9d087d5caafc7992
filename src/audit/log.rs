//! The audit's log, the judge's input (pure types): every delivery and acknowledgement in the
//! order the emulator heard them, with the effect channels at each, and what the audit knew at
//! the end. The recorder fills it as the consumer runs; [`super::history`] reads it back from
//! `evidence.jsonl`, and that is what [`super::judge`] judges.

use std::collections::BTreeMap;

use super::effects::{Commit, Effects, Handoff};
use super::nemesis::Act;
use sqsprobe_emulator::audit::{Ack, Delivery};

/// An acknowledgement, with what the ledger said of its message when it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AckFact {
    pub ack: Ack,
    /// The business key of the message its handle names, when the handle names one.
    pub business_key: Option<String>,
    /// How many times the ledger held that key at that moment (the most any one channel
    /// held: the file, the HTTP ledger, the forwards); `None` when no channel could show it
    /// yet (or there was no key to look for).
    pub commits_at_ack: Option<u32>,
    /// Whether the consumer had by then handed that key on in a message of its own to a
    /// source queue of the plan.
    pub handed_off: bool,
}

/// Everything the emulator told the audit, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Log {
    pub deliveries: Vec<Delivery>,
    pub acks: Vec<AckFact>,
    /// Each message's business key (by its store-wide seq), read from its body where the
    /// plan says it sits.
    pub keys: BTreeMap<u64, String>,
    /// What the channels besides the ledger file held, per key, so far.
    pub effects: Effects,
    /// Every commit on the HTTP ledger and every forward, in order.
    pub commits: Vec<Commit>,
    /// Every message the consumer sent to a source queue of the plan, in order.
    pub handoffs: Vec<Handoff>,
    /// Every MessageId heard so far (delivered, forwarded, handed off): a send answered with
    /// one of them was deduplicated.
    pub ids: std::collections::HashSet<String>,
    /// What the nemesis did, in order (empty without `--nemesis`).
    pub nemesis: Vec<Act>,
    /// The queues the consumer's requests named, and what it did on each (read back from its
    /// `call` rows).
    pub queues: super::queues::QueueUses,
}

impl Log {
    /// The business key of the message `seq`.
    pub(crate) fn key(&self, seq: u64) -> Option<String> {
        self.keys.get(&seq).cloned()
    }
}

/// What the audit knows at the end, besides the log.
#[derive(Debug, Clone, Default)]
pub(crate) struct End {
    /// The MessageIds the audit sent, in send order.
    pub sent: Vec<String>,
    /// The MessageIds the queues still store (their dead-letter queues included).
    pub remaining: Vec<String>,
    /// Those of them a dead-letter queue holds.
    pub dead_lettered: Vec<String>,
    /// The ledger, per business key, or `None` when the consumer never wrote one.
    pub ledger: Option<BTreeMap<String, u32>>,
    /// The queues the audit made (sources, dead-letter and output queues), by name.
    pub queues: Vec<String>,
}
