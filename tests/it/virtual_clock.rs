//! `sqsprobe run --clock virtual`: the embedded emulator and the harness share a
//! simulated clock, so the conformance suite, slow cases included, runs without waiting, with
//! the results a real-time run gives; other targets are refused.

use crate::common;

use common::{root, run_bin, single_run_dir};
use sqsprobe_core::evidence::format::Verdict;
use sqsprobe_core::evidence::{Record, RunView, read_evidence};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Bounds a real-time run of the non-slow suites; the virtual runs need a fraction of it.
const LIMIT: Duration = Duration::from_secs(240);

fn run_into(out: &Path, args: &[&str]) -> PathBuf {
    let run = run_once(out, args);
    assert_eq!(
        run.code(),
        0,
        "{args:?}\nstdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    single_run_dir(out)
}

fn run_once(out: &Path, args: &[&str]) -> common::Finished {
    std::fs::create_dir_all(out).unwrap();
    let mut all = vec!["run", "--out", out.to_str().unwrap(), "-q"];
    all.extend_from_slice(args);
    run_bin(&all, &root(), LIMIT)
}

/// A passing real-time run of `args`. Real time is the reference, and on a loaded machine it
/// can miss a case's 1–2 s margin (the reason the virtual clock exists): such a run is thrown
/// away and made again, at most three times. The virtual side is never retried.
fn real_time_reference(out: &Path, args: &[&str]) -> PathBuf {
    let mut last = String::new();
    for attempt in 1..=3 {
        let dir = out.join(attempt.to_string());
        let run = run_once(&dir, args);
        if run.code() == 0 {
            return single_run_dir(&dir);
        }
        last = run.stdout;
    }
    panic!("three real-time runs of {args:?} failed; the last said:\n{last}");
}

fn records(dir: &Path) -> Vec<Record> {
    read_evidence(&dir.join("evidence.jsonl")).unwrap()
}

/// The same selection on both clocks gives the same evidence, as `baseline compare` sees it:
/// per case the verdict and outcome class, per step call the action, completion, status,
/// error code and failed batch entries.
#[test]
fn the_suites_give_the_same_results_on_a_virtual_clock_as_in_real_time() {
    let tmp = tempfile::tempdir().unwrap();
    let real = real_time_reference(&tmp.path().join("real"), &["--target-profile", "embedded"]);
    let simulated = run_into(
        &tmp.path().join("virtual"),
        &["--target-profile", "embedded", "--clock", "virtual"],
    );
    let baselines = tmp.path().join("baselines");
    let save = run_bin(
        &[
            "baseline",
            "save",
            real.to_str().unwrap(),
            "--dir",
            baselines.to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(save.code(), 0, "{}", save.stderr);
    let base = std::fs::read_dir(&baselines)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let compared = run_bin(
        &[
            "baseline",
            "compare",
            base.to_str().unwrap(),
            simulated.to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(
        compared.code(),
        0,
        "{}\n{}",
        compared.stdout,
        compared.stderr
    );
    assert!(compared.stdout.contains("identical to baseline"));
    let real = records(&real);
    let start = RunView::new(&real).start.expect("a run_start");
    assert_eq!(start.clock.as_deref(), Some("real"));
}

/// The slow cases wait out SQS's own intervals (the 5-minute dedup window, the 60 s purge and
/// re-create rules, the 60 s minimum retention) in simulated time: each case's recorded
/// duration is at least the interval it waits, and every case passes over both protocols.
#[test]
fn the_conformance_suite_with_its_slow_cases_runs_on_a_virtual_clock() {
    let tmp = tempfile::tempdir().unwrap();
    for protocol in ["json", "query"] {
        let dir = run_into(
            &tmp.path().join(protocol),
            &[
                "suites/conformance",
                "--include-slow",
                "--clock",
                "virtual",
                "--protocol",
                protocol,
            ],
        );
        let records = records(&dir);
        let run = RunView::new(&records);
        assert_eq!(run.start.and_then(|s| s.clock.as_deref()), Some("virtual"));
        let ends: Vec<_> = run.case_ends().collect();
        assert!(ends.len() > 150, "{}", ends.len());
        for end in &ends {
            // A case limited to the other protocol (`protocols: [json]` over query, say).
            let skipped_here = end.verdict == Verdict::Unsupported
                && end
                    .profile_note
                    .as_deref()
                    .is_some_and(|n| n.starts_with("protocols:") && !n.contains(protocol));
            assert!(
                end.verdict == Verdict::Pass || skipped_here,
                "{protocol}: {} {:?}: {:?}",
                end.case,
                end.verdict,
                end.findings
            );
        }
        let waited = |case: &str| {
            ends.iter()
                .find(|e| e.case == case)
                .unwrap_or_else(|| panic!("{case} ran"))
                .duration_ms
        };
        assert!(waited("fifo-dedup-expires-after-5m") >= 300_000);
        assert!(waited("lifecycle-purge-again-after-60s") >= 60_000);
        assert!(waited("lifecycle-recreate-after-60s") >= 60_000);
        assert!(waited("attr-retention-expiry") >= 60_000);
        assert!(run.end.expect("a run_end").duration_ms >= 300_000);
        let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
        assert!(html.contains("virtual: timestamps"), "the report says so");
        let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
        assert!(summary.contains("virtual clock"), "{summary}");
    }
}

#[test]
fn a_virtual_clock_is_refused_for_any_other_target() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    for target in [
        &["--endpoint-url", "http://127.0.0.1:9"][..],
        &["--target", "aws", "--region", "eu-west-1"][..],
    ] {
        let mut args = vec!["run", "--clock", "virtual", "--out", out];
        args.extend_from_slice(target);
        let run = run_bin(&args, &root(), LIMIT);
        assert_eq!(run.code(), 1, "{target:?}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("--clock virtual applies only to the embedded emulator"),
            "{}",
            run.stderr
        );
        assert!(std::fs::read_dir(tmp.path()).unwrap().next().is_none());
    }
}
