//! The query protocol: form-encoded `Action=<Op>&Version=2012-11-05` in, XML out.
//!
//! Requests are decoded into the JSON protocol's parameter shape (`Attribute.1.Name` →
//! `Attributes`, `SendMessageBatchRequestEntry.1.Id` → `Entries[0].Id`, …) so every handler
//! serves both protocols; replies are rendered from the JSON shapes into AWS's XML shapes.
//!
//! Hostile input is bounded before anything is built from it: at most [`MAX_PAIRS`] pairs and
//! [`MAX_KEY_SEGMENTS`] dot-separated segments per key, else `InvalidParameterValue`. The
//! deepest key SQS defines has 6 segments
//! (`SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue`), and the largest
//! request (a 10-entry batch of messages with 10 attributes each) a few hundred pairs.
//!
//! A receive's messages are written straight to the reply ([`encode_answer`],
//! [`encode_json_answer`]), and a batch's entries to the XML reply, in the same bytes as
//! their `Value` form would be rendered.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::model::receipt::{self, Encoder};
use crate::ops::answer::{
    Answer, Received, ReceivedMessage, SystemValue, attribute_members, is_plain,
};
use crate::ops::batch::Batch;
use crate::protocol::json::{self, Maps};

use sqsprobe_facts::sqs::query_json::json_form_name;
use sqsprobe_facts::sqs::query_members::{self, Layout};

use crate::support::errors::SqsError;
use sqsprobe_facts::sqs::errors::QUEUE_DOES_NOT_EXIST;
use sqsprobe_facts::text::escape::{push_xml_text, xml_text};

/// Content type of query protocol replies.
pub(crate) const CONTENT_TYPE: &str = "text/xml";
const XMLNS: &str = "http://queue.amazonaws.com/doc/2012-11-05/";

/// Most `key=value` pairs in one request (URL query and body together).
pub(crate) const MAX_PAIRS: usize = 1_000;
/// Most dot-separated segments in one parameter name.
pub(crate) const MAX_KEY_SEGMENTS: usize = 16;

/// The form pairs of a request: its URL query, then (for POST) its body, refused past
/// [`MAX_PAIRS`] without reading further.
pub(crate) fn parse_pairs(
    uri_query: &str,
    body: Option<&[u8]>,
) -> Result<Vec<(String, String)>, SqsError> {
    let from_body = body.into_iter().flat_map(form_urlencoded::parse);
    let mut pairs = Vec::new();
    for (key, value) in form_urlencoded::parse(uri_query.as_bytes()).chain(from_body) {
        if pairs.len() == MAX_PAIRS {
            return Err(SqsError::invalid_parameter_value(format!(
                "The request has more than {MAX_PAIRS} parameters."
            )));
        }
        pairs.push((key.into_owned(), value.into_owned()));
    }
    Ok(pairs)
}

#[derive(Debug, Default)]
struct Node {
    value: Option<String>,
    children: BTreeMap<String, Node>,
}

impl Node {
    fn insert(&mut self, path: &[&str], value: String) {
        match path.split_first() {
            None => self.value = Some(value),
            Some((head, rest)) => self
                .children
                .entry((*head).to_owned())
                .or_default()
                .insert(rest, value),
        }
    }

    /// Numbered children become arrays (ordered by number), named ones objects.
    fn into_value(self) -> Value {
        if self.children.is_empty() {
            return Value::String(self.value.unwrap_or_default());
        }
        if self.children.keys().all(|k| k.parse::<u32>().is_ok()) {
            let mut items: Vec<(u32, Node)> = self
                .children
                .into_iter()
                .filter_map(|(k, v)| k.parse::<u32>().ok().map(|n| (n, v)))
                .collect();
            items.sort_by_key(|(n, _)| *n);
            return Value::Array(items.into_iter().map(|(_, n)| n.into_value()).collect());
        }
        Value::Object(
            self.children
                .into_iter()
                .map(|(k, v)| (k, v.into_value()))
                .collect(),
        )
    }
}

