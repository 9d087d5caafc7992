//! Emulator configuration.

use std::sync::Arc;

use crate::emulator::support::chaos::Chaos;
use crate::emulator::support::clock::Clock;

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
    /// Time source. `None` (default) uses a [`TokioClock`](crate::emulator::TokioClock) anchored at start.
    pub clock: Option<Arc<dyn Clock>>,
    /// Opt-in at-least-once behaviours (see [`Chaos`]). Default: off.
    pub chaos: Chaos,
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
            .finish()
    }
}
