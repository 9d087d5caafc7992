//! `sqsprobe bench --driver raw` end to end: the real binary against the embedded emulator
//! (both protocols) and moto (which closes every connection), short phases, the table and
//! the JSON read back, the comparison with a saved run, and the refusal of AWS hosts.
//! Structure and non-zero counts only: speed is never asserted here.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{Moto, root, run_bin};
use serde_json::Value;

const WORKLOADS: [&str; 8] = [
    "noop",
    "send",
    "receive",
    "cycle",
    "batch",
    "delete",
    "send-batch",
    "delete-batch",
];

fn bench(args: &[&str], json: &Path) -> common::Finished {
    let mut all = vec!["bench", "--driver", "raw"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", json.to_str().expect("utf-8 path")]);
    run_bin(&all, &root(), Duration::from_secs(120))
}

fn rows<'a>(report: &'a Value, target: &str) -> Vec<&'a Value> {
    report["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["target"] == target)
        .collect()
}

/// Every row answered, moved messages where its workload moves them, and carries its
/// ceiling ratio; the no-op's own ratio is 1.
fn assert_rows_complete(report: &Value, target: &str, connections: &[u64]) {
    let rows = rows(report, target);
    assert_eq!(rows.len(), WORKLOADS.len() * connections.len(), "{report}");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["workload"], WORKLOADS[i % WORKLOADS.len()], "{r}");
        assert_eq!(r["connections"], connections[i / WORKLOADS.len()], "{r}");
        assert!(
            r["requests"].as_u64().unwrap_or(0) > 0,
            "no request answered: {r}"
        );
        assert_eq!(r["errors"], 0, "{r}");
        assert!(r["ceiling_ratio"].as_f64().unwrap_or(0.0) > 0.0, "{r}");
        assert!(r["run_ceiling_ratio"].as_f64().unwrap_or(0.0) > 0.0, "{r}");
        let p50 = r["latency"]["p50_us"].as_f64().unwrap_or(0.0);
        let p999 = r["latency"]["p999_us"].as_f64().unwrap_or(0.0);
        assert!(p50 > 0.0 && p999 >= p50, "{r}");
        if r["workload"] == "noop" {
            assert_eq!(r["ceiling_ratio"], 1.0, "{r}");
            // Measured before and after the workloads; the drift compares the two.
            assert!(r["ceiling_drift"].as_f64().unwrap_or(0.0) > 0.0, "{r}");
            assert_eq!(r["messages"], 0, "{r}");
        } else {
            assert!(
                r["messages"].as_u64().unwrap_or(0) > 0,
                "no message moved: {r}"
            );
        }
    }
    let expected_ops: [(&str, &[&str]); 5] = [
        ("cycle", &["SendMessage", "ReceiveMessage", "DeleteMessage"]),
        (
            "batch",
            &["SendMessageBatch", "ReceiveMessage", "DeleteMessageBatch"],
        ),
        // The fills that give it handles are untimed and not in the row.
        ("delete", &["DeleteMessage"]),
        ("send-batch", &["SendMessageBatch"]),
        ("delete-batch", &["DeleteMessageBatch"]),
    ];
    for (workload, expected) in expected_ops {
        let row = rows
            .iter()
            .find(|r| r["workload"] == workload)
            .expect(workload);
        let ops: Vec<&str> = row["operations"]
            .as_array()
            .expect("operations")
            .iter()
            .filter_map(|o| o["operation"].as_str())
            .collect();
        assert_eq!(ops, expected, "{row}");
    }
}

