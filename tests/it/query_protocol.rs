//! `sqsprobe run --protocol query` end to end: the playbook suites pass over the query
//! protocol against the embedded emulator and moto, the evidence says so, and the wire carries
//! form-encoded `Action=` requests only.

use crate::common;

use common::proxy::{Mischief, Rigged, WireRequest};
use common::{Moto, root, run_bin, single_run_dir};
use sqsprobe_core::evidence::{Record, read_evidence};
use std::path::Path;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);
const PLAYBOOKS: [&str; 3] = [
    "suites/stale-handle.yaml",
    "suites/lease-expiry.yaml",
    "suites/partial-batch.yaml",
];

/// `run_start.protocol` and the number of finished cases of the only run under `out`.
fn protocol_and_cases(out: &Path) -> (String, usize) {
    let dir = single_run_dir(out);
    let records = read_evidence(&dir.join("evidence.jsonl")).expect("evidence parses");
    let protocol = records
        .iter()
        .find_map(|r| match r {
            Record::RunStart(s) => Some(s.protocol.as_str().to_string()),
            _ => None,
        })
        .expect("a run_start record");
    let ends = records
        .iter()
        .filter(|r| matches!(r, Record::CaseEnd(_)))
        .count();
    (protocol, ends)
}

#[test]
fn playbooks_pass_over_query_against_the_embedded_emulator() {
    let out = tempfile::tempdir().unwrap();
    let mut args = vec![
        "run",
        "--protocol",
        "query",
        "--out",
        out.path().to_str().unwrap(),
    ];
    args.extend(PLAYBOOKS);
    let run = run_bin(&args, &root(), LIMIT);
    assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
    let (protocol, ends) = protocol_and_cases(out.path());
    assert_eq!(protocol, "query");
    assert_eq!(ends, 5);
}

#[test]
fn playbooks_pass_over_query_against_moto_and_the_wire_is_query() {
    let moto = Moto::start();
    let rigged = Rigged::in_front_of(moto.addr, Mischief::default());
    let proxy = &rigged.proxy;
    let out = tempfile::tempdir().unwrap();
    let mut args = vec![
        "run",
        "--protocol",
        "query",
        "--endpoint-url",
        &proxy.url,
        "--out",
        out.path().to_str().unwrap(),
    ];
    args.extend(PLAYBOOKS);
    let run = run_bin(&args, &root(), LIMIT);
    assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
    let (protocol, ends) = protocol_and_cases(out.path());
    assert_eq!(protocol, "query");
    assert_eq!(ends, 5);

    let requests = rigged.seen().requests;
    let mut actions = std::collections::BTreeSet::new();
    for r in &requests {
        match r {
            WireRequest::Query {
                action,
                content_type,
            } => {
                assert_eq!(content_type, "application/x-www-form-urlencoded");
                actions.insert(action.as_str());
            }
            other => panic!("a request was not query protocol: {other:?}"),
        }
    }
    for op in [
        "CreateQueue",
        "SendMessage",
        "ReceiveMessage",
        "DeleteMessage",
        "DeleteMessageBatch",
        "DeleteQueue",
    ] {
        assert!(actions.contains(op), "{op} never sent; saw {actions:?}");
    }
}

#[test]
fn json_stays_the_default_on_the_wire() {
    let moto = Moto::start();
    let rigged = Rigged::in_front_of(moto.addr, Mischief::default());
    let proxy = &rigged.proxy;
    let out = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "--endpoint-url",
        &proxy.url,
        "--out",
        out.path().to_str().unwrap(),
        "suites/stale-handle.yaml",
    ];
    let run = run_bin(&args, &root(), LIMIT);
    assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(protocol_and_cases(out.path()).0, "json");
    let requests = rigged.seen().requests;
    assert!(!requests.is_empty());
    assert!(
        requests.iter().all(|r| matches!(r, WireRequest::Json(_))),
        "{requests:?}"
    );
}

#[test]
fn query_against_aws_is_refused_before_anything_runs() {
    let out = tempfile::tempdir().unwrap();
    for target in [
        &["--target", "aws"][..],
        &["--endpoint-url", "https://sqs.us-east-1.amazonaws.com"][..],
    ] {
        let mut args = vec!["run", "--protocol", "query", "--out"];
        args.push(out.path().to_str().unwrap());
        args.extend(target);
        args.push("suites/stale-handle.yaml");
        let run = run_bin(&args, &root(), LIMIT);
        assert_eq!(run.code(), 1, "{}", run.stderr);
        assert!(
            run.stderr.contains("--protocol query is for emulators"),
            "{}",
            run.stderr
        );
    }
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
}
