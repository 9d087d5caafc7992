//! `deny` steps end to end on the embedded emulator: the runner sets an explicit Deny
//! in an owned queue's policy, the emulator refuses the denied actions with AccessDenied (403)
//! — batches included — without the run mistaking it for refused credentials, the runner lifts
//! the deny when its `for` runs out or at teardown, and the `deny` record says when the calls
//! first saw it.

use crate::common;

use common::run_records;
use sqsprobe_core::evidence::format::{Call, Completion, DenyEnd, Phase, Record, Verdict};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

fn run() -> Vec<Record> {
    run_records(&["run", "tests/fixtures/deny.yaml", "--quiet"], 0, LIMIT).0
}

fn calls<'a>(records: &'a [Record], case: &str) -> Vec<&'a Call> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::Call(c) if c.case == case => Some(c),
            _ => None,
        })
        .collect()
}

fn deny<'a>(records: &'a [Record], case: &str) -> &'a DenyEnd {
    let denies: Vec<&DenyEnd> = records
        .iter()
        .filter_map(|r| match r {
            Record::Deny(d) if d.case == case => Some(d),
            _ => None,
        })
        .collect();
    assert_eq!(denies.len(), 1, "{denies:?}");
    denies[0]
}

#[test]
fn a_deny_refuses_its_actions_until_it_is_lifted() {
    let records = run();
    let ends: Vec<_> = records
        .iter()
        .filter_map(|r| match r {
            Record::CaseEnd(e) => Some((e.case.as_str(), e.verdict)),
            _ => None,
        })
        .collect();
    assert!(ends.iter().all(|(_, v)| *v == Verdict::Pass), "{ends:?}");

    let case_calls = calls(&records, "denied-delete");
    let steps: Vec<(&str, Option<usize>, Phase)> = case_calls
        .iter()
        .filter(|c| c.phase != Phase::Setup && c.phase != Phase::Teardown)
        .map(|c| (c.action.as_str(), c.step, c.phase))
        .collect();
    // The lift belongs to the deny step (2) and comes during the sleep, before B's receive.
    assert_eq!(
        steps[..7],
        [
            ("SendMessage", Some(0), Phase::Step),
            ("ReceiveMessage", Some(1), Phase::Step),
            ("SetQueueAttributes", Some(2), Phase::Step),
            ("DeleteMessage", Some(3), Phase::Step),
            ("SetQueueAttributes", Some(2), Phase::Step),
            ("ReceiveMessage", Some(5), Phase::Step),
            ("DeleteMessageBatch", Some(6), Phase::Step),
        ]
    );
    assert!(
        steps[7..]
            .iter()
            .all(|s| *s == ("ReceiveMessage", Some(7), Phase::Observe)),
        "{steps:?}"
    );
    let refused = case_calls
        .iter()
        .find(|c| c.action == "DeleteMessage")
        .unwrap();
    assert_eq!(
        (
            refused.http_status,
            refused.error_code.as_deref(),
            refused.completion
        ),
        (Some(403), Some("AccessDenied"), Completion::Fail)
    );

    let d = deny(&records, "denied-delete");
    assert_eq!(d.actions, ["sqs:DeleteMessage"]);
    assert_eq!((d.step, d.denied_calls, d.allowed_calls), (2, 1, 0));
    assert_eq!(d.lifted_by, "timer");
    assert!(d.lifted_at.is_some() && d.lift_error.is_none(), "{d:?}");
    assert!(d.first_denied_at.is_some());
    assert!(d.took_effect_ms.unwrap() < 1500, "{d:?}");
    assert!(d.first_denied_at.as_deref() < d.lifted_at.as_deref());

    // A deny that outlives its case is lifted at teardown, before the queue is deleted; the
    // batch form of a denied action is refused too.
    let d = deny(&records, "deny-outlives-the-case");
    assert_eq!(d.lifted_by, "teardown");
    assert_eq!(d.denied_calls, 1);
    let teardown: Vec<&str> = calls(&records, "deny-outlives-the-case")
        .iter()
        .filter(|c| c.phase == Phase::Teardown)
        .map(|c| c.action.as_str())
        .collect();
    assert_eq!(teardown, ["SetQueueAttributes", "DeleteQueue"]);
}

/// A deny lifted between steps goes out with no step's fault: the step before it had a fault
/// on SetQueueAttributes, which used to touch the lift too.
#[test]
fn a_lift_between_steps_is_not_the_previous_steps_fault() {
    let records = run();
    let case_calls = calls(&records, "lift-after-a-faulty-step");
    let sets: Vec<(Option<usize>, bool)> = case_calls
        .iter()
        .filter(|c| c.action == "SetQueueAttributes" && c.phase == Phase::Step)
        .map(|c| (c.step, c.fault.is_some()))
        .collect();
    // The deny (step 1), the faulty step (2), then the lift, which belongs to the deny.
    assert_eq!(
        sets,
        [(Some(0), false), (Some(1), true), (Some(0), false)],
        "{case_calls:?}"
    );
    assert!(
        deny(&records, "lift-after-a-faulty-step")
            .lifted_at
            .is_some()
    );
}
