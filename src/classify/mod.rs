//! Judgement, pure: what a case run gathered in, its classes, decision and verdict out.
//!
//! - `judge`: [`judge`] turns a case's facts into its [`Judgement`]; the observe step's own
//!   check ([`check_window`]) and the outcome comparison live beside it.
//! - `outcome`: the class of one tracked message (the honesty rules).
//! - `decision`: the playbook's ACCEPT / REPAIR / HOLD / RECONCILE.
//! - `verdict`: pass / fail / inconclusive / error, and the run's exit code.

pub mod decision;
pub mod judge;
pub mod outcome;
pub mod rate;
pub mod trials;
pub mod verdict;

pub use decision::{AckFacts, decide};
pub use judge::{
    CaseFacts, Check, JudgedMessage, Judgement, StepResult, Stop, WindowFacts, WindowJudgement,
    check_window, compare_outcomes, judge, judge_window,
};
pub use outcome::{CutReason, SendState, TrackedMessage, WindowEnd, classify, overall};
pub use verdict::{VerdictFacts, exit_code, verdict};
