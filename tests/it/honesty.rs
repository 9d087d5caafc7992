//! The honesty rules, end to end: the real binary, the embedded emulator (or the
//! emulator behind a proxy that loses one answer), and the evidence it leaves. Each test
//! failed before the judge moved into `classify`.

use crate::common;

use common::{root, run_bin};
use sqsprobe_core::evidence::format::{CaseEnd, Decision, Record, Verdict};
use sqsprobe_core::evidence::read_evidence;
use std::path::Path;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(90);

fn ends(out: &Path) -> Vec<CaseEnd> {
    let dir = std::fs::read_dir(out)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.join("evidence.jsonl").exists())
        .expect("a run folder");
    read_evidence(&dir.join("evidence.jsonl"))
        .unwrap()
        .into_iter()
        .filter_map(|r| match r {
            Record::CaseEnd(e) => Some(e),
            _ => None,
        })
        .collect()
}

fn case<'a>(ends: &'a [CaseEnd], id: &str) -> &'a CaseEnd {
    ends.iter()
        .find(|e| e.case == id)
        .unwrap_or_else(|| panic!("no case {id}"))
}

#[test]
fn honesty_rules_hold_end_to_end_on_the_embedded_emulator() {
    let out = tempfile::tempdir().unwrap();
    let run = run_bin(
        &[
            "run",
            "tests/fixtures/honesty.yaml",
            "--out",
            out.path().to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    // A failed expectation is in the run: exit 4.
    assert_eq!(run.code(), 4, "{}\n{}", run.stdout, run.stderr);
    let ends = ends(out.path());

    // Rule 1: `send; observe` is a delivery, never a redelivery → RECONCILE.
    let first = case(&ends, "first-delivery-is-not-a-redelivery");
    assert_eq!(first.verdict, Verdict::Pass, "{}", first.reason);
    assert_eq!(first.classification.map(|c| c.as_str()), Some("delivered"));
    assert_eq!(first.outcomes[0].class.as_str(), "delivered");
    assert_eq!(first.outcomes[0].deliveries, 1);
    assert_eq!(first.decision, None);
    let wrong = case(&ends, "first-delivery-expected-as-redelivery");
    assert_eq!(wrong.verdict, Verdict::Fail);
    assert_eq!(
        wrong.findings[0].message,
        "expected m1: observed_redelivery, observed delivered"
    );

    // Rule 2: a refused send is no evidence: inconclusive, never a clean ACCEPT.
    let refused = case(&ends, "a-refused-send-proves-nothing");
    assert_eq!(refused.verdict, Verdict::Inconclusive, "{}", refused.reason);
    assert_eq!(refused.outcomes[0].class.as_str(), "inconclusive");
    assert!(
        refused.outcomes[0]
            .reason
            .as_deref()
            .unwrap()
            .contains("never sent"),
        "{:?}",
        refused.outcomes
    );
    assert_eq!(refused.decision, Some(Decision::Hold));

    // An observe whose message was never sent (a throttled send) tracks it all the
    // same, and its outcome expectation never passes over it.
    let unsent = case(&ends, "unsent-messages-prove-nothing");
    assert_eq!(unsent.verdict, Verdict::Inconclusive, "{}", unsent.reason);
    assert_eq!(unsent.outcomes.len(), 1, "{:?}", unsent.outcomes);
    assert!(
        unsent.outcomes[0]
            .reason
            .as_deref()
            .unwrap()
            .contains("was never sent"),
        "{:?}",
        unsent.outcomes
    );
    // Silence over a message nobody received nor acknowledged passes its outcome,
    // but decides nothing: no vacuous ACCEPT.
    let silent = case(&ends, "unacked-silence-is-not-accepted");
    assert_eq!(silent.verdict, Verdict::Pass, "{}", silent.reason);
    assert_eq!(
        silent.classification.map(|c| c.as_str()),
        Some("no_redelivery_within_window")
    );
    assert_eq!(silent.decision, None);

    // The SDK's retry of a lost send left a second copy; it comes back after the
    // delete under its own MessageId and is placed by its business key: a redelivery.
    let copies = case(&ends, "retried-lost-send-copies");
    assert_eq!(
        copies.classification.map(|c| c.as_str()),
        Some("observed_redelivery"),
        "{}",
        copies.reason
    );
    assert_eq!(copies.decision, Some(Decision::Reconcile));

    // Rule 10: `status: 400` alone expects an error: the refused delete (step 1) passes it,
    // the successful send (step 2) fails it.
    let status = case(&ends, "status-alone-expects-an-error");
    assert_eq!(status.verdict, Verdict::Fail);
    assert_eq!(status.findings.len(), 1, "{:?}", status.findings);
    assert_eq!(status.findings[0].step, Some(1));
    assert!(
        status.findings[0]
            .message
            .contains("expected HTTP status 400, but the call succeeded"),
        "{:?}",
        status.findings
    );
}

#[test]
fn a_lost_receive_answer_hidden_by_a_retry_makes_silence_inconclusive() {
    let rigged = common::proxy::Rigged::start(common::proxy::Mischief {
        lose: Some(common::proxy::LoseResponse {
            target: "AmazonSQS.ReceiveMessage".into(),
            nth: 1,
        }),
        ..Default::default()
    });
    let proxy = &rigged.proxy;
    let out = tempfile::tempdir().unwrap();
    let run = run_bin(
        &[
            "run",
            "tests/fixtures/lost-receive.yaml",
            "--endpoint-url",
            &proxy.url,
            "--out",
            out.path().to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(run.code(), 5, "{}\n{}", run.stdout, run.stderr);
    let ends = ends(out.path());
    let end = case(&ends, "lost-receive-then-empty-retry");
    assert_eq!(end.verdict, Verdict::Inconclusive, "{}", end.reason);
    assert_eq!(end.classification.map(|c| c.as_str()), Some("inconclusive"));
    let window = end.window.as_ref().unwrap();
    assert_eq!(window.ended.as_str(), "completed");
    assert!(window.unknown_receives >= 1, "{window:?}");
    assert!(
        end.outcomes[0]
            .reason
            .as_deref()
            .unwrap()
            .contains("no definite answer"),
        "{:?}",
        end.outcomes
    );
}

/// A HOLD whose doubt the target made (a poll answer a proxy lost) is not credited to the
/// case's fault that fired on an unrelated call: inconclusive, where it used to pass.
#[test]
fn an_expected_hold_is_credited_only_to_the_fault_that_made_the_doubt() {
    let rigged = common::proxy::Rigged::start(common::proxy::Mischief {
        lose: Some(common::proxy::LoseResponse {
            target: "AmazonSQS.ReceiveMessage".into(),
            nth: 1,
        }),
        ..Default::default()
    });
    let out = tempfile::tempdir().unwrap();
    let run = run_bin(
        &[
            "run",
            "tests/fixtures/hold-elsewhere.yaml",
            "--endpoint-url",
            &rigged.proxy.url,
            "--out",
            out.path().to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(run.code(), 5, "{}\n{}", run.stdout, run.stderr);
    let ends = ends(out.path());
    let end = case(&ends, "hold-from-elsewhere");
    assert_eq!(end.decision, Some(Decision::Hold));
    assert_eq!(end.verdict, Verdict::Inconclusive, "{}", end.reason);
    assert!(
        end.reason
            .contains("its fault did not make the doubt that holds"),
        "{}",
        end.reason
    );
}

/// ACCEPT needs every message the consumer received to be acknowledged or explained: one of
/// two left leased (and silent in a window that does not watch it) holds, where it used to be
/// a clean ACCEPT.
#[test]
fn accept_needs_every_received_message_acknowledged() {
    let (records, _) =
        common::run_records(&["run", "tests/fixtures/unacked-accept.yaml"], 4, LIMIT);
    let end = common::case_end(&records, "one-of-two-acknowledged");
    assert_eq!(
        end.classification.map(|c| c.as_str()),
        Some("no_redelivery_within_window")
    );
    assert_eq!(end.decision, Some(Decision::Hold));
    assert_eq!(end.verdict, Verdict::Fail, "{}", end.reason);
    assert_eq!(
        end.reason,
        "expected decision ACCEPT, the playbook decided HOLD (received, and neither \
         acknowledged nor seen again: m2)"
    );
}

/// Messages placed by the business key of a send whose answer was lost: a later lost send is
/// never matched to an earlier, deleted message of its key (a false failure before), and a
/// SendMessageBatch retried after a lost answer leaves copies like a single send: placed by
/// its key, the duplicate is an observed redelivery; without one, silence proves nothing
/// (an ACCEPT before).
#[test]
fn lost_sends_are_placed_by_their_business_key_only_when_unique() {
    let (records, _) =
        common::run_records(&["run", "tests/fixtures/lost-send-keys.yaml"], 5, LIMIT);
    let later = common::case_end(&records, "later-lost-send-same-key");
    assert_eq!(later.verdict, Verdict::Pass, "{}", later.reason);
    assert_eq!(
        later.classification.map(|c| c.as_str()),
        Some("no_redelivery_within_window")
    );

    let keyed = common::case_end(&records, "batch-retried-keyed");
    assert_eq!(keyed.verdict, Verdict::Pass, "{}", keyed.reason);
    assert_eq!(keyed.decision, Some(Decision::Reconcile));

    let keyless = common::case_end(&records, "batch-retried-keyless");
    assert_eq!(keyless.verdict, Verdict::Inconclusive, "{}", keyless.reason);
    assert_eq!(
        keyless.classification.map(|c| c.as_str()),
        Some("inconclusive")
    );
    assert_ne!(keyless.decision, Some(Decision::Accept));
    assert!(
        keyless.outcomes[0]
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("may be a copy of m1")),
        "{:?}",
        keyless.outcomes
    );
}

/// The embedded emulator behind a proxy doing `mischief`, for the duration of `f`.
fn behind_proxy<T>(mischief: common::proxy::Mischief, f: impl FnOnce(&str) -> T) -> T {
    let rigged = common::proxy::Rigged::start(mischief);
    f(&rigged.proxy.url)
}

#[test]
fn refused_credentials_are_one_clear_harness_error_not_a_pile_of_findings() {
    // Refused from the first request: the reachability check says so, nothing runs.
    let out = tempfile::tempdir().unwrap();
    let run = behind_proxy(
        common::proxy::Mischief {
            refuse_from: Some(("AmazonSQS.ListQueues".into(), 1)),
            ..Default::default()
        },
        |url| {
            run_bin(
                &[
                    "run",
                    "tests/fixtures/three-sends.yaml",
                    "--endpoint-url",
                    url,
                    "--out",
                ]
                .into_iter()
                .chain([out.path().to_str().unwrap()])
                .collect::<Vec<_>>(),
                &root(),
                LIMIT,
            )
        },
    );
    assert_eq!(run.code(), 3, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("the target refused this run's credentials or permissions"),
        "{}",
        run.stderr
    );
    assert!(ends(out.path()).is_empty());

    // Refused part-way (in the second case): that case is an error with one finding, the
    // third is not run, the run stops itself with one line; exit 3, never 4.
    let out = tempfile::tempdir().unwrap();
    let run = behind_proxy(
        common::proxy::Mischief {
            // From the second case's send on (the cases run one at a time, in order).
            refuse_from: Some(("AmazonSQS.SendMessage".into(), 2)),
            ..Default::default()
        },
        |url| {
            run_bin(
                &[
                    "run",
                    "tests/fixtures/three-sends.yaml",
                    "--jobs",
                    "1",
                    "--endpoint-url",
                    url,
                    "--out",
                    out.path().to_str().unwrap(),
                ],
                &root(),
                LIMIT,
            )
        },
    );
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    let stopped: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("the run stopped itself"))
        .collect();
    assert_eq!(stopped.len(), 1, "{}", run.stderr);
    // Which case runs first is the scheduler's business: one passed, the one whose send was
    // refused is an error with one finding, the last was not run.
    let ends = ends(out.path());
    let passed: Vec<_> = ends.iter().filter(|e| e.verdict == Verdict::Pass).collect();
    assert_eq!(passed.len(), 1, "{ends:?}");
    let refused: Vec<_> = ends
        .iter()
        .filter(|e| e.verdict == Verdict::Error && !e.reason.starts_with("not run"))
        .collect();
    assert_eq!(refused.len(), 1, "{ends:?}");
    assert!(
        refused[0].reason.contains("credentials"),
        "{}",
        refused[0].reason
    );
    assert!(
        refused[0]
            .findings
            .iter()
            .all(|f| !f.message.contains("expected success")),
        "{:?}",
        refused[0].findings
    );
    let not_run: Vec<_> = ends
        .iter()
        .filter(|e| e.reason.starts_with("not run: the run stopped"))
        .collect();
    assert_eq!(not_run.len(), 1, "{ends:?}");
    assert_eq!(not_run[0].verdict, Verdict::Error);
}
