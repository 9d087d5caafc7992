//! Queue lifecycle operations: create, look up, list, delete, purge, attributes and tags.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use crate::model::attributes::{COMPUTED_ATTRIBUTES, QueueSettings, READABLE_ATTRIBUTES};
use crate::model::deleted::COOLDOWN_MS;
use crate::model::queue::Queue;
use crate::model::redrive;
use crate::model::store::Emulator;
use crate::ops::context::RequestContext;
use crate::ops::paging::paginate;
use crate::support::errors::{SqsError, SqsResult};
use crate::support::input::Input;

/// Most tags per queue (sqs-queue-tags).
const MAX_TAGS: usize = 50;

fn validate_queue_name(name: &str, fifo: bool) -> SqsResult<()> {
    let base = name.strip_suffix(".fifo");
    let valid_chars = |s: &str| {
        s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    if fifo {
        match base {
            Some(b) if !b.is_empty() && name.len() <= 80 && valid_chars(b) => Ok(()),
            _ => Err(SqsError::invalid_parameter_value(
                "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.",
            )),
        }
    } else if !name.is_empty() && name.len() <= 80 && valid_chars(name) {
        Ok(())
    } else {
        Err(SqsError::invalid_parameter_value(
            "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
        ))
    }
}

fn validate_tags(tags: &BTreeMap<String, String>) -> SqsResult<()> {
    crate::support::chaos::check_queue_tag(tags).map_err(SqsError::invalid_parameter_value)?;
    for (key, value) in tags {
        if key.is_empty() || key.chars().count() > 128 {
            return Err(SqsError::invalid_parameter_value(format!(
                "Tag key {key} is invalid."
            )));
        }
        if value.chars().count() > 256 {
            return Err(SqsError::invalid_parameter_value(format!(
                "Tag value for key {key} is invalid."
            )));
        }
    }
    Ok(())
}

/// Tags of CreateQueue: `tags` in JSON (the API's member name), `Tags` from the query decoder.
fn create_tags(input: &Input<'_>) -> SqsResult<BTreeMap<String, String>> {
    let mut tags = input.string_map("tags")?;
    tags.extend(input.string_map("Tags")?);
    Ok(tags)
}

pub(crate) fn create_queue(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Value> {
    let name = input.required_string("QueueName")?;
    let attributes = input.string_map("Attributes")?;
    let tags = create_tags(&input)?;
    let fifo = match attributes.get("FifoQueue") {
        Some(v) if v.eq_ignore_ascii_case("true") => true,
        Some(v) if v.eq_ignore_ascii_case("false") => false,
        Some(_) => return Err(SqsError::invalid_attribute_value_for("FifoQueue", None)),
        None => false,
    };
    // A `.fifo` name without FifoQueue=true is a standard queue with an invalid name (N2).
    validate_queue_name(name, fifo)?;
    validate_tags(&tags)?;
    let key = ctx.key_of(emu, name);
    let url = emu.queue_url(&ctx.host, &key);
    let mut state = emu.write();
    let now = emu.now();
    if let Ok(existing) = state.queue_mut(&key, now) {
        // Only supplied attributes are compared, against current values (SNAP-2025 Q5–Q8).
        let mut candidate = existing.settings.clone();
        candidate.apply(&attributes)?;
        if let Some(differs) = attributes
            .keys()
            .find(|k| candidate.get(k) != existing.settings.get(k))
        {
            return Err(SqsError::queue_already_exists(differs));
        }
        return Ok(json!({ "QueueUrl": url }));
    }
    if emu.config.strict_cooldowns && state.deleted.recently(&key, now) {
        return Err(SqsError::queue_deleted_recently());
    }
    state.admit_queue(&emu.config)?;
    let mut settings = QueueSettings::new(fifo);
    settings.apply(&attributes)?;
    emu.note_policy(&settings);
    redrive::validate_redrive(&state, &key, &settings, attributes.get("RedrivePolicy"))?;
    let usage = Arc::clone(&state.usage);
    let mut queue = Queue::new(name.to_owned(), key.clone(), settings, now, usage);
    queue.tags = tags;
    if queue.tags.len() > MAX_TAGS {
        return Err(SqsError::invalid_parameter_value(format!(
            "Too many tags added for queue {name}."
        )));
    }
    state.deleted.remove(&key, now);
    state.queues.insert(key, Mutex::new(queue));
    Ok(json!({ "QueueUrl": url }))
}

pub(crate) fn get_queue_url(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Value> {
    let name = input.required_string("QueueName")?;
    if let Some(owner) = input.string("QueueOwnerAWSAccountId")?
        && owner != emu.config.account_id
    {
        return Err(SqsError::non_existent_queue());
    }
    let key = ctx.key_of(emu, name);
    if !emu.read().queues.contains_key(&key) {
        return Err(SqsError::non_existent_queue());
    }
    Ok(json!({ "QueueUrl": emu.queue_url(&ctx.host, &key) }))
}

pub(crate) fn list_queues(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Value> {
    let prefix = input.string("QueueNamePrefix")?.unwrap_or_default();
    // Only the request's region, and only names with the prefix: one range of the ordered keys.
    let keys = emu.read().keys_with_prefix(&ctx.key_of(emu, prefix));
    let (names, token) = paginate(keys, &input)?;
    let mut out = Map::new();
    if !names.is_empty() {
        let urls: Vec<Value> = names
            .iter()
            .map(|n| Value::String(emu.queue_url(&ctx.host, n)))
            .collect();
        out.insert("QueueUrls".into(), Value::Array(urls));
    }
    if let Some(token) = token {
        out.insert("NextToken".into(), Value::String(token));
    }
    Ok(Value::Object(out))
}

pub(crate) fn delete_queue(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Value> {
    let key = ctx.queue_key(emu, &input)?;
    let mut state = emu.write();
    let mut queue = state
        .queues
        .remove(&key)
        .ok_or_else(SqsError::non_existent_queue)?;
    // Wake long polls so they notice the queue is gone.
    queue
        .get_mut()
        .unwrap_or_else(|e| e.into_inner())
        .wakeup
        .wake();
    // What the store kept for the queue goes with it: its move tasks (ListMessageMoveTasks
    // refuses a source that does not exist, and a running task ends at its next step when it
    // finds its record gone) and its chaos dice (a queue created again under the name rolls
    // fresh ones, as a first queue would).
    state.move_tasks.retain(|task| task.source_arn != key);
    emu.chaos.forget(&key);
    // Only the cooldown needs the name, and only for its minute (`model/deleted.rs`).
    if emu.config.strict_cooldowns {
        state.deleted.insert(key, emu.now());
    }
    Ok(json!({}))
}

pub(crate) fn purge_queue(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Value> {
    let key = ctx.queue_key(emu, &input)?;
    emu.with_queue(&key, |_, queue, now| {
        if emu.config.strict_cooldowns
            && queue
                .last_purge_ms
                .is_some_and(|at| now.saturating_sub(at) < COOLDOWN_MS)
        {
            return Err(SqsError::purge_queue_in_progress(&queue.name));
        }
        queue.purge();
        queue.last_purge_ms = Some(now);
        Ok(json!({}))
    })
}

/// One readable attribute of a queue, `None` when AWS leaves it out.
fn attribute_value(queue: &Queue, name: &str) -> Option<String> {
    let (visible, inflight, delayed) = queue.counts();
    match name {
        "ApproximateNumberOfMessages" => Some(visible.to_string()),
        "ApproximateNumberOfMessagesNotVisible" => Some(inflight.to_string()),
        "ApproximateNumberOfMessagesDelayed" => Some(delayed.to_string()),
        // Queue timestamps are epoch seconds (API_GetQueueAttributes).
        "CreatedTimestamp" => Some((queue.created_ms / 1000).to_string()),
        "LastModifiedTimestamp" => Some((queue.modified_ms / 1000).to_string()),
        "QueueArn" => Some(queue.arn.clone()),
        _ => queue.settings.get(name),
    }
}

pub(crate) fn get_queue_attributes(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Value> {
    let key = ctx.queue_key(emu, &input)?;
    let requested = input.string_list("AttributeNames")?;
    for attribute in &requested {
        if attribute != "All" && !READABLE_ATTRIBUTES.contains(&attribute.as_str()) {
            return Err(SqsError::unknown_attribute(attribute));
        }
    }
    let names: Vec<&str> = if requested.iter().any(|a| a == "All") {
        READABLE_ATTRIBUTES.to_vec()
    } else {
        requested.iter().map(String::as_str).collect()
    };
    let attributes: Map<String, Value> = emu.with_queue(&key, |_, queue, _| {
        Ok(names
            .into_iter()
            .filter_map(|n| attribute_value(queue, n).map(|v| (n.to_owned(), Value::String(v))))
            .collect())
    })?;
    if attributes.is_empty() {
        return Ok(json!({}));
    }
    Ok(json!({ "Attributes": attributes }))
}

pub(crate) fn set_queue_attributes(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Value> {
    let key = ctx.queue_key(emu, &input)?;
    if input.node("Attributes").is_none() {
        return Err(SqsError::missing_parameter("Attributes"));
    }
    let attributes = input.string_map("Attributes")?;
    if let Some(computed) = attributes
        .keys()
        .find(|k| COMPUTED_ATTRIBUTES.contains(&k.as_str()))
    {
        return Err(SqsError::unknown_attribute(computed));
    }
    let apply = |queue: &mut Queue, settings: QueueSettings, now: u64| {
        queue.settings = settings;
        queue.modified_ms = now;
        // A shorter retention or visibility may already have expired something.
        queue.tick(now);
        queue.wakeup.wake();
        Ok(json!({}))
    };
    let settings_of = |queue: &Queue| -> SqsResult<QueueSettings> {
        let mut settings = queue.settings.clone();
        settings.apply(&attributes)?;
        emu.note_policy(&settings);
        Ok(settings)
    };
    // A RedrivePolicy, given now or already set, is checked against its target, another
    // queue: under the write lock. Without one the queue's own lock is enough.
    let applied = emu.with_queue(&key, |_, queue, now| {
        let settings = settings_of(queue)?;
        if settings.redrive_policy.is_some() {
            return Ok(None);
        }
        apply(queue, settings, now).map(Some)
    })?;
    if let Some(answer) = applied {
        return Ok(answer);
    }
    let mut state = emu.write();
    let now = emu.now();
    let queue = state.queue_mut(&key, now)?;
    let settings = settings_of(queue)?;
    let arn = queue.arn.clone();
    redrive::validate_redrive(&state, &arn, &settings, attributes.get("RedrivePolicy"))?;
    apply(state.queue_mut(&key, now)?, settings, now)
}

pub(crate) fn tag_queue(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Value> {
    let key = ctx.queue_key(emu, &input)?;
    if input.node("Tags").is_none() {
        return Err(SqsError::missing_parameter("Tags"));
    }
    let tags = input.string_map("Tags")?;
    validate_tags(&tags)?;
    emu.with_queue(&key, |_, queue, _| {
        let mut merged = queue.tags.clone();
        merged.extend(tags);
        if merged.len() > MAX_TAGS {
            return Err(SqsError::invalid_parameter_value(format!(
                "Too many tags added for queue {key}."
            )));
        }
        queue.tags = merged;
        Ok(json!({}))
    })
}

pub(crate) fn untag_queue(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Value> {
    let key = ctx.queue_key(emu, &input)?;
    // Required in SQS's model: without it the call would answer 200 having removed nothing.
    if input.node("TagKeys").is_none() {
        return Err(SqsError::missing_parameter("TagKeys"));
    }
    let keys = input.string_list("TagKeys")?;
    emu.with_queue(&key, |_, queue, _| {
        for key in keys {
            queue.tags.remove(&key);
        }
        Ok(json!({}))
    })
}

pub(crate) fn list_queue_tags(
    emu: &Emulator,
    input: Input<'_>,
    ctx: &RequestContext,
) -> SqsResult<Value> {
    let key = ctx.queue_key(emu, &input)?;
    emu.with_queue(&key, |_, queue, _| {
        if queue.tags.is_empty() {
            return Ok(json!({}));
        }
        Ok(json!({ "Tags": queue.tags }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::config::EmulatorConfig;
    use crate::test_support::{
        advance, attribute, call, create, emulator, emulator_with, receive, send,
    };

    #[tokio::test(start_paused = true)]
    async fn queues_are_capped() {
        let emu = emulator_with(EmulatorConfig {
            max_queues: 2,
            ..EmulatorConfig::default()
        });
        let a = create(&emu, "a", json!({})).await;
        create(&emu, "b", json!({})).await;
        let err = call(&emu, "CreateQueue", json!({"QueueName": "c"}))
            .await
            .unwrap_err();
        assert_eq!((err.code(), err.status()), ("OverLimit", 403));
        assert!(err.message.contains("maximum of 2 queues"), "{err}");
        // An existing name is still answered, and a deletion frees a place.
        call(&emu, "CreateQueue", json!({"QueueName": "a"}))
            .await
            .unwrap();
        call(&emu, "DeleteQueue", json!({"QueueUrl": a}))
            .await
            .unwrap();
        call(&emu, "CreateQueue", json!({"QueueName": "c"}))
            .await
            .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn purge_cooldown_and_inflight_removal() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        send(&emu, &url, "a").await;
        send(&emu, &url, "b").await;
        receive(&emu, &url, 1, json!({})).await;
        call(&emu, "PurgeQueue", json!({"QueueUrl": url}))
            .await
            .unwrap();
        assert_eq!(
            attribute(&emu, &url, "ApproximateNumberOfMessagesNotVisible").await,
            "0"
        );
        let err = call(&emu, "PurgeQueue", json!({"QueueUrl": url}))
            .await
            .unwrap_err();
        assert_eq!(err.status(), 403);
        assert_eq!(
            err.message,
            "Only one PurgeQueue operation on q is allowed every 60 seconds."
        );
        advance(60).await;
        call(&emu, "PurgeQueue", json!({"QueueUrl": url}))
            .await
            .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn recreate_cooldown() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        call(&emu, "DeleteQueue", json!({"QueueUrl": url}))
            .await
            .unwrap();
        let err = call(&emu, "CreateQueue", json!({"QueueName": "q"}))
            .await
            .unwrap_err();
        assert_eq!(err.code(), "AWS.SimpleQueueService.QueueDeletedRecently");
        advance(60).await;
        call(&emu, "CreateQueue", json!({"QueueName": "q"}))
            .await
            .unwrap();
    }

    /// What the emulator keeps for a deleted queue lasts as long as the rule that needs it:
    /// the name for its minute (not at all without cooldowns), the chaos dice not at all.
    #[tokio::test(start_paused = true)]
    async fn many_deleted_queues_leave_only_the_last_minute_of_names() {
        for strict_cooldowns in [true, false] {
            let emu = emulator_with(EmulatorConfig {
                strict_cooldowns,
                chaos: crate::support::chaos::Chaos {
                    short_poll_miss: 0.5,
                    ..Default::default()
                },
                ..EmulatorConfig::default()
            });
            // 3,000 uniquely named queues over 300 virtual seconds: 600 a minute.
            for i in 0..3_000 {
                let url = create(&emu, &format!("q-{i}"), json!({})).await;
                // A short poll rolls the queue's own chaos dice.
                receive(&emu, &url, 1, json!({})).await;
                call(&emu, "DeleteQueue", json!({"QueueUrl": url}))
                    .await
                    .unwrap();
                if i % 10 == 9 {
                    advance(1).await;
                }
            }
            let names = emu.read().deleted.len();
            if strict_cooldowns {
                assert!(names <= 610, "{names} deleted names kept");
            } else {
                assert_eq!(names, 0, "without cooldowns no name is kept");
            }
            assert_eq!(emu.chaos.queues_known(), 0, "dice of deleted queues kept");
            assert!(emu.read().queues.is_empty());
        }
    }

    #[tokio::test(start_paused = true)]
    async fn cooldowns_can_be_turned_off() {
        let emu = emulator_with(EmulatorConfig {
            strict_cooldowns: false,
            ..Default::default()
        });
        let url = create(&emu, "q", json!({})).await;
        call(&emu, "PurgeQueue", json!({"QueueUrl": url}))
            .await
            .unwrap();
        call(&emu, "PurgeQueue", json!({"QueueUrl": url}))
            .await
            .unwrap();
        call(&emu, "DeleteQueue", json!({"QueueUrl": url}))
            .await
            .unwrap();
        call(&emu, "CreateQueue", json!({"QueueName": "q"}))
            .await
            .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn create_is_idempotent_only_for_equal_attributes() {
        let emu = emulator();
        create(
            &emu,
            "q",
            json!({"DelaySeconds": "1", "ReceiveMessageWaitTimeSeconds": "1"}),
        )
        .await;
        create(&emu, "q", json!({})).await;
        create(&emu, "q", json!({"DelaySeconds": "1"})).await;
        let err = call(
            &emu,
            "CreateQueue",
            json!({"QueueName": "q", "Attributes": {"DelaySeconds": "2"}}),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code(), "QueueAlreadyExists");
        assert_eq!(
            err.message,
            "A queue already exists with the same name and a different value for attribute DelaySeconds"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn list_pagination_and_tags() {
        let emu = emulator();
        for i in 0..10 {
            create(&emu, &format!("p-{i}"), json!({})).await;
        }
        let page = call(
            &emu,
            "ListQueues",
            json!({"QueueNamePrefix": "p-", "MaxResults": 2}),
        )
        .await
        .unwrap();
        assert_eq!(page["QueueUrls"].as_array().unwrap().len(), 2);
        let token = page["NextToken"].as_str().unwrap();
        let rest = call(
            &emu,
            "ListQueues",
            json!({"QueueNamePrefix": "p-", "MaxResults": 10, "NextToken": token}),
        )
        .await
        .unwrap();
        assert_eq!(rest["QueueUrls"].as_array().unwrap().len(), 8);
        assert!(rest.get("NextToken").is_none());
        let none = call(&emu, "ListQueues", json!({"QueueNamePrefix": "zzz"}))
            .await
            .unwrap();
        assert_eq!(none, json!({}));
        let url = "http://localhost:9324/000000000000/p-0";
        call(
            &emu,
            "TagQueue",
            json!({"QueueUrl": url, "Tags": {"a": "1", "b": ""}}),
        )
        .await
        .unwrap();
        call(
            &emu,
            "UntagQueue",
            json!({"QueueUrl": url, "TagKeys": ["a", "missing"]}),
        )
        .await
        .unwrap();
        let tags = call(&emu, "ListQueueTags", json!({"QueueUrl": url}))
            .await
            .unwrap();
        assert_eq!(tags, json!({"Tags": {"b": ""}}));
    }

    #[tokio::test(start_paused = true)]
    async fn default_attributes_match_aws() {
        let emu = emulator();
        let url = create(&emu, "q", json!({})).await;
        let out = call(
            &emu,
            "GetQueueAttributes",
            json!({"QueueUrl": url, "AttributeNames": ["All"]}),
        )
        .await
        .unwrap();
        let attrs = out["Attributes"].as_object().unwrap();
        let mut keys: Vec<_> = attrs.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "ApproximateNumberOfMessages",
                "ApproximateNumberOfMessagesDelayed",
                "ApproximateNumberOfMessagesNotVisible",
                "CreatedTimestamp",
                "DelaySeconds",
                "LastModifiedTimestamp",
                "MaximumMessageSize",
                "MessageRetentionPeriod",
                "QueueArn",
                "ReceiveMessageWaitTimeSeconds",
                "SqsManagedSseEnabled",
                "VisibilityTimeout",
            ]
        );
        assert_eq!(attrs["MaximumMessageSize"], "1048576");
        assert_eq!(attrs["QueueArn"], "arn:aws:sqs:us-east-1:000000000000:q");
        let err = call(
            &emu,
            "GetQueueAttributes",
            json!({"QueueUrl": url, "AttributeNames": ["Foobar"]}),
        )
        .await
        .unwrap_err();
        assert_eq!(err.message, "Unknown Attribute Foobar.");
    }

    #[test]
    fn queue_names() {
        assert!(validate_queue_name("abc-_1", false).is_ok());
        assert!(validate_queue_name(&"a".repeat(80), false).is_ok());
        assert!(validate_queue_name(&"a".repeat(81), false).is_err());
        assert!(validate_queue_name("a.fifo", false).is_err());
        assert!(validate_queue_name("a/b", false).is_err());
        assert!(validate_queue_name("a.fifo", true).is_ok());
        assert!(validate_queue_name("a", true).is_err());
        assert!(validate_queue_name(&format!("{}.fifo", "a".repeat(76)), true).is_err());
    }
}
