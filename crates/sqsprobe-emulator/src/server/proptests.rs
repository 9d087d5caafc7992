//! Property tests of the request decoders: whatever arrives, over either protocol, the answer
//! is AWS-shaped (200 or 4xx, the protocol's body shape, a request id) and nothing panics.
//!
//! Requests go through [`answer`] on a paused clock (long polls and move tasks cost no real
//! time). Inputs mix SQS's real parameter names and values, so cases reach the handlers, with
//! arbitrary bytes, deep keys and deep JSON. 256 cases per property keeps CI bounded.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Response};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::request::{Head, answer};
use crate::dispatch::OPERATIONS;
use crate::model::store::Emulator;
use crate::support::config::EmulatorConfig;

const QUEUE_URL: &str = "http://localhost:9324/000000000000/q";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a test runtime")
}

/// An emulator holding queue `q` (so requests that name it reach deep into the handlers).
fn emulator(rt: &tokio::runtime::Runtime) -> Arc<Emulator> {
    let emu = Arc::new(Emulator::new(EmulatorConfig {
        strict_cooldowns: false,
        ..EmulatorConfig::default()
    }));
    let head = json_head("AmazonSQS.CreateQueue");
    let response = rt.block_on(answer(&emu, &head, br#"{"QueueName":"q"}"#, "setup"));
    assert_eq!(response.status(), 200);
    emu
}

fn json_head(target: &str) -> Head<'static> {
    Head {
        method: Method::POST,
        path: "/".into(),
        uri_query: "".into(),
        host: "localhost:9324".into(),
        target: Some(target.to_owned().into()),
        authorization: None,
        trace_header: None,
        accept: None,
        sdk_request: None,
    }
}

/// An operation name: SQS's own, or STS's GetCallerIdentity.
fn op() -> impl Strategy<Value = String> {
    let mut names = OPERATIONS.to_vec();
    names.push("GetCallerIdentity");
    prop::sample::select(names).prop_map(str::to_owned)
}

/// Parameter names: SQS's own (both protocols' spellings), near misses, deep and junk ones.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "Action",
            "Version",
            "QueueUrl",
            "QueueName",
            "MessageBody",
            "DelaySeconds",
            "MaxNumberOfMessages",
            "WaitTimeSeconds",
            "VisibilityTimeout",
            "ReceiptHandle",
            "MessageGroupId",
            "MessageDeduplicationId",
            "ReceiveRequestAttemptId",
            "Attribute.1.Name",
            "Attribute.1.Value",
            "AttributeName.1",
            "MessageAttribute.1.Name",
            "MessageAttribute.1.Value.DataType",
            "MessageAttribute.1.Value.StringValue",
            "MessageAttribute.1.Value.BinaryValue",
            "SendMessageBatchRequestEntry.1.Id",
            "SendMessageBatchRequestEntry.1.MessageBody",
            "DeleteMessageBatchRequestEntry.2.ReceiptHandle",
            "Tag.1.Key",
            "Tag.1.Value",
            "TagKey.1",
            "SourceArn",
            "TaskHandle",
            "MaxResults",
            "NextToken",
            "X-Amz-Credential",
        ])
        .prop_map(str::to_owned),
        "[A-Za-z0-9._-]{0,24}",
        (1usize..64).prop_map(|n| vec!["a"; n].join(".")),
        "[A-Za-z]{1,8}(\\.[0-9]{1,3}){1,6}",
    ]
}

/// Values: real ones, numbers at and past the edges, JSON text, arbitrary Unicode.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        op(),
        Just(QUEUE_URL.to_owned()),
        Just("arn:aws:sqs:us-east-1:000000000000:q".to_owned()),
        Just("String".to_owned()),
        Just("true".to_owned()),
        any::<i64>().prop_map(|n| n.to_string()),
        (0i64..30).prop_map(|n| n.to_string()),
        Just(r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:q","maxReceiveCount":"1"}"#.to_owned()),
        "\\PC{0,24}",
        ".{0,8}",
    ]
}

fn query_request() -> impl Strategy<Value = (Head<'static>, Vec<u8>)> {
    let pairs = prop::collection::vec((key(), value()), 0..24);
    let body = prop_oneof![
        pairs.prop_map(|pairs| {
            form_urlencoded::Serializer::new(String::new())
                .extend_pairs(pairs)
                .finish()
                .into_bytes()
        }),
        prop::collection::vec(any::<u8>(), 0..256),
    ];
    let method = prop_oneof![Just(Method::POST), Just(Method::GET)];
    let path = prop_oneof![
        Just("/".to_owned()),
        Just("/000000000000/q".to_owned()),
        "/\\PC{0,16}"
    ];
    let uri_query = prop_oneof![
        Just(String::new()),
        "Action=[A-Za-z]{0,20}",
        "[A-Za-z0-9=&.%]{0,40}"
    ];
    let authorization = prop_oneof![
        Just(None),
        Just(Some("AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0".to_owned())),
        Just(Some("AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/sts/aws4_request, SignedHeaders=host, Signature=0".to_owned())),
        "\\PC{0,40}".prop_map(Some),
    ];
    (body, method, path, uri_query, authorization).prop_map(
        |(body, method, path, uri_query, authorization)| {
            let head = Head {
                method,
                path: path.into(),
                uri_query: uri_query.into(),
                host: "localhost:9324".into(),
                target: None,
                authorization: authorization.map(Into::into),
                trace_header: None,
                accept: None,
                sdk_request: None,
            };
            (head, body)
        },
    )
}