#[test]
fn raw_bench_embedded_every_workload_with_ceilings() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("raw.json");
    let done = bench(
        &[
            "--connections",
            "1,2",
            "--duration",
            "300ms",
            "--warmup",
            "50ms",
            "--prefill",
            "50",
        ],
        &json,
    );
    assert_eq!(done.code(), 0, "stderr:\n{}", done.stderr);
    // The rows' table, up to the legend (the spread table below it names the rows again).
    let table: Vec<&str> = done
        .stdout
        .lines()
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("| embedded |"))
        .collect();
    assert_eq!(table.len(), 16, "{}", done.stdout);
    assert!(done.stdout.contains("| ceiling |"), "{}", done.stdout);
    assert!(done.stderr.contains("load average"), "{}", done.stderr);

    let report = common::read_json(&json);
    assert_eq!(report["version"], 3);
    assert!(
        report["build"] == "debug" || report["build"] == "release",
        "{report}"
    );
    assert_eq!(report["scale"], Value::Null, "no scale workload ran");
    assert_eq!(report["driver"], "raw");
    assert!(report["machine"]["cpus"].as_u64().unwrap_or(0) >= 1);
    let targets = report["targets"].as_array().expect("targets");
    assert_eq!(targets.len(), 3);
    // The reference server first and again last: its no-op only, at each connection count.
    assert_eq!(targets[0]["name"], "reference");
    assert_eq!(targets[1]["name"], "embedded");
    assert_eq!(targets[2]["name"], "reference (end)");
    assert_eq!(targets[1]["error"], Value::Null);
    assert_eq!(
        targets[1]["leaked_queues"].as_array().map(Vec::len),
        Some(0)
    );
    let reference = rows(&report, "reference");
    let reference_end = rows(&report, "reference (end)");
    assert_eq!((reference.len(), reference_end.len()), (2, 2), "{report}");
    for (start, end) in reference.iter().zip(&reference_end) {
        // Each fraction is of the mean of the two ends, so the two ends' fractions average 1.
        let (a, b) = (
            start["reference_ratio"].as_f64().unwrap_or(0.0),
            end["reference_ratio"].as_f64().unwrap_or(0.0),
        );
        assert!((a + b - 2.0).abs() < 1e-9, "{start} {end}");
    }
    for r in reference.iter().chain(&reference_end) {
        assert_eq!(r["workload"], "noop", "{r}");
        assert_eq!(
            r["run_ceiling_ratio"],
            Value::Null,
            "not an SQS target: {r}"
        );
        assert_eq!(r["status_counts"]["200"], r["requests"], "{r}");
    }
    for r in rows(&report, "embedded") {
        assert!(r["reference_ratio"].as_f64().unwrap_or(0.0) > 0.0, "{r}");
    }
    assert!(done.stdout.contains("| vs reference |"), "{}", done.stdout);
    // One run: the fractions are printed with no claim.
    assert!(
        done.stdout.contains("| vs reference, median |"),
        "{}",
        done.stdout
    );
    assert!(done.stdout.contains("claim none"), "{}", done.stdout);
    assert_eq!(report["repeats"], 1);
    // Linux: every timed row read the client's CPU and the in-process server's, and says
    // whether the client held it back (true, false or unknown); the delete workload, whose
    // fills run between its timed deletes, reads none (nor delete-batch).
    if cfg!(target_os = "linux") {
        assert!(
            done.stdout.contains("| client CPU | server CPU |"),
            "{}",
            done.stdout
        );
        for r in report["rows"].as_array().expect("rows") {
            if r["workload"] == "delete" || r["workload"] == "delete-batch" {
                assert_eq!(r.get("cpu"), None, "{r}");
                continue;
            }
            let cpu = &r["cpu"];
            assert!(cpu["client_cpu_s"].as_f64().is_some(), "{r}");
            assert!(cpu["server_cpu_s"].as_f64().is_some(), "{r}");
            assert!(cpu["wall_s"].as_f64().unwrap_or(0.0) > 0.0, "{r}");
            assert_eq!(cpu["pinned"], false, "{r}");
        }
    }
    assert_rows_complete(&report, "embedded", &[1, 2]);
    // The emulator answers the no-op with its unknown-operation error.
    let noop = &rows(&report, "embedded")[0];
    assert!(
        noop["status_counts"]["400"].as_u64().unwrap_or(0) > 0,
        "{noop}"
    );
}

