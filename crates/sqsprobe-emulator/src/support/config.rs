//! Emulator configuration: behaviour (region, account, cooldowns, chaos), the caps that keep a
//! client from driving the process out of memory, and the server's connection limits.

use std::sync::Arc;
use std::time::Duration;

use crate::support::chaos::Chaos;
use crate::support::clock::Clock;

/// The form of the queue URLs the emulator answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueUrls {
    /// `/<account>/<name>` in the configured region, `/queue/<region>/<account>/<name>` in any
    /// other: one name in two regions has two URLs, as on AWS (the default).
    #[default]
    Regional,
    /// `/<account>/<name>` in every region, as moto answers: the URL does not say the region,
    /// which each request's signing region supplies. For testing clients (sqsprobe's own
    /// teardown among them) against targets whose URLs omit the region.
    RegionLess,
}

/// How the emulator behaves. Every field has a default; build with
/// `EmulatorConfig { strict_cooldowns: false, ..Default::default() }`.
#[derive(Clone)]
pub struct EmulatorConfig {
    /// Region used in queue ARNs. Default `us-east-1`.
    pub region: String,
    /// Account id used in queue URLs and ARNs. Default `000000000000`.
    pub account_id: String,
    /// AWS's 60-second rules: one PurgeQueue per queue per 60 s (`PurgeQueueInProgress`) and
    /// no re-creating a deleted queue name for 60 s (`QueueDeletedRecently`). Default `true`.
    pub strict_cooldowns: bool,
    /// Largest request body accepted, in bytes. Default 8 MiB: a 1 MiB batch of binary
    /// attributes grows by base64 and JSON escaping, so the cap is far above SQS's own limits,
    /// which are checked on the decoded payload.
    pub max_request_bytes: usize,
    /// In-flight message quota per queue (AWS: about 120,000); beyond it ReceiveMessage answers
    /// `OverLimit` (403). Default 120,000.
    pub max_in_flight: usize,
    /// Time source. `None` (default) uses a [`TokioClock`](crate::TokioClock) anchored at start.
    pub clock: Option<Arc<dyn Clock>>,
    /// Opt-in at-least-once behaviours (see [`Chaos`]). Default: off.
    pub chaos: Chaos,
    /// A queue-name prefix the chaos dice leave out when they seed an untagged queue's dice
    /// from its name: `sqsprobe run` gives its `sqsprobe-<run-id>-`, so a queue's draws
    /// (its throttles, say) follow the recorded seed and the queue's stable name, not the
    /// run's random id. Default none: the whole name.
    pub chaos_name_prefix: Option<String>,
    /// Most queues the emulator holds; CreateQueue beyond it answers `OverLimit` (403).
    /// Default 10,000.
    pub max_queues: usize,
    /// Most messages stored across all queues (visible, delayed and in flight); a send beyond it
    /// answers `OverLimit` (403). Default 1,000,000 (each costs roughly 0.7–1 KB of memory
    /// besides its bytes).
    pub max_messages: u64,
    /// Most message bytes stored across all queues, counted as SQS counts a message's size
    /// (body plus each attribute's name, type and value); a send beyond it answers `OverLimit`
    /// (403). Default 1 GiB.
    pub max_stored_bytes: u64,
    /// Most client connections open at once. At the cap, the connection idle longest (waiting
    /// for a request's first byte) is closed to make room for a new one; connections in a
    /// request are not, and when every one is, further clients wait in the listen backlog
    /// (`server/pool.rs`). Default 512.
    pub max_connections: usize,
    /// Time a request has to arrive once it started (its first byte, or the connection's
    /// opening): the head, and separately the body. A client that is slower is disconnected.
    /// Default 10 s.
    pub header_read_timeout: Duration,
    /// A keep-alive connection with no request for this long is closed. Default 120 s, above
    /// the SDKs' 90 s pool idle time, so a pooled connection is not closed under a client
    /// (unless a new client needs its slot at `max_connections`).
    pub idle_timeout: Duration,
    /// On shutdown, how long requests in flight may take to finish before their connections are
    /// cut. Long polls end at once with what they have. Default 5 s.
    pub shutdown_grace: Duration,
    /// The form of queue URLs in answers. Default [`QueueUrls::Regional`].
    pub queue_urls: QueueUrls,
    /// Access keys whose requests are refused as unknown (`InvalidClientTokenId`), to rehearse
    /// offline what a run does with credentials AWS does not accept. Default none.
    pub reject_access_keys: Vec<String>,
    /// Access keys whose requests are refused as expired (`ExpiredToken`), to rehearse a
    /// session that runs out mid-run. Default none.
    pub expire_access_keys: Vec<String>,
    /// An audit watching every delivery and acknowledgement (`sqsprobe audit`). Default none.
    pub audit: Option<Arc<dyn crate::support::audit::AuditObserver>>,
}

impl Default for EmulatorConfig {
    fn default() -> Self {
        Self {
            region: "us-east-1".to_owned(),
            account_id: "000000000000".to_owned(),
            strict_cooldowns: true,
            max_request_bytes: 8 * 1024 * 1024,
            max_in_flight: 120_000,
            clock: None,
            chaos: Chaos::default(),
            chaos_name_prefix: None,
            max_queues: 10_000,
            max_messages: 1_000_000,
            max_stored_bytes: 1024 * 1024 * 1024,
            max_connections: 512,
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            shutdown_grace: Duration::from_secs(5),
            queue_urls: QueueUrls::Regional,
            reject_access_keys: Vec::new(),
            expire_access_keys: Vec::new(),
            audit: None,
        }
    }
}

impl std::fmt::Debug for EmulatorConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmulatorConfig")
            .field("region", &self.region)
            .field("account_id", &self.account_id)
            .field("strict_cooldowns", &self.strict_cooldowns)
            .field("max_request_bytes", &self.max_request_bytes)
            .field("max_in_flight", &self.max_in_flight)
            .field("clock", &self.clock)
            .field("chaos", &self.chaos)
            .field("chaos_name_prefix", &self.chaos_name_prefix)
            .field("max_queues", &self.max_queues)
            .field("max_messages", &self.max_messages)
            .field("max_stored_bytes", &self.max_stored_bytes)
            .field("max_connections", &self.max_connections)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("queue_urls", &self.queue_urls)
            .field("reject_access_keys", &self.reject_access_keys)
            .field("expire_access_keys", &self.expire_access_keys)
            .field("audit", &self.audit.is_some())
            .finish()
    }
}
