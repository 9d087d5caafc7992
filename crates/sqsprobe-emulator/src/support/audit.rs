//! What the emulator tells an audit (`sqsprobe audit`) about a consumer's acknowledgements, as
//! they happen and from the emulator's own knowledge: each delivery (which attempt holds which
//! handle, until when) and each delete or visibility change (which attempt's handle it
//! carries, if any). The observer is called synchronously, inside the operation and before the
//! answer is sent, so whatever it reads then (the consumer's ledger) is read before the
//! consumer can see the answer: ordering is exact, never a race of file polling.
//!
//! While an audit watches, the emulator also answers one path of its own, [`LEDGER_PATH`]: a
//! consumer that cannot write the audit's ledger file (in a container, on another host)
//! POSTs each business key it commits there, and the observer hears it before the POST is
//! answered, so it is ordered exactly as the file's lines are.

use std::fmt::Debug;

/// One delivery of a message: a receive (or a chaos copy) leased it under a new handle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The queue's store key (its ARN).
    pub queue: String,
    /// The MessageId SQS gave it.
    pub message_id: String,
    /// The message's store-wide sequence number: one message across its deliveries.
    pub seq: u64,
    /// The delivery's nonce: one attempt, and the handle that names it.
    pub nonce: u64,
    /// The body as delivered (the audit digests it before it writes anything).
    pub body: String,
    /// Its message attributes in the JSON shape of `MessageAttributes` (`{name: {DataType,
    /// StringValue | BinaryValue (base64)}}`); empty when it has none.
    pub attributes: serde_json::Map<String, serde_json::Value>,
    /// When it was delivered, in the emulator's epoch milliseconds.
    pub at_ms: u64,
    /// When its lease ends, on the same clock.
    pub lease_until_ms: u64,
}

/// What an acknowledgement asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckOp {
    /// DeleteMessage, or an entry of DeleteMessageBatch.
    Delete,
    /// A visibility change to this many seconds (a heartbeat, or a release at 0).
    ChangeVisibility {
        /// The new visibility timeout, in seconds from the call.
        timeout_s: i64,
    },
}

/// One acknowledgement (a delete or a visibility change, single or a batch entry) as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    /// The queue's store key (its ARN).
    pub queue: String,
    /// What it asks.
    pub op: AckOp,
    /// The (message seq, attempt nonce) its handle names, or `None` for a handle this emulator
    /// never issued (a MessageId, a made-up string).
    pub handle: Option<(u64, u64)>,
    /// The raw handle's SHA-256, so the audit's evidence can name it without holding it.
    pub handle_digest: String,
    /// When it arrived, in the emulator's epoch milliseconds.
    pub at_ms: u64,
}

/// How the emulator refused a request, protocol-neutral.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The HTTP status answered.
    pub status: u16,
    /// The legacy query code (`AWS.SimpleQueueService.NonExistentQueue`).
    pub code: &'static str,
    /// The JSON shape name without its namespace (`QueueDoesNotExist`).
    pub shape: String,
    /// Whether SQS blames the caller (a `Sender` fault) rather than itself.
    pub sender_fault: bool,
    /// The message as answered: it may echo a receipt handle or a body, so an observer that
    /// keeps it must mask them.
    pub message: String,
}

/// One request a client made, once answered: the operation, its input and its answer in the
/// JSON protocol's shapes (a query request is decoded to them too).
#[derive(Debug)]
pub struct Called<'a> {
    /// The operation's name (`ReceiveMessage`).
    pub operation: &'a str,
    /// Its input, in the JSON protocol's shape.
    pub params: &'a serde_json::Map<String, serde_json::Value>,
    /// Its answer in the JSON protocol's shape, or how it was refused.
    pub answer: Result<&'a serde_json::Value, Refusal>,
    /// `json` or `query`.
    pub protocol: &'static str,
    /// The request id the emulator answered with.
    pub request_id: &'a str,
    /// The SDK's attempt number from its `amz-sdk-request: attempt=N` header, when sent.
    pub sdk_attempt: Option<u32>,
    /// The access key id the request was signed with (the audit's own set-up signs with its
    /// own, so its calls are told from the consumer's).
    pub access_key: Option<&'a str>,
    /// When the request arrived (wall clock).
    pub started: std::time::SystemTime,
    /// How long the emulator took to answer it.
    pub latency: std::time::Duration,
}

/// The path of the audit's ledger on the emulator's own port: `POST /sqsprobe/ledger` with
/// one business key a line as the body.
pub const LEDGER_PATH: &str = "/sqsprobe/ledger";

/// Told of every delivery and acknowledgement while an audit runs. Implementations must not
/// call back into the emulator: `delivered` and `acknowledged` are called with its state
/// locked; `called` after the operation, before its answer is sent.
pub trait AuditObserver: Send + Sync + Debug {
    /// A receive (or a chaos copy) leased a message under a new handle.
    fn delivered(&self, delivery: Delivery);
    /// A delete or a visibility change, as received, inside the operation.
    fn acknowledged(&self, ack: Ack);
    /// Every request, answered or refused (throttles and access checks included).
    fn called(&self, _call: &Called<'_>) {}
    /// The body of a POST to [`LEDGER_PATH`]: one business key a line, each a commit, told
    /// before the POST is answered.
    fn ledger(&self, _lines: &str) {}
    /// Whether requests signed with `access_key` are the audit's own (its set-up), which the
    /// emulator's server-wide chaos (latency, throttling) spares: chaos is the consumer's
    /// experiment, never the audit's.
    fn spares(&self, _access_key: Option<&str>) -> bool {
        false
    }
}
