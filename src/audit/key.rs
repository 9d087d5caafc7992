//! Where a message's business key is read (pure): a plan's `key:` (docs/audit.md#keys), read
//! from a message as SQS hands it over — its body and its message attributes.
//!
//! A key is a pipeline of stages separated by `|`, each applied to what the one before gave:
//! - `order.id`, `items.0.sku`: a path of object keys (and list indexes) into JSON; applied to
//!   text, or to a JSON string, the text is read as JSON first, so a path goes through a JSON
//!   string (an SNS envelope's `Message.order.id`) without saying so;
//! - `.`: the value itself (the whole body of a raw-text body);
//! - `base64`: text (or a JSON string) decoded from base64, read as UTF-8;
//! - `attribute:NAME`, first only: start from the message attribute `NAME` instead of the body
//!   (a String or Number attribute's value, a Binary attribute's bytes as UTF-8).
//!
//! What the last stage gives is the key: text or a JSON string as it is, a JSON number as
//! written, trimmed (the ledger's lines are trimmed too); anything else, or nothing, is no key.
//! Without a `key:` the key is `business_key` (or `business_id`) at the top of a JSON body,
//! as the rest of sqsprobe reads it.

use std::collections::HashMap;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use serde_json::{Map, Value};

/// Where a message's business key is read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct KeySpec {
    /// The pipeline as written; `None` for the default (`business_key` at the top).
    written: Option<String>,
    /// The message attribute the pipeline starts from; `None`: the body.
    attribute: Option<String>,
    stages: Vec<Stage>,
}

/// One stage of a key's pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    /// Object keys and list indexes from the top; empty for `.`.
    Path(Vec<String>),
    Base64,
}

/// What a stage works on: text not yet read as JSON, or JSON.
enum At {
    Text(String),
    Json(Value),
}

impl KeySpec {
    /// Reads a `key:` as written: `Err((message, hint))` when it is not a pipeline.
    pub(crate) fn parse(written: &str) -> Result<KeySpec, (String, String)> {
        let bad = |what: String| {
            Err((
                what,
                "stages joined by `|`: a path such as `order.id`, `base64`, `.`, and first \
                 `attribute:NAME`; e.g. `Message.order.id` or `base64 | args.0`"
                    .to_string(),
            ))
        };
        let mut attribute = None;
        let mut stages = Vec::new();
        for (i, stage) in written.split('|').map(str::trim).enumerate() {
            if stage.is_empty() {
                return bad(format!("`{written}` has an empty stage"));
            }
            if let Some(name) = stage.strip_prefix("attribute:") {
                let name = name.trim();
                if i > 0 {
                    return bad(format!(
                        "`{stage}` comes after another stage; a key starts from an attribute"
                    ));
                }
                if name.is_empty() {
                    return bad(format!("`{stage}` names no attribute"));
                }
                attribute = Some(name.to_string());
                continue;
            }
            if stage == "base64" {
                stages.push(Stage::Base64);
                continue;
            }
            if stage == "." {
                stages.push(Stage::Path(Vec::new()));
                continue;
            }
            let path = stage.strip_prefix('.').unwrap_or(stage);
            let segments: Vec<String> = path.split('.').map(str::to_string).collect();
            if segments
                .iter()
                .any(|s| s.is_empty() || s.contains(char::is_whitespace))
            {
                return bad(format!("`{stage}` is not a path"));
            }
            stages.push(Stage::Path(segments));
        }
        Ok(KeySpec {
            written: Some(written.trim().to_string()),
            attribute,
            stages,
        })
    }

    /// The key as written, `business_key` for the default.
    pub(crate) fn written(&self) -> String {
        self.written
            .clone()
            .unwrap_or_else(|| "business_key".to_string())
    }

    /// The message attribute the key starts from, when it does.
    pub(crate) fn attribute(&self) -> Option<&str> {
        self.attribute.as_deref()
    }

