//! `sqsprobe check`: a run folder re-judged from its evidence alone. Every run the tests make
//! is re-checked through `common::run_bin`; these tests hold the command itself: it agrees with
//! a run of every verdict, exits with the run's code, refuses a folder whose recorded verdict
//! its facts do not support, says why it cannot re-judge a file without facts, and the written
//! evidence is valid against the checked-in schema.

use crate::common::{self, root, run_bin};
use std::path::{Path, PathBuf};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// Runs `args` into a fresh folder and returns it with its one run folder.
fn run_into(args: &[&str], code: i32) -> (tempfile::TempDir, PathBuf) {
    let out = tempfile::tempdir().unwrap();
    let mut all = args.to_vec();
    all.extend_from_slice(&["--out", out.path().to_str().unwrap()]);
    let run = run_bin(&all, &root(), LIMIT);
    assert_eq!(run.code(), code, "{}\n{}", run.stdout, run.stderr);
    let dir = common::single_run_dir(out.path());
    (out, dir)
}

fn check(dir: &Path) -> common::Finished {
    run_bin(&["check", dir.to_str().unwrap()], &root(), LIMIT)
}

/// A run with a failing and an inconclusive case exits 4; check re-judges both, prints them,
/// and exits 4 too.
#[test]
fn check_agrees_with_a_failing_run_and_exits_with_its_code() {
    let (_out, dir) = run_into(
        &["run", "tests/fixtures/verdicts.yaml", "--clock", "virtual"],
        4,
    );
    let c = check(&dir);
    assert_eq!(c.code(), 4, "{}\n{}", c.stdout, c.stderr);
    assert!(c.stdout.contains("FAIL wrong-expectation"), "{}", c.stdout);
    assert!(
        c.stdout.contains("INCONCLUSIVE budget-too-small"),
        "{}",
        c.stdout
    );
    assert!(c.stdout.contains("2 agree"), "{}", c.stdout);
}

