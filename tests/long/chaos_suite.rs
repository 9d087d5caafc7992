//! The shipped `suites/chaos/`, end to end: on the embedded emulator every case passes
//! with the verdict, class and decision its situation calls for, every fault kind leaves its
//! row; with `--chaos stale-delete-keeps=1` the stale-handle rate fails; against a target without
//! the emulator's chaos (`sqsprobe serve` by endpoint URL) the suite stays honest — the
//! duplicate-after-delete case sees no duplicate and nothing passes falsely.

use crate::common;

use common::serve::Serve;
use common::{case_end as end, run_records, step_calls};
use sqsprobe_core::evidence::format::{Completion, Decision, Record, Verdict};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

fn run(extra: &[&str], expect_code: i32) -> Vec<Record> {
    let mut args = vec![
        "run",
        "suites/chaos",
        "--seed",
        "3",
        "--quiet",
        "--include-team-policy",
    ];
    args.extend_from_slice(extra);
    // The embedded emulator runs in virtual time: its leases, windows and sleeps take none,
    // and no verdict depends on how fast the machine is. Another target keeps real time.
    if !extra.contains(&"--endpoint-url") {
        args.extend_from_slice(&["--clock", "virtual"]);
    }
    run_records(&args, expect_code, LIMIT).0
}

