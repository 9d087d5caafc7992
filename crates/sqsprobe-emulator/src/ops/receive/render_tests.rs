//! A receive's answer written straight to bytes is the answer the `Value` path wrote: the
//! reference below is the renderer ReceiveMessage used before (reading the stored message
//! and what its queue knows from the test's spec), and a
//! seeded property test renders random messages (bodies and attributes with quotes, `&`, `<`,
//! `\r`, control characters, unicode; every data type, custom ones too; any subset of system
//! attributes and attribute filters) both ways, in all three forms: the JSON protocol, the
//! query protocol's XML and its JSON form. Each must match byte for byte.

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::{Held, ReceiveParams, answered};
use crate::model::message::{
    DedupId, Extra, Message, MessageAttributeValue, MessageAttributes, SequenceNumber,
    attribute_selected, md5_of_attributes,
};
use crate::model::queue::Id;
use crate::model::receipt::{self, ReceiptHandle};
use crate::model::store::Emulator;
use crate::ops::answer::{Answer, Received, ReceivedMessage};
use crate::protocol::{json, query};
use crate::test_support::emulator;

/// ReceiveMessage's earlier renderer: one `Value` per message.
fn reference(emu: &Emulator, key: &str, spec: &Spec, params: &ReceiveParams) -> Value {
    let message = &spec.stored();
    let (id, nonce) = spec.lease();
    let handle = ReceiptHandle {
        queue: key.to_owned(),
        id,
        nonce,
    }
    .encode();
    let mut out = Map::new();
    out.insert("MessageId".into(), json!(message.id_string(&emu.ids)));
    out.insert("ReceiptHandle".into(), json!(handle));
    out.insert("MD5OfBody".into(), json!(message.md5_hex()));
    out.insert("Body".into(), json!(message.body()));
    let mut system = Map::new();
    let mut put = |name: &str, value: &dyn Fn() -> Option<String>| {
        if params.wants(name)
            && let Some(value) = value()
        {
            system.insert(name.to_owned(), Value::String(value));
        }
    };
    let extra = message.extra.as_deref();
    put("SenderId", &|| spec.sender.clone());
    put("SentTimestamp", &|| Some(message.sent_ms().to_string()));
    put("ApproximateReceiveCount", &|| {
        Some(message.receive_count.to_string())
    });
    put("ApproximateFirstReceiveTimestamp", &|| {
        message.first_receive_ms().map(|at| at.to_string())
    });
    put("AWSTraceHeader", &|| {
        extra.and_then(|e| e.trace_header.as_deref().map(str::to_owned))
    });
    put("DeadLetterQueueSourceArn", &|| {
        extra.and_then(|e| e.dead_letter_source_arn.as_deref().map(str::to_owned))
    });
    put("MessageGroupId", &|| spec.group.clone());
    if spec.fifo {
        put("MessageDeduplicationId", &|| {
            message.dedup_id().map(|d| d.into_owned())
        });
        put("SequenceNumber", &|| {
            message.sequence_number().map(|n| n.to_string())
        });
    }
    if !system.is_empty() {
        out.insert("Attributes".into(), Value::Object(system));
    }
    let selected: BTreeMap<String, MessageAttributeValue> = message
        .attributes()
        .iter()
        .filter(|(name, _)| attribute_selected(&params.attribute_filters, name))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(md5) = md5_of_attributes(&selected) {
        out.insert("MD5OfMessageAttributes".into(), json!(md5));
        let attributes: Map<String, Value> = selected
            .iter()
            .map(|(k, v)| (k.clone(), v.to_json()))
            .collect();
        out.insert("MessageAttributes".into(), Value::Object(attributes));
    }
    Value::Object(out)
}

/// Text that needs escaping in one protocol or another, or none.
fn text(max: usize) -> impl Strategy<Value = String> {
    let awkward = prop::sample::select(vec![
        'a',
        'Z',
        '0',
        ' ',
        '"',
        '\'',
        '&',
        '<',
        '>',
        '\\',
        '/',
        '\r',
        '\n',
        '\t',
        '\u{0}',
        '\u{1}',
        '\u{8}',
        '\u{c}',
        '\u{1f}',
        '\u{7f}',
        'é',
        '€',
        '\u{2028}',
        '😀',
        '\u{d7ff}',
        '\u{e000}',
        '\u{fffd}',
        '\u{fffe}',
        '\u{ffff}',
        '\u{10ffff}',
    ]);
    prop::collection::vec(prop_oneof![4 => awkward, 1 => any::<char>()], 0..max)
        .prop_map(|chars| chars.into_iter().collect())
}

