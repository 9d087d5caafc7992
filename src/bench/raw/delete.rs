//! The delete workloads: DeleteMessage alone (`delete`) or DeleteMessageBatch of ten alone
//! (`delete-batch`), timed apart from the sends and receives that give them receipt handles
//! (I/O, except [`next_round_size`] and [`group`]).
//!
//! A phase is a series of rounds. In each round every connection first tops its own queue up,
//! untimed, with as many messages as it lacks handles (SendMessageBatch of ten), and receives
//! them (ReceiveMessage of ten, a 12-hour visibility so no handle goes stale, a 1-second long
//! poll) until it holds the round's number of handles, a DeleteMessage built for each (for
//! `delete-batch`, a DeleteMessageBatch for each ten; fewer than ten wait for the next fill). Only
//! when every connection is ready does the round's clock start: all connections then delete
//! their handles at once, each sending its next delete as soon as the last is answered, and
//! the round's time ends with the last connection's last answer. So the row's requests/s is
//! deletes ÷ the summed time of the rounds' deleting, in which nothing but the deletes were
//! in flight; a connection that ran out of handles before the others idles until the round
//! ends, which makes the figure a slight underestimate, never an overestimate. The phase ends
//! when its rounds' deleting time reaches the phase's duration (a round is cut at it), so the
//! wall time of a phase is that duration plus its fills.
//!
//! Rounds start at [`FIRST_ROUND`] handles per connection and double while a round is over
//! in less than half of [`ROUND_SPAN`], up to [`MAX_ROUND`]: a slow peer (moto takes a second
//! per receive of a deep queue) is not asked to fill thousands of messages per connection, a
//! fast server does not spend its phase waiting on short rounds' stragglers. Handles a cut
//! round did not use are deleted first in the next round (their leases are 12 hours long).

use std::time::{Duration, Instant};

use tokio::task::JoinSet;

use super::connection::Connection;
use super::protocol::{BATCH_SIZE, Prepared};
use super::report::RawWorkload;
use super::workload::{ConnectionLog, ConnectionPlan, batch_done, exchange, ok, receive_handles};

/// Handles per connection in a phase's first round.
pub(crate) const FIRST_ROUND: usize = 100;

/// Most handles per connection in one round.
pub(crate) const MAX_ROUND: usize = 3200;

/// The deleting time a round is sized to reach: long enough that a round's stragglers are a
/// small share of it, short enough that a fill never holds many messages per connection.
pub(crate) const ROUND_SPAN: Duration = Duration::from_millis(250);

/// How long a fill may wait for its messages to come back from receives before it gives up.
const FILL_TIMEOUT: Duration = Duration::from_secs(30);

/// The handles per connection of the round after one of `size` whose deleting took `span`:
/// doubled while a whole round (not cut by the phase's end) took less than half of
/// [`ROUND_SPAN`], never above [`MAX_ROUND`].
pub(crate) fn next_round_size(size: usize, span: Duration, cut: bool) -> usize {
    if !cut && span < ROUND_SPAN / 2 {
        (size * 2).min(MAX_ROUND)
    } else {
        size
    }
}

/// How the handles of a round are grouped into requests: one each, or ten a request with the
/// remainder (fewer than ten) kept for the next fill. Pure, so the grouping is tested alone.
pub(crate) fn group(handles: Vec<String>, batched: bool) -> (Vec<Vec<String>>, Vec<String>) {
    if !batched {
        return (handles.into_iter().map(|h| vec![h]).collect(), Vec::new());
    }
    let mut handles = handles;
    let rest = handles.split_off(handles.len() - handles.len() % BATCH_SIZE);
    let groups = handles
        .chunks_exact(BATCH_SIZE)
        .map(<[String]>::to_vec)
        .collect();
    (groups, rest)
}

/// A delete built for handles a connection holds.
struct PendingDelete {
    request: Prepared,
    /// Handles it deletes: 1 for DeleteMessage, ten for DeleteMessageBatch.
    handles: usize,
}

/// One connection of a delete workload, with the deletes it holds between rounds.
pub(crate) struct Deleter {
    pub conn: Connection,
    plan: ConnectionPlan,
    /// DeleteMessageBatch of ten rather than DeleteMessage.
    batched: bool,
    /// Deletes for handles received and not yet deleted.
    pending: Vec<PendingDelete>,
    /// Handles received and not yet in a delete (fewer than a batch, `delete-batch` only).
    loose: Vec<String>,
}

