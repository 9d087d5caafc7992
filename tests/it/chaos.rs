//! `sqsprobe run --chaos` end to end: the example suite in `docs/chaos.md`, run on the embedded
//! emulator with and without chaos, flips its classification; other targets refuse `--chaos`.

use crate::common;

use common::{root, run_bin, single_run_dir};
use sqsprobe_core::evidence::{Record, read_evidence};
use std::path::Path;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// The ```yaml block of docs/chaos.md that is a whole suite (`suite: chaos-stale-delete`), so
/// the page and this test cannot drift apart.
fn example_suite() -> String {
    let page = std::fs::read_to_string(root().join("docs/chaos.md")).expect("read docs/chaos.md");
    page.split("```yaml\n")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .find(|block| block.starts_with("suite: chaos-stale-delete"))
        .expect("the example suite's yaml block")
        .to_string()
}

/// Runs the example suite with `extra` args; returns (exit code, run_start chaos and seed,
/// classification).
fn run_example(dir: &Path, extra: &[&str]) -> (i32, (Option<String>, Option<u64>), Option<String>) {
    let suite = dir.join("chaos-stale-delete.yaml");
    std::fs::write(&suite, example_suite()).unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut args = vec![
        "run",
        suite.to_str().unwrap(),
        "--out",
        out.path().to_str().unwrap(),
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let run = run_bin(&args, &root(), LIMIT);
    let records = read_evidence(&single_run_dir(out.path()).join("evidence.jsonl"))
        .unwrap_or_else(|e| panic!("{e}\nstdout:\n{}\nstderr:\n{}", run.stdout, run.stderr));
    let chaos = records.iter().find_map(|r| match r {
        Record::RunStart(s) => Some((s.emulator_chaos.clone(), s.seed)),
        _ => None,
    });
    let class = records.iter().find_map(|r| match r {
        Record::CaseEnd(e) => Some(e.classification.map(|c| c.as_str().to_string())),
        _ => None,
    });
    (
        run.code(),
        chaos.expect("run_start"),
        class.expect("case_end"),
    )
}

#[test]
fn stale_delete_keeps_flips_the_example_to_observed_redelivery() {
    let dir = tempfile::tempdir().unwrap();
    let (code, chaos, class) = run_example(dir.path(), &["--chaos", "stale-delete-keeps=1"]);
    assert_eq!(class.as_deref(), Some("observed_redelivery"));
    assert_eq!(code, 0);
    // A spec without a seed draws from the run's, and run_start says which.
    let (chaos, seed) = chaos;
    let seed = seed.expect("run_start.seed");
    assert_eq!(
        chaos.as_deref(),
        Some(format!("stale-delete-keeps=1,seed={seed}").as_str())
    );

    // Without chaos A's stale delete takes (the emulator's documented choice): nothing comes
    // back, so the suite's expectation fails.
    let (code, chaos, class) = run_example(dir.path(), &[]);
    assert_eq!(class.as_deref(), Some("no_redelivery_within_window"));
    assert_eq!(code, 4);
    assert_eq!(chaos.0, None);
}

#[test]
fn chaos_is_refused_off_the_embedded_target_and_when_misspelt() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("s.yaml");
    std::fs::write(&suite, example_suite()).unwrap();
    let suite = suite.to_str().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    // Port 9 is discard: never contacted, the refusal comes first.
    for target in [
        &["--endpoint-url", "http://127.0.0.1:9"][..],
        &["--target", "aws"][..],
    ] {
        let mut args = vec!["run", suite, "--out", out, "--chaos", "seed=1"];
        args.extend_from_slice(target);
        let run = run_bin(&args, &root(), LIMIT);
        assert_eq!(run.code(), 1, "{}", run.stderr);
        assert!(
            run.stderr
                .contains("--chaos applies only to the embedded emulator"),
            "{}",
            run.stderr
        );
    }
    let run = run_bin(
        &["run", suite, "--out", out, "--chaos", "stale-delete-keep=1"],
        &root(),
        LIMIT,
    );
    assert_eq!(run.code(), 1);
    assert!(
        run.stderr.contains("did you mean `stale-delete-keeps`?"),
        "{}",
        run.stderr
    );
    assert!(!Path::new(out).exists(), "a refused run writes nothing");
}

