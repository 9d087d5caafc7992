//! AWS JSON 1.0: `X-Amz-Target: AmazonSQS.<Op>`, JSON body in and out.
//!
//! Errors carry `__type` in the body and the legacy code in `x-amzn-query-error`
//! (`<Code>;Sender`), which is where SDKs read `err.code()` from.
//!
//! Bodies nested deeper than [`MAX_DEPTH`] are refused (`SerializationException`) before they
//! are parsed: the deepest SQS request (a batch entry's message attribute's list value) nests 5.
//!
//! A receive's messages are written straight to bytes ([`write_message`], which the query
//! protocol's JSON form shares), and so are SendMessage's and the batch operations' answers,
//! as `serde_json` writes their `Value` form: keys in byte order, strings copied whole when
//! they need no escape and escaped by `serde_json` itself when they do. A request body that
//! is a flat object of strings and small integers (or a batch's, with one array of such
//! objects) is read by [`super::flat_json`], anything else by `serde_json`.

use serde_json::{Map, Value};

use super::flat_json::needs_escape;
use crate::model::receipt::{self, Encoder};
use crate::ops::answer::{
    Answer, Received, ReceivedMessage, Sent, SystemValue, attribute_members, is_plain,
};
use crate::ops::batch::Batch;
use crate::support::errors::SqsError;
use crate::support::input::Params;

/// Content type of JSON protocol replies.
pub(crate) const CONTENT_TYPE: &str = "application/x-amz-json-1.0";

/// The operation named by an `X-Amz-Target` header.
pub(crate) fn operation(target: &str) -> Option<&str> {
    target
        .strip_prefix("AmazonSQS.")
        .filter(|op| !op.is_empty())
}

/// Deepest nesting of arrays and objects accepted in a request body.
pub(crate) const MAX_DEPTH: usize = 32;

/// The deepest nesting of `[` / `{` in a JSON text, outside strings; stops counting past
/// `limit`. Malformed text is measured as far as it goes (the parser reports the rest).
///
/// A string is crossed by memchr's search for its next quote or backslash rather than a byte
/// at a time: a SendMessage's body is mostly its `MessageBody`, and the byte-by-byte scan of it
/// was a large part of the request's cost (docs/performance.md).
fn nesting_depth(body: &[u8], limit: usize) -> usize {
    let (mut depth, mut deepest, mut i) = (0usize, 0usize, 0usize);
    while let Some(&b) = body.get(i) {
        match b {
            b'"' => {
                // To the closing quote, stepping over each backslash and the byte it escapes.
                i += 1;
                loop {
                    let Some(rest) = body.get(i..) else {
                        return deepest;
                    };
                    match memchr::memchr2(b'"', b'\\', rest) {
                        None => return deepest,
                        Some(at) if rest[at] == b'\\' => i += at + 2,
                        Some(at) => {
                            i += at;
                            break;
                        }
                    }
                }
            }
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                if deepest > limit {
                    break;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    deepest
}

/// Parses a request body; an empty body is an empty parameter set.
pub(crate) fn decode(body: &[u8]) -> Result<Params<'_>, SqsError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Params::Object(Map::new()));
    }
    // The usual body, a flat object of strings and integers, read in place.
    if let Some(flat) = super::flat_json::object(body) {
        return Ok(Params::Flat(flat));
    }
    if nesting_depth(body, MAX_DEPTH) > MAX_DEPTH {
        return Err(SqsError::serialization(format!(
            "Request body nests deeper than {MAX_DEPTH} levels."
        )));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(Params::Object(map)),
        Ok(_) => Err(SqsError::serialization(
            "Request body must be a JSON object.",
        )),
        Err(e) => Err(SqsError::serialization(format!("Malformed JSON: {e}"))),
    }
}

/// Body of a successful reply.
pub(crate) fn encode(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec())
}

/// Body of a successful reply, in whichever form the operation answered.
pub(crate) fn encode_answer(answer: &Answer) -> Vec<u8> {
    match answer {
        Answer::Value(value) => encode(value),
        Answer::Received(received) => encode_received(received),
        Answer::Sent(sent) => encode_sent(sent),
        Answer::Batch(batch) => encode_batch(batch),
    }
}

