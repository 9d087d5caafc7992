//! What a plan's messages look like (pure): templates, bodies (text, base64 of a rendered
//! body, an SNS notification envelope), message attributes, and FIFO group and
//! deduplication ids, rendered for message `i` of a queue (docs/audit.md#message-shapes).
//!
//! Rendering is deterministic: the same plan gives the same messages, byte for byte, so a
//! seeded audit is repeated exactly (an SNS envelope's MessageId and Timestamp included).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

/// The values a template's placeholders stand for in one message.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Vars<'a> {
    /// `{key}`: the message's business key as the plan assigns it.
    pub key: &'a str,
    /// `{seq}`: its number on its queue, from 1.
    pub seq: u32,
    /// `{group}`: `seq` modulo the queue's `groups`.
    pub group: u32,
}

/// A template: text with `{key}`, `{seq}` and `{group}` standing for the message's values;
/// every other character, braces included, is itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template(pub String);

impl Template {
    pub(crate) fn render(&self, v: &Vars<'_>) -> String {
        self.0
            .replace("{key}", v.key)
            .replace("{seq}", &v.seq.to_string())
            .replace("{group}", &v.group.to_string())
    }
}

/// A message body: a template, or a layer around another body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Body {
    Text(Template),
    /// The inner body's text, base64-encoded (standard alphabet, padded).
    Base64(Box<Body>),
    /// An SNS notification envelope whose `Message` is the inner body's text, as SNS delivers
    /// to a subscribed queue without raw message delivery.
    Sns(Box<Body>),
}

/// The topic an SNS envelope names as its sender.
pub(crate) const SNS_TOPIC_ARN: &str = "arn:aws:sns:us-east-1:000000000000:sqsprobe-audit";

/// An SNS envelope's `Timestamp`: fixed, so that a plan renders the same bytes every time.
const SNS_TIMESTAMP: &str = "2026-01-01T00:00:00.000Z";

impl Body {
    /// Message `v.seq`'s body on queue `queue`.
    pub(crate) fn render(&self, queue: &str, v: &Vars<'_>) -> String {
        match self {
            Body::Text(t) => t.render(v),
            Body::Base64(inner) => STANDARD.encode(inner.render(queue, v)),
            Body::Sns(inner) => sns_envelope(queue, v.seq, &inner.render(queue, v)),
        }
    }

    /// How the body is layered, outermost first (`sns(base64(text))`), for the evidence.
    pub(crate) fn shape(&self) -> String {
        match self {
            Body::Text(_) => "text".to_string(),
            Body::Base64(inner) => format!("base64({})", inner.shape()),
            Body::Sns(inner) => format!("sns({})", inner.shape()),
        }
    }
}

/// An SNS notification as it arrives in a subscribed queue: the JSON document of AWS's
/// "HTTP/HTTPS notification JSON format" (Type, MessageId, TopicArn, Message, Timestamp,
/// SignatureVersion, Signature, SigningCertURL, UnsubscribeURL). The signature is a
/// placeholder: the audit is no SNS, and a consumer that verifies signatures needs its own
/// test of that.
fn sns_envelope(queue: &str, seq: u32, message: &str) -> String {
    let id = format!(
        "{:08x}-0000-4000-8000-{:012x}",
        fnv1a(queue.as_bytes()),
        seq
    );
    let mut map = Map::new();
    let mut put = |k: &str, v: String| {
        map.insert(k.to_string(), Value::String(v));
    };
    put("Type", "Notification".into());
    put("MessageId", id.clone());
    put("TopicArn", SNS_TOPIC_ARN.into());
    put("Message", message.into());
    put("Timestamp", SNS_TIMESTAMP.into());
    put("SignatureVersion", "1".into());
    put("Signature", STANDARD.encode(format!("sqsprobe-audit-{id}")));
    put(
        "SigningCertURL",
        "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-sqsprobe.pem".into(),
    );
    put(
        "UnsubscribeURL",
        format!(
            "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn={SNS_TOPIC_ARN}:{id}"
        ),
    );
    Value::Object(map).to_string()
}

/// A small stable hash (FNV-1a, 32 bits): the same queue name, the same envelope ids.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// One message attribute of a plan: its name, its SQS data type as written (`String`,
/// `Number`, `Binary`, each optionally with a custom label: `Number.int`), and its value's
/// template (for Binary, the rendered text's bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AttributePlan {
    pub name: String,
    pub data_type: String,
    pub value: Template,
}

impl AttributePlan {
    /// The data type without its custom label: `String`, `Number` or `Binary`.
    pub(crate) fn base_type(&self) -> &str {
        self.data_type
            .split_once('.')
            .map_or(self.data_type.as_str(), |(base, _)| base)
    }
}

/// A rendered attribute value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AttributeValue {
    Text(String),
    Bytes(Vec<u8>),
}

/// One message of a plan, rendered: what the audit sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Planned {
    /// The business key the plan assigns it (`{key}`).
    pub key: String,
    pub body: String,
    /// Name, data type, value.
    pub attributes: Vec<(String, String, AttributeValue)>,
    pub group_id: Option<String>,
    pub deduplication_id: Option<String>,
}

