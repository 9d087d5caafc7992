//! The messages a plan sends while the consumer runs (`send: {rate: ...}`): one task per queue
//! at its rate, begun once the consumer has started, never before.

use std::sync::{Arc, Mutex};

use super::console::say;
use super::plan::{Plan, QueuePlan};
use super::setup::{Created, send};

/// The held-back messages and the MessageIds sent so far.
pub(crate) struct Sender {
    /// Each queue with messages held back, with its URL; emptied by [`Sender::begin`].
    held: Vec<(QueuePlan, String)>,
    client: aws_sdk_sqs::Client,
    tasks: tokio::task::JoinSet<Result<(), String>>,
    sent: Arc<Mutex<Vec<String>>>,
}

impl Sender {
    /// A sender of `plan`'s held-back messages to the `queues` made of it, the messages sent
    /// before the consumer started counted first.
    pub(crate) fn new(client: &aws_sdk_sqs::Client, plan: &Plan, queues: &[Created]) -> Sender {
        let before: Vec<String> = queues.iter().flat_map(|c| c.sent.clone()).collect();
        let held = plan
            .queues
            .iter()
            .zip(queues)
            .filter(|(q, _)| q.rate.is_some() && q.before < q.messages)
            .map(|(q, c)| (q.clone(), c.url.clone()))
            .collect();
        Sender {
            held,
            client: client.clone(),
            tasks: tokio::task::JoinSet::new(),
            sent: Arc::new(Mutex::new(before)),
        }
    }

    /// Starts sending the held-back messages: the first one gap from now, then one a gap.
    pub(crate) fn begin(&mut self) {
        for (q, url) in std::mem::take(&mut self.held) {
            let Some(gap) = q.gap() else {
                continue;
            };
            let (client, sent) = (self.client.clone(), self.sent.clone());
            self.tasks.spawn(async move {
                let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + gap, gap);
                for i in q.before + 1..=q.messages {
                    tick.tick().await;
                    let id = send(&client, &q, &url, i).await?;
                    sent.lock().unwrap_or_else(|e| e.into_inner()).push(id);
                }
                Ok(())
            });
        }
    }

    /// Whether every message has been sent; a send that failed is said once and ends its
    /// queue's sending.
    pub(crate) fn done(&mut self) -> bool {
        if !self.held.is_empty() {
            return false;
        }
        while let Some(joined) = self.tasks.try_join_next() {
            if let Ok(Err(e)) = joined {
                say(e);
            }
        }
        self.tasks.is_empty()
    }

    /// Stops what is still sending: every MessageId sent, in send order.
    pub(crate) async fn stop(mut self) -> Vec<String> {
        self.tasks.abort_all();
        while let Some(joined) = self.tasks.join_next().await {
            if let Ok(Err(e)) = joined {
                say(e);
            }
        }
        std::mem::take(&mut *self.sent.lock().unwrap_or_else(|e| e.into_inner()))
    }
}
