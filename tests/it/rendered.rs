//! What a reader sees, as insta snapshots (`tests/it/snapshots/`): the terminal summary and
//! the Markdown summary of fixed evidence files (`tests/fixtures/evidence/`), a run's terminal
//! output from start to end, a suite error sqsprobe positions in a file it was given, and the
//! `--help` of every command. A change shows as a `.snap.new` beside the snapshot: review it
//! with `cargo insta review` (or `INSTA_UPDATE=always cargo test --test it rendered::` and
//! `git diff tests/it/snapshots`).
//!
//! What differs from run to run (run ids, temporary folders, durations, real time) is replaced
//! by insta's filters before the comparison, so a snapshot is the same on every machine.

use crate::common;

use clap::CommandFactory;
use common::{root, run_bin};
use sqsprobe_core::evidence::format::Record;
use sqsprobe_core::evidence::read_evidence;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

fn evidence(name: &str) -> Vec<Record> {
    let path = root().join("tests/fixtures/evidence").join(name);
    read_evidence(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The run-dependent parts of a run's output: the run folder (a temporary folder and the
/// run id), each case's duration and the real time a virtual-clock run took.
fn run_filters() -> Vec<(&'static str, &'static str)> {
    vec![
        (r"run folder: \S+", "run folder: [RUN_DIR]"),
        (r"\[ *\d+\.\ds\]", "[DURATION]"),
        (r"it took \d+\.\d s of real time", "it took [REAL TIME]"),
    ]
}

#[test]
fn the_terminal_summary_of_fixed_evidence() {
    for (name, file) in [("playbook", "playbook.jsonl"), ("trials", "trials.jsonl")] {
        let records = evidence(file);
        let summary =
            sqsprobe::report::terminal::render(&records, "evidence/the-run-folder", 100, false);
        insta::assert_snapshot!(format!("terminal_summary_{name}"), summary);
    }
}

#[test]
fn the_markdown_summary_of_fixed_evidence() {
    for (name, file) in [("playbook", "playbook.jsonl"), ("trials", "trials.jsonl")] {
        let records = evidence(file);
        insta::assert_snapshot!(
            format!("markdown_summary_{name}"),
            sqsprobe::report::summary::render(&records)
        );
    }
}

/// A run with a failing and an inconclusive case, on the embedded emulator under the virtual
/// clock: the summary on stdout and the progress lines on stderr, as a terminal shows them
/// (without colour).
#[test]
fn a_run_prints_its_progress_and_summary() {
    let out = tempfile::tempdir().unwrap();
    let run = run_bin(
        &[
            "run",
            "tests/fixtures/verdicts.yaml",
            "--clock",
            "virtual",
            "--out",
            out.path().to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(run.code(), 4, "{}\n{}", run.stdout, run.stderr);
    insta::with_settings!({filters => run_filters()}, {
        insta::assert_snapshot!("run_verdicts_stdout", run.stdout);
        insta::assert_snapshot!("run_verdicts_stderr", run.stderr);
    });
}

/// Suite errors in a file named on the command line, wherever it is: each positioned in the
/// file with its line, caret and help (the broken suites of `tests/fixtures/broken/` pin the
/// rest, by path).
#[test]
fn suite_errors_name_the_file_they_were_given() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mistakes.yaml");
    std::fs::write(
        &path,
        "cases:\n  - id: c1\n    behaviour: b\n    source: s\n    queues: {q: {visibility_timeout: 1h}}\n    steps:\n      - send: {queue: q, body: x, delay: 16m}\n      - receive: {queue: q, as: A}\n      - delete: {attempt: B}\n",
    )
    .unwrap();
    let file = path.to_str().unwrap();
    let out = run_bin(&["validate", file], &root(), LIMIT);
    assert_eq!(out.code(), 2, "{}", out.stderr);
    let temporary = regex_escape(&dir.path().display().to_string());
    insta::with_settings!({filters => vec![(temporary.as_str(), "[TMP]")]}, {
        insta::assert_snapshot!("validate_errors_in_a_given_file", out.stderr);
    });
}

/// `s` as a regular expression matching itself.
fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$".contains(c);
            special.then_some('\\').into_iter().chain([c])
        })
        .collect()
}

/// `sqsprobe --help` and the `--help` of every command and subcommand, as the binary prints
/// them (clap wraps at 100 columns when stdout is not a terminal).
#[test]
fn every_command_has_its_help() {
    let mut paths: Vec<Vec<String>> = vec![Vec::new()];
    let mut stack: Vec<(Vec<String>, clap::Command)> =
        vec![(Vec::new(), sqsprobe::cli::Cli::command())];
    while let Some((path, command)) = stack.pop() {
        for sub in command.get_subcommands() {
            let mut at = path.clone();
            at.push(sub.get_name().to_string());
            paths.push(at.clone());
            stack.push((at, sub.clone()));
        }
    }
    paths.sort();
    assert!(paths.len() > 12, "{paths:?}");
    for path in paths {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = run_bin(&args, &root(), LIMIT);
        assert_eq!(help.code(), 0, "{args:?}: {}", help.stderr);
        let name = if path.is_empty() {
            "help".to_string()
        } else {
            format!("help_{}", path.join("_"))
        };
        insta::assert_snapshot!(name, help.stdout);
    }
}
