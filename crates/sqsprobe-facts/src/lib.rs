//! The ground floor of sqsprobe: what is true of Amazon SQS whoever asks, and the small
//! utilities every floor above shares. Nothing here does I/O or keeps state.
//!
//! - [`sqs`]: the operations, the error table, the limits of a request's numbers, the query
//!   protocol's member names, prices, ARNs, AWS hosts and the two wire protocols.
//! - [`chaos`]: the grammar of the emulator's chaos settings, read by the suite parser and the
//!   emulator alike.
//! - [`decision`]: the playbook's ACCEPT / REPAIR / HOLD / RECONCILE.
//! - [`digest`]: the SHA-256 every layer names a body or a receipt handle by.
//! - [`duration`]: durations as suites and flags write them.
//! - [`exit_code`]: the process exit codes, one table for every command.
//! - [`text`]: escaping for each output context, and did-you-mean suggestions.

// Every public item is this crate's API to the floors above it: each is documented.
#![warn(missing_docs)]

pub mod chaos;
pub mod decision;
pub mod digest;
pub mod duration;
pub mod exit_code;
pub mod sqs;
pub mod text;