/// SendMessage's answer, its members in byte order of their names as `serde_json` writes the
/// `Value` form's keys; every member's text is plain (hex digits, a UUID, decimal digits).
fn encode_sent(sent: &Sent) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_sent(&mut out, None, sent);
    out
}

/// Writes a sent message's answer as a JSON object, with a batch entry's `Id` first (`"Id"`
/// sorts before every other member's name).
fn write_sent(out: &mut Vec<u8>, id: Option<&str>, sent: &Sent) {
    out.push(b'{');
    let mut first = true;
    if let Some(id) = id {
        key(out, "Id");
        string(out, id);
        first = false;
    }
    let mut member = |out: &mut Vec<u8>, name: &str, text: &[u8]| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        key(out, name);
        plain(out, text);
    };
    if let Some(md5) = &sent.md5_of_message_attributes {
        member(out, "MD5OfMessageAttributes", md5.as_bytes());
    }
    member(out, "MD5OfMessageBody", &sent.md5_of_body);
    if let Some(md5) = &sent.md5_of_message_system_attributes {
        member(out, "MD5OfMessageSystemAttributes", md5.as_bytes());
    }
    member(out, "MessageId", &sent.message_id);
    if let Some(n) = &sent.sequence_number {
        member(out, "SequenceNumber", n.as_bytes());
    }
    out.push(b'}');
}

/// A batch's answer, as `serde_json` writes [`Batch::to_value`]: `Failed` before
/// `Successful` (byte order), each left out when empty, each entry's members in byte order.
fn encode_batch(batch: &Batch) -> Vec<u8> {
    let Batch { successful, failed } = batch;
    let mut out = Vec::with_capacity(32 + 200 * successful.len() + 160 * failed.len());
    out.push(b'{');
    if !failed.is_empty() {
        out.extend_from_slice(b"\"Failed\":[");
        for (i, (id, error)) in failed.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"Code\":");
            string(&mut out, error.code());
            out.extend_from_slice(b",\"Id\":");
            string(&mut out, id);
            out.extend_from_slice(b",\"Message\":");
            string(&mut out, &error.message);
            out.extend_from_slice(if error.sender_fault() {
                b",\"SenderFault\":true}"
            } else {
                b",\"SenderFault\":false}"
            });
        }
        out.push(b']');
    }
    if !successful.is_empty() {
        if !failed.is_empty() {
            out.push(b',');
        }
        out.extend_from_slice(b"\"Successful\":[");
        for (i, entry) in successful.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match &entry.sent {
                Some(sent) => write_sent(&mut out, Some(&entry.id), sent),
                None => {
                    out.extend_from_slice(b"{\"Id\":");
                    string(&mut out, &entry.id);
                    out.push(b'}');
                }
            }
        }
        out.push(b']');
    }
    out.push(b'}');
    out
}

/// A receive's answer: `{"Messages":[…]}`, or `{}` without messages (AWS leaves the member
/// out of an empty receive).
fn encode_received(received: &Received) -> Vec<u8> {
    let Received { messages, handles } = received;
    let mut out = Vec::with_capacity(
        2 + messages
            .iter()
            .map(|m| estimated_len(m, handles))
            .sum::<usize>(),
    );
    out.push(b'{');
    if !messages.is_empty() {
        out.extend_from_slice(b"\"Messages\":[");
        for (i, message) in messages.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_message(&mut out, message, handles, Maps::Objects);
        }
        out.push(b']');
    }
    out.push(b'}');
    out
}

/// About how many bytes a message takes written, so that the buffer is allocated once.
pub(crate) fn estimated_len(message: &ReceivedMessage, handles: &Encoder) -> usize {
    // The members' names and the fixed-size ids and digests, 40 bytes per system attribute.
    200 + message.body().len()
        + handles.head().len()
        + receipt::NUMBERS
        + 40 * message.attributes.len()
}

/// How a message's two maps (`Attributes`, `MessageAttributes`) are written.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Maps {
    /// As JSON objects, `{"<name>": <value>}` (the JSON protocol).
    Objects,
    /// As lists of pairs, `[{"<key>": "<name>", "Value": <value>}]` (the query protocol's
    /// JSON form), each map's pair key named.
    Pairs {
        attributes: &'static str,
        message_attributes: &'static str,
    },
}

