//! The suite model: what a YAML suite says, after parsing and validation.
//!
//! Every node a user can get wrong carries its [`Pos`], so the runner and the reports can
//! point back at `file:line:column` too (a failed expectation names the step's line).
//! The model is plain data: no I/O, no SDK types.

use std::collections::BTreeMap;
use std::time::Duration;

pub use sqsprobe_facts::decision::Decision;
// Positions and what steps and cases expect live in files of their own; their types are part
// of the model.
pub use super::expectations::*;
pub use super::source::{Pos, Spanned};

/// One suite file.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// The path as given on the command line (used in every message).
    pub path: String,
    /// `suite:` name; defaults to the file stem.
    pub name: String,
    pub description: Option<String>,
    /// `area:` the area its cases are about ([`super::area::AREAS`]), unless a case names
    /// another.
    pub area: Option<String>,
    pub cases: Vec<Case>,
}

/// The tag of a case whose bound is the team's policy, not a behaviour AWS publishes (a rate
/// no AWS page states): left out of a run unless `--include-team-policy`, so it never fails
/// the default run, and named as a team policy wherever it is listed.
pub const TEAM_POLICY_TAG: &str = "team-policy";

/// One bounded experiment with its own queues.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// `id:` unique within the run; `[a-z0-9-]` so it can go into a queue name.
    pub id: String,
    /// Where the `id` value is written (bound and duplicate-id errors point here).
    pub pos: Pos,
    pub title: Option<String>,
    /// `tags:`; the tag `slow` keeps a case out of a run unless `--include-slow`.
    pub tags: Vec<String>,
    /// `behaviour:` the AWS behaviour this case expects, in one or two sentences.
    pub behaviour: String,
    /// `source:` one citation or a list (API reference URL, AWS-recorded snapshot test name).
    pub sources: Vec<String>,
    /// `retries:` the SDK retry policy for the steps (default `none`, so each attempt is a row).
    pub retries: RetryPolicy,
    /// `protocols: [json]`: the wire protocols whose behaviour the case checks (e.g. a JSON
    /// `__type` name). Empty means every protocol; a run over another protocol does not run it.
    pub protocols: Vec<String>,
    /// `queues:` created before the first step, deleted when the case ends.
    pub queues: Vec<QueueDef>,
    pub steps: Vec<Step>,
    /// `expect:` at case level.
    pub expect: CaseExpect,
    /// `trials: N` (1 to 1000, default 1): the runner runs the case N times, each trial on
    /// fresh owned queues. `outcome:` then holds for every conclusive trial and `rate:`
    /// bounds how often a class occurs over them. [`case_budget`](super::case_budget) is the
    /// budget of one trial.
    pub trials: u32,
    /// `faults:` injected into every call of the case's steps that a fault selects (never
    /// into the harness's own setup and teardown calls). Each has its `actions`.
    pub faults: Vec<Fault>,
    /// `emulator_chaos:` the embedded emulator's chaos for this case's queues only, in the
    /// `--chaos` grammar without the server-wide settings, canonical form
    /// (`redeliver-after-delete=1`; its seed, if it names one, last). Applied only when the target is the embedded
    /// emulator; elsewhere the case runs without it, so its expectation must allow both.
    pub emulator_chaos: Option<String>,
    /// `area:` (else the suite's): the area of the matrix's scores this case counts in.
    pub area: Option<String>,
    /// `aspect:` semantics or validation; when the case does not say, derived from its steps
    /// (`suite/parse/aspect.rs`).
    pub aspect: super::area::Aspect,
}

impl Case {
    /// The regions the case names for its queues (`region:` in `queues:` and on
    /// `create-queue` steps, a `create: false` queue's included: its lookup calls that region),
    /// sorted. A queue without `region:` is in the run's region, which is not listed here.
    pub fn regions(&self) -> Vec<&str> {
        let mut regions: Vec<&str> = self
            .queues
            .iter()
            .chain(self.steps.iter().filter_map(|s| match &s.action {
                Action::CreateQueue(def) => Some(def),
                _ => None,
            }))
            .filter_map(|def| def.region.as_ref().map(|r| r.value.as_str()))
            .collect();
        regions.sort_unstable();
        regions.dedup();
        regions
    }
}

