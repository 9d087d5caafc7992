//! How a Rust team tests its own SQS consumer against the emulator, in-process, from its own
//! `#[tokio::test]`s: the example the crate's documentation points at, run as a test so it
//! cannot rot. Each test starts its own emulator on `127.0.0.1:0`, so they run in parallel.
//!
//! - over a socket: [`sqsprobe_emulator::spawn`], the SDK pointed at `endpoint_url()`;
//! - in virtual time: the same emulator answering the SDK through
//!   [`sqsprobe_emulator::InProcessClient`] on a paused runtime, where a 30-second visibility
//!   timeout lapses at once;
//! - with chaos: [`sqsprobe_emulator::Chaos`] in the configuration, seeded, so a consumer's
//!   duplicate handling is exercised the same way on every run.

use aws_sdk_sqs::Client;
use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sqs::types::QueueAttributeName;
use sqsprobe_emulator::{Chaos, EmulatorConfig, InProcessClient, RunningEmulator};

/// An SDK client for `emulator`: over its socket, or in-process when `in_process`.
fn client(emulator: &RunningEmulator, in_process: bool) -> Client {
    let mut conf = aws_sdk_sqs::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(emulator.endpoint_url())
        .credentials_provider(Credentials::new("test", "test", None, None, "test"));
    if in_process {
        conf = conf.http_client(InProcessClient::new(emulator.in_process()));
    }
    Client::from_conf(conf.build())
}

async fn start(config: EmulatorConfig) -> RunningEmulator {
    sqsprobe_emulator::spawn("127.0.0.1:0".parse().unwrap(), config)
        .await
        .expect("the emulator binds an ephemeral port")
}

/// A queue named `name` with a visibility timeout of `lease_s` seconds, holding one message
/// `body`: the set-up every test below starts from. Returns the queue's URL.
async fn queue_with_one_message(sqs: &Client, name: &str, lease_s: u32, body: &str) -> String {
    let url = sqs
        .create_queue()
        .queue_name(name)
        .attributes(QueueAttributeName::VisibilityTimeout, lease_s.to_string())
        .send()
        .await
        .unwrap()
        .queue_url
        .unwrap();
    sqs.send_message()
        .queue_url(&url)
        .message_body(body)
        .send()
        .await
        .unwrap();
    url
}

/// The consumer under test: takes one message, "processes" it, deletes it. Returns the body.
async fn consume_one(sqs: &Client, queue_url: &str) -> Option<String> {
    let got = sqs
        .receive_message()
        .queue_url(queue_url)
        .wait_time_seconds(1)
        .send()
        .await
        .unwrap();
    let message = got.messages?.into_iter().next()?;
    sqs.delete_message()
        .queue_url(queue_url)
        .receipt_handle(message.receipt_handle.unwrap())
        .send()
        .await
        .unwrap();
    message.body
}

async fn messages_left(sqs: &Client, queue_url: &str) -> String {
    let attrs = sqs
        .get_queue_attributes()
        .queue_url(queue_url)
        .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
        .attribute_names(QueueAttributeName::ApproximateNumberOfMessagesNotVisible)
        .send()
        .await
        .unwrap()
        .attributes
        .unwrap();
    format!(
        "{} visible, {} in flight",
        attrs[&QueueAttributeName::ApproximateNumberOfMessages],
        attrs[&QueueAttributeName::ApproximateNumberOfMessagesNotVisible]
    )
}

#[tokio::test]
async fn a_consumer_takes_and_deletes_a_message_over_a_socket() {
    let emulator = start(EmulatorConfig::default()).await;
    let addr = emulator.local_addr();
    assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");
    let sqs = client(&emulator, false);
    let url = queue_with_one_message(&sqs, "orders", 30, "order-1").await;

    assert_eq!(consume_one(&sqs, &url).await.as_deref(), Some("order-1"));
    assert_eq!(messages_left(&sqs, &url).await, "0 visible, 0 in flight");

    emulator.shutdown().await;
    // Shut down means the port is closed: nothing answers there any more.
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

/// A consumer that never deletes sees the message again once its lease lapses: in virtual time,
/// the 30 s visibility timeout passes as soon as every task waits.
#[tokio::test(start_paused = true)]
async fn a_lapsed_lease_redelivers_in_virtual_time() {
    let emulator = start(EmulatorConfig::default()).await;
    let sqs = client(&emulator, true);
    let url = queue_with_one_message(&sqs, "leases", 30, "job").await;
    let receive = || async {
        sqs.receive_message()
            .queue_url(&url)
            .message_system_attribute_names(
                aws_sdk_sqs::types::MessageSystemAttributeName::ApproximateReceiveCount,
            )
            .send()
            .await
            .unwrap()
            .messages
            .unwrap_or_default()
    };
    let first = receive().await;
    assert_eq!(first.len(), 1);
    assert!(receive().await.is_empty(), "leased: not visible");

    // The emulator's clock is tokio's: on a paused runtime this returns at once.
    let before = emulator.now_ms();
    tokio::time::sleep(std::time::Duration::from_secs(31)).await;
    assert!(emulator.now_ms() - before >= 31_000);

    let again = receive().await;
    assert_eq!(again.len(), 1, "the lapsed lease gave the message back");
    let count = again[0].attributes.as_ref().unwrap()
        [&aws_sdk_sqs::types::MessageSystemAttributeName::ApproximateReceiveCount]
        .clone();
    assert_eq!(count, "2");
    emulator.shutdown().await;
}

/// Chaos from the configuration, seeded: every delete here is acknowledged and the message
/// still comes back once, as at-least-once delivery allows; a consumer's duplicate handling
/// is tested deterministically.
#[tokio::test(start_paused = true)]
async fn chaos_redelivers_a_deleted_message() {
    let chaos = Chaos::parse("redeliver-after-delete=1,seed=7").unwrap();
    let emulator = start(EmulatorConfig {
        chaos,
        ..EmulatorConfig::default()
    })
    .await;
    let sqs = client(&emulator, true);
    let url = queue_with_one_message(&sqs, "payments", 5, "pay-1").await;

    assert_eq!(consume_one(&sqs, &url).await.as_deref(), Some("pay-1"));
    tokio::time::sleep(std::time::Duration::from_secs(6)).await;
    assert_eq!(
        consume_one(&sqs, &url).await.as_deref(),
        Some("pay-1"),
        "deleted, yet delivered again: the consumer must be idempotent"
    );
    tokio::time::sleep(std::time::Duration::from_secs(6)).await;
    assert_eq!(consume_one(&sqs, &url).await, None, "at most once more");
    emulator.shutdown().await;
}
