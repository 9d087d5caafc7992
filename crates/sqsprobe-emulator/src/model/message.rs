//! Messages: stored form, message attributes and their validation.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::num::NonZeroU64;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::model::number::{self, NumberFault};
use crate::support::errors::{SqsError, SqsResult};
use crate::support::ids::MessageIds;
use crate::support::input::Node;
use crate::support::md5::{self, Transport};

/// Most message attributes one message may carry (API_SendMessage).
pub(crate) const MAX_MESSAGE_ATTRIBUTES: usize = 10;

/// One typed message attribute value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MessageAttributeValue {
    /// `String`, `Number`, `Binary`, optionally with a `.custom` suffix.
    pub data_type: String,
    pub string_value: Option<String>,
    pub binary_value: Option<Vec<u8>>,
}

impl MessageAttributeValue {
    /// Whether the base type is Binary (transport type 2 in the MD5 encoding).
    pub fn is_binary(&self) -> bool {
        base_type(&self.data_type) == "Binary"
    }

    /// Bytes counted against the message size: name + DataType + value (AWS-recorded, S1a).
    pub fn size(&self, name: &str) -> usize {
        name.len()
            + self.data_type.len()
            + self.string_value.as_ref().map_or(0, String::len)
            + self.binary_value.as_ref().map_or(0, Vec::len)
    }

    /// JSON shape of `MessageAttributeValue`.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        if let Some(s) = &self.string_value {
            map.insert("StringValue".into(), Value::String(s.clone()));
        }
        if let Some(b) = &self.binary_value {
            map.insert("BinaryValue".into(), Value::String(BASE64.encode(b)));
        }
        map.insert("DataType".into(), Value::String(self.data_type.clone()));
        Value::Object(map)
    }
}

/// Hex `MD5OfMessageAttributes` of a set of attributes; `None` for an empty set.
pub(crate) fn md5_of_attributes(
    attributes: &BTreeMap<String, MessageAttributeValue>,
) -> Option<String> {
    let encoded = MessageAttributes::encoded(attributes)?;
    Some(crate::support::hex::digest_string(&md5::digest(&encoded)))
}

/// A message's attributes (never empty), in byte order of their names, with their digest: one
/// copy, shared by the stored message and by each receive that answers with all of them.
///
/// A receive asking for attributes answered with a copy of each (three strings apiece) and a
/// digest computed again, and one asking for none still copied them all with the message:
/// messages with attributes were received at a fraction of the rate of plain ones
/// (docs/performance.md). Shared, a receive that answers with all of them takes a reference.
#[derive(Debug)]
pub(crate) struct MessageAttributes {
    map: BTreeMap<String, MessageAttributeValue>,
    /// `MD5OfMessageAttributes`, lower-case hex.
    md5: [u8; 32],
}

impl MessageAttributes {
    /// `map` with its digest; `None` when it is empty (AWS answers no digest then).
    pub fn of(map: BTreeMap<String, MessageAttributeValue>) -> Option<Arc<Self>> {
        let digest = md5::digest(&Self::encoded(&map)?);
        Some(Self::with_digest(map, digest))
    }

    /// `map` (not empty) with `digest`, the MD5 of its [`MessageAttributes::encoded`] form,
    /// taken by the caller (a batch digests its entries' together).
    pub fn with_digest(
        map: BTreeMap<String, MessageAttributeValue>,
        digest: [u8; 16],
    ) -> Arc<Self> {
        Arc::new(Self {
            map,
            md5: crate::support::hex::digest(&digest),
        })
    }

    /// What `MD5OfMessageAttributes` is the MD5 of, for `map`; `None` when it is empty.
    pub fn encoded(map: &BTreeMap<String, MessageAttributeValue>) -> Option<Vec<u8>> {
        // BTreeMap iterates in byte order of the names, which is the order AWS sorts by.
        md5::encode_attributes(map.iter().map(|(name, value)| {
            let (transport, bytes) = if value.is_binary() {
                let bytes = value.binary_value.as_deref().unwrap_or_default();
                (Transport::Binary, bytes)
            } else {
                let text = value.string_value.as_deref().unwrap_or_default();
                (Transport::String, text.as_bytes())
            };
            (name.as_str(), value.data_type.as_str(), transport, bytes)
        }))
    }

    /// The attributes, by name.
    pub fn map(&self) -> &BTreeMap<String, MessageAttributeValue> {
        &self.map
    }

    /// `MD5OfMessageAttributes` in lower-case hex.
    pub fn md5(&self) -> &str {
        // Hex digits only: the conversion cannot fail.
        std::str::from_utf8(&self.md5).unwrap_or_default()
    }

    /// The attributes a receive's `MessageAttributeNames` select: these same ones when it
    /// selects all of them, a copy of those it selects otherwise, `None` when it selects none.
    pub fn selected(self: &Arc<Self>, filters: &[String]) -> Option<Arc<Self>> {
        let chosen = |name: &String| attribute_selected(filters, name);
        if self.map.keys().all(chosen) {
            return Some(Arc::clone(self));
        }
        Self::of(
            self.map
                .iter()
                .filter(|&(name, _)| chosen(name))
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect(),
        )
    }
}

