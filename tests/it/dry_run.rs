//! `sqsprobe run --dry-run`: what each selected case would create, wait and cost, printed
//! before anything is created. Against `--target aws` it needs no credentials and no network:
//! the child runs with an empty environment (no credentials, no profile file) and an endpoint
//! redirection to a loopback listener the test holds, which must see no connection, and the
//! `--out` folder must stay empty.

use crate::common;

use common::{bin, root};
use std::net::TcpListener;
use std::process::{Command, Stdio};

#[test]
fn a_dry_run_against_aws_prints_the_plan_and_touches_nothing() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let home = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let run = Command::new(bin())
        .args([
            "run",
            "--target",
            "aws",
            "--dry-run",
            "--include-slow",
            "--include-team-policy",
            "--out",
            out.path().to_str().unwrap(),
        ])
        .current_dir(root())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("NO_COLOR", "1")
        .env("AWS_ENDPOINT_URL", &endpoint)
        .env("AWS_ENDPOINT_URL_SQS", &endpoint)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stdout}\n{stderr}");
    let first = stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("dry run against aws (us-east-1): ")
            && first.ends_with("case(s); nothing has been created or sent"),
        "{first}"
    );
    // Every selected case has its line, the slow ones marked; the totals and the price follow.
    for id in [
        "dlq-retention-standard-keeps-send-time",
        "poll-short-may-miss",
        "chaos-stale-delete-rate",
    ] {
        assert!(stdout.lines().any(|l| l.starts_with(id)), "{id}:\n{stdout}");
    }
    let retention = stdout
        .lines()
        .find(|l| l.starts_with("dlq-retention-fifo-resets-at-move"))
        .unwrap();
    assert!(
        retention.contains("(2 FIFO)") && retention.ends_with("slow"),
        "{retention}"
    );
    assert!(stdout.contains("\ntotal: "), "{stdout}");
    assert!(stdout.contains("at AWS list prices"), "{stdout}");
    assert!(stdout.contains("\ncontested: "), "{stdout}");
    assert!(
        stdout.contains("\nteam policy: chaos-stale-delete-rate"),
        "{stdout}"
    );
    // Nothing reached the endpoint, nothing was written.
    assert!(
        listener
            .accept()
            .is_err_and(|e| e.kind() == std::io::ErrorKind::WouldBlock),
        "the dry run connected to the endpoint"
    );
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
}

#[test]
fn a_dry_run_names_its_target_and_keeps_the_selection() {
    let run = common::run_bin(
        &["run", "--dry-run", "--case", "poll-short-may-miss"],
        &root(),
        std::time::Duration::from_secs(60),
    );
    assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "dry run against the embedded emulator: 1 case(s); nothing has been created or sent"
    );
    assert!(
        lines[2].starts_with("poll-short-may-miss "),
        "{}",
        run.stdout
    );
}
