//! The event source mapping's two documents (pure): the SQS event a function is invoked with,
//! and what the mapping makes of the function's answer.
//!
//! The event is the shape AWS documents for an SQS trigger ("Using Lambda with Amazon SQS",
//! the example event): `{"Records": [{messageId, receiptHandle, body, attributes,
//! messageAttributes, md5OfBody, eventSource: "aws:sqs", eventSourceARN, awsRegion}]}`, with
//! each message attribute in camelCase (`stringValue`, `binaryValue`, `stringListValues`,
//! `binaryListValues`, `dataType`).
//!
//! The answer is read as "Handling errors for an SQS event source in Lambda" says:
//! - a function error (the runtime's `/error`) or a timeout fails the whole batch: every record
//!   returns to the queue after its visibility timeout;
//! - without `ReportBatchItemFailures` any response is a success: the mapping deletes the batch
//!   (Lambda does not read a partial response it was not told to expect);
//! - with it: a null or empty body, a null or empty `batchItemFailures` list, is a complete
//!   success; every reported `itemIdentifier` returns, the rest is deleted; and the batch is a
//!   complete failure when the response is not JSON, or an entry's `itemIdentifier` is empty,
//!   null, missing (a bad key name), or not the `messageId` of a record of the batch.
//!
//! AWS documents nothing for a JSON response that is not an object (a string, a number): it is
//! read here as a response without `batchItemFailures`, a success.

use serde_json::{Map, Value, json};

/// One record as the mapping received it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Record {
    pub message_id: String,
    pub receipt_handle: String,
    pub body: String,
    pub md5_of_body: String,
    /// The system attributes (`ApproximateReceiveCount`, `SentTimestamp`, `SenderId`,
    /// `ApproximateFirstReceiveTimestamp`, and on a FIFO queue `MessageGroupId`,
    /// `SequenceNumber`, `MessageDeduplicationId`).
    pub attributes: Map<String, Value>,
    /// The message attributes, already in the event's camelCase shape.
    pub message_attributes: Map<String, Value>,
}

impl Record {
    /// The record's message group, on a FIFO queue.
    pub(crate) fn group(&self) -> Option<&str> {
        self.attributes
            .get("MessageGroupId")
            .and_then(Value::as_str)
    }
}

/// The SQS event of one invocation.
pub(crate) fn event(records: &[Record], queue_arn: &str, region: &str) -> Value {
    let records: Vec<Value> = records
        .iter()
        .map(|r| {
            json!({
                "messageId": r.message_id,
                "receiptHandle": r.receipt_handle,
                "body": r.body,
                "attributes": r.attributes,
                "messageAttributes": r.message_attributes,
                "md5OfBody": r.md5_of_body,
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": region,
            })
        })
        .collect();
    json!({ "Records": records })
}

/// How an invocation ended, as the runtime said it (or did not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// `/invocation/{id}/response` with this body.
    Response(Vec<u8>),
    /// `/invocation/{id}/error` (an exception), with the runtime's `errorType`.
    Error { error_type: String },
    /// No answer before the function timeout.
    Timeout,
}

/// What the reported identifier was, when it was not a record's `messageId`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum WrongId {
    /// A record's receipt handle.
    ReceiptHandle,
    /// A record's position in the batch.
    Index,
    /// An empty string, null, or an entry without `itemIdentifier`.
    Empty,
    /// Anything else.
    Unknown,
}

impl WrongId {
    /// How reports name it.
    pub(crate) fn words(self) -> &'static str {
        match self {
            WrongId::ReceiptHandle => "a receipt handle",
            WrongId::Index => "a record's index",
            WrongId::Empty => "an empty or missing itemIdentifier",
            WrongId::Unknown => "no messageId of the batch",
        }
    }
}

/// What the mapping does with the batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Disposition {
    /// Delete every record.
    Success,
    /// Delete all but these records (indices into the batch, in order).
    Partial(Vec<usize>),
    /// Delete nothing: every record returns after its visibility timeout.
    Failure(Failure),
}

/// Why a batch failed as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    FunctionError(String),
    Timeout,
    /// With `ReportBatchItemFailures`: the response was not JSON.
    InvalidResponse,
    /// With `ReportBatchItemFailures`: an identifier that names no record of the batch.
    WrongIdentifier(WrongId),
}

/// What the mapping makes of `answer` for `records`.
pub(crate) fn dispose(records: &[Record], answer: &Answer, report_failures: bool) -> Disposition {
    let body = match answer {
        Answer::Error { error_type } => {
            return Disposition::Failure(Failure::FunctionError(error_type.clone()));
        }
        Answer::Timeout => return Disposition::Failure(Failure::Timeout),
        Answer::Response(body) => body,
    };
    if !report_failures {
        return Disposition::Success;
    }
    let text = String::from_utf8_lossy(body);
    if text.trim().is_empty() {
        return Disposition::Success;
    }
    let Ok(value) = serde_json::from_str::<Value>(&text) else {
        return Disposition::Failure(Failure::InvalidResponse);
    };
    let entries = match value.get("batchItemFailures") {
        None | Some(Value::Null) => return Disposition::Success,
        Some(Value::Array(entries)) => entries,
        // A list that is not a list: AWS names no such case; it is not a valid response.
        Some(_) => return Disposition::Failure(Failure::InvalidResponse),
    };
    let mut failed = Vec::new();
    for entry in entries {
        let id = entry.get("itemIdentifier").and_then(Value::as_str);
        let id = match id {
            Some(id) if !id.is_empty() => id,
            _ => return Disposition::Failure(Failure::WrongIdentifier(WrongId::Empty)),
        };
        match records.iter().position(|r| r.message_id == id) {
            Some(i) => {
                if !failed.contains(&i) {
                    failed.push(i);
                }
            }
            None => return Disposition::Failure(Failure::WrongIdentifier(wrong(records, id))),
        }
    }
    failed.sort_unstable();
    if failed.is_empty() {
        Disposition::Success
    } else {
        Disposition::Partial(failed)
    }
}

