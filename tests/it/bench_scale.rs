//! `sqsprobe bench --workload memory,depth,queues,startup` end to end with small sizes: the
//! real binary starts its own `sqsprobe serve`, the JSON's `scale` section is written and
//! complete, `bench --baseline` reads it back (and a version 2 file), and a baseline whose
//! figure was better flags the run (exit 4). Structure only: no time is asserted.

use crate::common;

use std::time::Duration;

use common::{root, run_bin};
use serde_json::Value;

/// Small sizes: every workload, every queue kind, a few seconds in all.
const SMALL: [&str; 14] = [
    "--depth",
    "100,400",
    "--memory-at",
    "200,600",
    "--groups",
    "20",
    "--cycles",
    "30",
    "--queues",
    "3,40",
    "--startup-samples",
    "2",
    "--workload",
    "memory,depth,queues,startup",
];

fn bench(extra: &[&str]) -> common::Finished {
    let mut all = vec!["bench"];
    all.extend_from_slice(&SMALL);
    all.extend_from_slice(extra);
    run_bin(&all, &root(), Duration::from_secs(300))
}

fn array<'a>(v: &'a Value, key: &str) -> &'a Vec<Value> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} is an array: {v}"))
}

fn positive(v: &Value) -> bool {
    v.as_f64().is_some_and(|x| x > 0.0)
}

/// A latency object with all four percentiles, in order.
fn assert_latency(l: &Value) {
    let p: Vec<f64> = ["p50_us", "p99_us", "p999_us", "max_us"]
        .iter()
        .map(|k| l[k].as_f64().unwrap_or(-1.0))
        .collect();
    assert!(p[0] > 0.0 && p.windows(2).all(|w| w[0] <= w[1]), "{l}");
}

