//! The evidence wire format, version 1 (documented in `docs/evidence-format.md`).
//!
//! One JSON object per line, each an envelope `{"type": ..., "data": {...}}` as ripgrep's JSON
//! printer does, so a reader can dispatch on `type` and ignore types it does not know.
//! Rows are written as they happen; a run that was interrupted still leaves a file whose every
//! line parses, it just has no `run_end`.
//!
//! What never appears here: a raw receipt handle, a message body, credentials, an account id.
//! Handles and bodies are present only as lowercase hex SHA-256 digests.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use super::facts::{CaseFactsRecord, ExpectRecord, StopFacts};

/// The format identifier written in `run_start.format`.
pub const FORMAT: &str = "sqsprobe-evidence/1";

/// One line of `evidence.jsonl`.
///
/// [`RecordType`] names its variants as the envelope's `type` (derived, so the reader's set of
/// known types cannot fall behind this enum).
#[derive(
    Debug, Clone, PartialEq, Serialize, Deserialize, strum::EnumDiscriminants, schemars::JsonSchema,
)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
#[strum_discriminants(
    name(RecordType),
    derive(strum::VariantNames, strum::IntoStaticStr),
    strum(serialize_all = "snake_case")
)]
pub enum Record {
    RunStart(RunStart),
    CaseStart(CaseStart),
    Call(Call),
    /// One step of a case finished (sleeps and observations included).
    Step(StepEnd),
    /// One trial of a multi-trial case finished: its own verdict and observation, with
    /// `trial` set; the case's `case_end` pools them.
    TrialEnd(CaseEnd),
    /// A `deny` step's policy was lifted (by its timer or at teardown): when it was set, when
    /// the calls first saw it, when it was lifted.
    Deny(DenyEnd),
    /// The facts a case (or one trial) was judged on, just before its `case_end` (or
    /// `trial_end`): `sqsprobe check` re-judges the run from them.
    Facts(CaseFactsRecord),
    CaseEnd(CaseEnd),
    RunEnd(RunEnd),
}

/// A `deny` step's explicit Deny, from being set to being lifted, as the calls saw it.
///
/// AWS applies a policy change within up to a minute, so the deny takes effect when the calls
/// say it did: `first_denied_at` is the first call of a denied action on the queue answered
/// `AccessDenied`, and `allowed_calls` counts those answered success while the deny was set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DenyEnd {
    pub run_id: String,
    pub case: String,
    /// The deny step's 0-based index and line.
    pub step: usize,
    pub line: u32,
    /// The owned queue's name.
    pub queue: String,
    /// The IAM actions denied, as written (`sqs:DeleteMessage`).
    pub actions: Vec<String>,
    /// When the SetQueueAttributes that set the policy was answered.
    pub set_at: String,
    /// `set_at` plus the step's `for`: when the runner was to lift it.
    pub due_at: String,
    /// The first call of a denied action on the queue answered `AccessDenied` after the policy
    /// was set; null when no call was refused.
    pub first_denied_at: Option<String>,
    /// Milliseconds from `set_at` to `first_denied_at`: how long the deny took to show.
    pub took_effect_ms: Option<u64>,
    /// Calls of a denied action refused (`AccessDenied`) while the deny was set.
    pub denied_calls: u32,
    /// Calls of a denied action that succeeded while the deny was set.
    pub allowed_calls: u32,
    /// The last of those, if any.
    pub last_allowed_at: Option<String>,
    /// When the SetQueueAttributes that lifted it was answered; null if it could not be lifted
    /// (the queue is deleted at teardown all the same).
    pub lifted_at: Option<String>,
    /// `timer` (its `for` ran out) or `teardown` (the case ended first).
    pub lifted_by: String,
    /// Why the lift failed, when it did.
    pub lift_error: Option<String>,
    /// The trial (1-based) of a multi-trial case; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<u32>,
}

