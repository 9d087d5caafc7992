//! Steps that administer a queue: attributes, purge, create/delete, URL, listing, tags and
//! dead-letter sources. Each makes one call through [`one_call!`].

use super::calls::Caller;
use super::lifecycle;
use super::queue_table::QueueTable;
use aws_sdk_sqs::types::QueueAttributeName;
use sqsprobe_core::classify::{Check, Observed, ReceivedMsg};
use sqsprobe_core::evidence::format::Phase;
use sqsprobe_core::suite::model::{Case, QueueDef, Spanned, Step};
use std::collections::BTreeMap;
use std::time::Duration;

/// `get-attributes`: GetQueueAttributes, its attributes what the step's expectations read.
pub(super) async fn get_attributes(
    sqs: &mut Caller,
    queues: &QueueTable,
    step: &Step,
    queue: &Spanned<String>,
    names: &[String],
) -> Result<Check, String> {
    let client = sqs.client();
    let url = queues.url(&queue.value)?;
    let mut req = client.get_queue_attributes().queue_url(&url);
    for n in names {
        req = req.attribute_names(QueueAttributeName::from(n.as_str()));
    }
    one_call!(sqs, queues, step, "GetQueueAttributes", Some(&queue.value), req, view: |rec| {
        let attrs = rec.output.as_ref().map(|o| {
            o.attributes()
                .map(|a| {
                    a.iter()
                        .map(|(k, v)| (k.as_str().to_string(), v.clone()))
                        .collect::<BTreeMap<_, _>>()
                })
                .unwrap_or_default()
        });
        Observed {
            queue_attributes: attrs,
            ..Observed::default()
        }
    })
}

/// `set-attributes`: SetQueueAttributes (each `${arn:<label>}` resolved first); a new
/// VisibilityTimeout becomes the queue's default lease in the queue table.
pub(super) async fn set_attributes(
    sqs: &mut Caller,
    queues: &mut QueueTable,
    step: &Step,
    queue: &Spanned<String>,
    attributes: &BTreeMap<String, String>,
) -> Result<Check, String> {
    let client = sqs.client();
    let url = queues.url(&queue.value)?;
    let attributes = lifecycle::resolve_arns(sqs, queues, attributes).await;
    let visibility = attributes
        .get("VisibilityTimeout")
        .and_then(|v| v.parse::<u64>().ok());
    let mut req = client.set_queue_attributes().queue_url(&url);
    for (k, v) in attributes {
        req = req.attributes(QueueAttributeName::from(k.as_str()), v);
    }
    one_call!(sqs, queues, step, "SetQueueAttributes", Some(&queue.value), req, then: |rec| {
        if let (None, Some(secs)) = (&rec.error, visibility) {
            // Later receives lease for the new default (the evidence records each lease).
            queues
                .set_visibility(&queue.value, Duration::from_secs(secs));
        }
    })
}

/// `purge`: PurgeQueue.
pub(super) async fn purge(
    sqs: &mut Caller,
    queues: &QueueTable,
    step: &Step,
    queue: &Spanned<String>,
) -> Result<Check, String> {
    let client = sqs.client();
    let url = queues.url(&queue.value)?;
    one_call!(
        sqs,
        queues,
        step,
        "PurgeQueue",
        Some(&queue.value),
        client.purge_queue().queue_url(&url)
    )
}

/// `create-queue`: a queue of `case` created as setup creates one (its ownership checked and
/// registered), checked as a step.
pub(super) async fn create_queue(
    sqs: &mut Caller,
    queues: &mut QueueTable,
    case: &Case,
    step: &Step,
    def: &QueueDef,
) -> Result<Check, String> {
    let mut rec = lifecycle::create_queue(sqs, queues, case, def, Phase::Step, Some(step)).await?;
    Ok(sqs.check(&step.expect, &mut rec, Observed::default()))
}

/// `delete-queue`: DeleteQueue of a queue this run created (refused for any other); the
/// queue leaves the run's registry and the case's table once deleted.
pub(super) async fn delete_queue(
    sqs: &mut Caller,
    queues: &mut QueueTable,
    step: &Step,
    queue: &Spanned<String>,
) -> Result<Check, String> {
    let client = sqs.client();
    let url = queues.url(&queue.value)?;
    let region = queues.region_of(&queue.value).to_string();
    let q = queues.queue(&queue.value)?;
    if !sqs.ctx().registry.owns(&region, &url) && q.alive {
        return Err(format!(
            "refusing to delete {}: not created by this run",
            q.name
        ));
    }
    one_call!(sqs, queues, step, "DeleteQueue", Some(&queue.value), client.delete_queue().queue_url(&url), then: |rec| {
        if rec.error.is_none() {
            sqs.ctx().registry.remove(&region, &url);
            queues.mark_deleted(&queue.value);
        }
    })
}

