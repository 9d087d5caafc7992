//! `sqsprobe history` on real run folders: three "nights" of one multi-trial case on
//! the embedded emulator, the last one different; the pooled counts and interval, first and
//! last run, and the flag on the newest run (Fisher's exact test), in text and JSON; bad paths.

use crate::common;

use common::{root, run_bin};
use std::path::Path;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// Runs `suite` once into `out` (its own run folder under it).
fn night(suite: &str, out: &Path) {
    seeded_night(suite, out, &[]);
}

/// Runs `suite` once into `out` with extra flags (`--seed N`).
fn seeded_night(suite: &str, out: &Path, extra: &[&str]) {
    let mut args = vec!["run", suite, "--quiet", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let run = run_bin(&args, &root(), LIMIT);
    assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
}

fn history(args: &[&str]) -> common::Finished {
    let mut all = vec!["history"];
    all.extend_from_slice(args);
    run_bin(&all, &root(), LIMIT)
}

#[test]
fn a_newest_night_unlike_the_others_is_flagged() {
    let nights = tempfile::tempdir().unwrap();
    night("tests/fixtures/history-calm.yaml", nights.path());
    night("tests/fixtures/history-calm.yaml", nights.path());
    night("tests/fixtures/history-drift.yaml", nights.path());
    let parent = nights.path().to_str().unwrap();

    let text = history(&[parent]);
    assert_eq!(text.code(), 0, "{}", text.stderr);
    let out = &text.stdout;
    assert!(
        out.starts_with("3 runs with multi-trial cases, from "),
        "{out}"
    );
    assert!(out.contains("history-delete  embedded  us-east-1"), "{out}");
    assert!(
        out.contains("  3 runs, 24 trials (0 unknown); first "),
        "{out}"
    );
    assert!(out.contains("observed_redelivery          8/24 ["), "{out}");
    assert!(
        out.contains("newest run: observed_redelivery 8/8 against 0/16 before — CHANGED"),
        "{out}"
    );
    assert!(out.contains("1 case changed"), "{out}");
    assert_eq!(history(&[parent, "--fail-on-change"]).code(), 4);

    let json = history(&[parent, "--json"]);
    assert_eq!(json.code(), 0);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 3);
    let g = &v["groups"][0];
    assert_eq!(g["case"], "history-delete");
    assert_eq!(
        (g["n"].as_u64(), g["conclusive"].as_u64()),
        (Some(24), Some(24))
    );
    assert_eq!(g["counts"]["observed_redelivery"], 8);
    let c = &g["comparisons"][0];
    assert_eq!(c["class"], "observed_redelivery");
    assert_eq!(c["newest"], serde_json::json!([8, 0, 8]));
    assert_eq!(c["others"], serde_json::json!([0, 0, 16]));
    let p = c["p_range"][1].as_f64().unwrap();
    assert!(p < 0.01 && c["p_range"][0].as_f64() == Some(p), "{c}");
    assert_eq!(c["changed"], true);
    assert_eq!(c["reading"], "changed");
    assert_eq!(
        (v["family"].as_u64(), v["alpha"].as_f64()),
        (Some(1), Some(0.01))
    );

    // The two calm nights alone agree (run folders are named by their start, so the first two
    // by name are the calm ones); folders may be named one by one, each counted once.
    let mut dirs: Vec<String> = std::fs::read_dir(nights.path())
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    dirs.sort();
    let calm = history(&[&dirs[0], &dirs[1], &dirs[1], "--fail-on-change"]);
    assert_eq!(calm.code(), 0, "{}", calm.stdout);
    assert!(
        calm.stdout.contains("  2 runs, 16 trials"),
        "{}",
        calm.stdout
    );
    assert!(calm.stdout.contains("— no change"), "{}", calm.stdout);
}

