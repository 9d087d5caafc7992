//! The consumer's calls as evidence rows (pure): each request the audited consumer made,
//! as the emulator decoded and answered it, becomes one `call` row of `evidence.jsonl` with
//! phase `consumer`, in the same digest-only form as a suite's calls — receipt handles and
//! bodies only as SHA-256, error messages masked, no account id.
//!
//! The emulator sees every attempt as its own request: `attempt_number` is the SDK's own
//! count from its `amz-sdk-request` header (1 when it sends none), and `retried` is not known
//! on this side, so always false.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::key::KeyMap;
use sqsprobe_core::evidence::digest::Masker;
use sqsprobe_core::evidence::format::{Call, Completion, EntryEvidence, MessageEvidence, Phase};
use sqsprobe_core::evidence::sha256_hex;
use sqsprobe_emulator::audit::Called;

/// The `case` of every consumer row.
pub(crate) const CASE: &str = "consumer";

/// The access key the audit's own set-up signs with (creating queues, sending the messages):
/// its calls are rows of phase `setup` and case `audit`, not the consumer's.
pub(crate) const SETUP_ACCESS_KEY: &str = "sqsprobe-audit-setup";

/// What the rows need beyond the request: what the audit knows of handles and queues.
#[derive(Debug, Default)]
pub(crate) struct Known {
    /// A handle's digest → the MessageId and business key of the delivery that issued it.
    pub handles: HashMap<String, (String, Option<String>)>,
    /// A queue's name → where the business key sits in its messages.
    pub keys: KeyMap,
    /// Every handle and body seen, masked wherever an answer echoes one.
    pub masker: Masker,
}

impl Known {
    fn key_of(
        &self,
        queue: Option<&str>,
        body: &str,
        attributes: Option<&Map<String, Value>>,
    ) -> Option<String> {
        self.keys.read(queue, body, attributes)
    }

    /// Learns the handles and bodies of a request and its answer (before a row masks them).
    pub(crate) fn learn(&mut self, called: &Called<'_>) {
        let queue = queue_name(called.params);
        for body in bodies(called.params) {
            self.masker.add_body(body);
        }
        if let Some(h) = str_of(called.params, "ReceiptHandle") {
            self.masker.add_handle(h);
        }
        for e in entries(called.params) {
            if let Some(h) = str_of(e, "ReceiptHandle") {
                self.masker.add_handle(h);
            }
        }
        let Some(answer) = called.answer.as_ref().ok().and_then(|a| a.as_object()) else {
            return;
        };
        for m in list(answer, "Messages") {
            let (Some(handle), Some(id)) = (str_of(m, "ReceiptHandle"), str_of(m, "MessageId"))
            else {
                continue;
            };
            let body = str_of(m, "Body").unwrap_or_default();
            self.masker.add_handle(handle);
            self.masker.add_body(body);
            let key = self.key_of(queue.as_deref(), body, attributes_of(m));
            self.handles
                .insert(sha256_hex(handle), (id.to_string(), key));
        }
    }
}