/// (verdict, class, decision) of every case that is not multi-trial.
fn outcomes(records: &[Record]) -> Vec<(String, Verdict, Option<String>, Option<Decision>)> {
    let mut v: Vec<_> = records
        .iter()
        .filter_map(|r| match r {
            Record::CaseEnd(e) if e.trials.is_none() => Some((
                e.case.clone(),
                e.verdict,
                e.classification.map(|c| c.as_str().to_string()),
                e.decision,
            )),
            _ => None,
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn row(
    case: &str,
    verdict: Verdict,
    class: &str,
    decision: Decision,
) -> (String, Verdict, Option<String>, Option<Decision>) {
    (
        case.to_string(),
        verdict,
        Some(class.to_string()),
        Some(decision),
    )
}

#[test]
fn every_chaos_case_passes_on_the_embedded_emulator_with_its_playbook_decision() {
    let records = run(&[], 0);
    use Decision::*;
    assert_eq!(
        outcomes(&records),
        vec![
            // Delivered late, the delete still took (nobody received the message since), and
            // the playbook holds it: a late acknowledgement, as audit calls it.
            row(
                "chaos-late-delete",
                Verdict::Pass,
                "no_redelivery_within_window",
                Hold
            ),
            row(
                "chaos-lost-delete-batch-response",
                Verdict::Pass,
                "no_redelivery_within_window",
                Hold
            ),
            row(
                "chaos-lost-delete-response",
                Verdict::Pass,
                "no_redelivery_within_window",
                Hold
            ),
            row(
                "chaos-lost-receive-response",
                Verdict::Pass,
                "inconclusive",
                Hold
            ),
            row(
                "chaos-redelivery-after-delete",
                Verdict::Pass,
                "observed_redelivery",
                Reconcile
            ),
            row(
                "chaos-retried-delete",
                Verdict::Pass,
                "no_redelivery_within_window",
                Accept
            ),
            row(
                "chaos-throttled-observe",
                Verdict::Pass,
                "inconclusive",
                Hold
            ),
            row(
                "chaos-timed-out-delete",
                Verdict::Pass,
                "observed_redelivery",
                Reconcile
            ),
        ]
    );

    // Every fault kind is used, and its row says what it did.
    let faulted = |case: &str| -> Vec<(String, String, Completion)> {
        step_calls(&records, case)
            .iter()
            .filter_map(|c| {
                c.fault
                    .as_ref()
                    .map(|f| (c.action.clone(), f.kind.clone(), c.completion))
            })
            .collect()
    };
    for (case, action, kind, completion) in [
        (
            "chaos-lost-delete-response",
            "DeleteMessage",
            "lose-response",
            Completion::Info,
        ),
        (
            "chaos-lost-delete-batch-response",
            "DeleteMessageBatch",
            "lose-response",
            Completion::Info,
        ),
        (
            "chaos-lost-receive-response",
            "ReceiveMessage",
            "lose-response",
            Completion::Info,
        ),
        (
            "chaos-throttled-observe",
            "ReceiveMessage",
            "throttle",
            Completion::Info,
        ),
        (
            "chaos-timed-out-delete",
            "DeleteMessage",
            "timeout",
            Completion::Info,
        ),
        (
            "chaos-late-delete",
            "DeleteMessage",
            "latency",
            Completion::Ok,
        ),
    ] {
        assert_eq!(
            faulted(case),
            [(action.to_string(), kind.to_string(), completion)],
            "{case}"
        );
    }
    // The retried delete: a reset before sending, a local 500, then a clean third attempt.
    let deletes: Vec<(u32, Option<String>, Completion)> =
        step_calls(&records, "chaos-retried-delete")
            .iter()
            .filter(|c| c.action == "DeleteMessage")
            .map(|c| {
                (
                    c.attempt_number,
                    c.fault.as_ref().map(|f| f.kind.clone()),
                    c.completion,
                )
            })
            .collect();
    assert_eq!(
        deletes,
        vec![
            (1, Some("reset".to_string()), Completion::Fail),
            (2, Some("error".to_string()), Completion::Info),
            (3, None, Completion::Ok),
        ]
    );
    let late = step_calls(&records, "chaos-late-delete")
        .into_iter()
        .find(|c| c.fault.is_some())
        .unwrap();
    assert!(late.latency_ms >= 2000.0, "{}", late.latency_ms);

    // The throttled observe and the lost receive hold because of their own faults: the
    // reasons say so, and no case claims a silence it did not watch.
    let held = end(&records, "chaos-throttled-observe");
    assert!(
        held.reason.contains("as the case expects of its fault"),
        "{}",
        held.reason
    );
    assert_eq!(held.window.as_ref().unwrap().unknown_receives, 1);

    // The duplicate-after-delete case got the emulator's chaos on its queue, and says so.
    let chaos_start = records.iter().find_map(|r| match r {
        Record::CaseStart(s) if s.case == "chaos-redelivery-after-delete" => {
            Some(s.emulator_chaos.clone())
        }
        _ => None,
    });
    assert_eq!(
        chaos_start,
        Some(Some("redeliver-after-delete=1".to_string()))
    );

    // The stale-handle delete as a rate: 0 of 15 is under the 25% bound.
    let rate = end(&records, "chaos-stale-delete-rate");
    assert_eq!(rate.verdict, Verdict::Pass, "{rate:?}");
    let trials = rate.trials.as_ref().unwrap();
    assert_eq!((trials.n, trials.conclusive), (15, 15));
    assert_eq!(trials.counts.get("observed_redelivery"), None);
    assert!(trials.intervals["observed_redelivery"][1] < 0.25);
}

#[test]
fn a_target_that_keeps_stale_deletes_fails_the_rate() {
    let records = run(
        &[
            "--case",
            "chaos-stale-delete-rate",
            "--chaos",
            "stale-delete-keeps=1",
        ],
        4,
    );
    let rate = end(&records, "chaos-stale-delete-rate");
    assert_eq!(rate.verdict, Verdict::Fail);
    assert_eq!(
        rate.trials
            .as_ref()
            .unwrap()
            .counts
            .get("observed_redelivery"),
        Some(&15)
    );
}

#[test]
fn without_the_emulators_chaos_the_suite_stays_honest() {
    // `sqsprobe serve` by endpoint URL is "another target": the runner does not tag its
    // queues with emulator chaos, exactly as on AWS.
    let serve = Serve::start();
    let records = run(&["--endpoint-url", &serve.url], 0);
    let dup = end(&records, "chaos-redelivery-after-delete");
    assert_eq!(
        (dup.classification.map(|c| c.as_str()), dup.decision),
        (Some("no_redelivery_within_window"), Some(Decision::Accept))
    );
    assert!(records.iter().all(|r| match r {
        Record::CaseStart(s) => s.emulator_chaos.is_none(),
        _ => true,
    }));
    // The faults are the client's, so the held cases hold on any target.
    for case in [
        "chaos-lost-delete-response",
        "chaos-lost-receive-response",
        "chaos-throttled-observe",
        "chaos-lost-delete-batch-response",
    ] {
        assert_eq!(end(&records, case).decision, Some(Decision::Hold), "{case}");
    }
}
