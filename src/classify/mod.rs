//! Classification of bounded observations into outcome classes, verdicts and decisions (pure).

pub mod decision;
pub mod outcome;
pub mod verdict;

pub use decision::{AckFacts, decide};
pub use outcome::{CutReason, WindowEnd, classify, overall};
pub use verdict::{CaseFacts, exit_code, verdict};
