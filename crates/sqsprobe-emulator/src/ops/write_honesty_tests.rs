//! No write answers success while applying nothing: over every write operation of
//! [`sqsprobe_facts::sqs::operations::OPERATIONS`] and both protocols, a request whose parameters come in
//! a form the emulator does not read as asked (a member renamed, of the wrong type, an
//! unindexed query-protocol list or map, a numbered map pair without its key) is either
//! applied — the write's effect is there afterwards — or refused with an error.
//!
//! Each operation has a request in its canonical form that must succeed and apply, so every
//! probe is shown able to fail. The query protocol's unindexed forms (`AttributeName=All`,
//! `Attribute.Name=X&Attribute.Value=Y`, `AWSAccountId=…`) must apply: real SQS took them from
//! boto 2, whose integration suite ran against it (boto `boto/sqs/connection.py`
//! `get_queue_attributes`, `set_queue_attribute`, `add_permission`).

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::dispatch::dispatch;
use crate::model::store::Emulator;
use crate::ops::context::RequestContext;
use crate::protocol::query;
use crate::support::errors::SqsResult;
use crate::support::input::Params;
use crate::test_support::{attribute, call, create, emulator, send};
use sqsprobe_facts::sqs::query_members::{self, Layout};

/// The operations that only read, or whose every member is an optional filter
/// (ReceiveMessage: what it changes, a lease, it changes whatever form its options come in).
/// Every other operation is a write and must have a row in [`request`].
const READS: &[&str] = &[
    "GetQueueUrl",
    "ListQueues",
    "GetQueueAttributes",
    "ListQueueTags",
    "ReceiveMessage",
    "ListDeadLetterSourceQueues",
    "ListMessageMoveTasks",
];

/// Optional members among the carriers: renamed, such a member is a member the operation does
/// not have, which SQS's model lets a server ignore (a client may send members newer than the
/// server), so the write applies what it recognised; only its other forms are checked.
const OPTIONAL: &[(&str, &str)] = &[
    ("CreateQueue", "Attributes"),
    ("CreateQueue", "tags"),
    ("SendMessage", "MessageAttributes"),
    ("StartMessageMoveTask", "MaxNumberOfMessagesPerSecond"),
];

/// What a fresh world holds for one write: the URLs, ARNs and handles its request names.
struct World {
    emu: Arc<Emulator>,
    q: String,
    dead_arn: String,
    handle: String,
    task: String,
}

async fn world() -> World {
    let emu = emulator();
    let q = create(&emu, "q", json!({})).await;
    let dead = create(&emu, "dead", json!({})).await;
    let dead_arn = attribute(&emu, &dead, "QueueArn").await;
    let redrive = json!({"deadLetterTargetArn": dead_arn, "maxReceiveCount": 1}).to_string();
    create(&emu, "main", json!({ "RedrivePolicy": redrive })).await;
    send(&emu, &q, "held").await;
    let got = call(
        &emu,
        "ReceiveMessage",
        json!({"QueueUrl": q, "VisibilityTimeout": 30, "WaitTimeSeconds": 0}),
    )
    .await
    .unwrap();
    let handle = got["Messages"][0]["ReceiptHandle"]
        .as_str()
        .unwrap()
        .to_owned();
    for _ in 0..3 {
        send(&emu, &dead, "parked").await;
    }
    call(
        &emu,
        "TagQueue",
        json!({"QueueUrl": q, "Tags": {"old": "1"}}),
    )
    .await
    .unwrap();
    call(
        &emu,
        "AddPermission",
        json!({"QueueUrl": q, "Label": "old", "AWSAccountIds": ["000000000000"], "Actions": ["SendMessage"]}),
    )
    .await
    .unwrap();
    World {
        emu,
        q,
        dead_arn,
        handle,
        task: String::new(),
    }
}

