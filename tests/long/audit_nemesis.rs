//! `sqsprobe audit --nemesis` on the example consumers: an acknowledge-first consumer loses a
//! message's work at every kill, whatever its handler's speed; the correct consumers (Python,
//! JavaScript, Rust) stay clean under kills and chaos over many seeds; a pause past the lease
//! lapses it for a consumer without a heartbeat. Every assertion reads the audit's facts
//! (audit.json, trials.json, evidence.jsonl), never the clock.

use crate::audit::{audit_command, kinds, python, rust_consumer};
use crate::common::{read_json, root, run_bin};
use std::path::Path;
use std::time::Duration;

/// The `nemesis` rows of an audit folder's evidence, in order: (act, data).
fn nemesis_rows(dir: &Path) -> Vec<(String, serde_json::Value)> {
    std::fs::read_to_string(dir.join("evidence.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["type"] == "nemesis")
        .map(|r| {
            (
                r["data"]["act"].as_str().unwrap().to_string(),
                r["data"].clone(),
            )
        })
        .collect()
}

fn example(name: &str) -> String {
    root()
        .join("examples/consumers/python")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

/// Deleting before the work is at-most-once: the kill at a delete lands after the delete took
/// and before the consumer hears of it, so the work of that message is lost in every trial —
/// with a handler that commits at once as with a slow one.
#[test]
fn an_acknowledge_first_consumer_loses_work_under_kill_in_every_trial_whatever_its_speed() {
    let out = tempfile::tempdir().unwrap();
    let py = python();
    let script = example("delete_before_work.py");
    for (work, run_id) in [("0", "ack-first-fast"), ("0.3", "ack-first-slow")] {
        let (code, said, _) = audit_command(
            &[&py, &script, "--work-seconds", work],
            &["--nemesis", "kill", "--trials", "3", "--seed", "11"],
            out.path(),
            run_id,
        );
        assert_eq!(code, 4, "{said}");
        let dir = out.path().join(run_id);
        let rates = read_json(&dir.join("trials.json"));
        assert_eq!(rates["kinds"]["lost_work"]["found"], 3, "{run_id}: {rates}");
        for k in 1..=3 {
            let trial = dir.join(format!("trial-{k}"));
            let audit = read_json(&trial.join("audit.json"));
            let lost: Vec<&serde_json::Value> = audit["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["kind"] == "lost_work")
                .collect();
            assert!(!lost.is_empty(), "{run_id} trial {k}: {audit}");
            assert!(lost.iter().all(|f| f["decision"] == "REPAIR"), "{audit}");
            assert!(
                lost[0]["detail"]
                    .as_str()
                    .unwrap()
                    .contains("the nemesis killed the consumer at delete"),
                "{}",
                lost[0]
            );
            // Every kill is followed by a start of the same command.
            let rows = nemesis_rows(&trial);
            let kills = rows.iter().filter(|(a, _)| a == "kill").count();
            let restarts: Vec<u64> = rows
                .iter()
                .filter(|(a, _)| a == "restart")
                .map(|(_, d)| d["start"].as_u64().unwrap())
                .collect();
            assert!(kills >= 1, "{rows:?}");
            assert_eq!(
                restarts,
                (2..=kills as u64 + 1).collect::<Vec<_>>(),
                "{rows:?}"
            );
            assert_eq!(audit["ended"]["nemesis"]["spec"], "kill=2");
            // The report draws them on the timeline.
            let page = std::fs::read_to_string(trial.join("report.html")).unwrap();
            assert!(
                page.contains("<line class=\"nemesis kill\"")
                    && page.contains("<line class=\"nemesis restart\""),
                "{run_id} trial {k}"
            );
        }
        assert!(said.contains("lost_work in 3 of 3 trials"), "{said}");
    }
}

/// The correct adapter deletes after its commit and reads its ledger when it starts: killed
/// anywhere and started again, with SQS's legal-but-rare behaviour on, it does every
/// message's work exactly once and nothing is found.
#[test]
fn the_correct_python_consumer_stays_clean_under_kill_and_chaos_over_many_seeds() {
    let out = tempfile::tempdir().unwrap();
    let chaos = "duplicate=0.3,redeliver-after-delete=0.3,stale-delete-keeps=0.5,reorder=0.5";
    let command = [python(), example("correct.py")];
    clean_under_kill_over_20_seeds("python", &command, chaos, out.path());
}

/// `command`, audited under `--nemesis kill` and `chaos` over seeds 1 to 20 (four at a time),
/// with a lease it outlasts by seconds: clean every time, and struck every time.
fn clean_under_kill_over_20_seeds(name: &str, command: &[String], chaos: &str, out: &Path) {
    let command: Vec<&str> = command.iter().map(String::as_str).collect();
    let results = crate::audit::four_at_a_time((1..=20).collect(), |seed: u64| {
        let seed_s = seed.to_string();
        let run_id = format!("{name}-kill-{seed}");
        let flags = [
            "--nemesis",
            "kill",
            "--chaos",
            chaos,
            "--seed",
            &seed_s,
            "--visibility-timeout",
            crate::audit::CLEAN_LEASE,
        ];
        let got = audit_command(&command, &flags, out, &run_id);
        (run_id, got)
    });
    for (run_id, (code, said, audit)) in results {
        assert_eq!(code, 0, "{run_id}: {said}");
        assert_eq!(audit["clean"], true, "{run_id}: {audit}");
        assert_struck(&audit, &run_id);
    }
}

/// The nemesis struck: at least one kill, the first at a delete, each followed by a restart.
pub(crate) fn assert_struck(audit: &serde_json::Value, what: &str) {
    let acts = audit["ended"]["nemesis"]["acts"].as_array().unwrap();
    let of = |act: &str| acts.iter().filter(|a| a["act"] == act).count();
    assert!(of("kill") >= 1, "{what}: {audit}");
    assert_eq!(of("kill"), of("restart"), "{what}: {audit}");
    assert!(
        acts.iter()
            .any(|a| a["act"] == "kill" && a["on"] == "delete"),
        "{what}: {audit}"
    );
}

/// Each SDK: the correct adapters in JavaScript and Rust, killed and started again with
/// chaos on, are clean over the same 20 seeds as the Python one.
#[test]
fn the_correct_javascript_and_rust_consumers_stay_clean_under_kill_and_chaos() {
    let out = tempfile::tempdir().unwrap();
    let rust = rust_consumer();
    let js = root().join("examples/consumers/javascript");
    assert!(
        js.join("node_modules/@aws-sdk/client-sqs").exists(),
        "run scripts/node-consumers (scripts/test does)"
    );
    let correct = js.join("correct.mjs");
    let chaos = "duplicate=0.3,redeliver-after-delete=0.3,stale-delete-keeps=0.5,reorder=0.5";
    let consumers: [(&str, Vec<String>); 2] = [
        ("rust", vec![rust.to_str().unwrap().to_string()]),
        (
            "js",
            vec!["node".to_string(), correct.to_str().unwrap().to_string()],
        ),
    ];
    for (name, command) in &consumers {
        clean_under_kill_over_20_seeds(name, command, chaos, out.path());
    }
}

/// A pause past the lease: the correct adapter has no heartbeat, so the attempt it was
/// handling when it was stopped is acknowledged after its lease (HOLD), and the finding says
/// the nemesis paused it. Its work is still done once.
#[test]
fn a_pause_past_the_lease_lapses_it_for_a_consumer_without_a_heartbeat() {
    let out = tempfile::tempdir().unwrap();
    let py = python();
    let script = example("correct.py");
    let (code, said, audit) = audit_command(
        &[&py, &script],
        &["--nemesis", "pause", "--seed", "2"],
        out.path(),
        "pause",
    );
    assert_eq!(code, 4, "{said}");
    let found = kinds(&audit);
    assert!(
        found
            .iter()
            .all(|(k, d)| k == "lease_expired_mid_handler" && d == "HOLD"),
        "{found:?}"
    );
    assert!(!found.is_empty(), "{said}");
    assert!(
        audit["findings"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("the nemesis had paused the consumer (SIGSTOP)"),
        "{audit}"
    );
    let rows = nemesis_rows(&out.path().join("pause"));
    let acts: Vec<&str> = rows.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(acts, ["pause", "resume"], "{rows:?}");
    // Continued once the paused attempt's lease had ended.
    let (paused, resumed) = (&rows[0].1, &rows[1].1);
    assert!(
        resumed["at_ms"].as_u64().unwrap() > paused["at_ms"].as_u64().unwrap() + 1_000,
        "{rows:?}"
    );
    assert!(
        audit["per_message"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["commits"] == 1),
        "{audit}"
    );
    let page = std::fs::read_to_string(out.path().join("pause/report.html")).unwrap();
    assert!(page.contains("<rect class=\"pause\""));
}

/// A nemesis the command line cannot read is refused before anything starts, with a
/// did-you-mean; one that never strikes (a consumer that makes no call) cannot conclude.
#[test]
fn a_bad_nemesis_is_refused_and_one_that_never_strikes_concludes_nothing() {
    let out = tempfile::tempdir().unwrap();
    let done = run_bin(
        &["audit", "--nemesis", "kil", "--", "true"],
        &root(),
        Duration::from_secs(60),
    );
    assert_eq!(done.code(), 1, "{}", done.stderr);
    assert!(
        done.stderr.contains("did you mean `kill`"),
        "{}",
        done.stderr
    );

    let py = python();
    let done = run_bin(
        &[
            "audit",
            "--messages",
            "2",
            "--nemesis",
            "kill",
            "--idle",
            "1s",
            "--max-duration",
            "3s",
            "--out",
            out.path().to_str().unwrap(),
            "--run-id",
            "idle",
            "--",
            &py,
            "-c",
            "import threading; threading.Event().wait()",
        ],
        &root(),
        Duration::from_secs(60),
    );
    let said = format!("{}\n{}", done.stdout, done.stderr);
    assert_eq!(done.code(), 5, "never acknowledged, never struck: {said}");
    let audit = read_json(&out.path().join("idle/audit.json"));
    assert_eq!(audit["ended"]["concluded"], false, "{audit}");
    assert!(
        audit["ended"]["how"]
            .as_str()
            .unwrap()
            .ends_with("the nemesis never struck"),
        "{audit}"
    );
    assert!(said.contains("nemesis kill=2: never acted"), "{said}");
}