/// Writes `raw` as a JSON string, escaped as `serde_json` escapes it.
fn string(out: &mut Vec<u8>, raw: &str) {
    if needs_escape(raw.as_bytes()) {
        // Writing to a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut *out, raw);
    } else {
        out.reserve(raw.len() + 2);
        out.push(b'"');
        out.extend_from_slice(raw.as_bytes());
        out.push(b'"');
    }
}

/// Writes text that needs no escaping ([`is_plain`]: ids, digests, handles) as a JSON
/// string, copied whole: scanning it as `serde_json` does was half of a message's writing.
fn plain(out: &mut Vec<u8>, text: &[u8]) {
    debug_assert!(std::str::from_utf8(text).is_ok_and(is_plain));
    out.push(b'"');
    out.extend_from_slice(text);
    out.push(b'"');
}

/// Writes `"<name>":`, for the members' own names (which need no escaping).
fn key(out: &mut Vec<u8>, name: &str) {
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

/// Writes one map entry of `maps`' form: `"<name>":` then the value, or
/// `{"<key>":"<name>","Value":` then the value and `}`.
fn entry(out: &mut Vec<u8>, pair_key: Option<&str>, name: &str, value: impl FnOnce(&mut Vec<u8>)) {
    match pair_key {
        None => {
            string(out, name);
            out.push(b':');
            value(out);
        }
        Some(pair_key) => {
            out.push(b'{');
            key(out, pair_key);
            string(out, name);
            out.push(b',');
            key(out, "Value");
            value(out);
            out.push(b'}');
        }
    }
}

/// Writes one received message as a JSON object, members in byte order of their names (the
/// order `serde_json` writes a `Value` object's keys in).
pub(crate) fn write_message(
    out: &mut Vec<u8>,
    message: &ReceivedMessage,
    handles: &Encoder,
    maps: Maps,
) {
    let (open, close, attributes_key, message_attributes_key) = match maps {
        Maps::Objects => (b'{', b'}', None, None),
        Maps::Pairs {
            attributes,
            message_attributes,
        } => (b'[', b']', Some(attributes), Some(message_attributes)),
    };
    out.push(b'{');
    if !message.attributes.is_empty() {
        key(out, "Attributes");
        out.push(open);
        for (i, (name, value)) in message.attributes.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            entry(out, attributes_key, name, |out| match value {
                SystemValue::Number(n) => {
                    // `itoa`, not `write!`: the formatting machinery was a measurable part of a
                    // receive asking for every attribute (docs/performance.md).
                    out.push(b'"');
                    out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes());
                    out.push(b'"');
                }
                SystemValue::Text(text) => string(out, text),
            });
        }
        out.push(close);
        out.push(b',');
    }
    // The members between the variable parts are written as one constant each (a key, its
    // punctuation and the next key's): a push or a copy of a few bytes is a call and a
    // capacity test, and a plain message's writing was ~30 of them (docs/performance.md,
    // "Sixth round").
    out.extend_from_slice(b"\"Body\":");
    string(out, message.body());
    out.extend_from_slice(b",\"MD5OfBody\":\"");
    out.extend_from_slice(&message.md5_of_body());
    if let Some(md5) = message.md5_of_message_attributes() {
        out.extend_from_slice(b"\",\"MD5OfMessageAttributes\":");
        string(out, md5);
        out.push(b',');
        key(out, "MessageAttributes");
        out.push(open);
        for (i, (name, value)) in message.message_attributes().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            entry(out, message_attributes_key, name, |out| {
                out.push(b'{');
                let mut first = true;
                for (member, text) in attribute_members(value) {
                    let Some(text) = text else { continue };
                    if !first {
                        out.push(b',');
                    }
                    first = false;
                    key(out, member);
                    string(out, &text);
                }
                out.push(b'}');
            });
        }
        out.push(close);
        out.extend_from_slice(b",\"MessageId\":\"");
    } else {
        out.extend_from_slice(b"\",\"MessageId\":\"");
    }
    out.extend_from_slice(&message.message_id_ascii());
    out.extend_from_slice(b"\",\"ReceiptHandle\":\"");
    out.extend_from_slice(handles.head().as_bytes());
    out.extend_from_slice(&message.handle_numbers());
    out.extend_from_slice(b"\"}");
}