#[test]
fn raw_bench_query_protocol_and_baseline_comparison() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = dir.path().join("first.json");
    let short = [
        "--protocol",
        "query",
        "--connections",
        "1",
        "--duration",
        "200ms",
        "--warmup",
        "50ms",
        "--prefill",
        "20",
    ];
    let done = bench(&short, &first);
    assert_eq!(done.code(), 0, "stderr:\n{}", done.stderr);
    let report = common::read_json(&first);
    assert!(
        rows(&report, "embedded")
            .iter()
            .all(|r| r["protocol"] == "query")
    );
    assert_rows_complete(&report, "embedded", &[1]);
    assert!(
        done.stdout.contains("| embedded (query) | cycle |"),
        "{}",
        done.stdout
    );

    // Compared with itself-like run: every row matched, ratios shown; a limit no run can
    // meet fails the comparison with exit 4.
    let second = dir.path().join("second.json");
    let mut args = short.to_vec();
    let baseline = first.to_str().expect("utf-8 path");
    args.extend_from_slice(&["--baseline", baseline, "--fail-below", "1000"]);
    let done = bench(&args, &second);
    assert_eq!(done.code(), 4, "stderr:\n{}", done.stderr);
    assert!(
        done.stdout.contains("Against the baseline of"),
        "{}",
        done.stdout
    );
    for w in WORKLOADS.iter().skip(1) {
        assert!(
            done.stdout
                .contains(&format!("| embedded (query) | {w} | 1 |")),
            "{w}: {}",
            done.stdout
        );
    }
    assert!(
        !done.stdout.contains("not in the baseline"),
        "{}",
        done.stdout
    );
    assert!(done.stderr.contains("below 1000"), "{}", done.stderr);

    let args = [
        "--workload",
        "send",
        "--connections",
        "1",
        "--duration",
        "100ms",
        "--warmup",
        "0s",
        "--baseline",
        baseline,
        "--fail-below",
        "0.000001",
    ];
    let done = bench(&args, &dir.path().join("third.json"));
    assert_eq!(done.code(), 0, "stderr:\n{}", done.stderr);
    assert!(
        done.stdout.contains("Rows in the baseline only"),
        "{}",
        done.stdout
    );

    // A baseline saved with --repeat 3: its send row is its median over the three runs (0.80
    // of its no-op, the first run's 0.50 notwithstanding), with their count and range; its
    // cycle row, in two runs, is listed once.
    let repeated = root().join("tests/fixtures/bench/raw-repeats.json");
    let args = [
        "--workload",
        "send",
        "--connections",
        "1",
        "--duration",
        "100ms",
        "--warmup",
        "0s",
        "--no-reference",
        "--baseline",
        repeated.to_str().expect("utf-8 path"),
        "--fail-below",
        "1000",
    ];
    let done = bench(&args, &dir.path().join("fourth.json"));
    assert_eq!(done.code(), 4, "stderr:\n{}", done.stderr);
    assert!(
        done.stdout
            .contains("| runs then | ceiling then | runs now |")
            && done
                .stdout
                .contains("| embedded | send | 1 | 3 | 0.80 (0.50–0.90) | 1 | "),
        "{}",
        done.stdout
    );
    assert!(
        done.stdout
            .contains("Rows in the baseline only: embedded json cycle × 1\n"),
        "{}",
        done.stdout
    );
    assert!(
        done.stderr
            .contains("median ceiling ratio (1 run(s) now, 3 in the baseline)"),
        "{}",
        done.stderr
    );
}

#[test]
fn raw_bench_moto_reconnects_after_every_answer() {
    let moto = Moto::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("moto.json");
    let endpoint = format!("moto={}", moto.url);
    let done = bench(
        &[
            "--endpoint",
            &endpoint,
            "--workload",
            "send,cycle,delete",
            "--connections",
            "1",
            "--duration",
            "500ms",
            "--warmup",
            "100ms",
        ],
        &json,
    );
    assert_eq!(done.code(), 0, "stderr:\n{}", done.stderr);
    let report = common::read_json(&json);
    let rows = rows(&report, "moto");
    assert_eq!(rows.len(), 4, "{report}");
    for r in &rows {
        assert!(r["requests"].as_u64().unwrap_or(0) > 0, "{r}");
        assert!(r["ceiling_ratio"].as_f64().is_some(), "{r}");
        // moto closes the connection after every answer; the driver reopens it.
        assert!(r["reconnects"].as_u64().unwrap_or(0) > 0, "{r}");
    }
    for r in rows.iter().filter(|r| r["workload"] != "noop") {
        assert_eq!(r["errors"], 0, "{r}");
        assert!(r["messages"].as_u64().unwrap_or(0) > 0, "{r}");
    }
}