fn base_type(data_type: &str) -> &str {
    data_type.split('.').next().unwrap_or(data_type)
}

/// A stored message's name: its slot in its queue's slab and its store-wide seq.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Id {
    pub slot: u32,
    pub seq: u64,
}

/// Where a message stands in its queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MessageState {
    /// Visible: can be received. `stamp` is when it last became visible, as a queue-wide
    /// counter: FIFO groups are served in the order their first deliverable message became
    /// available.
    Ready { stamp: u64 },
    /// Not yet visible because of a queue or per-message delay.
    Delayed { until: u64 },
    /// Received and leased until `until`; `nonce` names the current receipt. The receive was
    /// `held_ms` before `until` ([`MessageState::received_at`]): a lease and its extensions
    /// last at most 12 hours in all, so 32 bits hold it, and the state fits in 24 bytes.
    InFlight {
        until: u64,
        nonce: u64,
        held_ms: u32,
    },
}

impl MessageState {
    /// Whether the message is visible.
    pub fn is_ready(self) -> bool {
        matches!(self, MessageState::Ready { .. })
    }

    /// A lease until `until` under `nonce`, of a receive at `received_at`.
    pub fn in_flight(until: u64, nonce: u64, received_at: u64) -> Self {
        let held = until.saturating_sub(received_at);
        MessageState::InFlight {
            until,
            nonce,
            held_ms: u32::try_from(held).unwrap_or(u32::MAX),
        }
    }

    /// When the receive that holds an in-flight message happened (the 12-hour cap on its
    /// visibility counts from there); `None` when the message is not in flight.
    pub fn received_at(self) -> Option<u64> {
        match self {
            MessageState::InFlight { until, held_ms, .. } => {
                Some(until.saturating_sub(u64::from(held_ms)))
            }
            _ => None,
        }
    }
}

/// What only some messages carry, boxed so that a plain message pays one pointer for it:
/// message attributes, the trace header, and where a dead-lettered message came from.
#[derive(Debug, Default)]
pub(crate) struct Extra {
    pub attributes: Option<Arc<MessageAttributes>>,
    /// `AWSTraceHeader` system attribute.
    pub trace_header: Option<Box<str>>,
    pub dead_letter_source_arn: Option<Arc<str>>,
    /// When retention counts from, if not from the send: a move task's or a FIFO dead-letter
    /// queue's arrival ([`Message::enqueued_ms`]).
    pub enqueued_ms: Option<u64>,
    /// The seq the message was sent with, once a move gave it another ([`Message::origin`];
    /// set by [`Message::renumber`]).
    pub origin: Option<u64>,
    /// The first receive's time, when it does not fit [`Message`]'s 32 bits
    /// ([`Message::first_receive_ms`]; set through [`Message::received_first_at`]).
    pub first_receive_ms: Option<u64>,
    /// The SequenceNumber, when it does not fit [`Message`]'s 32 bits
    /// ([`Message::sequence_number`]; set through [`Message::set_sequence_number`]).
    pub sequence_number: Option<SequenceNumber>,
}

impl Extra {
    fn is_empty(&self) -> bool {
        self.attributes.is_none()
            && self.trace_header.is_none()
            && self.dead_letter_source_arn.is_none()
            && self.enqueued_ms.is_none()
            && self.origin.is_none()
            && self.first_receive_ms.is_none()
            && self.sequence_number.is_none()
    }
}

/// The MessageDeduplicationId a FIFO message is sent with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DedupId<'a> {
    /// Standard queues.
    None,
    /// Given by the sender (1–128 ASCII characters).
    Explicit(&'a str),
    /// ContentBasedDeduplication: the hex SHA-256 of the body, recomputed when asked for.
    ContentBased,
}

/// How `Message::dedup` records the deduplication id: 0 none, 1–128 the length of an explicit
/// id stored after the body, this value for a content-based one.
const DEDUP_CONTENT_BASED: u8 = u8::MAX;

/// A FIFO SequenceNumber, stored as its offset above 2^64: AWS's are 128-bit, 20-digit
/// decimals (facts F7), and every value the emulator hands out lies in [2^64, 2^65).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct SequenceNumber(NonZeroU64);

impl SequenceNumber {
    /// The number `2^64 + offset`; `None` for an offset of 0.
    pub fn from_offset(offset: u64) -> Option<Self> {
        NonZeroU64::new(offset).map(Self)
    }

    /// The offset above 2^64.
    pub fn offset(self) -> u64 {
        self.0.get()
    }

    /// The offset a send at `now` takes from the clock (`Queue::next_sequence_number`), when
    /// no number handed out earlier is later.
    pub fn clock_base(now: u64) -> u64 {
        now.saturating_mul(1 << 20)
    }

