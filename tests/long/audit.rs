//! `sqsprobe audit` on real consumers: the example consumers run under the binary
//! against its embedded emulator — Python (boto3, from scripts/venv), JavaScript (the AWS SDK
//! v3, from scripts/node-consumers) and Rust (aws-sdk-sqs, the crate's `audit-correct`
//! example). Every faulty adapter of the playbook is flagged with its finding and decision,
//! the correct one is clean over many seeds with chaos on, and a consumer that crashes or
//! cannot start is said so.

use crate::common;

use common::{read_json, root, run_bin};
use std::path::{Path, PathBuf};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// The lease of the audits whose verdict must be clean: seconds longer than the correct
/// consumers' handlers, so machine load cannot lapse it.
pub(crate) const CLEAN_LEASE: &str = "3s";

pub(crate) fn python() -> String {
    std::env::var("SQSPROBE_PYTHON").unwrap_or_else(|_| {
        panic!("set SQSPROBE_PYTHON to a Python with boto3 (scripts/test does: .venv/bin/python)")
    })
}

/// Runs `sqsprobe audit` on one Python example consumer: its exit code, output, and
/// `audit.json`.
pub(crate) fn audit(
    example: &str,
    extra: &[&str],
    out: &Path,
    run_id: &str,
) -> (i32, String, serde_json::Value) {
    let script = root().join("examples/consumers/python").join(example);
    let py = python();
    audit_command(&[&py, script.to_str().unwrap()], extra, out, run_id)
}

/// Runs `sqsprobe audit` on `command` with four messages, a 1 s lease (unless `extra` sets
/// one) and `extra`.
pub(crate) fn audit_command(
    command: &[&str],
    extra: &[&str],
    out: &Path,
    run_id: &str,
) -> (i32, String, serde_json::Value) {
    let mut flags = vec!["--messages", "4"];
    if !extra.contains(&"--visibility-timeout") {
        flags.extend_from_slice(&["--visibility-timeout", "1s"]);
    }
    flags.extend_from_slice(extra);
    run_audit(&flags, command, out, run_id)
}

