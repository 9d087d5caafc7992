//! The flags of `sqsprobe bench`: its targets, its two drivers, the raw driver's workloads
//! and each driver's defaults.

use super::values::{parse_duration, parse_named_endpoint};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Targets `bench` can start itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchTargetArg {
    /// The emulator on an ephemeral loopback port (its own runtime and threads for --driver raw).
    Embedded,
}

/// How `bench` loads its targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchDriverArg {
    /// Pre-built unsigned requests over keep-alive connections: the server's figure, against
    /// its own no-op ceiling. Emulators only; AWS hosts are refused.
    Raw,
    /// aws-sdk-sqs clients looping send → receive → delete: what an SDK client sees.
    Sdk,
}

/// The raw driver's workloads (the no-op ceiling always runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchWorkloadArg {
    /// SendMessage to one shared queue.
    Send,
    /// ReceiveMessage (10, visibility 0) from a pre-filled queue.
    Receive,
    /// SendMessage → ReceiveMessage → DeleteMessage, a queue per connection.
    Cycle,
    /// SendMessageBatch(10) → ReceiveMessage → DeleteMessageBatch(10), a queue per connection.
    Batch,
    /// DeleteMessage alone: handles received untimed in rounds, only the deletes timed.
    Delete,
    /// SendMessageBatch(10) alone to one shared queue (--shared-queues N as send).
    SendBatch,
    /// DeleteMessageBatch(10) alone: handles received untimed in rounds, as delete.
    DeleteBatch,
    /// Scale: RSS per stored message beyond its body at each --memory-at count (standard and
    /// FIFO), on `sqsprobe serve` run as its own process.
    Memory,
    /// Scale: ReceiveMessage and DeleteMessage p50 at each --depth (standard, FIFO over
    /// --groups groups, FIFO with all but ten groups held in flight).
    Depth,
    /// Scale: ListQueues (prefix) and GetQueueUrl p50 at each --queues count.
    Queues,
    /// Scale: `serve` exec → first answer, and what `run` of a one-case suite adds to it.
    Startup,
}

/// `bench`'s documented defaults, per driver (the flags are optional so a flag of the other
/// driver can be refused).
pub(crate) mod bench_defaults {
    use std::time::Duration;

    pub(crate) const SDK_DURATION: Duration = Duration::from_secs(10);
    pub(crate) const RAW_DURATION: Duration = Duration::from_secs(3);
    pub(crate) const SDK_CLIENTS: &[usize] = &[1];
    pub(crate) const RAW_CONNECTIONS: &[usize] = &[1, 4, 16];
    /// The scale workloads' full measurement (the documented sizes).
    pub(crate) const DEPTHS: &[u64] = &[1_000, 1_000_000];
    pub(crate) const MEMORY_AT: &[u64] = &[200_000, 1_000_000];
    pub(crate) const GROUPS: u64 = 10_000;
    pub(crate) const CYCLES: u64 = 5_000;
    pub(crate) const QUEUES: &[u64] = &[10, 10_000];
    pub(crate) const STARTUP_SAMPLES: u64 = 15;
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Start and measure a target in-process (default when no --endpoint is given).
    #[arg(long, value_enum, help_heading = "Targets")]
    pub target: Vec<BenchTargetArg>,

    /// Measure an SQS-compatible endpoint, named for the table (repeatable), e.g.
    /// `moto=http://127.0.0.1:5000`.
    #[arg(long = "endpoint", value_name = "NAME=URL", value_parser = parse_named_endpoint, help_heading = "Targets")]
    pub endpoints: Vec<(String, String)>,

    /// raw (default): the server's figure, unsigned requests, emulators only; sdk: through
    /// aws-sdk-sqs.
    #[arg(long, value_enum, default_value = "raw", help_heading = "Targets")]
    pub driver: BenchDriverArg,

    /// Wire protocol of the raw driver: `json` or `query` for every target, or NAME=PROTO for
    /// one (repeatable), e.g. `--protocol sqslite=query`. Default json.
    #[arg(long, value_name = "PROTO|NAME=PROTO", help_heading = "Targets")]
    pub protocol: Vec<String>,

    /// sdk driver: the target its ratios are computed against (default: the first; embedded
    /// runs before the --endpoint targets, which run in the order given).
    #[arg(long, value_name = "NAME", help_heading = "Targets")]
    pub reference: Option<String>,

    /// AWS region for the SDK clients (emulators accept any; default us-east-1).
    #[arg(long, value_name = "REGION", help_heading = "Targets")]
    pub region: Option<String>,

    /// raw driver: leave out the reference server (a bare hyper server answering a fixed 200,
    /// measured with the no-op at each connection count before every target and again after
    /// them, against the mean of which every row is a fraction:
    /// docs/performance.md#the-reference-server).
    #[arg(long, help_heading = "Targets")]
    pub no_reference: bool,

    /// raw driver: serve only the reference server on ADDR (e.g. 127.0.0.1:9500) until
    /// interrupted, measuring nothing: for a load generator other than the bench's own client
    /// (scripts/bench-crosscheck).
    #[arg(long, value_name = "ADDR", help_heading = "Targets")]
    pub serve_reference: Option<std::net::SocketAddr>,

