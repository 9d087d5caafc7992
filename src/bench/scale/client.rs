//! One keep-alive AWS JSON 1.0 connection to the bench's `serve` (I/O): each call timed from
//! writing the request to the answer's last byte, its JSON read after the clock stops.
//!
//! The raw driver's [`Connection`] underneath: unsigned, no pool, no retries, a 15 s bound on
//! every request.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hyper::header::HeaderValue;
use serde_json::{Value, json};

use crate::bench::raw::connection::Connection;
use crate::bench::raw::protocol::json_request;

/// Body of every message the scale workloads store: 11 bytes, as in the documented figure.
pub(crate) const BODY: &str = "hello world";

/// Entries per SendMessageBatch (the SQS maximum).
const BATCH: u64 = 10;

/// A client of one server.
pub(crate) struct Client {
    conn: Connection,
}

impl Client {
    pub(crate) fn new(addr: SocketAddr) -> Client {
        // An IP address and port are always a valid Host header.
        let authority = HeaderValue::from_str(&addr.to_string())
            .unwrap_or_else(|_| HeaderValue::from_static("127.0.0.1"));
        Client {
            conn: Connection::new(vec![addr], authority),
        }
    }

    /// Calls `operation`; the answer must be 200 with a JSON body. Returns it and the time the
    /// request took.
    pub(crate) async fn call(
        &mut self,
        operation: &'static str,
        body: &Value,
    ) -> Result<(Value, Duration), String> {
        let request = json_request(operation, body);
        let started = Instant::now();
        let answer = self
            .conn
            .send(&request)
            .await
            .map_err(|e| format!("{operation}: {e}"))?;
        let took = started.elapsed();
        if answer.status != 200 {
            let text: String = String::from_utf8_lossy(&answer.body)
                .chars()
                .take(300)
                .collect();
            return Err(format!(
                "{operation} answered HTTP {}: {text}",
                answer.status
            ));
        }
        let value = serde_json::from_slice(&answer.body)
            .map_err(|e| format!("{operation}: the answer is not JSON: {e}"))?;
        Ok((value, took))
    }

    /// Creates a queue; returns its URL.
    pub(crate) async fn create_queue(
        &mut self,
        name: &str,
        attributes: Value,
    ) -> Result<String, String> {
        let (answer, _) = self
            .call(
                "CreateQueue",
                &json!({"QueueName": name, "Attributes": attributes}),
            )
            .await?;
        answer["QueueUrl"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("CreateQueue {name}: no QueueUrl in the answer"))
    }
}

/// Where a queue's messages go, and the running count that names each send.
pub(crate) struct Filler {
    pub queue_url: String,
    /// FIFO: messages go round-robin to this many groups, each with its own deduplication id.
    pub groups: Option<u64>,
    /// Messages sent so far (also the next deduplication id).
    pub sent: u64,
}

impl Filler {
    /// A send's FIFO fields for message number `n`, into `group` (default: round-robin).
    fn fifo_fields(&self, entry: &mut Value, n: u64, group: Option<&Value>) {
        if let Some(groups) = self.groups {
            entry["MessageGroupId"] = group
                .cloned()
                .unwrap_or_else(|| json!(format!("g{}", n % groups)));
            entry["MessageDeduplicationId"] = json!(format!("d{n}"));
        }
    }

    /// Sends until `target` messages were sent, in batches of ten; `stop` is read between
    /// batches.
    pub(crate) async fn fill_to(
        &mut self,
        client: &mut Client,
        target: u64,
        stop: &crate::bench::Stop,
    ) -> Result<(), String> {
        while self.sent < target {
            if stop.requested() {
                return Err("cut by a signal".into());
            }
            let entries: Vec<Value> = (self.sent..target.min(self.sent + BATCH))
                .map(|n| {
                    let mut entry = json!({"Id": format!("e{}", n % BATCH), "MessageBody": BODY});
                    self.fifo_fields(&mut entry, n, None);
                    entry
                })
                .collect();
            let count = entries.len() as u64;
            let (answer, _) = client
                .call(
                    "SendMessageBatch",
                    &json!({"QueueUrl": self.queue_url, "Entries": entries}),
                )
                .await?;
            if let Some(failed) = answer["Failed"].as_array().filter(|f| !f.is_empty()) {
                return Err(format!(
                    "SendMessageBatch failed {} entries at {} sent: {}",
                    failed.len(),
                    self.sent,
                    Value::Array(failed.clone())
                ));
            }
            self.sent += count;
        }
        Ok(())
    }

    /// One message back into `group` (FIFO) so a cycle leaves the depth as it found it.
    pub(crate) async fn send_one(
        &mut self,
        client: &mut Client,
        group: Option<&Value>,
    ) -> Result<(), String> {
        let mut body = json!({"QueueUrl": self.queue_url, "MessageBody": BODY});
        self.fifo_fields(&mut body, self.sent, group);
        client.call("SendMessage", &body).await?;
        self.sent += 1;
        Ok(())
    }
}
