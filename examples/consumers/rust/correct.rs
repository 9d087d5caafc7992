//! The playbook's adapter in Rust (aws-sdk-sqs), for `sqsprobe audit`: each delete uses the
//! handle of the attempt that received the message, after the work is committed to the
//! ledger; a redelivery whose key the ledger already holds is acknowledged without doing the
//! work again.
//!
//! `cargo build --example audit-correct`, then
//! `sqsprobe audit -- target/debug/examples/audit-correct`.

use std::collections::HashSet;
use std::io::Write;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let queue = std::env::var("SQSPROBE_QUEUE_URL")?;
    let ledger = std::env::var("SQSPROBE_LEDGER")?;
    // The SDK reads AWS_ENDPOINT_URL, the region and the test keys from the environment.
    let config = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
    let sqs = aws_sdk_sqs::Client::new(&config);
    let mut done: HashSet<String> = std::fs::read_to_string(&ledger)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    loop {
        let answer = sqs
            .receive_message()
            .queue_url(&queue)
            .max_number_of_messages(10)
            .wait_time_seconds(1)
            .send()
            .await?;
        for message in answer.messages() {
            let body: serde_json::Value = serde_json::from_str(message.body().unwrap_or("{}"))?;
            let key = body["business_key"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if !done.contains(&key) {
                // The work, then its durable record: append, flush, fsync.
                let mut file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&ledger)?;
                writeln!(file, "{key}")?;
                file.sync_all()?;
                done.insert(key);
            }
            // This attempt's own handle.
            sqs.delete_message()
                .queue_url(&queue)
                .receipt_handle(message.receipt_handle().unwrap_or_default())
                .send()
                .await?;
        }
    }
}