/// The row of one request.
pub(crate) fn row(run_id: &str, called: &Called<'_>, known: &Known) -> Call {
    let params = called.params;
    let queue = queue_name(params);
    let handle_digest = str_of(params, "ReceiptHandle").map(sha256_hex);
    let named = handle_digest.as_ref().and_then(|d| known.handles.get(d));
    let (mut message_id, mut business_key) =
        (named.map(|n| n.0.clone()), named.and_then(|n| n.1.clone()));
    let mut messages = Vec::new();
    let mut rows = Vec::new();
    let answer = called.answer.as_ref().ok().and_then(|a| a.as_object());
    match called.operation {
        "SendMessage" => {
            let body = str_of(params, "MessageBody").unwrap_or_default();
            business_key = known.key_of(queue.as_deref(), body, attributes_of(params));
            message_id = answer
                .and_then(|a| str_of(a, "MessageId"))
                .map(str::to_string);
            if let Some(id) = &message_id {
                messages.push(message(id, business_key.clone(), None, Some(body), None));
            }
        }
        "ReceiveMessage" => {
            for m in answer.map(|a| list(a, "Messages")).unwrap_or_default() {
                let body = str_of(m, "Body").unwrap_or_default();
                let count = m
                    .get("Attributes")
                    .and_then(Value::as_object)
                    .and_then(|a| str_of(a, "ApproximateReceiveCount"))
                    .and_then(|c| c.parse().ok());
                messages.push(message(
                    str_of(m, "MessageId").unwrap_or_default(),
                    known.key_of(queue.as_deref(), body, attributes_of(m)),
                    str_of(m, "ReceiptHandle"),
                    Some(body),
                    count,
                ));
            }
        }
        op if sqsprobe_facts::sqs::operations::is_batch(op) => {
            rows = batch_entries(op, params, answer, known);
            if op == "SendMessageBatch" {
                messages = sent_in_batch(params, answer, queue.as_deref(), known);
            }
        }
        _ => {}
    }
    let refusal = called.answer.as_ref().err();
    let started = chrono::DateTime::<chrono::Utc>::from(called.started);
    let ended = started
        + chrono::Duration::from_std(called.latency).unwrap_or_else(|_| chrono::Duration::zero());
    let stamp =
        |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let lease_ms = match called.operation {
        "ReceiveMessage" | "ChangeMessageVisibility" => params
            .get("VisibilityTimeout")
            .and_then(Value::as_u64)
            .map(|s| s * 1000),
        _ => None,
    };
    let setup = called.access_key == Some(SETUP_ACCESS_KEY);
    Call {
        run_id: run_id.to_string(),
        case: if setup { "audit" } else { CASE }.to_string(),
        phase: if setup { Phase::Setup } else { Phase::Consumer },
        step: None,
        line: None,
        action: called.operation.to_string(),
        attempt_number: called.sdk_attempt.unwrap_or(1),
        retried: false,
        attempt: None,
        queue,
        message_id,
        message: None,
        business_key,
        handle_digest,
        messages,
        entries: rows,
        request_id: Some(called.request_id.to_string()),
        http_status: Some(refusal.map_or(200, |r| r.status)),
        error_code: refusal.map(|r| r.code.to_string()),
        error_type: refusal.map(|r| r.shape.clone()),
        sender_fault: refusal.map(|r| r.sender_fault),
        error_message: refusal.map(|r| known.masker.mask(&r.message)),
        completion: if refusal.is_some() {
            Completion::Fail
        } else {
            Completion::Ok
        },
        started_at: stamp(started),
        ended_at: stamp(ended),
        latency_ms: called.latency.as_secs_f64() * 1000.0,
        lease_ms,
        fault: None,
        trial: None,
        region: None,
        wire: None,
    }
}

fn message(
    id: &str,
    business_key: Option<String>,
    handle: Option<&str>,
    body: Option<&str>,
    receive_count: Option<u32>,
) -> MessageEvidence {
    MessageEvidence {
        message_id: id.to_string(),
        message: None,
        business_key,
        handle_digest: handle.map(sha256_hex),
        body_digest: body.map(sha256_hex),
        receive_count,
        sequence_number: None,
        md5_ok: None,
    }
}

/// The per-entry results of a batch, with the handle each entry carried.
fn batch_entries(
    op: &str,
    params: &Map<String, Value>,
    answer: Option<&Map<String, Value>>,
    known: &Known,
) -> Vec<EntryEvidence> {
    let Some(answer) = answer else {
        return Vec::new();
    };
    let handle_of = |id: &str| {
        entries(params)
            .find(|e| str_of(e, "Id") == Some(id))
            .and_then(|e| str_of(e, "ReceiptHandle"))
            .map(sha256_hex)
    };
    let mut out = Vec::new();
    for e in list(answer, "Successful") {
        let id = str_of(e, "Id").unwrap_or_default();
        let handle_digest = handle_of(id);
        let message_id = str_of(e, "MessageId").map(str::to_string).or_else(|| {
            handle_digest
                .as_ref()
                .and_then(|d| known.handles.get(d))
                .map(|n| n.0.clone())
        });
        let lease_ms = (op == "ChangeMessageVisibilityBatch")
            .then(|| {
                entries(params)
                    .find(|x| str_of(x, "Id") == Some(id))
                    .and_then(|x| x.get("VisibilityTimeout"))
                    .and_then(Value::as_u64)
                    .map(|s| s * 1000)
            })
            .flatten();
        out.push(EntryEvidence {
            id: id.to_string(),
            message: None,
            message_id,
            handle_digest,
            result: "successful".into(),
            code: None,
            sender_fault: None,
            error_message: None,
            lease_ms,
        });
    }
    for e in list(answer, "Failed") {
        let id = str_of(e, "Id").unwrap_or_default();
        out.push(EntryEvidence {
            id: id.to_string(),
            message: None,
            message_id: None,
            handle_digest: handle_of(id),
            result: "failed".into(),
            code: str_of(e, "Code").map(str::to_string),
            sender_fault: e.get("SenderFault").and_then(Value::as_bool),
            error_message: str_of(e, "Message").map(|m| known.masker.mask(m)),
            lease_ms: None,
        });
    }
    out
}

