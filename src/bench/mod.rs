//! `sqsprobe bench`: throughput and latency of SQS-compatible targets under a fixed workload.
//!
//! N concurrent aws-sdk-sqs clients each own one disposable queue and loop send → receive →
//! delete for a bounded time. [`stats`] and [`table`] are pure (percentiles, ratios, Markdown);
//! [`workload`] does the I/O. docs/performance.md records what this measured on one machine.

mod result;
mod stats;
mod table;
mod workload;

pub use result::{BenchReport, OpStats, Operation, TargetResult, TargetResultJson, result_json};
pub use stats::percentile;
pub use table::{markdown_table, throughput_ratio};
pub use workload::{Workload, run_target};