/// A world for CancelMessageMoveTask: a slow task running on the DLQ.
async fn world_with_task() -> World {
    let mut w = world().await;
    let started = call(
        &w.emu,
        "StartMessageMoveTask",
        json!({"SourceArn": w.dead_arn, "MaxNumberOfMessagesPerSecond": 1}),
    )
    .await
    .unwrap();
    w.task = started["TaskHandle"].as_str().unwrap().to_owned();
    w
}

/// The write's request in its canonical JSON shape, and the members that carry what it
/// applies (the ones the test puts in other forms).
fn request(op: &str, w: &World) -> (Value, &'static [&'static str]) {
    let q = &w.q;
    match op {
        "CreateQueue" => (
            json!({"QueueName": "n", "Attributes": {"VisibilityTimeout": "7"}, "tags": {"k": "v"}}),
            &["QueueName", "Attributes", "tags"],
        ),
        "DeleteQueue" | "PurgeQueue" => (json!({ "QueueUrl": q }), &["QueueUrl"]),
        "SetQueueAttributes" => (
            json!({"QueueUrl": q, "Attributes": {"VisibilityTimeout": "7"}}),
            &["Attributes"],
        ),
        "TagQueue" => (json!({"QueueUrl": q, "Tags": {"k": "v"}}), &["Tags"]),
        "UntagQueue" => (json!({"QueueUrl": q, "TagKeys": ["old"]}), &["TagKeys"]),
        "SendMessage" => (
            json!({"QueueUrl": q, "MessageBody": "sent",
                   "MessageAttributes": {"a": {"DataType": "String", "StringValue": "v"}}}),
            &["MessageBody", "MessageAttributes"],
        ),
        "SendMessageBatch" => (
            json!({"QueueUrl": q, "Entries": [{"Id": "e1", "MessageBody": "sent"}]}),
            &["Entries"],
        ),
        "DeleteMessage" => (
            json!({"QueueUrl": q, "ReceiptHandle": w.handle}),
            &["ReceiptHandle"],
        ),
        "DeleteMessageBatch" => (
            json!({"QueueUrl": q, "Entries": [{"Id": "e1", "ReceiptHandle": w.handle}]}),
            &["Entries"],
        ),
        "ChangeMessageVisibility" => (
            json!({"QueueUrl": q, "ReceiptHandle": w.handle, "VisibilityTimeout": 0}),
            &["ReceiptHandle", "VisibilityTimeout"],
        ),
        "ChangeMessageVisibilityBatch" => (
            json!({"QueueUrl": q, "Entries": [{"Id": "e1", "ReceiptHandle": w.handle, "VisibilityTimeout": 0}]}),
            &["Entries"],
        ),
        "AddPermission" => (
            json!({"QueueUrl": q, "Label": "p", "AWSAccountIds": ["000000000000"], "Actions": ["ReceiveMessage"]}),
            &["Label", "AWSAccountIds", "Actions"],
        ),
        "RemovePermission" => (json!({"QueueUrl": q, "Label": "old"}), &["Label"]),
        "StartMessageMoveTask" => (
            json!({"SourceArn": w.dead_arn, "MaxNumberOfMessagesPerSecond": 1}),
            &["SourceArn", "MaxNumberOfMessagesPerSecond"],
        ),
        "CancelMessageMoveTask" => (json!({ "TaskHandle": w.task }), &["TaskHandle"]),
        other => panic!("no request for the write {other}: add its row"),
    }
}

async fn read(emu: &Arc<Emulator>, op: &str, params: Value) -> Value {
    call(emu, op, params).await.unwrap_or(Value::Null)
}

