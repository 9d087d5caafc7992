//! The loops the connections run, and what each connection records (I/O).
//!
//! Every connection sends its next request as soon as the previous answer is read (a closed
//! loop), so requests/s is the rate the server sustains with that many clients in flight.
//! Latency is per request, from just before the request is written (a reconnect it needs
//! included) to the last byte of the answer.

use std::collections::BTreeMap;
use std::time::Instant;

use super::connection::{Answer, Connection, Failure};
use super::protocol::{BATCH_SIZE, Prepared, Requests};
use super::report::{Latency, OpLatency, RawWorkload};

/// Long-poll wait of the cycle and batch receives: they return as soon as the message is
/// there, and a server that takes a moment to make a message visible is not miscounted.
const CYCLE_WAIT_SECONDS: u32 = 1;

/// Visibility timeout of the delete workload's receives (the SQS maximum): a handle stays
/// current for the whole run, so each DeleteMessage deletes a message its connection holds.
pub(crate) const HOLD_SECONDS: u32 = 43_200;

/// Pause after a refused connection before the next attempt.
const CONNECT_RETRY_PAUSE: std::time::Duration = std::time::Duration::from_millis(5);

/// The requests one connection sends, prepared before the clock starts.
pub(crate) struct ConnectionPlan {
    pub workload: RawWorkload,
    pub requests: Requests,
    /// The queue it works on (empty for the no-op, which needs none).
    pub queue_url: String,
    noop: Prepared,
    send: Prepared,
    receive: Prepared,
    pub(super) send_batch: Prepared,
}

impl ConnectionPlan {
    pub(crate) fn new(workload: RawWorkload, requests: Requests, queue_url: String) -> Self {
        let q = queue_url.as_str();
        let receive = match workload {
            RawWorkload::Receive => requests.receive(q, BATCH_SIZE, 0, Some(0)),
            RawWorkload::Batch => requests.receive(q, BATCH_SIZE, CYCLE_WAIT_SECONDS, None),
            RawWorkload::Delete | RawWorkload::DeleteBatch => {
                requests.receive(q, BATCH_SIZE, CYCLE_WAIT_SECONDS, Some(HOLD_SECONDS))
            }
            _ => requests.receive(q, 1, CYCLE_WAIT_SECONDS, None),
        };
        Self {
            workload,
            requests,
            noop: requests.noop(),
            send: requests.send(q),
            receive,
            send_batch: requests.send_batch(q),
            queue_url,
        }
    }
}

/// What one connection recorded in one phase.
#[derive(Debug, Default)]
pub(crate) struct ConnectionLog {
    /// Nanosecond latencies of successful requests, per operation in first-seen order.
    samples: Vec<(&'static str, Vec<u64>)>,
    pub errors: u64,
    pub messages: u64,
    pub empty_receives: u64,
    pub status_counts: BTreeMap<u16, u64>,
    pub first_error: Option<String>,
    /// When the last request of the phase was answered.
    pub finished: Option<Instant>,
}

impl ConnectionLog {
    fn sample(&mut self, operation: &'static str, nanos: u64) {
        match self.samples.iter_mut().find(|(op, _)| *op == operation) {
            Some((_, v)) => v.push(nanos),
            None => self.samples.push((operation, vec![nanos])),
        }
    }

    /// Requests answered as expected.
    pub(crate) fn answered(&self) -> u64 {
        self.samples.iter().map(|(_, v)| v.len() as u64).sum()
    }

    fn error(&mut self, what: impl FnOnce() -> String) {
        self.fail(1, what);
    }