/// A step of a case finished: when it ran and how its check came out. Sleeps, which make no
/// call, appear only here; reports draw them as spans.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepEnd {
    pub run_id: String,
    pub case: String,
    /// 0-based index, as in `call.step`.
    pub step: usize,
    pub line: u32,
    /// The step keyword (`sleep`, `observe`, `delete`, ...).
    pub keyword: String,
    pub started_at: String,
    pub ended_at: String,
    /// `pass`, `fail`, `inconclusive` or `error`: the step's own check.
    pub check: super::facts::CheckKind,
    /// The trial (1-based) of a multi-trial case; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<u32>,
}

/// First line of every evidence file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunStart {
    pub format: String,
    pub run_id: String,
    pub sqsprobe_version: String,
    /// `embedded`, `endpoint` or `aws`.
    pub target: String,
    /// The endpoint URL (loopback for embedded), or null for real AWS.
    pub endpoint: Option<String>,
    pub region: String,
    /// Target profile name when one was given (conformance runs).
    pub target_profile: Option<String>,
    /// The `--target-profile` as given (a built-in name or a file path), so `sqsprobe check`
    /// maps the re-judged cases through the same profile; absent without one, and in files
    /// written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_profile_source: Option<String>,
    /// The wire protocol of the run's SQS calls: `json` or `query`.
    pub protocol: sqsprobe_facts::sqs::protocol::Protocol,
    pub started_at: String,
    /// Suite files in the run.
    pub suites: Vec<String>,
    /// Selected case ids, in run order.
    pub cases: Vec<String>,
    /// The embedded emulator's chaos spec (`--chaos`, canonical form), or null when none.
    /// Absent in files written before it existed.
    #[serde(default)]
    pub emulator_chaos: Option<String>,
    /// `K/N` when the run is one partition of a selection split across CI jobs
    /// (`--partition`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// The run's seed (`--seed N`, else drawn at random): the same seed and suite inject the
    /// same faults and run the same trials. Absent in files written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The clock every timestamp of the run was read from: `real`, or `virtual` (`--clock
    /// virtual`: timestamps start at the real start time and advance with simulated time, so
    /// durations are simulated ones). Absent in files written before it existed (real).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<String>,
    /// Set only in the evidence `sqsprobe report` writes when it merges the run folders of a
    /// `--partition` run: which partitions it holds and which it lacks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<Merged>,
    /// Every region the run's cases will touch (its own region, and each `region:` of the
    /// queues of the cases that run), sorted; written before any queue is created, so
    /// `sqsprobe sweep --regions-of RUN_DIR` finds everything a killed run may have left.
    /// Absent in files written before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regions: Vec<String>,
}

/// The partitions a merged run was made from (`run_start.merged`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Merged {
    /// N: how many partitions the selection was split into.
    pub of: u32,
    /// The partitions merged, in partition order.
    pub partitions: Vec<MergedPartition>,
    /// The partitions (K) of N that were not given: their cases are not in the merged run.
    pub missing: Vec<u32>,
}

/// One partition of a merged run, as its own `run_start` recorded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergedPartition {
    /// `K/N`.
    pub partition: String,
    pub run_id: String,
    pub seed: Option<u64>,
    pub started_at: String,
    /// Whether that partition's evidence ends with a `run_end` that was not interrupted.
    pub complete: bool,
}

/// A case began; its queues are about to be created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseStart {
    pub run_id: String,
    pub case: String,
    pub suite: String,
    /// Line of the case's `id:` in the suite.
    pub line: u32,
    pub title: Option<String>,
    pub tags: Vec<String>,
    pub behaviour: String,
    pub sources: Vec<String>,
    pub started_at: String,
    /// How many trials the case runs (`trials:` / `--trials`), when more than one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials: Option<u32>,
    /// The embedded emulator's chaos this case's queues were created with (the case's
    /// `emulator_chaos:`, canonical form); absent when none was applied — no such key, or a
    /// target other than the embedded emulator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulator_chaos: Option<String>,
    /// The area the case counts in for the conformance matrix (`area:` of the case or its
    /// suite; one of docs/suite-format.md's list); absent when neither names one (older
    /// evidence too), and the matrix then uses the suite file's stem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub area: Option<String>,
    /// `semantics` or `validation` (the case's `aspect:`, else derived from its steps);
    /// absent in evidence written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aspect: Option<String>,
    /// The case-level `expect:` (outcome, rate, decision), so its verdict can be re-judged
    /// from the evidence alone; absent when it has none, and in files written before it was
    /// recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<ExpectRecord>,
}

