//! `sqsprobe audit` on real consumer libraries, installed pinned from their registries by
//! `scripts/consumer-libs`: Celery with kombu's SQS transport, dramatiq_sqs, Doist's
//! sqs-workers (PyPI) and bbc's sqs-consumer (npm), each used as its documentation shows
//! (examples/consumers/<library>/). Each correct recipe stays clean over 20 seeds with chaos on
//! and `--nemesis kill`; each documented misuse is flagged with its finding and decision, and
//! with nothing else: a lapsed lease is a lease finding (HOLD), never blamed on a handle cache;
//! acknowledge-first is `ack_before_commit`, and under `--nemesis kill` lost work; a naive
//! handler under redelivery commits twice. Every assertion reads the audit's facts
//! (audit.json), never the clock.
//!
//! A library not installed is skipped with a message, unless `CI` or
//! `SQSPROBE_REQUIRE_CONSUMER_LIBS` is set (`.ci/run` sets both): there it fails.

use crate::common::{read_json, root, run_bin};
use std::path::{Path, PathBuf};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(150);

/// SQS's legal-but-rare behaviour, as the correct Python example is held to it.
const CHAOS: &str = "duplicate=0.3,redeliver-after-delete=0.3,stale-delete-keeps=0.5,reorder=0.5";

/// One library: its recipe's folder under examples/consumers/, what shows it installed, and
/// the command line its documentation gives, with a misuse's flag or environment added.
#[derive(Clone, Copy)]
enum Lib {
    Celery,
    Dramatiq,
    SqsWorkers,
    SqsConsumer,
}

impl Lib {
    fn folder(self) -> &'static str {
        match self {
            Lib::Celery => "celery",
            Lib::Dramatiq => "dramatiq",
            Lib::SqsWorkers => "sqs-workers",
            Lib::SqsConsumer => "sqs-consumer",
        }
    }

    /// The file whose presence says the library is installed.
    fn installed_marker(self) -> PathBuf {
        let root = root();
        match self {
            Lib::Celery => root.join(".consumer-libs/celery/bin/celery"),
            Lib::Dramatiq => root.join(".consumer-libs/dramatiq/bin/dramatiq"),
            Lib::SqsWorkers => root.join(".consumer-libs/sqs-workers/bin/python"),
            Lib::SqsConsumer => {
                root.join("examples/consumers/sqs-consumer/node_modules/sqs-consumer/package.json")
            }
        }
    }

    fn plan(self) -> PathBuf {
        root()
            .join("examples/consumers")
            .join(self.folder())
            .join("plan.yaml")
    }

    /// The recipe's command (as docs/audit.md#your-framework gives it), run from the
    /// repository's root; `misuse` is the recipe's variable ORDERS_MISUSE (Celery, dramatiq)
    /// or its flag (sqs-workers, sqs-consumer).
    fn command(self, misuse: Option<&str>) -> Vec<String> {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let env = |m: Option<&str>| match m {
            Some(m) => s(&["env", &format!("ORDERS_MISUSE={m}")]),
            None => Vec::new(),
        };
        let flag = |m: Option<&str>| m.map(|m| s(&[m])).unwrap_or_default();
        match self {
            Lib::Celery => [
                env(misuse),
                s(&[
                    ".consumer-libs/celery/bin/celery",
                    "--workdir",
                    "examples/consumers/celery",
                    "-A",
                    "tasks",
                    "worker",
                    "--concurrency",
                    "2",
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                ]),
            ]
            .concat(),
            Lib::Dramatiq => [
                env(misuse),
                s(&[
                    ".consumer-libs/dramatiq/bin/dramatiq",
                    "--path",
                    "examples/consumers/dramatiq",
                    "--processes",
                    "1",
                    "--threads",
                    "2",
                    "tasks",
                ]),
            ]
            .concat(),
            Lib::SqsWorkers => [
                s(&[
                    ".consumer-libs/sqs-workers/bin/python",
                    "examples/consumers/sqs-workers/worker.py",
                ]),
                flag(misuse),
            ]
            .concat(),
            Lib::SqsConsumer => [
                s(&["node", "examples/consumers/sqs-consumer/consumer.mjs"]),
                flag(misuse),
            ]
            .concat(),
        }
    }

    /// Whether the library is installed; when it is not, skipped with a message — unless this
    /// is CI (or `SQSPROBE_REQUIRE_CONSUMER_LIBS` is set), where that fails the test.
    fn installed(self) -> bool {
        if self.installed_marker().exists() {
            return true;
        }
        let required = std::env::var_os("CI").is_some()
            || std::env::var_os("SQSPROBE_REQUIRE_CONSUMER_LIBS").is_some();
        assert!(
            !required,
            "{} is not installed ({} is missing): run scripts/consumer-libs (scripts/test does)",
            self.folder(),
            self.installed_marker().display()
        );
        eprintln!(
            "skipped: {} is not installed (run scripts/consumer-libs; scripts/test does)",
            self.folder()
        );
        false
    }
}