    /// The number itself.
    pub fn value(self) -> u128 {
        (1u128 << 64) + u128::from(self.0.get())
    }
}

impl std::fmt::Display for SequenceNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.value())
    }
}

/// [`Message`]'s 32-bit fields for a time or number: nothing.
const NONE: u32 = 0;
/// [`Message`]'s 32-bit fields for a time or number: it did not fit, and is in the box.
const IN_THE_BOX: u32 = u32::MAX;

/// The group index of a message without a MessageGroupId.
pub(crate) const NO_GROUP: u32 = u32::MAX;

/// A stored message, laid out to cost little beyond its body (docs/emulator.md, "Memory"):
/// ids and digests as fixed-size numbers rendered on the way out, the sender as an index into
/// its queue's table of senders, the group as an index into its queue's table of groups, an
/// explicit deduplication id in the body's allocation, and everything rarer behind one box.
/// 104 bytes: the MessageId is derived from [`Message::origin`] (`support::ids::MessageIds`),
/// not stored, and a message that never moved has its seq as its origin, so only a moved one
/// stores it (in the box, which a move fills anyway); the first receive's time and the
/// SequenceNumber are 32 bits relative to the send, with the box for what does not fit.
/// Not `Clone`: a receive copies only what its answer writes (`ops/receive.rs`).
#[derive(Debug)]
pub(crate) struct Message {
    /// Store-wide ordering key (also the identity inside receipt handles); a new one in each
    /// queue the message moves to ([`Message::renumber`]).
    pub seq: u64,
    /// The body, followed by an explicit deduplication id (`dedup` bytes of it).
    text: Box<str>,
    pub md5_of_body: [u8; 16],
    /// Never changes: `first_receive` and `sequence` count from it.
    sent_ms: u64,
    pub state: MessageState,
    pub extra: Option<Box<Extra>>,
    /// [`NONE`]: no receive yet; [`IN_THE_BOX`]: see `Extra`; else 1 + the first receive's
    /// milliseconds after the send (retention lasts at most 14 days, 1.2·10^9 ms).
    first_receive: u32,
    /// FIFO only. [`NONE`]: none; [`IN_THE_BOX`]: see `Extra`; else 1 + the SequenceNumber's
    /// offset above the send's clock value ([`SequenceNumber::clock_base`]) in steps of 256:
    /// the queue hands out the clock value or 256 past the last number, whichever is later.
    sequence: u32,
    pub receive_count: u32,
    /// Index into the sender table of the queue that holds the message (`Queue::sender_id`).
    pub sender: u32,
    /// Index into the group table of the queue that holds the message ([`NO_GROUP`]: none).
    /// Meaningless outside that queue: `Queue::remove` hands the group's name out with it.
    pub group: u32,
    /// See [`DEDUP_CONTENT_BASED`].
    dedup: u8,
    /// The 24-bit tag of the deduplication key this message is the record of in its queue's
    /// deduplication index (`model/dedup.rs`), little-endian; 0: none (standard queues, and
    /// messages that arrived by a move). Fills the struct's padding.
    dedup_tag: [u8; 3],
}

impl Message {
    /// A message with nothing optional, its body digested here (the tests' way; a send has
    /// the digest already: [`Message::with_digest`]).
    #[cfg(test)]
    pub fn new(seq: u64, body: &str, dedup_id: DedupId<'_>, now: u64, sender: u32) -> Self {
        Self::with_digest(
            seq,
            (body, md5::digest(body.as_bytes())),
            dedup_id,
            now,
            sender,
        )
    }

    /// A message with nothing optional, of `body` whose MD5 is `md5_of_body` (a batch
    /// digests its bodies together); `extra` is filled in by [`Message::set_extra`].
    pub fn with_digest(
        seq: u64,
        (body, md5_of_body): (&str, [u8; 16]),
        dedup_id: DedupId<'_>,
        now: u64,
        sender: u32,
    ) -> Self {
        let (text, dedup) = match dedup_id {
            DedupId::None => (Box::from(body), 0),
            DedupId::ContentBased => (Box::from(body), DEDUP_CONTENT_BASED),
            DedupId::Explicit(id) => {
                // Ids are 1–128 characters (checked on send); a longer one is cut at a
                // character boundary rather than mistaken for the content-based marker.
                let mut len = id.len().min(128);
                while !id.is_char_boundary(len) {
                    len -= 1;
                }
                let mut text = String::with_capacity(body.len() + len);
                text.push_str(body);
                text.push_str(&id[..len]);
                (text.into_boxed_str(), len as u8)
            }
        };
        Self {
            seq,
            md5_of_body,
            text,
            sent_ms: now,
            state: MessageState::Ready { stamp: 0 },
            extra: None,
            first_receive: NONE,
            sequence: NONE,
            receive_count: 0,
            sender,
            group: NO_GROUP,
            dedup,
            dedup_tag: [0; 3],
        }
    }

    /// SentTimestamp: when the message was sent (it keeps it wherever it moves).
    pub fn sent_ms(&self) -> u64 {
        self.sent_ms
    }

