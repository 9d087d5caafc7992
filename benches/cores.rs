//! Do different queues scale across cores? The emulator's store without HTTP in the way.
//!
//! `cargo bench --bench cores [-- --threads N --seconds S]` runs the emulator in this process
//! and drives it from N OS threads (default: one per CPU, at least 2), each with a runtime of
//! its own calling `InProcess::answer` (the whole request path of `serve` but the socket and
//! hyper's parsing: the credential scope, the JSON, the store's locks, the answer) in a loop
//! of the raw bench's cycle: SendMessage, ReceiveMessage of one, DeleteMessage of what it got.
//! It measures requests/s for one thread, for N threads sharing one queue, and for N threads
//! each on a queue of its own, and prints each as a Markdown row with its speed-up over one
//! thread.
//!
//! Why not over sockets: `sqsprobe bench --shared-queues 1` against `2` asks the same question
//! over HTTP, but on a machine of few cores the bench's client takes half the CPU, so the
//! server never has a core to scale onto (docs/performance.md, "Where issue 23 stands"). Here
//! every thread is a client and a server at once, and the only thing the threads share is the
//! emulator: if a lock were global, N queues would scale no better than one.
//!
//! A measurement, not a test: it asserts nothing about speed; it exits 1 on a bad argument or
//! when a request fails.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use sqsprobe_emulator::{EmulatorConfig, InProcess};

/// A message body of the bench's usual size.
const BODY: &str = "sqsprobe cores bench: a message body of about one hundred bytes, the same for every message sent.";

/// Not measured, before each measurement: caches, allocator pages, the queues' first chunks.
const WARM_UP: Duration = Duration::from_millis(500);

struct Options {
    threads: usize,
    seconds: f64,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        threads: std::thread::available_parallelism().map_or(2, |n| n.get().max(2)),
        seconds: 3.0,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        // `cargo bench` passes `--bench` to every bench target.
        if arg == "--bench" {
            continue;
        }
        let value = args.next();
        match arg.as_str() {
            "--threads" => options.threads = number(&arg, value, 2..=256)?,
            "--seconds" => options.seconds = number(&arg, value, 0.1..=600.0)?,
            other => {
                return Err(format!(
                    "unknown argument {other:?} (expected --threads N, --seconds S)"
                ));
            }
        }
    }
    Ok(options)
}

/// The value of flag `name`, a number within `range`.
fn number<T>(
    name: &str,
    value: Option<String>,
    range: std::ops::RangeInclusive<T>,
) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display,
{
    let value = value.ok_or(format!("{name} needs a value"))?;
    value
        .parse()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or(format!(
            "{name} takes a number from {} to {}, not {value:?}",
            range.start(),
            range.end()
        ))
}

/// One JSON-protocol request for the emulator at `host`.
fn request(host: &str, operation: &str, body: serde_json::Value) -> hyper::Request<Bytes> {
    hyper::Request::post(format!("http://{host}/"))
        .header("content-type", "application/x-amz-json-1.0")
        .header("x-amz-target", format!("AmazonSQS.{operation}"))
        .header(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=AKIDCORES/20260101/us-east-1/sqs/aws4_request, \
             SignedHeaders=host, Signature=0",
        )
        .body(Bytes::from(body.to_string()))
        .unwrap_or_default()
}

/// Answers `request` and fails on anything but a 200.
async fn call(emulator: &InProcess, request: hyper::Request<Bytes>) -> Result<Bytes, String> {
    let response = emulator.answer(request).await;
    let status = response.status();
    let body = response.into_body();
    if status.is_success() {
        Ok(body)
    } else {
        Err(format!("{status}: {}", String::from_utf8_lossy(&body)))
    }
}

/// The receipt handle of the first message of a receive's answer, if it has one.
fn receipt_handle(answer: &[u8]) -> Option<String> {
    let answer: serde_json::Value = serde_json::from_slice(answer).ok()?;
    Some(answer["Messages"][0]["ReceiptHandle"].as_str()?.to_owned())
}

/// Requests answered by `threads` threads in `seconds`, thread `i` on queue `queues[i % len]`.
fn measure(
    emulator: &InProcess,
    host: &str,
    queues: &[String],
    threads: usize,
    seconds: f64,
) -> Result<f64, String> {
    let measuring = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..threads)
        .map(|i| {
            let emulator = emulator.clone();
            let url = queues[i % queues.len()].clone();
            let (host, measuring, stop) = (host.to_owned(), measuring.clone(), stop.clone());
            std::thread::spawn(move || -> Result<u64, String> {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| e.to_string())?;
                let send = serde_json::json!({"QueueUrl": url, "MessageBody": BODY});
                let receive = serde_json::json!({"QueueUrl": url, "MaxNumberOfMessages": 1});
                runtime.block_on(async {
                    let mut counted = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        call(&emulator, request(&host, "SendMessage", send.clone())).await?;
                        let got =
                            call(&emulator, request(&host, "ReceiveMessage", receive.clone()))
                                .await?;
                        let mut requests = 2;
                        // On a shared queue another thread may have taken the message first.
                        if let Some(handle) = receipt_handle(&got) {
                            let delete =
                                serde_json::json!({"QueueUrl": url, "ReceiptHandle": handle});
                            call(&emulator, request(&host, "DeleteMessage", delete)).await?;
                            requests += 1;
                        }
                        if measuring.load(Ordering::Relaxed) {
                            counted += requests;
                        }
                    }
                    Ok(counted)
                })
            })
        })
        .collect();
    std::thread::sleep(WARM_UP);
    measuring.store(true, Ordering::Relaxed);
    let started = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    measuring.store(false, Ordering::Relaxed);
    let elapsed = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let mut total = 0;
    for worker in workers {
        total += worker
            .join()
            .map_err(|_| "a worker thread panicked".to_owned())??;
    }
    Ok(total as f64 / elapsed)
}

fn run(options: &Options) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let running = runtime
        .block_on(sqsprobe_emulator::spawn(
            "127.0.0.1:0".parse().map_err(|e| format!("{e}"))?,
            EmulatorConfig::default(),
        ))
        .map_err(|e| format!("the emulator did not start: {e}"))?;
    let emulator = running.in_process();
    let host = running.local_addr().to_string();
    let mut queues = Vec::new();
    for i in 0..options.threads {
        let create = serde_json::json!({"QueueName": format!("cores-{i}")});
        let body = runtime.block_on(call(&emulator, request(&host, "CreateQueue", create)))?;
        let answer: serde_json::Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
        let url = answer["QueueUrl"]
            .as_str()
            .ok_or("CreateQueue gave no QueueUrl")?;
        queues.push(url.to_owned());
    }
    let n = options.threads;
    println!(
        "send -> receive -> delete cycles in process, {} s each after {} ms of warm-up, {} CPUs",
        options.seconds,
        WARM_UP.as_millis(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!();
    println!("| threads | queues | requests/s | × one thread |");
    println!("|--:|--:|--:|--:|");
    let one = measure(&emulator, &host, &queues[..1], 1, options.seconds)?;
    println!("| 1 | 1 | {one:.0} | 1.00 |");
    let shared = measure(&emulator, &host, &queues[..1], n, options.seconds)?;
    println!("| {n} | 1 | {shared:.0} | {:.2} |", shared / one);
    let own = measure(&emulator, &host, &queues, n, options.seconds)?;
    println!("| {n} | {n} | {own:.0} | {:.2} |", own / one);
    drop(running);
    Ok(())
}

fn main() {
    if let Err(message) = options().and_then(|options| run(&options)) {
        eprintln!("cores: {message}");
        std::process::exit(1);
    }
}
