//! The shapes of a timeline (pure): the picture, its lanes and marks, and the few facts about
//! a call that both the picture ([`super::picture`]) and the lease reconstruction
//! ([`super::leases`]) need — which lane it belongs to and what it answered.

use sqsprobe_core::evidence::format::{Call, Completion, Phase};

/// A case's timeline, ready to draw.
#[derive(Debug)]
pub(crate) struct Picture {
    /// Length of the axis.
    pub span_ms: f64,
    pub lanes: Vec<Lane>,
    /// The observation window's start and end (elapsed), for guides across every lane.
    pub window: Option<(f64, f64)>,
}

/// One horizontal lane.
#[derive(Debug)]
pub(crate) struct Lane {
    pub name: String,
    /// Rows of bars: calls (and step spans) first, then one per leased message.
    pub tracks: usize,
    pub marks: Vec<Mark>,
}

/// What a mark is: its `data-kind` in the SVG (tests and readers of the page select by it).
/// Adding one is a row here; the legend's swatches are [`SWATCHES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MarkKind {
    /// One SQS call (an attempt), coloured by its completion.
    Call,
    /// A message's lease, from a receive to its end (extended, kept past its end).
    Lease,
    Sleep,
    /// A step that is neither a call nor a sleep (its span).
    Step,
    /// The observation window.
    Window,
    /// A sighting of a message delivered before: it came back.
    Redelivery,
    /// A first sighting in the window.
    Sighting,
    /// A finding, at its step.
    Finding,
    /// A fault sqsprobe injected into an attempt.
    Fault,
}

impl MarkKind {
    /// Every kind.
    #[cfg(test)]
    pub(super) const ALL: [MarkKind; 9] = [
        MarkKind::Call,
        MarkKind::Lease,
        MarkKind::Sleep,
        MarkKind::Step,
        MarkKind::Window,
        MarkKind::Redelivery,
        MarkKind::Sighting,
        MarkKind::Finding,
        MarkKind::Fault,
    ];

    /// The `data-kind` value.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            MarkKind::Call => "call",
            MarkKind::Lease => "lease",
            MarkKind::Sleep => "sleep",
            MarkKind::Step => "step",
            MarkKind::Window => "window",
            MarkKind::Redelivery => "redelivery",
            MarkKind::Sighting => "sighting",
            MarkKind::Finding => "finding",
            MarkKind::Fault => "fault",
        }
    }
}

/// The legend's swatches, in order: the CSS class a mark's part is drawn with (`.sw.<class>`
/// in the stylesheet colours the swatch as the part) and what it means. A class the picture
/// draws with and the reader must tell apart is a row here; a test ties the rows to the
/// stylesheet.
pub(crate) const SWATCHES: &[(&str, &str)] = &[
    ("ok", "call ok"),
    ("fail", "refused (fail)"),
    ("info", "outcome unknown (info)"),
    ("harness", "harness's own call"),
    ("held", "lease"),
    ("extended", "lease extended"),
    ("kept", "handle kept after its lease"),
    (
        "outside",
        "handle used outside its lease (late, superseded, unsure)",
    ),
    ("sleep", "sleep"),
    ("window", "observation window"),
    ("redelivery", "redelivery"),
    ("finding", "finding"),
    ("fault", "fault sqsprobe injected"),
];

/// One thing drawn: its `data-kind`, CSS classes, parts, label and hover text.
#[derive(Debug)]
pub(crate) struct Mark {
    pub kind: MarkKind,
    pub class: String,
    pub parts: Vec<Part>,
    pub label: Option<String>,
    /// Labels are placed in this order (lowest first); the least important are thinned out.
    pub priority: u8,
    /// The evidence behind the mark, shown on hover.
    pub title: String,
    /// Extra `data-*` attributes (name without `data-`, value).
    pub data: Vec<(&'static str, String)>,
}

impl Mark {
    /// Where its label wants to start.
    pub(super) fn anchor_ms(&self) -> f64 {
        self.parts.first().map_or(0.0, |p| p.start)
    }
}

/// A piece of a mark.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Part {
    pub shape: Shape,
    pub track: usize,
    pub start: f64,
    pub end: f64,
    pub class: &'static str,
}

/// How a part is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A bar on its track.
    Bar,
    /// A thin dashed line on its track (a handle kept after its lease ended).
    Dashed,
    /// A vertical cap at `end` (where a lease lapsed or was ended).
    Cap,
    /// A diamond at `start`.
    Point,
    /// A band over the whole lane.
    Band,
    /// A dashed outline over the whole lane.
    Outline,
}

pub(super) const STEPS: &str = "steps";

pub(super) const OBSERVE: &str = "observe";

pub(super) const HARNESS: &str = "harness";

/// The lane of an audited consumer's calls (`sqsprobe audit`'s evidence).
pub(super) const CONSUMER: &str = "consumer";

/// The lane a call is drawn in.
pub(super) fn lane_name(call: &Call) -> String {
    match (call.phase, &call.attempt) {
        (Phase::Setup | Phase::Teardown, _) => HARNESS.to_string(),
        (Phase::Observe, _) => OBSERVE.to_string(),
        (Phase::Step, Some(attempt)) => format!("attempt {attempt}"),
        (Phase::Step, None) => STEPS.to_string(),
        (Phase::Consumer, _) => CONSUMER.to_string(),
    }
}

/// `200`, the error code, or what is known of an unanswered call.
pub(crate) fn outcome(call: &Call) -> String {
    match (&call.error_code, call.http_status, call.completion) {
        (Some(code), _, _) => short_code(code).to_string(),
        (None, Some(status), _) => status.to_string(),
        (None, None, Completion::Info) => "no response".to_string(),
        (None, None, _) => "no status".to_string(),
    }
}

/// `AWS.SimpleQueueService.NonExistentQueue` → `NonExistentQueue`.
pub(super) fn short_code(code: &str) -> &str {
    code.rsplit('.').next().unwrap_or(code)
}

/// A stretch of a lease: as received, or after a visibility change moved it.
pub(super) fn bar(start: f64, end: f64, extended: bool) -> Part {
    Part {
        shape: Shape::Bar,
        track: 0,
        start,
        end,
        class: if extended { "extended" } else { "held" },
    }
}

/// A lease's end mark: `lapse`, `ended` (deleted or released), `was` (the expiry a visibility
/// change moved).
pub(super) fn cap(at: f64, class: &'static str) -> Part {
    Part {
        shape: Shape::Cap,
        track: 0,
        start: at,
        end: at,
        class,
    }
}
