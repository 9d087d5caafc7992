//! `sqsprobe audit --lambda`: a Lambda function's SQS handler, run by its own runtime (any
//! process that speaks the Lambda Runtime API, such as `python -m awslambdaric app.handler`)
//! under an event source mapping played against the audit's emulator.
//!
//! - [`settings`]: the mapping's settings and the checks CreateEventSourceMapping makes (pure);
//! - [`event`]: the SQS event, and what the mapping makes of the function's answer (pure);
//! - [`runtime_api`]: the Runtime API served to the function on a loopback port;
//! - [`invocation`]: an invocation and the mapping's facts as evidence rows, read back by
//!   the audit's history (pure types);
//! - [`mapping`]: the pollers — gather a batch, invoke, delete what is done — whose SQS calls
//!   the recorder sees as a consumer's;
//! - [`findings`]: the Lambda findings, judged beside the audit's own from the same history
//!   (pure); [`report`] adds them to the audit and writes `lambda.json`, [`html`] draws the
//!   invocations as lanes of `report.html` (both pure).
//!
//! The runner (`super::runner`) starts the mapping before the function and stops it after.

pub(crate) mod event;
pub(crate) mod findings;
pub(crate) mod html;
pub(crate) mod invocation;
pub(crate) mod mapping;
pub(crate) mod report;
pub(crate) mod runtime_api;
pub(crate) mod settings;

pub(crate) use mapping::{Mapping, NotStarted};
pub(crate) use settings::Settings;
