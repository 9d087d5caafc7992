//! Ownership fails closed (rule 8): only `QueueDoesNotExist` proves a queue name
//! free, and two processes given the same `--run-id` never use or delete each other's queues.

use crate::common;

use common::{root, run_bin, single_run_dir};
use sqsprobe_core::evidence::format::{Record, Verdict};
use sqsprobe_core::evidence::read_evidence;
use std::process::{Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

fn records(out: &std::path::Path) -> Vec<Record> {
    read_evidence(&single_run_dir(out).join("evidence.jsonl")).unwrap()
}

/// `run` of `three-sends.yaml`'s `send-one` case through `endpoint`, evidence into `out`,
/// under `run_id` when given.
fn run_send_one(endpoint: &str, run_id: Option<&str>, out: &std::path::Path) -> common::Finished {
    let mut args = vec![
        "run",
        "tests/fixtures/three-sends.yaml",
        "--case",
        "send-one",
        "--endpoint-url",
        endpoint,
        "--out",
        out.to_str().unwrap(),
    ];
    if let Some(id) = run_id {
        args.extend(["--run-id", id]);
    }
    run_bin(&args, &root(), LIMIT)
}

#[test]
fn a_name_lookup_that_fails_otherwise_than_not_found_stops_the_case_before_create_queue() {
    let rigged = common::proxy::Rigged::start(common::proxy::Mischief {
        fail: Some(("AmazonSQS.GetQueueUrl".into(), 500, "InternalError".into())),
        ..Default::default()
    });
    let proxy = &rigged.proxy;
    let out = tempfile::tempdir().unwrap();
    let run = run_send_one(&proxy.url, None, out.path());
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

/// The regions `lifecycle-regions-are-namespaces` touches: it creates its name in the first
/// two and looks it up in the third.
const CASE_REGIONS: [&str; 3] = ["us-east-1", "us-west-2", "eu-central-1"];

/// Runs the multi-region case against `endpoint` with run id `run_id`, then lists this run's
/// queues in every region it touched: the names still there.
fn regions_case_leaves(endpoint: &str, run_id: &str) -> Vec<String> {
    let out = tempfile::tempdir().unwrap();
    let run = run_bin(
        &[
            "run",
            "suites/conformance/lifecycle.yaml",
            "--case",
            "lifecycle-regions-are-namespaces",
            "--endpoint-url",
            endpoint,
            "--run-id",
            run_id,
            "--out",
            out.path().to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        !run.stdout.contains("may still be on the target"),
        "{}",
        run.stdout
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let prefix = format!("sqsprobe-{run_id}-");
    CASE_REGIONS
        .iter()
        .flat_map(|region| {
            rt.block_on(common::queues_with_prefix_in(endpoint, region, &prefix))
                .into_iter()
                .map(move |q| format!("{q} in {region}"))
        })
        .collect()
}

/// A target that answers the same URL for one name in two regions (moto's
/// `/<account>/<name>`) still gets one DeleteQueue per region, so nothing is left.
#[test]
fn one_name_in_two_regions_is_deleted_in_both_when_urls_omit_the_region() {
    let serve = common::serve::Serve::start_with(&["--queue-urls", "region-less"]);
    // The form under test: one URL for both regions' queues.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let urls: Vec<String> = ["us-east-1", "us-west-2"]
        .iter()
        .map(|region| {
            rt.block_on(async {
                let c = common::client_in(&serve.url, region).await;
                let out = c.create_queue().queue_name("probe-form").send().await;
                out.expect("create")
                    .queue_url()
                    .unwrap_or_default()
                    .to_string()
            })
        })
        .collect();
    assert_eq!(
        urls[0], urls[1],
        "region-less URLs differ by region: {urls:?}"
    );
    for run_id in ["regionless-1", "regionless-2"] {
        let left = regions_case_leaves(&serve.url, run_id);
        assert!(left.is_empty(), "queues left behind: {left:?}");
    }
}

/// The same against moto 5.2.5 itself, twice in a row.
#[test]
fn one_name_in_two_regions_is_deleted_in_both_on_moto() {
    let moto = common::Moto::start();
    for run_id in ["moto-regions-1", "moto-regions-2"] {
        let left = regions_case_leaves(&moto.url, run_id);
        assert!(left.is_empty(), "queues left behind on moto: {left:?}");
    }
}

/// A queue whose DeleteQueue got no definite answer is named on the terminal, in summary.md
/// and in `run_end.left_queues`, with the sweep line that removes it.
#[test]
fn a_queue_teardown_could_not_delete_is_named_with_its_sweep_line() {
    let rigged = common::proxy::Rigged::start(common::proxy::Mischief {
        fail: Some(("AmazonSQS.DeleteQueue".into(), 500, "InternalError".into())),
        ..Default::default()
    });
    let (rt, proxy) = (&rigged.rt, &rigged.proxy);
    let out = tempfile::tempdir().unwrap();
    let run = run_send_one(&proxy.url, Some("left-1"), out.path());
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    let sweep = format!(
        "sqsprobe sweep --endpoint-url {} --region us-east-1 --run-id left-1",
        proxy.url
    );
    assert!(
        run.stdout
            .contains("1 owned queue may still be on the target"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(&sweep), "{}", run.stdout);
    let dir = single_run_dir(out.path());
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("**Queues left behind**"), "{summary}");
    assert!(summary.contains(&sweep), "{summary}");
    let left = records(out.path())
        .into_iter()
        .find_map(|r| match r {
            Record::RunEnd(e) => Some(e.left_queues),
            _ => None,
        })
        .unwrap();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].region, "us-east-1");
    assert!(
        left[0].queue.starts_with("sqsprobe-left-1-send-one-"),
        "{left:?}"
    );
    // The queue is there, as the run said.
    let alive = rt.block_on(common::queues_with_prefix(
        &rigged.direct_url(),
        "sqsprobe-left-1-",
    ));
    assert_eq!(alive.len(), 1, "{alive:?}");
}

/// A DeleteQueue that takes effect but is never answered (sqslite does this to a queue already
/// gone) is a teardown finding, and teardown then asks GetQueueUrl: the queue is gone, so it
/// is not named as left behind.
#[test]
fn an_unanswered_delete_of_a_queue_that_is_gone_leaves_nothing_behind() {
    let rigged = common::proxy::Rigged::start(common::proxy::Mischief {
        lose_every: Some("AmazonSQS.DeleteQueue".into()),
        ..Default::default()
    });
    let (rt, proxy) = (&rigged.rt, &rigged.proxy);
    let out = tempfile::tempdir().unwrap();
    let run = run_send_one(&proxy.url, Some("gone-1"), out.path());
    // The case errs on its teardown; nothing is left, so no sweep line.
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    assert!(
        !run.stdout.contains("may still be on the target"),
        "{}",
        run.stdout
    );
    let recs = records(out.path());
    let end = recs
        .iter()
        .find_map(|r| match r {
            Record::CaseEnd(e) => Some(e.clone()),
            _ => None,
        })
        .unwrap();
    let teardown: Vec<_> = end.findings.iter().filter(|f| f.teardown).collect();
    assert_eq!(teardown.len(), 1, "{:?}", end.findings);
    assert!(
        teardown[0]
            .message
            .contains("DeleteQueue got no definite answer (no response"),
        "{}",
        teardown[0].message
    );
    assert!(
        teardown[0]
            .message
            .ends_with("GetQueueUrl then answered QueueDoesNotExist, so it is gone"),
        "{}",
        teardown[0].message
    );
    assert!(end.queues.iter().all(|q| q.deleted), "{:?}", end.queues);
    let left = recs
        .iter()
        .find_map(|r| match r {
            Record::RunEnd(e) => Some(e.left_queues.clone()),
            _ => None,
        })
        .unwrap();
    assert!(left.is_empty(), "{left:?}");
    let alive = rt.block_on(common::queues_with_prefix(
        &rigged.direct_url(),
        "sqsprobe-gone-1-",
    ));
    assert!(alive.is_empty(), "{alive:?}");
}

/// `run_start.regions` names every region the cases touch, before anything is
/// created, and `sweep --regions-of RUN_DIR` sweeps each of them: a run whose teardown failed
/// leaves queues in two regions, and one sweep removes both.
#[test]
fn sweep_regions_of_a_run_folder_removes_what_it_left_in_every_region() {
    let rigged = common::proxy::Rigged::start(common::proxy::Mischief {
        fail: Some(("AmazonSQS.DeleteQueue".into(), 500, "InternalError".into())),
        ..Default::default()
    });
    let (rt, proxy) = (&rigged.rt, &rigged.proxy);
    let direct = rigged.direct_url();
    let out = tempfile::tempdir().unwrap();
    let run = run_bin(
        &[
            "run",
            "suites/conformance/lifecycle.yaml",
            "--case",
            "lifecycle-regions-are-namespaces",
            "--endpoint-url",
            &proxy.url,
            "--run-id",
            "regions-7",
            "--out",
            out.path().to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(run.code(), 3, "{}\n{}", run.stdout, run.stderr);
    let dir = single_run_dir(out.path());
    let Some(Record::RunStart(start)) = records(out.path()).into_iter().next() else {
        panic!("no run_start")
    };
    assert_eq!(start.regions, ["eu-central-1", "us-east-1", "us-west-2"]);
    let left = |region: &str| {
        rt.block_on(common::queues_with_prefix_in(
            &direct,
            region,
            "sqsprobe-regions-7-",
        ))
    };
    assert_eq!((left("us-east-1").len(), left("us-west-2").len()), (1, 1));
    let sweep = run_bin(
        &[
            "sweep",
            "--endpoint-url",
            &direct,
            "--regions-of",
            dir.to_str().unwrap(),
            "--run-id",
            "regions-7",
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(sweep.code(), 0, "{}\n{}", sweep.stdout, sweep.stderr);
    assert!(sweep.stdout.contains("sweep: "), "{}", sweep.stdout);
    assert!(left("us-east-1").is_empty() && left("us-west-2").is_empty());
}

/// `--regions` restricts a run to the regions an SCP allows: a case whose queues
/// are elsewhere is `unsupported`, naming the region, and a run of nothing else refuses.
#[test]
fn regions_outside_the_allowed_ones_make_a_case_unsupported() {
    let out = tempfile::tempdir().unwrap();
    let run = run_bin(
        &[
            "run",
            "suites/conformance/lifecycle.yaml",
            "--case",
            "lifecycle-regions-are-namespaces",
            "--case",
            "lifecycle-create-idempotent",
            "--regions",
            "us-east-1,us-west-2",
            "--out",
            out.path().to_str().unwrap(),
        ],
        &root(),
        LIMIT,
    );
    let ends: Vec<_> = records(out.path())
        .into_iter()
        .filter_map(|r| match r {
            Record::CaseEnd(e) => Some(e),
            _ => None,
        })
        .collect();
    let regions = ends
        .iter()
        .find(|e| e.case == "lifecycle-regions-are-namespaces")
        .expect("the regions case is recorded");
    assert_eq!(regions.verdict, Verdict::Unsupported);
    assert!(
        regions
            .reason
            .contains("eu-central-1, outside --regions us-east-1,us-west-2"),
        "{}",
        regions.reason
    );
    assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
    let alone = run_bin(
        &[
            "run",
            "suites/conformance/lifecycle.yaml",
            "--case",
            "lifecycle-regions-are-namespaces",
            "--regions",
            "us-east-1",
        ],
        &root(),
        LIMIT,
    );
    assert_eq!(alone.code(), 1, "{}", alone.stderr);
    assert!(
        alone.stderr.contains("outside --regions"),
        "{}",
        alone.stderr
    );
    let own = run_bin(&["run", "--regions", "eu-west-1"], &root(), LIMIT);
    assert_eq!(own.code(), 1, "{}", own.stderr);
    assert!(own.stderr.contains("is not in --regions"), "{}", own.stderr);
}
