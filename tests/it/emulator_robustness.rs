//! The emulator never panics and never answers 5xx to a malformed request: every operation,
//! over both protocols, gets a sweep of wrong shapes, wrong types, nulls, deep nesting and
//! oversize bodies, and must answer an AWS-shaped 4xx each time and keep serving.

use crate::common;

use common::serve::post;
use sqsprobe_emulator::{EmulatorConfig, OPERATIONS, spawn};
use std::time::Duration;
use tokio::time::timeout;

/// Bodies that are wrong in every way a client can get them wrong. `{url}` is a real queue.
fn json_bodies(url: &str) -> Vec<String> {
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    vec![
        String::new(),
        "null".into(),
        "[]".into(),
        "\"x\"".into(),
        "{".into(),
        "{}".into(),
        r#"{"QueueUrl": 5, "QueueName": ["x"]}"#.into(),
        r#"{"QueueUrl": null, "Entries": "x", "Attributes": [1, 2]}"#.into(),
        format!(r#"{{"QueueUrl": "{url}", "Entries": [null, 5, {{"Id": {{}}}}, {{"Id": "a", "ReceiptHandle": 7}}]}}"#),
        format!(r#"{{"QueueUrl": "{url}", "MaxNumberOfMessages": "ten", "WaitTimeSeconds": -1e308, "VisibilityTimeout": 1e400}}"#),
        format!(r#"{{"QueueUrl": "{url}", "MessageBody": "x", "MessageAttributes": {{"a": {{"DataType": 5}}, "b": null}}, "DelaySeconds": 18446744073709551617}}"#),
        format!(r#"{{"QueueUrl": "{url}", "ReceiptHandle": "", "VisibilityTimeout": -5}}"#),
        format!(r#"{{"QueueUrl": "{url}", "Attributes": {{"VisibilityTimeout": 5, "RedrivePolicy": "{{not json"}}, "Tags": {{"k": 1}}, "TagKeys": "k"}}"#),
        r#"{"QueueName": "q", "Attributes": {"FifoQueue": "maybe", "RedrivePolicy": "{\"deadLetterTargetArn\": 5, \"maxReceiveCount\": \"x\"}"}}"#.into(),
        r#"{"SourceArn": "arn:aws:sqs", "DestinationArn": {}, "MaxNumberOfMessagesPerSecond": 1e9, "TaskHandle": "!!"}"#.into(),
        format!(r#"{{"QueueUrl": "{url}/../../etc", "MessageBody": "\ud800"}}"#),
        deep,
    ]
}

fn query_bodies(url: &str) -> Vec<String> {
    vec![
        String::new(),
        "Action".into(),
        "Action=&Version=".into(),
        "%%%=%%%".into(),
        format!("QueueUrl={url}&MessageBody=%FF%FE&DelaySeconds=abc"),
        format!(
            "QueueUrl={url}&Attribute.1.Name=VisibilityTimeout&Attribute.x.Value=3&Attribute.99999999999999999999.Name=x"
        ),
        format!(
            "QueueUrl={url}&SendMessageBatchRequestEntry.1.Id=&SendMessageBatchRequestEntry.-1.MessageBody=x"
        ),
        format!("QueueUrl={url}&MaxNumberOfMessages=1e3&WaitTimeSeconds=--1"),
        format!("QueueUrl={url}&ReceiptHandle=&VisibilityTimeout=99999999999999999999"),
        "QueueName=&Attribute.1.Name=&Attribute.1.Value=".into(),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_answers_malformed_input_with_an_aws_shaped_4xx() {
    timeout(Duration::from_secs(120), async {
        let emu = spawn("127.0.0.1:0".parse().unwrap(), EmulatorConfig::default())
            .await
            .unwrap();
        let addr = emu.local_addr();
        let url = format!("{}/000000000000/robust", emu.endpoint_url());
        let create = "Content-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.CreateQueue\r\n";
        let (status, _) = post(addr, create, br#"{"QueueName": "robust"}"#).await;
        assert_eq!(status, 200);

        for op in OPERATIONS {
            let headers = format!(
                "Content-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.{op}\r\nx-amzn-query-mode: true\r\n"
            );
            for body in json_bodies(&url) {
                let (status, text) = post(addr, &headers, body.as_bytes()).await;
                let shown: String = body.chars().take(80).collect();
                assert!(
                    (400..500).contains(&status) || status == 200,
                    "{op} with {shown:?} answered {status}: {text}"
                );
                if status != 200 {
                    assert!(text.contains("__type"), "{op} with {shown:?}: not AWS-shaped: {text}");
                }
            }
            let form = "Content-Type: application/x-www-form-urlencoded\r\n";
            for body in query_bodies(&url) {
                let body = format!("Action={op}&Version=2012-11-05&{body}");
                let (status, text) = post(addr, form, body.as_bytes()).await;
                assert!(
                    (400..500).contains(&status) || status == 200,
                    "{op} (query) with {body:?} answered {status}: {text}"
                );
                if status != 200 {
                    assert!(text.contains("<ErrorResponse"), "{op} (query): not AWS-shaped: {text}");
                }
            }
        }

        // Oversize and binary bodies, and requests without the headers that say what they are.
        let huge = vec![b'{'; 9 * 1024 * 1024];
        let (status, _) = post(addr, create, &huge).await;
        assert!((400..500).contains(&status), "oversize body answered {status}");
        let (status, _) = post(addr, create, &[0xff, 0xfe, 0x00, 0x80]).await;
        assert!((400..500).contains(&status), "binary body answered {status}");
        let (status, _) = post(addr, "", b"{}").await;
        assert!((400..500).contains(&status), "no content type answered {status}");

        // Still serving (the sweep may have deleted its queue: DeleteQueue got a valid URL).
        let list = "Content-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.ListQueues\r\n";
        let (status, text) = post(addr, list, b"{}").await;
        assert_eq!(status, 200, "{text}");
        emu.shutdown().await;
    })
    .await
    .expect("the sweep finished within its bound");
}
