//! Client compatibility: `sqsprobe serve` (the real binary) driven by boto3 and the AWS CLI,
//! the clients people point at a local SQS, through scenarios where emulators are known to
//! differ (stale handles, DLQ redrive, FIFO deduplication); STS GetCallerIdentity on the same
//! port (boto3 and aws-sdk-sts); and a clean stop on SIGINT, SIGTERM and SIGHUP.
//!
//! The Python scripts print one JSON object of observations; the assertions are here.
//! Python comes from `SQSPROBE_PYTHON` (else `.venv/bin/python`), the AWS CLI from
//! `SQSPROBE_AWS_CLI` (else `.venv/bin/aws`); `scripts/test` installs both. A missing client
//! fails the test with instructions rather than skipping it.

use crate::common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::serve::Serve;
use common::{root, wait_bounded};
use serde_json::Value;

fn tool(env: &str, venv_path: &str) -> PathBuf {
    std::env::var_os(env)
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join(venv_path))
}

/// Runs `script` with boto3 against `endpoint`; returns the JSON it printed.
fn boto3(endpoint: &str, script: &str) -> Value {
    let python = tool("SQSPROBE_PYTHON", ".venv/bin/python");
    assert!(
        python.exists(),
        "no Python at {}: run scripts/test (installs boto3 into .venv) or set SQSPROBE_PYTHON",
        python.display()
    );
    let mut file = tempfile::Builder::new()
        .suffix(".py")
        .tempfile()
        .expect("temp file for the boto3 script");
    let prelude = r#"
import json, sys, uuid
try:
    import boto3
    from botocore.config import Config
except ImportError as e:
    print(f"boto3 is not installed for {sys.executable}: {e}", file=sys.stderr)
    sys.exit(97)
sqs = boto3.client("sqs", endpoint_url=sys.argv[1], region_name="us-east-1",
                   aws_access_key_id="test", aws_secret_access_key="test",
                   config=Config(retries={"max_attempts": 1}, read_timeout=30, connect_timeout=5))
name = "compat-" + uuid.uuid4().hex[:8]
"#;
    file.write_all(prelude.as_bytes()).expect("write script");
    file.write_all(script.as_bytes()).expect("write script");
    let child = Command::new(&python)
        .arg(file.path())
        .arg(endpoint)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("failed to run {}: {e}", python.display()));
    let done = wait_bounded(child, Duration::from_secs(60));
    assert_ne!(
        done.code(),
        97,
        "boto3 missing: run scripts/test or install boto3 for {}\n{}",
        python.display(),
        done.stderr
    );
    assert_eq!(done.code(), 0, "boto3 script failed:\n{}", done.stderr);
    serde_json::from_str(done.stdout.trim())
        .unwrap_or_else(|e| panic!("script printed no JSON ({e}):\n{}", done.stdout))
}

#[test]
fn boto3_delete_with_stale_handle_after_redelivery_returns_200() {
    let serve = Serve::start();
    // AWS-recorded `test_remove_message_with_old_receipt_handle`; API_DeleteMessage: an old
    // handle "will succeed, but the message might not be deleted".
    let out = boto3(
        &serve.url,
        r#"
url = sqs.create_queue(QueueName=name)["QueueUrl"]
sqs.send_message(QueueUrl=url, MessageBody="stale")
a = sqs.receive_message(QueueUrl=url, VisibilityTimeout=1, WaitTimeSeconds=2)["Messages"]
# A long poll answers as soon as the lease lapses and the message is receivable again.
b = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=10).get("Messages", [])
resp = sqs.delete_message(QueueUrl=url, ReceiptHandle=a[0]["ReceiptHandle"])
print(json.dumps({
    "status": resp["ResponseMetadata"]["HTTPStatusCode"],
    "b_count": len(b),
    "same_message": bool(b) and b[0]["MessageId"] == a[0]["MessageId"],
    "handles_differ": bool(b) and b[0]["ReceiptHandle"] != a[0]["ReceiptHandle"],
}))
"#,
    );
    assert_eq!(out["status"], 200, "{out}");
    assert_eq!(
        out["b_count"], 1,
        "the message is redelivered after the lease: {out}"
    );
    assert_eq!(out["same_message"], true, "{out}");
    assert_eq!(
        out["handles_differ"], true,
        "every receive issues a new handle: {out}"
    );
}

