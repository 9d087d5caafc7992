//! The runner: owned queues, step execution through aws-sdk-sqs, and the event stream.
//!
//! - `target`: resolving embedded / endpoint / AWS targets (region, endpoint, account guard)
//!   and building their SDK client.
//! - `call`: one SQS call with every SDK attempt recorded as an evidence row.
//! - `policy`: each call's timeout and retries, the lost-target rule, request counting.
//! - `halt`: why the run is stopping (its own greatest reason, a signal), shared by every case.
//! - `faults`: faults injected under the SDK (an HTTP client wrapping the run's), per case.
//! - `queues`: owned queue names, ownership tags and the registry teardown relies on.
//! - `case`: one case from setup to verdict (`case/steps.rs` dispatches each step to a function
//!   in `messages`, `acks`, `admin`, `move_tasks`, `permissions`, `deny` or `observe`, handed
//!   the parts of the case it touches; `lifecycle`: queues, their regions and ownership). A
//!   step's answer is checked by `classify::check_step`: the runner gathers, never judges.
//! - `run`: cases in parallel, events out; `schedule`: partitions and longest-first order.
//! - `sweep`: deleting the owned queues runs left behind, and nothing else.
//! - `query_protocol`: the HTTP client behind `--protocol query` (AWS JSON ↔ query translation).
//! - `clock`: the run's clock, real or virtual (`--clock virtual`, shared with the emulator);
//!   `in_process`: the HTTP client that reaches the embedded emulator without a socket under it.

pub mod call;
pub mod case;
pub mod clock;
pub mod faults;
pub mod halt;
pub mod in_process;
pub mod policy;
pub mod query_protocol;
pub mod queues;
pub mod run;
pub mod schedule;
pub mod sweep;
pub mod target;

pub use clock::{ClockKind, RunClock};
pub use halt::Halt;
pub use queues::{Registry, new_instance};
pub use run::{RunOutcome, RunSettings, new_run_id, preflight, run_plan};
pub use schedule::PlannedCase;
pub use target::{Protocol, TargetConfig, TargetKind, build_client, query_protocol_refusal};

use crate::evidence::Record;
use tokio::sync::{mpsc, watch};

/// What every case of a run shares.
pub struct RunContext {
    pub client: aws_sdk_sqs::Client,
    /// The run's masker (its credentials, the shape rules); each case starts from a copy.
    pub masker: crate::evidence::Masker,
    pub run_id: String,
    /// This process's instance id, tagged on every queue it creates (`sqsprobe:instance`).
    pub instance: String,
    pub registry: Registry,
    pub events: mpsc::UnboundedSender<Record>,
    /// Turns true on a stop signal: cases stop at the next step boundary and tear down.
    pub cancel: watch::Receiver<bool>,
    /// Why the run is stopping: set when the run itself decides to stop (a budget spent,
    /// credentials refused, the target lost), with the signal above folded in.
    pub halt: Halt,
    /// The timeout of one attempt of a call without a long poll.
    pub call_timeout: std::time::Duration,
    /// Calls in a row without a response, to declare the target lost.
    pub health: policy::Health,
    /// Requests made, and the request budget.
    pub usage: std::sync::Arc<policy::Usage>,
    /// The run's seed (`--seed`): every case's fault dice are drawn from it.
    pub seed: u64,
    /// The HTTP client the SDK client uses, wrapped by the fault client for faulty calls.
    pub http: aws_smithy_runtime_api::client::http::SharedHttpClient,
    /// What the run talks to (a case's `emulator_chaos:` applies on the embedded emulator only).
    pub target: target::TargetKind,
    /// The embedded emulator's `--chaos`: its queue settings go on every owned queue's tag with
    /// a seed of the queue's own (see [`queues::QueueChaos`]).
    pub emulator_chaos: Option<crate::emulator::Chaos>,
    /// The run's region, the client's: a queue with another `region:` is called in that one.
    pub region: String,
    /// Where every timestamp of the run comes from (real, or virtual under `--clock virtual`).
    pub clock: RunClock,
}
