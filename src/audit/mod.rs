//! `sqsprobe audit`: a team's own consumer, run against the embedded emulator with SQS's
//! legal-but-rare behaviour switched on, and every acknowledgement it makes judged.
//!
//! - [`plan`]: what an audit sets up (`--plan PLAN.yaml`, else one queue from the flags):
//!   queues, attributes, dead-letter queues, bodies, the business key's place, a send rate;
//! - [`recorder`]: the emulator's audit observer — every delivery (attempt, handle, lease end)
//!   and every acknowledgement, with the consumer's ledger read at that moment, before the
//!   emulator answers — and the writer of `evidence.jsonl` as it happens;
//! - [`calls`]: each request the consumer made as a digest-only evidence `call` row (pure);
//! - [`judge`]: from that log, what remained on the queue and the final ledger to findings and
//!   a playbook decision per message (pure);
//! - [`report`]: `audit.json`, `summary.md` and `junit.xml` from the judgement (pure);
//! - [`html`]: `report.html`, the findings and one lane per message on a time axis (pure).
//!
//! The command itself (starting the emulator, the queue, the messages, the consumer, and
//! stopping it) is `cli/audit.rs`.

pub mod calls;
pub mod html;
pub mod judge;
pub mod plan;
pub mod recorder;
pub mod report;

pub use judge::{Audit, Finding, FindingKind, judge};
pub use plan::{Plan, parse_plan};
pub use recorder::{Log, Recorder};