#[test]
fn boto3_sees_a_duplicate_after_delete_under_serve_chaos() {
    // docs/chaos.md: redeliver-after-delete=1 acknowledges the first delete of each message but
    // delivers it again after its lease; the second delete takes.
    let serve = Serve::start_with(&["--chaos", "redeliver-after-delete=1,seed=3"]);
    let out = boto3(
        &serve.url,
        r#"
url = sqs.create_queue(QueueName=name)["QueueUrl"]
sqs.send_message(QueueUrl=url, MessageBody="dup")
a = sqs.receive_message(QueueUrl=url, VisibilityTimeout=1, WaitTimeSeconds=2)["Messages"]
first = sqs.delete_message(QueueUrl=url, ReceiptHandle=a[0]["ReceiptHandle"])
b = sqs.receive_message(QueueUrl=url, VisibilityTimeout=1, WaitTimeSeconds=3).get("Messages", [])
if b:
    sqs.delete_message(QueueUrl=url, ReceiptHandle=b[0]["ReceiptHandle"])
# A long poll past the lease (1 s): a message delivered again would answer it.
c = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=3).get("Messages", [])
print(json.dumps({
    "first_status": first["ResponseMetadata"]["HTTPStatusCode"],
    "again": bool(b) and b[0]["MessageId"] == a[0]["MessageId"],
    "after_second_delete": len(c),
}))
"#,
    );
    assert_eq!(out["first_status"], 200, "{out}");
    assert_eq!(out["again"], true, "the deleted message came back: {out}");
    assert_eq!(out["after_second_delete"], 0, "once per message: {out}");
}

