//! `sqsprobe validate` and `list` on real files: positioned errors (the broken suites of
//! `tests/fixtures/broken/` against their expected stderr), exit codes.

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

/// The broken suites of `tests/fixtures/broken/`, in hurl's shape: beside each `NAME.yaml`,
/// `NAME.err` is all `sqsprobe validate tests/fixtures/broken/NAME.yaml` prints on stderr (each
/// error at its position, the source line, the caret, the help) and `NAME.exit` its exit
/// code. A new broken suite is a new file; `SQSPROBE_BLESS=1 cargo test --test it
/// broken_suites` writes the `.err` and `.exit` of every case from what the binary prints, to
/// be reviewed as a diff.
#[test]
fn broken_suites_print_what_their_err_files_say() {
    let dir = root().join("tests/fixtures/broken");
    let bless = std::env::var_os("SQSPROBE_BLESS").is_some();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/fixtures/broken")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    let suites: Vec<&str> = names
        .iter()
        .filter_map(|n| n.strip_suffix(".yaml"))
        .collect();
    // Every expectation belongs to a suite: a renamed suite does not leave its files behind.
    for name in &names {
        let stem = name
            .rsplit_once('.')
            .map_or(name.as_str(), |(stem, _)| stem);
        assert!(
            suites.contains(&stem),
            "{name} has no {stem}.yaml beside it"
        );
    }
    assert!(suites.len() >= 7, "{suites:?}");
    let mut differ = Vec::new();
    for name in &suites {
        let file = format!("tests/fixtures/broken/{name}.yaml");
        let out = run_bin(&["validate", &file], &root(), LIMIT);
        let (err_file, exit_file) = (
            dir.join(format!("{name}.err")),
            dir.join(format!("{name}.exit")),
        );
        if bless {
            std::fs::write(&err_file, &out.stderr).unwrap();
            std::fs::write(&exit_file, format!("{}\n", out.code())).unwrap();
            continue;
        }
        let read = |path: &std::path::Path| {
            std::fs::read_to_string(path).unwrap_or_else(|e| {
                panic!(
                    "{}: {e}; write it with SQSPROBE_BLESS=1 cargo test --test it broken_suites",
                    path.display()
                )
            })
        };
        let (want_err, want_exit) = (read(&err_file), read(&exit_file));
        let want_exit: i32 = want_exit.trim().parse().expect("an exit code");
        if out.code() != want_exit {
            differ.push(format!(
                "{file}: exit {} (expected {want_exit})",
                out.code()
            ));
        }
        if out.stderr != want_err {
            let at = out
                .stderr
                .lines()
                .zip(want_err.lines())
                .position(|(got, want)| got != want)
                .unwrap_or(out.stderr.lines().count().min(want_err.lines().count()));
            differ.push(format!(
                "{file}: stderr differs from {name}.err at line {}:\n{}",
                at + 1,
                out.stderr
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "{}\n(SQSPROBE_BLESS=1 cargo test --test it broken_suites rewrites the expectations; \
         review them with git diff)",
        differ.join("\n\n")
    );
}

#[test]
fn run_refuses_an_invalid_suite_before_touching_any_target() {
    // No target is reachable on this port; the run must stop at validation (exit 2), not 3.
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}");
    let out = run_bin(
        &[
            "run",
            "tests/fixtures/broken/typos.yaml",
            "--endpoint-url",
            &url,
        ],
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