    /// The business key of a message with `body` and `attributes` (the JSON shape of
    /// `MessageAttributes`: `{name: {DataType, StringValue | BinaryValue (base64)}}`).
    pub(crate) fn read(
        &self,
        body: &str,
        attributes: Option<&Map<String, Value>>,
    ) -> Option<String> {
        if self.written.is_none() {
            return sqsprobe_core::evidence::business_key(body);
        }
        let mut at = match &self.attribute {
            None => At::Text(body.to_string()),
            Some(name) => At::Text(attribute_text(attributes?.get(name)?)?),
        };
        for stage in &self.stages {
            at = match stage {
                Stage::Base64 => {
                    let text = match at {
                        At::Text(t) | At::Json(Value::String(t)) => t,
                        At::Json(_) => return None,
                    };
                    At::Text(from_base64(&text)?)
                }
                Stage::Path(segments) if segments.is_empty() => at,
                Stage::Path(segments) => {
                    let value = match at {
                        At::Text(t) | At::Json(Value::String(t)) => {
                            serde_json::from_str(&t).ok()?
                        }
                        At::Json(v) => v,
                    };
                    At::Json(walk(value, segments)?)
                }
            };
        }
        let key = match at {
            At::Text(t) | At::Json(Value::String(t)) => t,
            At::Json(Value::Number(n)) => n.to_string(),
            At::Json(_) => return None,
        };
        let key = key.trim();
        (!key.is_empty()).then(|| key.to_string())
    }
}

fn walk(mut value: Value, segments: &[String]) -> Option<Value> {
    for segment in segments {
        value = match value {
            // A JSON string on the way is read as JSON: a path through a JSON string.
            Value::String(s) => serde_json::from_str::<Value>(&s)
                .ok()
                .and_then(|v| step(v, segment))?,
            v => step(v, segment)?,
        };
    }
    Some(value)
}

fn step(value: Value, segment: &str) -> Option<Value> {
    match value {
        Value::Object(mut map) => map.remove(segment),
        Value::Array(mut items) => {
            let i = segment.parse::<usize>().ok()?;
            (i < items.len()).then(|| items.swap_remove(i))
        }
        _ => None,
    }
}

/// Base64 in any of its common alphabets, padded or not, as UTF-8 text.
fn from_base64(text: &str) -> Option<String> {
    let text = text.trim();
    let bytes = [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(text).ok())?;
    String::from_utf8(bytes).ok()
}

/// A message attribute's value as text: a String or Number attribute's value, a Binary one's
/// bytes as UTF-8.
fn attribute_text(value: &Value) -> Option<String> {
    if let Some(s) = value.get("StringValue").and_then(Value::as_str) {
        return Some(s.to_string());
    }
    let encoded = value.get("BinaryValue").and_then(Value::as_str)?;
    String::from_utf8(STANDARD.decode(encoded).ok()?).ok()
}

/// What a queue of a plan is to the audit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// The audit sends the plan's messages to it; the consumer consumes it.
    Source,
    /// A source queue's dead-letter queue.
    DeadLetter,
    /// The consumer forwards its work to it: a message it sends there is the commit of the
    /// key it carries.
    Output,
}

/// Each queue of a plan, by name (dead-letter queues too): where its messages hold the
/// business key, and its role.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeyMap(HashMap<String, (KeySpec, Role)>);

impl KeyMap {
    /// Adds queue `name`.
    pub(crate) fn insert(&mut self, name: String, spec: KeySpec, role: Role) {
        self.0.insert(name, (spec, role));
    }

    /// Queue `queue`'s entry (a name or an ARN or URL: its last segment is the name).
    pub(crate) fn of(&self, queue: Option<&str>) -> Option<&(KeySpec, Role)> {
        let name = queue.map(|q| q.rsplit([':', '/']).next().unwrap_or(q))?;
        self.0.get(name)
    }

    /// The business key of a message on `queue`, by that queue's key, else the default one.
    pub(crate) fn read(
        &self,
        queue: Option<&str>,
        body: &str,
        attributes: Option<&Map<String, Value>>,
    ) -> Option<String> {
        match self.of(queue) {
            Some((spec, _)) => spec.read(body, attributes),
            None => KeySpec::default().read(body, attributes),
        }
    }

