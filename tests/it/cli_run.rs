//! `sqsprobe run` end to end against a real moto server: the shipped suites, the run folder,
//! exit codes, no leaked handles, and cleanup after Ctrl-C.

use crate::common;

use common::{Moto, queues_with_prefix, root, run_bin, single_run_dir};
use sqsprobe_core::evidence::{Record, format::Verdict, read_evidence};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// The playbook suites at the top of `suites/`. The conformance suites under
/// `suites/conformance/` are left out: they are expected to fail on moto where moto differs from
/// AWS, and they write literal (never-issued) handles such as `garbage` into their text.
fn playbook_suites() -> Vec<String> {
    let mut paths: Vec<String> = std::fs::read_dir(root().join("suites"))
        .expect("suites/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| {
            p.strip_prefix(root())
                .expect("under the root")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    paths.sort();
    paths
}

fn case_ends(records: &[Record]) -> Vec<&sqsprobe_core::evidence::format::CaseEnd> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::CaseEnd(e) => Some(e),
            _ => None,
        })
        .collect()
}

#[test]
fn shipped_suites_pass_against_moto_and_leave_a_complete_run_folder() {
    let moto = Moto::start();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let suites = playbook_suites();
    let mut args = vec!["run", "--endpoint-url", &moto.url, "--out", out];
    args.extend(suites.iter().map(String::as_str));
    let run = run_bin(&args, &root(), LIMIT);
    assert_eq!(
        run.code(),
        0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    assert!(
        run.stdout
            .lines()
            .any(|l| l.ends_with("passed, 0 failed, 0 inconclusive, 0 errors")),
        "{}",
        run.stdout
    );

    let dir = single_run_dir(out_dir.path());
    for f in ["evidence.jsonl", "junit.xml", "summary.md", "report.html"] {
        assert!(dir.join(f).is_file(), "missing {f}");
    }
    // Strict read-back: every line is a known record with no unknown fields.
    let records = read_evidence(&dir.join("evidence.jsonl")).unwrap();
    assert!(matches!(records.first(), Some(Record::RunStart(_))));
    assert!(matches!(records.last(), Some(Record::RunEnd(_))));
    let ends = case_ends(&records);
    assert!(ends.len() >= 3);
    assert!(ends.iter().all(|e| e.verdict == Verdict::Pass));
    assert!(ends.iter().all(|e| e.queues.iter().all(|q| q.deleted)));
    // The partial-batch experiment saw its failed entry come back.
    let batch = ends
        .iter()
        .find(|e| e.case.starts_with("partial-batch"))
        .unwrap();
    assert_eq!(
        batch.classification.map(|c| c.as_str()),
        Some("observed_redelivery")
    );
    // Every delete row carries a 64-hex handle digest.
    for r in &records {
        if let Record::Call(c) = r
            && c.action == "DeleteMessage"
            && c.phase == sqsprobe_core::evidence::format::Phase::Step
        {
            let d = c.handle_digest.as_deref().unwrap();
            assert_eq!(d.len(), 64);
            assert!(d.chars().all(|ch| ch.is_ascii_hexdigit()));
        }
    }
    // JUnit parses back and counts the cases.
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    let report = quick_junit::Report::deserialize_from_str(&junit).unwrap();
    assert_eq!(report.tests as usize, ends.len());
    assert_eq!(report.failures, 0);

    // Nothing of this run is left on the server.
    let run_id = match &records[0] {
        Record::RunStart(s) => s.run_id.clone(),
        _ => unreachable!(),
    };
    let left = runtime().block_on(queues_with_prefix(&moto.url, &format!("sqsprobe-{run_id}")));
    assert!(left.is_empty(), "queues left behind: {left:?}");
}

#[test]
fn failed_and_inconclusive_cases_map_to_exit_codes_and_junit() {
    let moto = Moto::start();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let run = run_bin(
        &[
            "run",
            "tests/fixtures/verdicts.yaml",
            "--endpoint-url",
            &moto.url,
            "--out",
            out,
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(run.code(), 4, "{}", run.stderr);
    assert!(
        run.stdout.contains("tests/fixtures/verdicts.yaml:10"),
        "{}",
        run.stdout
    );
    let dir = single_run_dir(out_dir.path());
    let records = read_evidence(&dir.join("evidence.jsonl")).unwrap();
    let ends = case_ends(&records);
    let wrong = ends.iter().find(|e| e.case == "wrong-expectation").unwrap();
    assert_eq!(wrong.verdict, Verdict::Fail);
    assert!(
        wrong.findings[0].message.contains("ReceiptHandleIsInvalid"),
        "{:?}",
        wrong.findings
    );
    assert_eq!(wrong.findings[0].line, 10);
    let budget = ends.iter().find(|e| e.case == "budget-too-small").unwrap();
    assert_eq!(budget.verdict, Verdict::Inconclusive);
    assert_eq!(
        budget.classification.map(|c| c.as_str()),
        Some("inconclusive")
    );
    assert_eq!(
        budget.window.as_ref().unwrap().ended.as_str(),
        "budget_exhausted"
    );

    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    let report = quick_junit::Report::deserialize_from_str(&junit).unwrap();
    assert_eq!(report.failures, 1);
    assert!(junit.contains("<skipped"), "{junit}");

    // Only the inconclusive case: exit 5, never 0.
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let run = run_bin(
        &[
            "run",
            "tests/fixtures/verdicts.yaml",
            "--case",
            "budget",
            "--endpoint-url",
            &moto.url,
            "--out",
            out,
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(run.code(), 5, "{}", run.stderr);
}

#[test]
fn an_unreachable_endpoint_is_one_clear_runtime_error() {
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let run = run_bin(
        &["run", "--endpoint-url", &url, "--out", out],
        &root(),
        LIMIT,
    );
    assert_eq!(run.code(), 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("failed to reach the target"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);

    // The run folder says what happened, like any other run's (rule 12).
    let dir = single_run_dir(out_dir.path());
    let records = read_evidence(&dir.join("evidence.jsonl")).unwrap();
    let Some(Record::RunStart(start)) = records.first() else {
        panic!("first record: {:?}", records.first());
    };
    assert!(!start.cases.is_empty());
    assert_eq!(start.endpoint.as_deref(), Some(url.as_str()));
    let checks: Vec<_> = records
        .iter()
        .filter_map(|r| match r {
            Record::Call(c) => Some(c),
            _ => None,
        })
        .collect();
    assert!(!checks.is_empty());
    assert!(
        checks
            .iter()
            .all(|c| c.case.is_empty() && c.action == "ListQueues")
    );
    match records.last() {
        Some(Record::RunEnd(end)) => {
            assert_eq!(end.exit_code, 3);
            assert!(!end.interrupted);
        }
        other => panic!("last record: {other:?}"),
    }
    assert!(case_ends(&records).is_empty());

    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    let report = quick_junit::Report::deserialize_from_str(&junit).unwrap();
    assert_eq!(report.errors, 1, "{junit}");
    assert_eq!(report.failures, 0, "{junit}");
    assert_eq!(report.tests as usize, start.cases.len() + 1, "{junit}");
    assert!(junit.contains("the target could not be reached: ListQueues failed"));
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("> **Nothing was run**"), "{summary}");
    assert!(summary.contains("Exit 3: the harness or the target broke."));
    assert!(dir.join("report.html").is_file());
    assert!(
        run.stdout.contains("reachability check") && run.stdout.contains("1 error"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_queue_under_our_name_but_with_another_runs_tag_is_never_used_or_deleted() {
    let moto = Moto::start();
    let rt = runtime();
    let run_id = "ownership-test-1";
    let name = format!("sqsprobe-{run_id}-owned-check-work");
    let client = rt.block_on(common::client(&moto.url));
    rt.block_on(
        client
            .create_queue()
            .queue_name(&name)
            .tags("sqsprobe:run", "someone-else")
            .send(),
    )
    .expect("pre-create the foreign queue");
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let args = [
        "run",
        "tests/fixtures/ownership.yaml",
        "--endpoint-url",
        &moto.url,
        "--run-id",
        run_id,
        "--out",
        out,
    ];
    let run = run_bin(&args, &root(), LIMIT);
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    let records = read_evidence(&single_run_dir(out_dir.path()).join("evidence.jsonl")).unwrap();
    let end = case_ends(&records)[0];
    assert_eq!(end.verdict, Verdict::Error);
    assert!(
        end.findings[0]
            .message
            .contains("this run did not create it"),
        "{:?}",
        end.findings
    );
    // Nothing was sent to it and it was not deleted.
    assert!(!records.iter().any(
        |r| matches!(r, Record::Call(c) if c.action == "SendMessage" || c.action == "DeleteQueue")
    ));
    let left = rt.block_on(queues_with_prefix(&moto.url, &name));
    assert_eq!(left, vec![name.clone()]);

    // The same run id again is refused before anything happens.
    let again = run_bin(&args, &root(), LIMIT);
    assert_eq!(again.code(), 1, "{}", again.stderr);
    assert!(again.stderr.contains("never reused"), "{}", again.stderr);
}

/// The shipped target profiles are built into the binary, so `--target-profile`
/// works from any folder, and a profile no run has measured says so when chosen.
#[test]
fn built_in_profiles_work_from_any_folder_and_unmeasured_ones_say_so() {
    let elsewhere = tempfile::tempdir().unwrap();
    let suite = root().join("tests/fixtures/three-sends.yaml");
    let out = elsewhere.path().join("out");
    for (profile, unmeasured) in [("moto", false), ("elasticmq", true), ("goaws", true)] {
        let run = run_bin(
            &[
                "run",
                suite.to_str().unwrap(),
                "--target-profile",
                profile,
                "--quiet",
                "--out",
                out.to_str().unwrap(),
            ],
            elsewhere.path(),
            Duration::from_secs(60),
        );
        assert_eq!(run.code(), 0, "{profile}: {}\n{}", run.stdout, run.stderr);
        assert_eq!(
            run.stderr
                .contains(&format!("target profile `{profile}` is unmeasured")),
            unmeasured,
            "{profile}: {}",
            run.stderr
        );
    }
}
