//! `sqsprobe audit --lambda` on real handlers: the Python handlers of examples/lambda/python,
//! run unchanged by AWS's runtime interface client (`python -m awslambdaric`, from
//! scripts/lambda-venv) against the Runtime API the binary serves, under its event source
//! mapping. The Powertools handlers are clean over several seeds with chaos on; each faulty
//! handler is flagged with its Lambda finding; the mapping's rules (function timeout, the
//! creation check, redrive, a poison record without a dead-letter queue) each show in the
//! evidence.

use crate::common;

use common::{read_json, root, run_bin};
use std::path::Path;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// Chaos a correct handler must stand up to.
const CHAOS: &str = "duplicate=0.3,redeliver-after-delete=0.3,stale-delete-keeps=0.5,reorder=0.5,short-poll-miss=0.3";

fn python() -> String {
    std::env::var("SQSPROBE_LAMBDA_PYTHON").unwrap_or_else(|_| {
        panic!(
            "set SQSPROBE_LAMBDA_PYTHON to a Python with awslambdaric and aws-lambda-powertools \
             (scripts/test does: scripts/lambda-venv, .venv-lambda/bin/python)"
        )
    })
}

/// Runs `sqsprobe audit --lambda FLAGS -- [env ENV...] python -m awslambdaric HANDLER` in the
/// handlers' folder (awslambdaric imports the handler from the working folder): exit code,
/// output, `audit.json` (null when none), and the audit folder.
fn audit_lambda(
    handler: &str,
    flags: &[&str],
    env: &[&str],
    out: &Path,
    run_id: &str,
) -> (i32, String, serde_json::Value, std::path::PathBuf) {
    let py = python();
    let mut runtime: Vec<&str> = Vec::new();
    if !env.is_empty() {
        runtime.push("env");
        runtime.extend_from_slice(env);
    }
    runtime.extend_from_slice(&[&py, "-m", "awslambdaric", handler]);
    audit_runtime(&runtime, flags, out, run_id)
}

/// Runs `sqsprobe audit --lambda FLAGS -- RUNTIME...` in the handlers' folder: exit code,
/// output, `audit.json` (null when none), and the audit folder.
fn audit_runtime(
    runtime: &[&str],
    flags: &[&str],
    out: &Path,
    run_id: &str,
) -> (i32, String, serde_json::Value, std::path::PathBuf) {
    let mut args = vec!["audit", "--lambda", "--idle", "1s"];
    // Defaults a test may set otherwise.
    for (flag, value) in [("--max-duration", "60s"), ("--function-timeout", "500ms")] {
        if !flags.contains(&flag) {
            args.extend_from_slice(&[flag, value]);
        }
    }
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--out", out.to_str().unwrap(), "--run-id", run_id, "--"]);
    args.extend_from_slice(runtime);
    let done = run_bin(&args, &root().join("examples/lambda/python"), LIMIT);
    let dir = out.join(run_id);
    let json = dir.join("audit.json");
    let value = if json.exists() {
        read_json(&json)
    } else {
        serde_json::Value::Null
    };
    (
        done.code(),
        format!("{}\n{}", done.stdout, done.stderr),
        value,
        dir,
    )
}