/// Runs `sqsprobe audit --plan PLAN FLAGS -- COMMAND` from the repository's root into
/// `out/run_id` (1 s idle, at most 90 s): exit code, output, and `audit.json` (null when none
/// was written).
fn audit(
    lib: Lib,
    misuse: Option<&str>,
    flags: &[&str],
    out: &Path,
    run_id: &str,
) -> (i32, String, serde_json::Value) {
    let plan = lib.plan();
    let mut args = vec![
        "audit",
        "--idle",
        "1s",
        "--max-duration",
        "90s",
        "--plan",
        plan.to_str().unwrap(),
    ];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--out", out.to_str().unwrap(), "--run-id", run_id, "--"]);
    let command = lib.command(misuse);
    args.extend(command.iter().map(String::as_str));
    let done = run_bin(&args, &root(), LIMIT);
    let json = out.join(run_id).join("audit.json");
    let value = if json.exists() {
        read_json(&json)
    } else {
        serde_json::Value::Null
    };
    let log = std::fs::read_to_string(out.join(run_id).join("consumer.log")).unwrap_or_default();
    let tail: Vec<&str> = log.lines().rev().take(30).collect();
    let said = format!(
        "{}\n{}\nconsumer.log, last lines (newest first):\n{}",
        done.stdout,
        done.stderr,
        tail.join("\n")
    );
    (done.code(), said, value)
}

