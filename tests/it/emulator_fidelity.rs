//! AWS behaviours the suite grammar still cannot express, checked against the
//! embedded emulator through aws-sdk-sqs and raw HTTP. Each test names its AWS source.
//!
//! The rest of these gaps are conformance cases now, which hold them against every
//! target: regions (`lifecycle-regions-are-namespaces`), AddPermission and RemovePermission
//! (`suites/conformance/permissions.yaml`), a malformed TaskHandle
//! (`move-task-cancel-malformed-handle`), the shapes of SequenceNumber and SenderId
//! (`fifo-sequence-number-shape`, `msg-sender-id-shape`), and the query protocol's wire:
//! `Entries=`, `MessageAttributeNames=`, a GET of a queue URL, service actions sent there,
//! `Accept: application/json` (`suites/conformance/query-protocol.yaml`). What stays here:
//! ListQueues per region, how SequenceNumbers and SenderIds relate across messages and
//! credentials, and empty lists under their item names, a form no client sends.
//!
//! `SQSPROBE_FIDELITY_ENDPOINT=http://127.0.0.1:PORT` points every test at a server already
//! running there instead (a fresh one: the tests reuse queue names), so the same checks can be
//! held against another build's `sqsprobe serve` (to show a gap is open there) or a peer.

use std::time::Duration;

use aws_sdk_sqs::Client;
use aws_sdk_sqs::config::retry::RetryConfig;
use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sqs::types::{MessageSystemAttributeName, QueueAttributeName};
use sqsprobe_emulator::{EmulatorConfig, RunningEmulator, spawn};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::timeout;

const BOUND: Duration = Duration::from_secs(30);

/// Where the tests send their requests: a fresh in-process emulator, or the server named by
/// `SQSPROBE_FIDELITY_ENDPOINT`.
struct Target {
    url: String,
    emulator: Option<RunningEmulator>,
}

impl Target {
    async fn start() -> Self {
        if let Ok(url) = std::env::var("SQSPROBE_FIDELITY_ENDPOINT") {
            return Self {
                url,
                emulator: None,
            };
        }
        let emu = spawn("127.0.0.1:0".parse().unwrap(), EmulatorConfig::default())
            .await
            .unwrap();
        Self {
            url: emu.endpoint_url(),
            emulator: Some(emu),
        }
    }

    fn endpoint_url(&self) -> String {
        self.url.clone()
    }

    async fn shutdown(self) {
        if let Some(emu) = self.emulator {
            emu.shutdown().await;
        }
    }
}

/// Runs `body` against a fresh target and a us-east-1 client, bounded, then stops it.
async fn scenario(body: impl AsyncFnOnce(&Target, Client)) {
    timeout(BOUND, async {
        let emu = Target::start().await;
        let sqs = client(&emu, "us-east-1", "AKIDEXAMPLE");
        body(&emu, sqs).await;
        emu.shutdown().await;
    })
    .await
    .unwrap();
}

fn client(emu: &Target, region: &str, access_key: &str) -> Client {
    let conf = aws_sdk_sqs::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(region.to_owned()))
        .endpoint_url(emu.endpoint_url())
        .credentials_provider(Credentials::new(access_key, "secret", None, None, "static"))
        .retry_config(RetryConfig::disabled())
        .build();
    Client::from_conf(conf)
}

/// Creates a standard queue and returns its URL.
async fn create(client: &Client, name: &str) -> String {
    client
        .create_queue()
        .queue_name(name)
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap()
}

/// LocalStack AWS-validated `test_get_queue_url_multi_region` and
/// `test_endpoint_strategy_with_multi_region`: one name in two regions is two queues, and
/// ListQueues lists the signing region's (a case's `list-queues` lists the run's region only).
#[tokio::test]
async fn list_queues_sees_only_its_region() {
    timeout(BOUND, async {
        let emu = Target::start().await;
        let east = client(&emu, "us-east-1", "AKIDEAST");
        let central = client(&emu, "eu-central-1", "AKIDEAST");
        let url1 = create(&east, "same").await;
        let url2 = create(&central, "same").await;
        assert_ne!(url1, url2);
        let listed = |c: Client| async move {
            c.list_queues()
                .queue_name_prefix("sa")
                .send()
                .await
                .unwrap()
                .queue_urls
                .unwrap_or_default()
        };
        assert_eq!(listed(east.clone()).await, vec![url1.clone()]);
        assert_eq!(listed(central.clone()).await, vec![url2.clone()]);
        emu.shutdown().await;
    })
    .await
    .unwrap();
}