impl Planned {
    /// The attributes in the JSON shape of `MessageAttributes`, as the emulator's observer
    /// and a key's `attribute:` stage read them; `None` when there are none.
    pub(crate) fn attributes_json(&self) -> Option<Map<String, Value>> {
        if self.attributes.is_empty() {
            return None;
        }
        let mut map = Map::new();
        for (name, data_type, value) in &self.attributes {
            let mut v = Map::new();
            v.insert("DataType".into(), Value::String(data_type.clone()));
            match value {
                AttributeValue::Text(s) => v.insert("StringValue".into(), Value::String(s.clone())),
                AttributeValue::Bytes(b) => {
                    v.insert("BinaryValue".into(), Value::String(STANDARD.encode(b)))
                }
            };
            map.insert(name.clone(), Value::Object(v));
        }
        Some(map)
    }
}

/// Whether `id` is a valid MessageGroupId or MessageDeduplicationId: 1 to 128 alphanumeric
/// or punctuation characters (API_SendMessage).
pub(crate) fn valid_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c.is_ascii_punctuation())
}

/// Why a message attribute's name is not one SQS takes, if it is not (the rules of
/// SendMessage's `MessageAttribute.N.Name`: up to 256 characters of letters, digits, `_`, `-`
/// and `.`; no `AWS.` or `Amazon.` prefix; not starting or ending with `.`; no `..`).
pub(crate) fn attribute_name_problem(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    if name.is_empty() || name.len() > 256 {
        Some("1 to 256 characters")
    } else if lower.starts_with("aws.") || lower.starts_with("amazon.") {
        Some("`AWS.` and `Amazon.` are reserved prefixes")
    } else if name.starts_with('.') || name.ends_with('.') || name.contains("..") {
        Some("no `.` at either end, and no `..`")
    } else if !name
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        Some("letters, digits, `_`, `-` and `.` only")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::key::KeySpec;

    fn vars(key: &str, seq: u32) -> Vars<'_> {
        Vars {
            key,
            seq,
            group: seq % 3,
        }
    }

    #[test]
    fn templates_fill_key_seq_and_group_and_keep_other_braces() {
        let t = Template(r#"{"id": "{key}", "n": {seq}, "g": {group}, "x": {}}"#.into());
        assert_eq!(
            t.render(&vars("b-4", 4)),
            r#"{"id": "b-4", "n": 4, "g": 1, "x": {}}"#
        );
    }

    #[test]
    fn layered_bodies_render_and_read_back() {
        let text = Body::Text(Template(r#"{"order": {"id": "{key}"}}"#.into()));
        let sns = Body::Sns(Box::new(text.clone()));
        let body = sns.render("orders", &vars("o-5", 5));
        let envelope: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(envelope["Type"], "Notification");
        assert_eq!(envelope["TopicArn"], SNS_TOPIC_ARN);
        assert!(
            envelope["MessageId"]
                .as_str()
                .unwrap()
                .ends_with("000000000005")
        );
        let key = KeySpec::parse("Message.order.id").unwrap();
        assert_eq!(key.read(&body, None), Some("o-5".into()));
        // The same plan, the same bytes.
        assert_eq!(body, sns.render("orders", &vars("o-5", 5)));
        assert_ne!(body, sns.render("returns", &vars("o-5", 5)));

        let b64 = Body::Base64(Box::new(sns));
        assert_eq!(b64.shape(), "base64(sns(text))");
        let body = b64.render("orders", &vars("o-6", 6));
        let key = KeySpec::parse("base64 | Message.order.id").unwrap();
        assert_eq!(key.read(&body, None), Some("o-6".into()));
    }

    #[test]
    fn attributes_take_the_json_shape_the_emulator_reports() {
        let planned = Planned {
            key: "b-1".into(),
            body: "x".into(),
            attributes: vec![
                (
                    "Id".into(),
                    "String".into(),
                    AttributeValue::Text("b-1".into()),
                ),
                (
                    "Raw".into(),
                    "Binary.gz".into(),
                    AttributeValue::Bytes(b"b-1".to_vec()),
                ),
            ],
            group_id: None,
            deduplication_id: None,
        };
        let json = planned.attributes_json().unwrap();
        assert_eq!(json["Id"]["StringValue"], "b-1");
        assert_eq!(json["Raw"]["BinaryValue"], STANDARD.encode("b-1"));
        let key = KeySpec::parse("attribute:Raw").unwrap();
        assert_eq!(key.read("x", Some(&json)), Some("b-1".into()));
    }

    #[test]
    fn ids_and_attribute_names_follow_sqs() {
        assert!(valid_id("g-1") && valid_id("a!b#c") && !valid_id("") && !valid_id("a b"));
        assert!(!valid_id(&"x".repeat(129)));
        assert_eq!(attribute_name_problem("Order.Id"), None);
        assert!(attribute_name_problem("AWS.x").is_some());
        assert!(attribute_name_problem("a..b").is_some());
        assert!(attribute_name_problem("a b").is_some());
    }
}