/// How the SDK retries calls made by steps. Setup and teardown always use `standard`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RetryPolicy {
    /// One attempt per call: a throttle or transport error is recorded, never hidden.
    #[default]
    None,
    /// The SDK's standard policy (3 attempts); every attempt is still its own evidence row.
    Standard,
}

/// Standard or FIFO.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueKind {
    #[default]
    Standard,
    Fifo,
}

/// A queue the case owns, by label. The real name is `sqsprobe-<run-id>-<case>-<label>`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueueDef {
    /// The key under `queues:` (or `queue:` in a `create-queue` step).
    pub label: String,
    pub pos: Pos,
    /// `type: standard | fifo`
    pub kind: QueueKind,
    /// `create: false` reserves an owned name without creating it (for not-found cases).
    pub create: bool,
    pub visibility_timeout: Option<Duration>,
    /// `delay:` queue DelaySeconds.
    pub delay: Option<Duration>,
    /// `retention:` MessageRetentionPeriod.
    pub retention: Option<Duration>,
    /// `receive_wait:` ReceiveMessageWaitTimeSeconds.
    pub receive_wait: Option<Duration>,
    /// `max_message_size:` MaximumMessageSize, in bytes (outside SQS's range only in a
    /// `create-queue` step that expects the refusal).
    pub max_message_size: Option<i32>,
    pub content_based_dedup: Option<bool>,
    /// `dedup_scope: queue | messageGroup`
    pub dedup_scope: Option<String>,
    /// `throughput_limit: perQueue | perMessageGroupId`
    pub throughput_limit: Option<String>,
    /// `redrive: {dlq: <label>, max_receive_count: N}`
    pub redrive: Option<Redrive>,
    /// `redrive_allow: allowAll | denyAll | {by_queue: [<label>...]}`
    pub redrive_allow: Option<RedriveAllow>,
    /// `attributes:` raw AWS attribute names and string values, applied last (lets a
    /// conformance case send values the typed keys would refuse).
    pub attributes: BTreeMap<String, String>,
    /// `tags:` queue tags besides the ownership tags, which are always added.
    pub tags: BTreeMap<String, String>,
    /// `name_suffix:` (`create-queue` steps only) raw text appended to the owned name, so a
    /// case can send a name AWS should refuse (bad characters, over 80, a misplaced `.fifo`).
    pub name_suffix: Option<String>,
    /// `region:` the region the queue is created and used in, through calls signed for it
    /// (`us-west-2`); `None` is the run's region.
    pub region: Option<Spanned<String>>,
    /// `same_name_as: <label>`: the queue takes that queue's owned name instead of its own, so
    /// one name exists in two regions (which must differ: one region, one queue per name).
    pub same_name_as: Option<Spanned<String>>,
}

/// A redrive policy pointing at a queue of the same case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redrive {
    pub dlq: Spanned<String>,
    /// `maxReceiveCount` (outside SQS's 1 to 1000 only in a `create-queue` step that expects
    /// the refusal).
    pub max_receive_count: i32,
}

/// RedriveAllowPolicy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedriveAllow {
    AllowAll,
    DenyAll,
    ByQueue(Vec<Spanned<String>>),
}

/// One step of a case.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// 0-based index within the case.
    pub index: usize,
    /// Where the step keyword is written.
    pub pos: Pos,
    pub action: Action,
    /// `expect:` on the step; defaults to success.
    pub expect: StepExpect,
    /// `fault:` beside `expect:`: a fault injected into this step's own calls only.
    pub fault: Option<Fault>,
    /// `wire:` beside `expect:`: how the query protocol client puts this step's call on the
    /// wire, when it is not the way an SDK sends it (query-protocol cases only).
    pub wire: Option<Wire>,
}