fn attribute() -> impl Strategy<Value = (String, MessageAttributeValue)> {
    let name = prop_oneof![
        prop::sample::select(vec!["Hello", "Help.Me", "General", "a", "zz", "A.b"])
            .prop_map(str::to_owned),
        text(8),
    ];
    let data_type = prop::sample::select(vec![
        "String",
        "Number",
        "Binary",
        "String.custom",
        "Number.int",
        "Binary.gif&<x>",
    ]);
    (
        name,
        data_type,
        text(20),
        prop::collection::vec(any::<u8>(), 0..20),
    )
        .prop_map(|(name, data_type, string, bytes)| {
            let binary = data_type.starts_with("Binary");
            let value = MessageAttributeValue {
                data_type: data_type.to_owned(),
                string_value: (!binary).then_some(string),
                binary_value: binary.then_some(bytes),
            };
            (name, value)
        })
}

/// What one random delivered message is made of.
#[derive(Debug, Clone)]
struct Spec {
    body: String,
    dedup: Option<Option<String>>,
    attributes: BTreeMap<String, MessageAttributeValue>,
    trace_header: Option<String>,
    dead_letter_source_arn: Option<String>,
    sender: Option<String>,
    group: Option<String>,
    fifo: bool,
    numbers: (u64, u32, u64, u64, u64, u32),
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        (
            text(40),
            prop::option::of(prop::option::of("[!-~]{1,12}")),
            prop::collection::vec(attribute(), 0..4)
                .prop_map(|pairs| pairs.into_iter().collect::<BTreeMap<_, _>>()),
            prop::option::of(text(10)),
            prop::option::of(text(10)),
        ),
        (
            prop::option::of(text(10)),
            prop::option::of(text(10)),
            any::<bool>(),
            (
                any::<u64>(),
                any::<u32>(),
                prop_oneof![Just(0u64), any::<u64>()],
                any::<u64>(),
                prop_oneof![Just(0u64), any::<u64>()],
                any::<u32>(),
            ),
        ),
    )
        .prop_map(
            |((body, dedup, attributes, trace_header, dead_letter_source_arn), rest)| {
                let (sender, group, fifo, numbers) = rest;
                Spec {
                    body,
                    dedup,
                    attributes,
                    trace_header,
                    dead_letter_source_arn,
                    sender,
                    group,
                    fifo,
                    numbers,
                }
            },
        )
}

impl Spec {
    /// The message as its queue stores it.
    fn stored(&self) -> Message {
        let (seq, receive_count, first_receive_ms, sent_ms, sequence, _) = self.numbers;
        let dedup = match &self.dedup {
            None => DedupId::None,
            Some(None) => DedupId::ContentBased,
            Some(Some(id)) => DedupId::Explicit(id),
        };
        let mut message = Message::new(seq, &self.body, dedup, sent_ms, 0);
        message.receive_count = receive_count;
        if first_receive_ms > 0 {
            message.received_first_at(first_receive_ms);
        }
        message.set_sequence_number(SequenceNumber::from_offset(sequence));
        message.set_extra(Extra {
            attributes: MessageAttributes::of(self.attributes.clone()),
            trace_header: self.trace_header.as_deref().map(Box::from),
            dead_letter_source_arn: self.dead_letter_source_arn.as_deref().map(Arc::from),
            ..Extra::default()
        });
        message
    }

    /// Where the message is held and the lease it is answered under.
    fn lease(&self) -> (Id, u64) {
        let (seq, .., slot) = self.numbers;
        (Id { slot, seq }, seq.rotate_left(7))
    }

    /// The message as the receive answers it, with what `params` asks for.
    fn answered(&self, emu: &Emulator, params: &ReceiveParams) -> ReceivedMessage {
        let message = self.stored();
        let held = Held {
            message: &message,
            sender: self.sender.as_deref(),
            group: self.group.as_deref().map(Arc::from),
            fifo: self.fifo,
        };
        let mut received = answered(emu, &held, self.lease(), params);
        received.unlocked(&params.attribute_filters);
        received
    }
}

