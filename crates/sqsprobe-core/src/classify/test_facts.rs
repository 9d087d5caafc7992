//! Builders of synthetic case facts for the judge's and the pooling's tests: a case as the
//! runner would hand it over, without running anything.

use super::judge::{CaseFacts, Check, StepResult, WindowFacts};
use super::outcome::{SendState, TrackedMessage, WindowEnd};

/// A tracked message that was sent, delivered `deliveries_before` times before the window and
/// seen `sightings` times in it.
pub fn tracked(label: &str, deliveries_before: u32, sightings: u32) -> TrackedMessage {
    TrackedMessage {
        label: label.into(),
        message_id: Some(format!("id-{label}")),
        send: SendState::Sent,
        deliveries_before,
        sightings,
        unknown_receives_before: 0,
        copies_unknown: false,
        ambiguous_copies: 0,
        send_faulted: false,
        faulted_receives_before: 0,
    }
}

/// A window opened by step `step`, watched to `end`, with nothing that leaves a doubt.
pub fn window(step: usize, tracked: Vec<TrackedMessage>, end: WindowEnd) -> WindowFacts {
    WindowFacts {
        step,
        line: 10 + step as u32,
        planned_ms: 3000,
        elapsed_ms: 3000,
        receives_used: 3,
        receive_budget: 20,
        end: Some(end),
        unknown_receives: 0,
        faulted_receives: 0,
        short_polls: 0,
        untracked_sightings: 0,
        tracked,
        integrity: Vec::new(),
        expects_outcome: false,
    }
}

/// A step that ran, with its check.
pub fn step(index: usize, keyword: &str, check: Check) -> StepResult {
    StepResult {
        index,
        line: 10 + index as u32,
        keyword: keyword.into(),
        check,
        status: None,
        code: None,
    }
}

/// The usual experiment: send, receive, delete, observe (step 4), then `after` (a step past
/// the window, with its check), each passing; the message acknowledged and, when `came_back`,
/// seen again in the window.
pub fn acked_and_observed(came_back: bool, after: Option<Check>) -> CaseFacts {
    let mut steps = vec![
        step(0, "send", Check::Pass),
        step(1, "receive", Check::Pass),
        step(2, "delete", Check::Pass),
    ];
    let w = window(
        3,
        vec![tracked("m1", 1, u32::from(came_back))],
        if came_back {
            WindowEnd::AllSeen
        } else {
            WindowEnd::Completed
        },
    );
    steps.push(step(3, "observe", super::judge::check_window(&w, None)));
    let planned = if after.is_some() { 5 } else { 4 };
    if let Some(check) = after {
        steps.push(step(4, "delete", check));
    }
    CaseFacts {
        line: 2,
        steps,
        steps_planned: planned,
        window: Some(w),
        acks: super::decision::AckFacts {
            acks: 1,
            ..Default::default()
        },
        ..CaseFacts::default()
    }
}
