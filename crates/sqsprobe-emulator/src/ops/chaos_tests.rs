//! Opt-in chaos as the operations apply it (`support::chaos` rolls the dice): short polls that
//! miss, responses out of order, duplicate copies of leased messages, a slow and a throttling
//! server, and a queue's own chaos from its tag. On a paused clock.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::chaos::{Chaos, QUEUE_TAG};
use crate::test_support::{advance, call, create, emulator, emulator_with_chaos, receive, send};

fn bodies(messages: &[Value]) -> Vec<&str> {
    messages.iter().filter_map(|m| m["Body"].as_str()).collect()
}

#[tokio::test(start_paused = true)]
async fn a_short_poll_that_misses_takes_fewer_and_a_long_poll_does_not_miss() {
    let emu = emulator_with_chaos(Chaos {
        short_poll_miss: 1.0,
        ..Chaos::default()
    });
    let url = create(&emu, "q", json!({})).await;
    for b in ["a", "b", "c"] {
        send(&emu, &url, b).await;
    }
    for _ in 0..10 {
        let got = receive(&emu, &url, 3, json!({"VisibilityTimeout": 0})).await;
        assert!(got.len() < 3, "a short poll under chaos took {}", got.len());
    }
    let long = receive(&emu, &url, 3, json!({"WaitTimeSeconds": 1})).await;
    assert_eq!(long.len(), 3, "a long poll asks every server");
}

#[tokio::test(start_paused = true)]
async fn reorder_puts_a_response_out_of_send_order() {
    let emu = emulator_with_chaos(Chaos {
        reorder: 1.0,
        ..Chaos::default()
    });
    let url = create(&emu, "q", json!({})).await;
    for b in ["a", "b", "c", "d"] {
        send(&emu, &url, b).await;
    }
    let got = receive(&emu, &url, 4, json!({})).await;
    let mut sorted = bodies(&got);
    assert_ne!(sorted, ["a", "b", "c", "d"]);
    sorted.sort_unstable();
    assert_eq!(sorted, ["a", "b", "c", "d"]);
}

#[tokio::test(start_paused = true)]
async fn duplicate_delivers_a_copy_of_a_leased_message_once() {
    let emu = emulator_with_chaos(Chaos {
        duplicate: 1.0,
        ..Chaos::default()
    });
    let url = create(&emu, "q", json!({})).await;
    send(&emu, &url, "a").await;
    let first = receive(&emu, &url, 1, json!({})).await;
    let copy = receive(
        &emu,
        &url,
        1,
        json!({"MessageSystemAttributeNames": ["All"]}),
    )
    .await;
    assert_eq!(bodies(&copy), ["a"], "a copy while the first lease holds");
    assert_eq!(copy[0]["MessageId"], first[0]["MessageId"]);
    assert_ne!(copy[0]["ReceiptHandle"], first[0]["ReceiptHandle"]);
    assert_eq!(copy[0]["Attributes"]["ApproximateReceiveCount"], "2");
    assert!(
        receive(&emu, &url, 1, json!({})).await.is_empty(),
        "once per message"
    );
    // Either handle deletes the message (any handle ever issued works on a standard queue).
    call(
        &emu,
        "DeleteMessage",
        json!({"QueueUrl": url, "ReceiptHandle": first[0]["ReceiptHandle"]}),
    )
    .await
    .unwrap();
    advance(31).await;
    assert!(receive(&emu, &url, 1, json!({})).await.is_empty());
}

#[tokio::test(start_paused = true)]
async fn fifo_queues_keep_order_and_exactly_once_under_chaos() {
    let emu = emulator_with_chaos(Chaos {
        reorder: 1.0,
        duplicate: 1.0,
        ..Chaos::default()
    });
    let url = crate::test_support::create_fifo(&emu).await;
    for b in ["a", "b", "c"] {
        call(
            &emu,
            "SendMessage",
            json!({"QueueUrl": url, "MessageBody": b, "MessageGroupId": "g"}),
        )
        .await
        .unwrap();
    }
    let got = receive(&emu, &url, 3, json!({})).await;
    assert_eq!(bodies(&got), ["a", "b", "c"]);
    assert!(receive(&emu, &url, 3, json!({})).await.is_empty());
}

