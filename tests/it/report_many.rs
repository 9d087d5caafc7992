//! `sqsprobe report` over several run folders: the folders of a `--partition` run
//! merged back into one run, and different runs set side by side with links into each.

use crate::common;

use common::{root, run_bin, single_run_dir};
use sqsprobe_core::evidence::format::Record;
use sqsprobe_core::evidence::read_evidence;
use std::path::{Path, PathBuf};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// Runs `tests/fixtures/three-sends.yaml` with `extra` into a folder of its own.
fn run(out: &Path, extra: &[&str]) -> PathBuf {
    let mut args = vec![
        "run",
        "tests/fixtures/three-sends.yaml",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let done = run_bin(&args, &root(), LIMIT);
    assert_eq!(done.code(), 0, "{}\n{}", done.stdout, done.stderr);
    single_run_dir(out)
}

fn report(dirs: &[&Path], out: &Path) -> common::Finished {
    let mut args = vec!["report".to_string()];
    args.extend(dirs.iter().map(|d| d.to_str().unwrap().to_string()));
    args.extend(["--out".to_string(), out.to_str().unwrap().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_bin(&args, &root(), LIMIT)
}

#[test]
fn the_partitions_of_a_run_merge_into_one_report() {
    let tmp = tempfile::tempdir().unwrap();
    let p1 = run(&tmp.path().join("p1"), &["--partition", "1/3"]);
    let p3 = run(&tmp.path().join("p3"), &["--partition", "3/3"]);
    let out = tmp.path().join("merged");
    let done = report(&[&p3, &p1], &out);
    // A merge that lacks a partition says so and exits 5.
    assert_eq!(done.code(), 5, "{}\n{}", done.stdout, done.stderr);
    assert!(
        done.stderr.contains("partition 2/3 of run"),
        "{}",
        done.stderr
    );
    assert!(
        done.stdout.contains("merged 2 partitions into "),
        "{}",
        done.stdout
    );

    let records =
        read_evidence(&out.join("evidence.jsonl")).expect("merged evidence reads strictly");
    let Some(Record::RunStart(start)) = records.first() else {
        panic!("no run_start first");
    };
    let merged = start.merged.as_ref().expect("run_start.merged");
    assert_eq!(merged.of, 3);
    assert_eq!(merged.missing, vec![2], "partition 2/3 was not given");
    let parts: Vec<&str> = merged
        .partitions
        .iter()
        .map(|p| p.partition.as_str())
        .collect();
    assert_eq!(parts, vec!["1/3", "3/3"], "in partition order");
    assert_eq!(start.cases.len(), 2, "one case from each partition");
    let ends = records
        .iter()
        .filter(|r| matches!(r, Record::CaseEnd(_)))
        .count();
    assert_eq!(ends, 2);
    assert!(matches!(records.last(), Some(Record::RunEnd(e)) if e.exit_code == 0));

    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("merged from 2 of 3 partitions: 1/3 (run "),
        "{html}"
    );
    assert!(
        html.contains("partition 2/3 not given: its cases are not in this report"),
        "{html}"
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        summary.contains("> **Partial**: partition 2/3 not given"),
        "{summary}"
    );
    // Each partition's own report says it is one part of a split run.
    let own = std::fs::read_to_string(p1.join("report.html")).unwrap();
    assert!(own.contains("partition 1/3 of a split run"), "{own}");

    // Two folders of one partition are refused, naming both.
    let again = report(&[&p1, &p1], &out);
    assert_eq!(again.code(), 3, "{}", again.stderr);
    assert!(
        again.stderr.contains("both hold partition 1/3"),
        "{}",
        again.stderr
    );
}

#[test]
fn several_runs_are_set_side_by_side_with_links_into_each() {
    let tmp = tempfile::tempdir().unwrap();
    let a = run(&tmp.path().join("a"), &[]);
    let b = run(&tmp.path().join("b"), &["--protocol", "query"]);
    let out = tmp.path().join("both");
    let done = report(&[&a, &b], &out);
    assert_eq!(done.code(), 0, "{}\n{}", done.stdout, done.stderr);
    assert!(
        done.stdout.contains("runs side by side: "),
        "{}",
        done.stdout
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let run_a = a.file_name().unwrap().to_str().unwrap();
    let link = format!("<a href=\"../a/{run_a}/report.html#case-send-one\">pass</a>");
    assert!(html.contains(&link), "{link} in {html}");
    assert!(html.contains("<th><a href=\"../b/"), "{html}");
    assert!(
        html.contains("embedded (query)"),
        "the second column: {html}"
    );
    assert!(
        !out.join("evidence.jsonl").exists(),
        "nothing merged, no run folder"
    );
}