    /// Whether some queue is an output queue (the consumer's forwards are its commits).
    pub(crate) fn has_output(&self) -> bool {
        self.0.values().any(|(_, role)| *role == Role::Output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(written: &str) -> KeySpec {
        KeySpec::parse(written).unwrap()
    }

    #[test]
    fn a_path_reads_strings_numbers_and_list_indexes() {
        let k = key("items.1.sku");
        assert_eq!(
            k.read(r#"{"items": [{"sku": "a"}, {"sku": 9}]}"#, None),
            Some("9".into())
        );
        assert_eq!(k.read(r#"{"items": []}"#, None), None);
        assert_eq!(k.read("not json", None), None);
        assert_eq!(
            key(".order.id").read(r#"{"order": {"id": "o-1"}}"#, None),
            Some("o-1".into())
        );
        assert_eq!(
            KeySpec::default().read(r#"{"business_id": "x"}"#, None),
            Some("x".into())
        );
        assert_eq!(KeySpec::default().written(), "business_key");
    }

    #[test]
    fn a_path_goes_through_a_json_string_as_in_an_sns_envelope() {
        let envelope = json!({
            "Type": "Notification",
            "Message": json!({"order": {"id": "o-7"}}).to_string(),
        })
        .to_string();
        assert_eq!(
            key("Message.order.id").read(&envelope, None),
            Some("o-7".into())
        );
        assert_eq!(
            key("Message | order.id").read(&envelope, None),
            Some("o-7".into())
        );
        // The whole inner text, when the notification carries plain text.
        let plain = json!({"Message": "o-8"}).to_string();
        assert_eq!(key("Message").read(&plain, None), Some("o-8".into()));
    }

    #[test]
    fn base64_layers_nest_as_celery_and_dramatiq_write_them() {
        let inner = STANDARD.encode(json!([["o-3"], {}, {}]).to_string());
        let body = STANDARD.encode(json!({"body": inner, "headers": {}}).to_string());
        assert_eq!(
            key("base64 | body | base64 | 0.0").read(&body, None),
            Some("o-3".into())
        );
        assert_eq!(
            key("base64").read(&URL_SAFE_NO_PAD.encode("k-1"), None),
            Some("k-1".into())
        );
        assert_eq!(key("base64 | x").read("%%% not base64", None), None);
        assert_eq!(key(".").read("  raw-1\n", None), Some("raw-1".into()));
        assert_eq!(key(".").read("   ", None), None);
    }

    #[test]
    fn an_attribute_starts_the_pipeline() {
        let attributes = json!({
            "OrderId": {"DataType": "String", "StringValue": "o-1"},
            "Seq": {"DataType": "Number", "StringValue": "12"},
            "Blob": {"DataType": "Binary", "BinaryValue": STANDARD.encode(r#"{"id": "o-2"}"#)},
        });
        let attributes = attributes.as_object();
        assert_eq!(
            key("attribute:OrderId").read("{}", attributes),
            Some("o-1".into())
        );
        assert_eq!(key("attribute:Seq").read("", attributes), Some("12".into()));
        assert_eq!(
            key("attribute:Blob | id").read("", attributes),
            Some("o-2".into())
        );
        assert_eq!(key("attribute:Missing").read("", attributes), None);
        assert_eq!(key("attribute:OrderId").read("", None), None);
        assert_eq!(key("attribute:OrderId").attribute(), Some("OrderId"));
    }

    #[test]
    fn a_pipeline_written_wrong_is_refused() {
        for bad in [
            "a || b",
            "a..b",
            "base64 | attribute:X",
            "attribute:",
            "a b",
        ] {
            assert!(KeySpec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn queues_are_found_by_name_arn_or_url() {
        let mut map = KeyMap::default();
        map.insert("orders".into(), key("order.id"), Role::Source);
        map.insert("out".into(), key("id"), Role::Output);
        let body = r#"{"order": {"id": "o-1"}, "business_key": "b"}"#;
        assert_eq!(
            map.read(Some("arn:aws:sqs:us-east-1:1:orders"), body, None),
            Some("o-1".into())
        );
        assert_eq!(
            map.read(Some("http://h/1/orders"), body, None),
            Some("o-1".into())
        );
        assert_eq!(map.read(Some("other"), body, None), Some("b".into()));
        assert_eq!(map.of(Some("out")).map(|e| e.1), Some(Role::Output));
        assert!(map.has_output());
    }
}
