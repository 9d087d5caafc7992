//! Conformance: target profiles, the cross-target matrix, and baselines (pure: no I/O).
//!
//! - `profile`: parsing `targets/<name>.yaml` and mapping case verdicts through it.
//! - `matrix`: cases × targets from several runs' evidence, scored overall, by area and by
//!   aspect; `markdown`: its `matrix.md`; `facts`: the targets' practical facts beside it.
//! - `baseline`: a run normalised to what must stay the same, and comparing two of them.

pub mod baseline;
pub mod facts;
pub mod markdown;
pub mod matrix;
pub mod profile;

pub use profile::{Profile, ProfileEntry, apply, parse_profile, unknown_cases, unsupported_end};