/// `wire: {method, to, accept, params}`: one query-protocol request in a form no SDK
/// operation sends — the wire details AWS answers in its own ways (a GET of a queue URL, a
/// service action sent to a queue URL, a request that accepts JSON, a request without
/// `Action`). The call row records the form (`wire` in the evidence).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Wire {
    /// Where `wire:` is written.
    pub pos: Pos,
    /// `method: GET` sends the form as the URL's query string with no body; `POST` (the
    /// default) posts it.
    pub method: WireMethod,
    /// `to: <queue label>`: the request goes to that queue's URL path on the run's endpoint
    /// instead of the endpoint's own path.
    pub to: Option<Spanned<String>>,
    /// `accept: json` sends `Accept: application/json`; `xml` sends `Accept: text/xml`.
    pub accept: Option<ReplyFormat>,
    /// `params: none`: the request carries no parameters at all, not even `Action`.
    pub no_params: bool,
    /// `indexes: none`: each list or map of one item goes without its index, the query API's
    /// early form (`AttributeName=All`, `Attribute.Name=X&Attribute.Value=Y`; boto 2's).
    pub unindexed: bool,
}

/// The HTTP method of a `wire:` request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WireMethod {
    Get,
    #[default]
    Post,
}

impl WireMethod {
    /// The method as HTTP spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            WireMethod::Get => "GET",
            WireMethod::Post => "POST",
        }
    }
}

/// What a step does. The YAML key of each variant is given in its doc.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `send`
    Send(Send),
    /// `send-batch: {queue, entries: [send...]}`
    SendBatch {
        queue: Spanned<String>,
        entries: Vec<BatchSend>,
    },
    /// `receive`
    Receive(Receive),
    /// `delete: {attempt, message?} | {handle}`
    Delete {
        queue: Option<Spanned<String>>,
        target: HandleRef,
    },
    /// `delete-batch: {queue?, entries: [{id?, attempt|handle, message?}]}`
    DeleteBatch {
        queue: Option<Spanned<String>>,
        entries: Vec<BatchHandle>,
    },
    /// `change-visibility: {attempt|handle, message?, timeout}`
    ChangeVisibility {
        queue: Option<Spanned<String>>,
        target: HandleRef,
        timeout: Duration,
    },
    /// `change-visibility-batch: {queue?, entries: [{id?, attempt|handle, message?, timeout}]}`
    ChangeVisibilityBatch {
        queue: Option<Spanned<String>>,
        entries: Vec<BatchVisibility>,
    },
    /// `get-attributes: {queue, names: [All]}`
    GetAttributes {
        queue: Spanned<String>,
        names: Vec<String>,
    },
    /// `set-attributes: {queue, attributes: {Name: value}}`
    SetAttributes {
        queue: Spanned<String>,
        attributes: BTreeMap<String, String>,
    },
    /// `purge: {queue}`
    Purge { queue: Spanned<String> },
    /// `sleep: 1500ms`
    Sleep(Duration),
    /// `observe`
    Observe(Observe),
    /// `create-queue: <queue definition with queue: label>` (an owned queue created as a step,
    /// so its errors are expectations rather than setup failures)
    CreateQueue(QueueDef),
    /// `delete-queue: {queue}`
    DeleteQueue { queue: Spanned<String> },
    /// `get-queue-url: {queue}`
    GetQueueUrl { queue: Spanned<String> },
    /// `list-queues: {max_results?}`; the prefix is always this run's case prefix so the
    /// listing never reaches other people's queues.
    ListQueues { max_results: Option<i32> },
    /// `tag-queue: {queue, tags: {k: v}}`
    TagQueue {
        queue: Spanned<String>,
        tags: BTreeMap<String, String>,
    },
    /// `untag-queue: {queue, keys: [k]}`
    UntagQueue {
        queue: Spanned<String>,
        keys: Vec<String>,
    },
    /// `list-queue-tags: {queue}`
    ListQueueTags { queue: Spanned<String> },
    /// `list-dead-letter-source-queues: {queue}`
    ListDeadLetterSourceQueues { queue: Spanned<String> },
    /// `start-move-task: {source: <dlq label>, destination?: <label>, max_per_second?, as?: task}`
    StartMoveTask {
        source: Spanned<String>,
        destination: Option<Spanned<String>>,
        max_per_second: Option<i32>,
        name: Option<String>,
    },
    /// `list-move-tasks: {source}`
    ListMoveTasks { source: Spanned<String> },
    /// `cancel-move-task: {task} | {handle}`: a task named by `start-move-task: {as: ...}`, or
    /// a literal TaskHandle (for malformed-handle cases)
    CancelMoveTask { task: TaskRef },
    /// `deny: {queue, actions: [sqs:DeleteMessage, ...], for: 5s}`
    Deny(Deny),
    /// `add-permission: {queue, label, actions: [ReceiveMessage], accounts: [self]}`
    AddPermission(AddPermission),
    /// `remove-permission: {queue, label}`
    RemovePermission {
        queue: Spanned<String>,
        label: String,
    },
}

