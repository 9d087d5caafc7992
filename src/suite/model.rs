//! The suite model: what a YAML suite says, after parsing and validation.
//!
//! Every node a user can get wrong carries its [`Pos`], so the runner and the reports can
//! point back at `file:line:column` too (a failed expectation names the step's line).
//! The model is plain data: no I/O, no SDK types.

use std::collections::BTreeMap;
use std::time::Duration;

pub use crate::evidence::format::Decision;

/// A 1-based line and column in a suite file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

/// A value and where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spanned<T> {
    pub value: T,
    pub pos: Pos,
}

/// One suite file.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// The path as given on the command line (used in every message).
    pub path: String,
    /// `suite:` name; defaults to the file stem.
    pub name: String,
    pub description: Option<String>,
    pub cases: Vec<Case>,
}

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
    /// (`redeliver-after-delete=1,seed=0`). Applied only when the target is the embedded
    /// emulator; elsewhere the case runs without it, so its expectation must allow both.
    pub emulator_chaos: Option<String>,
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
    pub max_message_size: Option<u32>,
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
    pub max_receive_count: u32,
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

/// The form of a query-protocol reply (`accept:` in `wire:`, `reply:` in `expect:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyFormat {
    Json,
    Xml,
}

impl ReplyFormat {
    /// The name suites and evidence use.
    pub fn as_str(self) -> &'static str {
        match self {
            ReplyFormat::Json => "json",
            ReplyFormat::Xml => "xml",
        }
    }

    /// The media type an `Accept` header asks for it with.
    pub fn media_type(self) -> &'static str {
        match self {
            ReplyFormat::Json => "application/json",
            ReplyFormat::Xml => "text/xml",
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
    /// the parser's step table (`src/suite/parse/steps.rs`).
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

/// What a step expects. Defaults to plain success.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepExpect {
    pub pos: Option<Pos>,
    /// `error: Code` — the call must fail with this code. Matches the modelled type
    /// (`QueueDoesNotExist`) or the legacy query code (`AWS.SimpleQueueService.NonExistentQueue`).
    pub error: Option<String>,
    /// `status: 400` — HTTP status of the response. A status of 400 or more is an expected
    /// error response even without `error:` (any code); see [`StepExpect::expects_error`].
    pub status: Option<u16>,
    /// `messages: N` — receive returned exactly N messages.
    pub messages: Option<u32>,
    /// `received: [m1, m2]` — these labels were in the response (receive/observe).
    pub received: Vec<Spanned<String>>,
    /// `successful: N` — batch Successful count.
    pub successful: Option<u32>,
    /// `failed: [{id?, code, sender_fault?}]` — batch Failed entries (the count must match).
    pub failed: Option<Vec<FailedEntryExpect>>,
    /// `attributes: {Name: value | "*"}` — queue attributes (get-attributes) or message
    /// system attributes of every received message (receive). `"*"` means present.
    pub attributes: BTreeMap<String, String>,
    /// `attributes: {Name: {matches: <regex>, above: <integer>}}` — the attribute is present
    /// and has this shape: what a value looks like rather than what it is (a SequenceNumber's
    /// size, a SenderId's form).
    pub attribute_shapes: BTreeMap<String, AttrShape>,
    /// `outcome:` on an observe step: the classes each tracked message may end in.
    pub outcome: Option<OutcomeExpect>,
    /// `rate:` on an observe step: bounds on how often each class occurs over the trials.
    pub rate: Option<RateExpect>,
    /// `message_contains: text` — the error message contains this text (for codes AWS reuses
    /// for different reasons, such as `InvalidParameterValue`).
    pub message_contains: Option<String>,
    /// `absent: [Name]` — attributes that must not be present (queue attributes, or the system
    /// attributes of every received message).
    pub absent: Vec<String>,
    /// `within: 3s` — a receive returned within this long (a long poll that ends early).
    pub within: Option<Duration>,
    /// `policy_sids: [label, ...]` — the queue's `Policy` attribute is a policy document whose
    /// statements' Sids are exactly these, in any order (get-attributes; AddPermission writes
    /// one statement per label).
    pub policy_sids: Option<Vec<String>>,
    /// `reply: json | xml` — the form the query-protocol reply came in (query-protocol cases:
    /// a request that accepts JSON, say, is answered in JSON).
    pub reply: Option<Spanned<ReplyFormat>>,
}

