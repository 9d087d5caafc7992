//! How `sqsprobe serve`'s memory and per-call cost grow with the work it holds (issue 12):
//! RSS per stored message at 200k and 1M messages (standard, and FIFO over 10k groups), and the p50 of ReceiveMessage and
//! DeleteMessage at 1k and 1M stored messages (a standard queue, and a FIFO queue spread over
//! 10k groups, with and without all but ten groups in flight), and of ListQueues (prefix) and
//! GetQueueUrl with 10 and 10k queues.
//!
//! A measurement, not a timed test: every case is `#[ignore]` and asserts nothing about time.
//! It prints one JSON line per figure; `docs/performance.md` ("Emulator cost with depth") has
//! the command and the figures. Run it on a release build:
//!
//! ```sh
//! cargo test --release --test serve_depth -- --ignored --nocapture --test-threads 1
//! ```
//!
//! Requests are unsigned AWS JSON 1.0 over one keep-alive connection (the emulator ignores
//! signatures), built by hand so the client costs as little as possible.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::serve::Serve;

/// One keep-alive connection speaking AWS JSON 1.0.
struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    host: String,
}

impl Client {
    fn connect(serve: &Serve) -> Client {
        let stream = TcpStream::connect(serve.addr).expect("connect to serve");
        stream.set_nodelay(true).expect("nodelay");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("read timeout");
        Client {
            reader: BufReader::new(stream.try_clone().expect("clone stream")),
            writer: stream,
            host: serve.addr.to_string(),
        }
    }

    /// Calls `operation` with a JSON body; returns (status, body).
    fn call(&mut self, operation: &str, body: &str) -> (u16, String) {
        let request = format!(
            "POST / HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.{operation}\r\nContent-Length: {}\r\n\r\n{body}",
            self.host,
            body.len()
        );
        self.writer
            .write_all(request.as_bytes())
            .expect("write request");
        let mut status_line = String::new();
        self.reader
            .read_line(&mut status_line)
            .expect("read status");
        let status: u16 = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).expect("read header");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().expect("content-length");
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).expect("read body");
        (status, String::from_utf8(body).expect("utf-8 body"))
    }

    fn ok(&mut self, operation: &str, body: &str) -> serde_json::Value {
        let (status, text) = self.call(operation, body);
        assert_eq!(status, 200, "{operation}: {text}");
        serde_json::from_str(&text).expect("JSON reply")
    }

    fn create(&mut self, name: &str, attributes: serde_json::Value) -> String {
        let body = serde_json::json!({"QueueName": name, "Attributes": attributes});
        self.ok("CreateQueue", &body.to_string())["QueueUrl"]
            .as_str()
            .expect("QueueUrl")
            .to_owned()
    }

    /// Sends `count` messages of `body` in batches of 10; FIFO sends spread over `groups`.
    fn fill(&mut self, url: &str, count: usize, body: &str, groups: Option<usize>) {
        let mut sent = 0;
        while sent < count {
            let entries: Vec<serde_json::Value> = (sent..count.min(sent + 10))
                .map(|i| match groups {
                    Some(g) => serde_json::json!({
                        "Id": format!("e{i}"), "MessageBody": body,
                        "MessageGroupId": format!("g{}", i % g),
                        "MessageDeduplicationId": format!("d{i}"),
                    }),
                    None => serde_json::json!({"Id": format!("e{i}"), "MessageBody": body}),
                })
                .collect();
            let n = entries.len();
            let reply = self.ok(
                "SendMessageBatch",
                &serde_json::json!({"QueueUrl": url, "Entries": entries}).to_string(),
            );
            assert!(reply.get("Failed").is_none(), "{reply}");
            sent += n;
        }
    }
}

/// Resident set size of a process, in bytes (Linux `/proc/<pid>/status`).
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .expect("VmRSS")
        * 1024
}