#[test]
fn raw_bench_refuses_aws_hosts_and_misplaced_flags() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("never.json");
    for url in [
        "aws=http://sqs.us-east-1.amazonaws.com",
        "aws=https://sqs.eu-west-1.amazonaws.com/",
        "aws=http://sqs.cn-north-1.amazonaws.com.cn:80",
    ] {
        let done = bench(&["--endpoint", url], &json);
        assert_eq!(done.code(), 1, "{url}: {}", done.stderr);
        assert!(done.stderr.contains("never targets AWS"), "{}", done.stderr);
    }
    assert!(
        !json.exists(),
        "nothing is measured when a target is refused"
    );

    let cases: [(&[&str], &str); 6] = [
        (&["--repeat", "0"], "--repeat must be between 1 and 100"),
        (&["--clients", "2"], "--clients is for --driver sdk"),
        (
            &["--baseline", "embedded"],
            "for ratios against a target use --driver sdk --reference embedded",
        ),
        (&["--protocol", "nobody=query"], "`nobody` is not a target"),
        (&["--protocol", "xml"], "`xml` is not a protocol"),
        (
            &["--connections", "0"],
            "--connections must be between 1 and",
        ),
    ];
    for (args, message) in cases {
        let done = bench(args, &json);
        assert_eq!(done.code(), 1, "{args:?}: {}", done.stderr);
        assert!(done.stderr.contains(message), "{args:?}: {}", done.stderr);
    }
    // --pin cannot pin a server it cannot find (or, below 2 CPUs or off Linux, at all):
    // refused before anything is measured.
    let port = common::free_port().to_string();
    let nobody = format!("s=http://127.0.0.1:{port}");
    let done = bench(
        &["--pin", "--endpoint", &nobody, "--workload", "send"],
        &json,
    );
    assert_eq!(done.code(), 1, "{}", done.stderr);
    assert!(
        done.stderr.contains("cannot be pinned")
            || done.stderr.contains("at least 2 CPUs")
            || done.stderr.contains("only Linux"),
        "{}",
        done.stderr
    );
    assert!(!done.stderr.contains("reference noop"), "{}", done.stderr);
    let done = run_bin(
        &["bench", "--driver", "sdk", "--pin"],
        &root(),
        Duration::from_secs(30),
    );
    assert_eq!(done.code(), 1, "{}", done.stderr);
    assert!(
        done.stderr.contains("--pin is for --driver raw"),
        "{}",
        done.stderr
    );
    let done = run_bin(
        &["bench", "--driver", "sdk", "--connections", "2"],
        &root(),
        Duration::from_secs(30),
    );
    assert_eq!(done.code(), 1, "{}", done.stderr);
    assert!(
        done.stderr.contains("--connections is for --driver raw"),
        "{}",
        done.stderr
    );
}

#[test]
fn raw_bench_unreachable_target_is_a_runtime_error_and_the_others_are_measured() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("partial.json");
    let endpoint = format!("nobody=http://127.0.0.1:{}", common::free_port());
    let done = bench(
        &[
            "--target",
            "embedded",
            "--endpoint",
            &endpoint,
            "--workload",
            "send",
            "--connections",
            "1",
            "--duration",
            "100ms",
            "--warmup",
            "0s",
            "--no-reference",
        ],
        &json,
    );
    assert_eq!(done.code(), 3, "{}", done.stderr);
    assert!(
        done.stderr.contains("nobody failed: unreachable"),
        "{}",
        done.stderr
    );
    let report = common::read_json(&json);
    assert_eq!(rows(&report, "embedded").len(), 2, "{report}");
    assert!(rows(&report, "nobody").is_empty(), "{report}");
    // --no-reference: no reference server in the run, no fraction of it.
    assert!(rows(&report, "reference").is_empty(), "{report}");
    assert!(rows(&report, "reference (end)").is_empty(), "{report}");
    assert!(!done.stdout.contains("vs reference"), "{}", done.stdout);
    let nobody = &report["targets"][1];
    assert_eq!(nobody["name"], "nobody");
    assert!(
        nobody["error"]
            .as_str()
            .is_some_and(|e| e.contains("connect")),
        "{nobody}"
    );
}