/// A verdict the facts do not support is found: a failed case's `case_end` rewritten to a
/// pass, and (separately) a step's recorded check turned to a pass under an unchanged
/// `case_end`. Either way check says where, and exits 3.
#[test]
fn check_refuses_a_verdict_its_facts_do_not_support() {
    let (_out, dir) = run_into(
        &["run", "tests/fixtures/verdicts.yaml", "--clock", "virtual"],
        4,
    );
    let path = dir.join("evidence.jsonl");
    let original = std::fs::read_to_string(&path).unwrap();

    let tampered: String = original
        .lines()
        .map(|l| {
            if l.contains(r#""type":"case_end""#) && l.contains(r#""case":"wrong-expectation""#) {
                l.replace(r#""verdict":"fail""#, r#""verdict":"pass""#)
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    assert_ne!(tampered, original, "the fixture's case_end was not found");
    std::fs::write(&path, tampered).unwrap();
    let c = check(&dir);
    assert_eq!(c.code(), 3, "{}\n{}", c.stdout, c.stderr);
    assert!(
        c.stdout
            .contains("DIFFERS: verdict: recorded pass, re-judged fail"),
        "{}",
        c.stdout
    );
    assert!(c.stdout.contains("does NOT support"), "{}", c.stdout);
}

/// The messages no acknowledgement took are read from the call rows, not taken from the
/// `facts` record: a record that says every received message was deleted, when the rows show
/// one never was, is a difference, and the verdict is the rows'.
#[test]
fn check_reads_the_unacknowledged_messages_from_the_call_rows() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("unacked.yaml");
    std::fs::write(
        &suite,
        "suite: unacked\n\
         cases:\n\
         \x20 - id: received-never-deleted\n\
         \x20   behaviour: A message received and never deleted comes back once its lease ends.\n\
         \x20   source: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html\n\
         \x20   queues:\n\
         \x20     work: {visibility_timeout: 1s}\n\
         \x20   steps:\n\
         \x20     - send: {queue: work, body: '{\"business_key\":\"k-1\"}'}\n\
         \x20     - receive: {queue: work, as: A, wait: 1s}\n\
         \x20       expect: {received: [m1]}\n\
         \x20     - observe: {queue: work, window: 3s}\n\
         \x20   expect:\n\
         \x20     outcome: observed_redelivery\n",
    )
    .unwrap();
    let (_out, run) = run_into(&["run", suite.to_str().unwrap(), "--clock", "virtual"], 0);
    let c = check(&run);
    assert_eq!(c.code(), 0, "{}\n{}", c.stdout, c.stderr);

    let path = run.join("evidence.jsonl");
    let original = std::fs::read_to_string(&path).unwrap();
    let tampered: String = original
        .lines()
        .map(|l| {
            if l.contains(r#""type":"facts""#) {
                let mut row: serde_json::Value = serde_json::from_str(l).unwrap();
                let facts = &mut row["data"];
                assert!(
                    facts["unacknowledged"]
                        .as_array()
                        .is_some_and(|u| !u.is_empty()),
                    "the run names its unacknowledged message: {row}"
                );
                facts["unacknowledged"] = serde_json::json!([]);
                row.to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    assert_ne!(tampered, original, "no facts record was found");
    std::fs::write(&path, tampered).unwrap();
    let c = check(&run);
    assert_eq!(c.code(), 3, "{}\n{}", c.stdout, c.stderr);
    assert!(
        c.stdout
            .contains("the facts record names the unacknowledged messages []"),
        "{}",
        c.stdout
    );
}

/// Evidence written before `facts` records existed cannot be re-judged: check says so for
/// each case that ran, and exits 3, never passing it unseen.
#[test]
fn a_file_without_facts_cannot_be_re_judged_and_says_why() {
    let (_out, dir) = run_into(
        &["run", "tests/fixtures/verdicts.yaml", "--clock", "virtual"],
        4,
    );
    let path = dir.join("evidence.jsonl");
    let older: String = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| !l.contains(r#""type":"facts""#))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&path, older).unwrap();
    let c = check(&dir);
    assert_eq!(c.code(), 3, "{}\n{}", c.stdout, c.stderr);
    assert!(
        c.stdout.contains("CANNOT RE-JUDGE: no `facts` record"),
        "{}",
        c.stdout
    );
    assert!(c.stdout.contains("2 cannot be re-judged"), "{}", c.stdout);
}

/// Every line a run writes is valid against docs/evidence-schema.json (Python's jsonschema,
/// pinned in scripts/venv).
#[test]
fn written_evidence_is_valid_against_the_checked_in_schema() {
    let python = std::env::var_os("SQSPROBE_PYTHON").unwrap_or_else(|| {
        panic!("SQSPROBE_PYTHON is not set: run scripts/test (it installs jsonschema into .venv)")
    });
    let (_out, dir) = run_into(
        &[
            "run",
            "tests/fixtures/trials.yaml",
            "--clock",
            "virtual",
            "--seed",
            "3",
        ],
        5,
    );
    let script = r#"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
validator = jsonschema.Draft202012Validator(schema)
kinds = set()
for n, line in enumerate(open(sys.argv[2]), 1):
    record = json.loads(line)
    kinds.add(record["type"])
    errors = sorted(validator.iter_errors(record), key=lambda e: list(e.path))
    if errors:
        print(f"line {n} ({record['type']}): {errors[0].message}")
        sys.exit(1)
print("valid:", ",".join(sorted(kinds)))
"#;
    let out = std::process::Command::new(python)
        .args([
            "-c",
            script,
            root().join("docs/evidence-schema.json").to_str().unwrap(),
            dir.join("evidence.jsonl").to_str().unwrap(),
        ])
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for kind in [
        "run_start",
        "case_start",
        "call",
        "step",
        "facts",
        "trial_end",
        "case_end",
        "run_end",
    ] {
        assert!(stdout.contains(kind), "no `{kind}` was validated: {stdout}");
    }
}