/// `serve` with room for the figures; `SQSPROBE_DEPTH_BIN` measures another build (an older
/// commit's binary, for before/after figures) instead of this one.
fn start() -> Serve {
    let addr: std::net::SocketAddr = ([127, 0, 0, 1], common::free_port()).into();
    let bin = std::env::var_os("SQSPROBE_DEPTH_BIN").map_or_else(common::bin, Into::into);
    let child = std::process::Command::new(bin)
        .args(["serve", "--listen", &addr.to_string()])
        .args(["--max-messages", "2000000", "--max-stored-bytes", "4GiB"])
        .args(["--max-queues", "20000"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start sqsprobe serve");
    assert!(
        common::wait_for_port(addr, Duration::from_secs(10)),
        "serve did not listen on {addr}"
    );
    Serve {
        child: Some(child),
        url: format!("http://{addr}"),
        addr,
    }
}

fn pid(serve: &Serve) -> u32 {
    serve.child.as_ref().expect("serve runs").id()
}

fn p50(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1e6
}

fn report(figure: &str, fields: serde_json::Value) {
    let mut line = serde_json::json!({"figure": figure});
    line.as_object_mut()
        .expect("object")
        .extend(fields.as_object().expect("object").clone());
    println!("{line}");
}

/// RSS growth per stored 11-byte message, minus the message's own bytes.
fn memory_per_message(count: usize, fifo: bool) {
    let serve = start();
    let mut client = Client::connect(&serve);
    let url = if fifo {
        client.create("mem.fifo", serde_json::json!({"FifoQueue": "true"}))
    } else {
        client.create("mem", serde_json::json!({}))
    };
    // One warm-up batch so allocator arenas and connection buffers exist before the baseline.
    client.fill(&url, 10, "hello world", fifo.then_some(10_000));
    let before = rss(pid(&serve));
    let started = Instant::now();
    client.fill(&url, count, "hello world", fifo.then_some(10_000));
    let after = rss(pid(&serve));
    let fill_seconds = started.elapsed().as_secs();
    // Whether the first send's 5-minute dedup entry (the warm-up's `d0`) was still held after
    // RSS was read (entries expire oldest first, so then all were): its duplicate is not stored.
    let dedup_held = fifo.then(|| {
        let count = |client: &mut Client| {
            let body = serde_json::json!({
                "QueueUrl": url, "AttributeNames": ["ApproximateNumberOfMessages"],
            });
            client.ok("GetQueueAttributes", &body.to_string())["Attributes"]
                ["ApproximateNumberOfMessages"]
                .as_str()
                .expect("ApproximateNumberOfMessages")
                .to_owned()
        };
        let stored = count(&mut client);
        let duplicate = serde_json::json!({
            "QueueUrl": url, "MessageBody": "hello world",
            "MessageGroupId": "g0", "MessageDeduplicationId": "d0",
        });
        client.ok("SendMessage", &duplicate.to_string());
        count(&mut client) == stored
    });
    let per_message = (after - before) as f64 / count as f64;
    report(
        "memory",
        serde_json::json!({
            "queue": if fifo { "fifo, 10k groups" } else { "standard" },
            "messages": count, "body_bytes": 11,
            "rss_before": before, "rss_after": after, "fill_seconds": fill_seconds,
            "dedup_of_first_send_held": dedup_held,
            "rss_per_message": per_message.round(),
            "overhead_per_message": (per_message - 11.0).round(),
        }),
    );
}

#[test]
#[ignore = "measurement: run with --release -- --ignored --nocapture"]
fn memory_per_stored_message() {
    for count in [200_000, 1_000_000] {
        memory_per_message(count, false);
    }
}

/// The same on a FIFO queue over 10k groups; every message also holds a 5-minute dedup entry.
#[test]
#[ignore = "measurement: run with --release -- --ignored --nocapture"]
fn memory_per_stored_fifo_message() {
    for count in [200_000, 1_000_000] {
        memory_per_message(count, true);
    }
}

/// p50 of ReceiveMessage (max 1) and of DeleteMessage of what it returned, with `depth`
/// messages stored; each cycle sends one message back so the depth stays put. With `held`,
/// a FIFO queue first has one message of every group but ten leased for an hour, so a receive
/// must find the few groups that can deliver among thousands that cannot.
fn receive_delete_at_depth(depth: usize, fifo: bool, held: bool) {
    let serve = start();
    let mut client = Client::connect(&serve);
    let groups = fifo.then_some(10_000usize.min(depth));
    let url = if fifo {
        client.create(
            "depth.fifo",
            serde_json::json!({"FifoQueue": "true", "ContentBasedDeduplication": "true"}),
        )
    } else {
        client.create("depth", serde_json::json!({}))
    };
    client.fill(&url, depth, "hello world", groups);
    if let (true, Some(g)) = (held, groups) {
        // One receive per group: a receive of 1 takes the head of the first group that can
        // deliver, which then cannot until the hour is over.
        let hold = serde_json::json!({"QueueUrl": url, "VisibilityTimeout": 3600}).to_string();
        for _ in 0..g - 10 {
            client.ok("ReceiveMessage", &hold);
        }
    }
    // Held groups: each free group has depth/groups messages; 1,000 cycles stay within them.
    let cycles = if held { 1_000 } else { 5_000 };
    let mut receives = Vec::with_capacity(cycles);
    let mut deletes = Vec::with_capacity(cycles);
    let receive = serde_json::json!({
        "QueueUrl": url, "MaxNumberOfMessages": 1,
        "MessageSystemAttributeNames": ["MessageGroupId"],
    })
    .to_string();
    for i in 0..cycles {
        let started = Instant::now();
        let got = client.ok("ReceiveMessage", &receive);
        receives.push(started.elapsed());
        let group = got["Messages"][0]["Attributes"]["MessageGroupId"].clone();
        let handle = got["Messages"][0]["ReceiptHandle"]
            .as_str()
            .expect("a message at every depth")
            .to_owned();
        let delete = serde_json::json!({"QueueUrl": url, "ReceiptHandle": handle}).to_string();
        let started = Instant::now();
        client.ok("DeleteMessage", &delete);
        deletes.push(started.elapsed());
        let mut refill = serde_json::json!({"QueueUrl": url, "MessageBody": format!("r{i}")});
        // Back into the group it came from, so the groups that can deliver keep a message.
        if groups.is_some() {
            refill["MessageGroupId"] = group;
        }
        client.ok("SendMessage", &refill.to_string());
    }
    report(
        "depth",
        serde_json::json!({
            "queue": if fifo { "fifo" } else { "standard" },
            "groups": groups, "groups_held_in_flight": held.then(|| groups.map(|g| g - 10)),
            "depth": depth, "cycles": cycles,
            "receive_p50_us": p50(receives).round(), "delete_p50_us": p50(deletes).round(),
        }),
    );
}

#[test]
#[ignore = "measurement: run with --release -- --ignored --nocapture"]
fn receive_and_delete_cost_with_depth() {
    for fifo in [false, true] {
        for depth in [1_000, 1_000_000] {
            receive_delete_at_depth(depth, fifo, false);
        }
    }
}

#[test]
#[ignore = "measurement: run with --release -- --ignored --nocapture"]
fn receive_cost_with_most_groups_in_flight() {
    for depth in [1_000, 1_000_000] {
        receive_delete_at_depth(depth, true, true);
    }
}

/// p50 of ListQueues (a prefix matching one queue) and GetQueueUrl with `count` queues.
fn queue_lookups(count: usize) {
    let serve = start();
    let mut client = Client::connect(&serve);
    for i in 0..count {
        client.create(&format!("q{i:05}"), serde_json::json!({}));
    }
    let mut lists = Vec::new();
    let mut urls = Vec::new();
    for i in 0..2_000 {
        let name = format!("q{:05}", (i * 7919) % count);
        let list = serde_json::json!({"QueueNamePrefix": name}).to_string();
        let started = Instant::now();
        let reply = client.ok("ListQueues", &list);
        lists.push(started.elapsed());
        assert_eq!(reply["QueueUrls"].as_array().map(Vec::len), Some(1));
        let get = serde_json::json!({"QueueName": name}).to_string();
        let started = Instant::now();
        client.ok("GetQueueUrl", &get);
        urls.push(started.elapsed());
    }
    report(
        "queues",
        serde_json::json!({
            "queues": count,
            "list_queues_prefix_p50_us": p50(lists).round(),
            "get_queue_url_p50_us": p50(urls).round(),
        }),
    );
}

#[test]
#[ignore = "measurement: run with --release -- --ignored --nocapture"]
fn queue_lookup_cost_with_queue_count() {
    for count in [10, 10_000] {
        queue_lookups(count);
    }
}
