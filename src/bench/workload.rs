//! Drives one target: N clients, each on its own disposable queue, looping
//! send → receive → delete for a bounded time.
//!
//! Retries are off so every failed call is counted as an error rather than hidden inside a
//! slower success. Every client builds its own SDK client (its own connection pool), as N
//! independent consumers would.

use std::time::{Duration, Instant};

use aws_sdk_sqs::Client;
use aws_sdk_sqs::config::retry::RetryConfig;
use aws_sdk_sqs::error::DisplayErrorContext;
use tokio::task::JoinSet;

use super::result::{OpStats, Operation, TargetResult};
use crate::runner::target::{TargetConfig, TargetKind, build_client};

/// Receive waits at most this long for the one message in flight: a long poll returns as soon
/// as the message is there, and stops a short-poll sampler (AWS) from reporting false empties.
const RECEIVE_WAIT_SECONDS: i32 = 1;

/// What every client does and for how long.
#[derive(Debug, Clone)]
pub(crate) struct Workload {
    pub clients: usize,
    /// The measured phase; no cycle starts after it ends.
    pub duration: Duration,
    /// A phase before it whose calls are not counted (connections, JIT-like warm paths).
    pub warmup: Duration,
    /// Stop a client after this many measured cycles, if set.
    pub messages_per_client: Option<u64>,
    pub region: Option<String>,
    /// Set by a signal: no cycle starts after it.
    pub stop: super::stop::Stop,
}

/// What one client recorded in the measured phase.
#[derive(Debug, Default)]
struct ClientLog {
    samples: [Vec<u64>; 3],
    errors: [u64; 3],
    first_error: [Option<String>; 3],
    cycles: u64,
    empty_receives: u64,
    /// When the last cycle of the phase returned.
    finished: Option<Instant>,
}

impl ClientLog {
    fn record<T, E: std::error::Error>(
        &mut self,
        op: Operation,
        started: Instant,
        outcome: &Result<T, E>,
    ) {
        let i = op as usize;
        match outcome {
            Ok(_) => self.samples[i].push(started.elapsed().as_micros() as u64),
            Err(e) => {
                self.errors[i] += 1;
                if self.first_error[i].is_none() {
                    // Printed and saved in --json: masked like evidence (server messages carry
                    // queue URLs with the account id, and principal ARNs).
                    self.first_error[i] = Some(sqsprobe_core::evidence::digest::mask_identities(
                        &DisplayErrorContext(e).to_string(),
                    ));
                }
            }
        }
    }
}

/// A short random id so parallel or repeated runs never share a queue name.
fn run_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..8].to_string()
}

async fn client_for(url: &str, region: Option<String>) -> Client {
    let target = TargetConfig {
        kind: TargetKind::Endpoint,
        endpoint_url: Some(url.to_string()),
        region,
        profile: None,
        protocol: sqsprobe_facts::sqs::protocol::Protocol::Json,
    };
    let (client, _) = build_client(&target).await;
    let conf = client
        .config()
        .to_builder()
        .retry_config(RetryConfig::disabled())
        .build();
    Client::from_conf(conf)
}

/// One cycle; returns whether all three calls succeeded. Stops receiving at `deadline`.
async fn cycle(
    client: &Client,
    queue_url: &str,
    n: u64,
    log: &mut ClientLog,
    deadline: Instant,
) -> bool {
    let started = Instant::now();
    let sent = client
        .send_message()
        .queue_url(queue_url)
        .message_body(format!("sqsprobe bench message {n}"))
        .send()
        .await;
    log.record(Operation::SendMessage, started, &sent);
    if sent.is_err() {
        return false;
    }
    let handle = loop {
        let started = Instant::now();
        let received = client
            .receive_message()
            .queue_url(queue_url)
            .max_number_of_messages(1)
            .wait_time_seconds(RECEIVE_WAIT_SECONDS)
            .send()
            .await;
        log.record(Operation::ReceiveMessage, started, &received);
        let Ok(out) = received else { return false };
        if let Some(handle) = out.messages().first().and_then(|m| m.receipt_handle()) {
            break handle.to_string();
        }
        log.empty_receives += 1;
        if Instant::now() >= deadline {
            return false;
        }
    };
    let started = Instant::now();
    let deleted = client
        .delete_message()
        .queue_url(queue_url)
        .receipt_handle(handle)
        .send()
        .await;
    log.record(Operation::DeleteMessage, started, &deleted);
    deleted.is_ok()
}

/// Runs cycles until `deadline` or `cap`; returns the log.
async fn run_phase(
    client: &Client,
    queue_url: &str,
    deadline: Instant,
    cap: Option<u64>,
    stop: &super::stop::Stop,
) -> ClientLog {
    let mut log = ClientLog::default();
    let mut n = 0u64;
    while Instant::now() < deadline && cap.is_none_or(|c| log.cycles < c) && !stop.requested() {
        n += 1;
        if cycle(client, queue_url, n, &mut log, deadline).await {
            log.cycles += 1;
        }
    }
    log.finished = Some(Instant::now());
    log
}

