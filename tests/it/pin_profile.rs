//! `scripts/pin-profile`: a profile's known divergences are rewritten from a measured run's
//! findings — `answer:` and `finding:` from the findings at the entry's step, `teardown:` from
//! the case's teardown findings — and an entry with nothing there is named and left alone.

use crate::common::{root, wait_bounded};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A run folder over `protocol` whose cases ended with these findings (`case_end` rows are
/// all the script reads besides `run_start.protocol`).
fn run_folder(dir: &std::path::Path, protocol: &str, cases: &[(&str, serde_json::Value)]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut rows = vec![serde_json::json!({"type": "run_start", "data": {"protocol": protocol}})];
    for (case, findings) in cases {
        rows.push(
            serde_json::json!({"type": "case_end", "data": {"case": case, "findings": findings}}),
        );
    }
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(dir.join("evidence.jsonl"), text).unwrap();
}

#[test]
fn pins_steps_and_teardowns_from_a_run_and_leaves_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let profile = tmp.path().join("target.yaml");
    std::fs::write(
        &profile,
        "\
target: t
known_divergences:
  # a comment the script keeps
  - case: regions
    step: 3
    finding: \"old\"
    teardown: \"old\"
    reason: r
    reference: x
  - case: gone
    step: 2
    answer: {status: 400}
    reason: r
    reference: x
",
    )
    .unwrap();
    let run = tmp.path().join("run");
    run_folder(
        &run,
        "query",
        &[
            (
                "regions",
                serde_json::json!([
                    {"step": 2, "line": 9, "status": 200,
                     "message": "step 3 (get-queue-url): expected error X, but the call succeeded"},
                    {"step": null, "line": 1, "teardown": true,
                     "message": "failed to delete queue sqsprobe-20261204-195001-92c1dfaa-regions-east (in us-east-1): no response: timeout"}
                ]),
            ),
            ("gone", serde_json::json!([])),
        ],
    );
    let python = std::env::var("SQSPROBE_PYTHON").unwrap_or_else(|_| "python3".into());
    let child = Command::new(python)
        .arg(root().join("scripts/pin-profile"))
        .arg(&profile)
        .arg(&run)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python");
    let done = wait_bounded(child, Duration::from_secs(30));
    assert_eq!(done.code(), 0, "{}{}", done.stdout, done.stderr);
    assert!(
        done.stdout
            .contains("not pinned: gone (step 2): no finding there"),
        "{}",
        done.stdout
    );
    let text = std::fs::read_to_string(&profile).unwrap();
    assert!(text.contains("  # a comment the script keeps\n"), "{text}");
    assert!(
        text.contains(
            "    step: 3\n    answer: {status: 200}\n    finding: \"expected error X, but the call succeeded\"\n    teardown: \"no response: timeout\"\n"
        ),
        "{text}"
    );
    // The entry without findings in the run is as it was.
    assert!(
        text.contains("  - case: gone\n    step: 2\n    answer: {status: 400}\n"),
        "{text}"
    );
}
