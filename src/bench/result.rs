//! What a bench run measured, per target: the shapes behind the Markdown table and `--json`.

use serde::Serialize;

use super::stats::percentile;

/// The three calls of one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[expect(
    clippy::enum_variant_names,
    reason = "the variants are SQS's own operation names"
)]
pub(crate) enum Operation {
    SendMessage,
    ReceiveMessage,
    DeleteMessage,
}

impl Operation {
    /// All operations, in cycle order.
    pub(crate) const ALL: [Operation; 3] = [
        Operation::SendMessage,
        Operation::ReceiveMessage,
        Operation::DeleteMessage,
    ];

    /// The SQS API name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Operation::SendMessage => "SendMessage",
            Operation::ReceiveMessage => "ReceiveMessage",
            Operation::DeleteMessage => "DeleteMessage",
        }
    }
}

/// Latency and error counts of one operation over the measured phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct OpStats {
    pub operation: Operation,
    /// Calls that returned success.
    pub ok: u64,
    /// Calls that returned an error (service, timeout or connection).
    pub errors: u64,
    /// Median latency of successful calls, microseconds.
    pub p50_us: Option<u64>,
    /// 99th-percentile latency of successful calls, microseconds.
    pub p99_us: Option<u64>,
    /// The first error seen, so a failing target says why.
    pub first_error: Option<String>,
}

impl OpStats {
    /// Summarises latency samples (microseconds, any order) and error counts.
    pub(crate) fn from_samples(
        operation: Operation,
        mut samples_us: Vec<u64>,
        errors: u64,
        first_error: Option<String>,
    ) -> Self {
        samples_us.sort_unstable();
        Self {
            operation,
            ok: samples_us.len() as u64,
            errors,
            p50_us: percentile(&samples_us, 50.0),
            p99_us: percentile(&samples_us, 99.0),
            first_error,
        }
    }
}

/// One target at one client count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct TargetResult {
    /// `embedded` or the NAME of `--endpoint NAME=URL`.
    pub target: String,
    pub endpoint_url: String,
    pub clients: usize,
    /// Wall time of the measured phase (warm-up excluded), seconds.
    pub elapsed_s: f64,
    /// Completed send + receive + delete cycles, all clients together.
    pub cycles: u64,
    /// Receives that came back empty and were retried (not errors, but not progress either).
    pub empty_receives: u64,
    /// Per-operation latency and errors, in cycle order.
    pub operations: Vec<OpStats>,
    /// Queues the run created but could not delete (left behind on the target).
    pub leaked_queues: Vec<String>,
}

impl TargetResult {
    /// Completed cycles per second of the measured phase.
    pub(crate) fn messages_per_second(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            self.cycles as f64 / self.elapsed_s
        } else {
            0.0
        }
    }

    /// Errors over all operations.
    pub(crate) fn errors(&self) -> u64 {
        self.operations.iter().map(|o| o.errors).sum()
    }

    /// The stats of one operation.
    pub(crate) fn op(&self, operation: Operation) -> Option<&OpStats> {
        self.operations.iter().find(|o| o.operation == operation)
    }
}

/// The whole SDK-driver run, as written by `--json FILE`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BenchReport {
    /// Format version of this JSON document (2: `driver` added, `baseline` renamed
    /// `reference`).
    pub version: u32,
    /// Always `sdk` here.
    pub driver: String,
    pub sqsprobe_version: String,
    pub started_at: String,
    pub duration_s: f64,
    pub warmup_s: f64,
    /// Per-client cycle cap, if one was given.
    pub messages_per_client: Option<u64>,
    /// The target the ratios are computed against (`--reference`).
    pub reference: String,
    pub results: Vec<TargetResultJson>,
}

/// A [`TargetResult`] with the derived numbers spelled out for readers of the JSON.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TargetResultJson {
    #[serde(flatten)]
    pub result: TargetResult,
    pub messages_per_second: f64,
    /// Throughput divided by the reference target's at the same client count.
    pub ratio_to_baseline: Option<f64>,
}

/// Pairs a result with its derived throughput and ratio for the JSON report.
pub(crate) fn result_json(
    result: TargetResult,
    ratio_to_baseline: Option<f64>,
) -> TargetResultJson {
    TargetResultJson {
        messages_per_second: result.messages_per_second(),
        ratio_to_baseline,
        result,
    }
}
