//! `sqsprobe validate` and `list` on real files: positioned errors, exit codes.

use crate::common;

use common::{root, run_bin};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);

#[test]
fn shipped_suites_are_valid() {
    let out = run_bin(&["validate"], &root(), LIMIT);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    assert!(out.stdout.contains("valid"), "{}", out.stdout);
}

#[test]
fn a_broken_suite_points_at_each_mistake_and_exits_2() {
    let out = run_bin(&["validate", "tests/fixtures/broken.yaml"], &root(), LIMIT);
    assert_eq!(out.code(), 2, "{}", out.stderr);
    let err = &out.stderr;
    assert!(err.contains("tests/fixtures/broken.yaml:7:14"), "{err}");
    assert!(err.contains("did you mean `visibility_timeout`?"), "{err}");
    assert!(err.contains("tests/fixtures/broken.yaml:10:9"), "{err}");
    assert!(err.contains("did you mean `receive`?"), "{err}");
    // The reference to an attempt no receive declared, at its own line.
    assert!(err.contains("tests/fixtures/broken.yaml:11:"), "{err}");
    assert!(
        err.contains("attempt `C`") || err.contains("attempt C"),
        "{err}"
    );
    // hurl style: the source line and a caret under the mistake.
    assert!(err.contains("      work: {visiblity_timeout: 1s}"), "{err}");
    assert!(err.contains("^^^"), "{err}");
}

#[test]
fn run_refuses_an_invalid_suite_before_touching_any_target() {
    // No target is reachable on this port; the run must stop at validation (exit 2), not 3.
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let out = run_bin(
        &["run", "tests/fixtures/broken.yaml", "--endpoint-url", &url],
        &root(),
        LIMIT,
    );
    assert_eq!(out.code(), 2, "{}", out.stderr);
}

#[test]
fn bad_command_lines_exit_1() {
    let out = run_bin(&["run", "--jobs", "many"], &root(), LIMIT);
    assert_eq!(out.code(), 1);
    let out = run_bin(&["validate", "no/such/dir"], &root(), LIMIT);
    assert_eq!(out.code(), 1);
    assert!(out.stderr.contains("no such file"), "{}", out.stderr);
    let out = run_bin(&["run", "--target", "endpoint"], &root(), LIMIT);
    assert_eq!(out.code(), 1);
    assert!(out.stderr.contains("--endpoint-url"), "{}", out.stderr);
}

#[test]
fn list_prints_one_line_per_case_and_a_total() {
    let out = run_bin(&["list"], &root(), LIMIT);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    let total = lines.last().unwrap();
    let n: usize = total.split_whitespace().next().unwrap().parse().unwrap();
    assert_eq!(lines.len() - 1, n, "{}", out.stdout);
    assert!(
        out.stdout.contains("suites/stale-handle.yaml:"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_suite_path_given_twice_is_one_file() {
    // Before: every case of the file was a duplicate case id of itself (exit 2).
    let out = run_bin(
        &[
            "validate",
            "suites/stale-handle.yaml",
            "./suites/stale-handle.yaml",
            "suites",
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let all = run_bin(&["validate", "suites"], &root(), LIMIT);
    assert_eq!(out.stdout, all.stdout);
}

/// A number SQS refuses, or no request can carry, is a suite error at its position (2^32 s
/// used to pass and be sent as 0); one outside SQS's range on a step that expects the refusal
/// is valid (`tests/fixtures/out-of-range.yaml`, line 16).
#[test]
fn numbers_out_of_range_are_refused_at_their_position() {
    let file = "tests/fixtures/out-of-range.yaml";
    let out = run_bin(&["validate", file], &root(), LIMIT);
    assert_eq!(out.code(), 2, "{}", out.stderr);
    let err = &out.stderr;
    for (at, says) in [
        ("10:22", "MessageRetentionPeriod: 60 to 1209600 seconds"),
        ("13:56", "which no request can carry"),
        ("15:35", "WaitTimeSeconds: 0 to 20 seconds"),
    ] {
        assert!(err.contains(&format!("{file}:{at}")), "{at}: {err}");
        assert!(err.contains(says), "{says}: {err}");
    }
    assert!(err.contains("3 error(s)"), "line 16 is valid: {err}");
}