/// The (kind, decision) of every finding.
fn findings(audit: &serde_json::Value) -> Vec<(String, String)> {
    audit["findings"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|f| {
                    (
                        f["kind"].as_str().unwrap_or_default().to_string(),
                        f["decision"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The correct recipe, killed and started again at seeded points with chaos on, over 20
/// seeds (four audits at a time): exit 0, clean, the work checked through the ledger, and
/// the nemesis struck (a kill at a delete, each kill followed by a start).
fn clean_over_20_seeds(lib: Lib) {
    if !lib.installed() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let results = crate::audit::four_at_a_time((1..=20).collect(), |seed: u64| {
        let seed_s = seed.to_string();
        let run_id = format!("{}-kill-{seed}", lib.folder());
        let flags = ["--nemesis", "kill", "--chaos", CHAOS, "--seed", &seed_s];
        (seed, audit(lib, None, &flags, out.path(), &run_id))
    });
    for (seed, (code, said, audit)) in results {
        let what = format!("{} seed {seed}", lib.folder());
        assert_eq!(code, 0, "{what}: {said}");
        assert_eq!(audit["clean"], true, "{what}: {audit}");
        assert_eq!(audit["unchecked"], serde_json::json!([]), "{what}: {audit}");
        crate::audit_nemesis::assert_struck(&audit, &what);
    }
}

#[test]
fn celery_recipe_is_clean_under_chaos_and_kill_over_20_seeds() {
    clean_over_20_seeds(Lib::Celery);
}

#[test]
fn dramatiq_recipe_is_clean_under_chaos_and_kill_over_20_seeds() {
    clean_over_20_seeds(Lib::Dramatiq);
}

#[test]
fn sqs_workers_recipe_is_clean_under_chaos_and_kill_over_20_seeds() {
    clean_over_20_seeds(Lib::SqsWorkers);
}

#[test]
fn sqs_consumer_recipe_is_clean_under_chaos_and_kill_over_20_seeds() {
    clean_over_20_seeds(Lib::SqsConsumer);
}

/// One documented misuse: exit 4, and every finding is `kind` with `decision` — at least
/// one per message for a misuse every message goes through (`all`), at least one otherwise.
fn flagged_as(lib: Lib, misuse: &str, flags: &[&str], kind: &str, decision: &str) {
    flagged_with(lib, misuse, flags, &[(kind, decision)], kind);
}

/// One documented misuse: exit 4, every finding one of `allowed`, and `must` among them.
fn flagged_with(lib: Lib, misuse: &str, flags: &[&str], allowed: &[(&str, &str)], must: &str) {
    let out = tempfile::tempdir().unwrap();
    let run_id = format!("{}{misuse}", lib.folder()).replace(['-', '='], "");
    let (code, said, audit) = audit(lib, Some(misuse), flags, out.path(), &run_id);
    let what = format!("{} {misuse} {flags:?}", lib.folder());
    assert_eq!(code, 4, "{what}: {said}");
    let found = findings(&audit);
    assert!(
        found.iter().any(|(k, _)| k == must),
        "{what}: expected {must}, got {found:?}\n{said}"
    );
    for (k, d) in &found {
        assert!(
            allowed.iter().any(|(ak, ad)| ak == k && ad == d),
            "{what}: {k} ({d}) is not among {allowed:?}\n{said}"
        );
    }
}

const LEASE: (&str, &str) = ("lease_expired_mid_handler", "HOLD");
const DUPLICATE: (&str, &str) = ("duplicate_commit", "RECONCILE");
const ACK_FIRST: (&str, &str) = ("ack_before_commit", "REPAIR");
const LOST: (&str, &str) = ("lost_work", "REPAIR");
const REDELIVER: [&str; 4] = ["--chaos", "redeliver-after-delete=1", "--seed", "4"];

/// A lease that lapses under a long handler with no heartbeat is a lease finding, HOLD, and
/// nothing is blamed on a handle cache: every library deletes with each delivery's own handle.
#[test]
fn a_lapsed_lease_is_a_lease_finding_in_every_library() {
    for (lib, misuse) in [
        (Lib::Celery, "long-task"),
        (Lib::Dramatiq, "long-actor"),
        (Lib::SqsWorkers, "--slow"),
        (Lib::SqsConsumer, "--no-heartbeat"),
    ] {
        if lib.installed() {
            flagged_as(lib, misuse, &[], LEASE.0, LEASE.1);
        }
    }
}

/// A handler that does not look its key up in the ledger commits a redelivery again.
#[test]
fn a_naive_handler_under_redelivery_commits_twice_in_every_library() {
    for lib in [
        Lib::Celery,
        Lib::Dramatiq,
        Lib::SqsWorkers,
        Lib::SqsConsumer,
    ] {
        if lib.installed() {
            let misuse = match lib {
                Lib::Celery | Lib::Dramatiq => "naive",
                Lib::SqsWorkers | Lib::SqsConsumer => "--naive",
            };
            flagged_as(lib, misuse, &REDELIVER, DUPLICATE.0, DUPLICATE.1);
        }
    }
}

/// Acknowledging before the work — Celery's default `task_acks_late = False` (the prefork
/// worker deletes as a child takes the task), and an sqs-consumer handler that does not await
/// its work — is `ack_before_commit`; killed at a delete, the work of that message is lost.
#[test]
fn acknowledge_first_is_ack_before_commit_and_lost_work_under_kill() {
    for (lib, misuse) in [(Lib::Celery, "ack-first"), (Lib::SqsConsumer, "--no-await")] {
        if !lib.installed() {
            continue;
        }
        flagged_as(lib, misuse, &[], ACK_FIRST.0, ACK_FIRST.1);
        for seed in ["3", "7"] {
            flagged_with(
                lib,
                misuse,
                &["--nemesis", "kill", "--seed", seed],
                &[ACK_FIRST, LOST],
                LOST.0,
            );
        }
    }
}

/// Celery acknowledges a task that raised (`task_acks_on_failure_or_timeout`, on by default),
/// late acknowledgement or not: each message is deleted with its work undone. The recipe
/// creates its ledger when the worker starts, so the audit sees the channel and finds the
/// work lost, instead of calling it unchecked.
#[test]
fn a_celery_task_that_fails_is_acknowledged_and_its_work_lost() {
    if Lib::Celery.installed() {
        flagged_with(Lib::Celery, "fails", &[], &[ACK_FIRST, LOST], LOST.0);
    }
}