/// DeleteMessage measured alone. Only deletes are in the row (the sends and receives
/// that fill each round are not counted), each one a message deleted, every answer a 200, and
/// the row's time at least `--duration` (its rounds go on until their deleting time reaches
/// it), with the rate computed from it.
#[test]
fn raw_bench_delete_workload_times_only_the_deletes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("delete.json");
    let done = bench(
        &[
            "--workload",
            "delete",
            "--connections",
            "2",
            "--duration",
            "300ms",
            "--warmup",
            "100ms",
            "--no-reference",
        ],
        &json,
    );
    assert_eq!(done.code(), 0, "stderr:\n{}", done.stderr);
    assert!(
        done.stdout.contains("| embedded | delete | 2 |"),
        "{}",
        done.stdout
    );
    let report = common::read_json(&json);
    assert_eq!(report["workloads"], serde_json::json!(["delete"]));
    let rows = rows(&report, "embedded");
    assert_eq!(rows.len(), 2, "the no-op and delete: {report}");
    let row = rows[1];
    assert_eq!(row["workload"], "delete", "{row}");
    let requests = row["requests"].as_u64().unwrap_or(0);
    assert!(requests > 0, "{row}");
    assert_eq!(row["errors"], 0, "{row}");
    assert_eq!(row["messages"], requests, "one message per delete: {row}");
    assert_eq!(row["status_counts"], serde_json::json!({ "200": requests }));
    let ops = row["operations"].as_array().expect("operations");
    assert_eq!(ops.len(), 1, "{row}");
    assert_eq!(ops[0]["operation"], "DeleteMessage", "{row}");
    assert_eq!(ops[0]["requests"], requests, "{row}");
    let elapsed = row["elapsed_s"].as_f64().unwrap_or(0.0);
    // The rounds go on until their deleting time reaches the duration.
    assert!(elapsed >= 0.3, "{row}");
    let rate = row["requests_per_second"].as_f64().unwrap_or(0.0);
    assert!(
        (rate - requests as f64 / elapsed).abs() < 1e-6 * rate.max(1.0),
        "{row}"
    );
    assert!(row["ceiling_ratio"].as_f64().unwrap_or(0.0) > 0.0, "{row}");
}

/// SendMessageBatch and DeleteMessageBatch each measured alone, in both protocols: ten
/// messages a request, every answer a 200 with no entry failed, and only the one operation in
/// each row (the delete-batch's fills untimed, as the delete workload's).
#[test]
fn raw_bench_batch_workloads_move_ten_messages_a_request() {
    let dir = tempfile::tempdir().expect("temp dir");
    for protocol in ["json", "query"] {
        let json = dir.path().join(format!("{protocol}.json"));
        let done = bench(
            &[
                "--workload",
                "send-batch,delete-batch",
                "--protocol",
                protocol,
                "--connections",
                "2",
                "--duration",
                "200ms",
                "--warmup",
                "50ms",
                "--no-reference",
            ],
            &json,
        );
        assert_eq!(done.code(), 0, "stderr:\n{}", done.stderr);
        let report = common::read_json(&json);
        assert_eq!(
            report["workloads"],
            serde_json::json!(["send-batch", "delete-batch"])
        );
        let rows = rows(&report, "embedded");
        assert_eq!(rows.len(), 3, "the no-op and both: {report}");
        for (row, operation) in [
            (rows[1], "SendMessageBatch"),
            (rows[2], "DeleteMessageBatch"),
        ] {
            assert_eq!(row["protocol"], protocol, "{row}");
            let requests = row["requests"].as_u64().unwrap_or(0);
            assert!(requests > 0, "{row}");
            assert_eq!(row["errors"], 0, "{row}");
            assert_eq!(row["first_error"], Value::Null, "{row}");
            assert_eq!(row["messages"], 10 * requests, "ten a request: {row}");
            assert_eq!(row["status_counts"], serde_json::json!({ "200": requests }));
            let ops = row["operations"].as_array().expect("operations");
            assert_eq!(ops.len(), 1, "{row}");
            assert_eq!(ops[0]["operation"], operation, "{row}");
        }
        assert_eq!(rows[1]["workload"], "send-batch");
        assert_eq!(rows[2]["workload"], "delete-batch");
        let shown = if protocol == "json" {
            "embedded".to_string()
        } else {
            format!("embedded ({protocol})")
        };
        for w in ["send-batch", "delete-batch"] {
            assert!(
                done.stdout.contains(&format!("| {shown} | {w} | 2 |")),
                "{w}: {}",
                done.stdout
            );
        }
    }
}