impl Deleter {
    pub(crate) fn new(conn: Connection, plan: ConnectionPlan) -> Self {
        Self {
            conn,
            batched: plan.workload == RawWorkload::DeleteBatch,
            plan,
            pending: Vec::new(),
            loose: Vec::new(),
        }
    }

    /// Handles held: in pending deletes and loose.
    fn held(&self) -> usize {
        self.pending.iter().map(|p| p.handles).sum::<usize>() + self.loose.len()
    }

    /// Untimed: sends and receives until `want` handles are held. Failures are counted in
    /// `log` (they are the row's errors), its latencies are not.
    async fn fill(&mut self, want: usize, log: &mut ConnectionLog) {
        let lacking = want.saturating_sub(self.held());
        let batches = lacking.div_ceil(BATCH_SIZE);
        let deadline = Instant::now() + FILL_TIMEOUT;
        for _ in 0..batches {
            if exchange(&mut self.conn, &self.plan.send_batch, log, ok)
                .await
                .is_none()
            {
                return;
            }
        }
        // A batch may round up past `lacking`: the surplus waits in the queue for the next
        // round's fill, which receives it before sending more.
        let Some(handles) =
            receive_handles(&mut self.conn, &self.plan, lacking, log, deadline).await
        else {
            return;
        };
        let mut all = std::mem::take(&mut self.loose);
        all.extend(handles);
        let (groups, loose) = group(all, self.batched);
        self.loose = loose;
        let queue_url = self.plan.queue_url.as_str();
        let requests = self.plan.requests;
        self.pending.extend(groups.iter().map(|g| PendingDelete {
            request: if self.batched {
                requests.delete_batch(queue_url, g)
            } else {
                requests.delete(queue_url, &g[0])
            },
            handles: g.len(),
        }));
    }

    /// Timed: deletes pending handles until none is left, `deadline` passes or a stop is
    /// requested; `log` gets each delete's latency, and a message for each handle deleted.
    async fn delete(&mut self, deadline: Instant, stop: &crate::bench::Stop) -> ConnectionLog {
        let mut log = ConnectionLog::default();
        // The first delete always goes out (unless a stop was requested), as a timed phase's
        // first unit does (`workload::run_phase`); no other starts after the deadline.
        let mut first = true;
        while (first || Instant::now() < deadline) && !stop.requested() {
            first = false;
            let Some(delete) = self.pending.pop() else {
                break;
            };
            let Some(answer) = exchange(&mut self.conn, &delete.request, &mut log, ok).await else {
                continue;
            };
            log.messages += if self.batched {
                let requests = &self.plan.requests;
                batch_done(
                    &mut log,
                    requests,
                    "DeleteMessageBatch",
                    delete.handles,
                    &answer.body,
                )
            } else {
                1
            };
        }
        log.finished = Some(Instant::now());
        log
    }
}

/// What one phase of the delete workload recorded.
pub(crate) struct DeletePhase {
    pub logs: Vec<ConnectionLog>,
    /// The rounds' deleting time summed, seconds.
    pub elapsed_s: f64,
    /// Reconnects during the deletes (those of the fills are not the row's).
    pub reconnects: u64,
    /// Why the phase ended before its time was spent, if it did.
    pub error: Option<String>,
}