/// Body and `x-amzn-query-error` header value of an error reply.
pub(crate) fn encode_error(error: &SqsError) -> (Vec<u8>, String) {
    let spec = error.spec;
    let mut body =
        Vec::with_capacity(32 + spec.namespace.len() + spec.shape.len() + error.message.len());
    body.extend_from_slice(b"{\"__type\":");
    // Written straight to bytes, as `serde_json` writes `{"__type": …, "message": …}` (its
    // keys in byte order): a `Value` and two `format!`s were most of the cost of every
    // error, the no-op among them. The table's names need no escaping; should one ever, it
    // is escaped like the message.
    if is_plain_name(spec.namespace) && is_plain_name(spec.shape) {
        body.push(b'"');
        body.extend_from_slice(spec.namespace.as_bytes());
        body.push(b'#');
        body.extend_from_slice(spec.shape.as_bytes());
        body.push(b'"');
    } else {
        string(&mut body, &error.json_type());
    }
    body.extend_from_slice(b",\"message\":");
    string(&mut body, &error.message);
    body.push(b'}');
    let (code, fault) = (error.code(), spec.fault());
    let mut query_error = String::with_capacity(code.len() + 1 + fault.len());
    query_error.push_str(code);
    query_error.push(';');
    query_error.push_str(fault);
    (body, query_error)
}