/// What a shape cannot say about one message: SequenceNumbers increase within a group and are
/// "non-consecutive" (API_SendMessage), and a SenderId follows the credentials that sent the
/// message (LocalStack `test_receive_message_attribute_names_filters` notes it is the sender's
/// IAM id, not the account id). Each number's own shape is `fifo-sequence-number-shape`, each
/// SenderId's `msg-sender-id-shape`.
#[tokio::test]
async fn sequence_numbers_grow_apart_and_sender_ids_follow_credentials() {
    scenario(async |emu, sqs| {
        let url = sqs
            .create_queue()
            .queue_name("shape.fifo")
            .attributes(QueueAttributeName::FifoQueue, "true")
            .attributes(QueueAttributeName::ContentBasedDeduplication, "true")
            .send()
            .await
            .unwrap()
            .queue_url
            .unwrap();
        let mut numbers = Vec::new();
        for body in ["a", "b", "c"] {
            let sent = sqs
                .send_message()
                .queue_url(&url)
                .message_body(body)
                .message_group_id("g")
                .send()
                .await
                .unwrap();
            numbers.push(sent.sequence_number.unwrap());
        }
        let values: Vec<u128> = numbers.iter().map(|n| n.parse().unwrap()).collect();
        assert!(
            values[0] < values[1] && values[1] < values[2],
            "{numbers:?}"
        );
        assert!(values[1] - values[0] > 1, "non-consecutive: {numbers:?}");

        let got = sqs
            .receive_message()
            .queue_url(&url)
            .message_system_attribute_names(MessageSystemAttributeName::All)
            .send()
            .await
            .unwrap()
            .messages
            .unwrap();
        let attrs = got[0].attributes.as_ref().unwrap();
        let sender = &attrs[&MessageSystemAttributeName::SenderId];
        assert_eq!(
            attrs[&MessageSystemAttributeName::SequenceNumber],
            numbers[0],
            "the receive reports the number the send answered"
        );
        // Other credentials are another sender.
        let other = client(emu, "us-east-1", "AKIDOTHER");
        other
            .send_message()
            .queue_url(&url)
            .message_body("d")
            .message_group_id("h")
            .send()
            .await
            .unwrap();
        let got = other
            .receive_message()
            .queue_url(&url)
            .message_system_attribute_names(MessageSystemAttributeName::SenderId)
            .max_number_of_messages(10)
            .send()
            .await
            .unwrap()
            .messages
            .unwrap();
        let last = &got.last().unwrap().attributes.as_ref().unwrap()
            [&MessageSystemAttributeName::SenderId];
        assert_ne!(last, sender);
    })
    .await;
}

/// One raw HTTP/1.1 request; returns (status, body).
async fn raw(emu: &Target, request: String) -> (u16, String) {
    let addr = emu.endpoint_url().trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).await.unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, body.to_owned())
}

/// A query-protocol form posted to the service endpoint.
fn post(form: &str) -> String {
    format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{form}",
        form.len()
    )
}

/// An empty list under its item name (`SendMessageBatchRequestEntry=`, `MessageAttributeName=`,
/// `AttributeName=`) is an empty list too, as `Entries=` and `MessageAttributeNames=` are
/// (`suites/conformance/query-protocol.yaml`, which sends botocore's form: the member name).
/// No SDK sends these forms, so no case can: this is the emulator's reading of them.
#[tokio::test]
async fn query_empty_lists_under_item_names_are_empty_lists() {
    scenario(async |emu, sqs| {
        let url = create(&sqs, "empty").await;
        sqs.send_message()
            .queue_url(&url)
            .message_body("x")
            .send()
            .await
            .unwrap();
        let form = "Action=SendMessageBatch&Version=2012-11-05&QueueUrl=".to_owned()
            + &url
            + "&SendMessageBatchRequestEntry=";
        let (status, body) = raw(emu, post(&form)).await;
        assert_eq!(status, 400, "{body}");
        assert!(body.contains("EmptyBatchRequest"), "{body}");
        for filter in ["MessageAttributeName=", "AttributeName="] {
            let form = format!("Action=ReceiveMessage&QueueUrl={url}&VisibilityTimeout=0&{filter}");
            let (status, body) = raw(emu, post(&form)).await;
            assert_eq!(status, 200, "{filter}: {body}");
            assert!(body.contains("<Body>x</Body>"), "{filter}: {body}");
        }
    })
    .await;
}
