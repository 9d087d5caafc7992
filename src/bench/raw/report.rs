//! What a raw run measured: one row per target × workload × connection count, the ceiling
//! ratios derived from the no-op rows of the same run, and the JSON document (pure).
//!
//! The JSON (`bench --driver raw --json FILE`) is versioned; `bench --baseline FILE` reads it
//! back strictly, so a later run can be compared with a saved one.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub(crate) use super::cpu::RowCpu;
use super::pin::Pinning;
use crate::bench::scale::ScaleReport;
pub(crate) use crate::bench::stats::Latency;

/// Version of the raw bench JSON document.
pub(crate) const RAW_REPORT_VERSION: u32 = 3;

/// The earlier version `--baseline` still reads: no `build`, no `scale`.
pub(crate) const RAW_REPORT_PREVIOUS_VERSION: u32 = 2;

/// What the connections of one row do in a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RawWorkload {
    /// An unknown-operation request: the server's HTTP cost, the ceiling of every other row;
    /// measured before and after the workloads of each connection count, both phases in one row.
    Noop,
    /// SendMessage to one queue shared by all connections.
    Send,
    /// ReceiveMessage (10, visibility 0) from one pre-filled queue: the depth stays constant.
    Receive,
    /// SendMessage → ReceiveMessage → DeleteMessage, each connection on its own queue.
    Cycle,
    /// SendMessageBatch(10) → ReceiveMessage until 10 → DeleteMessageBatch(10), per connection.
    Batch,
    /// DeleteMessage alone, each connection deleting handles it received untimed before
    /// (`super::delete`): only the deletes are timed and counted.
    Delete,
    /// SendMessageBatch (10) alone to the queues `Send` uses: the batch send's own rate.
    #[serde(rename = "send-batch")]
    SendBatch,
    /// DeleteMessageBatch (10) alone, filled and timed as `Delete` is (`super::delete`).
    #[serde(rename = "delete-batch")]
    DeleteBatch,
}

impl RawWorkload {
    /// The workloads a user can choose (the no-op always runs: it is the ceiling).
    pub(crate) const CHOOSABLE: [RawWorkload; 7] = [
        RawWorkload::Send,
        RawWorkload::Receive,
        RawWorkload::Cycle,
        RawWorkload::Batch,
        RawWorkload::Delete,
        RawWorkload::SendBatch,
        RawWorkload::DeleteBatch,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RawWorkload::Noop => "noop",
            RawWorkload::Send => "send",
            RawWorkload::Receive => "receive",
            RawWorkload::Cycle => "cycle",
            RawWorkload::Batch => "batch",
            RawWorkload::Delete => "delete",
            RawWorkload::SendBatch => "send-batch",
            RawWorkload::DeleteBatch => "delete-batch",
        }
    }
}

/// Latency of one operation inside a row (a cycle has three).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OpLatency {
    pub operation: String,
    /// Successful requests of this operation.
    pub requests: u64,
    #[serde(flatten)]
    pub latency: Latency,
}

/// One target, one workload, one connection count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRow {
    pub target: String,
    pub protocol: String,
    pub workload: RawWorkload,
    pub connections: usize,
    /// Wall time of the measured phase (warm-up excluded), seconds; for the delete workload,
    /// the time its rounds spent deleting (their untimed fills excluded).
    pub elapsed_s: f64,
    /// Requests answered as the workload expects (any answer, for the no-op).
    pub requests: u64,
    /// Requests without the expected answer: an error status, a timeout, a lost connection.
    pub errors: u64,
    /// Messages moved: sent (send), received (receive), sent, received and deleted (cycle,
    /// batch), or deleted (delete).
    pub messages: u64,
    /// Receives that came back empty.
    pub empty_receives: u64,
    /// Connections the server closed and the driver opened again.
    pub reconnects: u64,
    pub requests_per_second: f64,
    pub messages_per_second: f64,
    /// Over every successful request of the row.
    pub latency: Latency,
    pub operations: Vec<OpLatency>,
    /// HTTP status → answers with it.
    pub status_counts: BTreeMap<String, u64>,
    /// No-op rows only: the second no-op phase's req/s ÷ the first's (one just before the
    /// count's workloads, one just after). Far from 1, the machine's load moved during the
    /// count and its ratios are less certain.
    #[serde(default)]
    pub ceiling_drift: Option<f64>,
    /// requests/s ÷ the same target's no-op requests/s at the same connection count: the
    /// share of the server's pure-HTTP request rate left when requests do SQS work.
    pub ceiling_ratio: Option<f64>,
    /// requests/s ÷ the highest no-op requests/s of any target at this connection count: how
    /// near the fastest HTTP server this run measured (the machine's ceiling, as near as the
    /// run can tell).
    pub run_ceiling_ratio: Option<f64>,
    /// requests/s ÷ the reference server's requests/s at this connection count (a bare hyper
    /// server answering a fixed 200, [`super::reference`]): the fraction of what this
    /// machine's HTTP does. The reference's rate is the mean of its rows at both ends of the
    /// run ([`REFERENCE`], [`REFERENCE_END`]; the start's alone in files from before the end
    /// was measured). Absent when the run had no reference, and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_ratio: Option<f64>,
    /// CPU of the client, the server and the machine over the measured phases, and whether
    /// the client held the rate back ([`super::cpu`]). Absent where `/proc` could not be read,
    /// for the delete workload (its untimed fills run between the timed deletes), and in
    /// older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<RowCpu>,
    /// Which of the run's repeats (`--repeat`, from 0) measured the row; 0 in older files.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub repeat: u32,
    /// The first unexpected answer or failure, so a failing row says why.
    pub first_error: Option<String>,
}

