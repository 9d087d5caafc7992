//! The runner: owned queues, step execution through aws-sdk-sqs, and the event stream.
//!
//! - `target`: resolving embedded / endpoint / AWS targets (region, endpoint, account guard)
//!   and building their SDK client.
//! - `call`: one SQS call with every SDK attempt recorded as an evidence row.
//! - `queues`: owned queue names, ownership tags and the registry teardown relies on.
//! - `case`: one case from setup to verdict (`case/steps.rs` dispatches each step to a method
//!   in `messages`, `acks`, `admin`, `move_tasks` or `observe`; `lifecycle`: queues and ownership).
//! - `expect`: checking a step's response against its expectations (pure).
//! - `run`: cases in parallel, events out.
//! - `sweep`: deleting the owned queues runs left behind, and nothing else.
//! - `query_protocol`: the HTTP client behind `--protocol query` (AWS JSON ↔ query translation).

pub mod call;
pub mod case;
pub mod expect;
pub mod query_protocol;
pub mod queues;
pub mod run;
pub mod sweep;
pub mod target;

pub use queues::Registry;
pub use run::{PlannedCase, RunOutcome, RunSettings, new_run_id, preflight, run_plan};
pub use target::{Protocol, TargetConfig, TargetKind, build_client, query_protocol_refusal};

use crate::evidence::Record;
use tokio::sync::{mpsc, watch};

/// What every case of a run shares.
pub struct RunContext {
    pub client: aws_sdk_sqs::Client,
    pub run_id: String,
    pub registry: Registry,
    pub events: mpsc::UnboundedSender<Record>,
    /// Turns true on Ctrl-C: cases stop at the next step boundary and tear down.
    pub cancel: watch::Receiver<bool>,
}
