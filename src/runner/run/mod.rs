//! Running a plan: cases in parallel under a concurrency bound, events out, queues accounted.
//!
//! The runner knows nothing about files or terminals. It sends every evidence record down a
//! channel as it happens; the consumers (evidence file, progress, reports) are independent,
//! as in nextest's reporter design.
//!
//! - `settings`: what a run needs besides its cases, and its id.
//! - `opening`: the run's first record, and the cases it will not run (skipped, and why).
//! - `preflight`: the reachability check before any case creates a queue.
//! - `dispatch`: the run loop as a dispatcher of events (a case or trial finished, a slot
//!   free under `--jobs`, a signal, the run stopping itself), one handler each.
//! - `trials`: how many trials a case runs, and its trials while they run.
//! - `closing`: the records that close a case or the run, each built in one place.

mod closing;
mod dispatch;
mod opening;
mod preflight;
mod settings;
mod trials;

pub(crate) use closing::{RunClose, run_end};
pub(crate) use dispatch::run_plan;
pub(crate) use opening::{Skip, not_runnable, run_start};
pub(crate) use preflight::preflight;
pub(crate) use settings::{RunSettings, Seeds, new_run_id};
pub(crate) use trials::trials_of;
