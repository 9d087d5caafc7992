//! What the scale workloads measured, as saved in the bench JSON's `scale` section, and the
//! growth ratios derived from it (pure).
//!
//! Latencies and start-up times are absolute and move with the machine; the growth ratios
//! (p50 at the largest size ÷ p50 at the smallest, both measured on the same server minutes
//! apart) and the bytes per message beyond the body mostly do not. docs/performance.md
//! ("Scale: memory, depth, queues, start-up") documents every field.

use serde::{Deserialize, Serialize};

use crate::bench::Latency;

/// The workloads that measure `sqsprobe serve` as its own process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ScaleWorkload {
    /// RSS growth per stored message, at each `--memory-at` count.
    Memory,
    /// ReceiveMessage and DeleteMessage p50 at each `--depth`.
    Depth,
    /// ListQueues (prefix) and GetQueueUrl p50 at each `--queues` count.
    Queues,
    /// `serve` exec → first answer, and what `run` of a one-case suite adds to the case.
    Startup,
}

impl ScaleWorkload {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ScaleWorkload::Memory => "memory",
            ScaleWorkload::Depth => "depth",
            ScaleWorkload::Queues => "queues",
            ScaleWorkload::Startup => "startup",
        }
    }
}

/// The queue a memory or depth row was measured on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum QueueKind {
    /// A standard queue.
    Standard,
    /// A FIFO queue, messages spread round-robin over `--groups` groups.
    Fifo,
    /// The same FIFO queue with the head of every group but a few held in flight for an hour,
    /// so a receive must find the few groups that can deliver among thousands that cannot.
    FifoHeld,
}

impl QueueKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            QueueKind::Standard => "standard",
            QueueKind::Fifo => "fifo",
            QueueKind::FifoHeld => "fifo_held",
        }
    }

    pub(crate) fn is_fifo(self) -> bool {
        self != QueueKind::Standard
    }
}

/// The sizes a scale run used (the command's parameters).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScaleSizes {
    /// Stored messages at which `depth` measures, ascending.
    pub depths: Vec<u64>,
    /// Stored messages at which `memory` reads RSS, ascending, all in one fill.
    pub memory_at: Vec<u64>,
    /// Message groups of the FIFO queues (at most one group per message).
    pub groups: u64,
    /// Receive → delete → send cycles per depth, and ListQueues + GetQueueUrl pairs per
    /// queue count.
    pub cycles: u64,
    /// Queues held at which `queues` measures, ascending.
    pub queues: Vec<u64>,
    /// Start-ups of `serve`, and runs of the one-case suite.
    pub startup_samples: u64,
}

/// RSS growth per stored message on one queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MemoryRow {
    pub queue: QueueKind,
    /// Groups holding messages (FIFO only).
    pub groups: Option<u64>,
    /// Messages stored when RSS was read (the 10 warm-up messages included).
    pub messages: u64,
    /// Body bytes of each message.
    pub body_bytes: u64,
    /// RSS after the queue and 10 warm-up messages existed, bytes.
    pub rss_before_bytes: u64,
    /// RSS with `messages` stored, bytes.
    pub rss_after_bytes: u64,
    /// (rss_after − rss_before) ÷ (messages − 10).
    pub rss_per_message_bytes: f64,
    /// `rss_per_message_bytes` − `body_bytes`: what the server spends on a message beyond its
    /// body (FIFO includes the 5-minute deduplication entry of every send).
    pub overhead_per_message_bytes: f64,
    /// Whether the measured `serve` ran with transparent huge pages off (Linux's
    /// `PR_SET_THP_DISABLE`), so that its RSS counts the 4 KiB pages it touched; with them on,
    /// the allocator's arena grows in 2 MiB pages and a reading can be a page off either way.
    /// Absent in reports from before it was recorded.
    #[serde(default)]
    pub small_pages: bool,
}