/// Where in a case a call was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Creating the case's queues.
    Setup,
    /// A step of the suite.
    Step,
    /// A receive made by an `observe` step.
    Observe,
    /// Deleting the case's queues.
    Teardown,
    /// A request the consumer under `sqsprobe audit` made (case `consumer`).
    Consumer,
}

/// Jepsen's completion types: a call either took effect (`ok`), definitely did not (`fail`),
/// or we cannot know (`info`: no response, e.g. a timeout after the request was sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Completion {
    Ok,
    Fail,
    Info,
}

/// One attempt of one SQS call. A call the SDK retried yields one row per attempt; all but
/// the last carry `retried: true`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Call {
    pub run_id: String,
    pub case: String,
    pub phase: Phase,
    /// 0-based step index, when `phase` is `step` or `observe`.
    pub step: Option<usize>,
    /// Line of the step in the suite file.
    pub line: Option<u32>,
    /// The SQS operation, e.g. `DeleteMessage`.
    pub action: String,
    /// 1-based SDK attempt number within this call.
    pub attempt_number: u32,
    pub retried: bool,
    /// The suite's attempt name (`A`, `B`) for receives made `as:` one, and for deletes and
    /// visibility changes that use that attempt's handle.
    pub attempt: Option<String>,
    /// The owned queue's name (never its URL: URLs of real queues carry the account id).
    pub queue: Option<String>,
    /// Single-message calls: the message concerned.
    pub message_id: Option<String>,
    pub message: Option<String>,
    pub business_key: Option<String>,
    /// SHA-256 hex of the receipt handle sent (delete, change-visibility).
    pub handle_digest: Option<String>,
    /// Messages returned by a receive, or sent by a send.
    pub messages: Vec<MessageEvidence>,
    /// Per-entry results of a batch call.
    pub entries: Vec<EntryEvidence>,
    pub request_id: Option<String>,
    pub http_status: Option<u16>,
    /// The error code the SDK reports (the legacy query code when the server sends
    /// `x-amzn-query-error`, e.g. `AWS.SimpleQueueService.NonExistentQueue`).
    pub error_code: Option<String>,
    /// The JSON `__type` shape name without namespace, e.g. `QueueDoesNotExist`.
    pub error_type: Option<String>,
    pub sender_fault: Option<bool>,
    /// The server's error message, with account ids, handles and bodies masked.
    pub error_message: Option<String>,
    pub completion: Completion,
    pub started_at: String,
    pub ended_at: String,
    pub latency_ms: f64,
    /// The lease this call gives, in milliseconds: for ReceiveMessage the visibility timeout
    /// the returned messages are leased for (the request's `VisibilityTimeout`, else the
    /// queue's as the case set it, else SQS's default 30 s); for ChangeMessageVisibility the
    /// new timeout, counted from the call. Absent for other calls and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_ms: Option<u64>,
    /// The fault sqsprobe injected into this attempt (`faults:` / `fault:` of the suite), if
    /// any: what the target did, or did not, see is then the fault's doing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<FaultEvidence>,
    /// The trial (1-based) of a multi-trial case this call belongs to; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<u32>,
    /// The region the call was signed for, when it is not the run's (`run_start.region`): a
    /// queue defined with `region:`. Absent for the run's own region and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// The query-protocol request form a step's `wire:` gave this call, and the form the
    /// reply came in. Absent for calls sent as the SDK sends them, and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire: Option<Box<WireEvidence>>,
}