fn kinds(audit: &serde_json::Value) -> Vec<String> {
    audit["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

/// `lambda.json`'s invocations' outcomes, in order.
fn outcomes(dir: &Path) -> Vec<String> {
    let lambda = read_json(&dir.join("lambda.json"));
    lambda["invocations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["outcome"].as_str().unwrap().to_string())
        .collect()
}

/// Whether some invocation returned a record to the queue.
fn returned_some(dir: &Path) -> bool {
    let lambda = read_json(&dir.join("lambda.json"));
    lambda["invocations"]
        .as_array()
        .unwrap()
        .iter()
        .any(|i| !i["returned"].as_array().unwrap().is_empty())
}

/// No receipt handle and no body in what the audit wrote: the emulator's handles are base64 of
/// `sqsprobe-rh...`.
fn assert_no_handles(dir: &Path) {
    for file in ["evidence.jsonl", "lambda.json", "audit.json"] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(!text.contains("c3FzcHJvYmUtcmg"), "{file}: {text}");
        assert!(
            !text.contains("\"seq\": ") && !text.contains("seq\\\": "),
            "{file}: {text}"
        );
    }
}

#[test]
fn the_powertools_handler_is_clean_over_seeds_with_chaos_on() {
    let out = tempfile::tempdir().unwrap();
    for seed in ["1", "2", "3"] {
        let run_id = format!("pt-{seed}");
        let (code, said, audit, dir) = audit_lambda(
            "powertools_correct.handler",
            &[
                "--report-batch-item-failures",
                "--messages",
                "8",
                "--visibility-timeout",
                "3s",
                "--chaos",
                CHAOS,
                "--seed",
                seed,
            ],
            &[],
            out.path(),
            &run_id,
        );
        assert_eq!(code, 0, "seed {seed}: {said}");
        assert_eq!(audit["clean"], true, "{audit}");
        // Its failed records went back to the queue and came again (a batch all of whose
        // records failed is one Powertools raises for: a whole-batch failure, as AWS expects);
        // never a response the mapping could not read.
        assert!(returned_some(&dir), "{said}");
        let o = outcomes(&dir);
        assert!(
            o.iter()
                .all(|x| ["partial", "success", "function_error"].contains(&x.as_str())),
            "{o:?}"
        );
        assert_no_handles(&dir);
    }
}

#[test]
fn the_powertools_fifo_handler_keeps_each_group_in_order_over_seeds() {
    let out = tempfile::tempdir().unwrap();
    for seed in ["1", "2", "3"] {
        let run_id = format!("ptf-{seed}");
        let (code, said, audit, dir) = audit_lambda(
            "powertools_fifo.handler",
            &[
                "--fifo",
                "--groups",
                "2",
                "--report-batch-item-failures",
                "--messages",
                "8",
                "--visibility-timeout",
                "3s",
                "--chaos",
                "reorder=0.5,short-poll-miss=0.3",
                "--seed",
                seed,
            ],
            &[],
            out.path(),
            &run_id,
        );
        assert_eq!(code, 0, "seed {seed}: {said}");
        assert_eq!(audit["clean"], true, "{audit}");
        assert!(returned_some(&dir), "{said}");
    }
}

#[test]
fn each_faulty_handler_is_flagged_with_its_kind() {
    let out = tempfile::tempdir().unwrap();
    let standard = ["--messages", "8", "--visibility-timeout", "3s"];
    let fifo = [
        "--messages",
        "8",
        "--visibility-timeout",
        "3s",
        "--fifo",
        "--groups",
        "2",
        "--report-batch-item-failures",
    ];
    for (handler, flags, kind, decision) in [
        // Raises on the first failed record: the whole batch returns, and the records it had
        // done are done again.
        (
            "naive.handler",
            &standard[..],
            "batch_failure_redo",
            "RECONCILE",
        ),
        (
            "receipt_handle_ids.handler",
            &[&standard[..], &["--report-batch-item-failures"]].concat()[..],
            "wrong_item_identifier",
            "REPAIR",
        ),
        (
            "fifo_only_failed.handler",
            &fifo[..],
            "fifo_order_broken",
            "REPAIR",
        ),
        (
            "swallow.handler",
            &standard[..],
            "swallowed_failure",
            "REPAIR",
        ),
    ] {
        let run_id = handler.trim_end_matches(".handler").replace('_', "-");
        let (code, said, audit, dir) = audit_lambda(handler, flags, &[], out.path(), &run_id);
        assert_eq!(code, 4, "{handler}: {said}");
        let found = kinds(&audit);
        assert!(
            found.iter().any(|k| k == kind),
            "{handler}: {found:?}\n{said}"
        );
        assert!(
            said.contains(&format!("FINDING  {kind} · {decision}")),
            "{said}"
        );
        let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
        let report = quick_junit::Report::deserialize_from_str(&junit).expect("JUnit parses");
        assert!(report.failures >= 1, "{handler}: {junit}");
        let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
        assert!(summary.contains(kind), "{summary}");
        assert_no_handles(&dir);
        match handler {
            // The audit's own checker sees the same duplicate work in the same history.
            "naive.handler" => {
                assert!(found.iter().any(|k| k == "duplicate_commit"), "{found:?}");
                assert!(
                    outcomes(&dir).iter().any(|o| o == "function_error"),
                    "{said}"
                );
                // The invocations are lanes of the report: the failed batch, every record back.
                let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
                assert!(page.contains("<h2>Invocations</h2>"), "{page}");
                assert!(page.contains("data-outcome=\"function_error\""), "{page}");
                assert!(page.contains("class=\"returned\""), "{page}");
            }
            "receipt_handle_ids.handler" => {
                assert!(
                    outcomes(&dir).iter().any(|o| o == "wrong_item_identifier"),
                    "{said}"
                );
            }
            "swallow.handler" => assert!(found.iter().any(|k| k == "lost_work"), "{found:?}"),
            _ => {}
        }
    }
}

#[test]
fn a_poison_record_is_retried_without_a_dead_letter_queue_and_redriven_with_one() {
    let out = tempfile::tempdir().unwrap();
    let poison = ["LAMBDA_POISON_SEQS=3"];
    let (code, said, audit, _) = audit_lambda(
        "powertools_correct.handler",
        &[
            "--report-batch-item-failures",
            "--messages",
            "4",
            "--visibility-timeout",
            "3s",
            "--max-duration",
            "10s",
        ],
        &poison,
        out.path(),
        "poison",
    );
    assert_eq!(code, 4, "{said}");
    assert!(
        kinds(&audit).iter().any(|k| k == "poison_without_dlq"),
        "{said}"
    );
    let plan = root().join("examples/lambda/plans/redrive.yaml");
    let (code, said, audit, _) = audit_lambda(
        "powertools_correct.handler",
        &[
            "--report-batch-item-failures",
            "--plan",
            plan.to_str().unwrap(),
            // The plan's 2 s lease is six of these: no advice to give.
            "--function-timeout",
            "300ms",
        ],
        &poison,
        out.path(),
        "redrive",
    );
    // Moved to the dead-letter queue after max_receive_count receives: never acknowledged
    // (HOLD), and no longer retried.
    assert_eq!(code, 4, "{said}");
    assert_eq!(kinds(&audit), ["never_acked"], "{said}");
    assert!(
        said.contains("moved to the dead-letter queue after 3 deliveries"),
        "{said}"
    );
}

#[test]
fn the_function_timeout_fails_a_batch_and_is_held_to_the_visibility_timeout() {
    let out = tempfile::tempdir().unwrap();
    // Above the visibility timeout: refused, as CreateEventSourceMapping refuses it.
    let (code, said, _, _) = audit_lambda(
        "slow.handler",
        &[
            "--messages",
            "2",
            "--visibility-timeout",
            "3s",
            "--function-timeout",
            "4s",
        ],
        &[],
        out.path(),
        "refused",
    );
    assert_eq!(code, 1, "{said}");
    assert!(
        said.contains(
            "Queue visibility timeout: 3 seconds is less than Function timeout: 4 seconds"
        ),
        "{said}"
    );
    // A first invocation that outlives its timeout fails its batch; the retry finds the work
    // done. Clean, and with a visibility timeout below six function timeouts, held.
    let (code, said, audit, dir) = audit_lambda(
        "slow.handler",
        &["--messages", "2", "--visibility-timeout", "2s"],
        &[],
        out.path(),
        "timeout",
    );
    assert_eq!(code, 4, "{said}");
    assert_eq!(
        kinds(&audit),
        ["function_timeout_near_visibility"],
        "{said}"
    );
    let o = outcomes(&dir);
    assert_eq!(o.first().map(String::as_str), Some("timeout"), "{o:?}");
    assert_eq!(o.last().map(String::as_str), Some("success"), "{o:?}");
    // The timed-out environment was ended, as Lambda resets it, and a fresh runtime took the
    // retry: the work the slow invocation would have finished never happened.
    let lambda = read_json(&dir.join("lambda.json"));
    assert_eq!(lambda["invocations"][0]["reset"], true, "{lambda}");
    let evidence = std::fs::read_to_string(dir.join("evidence.jsonl")).unwrap();
    assert_eq!(
        evidence.matches("\"consumer_start\"").count(),
        2,
        "{evidence}"
    );
}

/// Batches bigger than one receive, gathered over the batching window; and several execution
/// environments taking batches at once, each record still done once.
#[test]
fn the_batching_window_fills_big_batches_and_concurrency_runs_environments_side_by_side() {
    let out = tempfile::tempdir().unwrap();
    let (code, said, audit, dir) = audit_lambda(
        "powertools_correct.handler",
        &[
            "--report-batch-item-failures",
            "--messages",
            "24",
            "--visibility-timeout",
            "3s",
            "--batch-size",
            "20",
            "--batching-window",
            "1s",
        ],
        &[],
        out.path(),
        "window",
    );
    assert_eq!(code, 0, "{said}");
    assert_eq!(audit["clean"], true, "{audit}");
    let lambda = read_json(&dir.join("lambda.json"));
    let sizes: Vec<usize> = lambda["invocations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["records"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes.first(), Some(&20), "{sizes:?}");
    // Above 10 without a window: refused, as CreateEventSourceMapping refuses it.
    let (code, said, _, _) = audit_lambda(
        "powertools_correct.handler",
        &[
            "--messages",
            "2",
            "--visibility-timeout",
            "3s",
            "--batch-size",
            "20",
        ],
        &[],
        out.path(),
        "no-window",
    );
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("--batching-window"), "{said}");
    // Three environments, each of whose first invocations waits (bounded) for the other two
    // to start: they all succeed only when the batches run side by side.
    let barrier = tempfile::tempdir().unwrap();
    let barrier_env = format!("LAMBDA_BARRIER_DIR={}", barrier.path().display());
    let (code, said, audit, dir) = audit_lambda(
        "barrier.handler",
        &[
            "--messages",
            "12",
            "--visibility-timeout",
            "150s",
            "--function-timeout",
            "25s",
            "--batch-size",
            "2",
            "--concurrency",
            "3",
            "--max-duration",
            "60s",
        ],
        &[&barrier_env],
        out.path(),
        "concurrency",
    );
    assert_eq!(code, 0, "{said}");
    assert_eq!(audit["clean"], true, "{audit}");
    let o = outcomes(&dir);
    assert!(o.len() >= 6 && o.iter().all(|x| x == "success"), "{o:?}");
}

/// The event and the context, as the handler sees them through awslambdaric, have the shape
/// AWS documents: every record field, the system attributes (and a FIFO queue's), message
/// attributes of each type in the event's camelCase, md5OfBody of the body, the request id,
/// the function's ARN and a deadline in the future. The handler fails an invocation on the
/// first difference.
#[test]
fn the_handler_sees_the_documented_event_and_context() {
    let out = tempfile::tempdir().unwrap();
    let plan = root().join("examples/lambda/plans/shape.yaml");
    let (code, said, audit, dir) = audit_lambda(
        "event_shape.handler",
        &["--plan", plan.to_str().unwrap()],
        &[],
        out.path(),
        "shape",
    );
    assert_eq!(code, 0, "{said}");
    assert_eq!(audit["clean"], true, "{audit}");
    let o = outcomes(&dir);
    assert!(!o.is_empty() && o.iter().all(|x| x == "success"), "{o:?}");
    assert_no_handles(&dir);
}

/// A second runtime: the Rust handler on AWS's `lambda_runtime` crate (the crate's example
/// `lambda-correct`, built if the test run did not build it), clean with chaos on.
#[test]
fn the_rust_runtime_client_handler_is_clean_with_chaos_on() {
    let binary = crate::audit::rust_example("lambda-correct");
    let out = tempfile::tempdir().unwrap();
    for seed in ["1", "2"] {
        let run_id = format!("rust-{seed}");
        let (code, said, audit, dir) = audit_runtime(
            &[binary.to_str().unwrap()],
            &[
                "--report-batch-item-failures",
                "--messages",
                "8",
                "--visibility-timeout",
                "3s",
                "--chaos",
                CHAOS,
                "--seed",
                seed,
            ],
            out.path(),
            &run_id,
        );
        assert_eq!(code, 0, "seed {seed}: {said}");
        assert_eq!(audit["clean"], true, "{audit}");
        assert!(returned_some(&dir), "{said}");
    }
}
