//! A run stays bounded when the target does not ("Bounded"): a hung target is declared
//! lost and the run ends soon after, a request budget stops the run cleanly, and partitions
//! split a selection into disjoint, complete parts.

use crate::common;

use common::{root, run_bin, single_run_dir};
use sqsprobe_core::evidence::format::{CaseEnd, Phase, Record, Verdict};
use sqsprobe_core::evidence::read_evidence;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

fn ends(out: &Path) -> Vec<CaseEnd> {
    read_evidence(&single_run_dir(out).join("evidence.jsonl"))
        .unwrap()
        .into_iter()
        .filter_map(|r| match r {
            Record::CaseEnd(e) => Some(e),
            _ => None,
        })
        .collect()
}

/// The requests teardown made (one evidence row per attempt), of the run under `out`.
fn teardown_attempts(out: &Path) -> usize {
    read_evidence(&single_run_dir(out).join("evidence.jsonl"))
        .unwrap()
        .iter()
        .filter(|r| matches!(r, Record::Call(c) if c.phase == Phase::Teardown))
        .count()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_hung_target_is_declared_lost_and_the_run_ends_soon_after() {
    let mut serve = common::serve::Serve::start();
    let pid = serve.child.as_ref().unwrap().id().to_string();
    let rt = runtime();
    let out = tempfile::tempdir().unwrap();
    let child = Command::new(common::bin())
        .args([
            "run",
            "tests/fixtures/hang-then-more.yaml",
            "--jobs",
            "1",
            "--call-timeout",
            "2s",
            "--endpoint-url",
            &serve.url,
            "--out",
            out.path().to_str().unwrap(),
        ])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Inside the observation window: the first case's queue exists and its send is done.
    common::wait_for_queue(
        &rt,
        &serve.url,
        "sqsprobe-",
        Duration::from_secs(20),
        "the run never created its queue",
    );
    common::wait_for_evidence(
        out.path(),
        r#""phase":"observe""#,
        Duration::from_secs(30),
        "the run never began its observation",
    );
    assert!(
        Command::new("kill")
            .args(["-STOP", &pid])
            .status()
            .unwrap()
            .success()
    );
    let done = common::wait_bounded(child, LIMIT);
    common::recheck_dir(out.path());
    assert!(
        Command::new("kill")
            .args(["-CONT", &pid])
            .status()
            .unwrap()
            .success()
    );
    assert_eq!(done.code(), 3, "{}\n{}", done.stdout, done.stderr);
    assert!(
        done.stderr.contains("the target was lost"),
        "{}",
        done.stderr
    );
    let ends = ends(out.path());
    // The window (40 s) ended because the target was lost, not because it ran out; and
    // teardown, the run stopping, made one attempt at the queue.
    let first = ends.iter().find(|e| e.case == "observes-a-while").unwrap();
    assert_eq!(first.verdict, Verdict::Error, "{}", first.reason);
    assert_eq!(first.window.as_ref().unwrap().ended.as_str(), "target_lost");
    assert_eq!(teardown_attempts(out.path()), 1);
    // The last is a case of three trials none of which started: closed like a case run once
    // (it had no case_end before), with no trial counted.
    for id in ["would-start-next", "would-start-last"] {
        let e = ends
            .iter()
            .find(|e| e.case == id)
            .unwrap_or_else(|| panic!("no case_end for {id}: {ends:?}"));
        assert!(e.trials.is_none(), "{:?}", e.trials);
        assert_eq!(e.verdict, Verdict::Error);
        assert!(
            e.reason.starts_with("not run: the run stopped"),
            "{}",
            e.reason
        );
    }
    // The one queue teardown could not delete is named, as maybe still there, with the sweep
    // line that removes it.
    assert!(
        done.stdout
            .contains("1 owned queue may still be on the target"),
        "{}",
        done.stdout
    );
    assert!(
        done.stdout
            .contains(&format!("sqsprobe sweep --endpoint-url {}", serve.url)),
        "{}",
        done.stdout
    );
    serve.kill();
}

#[test]
fn a_request_budget_stops_the_run_cleanly_and_teardown_still_happens() {
    let serve = common::serve::Serve::start();
    let rt = runtime();
    let out = tempfile::tempdir().unwrap();
    let run = run_bin(
        &[
            "run",
            "tests/fixtures/three-sends.yaml",
            "--jobs",
            "1",
            "--max-requests",
            "8",
            "--endpoint-url",
            &serve.url,
            "--out",
            out.path().to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(run.code(), 5, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("--max-requests 8"), "{}", run.stderr);
    let ends = ends(out.path());
    assert_eq!(ends.len(), 3);
    assert_eq!(
        ends.iter().filter(|e| e.verdict == Verdict::Pass).count(),
        1,
        "{ends:?}"
    );
    assert!(
        ends.iter()
            .filter(|e| e.verdict != Verdict::Pass)
            .all(|e| e.verdict == Verdict::Inconclusive),
        "{ends:?}"
    );
    // Every queue it created was deleted, the budget notwithstanding.
    assert!(
        rt.block_on(common::queues_with_prefix(&serve.url, "sqsprobe-"))
            .is_empty()
    );
    let records = read_evidence(&single_run_dir(out.path()).join("evidence.jsonl")).unwrap();
    let Some(Record::RunEnd(end)) = records.last() else {
        panic!("no run_end")
    };
    assert!(end.requests.unwrap() >= 8, "{end:?}");
    assert!(run.stdout.contains("SQS requests ≈ $"), "{}", run.stdout);
}

/// A run a budget cut exits 5 whatever its finished cases said (here a failure):
/// the cases that finished are the ones the cut let finish.
#[test]
fn a_run_cut_by_its_time_budget_exits_with_the_cut_not_with_a_finished_failure() {
    let out = tempfile::tempdir().unwrap();
    let run = run_bin(
        &[
            "run",
            "tests/fixtures/verdicts.yaml",
            "tests/fixtures/observe-long.yaml",
            "--case",
            "wrong-expectation",
            "--case",
            "long-window",
            "--jobs",
            "2",
            "--max-duration",
            "4s",
            "--out",
            out.path().to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(run.code(), 5, "{}\n{}", run.stdout, run.stderr);
    let ends = ends(out.path());
    assert!(
        ends.iter()
            .any(|e| e.case == "wrong-expectation" && e.verdict == Verdict::Fail),
        "{ends:?}"
    );
    let records = read_evidence(&single_run_dir(out.path()).join("evidence.jsonl")).unwrap();
    let Some(Record::RunEnd(end)) = records.last() else {
        panic!("no run_end")
    };
    assert_eq!(end.exit_code, 5);
}

#[test]
fn partitions_are_disjoint_and_together_complete() {
    let suite = "suites/conformance/handles.yaml";
    let all = run_bin(&["list", suite], &root(), LIMIT);
    assert_eq!(all.code(), 0, "{}", all.stderr);
    let mut union = BTreeSet::new();
    let mut total = 0;
    for k in 1..=3 {
        let out = tempfile::tempdir().unwrap();
        let run = run_bin(
            &[
                "run",
                suite,
                "--partition",
                &format!("{k}/3"),
                "--out",
                out.path().to_str().unwrap(),
            ],
            &root(),
            LIMIT,
        );
        assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
        let records = read_evidence(&single_run_dir(out.path()).join("evidence.jsonl")).unwrap();
        let Some(Record::RunStart(start)) = records.first() else {
            panic!("no run_start")
        };
        assert_eq!(start.partition.as_deref(), Some(format!("{k}/3").as_str()));
        for e in ends(out.path()) {
            total += 1;
            assert!(
                union.insert(e.case.clone()),
                "{} ran in two partitions",
                e.case
            );
        }
    }
    let listed: BTreeSet<String> = all
        .stdout
        .lines()
        .filter(|l| l.starts_with(suite))
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .collect();
    assert_eq!(union.len(), total);
    assert_eq!(union, listed, "the partitions do not cover the suite");
}

/// A bound of 0 means nothing a user wants (no budget at all, every call timing
/// out, a run that stops at once): each is refused, exit 1, with one error line.
#[test]
fn zero_bounds_are_refused_with_one_line() {
    for (flag, value) in [
        ("--max-requests", "0"),
        ("--call-timeout", "0s"),
        ("--max-duration", "0s"),
    ] {
        let run = run_bin(&["run", flag, value], &root(), LIMIT);
        assert_eq!(run.code(), 1, "{flag} {value}: {}", run.stderr);
        let errors: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.starts_with("error:"))
            .collect();
        assert_eq!(errors.len(), 1, "{}", run.stderr);
        assert!(errors[0].contains(flag), "{}", errors[0]);
    }
}

/// A merge that lacks a partition is named on stderr, exits 5 (0 with
/// `--allow-partial`) and puts an `<error>` in its JUnit; an empty share still writes its run
/// folder, so the merge of all three sees it ran.
#[test]
fn a_merge_missing_a_partition_is_visible_where_ci_looks() {
    let dir = tempfile::tempdir().unwrap();
    let out = |k: usize| dir.path().join(format!("p{k}")).display().to_string();
    for k in 1..=3 {
        let run = run_bin(
            &[
                "run",
                "tests/fixtures/history-two.yaml",
                "--partition",
                &format!("{k}/3"),
                "--run-id",
                "split-3",
                "--quiet",
                "--out",
                &out(k),
            ],
            &root(),
            LIMIT,
        );
        assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
        if k == 3 {
            // Two cases, three partitions: the third share is empty, and says so in one line.
            assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
            assert!(run.stderr.contains("holds no case"), "{}", run.stderr);
        }
    }
    let part = |k: usize| format!("{}/split-3", out(k));
    assert!(Path::new(&part(3)).join("evidence.jsonl").exists());
    let merged = dir.path().join("merged").display().to_string();
    let two = run_bin(
        &["report", &part(1), &part(2), "--out", &merged],
        &root(),
        LIMIT,
    );
    assert_eq!(two.code(), 5, "{}\n{}", two.stdout, two.stderr);
    assert!(
        two.stderr.contains("partition 3/3 of run"),
        "{}",
        two.stderr
    );
    let junit = std::fs::read_to_string(Path::new(&merged).join("junit.xml")).unwrap();
    assert!(junit.contains("name=\"partitions missing\""), "{junit}");
    assert!(junit.contains("<error"), "{junit}");
    let allowed = run_bin(
        &[
            "report",
            &part(1),
            &part(2),
            "--out",
            &merged,
            "--allow-partial",
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(allowed.code(), 0, "{}", allowed.stderr);
    let all = run_bin(
        &["report", &part(1), &part(2), &part(3), "--out", &merged],
        &root(),
        LIMIT,
    );
    assert_eq!(all.code(), 0, "{}\n{}", all.stdout, all.stderr);
    let junit = std::fs::read_to_string(Path::new(&merged).join("junit.xml")).unwrap();
    assert!(!junit.contains("partitions missing"), "{junit}");
}

/// A run a budget stopped is not "all skipped, no failures" in JUnit: one `<error>`
/// names the budget; every case carries its suite file and line for CI's annotations.
#[test]
fn a_budget_stopped_run_has_an_error_in_junit_and_cases_carry_file_and_line() {
    let out = tempfile::tempdir().unwrap();
    let run = run_bin(
        &[
            "run",
            "tests/fixtures/three-sends.yaml",
            "--jobs",
            "1",
            "--max-requests",
            "8",
            "--out",
            out.path().to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(run.code(), 5, "{}\n{}", run.stdout, run.stderr);
    let junit = std::fs::read_to_string(single_run_dir(out.path()).join("junit.xml")).unwrap();
    let report = quick_junit::Report::deserialize_from_str(&junit).expect("JUnit parses");
    assert!(report.errors >= 1, "{junit}");
    assert!(junit.contains("name=\"run stopped\""), "{junit}");
    assert!(junit.contains("--max-requests 8"), "{junit}");
    assert!(
        junit.contains("file=\"tests/fixtures/three-sends.yaml\" line=\"5\""),
        "{junit}"
    );
}

/// A SIGTERM while the target hangs ends the run within about a call timeout: the
/// call in flight is abandoned, teardown makes one bounded attempt per queue, and neither the
/// abandoned call nor teardown's silence makes the run report a lost target.
#[test]
fn a_signal_while_the_target_hangs_ends_soon_and_never_blames_the_target() {
    let mut serve = common::serve::Serve::start();
    let pid = serve.child.as_ref().unwrap().id().to_string();
    let rt = runtime();
    let out = tempfile::tempdir().unwrap();
    let child = Command::new(common::bin())
        .args([
            "run",
            "tests/fixtures/observe-long.yaml",
            "--endpoint-url",
            &serve.url,
            "--lost-after",
            "1",
            "--out",
            out.path().to_str().unwrap(),
        ])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_for_queue(
        &rt,
        &serve.url,
        "sqsprobe-",
        Duration::from_secs(20),
        "the run never created its queue",
    );
    common::wait_for_evidence(
        out.path(),
        r#""phase":"observe""#,
        Duration::from_secs(30),
        "the run never began its observation",
    );
    let signal = |sig: &str, pid: &str| {
        assert!(
            Command::new("kill")
                .args([sig, pid])
                .status()
                .unwrap()
                .success()
        )
    };
    signal("-STOP", &pid);
    common::send_signal(&child, "TERM");
    let done = common::wait_bounded(child, LIMIT);
    common::recheck_dir(out.path());
    signal("-CONT", &pid);
    assert_eq!(done.code(), 130, "{}\n{}", done.stdout, done.stderr);
    // Teardown made one attempt (of one call timeout) at the silent target, not the three a
    // harness call gets, and asked nothing more.
    assert_eq!(teardown_attempts(out.path()), 1);
    assert!(
        !done.stderr.contains("the target was lost"),
        "{}",
        done.stderr
    );
    serve.kill();
}