/// A call sent in a query-protocol form of the suite's choosing (a step's `wire:`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WireEvidence {
    /// `GET` (the form in the URL's query string) or `POST` (the form as the body).
    pub method: String,
    /// The queue whose URL the request went to (its name); absent: the endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// `json` or `xml`: what the request's `Accept` header asked for; absent: none sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept: Option<String>,
    /// True when the request carried no parameters at all, not even `Action`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_params: bool,
    /// True when each list or map of one item went without its index (`AttributeName=All`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unindexed: bool,
    /// `json`, `xml` or `other`: the form of the reply; absent when none came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
}

/// An injected fault, as recorded on the attempt it hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FaultEvidence {
    /// `latency`, `timeout`, `throttle`, `error`, `reset` or `lose-response`.
    pub kind: String,
    /// `step` (the step's own `fault:`) or `case` (the case's `faults:`).
    pub scope: String,
    /// `latency`: how long the request was held before it was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// `throttle` and `error`: the status answered locally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// `throttle` and `error`: the code answered locally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// A message as seen by a send or a receive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageEvidence {
    pub message_id: String,
    /// The suite's label for the message (`m1`), when it is one of the case's sends.
    pub message: Option<String>,
    pub business_key: Option<String>,
    /// Receives only.
    pub handle_digest: Option<String>,
    pub body_digest: Option<String>,
    /// `ApproximateReceiveCount` as returned.
    pub receive_count: Option<u32>,
    pub sequence_number: Option<String>,
    /// False when the returned MD5OfMessageBody does not match the body (the SDK does not check).
    pub md5_ok: Option<bool>,
}

/// One entry of a batch response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntryEvidence {
    pub id: String,
    pub message: Option<String>,
    pub message_id: Option<String>,
    pub handle_digest: Option<String>,
    /// `successful` or `failed`.
    pub result: String,
    pub code: Option<String>,
    pub sender_fault: Option<bool>,
    pub error_message: Option<String>,
    /// ChangeMessageVisibilityBatch: the entry's new timeout in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_ms: Option<u64>,
}

/// Verdict of a case. Order matters: when combining, the greater wins
/// (a failed expectation is a finding, even if the harness broke afterwards).
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
)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    /// Not run: the target profile lists the case as one the target cannot run at all
    /// (e.g. an operation it does not implement). Written as a `case_end` with no
    /// `case_start` and no calls.
    Unsupported,
    /// Expected to differ on this target (target profile), and it did.
    KnownDivergence,
    Inconclusive,
    Error,
    Fail,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Unsupported => "unsupported",
            Verdict::KnownDivergence => "known_divergence",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Error => "error",
            Verdict::Fail => "fail",
        }
    }
}

// The playbook's decisions are the suite's and the judge's words too: they live in a leaf below
// all three, and are re-exported here as part of the format.
pub use sqsprobe_facts::decision::Decision;

/// The classification of one tracked message in the case's last observation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageOutcome {
    pub message: String,
    pub message_id: Option<String>,
    /// `observed_redelivery`, `no_redelivery_within_window`, `inconclusive` (or `delivered`).
    pub class: super::facts::ClassName,
    /// Why, for `inconclusive` (throttled, transport error, budget exhausted, ...).
    pub reason: Option<String>,
    /// Times it was returned by the observation.
    pub sightings: u32,
    /// Times it was delivered in the whole case (every receive).
    pub deliveries: u32,
}

/// How an observation window ended (`case_end.window.ended`).
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
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum WindowEnded {
    /// Watched to its planned end.
    Completed,
    /// Ended early: every tracked message was seen.
    AllSeen,
    /// A receive failed with a definite error.
    ReceiveFailed,
    /// The window's own receive budget ran out.
    BudgetExhausted,
    /// Cut by the case's stop: the run was interrupted, the case's deadline, a lost target,
    /// refused credentials, a spent run budget.
    Interrupted,
    Deadline,
    TargetLost,
    CredentialsRefused,
    RunBudget,
    /// Written by earlier builds only.
    Throttled,
    TransportError,
    /// No end was recorded (a case stopped before its window was judged); an empty string on
    /// the wire.
    #[serde(rename = "")]
    #[strum(serialize = "")]
    Unknown,
}

