//! What an operation answers: a JSON value in the JSON protocol's shape, or (ReceiveMessage)
//! the received messages with their queue's handle encoder ([`Received`]), or (SendMessage)
//! the sent message's ids and digests ([`Sent`]), or (the batch operations) their entries'
//! outcomes ([`Batch`]), which the protocol modules write straight to bytes.
//!
//! A receive's answer is ~25 times a no-op's, and building it as `serde_json::Value`s (a
//! `Map`, its keys and a `String` per member, for each of ten messages) was 17 % of a
//! receive's CPU (docs/performance.md). [`Answer::Received`] holds the members as plain data
//! instead; [`Answer::to_value`] still builds the `Value` for the readers that want one (an
//! audit's observer, the unit tests), and the property test in `ops/receive/render_tests.rs`
//! checks that every protocol writes the same answer from either form.

use std::borrow::Cow;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value};

use crate::model::message::{Message, MessageAttributeValue, MessageAttributes, content_dedup_id};
use crate::model::queue::Id;
use crate::model::receipt::{self, Encoder};
use crate::ops::batch::Batch;
use crate::support::hex;

/// One operation's successful answer.
#[derive(Debug)]
pub(crate) enum Answer {
    /// In the JSON protocol's shape; the protocol modules translate it.
    Value(Value),
    /// ReceiveMessage's messages.
    Received(Received),
    /// SendMessage's answer.
    Sent(Sent),
    /// A batch operation's entries' outcomes.
    Batch(Batch),
}

impl Answer {
    /// The answer in the JSON protocol's shape.
    pub fn to_value(&self) -> Cow<'_, Value> {
        match self {
            Answer::Value(value) => Cow::Borrowed(value),
            Answer::Received(received) => Cow::Owned(received_value(received)),
            Answer::Sent(sent) => Cow::Owned(Value::Object(sent.to_map())),
            Answer::Batch(batch) => Cow::Owned(batch.to_value()),
        }
    }

    /// The answer in the JSON protocol's shape, owned.
    #[cfg(test)]
    pub fn into_value(self) -> Value {
        match self {
            Answer::Value(value) => value,
            Answer::Received(received) => received_value(&received),
            Answer::Sent(sent) => Value::Object(sent.to_map()),
            Answer::Batch(batch) => batch.to_value(),
        }
    }
}

/// What a sent message is answered with: SendMessage's whole answer, and each successful entry
/// of SendMessageBatch's (with its `Id`). Held as the ids and digests themselves, so that the
/// JSON protocol writes SendMessage's answer straight to bytes (`protocol/json.rs`): building
/// and serialising the `Value` form was a large part of a SendMessage's cost
/// (docs/performance.md). [`Sent::to_map`] is that form, for the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sent {
    /// The MessageId, hyphenated, lower-case ASCII.
    pub message_id: [u8; 36],
    /// `MD5OfMessageBody`, lower-case hex.
    pub md5_of_body: [u8; 32],
    /// `MD5OfMessageAttributes`, when the message has attributes.
    pub md5_of_message_attributes: Option<String>,
    /// `MD5OfMessageSystemAttributes`, when it has an `AWSTraceHeader`.
    pub md5_of_message_system_attributes: Option<String>,
    /// `SequenceNumber`, on FIFO queues: decimal digits.
    pub sequence_number: Option<String>,
}

impl Sent {
    /// The members, in the JSON protocol's shape.
    pub fn to_map(&self) -> Map<String, Value> {
        let mut out = Map::new();
        out.insert(
            "MessageId".into(),
            Value::String(hex::text(&self.message_id)),
        );
        out.insert(
            "MD5OfMessageBody".into(),
            Value::String(hex::text(&self.md5_of_body)),
        );
        let optional = [
            ("MD5OfMessageAttributes", &self.md5_of_message_attributes),
            (
                "MD5OfMessageSystemAttributes",
                &self.md5_of_message_system_attributes,
            ),
            ("SequenceNumber", &self.sequence_number),
        ];
        for (name, value) in optional {
            if let Some(value) = value {
                out.insert(name.into(), Value::String(value.clone()));
            }
        }
        out
    }
}

/// `{"Messages": [...]}`, or `{}` for no messages (SNAP-2025 `test_receive_empty_queue`).
fn received_value(received: &Received) -> Value {
    let mut out = Map::new();
    if !received.messages.is_empty() {
        let list = received
            .messages
            .iter()
            .map(|m| m.to_value(&received.handles))
            .collect();
        out.insert("Messages".into(), Value::Array(list));
    }
    Value::Object(out)
}

