//! Steps that administer a queue: attributes, purge, create/delete, URL, listing, tags and
//! dead-letter sources. Each makes one call through [`one_call!`].

use super::CaseRun;
use super::lifecycle;
use crate::classify::{Check, Observed, ReceivedMsg};
use crate::evidence::format::Phase;
use crate::runner::queues::run_prefix;
use crate::suite::model::{QueueDef, Spanned, Step};
use aws_sdk_sqs::types::QueueAttributeName;
use std::collections::BTreeMap;
use std::time::Duration;

impl CaseRun {
    pub(super) async fn get_attributes_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
        names: &[String],
    ) -> Result<Check, String> {
        let client = self.sqs.client();
        let url = self.queues.url(&queue.value)?;
        let mut req = client.get_queue_attributes().queue_url(&url);
        for n in names {
            req = req.attribute_names(QueueAttributeName::from(n.as_str()));
        }
        one_call!(self.sqs, &self.queues, step, "GetQueueAttributes", Some(&queue.value), req, view: |rec| {
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

    pub(super) async fn set_attributes_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
        attributes: &BTreeMap<String, String>,
    ) -> Result<Check, String> {
        let client = self.sqs.client();
        let url = self.queues.url(&queue.value)?;
        let attributes = lifecycle::resolve_arns(&mut self.sqs, &mut self.queues, attributes).await;
        let visibility = attributes
            .get("VisibilityTimeout")
            .and_then(|v| v.parse::<u64>().ok());
        let mut req = client.set_queue_attributes().queue_url(&url);
        for (k, v) in attributes {
            req = req.attributes(QueueAttributeName::from(k.as_str()), v);
        }
        one_call!(self.sqs, &self.queues, step, "SetQueueAttributes", Some(&queue.value), req, then: |rec| {
            if let (None, Some(secs)) = (&rec.error, visibility) {
                // Later receives lease for the new default (the evidence records each lease).
                self.queues
                    .set_visibility(&queue.value, Duration::from_secs(secs));
            }
        })
    }

    pub(super) async fn purge_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
    ) -> Result<Check, String> {
        let client = self.sqs.client();
        let url = self.queues.url(&queue.value)?;
        one_call!(
            self.sqs,
            &self.queues,
            step,
            "PurgeQueue",
            Some(&queue.value),
            client.purge_queue().queue_url(&url)
        )
    }

    pub(super) async fn create_queue_step(
        &mut self,
        step: &Step,
        def: &QueueDef,
    ) -> Result<Check, String> {
        let mut rec = lifecycle::create_queue(
            &mut self.sqs,
            &mut self.queues,
            &self.case,
            def,
            Phase::Step,
            Some(step),
        )
        .await?;
        Ok(self.sqs.check(&step.expect, &mut rec, Observed::default()))
    }

    pub(super) async fn delete_queue_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
    ) -> Result<Check, String> {
        let client = self.sqs.client();
        let url = self.queues.url(&queue.value)?;
        let region = self.queues.region_of(&queue.value).to_string();
        let q = self.queues.queue(&queue.value)?;
        if !self.sqs.ctx().registry.owns(&region, &url) && q.alive {
            return Err(format!(
                "refusing to delete {}: not created by this run",
                q.name
            ));
        }
        one_call!(self.sqs, &self.queues, step, "DeleteQueue", Some(&queue.value), client.delete_queue().queue_url(&url), then: |rec| {
            if rec.error.is_none() {
                self.sqs.ctx().registry.remove(&region, &url);
                self.queues.mark_deleted(&queue.value);
            }
        })
    }

    pub(super) async fn get_queue_url_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
    ) -> Result<Check, String> {
        let client = self.sqs.client();
        let name = self.queues.queue(&queue.value)?.name.clone();
        one_call!(
            self.sqs,
            &self.queues,
            step,
            "GetQueueUrl",
            Some(&queue.value),
            client.get_queue_url().queue_name(&name)
        )
    }

    /// The one administration step not made through [`one_call!`]: its expectations read
    /// `messages:` as the number of queues listed, not `received:`.
    pub(super) async fn list_queues_step(
        &mut self,
        step: &Step,
        max_results: &Option<i32>,
    ) -> Result<Check, String> {
        let client = self.sqs.client();
        // Always this case's own prefix: a listing never reaches other people's queues.
        let prefix = format!("{}{}-", run_prefix(&self.sqs.ctx().run_id), self.name_key);
        let meta = self.sqs.meta(
            &self.queues,
            Phase::Step,
            Some(step),
            "ListQueues",
            None,
            None,
        );
        let max = *max_results;
        let mut rec = call!(
            self.sqs,
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
        Ok(self.sqs.check(&expect_view, &mut rec, obs))
    }

    pub(super) async fn tag_queue_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
        tags: &BTreeMap<String, String>,
    ) -> Result<Check, String> {
        let client = self.sqs.client();
        let url = self.queues.url(&queue.value)?;
        let mut req = client.tag_queue().queue_url(&url);
        for (k, v) in tags {
            req = req.tags(k, v);
        }
        one_call!(
            self.sqs,
            &self.queues,
            step,
            "TagQueue",
            Some(&queue.value),
            req
        )
    }

    pub(super) async fn untag_queue_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
        keys: &[String],
    ) -> Result<Check, String> {
        let client = self.sqs.client();
        let url = self.queues.url(&queue.value)?;
        let keys = keys.to_vec();
        one_call!(
            self.sqs,
            &self.queues,
            step,
            "UntagQueue",
            Some(&queue.value),
            client
                .untag_queue()
                .queue_url(&url)
                .set_tag_keys(Some(keys))
        )
    }

    pub(super) async fn list_queue_tags_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
    ) -> Result<Check, String> {
        let client = self.sqs.client();
        let url = self.queues.url(&queue.value)?;
        one_call!(self.sqs, &self.queues, step, "ListQueueTags", Some(&queue.value), client.list_queue_tags().queue_url(&url), view: |rec| {
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

    pub(super) async fn list_dead_letter_sources_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
    ) -> Result<Check, String> {
        let client = self.sqs.client();
        let url = self.queues.url(&queue.value)?;
        // Each source URL becomes a "received" entry labelled with its queue label, so
        // `received: [main]` and `messages: 1` work here too. A dead-letter queue's sources are
        // in its own region: only those labels can be meant.
        let by_url = self.queues.labels_by_url_in_region_of(&queue.value);
        one_call!(self.sqs, &self.queues, step, "ListDeadLetterSourceQueues", Some(&queue.value), client.list_dead_letter_source_queues().queue_url(&url), view: |rec| {
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
}
