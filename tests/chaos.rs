//! `sqsprobe run --chaos` end to end: the example suite in `docs/chaos.md`, run on the embedded
//! emulator with and without chaos, flips its classification; other targets refuse `--chaos`.

mod common;

use common::{root, run_bin, single_run_dir};
use sqsprobe::evidence::{Record, read_evidence};
use std::path::Path;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// The one ```yaml block of docs/chaos.md, so the page and this test cannot drift apart.
fn example_suite() -> String {
    let page = std::fs::read_to_string(root().join("docs/chaos.md")).expect("read docs/chaos.md");
    let start = page.find("```yaml\n").expect("a yaml block") + "```yaml\n".len();
    let len = page[start..].find("```").expect("closed yaml block");
    page[start..start + len].to_string()
}

/// Runs the example suite with `extra` args; returns (exit code, run_start chaos, classification).
fn run_example(dir: &Path, extra: &[&str]) -> (i32, Option<String>, Option<String>) {
    let suite = dir.join("chaos-stale-delete.yaml");
    std::fs::write(&suite, example_suite()).unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut args = vec![
        "run",
        suite.to_str().unwrap(),
        "--out",
        out.path().to_str().unwrap(),
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let run = run_bin(&args, &root(), LIMIT);
    let records = read_evidence(&single_run_dir(out.path()).join("evidence.jsonl"))
        .unwrap_or_else(|e| panic!("{e}\nstdout:\n{}\nstderr:\n{}", run.stdout, run.stderr));
    let chaos = records.iter().find_map(|r| match r {
        Record::RunStart(s) => Some(s.emulator_chaos.clone()),
        _ => None,
    });
    let class = records.iter().find_map(|r| match r {
        Record::CaseEnd(e) => Some(e.classification.clone()),
        _ => None,
    });
    (
        run.code(),
        chaos.expect("run_start"),
        class.expect("case_end"),
    )
}

#[test]
fn stale_delete_keeps_flips_the_example_to_observed_redelivery() {
    let dir = tempfile::tempdir().unwrap();
    let (code, chaos, class) = run_example(dir.path(), &["--chaos", "stale-delete-keeps=1"]);
    assert_eq!(class.as_deref(), Some("observed_redelivery"));
    assert_eq!(code, 0);
    assert_eq!(
        chaos.as_deref(),
        Some("stale-delete-keeps=1,redeliver-after-delete=0,seed=0")
    );

    // Without chaos A's stale delete takes (the emulator's documented choice): nothing comes
    // back, so the suite's expectation fails.
    let (code, chaos, class) = run_example(dir.path(), &[]);
    assert_eq!(class.as_deref(), Some("no_redelivery_within_window"));
    assert_eq!(code, 4);
    assert_eq!(chaos, None);
}

#[test]
fn chaos_is_refused_off_the_embedded_target_and_when_misspelt() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("s.yaml");
    std::fs::write(&suite, example_suite()).unwrap();
    let suite = suite.to_str().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    // Port 9 is discard: never contacted, the refusal comes first.
    for target in [
        &["--endpoint-url", "http://127.0.0.1:9"][..],
        &["--target", "aws"][..],
    ] {
        let mut args = vec!["run", suite, "--out", out, "--chaos", "seed=1"];
        args.extend_from_slice(target);
        let run = run_bin(&args, &root(), LIMIT);
        assert_eq!(run.code(), 1, "{}", run.stderr);
        assert!(
            run.stderr
                .contains("--chaos applies only to the embedded emulator"),
            "{}",
            run.stderr
        );
    }
    let run = run_bin(
        &["run", suite, "--out", out, "--chaos", "stale-delete-keep=1"],
        &root(),
        LIMIT,
    );
    assert_eq!(run.code(), 1);
    assert!(
        run.stderr.contains("did you mean `stale-delete-keeps`?"),
        "{}",
        run.stderr
    );
    assert!(!Path::new(out).exists(), "a refused run writes nothing");
}