/// Runs `sqsprobe audit FLAGS -- COMMAND` into `out/run_id` (1 s idle, at most 60 s): exit
/// code, output, and `audit.json` (null when none was written).
fn run_audit(
    flags: &[&str],
    command: &[&str],
    out: &Path,
    run_id: &str,
) -> (i32, String, serde_json::Value) {
    let mut args = vec!["audit", "--idle", "1s", "--max-duration", "60s"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--out", out.to_str().unwrap(), "--run-id", run_id, "--"]);
    args.extend_from_slice(command);
    let done = run_bin(&args, &root(), LIMIT);
    let json: PathBuf = out.join(run_id).join("audit.json");
    let value = if json.exists() {
        read_json(&json)
    } else {
        serde_json::Value::Null
    };
    (
        done.code(),
        format!("{}\n{}", done.stdout, done.stderr),
        value,
    )
}

pub(crate) fn kinds(audit: &serde_json::Value) -> Vec<(String, String)> {
    audit["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["decision"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn every_faulty_adapter_is_flagged_with_its_finding_and_decision() {
    let out = tempfile::tempdir().unwrap();
    for (example, extra, kind, decision) in [
        ("by_message_id.py", &[][..], "stale_handle_ack", "REPAIR"),
        (
            "delete_before_work.py",
            &[][..],
            "ack_before_commit",
            "REPAIR",
        ),
        (
            "no_idempotency.py",
            &["--chaos", "redeliver-after-delete=1", "--seed", "4"][..],
            "duplicate_commit",
            "RECONCILE",
        ),
        (
            "slow_no_heartbeat.py",
            &[][..],
            "lease_expired_mid_handler",
            "HOLD",
        ),
    ] {
        let run_id = example.trim_end_matches(".py").replace('_', "-");
        let (code, said, audit) = audit(example, extra, out.path(), &run_id);
        assert_eq!(code, 4, "{example}: {said}");
        let found = kinds(&audit);
        assert!(
            found.iter().any(|(k, d)| k == kind && d == decision),
            "{example}: expected {kind} ({decision}), got {found:?}\n{said}"
        );
        assert!(
            audit["counts"][kind].as_u64().unwrap() >= 1,
            "{example}: {audit}"
        );
        assert!(
            said.contains(&format!("FINDING  {kind} · {decision}")),
            "{said}"
        );
        // The reports say it too.
        let dir = out.path().join(&run_id);
        let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
        let report = quick_junit::Report::deserialize_from_str(&junit).expect("JUnit parses");
        assert!(report.failures >= 1, "{example}: {junit}");
        let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
        assert!(summary.contains(kind), "{summary}");
        assert_digest_only_evidence(&dir);
    }
}

/// `evidence.jsonl`: the audit's rows and every call the consumer and the set-up made, each
/// line a JSON envelope, and no body and no receipt handle anywhere (the emulator's handles
/// are base64 of `sqsprobe-rh...`; a body would show its `seq`, escaped or not).
fn assert_digest_only_evidence(dir: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("evidence.jsonl")).unwrap();
    assert!(
        !text.contains("c3FzcHJvYmUtcmg")
            && !text.contains("\"seq\": ")
            && !text.contains("seq\\\": ")
            && !text.contains("checkout"),
        "{text}"
    );
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect();
    let of = |kind: &str| rows.iter().filter(|r| r["type"] == kind).count();
    assert_eq!((of("audit_start"), of("audit_end")), (1, 1), "{text}");
    assert!(of("delivery") >= 1 && of("ack") >= 1, "{text}");
    let consumer = |action: &str| {
        rows.iter().any(|r| {
            r["type"] == "call" && r["data"]["phase"] == "consumer" && r["data"]["action"] == action
        })
    };
    assert!(
        consumer("ReceiveMessage") && consumer("DeleteMessage"),
        "{text}"
    );
    assert!(
        rows.iter()
            .any(|r| r["data"]["phase"] == "setup" && r["data"]["action"] == "CreateQueue"),
        "{text}"
    );
    rows
}

/// Runs `sqsprobe audit --plan PLAN` on `command`: exit code, output, `audit.json`.
fn audit_plan(
    plan: &Path,
    command: &[&str],
    out: &Path,
    run_id: &str,
) -> (i32, String, serde_json::Value) {
    run_audit(&["--plan", plan.to_str().unwrap()], command, out, run_id)
}

/// The example plan: the orders queue with its own body shape (the key at `order.id`), a
/// dead-letter queue, and two thirds of the messages sent while the consumer runs.
#[test]
fn a_plan_sets_the_queue_the_bodies_the_key_path_and_a_send_rate() {
    let out = tempfile::tempdir().unwrap();
    let plan = root().join("examples/consumers/plans/orders.yaml");
    let script = root().join("examples/consumers/python/orders.py");
    let py = python();
    let (code, said, audit) = audit_plan(
        &plan,
        &[&py, script.to_str().unwrap()],
        out.path(),
        "orders",
    );
    assert_eq!(code, 0, "{said}");
    assert_eq!(audit["clean"], true, "{audit}");
    assert_eq!(audit["messages"], 12, "{audit}");
    let keys: Vec<&str> = audit["per_message"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["business_key"].as_str().unwrap())
        .collect();
    assert_eq!(keys.len(), 12);
    assert!(keys.contains(&"b-12"), "{keys:?}");
    let rows = assert_digest_only_evidence(&out.path().join("orders"));
    let start = rows.iter().find(|r| r["type"] == "audit_start").unwrap();
    assert_eq!(start["data"]["queues"][0]["dead_letter"], "orders-dlq");
    assert_eq!(start["data"]["queues"][0]["business_key_at"], "order.id");
    // `send: {before: 4, rate: 20/s}`: four set-up sends before the consumer started, the
    // other eight after it (the row order is the order things happened in).
    let started = rows
        .iter()
        .position(|r| r["type"] == "consumer_start")
        .expect("a consumer_start row");
    let sends = |rows: &[serde_json::Value]| {
        rows.iter()
            .filter(|r| r["data"]["phase"] == "setup" && r["data"]["action"] == "SendMessage")
            .count()
    };
    assert_eq!(
        (sends(&rows[..started]), sends(&rows[started..])),
        (4, 8),
        "sends before and after the consumer started"
    );
    // The consumer's deletes name their message and its business key from `order.id`.
    assert!(
        rows.iter()
            .any(|r| r["data"]["action"] == "DeleteMessage" && r["data"]["business_key"] == "b-1")
    );
}

/// A handler that always fails on one order: the redrive policy moves it to the dead-letter
/// queue, and the audit says it was never acknowledged (HOLD), the others clean.
#[test]
fn a_message_dead_lettered_by_a_failing_handler_is_never_acked() {
    let out = tempfile::tempdir().unwrap();
    let plan = root().join("examples/consumers/plans/orders.yaml");
    let script = root().join("examples/consumers/python/orders.py");
    let py = python();
    let (code, said, audit) = audit_plan(
        &plan,
        &[&py, script.to_str().unwrap(), "--poison", "b-3"],
        out.path(),
        "poison",
    );
    assert_eq!(code, 4, "{said}");
    assert_eq!(
        kinds(&audit),
        [("never_acked".to_string(), "HOLD".to_string())],
        "{said}"
    );
    let finding = &audit["findings"][0];
    assert_eq!(finding["business_key"], "b-3");
    assert!(
        finding["detail"]
            .as_str()
            .unwrap()
            .contains("moved to the dead-letter queue after 3 deliveries"),
        "{finding}"
    );
}

#[test]
fn a_broken_plan_is_refused_at_its_line_and_flags_it_replaces_conflict() {
    let out = tempfile::tempdir().unwrap();
    let plan = out.path().join("plan.yaml");
    std::fs::write(&plan, "queues:\n  - name: orders\n    mesages: 3\n").unwrap();
    let done = run_bin(
        &["audit", "--plan", plan.to_str().unwrap(), "--", "true"],
        &root(),
        LIMIT,
    );
    assert_eq!(done.code(), 1, "{}", done.stderr);
    assert!(done.stderr.contains("plan.yaml:3:5"), "{}", done.stderr);
    assert!(
        done.stderr.contains("did you mean `messages`?"),
        "{}",
        done.stderr
    );
    let done = run_bin(
        &[
            "audit",
            "--plan",
            plan.to_str().unwrap(),
            "--messages",
            "3",
            "--",
            "true",
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(done.code(), 1, "{}", done.stderr);
    assert!(
        done.stderr.contains("cannot be used with"),
        "{}",
        done.stderr
    );
}

/// The stale-handle finding names the attempts involved.
#[test]
fn the_stale_handle_finding_names_the_attempts() {
    let out = tempfile::tempdir().unwrap();
    let (code, said, audit) = audit("by_message_id.py", &[], out.path(), "stale-attempts");
    assert_eq!(code, 4, "{said}");
    let first = &audit["findings"][0];
    assert_eq!(first["kind"], "stale_handle_ack");
    assert_eq!(first["attempt"], 1);
    assert!(
        first["detail"]
            .as_str()
            .unwrap()
            .contains("after attempt 2"),
        "{first}"
    );
    assert_eq!(audit["messages"], 4);
    assert_eq!(audit["clean"], false);
}

/// The correct adapter is clean whatever SQS's legal-but-rare behaviour does, over 20 seeds.
#[test]
fn the_correct_consumer_is_clean_over_many_seeds_with_chaos_on() {
    let out = tempfile::tempdir().unwrap();
    let chaos = "duplicate=0.3,redeliver-after-delete=0.3,stale-delete-keeps=0.5,reorder=0.5,short-poll-miss=0.3";
    let results = four_at_a_time((1..=20).collect(), |seed: u64| {
        let seed_s = seed.to_string();
        // A lease the correct consumer outlasts by seconds on a loaded machine: a clean
        // verdict must not hang on a margin under one.
        let flags = [
            "--chaos",
            chaos,
            "--seed",
            &seed_s,
            "--visibility-timeout",
            CLEAN_LEASE,
        ];
        (
            seed,
            audit("correct.py", &flags, out.path(), &format!("correct-{seed}")),
        )
    });
    for (seed, (code, said, audit)) in results {
        assert_eq!(code, 0, "seed {seed}: {said}");
        assert_eq!(audit["clean"], true, "seed {seed}: {audit}");
        assert_eq!(audit["ledger"], true);
    }
}

/// Runs `run` over `items`, four at a time (an audit mostly waits on leases and its idle
/// window, not on the CPU), and returns the results in the items' order.
pub(crate) fn four_at_a_time<T: Send, R: Send>(
    items: Vec<T>,
    run: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let mut results = Vec::new();
    let mut items = items.into_iter().peekable();
    while items.peek().is_some() {
        let chunk: Vec<T> = items.by_ref().take(4).collect();
        let run = &run;
        std::thread::scope(|scope| {
            let handles: Vec<_> = chunk
                .into_iter()
                .map(|item| scope.spawn(move || run(item)))
                .collect();
            results.extend(handles.into_iter().map(|h| h.join().unwrap()));
        });
    }
    results
}

#[test]
fn a_crashing_consumer_is_recorded_and_still_judged() {
    let out = tempfile::tempdir().unwrap();
    let py = python();
    let done = run_bin(
        &[
            "audit",
            "--messages",
            "2",
            "--out",
            out.path().to_str().unwrap(),
            "--run-id",
            "crash",
            "--",
            &py,
            "-c",
            "import sys; print('connecting to the broker'); sys.exit('KeyError: ORDERS_QUEUE_URL')",
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(done.code(), 4, "{}\n{}", done.stdout, done.stderr);
    let audit = read_json(&out.path().join("crash/audit.json"));
    assert_eq!(audit["ended"]["exit_status"], 1);
    assert_eq!(audit["ended"]["how"], "crashed: exit 1");
    assert_eq!(audit["ended"]["crashed"], true);
    assert_eq!(
        audit["ended"]["log_tail"],
        serde_json::json!(["connecting to the broker", "KeyError: ORDERS_QUEUE_URL"])
    );
    assert_eq!(audit["counts"]["never_acked"], 2);
    assert_eq!(audit["ledger"], false, "it never wrote one");
    assert!(
        done.stdout.contains("no ledger was written"),
        "{}",
        done.stdout
    );
    // The cause is where a CI reader looks: on the terminal and in JUnit, as an error.
    assert!(
        done.stdout.contains("  | KeyError: ORDERS_QUEUE_URL"),
        "{}",
        done.stdout
    );
    let junit = std::fs::read_to_string(out.path().join("crash/junit.xml")).unwrap();
    assert!(
        junit.contains(r#"<testcase name="consumer""#)
            && junit.contains(r#"type="crashed""#)
            && junit.contains("KeyError: ORDERS_QUEUE_URL"),
        "{junit}"
    );
    let summary = std::fs::read_to_string(out.path().join("crash/summary.md")).unwrap();
    assert!(
        summary.contains("    KeyError: ORDERS_QUEUE_URL"),
        "{summary}"
    );
}

/// A consumer that did all its work and then exited with a failure is not clean: the audit
/// cannot say what a consumer that crashes does in production; and one polling a queue of its
/// own naming has that queue named, with what it did there.
#[test]
fn a_crash_after_the_work_is_not_clean_and_a_queue_of_its_own_is_named() {
    let out = tempfile::tempdir().unwrap();
    let py = python();
    let work_then_crash = "import boto3, os, sys\n\
        q = os.environ['SQSPROBE_QUEUE_URL']\n\
        c = boto3.client('sqs')\n\
        left = 4\n\
        while left:\n\
        \x20   for m in c.receive_message(QueueUrl=q, MaxNumberOfMessages=10, WaitTimeSeconds=1).get('Messages', []):\n\
        \x20       key = __import__('json').loads(m['Body'])['business_key']\n\
        \x20       open(os.environ['SQSPROBE_LEDGER'], 'a').write(key + '\\n')\n\
        \x20       c.delete_message(QueueUrl=q, ReceiptHandle=m['ReceiptHandle'])\n\
        \x20       left -= 1\n\
        sys.exit('shutting down: connection reset')\n";
    let (code, stdout, audit) =
        audit_command(&[&py, "-c", work_then_crash], &[], out.path(), "late-crash");
    assert_eq!(code, 5, "{stdout}");
    assert_eq!(audit["findings"].as_array().unwrap().len(), 0, "{audit}");
    assert_eq!(audit["ended"]["crashed"], true, "{audit}");
    assert!(
        stdout.contains("not clean") || stdout.contains("crashed"),
        "{stdout}"
    );

    let own_queue = "import boto3, os\n\
        c = boto3.client('sqs')\n\
        q = c.create_queue(QueueName='orders-dev')['QueueUrl']\n\
        for _ in range(3):\n\
        \x20   c.receive_message(QueueUrl=q, WaitTimeSeconds=0)\n";
    let (code, stdout, audit) =
        audit_command(&[&py, "-c", own_queue], &[], out.path(), "own-queue");
    assert_eq!(code, 4, "{stdout}");
    assert_eq!(
        audit["foreign_queues"],
        serde_json::json!([{"queue": "orders-dev", "created": true, "receives": 3, "calls": 4, "refused": 0}]),
        "{audit}"
    );
    assert!(
        stdout.contains("the consumer used queue(s) the audit did not make: orders-dev (created by the consumer; 3 receives, 4 requests, 0 refused)"),
        "{stdout}"
    );
}

/// A consumer that receives and deletes every message without doing its work (as Celery does
/// with bodies it does not understand) writes no ledger: nothing shows the work was done, so the
/// audit is not clean and does not exit 0; and a consumer that purges the queue instead of
/// deleting leaves every message gone, none deleted.
#[test]
fn a_consumer_that_discards_every_message_or_purges_is_never_clean() {
    let out = tempfile::tempdir().unwrap();
    let py = python();
    let discard = "import boto3, os\n\
        q = os.environ['SQSPROBE_QUEUE_URL']\n\
        c = boto3.client('sqs')\n\
        left = 4\n\
        while left:\n\
        \x20   for m in c.receive_message(QueueUrl=q, MaxNumberOfMessages=10, WaitTimeSeconds=1).get('Messages', []):\n\
        \x20       c.delete_message(QueueUrl=q, ReceiptHandle=m['ReceiptHandle'])\n\
        \x20       left -= 1\n";
    let (code, stdout, audit) = audit_command(&[&py, "-c", discard], &[], out.path(), "discard");
    assert_eq!(code, 5, "{stdout}");
    assert_eq!(audit["clean"], false);
    assert_eq!(audit["findings"].as_array().unwrap().len(), 0);
    assert!(
        audit["per_message"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["decision"] == "HOLD" && m["deleted"] == true),
        "{audit}"
    );
    assert!(stdout.contains("the work was not checked"), "{stdout}");

    let purge = "import boto3, os, threading\n\
        q = os.environ['SQSPROBE_QUEUE_URL']\n\
        c = boto3.client('sqs')\n\
        c.purge_queue(QueueUrl=q)\n\
        open(os.environ['SQSPROBE_LEDGER'], 'a').close()\n\
        threading.Event().wait()\n";
    let (code, stdout, audit) = audit_command(&[&py, "-c", purge], &[], out.path(), "purge");
    assert_eq!(code, 4, "{stdout}");
    assert_eq!(audit["counts"]["gone_without_delete"], 4, "{audit}");
    assert!(
        audit["per_message"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["decision"] == "HOLD" && m["deleted"] == false),
        "{audit}"
    );
}

#[test]
fn a_consumer_that_cannot_start_and_a_missing_command_are_refused() {
    let out = tempfile::tempdir().unwrap();
    let missing = run_bin(
        &[
            "audit",
            "--out",
            out.path().to_str().unwrap(),
            "--",
            "/nonexistent/consumer",
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(missing.code(), 3, "{}", missing.stderr);
    assert!(
        missing.stderr.contains("the consumer could not start"),
        "{}",
        missing.stderr
    );
    let none = run_bin(&["audit", "--messages", "2"], &root(), LIMIT);
    assert_eq!(none.code(), 1, "{}", none.stderr);
}

/// The Rust example consumer (`cargo build --example audit-correct`), built if the test run
/// did not build it already.
pub(crate) fn rust_consumer() -> PathBuf {
    rust_example("audit-correct")
}

/// The crate's example `name` (`cargo build --example NAME`), built if the test run did not
/// build it already.
pub(crate) fn rust_example(name: &str) -> PathBuf {
    let path = common::bin()
        .parent()
        .expect("target/debug")
        .join("examples")
        .join(name);
    if !path.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let built = std::process::Command::new(cargo)
            .args(["build", "--example", name])
            .current_dir(root())
            .status()
            .expect("cargo runs");
        assert!(built.success(), "the example {name} does not build");
    }
    path
}

/// Each SDK is exercised: the correct adapter in Rust and JavaScript is clean with chaos on,
/// and JavaScript's handle-by-MessageId adapter is flagged as Python's is.
#[test]
fn the_rust_and_javascript_consumers_are_judged_alike() {
    let out = tempfile::tempdir().unwrap();
    let chaos = [
        "--chaos",
        "duplicate=0.3,redeliver-after-delete=0.3",
        "--seed",
        "6",
    ];
    let rust = rust_consumer();
    let (code, said, audit) = audit_command(
        &[rust.to_str().unwrap()],
        &chaos,
        out.path(),
        "rust-correct",
    );
    assert_eq!(
        (code, &audit["clean"]),
        (0, &serde_json::json!(true)),
        "{said}"
    );
    let js = root().join("examples/consumers/javascript");
    assert!(
        js.join("node_modules/@aws-sdk/client-sqs").exists(),
        "run scripts/node-consumers (scripts/test does)"
    );
    let correct = js.join("correct.mjs");
    let (code, said, audit) = audit_command(
        &["node", correct.to_str().unwrap()],
        &chaos,
        out.path(),
        "js-correct",
    );
    assert_eq!(
        (code, &audit["clean"]),
        (0, &serde_json::json!(true)),
        "{said}"
    );
    let faulty = js.join("by_message_id.mjs");
    let (code, said, audit) = audit_command(
        &["node", faulty.to_str().unwrap()],
        &[],
        out.path(),
        "js-stale",
    );
    assert_eq!(code, 4, "{said}");
    assert!(
        kinds(&audit)
            .iter()
            .any(|(k, d)| k == "stale_handle_ack" && d == "REPAIR"),
        "{said}"
    );
}

/// `--trials N` repeats the audit on fresh emulators with consecutive seeds and reports each
/// finding kind as a rate over the trials.
#[test]
fn trials_report_each_finding_kind_as_a_rate() {
    let out = tempfile::tempdir().unwrap();
    let (code, said, _) = audit(
        "by_message_id.py",
        &["--trials", "3", "--seed", "10"],
        out.path(),
        "stale-trials",
    );
    assert_eq!(code, 4, "{said}");
    let dir = out.path().join("stale-trials");
    for k in 1..=3 {
        assert!(
            dir.join(format!("trial-{k}/audit.json")).exists(),
            "trial {k}"
        );
    }
    let rates = read_json(&dir.join("trials.json"));
    assert_eq!(rates["trials"], 3);
    assert_eq!(rates["kinds"]["stale_handle_ack"]["found"], 3);
    assert_eq!(rates["kinds"]["ack_before_commit"]["found"], 0);
    let [lo, hi] = [0, 1].map(|i| {
        rates["kinds"]["stale_handle_ack"]["interval"][i]
            .as_f64()
            .unwrap()
    });
    assert!(lo > 0.25 && hi == 1.0, "{rates}");
    assert!(said.contains("stale_handle_ack in 3 of 3 trials"), "{said}");

    // Each trial is judged again from its evidence alone, and agrees with what it recorded.
    let check = run_bin(&["check", dir.to_str().unwrap()], &root(), LIMIT);
    assert_eq!(check.code(), 4, "{}\n{}", check.stdout, check.stderr);
    assert_eq!(
        check.stdout.matches("agrees").count(),
        3,
        "{}",
        check.stdout
    );

    // A verdict edited after the fact is one the evidence does not support.
    let one = dir.join("trial-2/audit.json");
    let mut edited = read_json(&one);
    edited["counts"]["stale_handle_ack"] = 0.into();
    edited["clean"] = true.into();
    std::fs::write(&one, edited.to_string()).unwrap();
    let check = run_bin(&["check", dir.to_str().unwrap()], &root(), LIMIT);
    assert_eq!(check.code(), 3, "{}\n{}", check.stdout, check.stderr);
    assert!(
        check.stdout.contains("DIFFERS")
            && check
                .stdout
                .contains("`clean`: recorded true, the evidence gives false"),
        "{}",
        check.stdout
    );

    // A history with a row that does not read is refused with its line, never judged around.
    let evidence = dir.join("trial-1/evidence.jsonl");
    let text = std::fs::read_to_string(&evidence).unwrap();
    let broken = text.replacen("\"message_seq\"", "\"message_sequence\"", 1);
    std::fs::write(&evidence, broken).unwrap();
    let check = run_bin(&["check", dir.to_str().unwrap()], &root(), LIMIT);
    assert_eq!(check.code(), 3, "{}\n{}", check.stdout, check.stderr);
    assert!(
        check.stderr.contains("a `delivery` row that does not read"),
        "{}",
        check.stderr
    );
}

/// Runs `sqsprobe audit --plan` on one of the example consumers with an example plan.
fn audit_example(
    plan: &str,
    example: &str,
    args: &[&str],
    out: &Path,
    run_id: &str,
) -> (i32, String, serde_json::Value) {
    let plan = root().join("examples/consumers/plans").join(plan);
    let script = root().join("examples/consumers/python").join(example);
    let py = python();
    let mut command = vec![py.as_str(), script.to_str().unwrap()];
    command.extend_from_slice(args);
    audit_plan(&plan, &command, out, run_id)
}

/// Writes `plan` into `out` and runs `sqsprobe audit --plan` on an inline Python consumer.
fn audit_inline(
    plan: &str,
    consumer: &str,
    out: &Path,
    run_id: &str,
) -> (i32, String, serde_json::Value) {
    let path = out.join(format!("{run_id}.yaml"));
    std::fs::write(&path, plan).unwrap();
    let py = python();
    audit_plan(&path, &[&py, "-c", consumer], out, run_id)
}

fn evidence_rows(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("evidence.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Real message shapes, each read by the plan as the consumer reads it: base64 of a JSON
/// message (dramatiq), the key in a message attribute with a body that is not JSON, an SNS
/// notification with the order inside its `Message` string. A correct consumer is clean, and
/// every message is judged by its own key.
#[test]
fn a_plan_feeds_base64_attribute_and_sns_shaped_messages() {
    let out = tempfile::tempdir().unwrap();
    let (code, said, audit) = audit_example("shapes.yaml", "shapes.py", &[], out.path(), "shapes");
    assert_eq!(code, 0, "{said}");
    assert_eq!(audit["clean"], true, "{audit}");
    assert_eq!(audit["messages"], 12, "{audit}");
    let mut keys: Vec<&str> = audit["per_message"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["business_key"].as_str().unwrap())
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "b-1", "b-2", "b-3", "b-4", "events-1", "events-2", "events-3", "events-4", "task-1",
            "task-2", "task-3", "task-4"
        ],
        "{audit}"
    );
    // The evidence reads the same keys out of each delivery, and holds no body.
    let rows = assert_digest_only_evidence(&out.path().join("shapes"));
    assert!(
        rows.iter()
            .any(|r| r["type"] == "delivery" && r["data"]["business_key"] == "task-2"),
        "the attribute's key"
    );
    let start = rows.iter().find(|r| r["type"] == "audit_start").unwrap();
    assert_eq!(start["data"]["queues"][2]["body"], "sns(text)");
}

/// Two queues of the default shape: each has keys of its own, so a correct consumer of both
/// commits every key once and no commit reads as a duplicate of the other queue's.
#[test]
fn two_queues_have_distinct_keys_and_no_false_duplicate_commit() {
    let out = tempfile::tempdir().unwrap();
    let plan = out.path().join("two.yaml");
    std::fs::write(
        &plan,
        "queues:\n  - name: orders\n    messages: 3\n  - name: refunds\n    messages: 3\n",
    )
    .unwrap();
    let script = root().join("examples/consumers/python/shapes.py");
    let py = python();
    let (code, said, audit) =
        audit_plan(&plan, &[&py, script.to_str().unwrap()], out.path(), "two");
    assert_eq!(code, 0, "{said}");
    assert_eq!(audit["clean"], true, "{audit}");
    assert_eq!(audit["counts"]["duplicate_commit"], 0, "{audit}");
    let ledger = std::fs::read_to_string(out.path().join("two/ledger.txt")).unwrap();
    let mut lines: Vec<&str> = ledger.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        ["b-1", "b-2", "b-3", "refunds-1", "refunds-2", "refunds-3"]
    );
}

/// A consume-and-forward stage writes no ledger: its forwards to the plan's output queue are
/// its commits, so it is clean (exit 0, the work checked); and a retry that publishes the work
/// again to the same queue before deleting the original is a hand-off, not an
/// acknowledgement before the commit: the new message is judged in its place.
#[test]
fn a_forwarder_commits_by_forwarding_and_a_retry_is_a_hand_off() {
    let out = tempfile::tempdir().unwrap();
    let (code, said, audit) =
        audit_example("forward.yaml", "forward.py", &[], out.path(), "forward");
    assert_eq!(code, 0, "{said}");
    assert_eq!(audit["clean"], true, "{audit}");
    assert_eq!(
        audit["ledger"], true,
        "the output queue shows the work: {audit}"
    );
    assert!(!out.path().join("forward/ledger.txt").exists());
    let rows = evidence_rows(&out.path().join("forward"));
    let forwards = rows
        .iter()
        .filter(|r| r["type"] == "commit" && r["data"]["channel"] == "forward")
        .count();
    assert_eq!(forwards, 6);

    let (code, said, audit) = audit_example(
        "forward.yaml",
        "forward.py",
        &["--retry", "b-2"],
        out.path(),
        "retry",
    );
    assert_eq!(code, 0, "{said}");
    assert_eq!(audit["clean"], true, "{audit}");
    let messages = audit["per_message"].as_array().unwrap();
    assert_eq!(messages.len(), 7, "the hand-off is judged too: {audit}");
    let handed = messages
        .iter()
        .find(|m| m["sent_by"] == "consumer")
        .unwrap();
    assert_eq!(handed["business_key"], "b-2");
    assert_eq!(handed["decision"], "ACCEPT");
}

/// A consumer that cannot reach the ledger file POSTs each key to the emulator's own port; the
/// POST is heard before it is answered, so the commit-then-delete consumer is clean and the
/// delete-then-commit one is at-most-once, every time.
#[test]
fn an_http_ledger_is_ordered_like_the_file() {
    let out = tempfile::tempdir().unwrap();
    let (code, said, judged) = audit("http_ledger.py", &[], out.path(), "http");
    assert_eq!(code, 0, "{said}");
    assert_eq!(judged["clean"], true, "{judged}");
    assert!(!out.path().join("http/ledger.txt").exists());
    let rows = evidence_rows(&out.path().join("http"));
    assert_eq!(
        rows.iter()
            .filter(|r| r["type"] == "commit" && r["data"]["channel"] == "http")
            .count(),
        4
    );
    let script = root().join("examples/consumers/python/http_ledger.py");
    let py = python();
    let (code, said, audit) = audit_command(
        &[&py, script.to_str().unwrap(), "--delete-first"],
        &[],
        out.path(),
        "http-first",
    );
    assert_eq!(code, 4, "{said}");
    assert_eq!(audit["counts"]["ack_before_commit"], 4, "{audit}");
}

/// A message whose business key cannot be read where the plan says is a finding of its own
/// naming its MessageId (here a follow-up the consumer published to the queue without the
/// key), never counted as work undone; and a ledger of MessageIds instead of keys is pointed
/// out line by line.
#[test]
fn an_unreadable_key_and_a_ledger_of_message_ids_are_named() {
    let out = tempfile::tempdir().unwrap();
    let mangle = "import boto3, json, os\n\
        q = os.environ['SQSPROBE_QUEUE_URL']\n\
        c = boto3.client('sqs')\n\
        led = os.environ['SQSPROBE_LEDGER']\n\
        while True:\n\
        \x20   for m in c.receive_message(QueueUrl=q, MaxNumberOfMessages=10, WaitTimeSeconds=1).get('Messages', []):\n\
        \x20       body = json.loads(m['Body'])\n\
        \x20       if 'business_key' in body:\n\
        \x20           with open(led, 'a') as f: f.write(body['business_key'] + '\\n')\n\
        \x20       if body.get('business_key') == 'b-1':\n\
        \x20           c.send_message(QueueUrl=q, MessageBody=json.dumps({'audit_of': 'b-1'}))\n\
        \x20       c.delete_message(QueueUrl=q, ReceiptHandle=m['ReceiptHandle'])\n";
    let (code, said, audit) = audit_inline(
        "queues:\n  - name: jobs\n    messages: 3\n",
        mangle,
        out.path(),
        "unreadable",
    );
    assert_eq!(code, 4, "{said}");
    let found = kinds(&audit);
    assert_eq!(
        found,
        [("unreadable_key".to_string(), "HOLD".to_string())],
        "{said}"
    );
    let finding = &audit["findings"][0];
    let id = finding["message"].as_str().unwrap();
    let handed = audit["per_message"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["message"] == id)
        .expect("the finding names the hand-off's MessageId");
    assert_eq!(handed["sent_by"], "consumer");
    assert!(said.contains("FINDING  unreadable_key · HOLD"), "{said}");

    let by_id = "import boto3, os\n\
        q = os.environ['SQSPROBE_QUEUE_URL']\n\
        c = boto3.client('sqs')\n\
        led = os.environ['SQSPROBE_LEDGER']\n\
        while True:\n\
        \x20   for m in c.receive_message(QueueUrl=q, MaxNumberOfMessages=10, WaitTimeSeconds=1).get('Messages', []):\n\
        \x20       with open(led, 'a') as f: f.write(m['MessageId'] + '\\n')\n\
        \x20       c.delete_message(QueueUrl=q, ReceiptHandle=m['ReceiptHandle'])\n";
    let (code, said, audit) = audit_inline(
        "queues:\n  - name: jobs\n    messages: 3\n",
        by_id,
        out.path(),
        "by-id",
    );
    assert_eq!(code, 4, "{said}");
    assert_eq!(audit["counts"]["unmatched_commit"], 3, "{audit}");
    assert!(
        said.contains("the MessageId of the message with business key `b-1`"),
        "{said}"
    );
}