impl WindowEnded {
    /// The snake_case name, as written.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The bounded observation window of the case's last observe step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Window {
    pub step: usize,
    pub line: u32,
    pub planned_ms: u64,
    pub elapsed_ms: u64,
    pub receives_used: u32,
    pub receive_budget: u32,
    /// How it ended (see [`WindowEnded`]).
    pub ended: WindowEnded,
    /// Receive attempts in the window without a definite answer (no response, 5xx,
    /// throttled), the ones a successful SDK retry hid included. Silence over a window with any
    /// is `inconclusive`. Absent in files written before it existed, read as 0.
    #[serde(default)]
    pub unknown_receives: u32,
}

/// One unmet expectation, pointing at the suite line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    pub step: Option<usize>,
    pub line: u32,
    pub message: String,
    /// The HTTP status of the step's call when the finding is about its answer (absent in
    /// files written before it existed, and for findings that are not about one answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The error code of that answer (legacy query code when the server sent one, else the
    /// JSON shape name); absent for a success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The finding is about the case's teardown (a queue it could not delete), not a step:
    /// a target profile pins it with `teardown:`. Absent (false) otherwise, and in files
    /// written before it existed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub teardown: bool,
}

/// Closing row of a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseEnd {
    pub run_id: String,
    pub case: String,
    pub suite: String,
    pub verdict: Verdict,
    /// One sentence saying why this verdict.
    pub reason: String,
    /// Unmet expectations (verdict fail), harness errors (error), or what was not observable.
    pub findings: Vec<Finding>,
    /// The overall class of the case's last observation (the worst over its messages).
    pub classification: Option<super::facts::ClassName>,
    pub outcomes: Vec<MessageOutcome>,
    pub decision: Option<Decision>,
    pub window: Option<Window>,
    /// Number of ReceiveMessage calls in the case.
    pub receives: u32,
    /// Deliveries per message label (or message id when not one of the case's sends).
    pub deliveries: BTreeMap<String, u32>,
    /// Queues created, and whether each was deleted at the end.
    pub queues: Vec<QueueCleanup>,
    /// Target profile note when the verdict was mapped (known divergence, or a known
    /// divergence that no longer shows).
    pub profile_note: Option<String>,
    pub started_at: String,
    pub ended_at: String,
    pub duration_ms: u64,
    /// In a `trial_end`: which trial (1-based). Absent in a `case_end`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<u32>,
    /// In the `case_end` of a multi-trial case: its trials pooled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials: Option<Trials>,
}

impl CaseEnd {
    /// The `case_end` of a case closed without a run of its own — skipped (verdict
    /// `unsupported`, what skipped it in `note`), kept from starting by the run's stop, or
    /// whose task failed — stamped `at`: its verdict and why, nothing observed, no duration.
    /// Every such `case_end` is built here.
    pub fn unrun(
        run_id: &str,
        suite: &str,
        case: &str,
        at: &str,
        verdict: Verdict,
        reason: String,
        note: Option<String>,
    ) -> CaseEnd {
        CaseEnd {
            run_id: run_id.to_string(),
            case: case.to_string(),
            suite: suite.to_string(),
            verdict,
            reason,
            findings: Vec::new(),
            classification: None,
            outcomes: Vec::new(),
            decision: None,
            window: None,
            receives: 0,
            deliveries: BTreeMap::new(),
            queues: Vec::new(),
            profile_note: note,
            started_at: at.to_string(),
            ended_at: at.to_string(),
            duration_ms: 0,
            trial: None,
            trials: None,
        }
    }
}