/// Result of one client: its measured log, and its queue's name if it could not be deleted.
struct ClientOutcome {
    log: ClientLog,
    leaked: Option<String>,
}

/// When the warm-up ends and when the measured phase ends; `None` aborts the run.
type Phases = Option<(Instant, Instant)>;

async fn run_client(
    url: String,
    queue_name: String,
    workload: Workload,
    ready: tokio::sync::mpsc::Sender<Result<(), String>>,
    mut start: tokio::sync::watch::Receiver<Phases>,
) -> ClientOutcome {
    let client = client_for(&url, workload.region.clone()).await;
    let created = client
        .create_queue()
        .queue_name(&queue_name)
        .send()
        .await
        .map_err(|e| format!("CreateQueue {queue_name}: {}", DisplayErrorContext(e)))
        .and_then(|out| {
            out.queue_url()
                .map(str::to_owned)
                .ok_or_else(|| format!("CreateQueue {queue_name}: no QueueUrl in the response"))
        });
    let queue_url = match created {
        Ok(url) => {
            let _ = ready.send(Ok(())).await;
            url
        }
        Err(e) => {
            let _ = ready.send(Err(e)).await;
            return ClientOutcome {
                log: ClientLog::default(),
                leaked: None,
            };
        }
    };
    // Every client starts at the same instant, once all queues exist.
    let phases = loop {
        if let Some(p) = *start.borrow_and_update() {
            break Some(p);
        }
        if start.changed().await.is_err() {
            break None;
        }
    };
    let mut log = ClientLog::default();
    if let Some((warmup_end, measure_end)) = phases {
        run_phase(&client, &queue_url, warmup_end, None, &workload.stop).await;
        log = run_phase(
            &client,
            &queue_url,
            measure_end,
            workload.messages_per_client,
            &workload.stop,
        )
        .await;
    }
    let leaked = client
        .delete_queue()
        .queue_url(&queue_url)
        .send()
        .await
        .err()
        .map(|_| queue_name);
    ClientOutcome { log, leaked }
}

/// How long queue creation may take before the run is abandoned.
const SETUP_LIMIT: Duration = Duration::from_secs(30);

/// Benchmarks one target and returns what was measured. Errors when the queues could not be
/// created (the target is unreachable or refuses CreateQueue); queues that were created are
/// deleted either way.
pub(crate) async fn run_target(
    name: &str,
    url: &str,
    workload: &Workload,
) -> Result<TargetResult, String> {
    let id = run_id();
    let clients = workload.clients.max(1);
    let (start_tx, start_rx) = tokio::sync::watch::channel(None);
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel(clients);
    let mut tasks = JoinSet::new();
    for c in 0..clients {
        tasks.spawn(run_client(
            url.to_string(),
            format!("sqsprobe-bench-{id}-{c}"),
            workload.clone(),
            ready_tx.clone(),
            start_rx.clone(),
        ));
    }
    drop(ready_tx);
    let mut setup_error = None;
    let setup_deadline = tokio::time::Instant::now() + SETUP_LIMIT;
    for _ in 0..clients {
        match tokio::time::timeout_at(setup_deadline, ready_rx.recv()).await {
            Ok(Some(Ok(()))) => {}
            Ok(Some(Err(e))) => setup_error = Some(e),
            Ok(None) => {
                setup_error = Some("a bench client stopped before its queue existed".into())
            }
            Err(_) => setup_error = Some(format!("queues were not created within {SETUP_LIMIT:?}")),
        }
        if setup_error.is_some() {
            break;
        }
    }
    let measure_start = Instant::now() + workload.warmup;
    let measure_end = measure_start + workload.duration;
    if setup_error.is_none() {
        let _ = start_tx.send(Some((measure_start, measure_end)));
    }
    // Dropping the sender tells clients waiting to start that the run is off.
    drop(start_tx);
    let mut logs = Vec::new();
    let mut leaked = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(outcome) => {
                logs.push(outcome.log);
                leaked.extend(outcome.leaked);
            }
            Err(e) => setup_error = Some(format!("a bench client failed: {e}")),
        }
    }
    if let Some(e) = setup_error {
        return Err(e);
    }
    // The phase ends when the last measured cycle did, not when the queues were deleted.
    let last = logs
        .iter()
        .filter_map(|l| l.finished)
        .max()
        .unwrap_or(measure_start);
    let elapsed = last.saturating_duration_since(measure_start);
    let mut operations = Vec::new();
    for op in Operation::ALL {
        let i = op as usize;
        let samples: Vec<u64> = logs
            .iter()
            .flat_map(|l| l.samples[i].iter().copied())
            .collect();
        let errors = logs.iter().map(|l| l.errors[i]).sum();
        let first = logs.iter().find_map(|l| l.first_error[i].clone());
        operations.push(OpStats::from_samples(op, samples, errors, first));
    }
    Ok(TargetResult {
        target: name.to_string(),
        endpoint_url: url.to_string(),
        clients,
        elapsed_s: elapsed.as_secs_f64(),
        cycles: logs.iter().map(|l| l.cycles).sum(),
        empty_receives: logs.iter().map(|l| l.empty_receives).sum(),
        operations,
        leaked_queues: leaked,
    })
}
