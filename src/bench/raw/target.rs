//! One raw target from start to end: reachability, queues, one row per connection count ×
//! workload (the no-op first: it is the ceiling of the rest), teardown (I/O).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hyper::header::HeaderValue;
use tokio::task::JoinSet;

use super::connection::{Answer, Connection};
use super::cpu::{CpuProbe, RowCpu};
use super::delete::{self, Deleter};
use super::endpoint::RawEndpoint;
use super::protocol::{BATCH_SIZE, Prepared, Protocol, Requests};
use super::report::{RawRow, RawTargetInfo, RawWorkload};
use super::workload::{ConnectionLog, ConnectionPlan, merge, run_phase};

/// What every target is asked to do.
#[derive(Debug, Clone)]
pub(crate) struct RawOptions {
    pub duration: Duration,
    pub warmup: Duration,
    pub connections: Vec<usize>,
    /// Chosen workloads, in run order (the no-op is added first).
    pub workloads: Vec<RawWorkload>,
    pub prefill: u64,
    /// Queues the send, send-batch and receive workloads share: connection i uses queue i mod
    /// this.
    pub shared_queues: usize,
    /// Set by a signal: no request starts after it, and no further phase.
    pub stop: crate::bench::Stop,
}

/// A target to measure.
#[derive(Debug, Clone)]
pub(crate) struct RawTarget {
    pub name: String,
    pub url: String,
    pub endpoint: RawEndpoint,
    pub protocol: Protocol,
    /// Where its server's CPU and the client's are read from, over each measured phase.
    pub cpu: CpuProbe,
}

/// Everything measured on one target; `info.error` says why it stopped early, if it did.
pub(crate) struct TargetOutcome {
    pub info: RawTargetInfo,
    pub rows: Vec<RawRow>,
}

/// A short random id so parallel or repeated runs never share a queue name.
fn run_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..8].to_string()
}

/// One request that must answer 200.
async fn call(conn: &mut Connection, request: &Prepared) -> Result<Answer, String> {
    match conn.send(request).await {
        Ok(a) if a.status == 200 => Ok(a),
        Ok(a) => Err(format!(
            "{} answered HTTP {}: {}",
            request.operation,
            a.status,
            String::from_utf8_lossy(&a.body)
                .chars()
                .take(300)
                .collect::<String>()
        )),
        Err(e) => Err(format!("{}: {e}", request.operation)),
    }
}

struct Setup<'a> {
    target: &'a RawTarget,
    requests: Requests,
    addrs: Vec<SocketAddr>,
    authority: HeaderValue,
    id: String,
    leaked: Vec<String>,
}