/// What an identifier that is no record's messageId was.
fn wrong(records: &[Record], id: &str) -> WrongId {
    if records.iter().any(|r| r.receipt_handle == id) {
        WrongId::ReceiptHandle
    } else if id.parse::<usize>().is_ok_and(|i| i <= records.len()) {
        WrongId::Index
    } else {
        WrongId::Unknown
    }
}

/// A message attribute of the SDK's shape (`DataType`, `StringValue`, `BinaryValue` as
/// base64) in the event's camelCase shape.
pub(crate) fn message_attribute(
    data_type: &str,
    string: Option<&str>,
    binary_b64: Option<&str>,
) -> Value {
    let mut out = Map::new();
    if let Some(s) = string {
        out.insert("stringValue".into(), json!(s));
    }
    if let Some(b) = binary_b64 {
        out.insert("binaryValue".into(), json!(b));
    }
    out.insert("stringListValues".into(), json!([]));
    out.insert("binaryListValues".into(), json!([]));
    out.insert("dataType".into(), json!(data_type));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch() -> Vec<Record> {
        (1..=3)
            .map(|i| Record {
                message_id: format!("m-{i}"),
                receipt_handle: format!("rh-{i}"),
                body: format!("body {i}"),
                ..Record::default()
            })
            .collect()
    }

    fn respond(body: &str) -> Disposition {
        dispose(&batch(), &Answer::Response(body.as_bytes().to_vec()), true)
    }

    #[test]
    fn the_event_has_the_documented_fields() {
        let e = event(
            &batch()[..1],
            "arn:aws:sqs:us-east-1:000000000000:q",
            "us-east-1",
        );
        let r = &e["Records"][0];
        for field in [
            "messageId",
            "receiptHandle",
            "body",
            "attributes",
            "messageAttributes",
            "md5OfBody",
            "eventSource",
            "eventSourceARN",
            "awsRegion",
        ] {
            assert!(r.get(field).is_some(), "{field}: {e}");
        }
        assert_eq!(r["eventSource"], "aws:sqs");
    }

    #[test]
    fn errors_and_timeouts_fail_the_whole_batch_with_or_without_reporting() {
        for report in [false, true] {
            let error = Answer::Error {
                error_type: "ValueError".into(),
            };
            assert_eq!(
                dispose(&batch(), &error, report),
                Disposition::Failure(Failure::FunctionError("ValueError".into()))
            );
            assert_eq!(
                dispose(&batch(), &Answer::Timeout, report),
                Disposition::Failure(Failure::Timeout)
            );
        }
    }

    #[test]
    fn without_reporting_any_response_deletes_the_batch() {
        let body = br#"{"batchItemFailures": [{"itemIdentifier": "m-2"}]}"#.to_vec();
        assert_eq!(
            dispose(&batch(), &Answer::Response(body), false),
            Disposition::Success
        );
    }

    #[test]
    fn the_documented_successes() {
        for body in [
            "",
            "null",
            "{}",
            r#"{"batchItemFailures": null}"#,
            r#"{"batchItemFailures": []}"#,
            r#""done""#,
        ] {
            assert_eq!(respond(body), Disposition::Success, "{body}");
        }
    }

    #[test]
    fn reported_message_ids_return_and_the_rest_is_deleted() {
        assert_eq!(
            respond(
                r#"{"batchItemFailures": [{"itemIdentifier": "m-3"}, {"itemIdentifier": "m-1"}]}"#
            ),
            Disposition::Partial(vec![0, 2])
        );
    }

    #[test]
    fn the_documented_complete_failures() {
        for (body, why) in [
            ("not json", Failure::InvalidResponse),
            (
                r#"{"batchItemFailures": [{"itemIdentifier": ""}]}"#,
                Failure::WrongIdentifier(WrongId::Empty),
            ),
            (
                r#"{"batchItemFailures": [{"itemIdentifier": null}]}"#,
                Failure::WrongIdentifier(WrongId::Empty),
            ),
            (
                r#"{"batchItemFailures": [{"itemIdentifer": "m-1"}]}"#,
                Failure::WrongIdentifier(WrongId::Empty),
            ),
            (
                r#"{"batchItemFailures": [{"itemIdentifier": "m-1"}, {"itemIdentifier": "rh-2"}]}"#,
                Failure::WrongIdentifier(WrongId::ReceiptHandle),
            ),
            (
                r#"{"batchItemFailures": [{"itemIdentifier": "1"}]}"#,
                Failure::WrongIdentifier(WrongId::Index),
            ),
            (
                r#"{"batchItemFailures": [{"itemIdentifier": "m-9"}]}"#,
                Failure::WrongIdentifier(WrongId::Unknown),
            ),
        ] {
            assert_eq!(respond(body), Disposition::Failure(why), "{body}");
        }
    }
}
