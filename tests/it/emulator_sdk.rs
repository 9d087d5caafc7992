//! The emulator driven by aws-sdk-sqs over real HTTP, plus a hand-built query-protocol request.

use std::time::Duration;

use aws_sdk_sqs::Client;
use aws_sdk_sqs::config::retry::RetryConfig;
use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sqs::error::ProvideErrorMetadata;
use aws_sdk_sqs::types::{
    DeleteMessageBatchRequestEntry, MessageAttributeValue, MessageSystemAttributeName,
    QueueAttributeName, SendMessageBatchRequestEntry,
};
use sqsprobe_emulator::{EmulatorConfig, RunningEmulator, spawn};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::timeout;

const BOUND: Duration = Duration::from_secs(30);

async fn start() -> (RunningEmulator, Client) {
    let emu = spawn("127.0.0.1:0".parse().unwrap(), EmulatorConfig::default())
        .await
        .unwrap();
    let client = client_for(&emu, aws_sdk_sqs::Config::builder());
    (emu, client)
}

/// A client of `emu` built on `conf` (its HTTP client, when the test chose one).
fn client_for(emu: &RunningEmulator, conf: aws_sdk_sqs::config::Builder) -> Client {
    let conf = conf
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(emu.endpoint_url())
        .credentials_provider(Credentials::new("test", "test", None, None, "static"))
        .retry_config(RetryConfig::disabled())
        .build();
    Client::from_conf(conf)
}

async fn create(client: &Client, name: &str, attrs: &[(QueueAttributeName, &str)]) -> String {
    let mut req = client.create_queue().queue_name(name);
    for (k, v) in attrs {
        req = req.attributes(k.clone(), *v);
    }
    req.send().await.unwrap().queue_url.unwrap()
}

