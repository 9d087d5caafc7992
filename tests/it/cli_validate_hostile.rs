//! `sqsprobe validate` and `run` on hostile suite files: not UTF-8, too large, thousands of
//! errors (a very long line, and validate's answer to a file not UTF-8, are broken suites of
//! `tests/fixtures/broken/`, checked by `cli_validate`). Each is an invalid suite (exit 2) with
//! a positioned error, never a panic and never exit 1.

use crate::common;

use common::{root, run_bin};
use std::path::Path;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

fn valid_suite() -> String {
    "cases:\n  - id: c1\n    behaviour: b\n    source: s\n    queues: {q: {}}\n    steps:\n      - purge: {queue: q}\n".to_string()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

/// `run` refuses a suite that is not UTF-8 with the same positioned error as `validate`
/// (`tests/fixtures/broken/not-utf8.err`), and runs nothing.
#[test]
fn non_utf8_is_an_invalid_suite_for_run_as_for_validate() {
    let file = "tests/fixtures/broken/not-utf8.yaml";
    let expected = std::fs::read_to_string(root().join("tests/fixtures/broken/not-utf8.err"))
        .expect("the expected stderr of validate");
    let errors = expected
        .rsplit_once("sqsprobe: ")
        .map_or(expected.as_str(), |(errors, _)| errors);
    let out = run_bin(&["run", file], &root(), LIMIT);
    assert_eq!(out.code(), 2, "{}", out.stderr);
    assert!(out.stderr.starts_with(errors), "{}", out.stderr);
    assert!(out.stderr.ends_with("nothing was run\n"), "{}", out.stderr);
}

#[test]
fn a_file_over_the_size_cap_is_refused_with_both_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = valid_suite();
    text.push_str(&format!("# {}\n", "x".repeat(4 * 1024 * 1024)));
    let path = write(dir.path(), "huge.yaml", text.as_bytes());
    let out = run_bin(&["validate", &path], &root(), LIMIT);
    assert_eq!(out.code(), 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("over the limit of 4 MiB for a suite file"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!("({} bytes)", text.len())),
        "{}",
        out.stderr
    );
}

#[test]
fn thousands_of_errors_are_all_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from(
        "cases:\n  - id: c1\n    behaviour: b\n    source: s\n    queues: {q: {}}\n    steps:\n",
    );
    for _ in 0..5000 {
        text.push_str("      - sleep: 5\n");
    }
    let path = write(dir.path(), "many.yaml", text.as_bytes());
    let out = run_bin(&["validate", &path], &root(), LIMIT);
    assert_eq!(out.code(), 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("sqsprobe: 5000 error(s)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains(&format!("{path}:5006:16")));
}

#[test]
fn a_closed_pipe_ends_the_output_of_list_and_validate_not_the_process() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from(
        "cases:\n  - id: c1\n    behaviour: b\n    source: s\n    queues: {q: {}}\n    steps:\n",
    );
    for _ in 0..2000 {
        text.push_str("      - sleep: 5\n");
    }
    let bad = write(dir.path(), "bad.yaml", text.as_bytes());
    // `list | head -0` and `validate 2>&1 | head -0`: the reading end is closed at once.
    // A panic would exit 101.
    for (args, want) in [(vec!["list"], 0), (vec!["validate", bad.as_str()], 2)] {
        let mut child = Command::new(common::bin())
            .args(&args)
            .current_dir(root())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        drop(child.stderr.take());
        let mut status = None;
        common::wait_until(&format!("{args:?} hangs"), LIMIT, || {
            status = child.try_wait().unwrap();
            status.is_some()
        });
        let status = status.expect("an exit status");
        assert_eq!(status.code(), Some(want), "{args:?}");
    }
}
