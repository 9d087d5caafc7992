//! The scale workloads of `sqsprobe bench` (`--workload memory,depth,queues,startup`): what
//! the emulator costs as its work grows, measured on `sqsprobe serve` run as its own process
//! from the bench's executable, so RSS is the server's alone.
//!
//! - `memory`: RSS growth per stored message beyond its body, standard and FIFO.
//! - `depth`: ReceiveMessage and DeleteMessage p50 at a small and a large depth (standard,
//!   FIFO over many groups, FIFO with all but a few groups held in flight).
//! - `queues`: ListQueues (prefix) and GetQueueUrl p50 with few and many queues.
//! - `startup`: `serve` exec → first answer; what `run` of a one-case suite adds to its case.
//!
//! [`report`], [`compare`] and [`table`] are pure; [`server`], [`client`], [`measure`] and
//! [`startup`] do the I/O. The results are the `scale` section of the bench JSON, compared by
//! `bench --baseline` as growth ratios, bytes per message and start-up milliseconds.

pub(crate) mod client;
pub(crate) mod compare;
pub(crate) mod measure;
pub(crate) mod report;
pub(crate) mod server;
pub(crate) mod startup;
pub(crate) mod table;

pub(crate) use compare::compare_scale;
pub(crate) use measure::Measure;
pub(crate) use report::{ScaleReport, ScaleSizes, ScaleWorkload, growth_ratios};
pub(crate) use startup::measure_startup;
pub(crate) use table::{scale_comparison_markdown, scale_markdown, scale_value};
