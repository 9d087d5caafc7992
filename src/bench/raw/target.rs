//! One raw target from start to end: reachability, queues, one row per connection count ×
//! workload (the no-op first: it is the ceiling of the rest), teardown (I/O).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hyper::header::HeaderValue;
use tokio::task::JoinSet;

use super::connection::{Answer, Connection};
use super::endpoint::RawEndpoint;
use super::protocol::{BATCH_SIZE, Prepared, Requests, WireProtocol};
use super::report::{RawRow, RawTargetInfo, RawWorkload};
use super::workload::{ConnectionLog, ConnectionPlan, merge, run_phase};

/// What every target is asked to do.
#[derive(Debug, Clone)]
pub struct RawOptions {
    pub duration: Duration,
    pub warmup: Duration,
    pub connections: Vec<usize>,
    /// Chosen workloads, in run order (the no-op is added first).
    pub workloads: Vec<RawWorkload>,
    pub prefill: u64,
}

/// A target to measure.
#[derive(Debug, Clone)]
pub struct RawTarget {
    pub name: String,
    pub url: String,
    pub endpoint: RawEndpoint,
    pub protocol: WireProtocol,
}

/// Everything measured on one target; `info.error` says why it stopped early, if it did.
pub struct TargetOutcome {
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

    /// One row: `connections` connections run `workload` for the warm-up, then measured.
    async fn row(
        &mut self,
        workload: RawWorkload,
        connections: usize,
        options: &RawOptions,
    ) -> Result<RawRow, String> {
        let mut admin = self.connection();
        let queue_name = |i: usize| {
            format!(
                "sqsprobe-bench-{}-{}-{connections}-{i}",
                self.id,
                workload.as_str()
            )
        };
        // send and receive share one queue; cycle and batch own one per connection, so a
        // receive finds the message its connection sent.
        let queues: Vec<String> = match workload {
            RawWorkload::Noop => Vec::new(),
            RawWorkload::Send | RawWorkload::Receive => {
                vec![self.create_queue(&mut admin, &queue_name(0)).await?]
            }
            RawWorkload::Cycle | RawWorkload::Batch => {
                let mut urls = Vec::with_capacity(connections);
                for i in 0..connections {
                    match self.create_queue(&mut admin, &queue_name(i)).await {
                        Ok(url) => urls.push(url),
                        Err(e) => {
                            self.delete_queues(&mut admin, &urls).await;
                            return Err(e);
                        }
                    }
                }
                urls
            }
        };
        let mut prefill_error = None;
        if workload == RawWorkload::Receive
            && let Err(e) = self.prefill(&mut admin, &queues[0], options.prefill).await
        {
            prefill_error = Some(format!("prefill: {e}"));
        }
        let warmup_end = Instant::now() + options.warmup;
        let measure_end = warmup_end + options.duration;
        let mut tasks = JoinSet::new();
        for i in 0..connections {
            let queue_url = match workload {
                RawWorkload::Noop => String::new(),
                RawWorkload::Send | RawWorkload::Receive => queues[0].clone(),
                RawWorkload::Cycle | RawWorkload::Batch => queues[i].clone(),
            };
            let plan = ConnectionPlan::new(workload, self.requests, queue_url);
            let mut conn = self.connection();
            tasks.spawn(async move {
                run_phase(&mut conn, &plan, warmup_end).await;
                let before = conn.reconnects;
                let log = run_phase(&mut conn, &plan, measure_end).await;
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
        self.delete_queues(&mut admin, &queues).await;
        let (all, latency, operations) = merge(logs);
        let requests = operations.iter().map(|o| o.requests).sum::<u64>();
        let elapsed = all
            .finished
            .map_or(Duration::ZERO, |f| f.saturating_duration_since(warmup_end))
            .as_secs_f64();
        let rate = |n: u64| {
            if elapsed > 0.0 {
                n as f64 / elapsed
            } else {
                0.0
            }
        };
        Ok(RawRow {
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
            ceiling_ratio: None,
            run_ceiling_ratio: None,
            first_error: prefill_error.or(all.first_error),
        })
    }
}

/// Measures one target: every connection count, the no-op first, then each workload.
pub async fn run_target(
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
    'counts: for &connections in &options.connections {
        for workload in std::iter::once(RawWorkload::Noop).chain(options.workloads.iter().copied())
        {
            progress(&format!(
                "{} {} × {connections} connection(s)",
                target.name,
                workload.as_str()
            ));
            match setup.row(workload, connections, options).await {
                Ok(row) => rows.push(row),
                Err(e) => {
                    info.error = Some(e);
                    break 'counts;
                }
            }
        }
    }
    info.leaked_queues = setup.leaked;
    TargetOutcome { info, rows }
}