/// Whether an error table name is written in JSON as it is (no quote, backslash or control
/// character to escape).
fn is_plain_name(name: &str) -> bool {
    name.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b':'))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // The error written straight to bytes is what the `Value` form was, byte for byte.
    #[test]
    fn errors_are_written_as_serde_json_writes_their_value() {
        let messages = [
            "",
            "plain",
            "quote \" back \\ slash",
            "tab\tnl\n\u{1} é ✓ 𝄞",
        ];
        for spec in sqsprobe_facts::sqs::errors::ERRORS {
            for message in messages {
                let error = SqsError {
                    spec,
                    message: message.to_owned(),
                };
                let value = json!({ "__type": error.json_type(), "message": error.message });
                let (body, query_error) = encode_error(&error);
                assert_eq!(body, encode(&value), "{}", spec.shape);
                assert_eq!(query_error, format!("{};{}", error.code(), spec.fault()));
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(sqsprobe_testing::config(1024))]

        // The eight-bytes-at-a-time scan finds what a byte-by-byte one finds, at
        // every position of every word, and a string is written as `serde_json` writes it.
        #[test]
        fn strings_are_written_as_serde_json_writes_them(
            text in "[a-z \"\\\\\u{0}-\u{1f}\u{7f}é✓𝄞]{0,40}",
            prefix in 0usize..9,
        ) {
            let text = format!("{}{text}", "p".repeat(prefix));
            let bytewise = text.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\');
            proptest::prop_assert_eq!(needs_escape(text.as_bytes()), bytewise);
            let mut out = Vec::new();
            string(&mut out, &text);
            proptest::prop_assert_eq!(out, serde_json::to_vec(&text).unwrap());
        }
    }

    proptest::proptest! {
        #![proptest_config(sqsprobe_testing::config(256))]

        // SendMessage's answer written straight to bytes is what its `Value` form
        // was, byte for byte, with and without each optional member.
        #[test]
        fn a_sent_answer_is_written_as_serde_json_writes_its_value(
            id in proptest::prelude::any::<[u8; 16]>(),
            md5 in proptest::prelude::any::<[u8; 16]>(),
            attributes in proptest::option::of("[0-9a-f]{32}"),
            system in proptest::option::of("[0-9a-f]{32}"),
            sequence in proptest::option::of("[0-9]{20}"),
        ) {
            use crate::support::hex;
            let sent = Sent {
                message_id: hex::uuid(&id),
                md5_of_body: hex::digest(&md5),
                md5_of_message_attributes: attributes,
                md5_of_message_system_attributes: system,
                sequence_number: sequence,
            };
            let answer = Answer::Sent(sent);
            proptest::prop_assert_eq!(encode_answer(&answer), encode(&answer.to_value()));
        }
    }

    #[test]
    fn every_escaped_byte_is_found_at_every_position_of_a_word() {
        for len in 1..=24 {
            for at in 0..len {
                for b in (0u8..0x20).chain([b'"', b'\\']) {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = b;
                    assert!(needs_escape(&bytes), "{b:#x} at {at} of {len}");
                }
                // Bytes next to the matches (and the high ones) are not matches.
                let mut bytes = vec![b'a'; len];
                bytes[at] = [0x20, b'!', b'#', b'[', b']', 0x7f, 0x80, 0xff][at % 8];
                assert!(!needs_escape(&bytes), "{:#x} at {at} of {len}", bytes[at]);
            }
        }
    }

    /// The byte-by-byte count `nesting_depth` replaced, as its oracle.
    fn nesting_depth_bytewise(body: &[u8], limit: usize) -> usize {
        let (mut depth, mut deepest, mut in_string, mut escaped) = (0, 0, false, false);
        for &b in body {
            if in_string {
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    depth += 1;
                    deepest = usize::max(deepest, depth);
                    if deepest > limit {
                        break;
                    }
                }
                b']' | b'}' => depth = usize::saturating_sub(depth, 1),
                _ => {}
            }
        }
        deepest
    }

    proptest::proptest! {
        #![proptest_config(sqsprobe_testing::config(1024))]

        #[test]
        fn depth_is_the_bytewise_count(text in r#"[\[\]{}"\\a ]{0,60}"#, limit in 0usize..6) {
            proptest::prop_assert_eq!(
                nesting_depth(text.as_bytes(), limit),
                nesting_depth_bytewise(text.as_bytes(), limit)
            );
        }
    }

    #[test]
    fn depth_is_counted_outside_strings() {
        assert_eq!(nesting_depth(br#"{"a": [1, {"b": "[[[{{{"}]}"#, 99), 3);
        assert_eq!(nesting_depth(br#"{"a": "\"[[[["}"#, 99), 1);
        assert_eq!(nesting_depth(b"[[[[", 2), 3);
    }

    #[test]
    fn sends_and_batches_with_attributes_are_read_in_place_lists_by_serde_json() {
        let plain =
            br#"{"QueueUrl":"q","Entries":[{"Id":"a","MessageBody":"x","DelaySeconds":1}]}"#;
        assert!(matches!(decode(plain), Ok(Params::Flat(_))));
        let nested = br#"{"QueueUrl":"q","Entries":[{"Id":"a","MessageBody":"x","MessageAttributes":{"n":{"DataType":"String","StringValue":"v"}}}]}"#;
        assert!(matches!(decode(nested), Ok(Params::Flat(_))));
        let send = br#"{"QueueUrl":"q","MessageBody":"x","MessageAttributes":{"n":{"DataType":"Binary","BinaryValue":"AAE="}}}"#;
        assert!(matches!(decode(send), Ok(Params::Flat(_))));
        let list = br#"{"QueueUrl":"q","MessageBody":"x","MessageAttributes":{"n":{"DataType":"String","StringListValues":["a"]}}}"#;
        assert!(matches!(decode(list), Ok(Params::Object(_))));
    }

    #[test]
    fn deep_bodies_are_refused_shallow_ones_parsed() {
        let deep = format!(
            "{{\"a\":{}{}}}",
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        );
        let err = decode(deep.as_bytes()).unwrap_err();
        assert_eq!(err.code(), "SerializationException");
        assert!(err.message.contains("deeper than 32"), "{err}");
        let ok = format!(
            "{{\"a\":{}{}}}",
            "[".repeat(MAX_DEPTH - 1),
            "]".repeat(MAX_DEPTH - 1)
        );
        assert!(decode(ok.as_bytes()).is_ok());
        let huge = "[".repeat(1_000_000);
        assert!(decode(huge.as_bytes()).is_err());
    }
}