impl StepExpect {
    /// Whether the step expects the call to be refused: `error:` names a code, or `status:`
    /// alone is 400 or more (an error response with that status, whatever its code). Without
    /// either the step expects success, and `status:` below 400 is the success's status.
    pub fn expects_error(&self) -> bool {
        self.error.is_some() || self.status.is_some_and(|s| s >= 400)
    }

    /// Whether the step checks anything of the answer beyond its error and status: what a
    /// fault that took the answer (the step's own `fault:`) leaves unchecked, so the step is
    /// inconclusive rather than passed. Every such key belongs here.
    pub fn expects_of_the_answer(&self) -> bool {
        self.messages.is_some()
            || !self.received.is_empty()
            || self.successful.is_some()
            || self.failed.is_some()
            || !self.attributes.is_empty()
            || !self.attribute_shapes.is_empty()
            || self.outcome.is_some()
            || self.rate.is_some()
            || self.message_contains.is_some()
            || !self.absent.is_empty()
            || self.within.is_some()
            || self.policy_sids.is_some()
            || self.reply.is_some()
    }
}

/// The shape an attribute's value must have: every given part holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AttrShape {
    /// `matches:` a regular expression (regex-lite syntax, compiled once, when the suite is
    /// read) that matches the value somewhere: anchor it (`^…$`) to match the whole value.
    pub matches: Option<Pattern>,
    /// `above:` the value is a decimal integer greater than this one (any size: 128-bit
    /// SequenceNumbers compare exactly). Digits only, without leading zeros.
    pub above: Option<String>,
}

/// A compiled `matches:` pattern; two are equal when they were written the same.
#[derive(Debug, Clone)]
pub struct Pattern(regex_lite::Regex);

impl Pattern {
    /// Compiles `pattern` (regex-lite syntax).
    pub fn new(pattern: &str) -> Result<Pattern, regex_lite::Error> {
        regex_lite::Regex::new(pattern).map(Pattern)
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// Whether it matches somewhere in `value`.
    pub fn is_match(&self, value: &str) -> bool {
        self.0.is_match(value)
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Pattern {}

/// One expected `Failed[]` entry of a batch response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedEntryExpect {
    pub id: Option<String>,
    pub code: String,
    pub sender_fault: Option<bool>,
}

/// The outcome classes of a bounded observation (see [`crate::classify`]), per tracked message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OutcomeClass {
    /// Seen in the window, and delivered earlier in the case (by any receive, any attempt,
    /// or a move to a dead-letter queue): it came back.
    ObservedRedelivery,
    /// Not seen, and the whole window was watched to its end.
    NoRedeliveryWithinWindow,
    /// Anything that cannot be vouched for: a cut window, a lost or unknown response, a
    /// message that was never sent. Never an expectation, never a pass.
    Inconclusive,
    /// Seen in the window for the first time: never delivered earlier in the case. Not a
    /// redelivery (a `send; observe` case, a delayed message, a DLQ's first sight), and
    /// expectable, for delay and dead-letter checks.
    Delivered,
}

impl OutcomeClass {
    /// The snake_case name used in YAML, evidence and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeClass::ObservedRedelivery => "observed_redelivery",
            OutcomeClass::NoRedeliveryWithinWindow => "no_redelivery_within_window",
            OutcomeClass::Inconclusive => "inconclusive",
            OutcomeClass::Delivered => "delivered",
        }
    }

    /// The class of a snake_case name (`inconclusive` included).
    pub fn from_name(name: &str) -> Option<OutcomeClass> {
        [
            OutcomeClass::ObservedRedelivery,
            OutcomeClass::NoRedeliveryWithinWindow,
            OutcomeClass::Inconclusive,
            OutcomeClass::Delivered,
        ]
        .into_iter()
        .find(|c| c.as_str() == name)
    }

    /// The names a suite may expect (`inconclusive` is never a valid expectation).
    pub const EXPECTABLE: &'static [&'static str] = &[
        "observed_redelivery",
        "no_redelivery_within_window",
        "delivered",
    ];
}