    /// with --serve-reference: the reference answers exactly N bytes (its fixed reply with a
    /// padding member), so a load generator can measure the machine's HTTP with an answer the
    /// size of a receive's or a batch's (scripts/bench-crosscheck)
    #[arg(
        long,
        value_name = "N",
        requires = "serve_reference",
        help_heading = "Targets"
    )]
    pub reference_answer_bytes: Option<usize>,

    /// raw driver (Linux, 2 CPUs or more): pin the server to the first half of the CPUs and
    /// the bench's client to the rest (sched_setaffinity), so neither takes the other's CPU; an
    /// --endpoint's server must be a process of this user listening on this machine.
    #[arg(long, help_heading = "Workload")]
    pub pin: bool,

    /// raw driver: measure every target this many times, one run after the other; each row's
    /// fraction of the reference is printed as its median and range over the runs, and
    /// --baseline compares the medians.
    #[arg(long, value_name = "N", default_value = "1", help_heading = "Workload")]
    pub repeat: usize,

    /// sdk driver: concurrent clients, each on its own queue; a list runs each count (e.g.
    /// 1,8). Default 1.
    #[arg(
        long,
        value_name = "N",
        value_delimiter = ',',
        help_heading = "Workload"
    )]
    pub clients: Option<Vec<usize>>,

    /// raw driver: keep-alive connections; a list runs each count. Default 1,4,16.
    #[arg(
        long,
        value_name = "N",
        value_delimiter = ',',
        help_heading = "Workload"
    )]
    pub connections: Option<Vec<usize>>,

    /// raw driver: workloads to run, in order (default
    /// send,receive,cycle,batch,delete,send-batch,delete-batch); the no-op ceiling runs first. memory, depth, queues and startup are the scale workloads: they
    /// start `sqsprobe serve` from this binary as their own process (never an --endpoint) and
    /// take minutes at their default sizes (see Scale).
    #[arg(long, value_enum, value_delimiter = ',', help_heading = "Workload")]
    pub workload: Vec<BenchWorkloadArg>,

    /// raw driver: messages put in the receive workload's queue first.
    #[arg(
        long,
        value_name = "N",
        default_value = "1000",
        help_heading = "Workload"
    )]
    pub prefill: u64,

    /// raw driver: queues the send, send-batch and receive workloads spread their connections
    /// over (connection i uses queue i mod N; each receive queue gets --prefill): 2 against 1
    /// shows whether different queues scale across cores.
    #[arg(long, value_name = "N", default_value = "1", help_heading = "Workload")]
    pub shared_queues: usize,

    /// Length of each measured phase (at most 1h). Default 3s for raw (per workload and
    /// connection count), 10s for sdk.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, help_heading = "Workload")]
    pub duration: Option<std::time::Duration>,

    /// Unmeasured warm-up before each measured phase.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration, help_heading = "Workload")]
    pub warmup: std::time::Duration,

    /// sdk driver: stop each client after this many measured cycles (the duration still
    /// bounds the run).
    #[arg(long, value_name = "N", help_heading = "Workload")]
    pub messages: Option<u64>,

    /// Scale (depth): stored messages at which receive and delete are timed, all in one fill;
    /// the growth ratio is the largest's p50 ÷ the smallest's. Default 1000,1000000.
    #[arg(long, value_name = "N", value_delimiter = ',', help_heading = "Scale")]
    pub depth: Option<Vec<u64>>,

    /// Scale (memory): stored messages at which RSS is read, all in one fill. Default
    /// 200000,1000000.
    #[arg(long, value_name = "N", value_delimiter = ',', help_heading = "Scale")]
    pub memory_at: Option<Vec<u64>>,

    /// Scale: message groups of the FIFO queues (at most one per message). Default 10000.
    #[arg(long, value_name = "N", help_heading = "Scale")]
    pub groups: Option<u64>,

    /// Scale: receive → delete → send cycles per depth, and ListQueues + GetQueueUrl pairs
    /// per queue count. Default 5000.
    #[arg(long, value_name = "N", help_heading = "Scale")]
    pub cycles: Option<u64>,

    /// Scale (queues): queue counts at which lookups are timed, on one server. Default
    /// 10,10000.
    #[arg(long, value_name = "N", value_delimiter = ',', help_heading = "Scale")]
    pub queues: Option<Vec<u64>>,

    /// Scale (startup): starts of `serve`, and runs of the one-case suite. Default 15.
    #[arg(long, value_name = "N", help_heading = "Scale")]
    pub startup_samples: Option<u64>,

    /// Scale: the sqsprobe binary whose `serve` (and `run`) is measured, e.g. an older build
    /// for before/after figures. Default: this executable.
    #[arg(long, value_name = "PATH", help_heading = "Scale")]
    pub serve_binary: Option<PathBuf>,

    /// Also write the results as JSON to FILE.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub json: Option<PathBuf>,

    /// raw driver: compare with a saved `--json` FILE: raw rows by ceiling ratio, scale
    /// figures by growth ratio, bytes per message and start-up ms. A row with several runs
    /// (--repeat, here or in FILE) is compared by its median over them, with their count and
    /// lowest–highest.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub baseline: Option<PathBuf>,

    /// With --baseline: exit 4 when a row's ceiling ratio (its median, with repeats) fell below
    /// R × the baseline's, or a
    /// scale figure's cost grew past baseline ÷ R (e.g. 0.8: a quarter more).
    #[arg(long, value_name = "R", requires = "baseline", help_heading = "Output")]
    pub fail_below: Option<f64>,
}
