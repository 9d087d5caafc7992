//! Suites: the YAML format, parsed into a positioned model and validated (pure: no I/O).
//!
//! [`parse_suite`] reads one file's text into a [`Suite`] or every [`Diagnostic`] it found;
//! [`check_run`] adds the checks that need all files of a run. The format is documented in
//! `docs/suite-format.md`.

pub mod area;
mod diagnostic;
mod expectations;
mod intake;
mod limits;
pub mod model;
mod parse;
mod source;
pub mod yaml;

#[cfg(test)]
mod chaos_tests;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod range_tests;
#[cfg(test)]
mod tests;

pub use diagnostic::{Diagnostic, SNIPPET_CHARS, render_all};
pub use intake::{too_large, utf8_text};
pub use limits::{Limits, check_run};
pub use model::*;
pub use parse::step_calls;
pub use parse::{
    CALL_ALLOWANCE, CaseRequests, PROTOCOLS, case_budget, case_requests, case_waits, parse_suite,
};
pub use source::LineIndex;
