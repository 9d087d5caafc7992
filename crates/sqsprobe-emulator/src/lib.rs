//! An SQS-compatible emulator: AWS JSON 1.0 and query protocols over HTTP/1.1, as a library.
//! `sqsprobe` embeds it (the default target of `sqsprobe run`, `sqsprobe serve`, `bench` and
//! `audit`); a Rust team can start it in-process from its own tests.
//!
//! Behaviour follows AWS's documentation and AWS-recorded responses; `docs/emulator.md` lists
//! what is implemented and every choice made where AWS is ambiguous.
//!
//! # In your tests
//!
//! ```toml
//! [dev-dependencies]
//! sqsprobe-emulator = { git = "https://github.com/sqsprobe/sqsprobe", features = ["sdk"] }
//! ```
//!
//! - [`spawn`] binds an address (`127.0.0.1:0` for an ephemeral port) and serves on a
//!   background task; [`RunningEmulator::endpoint_url`] is what the SDK's `endpoint_url` takes;
//!   [`RunningEmulator::shutdown`] stops it and waits (dropping it stops it too).
//! - [`EmulatorConfig`] holds the options, all public fields with defaults: region and account,
//!   the 60-second cool-downs, limits, [`Chaos`] (seeded at-least-once behaviours:
//!   `Chaos::parse("redeliver-after-delete=1,seed=7")`), and the clock.
//! - Time is tokio's: on a paused runtime (`#[tokio::test(start_paused = true)]`) with the
//!   SDK's HTTP client replaced by [`InProcessClient`] (feature `sdk`), a 30-second visibility
//!   timeout lapses as soon as every task waits, and no request is ever caught in a socket.
//! - [`serve`] is the same server on a listener you own, until a shutdown future resolves
//!   (mini-redis's shape), for a process of your own.
//!
//! `tests/sdk.rs` of this crate is the worked example with aws-sdk-sqs: a consumer over a
//! socket, a lapsed lease in virtual time, and seeded chaos redelivering a deleted message.
//!
//! Layers, each importing only the ones below it:
//! - `server`: HTTP connections, the request's headers and body, the answer.
//! - `protocol`: the two wire formats (`json`, `query`), decoded to one parameter shape.
//! - `dispatch`: operation name → handler.
//! - `ops`: one module per family of operations (queue, send, receive, lease, dlq, move_task).
//! - `model`: the store and what it holds (queues, messages, receipts, attributes, move tasks).
//! - `support`: leaves every layer uses (errors, parameter access, clock, MD5, chaos dice,
//!   configuration).

// Every public item is this crate's API to the floors above it: each is documented.
#![warn(missing_docs)]

mod dispatch;
mod model;
mod ops;
mod protocol;
#[cfg(feature = "sdk")]
mod sdk;
mod server;
mod support;
#[cfg(test)]
mod test_support;

pub use dispatch::OPERATIONS;
pub use ops::access::denies as policy_denies;
#[cfg(feature = "sdk")]
pub use sdk::InProcessClient;
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
