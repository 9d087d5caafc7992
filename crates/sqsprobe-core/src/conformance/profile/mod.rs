//! Target profiles: what a target is known to do differently, and what it cannot run at all.
//!
//! A profile (`targets/<name>.yaml`, format in `docs/target-profiles.md`) lists cases by id,
//! each with the reason and an upstream reference, the way ceph/s3-tests marks tests
//! `fails_on_*`. Parsing is pure and positioned like suites (unknown keys are errors with a
//! did-you-mean); applying a profile to a finished case is a pure function of its `case_end`.
//!
//! The rooms: [`model`] (a profile and its entries), [`parse`] (a profile file, every problem
//! positioned) and [`apply`] (a finished case through a profile, and how a run's verdicts
//! compare with it).

mod apply;
mod model;
mod parse;

pub use apply::{NO_LONGER_OBSERVED, ProfileChanges, apply, changes, unsupported_end};
pub use model::{Answer, Profile, ProfileEntry, StepPin};
pub use parse::{parse_profile, unknown_cases};

/// What the tests of the three rooms share: a profile and the cases it is applied to.
#[cfg(test)]
mod fixtures {
    use super::*;
    use crate::evidence::format::{CaseEnd, Finding, Verdict};

    pub(super) const GOOD: &str = "\
target: moto
description: moto in server mode
versions: moto 5.1
known_divergences:
  - case: stale-handle-delete-after-lapse
    step: 3
    answer: {status: 400, code: ReceiptHandleIsInvalid}
    reason: moto answers ReceiptHandleIsInvalid with a different message
    reference: https://github.com/getmoto/moto/blob/master/moto/sqs/exceptions.py
unsupported:
  - case: move-task-start
    reason: moto has no message move tasks
    reference: https://github.com/getmoto/moto/issues/6980
";

    pub(super) fn end(case: &str, verdict: Verdict) -> CaseEnd {
        let mut e = unsupported_end(
            &parse_profile("p.yaml", GOOD).unwrap(),
            "run-1",
            "suites/x.yaml",
            "move-task-start",
            "2026-01-01T00:00:00.000Z",
        )
        .unwrap();
        e.case = case.to_string();
        e.verdict = verdict;
        e.profile_note = None;
        e
    }

    pub(super) fn finding(step: usize, message: &str, status: u16, code: Option<&str>) -> Finding {
        Finding {
            step: Some(step),
            line: 10,
            message: format!("step {} (delete): {message}", step + 1),
            status: Some(status),
            code: code.map(str::to_string),
            teardown: false,
        }
    }

    pub(super) fn failed_with(findings: Vec<Finding>) -> CaseEnd {
        let mut e = end("stale-handle-delete-after-lapse", Verdict::Fail);
        e.findings = findings;
        e
    }

    pub(super) fn teardown_finding(message: &str) -> Finding {
        Finding {
            step: None,
            line: 10,
            message: message.to_string(),
            status: None,
            code: None,
            teardown: true,
        }
    }
}