/// Whether `text` is made only of what a MessageId (hex digits and hyphens), an MD5 (hex
/// digits) and a receipt handle (base64) are made of: characters no protocol escapes, in JSON
/// or XML, so that the writers copy these members whole instead of scanning them.
pub(crate) fn is_plain(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'/' | b'='))
}

/// A system attribute's value as the answer writes it (a string in every protocol).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SystemValue {
    /// Timestamps, counts, sequence numbers: written in decimal.
    Number(u128),
    Text(String),
}

impl SystemValue {
    /// The value as text.
    pub fn to_text(&self) -> Cow<'_, str> {
        match self {
            SystemValue::Number(n) => Cow::Owned(n.to_string()),
            SystemValue::Text(s) => Cow::Borrowed(s),
        }
    }
}

/// ReceiveMessage's answer: the messages, and the encoder of their queue's receipt handles,
/// which the writers write each message's handle with.
#[derive(Debug)]
pub(crate) struct Received {
    /// None: AWS leaves `Messages` out.
    pub messages: Vec<ReceivedMessage>,
    pub handles: Encoder,
}

impl Received {
    /// No messages.
    pub fn empty(handles: Encoder) -> Self {
        Self {
            messages: Vec::new(),
            handles,
        }
    }
}

/// One message of a receive's answer: what the answer writes of the message, read under its
/// queue's lock, and the lease it was taken under.
///
/// Built once and written in place: the MessageId's and the receipt handle's text are written
/// by the writers straight into the answer, from the id and the lease. A copy taken under the
/// lock, then rendered into a second struct with both texts and a handle sharing its queue's
/// head, cost each message answered a measurable part of its rendering in moving the structs
/// alone; a whole copy of the stored message cloned all its attributes, whether asked for or
/// not (docs/performance.md). Only the body is copied, and the attributes are shared.
#[derive(Debug)]
pub(crate) struct ReceivedMessage {
    /// The body.
    body: Box<str>,
    /// The body's digest.
    md5_of_body: [u8; 16],
    /// Where the message is held (the handle's first numbers).
    id: Id,
    /// The lease (the handle's last number).
    nonce: u64,
    /// The MessageId.
    message_id: uuid::Uuid,
    /// The system attributes asked for, in byte order of their names (the order a JSON
    /// object's keys have in the `Value` form, and so the order every protocol writes them).
    pub attributes: Vec<(&'static str, SystemValue)>,
    /// The message attributes the receive selected, with their digest; `None` when none is.
    /// Until [`ReceivedMessage::unlocked`] picks those selected: all of the message's, when
    /// the receive names any.
    message_attributes: Option<Arc<MessageAttributes>>,
    /// The answer shows a content-based MessageDeduplicationId, not hashed yet
    /// ([`ReceivedMessage::unlocked`]).
    content_dedup_id: bool,
}

impl ReceivedMessage {
    /// `message` (held at `id`) as leased under `nonce`, MessageId `message_id`; no attribute
    /// added yet.
    pub fn leased(message: &Message, (id, nonce): (Id, u64), message_id: uuid::Uuid) -> Self {
        Self {
            body: Box::from(message.body()),
            md5_of_body: message.md5_of_body,
            id,
            nonce,
            message_id,
            attributes: Vec::new(),
            message_attributes: None,
            content_dedup_id: false,
        }
    }

