//! Runs that did not end cleanly, read back by the binary: an evidence file cut mid-line (a
//! killed run), one with record types from a newer version, and what `report`, `matrix` and
//! `baseline` make of them (rules 6 and 12).

use crate::common;

use common::{root, run_bin, single_run_dir};
use std::path::{Path, PathBuf};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// One real run on the embedded emulator: `wrong-expectation` fails (exit 4), quickly.
fn real_run(out: &Path) -> PathBuf {
    let run = run_bin(
        &[
            "run",
            "tests/fixtures/verdicts.yaml",
            "--case",
            "wrong-expectation",
            "--out",
            out.to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(run.code(), 4, "{}\n{}", run.stdout, run.stderr);
    single_run_dir(out)
}

fn lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("evidence.jsonl"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Cuts the run as a kill would: no `run_end`, and the `case_end` half written.
fn kill_mid_write(dir: &Path) {
    let mut lines = lines(dir);
    let run_end = lines.pop().unwrap();
    assert!(run_end.starts_with("{\"type\":\"run_end\""), "{run_end}");
    let case_end = lines.pop().unwrap();
    assert!(case_end.starts_with("{\"type\":\"case_end\""), "{case_end}");
    let mut text = lines.join("\n");
    text.push('\n');
    text.push_str(&case_end[..case_end.len() / 2]);
    std::fs::write(dir.join("evidence.jsonl"), text).unwrap();
}

fn report(dir: &Path) -> common::Finished {
    run_bin(&["report", dir.to_str().unwrap()], &root(), LIMIT)
}

#[test]
fn report_renders_a_run_killed_mid_write_and_says_it_was_interrupted_everywhere() {
    let out = tempfile::tempdir().unwrap();
    let dir = real_run(out.path());
    kill_mid_write(&dir);
    for f in ["junit.xml", "summary.md", "report.html"] {
        std::fs::remove_file(dir.join(f)).unwrap();
    }

    let done = report(&dir);
    assert_eq!(done.code(), 0, "{}\n{}", done.stdout, done.stderr);
    assert!(
        done.stderr.contains("warning:") && done.stderr.contains("the last line is incomplete"),
        "{}",
        done.stderr
    );
    let terminal = &done.stdout;
    assert!(
        terminal.contains("DID-NOT-FINISH")
            && terminal.contains("wrong-expectation")
            && terminal.contains("run interrupted: results are partial")
            && terminal.contains("0 passed, 0 failed, 0 inconclusive, 1 error"),
        "{terminal}"
    );

    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("> **Run interrupted**"), "{summary}");
    assert!(
        summary.contains("| **did not finish** | `wrong-expectation`"),
        "{summary}"
    );
    assert!(
        summary.contains("1 of the errors did not finish: the run was interrupted"),
        "{summary}"
    );

    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("Run interrupted: results are partial."));
    assert!(html.contains("<span class=\"badge did_not_finish\">DID-NOT-FINISH</span>"));

    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    let parsed = quick_junit::Report::deserialize_from_str(&junit).unwrap();
    // The unfinished case, and the interruption itself (a red job is never green
    // in the CI view).
    assert_eq!((parsed.tests, parsed.errors, parsed.failures), (2, 2, 0));
    let run = parsed
        .test_suites
        .iter()
        .find(|s| s.name.as_str() == "(run)")
        .expect("the run's own suite");
    assert_eq!(run.test_cases[0].name.as_str(), "run interrupted");
    let case = parsed
        .test_suites
        .iter()
        .flat_map(|s| &s.test_cases)
        .find(|c| c.name.as_str() == "wrong-expectation")
        .expect("the case");
    assert_eq!(case.name.as_str(), "wrong-expectation");
    match &case.status {
        quick_junit::TestCaseStatus::NonSuccess { kind, message, .. } => {
            assert_eq!(*kind, quick_junit::NonSuccessKind::Error);
            assert_eq!(
                message.as_ref().unwrap().as_str(),
                "did not finish (run interrupted)"
            );
        }
        other => panic!("an unfinished case must be an error: {other:?}"),
    }
    assert!(
        parsed.test_suites[0]
            .properties
            .iter()
            .any(|p| p.name.as_str() == "interrupted" && p.value.as_str() == "true")
    );
}

#[test]
fn unknown_record_types_are_skipped_but_unknown_fields_are_refused() {
    let out = tempfile::tempdir().unwrap();
    let dir = real_run(out.path());
    let before = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    let mut lines = lines(&dir);
    lines.insert(
        1,
        r#"{"type":"trial_start","data":{"trial":1,"of":3}}"#.to_string(),
    );
    std::fs::write(dir.join("evidence.jsonl"), lines.join("\n") + "\n").unwrap();

    let done = report(&dir);
    assert_eq!(done.code(), 0, "{}", done.stderr);
    assert!(
        done.stderr
            .contains("evidence.jsonl:2: skipped 1 record(s) of unknown type `trial_start`"),
        "{}",
        done.stderr
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("summary.md")).unwrap(),
        before
    );

    let run_end = lines.pop().unwrap();
    lines.push(run_end.replace("\"interrupted\":", "\"raw_handle\":\"x\",\"interrupted\":"));
    std::fs::write(dir.join("evidence.jsonl"), lines.join("\n") + "\n").unwrap();
    let done = report(&dir);
    assert_eq!(done.code(), 3, "{}", done.stderr);
    assert!(
        done.stderr
            .contains(&format!("evidence.jsonl:{}:", lines.len()))
            && done.stderr.contains("raw_handle"),
        "{}",
        done.stderr
    );
}