#[test]
fn raw_bench_reads_a_serve_process_cpu_and_repeats_with_the_spread() {
    let serve = common::serve::Serve::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let json = dir.path().join("raw.json");
    let endpoint = format!("s={}", serve.url);
    let done = bench(
        &[
            "--endpoint",
            &endpoint,
            "--connections",
            "1",
            "--workload",
            "send",
            "--duration",
            "200ms",
            "--warmup",
            "50ms",
            "--repeat",
            "2",
        ],
        &json,
    );
    assert_eq!(done.code(), 0, "stderr:\n{}", done.stderr);
    let report = common::read_json(&json);
    assert_eq!(report["repeats"], 2);
    let sends: Vec<&Value> = rows(&report, "s")
        .into_iter()
        .filter(|r| r["workload"] == "send")
        .collect();
    assert_eq!(sends.len(), 2, "{report}");
    assert_eq!(
        sends[0].get("repeat"),
        None,
        "the first run's index is left out"
    );
    assert_eq!(sends[1]["repeat"], 1);
    // The `serve` process is found by its listening port, and its CPU read.
    if cfg!(target_os = "linux") {
        for r in &sends {
            assert!(r["cpu"]["server_cpu_s"].as_f64().is_some(), "{r}");
        }
    }
    assert!(
        done.stdout.contains("| s | send | 1 | 2 |"),
        "the spread over both runs: {}",
        done.stdout
    );
    assert!(done.stdout.contains("over 2 runs"), "{}", done.stdout);
}

/// `bench --serve-reference` with `extra` flags: its answer to one request, and its exit code
/// once interrupted.
fn reference_answer(extra: &[&str]) -> (String, i32) {
    use std::io::{Read, Write};
    let mut child = std::process::Command::new(common::bin())
        .args(["bench", "--serve-reference", "127.0.0.1:0"])
        .args(extra)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the reference server");
    let stderr = common::Stderr::watch(&mut child);
    stderr.wait_for(
        "reference server on http://",
        Duration::from_secs(30),
        "the address",
    );
    let text = stderr.so_far();
    let addr = text
        .split("reference server on http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("an address")
        .to_string();
    let mut stream = std::net::TcpStream::connect(&addr).expect("connect");
    stream
        .write_all(
            b"POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
        )
        .expect("write");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    common::send_signal(&child, "INT");
    let done = stderr.finish(child, Duration::from_secs(30));
    (answer, done.code())
}

#[test]
fn serve_reference_answers_another_client_until_a_signal() {
    let (answer, code) = reference_answer(&[]);
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert!(answer.contains("MD5OfMessageBody"), "{answer}");
    assert_eq!(code, 0);
    // Padded to the size asked: the body alone is exactly that long, and still the reply.
    let (answer, code) = reference_answer(&["--reference-answer-bytes", "2654"]);
    let body = answer.split("\r\n\r\n").nth(1).expect("a body");
    assert_eq!(body.len(), 2654, "{answer}");
    assert!(answer.contains("content-length: 2654"), "{answer}");
    assert!(body.starts_with(r#"{"MD5OfMessageBody""#), "{body}");
    assert_eq!(code, 0);
}

#[test]
fn a_reference_answer_too_small_for_the_reply_is_refused() {
    let out = common::run_bin(
        &[
            "bench",
            "--serve-reference",
            "127.0.0.1:0",
            "--reference-answer-bytes",
            "12",
        ],
        &common::root(),
        Duration::from_secs(30),
    );
    assert_eq!(out.code(), 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("--reference-answer-bytes 12: the reference's answer takes at least"),
        "{}",
        out.stderr
    );
}
