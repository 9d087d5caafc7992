//! The audit's own set-up on the emulator: its SDK client (signed with its own access key, so
//! its calls are told from the consumer's in the evidence), the plan's queues (each
//! dead-letter queue first, with the redrive policy), and each message sent.

use std::path::Path;

use super::calls::SETUP_ACCESS_KEY;
use super::plan::{Plan, QueuePlan};
use crate::runner::sdk_error::sdk_error_line;

/// The region the consumer is told, and the emulator's.
pub(crate) const REGION: &str = "us-east-1";

/// A plan queue's visibility timeout when its attributes set none: the flag's default.
const DEFAULT_VISIBILITY_S: &str = "10";

/// The SDK client of the audit's own set-up at `url`.
pub(crate) fn client(url: &str) -> aws_sdk_sqs::Client {
    let conf = aws_sdk_sqs::Config::builder()
        .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
        .region(aws_sdk_sqs::config::Region::new(REGION))
        .endpoint_url(url)
        .credentials_provider(aws_sdk_sqs::config::Credentials::new(
            SETUP_ACCESS_KEY,
            SETUP_ACCESS_KEY,
            None,
            None,
            "sqsprobe-audit",
        ))
        .build();
    aws_sdk_sqs::Client::from_conf(conf)
}

/// A queue of the plan as created: its URL, its dead-letter queue's, and the MessageIds sent
/// before the consumer started.
#[derive(Debug, Clone)]
pub(crate) struct Created {
    pub url: String,
    pub dead_letter_url: Option<String>,
    pub sent: Vec<String>,
}

/// Creates the plan's queues (each dead-letter queue first) and sends the messages that go
/// before the consumer starts. `path` is the plan's file, for the position of a refusal.
pub(crate) async fn prepare(
    client: &aws_sdk_sqs::Client,
    plan: &Plan,
    path: Option<&Path>,
) -> Result<Vec<Created>, String> {
    use aws_sdk_sqs::types::QueueAttributeName as Name;
    let mut out = Vec::new();
    for q in &plan.queues {
        // Where the plan wrote the attributes, for the emulator's refusal of them.
        let at = match (path, q.attributes_at) {
            (Some(p), Some(pos)) => format!("{}:{}:{}: ", p.display(), pos.line, pos.col),
            _ => String::new(),
        };
        let refused =
            |e: String| format!("{at}the emulator refused queue `{}`: {e}", q.queue_name());
        let mut dead_letter_url = None;
        let mut redrive = None;
        if let (Some(name), Some(max)) = (q.dead_letter_name(), q.dead_letter) {
            let mut create = client.create_queue().queue_name(&name);
            if q.fifo {
                create = create.attributes(Name::FifoQueue, "true");
            }
            for (k, v) in &q.dead_letter_attributes {
                create = create.attributes(Name::from(k.as_str()), v);
            }
            let dlq = create
                .send()
                .await
                .map_err(|e| refused(sdk_error_line(&e)))?;
            let dlq_url = dlq.queue_url().unwrap_or_default().to_string();
            let arn = client
                .get_queue_attributes()
                .queue_url(&dlq_url)
                .attribute_names(Name::QueueArn)
                .send()
                .await
                .map_err(|e| refused(sdk_error_line(&e)))?
                .attributes()
                .and_then(|a| a.get(&Name::QueueArn).cloned())
                .unwrap_or_default();
            redrive = Some(
                serde_json::json!({"deadLetterTargetArn": arn, "maxReceiveCount": max}).to_string(),
            );
            dead_letter_url = Some(dlq_url);
        }
        let mut create = client.create_queue().queue_name(q.queue_name());
        if !q.attributes.contains_key("VisibilityTimeout") {
            create = create.attributes(Name::VisibilityTimeout, DEFAULT_VISIBILITY_S);
        }
        for (k, v) in &q.attributes {
            create = create.attributes(Name::from(k.as_str()), v);
        }
        if q.fifo {
            create = create.attributes(Name::FifoQueue, "true");
        }
        if let Some(policy) = redrive {
            create = create.attributes(Name::RedrivePolicy, policy);
        }
        let url = create
            .send()
            .await
            .map_err(|e| refused(sdk_error_line(&e)))?
            .queue_url()
            .unwrap_or_default()
            .to_string();
        let mut sent = Vec::new();
        for i in 1..=q.before {
            sent.push(send(client, q, &url, i).await?);
        }
        out.push(Created {
            url,
            dead_letter_url,
            sent,
        });
    }
    Ok(out)
}

/// Sends message `i` of queue `q`: its MessageId.
pub(crate) async fn send(
    client: &aws_sdk_sqs::Client,
    q: &QueuePlan,
    url: &str,
    i: u32,
) -> Result<String, String> {
    use aws_sdk_sqs::primitives::Blob;
    use aws_sdk_sqs::types::MessageAttributeValue;
    let m = q.message(i);
    let mut send = client.send_message().queue_url(url).message_body(m.body);
    for (name, data_type, value) in m.attributes {
        let attribute = MessageAttributeValue::builder().data_type(data_type);
        let attribute = match value {
            crate::audit::plan::AttributeValue::Text(s) => attribute.string_value(s),
            crate::audit::plan::AttributeValue::Bytes(b) => attribute.binary_value(Blob::new(b)),
        };
        let attribute = attribute.build().map_err(|e| e.to_string())?;
        send = send.message_attributes(name, attribute);
    }
    send = send
        .set_message_group_id(m.group_id)
        .set_message_deduplication_id(m.deduplication_id);
    let out = send.send().await.map_err(|e| {
        format!(
            "the emulator refused message {i} of queue `{}`: {}",
            q.queue_name(),
            sdk_error_line(&e)
        )
    })?;
    Ok(out.message_id().unwrap_or_default().to_string())
}
