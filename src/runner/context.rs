//! What every case of a run shares: the client, the evidence channel, the stop signals, the
//! budgets and the clock. Its own file, below both `run/` (which builds it) and `case/` (which
//! reads it), so neither imports the other through `runner/mod.rs`.

use tokio::sync::mpsc;

use super::clock::RunClock;
use super::halt::Halt;
use super::policy;
use super::queues::Registry;
use super::target::TargetKind;
use sqsprobe_core::evidence::Record;

/// What every case of a run shares.
pub(crate) struct RunContext {
    pub client: aws_sdk_sqs::Client,
    /// The run's masker (its credentials, the shape rules); each case starts from a copy.
    pub masker: sqsprobe_core::evidence::Masker,
    pub run_id: String,
    /// This process's instance id, tagged on every queue it creates (`sqsprobe:instance`).
    pub instance: String,
    pub registry: Registry,
    pub events: mpsc::UnboundedSender<Record>,
    /// Why the run is stopping: set when the run itself decides to stop (a budget spent,
    /// credentials refused, the target lost), with the stop signal folded in (cases stop at
    /// the next step boundary and tear down).
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
    pub target: TargetKind,
    /// The embedded emulator's `--chaos`: its queue settings go on every owned queue's tag with
    /// a seed of the queue's own (see [`QueueChaos`](super::queues::QueueChaos)).
    pub emulator_chaos: Option<sqsprobe_emulator::Chaos>,
    /// The run's region, the client's: a queue with another `region:` is called in that one.
    pub region: String,
    /// Where every timestamp of the run comes from (real, or virtual under `--clock virtual`).
    pub clock: RunClock,
}
