//! What a suite expects, part of the suite model ([`super::model`] re-exports it): a step's
//! `expect:` (answers, messages, attributes, batch entries), the outcome classes of an
//! observation and the classes an `outcome:` allows, `rate:` bounds over trials, and a case's
//! own `expect:`. Plain data, no I/O.

use std::collections::BTreeMap;
use std::time::Duration;

use super::source::{Pos, Spanned};
use sqsprobe_facts::decision::Decision;

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
    /// `messages: N` — receive returned exactly N messages; `messages: {at_least?, at_most?}`
    /// — a count within these bounds (a short poll that may miss, a receive that may return
    /// fewer than asked).
    pub messages: Option<CountExpect>,
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
    /// `message: text` — the error message is exactly this text (where AWS's wording is
    /// recorded and a client may match on it, as for RemovePermission's unknown label).
    pub message: Option<String>,
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

/// How many messages an answer may hold: `at_least..=at_most` (`at_most` open when `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountExpect {
    /// The fewest allowed.
    pub at_least: u32,
    /// The most allowed, if any.
    pub at_most: Option<u32>,
}

impl CountExpect {
    /// Exactly `n`.
    pub fn exactly(n: u32) -> Self {
        Self {
            at_least: n,
            at_most: Some(n),
        }
    }

    /// Whether `n` messages meet it.
    pub fn allows(&self, n: usize) -> bool {
        n >= self.at_least as usize && self.at_most.is_none_or(|hi| n <= hi as usize)
    }
}

impl std::fmt::Display for CountExpect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.at_least, self.at_most) {
            (lo, Some(hi)) if lo == hi => write!(f, "{lo}"),
            (0, Some(hi)) => write!(f, "at most {hi}"),
            (lo, Some(hi)) => write!(f, "{lo} to {hi}"),
            (lo, None) => write!(f, "at least {lo}"),
        }
    }
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
            || self.message.is_some()
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