impl Action {
    /// The step name as written in YAML (`send`, `delete-batch`, ...); the grammar of each is
    /// the parser's step table (`crates/sqsprobe-core/src/suite/parse/steps.rs`).
    pub fn keyword(&self) -> &'static str {
        match self {
            Action::Send(_) => "send",
            Action::SendBatch { .. } => "send-batch",
            Action::Receive(_) => "receive",
            Action::Delete { .. } => "delete",
            Action::DeleteBatch { .. } => "delete-batch",
            Action::ChangeVisibility { .. } => "change-visibility",
            Action::ChangeVisibilityBatch { .. } => "change-visibility-batch",
            Action::GetAttributes { .. } => "get-attributes",
            Action::SetAttributes { .. } => "set-attributes",
            Action::Purge { .. } => "purge",
            Action::Sleep(_) => "sleep",
            Action::Observe(_) => "observe",
            Action::CreateQueue(_) => "create-queue",
            Action::DeleteQueue { .. } => "delete-queue",
            Action::GetQueueUrl { .. } => "get-queue-url",
            Action::ListQueues { .. } => "list-queues",
            Action::TagQueue { .. } => "tag-queue",
            Action::UntagQueue { .. } => "untag-queue",
            Action::ListQueueTags { .. } => "list-queue-tags",
            Action::ListDeadLetterSourceQueues { .. } => "list-dead-letter-source-queues",
            Action::StartMoveTask { .. } => "start-move-task",
            Action::ListMoveTasks { .. } => "list-move-tasks",
            Action::CancelMoveTask { .. } => "cancel-move-task",
            Action::Deny(_) => "deny",
            Action::AddPermission(_) => "add-permission",
            Action::RemovePermission { .. } => "remove-permission",
        }
    }
}

/// A message body: literal text or generated filler of an exact size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// `body: "..."`
    Text(String),
    /// `body_size: 1048577` — that many bytes of `x` (for size-limit cases).
    Size(usize),
}

/// A message attribute on send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageAttr {
    pub name: String,
    /// `String`, `Number`, `Binary`, or a custom `String.x` / `Number.x` type.
    pub data_type: String,
    /// String value, or base64 for `Binary`.
    pub value: String,
}

/// `send: {queue, message?, body | body_size, delay?, group?, dedup_id?, attributes?}`
#[derive(Debug, Clone, PartialEq)]
pub struct Send {
    pub queue: Spanned<String>,
    /// `message:` a label for the message (default `m<N>` by order of sends in the case).
    pub message: String,
    pub body: Body,
    pub delay: Option<Duration>,
    /// `group:` MessageGroupId.
    pub group: Option<String>,
    /// `dedup_id:` MessageDeduplicationId.
    pub dedup_id: Option<String>,
    /// `attributes: {Name: {type: String, value: x}}` or `{Name: "x"}` (String).
    pub attributes: Vec<MessageAttr>,
}

/// One entry of `send-batch`: a `send` without `queue`, plus an optional entry `id`.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchSend {
    /// Batch entry Id; defaults to the message label (so `Failed[].Id` maps back).
    pub id: String,
    pub send: Send,
}

