//! SIGINT, SIGTERM and SIGHUP in the middle of an observation window: each stops the run the
//! same way — teardown done, the evidence valid to its last line, every report written, exit
//! 130 — and a second signal leaves at once. Against a real moto server.

use crate::common;

use common::{Moto, queues_with_prefix, root, send_signal, single_run_dir};
use sqsprobe_core::evidence::format::{Record, Verdict};
use sqsprobe_core::evidence::read_evidence;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Starts the long-window suite against `url`, and waits (bounded) until its queue exists and
/// the observation has begun.
fn start_observing(url: &str, out: &std::path::Path, rt: &tokio::runtime::Runtime) -> Child {
    let child = Command::new(common::bin())
        .args([
            "run",
            "tests/fixtures/observe-long.yaml",
            "--endpoint-url",
            url,
            "--out",
        ])
        .arg(out)
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_for_queue(
        rt,
        url,
        "sqsprobe-",
        Duration::from_secs(30),
        "the run never created its queue",
    );
    // Past the send and the receive: inside the window, once an observing receive is recorded.
    common::wait_for_evidence(
        out,
        r#""phase":"observe""#,
        Duration::from_secs(30),
        "the run never began its observation",
    );
    child
}

#[test]
fn every_stop_signal_tears_down_and_leaves_valid_evidence_and_reports() {
    let moto = Moto::start();
    let rt = runtime();
    for name in ["INT", "TERM", "HUP"] {
        let out = tempfile::tempdir().unwrap();
        let child = start_observing(&moto.url, out.path(), &rt);
        send_signal(&child, name);
        let done = common::wait_bounded(child, Duration::from_secs(30));
        common::recheck_dir(out.path());
        assert_eq!(done.code(), 130, "SIG{name}: {}", done.stderr);
        assert!(
            done.stderr.contains(&format!("SIG{name}: interrupted")),
            "{}",
            done.stderr
        );
        let left = rt.block_on(queues_with_prefix(&moto.url, "sqsprobe-"));
        assert!(left.is_empty(), "SIG{name}: queues left behind: {left:?}");

        let dir = single_run_dir(out.path());
        // Read strictly: every line complete and known.
        let records = read_evidence(&dir.join("evidence.jsonl")).unwrap();
        let end = records
            .iter()
            .find_map(|r| match r {
                Record::CaseEnd(e) => Some(e),
                _ => None,
            })
            .expect("the case ended");
        assert_eq!(
            end.verdict,
            Verdict::Inconclusive,
            "SIG{name}: {}",
            end.reason
        );
        assert_eq!(end.window.as_ref().unwrap().ended.as_str(), "interrupted");
        assert!(end.queues.iter().all(|q| q.deleted));
        match records.last() {
            Some(Record::RunEnd(e)) => {
                assert!(e.interrupted);
                assert_eq!(e.exit_code, 130);
            }
            other => panic!("SIG{name}: last record {other:?}"),
        }
        let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
        quick_junit::Report::deserialize_from_str(&junit).expect("JUnit parses");
        assert!(dir.join("summary.md").is_file() && dir.join("report.html").is_file());
    }
}

#[test]
fn a_second_signal_leaves_at_once_and_names_what_it_abandons() {
    // Teardown's DeleteQueue is held at a proxy, so the second signal arrives while the run
    // is still tearing down.
    let rigged = common::proxy::Rigged::start(common::proxy::Mischief {
        delay: Some(("AmazonSQS.DeleteQueue".into(), Duration::from_secs(20))),
        ..Default::default()
    });
    let (rt, proxy) = (&rigged.rt, &rigged.proxy);
    let out = tempfile::tempdir().unwrap();
    let child = start_observing(&proxy.url, out.path(), rt);
    send_signal(&child, "TERM");
    // Tearing down: the proxy holds the DeleteQueue the first signal led to.
    common::wait_until(
        "the run never began its teardown",
        Duration::from_secs(30),
        || {
            rigged.seen().requests.iter().any(
                |r| matches!(r, common::proxy::WireRequest::Json(t) if t == "AmazonSQS.DeleteQueue"),
            )
        },
    );
    // It leaves without the DeleteQueue's answer: the queue is still on the target (the proxy
    // holds the request 20 s) and named as abandoned. A run that waited for it would find the
    // queue deleted.
    send_signal(&child, "TERM");
    let done = common::wait_bounded(child, Duration::from_secs(30));
    common::recheck_dir(out.path());
    assert_eq!(done.code(), 130, "{}", done.stderr);
    assert!(
        done.stderr.contains("abandoned 1 owned queue(s)"),
        "{}",
        done.stderr
    );
    let left = rt.block_on(queues_with_prefix(&rigged.direct_url(), "sqsprobe-"));
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(
        done.stderr.contains(left[0].rsplit('/').next().unwrap()),
        "the abandoned queue is not named: {}",
        done.stderr
    );
}