    /// Adds what the receive asked for: `attributes` (in any order), and the message's
    /// attributes when it names any (those it selects are picked by
    /// [`ReceivedMessage::unlocked`]).
    pub fn answer_with(
        &mut self,
        mut attributes: Vec<(&'static str, SystemValue)>,
        message_attributes: Option<Arc<MessageAttributes>>,
    ) {
        attributes.sort_unstable_by_key(|(name, _)| *name);
        self.attributes = attributes;
        self.message_attributes = message_attributes;
    }

    /// The answer is to show the content-based MessageDeduplicationId, a SHA-256 of the body:
    /// hashed by [`ReceivedMessage::unlocked`], outside the queue's lock, where a large body
    /// holds up no other request on the queue.
    pub fn show_content_dedup_id(&mut self) {
        self.content_dedup_id = true;
    }

    /// Finishes the message once its queue's lock is released: the message attributes that
    /// `filters` (the receive's `MessageAttributeNames`) select, with their digest (a copy and
    /// an MD5 when they are some but not all), and the content-based MessageDeduplicationId,
    /// when the answer shows it.
    pub fn unlocked(&mut self, filters: &[String]) {
        // Selecting again what was selected changes nothing, so a second call is harmless.
        if let Some(all) = &self.message_attributes {
            self.message_attributes = all.selected(filters);
        }
        if std::mem::take(&mut self.content_dedup_id) {
            let id = SystemValue::Text(content_dedup_id(&self.body));
            self.attributes.push(("MessageDeduplicationId", id));
            self.attributes.sort_unstable_by_key(|(name, _)| *name);
        }
    }

    /// Where the message is held.
    pub fn id(&self) -> Id {
        self.id
    }

    /// The lease it was answered under.
    pub fn nonce(&self) -> u64 {
        self.nonce
    }

    /// The MessageId.
    pub fn message_id(&self) -> String {
        hex::text(&self.message_id_ascii())
    }

    /// The MessageId's ASCII, hyphenated, lower-case, for the writers that copy it whole.
    pub fn message_id_ascii(&self) -> [u8; 36] {
        hex::uuid(self.message_id.as_bytes())
    }

    /// The receipt handle's wire form, written by its queue's encoder.
    pub fn receipt_handle(&self, handles: &Encoder) -> String {
        handles.encode(self.id, self.nonce)
    }

    /// The receipt handle's numbers (after its queue's head): base64's digits.
    pub fn handle_numbers(&self) -> [u8; receipt::NUMBERS] {
        receipt::numbers(self.id, self.nonce)
    }

    /// The body.
    pub fn body(&self) -> &str {
        &self.body
    }

    /// `MD5OfBody` in lower-case hex.
    pub fn md5_of_body(&self) -> [u8; 32] {
        hex::digest(&self.md5_of_body)
    }

    /// The selected message attributes, in byte order of their names.
    pub fn message_attributes(&self) -> impl Iterator<Item = (&str, &MessageAttributeValue)> {
        self.message_attributes
            .iter()
            .flat_map(|a| a.map())
            .map(|(name, value)| (name.as_str(), value))
    }

    /// The digest of the selected message attributes; `None` when none is selected.
    pub fn md5_of_message_attributes(&self) -> Option<&str> {
        self.message_attributes
            .as_deref()
            .map(MessageAttributes::md5)
    }

    /// The message in the JSON protocol's shape (the form an audit and the unit tests read).
    pub fn to_value(&self, handles: &Encoder) -> Value {
        let text = |s: &str| Value::String(s.to_owned());
        let mut out = Map::new();
        out.insert("MessageId".into(), Value::String(self.message_id()));
        out.insert(
            "ReceiptHandle".into(),
            Value::String(self.receipt_handle(handles)),
        );
        let md5 = self.md5_of_body();
        out.insert(
            "MD5OfBody".into(),
            text(std::str::from_utf8(&md5).unwrap_or_default()),
        );
        out.insert("Body".into(), text(self.body()));
        if !self.attributes.is_empty() {
            let system = self
                .attributes
                .iter()
                .map(|(name, value)| ((*name).to_owned(), text(&value.to_text())))
                .collect();
            out.insert("Attributes".into(), Value::Object(system));
        }
        if let Some(md5) = self.md5_of_message_attributes() {
            out.insert("MD5OfMessageAttributes".into(), text(md5));
            let attributes = self
                .message_attributes()
                .map(|(name, value)| (name.to_owned(), value.to_json()))
                .collect();
            out.insert("MessageAttributes".into(), Value::Object(attributes));
        }
        Value::Object(out)
    }
}

/// A `MessageAttributeValue`'s members in the order a JSON object's keys have: `BinaryValue`
/// (base64), `DataType`, `StringValue`, each present or not (its `Value` form is
/// [`MessageAttributeValue::to_json`]).
pub(crate) fn attribute_members(
    value: &MessageAttributeValue,
) -> [(&'static str, Option<Cow<'_, str>>); 3] {
    [
        (
            "BinaryValue",
            value
                .binary_value
                .as_ref()
                .map(|b| Cow::Owned(BASE64.encode(b))),
        ),
        ("DataType", Some(Cow::Borrowed(value.data_type.as_str()))),
        (
            "StringValue",
            value.string_value.as_deref().map(Cow::Borrowed),
        ),
    ]
}
