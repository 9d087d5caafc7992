//! The binary alone, copied out of the checkout into an empty folder: it carries the shipped
//! suites and target profiles (`build.rs`), runs them as `cargo run -- run` does in the
//! checkout, writes them out with `suites export`, lets a local `suites/` or a named path win,
//! and names its version and commit.

use crate::common;

use common::{Finished, bin, root, run_bin, wait_bounded};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// A temporary folder holding nothing but a copy of the binary.
fn alone() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let copy = dir.path().join("sqsprobe");
    std::fs::copy(bin(), &copy).expect("copy the binary");
    (dir, copy)
}

/// Runs `exe` with `args` in `cwd`.
fn run_copy(exe: &Path, args: &[&str], cwd: &Path) -> Finished {
    let child = Command::new(exe)
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the copied binary");
    wait_bounded(child, LIMIT)
}

#[test]
fn a_copy_alone_lists_every_shipped_case_as_the_checkout_does() {
    let (dir, exe) = alone();
    let here = run_copy(&exe, &["list"], dir.path());
    assert_eq!(here.code(), 0, "{}", here.stderr);
    let checkout = run_bin(&["list"], &root(), LIMIT);
    assert_eq!(checkout.code(), 0, "{}", checkout.stderr);
    assert_eq!(here.stdout, checkout.stdout);
    let valid = run_copy(&exe, &["validate"], dir.path());
    assert_eq!(valid.code(), 0, "{}", valid.stderr);
    assert!(valid.stdout.contains("valid"), "{}", valid.stdout);
    // Nothing was written next to it.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1);
}

#[test]
fn a_copy_alone_runs_the_shipped_suites_with_a_built_in_profile() {
    let (dir, exe) = alone();
    let out = run_copy(
        &exe,
        &[
            "run",
            "--case",
            "stale-handle-delete-while-b-holds-lease",
            "--case",
            "partial-batch-delete-one-invalid-handle",
            "--target-profile",
            "embedded",
            "--no-progress",
            "--out",
            "ev",
        ],
        dir.path(),
    );
    assert_eq!(out.code(), 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("2 passed"), "{}", out.stdout);
    // The cases read as they do in the checkout: under the checkout's paths.
    let run = common::single_run_dir(&dir.path().join("ev"));
    let evidence = std::fs::read_to_string(run.join("evidence.jsonl")).unwrap();
    assert!(
        evidence.contains("\"suites/stale-handle.yaml\"")
            && evidence.contains("\"suites/partial-batch.yaml\""),
        "{evidence}"
    );
    assert!(
        out.stderr.contains("built into the binary"),
        "{}",
        out.stderr
    );
    common::assert_checks(&run);
}

#[test]
fn export_writes_the_suites_and_a_local_folder_then_wins() {
    let (dir, exe) = alone();
    let out = run_copy(&exe, &["suites", "export"], dir.path());
    assert_eq!(out.code(), 0, "{}", out.stderr);
    // The exported folder is the checkout's, file for file.
    for rel in [
        "stale-handle.yaml",
        "conformance/leases.yaml",
        "chaos/acks.yaml",
    ] {
        assert_eq!(
            std::fs::read(dir.path().join("suites").join(rel)).unwrap(),
            std::fs::read(root().join("suites").join(rel)).unwrap(),
            "{rel}"
        );
    }
    // A second export refuses to overwrite; --force does.
    let again = run_copy(&exe, &["suites", "export"], dir.path());
    assert_eq!(again.code(), 1, "{}", again.stderr);
    assert!(again.stderr.contains("already exist"), "{}", again.stderr);
    let forced = run_copy(&exe, &["suites", "export", "--force"], dir.path());
    assert_eq!(forced.code(), 0, "{}", forced.stderr);

    // The local suites/ is what runs now: cut it to one file and only its cases are listed.
    let suites = dir.path().join("suites");
    std::fs::remove_dir_all(suites.join("conformance")).unwrap();
    std::fs::remove_dir_all(suites.join("chaos")).unwrap();
    std::fs::remove_file(suites.join("lease-expiry.yaml")).unwrap();
    std::fs::remove_file(suites.join("partial-batch.yaml")).unwrap();
    let listed = run_copy(&exe, &["list"], dir.path());
    assert_eq!(listed.code(), 0, "{}", listed.stderr);
    assert!(
        listed.stdout.contains("in 1 suite file(s)"),
        "{}",
        listed.stdout
    );
    // A named path wins too, and a missing one is an error, not the built-in suites.
    let named = run_copy(&exe, &["list", "nothing-here"], dir.path());
    assert_eq!(named.code(), 1, "{}", named.stderr);
    assert!(named.stderr.contains("no such file"), "{}", named.stderr);
}

#[test]
fn version_names_the_version_and_the_commit() {
    let out = run_bin(&["--version"], &root(), LIMIT);
    assert_eq!(out.code(), 0, "{}", out.stderr);
    let line = out.stdout.trim();
    let version = env!("CARGO_PKG_VERSION");
    let commit = line
        .strip_prefix(&format!("sqsprobe {version} (commit "))
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{line}"));
    // The checkout the tests run in is a git checkout: its HEAD, not `unknown`.
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(root())
        .output()
        .expect("git");
    if head.status.success() {
        let head = String::from_utf8_lossy(&head.stdout);
        assert_eq!(commit.len(), 12, "{line}");
        assert!(head.starts_with(commit), "{line} vs HEAD {head}");
    }
}
