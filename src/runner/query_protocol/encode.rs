//! AWS JSON 1.0 request body → query protocol form body.
//!
//! The JSON members are renamed to the query protocol's names (the `locationName`s of the
//! SQS query model: `Attributes` → `Attribute.N.Name`/`.Value`, `Entries` →
//! `<Op>RequestEntry.N.*`, …); lists number their items from 1, nested structures join
//! their path with dots. An empty list is sent as its member name with an empty value
//! (`Entries=`, `MessageAttributeNames=`), as botocore's query serializer sends it ("The query
//! protocol serializes empty lists"): the item name is only known once there is an item.

use serde_json::{Map, Value};
use sqsprobe_facts::sqs::query_members::{self, Layout, Member};

/// The query API version every SQS query request names.
pub(crate) const API_VERSION: &str = "2012-11-05";

/// Why a JSON request body could not be encoded.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum EncodeError {
    #[error("request body is not JSON: {0}")]
    NotJson(String),
    #[error("request body is not a JSON object")]
    NotAnObject,
}

/// How a JSON member is written in the query protocol: under its name in the table of
/// [`sqsprobe_facts::sqs::query_members`], as a map of numbered pairs or a list, or as it is.
fn member(operation: &str, json_name: &str) -> Option<&'static Member> {
    query_members::request_by_json(operation, json_name)
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// Writes `value` at `path`: scalars as one pair, lists as `path.N`, structures member by member.
fn write_value(operation: &str, path: &str, value: &Value, out: &mut Vec<(String, String)>) {
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                write_value(operation, &format!("{path}.{}", i + 1), item, out);
            }
        }
        Value::Object(fields) => write_members(operation, path, fields, out),
        other => {
            if let Some(s) = scalar(other) {
                out.push((path.to_owned(), s));
            }
        }
    }
}

fn write_members(
    operation: &str,
    prefix: &str,
    fields: &Map<String, Value>,
    out: &mut Vec<(String, String)>,
) {
    for (json_name, value) in fields {
        if matches!(value, Value::Array(items) if items.is_empty()) {
            out.push((join(prefix, json_name), String::new()));
            continue;
        }
        let Some(member) = member(operation, json_name) else {
            write_value(operation, &join(prefix, json_name), value, out);
            continue;
        };
        match (member.layout, value) {
            (Layout::Map { key, .. }, Value::Object(entries)) => {
                for (i, (k, v)) in entries.iter().enumerate() {
                    let base = join(prefix, &format!("{}.{}", member.query, i + 1));
                    out.push((format!("{base}.{key}"), k.clone()));
                    write_value(operation, &format!("{base}.Value"), v, out);
                }
            }
            // A list; or not a map after all: passed on under the query name rather than
            // dropped, so the server answers for the malformed value.
            _ => write_value(operation, &join(prefix, member.query), value, out),
        }
    }
}

/// The form pairs of a query request for `operation` with the JSON `body`.
pub(crate) fn form_pairs(
    operation: &str,
    body: &[u8],
) -> Result<Vec<(String, String)>, EncodeError> {
    let fields = if body.iter().all(u8::is_ascii_whitespace) {
        Map::new()
    } else {
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(EncodeError::NotAnObject),
            Err(e) => return Err(EncodeError::NotJson(e.to_string())),
        }
    };
    let fields = merge_system_attribute_names(fields);
    let mut out = vec![
        ("Action".to_owned(), operation.to_owned()),
        ("Version".to_owned(), API_VERSION.to_owned()),
    ];
    write_members(operation, "", &fields, &mut out);
    Ok(out)
}

/// `MessageSystemAttributeNames` (AWS JSON, since 2024) is sent as the query protocol's
/// long-standing `AttributeName.N`, merged with any `AttributeNames`.
///
/// The member was added after SQS moved its SDKs to AWS JSON, so the query protocol has no
/// modelled wire name for it (botocore's model is JSON-only), while `AttributeName.N` is what
/// every query client has always sent and what AWS keeps accepting for backward
/// compatibility (API_ReceiveMessage). Inventing `MessageSystemAttributeName.N` would measure
/// our guess, not the server: moto 5.2 and LocalStack 2026.3 both ignore it.
fn merge_system_attribute_names(mut fields: Map<String, Value>) -> Map<String, Value> {
    let Some(system) = fields.remove("MessageSystemAttributeNames") else {
        return fields;
    };
    let mut names = match fields.remove("AttributeNames") {
        Some(Value::Array(items)) => items,
        Some(other) => vec![other],
        None => Vec::new(),
    };
    match system {
        Value::Array(items) => {
            for item in items {
                if !names.contains(&item) {
                    names.push(item);
                }
            }
        }
        other => names.push(other),
    }
    fields.insert("AttributeNames".to_owned(), Value::Array(names));
    fields
}

