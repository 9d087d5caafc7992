//! `sqsprobe sweep` against a real `sqsprobe serve` process: past 1,000 queues,
//! deleting only old queues carrying the ownership tags, leaving untagged, foreign, misnamed
//! and young ones alone; `--dry-run`, `--run-id`, the account guard, a stop by SIGTERM after
//! the queue in flight, and exit 3 when a delete is refused.

use crate::common;

use common::serve::Serve;
use common::{Finished, bin, root, run_bin, wait_bounded};
use std::collections::BTreeSet;
use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(180);
const OLD_RUN: &str = "20200101-000000-old1";

/// Creates `name` with `tags` through the SDK.
async fn create(client: &aws_sdk_sqs::Client, name: &str, tags: &[(&str, &str)]) {
    let mut req = client.create_queue().queue_name(name);
    for (k, v) in tags {
        req = req.tags(*k, *v);
    }
    req.send()
        .await
        .unwrap_or_else(|e| panic!("create {name}: {e:?}"));
}

fn owned(run: &str) -> [(&'static str, &str); 3] {
    [
        ("sqsprobe:owner", "sqsprobe"),
        ("sqsprobe:run", run),
        ("sqsprobe:case", "c"),
    ]
}

/// `n` owned queues of `run`, created 50 at a time.
async fn create_owned(url: &str, run: &str, n: usize) {
    let client = common::client(url).await;
    let names: Vec<String> = (0..n)
        .map(|i| format!("sqsprobe-{run}-c-q{i:04}"))
        .collect();
    for chunk in names.chunks(50) {
        let mut set = tokio::task::JoinSet::new();
        for name in chunk {
            let (client, name, run) = (client.clone(), name.clone(), run.to_string());
            set.spawn(async move { create(&client, &name, &owned(&run)).await });
        }
        while let Some(done) = set.join_next().await {
            done.unwrap();
        }
    }
}

/// Every queue name on the server, every page of ListQueues read.
async fn all_queues(url: &str) -> BTreeSet<String> {
    let client = common::client(url).await;
    let mut pages = client
        .list_queues()
        .max_results(1000)
        .into_paginator()
        .send();
    let mut names = BTreeSet::new();
    while let Some(page) = pages.next().await {
        for url in page.expect("list queues").queue_urls() {
            names.insert(url.rsplit('/').next().unwrap().to_string());
        }
    }
    names
}

fn sweep(url: &str, extra: &[&str]) -> Finished {
    let mut args = vec!["sweep", "--endpoint-url", url];
    args.extend_from_slice(extra);
    run_bin(&args, &root(), LIMIT)
}

fn lines_starting(out: &str, word: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.starts_with(word))
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sweep_pages_past_1000_and_deletes_only_old_queues_it_owns() {
    let serve = Serve::start_with(&["--account-id", "123456789012"]);
    create_owned(&serve.url, OLD_RUN, 1050).await;
    let client = common::client(&serve.url).await;
    let young_run = format!("{}-young", chrono::Utc::now().format("%Y%m%d-%H%M%S"));
    let survivors = [
        // Prefixed and named like the old run, but no tags: never touched.
        (format!("sqsprobe-{OLD_RUN}-c-untagged"), vec![]),
        // Someone else's owner tag.
        (
            format!("sqsprobe-{OLD_RUN}-c-foreign"),
            vec![
                ("sqsprobe:owner", "platform-team"),
                ("sqsprobe:run", OLD_RUN),
            ],
        ),
        // sqsprobe's tags, but not a name any run gives its queues.
        (
            "sqsprobe-handmade".to_string(),
            vec![("sqsprobe:owner", "sqsprobe"), ("sqsprobe:run", OLD_RUN)],
        ),
        // Not prefixed at all: not even listed.
        (
            "orders-prod".to_string(),
            vec![("sqsprobe:owner", "sqsprobe"), ("sqsprobe:run", OLD_RUN)],
        ),
    ];
    for (name, tags) in &survivors {
        create(&client, name, tags).await;
    }
    // Young: by the run id's timestamp, and (no timestamp) by CreatedTimestamp.
    let young = format!("sqsprobe-{young_run}-c-q");
    create(&client, &young, &owned(&young_run)).await;
    let nightly = "sqsprobe-nightly-7-c-q".to_string();
    create(&client, &nightly, &owned("nightly-7")).await;
    let before = all_queues(&serve.url).await;
    assert_eq!(before.len(), 1050 + survivors.len() + 2);

    // Nothing implied: no target, no sweep.
    let bare = run_bin(&["sweep"], &root(), LIMIT);
    assert_eq!(bare.code(), 1, "{}", bare.stderr);
    assert!(bare.stderr.contains("--endpoint-url URL or --target aws"));

    let dry = sweep(&serve.url, &["--dry-run"]);
    assert_eq!(dry.code(), 0, "{}\n{}", dry.stdout, dry.stderr);
    assert_eq!(lines_starting(&dry.stdout, "would delete").len(), 1050);
    assert!(
        dry.stdout.contains(&format!(
            "sweep: {} sqsprobe- queue(s) listed: 1050 would be deleted (dry run), 5 kept, 0 failed",
            1050 + 5
        )),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stderr.contains("dry run: nothing is deleted"),
        "{}",
        dry.stderr
    );
    assert_eq!(
        all_queues(&serve.url).await,
        before,
        "a dry run deletes nothing"
    );

    let real = sweep(&serve.url, &[]);
    assert_eq!(real.code(), 0, "{}\n{}", real.stdout, real.stderr);
    let deleted = lines_starting(&real.stdout, "deleted");
    assert_eq!(deleted.len(), 1050, "every page was read");
    assert!(
        deleted[0].contains(&format!("run {OLD_RUN}, ")) && deleted[0].ends_with(" old"),
        "{}",
        deleted[0]
    );
    let kept = lines_starting(&real.stdout, "kept");
    let reason = |name: &str| {
        kept.iter()
            .find(|l| l.contains(&format!(" {name} ")))
            .unwrap_or_else(|| panic!("no kept line for {name}:\n{}", real.stdout))
            .clone()
    };
    assert!(reason(&survivors[0].0).contains("not sqsprobe's"));
    assert!(reason(&survivors[1].0).contains("not sqsprobe's"));
    assert!(reason("sqsprobe-handmade").contains("but not named"));
    assert!(reason(&young).contains("younger than 2h"));
    assert!(
        reason(&nightly).contains("run nightly-7 is")
            && reason(&nightly).contains("younger than 2h")
    );
    assert!(!real.stdout.contains("orders-prod"));
    assert!(
        real.stdout
            .contains("sweep: 1055 sqsprobe- queue(s) listed: 1050 deleted, 5 kept, 0 failed"),
        "{}",
        real.stdout
    );
    let mut expected: BTreeSet<String> = survivors.iter().map(|(n, _)| n.clone()).collect();
    expected.insert(young.clone());
    expected.insert(nightly.clone());
    assert_eq!(all_queues(&serve.url).await, expected);

    // A named run is swept whatever its age; the others stay.
    let named = sweep(&serve.url, &["--run-id", "nightly-7"]);
    assert_eq!(named.code(), 0, "{}\n{}", named.stdout, named.stderr);
    assert_eq!(lines_starting(&named.stdout, "deleted").len(), 1);
    expected.remove(&nightly);
    assert_eq!(all_queues(&serve.url).await, expected);
    // ... unless an age is asked for as well.
    let aged = sweep(&serve.url, &["--run-id", &young_run, "--older-than", "1h"]);
    assert_eq!(aged.code(), 0, "{}", aged.stdout);
    assert_eq!(
        lines_starting(&aged.stdout, "kept").len(),
        1,
        "{}",
        aged.stdout
    );
    assert_eq!(all_queues(&serve.url).await, expected);
}

/// `sweep --target aws` at serve, with fake keys: the account guard runs before any delete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sweep_on_aws_refuses_a_wrong_account_before_deleting_anything() {
    let serve = Serve::start_with(&["--account-id", "123456789012"]);
    // In us-east-1, the region the test client signs with: each region is its own namespace
    // of queues, so the sweep must name that one.
    create_owned(&serve.url, OLD_RUN, 3).await;
    let sweep_aws = |allow: &str| {
        let child = Command::new(bin())
            .args([
                "sweep",
                "--target",
                "aws",
                "--region",
                "us-east-1",
                "--allow-account",
                allow,
            ])
            .current_dir(root())
            .env_remove("AWS_ENDPOINT_URL_SQS")
            .env_remove("AWS_ENDPOINT_URL_STS")
            .env_remove("SQSPROBE_ENDPOINT_URL")
            .env_remove("AWS_PROFILE")
            .env("AWS_ENDPOINT_URL", &serve.url)
            .env("AWS_ACCESS_KEY_ID", "AKIAFAKEFORSQSPROBE")
            .env("AWS_SECRET_ACCESS_KEY", "fake")
            .env("AWS_CONFIG_FILE", "/nonexistent/config")
            .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_bounded(child, LIMIT)
    };
    let refused = sweep_aws("111111111111");
    assert_eq!(refused.code(), 1, "{}\n{}", refused.stdout, refused.stderr);
    assert!(
        refused.stderr.lines().next().unwrap().starts_with(
            "sqsprobe: target aws · region us-east-1 · account 1234******** (NOT in --allow-account)"
        ),
        "{}",
        refused.stderr
    );
    assert_eq!(all_queues(&serve.url).await.len(), 3);

    let allowed = sweep_aws("123456789012");
    assert_eq!(allowed.code(), 0, "{}\n{}", allowed.stdout, allowed.stderr);
    assert_eq!(lines_starting(&allowed.stdout, "deleted").len(), 3);
    assert!(all_queues(&serve.url).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_a_sweep_after_the_queue_in_flight() {
    let serve = Serve::start();
    create_owned(&serve.url, OLD_RUN, 1200).await;
    let mut child = Command::new(bin())
        .args(["sweep", "--endpoint-url", &serve.url])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let mut lines = Vec::new();
    while lines.len() < 5 {
        lines.push(
            rx.recv_timeout(Duration::from_secs(60))
                .expect("sweep lines"),
        );
    }
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let mut status = None;
    common::wait_until("sweep did not stop", LIMIT, || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    let status = status.expect("an exit status");
    reader.join().unwrap();
    lines.extend(rx.try_iter());
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let done = (status.code().unwrap_or(-1), stderr);
    assert_eq!(done.0, 130, "{}", done.1);
    assert!(
        done.1
            .contains("SIGTERM: stopping after the queue in flight"),
        "{}",
        done.1
    );
    let total = lines.last().unwrap();
    assert!(total.contains("not looked at (stopped)"), "{total}");
    let deleted = lines.iter().filter(|l| l.starts_with("deleted")).count();
    assert!(deleted < 1200, "stopped early: {total}");
    assert!(
        total.contains(&format!(
            "1200 sqsprobe- queue(s) listed: {deleted} deleted"
        )),
        "every line printed is a queue decided: {total}"
    );
    assert_eq!(all_queues(&serve.url).await.len(), 1200 - deleted);
}

/// A server that lists one owned old queue and refuses to delete it, as AWS does when the
/// policy lacks sqs:DeleteQueue.
async fn refusing_deletes() -> (String, tokio::task::JoinHandle<()>) {
    use http_body_util::{BodyExt, Full};
    use hyper::service::service_fn;
    use hyper_util::rt::TokioIo;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let queue = format!("{url}/000000000000/sqsprobe-{OLD_RUN}-c-q");
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let queue = queue.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let queue = queue.clone();
                    async move {
                        let target = req
                            .headers()
                            .get("x-amz-target")
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or_default()
                            .to_string();
                        let _ = req.into_body().collect().await;
                        let (status, body) = match target.as_str() {
                            "AmazonSQS.ListQueues" => {
                                (200, serde_json::json!({"QueueUrls": [queue]}))
                            }
                            "AmazonSQS.ListQueueTags" => (
                                200,
                                serde_json::json!({"Tags": {
                                    "sqsprobe:owner": "sqsprobe", "sqsprobe:run": OLD_RUN}}),
                            ),
                            _ => (
                                403,
                                serde_json::json!({
                                    "__type": "com.amazon.coral.service#AccessDeniedException",
                                    "message": "not authorized to perform: sqs:DeleteQueue"}),
                            ),
                        };
                        hyper::Response::builder()
                            .status(status)
                            .header("content-type", "application/x-amz-json-1.0")
                            .body(Full::new(bytes::Bytes::from(body.to_string())))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (url, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_delete_is_exit_3_and_said() {
    let (url, task) = refusing_deletes().await;
    let url2 = url.clone();
    let done = tokio::task::spawn_blocking(move || sweep(&url2, &[]))
        .await
        .unwrap();
    task.abort();
    assert_eq!(done.code(), 3, "{}\n{}", done.stdout, done.stderr);
    let failed = lines_starting(&done.stdout, "FAILED");
    assert_eq!(failed.len(), 1, "{}", done.stdout);
    assert!(
        failed[0].contains("DeleteQueue: AccessDeniedException: not authorized"),
        "{}",
        failed[0]
    );
    assert!(
        done.stdout
            .contains("1 sqsprobe- queue(s) listed: 0 deleted, 0 kept, 1 failed"),
        "{}",
        done.stdout
    );
    // Unreachable: listing fails, exit 3.
    let dead = format!("http://127.0.0.1:{}", common::free_port());
    let unreachable = tokio::task::spawn_blocking(move || sweep(&dead, &[]))
        .await
        .unwrap();
    assert_eq!(unreachable.code(), 3, "{}", unreachable.stderr);
    assert!(
        unreachable
            .stderr
            .contains("failed to list queues: no connection"),
        "{}",
        unreachable.stderr
    );
}
