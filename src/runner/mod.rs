//! The runner: owned queues, step execution through aws-sdk-sqs, and the event stream.
//!
//! - `target`: resolving embedded / endpoint / AWS targets (region, endpoint, account guard)
//!   and building their SDK client.
//! - `call`: one SQS call with every SDK attempt recorded as an evidence row.
//! - `policy`: each call's timeout and retries, the lost-target rule, request counting.
//! - `context`: what every case of a run shares ([`RunContext`]).
//! - `halt`: why the run is stopping (its own greatest reason, a signal), shared by every case.
//! - `faults`: faults injected under the SDK (an HTTP client wrapping the run's), per case.
//! - `queues`: owned queue names, ownership tags and the registry teardown relies on.
//! - `case`: one case from setup to verdict (`case/steps.rs` dispatches each step to a function
//!   in `messages`, `acks`, `admin`, `move_tasks`, `permissions`, `deny` or `observe`, handed
//!   the parts of the case it touches; `lifecycle`: queues, their regions and ownership). A
//!   step's answer is checked by `classify::check_step`: the runner gathers, never judges.
//! - `run`: cases in parallel, events out; `schedule`: partitions and longest-first order.
//! - `sweep`: deleting the owned queues runs left behind, and nothing else.
//! - `query_protocol`: the HTTP client behind `--protocol query` (AWS JSON ↔ query translation).
//! - `clock`: the run's clock, real or virtual (`--clock virtual`, shared with the emulator);
//!   (The HTTP client that reaches the embedded emulator without a socket is the emulator's own,
//!   `sqsprobe_emulator::InProcessClient`.)

pub(crate) mod call;
pub(crate) mod case;
pub(crate) mod clock;
pub(crate) mod context;
pub(crate) mod faults;
pub(crate) mod halt;
pub(crate) mod policy;
pub(crate) mod query_protocol;
pub(crate) mod queues;
pub(crate) mod run;
pub(crate) mod schedule;
pub(crate) mod sdk_error;
pub(crate) mod sweep;
pub(crate) mod target;

pub(crate) use clock::{ClockKind, RunClock};
pub(crate) use queues::{Registry, new_instance};
pub(crate) use run::{RunSettings, new_run_id, preflight, run_plan};
pub(crate) use schedule::PlannedCase;
pub(crate) use target::TargetKind;