/// The messages a SendMessageBatch stored: each successful entry with its body's digest.
fn sent_in_batch(
    params: &Map<String, Value>,
    answer: Option<&Map<String, Value>>,
    queue: Option<&str>,
    known: &Known,
) -> Vec<MessageEvidence> {
    let Some(answer) = answer else {
        return Vec::new();
    };
    list(answer, "Successful")
        .into_iter()
        .filter_map(|ok| {
            let id = str_of(ok, "Id")?;
            let entry = entries(params).find(|e| str_of(e, "Id") == Some(id))?;
            let body = str_of(entry, "MessageBody")?;
            Some(message(
                str_of(ok, "MessageId")?,
                known.key_of(queue, body, attributes_of(entry)),
                None,
                Some(body),
                None,
            ))
        })
        .collect()
}

/// One message a send stored, as its request wrote it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stored<'a> {
    /// The queue's name, from the request's `QueueUrl`.
    pub queue: Option<&'a str>,
    pub message_id: &'a str,
    pub body: &'a str,
    pub attributes: Option<&'a Map<String, Value>>,
}

/// The messages a SendMessage or SendMessageBatch stored (only the entries that succeeded).
pub(crate) fn stored<'a>(called: &'a Called<'_>) -> Vec<Stored<'a>> {
    let params = called.params;
    let queue = str_of(params, "QueueUrl")
        .and_then(|u| u.trim_end_matches('/').rsplit('/').next())
        .filter(|n| !n.is_empty());
    let Some(answer) = called.answer.as_ref().ok().and_then(|a| a.as_object()) else {
        return Vec::new();
    };
    match called.operation {
        "SendMessage" => str_of(answer, "MessageId")
            .map(|id| Stored {
                queue,
                message_id: id,
                body: str_of(params, "MessageBody").unwrap_or_default(),
                attributes: attributes_of(params),
            })
            .into_iter()
            .collect(),
        "SendMessageBatch" => list(answer, "Successful")
            .into_iter()
            .filter_map(|ok| {
                let id = str_of(ok, "Id")?;
                let entry = entries(params).find(|e| str_of(e, "Id") == Some(id))?;
                Some(Stored {
                    queue,
                    message_id: str_of(ok, "MessageId")?,
                    body: str_of(entry, "MessageBody").unwrap_or_default(),
                    attributes: attributes_of(entry),
                })
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A message's (or a send's) `MessageAttributes`, when it has any.
fn attributes_of(m: &Map<String, Value>) -> Option<&Map<String, Value>> {
    m.get("MessageAttributes").and_then(Value::as_object)
}

/// The name of the queue a request names (the last segment of its `QueueUrl`, else its
/// `QueueName`).
fn queue_name(params: &Map<String, Value>) -> Option<String> {
    str_of(params, "QueueUrl")
        .and_then(|u| u.trim_end_matches('/').rsplit('/').next())
        .or_else(|| str_of(params, "QueueName"))
        .filter(|n| !n.is_empty())
        .map(str::to_string)
}

fn bodies(params: &Map<String, Value>) -> impl Iterator<Item = &str> {
    str_of(params, "MessageBody")
        .into_iter()
        .chain(entries(params).filter_map(|e| str_of(e, "MessageBody")))
}

fn entries(params: &Map<String, Value>) -> impl Iterator<Item = &Map<String, Value>> {
    params
        .get("Entries")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
}

fn list<'a>(v: &'a Map<String, Value>, key: &str) -> Vec<&'a Map<String, Value>> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default()
}

fn str_of<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    m.get(key).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::key::{KeySpec, Role};
    use serde_json::json;
    use sqsprobe_emulator::audit::Refusal;
    use std::time::{Duration, SystemTime};

    fn called<'a>(
        operation: &'a str,
        params: &'a Map<String, Value>,
        answer: Result<&'a Value, Refusal>,
    ) -> Called<'a> {
        Called {
            operation,
            params,
            answer,
            protocol: "json",
            request_id: "req-1",
            sdk_attempt: Some(2),
            access_key: Some("sqsprobe-audit"),
            started: SystemTime::UNIX_EPOCH,
            latency: Duration::from_millis(3),
        }
    }

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn a_receive_then_a_stale_delete_hold_digests_only() {
        let mut known = Known::default();
        let url = "http://127.0.0.1:1/000000000000/orders";
        let params = map(json!({"QueueUrl": url, "VisibilityTimeout": 5}));
        let handle = "AQEB-the-raw-handle-of-attempt-one-0123456789";
        let body = r#"{"business_key": "b-1", "seq": 1}"#;
        let answer = json!({"Messages": [{"MessageId": "m-1", "ReceiptHandle": handle, "Body": body,
            "Attributes": {"ApproximateReceiveCount": "2"}}]});
        let c = called("ReceiveMessage", &params, Ok(&answer));
        known.learn(&c);
        let receive = row("r1", &c, &known);
        assert_eq!(receive.phase, Phase::Consumer);
        assert_eq!((receive.attempt_number, receive.lease_ms), (2, Some(5000)));
        assert_eq!(receive.queue.as_deref(), Some("orders"));
        let m = &receive.messages[0];
        assert_eq!(m.business_key.as_deref(), Some("b-1"));
        assert_eq!(m.receive_count, Some(2));
        assert_eq!(
            m.handle_digest.as_deref(),
            Some(sha256_hex(handle).as_str())
        );

        let params = map(json!({"QueueUrl": url, "ReceiptHandle": handle}));
        let refusal = Refusal {
            status: 400,
            code: "ReceiptHandleIsInvalid",
            shape: "ReceiptHandleIsInvalid".into(),
            sender_fault: true,
            message: format!(
                "The input receipt handle \"{handle}\" is not a valid receipt handle."
            ),
        };
        let c = called("DeleteMessage", &params, Err(refusal));
        known.learn(&c);
        let delete = row("r1", &c, &known);
        assert_eq!(delete.message_id.as_deref(), Some("m-1"));
        assert_eq!(delete.business_key.as_deref(), Some("b-1"));
        assert_eq!(delete.completion, Completion::Fail);
        assert_eq!(delete.http_status, Some(400));
        let text = serde_json::to_string(&[receive, delete]).unwrap();
        assert!(!text.contains(handle), "{text}");
        assert!(!text.contains(r#"\"seq\": 1"#), "{text}");
        assert!(text.contains("<handle sha256:"), "{text}");
    }

    #[test]
    fn batches_keep_each_entry_and_a_plans_key_path() {
        let mut known = Known::default();
        known.keys.insert(
            "orders".into(),
            KeySpec::parse("order.id").unwrap(),
            Role::Source,
        );
        let params = map(json!({"QueueUrl": "http://h/1/orders", "Entries": [
            {"Id": "a", "MessageBody": "{\"order\": {\"id\": \"k-1\"}}"},
            {"Id": "b", "MessageBody": "{\"order\": {\"id\": \"k-2\"}}"}]}));
        let answer = json!({"Successful": [{"Id": "a", "MessageId": "m-a"}],
            "Failed": [{"Id": "b", "Code": "InternalError", "SenderFault": false, "Message": "x"}]});
        let c = called("SendMessageBatch", &params, Ok(&answer));
        known.learn(&c);
        let r = row("r1", &c, &known);
        assert_eq!(r.entries.len(), 2);
        assert_eq!(r.entries[1].code.as_deref(), Some("InternalError"));
        assert_eq!(r.messages.len(), 1);
        assert_eq!(r.messages[0].business_key.as_deref(), Some("k-1"));
        assert_eq!(r.messages[0].message_id, "m-a");
    }

    /// The messages a send stored, with their attributes, so a key in an attribute is read;
    /// a batch entry that failed stored nothing.
    #[test]
    fn stored_names_each_message_a_send_stored() {
        let mut known = Known::default();
        known.keys.insert(
            "tasks".into(),
            KeySpec::parse("attribute:Id").unwrap(),
            Role::Source,
        );
        let attrs = json!({"Id": {"DataType": "String", "StringValue": "t-1"}});
        let params = map(json!({"QueueUrl": "http://h/1/tasks", "Entries": [
            {"Id": "a", "MessageBody": "plain", "MessageAttributes": attrs},
            {"Id": "b", "MessageBody": "plain"}]}));
        let answer = json!({"Successful": [{"Id": "a", "MessageId": "m-a"}],
            "Failed": [{"Id": "b", "Code": "InternalError", "SenderFault": false, "Message": "x"}]});
        let c = called("SendMessageBatch", &params, Ok(&answer));
        let sent = stored(&c);
        assert_eq!(sent.len(), 1);
        assert_eq!((sent[0].queue, sent[0].message_id), (Some("tasks"), "m-a"));
        assert_eq!(
            known
                .keys
                .read(sent[0].queue, sent[0].body, sent[0].attributes),
            Some("t-1".into())
        );
        known.learn(&c);
        assert_eq!(
            row("r", &c, &known).messages[0].business_key.as_deref(),
            Some("t-1")
        );
        let refused = called(
            "SendMessage",
            &params,
            Err(Refusal {
                status: 400,
                code: "x",
                shape: "x".into(),
                sender_fault: true,
                message: "no".into(),
            }),
        );
        assert!(stored(&refused).is_empty());
    }
}