#[tokio::test]
async fn send_receive_delete_round_trip() {
    timeout(BOUND, async {
        let (emu, client) = start().await;
        let url = create(&client, "basic", &[]).await;
        assert_eq!(url, format!("{}/000000000000/basic", emu.endpoint_url()));
        let sent = client
            .send_message()
            .queue_url(&url)
            .message_body("msg")
            .message_attributes(
                "k",
                MessageAttributeValue::builder()
                    .data_type("String")
                    .string_value("x")
                    .build()
                    .unwrap(),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(
            sent.md5_of_message_body(),
            Some("6e2baaf3b97dbeef01c0043275f9a0e7")
        );
        assert_eq!(
            sent.md5_of_message_attributes(),
            Some("a45daa70926828a2f0a1db3418e6feb4")
        );
        let got = client
            .receive_message()
            .queue_url(&url)
            .message_attribute_names("All")
            .message_system_attribute_names(MessageSystemAttributeName::All)
            .send()
            .await
            .unwrap();
        let messages = got.messages();
        assert_eq!(messages.len(), 1);
        let m = &messages[0];
        assert_eq!(m.body(), Some("msg"));
        assert_eq!(m.message_id(), sent.message_id());
        assert_eq!(
            m.md5_of_message_attributes(),
            Some("a45daa70926828a2f0a1db3418e6feb4")
        );
        let attrs = m.attributes().unwrap();
        assert_eq!(
            attrs
                .get(&MessageSystemAttributeName::ApproximateReceiveCount)
                .map(String::as_str),
            Some("1")
        );
        client
            .delete_message()
            .queue_url(&url)
            .receipt_handle(m.receipt_handle().unwrap())
            .send()
            .await
            .unwrap();
        let empty = client
            .receive_message()
            .queue_url(&url)
            .send()
            .await
            .unwrap();
        assert!(empty.messages().is_empty());
        emu.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn error_codes_are_the_legacy_ones() {
    timeout(BOUND, async {
        let (emu, client) = start().await;
        let err = client.get_queue_url().queue_name("missing").send().await.unwrap_err();
        assert_eq!(err.code(), Some("AWS.SimpleQueueService.NonExistentQueue"));
        assert_eq!(err.message(), Some("The specified queue does not exist."));
        let url = create(&client, "errs", &[]).await;
        let err = client.delete_message().queue_url(&url).receipt_handle("garbage").send().await.unwrap_err();
        assert_eq!(err.code(), Some("ReceiptHandleIsInvalid"));
        let err = client.receive_message().queue_url(&url).max_number_of_messages(11).send().await.unwrap_err();
        assert_eq!(err.code(), Some("InvalidParameterValue"));
        assert_eq!(
            err.message(),
            Some("Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.")
        );
        client.purge_queue().queue_url(&url).send().await.unwrap();
        let err = client.purge_queue().queue_url(&url).send().await.unwrap_err();
        assert_eq!(err.code(), Some("AWS.SimpleQueueService.PurgeQueueInProgress"));
        assert_eq!(err.raw_response().map(|r| r.status().as_u16()), Some(403));
        client.delete_queue().queue_url(&url).send().await.unwrap();
        let err = client.create_queue().queue_name("errs").send().await.unwrap_err();
        assert_eq!(err.code(), Some("AWS.SimpleQueueService.QueueDeletedRecently"));
        emu.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn stale_handle_on_standard_queue_still_deletes() {
    timeout(BOUND, async {
        let (emu, client) = start().await;
        let url = create(&client, "stale", &[]).await;
        client
            .send_message()
            .queue_url(&url)
            .message_body("a")
            .send()
            .await
            .unwrap();
        let first = client
            .receive_message()
            .queue_url(&url)
            .visibility_timeout(0)
            .send()
            .await
            .unwrap();
        let old = first.messages()[0].receipt_handle().unwrap().to_owned();
        let second = client
            .receive_message()
            .queue_url(&url)
            .send()
            .await
            .unwrap();
        assert_eq!(second.messages().len(), 1);
        assert_ne!(second.messages()[0].receipt_handle().unwrap(), old);
        client
            .delete_message()
            .queue_url(&url)
            .receipt_handle(&old)
            .send()
            .await
            .unwrap();
        let attrs = client
            .get_queue_attributes()
            .queue_url(&url)
            .attribute_names(QueueAttributeName::All)
            .send()
            .await
            .unwrap();
        let attrs = attrs.attributes().unwrap();
        assert_eq!(attrs[&QueueAttributeName::ApproximateNumberOfMessages], "0");
        assert_eq!(
            attrs[&QueueAttributeName::ApproximateNumberOfMessagesNotVisible],
            "0"
        );
        emu.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn fifo_expired_handle_and_dedup() {
    timeout(BOUND, async {
        let (emu, client) = start().await;
        let url = create(
            &client,
            "f.fifo",
            &[(QueueAttributeName::FifoQueue, "true"), (QueueAttributeName::ContentBasedDeduplication, "true")],
        )
        .await;
        let a = client.send_message().queue_url(&url).message_body("same").message_group_id("g").send().await.unwrap();
        let b = client.send_message().queue_url(&url).message_body("same").message_group_id("g").send().await.unwrap();
        assert_eq!(a.message_id(), b.message_id());
        assert!(a.sequence_number().unwrap().len() >= 20);
        let got = client.receive_message().queue_url(&url).max_number_of_messages(10).visibility_timeout(0).send().await.unwrap();
        assert_eq!(got.messages().len(), 1);
        let handle = got.messages()[0].receipt_handle().unwrap();
        let err = client.delete_message().queue_url(&url).receipt_handle(handle).send().await.unwrap_err();
        assert_eq!(err.code(), Some("InvalidParameterValue"));
        assert_eq!(
            err.message().map(str::to_owned),
            Some(format!("Value {handle} for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired."))
        );
        let err = client.send_message().queue_url(&url).message_body("x").send().await.unwrap_err();
        assert_eq!(err.code(), Some("MissingParameter"));
        emu.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn dead_letter_redrive_on_later_receive() {
    timeout(BOUND, async {
        let (emu, client) = start().await;
        let dlq = create(&client, "dlq", &[]).await;
        let dlq_arn = "arn:aws:sqs:us-east-1:000000000000:dlq";
        let policy = format!(r#"{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":1}}"#);
        let src = create(
            &client,
            "src",
            &[(QueueAttributeName::RedrivePolicy, &policy)],
        )
        .await;
        client
            .send_message()
            .queue_url(&src)
            .message_body("poison")
            .send()
            .await
            .unwrap();
        let first = client
            .receive_message()
            .queue_url(&src)
            .visibility_timeout(0)
            .send()
            .await
            .unwrap();
        assert_eq!(first.messages().len(), 1);
        let second = client
            .receive_message()
            .queue_url(&src)
            .send()
            .await
            .unwrap();
        assert!(second.messages().is_empty());
        let moved = client
            .receive_message()
            .queue_url(&dlq)
            .message_system_attribute_names(MessageSystemAttributeName::All)
            .send()
            .await
            .unwrap();
        assert_eq!(moved.messages().len(), 1);
        assert_eq!(moved.messages()[0].body(), Some("poison"));
        let sources = client
            .list_dead_letter_source_queues()
            .queue_url(&dlq)
            .send()
            .await
            .unwrap();
        assert_eq!(sources.queue_urls(), std::slice::from_ref(&src));
        emu.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn batch_partial_failure() {
    timeout(BOUND, async {
        let (emu, client) = start().await;
        let url = create(&client, "batch", &[(QueueAttributeName::MaximumMessageSize, "1024")]).await;
        let out = client
            .send_message_batch()
            .queue_url(&url)
            .entries(SendMessageBatchRequestEntry::builder().id("ok").message_body("x".repeat(1024)).build().unwrap())
            .entries(SendMessageBatchRequestEntry::builder().id("big").message_body("x".repeat(1025)).build().unwrap())
            .send()
            .await
            .unwrap();
        assert_eq!(out.successful().len(), 1);
        assert_eq!(out.failed().len(), 1);
        let failed = &out.failed()[0];
        assert_eq!(failed.id(), "big");
        assert!(failed.sender_fault());
        assert_eq!(failed.code(), "InvalidParameterValue");
        assert_eq!(
            failed.message(),
            Some("One or more parameters cannot be validated. Reason: Message must be shorter than 1024 bytes.")
        );
        let all_bad = client
            .delete_message_batch()
            .queue_url(&url)
            .entries(DeleteMessageBatchRequestEntry::builder().id("a").receipt_handle("nope").build().unwrap())
            .send()
            .await
            .unwrap();
        assert!(all_bad.successful().is_empty());
        assert_eq!(all_bad.failed()[0].code(), "ReceiptHandleIsInvalid");
        let err = client
            .send_message_batch()
            .queue_url(&url)
            .entries(SendMessageBatchRequestEntry::builder().id("a:b").message_body("x").build().unwrap())
            .send()
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some("AWS.SimpleQueueService.InvalidBatchEntryId"));
        emu.shutdown().await;
    })
    .await
    .unwrap();
}

/// In virtual time (a paused runtime, the SDK answered by the emulator in this process, so
/// every wait is a tokio timer): the clock moves only when every task waits, and then jumps to
/// the next deadline. A poll that was not woken by the send answers at its own deadline, 20
/// virtual seconds on, and the test sees it on the clock, whatever the machine's load.
#[tokio::test(start_paused = true)]
async fn long_poll_wakes_on_send() {
    timeout(BOUND, async {
        let emu = spawn("127.0.0.1:0".parse().unwrap(), EmulatorConfig::default())
            .await
            .unwrap();
        let client = client_for(
            &emu,
            aws_sdk_sqs::Config::builder()
                .http_client(sqsprobe_emulator::InProcessClient::new(emu.in_process())),
        );
        let url = create(&client, "poll", &[]).await;
        let started = tokio::time::Instant::now();
        let receiver = {
            let client = client.clone();
            let url = url.clone();
            tokio::spawn(async move {
                let out = client
                    .receive_message()
                    .queue_url(&url)
                    .wait_time_seconds(20)
                    .send()
                    .await
                    .unwrap();
                out.messages().len()
            })
        };
        // A virtual second passes only once every task waits: the poll is parked.
        tokio::time::sleep(Duration::from_secs(1)).await;
        client
            .send_message()
            .queue_url(&url)
            .message_body("wake")
            .send()
            .await
            .unwrap();
        assert_eq!(receiver.await.unwrap(), 1);
        let waited = started.elapsed();
        assert!(
            waited < Duration::from_secs(20),
            "the poll answered at its deadline ({waited:?} of virtual time), not on the send"
        );
        emu.shutdown().await;
    })
    .await
    .unwrap();
}

async fn raw_post(addr: std::net::SocketAddr, path: &str, headers: &str, body: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).await.unwrap();
    out
}

#[tokio::test]
async fn query_protocol_round_trip() {
    timeout(BOUND, async {
        let (emu, _client) = start().await;
        let addr = emu.local_addr();
        let form = "application/x-www-form-urlencoded";
        let ct = format!("Content-Type: {form}\r\n");
        let created = raw_post(addr, "/", &ct, "Action=CreateQueue&QueueName=qq&Attribute.1.Name=DelaySeconds&Attribute.1.Value=0&Version=2012-11-05").await;
        assert!(created.starts_with("HTTP/1.1 200"), "{created}");
        assert!(created.contains(&format!("<QueueUrl>http://{addr}/000000000000/qq</QueueUrl>")), "{created}");
        let sent = raw_post(addr, "/000000000000/qq", &ct, "Action=SendMessage&MessageBody=%3Chi%3E&Version=2012-11-05").await;
        assert!(sent.contains("<MD5OfMessageBody>"), "{sent}");
        let got = raw_post(addr, "/000000000000/qq", &ct, "Action=ReceiveMessage&AttributeName.1=All&Version=2012-11-05").await;
        assert!(got.contains("<Body>&lt;hi&gt;</Body>"), "{got}");
        assert!(got.contains("<Name>ApproximateReceiveCount</Name><Value>1</Value>"), "{got}");
        let missing = raw_post(addr, "/", &ct, "Action=GetQueueUrl&QueueName=nope&Version=2012-11-05").await;
        assert!(missing.starts_with("HTTP/1.1 400"), "{missing}");
        assert!(missing.contains("<Code>AWS.SimpleQueueService.NonExistentQueue</Code>"), "{missing}");
        let unknown = raw_post(addr, "/", &ct, "Action=Frobnicate&Version=2012-11-05").await;
        assert!(unknown.contains("<Code>InvalidAction</Code>"), "{unknown}");
        emu.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn malformed_json_requests_get_aws_shaped_errors() {
    timeout(BOUND, async {
        let (emu, _client) = start().await;
        let addr = emu.local_addr();
        let headers =
            "Content-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.CreateQueue\r\n";
        let bad = raw_post(addr, "/", headers, "{not json").await;
        assert!(bad.starts_with("HTTP/1.1 400"), "{bad}");
        assert!(bad.contains("SerializationException"), "{bad}");
        let wrong = raw_post(addr, "/", headers, r#"{"QueueName": 5}"#).await;
        assert!(wrong.starts_with("HTTP/1.1 400"), "{wrong}");
        let unknown = raw_post(
            addr,
            "/",
            "Content-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.Nope\r\n",
            "{}",
        )
        .await;
        assert!(unknown.contains("UnknownOperationException"), "{unknown}");
        emu.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_consumers_never_duplicate_or_lose() {
    timeout(BOUND, async {
        let (emu, client) = start().await;
        let url = create(&client, "race", &[]).await;
        for chunk in 0..20 {
            let mut req = client.send_message_batch().queue_url(&url);
            for i in 0..10 {
                let body = format!("{}", chunk * 10 + i);
                req = req.entries(
                    SendMessageBatchRequestEntry::builder()
                        .id(format!("e{i}"))
                        .message_body(body)
                        .build()
                        .unwrap(),
                );
            }
            req.send().await.unwrap();
        }
        let mut workers = Vec::new();
        for _ in 0..4 {
            let client = client.clone();
            let url = url.clone();
            workers.push(tokio::spawn(async move {
                let mut seen = Vec::new();
                loop {
                    let out = client
                        .receive_message()
                        .queue_url(&url)
                        .max_number_of_messages(10)
                        .visibility_timeout(300)
                        .send()
                        .await
                        .unwrap();
                    if out.messages().is_empty() {
                        return seen;
                    }
                    for m in out.messages() {
                        seen.push(m.body().unwrap().to_owned());
                        client
                            .delete_message()
                            .queue_url(&url)
                            .receipt_handle(m.receipt_handle().unwrap())
                            .send()
                            .await
                            .unwrap();
                    }
                }
            }));
        }
        let mut all = Vec::new();
        for w in workers {
            all.extend(w.await.unwrap());
        }
        all.sort();
        let total = all.len();
        all.dedup();
        assert_eq!(total, 200);
        assert_eq!(all.len(), 200);
        emu.shutdown().await;
    })
    .await
    .unwrap();
}
