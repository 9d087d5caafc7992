//! `sqsprobe bench`: throughput and latency of SQS-compatible targets, with two drivers.
//!
//! - [`raw`] (the default): pre-built unsigned requests over keep-alive connections, each
//!   target against its own no-op ceiling; the server's figure.
//! - the SDK driver (`--driver sdk`): N concurrent aws-sdk-sqs clients each own one
//!   disposable queue and loop send → receive → delete for a bounded time; what an SDK
//!   client experiences, signing and all. [`stats`] and [`table`] are pure (percentiles,
//!   ratios, Markdown); [`workload`] does the I/O.
//!
//! - [`scale`] (`--workload memory,depth,queues,startup`, raw driver): memory per message,
//!   cost with depth and with many queues, and start-up, on `sqsprobe serve` run as its own
//!   process.
//!
//! [`Stop`] is the run's stop request (a signal), which every workload loop reads.
//!
//! docs/performance.md records what both measured on one machine.

pub(crate) mod raw;
mod result;
pub(crate) mod scale;
mod stats;
mod stop;
mod table;
mod workload;

pub(crate) use result::{BenchReport, TargetResult, result_json};
pub(crate) use stats::{Latency, percentile};
pub(crate) use stop::Stop;
pub(crate) use table::{markdown_table, throughput_ratio};
pub(crate) use workload::{Workload, run_target};
