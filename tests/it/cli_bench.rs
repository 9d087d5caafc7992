//! `sqsprobe bench` end to end: the real binary against the embedded emulator and moto, with a
//! short measured phase; the table and the JSON report are read back.

use crate::common;

use std::time::Duration;

use common::{Moto, root, run_bin};
use serde_json::Value;

#[test]
fn bench_embedded_and_moto_writes_table_and_json() {
    let moto = Moto::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("bench.json");
    let endpoint = format!("moto={}", moto.url);
    let done = run_bin(
        &[
            "bench",
            "--driver",
            "sdk",
            "--target",
            "embedded",
            "--endpoint",
            &endpoint,
            "--reference",
            "moto",
            "--clients",
            "1,2",
            "--duration",
            "700ms",
            "--warmup",
            "100ms",
            "--json",
            json.to_str().expect("utf-8 path"),
        ],
        &root(),
        Duration::from_secs(90),
    );
    assert_eq!(done.code(), 0, "stderr:\n{}", done.stderr);
    let rows: Vec<&str> = done
        .stdout
        .lines()
        .filter(|l| l.starts_with("| embedded") || l.starts_with("| moto"))
        .collect();
    assert_eq!(rows.len(), 4, "{}", done.stdout);
    assert!(done.stdout.contains("| vs moto |"), "{}", done.stdout);
    assert!(
        rows.iter()
            .any(|r| r.starts_with("| moto | 1 |") && r.contains("| 1.00× |"))
    );

    let report: Value = common::read_json(&json);
    assert_eq!(report["version"], 2);
    assert_eq!(report["driver"], "sdk");
    assert_eq!(report["reference"], "moto");
    let results = report["results"].as_array().expect("results");
    assert_eq!(results.len(), 4);
    for r in results {
        assert!(
            r["cycles"].as_u64().unwrap_or(0) > 0,
            "no cycle completed: {r}"
        );
        assert!(
            r["leaked_queues"].as_array().is_some_and(|l| l.is_empty()),
            "{r}"
        );
        let ops = r["operations"].as_array().expect("operations");
        assert_eq!(ops.len(), 3);
        for op in ops {
            assert_eq!(op["errors"], 0, "{r}");
            assert!(op["p50_us"].as_u64().unwrap_or(0) > 0, "{r}");
            assert!(op["p99_us"].as_u64() >= op["p50_us"].as_u64(), "{r}");
        }
        if r["target"] == "moto" {
            assert_eq!(r["ratio_to_baseline"], 1.0);
        }
    }
}

#[test]
fn bench_refuses_unknown_reference_and_bad_endpoint() {
    let done = run_bin(
        &[
            "bench",
            "--driver",
            "sdk",
            "--reference",
            "moto",
            "--duration",
            "1s",
        ],
        &root(),
        Duration::from_secs(30),
    );
    assert_eq!(done.code(), 1, "{}", done.stderr);
    assert!(
        done.stderr.contains("--reference `moto` is not a target"),
        "{}",
        done.stderr
    );

    let done = run_bin(
        &["bench", "--endpoint", "http://127.0.0.1:1"],
        &root(),
        Duration::from_secs(30),
    );
    assert_eq!(done.code(), 1, "{}", done.stderr);
    assert!(done.stderr.contains("is not NAME=URL"), "{}", done.stderr);
}

#[test]
fn bench_unreachable_endpoint_is_a_runtime_error() {
    let port = common::free_port();
    let endpoint = format!("nobody=http://127.0.0.1:{port}");
    let done = run_bin(
        &[
            "bench",
            "--driver",
            "sdk",
            "--endpoint",
            &endpoint,
            "--duration",
            "1s",
        ],
        &root(),
        Duration::from_secs(60),
    );
    assert_eq!(done.code(), 3, "{}", done.stderr);
    assert!(
        done.stderr.contains("nobody failed: CreateQueue"),
        "{}",
        done.stderr
    );
}
