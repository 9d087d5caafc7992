//! The memory, depth and queues workloads against a `sqsprobe serve` of their own (I/O).
//!
//! One fill per queue kind serves both memory and depth: a fresh server, a queue, ten warm-up
//! messages (so allocator arenas and connection buffers exist before RSS is first read), then
//! filled in batches of ten up to each size in turn, ascending: at a `--memory-at` size RSS is
//! read, at a `--depth` size the receive → delete → send cycles run (each cycle sends one
//! message back, so the depth stays put). The held-groups FIFO case needs its own server per
//! depth, since holding changes the queue. `queues` creates queues up to each count on one
//! server and times lookups in between.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use super::client::{BODY, Client, Filler};
use super::report::{DepthRow, MemoryRow, QueueKind, QueuesRow, ScaleSizes, ScaleWorkload};
use super::server::{Pages, ServeProcess};
use crate::bench::Latency;
use crate::bench::Stop;

/// Groups of a held-groups FIFO queue left free to deliver (the rest hold their head in
/// flight); fewer when a small setting has few groups.
const FREE_GROUPS: u64 = 10;

/// How long a held group's head stays in flight: far beyond any measurement.
const HOLD_SECONDS: u64 = 3600;

/// What the workloads need to know.
pub(crate) struct Measure<'a> {
    pub binary: PathBuf,
    pub sizes: &'a ScaleSizes,
    pub workloads: &'a [ScaleWorkload],
    pub stop: Stop,
}

/// What the memory and depth workloads recorded, and what failed.
#[derive(Default)]
pub(crate) struct Recorded {
    pub memory: Vec<MemoryRow>,
    pub depth: Vec<DepthRow>,
    pub queues: Vec<QueuesRow>,
    pub errors: Vec<String>,
}

fn micros(samples: Vec<Duration>) -> Latency {
    Latency::from_nanos(samples.iter().map(|d| d.as_nanos() as u64).collect())
}

