//! Decoding a suite file into the model, checking references as it goes.
//!
//! One pass, in file order: a case's steps may only refer to queues, attempts, messages and
//! move tasks defined before them, which is exactly what the runner will have at that point.
//!
//! **To add a step keyword, start at [`steps`]**: its table holds every step's grammar (keys,
//! required keys, the `expect:` keys that apply, the decoder) and its module doc lists the
//! other places to touch. The other files follow the levels of the format: [`suite`] (the
//! file), [`case`], [`queue`] definitions, [`step`] (keyword and sibling `expect:`), the step
//! decoders ([`send`], [`receive`], [`handles`], [`observe`], [`admin`], [`permission`]),
//! [`expect`], and
//! [`fault`] (case and step faults, the `deny` step), [`wire`] (a step's query-wire form);
//! [`sqs_values`] reads the numbers sent to SQS against the ranges SQS accepts;
//! [`scope`] holds what a case has defined so far, and [`budget`] what a case costs in time,
//! counted from the step table.

mod admin;
mod aspect;
mod budget;
mod case;
mod expect;
mod fault;
mod handles;
mod input;
mod observe;
mod permission;
mod queue;
mod receive;
mod scope;
mod send;
mod sqs_values;
mod step;
mod steps;
mod suite;
mod wire;

pub use budget::{CALL_ALLOWANCE, CaseRequests, case_budget, case_requests, case_waits};
pub use case::PROTOCOLS;
pub use steps::step_calls;
pub use suite::parse_suite;
