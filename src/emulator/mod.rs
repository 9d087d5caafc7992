//! The embedded SQS-compatible emulator: AWS JSON 1.0 and query protocols over HTTP/1.1.
//!
//! Start it with [`spawn`] (background task, ephemeral port) or serve a listener with [`serve`].
//! Behaviour follows AWS's documentation and AWS-recorded responses; `docs/emulator.md` lists
//! what is implemented and every choice made where AWS is ambiguous.

mod attributes;
mod batch;
mod chaos;
mod clock;
mod config;
mod dispatch;
mod dlq;
mod errors;
mod input;
mod lease_ops;
mod md5;
mod message;
mod move_task;
mod protocol;
mod queue;
mod queue_ops;
mod receipt;
mod receive;
mod send;
mod server;
mod store;
#[cfg(test)]
mod test_support;

pub use chaos::{Chaos, ChaosSpecError};
pub use clock::{Clock, SystemClock, TokioClock};
pub use config::EmulatorConfig;
pub use server::{RunningEmulator, serve, spawn};
