//! The embedded SQS-compatible emulator: AWS JSON 1.0 and query protocols over HTTP/1.1.
//!
//! Start it with [`spawn`] (background task, ephemeral port) or serve a listener with [`serve`].
//! Behaviour follows AWS's documentation and AWS-recorded responses; `docs/emulator.md` lists
//! what is implemented and every choice made where AWS is ambiguous.
//!
//! Layers, each importing only the ones below it:
//! - [`server`]: HTTP connections, the request's headers and body, the answer.
//! - `protocol`: the two wire formats (`json`, `query`), decoded to one parameter shape.
//! - `dispatch`: operation name → handler.
//! - `ops`: one module per family of operations (queue, send, receive, lease, dlq, move_task).
//! - `model`: the store and what it holds (queues, messages, receipts, attributes, move tasks).
//! - `support`: leaves every layer uses (errors, parameter access, clock, MD5, chaos dice,
//!   configuration).

mod dispatch;
mod model;
mod ops;
mod protocol;
mod server;
mod support;
#[cfg(test)]
mod test_support;

pub use dispatch::OPERATIONS;
pub use ops::access::denies as policy_denies;
pub use server::{InProcess, RunningEmulator, serve, spawn};
/// The hooks `sqsprobe audit` observes a consumer through.
pub mod audit {
    pub use super::support::audit::{
        Ack, AckOp, AuditObserver, Called, Delivery, LEDGER_PATH, Refusal,
    };
}
pub use support::chaos::{Chaos, ChaosSpecError, QUEUE_TAG as CHAOS_TAG, mix as mix_seed};
pub use support::clock::{Clock, SystemClock, TokioClock};
pub use support::config::{EmulatorConfig, QueueUrls};
