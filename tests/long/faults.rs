//! Faults injected under the SDK, end to end on the embedded emulator: every kind
//! leaves its mark on the attempt it hit, a lost delete answer is never a clean ACCEPT, and the
//! same seed injects the same faults.

use crate::common;

use common::{case_end as end, run_records, step_calls};
use sqsprobe_core::evidence::format::{Completion, Decision, Record, Verdict};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

fn run(seed: &str) -> Vec<Record> {
    let args = ["run", "tests/fixtures/faults.yaml", "--seed", seed];
    run_records(&args, 0, LIMIT).0
}

#[test]
fn every_fault_kind_leaves_its_evidence_row() {
    let records = run("5");
    let calls = step_calls(&records, "every-kind");
    let kinds: Vec<(&str, Option<&str>, Completion)> = calls
        .iter()
        .map(|c| {
            (
                c.action.as_str(),
                c.fault.as_ref().map(|f| f.kind.as_str()),
                c.completion,
            )
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("SendMessage", Some("latency"), Completion::Ok),
            ("SendMessage", Some("reset"), Completion::Fail),
            ("SendMessage", Some("timeout"), Completion::Info),
            ("SendMessage", Some("lose-response"), Completion::Info),
            ("GetQueueAttributes", Some("throttle"), Completion::Info),
            ("GetQueueAttributes", Some("error"), Completion::Info),
        ]
    );
    let latency = calls[0].fault.as_ref().unwrap();
    assert_eq!(
        (latency.scope.as_str(), latency.delay_ms),
        ("case", Some(200))
    );
    assert!(calls[0].latency_ms >= 200.0, "{}", calls[0].latency_ms);
    assert_eq!(calls[1].fault.as_ref().unwrap().scope, "step");
    let error = calls[5].fault.as_ref().unwrap();
    assert_eq!(
        (error.status, error.code.as_deref()),
        (Some(503), Some("ServiceUnavailable"))
    );
    assert_eq!(calls[5].http_status, Some(503));
    assert_eq!(calls[4].error_code.as_deref(), Some("RequestThrottled"));
    assert_eq!(end(&records, "every-kind").verdict, Verdict::Pass);
}

#[test]
fn a_lost_delete_answer_is_held_never_accepted() {
    let records = run("5");
    let e = end(&records, "lost-delete-answer");
    // The delete took effect (nothing came back), but the consumer cannot know it did.
    assert_eq!(
        e.classification.map(|c| c.as_str()),
        Some("no_redelivery_within_window")
    );
    assert_eq!(e.decision, Some(Decision::Hold));
    assert_eq!(e.verdict, Verdict::Pass);
}

#[test]
fn the_same_seed_injects_the_same_faults_and_another_seed_others() {
    let pattern = |records: &[Record]| -> Vec<bool> {
        step_calls(records, "coin-flips")
            .iter()
            .map(|c| c.fault.is_some())
            .collect()
    };
    let a = pattern(&run("42"));
    let b = pattern(&run("42"));
    assert_eq!(a.len(), 12);
    assert_eq!(a, b, "same seed, same faults");
    let others: Vec<Vec<bool>> = ["43", "44", "45"]
        .iter()
        .map(|s| pattern(&run(s)))
        .collect();
    assert!(
        others.iter().any(|o| *o != a),
        "three other seeds all gave {a:?}"
    );
    let records = run("42");
    let Some(Record::RunStart(start)) = records.first() else {
        panic!("no run_start")
    };
    assert_eq!(start.seed, Some(42));
}

/// An injected auth error is the case's experiment: the case is judged on what it expects of
/// it, the run is not halted as refused credentials nor counted as a broken harness (exit 3),
/// and the case after it runs and passes.
#[test]
fn an_injected_access_denied_is_judged_and_never_stops_the_run() {
    let args = ["run", "tests/fixtures/injected-auth.yaml", "--jobs", "1"];
    let (records, run) = run_records(&args, 0, LIMIT);
    for words in [
        "refused this run's credentials",
        "the harness or the target broke",
    ] {
        assert!(!run.stderr.contains(words), "{}", run.stderr);
        assert!(!run.stdout.contains(words), "{}", run.stdout);
    }
    for case in [
        "injects-access-denied",
        "injects-denied-delete",
        "bystander",
    ] {
        let e = end(&records, case);
        assert_eq!(e.verdict, Verdict::Pass, "{case}: {}", e.reason);
    }
    assert_eq!(
        end(&records, "injects-denied-delete").decision,
        Some(Decision::Reconcile)
    );
}
