//! `sqsprobe audit`: a team's own consumer, run against the embedded emulator with SQS's
//! legal-but-rare behaviour switched on, and every acknowledgement it makes judged.
//!
//! - [`recorder`]: the emulator's audit observer — every delivery (attempt, handle, lease end)
//!   and every acknowledgement, with the consumer's ledger read at that moment, before the
//!   emulator answers;
//! - [`judge`]: from that log, what remained on the queue and the final ledger to findings and
//!   a playbook decision per message (pure);
//! - [`report`]: `audit.json`, `summary.md` and `junit.xml` from the judgement (pure);
//! - [`html`]: `report.html`, the findings and one lane per message on a time axis (pure).
//!
//! The command itself (starting the emulator, the queue, the messages, the consumer, and
//! stopping it) is `cli/audit.rs`.

pub mod html;
pub mod judge;
pub mod recorder;
pub mod report;

pub use judge::{Audit, Finding, FindingKind, judge};
pub use recorder::{Log, Recorder};