fn assert_complete(report: &Value) {
    assert_eq!(report["version"], 3);
    assert_eq!(report["driver"], "raw");
    assert!(
        report["build"] == "debug" || report["build"] == "release",
        "{report}"
    );
    // Only scale workloads: no raw target was measured.
    assert_eq!(array(report, "rows").len(), 0);
    assert_eq!(array(report, "targets").len(), 0);
    let scale = &report["scale"];
    assert_eq!(array(scale, "errors").len(), 0, "{scale}");
    assert_eq!(scale["sizes"]["depths"], serde_json::json!([100, 400]));
    assert!(
        scale["server_binary"]
            .as_str()
            .is_some_and(|b| b.contains("sqsprobe")),
        "{scale}"
    );

    let memory = array(scale, "memory");
    let got: Vec<(&str, u64)> = memory
        .iter()
        .map(|m| {
            (
                m["queue"].as_str().unwrap_or(""),
                m["messages"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("standard", 200),
            ("standard", 600),
            ("fifo", 200),
            ("fifo", 600)
        ]
    );
    for m in memory {
        assert!(positive(&m["rss_before_bytes"]), "{m}");
        assert!(positive(&m["rss_after_bytes"]), "{m}");
        assert_eq!(m["body_bytes"], 11, "{m}");
        let per = m["rss_per_message_bytes"].as_f64().expect("per message");
        let beyond = m["overhead_per_message_bytes"].as_f64().expect("beyond");
        assert!((per - 11.0 - beyond).abs() < 1e-9, "{m}");
        // The server measured runs in 4 KiB pages, where the kernel says so (Linux 5.0 and
        // later show `THP_enabled` in /proc).
        let kernel_tells = std::fs::read_to_string("/proc/self/status")
            .is_ok_and(|status| status.contains("THP_enabled:"));
        if kernel_tells {
            assert_eq!(m["small_pages"], true, "{m}");
        }
    }
    assert_eq!(memory[2]["groups"], 20, "{}", memory[2]);

    let depth = array(scale, "depth");
    let got: Vec<(&str, u64)> = depth
        .iter()
        .map(|d| {
            (
                d["queue"].as_str().unwrap_or(""),
                d["depth"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("standard", 100),
            ("standard", 400),
            ("fifo", 100),
            ("fifo", 400),
            ("fifo_held", 100),
            ("fifo_held", 400),
        ]
    );
    for d in depth {
        assert_eq!(d["cycles"], 30, "{d}");
        assert_latency(&d["receive"]);
        assert_latency(&d["delete"]);
    }
    // All but ten of the twenty groups hold their head in flight.
    assert_eq!(depth[4]["groups_held"], 10, "{}", depth[4]);

    let queues = array(scale, "queues");
    assert_eq!(queues.len(), 2);
    for q in queues {
        assert_latency(&q["list_queues"]);
        assert_latency(&q["get_queue_url"]);
    }

    let ratios = array(scale, "ratios");
    let got: Vec<String> = ratios
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {}→{}",
                r["workload"].as_str().unwrap_or(""),
                r["queue"].as_str().unwrap_or("-"),
                r["operation"].as_str().unwrap_or(""),
                r["from"],
                r["to"]
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            "depth standard ReceiveMessage 100→400",
            "depth standard DeleteMessage 100→400",
            "depth fifo ReceiveMessage 100→400",
            "depth fifo DeleteMessage 100→400",
            "depth fifo_held ReceiveMessage 100→400",
            "depth fifo_held DeleteMessage 100→400",
            "queues - ListQueues 3→40",
            "queues - GetQueueUrl 3→40",
        ]
    );
    for r in ratios {
        let (a, b) = (r["from_p50_us"].as_f64(), r["to_p50_us"].as_f64());
        let ratio = r["ratio"].as_f64().expect("ratio");
        assert!(
            a.zip(b).is_some_and(|(a, b)| (b / a - ratio).abs() < 1e-9),
            "{r}"
        );
    }

    let startup = &scale["startup"];
    assert_eq!(startup["samples"], 2, "{startup}");
    for figure in ["serve_first_answer", "run_overhead"] {
        let f = &startup[figure];
        assert!(positive(&f["p50_ms"]) && positive(&f["min_ms"]), "{f}");
        assert!(f["min_ms"].as_f64() <= f["max_ms"].as_f64(), "{f}");
    }
    assert!(positive(&startup["run_case_p50_ms"]), "{startup}");
}

/// Every figure of `report`'s scale section made much worse, but the standard receive's
/// growth made much better: against it, exactly that figure fell.
fn baseline_better_at_one_figure(report: &Value) -> Value {
    let mut base = report.clone();
    let scale = &mut base["scale"];
    for r in scale["ratios"].as_array_mut().expect("ratios") {
        let better = r["queue"] == "standard" && r["operation"] == "ReceiveMessage";
        r["ratio"] = if better { 1e-6 } else { 1e6 }.into();
    }
    for m in scale["memory"].as_array_mut().expect("memory") {
        m["overhead_per_message_bytes"] = 1e9.into();
    }
    for figure in ["serve_first_answer", "run_overhead"] {
        scale["startup"][figure]["p50_ms"] = 1e9.into();
    }
    base
}

#[test]
fn scale_bench_json_is_complete_and_compared_by_baseline() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = dir.path().join("first.json");
    let done = bench(&["--json", first.to_str().expect("utf-8")]);
    assert_eq!(
        done.code(),
        0,
        "stdout:\n{}\nstderr:\n{}",
        done.stdout,
        done.stderr
    );
    for heading in ["Memory", "Depth", "Queues", "Growth", "Start-up"] {
        assert!(done.stdout.contains(heading), "{heading}: {}", done.stdout);
    }
    // No raw table: no raw workload was chosen.
    assert!(!done.stdout.contains("| ceiling |"), "{}", done.stdout);
    let report = common::read_json(&first);
    assert_complete(&report);

    let base = dir.path().join("base.json");
    std::fs::write(
        &base,
        serde_json::to_string_pretty(&baseline_better_at_one_figure(&report)).expect("encode"),
    )
    .expect("write baseline");
    let second = dir.path().join("second.json");
    let done = bench(&[
        "--json",
        second.to_str().expect("utf-8"),
        "--baseline",
        base.to_str().expect("utf-8"),
        "--fail-below",
        "0.8",
    ]);
    assert_eq!(
        done.code(),
        4,
        "stdout:\n{}\nstderr:\n{}",
        done.stdout,
        done.stderr
    );
    let flagged: Vec<&str> = done
        .stderr
        .lines()
        .filter(|l| l.contains("below 0.8"))
        .collect();
    assert_eq!(flagged.len(), 1, "{}", done.stderr);
    assert!(
        flagged[0].starts_with("sqsprobe: depth standard ReceiveMessage 100 → 400: "),
        "{}",
        flagged[0]
    );
    // Every figure was compared: eight ratios, four memory rows, two start-up figures.
    let compared = done
        .stdout
        .lines()
        .filter(|l| {
            [" | ratio | ", " | bytes | ", " | ms | "]
                .iter()
                .any(|u| l.contains(u))
        })
        .count();
    assert_eq!(compared, 14, "{}", done.stdout);
    assert!(
        !done.stdout.contains("in the baseline only"),
        "{}",
        done.stdout
    );
    // The run is saved whatever the comparison says.
    assert_complete(&common::read_json(&second));
}

#[test]
fn a_version_2_baseline_is_read_and_scale_flags_need_their_workload() {
    let saved = root().join("tests/fixtures/bench/raw-format-2.json");
    let done = run_bin(
        &[
            "bench",
            "--workload",
            "depth",
            "--depth",
            "100,200",
            "--groups",
            "20",
            "--cycles",
            "5",
            "--baseline",
            saved.to_str().expect("utf-8"),
            "--fail-below",
            "0.8",
        ],
        &root(),
        Duration::from_secs(120),
    );
    assert_eq!(done.code(), 0, "{}\n{}", done.stdout, done.stderr);
    assert!(
        done.stdout
            .contains("The baseline has no scale figures to compare."),
        "{}",
        done.stdout
    );
    for (line, says) in [
        (
            vec!["bench", "--workload", "depth", "--queues", "10"],
            "--queues is for --workload queues",
        ),
        (
            vec![
                "bench",
                "--workload",
                "memory",
                "--endpoint",
                "x=http://127.0.0.1:1",
            ],
            "--endpoint is for the raw workloads",
        ),
        (
            vec!["bench", "--driver", "sdk", "--depth", "100"],
            "--depth is for --driver raw",
        ),
        (
            vec!["bench", "--workload", "depth", "--depth", "5"],
            "--depth takes counts from 100",
        ),
    ] {
        let done = run_bin(&line, &root(), Duration::from_secs(30));
        assert_eq!(done.code(), 1, "{line:?}: {}", done.stderr);
        assert!(done.stderr.contains(says), "{line:?}: {}", done.stderr);
    }
}

#[test]
fn raw_and_scale_workloads_in_one_run_share_one_json() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("mixed.json");
    let done = run_bin(
        &[
            "bench",
            "--workload",
            "cycle,queues",
            "--connections",
            "1",
            "--duration",
            "200ms",
            "--warmup",
            "50ms",
            "--queues",
            "2,20",
            "--cycles",
            "5",
            "--json",
            json.to_str().expect("utf-8"),
        ],
        &root(),
        Duration::from_secs(120),
    );
    assert_eq!(done.code(), 0, "{}\n{}", done.stdout, done.stderr);
    assert!(done.stdout.contains("| ceiling |"), "{}", done.stdout);
    assert!(done.stdout.contains("Queues ("), "{}", done.stdout);
    let report = common::read_json(&json);
    // The reference server's no-op first (a raw run measures it), then the emulator's rows,
    // then the reference again.
    let rows: Vec<(&str, &str)> = array(&report, "rows")
        .iter()
        .filter_map(|r| Some((r["target"].as_str()?, r["workload"].as_str()?)))
        .collect();
    assert_eq!(
        rows,
        [
            ("reference", "noop"),
            ("embedded", "noop"),
            ("embedded", "cycle"),
            ("reference (end)", "noop")
        ],
        "{report}"
    );
    assert_eq!(report["scale"]["workloads"], serde_json::json!(["queues"]));
    assert_eq!(array(&report["scale"], "queues").len(), 2, "{report}");
    assert_eq!(array(&report["scale"], "memory").len(), 0, "{report}");
    assert_eq!(report["scale"]["startup"], Value::Null, "{report}");
}
