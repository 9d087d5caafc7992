//! The locking rule of `model/store.rs` under load: operations on two queues proceed while one
//! of them is held, and many threads sending, receiving, deleting and dead-lettering on two
//! queues at once lose and duplicate nothing. Real threads (a multi-threaded runtime) and the
//! real clock: these tests are about interleavings a paused clock would not produce.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::model::store::Emulator;
use crate::test_support::{call, create, emulator};

const ARN: &str = "arn:aws:sqs:us-east-1:000000000000";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_held_does_not_hold_up_another() {
    let emu = emulator();
    let a = create(&emu, "a", json!({})).await;
    let b = create(&emu, "b", json!({})).await;
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let holder = {
        let emu = Arc::clone(&emu);
        std::thread::spawn(move || {
            let state = emu.read();
            let _queue = state.lock_queue(&format!("{ARN}:a")).unwrap();
            held_tx.send(()).unwrap();
            release_rx.recv().unwrap();
        })
    };
    held_rx.recv().unwrap();
    // Queue a is locked by another thread: b answers at once, a waits for it.
    let to_b = call(
        &emu,
        "SendMessage",
        json!({"QueueUrl": b, "MessageBody": "x"}),
    );
    tokio::time::timeout(Duration::from_secs(10), to_b)
        .await
        .expect("a send to b waited for queue a")
        .unwrap();
    let to_a = {
        let emu = Arc::clone(&emu);
        tokio::spawn(async move {
            call(
                &emu,
                "SendMessage",
                json!({"QueueUrl": a, "MessageBody": "y"}),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!to_a.is_finished(), "a send to a did not wait for a's lock");
    release_tx.send(()).unwrap();
    holder.join().unwrap();
    to_a.await.unwrap().unwrap();
}

/// Bodies of the messages a receive returned, with their handles.
fn received(out: &Value) -> Vec<(String, String)> {
    out.get("Messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|m| {
            let field = |k: &str| m[k].as_str().unwrap_or_default().to_owned();
            (field("Body"), field("ReceiptHandle"))
        })
        .collect()
}

/// Receives from `url` until `done`, deleting what it gets and counting each body it got.
async fn consume(
    emu: Arc<Emulator>,
    url: String,
    done: Arc<AtomicBool>,
    got: Arc<Mutex<HashMap<String, u32>>>,
) {
    while !done.load(Ordering::SeqCst) {
        let params = json!({"QueueUrl": url, "MaxNumberOfMessages": 10, "VisibilityTimeout": 600});
        let out = call(&emu, "ReceiveMessage", params).await.unwrap();
        let messages = received(&out);
        if messages.is_empty() {
            tokio::task::yield_now().await;
        }
        for (body, handle) in messages {
            *got.lock().unwrap().entry(body).or_default() += 1;
            let params = json!({"QueueUrl": url, "ReceiptHandle": handle});
            call(&emu, "DeleteMessage", params).await.unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hammering_two_queues_and_a_dead_letter_move_loses_and_duplicates_nothing() {
    const SENDERS: usize = 4;
    const PER_SENDER: usize = 200;
    let emu = emulator();
    let dlq = create(&emu, "dlq", json!({})).await;
    let policy = format!(r#"{{"deadLetterTargetArn":"{ARN}:dlq","maxReceiveCount":2}}"#);
    let a = create(&emu, "a", json!({"RedrivePolicy": policy})).await;
    let b = create(&emu, "b", json!({})).await;
    let done = Arc::new(AtomicBool::new(false));
    let from_dlq = Arc::new(Mutex::new(HashMap::new()));
    let from_b = Arc::new(Mutex::new(HashMap::new()));
    let mut tasks = Vec::new();
    for (url, got) in [
        (&dlq, &from_dlq),
        (&dlq, &from_dlq),
        (&b, &from_b),
        (&b, &from_b),
    ] {
        let task = consume(
            Arc::clone(&emu),
            url.clone(),
            Arc::clone(&done),
            Arc::clone(got),
        );
        tasks.push(tokio::spawn(task));
    }
    // Receivers on a that never delete, with a lease of 0 s: every message of a is received
    // until its receive count reaches 2, and the receive after that moves it to the DLQ.
    for _ in 0..2 {
        let (emu, a, done) = (Arc::clone(&emu), a.clone(), Arc::clone(&done));
        tasks.push(tokio::spawn(async move {
            while !done.load(Ordering::SeqCst) {
                let params =
                    json!({"QueueUrl": a, "MaxNumberOfMessages": 10, "VisibilityTimeout": 0});
                if received(&call(&emu, "ReceiveMessage", params).await.unwrap()).is_empty() {
                    tokio::task::yield_now().await;
                }
            }
        }));
    }
    let senders: Vec<_> = (0..SENDERS)
        .map(|s| {
            let (emu, a, b) = (Arc::clone(&emu), a.clone(), b.clone());
            tokio::spawn(async move {
                for i in 0..PER_SENDER {
                    for (url, name) in [(&a, "a"), (&b, "b")] {
                        let body = format!("{name}-{s}-{i}");
                        let params = json!({"QueueUrl": url, "MessageBody": body});
                        call(&emu, "SendMessage", params).await.unwrap();
                    }
                }
            })
        })
        .collect();
    for sender in senders {
        sender.await.unwrap();
    }
    let total = SENDERS * PER_SENDER;
    let finished = tokio::time::timeout(Duration::from_secs(60), async {
        while from_dlq.lock().unwrap().len() < total || from_b.lock().unwrap().len() < total {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    done.store(true, Ordering::SeqCst);
    for task in tasks {
        task.await.unwrap();
    }
    assert!(finished.is_ok(), "not every message arrived within 60 s");
    for (name, got) in [("a", &from_dlq), ("b", &from_b)] {
        let got = got.lock().unwrap();
        let twice: Vec<_> = got.iter().filter(|(_, n)| **n != 1).collect();
        assert!(twice.is_empty(), "delivered more than once: {twice:?}");
        for s in 0..SENDERS {
            for i in 0..PER_SENDER {
                let body = format!("{name}-{s}-{i}");
                assert!(got.contains_key(&body), "{body} was lost");
            }
        }
        assert_eq!(got.len(), total);
    }
    let state = emu.read();
    assert_eq!((state.usage.messages(), state.usage.bytes()), (0, 0));
    for name in ["a", "b", "dlq"] {
        let queue = state.lock_queue(&format!("{ARN}:{name}")).unwrap();
        assert_eq!(queue.counts(), (0, 0, 0), "{name}");
    }
}