    /// ApproximateFirstReceiveTimestamp; `None` before the first receive.
    pub fn first_receive_ms(&self) -> Option<u64> {
        match self.first_receive {
            NONE => None,
            IN_THE_BOX => self.extra.as_ref().and_then(|e| e.first_receive_ms),
            after => Some(self.sent_ms + u64::from(after - 1)),
        }
    }

    /// Records a receive at `now` as the first, unless there was one.
    pub fn received_first_at(&mut self, now: u64) {
        if self.first_receive != NONE {
            return;
        }
        match now
            .checked_sub(self.sent_ms)
            .and_then(|after| u32::try_from(after + 1).ok())
            .filter(|&n| n < IN_THE_BOX)
        {
            Some(n) => self.first_receive = n,
            None => {
                // A clock set back, or a message older than retention allows: rare.
                self.extra_mut().first_receive_ms = Some(now);
                self.first_receive = IN_THE_BOX;
            }
        }
    }

    /// Forgets the first receive (a move task's message starts over in its new queue).
    pub fn clear_first_receive(&mut self) {
        if self.first_receive == IN_THE_BOX
            && let Some(extra) = self.extra.as_mut()
        {
            extra.first_receive_ms = None;
        }
        self.first_receive = NONE;
    }

    /// The FIFO SequenceNumber; `None` on standard queues.
    pub fn sequence_number(&self) -> Option<SequenceNumber> {
        match self.sequence {
            NONE => None,
            IN_THE_BOX => self.extra.as_ref().and_then(|e| e.sequence_number),
            steps => SequenceNumber::from_offset(
                SequenceNumber::clock_base(self.sent_ms) + (u64::from(steps - 1) << 8),
            ),
        }
    }

    /// Sets [`Message::sequence_number`].
    pub fn set_sequence_number(&mut self, number: Option<SequenceNumber>) {
        if self.sequence == IN_THE_BOX
            && let Some(extra) = self.extra.as_mut()
        {
            extra.sequence_number = None;
        }
        let Some(number) = number else {
            self.sequence = NONE;
            return;
        };
        let above = number
            .offset()
            .checked_sub(SequenceNumber::clock_base(self.sent_ms));
        match above
            .filter(|a| a & 0xff == 0)
            .and_then(|a| u32::try_from((a >> 8) + 1).ok())
            .filter(|&n| n < IN_THE_BOX)
        {
            Some(steps) => self.sequence = steps,
            None => {
                self.extra_mut().sequence_number = Some(number);
                self.sequence = IN_THE_BOX;
            }
        }
    }

    /// The seq the message was sent with, which it keeps wherever it moves: its MessageId is
    /// derived from it.
    pub fn origin(&self) -> u64 {
        self.extra
            .as_ref()
            .and_then(|e| e.origin)
            .unwrap_or(self.seq)
    }

    /// Gives the message the seq `seq` of the queue it moves to, keeping its origin.
    pub fn renumber(&mut self, seq: u64) {
        let origin = self.origin();
        self.seq = seq;
        if origin != seq {
            self.extra_mut().origin = Some(origin);
        } else if let Some(extra) = self.extra.as_mut() {
            extra.origin = None;
        }
    }

    /// The tag of the deduplication key this message stands for in its queue's index (0: none).
    pub fn dedup_tag(&self) -> u32 {
        let [a, b, c] = self.dedup_tag;
        u32::from_le_bytes([a, b, c, 0])
    }

    /// Sets [`Message::dedup_tag`]; a tag is 24 bits (`DedupKey::tag`).
    pub fn set_dedup_tag(&mut self, tag: u32) {
        let [a, b, c, _] = tag.to_le_bytes();
        self.dedup_tag = [a, b, c];
    }

    /// Stores the optional parts, boxing them only when there are any. What the message
    /// itself keeps in the box (its origin, and a time or number too large for its own
    /// fields) stays.
    pub fn set_extra(&mut self, mut extra: Extra) {
        if let Some(old) = self.extra.take() {
            extra.origin = old.origin;
            extra.first_receive_ms = old.first_receive_ms;
            extra.sequence_number = old.sequence_number;
        }
        self.extra = (!extra.is_empty()).then(|| Box::new(extra));
    }

