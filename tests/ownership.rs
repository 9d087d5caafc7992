//! Ownership fails closed (issue 7, rule 8): only `QueueDoesNotExist` proves a queue name
//! free, and two processes given the same `--run-id` never use or delete each other's queues.

mod common;

use common::{root, run_bin, single_run_dir};
use sqsprobe::evidence::format::{Record, Verdict};
use sqsprobe::evidence::read_evidence;
use std::process::{Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

fn records(out: &std::path::Path) -> Vec<Record> {
    read_evidence(&single_run_dir(out).join("evidence.jsonl")).unwrap()
}

#[test]
fn a_name_lookup_that_fails_otherwise_than_not_found_stops_the_case_before_create_queue() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let emu = rt
        .block_on(sqsprobe::emulator::spawn(
            "127.0.0.1:0".parse().unwrap(),
            sqsprobe::emulator::EmulatorConfig::default(),
        ))
        .unwrap();
    let proxy = rt.block_on(common::proxy::start_with(
        emu.local_addr(),
        common::proxy::Mischief {
            fail: Some(("AmazonSQS.GetQueueUrl".into(), 500, "InternalError".into())),
            ..Default::default()
        },
    ));
    let out = tempfile::tempdir().unwrap();
    let run = run_bin(
        &[
            "run",
            "tests/fixtures/three-sends.yaml",
            "--case",
            "send-one",
            "--endpoint-url",
            &proxy.url,
            "--out",
            out.path().to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    let records = records(out.path());
    let calls: Vec<&str> = records
        .iter()
        .filter_map(|r| match r {
            Record::Call(c) if !c.case.is_empty() => Some(c.action.as_str()),
            _ => None,
        })
        .collect();
    assert!(!calls.contains(&"CreateQueue"), "{calls:?}");
    let end = records
        .iter()
        .find_map(|r| match r {
            Record::CaseEnd(e) => Some(e),
            _ => None,
        })
        .unwrap();
    assert_eq!(end.verdict, Verdict::Error);
    assert!(
        end.reason.contains("could not prove the name"),
        "{}",
        end.reason
    );
    drop(proxy);
    rt.block_on(emu.shutdown());
}

#[test]
fn two_processes_with_the_same_run_id_never_touch_each_others_queues() {
    let serve = common::serve::Serve::start();
    let url = serve.url.clone();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (out_a, out_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let args = |out: &std::path::Path| -> Vec<String> {
        [
            "run",
            "tests/fixtures/short-sleep.yaml",
            "--run-id",
            "same-run-id-1",
            "--endpoint-url",
            &url,
            "--out",
            out.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    let a = Command::new(common::bin())
        .args(args(out_a.path()))
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_for_queue(
        &rt,
        &url,
        "sqsprobe-same-run-id-1-",
        Duration::from_secs(20),
        "process A never created its queue",
    );
    let b_args = args(out_b.path());
    let b = run_bin(
        &b_args.iter().map(String::as_str).collect::<Vec<_>>(),
        &root(),
        LIMIT,
    );
    // B sees A's queue under its own name and refuses it: an error, and nothing deleted.
    assert_eq!(b.code(), 3, "{}\n{}", b.stdout, b.stderr);
    let b_calls: Vec<String> = records(out_b.path())
        .iter()
        .filter_map(|r| match r {
            Record::Call(c) => Some(c.action.clone()),
            _ => None,
        })
        .collect();
    assert!(
        !b_calls
            .iter()
            .any(|a| a == "CreateQueue" || a == "DeleteQueue"),
        "{b_calls:?}"
    );
    assert!(
        !rt.block_on(common::queues_with_prefix(&url, "sqsprobe-same-run-id-1-"))
            .is_empty(),
        "B deleted A's queue"
    );
    // A still owns its queue, finishes and deletes it.
    let a = common::wait_bounded(a, LIMIT);
    assert_eq!(a.code(), 0, "{}\n{}", a.stdout, a.stderr);
    assert!(
        rt.block_on(common::queues_with_prefix(&url, "sqsprobe-same-run-id-1-"))
            .is_empty()
    );
}