fn params() -> impl Strategy<Value = ReceiveParams> {
    let system = prop::sample::subsequence(
        vec![
            "All",
            "SenderId",
            "SentTimestamp",
            "ApproximateReceiveCount",
            "ApproximateFirstReceiveTimestamp",
            "AWSTraceHeader",
            "DeadLetterQueueSourceArn",
            "MessageGroupId",
            "MessageDeduplicationId",
            "SequenceNumber",
        ],
        0..=4,
    );
    let filters = prop::sample::subsequence(
        vec![
            "All", ".*", "*", "Hello", "Help.*", "A.*", "zz", "nomatch", ".*x",
        ],
        0..=3,
    );
    (system, filters).prop_map(|(system, filters)| ReceiveParams {
        max: 10,
        wait_seconds: None,
        visibility_seconds: None,
        system_names: system.into_iter().map(str::to_owned).collect(),
        attribute_filters: filters.into_iter().map(str::to_owned).collect(),
        attempt_id: None,
    })
}

proptest! {
    #![proptest_config(sqsprobe_testing::config(256))]

    #[test]
    fn every_protocol_writes_what_the_value_path_wrote(
        specs in prop::collection::vec(spec(), 0..4),
        params in params(),
        key in prop_oneof![Just("000000000000/q".to_owned()), text(12)],
        request_id in prop_oneof![Just("rid".to_owned()), text(12)],
    ) {
        let emu = emulator();
        let messages: Vec<Value> = specs
            .iter()
            .map(|s| reference(&emu, &key, s, &params))
            .collect();
        let expected = if messages.is_empty() {
            json!({})
        } else {
            json!({ "Messages": messages })
        };
        let answer = Answer::Received(Received {
            messages: specs.iter().map(|s| s.answered(&emu, &params)).collect(),
            handles: receipt::Encoder::new(&key),
        });
        prop_assert_eq!(&*answer.to_value(), &expected);
        let op = "ReceiveMessage";
        prop_assert_eq!(
            String::from_utf8(json::encode_answer(&answer)).unwrap(),
            String::from_utf8(json::encode(&expected)).unwrap()
        );
        prop_assert_eq!(
            String::from_utf8(query::encode_answer(op, &answer, &request_id)).unwrap(),
            query::encode(op, &expected, &request_id)
        );
        prop_assert_eq!(
            String::from_utf8(query::encode_json_answer(op, &answer, &request_id)).unwrap(),
            String::from_utf8(query::encode_json(op, &expected, &request_id)).unwrap()
        );
    }
}

/// The awkward characters of the property, once each, in a fixed case: the JSON outputs parse
/// to the same values, and the XML escapes `\r` as a character reference and drops what XML
/// cannot carry.
#[test]
fn a_body_with_every_awkward_character_is_written_as_before() {
    let emu = emulator();
    let spec = Spec {
        body: "q\"u'o&t<e>s\r\n\t\u{1}\u{7f}é😀\u{fffe}".into(),
        dedup: None,
        attributes: BTreeMap::from([(
            "Hello".to_owned(),
            MessageAttributeValue {
                data_type: "String.a&b".into(),
                string_value: Some("x\ry".into()),
                binary_value: None,
            },
        )]),
        trace_header: None,
        dead_letter_source_arn: None,
        sender: Some("AID&".into()),
        group: None,
        fifo: false,
        numbers: (7, 2, 0, 1_700_000_000_000, 0, 3),
    };
    let params = ReceiveParams {
        max: 10,
        wait_seconds: None,
        visibility_seconds: None,
        system_names: vec!["All".into()],
        attribute_filters: vec!["All".into()],
        attempt_id: None,
    };
    let answer = Answer::Received(Received {
        messages: vec![spec.answered(&emu, &params)],
        handles: receipt::Encoder::new("k"),
    });
    let xml = String::from_utf8(query::encode_answer("ReceiveMessage", &answer, "r")).unwrap();
    assert!(
        xml.contains("<Body>q&quot;u&apos;o&amp;t&lt;e&gt;s&#xD;\n\t\u{7f}é😀</Body>"),
        "{xml}"
    );
    assert!(
        xml.contains(
            "<Value><DataType>String.a&amp;b</DataType><StringValue>x&#xD;y</StringValue></Value>"
        ),
        "{xml}"
    );
    let json: Value = serde_json::from_slice(&json::encode_answer(&answer)).unwrap();
    assert_eq!(json["Messages"][0]["Body"], spec.body.as_str());
    assert_eq!(json["Messages"][0]["Attributes"]["SenderId"], "AID&");
}
