//! What the emulator tells an audit (`sqsprobe audit`) about a consumer's acknowledgements, as
//! they happen and from the emulator's own knowledge: each delivery (which attempt holds which
//! handle, until when) and each delete or visibility change (which attempt's handle it
//! carries, if any). The observer is called synchronously, inside the operation and before the
//! answer is sent, so whatever it reads then (the consumer's ledger) is read before the
//! consumer can see the answer: ordering is exact, never a race of file polling.

use std::fmt::Debug;

/// One delivery of a message: a receive (or a chaos copy) leased it under a new handle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The queue's store key (its ARN).
    pub queue: String,
    pub message_id: String,
    /// The message's store-wide sequence number: one message across its deliveries.
    pub seq: u64,
    /// The delivery's nonce: one attempt, and the handle that names it.
    pub nonce: u64,
    pub body: String,
    /// When it was delivered and when its lease ends, in the emulator's epoch milliseconds.
    pub at_ms: u64,
    pub lease_until_ms: u64,
}

/// What an acknowledgement asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckOp {
    Delete,
    /// A visibility change to this many seconds (a heartbeat, or a release at 0).
    ChangeVisibility {
        timeout_s: i64,
    },
}

/// One acknowledgement (a delete or a visibility change, single or a batch entry) as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    pub queue: String,
    pub op: AckOp,
    /// The (message seq, attempt nonce) its handle names, or `None` for a handle this emulator
    /// never issued (a MessageId, a made-up string).
    pub handle: Option<(u64, u64)>,
    /// The raw handle's SHA-256, so the audit's evidence can name it without holding it.
    pub handle_digest: String,
    pub at_ms: u64,
}

/// Told of every delivery and acknowledgement while an audit runs. Implementations must not
/// call back into the emulator: they are called with its state locked.
pub trait AuditObserver: Send + Sync + Debug {
    fn delivered(&self, delivery: Delivery);
    fn acknowledged(&self, ack: Ack);
}
