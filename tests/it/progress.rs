//! Live progress: a terminal gets the board of running cases (phase, time left),
//! redrawn in place; a pipe (a CI log) gets plain finished lines with no escape sequence and
//! an uncut summary.

use crate::common;

use common::{bin, root, run_bin, wait_bounded};
use std::process::{Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn a_pipe_gets_plain_finished_lines_and_whole_reasons() {
    let out = tempfile::tempdir().unwrap();
    let run = run_bin(
        &[
            "run",
            "suites/stale-handle.yaml",
            "--out",
            out.path().to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stderr.contains('\u{1b}'), "{:?}", run.stderr);
    assert!(!run.stdout.contains('\u{1b}'), "{:?}", run.stdout);
    assert!(run.stderr.contains("(1/2)") && run.stderr.contains("(2/2)"));
    assert!(!run.stderr.contains("RUNNING"), "{}", run.stderr);
    assert!(
        !run.stdout.contains('…'),
        "nothing is cut in a log: {}",
        run.stdout
    );
}

/// Runs `sqsprobe run suites/stale-handle.yaml` with `extra` on a pseudo-terminal (util-linux
/// `script`) and returns what the terminal showed, or `None` when `script` is not installed.
fn on_a_terminal(extra: &str) -> Option<String> {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: `script` (util-linux) is not installed");
        return None;
    }
    let out = tempfile::tempdir().unwrap();
    let typescript = out.path().join("typescript");
    let command = format!(
        "{} run suites/stale-handle.yaml {extra} --out {}",
        bin().display(),
        out.path().display()
    );
    let child = Command::new("script")
        .args(["-qec", &command])
        .arg(&typescript)
        .current_dir(root())
        .env("COLUMNS", "120")
        .env("TERM", "xterm")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start script");
    let done = wait_bounded(child, LIMIT);
    assert_eq!(done.code(), 0, "{}", done.stderr);
    Some(String::from_utf8_lossy(&std::fs::read(&typescript).unwrap()).into_owned())
}

#[test]
fn a_terminal_gets_the_board_of_running_cases() {
    let Some(shown) = on_a_terminal("") else {
        return;
    };
    assert!(shown.contains("RUNNING"), "{shown}");
    assert!(
        shown.contains("sleep: ") && shown.contains("observe: "),
        "the phases and the time left in them: {shown}"
    );
    assert!(shown.contains("\u{1b}[J"), "the board is redrawn in place");
    // The board is gone at the end: the last thing printed is the summary.
    let last_clear = shown.rfind("\u{1b}[J").unwrap();
    assert!(
        shown[last_clear..].contains("2 passed"),
        "{}",
        &shown[last_clear..]
    );
    assert!(!shown[last_clear..].contains("RUNNING"));
}

#[test]
fn no_progress_keeps_a_terminal_plain() {
    let Some(shown) = on_a_terminal("--no-progress") else {
        return;
    };
    assert!(!shown.contains("RUNNING"), "{shown}");
    assert!(shown.contains("(2/2)"), "{shown}");
}