/// `[{Name: k, Value: v}, …]` (or `Key`/`Value`) → `{k: v}`, for the member the query
/// protocol calls `query`.
///
/// Every pair is applied or the request is refused: a write that answers 200 and applies
/// nothing would tell its caller a lie. So a numbered pair without its key
/// (`Attribute.1.Value=5` alone) is `MissingParameter`, and a member in no form SQS defines
/// (`Attribute=5`) is refused as a value of the wrong type, as the JSON protocol refuses
/// `"Attributes": "5"`. The unindexed single pair (`Attribute.Name=X&Attribute.Value=Y`) is
/// the form of the query API's early versions, which real SQS took from clients still
/// sending it (boto 2's `set_queue_attribute`, run by its integration suite against SQS):
/// it is one pair. An empty value (`Attribute=`) is an empty map, as botocore writes an empty
/// collection.
fn pairs_to_map(value: Value, key_field: &str, query: &str) -> Result<Value, SqsError> {
    let items = match value {
        Value::Array(items) => items,
        Value::Object(fields)
            if fields.contains_key(key_field)
                && fields.keys().all(|k| k == key_field || k == "Value") =>
        {
            vec![Value::Object(fields)]
        }
        Value::String(s) if s.is_empty() => Vec::new(),
        _ => {
            return Err(SqsError::serialization(format!(
                "Unexpected value type for parameter {query}."
            )));
        }
    };
    let mut out = Map::new();
    for (n, item) in items.into_iter().enumerate() {
        let missing = || SqsError::missing_parameter(&format!("{query}.{}.{key_field}", n + 1));
        let Value::Object(mut fields) = item else {
            return Err(missing());
        };
        let Some(Value::String(key)) = fields.remove(key_field) else {
            return Err(missing());
        };
        out.insert(key, fields.remove("Value").unwrap_or(Value::Null));
    }
    Ok(Value::Object(out))
}

/// Renames query parameter names to the JSON protocol's members ([`query_members::REQUEST`]),
/// recursively for the structures in a list (batch entries).
///
/// A list member given once without an index (`AttributeName=All`, `AWSAccountId=…`,
/// `ActionName=…`) is a list of that one item: the early query API's unindexed form, which
/// real SQS took from boto 2 (`get_queue_attributes`, `add_permission`, run against SQS by
/// its integration suite).
fn normalize(map: Map<String, Value>) -> Result<Map<String, Value>, SqsError> {
    let mut out = Map::new();
    for (key, value) in map {
        let (key, value) = match query_members::request_by_query(&key) {
            Some(member) => {
                let value = match (member.layout, value) {
                    (Layout::Map { key, .. }, value) => pairs_to_map(value, key, member.query)?,
                    (Layout::List, Value::Array(items)) => Value::Array(
                        items
                            .into_iter()
                            .map(|item| match item {
                                Value::Object(m) => normalize(m).map(Value::Object),
                                other => Ok(other),
                            })
                            .collect::<Result<_, _>>()?,
                    ),
                    // Batch entries that are not numbered are no entries (EmptyBatchRequest).
                    (Layout::List, _) if member.json == "Entries" => Value::Array(Vec::new()),
                    (Layout::List, Value::String(one)) if !one.is_empty() => {
                        Value::Array(vec![Value::String(one)])
                    }
                    (Layout::List, other) => other,
                };
                (member.json.to_owned(), value)
            }
            None => (key, value),
        };
        // botocore sends an empty list as `Name=`: an empty list, not a string (AWS reads
        // `SendMessageBatchRequestEntry=` as no entries, `MessageAttributeName=` as no filter).
        let value = match value {
            Value::String(s) if s.is_empty() && query_members::request_is_list(&key) => {
                Value::Array(Vec::new())
            }
            other => other,
        };
        out.insert(key, value);
    }
    Ok(out)
}

/// Decodes form pairs into (Action, parameters).
pub(crate) fn decode(
    pairs: Vec<(String, String)>,
) -> Result<(Option<String>, Map<String, Value>), SqsError> {
    if pairs.len() > MAX_PAIRS {
        return Err(SqsError::invalid_parameter_value(format!(
            "The request has more than {MAX_PAIRS} parameters."
        )));
    }
    let mut root = Node::default();
    let mut action = None;
    for (key, value) in pairs {
        match key.as_str() {
            "Action" => action = Some(value),
            "Version" | "Signature" | "SignatureMethod" | "SignatureVersion" | "Timestamp"
            | "Expires" | "AWSAccessKeyId" => {}
            _ if key.starts_with("X-Amz-") => {}
            _ => {
                let path: Vec<&str> = key.split('.').take(MAX_KEY_SEGMENTS + 1).collect();
                if path.len() > MAX_KEY_SEGMENTS {
                    let shown: String = key.chars().take(64).collect();
                    return Err(SqsError::invalid_parameter_value(format!(
                        "Parameter name {shown}… has more than {MAX_KEY_SEGMENTS} segments."
                    )));
                }
                root.insert(&path, value);
            }
        }
    }
    let params = match root.into_value() {
        Value::Object(map) => normalize(map)?,
        _ => Map::new(),
    };
    Ok((action, params))
}

fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => xml_text(s),
        Value::Null => String::new(),
        other => xml_text(&other.to_string()),
    }
}

fn element(out: &mut String, name: &str, inner: &str) {
    out.push('<');
    out.push_str(name);
    out.push('>');
    out.push_str(inner);
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

/// Renders a JSON result object as the children of a `<…Result>` element, members renamed
/// and flattened as [`query_members::REPLY`] says.
fn render_object(out: &mut String, operation: &str, map: &Map<String, Value>) {
    for (key, value) in map {
        let member = query_members::reply_by_json(operation, key);
        match (member.map(|m| (m.query, m.layout)), value) {
            (Some((name, Layout::Map { key, structured })), Value::Object(pairs)) => {
                for (k, v) in pairs {
                    let mut inner = String::new();
                    element(&mut inner, key, &xml_text(k));
                    let mut value = String::new();
                    match v {
                        Value::Object(fields) if structured => {
                            render_object(&mut value, operation, fields)
                        }
                        _ if structured => {}
                        other => value.push_str(&scalar(other)),
                    }
                    element(&mut inner, "Value", &value);
                    element(out, name, &inner);
                }
            }
            (renamed, Value::Array(items)) => {
                let name = match renamed {
                    Some((name, Layout::List)) => name,
                    _ => key.as_str(),
                };
                for item in items {
                    let mut inner = String::new();
                    match item {
                        Value::Object(m) => render_object(&mut inner, operation, m),
                        other => inner.push_str(&scalar(other)),
                    }
                    element(out, name, &inner);
                }
            }
            (_, Value::Object(m)) => {
                let mut inner = String::new();
                render_object(&mut inner, operation, m);
                element(out, key, &inner);
            }
            (_, v) => element(out, key, &scalar(v)),
        }
    }
}

/// Whether `operation`'s query reply has a `<…Result>` element: not when its answer has no
/// members ([`sqsprobe_facts::sqs::operations::Operation::has_output`]).
fn has_result(operation: &str) -> bool {
    !sqsprobe_facts::sqs::operations::has_no_output(operation)
}

/// A successful reply body.
pub(crate) fn encode(operation: &str, value: &Value, request_id: &str) -> String {
    let mut inner = String::new();
    if let Value::Object(map) = value {
        render_object(&mut inner, operation, map);
    }
    envelope(operation, request_id, &inner)
}

/// The reply document around a result's children (`inner`), empty or not.
fn envelope(operation: &str, request_id: &str, inner: &str) -> String {
    let mut out = String::with_capacity(inner.len() + 2 * operation.len() + 200);
    out.push_str("<?xml version=\"1.0\"?><");
    out.push_str(operation);
    out.push_str("Response xmlns=\"");
    out.push_str(XMLNS);
    out.push_str("\">");
    if has_result(operation) {
        out.push('<');
        out.push_str(operation);
        if inner.is_empty() {
            out.push_str("Result/>");
        } else {
            out.push_str("Result>");
            out.push_str(inner);
            out.push_str("</");
            out.push_str(operation);
            out.push_str("Result>");
        }
    }
    out.push_str("<ResponseMetadata><RequestId>");
    push_xml_text(&mut out, request_id);
    out.push_str("</RequestId></ResponseMetadata></");
    out.push_str(operation);
    out.push_str("Response>");
    out
}

/// A successful reply body, in whichever form the operation answered.
pub(crate) fn encode_answer(operation: &str, answer: &Answer, request_id: &str) -> Vec<u8> {
    match answer {
        Answer::Value(value) => encode(operation, value, request_id).into_bytes(),
        Answer::Sent(sent) => {
            encode(operation, &Value::Object(sent.to_map()), request_id).into_bytes()
        }
        Answer::Batch(batch) => {
            let mut inner =
                String::with_capacity(300 * batch.successful.len() + 200 * batch.failed.len());
            write_batch(&mut inner, operation, batch);
            envelope(operation, request_id, &inner).into_bytes()
        }
        Answer::Received(Received { messages, handles }) => {
            let mut inner = String::with_capacity(
                messages
                    .iter()
                    .map(|m| json::estimated_len(m, handles))
                    .sum::<usize>()
                    * 5
                    / 4,
            );
            for message in messages {
                write_message(&mut inner, operation, message, handles);
            }
            envelope(operation, request_id, &inner).into_bytes()
        }
    }
}

/// The query name of `operation`'s reply member `json` and, for a map, its pairs' key member;
/// the JSON name itself for a member the table does not rename.
fn reply_names(operation: &str, json: &'static str) -> (&'static str, &'static str) {
    match query_members::reply_by_json(operation, json) {
        Some(member) => match member.layout {
            Layout::Map { key, .. } => (member.query, key),
            Layout::List => (member.query, "Name"),
        },
        None => (json, "Name"),
    }
}

/// `<name>` + `text` escaped + `</name>`.
fn text_element(out: &mut String, name: &str, text: &str) {
    out.push('<');
    out.push_str(name);
    out.push('>');
    push_xml_text(out, text);
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

/// `<name>` + `text` + `</name>`, for text that needs no escaping ([`is_plain`]).
fn plain_element(out: &mut String, name: &str, text: &str) {
    plain_element_of(out, name, &[text]);
}

/// [`plain_element`] of text given in parts (a receipt handle's head and numbers).
fn plain_element_of(out: &mut String, name: &str, parts: &[&str]) {
    out.push('<');
    out.push_str(name);
    out.push('>');
    for text in parts {
        debug_assert!(is_plain(text));
        out.push_str(text);
    }
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

/// One map entry: `<name><key>…</key><Value>` + the value + `</Value></name>`.
fn pair_element(
    out: &mut String,
    (name, key): (&str, &str),
    entry: &str,
    value: impl FnOnce(&mut String),
) {
    out.push('<');
    out.push_str(name);
    out.push('>');
    text_element(out, key, entry);
    out.push_str("<Value>");
    value(out);
    out.push_str("</Value></");
    out.push_str(name);
    out.push('>');
}

/// One received message as [`render_object`] renders its `Value` form: members in byte order
/// of their JSON names, maps flattened as [`query_members::REPLY`] says.
fn write_message(out: &mut String, operation: &str, message: &ReceivedMessage, handles: &Encoder) {
    let (element, _) = reply_names(operation, "Messages");
    out.push('<');
    out.push_str(element);
    out.push('>');
    if !message.attributes.is_empty() {
        let names = reply_names(operation, "Attributes");
        for (name, value) in &message.attributes {
            pair_element(out, names, name, |out| match value {
                SystemValue::Number(n) => out.push_str(itoa::Buffer::new().format(*n)),
                SystemValue::Text(text) => push_xml_text(out, text),
            });
        }
    }
    text_element(out, "Body", message.body());
    let md5 = message.md5_of_body();
    plain_element(
        out,
        "MD5OfBody",
        std::str::from_utf8(&md5).unwrap_or_default(),
    );
    if let Some(md5) = message.md5_of_message_attributes() {
        text_element(out, "MD5OfMessageAttributes", md5);
        let names = reply_names(operation, "MessageAttributes");
        for (name, value) in message.message_attributes() {
            pair_element(out, names, name, |out| {
                for (member, text) in attribute_members(value) {
                    if let Some(text) = text {
                        text_element(out, member, &text);
                    }
                }
            });
        }
    }
    plain_element(out, "MessageId", &message.message_id());
    let numbers = message.handle_numbers();
    plain_element_of(
        out,
        "ReceiptHandle",
        &[handles.head(), receipt::numbers_text(&numbers)],
    );
    out.push_str("</");
    out.push_str(element);
    out.push('>');
}

/// The element `operation`'s reply list `json` is written as, as [`render_object`] names it:
/// its query name when the table lists it as a list, else the JSON name.
fn list_element<'a>(operation: &str, json: &'a str) -> &'a str {
    match query_members::reply_by_json(operation, json) {
        Some(member) if member.layout == Layout::List => member.query,
        _ => json,
    }
}

/// A batch's answer as [`render_object`] renders [`Batch::to_value`]: `Failed` before
/// `Successful` (byte order of their JSON names), each entry's members in byte order.
fn write_batch(out: &mut String, operation: &str, batch: &Batch) {
    if !batch.failed.is_empty() {
        let element = list_element(operation, "Failed");
        for (id, error) in &batch.failed {
            out.push('<');
            out.push_str(element);
            out.push('>');
            text_element(out, "Code", error.code());
            text_element(out, "Id", id);
            text_element(out, "Message", &error.message);
            out.push_str(if error.sender_fault() {
                "<SenderFault>true</SenderFault></"
            } else {
                "<SenderFault>false</SenderFault></"
            });
            out.push_str(element);
            out.push('>');
        }
    }
    if !batch.successful.is_empty() {
        let element = list_element(operation, "Successful");
        for entry in &batch.successful {
            out.push('<');
            out.push_str(element);
            out.push('>');
            text_element(out, "Id", &entry.id);
            if let Some(sent) = &entry.sent {
                let plain = |out: &mut String, name: &str, text: &[u8]| {
                    plain_element(out, name, std::str::from_utf8(text).unwrap_or_default());
                };
                if let Some(md5) = &sent.md5_of_message_attributes {
                    text_element(out, "MD5OfMessageAttributes", md5);
                }
                plain(out, "MD5OfMessageBody", &sent.md5_of_body);
                if let Some(md5) = &sent.md5_of_message_system_attributes {
                    text_element(out, "MD5OfMessageSystemAttributes", md5);
                }
                plain(out, "MessageId", &sent.message_id);
                if let Some(n) = &sent.sequence_number {
                    text_element(out, "SequenceNumber", n);
                }
            }
            out.push_str("</");
            out.push_str(element);
            out.push('>');
        }
    }
}

/// Content type of query replies in their JSON form.
pub(crate) const JSON_CONTENT_TYPE: &str = "application/json";

/// A result's members in the query protocol's JSON form: the XML form's structure with the
/// API's member names, maps as `[{Name, Value}]` (`[{Key, Value}]` for tags: the key member
/// of [`query_members::REPLY`]).
fn json_members(operation: &str, value: &Value) -> Value {
    let Value::Object(map) = value else {
        return value.clone();
    };
    let pairs = |attrs: &Map<String, Value>, key: &str| {
        Value::Array(
            attrs
                .iter()
                .map(|(k, v)| {
                    let mut entry = Map::new();
                    entry.insert(key.to_owned(), Value::String(k.clone()));
                    entry.insert("Value".to_owned(), json_members(operation, v));
                    Value::Object(entry)
                })
                .collect(),
        )
    };
    let out = map
        .iter()
        .map(|(k, v)| {
            let layout = query_members::reply_by_json(operation, k).map(|m| m.layout);
            let converted = match (layout, v) {
                (Some(Layout::Map { key, .. }), Value::Object(attrs)) => pairs(attrs, key),
                (_, Value::Array(items)) => Value::Array(
                    items
                        .iter()
                        .map(|item| json_members(operation, item))
                        .collect(),
                ),
                (_, other) => json_members(operation, other),
            };
            (k.clone(), converted)
        })
        .collect();
    Value::Object(out)
}

/// A successful reply in the JSON form AWS answers a query request that accepts
/// `application/json` (LocalStack AWS-validated `test_get_queue_attributes_json_format`):
/// `{"<Op>Response": {"<Op>Result": …, "ResponseMetadata": {"RequestId": …}}}`, the lists the
/// JSON form renames under its names (`ReceiveMessageResult.messages`: [`json_form_name`]).
pub(crate) fn encode_json(operation: &str, value: &Value, request_id: &str) -> Vec<u8> {
    let mut response = Map::new();
    if has_result(operation) {
        let mut result = json_members(operation, value);
        if let Value::Object(members) = &mut result {
            *members = std::mem::take(members)
                .into_iter()
                .map(|(k, v)| (json_form_name(operation, &k).to_owned(), v))
                .collect();
        }
        response.insert(format!("{operation}Result"), result);
    }
    response.insert(
        "ResponseMetadata".into(),
        serde_json::json!({ "RequestId": request_id }),
    );
    serde_json::json!({ format!("{operation}Response"): response })
        .to_string()
        .into_bytes()
}

/// A successful reply in the JSON form ([`encode_json`]), in whichever form the operation
/// answered.
pub(crate) fn encode_json_answer(operation: &str, answer: &Answer, request_id: &str) -> Vec<u8> {
    let Received { messages, handles } = match answer {
        Answer::Value(value) => return encode_json(operation, value, request_id),
        Answer::Sent(sent) => {
            return encode_json(operation, &Value::Object(sent.to_map()), request_id);
        }
        Answer::Batch(batch) => return encode_json(operation, &batch.to_value(), request_id),
        Answer::Received(received) => received,
    };
    let result = format!("{operation}Result");
    let mut out = Vec::with_capacity(
        messages
            .iter()
            .map(|m| json::estimated_len(m, handles))
            .sum::<usize>()
            + 2 * result.len()
            + 100,
    );
    let write_result = |out: &mut Vec<u8>| {
        let _ = serde_json::to_writer(&mut *out, &result);
        out.extend_from_slice(b":{");
        if !messages.is_empty() {
            let _ = serde_json::to_writer(&mut *out, json_form_name(operation, "Messages"));
            out.extend_from_slice(b":[");
            let maps = Maps::Pairs {
                attributes: reply_names(operation, "Attributes").1,
                message_attributes: reply_names(operation, "MessageAttributes").1,
            };
            for (i, message) in messages.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                json::write_message(out, message, handles, maps);
            }
            out.push(b']');
        }
        out.push(b'}');
    };
    let write_metadata = |out: &mut Vec<u8>| {
        out.extend_from_slice(b"\"ResponseMetadata\":{\"RequestId\":");
        let _ = serde_json::to_writer(&mut *out, request_id);
        out.push(b'}');
    };
    out.push(b'{');
    let _ = serde_json::to_writer(&mut out, &format!("{operation}Response"));
    out.extend_from_slice(b":{");
    // A JSON object's keys are written in byte order, as `encode_json`'s `Value` writes them.
    if has_result(operation) && result.as_str() < "ResponseMetadata" {
        write_result(&mut out);
        out.push(b',');
        write_metadata(&mut out);
    } else {
        write_metadata(&mut out);
        if has_result(operation) {
            out.push(b',');
            write_result(&mut out);
        }
    }
    out.extend_from_slice(b"}}");
    out
}