/// Runs one case of `tests/fixtures/emulator-chaos.yaml` with `extra` args; its step rows.
fn fixture_calls(case: &str, extra: &[&str]) -> Vec<sqsprobe_core::evidence::format::Call> {
    let out = tempfile::tempdir().unwrap();
    let mut args = vec![
        "run",
        "tests/fixtures/emulator-chaos.yaml",
        "--case",
        case,
        "--quiet",
        "--out",
        out.path().to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let run = run_bin(&args, &root(), LIMIT);
    assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
    read_evidence(&single_run_dir(out.path()).join("evidence.jsonl"))
        .unwrap()
        .into_iter()
        .filter_map(|r| match r {
            Record::Call(c) if c.step.is_some() => Some(c),
            _ => None,
        })
        .collect()
}

/// The labels each receive row of `calls` got, in the order returned.
fn received(calls: &[sqsprobe_core::evidence::format::Call]) -> Vec<Vec<String>> {
    calls
        .iter()
        .filter(|c| c.action == "ReceiveMessage")
        .map(|c| {
            c.messages
                .iter()
                .map(|m| m.message.clone().unwrap_or_default())
                .collect()
        })
        .collect()
}

#[test]
fn short_poll_miss_makes_a_short_poll_take_fewer() {
    assert_eq!(
        received(&fixture_calls("short-polls", &[])),
        [["m1", "m2", "m3"]]
    );
    let missed = received(&fixture_calls(
        "short-polls",
        &["--chaos", "short-poll-miss=1"],
    ));
    assert!(missed[0].len() < 3, "{missed:?}");
}

#[test]
fn reorder_delivers_out_of_send_order() {
    let sent = ["m1", "m2", "m3", "m4"];
    assert_eq!(received(&fixture_calls("send-order", &[])), [sent]);
    let got = received(&fixture_calls(
        "send-order",
        &["--chaos", "reorder=1,seed=5"],
    ));
    assert_ne!(got[0], sent);
    let mut sorted = got[0].clone();
    sorted.sort();
    assert_eq!(sorted, sent, "the same messages, in another order");
}

#[test]
fn duplicate_delivers_a_leased_message_twice() {
    let calm = received(&fixture_calls("copies", &[]));
    assert_eq!(calm, [vec!["m1".to_string()], vec![]]);
    let calls = fixture_calls("copies", &["--chaos", "duplicate=1"]);
    assert_eq!(received(&calls), [["m1"], ["m1"]]);
    let handles: Vec<_> = calls
        .iter()
        .filter(|c| c.action == "ReceiveMessage")
        .map(|c| c.messages[0].handle_digest.clone())
        .collect();
    assert_ne!(
        handles[0], handles[1],
        "the copy has its own receipt handle"
    );
}

#[test]
fn server_latency_delays_every_call() {
    let calls = fixture_calls("copies", &["--chaos", "latency=300ms"]);
    assert!(!calls.is_empty());
    for c in &calls {
        assert!(
            c.latency_ms >= 300.0,
            "{} took {} ms",
            c.action,
            c.latency_ms
        );
    }
}

#[test]
fn server_throttle_answers_request_throttled() {
    let serve = common::serve::Serve::start_with(&["--chaos", "throttle=1"]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let err = rt.block_on(async {
        let c = common::client(&serve.url).await;
        let call = c.list_queues().send();
        tokio::time::timeout(Duration::from_secs(30), call)
            .await
            .expect("answered within 30 s")
            .expect_err("throttled")
    });
    use aws_sdk_sqs::error::ProvideErrorMetadata;
    assert_eq!(err.code(), Some("RequestThrottled"), "{err:?}");
}
