//! The longest integration tests (about half of the suite's wall time, measured), one binary
//! that `scripts/test` runs beside `tests/it/` so the two halves take about as long. Same rules
//! as `tests/it/main.rs`: each file is a module (`cargo test --test long leaks::`), the helpers
//! are `tests/common/`, and nothing a test does may change what the process shares.

#[path = "../common/mod.rs"]
mod common;

mod audit;
mod audit_lambda;
mod audit_libs;
mod audit_nemesis;
mod chaos_suite;
mod cli_conformance;
mod faults;
mod leaks;
mod sweep;