/// An error in the JSON form (LocalStack AWS-validated `test_get_list_queues_fails_json_format`).
pub(crate) fn encode_json_error(error: &SqsError, request_id: &str) -> Vec<u8> {
    serde_json::json!({
        "Error": {
            "Type": error.spec.fault(),
            "Code": error.code(),
            "Message": query_message(error),
        },
        "RequestId": request_id,
    })
    .to_string()
    .into_bytes()
}

/// The error message as the query protocol words it.
fn query_message(error: &SqsError) -> String {
    // The query protocol words this one differently (SNAP-2023 `queue-does-not-exist-query`).
    if error.spec == &QUEUE_DOES_NOT_EXIST {
        "The specified queue does not exist for this wsdl version.".to_owned()
    } else {
        error.message.clone()
    }
}

/// The 404 AWS answers a GET of a queue URL without an `Action`, in XML whatever the request
/// accepts (LocalStack AWS-validated `test_get_without_query_returns_unknown_operation`,
/// `test_get_without_query_json_format_returns_returns_xml`).
pub(crate) fn unknown_operation_body() -> &'static str {
    "<?xml version=\"1.0\"?><UnknownOperationException/>"
}

/// An error reply body.
pub(crate) fn encode_error(error: &SqsError, request_id: &str) -> String {
    let message = query_message(error);
    let fault = error.spec.fault();
    format!(
        "<?xml version=\"1.0\"?><ErrorResponse xmlns=\"{XMLNS}\"><Error><Type>{fault}</Type><Code>{}</Code><Message>{}</Message><Detail/></Error><RequestId>{}</RequestId></ErrorResponse>",
        xml_text(error.code()),
        xml_text(&message),
        xml_text(request_id)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::pairs;
    use serde_json::json;

    #[test]
    fn decodes_attributes_and_entries() {
        let (action, params) = decode(pairs(&[
            ("Action", "SendMessageBatch"),
            ("QueueUrl", "http://h/0/q"),
            ("SendMessageBatchRequestEntry.2.Id", "b"),
            ("SendMessageBatchRequestEntry.1.Id", "a"),
            ("SendMessageBatchRequestEntry.1.MessageBody", "x"),
            (
                "SendMessageBatchRequestEntry.1.MessageAttribute.1.Name",
                "Help.Me",
            ),
            (
                "SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType",
                "String",
            ),
            (
                "SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue",
                "v",
            ),
            ("Attribute.1.Name", "DelaySeconds"),
            ("Attribute.1.Value", "5"),
            ("AttributeName.1", "All"),
        ]))
        .unwrap();
        assert_eq!(action.as_deref(), Some("SendMessageBatch"));
        assert_eq!(params["Entries"][0]["Id"], "a");
        assert_eq!(params["Entries"][1]["Id"], "b");
        assert_eq!(
            params["Entries"][0]["MessageAttributes"]["Help.Me"]["StringValue"],
            "v"
        );
        assert_eq!(params["Attributes"]["DelaySeconds"], "5");
        assert_eq!(params["AttributeNames"], json!(["All"]));
    }

    #[test]
    fn deep_keys_and_many_pairs_are_refused() {
        let deep = vec!["a"; 5000].join(".");
        let err = decode(pairs(&[("Action", "ListQueues"), (&deep, "1")])).unwrap_err();
        assert_eq!(err.code(), "InvalidParameterValue");
        assert!(err.message.contains("more than 16 segments"), "{err}");
        assert!(
            err.message.len() < 200,
            "the key is not echoed whole: {err}"
        );
        let ok = vec!["a"; MAX_KEY_SEGMENTS].join(".");
        assert!(decode(pairs(&[(&ok, "1")])).is_ok());

        let body = "a=1&".repeat(MAX_PAIRS);
        assert_eq!(parse_pairs("Action=ListQueues", None).unwrap().len(), 1);
        assert_eq!(
            parse_pairs("", Some(body.as_bytes())).unwrap().len(),
            MAX_PAIRS
        );
        let err = parse_pairs("Action=ListQueues", Some(body.as_bytes())).unwrap_err();
        assert!(err.message.contains("more than 1000 parameters"), "{err}");
        let many: Vec<(String, String)> = (0..=MAX_PAIRS)
            .map(|i| (format!("k{i}"), String::new()))
            .collect();
        assert!(decode(many).is_err());
    }

    #[test]
    fn the_json_form_names_receive_messages_in_lower_case_with_bodies_intact() {
        let body = "ba\rr \"q\" &quot; &";
        let out = encode_json(
            "ReceiveMessage",
            &json!({"Messages": [{"Body": body, "Attributes": {"SenderId": "x"}}]}),
            "rid",
        );
        let doc: Value = serde_json::from_slice(&out).unwrap();
        let result = &doc["ReceiveMessageResponse"]["ReceiveMessageResult"];
        assert_eq!(result["messages"][0]["Body"], body);
        assert_eq!(
            result["messages"][0]["Attributes"],
            json!([{"Name": "SenderId", "Value": "x"}])
        );
        assert!(result.get("Messages").is_none(), "{doc}");
        let out = encode_json("ListQueues", &json!({"QueueUrls": ["u"]}), "rid");
        let doc: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            doc["ListQueuesResponse"]["ListQueuesResult"]["queueUrls"],
            json!(["u"])
        );
    }

    #[test]
    fn renders_shapes_and_escapes() {
        let xml = encode(
            "ReceiveMessage",
            &json!({"Messages": [{"Body": "<&>", "Attributes": {"SenderId": "x"}}]}),
            "rid",
        );
        assert!(xml.contains("<ReceiveMessageResult><Message><Attribute><Name>SenderId</Name><Value>x</Value></Attribute><Body>&lt;&amp;&gt;</Body></Message></ReceiveMessageResult>"));
        let xml = encode("ReceiveMessage", &json!({}), "rid");
        assert!(xml.contains("<ReceiveMessageResult/>"));
        let xml = encode("DeleteQueue", &json!({}), "rid");
        assert!(!xml.contains("Result"));
        let err = encode_error(&SqsError::non_existent_queue(), "rid");
        assert!(err.contains("<Code>AWS.SimpleQueueService.NonExistentQueue</Code>"));
        assert!(err.contains("for this wsdl version."));
    }
}