/// A target as the run saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTargetInfo {
    pub name: String,
    pub endpoint_url: String,
    pub protocol: String,
    /// Queues the run created but could not delete.
    pub leaked_queues: Vec<String>,
    /// Why the target could not be measured (unreachable, CreateQueue refused).
    pub error: Option<String>,
}

/// The machine the run had: CPUs and the load average (1, 5, 15 min) before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Machine {
    pub cpus: usize,
    pub load_average_start: Option<[f64; 3]>,
    pub load_average_end: Option<[f64; 3]>,
}

/// The whole raw run, as written by `--json FILE`.
/// `shared_queues` and `repeats` of a report written before the options existed.
fn one() -> usize {
    1
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawReport {
    pub version: u32,
    /// Always `raw` here; `sdk` documents have another shape.
    pub driver: String,
    pub sqsprobe_version: String,
    pub started_at: String,
    pub duration_s: f64,
    pub warmup_s: f64,
    /// Messages put in the receive workload's queue before it is measured.
    pub prefill: u64,
    /// Queues the send and receive workloads spread their connections over (`--shared-queues`;
    /// 1 in files from before it existed).
    #[serde(default = "one")]
    pub shared_queues: usize,
    pub connections: Vec<usize>,
    pub workloads: Vec<RawWorkload>,
    pub machine: Machine,
    /// `debug` or `release`: the build that measured. The server of the scale workloads is
    /// the same binary, so compare runs of the same build. Absent in version 2.
    #[serde(default)]
    pub build: Option<String>,
    pub targets: Vec<RawTargetInfo>,
    pub rows: Vec<RawRow>,
    /// The scale workloads' results (memory, depth, queues, startup); absent when none ran,
    /// and in version 2.
    #[serde(default)]
    pub scale: Option<ScaleReport>,
    /// How many times the targets were measured (`--repeat`); 1 in older files.
    #[serde(default = "one")]
    pub repeats: usize,
    /// The CPUs the server and the client were pinned to (`--pin`), if they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinning: Option<Pinning>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The reference server's target name in tables and JSON ([`super::reference`]), measured
/// first.
pub(crate) const REFERENCE: &str = "reference";

/// The reference server's name for its second measurement, after every other target.
pub(crate) const REFERENCE_END: &str = "reference (end)";

/// Whether `target` names the reference server's rows, from either end of the run.
pub(crate) fn is_reference(target: &str) -> bool {
    target == REFERENCE || target == REFERENCE_END
}

/// The build this binary is: `debug` or `release`.
pub(crate) fn build_profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

/// Fills `ceiling_ratio`, `run_ceiling_ratio` and `reference_ratio` of every row from the
/// no-op rows (the reference server's no-op row is the reference).
pub(crate) fn apply_ceilings(rows: &mut [RawRow]) {
    let noop_rate = |rows: &[RawRow], target: &str, connections: usize| {
        rows.iter()
            .find(|r| {
                r.workload == RawWorkload::Noop
                    && r.target == target
                    && r.connections == connections
            })
            .map(|r| r.requests_per_second)
            .filter(|&rate| rate > 0.0)
    };
    // The best no-op is the fastest SQS target's: the reference server is not one.
    let best_noop = |rows: &[RawRow], connections: usize| {
        rows.iter()
            .filter(|r| {
                r.workload == RawWorkload::Noop
                    && r.connections == connections
                    && !is_reference(&r.target)
            })
            .map(|r| r.requests_per_second)
            .fold(None, |best: Option<f64>, rate| {
                Some(best.map_or(rate, |b| b.max(rate)))
            })
            .filter(|&rate| rate > 0.0)
    };
    let ratios: Vec<[Option<f64>; 3]> = rows
        .iter()
        .map(|r| {
            let own = noop_rate(rows, &r.target, r.connections);
            let best = best_noop(rows, r.connections);
            // The mean of the reference's rate at both ends of the run, when it was measured
            // at both.
            let reference = noop_rate(rows, REFERENCE, r.connections).map(|start| {
                noop_rate(rows, REFERENCE_END, r.connections)
                    .map_or(start, |end| (start + end) / 2.0)
            });
            [own, best, reference].map(|c| c.map(|c| r.requests_per_second / c))
        })
        .collect();
    for (row, [own, run, reference]) in rows.iter_mut().zip(ratios) {
        row.ceiling_ratio = own;
        row.run_ceiling_ratio = run.filter(|_| !is_reference(&row.target));
        row.reference_ratio = reference;
    }
}

/// The load average from /proc/loadavg (Linux); `None` elsewhere.
pub(crate) fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = text.split_whitespace().map(|v| v.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A row with `rps` requests per second and nothing else of note.
    pub(crate) fn row(target: &str, workload: RawWorkload, connections: usize, rps: f64) -> RawRow {
        RawRow {
            target: target.into(),
            protocol: "json".into(),
            workload,
            connections,
            elapsed_s: 1.0,
            requests: rps as u64,
            errors: 0,
            messages: rps as u64,
            empty_receives: 0,
            reconnects: 0,
            requests_per_second: rps,
            messages_per_second: rps,
            latency: Latency::from_nanos(vec![20_000, 30_000, 1_000_000]),
            operations: Vec::new(),
            status_counts: BTreeMap::new(),
            ceiling_drift: None,
            ceiling_ratio: None,
            run_ceiling_ratio: None,
            reference_ratio: None,
            cpu: None,
            repeat: 0,
            first_error: None,
        }
    }

    #[test]
    fn ceilings_are_per_target_and_connection_count() {
        let mut rows = vec![
            row("embedded", RawWorkload::Noop, 1, 1000.0),
            row("embedded", RawWorkload::Send, 1, 800.0),
            row("embedded", RawWorkload::Noop, 4, 4000.0),
            row("embedded", RawWorkload::Send, 4, 1000.0),
            row("moto", RawWorkload::Noop, 1, 500.0),
            row("moto", RawWorkload::Send, 1, 100.0),
            row("nobody", RawWorkload::Send, 1, 10.0),
        ];
        apply_ceilings(&mut rows);
        let got: Vec<(Option<f64>, Option<f64>)> = rows
            .iter()
            .map(|r| (r.ceiling_ratio, r.run_ceiling_ratio))
            .collect();
        assert_eq!(
            got,
            [
                (Some(1.0), Some(1.0)),
                (Some(0.8), Some(0.8)),
                (Some(1.0), Some(1.0)),
                (Some(0.25), Some(0.25)),
                (Some(1.0), Some(0.5)),
                (Some(0.2), Some(0.1)),
                (None, Some(0.01)),
            ]
        );
    }

    #[test]
    fn every_row_is_a_fraction_of_the_reference_which_is_not_the_best_no_op() {
        let mut rows = vec![
            row(REFERENCE, RawWorkload::Noop, 4, 10_000.0),
            row("embedded", RawWorkload::Noop, 4, 8_000.0),
            row("embedded", RawWorkload::Send, 4, 6_000.0),
            row("embedded", RawWorkload::Send, 1, 2_000.0),
        ];
        apply_ceilings(&mut rows);
        let got: Vec<[Option<f64>; 3]> = rows
            .iter()
            .map(|r| [r.ceiling_ratio, r.run_ceiling_ratio, r.reference_ratio])
            .collect();
        assert_eq!(
            got,
            [
                [Some(1.0), None, Some(1.0)],
                [Some(1.0), Some(1.0), Some(0.8)],
                [Some(0.75), Some(0.75), Some(0.6)],
                // No reference (nor no-op) at this connection count.
                [None, None, None],
            ]
        );
    }

    #[test]
    fn a_noop_that_answered_nothing_is_no_ceiling() {
        let mut rows = vec![
            row("x", RawWorkload::Noop, 1, 0.0),
            row("x", RawWorkload::Send, 1, 10.0),
        ];
        apply_ceilings(&mut rows);
        assert_eq!(rows[1].ceiling_ratio, None);
        assert_eq!(rows[1].run_ceiling_ratio, None);
    }

    /// A report holding `rows` as given.
    pub(crate) fn sample_report(rows: Vec<RawRow>) -> RawReport {
        RawReport {
            version: RAW_REPORT_VERSION,
            driver: "raw".into(),
            sqsprobe_version: "0".into(),
            started_at: "2026-12-01T00:00:00Z".into(),
            duration_s: 1.0,
            warmup_s: 0.1,
            prefill: 100,
            shared_queues: 1,
            connections: vec![1],
            workloads: vec![RawWorkload::Send],
            machine: Machine {
                cpus: 2,
                load_average_start: Some([1.0, 2.0, 3.0]),
                load_average_end: None,
            },
            build: Some("debug".into()),
            targets: Vec::new(),
            rows,
            scale: None,
            repeats: 1,
            pinning: None,
        }
    }

    #[test]
    fn report_round_trips_through_json() {
        let report = sample_report(vec![row("x", RawWorkload::Send, 1, 5.0)]);
        let text = serde_json::to_string(&report).expect("encode");
        let back: RawReport = serde_json::from_str(&text).expect("decode");
        assert_eq!(back, report);
        assert!(text.contains(r#""workload":"send""#), "{text}");
    }
}
