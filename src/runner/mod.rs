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

pub use queues::{Registry, new_instance};
pub use run::{PlannedCase, RunOutcome, RunSettings, new_run_id, preflight, run_plan};
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
    /// Set when the run itself decides to stop (credentials refused, target lost).
    pub halt: Halt,
}

/// Why the run stopped itself: a condition no further case could get past.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HaltReason {
    /// The target refused the run's credentials or permissions (the answer, described).
    CredentialsRefused(String),
    /// The target stopped answering (what was seen).
    TargetLost(String),
}

impl HaltReason {
    /// One line for the terminal and for the findings of the cases it stopped.
    pub fn describe(&self) -> String {
        match self {
            HaltReason::CredentialsRefused(why) => {
                format!("the target refused this run's credentials or permissions ({why})")
            }
            HaltReason::TargetLost(why) => format!("the target was lost ({why})"),
        }
    }
}

/// The run's own stop, shared by every case: the first reason set wins.
#[derive(Debug, Clone, Default)]
pub struct Halt(std::sync::Arc<std::sync::Mutex<Option<HaltReason>>>);

impl Halt {
    /// Stops the run for `reason`, unless it is already stopping for another.
    pub fn set(&self, reason: HaltReason) {
        if let Ok(mut r) = self.0.lock() {
            r.get_or_insert(reason);
        }
    }

    /// Why the run stopped itself, if it did.
    pub fn reason(&self) -> Option<HaltReason> {
        self.0.lock().ok().and_then(|r| r.clone())
    }
}