/// `receive: {queue, as?, max?, wait?, visibility_timeout?, attribute_names?,
/// message_attribute_names?, request_attempt_id?}`
#[derive(Debug, Clone, PartialEq)]
pub struct Receive {
    pub queue: Spanned<String>,
    /// `as:` the attempt name later steps refer to (A, B, ...). Re-using a name is an error.
    pub attempt: Option<Spanned<String>>,
    pub max: Option<i32>,
    pub wait: Option<Duration>,
    pub visibility_timeout: Option<Duration>,
    /// Defaults to `[All]` so evidence has receive counts and timestamps.
    pub attribute_names: Vec<String>,
    /// MessageAttributeNames as written, an empty list included (sent as an empty list);
    /// `None` when the step does not say, and none is sent.
    pub message_attribute_names: Option<Vec<String>>,
    pub request_attempt_id: Option<String>,
}

/// Which receipt handle a delete or change-visibility uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandleRef {
    /// The handle that attempt received (for `message`, or its only/first message).
    Attempt {
        attempt: Spanned<String>,
        message: Option<Spanned<String>>,
    },
    /// A literal string, for never-issued-handle cases. It is written in the suite, so it is
    /// not a secret; evidence still records only its digest.
    Literal(String),
}

/// Which TaskHandle a `cancel-move-task` sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskRef {
    /// The handle an earlier `start-move-task: {as: <name>}` got.
    Named(Spanned<String>),
    /// A literal string, sent as written (`not-a-handle`): a handle SQS never issued.
    Literal(String),
}

/// One entry of `delete-batch`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchHandle {
    pub id: String,
    pub target: HandleRef,
}

/// One entry of `change-visibility-batch`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchVisibility {
    pub id: String,
    pub target: HandleRef,
    pub timeout: Duration,
}

/// `observe: {queue, window, max_receives?, wait?, visibility_timeout?, messages?, delete?}`
///
/// Polls for at most `window` and at most `max_receives` ReceiveMessage calls, recording every
/// sighting of the tracked messages. It ends early once every tracked message was seen.
#[derive(Debug, Clone, PartialEq)]
pub struct Observe {
    pub queue: Spanned<String>,
    pub window: Duration,
    /// Budget of ReceiveMessage calls (default 20, at most 100).
    pub max_receives: u32,
    /// Long-poll wait per receive (default 1s, never past the window's end).
    pub wait: Duration,
    pub visibility_timeout: Option<Duration>,
    /// Message labels to track; empty means every message sent in the case.
    pub messages: Vec<Spanned<String>>,
    /// `delete: true` deletes what it sees (with the fresh handle) so later steps start clean.
    pub delete_seen: bool,
}

/// Every SQS API operation, by its API name: what a fault's `action:` may select.
pub const SQS_OPERATIONS: &[&str] = &sqsprobe_facts::sqs::operations::NAMES;

/// A fault injected under the SDK into the calls it selects (the runner's HTTP connector
/// does it, so it works against every target, real AWS included).
///
/// Of the calls of the case's steps whose operation is in `actions`, in the order they are
/// made (each attempt of a retried call counts), the first `after` are skipped; each later
/// one is hit with `probability`, drawn from the run's `--seed`; at most `times` are hit.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// Where the fault's mapping is written.
    pub pos: Pos,
    pub kind: FaultKind,
    /// The operations whose calls it may hit (`action:`, one name or a list). At step level
    /// it defaults to every operation the step makes (an observe: ReceiveMessage and
    /// DeleteMessage), and a given one must be among them.
    pub actions: Vec<Spanned<String>>,
    /// `probability:` in `0.0..=1.0` (default 1).
    pub probability: f64,
    /// `after: N`: skip the first N selected calls (default 0).
    pub after: u32,
    /// `times: N`: hit at most N calls (default: no limit).
    pub times: Option<u32>,
}