#[test]
fn boto3_redrive_moves_message_to_dlq_after_max_receive_count() {
    let serve = Serve::start();
    // API_CreateQueue RedrivePolicy: the move happens on a receive once the receive count would
    // exceed maxReceiveCount (sqs-behaviours.md D1).
    let out = boto3(
        &serve.url,
        r#"
dlq = sqs.create_queue(QueueName=name + "-dlq")["QueueUrl"]
dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
src = sqs.create_queue(QueueName=name, Attributes={
    "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "1"})})["QueueUrl"]
sqs.send_message(QueueUrl=src, MessageBody="poison")
first = sqs.receive_message(QueueUrl=src, VisibilityTimeout=1, WaitTimeSeconds=2).get("Messages", [])
# A long poll past the lease (1 s): the message, receivable again, moves to the DLQ on it
# instead of being delivered a second time.
second = sqs.receive_message(QueueUrl=src, VisibilityTimeout=1, WaitTimeSeconds=3).get("Messages", [])
moved = sqs.receive_message(QueueUrl=dlq, WaitTimeSeconds=2,
                            MessageSystemAttributeNames=["ApproximateReceiveCount"]).get("Messages", [])
print(json.dumps({
    "first": len(first),
    "second": len(second),
    "dlq_bodies": [m["Body"] for m in moved],
    "same_id": bool(first) and bool(moved) and moved[0]["MessageId"] == first[0]["MessageId"],
}))
"#,
    );
    assert_eq!(out["first"], 1, "{out}");
    assert_eq!(
        out["second"], 0,
        "past maxReceiveCount the source must not deliver it: {out}"
    );
    assert_eq!(out["dlq_bodies"], serde_json::json!(["poison"]), "{out}");
    assert_eq!(out["same_id"], true, "the move keeps the MessageId: {out}");
}

#[test]
fn boto3_fifo_same_deduplication_id_delivers_once() {
    let serve = Serve::start();
    // API_SendMessage MessageDeduplicationId: a duplicate within 5 minutes is accepted but
    // not delivered (sqs-behaviours.md F2).
    let out = boto3(
        &serve.url,
        r#"
url = sqs.create_queue(QueueName=name + ".fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
s1 = sqs.send_message(QueueUrl=url, MessageBody="one", MessageGroupId="g", MessageDeduplicationId="d1")
s2 = sqs.send_message(QueueUrl=url, MessageBody="two", MessageGroupId="g", MessageDeduplicationId="d1")
got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
for m in got:
    sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
again = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
print(json.dumps({
    "send_statuses": [s1["ResponseMetadata"]["HTTPStatusCode"], s2["ResponseMetadata"]["HTTPStatusCode"]],
    "bodies": [m["Body"] for m in got],
    "after_delete": len(again),
}))
"#,
    );
    assert_eq!(out["send_statuses"], serde_json::json!([200, 200]), "{out}");
    assert_eq!(out["bodies"], serde_json::json!(["one"]), "{out}");
    assert_eq!(out["after_delete"], 0, "{out}");
}

/// Runs `aws --endpoint-url URL sqs ARGS...` and returns its parsed JSON output (or Null for
/// commands that print nothing) and its `--debug` log.
fn aws(cli: &PathBuf, endpoint: &str, args: &[&str]) -> (Value, String) {
    let child = Command::new(cli)
        .args([
            "--debug",
            "--output",
            "json",
            "--endpoint-url",
            endpoint,
            "sqs",
        ])
        .args(args)
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .env("AWS_DEFAULT_REGION", "us-east-1")
        .env("AWS_CONFIG_FILE", "/dev/null")
        .env("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
        .env("AWS_PAGER", "")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("failed to run {}: {e}", cli.display()));
    let done = wait_bounded(child, Duration::from_secs(60));
    let tail: String = done
        .stderr
        .lines()
        .rev()
        .take(15)
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        done.code(),
        0,
        "aws sqs {args:?} failed; last log lines (reversed):\n{tail}"
    );
    let value = if done.stdout.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&done.stdout)
            .unwrap_or_else(|e| panic!("aws printed no JSON ({e}):\n{}", done.stdout))
    };
    (value, done.stderr)
}

#[test]
fn aws_cli_create_send_receive() {
    let cli = tool("SQSPROBE_AWS_CLI", ".venv/bin/aws");
    assert!(
        cli.exists(),
        "no AWS CLI at {}: run scripts/test (installs awscli into .venv) or set SQSPROBE_AWS_CLI",
        cli.display()
    );
    let serve = Serve::start();
    let name = format!("compat-cli-{}", std::process::id());
    let (created, log) = aws(&cli, &serve.url, &["create-queue", "--queue-name", &name]);
    // AWS CLI v1 from PyPI (1.46, botocore 1.43/1.44) speaks AWS JSON 1.0 to SQS
    // (botocore's sqs service-2.json: "protocol": "json"); older releases spoke the query
    // protocol. The emulator serves both, so this test passes either way and says which.
    let protocol = if log.contains("AmazonSQS.CreateQueue") {
        "AWS JSON 1.0"
    } else {
        "query"
    };
    eprintln!("AWS CLI used the {protocol} protocol");
    let url = created["QueueUrl"]
        .as_str()
        .unwrap_or_else(|| panic!("no QueueUrl in {created}"))
        .to_string();
    assert!(url.ends_with(&format!("/{name}")), "{url}");
    let (sent, _) = aws(
        &cli,
        &serve.url,
        &[
            "send-message",
            "--queue-url",
            &url,
            "--message-body",
            "from the cli",
        ],
    );
    assert!(sent["MessageId"].is_string(), "{sent}");
    let (received, _) = aws(
        &cli,
        &serve.url,
        &[
            "receive-message",
            "--queue-url",
            &url,
            "--wait-time-seconds",
            "2",
        ],
    );
    let messages = received["Messages"]
        .as_array()
        .unwrap_or_else(|| panic!("no Messages in {received}"));
    assert_eq!(messages.len(), 1, "{received}");
    assert_eq!(messages[0]["Body"], "from the cli");
    assert_eq!(messages[0]["MessageId"], sent["MessageId"]);
}

