//! Dead-letter queues: ListDeadLetterSourceQueues, and the tests of the redrive rules
//! (`model::redrive` validates policies and moves messages).
//!
//! A message moves when a receive finds it with `ReceiveCount >= maxReceiveCount`, i.e. when
//! the next delivery would exceed the limit. It happens on that later ReceiveMessage, never on a
//! timer (API_CreateQueue RedrivePolicy; LocalStack issue #8234).

use serde_json::{Value, json};

use crate::model::store::Emulator;
use crate::ops::context::RequestContext;
use crate::ops::paging::paginate;
use crate::support::errors::SqsResult;
use crate::support::input::Input;

pub(crate) fn list_dead_letter_source_queues(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Value> {
    let key = ctx.queue_key(emu, &input)?;
    let sources: Vec<String> = {
        // Every queue's settings at one instant: under the write lock.
        let mut state = emu.write();
        let now = emu.now();
        let dlq = state.queue_mut(&key, now)?.arn.clone();
        state
            .queues_mut()
            .filter(|q| {
                q.settings
                    .redrive_policy
                    .as_ref()
                    .is_some_and(|p| p.dead_letter_target_arn == dlq)
            })
            .map(|q| q.arn.clone())
            .collect()
    };
    let (names, token) = paginate(sources, &input)?;
    let urls: Vec<String> = names.iter().map(|n| emu.queue_url(&ctx.host, n)).collect();
    let mut out = json!({ "queueUrls": urls });
    if let Some(token) = token {
        out["NextToken"] = Value::String(token);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::test_support::{advance, call, create, emulator, receive, send};

    fn policy(target: &str, count: u32) -> String {
        format!(
            r#"{{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:{target}","maxReceiveCount":{count}}}"#
        )
    }

    #[tokio::test(start_paused = true)]
    async fn moves_on_the_receive_after_max_receive_count() {
        let emu = emulator();
        let dlq = create(&emu, "dlq", json!({})).await;
        let src = create(&emu, "src", json!({"RedrivePolicy": policy("dlq", 2)})).await;
        send(&emu, &src, "poison").await;
        for _ in 0..2 {
            assert_eq!(
                receive(&emu, &src, 1, json!({"VisibilityTimeout": 0}))
                    .await
                    .len(),
                1
            );
        }
        assert!(
            receive(&emu, &dlq, 1, json!({})).await.is_empty(),
            "no move without a receive"
        );
        assert!(receive(&emu, &src, 1, json!({})).await.is_empty());
        let moved = receive(
            &emu,
            &dlq,
            1,
            json!({"MessageSystemAttributeNames": ["All"]}),
        )
        .await;
        assert_eq!(moved[0]["Body"], "poison");
        assert_eq!(
            moved[0]["Attributes"]["DeadLetterQueueSourceArn"],
            "arn:aws:sqs:us-east-1:000000000000:src"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn standard_dlq_keeps_enqueue_time_for_retention() {
        let emu = emulator();
        let dlq = create(&emu, "dlq", json!({"MessageRetentionPeriod": "120"})).await;
        let src = create(&emu, "src", json!({"RedrivePolicy": policy("dlq", 1)})).await;
        send(&emu, &src, "old").await;
        advance(100).await;
        receive(&emu, &src, 1, json!({"VisibilityTimeout": 0})).await;
        receive(&emu, &src, 1, json!({})).await;
        advance(20).await;
        assert!(
            receive(&emu, &dlq, 1, json!({})).await.is_empty(),
            "expired 120 s after the original send"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn target_must_exist_and_match_type() {
        let emu = emulator();
        create(&emu, "fdlq.fifo", json!({"FifoQueue": "true"})).await;
        let err = call(
            &emu,
            "CreateQueue",
            json!({"QueueName": "s", "Attributes": {"RedrivePolicy": policy("nope", 1)}}),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code(), "InvalidParameterValue");
        let err = call(
            &emu,
            "CreateQueue",
            json!({"QueueName": "s", "Attributes": {"RedrivePolicy": policy("fdlq.fifo", 1)}}),
        )
        .await
        .unwrap_err();
        assert!(err.message.contains("same type"), "{}", err.message);
    }

    #[tokio::test(start_paused = true)]
    async fn redrive_allow_policy_deny_all() {
        let emu = emulator();
        create(
            &emu,
            "dlq",
            json!({"RedriveAllowPolicy": r#"{"redrivePermission":"denyAll"}"#}),
        )
        .await;
        let err = call(
            &emu,
            "CreateQueue",
            json!({"QueueName": "s", "Attributes": {"RedrivePolicy": policy("dlq", 1)}}),
        )
        .await
        .unwrap_err();
        assert!(err.message.contains("not allowed"), "{}", err.message);
    }
}