/// What happens to a call a fault hits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultKind {
    /// `latency` with `delay: 2s`: the request waits that long, then goes on.
    Latency { delay: Duration },
    /// `timeout`: the attempt times out; the request is never sent (`completion: info`).
    Timeout,
    /// `throttle`: answered locally with the throttling error AWS SQS uses, never sent.
    Throttle,
    /// `error` with `status` (400–599) and optional `code`: answered locally, never sent.
    Error { status: u16, code: Option<String> },
    /// `reset`: the connection drops before the request is sent.
    Reset,
    /// `lose-response`: the request reaches the target and takes effect; the response is
    /// dropped (`completion: info`, the canonical ambiguous acknowledgement).
    LoseResponse,
}

impl FaultKind {
    /// The `kind:` name.
    pub fn as_str(&self) -> &'static str {
        match self {
            FaultKind::Latency { .. } => "latency",
            FaultKind::Timeout => "timeout",
            FaultKind::Throttle => "throttle",
            FaultKind::Error { .. } => "error",
            FaultKind::Reset => "reset",
            FaultKind::LoseResponse => "lose-response",
        }
    }
}

/// `deny: {queue, actions, for}`: a server-side fault. The runner sets a queue policy with
/// an explicit Deny of `actions` for the run's own principal, leaves it for `duration` while
/// the next steps go on, then removes it (and always at teardown).
#[derive(Debug, Clone, PartialEq)]
pub struct Deny {
    pub queue: Spanned<String>,
    /// IAM action names as written, each `sqs:<Operation>` of [`SQS_OPERATIONS`]; never the
    /// ones teardown needs (`sqs:SetQueueAttributes`, `sqs:DeleteQueue`).
    pub actions: Vec<Spanned<String>>,
    /// `for:` how long the deny stays.
    pub duration: Duration,
}

/// `add-permission: {queue, label, actions, accounts}`: AddPermission on an owned queue, which
/// writes an Allow statement with Sid `label` into the queue's `Policy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddPermission {
    pub queue: Spanned<String>,
    /// `label:` the statement's Sid, sent as written (AWS checks its characters and length).
    pub label: String,
    /// `actions:` ActionName values as written (`ReceiveMessage`, `*`): AWS's to refuse.
    pub actions: Vec<String>,
    /// `accounts:` AWSAccountIds.
    pub accounts: Vec<Account>,
}

/// An account an `add-permission` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Account {
    /// `self`: the run's own account, which the runner reads from the queue's ARN, so no
    /// account id is ever written in a suite or recorded in evidence.
    Caller,
    /// Anything else, sent as written.
    Literal(String),
}

/// The queue labels a raw attribute value refers to as `${arn:<label>}`.
///
/// Raw `attributes:` pass values through untouched, except that each `${arn:<label>}` becomes
/// the ARN of that queue of the case, so a case can write a RedrivePolicy the typed `redrive`
/// key would refuse (a DLQ of the other type, an out-of-range maxReceiveCount, a queue that
/// was never created).
pub fn arn_refs(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find("${arn:") {
        let after = &rest[start + 6..];
        let Some(end) = after.find('}') else { break };
        out.push(&after[..end]);
        rest = &after[end + 1..];
    }
    out
}

/// `value` with every `${arn:<label>}` replaced by `arn_of(label)`.
pub fn substitute_arns(value: &str, arn_of: &dyn Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${arn:") {
        let after = &rest[start + 6..];
        let Some(end) = after.find('}') else { break };
        out.push_str(&rest[..start]);
        out.push_str(&arn_of(&after[..end]));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arn_references_are_found_and_substituted() {
        let v = r#"{"deadLetterTargetArn":"${arn:dead}","x":"${arn:other}"}"#;
        assert_eq!(arn_refs(v), vec!["dead", "other"]);
        let got = substitute_arns(v, &|l| format!("arn:aws:sqs:r:1:{l}"));
        assert_eq!(
            got,
            r#"{"deadLetterTargetArn":"arn:aws:sqs:r:1:dead","x":"arn:aws:sqs:r:1:other"}"#
        );
        assert!(arn_refs("plain ${arn:unclosed").is_empty());
        assert_eq!(
            substitute_arns("plain ${arn:unclosed", &|_| "X".into()),
            "plain ${arn:unclosed"
        );
    }
}