/// Receive and delete latency with `depth` messages stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DepthRow {
    pub queue: QueueKind,
    pub depth: u64,
    /// Groups holding messages (FIFO only).
    pub groups: Option<u64>,
    /// Groups whose head was held in flight for the hour (`fifo_held` only).
    pub groups_held: Option<u64>,
    /// Receive → delete → send cycles measured (each sends one message back, so the depth
    /// stays put).
    pub cycles: u64,
    /// ReceiveMessage (MaxNumberOfMessages 1, no wait), client-side, microseconds.
    pub receive: Latency,
    /// DeleteMessage of what the receive returned.
    pub delete: Latency,
    /// Whether the server ran with transparent huge pages off: the depth cycles of a run that
    /// also reads memory share that workload's server ([`MemoryRow::small_pages`]). Absent in
    /// reports from before it was recorded.
    #[serde(default)]
    pub small_pages: bool,
}

/// Lookup latency with `queues` queues held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QueuesRow {
    pub queues: u64,
    /// ListQueues + GetQueueUrl pairs measured.
    pub lookups: u64,
    /// ListQueues with a `QueueNamePrefix` matching exactly one queue.
    pub list_queues: Latency,
    /// GetQueueUrl of the same queue.
    pub get_queue_url: Latency,
}

/// How one operation's p50 grew from the smallest size to the largest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrowthRatio {
    /// `depth` or `queues`.
    pub workload: ScaleWorkload,
    /// The queue (depth ratios only).
    pub queue: Option<QueueKind>,
    /// `ReceiveMessage`, `DeleteMessage`, `ListQueues` or `GetQueueUrl`.
    pub operation: String,
    /// The smallest size: stored messages (depth) or queues held (queues).
    pub from: u64,
    /// The largest size.
    pub to: u64,
    pub from_p50_us: f64,
    pub to_p50_us: f64,
    /// `to_p50_us` ÷ `from_p50_us`: 1.0 is a cost independent of size (within 2).
    pub ratio: f64,
}

/// Median, largest and smallest of some samples, milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Millis {
    pub p50_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
}

impl Millis {
    /// From nanosecond samples (any order), by nearest rank; `None` without samples.
    pub(crate) fn from_nanos(mut samples: Vec<u64>) -> Option<Self> {
        samples.sort_unstable();
        let ms = |ns: u64| ns as f64 / 1e6;
        Some(Millis {
            p50_ms: ms(crate::bench::percentile(&samples, 50.0)?),
            min_ms: ms(*samples.first()?),
            max_ms: ms(*samples.last()?),
        })
    }
}

/// Start-up figures (absolute: they move with the machine).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Startup {
    pub samples: u64,
    /// Exec of `sqsprobe serve --listen 127.0.0.1:0` to the first 200 answer to ListQueues on
    /// a fresh connection (polled every 0.5 ms once the address is printed).
    pub serve_first_answer: Millis,
    /// Wall time of `sqsprobe run` of the built-in one-case suite minus the case's own
    /// `duration_ms`: process start, suite loading, the embedded emulator, the reachability
    /// check, writing the run folder, exit.
    pub run_overhead: Millis,
    /// The case's own duration (`case_end.duration_ms`), p50.
    pub run_case_p50_ms: f64,
    /// The documented bounds, for the reader: serve answers within 50 ms, run adds < 200 ms.
    pub serve_bound_ms: f64,
    pub run_bound_ms: f64,
}

/// Everything the scale workloads measured; the bench JSON's `scale` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScaleReport {
    /// The scale workloads chosen, in run order.
    pub workloads: Vec<ScaleWorkload>,
    pub sizes: ScaleSizes,
    /// The `sqsprobe` binary started as the server: the bench's own executable, or
    /// `--serve-binary`.
    pub server_binary: String,
    pub memory: Vec<MemoryRow>,
    pub depth: Vec<DepthRow>,
    pub queues: Vec<QueuesRow>,
    /// Derived from `depth` and `queues`: smallest size against largest, per operation.
    pub ratios: Vec<GrowthRatio>,
    pub startup: Option<Startup>,
    /// Measurements that failed or were cut by a signal, and why; their rows are absent.
    pub errors: Vec<String>,
}

fn ratio(
    workload: ScaleWorkload,
    queue: Option<QueueKind>,
    operation: &str,
    from: (u64, &Latency),
    to: (u64, &Latency),
) -> Option<GrowthRatio> {
    let (a, b) = (from.1.p50_us?, to.1.p50_us?);
    (from.0 < to.0 && a > 0.0).then(|| GrowthRatio {
        workload,
        queue,
        operation: operation.to_string(),
        from: from.0,
        to: to.0,
        from_p50_us: a,
        to_p50_us: b,
        ratio: b / a,
    })
}