/// A copy of a run folder's evidence in `to`, to cut without touching the original.
fn copy_run(from: &Path, to: &Path) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    std::fs::copy(from.join("evidence.jsonl"), to.join("evidence.jsonl")).unwrap();
    to.to_path_buf()
}

#[test]
fn matrix_counts_what_did_not_finish_and_flags_the_interrupted_column() {
    let out = tempfile::tempdir().unwrap();
    let whole = real_run(&out.path().join("runs"));
    let cut = copy_run(&whole, &out.path().join("cut"));
    kill_mid_write(&cut);
    let matrix = out.path().join("matrix");
    let done = run_bin(
        &[
            "matrix",
            whole.to_str().unwrap(),
            cut.to_str().unwrap(),
            "--out",
            matrix.to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(done.code(), 0, "{}\n{}", done.stdout, done.stderr);
    assert!(
        done.stderr.contains("the last line is incomplete"),
        "{}",
        done.stderr
    );
    let json: serde_json::Value = common::read_json(&matrix.join("matrix.json"));
    let (whole_col, cut_col) = (&json["columns"][0], &json["columns"][1]);
    assert_eq!(whole_col["interrupted"], false);
    assert_eq!(cut_col["interrupted"], true);
    // The cut case counts, as not conforming: the score cannot improve by stopping early.
    assert_eq!(cut_col["score"]["run"], 1, "{cut_col}");
    assert_eq!(cut_col["score"]["did_not_finish"], 1, "{cut_col}");
    assert_eq!(cut_col["score"]["not_run"], 0, "{cut_col}");
    assert_eq!(cut_col["score"]["conformance"], 0.0, "{cut_col}");
    assert_eq!(
        json["areas"][0]["rows"][0]["cells"][1]["state"],
        "did_not_finish"
    );
    let md = std::fs::read_to_string(matrix.join("matrix.md")).unwrap();
    assert!(md.contains("**(interrupted)**"), "{md}");
    assert!(md.contains("> **Interrupted**: "), "{md}");
    assert!(md.contains("| **fail** | **did not finish** |"), "{md}");
    assert!(done.stdout.contains("INTERRUPTED"), "{}", done.stdout);
    // matrix.html links a cell to its case in a run folder that has a report.html (the whole
    // run's), and links nothing where there is none (the cut copy holds only evidence).
    let html = std::fs::read_to_string(matrix.join("matrix.html")).unwrap();
    let run_id = whole.file_name().unwrap().to_str().unwrap();
    let link = format!("<a href=\"../runs/{run_id}/report.html#case-wrong-expectation\">fail</a>");
    assert!(html.contains(&link), "{link} in {html}");
    assert!(
        html.contains("<td class=\"cell did_not_finish\" title=\"did not finish (run interrupted)\">did not finish</td>"),
        "{html}"
    );
}

#[test]
fn baseline_save_refuses_an_interrupted_run_and_compare_says_it_is_incomplete() {
    let out = tempfile::tempdir().unwrap();
    let whole = real_run(&out.path().join("runs"));
    let cut = copy_run(&whole, &out.path().join("cut"));
    kill_mid_write(&cut);
    let baselines = out.path().join("baselines");
    let save = |dir: &Path| {
        run_bin(
            &[
                "baseline",
                "save",
                dir.to_str().unwrap(),
                "--dir",
                baselines.to_str().unwrap(),
                "--name",
                "ref",
            ],
            &root(),
            LIMIT,
        )
    };

    let refused = save(&cut);
    assert_eq!(refused.code(), 1, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("cannot be a baseline: it has no run_end"),
        "{}",
        refused.stderr
    );
    assert!(!baselines.join("ref").exists());

    let saved = save(&whole);
    assert_eq!(saved.code(), 0, "{}", saved.stderr);
    let compared = run_bin(
        &[
            "baseline",
            "compare",
            baselines.join("ref").to_str().unwrap(),
            cut.to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(compared.code(), 4, "{}", compared.stderr);
    assert!(
        compared
            .stdout
            .contains("case `wrong-expectation`: case: fail → did not finish"),
        "{}",
        compared.stdout
    );
    assert!(
        compared.stderr.contains("is incomplete: it has no run_end"),
        "{}",
        compared.stderr
    );
    let md = std::fs::read_to_string(cut.join("comparison.md")).unwrap();
    assert!(md.contains("> **The run is incomplete**"), "{md}");
}