    /// The optional parts for editing (allocated on first use).
    pub fn extra_mut(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Box::default)
    }

    /// When retention counts from: the send, unless the message arrived later by a move task
    /// or in a FIFO dead-letter queue (a standard one keeps the send's: sqs-dead-letter-queues,
    /// "retention period"). Set only while the message is out of its queue.
    pub fn enqueued_ms(&self) -> u64 {
        self.extra
            .as_ref()
            .and_then(|e| e.enqueued_ms)
            .unwrap_or(self.sent_ms)
    }

    /// Restarts retention at `now` (see [`Message::enqueued_ms`]); rare, so it lives in the box.
    pub fn set_enqueued_ms(&mut self, now: u64) {
        if now == self.sent_ms {
            if let Some(extra) = self.extra.as_mut() {
                extra.enqueued_ms = None;
            }
        } else {
            self.extra_mut().enqueued_ms = Some(now);
        }
    }

    /// The body.
    pub fn body(&self) -> &str {
        let explicit = match self.dedup {
            DEDUP_CONTENT_BASED => 0,
            n => usize::from(n),
        };
        &self.text[..self.text.len() - explicit]
    }

    /// The MessageDeduplicationId, if the message was sent to a FIFO queue.
    pub fn dedup_id(&self) -> Option<Cow<'_, str>> {
        match self.dedup {
            0 => None,
            DEDUP_CONTENT_BASED => Some(Cow::Owned(content_dedup_id(self.body()))),
            n => Some(Cow::Borrowed(
                &self.text[self.text.len() - usize::from(n)..],
            )),
        }
    }

    /// Whether the MessageDeduplicationId is content-based ([`Message::dedup_id`] hashes the
    /// body for it).
    pub fn dedup_id_is_content_based(&self) -> bool {
        self.dedup == DEDUP_CONTENT_BASED
    }

    /// The MessageId as AWS writes it (hyphenated UUID), by the emulator's `ids`.
    pub fn id_string(&self, ids: &MessageIds) -> String {
        crate::support::ids::hyphenated(ids.of(self.origin()))
    }

    /// `MD5OfBody` in hex (the answers write it from the digest; the tests' oracle reads it).
    #[cfg(test)]
    pub fn md5_hex(&self) -> String {
        crate::support::hex::digest_string(&self.md5_of_body)
    }

    /// The message attributes (empty when none).
    pub fn attributes(&self) -> &BTreeMap<String, MessageAttributeValue> {
        static EMPTY: BTreeMap<String, MessageAttributeValue> = BTreeMap::new();
        self.shared_attributes().map_or(&EMPTY, |a| a.map())
    }

    /// The message attributes with their digest, as the message holds them; `None` when none.
    pub fn shared_attributes(&self) -> Option<&Arc<MessageAttributes>> {
        self.extra.as_ref().and_then(|e| e.attributes.as_ref())
    }

    /// Bytes counted against the message size and the store's byte cap: body plus each
    /// attribute's name, type and value (AWS-recorded, S1a).
    pub fn size(&self) -> usize {
        self.body().len()
            + self
                .attributes()
                .iter()
                .map(|(name, value)| value.size(name))
                .sum::<usize>()
    }
}

/// The deduplication id ContentBasedDeduplication gives a body: its SHA-256 in hex
/// (API_SendMessage).
pub(crate) fn content_dedup_id(body: &str) -> String {
    hex::encode(Sha256::digest(body.as_bytes()))
}

/// Validates body characters against the XML 1.0 set SQS allows (API_SendMessage).
pub(crate) fn valid_body_chars(body: &str) -> bool {
    body.chars().all(|c| {
        matches!(c, '\u{9}' | '\u{A}' | '\u{D}' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
    })
}

fn validate_attribute_name(name: &str) -> SqsResult<()> {
    if name.is_empty() {
        return Err(SqsError::invalid_parameter_value(
            "The request must contain non-empty message attribute name.",
        ));
    }
    if name.len() > 256 {
        return Err(SqsError::invalid_parameter_value(
            "Message (user) attribute names must be shorter than 256 Bytes.",
        ));
    }
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("aws.")
        || lower.starts_with("amazon.")
        || name.starts_with('.')
        || name.ends_with('.')
    {
        return Err(SqsError::invalid_parameter_value(
            "You can't use message attribute names beginning with 'AWS.' or 'Amazon.'. These strings are reserved for internal use. Additionally, they cannot start or end with '.'.",
        ));
    }
    if name.contains("..") {
        return Err(SqsError::invalid_parameter_value(format!(
            "Message (user) attribute name '{name}' can not contain successive '.' characters."
        )));
    }
    // Non-ASCII letters are accepted by AWS (TEST-PY `attr.1øßä`); ASCII punctuation is not.
    if !name
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err(SqsError::invalid_parameter_value(format!(
            "Message (user) attribute name '{name}' is invalid. The attribute name can contain A-Z, a-z, 0-9, underscore (_), hyphen (-), and period (.) characters."
        )));
    }
    Ok(())
}

/// Parses and validates the `MessageAttributes` map of a send request.
pub(crate) fn parse_message_attributes(
    value: Option<Node<'_>>,
) -> SqsResult<BTreeMap<String, MessageAttributeValue>> {
    let Some(value) = value else {
        return Ok(BTreeMap::new());
    };
    let Some(map) = value.members() else {
        return Err(SqsError::invalid_parameter_value(
            "MessageAttributes must be a map.",
        ));
    };
    if map.len() > MAX_MESSAGE_ATTRIBUTES {
        return Err(SqsError::invalid_parameter_value(format!(
            "Number of message attributes [{}] exceeds the allowed maximum [{MAX_MESSAGE_ATTRIBUTES}].",
            map.len()
        )));
    }
    let mut out = BTreeMap::new();
    for (name, raw) in map {
        validate_attribute_name(name)?;
        out.insert(name.to_owned(), parse_attribute_value(name, raw, "user")?);
    }
    Ok(out)
}