impl Setup<'_> {
    fn connection(&self) -> Connection {
        Connection::new(self.addrs.clone(), self.authority.clone())
    }

    async fn create_queue(&self, conn: &mut Connection, name: &str) -> Result<String, String> {
        let answer = call(conn, &self.requests.create_queue(name)).await?;
        self.requests
            .queue_url(&answer.body)
            .ok_or_else(|| format!("CreateQueue {name}: no QueueUrl in the answer"))
    }

    async fn delete_queues(&mut self, conn: &mut Connection, urls: &[String]) {
        for url in urls {
            if call(conn, &self.requests.delete_queue(url)).await.is_err() {
                self.leaked.push(url.clone());
            }
        }
    }

    /// Fills `queue_url` with `count` messages in batches of ten.
    async fn prefill(
        &self,
        conn: &mut Connection,
        queue_url: &str,
        count: u64,
    ) -> Result<(), String> {
        let batch = self.requests.send_batch(queue_url);
        let single = self.requests.send(queue_url);
        let mut sent = 0;
        while sent < count {
            if count - sent >= BATCH_SIZE as u64 {
                call(conn, &batch).await?;
                sent += BATCH_SIZE as u64;
            } else {
                call(conn, &single).await?;
                sent += 1;
            }
        }
        Ok(())
    }

    /// One phase: `connections` connections run `workload` for the warm-up, then measured.
    async fn measure(
        &mut self,
        workload: RawWorkload,
        connections: usize,
        options: &RawOptions,
    ) -> Result<Measured, String> {
        let mut admin = self.connection();
        let queue_name = |i: usize| {
            format!(
                "sqsprobe-bench-{}-{}-{connections}-{i}",
                self.id,
                workload.as_str()
            )
        };
        // send, send-batch and receive share `shared_queues` queues (one by default); the
        // others own one per connection, so a receive finds the message its connection sent.
        let count = match workload {
            RawWorkload::Noop => 0,
            RawWorkload::Send | RawWorkload::SendBatch | RawWorkload::Receive => {
                options.shared_queues.max(1)
            }
            RawWorkload::Cycle
            | RawWorkload::Batch
            | RawWorkload::Delete
            | RawWorkload::DeleteBatch => connections,
        };
        let mut queues: Vec<String> = Vec::with_capacity(count);
        for i in 0..count {
            match self.create_queue(&mut admin, &queue_name(i)).await {
                Ok(url) => queues.push(url),
                Err(e) => {
                    self.delete_queues(&mut admin, &queues).await;
                    return Err(e);
                }
            }
        }
        let mut prefill_error = None;
        if workload == RawWorkload::Receive {
            for queue in &queues {
                if let Err(e) = self.prefill(&mut admin, queue, options.prefill).await {
                    prefill_error = Some(format!("prefill: {e}"));
                    break;
                }
            }
        }
        if matches!(workload, RawWorkload::Delete | RawWorkload::DeleteBatch) {
            let measured = self.measure_delete(workload, &queues, options).await;
            self.delete_queues(&mut admin, &queues).await;
            return Ok(measured);
        }
        let warmup_end = Instant::now() + options.warmup;
        let measure_end = warmup_end + options.duration;
        // The CPU is read over the measured part only, at the instants the phases turn.
        let probe = self.target.cpu.clone();
        let sampler = tokio::spawn(async move {
            tokio::time::sleep_until(warmup_end.into()).await;
            let start = probe.sample();
            tokio::time::sleep_until(measure_end.into()).await;
            probe.between(&start, &probe.sample())
        });
        let mut tasks = JoinSet::new();
        for i in 0..connections {
            let queue_url = match workload {
                RawWorkload::Noop => String::new(),
                _ => queues[i % queues.len()].clone(),
            };
            let plan = ConnectionPlan::new(workload, self.requests, queue_url);
            let mut conn = self.connection();
            let stop = options.stop.clone();
            tasks.spawn(async move {
                run_phase(&mut conn, &plan, warmup_end, &stop).await;
                let before = conn.reconnects;
                let log = run_phase(&mut conn, &plan, measure_end, &stop).await;
                (log, conn.reconnects - before)
            });
        }
        let mut logs: Vec<ConnectionLog> = Vec::with_capacity(connections);
        let mut reconnects = 0;
        while let Some(joined) = tasks.join_next().await {
            match joined {
                Ok((log, r)) => {
                    logs.push(log);
                    reconnects += r;
                }
                Err(e) => {
                    prefill_error.get_or_insert(format!("a connection task failed: {e}"));
                }
            }
        }
        let cpu = if options.stop.requested() {
            sampler.abort();
            None
        } else {
            sampler.await.ok().flatten()
        };
        self.delete_queues(&mut admin, &queues).await;
        let finished = logs.iter().filter_map(|l| l.finished).max();
        Ok(Measured {
            logs,
            elapsed_s: finished
                .map_or(Duration::ZERO, |f| f.saturating_duration_since(warmup_end))
                .as_secs_f64(),
            reconnects,
            error: prefill_error,
            cpu,
        })
    }

    /// A delete workload on `queues` (one per connection): rounds of untimed fills and timed
    /// deletes for the warm-up's deleting time, then for the measured one ([`super::delete`]).
    async fn measure_delete(
        &self,
        workload: RawWorkload,
        queues: &[String],
        options: &RawOptions,
    ) -> Measured {
        let deleters = queues
            .iter()
            .map(|q| {
                let plan = ConnectionPlan::new(workload, self.requests, q.clone());
                Deleter::new(self.connection(), plan)
            })
            .collect();
        let mut size = delete::FIRST_ROUND;
        let stop = &options.stop;
        let (deleters, warmup) = delete::run_phase(deleters, &mut size, options.warmup, stop).await;
        let (_, phase) = delete::run_phase(deleters, &mut size, options.duration, stop).await;
        Measured {
            logs: phase.logs,
            elapsed_s: phase.elapsed_s,
            reconnects: phase.reconnects,
            error: warmup.error.or(phase.error),
            // The fills run between the timed deletes: the process's CPU over the phase
            // would be theirs as much as the deletes'.
            cpu: None,
        }
    }

    /// A row from one or more phases of the same workload and connection count.
    fn build_row(
        &self,
        workload: RawWorkload,
        connections: usize,
        phases: Vec<Measured>,
    ) -> RawRow {
        let elapsed: f64 = phases.iter().map(|p| p.elapsed_s).sum();
        let reconnects = phases.iter().map(|p| p.reconnects).sum();
        let phase_error = phases.iter().find_map(|p| p.error.clone());
        let cpu = phases
            .iter()
            .map(|p| p.cpu.clone())
            .reduce(|a, b| Some(a?.combine(&b?)))
            .flatten();
        let (all, latency, operations) = merge(phases.into_iter().flat_map(|p| p.logs).collect());
        let requests = operations.iter().map(|o| o.requests).sum::<u64>();
        let rate = |n: u64| {
            if elapsed > 0.0 {
                n as f64 / elapsed
            } else {
                0.0
            }
        };
        RawRow {
            target: self.target.name.clone(),
            protocol: self.target.protocol.as_str().to_string(),
            workload,
            connections,
            elapsed_s: elapsed,
            requests,
            errors: all.errors,
            messages: all.messages,
            empty_receives: all.empty_receives,
            reconnects,
            requests_per_second: rate(requests),
            messages_per_second: rate(all.messages),
            latency,
            operations,
            status_counts: all
                .status_counts
                .into_iter()
                .map(|(s, n)| (s.to_string(), n))
                .collect(),
            ceiling_drift: None,
            ceiling_ratio: None,
            run_ceiling_ratio: None,
            reference_ratio: None,
            cpu,
            repeat: 0,
            first_error: phase_error.or(all.first_error),
        }
    }

    /// One connection count: the no-op, every workload, the no-op again. The ceiling is both
    /// no-op phases together, so a machine whose load moved during the count moves it less;
    /// `ceiling_drift` says by how much it moved.
    async fn count(
        &mut self,
        connections: usize,
        options: &RawOptions,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Vec<RawRow>, String> {
        let mut say = |workload: RawWorkload, what: &str| {
            progress(&format!(
                "{} {}{what} × {connections} connection(s)",
                self.target.name,
                workload.as_str()
            ))
        };
        say(RawWorkload::Noop, "");
        let before = self
            .measure(RawWorkload::Noop, connections, options)
            .await?;
        let mut rows = Vec::with_capacity(options.workloads.len() + 1);
        for &workload in &options.workloads {
            say(workload, "");
            let phase = self.measure(workload, connections, options).await?;
            rows.push(self.build_row(workload, connections, vec![phase]));
        }
        say(RawWorkload::Noop, " again");
        let after = self
            .measure(RawWorkload::Noop, connections, options)
            .await?;
        let rate = |m: &Measured| {
            let n: u64 = m.logs.iter().map(ConnectionLog::answered).sum();
            (m.elapsed_s > 0.0).then(|| n as f64 / m.elapsed_s)
        };
        let drift = match (rate(&before), rate(&after)) {
            (Some(b), Some(a)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        // A stopped run keeps only whole connection counts: a row measured in a cut phase, or
        // without the no-op on both sides, would not be the figure its columns claim.
        if options.stop.requested() {
            return Ok(Vec::new());
        }
        let mut noop = self.build_row(RawWorkload::Noop, connections, vec![before, after]);
        noop.ceiling_drift = drift;
        rows.insert(0, noop);
        Ok(rows)
    }
}

/// What one phase recorded, before it becomes (part of) a row.
struct Measured {
    logs: Vec<ConnectionLog>,
    elapsed_s: f64,
    reconnects: u64,
    error: Option<String>,
    /// CPU over the measured part, when it could be read.
    cpu: Option<RowCpu>,
}

/// Measures one target: every connection count, the no-op first, then each workload.
pub(crate) async fn run_target(
    target: &RawTarget,
    options: &RawOptions,
    progress: &mut dyn FnMut(&str),
) -> TargetOutcome {
    let mut info = RawTargetInfo {
        name: target.name.clone(),
        endpoint_url: target.url.clone(),
        protocol: target.protocol.as_str().to_string(),
        leaked_queues: Vec::new(),
        error: None,
    };
    let addrs: Vec<SocketAddr> = match tokio::net::lookup_host((
        target.endpoint.host.as_str(),
        target.endpoint.port,
    ))
    .await
    {
        Ok(a) => a.collect(),
        Err(e) => {
            info.error = Some(format!("cannot resolve {}: {e}", target.endpoint.host));
            return TargetOutcome {
                info,
                rows: Vec::new(),
            };
        }
    };
    let Ok(authority) = HeaderValue::from_str(&target.endpoint.authority) else {
        info.error = Some(format!(
            "`{}` is not a valid Host header",
            target.endpoint.authority
        ));
        return TargetOutcome {
            info,
            rows: Vec::new(),
        };
    };
    let requests = Requests {
        protocol: target.protocol,
    };
    let mut setup = Setup {
        target,
        requests,
        addrs,
        authority,
        id: run_id(),
        leaked: Vec::new(),
    };
    // Reachable at all? One no-op: any HTTP answer will do.
    if let Err(e) = setup.connection().send(&requests.noop()).await {
        info.error = Some(format!("unreachable: {e}"));
        return TargetOutcome {
            info,
            rows: Vec::new(),
        };
    }
    let mut rows = Vec::new();
    for &connections in &options.connections {
        if options.stop.requested() {
            break;
        }
        match setup.count(connections, options, progress).await {
            Ok(r) => rows.extend(r),
            Err(e) => {
                info.error = Some(e);
                break;
            }
        }
    }
    info.leaked_queues = setup.leaked;
    TargetOutcome { info, rows }
}