#[test]
fn paths_without_runs_are_refused() {
    let empty = tempfile::tempdir().unwrap();
    let none = history(&[empty.path().to_str().unwrap()]);
    assert_eq!(none.code(), 1);
    assert!(none.stderr.contains("no run folder"), "{}", none.stderr);
    let missing = history(&["no/such/folder"]);
    assert_eq!(missing.code(), 1);
    assert!(
        missing.stderr.contains("not a folder"),
        "{}",
        missing.stderr
    );
    // A damaged run folder is skipped with a warning, not fatal; alone it is an error.
    let bad = empty.path().join("bad-run");
    std::fs::create_dir(&bad).unwrap();
    std::fs::write(bad.join("evidence.jsonl"), "{not json}\n").unwrap();
    let damaged = history(&[empty.path().to_str().unwrap()]);
    assert_eq!(damaged.code(), 3, "{}", damaged.stderr);
    assert!(damaged.stderr.contains("skipped"), "{}", damaged.stderr);
}

/// Each trial is pooled once. Two partitions of one `--run-id` are two runs; their
/// merged folder is the same trials again and is counted instead of them, not beside them.
#[test]
fn a_merge_and_its_partitions_pool_each_trial_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = |name: &str| dir.path().join(name).display().to_string();
    for k in ["1/2", "2/2"] {
        let run = run_bin(
            &[
                "run",
                "tests/fixtures/history-two.yaml",
                "--quiet",
                "--partition",
                k,
                "--run-id",
                "nightly-7",
                "--out",
                &out(&format!("part{}", &k[..1])),
            ],
            &root(),
            LIMIT,
        );
        assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
    }
    let parts: Vec<String> = ["part1", "part2"]
        .iter()
        .map(|p| format!("{}/nightly-7", out(p)))
        .collect();
    // The partitions alone: both cases, 3 trials each (the second partition is not lost
    // for sharing the first's run id).
    let alone = history(&[&parts[0], &parts[1], "--json"]);
    assert_eq!(alone.code(), 0, "{}", alone.stderr);
    let v: serde_json::Value = serde_json::from_str(&alone.stdout).unwrap();
    let ns: Vec<u64> = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["n"].as_u64().unwrap())
        .collect();
    assert_eq!(ns, [3, 3], "{}", alone.stdout);

    let merged = out("merged");
    let report = run_bin(
        &["report", &parts[0], &parts[1], "--out", &merged],
        &root(),
        LIMIT,
    );
    assert_eq!(report.code(), 0, "{}\n{}", report.stdout, report.stderr);
    let all = history(&[&parts[0], &parts[1], &merged, "--json"]);
    assert_eq!(all.code(), 0, "{}", all.stderr);
    let v: serde_json::Value = serde_json::from_str(&all.stdout).unwrap();
    let ns: Vec<u64> = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["n"].as_u64().unwrap())
        .collect();
    assert_eq!(ns, [3, 3], "each trial once: {}", all.stdout);
    assert_eq!(
        all.stderr.matches("was already read from").count(),
        2,
        "{}",
        all.stderr
    );
}

/// Two nights run with the same `--seed` on the same target rolled the same dice: one draw,
/// pooled once as the newer, the older named as set aside in the text and the JSON.
#[test]
fn nights_sharing_a_seed_are_one_draw() {
    let nights = tempfile::tempdir().unwrap();
    seeded_night(
        "tests/fixtures/history-calm.yaml",
        nights.path(),
        &["--seed", "11"],
    );
    seeded_night(
        "tests/fixtures/history-calm.yaml",
        nights.path(),
        &["--seed", "12"],
    );
    seeded_night(
        "tests/fixtures/history-calm.yaml",
        nights.path(),
        &["--seed", "11"],
    );
    let parent = nights.path().to_str().unwrap();
    let text = history(&[parent]);
    assert_eq!(text.code(), 0, "{}", text.stderr);
    assert!(
        text.stdout.contains("  2 runs, 16 trials"),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("  set aside: "), "{}", text.stdout);
    assert!(
        text.stdout.contains(" (seed 11 again in "),
        "{}",
        text.stdout
    );
    let json = history(&[parent, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        v["runs"].as_array().unwrap().len(),
        3,
        "every run read is listed"
    );
    let g = &v["groups"][0];
    let pooled: Vec<&str> = g["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    let aside = &g["set_aside"][0];
    assert_eq!(aside["seed"], 11);
    assert_eq!(aside["pooled_as"].as_str(), pooled.last().copied(), "{g}");
    assert!(!pooled.contains(&aside["run_id"].as_str().unwrap()));
    assert_eq!(
        g["comparisons"][0]["others"][2], 8,
        "the other seed's night alone: {g}"
    );
}