#[test]
fn serve_stops_cleanly_on_sigint() {
    let mut serve = Serve::start();
    let done = serve.signal("INT", Duration::from_secs(10));
    assert_eq!(done.code(), 0, "stderr:\n{}", done.stderr);
    assert!(
        done.stderr.contains("emulator stopped (SIGINT)"),
        "{}",
        done.stderr
    );
}

#[test]
fn serve_stops_on_sigterm_and_sighup_like_on_ctrl_c() {
    for signal in ["TERM", "HUP"] {
        let mut serve = Serve::start();
        let done = serve.signal(signal, Duration::from_secs(10));
        assert_eq!(done.code(), 0, "SIG{signal}: stderr:\n{}", done.stderr);
        let last = done.stderr.lines().last().unwrap_or_default();
        assert_eq!(last, format!("sqsprobe: emulator stopped (SIG{signal})"));
    }
}

#[test]
fn boto3_sts_get_caller_identity_answers_the_account_beside_sqs() {
    // What `--allow-account` will ask first; AWS answers root credentials with the account id
    // as UserId and arn:aws:iam::<account>:root.
    let serve = Serve::start_with(&["--account-id", "123456789012"]);
    let out = boto3(
        &serve.url,
        r#"
sts = boto3.client("sts", endpoint_url=sys.argv[1], region_name="us-east-1",
                   aws_access_key_id="test", aws_secret_access_key="test",
                   config=Config(retries={"max_attempts": 1}))
who = sts.get_caller_identity()
url = sqs.create_queue(QueueName=name)["QueueUrl"]
print(json.dumps({
    "account": who["Account"], "arn": who["Arn"], "user_id": who["UserId"],
    "request_id": who["ResponseMetadata"]["RequestId"], "queue_url": url,
}))
"#,
    );
    assert_eq!(out["account"], "123456789012", "{out}");
    assert_eq!(out["arn"], "arn:aws:iam::123456789012:root", "{out}");
    assert_eq!(out["user_id"], "123456789012", "{out}");
    assert!(
        out["request_id"].as_str().is_some_and(|r| !r.is_empty()),
        "{out}"
    );
    assert!(
        out["queue_url"]
            .as_str()
            .is_some_and(|u| u.contains("/123456789012/compat-")),
        "SQS on the same port: {out}"
    );
}

#[tokio::test]
async fn aws_sdk_sts_get_caller_identity_through_endpoint_url() {
    let serve = Serve::start_with(&["--account-id", "210987654321"]);
    let conf = aws_sdk_sts::Config::builder()
        .behavior_version(aws_sdk_sts::config::BehaviorVersion::latest())
        .region(aws_sdk_sts::config::Region::new("eu-west-1"))
        .endpoint_url(&serve.url)
        .credentials_provider(aws_sdk_sts::config::Credentials::new(
            "AKIDTEST", "secret", None, None, "tests",
        ))
        .build();
    let client = aws_sdk_sts::Client::from_conf(conf);
    let who = tokio::time::timeout(Duration::from_secs(20), client.get_caller_identity().send())
        .await
        .expect("answered within 20 s")
        .expect("GetCallerIdentity succeeds");
    assert_eq!(who.account(), Some("210987654321"));
    assert_eq!(who.arn(), Some("arn:aws:iam::210987654321:root"));
    assert_eq!(who.user_id(), Some("210987654321"));
    // The SQS SDK on the same endpoint still reaches SQS: the credential scope routes.
    let sqs = common::client(&serve.url).await;
    let listed = sqs.list_queues().send().await.expect("ListQueues");
    assert!(listed.queue_urls().is_empty());
}
