//! One invocation of the function as the evidence records it (`lambda_invocation` rows), and
//! the mapping's facts at the end (`lambda_facts`): pure types, read back by the audit's
//! history so the Lambda findings are judged from the evidence, as the audit's own are.

use serde::{Deserialize, Serialize};

use super::event::WrongId;
use super::settings::Settings;

/// How an invocation ended, as the mapping read the function's answer.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, strum::IntoStaticStr,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Outcome {
    /// Every record done: the batch deleted.
    Success,
    /// A partial batch response: the records it names returned, the others deleted.
    Partial,
    /// The handler raised (or the runtime reported an error).
    FunctionError,
    /// The function ran past its timeout.
    Timeout,
    /// An answer AWS treats as a complete failure (not JSON, not the documented shape).
    InvalidResponse,
    /// A partial batch response naming something that is no record's `messageId`.
    WrongItemIdentifier,
}

impl Outcome {
    /// The snake_case name the evidence and the reports use.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Whether the function's answer was taken (a success or a partial batch response).
    pub fn answered(self) -> bool {
        matches!(self, Outcome::Success | Outcome::Partial)
    }
}

/// One record of an invocation, with what the ledger held of its key around it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Invoked {
    pub message_id: String,
    pub business_key: Option<String>,
    pub group: Option<String>,
    /// Its `ApproximateReceiveCount` in the event.
    pub receive_count: u32,
    /// The ledger's commits of its key when the invocation started and when it ended (`None`:
    /// no channel could show them yet).
    pub commits_before: Option<u32>,
    pub commits_after: Option<u32>,
}

impl Invoked {
    /// Whether the invocation committed the record's work (its key's commits went up).
    pub(crate) fn committed(&self) -> bool {
        self.commits_after.unwrap_or(0) > self.commits_before.unwrap_or(0)
    }

    /// Whether the record's work was committed by the invocation's end, by it or before it.
    pub(crate) fn done(&self) -> bool {
        self.commits_after.unwrap_or(0) > 0
    }
}

/// One invocation: its batch, how it ended, and which records returned to the queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Invocation {
    pub request_id: String,
    pub started_ms: u64,
    pub ended_ms: u64,
    pub records: Vec<Invoked>,
    /// How it ended: a success, a partial batch response, or the whole batch's failure.
    pub outcome: Outcome,
    pub error_type: Option<String>,
    pub wrong_identifier: Option<WrongId>,
    /// Indices of the records that returned to the queue (every one on a failure).
    pub returned: Vec<usize>,
    /// Whether the mapping reset the execution environment after it (a timeout).
    pub reset: bool,
}

/// The `lambda_facts` row: the mapping's settings, the queue as it read it, and the runtime's
/// init errors, written once the mapping has stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LambdaFacts {
    pub batch_size: u32,
    pub batching_window_ms: u64,
    pub report_batch_item_failures: bool,
    pub function_timeout_ms: u64,
    pub concurrency: u32,
    pub fifo: bool,
    pub dead_letter: bool,
    pub visibility_timeout_s: u64,
    pub init_errors: Vec<String>,
}

impl LambdaFacts {
    /// The settings as the mapping ran with them.
    pub(crate) fn settings(&self) -> Settings {
        Settings {
            batch_size: self.batch_size,
            batching_window: std::time::Duration::from_millis(self.batching_window_ms),
            report_batch_item_failures: self.report_batch_item_failures,
            function_timeout: std::time::Duration::from_millis(self.function_timeout_ms),
            concurrency: self.concurrency,
        }
    }
}
