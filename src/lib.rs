//! sqsprobe: bounded, evidence-first experiments against Amazon SQS and SQS-compatible
//! endpoints, plus an embedded SQS-compatible emulator.
//!
//! The crate is split so that the parts that decide anything are pure:
//! - [`suite`] parses and validates YAML suites into a model (no I/O beyond the string given).
//! - [`classify`] turns what was observed into outcome classes, verdicts and decisions.
//! - [`report`] renders JUnit, Markdown and HTML from finished results.
//! - [`conformance`] applies target profiles and builds cross-target matrices and baselines.
//! - [`text`] escapes untrusted text for each place it is shown (HTML, XML, Markdown, terminal).
//!
//! I/O lives at the edges: [`runner`] drives a target through aws-sdk-sqs and emits events,
//! [`evidence`] writes the JSON Lines evidence file and reads it back (every consumer reads a
//! run through [`evidence::view`]), [`emulator`] serves the SQS wire protocol, and [`cli`]
//! wires the commands together.

pub mod audit;
pub mod bench;
pub mod chaos;
pub mod classify;
pub mod cli;
pub mod conformance;
pub mod decision;
pub mod duration;
pub mod emulator;
pub mod evidence;
pub mod exit_code;
pub mod report;
pub mod runner;
pub mod sqs;
pub mod suite;
pub mod text;

#[cfg(test)]
mod testing;