/// Runs rounds on `deleters` until their deleting time reaches `budget` or a stop is
/// requested, starting at `*size` handles per connection; leaves in `*size` the size the
/// next phase should start at. The deleters are handed back with what they still hold.
pub(crate) async fn run_phase(
    deleters: Vec<Deleter>,
    size: &mut usize,
    budget: Duration,
    stop: &crate::bench::Stop,
) -> (Vec<Deleter>, DeletePhase) {
    let mut phase = DeletePhase {
        logs: Vec::new(),
        elapsed_s: 0.0,
        reconnects: 0,
        error: None,
    };
    let mut deleters = deleters;
    let mut spent = Duration::ZERO;
    let mut fill_log = ConnectionLog::default();
    while spent < budget && !stop.requested() {
        let want = *size;
        deleters = each(deleters, move |mut d| async move {
            let mut log = ConnectionLog::default();
            d.fill(want, &mut log).await;
            (d, log)
        })
        .await
        .into_iter()
        .map(|(d, log)| {
            fill_log.errors += log.errors;
            if fill_log.first_error.is_none() {
                fill_log.first_error = log.first_error;
            }
            d
        })
        .collect();
        if deleters.iter().all(|d| d.pending.is_empty()) {
            phase.error = Some(match fill_log.first_error.take() {
                Some(e) => format!("no receipt handle to delete: {e}"),
                None => "no receipt handle to delete: the receives came back empty".into(),
            });
            break;
        }
        let started = Instant::now();
        let deadline = started + (budget - spent);
        let before: Vec<u64> = deleters.iter().map(|d| d.conn.reconnects).collect();
        let stop_each = stop.clone();
        let done = each(deleters, move |mut d| {
            let stop = stop_each.clone();
            async move {
                let log = d.delete(deadline, &stop).await;
                (d, log)
            }
        })
        .await;
        let finished = done
            .iter()
            .filter_map(|(_, log)| log.finished)
            .max()
            .unwrap_or(started);
        let span = finished.saturating_duration_since(started);
        spent += span;
        let cut = finished >= deadline;
        *size = next_round_size(*size, span, cut);
        deleters = Vec::with_capacity(done.len());
        for ((d, log), reconnects_before) in done.into_iter().zip(before) {
            phase.reconnects += d.conn.reconnects - reconnects_before;
            phase.logs.push(log);
            deleters.push(d);
        }
    }
    phase.elapsed_s = spent.as_secs_f64();
    if fill_log.errors > 0 {
        // The fills' failures are the row's errors too: a row whose handles ran short says so.
        let mut fills = ConnectionLog::default();
        fills.errors = fill_log.errors;
        fills.first_error = fill_log.first_error;
        phase.logs.push(fills);
    }
    (deleters, phase)
}

/// Runs `work` on every deleter at once, each on its own task; the results in the deleters'
/// order. A task that panicked loses its deleter (the phase goes on with the others).
async fn each<F, Fut, T>(deleters: Vec<Deleter>, work: F) -> Vec<(Deleter, T)>
where
    F: Fn(Deleter) -> Fut,
    Fut: std::future::Future<Output = (Deleter, T)> + Send + 'static,
    T: Send + 'static,
{
    let mut tasks = JoinSet::new();
    for (i, d) in deleters.into_iter().enumerate() {
        let fut = work(d);
        tasks.spawn(async move { (i, fut.await) });
    }
    let mut out: Vec<(usize, (Deleter, T))> = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        if let Ok(done) = joined {
            out.push(done);
        }
    }
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, done)| done).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_double_while_short_and_whole_up_to_the_cap() {
        let short = ROUND_SPAN / 4;
        assert_eq!(next_round_size(FIRST_ROUND, short, false), 2 * FIRST_ROUND);
        assert_eq!(next_round_size(MAX_ROUND / 2 + 1, short, false), MAX_ROUND);
        assert_eq!(next_round_size(MAX_ROUND, short, false), MAX_ROUND);
    }

    #[test]
    fn handles_go_one_a_delete_or_ten_a_batch_with_the_rest_kept() {
        let handles = |n: usize| (0..n).map(|i| format!("h{i}")).collect::<Vec<_>>();
        let (one, rest) = group(handles(3), false);
        assert_eq!(one, [vec!["h0"], vec!["h1"], vec!["h2"]]);
        assert!(rest.is_empty());
        let (batches, rest) = group(handles(23), true);
        assert_eq!(batches.len(), 2);
        assert!(batches.iter().all(|b| b.len() == BATCH_SIZE));
        assert_eq!(batches[1][0], "h10");
        assert_eq!(rest, ["h20", "h21", "h22"]);
        let (batches, rest) = group(handles(9), true);
        assert!(batches.is_empty());
        assert_eq!(rest.len(), 9);
        // Every round size is a whole number of batches: a batched round leaves nothing loose.
        let mut size = FIRST_ROUND;
        while size < MAX_ROUND {
            assert_eq!(size % BATCH_SIZE, 0, "{size}");
            size = next_round_size(size, Duration::ZERO, false);
        }
        assert_eq!(size % BATCH_SIZE, 0);
    }

    #[test]
    fn a_long_or_cut_round_keeps_its_size() {
        assert_eq!(next_round_size(400, ROUND_SPAN, false), 400);
        assert_eq!(next_round_size(400, ROUND_SPAN / 2, false), 400);
        // Cut by the phase's end: its span says nothing of how long it would have taken.
        assert_eq!(next_round_size(400, ROUND_SPAN / 4, true), 400);
    }
}