/// Parses one attribute value; `kind` is `user` or `system` for messages.
pub(crate) fn parse_attribute_value(
    name: &str,
    raw: Node<'_>,
    kind: &str,
) -> SqsResult<MessageAttributeValue> {
    let field = |key: &str| -> SqsResult<Option<String>> {
        match raw.get(key) {
            None => Ok(None),
            Some(value) if value.is_null() => Ok(None),
            Some(value) => match value.as_str() {
                Some(s) => Ok(Some(s.to_owned())),
                None => Err(SqsError::invalid_parameter_value(format!(
                    "Message ({kind}) attribute '{name}' has an invalid {key}."
                ))),
            },
        }
    };
    let data_type = field("DataType")?.unwrap_or_default();
    if data_type.is_empty() {
        return Err(SqsError::invalid_parameter_value(format!(
            "The message attribute '{name}' must contain non-empty message attribute type."
        )));
    }
    let base = base_type(&data_type);
    if !matches!(base, "String" | "Number" | "Binary")
        || data_type.len() > 256
        || data_type.ends_with('.')
    {
        return Err(SqsError::invalid_parameter_value(format!(
            "The type of message ({kind}) attribute '{name}' is invalid. You must use only the following supported type prefixes: Binary, Number, String."
        )));
    }
    let string_value = field("StringValue")?;
    let binary_value = match field("BinaryValue")? {
        Some(encoded) => Some(BASE64.decode(encoded.as_bytes()).map_err(|_| {
            SqsError::invalid_parameter_value(format!(
                "Message ({kind}) attribute '{name}' has an invalid binary value."
            ))
        })?),
        None => None,
    };
    let empty = |t: &str| {
        SqsError::invalid_parameter_value(format!(
            "Message ({kind}) attribute '{name}' must contain a non-empty value of type '{t}'."
        ))
    };
    if base == "Binary" {
        if binary_value.as_ref().is_none_or(Vec::is_empty) {
            return Err(empty("Binary"));
        }
        Ok(MessageAttributeValue {
            data_type,
            string_value: None,
            binary_value,
        })
    } else {
        let Some(s) = string_value.filter(|s| !s.is_empty()) else {
            return Err(empty(base));
        };
        if !valid_body_chars(&s) {
            return Err(SqsError::invalid_parameter_value(format!(
                "Message ({kind}) attribute '{name}' contains invalid characters."
            )));
        }
        if base == "Number" {
            check_number(name, &s, kind)?;
        }
        Ok(MessageAttributeValue {
            data_type,
            string_value: Some(s),
            binary_value: None,
        })
    }
}

/// A Number attribute's value as SQS documents it (`model/number.rs`). The error for a value
/// that is not a numeral is the text reported from AWS; AWS's text for one out of range or too
/// precise is not recorded (`docs/aws-facts.md`, S13), so it says which bound was passed.
fn check_number(name: &str, value: &str, kind: &str) -> SqsResult<()> {
    let reason = match number::check(value) {
        Ok(()) => return Ok(()),
        Err(NumberFault::NotANumber) => {
            return Err(SqsError::invalid_parameter_value(format!(
                "Can't cast the value of message ({kind}) attribute '{name}' to a number."
            )));
        }
        Err(NumberFault::TooPrecise) => "it has more than 38 digits of precision",
        Err(NumberFault::OutOfRange) => "it is not between 10^-128 and 10^+126",
    };
    Err(SqsError::invalid_parameter_value(format!(
        "The value of message ({kind}) attribute '{name}' is not a valid number: {reason}."
    )))
}

