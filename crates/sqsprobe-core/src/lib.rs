//! sqsprobe's pure core: values in, values out. No clock, no network, no async runtime; the
//! only files it touches are the evidence file it is handed (written and read back in
//! [`evidence`]), so every judgement here can be re-made from a run folder alone.
//!
//! - [`suite`]: the YAML suite format, parsed with a position on every node and checked.
//! - [`evidence`]: the JSON Lines format of a run, digests and masking, and the one view every
//!   reader reads a run through.
//! - [`classify`]: the judge, from the recorded history to classes, verdicts and decisions,
//!   and the one vocabulary of attempts and leases.
//! - [`conformance`]: target profiles, the cross-target matrix and baselines.

pub mod classify;
pub mod conformance;
pub mod evidence;
pub mod suite;
