//! Steps that administer a queue: attributes, purge, create/delete, URL, listing, tags and
//! dead-letter sources.

use super::*;

impl CaseRun {
    pub(super) async fn get_attributes_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
        names: &[String],
    ) -> Result<Check, String> {
        let client = self.ctx.client.clone();
        let url = self.queues.url(&queue.value)?;
        let meta = self.meta(
            Phase::Step,
            Some(step),
            "GetQueueAttributes",
            None,
            Some(&queue.value),
        );
        let names = names.to_vec();
        let req = {
            let mut req = client.get_queue_attributes().queue_url(&url);
            for n in &names {
                req = req.attribute_names(QueueAttributeName::from(n.as_str()));
            }
            req
        };
        let mut rec = call!(self, meta, req).await;
        let attrs = rec.output.as_ref().map(|o| {
            o.attributes()
                .map(|a| {
                    a.iter()
                        .map(|(k, v)| (k.as_str().to_string(), v.clone()))
                        .collect::<BTreeMap<_, _>>()
                })
                .unwrap_or_default()
        });
        Ok(self.judge(
            step,
            &mut rec,
            Observed {
                queue_attributes: attrs,
                ..Observed::default()
            },
        ))
    }

    pub(super) async fn set_attributes_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
        attributes: &BTreeMap<String, String>,
    ) -> Result<Check, String> {
        let client = self.ctx.client.clone();
        let url = self.queues.url(&queue.value)?;
        let meta = self.meta(
            Phase::Step,
            Some(step),
            "SetQueueAttributes",
            None,
            Some(&queue.value),
        );
        let attributes = self.resolve_arns(attributes).await;
        let visibility = attributes
            .get("VisibilityTimeout")
            .and_then(|v| v.parse::<u64>().ok());
        let req = {
            let mut req = client.set_queue_attributes().queue_url(&url);
            for (k, v) in attributes {
                req = req.attributes(QueueAttributeName::from(k.as_str()), v);
            }
            req
        };
        let mut rec = call!(self, meta, req).await;
        if let (None, Some(secs)) = (&rec.error, visibility) {
            // Later receives lease for the new default (the evidence records each lease).
            self.queues
                .set_visibility(&queue.value, Duration::from_secs(secs));
        }
        Ok(self.judge(step, &mut rec, Observed::default()))
    }

    pub(super) async fn purge_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
    ) -> Result<Check, String> {
        let client = self.ctx.client.clone();
        let url = self.queues.url(&queue.value)?;
        let meta = self.meta(
            Phase::Step,
            Some(step),
            "PurgeQueue",
            None,
            Some(&queue.value),
        );
        let mut rec = call!(self, meta, client.purge_queue().queue_url(&url)).await;
        Ok(self.judge(step, &mut rec, Observed::default()))
    }

    pub(super) async fn create_queue_step(
        &mut self,
        step: &Step,
        def: &QueueDef,
    ) -> Result<Check, String> {
        let mut rec = self.create_queue(def, Phase::Step, Some(step)).await?;
        Ok(self.judge(step, &mut rec, Observed::default()))
    }

    pub(super) async fn delete_queue_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
    ) -> Result<Check, String> {
        let client = self.ctx.client.clone();
        let url = self.queues.url(&queue.value)?;
        let region = self.queues.region_of(&queue.value).to_string();
        let q = self.queues.queue(&queue.value)?;
        if !self.ctx.registry.owns(&region, &url) && q.alive {
            return Err(format!(
                "refusing to delete {}: not created by this run",
                q.name
            ));
        }
        let meta = self.meta(
            Phase::Step,
            Some(step),
            "DeleteQueue",
            None,
            Some(&queue.value),
        );
        let mut rec = call!(self, meta, client.delete_queue().queue_url(&url)).await;
        if rec.error.is_none() {
            self.ctx.registry.remove(&region, &url);
            self.queues.mark_deleted(&queue.value);
        }
        Ok(self.judge(step, &mut rec, Observed::default()))
    }

    pub(super) async fn get_queue_url_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
    ) -> Result<Check, String> {
        let client = self.ctx.client.clone();
        let name = self.queues.queue(&queue.value)?.name.clone();
        let meta = self.meta(
            Phase::Step,
            Some(step),
            "GetQueueUrl",
            None,
            Some(&queue.value),
        );
        let mut rec = call!(self, meta, client.get_queue_url().queue_name(&name)).await;
        Ok(self.judge(step, &mut rec, Observed::default()))
    }

    pub(super) async fn list_queues_step(
        &mut self,
        step: &Step,
        max_results: &Option<i32>,
    ) -> Result<Check, String> {
        let client = self.ctx.client.clone();
        // Always this case's own prefix: a listing never reaches other people's queues.
        let prefix = format!("{}{}-", run_prefix(&self.ctx.run_id), self.name_key);
        let meta = self.meta(Phase::Step, Some(step), "ListQueues", None, None);
        let max = *max_results;
        let mut rec = call!(
            self,
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
        Ok(self.judge_with(step, &expect_view, &mut rec, obs))
    }

    pub(super) async fn tag_queue_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
        tags: &BTreeMap<String, String>,
    ) -> Result<Check, String> {
        let client = self.ctx.client.clone();
        let url = self.queues.url(&queue.value)?;
        let meta = self.meta(
            Phase::Step,
            Some(step),
            "TagQueue",
            None,
            Some(&queue.value),
        );
        let tags = tags.clone();
        let req = {
            let mut req = client.tag_queue().queue_url(&url);
            for (k, v) in tags {
                req = req.tags(k, v);
            }
            req
        };
        let mut rec = call!(self, meta, req).await;
        Ok(self.judge(step, &mut rec, Observed::default()))
    }

    pub(super) async fn untag_queue_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
        keys: &[String],
    ) -> Result<Check, String> {
        let client = self.ctx.client.clone();
        let url = self.queues.url(&queue.value)?;
        let meta = self.meta(
            Phase::Step,
            Some(step),
            "UntagQueue",
            None,
            Some(&queue.value),
        );
        let keys = keys.to_vec();
        let mut rec = call!(
            self,
            meta,
            client
                .untag_queue()
                .queue_url(&url)
                .set_tag_keys(Some(keys))
        )
        .await;
        Ok(self.judge(step, &mut rec, Observed::default()))
    }

    pub(super) async fn list_queue_tags_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
    ) -> Result<Check, String> {
        let client = self.ctx.client.clone();
        let url = self.queues.url(&queue.value)?;
        let meta = self.meta(
            Phase::Step,
            Some(step),
            "ListQueueTags",
            None,
            Some(&queue.value),
        );
        let mut rec = call!(self, meta, client.list_queue_tags().queue_url(&url)).await;
        let tags = rec.output.as_ref().map(|o| {
            o.tags()
                .map(|t| t.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default()
        });
        Ok(self.judge(
            step,
            &mut rec,
            Observed {
                queue_attributes: tags,
                ..Observed::default()
            },
        ))
    }

    pub(super) async fn list_dead_letter_sources_step(
        &mut self,
        step: &Step,
        queue: &Spanned<String>,
    ) -> Result<Check, String> {
        let client = self.ctx.client.clone();
        let url = self.queues.url(&queue.value)?;
        let meta = self.meta(
            Phase::Step,
            Some(step),
            "ListDeadLetterSourceQueues",
            None,
            Some(&queue.value),
        );
        let mut rec = call!(
            self,
            meta,
            client.list_dead_letter_source_queues().queue_url(&url)
        )
        .await;
        // Each source URL becomes a "received" entry labelled with its queue label, so
        // `received: [main]` and `messages: 1` work here too.
        // A dead-letter queue's sources are in its own region: only those labels can be meant
        // (one URL may name a queue in each of two regions, as moto's do).
        let by_url = self.queues.labels_by_url_in_region_of(&queue.value);
        let received = rec.output.as_ref().map(|o| {
            o.queue_urls()
                .iter()
                .map(|u| ReceivedMsg {
                    label: by_url.get(u).cloned(),
                    ..ReceivedMsg::default()
                })
                .collect()
        });
        Ok(self.judge(
            step,
            &mut rec,
            Observed {
                received,
                ..Observed::default()
            },
        ))
    }
}