/// Whether the write's whole effect is there.
async fn applied(op: &str, w: &World) -> bool {
    let (emu, q) = (&w.emu, &w.q);
    let attrs = || async {
        read(
            emu,
            "GetQueueAttributes",
            json!({"QueueUrl": q, "AttributeNames": ["All"]}),
        )
        .await
    };
    match op {
        "CreateQueue" => {
            let url = read(emu, "GetQueueUrl", json!({"QueueName": "n"})).await;
            let Some(url) = url["QueueUrl"].as_str() else {
                return false;
            };
            let tags = read(emu, "ListQueueTags", json!({ "QueueUrl": url })).await;
            attribute(emu, url, "VisibilityTimeout").await == "7" && tags["Tags"]["k"] == "v"
        }
        "DeleteQueue" => read(emu, "GetQueueUrl", json!({"QueueName": "q"})).await == Value::Null,
        "PurgeQueue" => {
            let a = attrs().await;
            a["Attributes"]["ApproximateNumberOfMessagesNotVisible"] == "0"
        }
        "SetQueueAttributes" => attribute(emu, q, "VisibilityTimeout").await == "7",
        "TagQueue" | "UntagQueue" => {
            let tags = read(emu, "ListQueueTags", json!({ "QueueUrl": q })).await;
            if op == "TagQueue" {
                tags["Tags"]["k"] == "v"
            } else {
                tags["Tags"].get("old").is_none()
            }
        }
        "SendMessage" | "SendMessageBatch" => {
            let got = read(
                emu,
                "ReceiveMessage",
                json!({"QueueUrl": q, "MessageAttributeNames": ["All"], "WaitTimeSeconds": 0}),
            )
            .await;
            let m = &got["Messages"][0];
            m["Body"] == "sent"
                && (op == "SendMessageBatch" || m["MessageAttributes"]["a"]["StringValue"] == "v")
        }
        "DeleteMessage" | "DeleteMessageBatch" => {
            let a = attrs().await;
            a["Attributes"]["ApproximateNumberOfMessagesNotVisible"] == "0"
                && a["Attributes"]["ApproximateNumberOfMessages"] == "0"
        }
        "ChangeMessageVisibility" | "ChangeMessageVisibilityBatch" => {
            attrs().await["Attributes"]["ApproximateNumberOfMessages"] == "1"
        }
        "AddPermission" | "RemovePermission" => {
            let policy = attribute(emu, q, "Policy").await;
            if op == "AddPermission" {
                policy.contains("\"Sid\":\"p\"")
            } else {
                !policy.contains("\"Sid\":\"old\"")
            }
        }
        "StartMessageMoveTask" | "CancelMessageMoveTask" => {
            let tasks = read(
                emu,
                "ListMessageMoveTasks",
                json!({"SourceArn": w.dead_arn}),
            )
            .await;
            let status = tasks["Results"][0]["Status"].as_str().unwrap_or_default();
            if op == "StartMessageMoveTask" {
                !status.is_empty()
            } else {
                matches!(status, "CANCELLING" | "CANCELLED")
            }
        }
        other => panic!("no probe for the write {other}"),
    }
}