#[tokio::test(start_paused = true)]
async fn the_server_waits_and_throttles_as_set() {
    let slow = emulator_with_chaos(Chaos {
        latency: Duration::from_millis(1500),
        ..Chaos::default()
    });
    let started = tokio::time::Instant::now();
    create(&slow, "q", json!({})).await;
    assert!(started.elapsed() >= Duration::from_millis(1500));

    let throttling = emulator_with_chaos(Chaos {
        throttle: 1.0,
        ..Chaos::default()
    });
    let err = call(&throttling, "ListQueues", json!({}))
        .await
        .unwrap_err();
    assert_eq!((err.code(), err.status()), ("RequestThrottled", 400));
    assert!(emulator().chaos.latency().is_none());
}

#[tokio::test(start_paused = true)]
async fn a_queue_tag_gives_that_queue_its_own_chaos() {
    let emu = emulator();
    let chaotic = call(
        &emu,
        "CreateQueue",
        json!({"QueueName": "c", "tags": {QUEUE_TAG: "redeliver-after-delete=1"}}),
    )
    .await
    .unwrap()["QueueUrl"]
        .as_str()
        .unwrap()
        .to_owned();
    let calm = create(&emu, "q", json!({})).await;
    for url in [&chaotic, &calm] {
        send(&emu, url, "a").await;
        let got = receive(&emu, url, 1, json!({"VisibilityTimeout": 1})).await;
        call(
            &emu,
            "DeleteMessage",
            json!({"QueueUrl": url, "ReceiptHandle": got[0]["ReceiptHandle"]}),
        )
        .await
        .unwrap();
    }
    advance(2).await;
    assert_eq!(bodies(&receive(&emu, &chaotic, 1, json!({})).await), ["a"]);
    assert!(receive(&emu, &calm, 1, json!({})).await.is_empty());

    // A tag that does not parse, or names a server-wide setting, is refused.
    for bad in ["redeliver-after-delete=2", "throttle=1"] {
        let err = call(
            &emu,
            "CreateQueue",
            json!({"QueueName": "x", "tags": {QUEUE_TAG: bad}}),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code(), "InvalidParameterValue", "{bad}");
        assert!(err.message.contains(QUEUE_TAG), "{}", err.message);
    }
    let err = call(
        &emu,
        "TagQueue",
        json!({"QueueUrl": calm, "Tags": {QUEUE_TAG: "seed=x"}}),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), "InvalidParameterValue");
}

/// An audit's own set-up is spared the server-wide chaos: its requests are never throttled or
/// slowed, the consumer's are.
#[tokio::test(start_paused = true)]
async fn an_audits_own_set_up_is_spared_the_servers_chaos() {
    use crate::support::audit::{Ack, AuditObserver, Delivery};
    #[derive(Debug)]
    struct Spares;
    impl AuditObserver for Spares {
        fn delivered(&self, _: Delivery) {}
        fn acknowledged(&self, _: Ack) {}
        fn spares(&self, key: Option<&str>) -> bool {
            key == Some("setup")
        }
    }
    let emu = crate::test_support::emulator_with(crate::EmulatorConfig {
        chaos: Chaos {
            throttle: 1.0,
            latency: Duration::from_millis(1500),
            ..Chaos::default()
        },
        audit: Some(std::sync::Arc::new(Spares)),
        ..crate::EmulatorConfig::default()
    });
    let ctx = |key: &str| crate::ops::context::RequestContext {
        host: "localhost:9324".into(),
        query: false,
        trace_header: None,
        region: "us-east-1".into(),
        access_key: Some(key.into()),
    };
    let body = crate::protocol::json::decode(b"{}").unwrap();
    let started = tokio::time::Instant::now();
    let setup = crate::dispatch::dispatch(&emu, "ListQueues", body.input(), &ctx("setup")).await;
    assert!(setup.is_ok());
    assert_eq!(started.elapsed(), Duration::ZERO);
    let consumer =
        crate::dispatch::dispatch(&emu, "ListQueues", body.input(), &ctx("consumer")).await;
    assert_eq!(consumer.err().map(|e| e.code()), Some("RequestThrottled"));
    assert!(started.elapsed() >= Duration::from_millis(1500));
}