impl Measure<'_> {
    fn on(&self, workload: ScaleWorkload) -> bool {
        self.workloads.contains(&workload)
    }

    /// Limits for a server that must hold `messages` messages and `queues` queues.
    fn limits(messages: u64, queues: u64) -> Vec<String> {
        vec![
            "--max-messages".into(),
            (messages + 1000).to_string(),
            "--max-stored-bytes".into(),
            // 1 KiB of body per message is far above BODY: the count is the limit that binds.
            format!("{}", (messages + 1000) * 1024),
            "--max-queues".into(),
            (queues + 10).to_string(),
        ]
    }

    /// Runs memory, depth and queues as chosen, in that order.
    pub(crate) async fn run(&self, progress: &mut dyn FnMut(&str)) -> Recorded {
        let mut out = Recorded::default();
        if self.on(ScaleWorkload::Memory) || self.on(ScaleWorkload::Depth) {
            for kind in [QueueKind::Standard, QueueKind::Fifo] {
                if self.stop.requested() {
                    break;
                }
                if let Err(e) = self.fill_pass(kind, &mut out, progress).await {
                    out.errors.push(format!("{} fill: {e}", kind.as_str()));
                }
            }
        }
        if self.on(ScaleWorkload::Depth) {
            for &depth in &self.sizes.depths {
                if self.stop.requested() {
                    break;
                }
                match self.held_pass(depth, progress).await {
                    Ok(row) => out.depth.push(row),
                    Err(e) => out.errors.push(format!("fifo_held depth {depth}: {e}")),
                }
            }
        }
        if self.on(ScaleWorkload::Queues)
            && !self.stop.requested()
            && let Err(e) = self.queues_pass(&mut out, progress).await
        {
            out.errors.push(format!("queues: {e}"));
        }
        out
    }

    fn groups_at(&self, kind: QueueKind, messages: u64) -> Option<u64> {
        kind.is_fifo().then(|| self.sizes.groups.min(messages))
    }

    async fn queue(client: &mut Client, kind: QueueKind) -> Result<String, String> {
        let attributes = if kind.is_fifo() {
            json!({"FifoQueue": "true"})
        } else {
            json!({})
        };
        let name = match kind {
            QueueKind::Standard => "sqsprobe-bench-scale",
            QueueKind::Fifo | QueueKind::FifoHeld => "sqsprobe-bench-scale.fifo",
        };
        client.create_queue(name, attributes).await
    }

    /// One queue kind filled to every memory and depth size in turn.
    async fn fill_pass(
        &self,
        kind: QueueKind,
        out: &mut Recorded,
        progress: &mut dyn FnMut(&str),
    ) -> Result<(), String> {
        let memory = if self.on(ScaleWorkload::Memory) {
            self.sizes.memory_at.clone()
        } else {
            Vec::new()
        };
        let depths = if self.on(ScaleWorkload::Depth) {
            self.sizes.depths.clone()
        } else {
            Vec::new()
        };
        let mut sizes: Vec<u64> = memory.iter().chain(&depths).copied().collect();
        sizes.sort_unstable();
        sizes.dedup();
        let largest = sizes.last().copied().unwrap_or(0);
        // Measuring memory, the server runs in 4 KiB pages (`MemoryRow::small_pages`): RSS
        // read in 2 MiB steps is too coarse for a few bytes a message.
        let pages = if memory.is_empty() {
            Pages::Default
        } else {
            Pages::Small
        };
        let mut serve =
            ServeProcess::start_with(&self.binary, &Self::limits(largest, 1), &self.stop, pages)
                .await?;
        // What the kernel says of the process (it does not change while the process runs).
        let small_pages = serve.small_pages();
        let mut client = Client::new(serve.addr);
        let mut filler = Filler {
            queue_url: Self::queue(&mut client, kind).await?,
            groups: kind.is_fifo().then_some(self.sizes.groups),
            sent: 0,
        };
        filler.fill_to(&mut client, WARM_UP, &self.stop).await?;
        let before = serve.rss_bytes().ok();
        for size in sizes {
            progress(&format!("{} filling to {size} messages", kind.as_str()));
            filler.fill_to(&mut client, size, &self.stop).await?;
            serve.check_alive()?;
            if memory.contains(&size) {
                let before = before.ok_or("no RSS before the fill")?;
                let after = serve.rss_bytes()?;
                let per = after.saturating_sub(before) as f64 / (size - WARM_UP) as f64;
                progress(&format!(
                    "{} memory at {size} messages: {per:.0} bytes RSS per message",
                    kind.as_str()
                ));
                out.memory.push(MemoryRow {
                    queue: kind,
                    groups: self.groups_at(kind, size),
                    messages: size,
                    body_bytes: BODY.len() as u64,
                    rss_before_bytes: before,
                    rss_after_bytes: after,
                    rss_per_message_bytes: per,
                    overhead_per_message_bytes: per - BODY.len() as f64,
                    small_pages,
                });
            }
            if depths.contains(&size) {
                let mut row = self
                    .cycles(&mut client, &mut filler, kind, size, None)
                    .await?;
                row.small_pages = small_pages;
                progress(&format!(
                    "{} depth {size}: receive p50 {} µs, delete p50 {} µs",
                    kind.as_str(),
                    shown(row.receive.p50_us),
                    shown(row.delete.p50_us)
                ));
                out.depth.push(row);
            }
        }
        Ok(())
    }

    /// A FIFO queue at `depth` whose groups but a few hold their head in flight for an hour.
    async fn held_pass(
        &self,
        depth: u64,
        progress: &mut dyn FnMut(&str),
    ) -> Result<DepthRow, String> {
        let kind = QueueKind::FifoHeld;
        let serve = ServeProcess::start(&self.binary, &Self::limits(depth, 1), &self.stop).await?;
        let mut client = Client::new(serve.addr);
        let groups = self.sizes.groups.min(depth);
        let mut filler = Filler {
            queue_url: Self::queue(&mut client, kind).await?,
            groups: Some(groups),
            sent: 0,
        };
        progress(&format!("fifo_held filling to {depth} messages"));
        filler.fill_to(&mut client, depth, &self.stop).await?;
        let held = groups - FREE_GROUPS.min(groups / 2);
        // A receive of one takes the head of the first group that can deliver, which then
        // cannot for the hour: `held` receives hold `held` groups.
        let hold = json!({"QueueUrl": filler.queue_url, "VisibilityTimeout": HOLD_SECONDS});
        for _ in 0..held {
            if self.stop.requested() {
                return Err("cut by a signal".into());
            }
            client.call("ReceiveMessage", &hold).await?;
        }
        let row = self
            .cycles(&mut client, &mut filler, kind, depth, Some(held))
            .await?;
        drop(serve);
        progress(&format!(
            "fifo_held depth {depth} ({held} of {groups} groups held): receive p50 {} µs, delete p50 {} µs",
            shown(row.receive.p50_us),
            shown(row.delete.p50_us)
        ));
        Ok(row)
    }

    /// `--cycles` receive → delete → send-back cycles, receive and delete timed.
    async fn cycles(
        &self,
        client: &mut Client,
        filler: &mut Filler,
        kind: QueueKind,
        depth: u64,
        held: Option<u64>,
    ) -> Result<DepthRow, String> {
        let receive = json!({
            "QueueUrl": filler.queue_url, "MaxNumberOfMessages": 1,
            "MessageSystemAttributeNames": ["MessageGroupId"],
        });
        let mut receives = Vec::with_capacity(self.sizes.cycles as usize);
        let mut deletes = Vec::with_capacity(self.sizes.cycles as usize);
        for _ in 0..self.sizes.cycles {
            if self.stop.requested() {
                return Err("cut by a signal".into());
            }
            let (got, took) = client.call("ReceiveMessage", &receive).await?;
            receives.push(took);
            let message = &got["Messages"][0];
            let handle = message["ReceiptHandle"]
                .as_str()
                .ok_or_else(|| format!("ReceiveMessage returned no message at depth {depth}"))?;
            let group: Option<Value> = kind
                .is_fifo()
                .then(|| message["Attributes"]["MessageGroupId"].clone());
            let delete = json!({"QueueUrl": filler.queue_url, "ReceiptHandle": handle});
            let (_, took) = client.call("DeleteMessage", &delete).await?;
            deletes.push(took);
            filler.send_one(client, group.as_ref()).await?;
        }
        Ok(DepthRow {
            queue: kind,
            depth,
            groups: self.groups_at(kind, depth),
            groups_held: held,
            cycles: self.sizes.cycles,
            receive: micros(receives),
            delete: micros(deletes),
            small_pages: false,
        })
    }

    /// Queues created up to each `--queues` count on one server, lookups timed at each.
    async fn queues_pass(
        &self,
        out: &mut Recorded,
        progress: &mut dyn FnMut(&str),
    ) -> Result<(), String> {
        let largest = self.sizes.queues.iter().copied().max().unwrap_or(0);
        let serve =
            ServeProcess::start(&self.binary, &Self::limits(0, largest), &self.stop).await?;
        let mut client = Client::new(serve.addr);
        // Names of one width, so a name used as a prefix matches that queue alone.
        let width = largest.to_string().len();
        let name = |i: u64| format!("sqsprobe-bench-q{i:0width$}");
        let mut created = 0;
        for &count in &self.sizes.queues {
            while created < count {
                if self.stop.requested() {
                    return Err("cut by a signal".into());
                }
                client.create_queue(&name(created), json!({})).await?;
                created += 1;
            }
            let mut lists = Vec::with_capacity(self.sizes.cycles as usize);
            let mut urls = Vec::with_capacity(self.sizes.cycles as usize);
            for i in 0..self.sizes.cycles {
                if self.stop.requested() {
                    return Err("cut by a signal".into());
                }
                // A stride prime to the count visits queues all over the name range.
                let queue = name((i * 7919) % count);
                let (answer, took) = client
                    .call("ListQueues", &json!({"QueueNamePrefix": queue}))
                    .await?;
                lists.push(took);
                let found = answer["QueueUrls"].as_array().map_or(0, Vec::len);
                if found != 1 {
                    return Err(format!(
                        "ListQueues with prefix {queue} found {found} queues, not 1"
                    ));
                }
                let (_, took) = client
                    .call("GetQueueUrl", &json!({"QueueName": queue}))
                    .await?;
                urls.push(took);
            }
            let row = QueuesRow {
                queues: count,
                lookups: self.sizes.cycles,
                list_queues: micros(lists),
                get_queue_url: micros(urls),
            };
            progress(&format!(
                "{count} queues: ListQueues p50 {} µs, GetQueueUrl p50 {} µs",
                shown(row.list_queues.p50_us),
                shown(row.get_queue_url.p50_us)
            ));
            out.queues.push(row);
        }
        Ok(())
    }
}

/// Messages sent before RSS is first read.
pub(crate) const WARM_UP: u64 = 10;

fn shown(us: Option<f64>) -> String {
    us.map_or_else(|| "–".into(), |v| format!("{v:.0}"))
}
