//! `sqsprobe audit`: a team's own consumer, run against the embedded emulator with SQS's
//! legal-but-rare behaviour switched on, and every acknowledgement it makes judged.
//!
//! - [`plan`]: what an audit sets up (`--plan PLAN.yaml`, else one queue from the flags):
//!   queues, attributes, dead-letter queues, output queues, each queue's keys, a send rate;
//! - [`shape`]: what the plan's messages look like, rendered (bodies and their layers,
//!   message attributes, FIFO ids; pure);
//! - [`key`]: where a message's business key is read (a path, through JSON strings and base64
//!   layers, or from an attribute; pure);
//! - [`effects`]: the channels besides the ledger file that show the work — the HTTP ledger,
//!   forwards to output queues, hand-offs (pure);
//! - [`lambda`]: `--lambda`, a Lambda function's runtime under an event source mapping played
//!   against the emulator (the Runtime API, the mapping, the Lambda findings);
//! - [`log`]: the judge's input: deliveries and acknowledgements in order, the effect
//!   channels at each, and what the audit knew at the end (pure types);
//! - [`recorder`]: the emulator's audit observer — every delivery (attempt, handle, lease end)
//!   and every acknowledgement, with the consumer's ledger read at that moment, before the
//!   emulator answers — and the writer of `evidence.jsonl` as it happens;
//! - [`history`]: the judge's rows of `evidence.jsonl` (deliveries, acknowledgements, commits,
//!   hand-offs, the nemesis's acts, the facts at the end) and the log read back from them: the
//!   runner and `sqsprobe check` judge what the file holds (pure);
//! - [`error`]: how the runner ends without a judgement (a signal, or what failed);
//! - [`check`]: `sqsprobe check` on an audit folder: judged again from `evidence.jsonl`,
//!   compared with `audit.json`;
//! - [`queues`]: the queues the consumer used that the audit did not make, named (pure);
//! - [`calls`]: each request the consumer made as a digest-only evidence `call` row (pure);
//! - [`judge`]: from that log, what remained on the queue and the final ledger to findings and
//!   a playbook decision per message (pure);
//! - [`report`]: `audit.json`, `summary.md` and `junit.xml` from the judgement (pure);
//! - [`html`]: `report.html`, the findings and one lane per message on a time axis (pure);
//! - [`runner`]: one audit (or its trials) from start to folder: the emulator with the
//!   recorder, [`setup`] (the audit's own client, the queues, the messages before the start),
//!   [`consumer`] (the command as a process group of its own), [`sender`] (the messages sent
//!   while it runs), the watch until the audit can end, the judgement and the reports;
//!   [`console`] is its one line on stderr.
//!
//! The command (`cli/audit.rs`) only reads the command line and the plan and calls
//! [`runner::run`].

pub(crate) mod calls;
pub(crate) mod check;
pub(crate) mod console;
pub(crate) mod consumer;
pub(crate) mod effects;
pub(crate) mod error;
pub(crate) mod history;
pub(crate) mod html;
pub(crate) mod judge;
pub(crate) mod key;
pub(crate) mod lambda;
pub(crate) mod log;
pub(crate) mod nemesis;
pub(crate) mod plan;
pub(crate) mod queues;
pub(crate) mod recorder;
pub(crate) mod report;
pub(crate) mod runner;
pub(crate) mod sender;
pub(crate) mod setup;
pub(crate) mod shape;

pub(crate) use error::{AuditEnd, AuditError};
pub(crate) use judge::Audit;
pub(crate) use plan::parse_plan;