/// One query-protocol request: decoded as the server decodes a form, then dispatched.
async fn call_query(emu: &Arc<Emulator>, op: &str, pairs: Vec<(String, String)>) -> SqsResult<()> {
    let ctx = RequestContext {
        host: "localhost:9324".into(),
        query: true,
        trace_header: None,
        region: "us-east-1".into(),
        access_key: None,
    };
    let (_, params) = query::decode(pairs)?;
    let params = Params::Object(params);
    dispatch(emu, op, params.input(), &ctx).await.map(|_| ())
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// How a member is written in the query protocol.
#[derive(Clone, Copy, PartialEq)]
enum Form {
    /// `Name.N…`, as botocore writes it.
    Indexed,
    /// One item with no index (`AttributeName=All`, `Attribute.Name=X&Attribute.Value=Y`).
    Unindexed,
    /// A numbered map pair without its key member.
    KeyDropped,
}

/// The query pairs of one JSON member (`prefix` is its query name).
fn encode(op: &str, json_name: &str, value: &Value, form: Form, out: &mut Vec<(String, String)>) {
    let member = query_members::request_by_json(op, json_name);
    let name = member.map_or(json_name, |m| m.query);
    let index = |n: usize| match form {
        Form::Unindexed => name.to_owned(),
        _ => format!("{name}.{}", n + 1),
    };
    match (member.map(|m| m.layout), value) {
        (Some(Layout::Map { key, .. }), Value::Object(pairs)) => {
            for (n, (k, v)) in pairs.iter().enumerate() {
                let at = index(n);
                if form != Form::KeyDropped {
                    out.push((format!("{at}.{key}"), k.clone()));
                }
                match v {
                    Value::Object(fields) => {
                        for (f, fv) in fields {
                            out.push((format!("{at}.Value.{f}"), text(fv)));
                        }
                    }
                    other => out.push((format!("{at}.Value"), text(other))),
                }
            }
        }
        (Some(Layout::List), Value::Array(items)) => {
            for (n, item) in items.iter().enumerate() {
                let at = index(n);
                match item {
                    Value::Object(fields) => {
                        for (f, fv) in fields {
                            out.push((format!("{at}.{f}"), text(fv)));
                        }
                    }
                    other => out.push((at, text(other))),
                }
            }
        }
        (_, other) => out.push((name.to_owned(), text(other))),
    }
}

fn query_pairs(
    op: &str,
    params: &Map<String, Value>,
    form_of: impl Fn(&str) -> Form,
) -> Vec<(String, String)> {
    let mut out = vec![("Action".to_owned(), op.to_owned())];
    for (k, v) in params {
        encode(op, k, v, form_of(k), &mut out);
    }
    out
}

/// The write operations: every operation not in [`READS`].
fn writes() -> Vec<&'static str> {
    sqsprobe_facts::sqs::operations::OPERATIONS
        .iter()
        .map(|o| o.name)
        .filter(|n| !READS.contains(n))
        .collect()
}

/// One variant: a fresh world, the request, the verdict on it.
async fn honest(
    op: &'static str,
    variant: String,
    build: impl Fn(&World) -> Attempt,
) -> Result<bool, String> {
    let w = if op == "CancelMessageMoveTask" {
        world_with_task().await
    } else {
        world().await
    };
    let answer = match build(&w) {
        Attempt::Json(params) => call(&w.emu, op, params).await.map(|_| ()),
        Attempt::Query(pairs) => call_query(&w.emu, op, pairs).await,
    };
    let applied = applied(op, &w).await;
    match answer {
        Ok(()) if !applied => Err(format!(
            "{op} {variant}: answered success and did not apply"
        )),
        Ok(()) => Ok(true),
        Err(_) => Ok(false),
    }
}

enum Attempt {
    Json(Value),
    Query(Vec<(String, String)>),
}