/// Whether an attribute name is selected by a `MessageAttributeNames` filter.
///
/// `All`, `.*` and `*` select everything; `prefix.*` selects by prefix (AWS-recorded P8).
pub(crate) fn attribute_selected(filters: &[String], name: &str) -> bool {
    filters.iter().any(|f| {
        f == "All"
            || f == ".*"
            || f == "*"
            || f == name
            || f.strip_suffix(".*")
                .is_some_and(|prefix| name.starts_with(prefix) && !prefix.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_receive_selecting_every_attribute_shares_them_and_a_subset_gets_its_own_digest() {
        let value = |v: &str| MessageAttributeValue {
            data_type: "String".into(),
            string_value: Some(v.into()),
            binary_value: None,
        };
        let map: BTreeMap<String, MessageAttributeValue> =
            [("General", "Kenobi"), ("Hello", "There"), ("Help.Me", "Me")]
                .into_iter()
                .map(|(name, v)| (name.to_owned(), value(v)))
                .collect();
        let all = MessageAttributes::of(map.clone()).unwrap();
        // Vectors recorded against AWS (SNAP-2025, docs/aws-facts.md A3).
        assert_eq!(all.md5(), "4c360f3fdafd970e05fae2f149d997f5");
        assert_eq!(all.map(), &map);
        let filters = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
        for every in [&["All"][..], &[".*"], &["General", "Hel.*"]] {
            let chosen = all.selected(&filters(every)).unwrap();
            assert!(Arc::ptr_eq(&chosen, &all), "{every:?} selects every one");
        }
        let hello = all.selected(&filters(&["Hello"])).unwrap();
        assert!(!Arc::ptr_eq(&hello, &all));
        assert_eq!(hello.map().keys().collect::<Vec<_>>(), ["Hello"]);
        assert_eq!(hello.md5(), "a311262e065454b75da111d535b8dacd");
        assert!(all.selected(&filters(&["nomatch"])).is_none());
        assert!(MessageAttributes::of(BTreeMap::new()).is_none());
    }

    // Vector recorded against AWS (SNAP-2025, docs/aws-facts.md A3): Binary uses transport 2.
    #[test]
    fn binary_attribute_md5_matches_aws_recording() {
        let value = MessageAttributeValue {
            data_type: "Binary".into(),
            string_value: None,
            binary_value: Some(
                b"traceparent\x1e00-774062d6c37081a5a0b9b5b88e30627c-2d2482211f6489da-01".to_vec(),
            ),
        };
        let set = BTreeMap::from([("attr1".to_owned(), value)]);
        assert_eq!(
            md5_of_attributes(&set).unwrap(),
            "8cbe4db156db8a94db8b801b7addb984"
        );
        assert_eq!(md5_of_attributes(&BTreeMap::new()), None);
    }

    #[test]
    fn body_characters() {
        assert!(valid_body_chars("hello\tworld\n"));
        assert!(!valid_body_chars("a\u{1}b"));
        assert!(!valid_body_chars("\u{FFFF}"));
    }

    #[test]
    fn attribute_validation() {
        let ok = json!({"a.b": {"DataType": "String", "StringValue": "x"}});
        assert!(parse_message_attributes(Some(Node::Value(&ok))).is_ok());
        let empty = json!({"ErrorDetails": {"DataType": "String", "StringValue": ""}});
        let err = parse_message_attributes(Some(Node::Value(&empty))).unwrap_err();
        assert_eq!(
            err.message,
            "Message (user) attribute 'ErrorDetails' must contain a non-empty value of type 'String'."
        );
        for bad in ["AWS.x", ".x", "x.", "a!b", "a..b"] {
            let v = json!({bad: {"DataType": "String", "StringValue": "x"}});
            assert!(
                parse_message_attributes(Some(Node::Value(&v))).is_err(),
                "{bad}"
            );
        }
        let bad_type = json!({"a": {"DataType": "Invalid", "StringValue": "x"}});
        assert!(parse_message_attributes(Some(Node::Value(&bad_type))).is_err());
    }

    #[test]
    fn number_attributes_hold_what_sqs_documents() {
        let number = |v: &str| json!({"n": {"DataType": "Number", "StringValue": v}});
        for ok in [
            "0",
            "-12.5",
            "1e-128",
            "1e126",
            "12345678901234567890123456789012345678",
        ] {
            assert!(
                parse_message_attributes(Some(Node::Value(&number(ok)))).is_ok(),
                "{ok}"
            );
        }
        for bad in ["NaN", "Infinity", " 1", "abc"] {
            let err = parse_message_attributes(Some(Node::Value(&number(bad)))).unwrap_err();
            assert_eq!(err.code(), "InvalidParameterValue", "{bad}");
            assert_eq!(
                err.message,
                "Can't cast the value of message (user) attribute 'n' to a number."
            );
        }
        for (bad, bound) in [
            ("1e999", "10^-128 and 10^+126"),
            ("1e-129", "10^-128 and 10^+126"),
            ("123456789012345678901234567890123456789", "38 digits"),
        ] {
            let err = parse_message_attributes(Some(Node::Value(&number(bad)))).unwrap_err();
            assert_eq!(err.code(), "InvalidParameterValue", "{bad}");
            assert!(err.message.contains(bound), "{bad}: {}", err.message);
        }
        // A custom type of Number is a Number.
        let custom = json!({"n": {"DataType": "Number.float", "StringValue": "NaN"}});
        assert!(parse_message_attributes(Some(Node::Value(&custom))).is_err());
    }

    #[test]
    fn a_message_stays_within_its_documented_size() {
        // docs/emulator.md ("Memory") does its arithmetic with this figure.
        assert_eq!(std::mem::size_of::<Message>(), 104);
        assert_eq!(std::mem::size_of::<Option<Message>>(), 104);
        assert_eq!(std::mem::size_of::<MessageState>(), 24);
    }

    #[test]
    fn a_lease_keeps_its_receive_time_and_a_move_its_enqueue_time() {
        let state = MessageState::in_flight(50_000, 7, 8_000);
        assert_eq!(state.received_at(), Some(8_000));
        assert_eq!(MessageState::Ready { stamp: 1 }.received_at(), None);
        let mut message = Message::new(1, "b", DedupId::None, 1_000, 0);
        assert_eq!(message.enqueued_ms(), 1_000);
        assert!(message.extra.is_none(), "a plain message pays no box");
        message.set_enqueued_ms(9_000);
        assert_eq!(message.enqueued_ms(), 9_000);
        assert_eq!(message.sent_ms, 1_000);
        message.set_enqueued_ms(1_000);
        assert_eq!(message.enqueued_ms(), 1_000);
    }

    #[test]
    fn times_and_numbers_are_32_bits_from_the_send_and_the_rest_goes_to_the_box() {
        let sent = 1_764_000_000_000;
        let mut message = Message::new(1, "b", DedupId::None, sent, 0);
        assert_eq!(message.first_receive_ms(), None);
        message.received_first_at(sent + 5);
        message.received_first_at(sent + 9);
        assert_eq!(
            message.first_receive_ms(),
            Some(sent + 5),
            "the first receive stays"
        );
        let base = SequenceNumber::clock_base(sent);
        let number = SequenceNumber::from_offset(base + 3 * 256);
        message.set_sequence_number(number);
        assert_eq!(message.sequence_number(), number);
        assert!(message.extra.is_none(), "both fit the message's own fields");
        // 14 days after the send (retention's longest) still fits.
        let mut late = Message::new(1, "b", DedupId::None, sent, 0);
        late.received_first_at(sent + 14 * 86_400_000);
        assert_eq!(late.first_receive_ms(), Some(sent + 14 * 86_400_000));
        assert!(late.extra.is_none());
        // A receive before the send (a clock set back), a number below the send's clock value
        // or off its 256 steps: kept exactly, in the box, and the box survives `set_extra`.
        let mut odd = Message::new(1, "b", DedupId::None, sent, 0);
        odd.received_first_at(sent - 1);
        let below = SequenceNumber::from_offset(base - 256);
        odd.set_sequence_number(below);
        odd.set_extra(Extra::default());
        assert_eq!(odd.first_receive_ms(), Some(sent - 1));
        assert_eq!(odd.sequence_number(), below);
        let off_step = SequenceNumber::from_offset(base + 7);
        odd.set_sequence_number(off_step);
        assert_eq!(odd.sequence_number(), off_step);
        odd.clear_first_receive();
        odd.set_sequence_number(None);
        assert_eq!(
            (odd.first_receive_ms(), odd.sequence_number()),
            (None, None)
        );
        assert!(odd.extra.as_ref().is_some_and(|e| e.is_empty()));
    }

    #[test]
    fn a_moved_message_keeps_its_origin_and_only_a_moved_one_stores_it() {
        let mut message = Message::new(5, "b", DedupId::None, 0, 0);
        assert_eq!(message.origin(), 5);
        assert!(message.extra.is_none());
        message.renumber(9);
        assert_eq!((message.seq, message.origin()), (9, 5));
        message.renumber(12);
        assert_eq!(
            (message.seq, message.origin()),
            (12, 5),
            "a second move keeps the first seq"
        );
        message.renumber(5);
        assert_eq!(message.origin(), 5);
        assert!(message.extra.as_ref().is_some_and(|e| e.origin.is_none()));
    }

    #[test]
    fn the_dedup_id_shares_the_body_allocation() {
        let explicit = Message::new(1, "hello", DedupId::Explicit("d-1"), 0, 0);
        assert_eq!(explicit.body(), "hello");
        assert_eq!(explicit.dedup_id().as_deref(), Some("d-1"));
        assert_eq!(explicit.size(), 5);
        let long = "x".repeat(128);
        let at_limit = Message::new(1, "", DedupId::Explicit(&long), 0, 0);
        assert_eq!(
            (at_limit.body(), at_limit.dedup_id().as_deref()),
            ("", Some(&*long))
        );
        let content = Message::new(1, "hello", DedupId::ContentBased, 0, 0);
        assert_eq!(content.body(), "hello");
        assert_eq!(
            content.dedup_id().as_deref(),
            Some("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
        );
        let plain = Message::new(1, "hello", DedupId::None, 0, 0);
        assert_eq!((plain.body(), plain.dedup_id()), ("hello", None));
    }

    #[test]
    fn sequence_numbers_render_above_two_to_the_64() {
        let n = SequenceNumber::from_offset(1).unwrap();
        assert_eq!(n.to_string(), "18446744073709551617");
        assert_eq!(n.value(), u128::from(u64::MAX) + 2);
        assert!(SequenceNumber::from_offset(0).is_none());
    }

    #[test]
    fn filters() {
        let f = vec!["Hel.*".to_string()];
        assert!(attribute_selected(&f, "Hello"));
        assert!(attribute_selected(&f, "Help.Me"));
        assert!(!attribute_selected(&f, "General"));
        assert!(attribute_selected(&["All".into()], "x"));
    }
}