    /// `n` errors, described by `what` if they are the connection's first.
    fn fail(&mut self, n: u64, what: impl FnOnce() -> String) {
        self.errors += n;
        if self.first_error.is_none() {
            // Printed and saved in --json: masked like evidence (a server's message may carry
            // an account id or a principal ARN).
            self.first_error = Some(sqsprobe_core::evidence::digest::mask_identities(&what()));
        }
    }
}

/// Appends `samples` to `operation`'s list, which is added in first-seen order if new.
fn add_samples(
    lists: &mut Vec<(&'static str, Vec<u64>)>,
    operation: &'static str,
    samples: Vec<u64>,
) {
    match lists.iter_mut().find(|(op, _)| *op == operation) {
        Some((_, v)) => v.extend(samples),
        None => lists.push((operation, samples)),
    }
}

/// The logs of all connections of a phase, merged.
pub(crate) fn merge(logs: Vec<ConnectionLog>) -> (ConnectionLog, Latency, Vec<OpLatency>) {
    let mut all = ConnectionLog::default();
    let mut per_op: Vec<(&'static str, Vec<u64>)> = Vec::new();
    for log in logs {
        all.errors += log.errors;
        all.messages += log.messages;
        all.empty_receives += log.empty_receives;
        for (status, n) in log.status_counts {
            *all.status_counts.entry(status).or_default() += n;
        }
        if all.first_error.is_none() {
            all.first_error = log.first_error;
        }
        all.finished = all.finished.max(log.finished);
        for (op, samples) in log.samples {
            add_samples(&mut per_op, op, samples);
        }
    }
    let every: Vec<u64> = per_op.iter().flat_map(|(_, v)| v.iter().copied()).collect();
    let operations = per_op
        .into_iter()
        .map(|(op, samples)| OpLatency {
            operation: op.to_string(),
            requests: samples.len() as u64,
            latency: Latency::from_nanos(samples),
        })
        .collect();
    (all, Latency::from_nanos(every), operations)
}

/// Sends one request; records its latency when `accept` takes the answer, an error otherwise.
pub(super) async fn exchange(
    conn: &mut Connection,
    request: &Prepared,
    log: &mut ConnectionLog,
    accept: impl FnOnce(&Answer) -> bool,
) -> Option<Answer> {
    let started = Instant::now();
    match conn.send(request).await {
        Ok(answer) => {
            let nanos = started.elapsed().as_nanos() as u64;
            *log.status_counts.entry(answer.status).or_default() += 1;
            if accept(&answer) {
                log.sample(request.operation, nanos);
                Some(answer)
            } else {
                log.error(|| {
                    format!(
                        "{} answered HTTP {}: {}",
                        request.operation,
                        answer.status,
                        snippet(&answer.body)
                    )
                });
                None
            }
        }
        Err(e) => {
            // A dead server refuses in microseconds: pause so the loop does not spin.
            if matches!(e, Failure::Connect(_)) {
                tokio::time::sleep(CONNECT_RETRY_PAUSE).await;
            }
            log.error(|| format!("{}: {e}", request.operation));
            None
        }
    }
}

/// The first 200 characters of a body, on one line.
fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    line.chars().take(200).collect()
}

pub(super) fn ok(answer: &Answer) -> bool {
    answer.status == 200
}

/// The entries a batch request of `entries` entries got done, by its 200 answer `body`; each
/// entry it did not report done (failed, left out, or all of them when the body is not a batch
/// answer) is one of the row's errors, so messages + those errors = entries sent.
pub(super) fn batch_done(
    log: &mut ConnectionLog,
    requests: &Requests,
    operation: &'static str,
    entries: usize,
    body: &[u8],
) -> u64 {
    let done = match requests.batch_outcome(body) {
        Some(outcome) => outcome.successful.min(entries),
        None => {
            log.fail(entries as u64, || {
                format!("{operation}: not a batch answer: {}", snippet(body))
            });
            return 0;
        }
    };
    let missed = entries - done;
    if missed > 0 {
        log.fail(missed as u64, || {
            format!(
                "{operation}: {missed} of {entries} entries not done: {}",
                snippet(body)
            )
        });
    }
    done as u64
}

/// Receives until `want` handles are collected or `deadline` passes.
pub(super) async fn receive_handles(
    conn: &mut Connection,
    plan: &ConnectionPlan,
    want: usize,
    log: &mut ConnectionLog,
    deadline: Instant,
) -> Option<Vec<String>> {
    let mut handles = Vec::with_capacity(want);
    while handles.len() < want {
        let answer = exchange(conn, &plan.receive, log, ok).await?;
        let got = plan.requests.receipt_handles(&answer.body);
        if got.is_empty() {
            log.empty_receives += 1;
            if Instant::now() >= deadline {
                return None;
            }
        }
        handles.extend(got);
    }
    Some(handles)
}

/// One unit of the workload: one request, or one whole cycle.
async fn unit(
    conn: &mut Connection,
    plan: &ConnectionPlan,
    log: &mut ConnectionLog,
    deadline: Instant,
) {
    let queue_url = plan.queue_url.as_str();
    match plan.workload {
        // Any complete HTTP answer is the server having done its HTTP work.
        RawWorkload::Noop => {
            let _ = exchange(conn, &plan.noop, log, |_| true).await;
        }
        RawWorkload::Send => {
            if exchange(conn, &plan.send, log, ok).await.is_some() {
                log.messages += 1;
            }
        }
        RawWorkload::Receive => {
            if let Some(answer) = exchange(conn, &plan.receive, log, ok).await {
                let n = plan.requests.message_count(&answer.body) as u64;
                if n == 0 {
                    log.empty_receives += 1;
                }
                log.messages += n;
            }
        }
        RawWorkload::Cycle => {
            if exchange(conn, &plan.send, log, ok).await.is_none() {
                return;
            }
            let Some(handles) = receive_handles(conn, plan, 1, log, deadline).await else {
                return;
            };
            for handle in handles {
                let delete = plan.requests.delete(queue_url, &handle);
                if exchange(conn, &delete, log, ok).await.is_some() {
                    log.messages += 1;
                }
            }
        }
        // Rounds of untimed fills and timed deletes across all connections (`delete.rs`): never
        // a unit of this loop, which `target.rs` does not run for it.
        RawWorkload::Delete | RawWorkload::DeleteBatch => {
            log.error(|| "the delete workloads run in rounds, not units".to_string());
        }
        RawWorkload::SendBatch => {
            if let Some(sent) = exchange(conn, &plan.send_batch, log, ok).await {
                let requests = &plan.requests;
                log.messages +=
                    batch_done(log, requests, "SendMessageBatch", BATCH_SIZE, &sent.body);
            }
        }
        RawWorkload::Batch => {
            let Some(sent) = exchange(conn, &plan.send_batch, log, ok).await else {
                return;
            };
            // The row counts messages deleted: the sent ones only show in its errors.
            batch_done(
                log,
                &plan.requests,
                "SendMessageBatch",
                BATCH_SIZE,
                &sent.body,
            );
            let Some(handles) = receive_handles(conn, plan, BATCH_SIZE, log, deadline).await else {
                return;
            };
            for chunk in handles.chunks(BATCH_SIZE) {
                let delete = plan.requests.delete_batch(queue_url, chunk);
                if let Some(answer) = exchange(conn, &delete, log, ok).await {
                    let requests = &plan.requests;
                    log.messages += batch_done(
                        log,
                        requests,
                        "DeleteMessageBatch",
                        chunk.len(),
                        &answer.body,
                    );
                }
            }
        }
    }
}

/// Runs units until `deadline` or a stop request (no unit starts after either, but the first
/// unit always runs unless a stop was requested: a phase whose connection was scheduled only
/// after its deadline, on a loaded machine, still measures a request instead of leaving a
/// row of nothing); returns what was recorded.
pub(crate) async fn run_phase(
    conn: &mut Connection,
    plan: &ConnectionPlan,
    deadline: Instant,
    stop: &crate::bench::Stop,
) -> ConnectionLog {
    let mut log = ConnectionLog::default();
    while !stop.requested() {
        unit(conn, plan, &mut log, deadline).await;
        if Instant::now() >= deadline {
            break;
        }
    }
    log.finished = Some(Instant::now());
    log
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::raw::Protocol;

    #[test]
    fn a_batch_counts_its_done_entries_and_each_other_one_as_an_error() {
        let json = Requests {
            protocol: Protocol::Json,
        };
        let query = Requests {
            protocol: Protocol::Query,
        };
        let mut log = ConnectionLog::default();
        let all = br#"{"Successful":[{},{},{}],"Failed":[]}"#;
        assert_eq!(batch_done(&mut log, &json, "SendMessageBatch", 3, all), 3);
        assert_eq!((log.errors, log.first_error.as_deref()), (0, None));

        let partial = br#"{"Successful":[{},{}],"Failed":[{"Id":"2","Code":"x"}]}"#;
        assert_eq!(
            batch_done(&mut log, &json, "SendMessageBatch", 3, partial),
            2
        );
        assert_eq!(log.errors, 1);
        let first = log.first_error.clone().unwrap_or_default();
        assert!(first.contains("1 of 3 entries not done"), "{first}");

        // Left out of the answer: not done either.
        let short = b"<DeleteMessageBatchResult><DeleteMessageBatchResultEntry><Id>0</Id></DeleteMessageBatchResultEntry></DeleteMessageBatchResult>";
        assert_eq!(
            batch_done(&mut log, &query, "DeleteMessageBatch", 10, short),
            1
        );
        assert_eq!(log.errors, 10);

        assert_eq!(
            batch_done(&mut log, &query, "DeleteMessageBatch", 10, b"<x/>"),
            0
        );
        assert_eq!(log.errors, 20);
        assert_eq!(log.first_error.as_deref(), Some(first.as_str()));
    }
}