#[test]
fn every_write_has_a_row() {
    let w = World {
        emu: emulator(),
        q: String::new(),
        dead_arn: String::new(),
        handle: String::new(),
        task: String::new(),
    };
    for op in writes() {
        let (params, carriers) = request(op, &w);
        for c in carriers {
            assert!(
                params.get(c).is_some(),
                "{op}: carrier {c} is not in its request"
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn no_write_answers_success_while_applying_nothing() {
    let mut lies = Vec::new();
    for op in writes() {
        // The canonical forms, both protocols: must answer success and apply.
        let canonical = honest(op, "as written (json)".into(), |w| {
            Attempt::Json(request(op, w).0)
        })
        .await;
        assert_eq!(
            canonical,
            Ok(true),
            "{op}: the canonical JSON request must apply"
        );
        let canonical = honest(op, "as written (query)".into(), |w| {
            let (params, _) = request(op, w);
            Attempt::Query(query_pairs(op, params.as_object().unwrap(), |_| {
                Form::Indexed
            }))
        })
        .await;
        assert_eq!(
            canonical,
            Ok(true),
            "{op}: the canonical query request must apply"
        );
        let carriers = request(op, &world().await).1;
        for &carrier in carriers {
            // JSON: the member renamed, and of the wrong type.
            let renamed = honest(op, format!("json {carrier} renamed"), |w| {
                let (mut params, _) = request(op, w);
                let map = params.as_object_mut().unwrap();
                let v = map.remove(carrier).unwrap();
                map.insert(format!("{carrier}X"), v);
                Attempt::Json(params)
            });
            let wrong_type = honest(op, format!("json {carrier} of the wrong type"), |w| {
                let (mut params, _) = request(op, w);
                let map = params.as_object_mut().unwrap();
                let v = match &map[carrier] {
                    Value::String(_) | Value::Number(_) => json!({"a": 1}),
                    _ => json!("x"),
                };
                map.insert(carrier.to_owned(), v);
                Attempt::Json(params)
            });
            // Query: renamed, unindexed, and a numbered map pair without its key.
            let q_renamed = honest(op, format!("query {carrier} renamed"), |w| {
                let (params, _) = request(op, w);
                let mut pairs = query_pairs(op, params.as_object().unwrap(), |_| Form::Indexed);
                let name = query_members::request_by_json(op, carrier).map_or(carrier, |m| m.query);
                for (k, _) in &mut pairs {
                    if k == name || k.starts_with(&format!("{name}.")) {
                        k.insert(0, 'X');
                    }
                }
                Attempt::Query(pairs)
            });
            let unindexed = honest(op, format!("query {carrier} unindexed"), |w| {
                let (params, _) = request(op, w);
                Attempt::Query(query_pairs(op, params.as_object().unwrap(), |k| {
                    if k == carrier {
                        Form::Unindexed
                    } else {
                        Form::Indexed
                    }
                }))
            });
            let key_dropped = honest(op, format!("query {carrier} pair without its key"), |w| {
                let (params, _) = request(op, w);
                Attempt::Query(query_pairs(op, params.as_object().unwrap(), |k| {
                    if k == carrier {
                        Form::KeyDropped
                    } else {
                        Form::Indexed
                    }
                }))
            });
            let optional = OPTIONAL.contains(&(op, carrier));
            let renamed = if optional {
                (Ok(true), Ok(true))
            } else {
                (renamed.await, q_renamed.await)
            };
            for verdict in [renamed.0, renamed.1, wrong_type.await, key_dropped.await] {
                if let Err(lie) = verdict {
                    lies.push(lie);
                }
            }
            // The early query API's unindexed one-item forms are what real SQS applied.
            let unindexed = unindexed.await;
            let is_collection =
                query_members::request_by_json(op, carrier).is_some() && carrier != "Entries";
            match unindexed {
                Err(lie) => lies.push(lie),
                Ok(false) if is_collection => lies.push(format!(
                    "{op} query {carrier} unindexed: refused, but SQS applies it"
                )),
                _ => {}
            }
        }
    }
    assert!(lies.is_empty(), "{}", lies.join("\n"));
}

#[tokio::test(start_paused = true)]
async fn boto2_unindexed_forms_apply() {
    let w = world().await;
    let q = w.q.clone();
    let form = |items: &[(&str, &str)]| {
        let mut pairs = vec![("QueueUrl".to_owned(), q.clone())];
        pairs.extend(items.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        pairs
    };
    call_query(
        &w.emu,
        "SetQueueAttributes",
        form(&[
            ("Attribute.Name", "VisibilityTimeout"),
            ("Attribute.Value", "9"),
        ]),
    )
    .await
    .unwrap();
    assert_eq!(attribute(&w.emu, &q, "VisibilityTimeout").await, "9");
    let (_, params) = query::decode(form(&[("AttributeName", "VisibilityTimeout")])).unwrap();
    assert_eq!(params["AttributeNames"], json!(["VisibilityTimeout"]));
    // A pair mixing the indexed and unindexed forms is neither: refused, not half applied.
    let mixed = call_query(
        &w.emu,
        "SetQueueAttributes",
        form(&[
            ("Attribute.Name", "DelaySeconds"),
            ("Attribute.Value", "3"),
            ("Attribute.1.Name", "VisibilityTimeout"),
            ("Attribute.1.Value", "4"),
        ]),
    )
    .await;
    assert!(mixed.is_err());
    let bare = call_query(&w.emu, "SetQueueAttributes", form(&[("Attribute", "5")])).await;
    assert_eq!(bare.unwrap_err().code(), "SerializationException");
}