/// Arbitrary JSON, nested up to 40 levels (past the decoder's 32).
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        value().prop_map(Value::String),
    ];
    leaf.prop_recursive(40, 256, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|fields| Value::Object(fields.into_iter().collect())),
        ]
    })
}

fn json_request() -> impl Strategy<Value = (Head<'static>, Vec<u8>)> {
    let target = prop_oneof![op().prop_map(|op| format!("AmazonSQS.{op}")), "\\PC{0,30}",];
    let member = prop_oneof![
        prop::sample::select(vec![
            "QueueUrl",
            "QueueName",
            "MessageBody",
            "Entries",
            "Attributes",
            "MessageAttributes",
            "AttributeNames",
            "MaxNumberOfMessages",
            "WaitTimeSeconds",
            "VisibilityTimeout",
            "ReceiptHandle",
            "Tags",
            "tags",
            "TagKeys",
            "SourceArn",
        ])
        .prop_map(str::to_owned),
        key(),
    ];
    let shaped = prop::collection::vec((member, json_value()), 0..8).prop_map(|fields| {
        let mut map: serde_json::Map<String, Value> = fields.into_iter().collect();
        map.entry("QueueUrl").or_insert(json!(QUEUE_URL));
        serde_json::to_vec(&Value::Object(map)).unwrap_or_default()
    });
    let body = prop_oneof![
        shaped,
        json_value().prop_map(|v| serde_json::to_vec(&v).unwrap_or_default()),
        prop::collection::vec(any::<u8>(), 0..256),
        (1usize..200).prop_map(|n| format!("{}{}", "[".repeat(n), "]".repeat(n)).into_bytes()),
    ];
    (target, body).prop_map(|(target, body)| (json_head(&target), body))
}

/// Checks one answer's shape; returns its body text for messages.
fn assert_aws_shaped(
    rt: &tokio::runtime::Runtime,
    response: Response<Full<Bytes>>,
    json_protocol: bool,
) -> Result<(), TestCaseError> {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = rt
        .block_on(response.into_body().collect())
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&body).to_string();
    prop_assert!(
        status == 200 || (400..500).contains(&status),
        "status {status}: {text}"
    );
    prop_assert!(headers.contains_key("x-amzn-requestid"), "no request id");
    if json_protocol {
        let parsed: Value = serde_json::from_slice(&body)
            .map_err(|e| TestCaseError::fail(format!("not JSON ({e}): {text}")))?;
        prop_assert!(parsed.is_object(), "{text}");
        if status != 200 {
            prop_assert!(
                parsed["__type"].as_str().is_some_and(|t| t.contains('#')),
                "{text}"
            );
            prop_assert!(headers.contains_key("x-amzn-query-error"), "{text}");
        }
    } else if status == 200 {
        prop_assert!(
            text.contains("Response xmlns=") && text.contains("<RequestId>"),
            "{text}"
        );
    } else if status == 404 {
        // A GET of a queue URL without an Action: AWS's bare 404 shape.
        prop_assert!(text.contains("<UnknownOperationException"), "{text}");
    } else {
        prop_assert!(
            text.contains("<ErrorResponse") && text.contains("<Code>"),
            "{text}"
        );
    }
    Ok(())
}

#[test]
fn any_query_request_gets_an_aws_shaped_answer() {
    let rt = runtime();
    let emu = emulator(&rt);
    proptest!(sqsprobe_testing::config(256), |((head, body) in query_request())| {
        let response = rt.block_on(answer(&emu, &head, &body, "rid"));
        assert_aws_shaped(&rt, response, false)?;
    });
}

#[test]
fn any_json_request_gets_an_aws_shaped_answer() {
    let rt = runtime();
    let emu = emulator(&rt);
    proptest!(sqsprobe_testing::config(256), |((head, body) in json_request())| {
        let response = rt.block_on(answer(&emu, &head, &body, "rid"));
        assert_aws_shaped(&rt, response, true)?;
    });
}

/// The input the query property once found (kept from its old regression file): a GET to a
/// queue URL with an empty Authorization header and no body.
#[test]
fn a_bare_get_with_an_empty_authorization_is_answered() {
    let rt = runtime();
    let emu = emulator(&rt);
    let head = Head {
        method: Method::GET,
        path: "/000000000000/q".into(),
        target: None,
        authorization: Some("".into()),
        ..json_head("")
    };
    let response = rt.block_on(answer(&emu, &head, &[], "rid"));
    assert_aws_shaped(&rt, response, false).unwrap();
}

#[test]
fn the_issue_7_requests_are_refused_not_crashed() {
    let rt = runtime();
    let emu = emulator(&rt);
    let deep = format!("Action=ListQueues&{}=1", vec!["a"; 5000].join("."));
    let head = Head {
        target: None,
        ..json_head("")
    };
    let response = rt.block_on(answer(&emu, &head, deep.as_bytes(), "rid"));
    assert_eq!(response.status(), 400);
    let many = format!("Action=ListQueues{}", "&a=1".repeat(200_000));
    let response = rt.block_on(answer(&emu, &head, many.as_bytes(), "rid"));
    assert_eq!(response.status(), 400);
    let text = rt
        .block_on(response.into_body().collect())
        .map(|c| String::from_utf8_lossy(&c.to_bytes()).to_string())
        .unwrap_or_default();
    assert!(
        text.contains("<Code>InvalidParameterValue</Code>"),
        "{text}"
    );
}
