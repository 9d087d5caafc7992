//! The facts a case was judged on, as evidence: the `facts` record and the expectations of
//! `case_start.expect`.
//!
//! A verdict must be a function of the recorded history. The `call` rows say what was asked
//! and answered; these records say what the runner made of them for the judge — each step's
//! check with its answer, the observation window with every tracked message, the
//! acknowledgements counted, what stopped the case — and what the case expected. The runner
//! judges the case from this record as it reads back (`classify::recorded`), so `sqsprobe
//! check` re-judges a run folder from `evidence.jsonl` alone and must reach the same verdicts.
//!
//! Every string here has passed the run's masker, like every other row: no handle, body,
//! credential or account id.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use sqsprobe_facts::decision::Decision;

/// A case's (or one trial's) facts, written just before its `case_end` (or `trial_end`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseFactsRecord {
    pub run_id: String,
    pub case: String,
    /// The trial (1-based) of a multi-trial case; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<u32>,
    /// Line of the case's `id:`.
    pub line: u32,
    /// Why setup could not create the case's queues; the case then ran no step.
    pub setup_error: Option<String>,
    /// Every step that ran, in order.
    pub steps: Vec<StepFacts>,
    /// How many steps the case has: those past the last that ran never ran. Absent (0) in
    /// files written before it was recorded, read as every step ran.
    #[serde(default)]
    pub steps_planned: usize,
    /// What stopped the case from outside its steps.
    pub stopped: Option<StopFacts>,
    /// The case's last observation window, if an observe step started.
    pub window: Option<WindowFactsRecord>,
    /// The case's acknowledgements, counted.
    pub acks: AckCounts,
    /// Messages a receive step returned (by label, or MessageId for one the case cannot place)
    /// of which no acknowledgement took effect. Absent (empty) in files written before it was
    /// recorded.
    #[serde(default)]
    pub unacknowledged: Vec<String>,
    /// Queues teardown could not prove deleted, one line each.
    pub teardown_errors: Vec<String>,
    /// Calls of the case whose answer its own faults changed (an injected timeout, throttle,
    /// error, reset or lost answer, a `deny` that denied).
    pub faults_fired: u32,
    /// Of the acknowledgements refused or unanswered (`acks.failed_acks`, `acks.unknown_acks`),
    /// those whose answer the case's own fault made. Absent (0) in files written before it was
    /// recorded.
    #[serde(default)]
    pub faulted_acks: u32,
}

/// A step's own check, as the judge reads it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
    strum::IntoStaticStr,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum CheckKind {
    Pass,
    /// A definite answer differed from the suite's expectation.
    Fail,
    /// The step's outcome cannot be judged (no definite answer, a doubt in the window).
    Inconclusive,
    /// The harness or the target broke: nothing about SQS was judged.
    Error,
}

impl CheckKind {
    /// The snake_case name, as written: `pass`, `fail`, `inconclusive` or `error`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One step that ran, with its check and the answer of its (last) call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepFacts {
    /// 0-based index in the case.
    pub step: usize,
    pub line: u32,
    pub keyword: String,
    pub check: CheckKind,
    /// `fail`: each unmet expectation; `inconclusive` and `error`: the one reason; `pass`:
    /// empty.
    pub details: Vec<String>,
    pub status: Option<u16>,
    pub code: Option<String>,
}

/// Why a case stopped before its end (`classify::StopReason`), in the stops' order: a
/// greater kind outranks a lesser one.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum StopKind {
    Deadline,
    Budget,
    CredentialsRefused,
    TargetLost,
    Interrupted,
}

/// A stop, with the text that says which (absent for an interruption).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StopFacts {
    pub reason: StopKind,
    pub detail: Option<String>,
}

/// How an observation window ended (`classify::WindowEnd`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WindowEndKind {
    Completed,
    AllSeen,
    ReceiveFailed,
    BudgetExhausted,
    /// Cut by the case's stop (`stop` says which).
    Stopped,
}

/// A window's end: the kind, and what the kind needs (the failed receive's code, the budget
/// used, the stop).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WindowEndFacts {
    pub kind: WindowEndKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<StopFacts>,
}

/// The facts of one observation window (`classify::WindowFacts`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WindowFactsRecord {
    pub step: usize,
    pub line: u32,
    pub planned_ms: u64,
    pub elapsed_ms: u64,
    pub receives_used: u32,
    pub receive_budget: u32,
    /// Absent while still open: a stop cut the case in the middle of it.
    pub end: Option<WindowEndFacts>,
    pub unknown_receives: u32,
    /// Of `unknown_receives`, those whose answer a fault of the case took (absent: 0).
    #[serde(default)]
    pub faulted_receives: u32,
    pub short_polls: u32,
    pub untracked_sightings: u32,
    pub tracked: Vec<TrackedFacts>,
    pub integrity: Vec<String>,
    pub expects_outcome: bool,
}

/// Whether a tracked message was ever put on the queue (`classify::SendState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SendKind {
    Sent,
    Refused,
    Unknown,
    NotSent,
}

/// One tracked message when its window closed (`classify::TrackedMessage`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrackedFacts {
    pub label: String,
    pub message_id: Option<String>,
    pub send: SendKind,
    /// Why the send was refused or is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_detail: Option<String>,
    pub deliveries_before: u32,
    pub sightings: u32,
    pub unknown_receives_before: u32,
    pub copies_unknown: bool,
    /// Messages received bearing its business key that could be a copy of it or of another
    /// of the case's sends whose answer was lost (absent: 0).
    #[serde(default)]
    pub ambiguous_copies: u32,
    /// Its send's refusal or missing answer was the case's own fault's doing (absent: false).
    #[serde(default)]
    pub send_faulted: bool,
    /// Of `unknown_receives_before`, those whose answer a fault of the case took (absent: 0).
    #[serde(default)]
    pub faulted_receives_before: u32,
}

/// The case's acknowledgements, counted (`classify::AckFacts`), each put in its class by the
/// lease vocabulary (`classify::leases`) from the case's `call` rows. Files written before the
/// classes had `stale_acks` (any handle a newer receive had superseded, decided REPAIR as
/// `other_attempt_acks` is) and none of the other classes.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct AckCounts {
    pub acks: u32,
    pub unbound_acks: u32,
    #[serde(alias = "stale_acks")]
    pub other_attempt_acks: u32,
    #[serde(default)]
    pub superseded_acks: u32,
    #[serde(default)]
    pub late_acks: u32,
    #[serde(default)]
    pub unsure_acks: u32,
    pub failed_acks: u32,
    pub unknown_acks: u32,
}

/// An observation class, as expectations, outcomes and `case_end` name it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
    strum::IntoStaticStr,
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ClassName {
    ObservedRedelivery,
    NoRedeliveryWithinWindow,
    Inconclusive,
    Delivered,
}

impl ClassName {
    /// The snake_case name, as written.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl AsRef<str> for ClassName {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// What a case expects (`case_start.expect`): the case-level `expect:` of its suite, so the
/// verdict can be re-derived without the suite file.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectRecord {
    /// `outcome:` for every tracked message (`all`) or by label (`per_message`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<OutcomeExpectRecord>,
    /// `rate:`: per class, its bounds as fractions.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rate: BTreeMap<ClassName, RateBoundRecord>,
    /// `decision:`: the decisions the case allows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Vec<Decision>>,
}

/// An `outcome:` expectation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeExpectRecord {
    All(Vec<ClassName>),
    PerMessage(BTreeMap<String, Vec<ClassName>>),
}

/// One class's `rate:` bounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateBoundRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_most: Option<f64>,
}
