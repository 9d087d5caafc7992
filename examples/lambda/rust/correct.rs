//! A correct Lambda SQS handler on AWS's Rust runtime client (`lambda_runtime`), for
//! `sqsprobe audit --lambda --report-batch-item-failures`: it reports each failed record by its
//! `messageId` (`{"batchItemFailures": [{"itemIdentifier": ...}]}`), and reconciles a
//! redelivered record through the ledger (`SQSPROBE_LEDGER`), so nothing is done twice.
//!
//! The work is the Python examples' (`examples/lambda/python/_work.py`): a record whose `seq` is
//! 2 modulo 4 fails on its first receive.
//!
//! ```sh
//! cargo build --example lambda-correct
//! sqsprobe audit --lambda --report-batch-item-failures -- target/debug/examples/lambda-correct
//! ```

use std::io::Write;

use lambda_runtime::{Error, LambdaEvent, service_fn};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Error> {
    lambda_runtime::run(service_fn(handler)).await
}

async fn handler(event: LambdaEvent<Value>) -> Result<Value, Error> {
    let ledger = std::env::var("SQSPROBE_LEDGER")?;
    let mut failures = Vec::new();
    for record in event.payload["Records"].as_array().into_iter().flatten() {
        if work(record, &ledger).is_err() {
            failures.push(json!({ "itemIdentifier": record["messageId"] }));
        }
    }
    Ok(json!({ "batchItemFailures": failures }))
}

/// One record's work, once: its key committed to the ledger unless it is there already.
fn work(record: &Value, ledger: &str) -> Result<(), Error> {
    let body: Value = serde_json::from_str(record["body"].as_str().unwrap_or_default())?;
    let key = body["business_key"].as_str().ok_or("no business_key")?;
    let seq = body["seq"].as_u64().ok_or("no seq")?;
    let done = std::fs::read_to_string(ledger).unwrap_or_default();
    if done.lines().any(|l| l.trim() == key) {
        return Ok(());
    }
    let receives = record["attributes"]["ApproximateReceiveCount"].as_str();
    if seq % 4 == 2 && receives == Some("1") {
        return Err(format!("{key} failed").into());
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(ledger)?;
    writeln!(file, "{key}")?;
    file.sync_all()?;
    Ok(())
}