/// The `application/x-www-form-urlencoded` body of a query request.
pub(crate) fn form_body(operation: &str, body: &[u8]) -> Result<String, EncodeError> {
    let pairs = form_pairs(operation, body)?;
    let mut form = form_urlencoded::Serializer::new(String::new());
    for (k, v) in &pairs {
        form.append_pair(k, v);
    }
    Ok(form.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pairs(operation: &str, body: Value) -> Vec<(String, String)> {
        let mut p = form_pairs(operation, body.to_string().as_bytes()).unwrap();
        assert_eq!(p[0], ("Action".into(), operation.into()));
        assert_eq!(p[1], ("Version".into(), "2012-11-05".into()));
        p.drain(..2);
        p.sort();
        p
    }

    fn expect(list: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = list
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn create_queue_attributes_and_tags() {
        let p = pairs(
            "CreateQueue",
            json!({"QueueName": "q.fifo", "Attributes": {"FifoQueue": "true", "DelaySeconds": "5"}, "tags": {"owner": "me"}}),
        );
        assert_eq!(
            p,
            expect(&[
                ("QueueName", "q.fifo"),
                ("Attribute.1.Name", "DelaySeconds"),
                ("Attribute.1.Value", "5"),
                ("Attribute.2.Name", "FifoQueue"),
                ("Attribute.2.Value", "true"),
                ("Tag.1.Key", "owner"),
                ("Tag.1.Value", "me"),
            ])
        );
    }

    #[test]
    fn queue_url_ops_and_name_lists() {
        assert_eq!(
            pairs(
                "GetQueueUrl",
                json!({"QueueName": "q", "QueueOwnerAWSAccountId": "1"})
            ),
            expect(&[("QueueName", "q"), ("QueueOwnerAWSAccountId", "1")])
        );
        assert_eq!(
            pairs("DeleteQueue", json!({"QueueUrl": "http://h/1/q"})),
            expect(&[("QueueUrl", "http://h/1/q")])
        );
        assert_eq!(
            pairs("PurgeQueue", json!({"QueueUrl": "u"})),
            expect(&[("QueueUrl", "u")])
        );
        assert_eq!(
            pairs(
                "GetQueueAttributes",
                json!({"QueueUrl": "u", "AttributeNames": ["All", "QueueArn"]})
            ),
            expect(&[
                ("QueueUrl", "u"),
                ("AttributeName.1", "All"),
                ("AttributeName.2", "QueueArn")
            ])
        );
        assert_eq!(
            pairs(
                "SetQueueAttributes",
                json!({"QueueUrl": "u", "Attributes": {"VisibilityTimeout": "10"}})
            ),
            expect(&[
                ("QueueUrl", "u"),
                ("Attribute.1.Name", "VisibilityTimeout"),
                ("Attribute.1.Value", "10")
            ])
        );
        assert_eq!(
            pairs(
                "ListQueues",
                json!({"QueueNamePrefix": "p", "MaxResults": 5, "NextToken": "t"})
            ),
            expect(&[
                ("QueueNamePrefix", "p"),
                ("MaxResults", "5"),
                ("NextToken", "t")
            ])
        );
        assert_eq!(
            pairs(
                "ListDeadLetterSourceQueues",
                json!({"QueueUrl": "u", "MaxResults": 1})
            ),
            expect(&[("QueueUrl", "u"), ("MaxResults", "1")])
        );
    }

    #[test]
    fn tags_and_permissions() {
        assert_eq!(
            pairs(
                "TagQueue",
                json!({"QueueUrl": "u", "Tags": {"a": "1", "b": "2"}})
            ),
            expect(&[
                ("QueueUrl", "u"),
                ("Tag.1.Key", "a"),
                ("Tag.1.Value", "1"),
                ("Tag.2.Key", "b"),
                ("Tag.2.Value", "2")
            ])
        );
        assert_eq!(
            pairs(
                "UntagQueue",
                json!({"QueueUrl": "u", "TagKeys": ["a", "b"]})
            ),
            expect(&[("QueueUrl", "u"), ("TagKey.1", "a"), ("TagKey.2", "b")])
        );
        assert_eq!(
            pairs("ListQueueTags", json!({"QueueUrl": "u"})),
            expect(&[("QueueUrl", "u")])
        );
        assert_eq!(
            pairs(
                "AddPermission",
                json!({"QueueUrl": "u", "Label": "l", "AWSAccountIds": ["1"], "Actions": ["SendMessage"]})
            ),
            expect(&[
                ("QueueUrl", "u"),
                ("Label", "l"),
                ("AWSAccountId.1", "1"),
                ("ActionName.1", "SendMessage")
            ])
        );
    }

    #[test]
    fn send_message_with_message_and_system_attributes() {
        let p = pairs(
            "SendMessage",
            json!({
                "QueueUrl": "u", "MessageBody": "b & c", "DelaySeconds": 3,
                "MessageGroupId": "g", "MessageDeduplicationId": "d",
                "MessageAttributes": {
                    "Help.Me": {"DataType": "String", "StringValue": "v"},
                    "bin": {"DataType": "Binary", "BinaryValue": "AAE="}
                },
                "MessageSystemAttributes": {
                    "AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1"}
                }
            }),
        );
        assert_eq!(
            p,
            expect(&[
                ("QueueUrl", "u"),
                ("MessageBody", "b & c"),
                ("DelaySeconds", "3"),
                ("MessageGroupId", "g"),
                ("MessageDeduplicationId", "d"),
                ("MessageAttribute.1.Name", "Help.Me"),
                ("MessageAttribute.1.Value.DataType", "String"),
                ("MessageAttribute.1.Value.StringValue", "v"),
                ("MessageAttribute.2.Name", "bin"),
                ("MessageAttribute.2.Value.DataType", "Binary"),
                ("MessageAttribute.2.Value.BinaryValue", "AAE="),
                ("MessageSystemAttribute.1.Name", "AWSTraceHeader"),
                ("MessageSystemAttribute.1.Value.DataType", "String"),
                ("MessageSystemAttribute.1.Value.StringValue", "Root=1"),
            ])
        );
    }

    #[test]
    fn receive_message_name_lists() {
        let p = pairs(
            "ReceiveMessage",
            json!({
                "QueueUrl": "u", "MaxNumberOfMessages": 10, "WaitTimeSeconds": 0,
                "VisibilityTimeout": 30, "ReceiveRequestAttemptId": "r",
                "AttributeNames": ["All"], "MessageSystemAttributeNames": ["SenderId"],
                "MessageAttributeNames": ["All", "Foo.*"]
            }),
        );
        assert_eq!(
            p,
            expect(&[
                ("QueueUrl", "u"),
                ("MaxNumberOfMessages", "10"),
                ("WaitTimeSeconds", "0"),
                ("VisibilityTimeout", "30"),
                ("ReceiveRequestAttemptId", "r"),
                ("MessageAttributeName.1", "All"),
                ("MessageAttributeName.2", "Foo.*"),
                ("AttributeName.1", "All"),
                ("AttributeName.2", "SenderId"),
            ])
        );
    }

    #[test]
    fn single_message_handle_ops() {
        assert_eq!(
            pairs(
                "DeleteMessage",
                json!({"QueueUrl": "u", "ReceiptHandle": "h+/="})
            ),
            expect(&[("QueueUrl", "u"), ("ReceiptHandle", "h+/=")])
        );
        assert_eq!(
            pairs(
                "ChangeMessageVisibility",
                json!({"QueueUrl": "u", "ReceiptHandle": "h", "VisibilityTimeout": 0})
            ),
            expect(&[
                ("QueueUrl", "u"),
                ("ReceiptHandle", "h"),
                ("VisibilityTimeout", "0")
            ])
        );
    }

    #[test]
    fn send_message_batch_entries_with_nested_attributes() {
        let p = pairs(
            "SendMessageBatch",
            json!({"QueueUrl": "u", "Entries": [
                {"Id": "a", "MessageBody": "x", "DelaySeconds": 1,
                 "MessageAttributes": {"k": {"DataType": "Number", "StringValue": "1"}}},
                {"Id": "b", "MessageBody": "y", "MessageGroupId": "g"}
            ]}),
        );
        assert_eq!(
            p,
            expect(&[
                ("QueueUrl", "u"),
                ("SendMessageBatchRequestEntry.1.Id", "a"),
                ("SendMessageBatchRequestEntry.1.MessageBody", "x"),
                ("SendMessageBatchRequestEntry.1.DelaySeconds", "1"),
                (
                    "SendMessageBatchRequestEntry.1.MessageAttribute.1.Name",
                    "k"
                ),
                (
                    "SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType",
                    "Number"
                ),
                (
                    "SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue",
                    "1"
                ),
                ("SendMessageBatchRequestEntry.2.Id", "b"),
                ("SendMessageBatchRequestEntry.2.MessageBody", "y"),
                ("SendMessageBatchRequestEntry.2.MessageGroupId", "g"),
            ])
        );
    }

    #[test]
    fn delete_and_change_visibility_batches() {
        assert_eq!(
            pairs(
                "DeleteMessageBatch",
                json!({"QueueUrl": "u", "Entries": [{"Id": "a", "ReceiptHandle": "h"}]})
            ),
            expect(&[
                ("QueueUrl", "u"),
                ("DeleteMessageBatchRequestEntry.1.Id", "a"),
                ("DeleteMessageBatchRequestEntry.1.ReceiptHandle", "h")
            ])
        );
        assert_eq!(
            pairs(
                "ChangeMessageVisibilityBatch",
                json!({"QueueUrl": "u", "Entries": [{"Id": "a", "ReceiptHandle": "h", "VisibilityTimeout": 5}]})
            ),
            expect(&[
                ("QueueUrl", "u"),
                ("ChangeMessageVisibilityBatchRequestEntry.1.Id", "a"),
                (
                    "ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle",
                    "h"
                ),
                (
                    "ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout",
                    "5"
                )
            ])
        );
        // An empty list goes out under its member name, empty, as botocore sends it: the
        // server answers EmptyBatchRequest.
        assert_eq!(
            pairs(
                "DeleteMessageBatch",
                json!({"QueueUrl": "u", "Entries": []})
            ),
            expect(&[("QueueUrl", "u"), ("Entries", "")])
        );
        assert_eq!(
            pairs(
                "ReceiveMessage",
                json!({"QueueUrl": "u", "MessageAttributeNames": [], "MessageSystemAttributeNames": []})
            ),
            expect(&[
                ("QueueUrl", "u"),
                ("AttributeNames", ""),
                ("MessageAttributeNames", "")
            ])
        );
    }

    #[test]
    fn move_task_ops() {
        assert_eq!(
            pairs(
                "StartMessageMoveTask",
                json!({"SourceArn": "s", "DestinationArn": "d", "MaxNumberOfMessagesPerSecond": 50})
            ),
            expect(&[
                ("SourceArn", "s"),
                ("DestinationArn", "d"),
                ("MaxNumberOfMessagesPerSecond", "50")
            ])
        );
        assert_eq!(
            pairs(
                "ListMessageMoveTasks",
                json!({"SourceArn": "s", "MaxResults": 10})
            ),
            expect(&[("SourceArn", "s"), ("MaxResults", "10")])
        );
        assert_eq!(
            pairs("CancelMessageMoveTask", json!({"TaskHandle": "t"})),
            expect(&[("TaskHandle", "t")])
        );
    }

    #[test]
    fn form_body_is_url_encoded_and_bad_bodies_are_errors() {
        let body = form_body(
            "SendMessage",
            r#"{"QueueUrl":"http://h/1/q","MessageBody":"a b&c=d+é"}"#.as_bytes(),
        )
        .unwrap();
        assert!(body.starts_with("Action=SendMessage&Version=2012-11-05&"));
        assert!(body.contains("MessageBody=a+b%26c%3Dd%2B%C3%A9"));
        assert!(body.contains("QueueUrl=http%3A%2F%2Fh%2F1%2Fq"));
        assert_eq!(
            form_body("ListQueues", b"").unwrap(),
            "Action=ListQueues&Version=2012-11-05"
        );
        assert_eq!(
            form_body("ListQueues", b"[1]"),
            Err(EncodeError::NotAnObject)
        );
        assert!(matches!(
            form_body("ListQueues", b"{"),
            Err(EncodeError::NotJson(_))
        ));
    }
}