/// A multi-trial case's trials, pooled (`case_end.trials`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Trials {
    /// Trials started (the denominator of every interval); trials the run never started are
    /// not in it.
    pub n: u32,
    /// Trials with a class: `n − unknown`.
    pub conclusive: u32,
    /// Trials that started and have no class (inconclusive, an error, cut while running).
    /// Absent in files written before it existed.
    #[serde(default)]
    pub unknown: u32,
    /// Every started trial once: under its class when it has one, else `inconclusive` or
    /// `error`; the values add up to `n`.
    pub counts: BTreeMap<String, u32>,
    /// Per class, the two-sided 95% interval `[low, high]` of its rate over the n trials,
    /// the unknown ones counted both ways: `[CP_lower(k, n), CP_upper(k + unknown, n)]`.
    pub intervals: BTreeMap<String, [f64; 2]>,
    /// Each trial's verdict and class, in trial order.
    pub per_trial: Vec<TrialOutcome>,
    /// The case's `rate:` bounds, per class, that the intervals were judged against; empty
    /// (and absent) when the case has none, and in files written before it existed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub bounds: BTreeMap<String, RateBound>,
}

/// A `rate:` bound on one class's share of the started trials, as fractions (`5%` is
/// `0.05`); at least one side is set.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateBound {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_most: Option<f64>,
}

/// One trial's result, as `case_end.trials.per_trial` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrialOutcome {
    pub trial: u32,
    pub verdict: Verdict,
    /// The trial's observation class, `null` without an observe step.
    pub class: Option<super::facts::ClassName>,
}

/// Teardown result of one owned queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueueCleanup {
    pub queue: String,
    pub deleted: bool,
    /// The queue's region when it is not the run's (a `region:` queue); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
}

/// Last line of a complete run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunEnd {
    pub run_id: String,
    pub ended_at: String,
    pub duration_ms: u64,
    pub interrupted: bool,
    pub totals: BTreeMap<String, u32>,
    pub exit_code: i32,
    /// SQS requests the run made (every attempt, the harness's own included). Absent in
    /// files written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    /// Of those, the requests billed at the FIFO rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fifo_requests: Option<u64>,
    /// What the requests would cost at AWS list prices, in US dollars, with no free allowance
    /// assumed (see `docs/aws.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Owned queues the run created and could not prove deleted (no definite answer to their
    /// DeleteQueue): they may still be on the target. Absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_queues: Vec<LeftQueue>,
    /// Why the run stopped itself before its end, in one line (`the request budget
    /// (--max-requests 8) is spent`, `the target was lost (…)`); absent when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub halted: Option<String>,
    /// The stop that decided the exit code, typed: the run's own halt, or the signal that
    /// interrupted it; absent when neither happened, and in files written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<StopFacts>,
}

/// An owned queue a run may have left on its target (`run_end.left_queues`).
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct LeftQueue {
    /// Its region (the run's, or the case's `region:`): `sqsprobe sweep --region` finds it.
    pub region: String,
    pub queue: String,
    /// The case that created it.
    pub case: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_start_without_emulator_chaos_still_reads() {
        let line = r#"{"type":"run_start","data":{"format":"sqsprobe-evidence/1","run_id":"r","sqsprobe_version":"0.1.0","target":"embedded","endpoint":null,"region":"us-east-1","target_profile":null,"protocol":"json","started_at":"2026-01-01T00:00:00.000Z","suites":[],"cases":[]}}"#;
        let Record::RunStart(start) = serde_json::from_str::<Record>(line).unwrap() else {
            panic!("not a run_start");
        };
        assert_eq!(start.emulator_chaos, None);
        let with = line.replace(r#""cases":[]"#, r#""cases":[],"emulator_chaos":"seed=1""#);
        let Record::RunStart(start) = serde_json::from_str::<Record>(&with).unwrap() else {
            panic!("not a run_start");
        };
        assert_eq!(start.emulator_chaos.as_deref(), Some("seed=1"));
    }
}