/// `get-queue-url`: GetQueueUrl by the queue's name.
pub(super) async fn get_queue_url(
    sqs: &mut Caller,
    queues: &QueueTable,
    step: &Step,
    queue: &Spanned<String>,
) -> Result<Check, String> {
    let client = sqs.client();
    let name = queues.queue(&queue.value)?.name.clone();
    one_call!(
        sqs,
        queues,
        step,
        "GetQueueUrl",
        Some(&queue.value),
        client.get_queue_url().queue_name(&name)
    )
}

/// The one administration step not made through [`one_call!`]: its expectations read
/// `messages:` as the number of queues listed, not `received:`.
pub(super) async fn list_queues(
    sqs: &mut Caller,
    queues: &QueueTable,
    step: &Step,
    max_results: &Option<i32>,
) -> Result<Check, String> {
    let client = sqs.client();
    // Always this case's own prefix: a listing never reaches other people's queues.
    let prefix = queues.own_prefix().to_string();
    let meta = sqs.meta(queues, Phase::Step, Some(step), "ListQueues", None, None);
    let max = *max_results;
    let mut rec = call!(
        sqs,
        meta,
        client
            .list_queues()
            .queue_name_prefix(&prefix)
            .set_max_results(max)
    )
    .await;
    let received = rec.output.as_ref().map(|o| {
        o.queue_urls()
            .iter()
            .map(|_| ReceivedMsg::default())
            .collect::<Vec<_>>()
    });
    let mut expect_view = step.expect.clone();
    expect_view.received.clear();
    let obs = Observed {
        received: received.filter(|_| step.expect.messages.is_some()),
        ..Observed::default()
    };
    Ok(sqs.check(&expect_view, &mut rec, obs))
}

/// `tag-queue`: TagQueue.
pub(super) async fn tag_queue(
    sqs: &mut Caller,
    queues: &QueueTable,
    step: &Step,
    queue: &Spanned<String>,
    tags: &BTreeMap<String, String>,
) -> Result<Check, String> {
    let client = sqs.client();
    let url = queues.url(&queue.value)?;
    let mut req = client.tag_queue().queue_url(&url);
    for (k, v) in tags {
        req = req.tags(k, v);
    }
    one_call!(sqs, queues, step, "TagQueue", Some(&queue.value), req)
}

/// `untag-queue`: UntagQueue.
pub(super) async fn untag_queue(
    sqs: &mut Caller,
    queues: &QueueTable,
    step: &Step,
    queue: &Spanned<String>,
    keys: &[String],
) -> Result<Check, String> {
    let client = sqs.client();
    let url = queues.url(&queue.value)?;
    let keys = keys.to_vec();
    one_call!(
        sqs,
        queues,
        step,
        "UntagQueue",
        Some(&queue.value),
        client
            .untag_queue()
            .queue_url(&url)
            .set_tag_keys(Some(keys))
    )
}

/// `list-queue-tags`: ListQueueTags, its tags what the step's `attributes:` read.
pub(super) async fn list_queue_tags(
    sqs: &mut Caller,
    queues: &QueueTable,
    step: &Step,
    queue: &Spanned<String>,
) -> Result<Check, String> {
    let client = sqs.client();
    let url = queues.url(&queue.value)?;
    one_call!(sqs, queues, step, "ListQueueTags", Some(&queue.value), client.list_queue_tags().queue_url(&url), view: |rec| {
        let tags = rec.output.as_ref().map(|o| {
            o.tags()
                .map(|t| t.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default()
        });
        Observed {
            queue_attributes: tags,
            ..Observed::default()
        }
    })
}

/// `list-dead-letter-source-queues`: ListDeadLetterSourceQueues, each source a "received"
/// entry labelled with its queue's label.
pub(super) async fn list_dead_letter_sources(
    sqs: &mut Caller,
    queues: &QueueTable,
    step: &Step,
    queue: &Spanned<String>,
) -> Result<Check, String> {
    let client = sqs.client();
    let url = queues.url(&queue.value)?;
    // Each source URL becomes a "received" entry labelled with its queue label, so
    // `received: [main]` and `messages: 1` work here too. A dead-letter queue's sources are
    // in its own region: only those labels can be meant.
    let by_url = queues.labels_by_url_in_region_of(&queue.value);
    one_call!(sqs, queues, step, "ListDeadLetterSourceQueues", Some(&queue.value), client.list_dead_letter_source_queues().queue_url(&url), view: |rec| {
        let received = rec.output.as_ref().map(|o| {
            o.queue_urls()
                .iter()
                .map(|u| ReceivedMsg {
                    label: by_url.get(u).cloned(),
                    ..ReceivedMsg::default()
                })
                .collect()
        });
        Observed {
            received,
            ..Observed::default()
        }
    })
}