/// The growth ratios of `depth` (per queue kind, receive and delete) and `queues` (ListQueues
/// and GetQueueUrl): the smallest size measured against the largest.
pub(crate) fn growth_ratios(depth: &[DepthRow], queues: &[QueuesRow]) -> Vec<GrowthRatio> {
    let mut out = Vec::new();
    for kind in [QueueKind::Standard, QueueKind::Fifo, QueueKind::FifoHeld] {
        let rows: Vec<&DepthRow> = depth.iter().filter(|r| r.queue == kind).collect();
        let (Some(small), Some(large)) = (
            rows.iter().min_by_key(|r| r.depth),
            rows.iter().max_by_key(|r| r.depth),
        ) else {
            continue;
        };
        let d = ScaleWorkload::Depth;
        out.extend(ratio(
            d,
            Some(kind),
            "ReceiveMessage",
            (small.depth, &small.receive),
            (large.depth, &large.receive),
        ));
        out.extend(ratio(
            d,
            Some(kind),
            "DeleteMessage",
            (small.depth, &small.delete),
            (large.depth, &large.delete),
        ));
    }
    if let (Some(small), Some(large)) = (
        queues.iter().min_by_key(|r| r.queues),
        queues.iter().max_by_key(|r| r.queues),
    ) {
        let q = ScaleWorkload::Queues;
        out.extend(ratio(
            q,
            None,
            "ListQueues",
            (small.queues, &small.list_queues),
            (large.queues, &large.list_queues),
        ));
        out.extend(ratio(
            q,
            None,
            "GetQueueUrl",
            (small.queues, &small.get_queue_url),
            (large.queues, &large.get_queue_url),
        ));
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn latency(p50: f64) -> Latency {
        Latency {
            p50_us: Some(p50),
            p99_us: Some(p50 * 2.0),
            p999_us: Some(p50 * 3.0),
            max_us: Some(p50 * 4.0),
        }
    }

    pub(crate) fn depth_row(queue: QueueKind, depth: u64, receive: f64, delete: f64) -> DepthRow {
        DepthRow {
            queue,
            depth,
            groups: queue.is_fifo().then_some(10),
            groups_held: None,
            cycles: 100,
            receive: latency(receive),
            delete: latency(delete),
            small_pages: false,
        }
    }

    #[test]
    fn ratios_compare_the_smallest_size_with_the_largest() {
        let depth = vec![
            depth_row(QueueKind::Standard, 1_000_000, 300.0, 250.0),
            depth_row(QueueKind::Standard, 1_000, 200.0, 250.0),
            depth_row(QueueKind::Standard, 50_000, 900.0, 900.0),
            depth_row(QueueKind::Fifo, 1_000, 100.0, 100.0),
        ];
        let queues = vec![
            QueuesRow {
                queues: 10,
                lookups: 5,
                list_queues: latency(100.0),
                get_queue_url: latency(100.0),
            },
            QueuesRow {
                queues: 10_000,
                lookups: 5,
                list_queues: latency(570.0),
                get_queue_url: latency(90.0),
            },
        ];
        let ratios = growth_ratios(&depth, &queues);
        let got: Vec<(Option<QueueKind>, &str, u64, u64, f64)> = ratios
            .iter()
            .map(|r| (r.queue, r.operation.as_str(), r.from, r.to, r.ratio))
            .collect();
        assert_eq!(
            got,
            [
                (
                    Some(QueueKind::Standard),
                    "ReceiveMessage",
                    1_000,
                    1_000_000,
                    1.5
                ),
                (
                    Some(QueueKind::Standard),
                    "DeleteMessage",
                    1_000,
                    1_000_000,
                    1.0
                ),
                (None, "ListQueues", 10, 10_000, 5.7),
                (None, "GetQueueUrl", 10, 10_000, 0.9),
            ]
        );
    }

    #[test]
    fn millis_by_nearest_rank() {
        let m = Millis::from_nanos(vec![5_000_000, 1_000_000, 3_500_000]).expect("samples");
        assert_eq!((m.p50_ms, m.min_ms, m.max_ms), (3.5, 1.0, 5.0));
        assert_eq!(Millis::from_nanos(Vec::new()), None);
    }
}