/// The classes an `outcome:` allows: one (`delivered`) or a list
/// (`[observed_redelivery, no_redelivery_within_window]`, for behaviour AWS leaves open).
/// Sorted, without repeats, never empty and never `Inconclusive`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedClasses(Vec<OutcomeClass>);

impl AllowedClasses {
    /// The classes given, sorted and deduplicated; `None` when empty or when one is
    /// `Inconclusive`.
    pub fn new(classes: impl IntoIterator<Item = OutcomeClass>) -> Option<AllowedClasses> {
        let mut v: Vec<OutcomeClass> = classes.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        (!v.is_empty() && !v.contains(&OutcomeClass::Inconclusive)).then_some(AllowedClasses(v))
    }

    /// Whether an observed `class` meets the expectation (`Inconclusive` never does; the
    /// runner reports it as inconclusive, not as a failure).
    pub fn allows(&self, class: OutcomeClass) -> bool {
        self.0.contains(&class)
    }

    /// The allowed classes, in order.
    pub fn classes(&self) -> &[OutcomeClass] {
        &self.0
    }

    /// `delivered`, or `observed_redelivery or no_redelivery_within_window`.
    pub fn describe(&self) -> String {
        let names: Vec<&str> = self.0.iter().map(|c| c.as_str()).collect();
        names.join(" or ")
    }
}

impl From<OutcomeClass> for AllowedClasses {
    /// One class. `Inconclusive` is not an expectation: the parser never builds this.
    fn from(class: OutcomeClass) -> AllowedClasses {
        AllowedClasses(vec![class])
    }
}

/// `outcome: <classes>` (every tracked message) or `outcome: {m1: <classes>, m2: ...}`, where
/// `<classes>` is one class or a list. With `trials:`, every conclusive trial must meet it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutcomeExpect {
    All(Spanned<AllowedClasses>),
    PerMessage(BTreeMap<String, Spanned<AllowedClasses>>),
}

/// `rate: {<class>: {at_least?, at_most?}, ...}`: how often each class may occur.
///
/// The rate of a class is the share of the case's started trials whose observation ends in
/// that class (the observation's overall class, as `case_end.classification` reports it); a
/// trial without a class counts both ways, so the judge's two-sided 95% interval is
/// `[CP_lower(k, n), CP_upper(k + unknown, n)]` (`classify::rate::Sample`): the bound passes
/// when the whole interval is inside it, fails when the whole interval is outside, and is
/// inconclusive when the interval straddles it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RateExpect {
    pub bounds: BTreeMap<OutcomeClass, Spanned<RateBound>>,
}

/// Bounds on one class's rate, as fractions in `0.0..=1.0` (`5%` is `0.05`). At least one is
/// set, and `at_least <= at_most` when both are.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RateBound {
    pub at_least: Option<f64>,
    pub at_most: Option<f64>,
}

/// Case-level expectations.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CaseExpect {
    /// `expect: {outcome: ...}` — applies to the case's last observe step.
    pub outcome: Option<OutcomeExpect>,
    /// `expect: {rate: ...}` — applies to the case's last observe step, over its trials.
    pub rate: Option<RateExpect>,
    /// `expect: {decision: HOLD}` (or a list): the playbook decisions the case allows. A case
    /// that allows `HOLD` and expects no outcome passes when the fault it injects leaves its
    /// observation undecided (never when the window was cut): not knowing is what it expects.
    pub decision: Option<Spanned<Vec<Decision>>>,
}

/// Every SQS API operation, by its API name: what a fault's `action:` may select.
pub const SQS_OPERATIONS: &[&str] = &[
    "AddPermission",
    "CancelMessageMoveTask",
    "ChangeMessageVisibility",
    "ChangeMessageVisibilityBatch",
    "CreateQueue",
    "DeleteMessage",
    "DeleteMessageBatch",
    "DeleteQueue",
    "GetQueueAttributes",
    "GetQueueUrl",
    "ListDeadLetterSourceQueues",
    "ListMessageMoveTasks",
    "ListQueueTags",
    "ListQueues",
    "PurgeQueue",
    "ReceiveMessage",
    "RemovePermission",
    "SendMessage",
    "SendMessageBatch",
    "SetQueueAttributes",
    "StartMessageMoveTask",
    "TagQueue",
    "UntagQueue",
];

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
