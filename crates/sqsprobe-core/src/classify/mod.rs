//! Judgement, pure: what a case run gathered in, its classes, decision and verdict out.
//!
//! - `answer`: a step's answer checked against its `expect:` ([`check_step`]), over the
//!   plain facts of [`Observed`]; `failure`: how a call failed ([`CallError`]).
//! - `judge`: [`judge`] turns a case's facts into its [`Judgement`]; the observe step's own
//!   check ([`check_window`]) and the outcome comparison live beside it.
//! - `outcome`: the class of one tracked message (the honesty rules), and how a window ended.
//! - `stop`: why a case or a run stopped before its end, one ordered [`StopReason`].
//! - `leases`: the one vocabulary of attempts and leases (an acknowledgement in the lease,
//!   late, superseded, after its lease ended, with an unknown handle, or unsure), read by the
//!   case judge, the audit's judge and the report's timeline alike; `ack_history`: a case's
//!   `call` rows read in it, and the acknowledgement facts they give the decision.
//! - `decision`: the playbook's ACCEPT / REPAIR / HOLD / RECONCILE.
//! - `verdict`: pass / fail / inconclusive / error, and the run's exit code (its stop's, or
//!   its worst verdict's).
//! - `rate`, `trials`: intervals over trials, and a case's trials pooled.
//! - `recorded`: a case's facts and expectations to and from their evidence form, so a
//!   verdict is re-judged from the evidence alone.
//! - `fisher`, `history`: a case's trials pooled across runs, and a newest run that differs.

pub mod ack_history;
pub mod answer;
pub mod decision;
pub mod failure;
pub mod fisher;
pub mod history;
pub mod judge;
pub mod leases;
pub mod outcome;
pub mod rate;
pub mod recorded;
pub mod stop;
#[cfg(test)]
mod test_facts;
pub mod trials;
pub mod verdict;

pub use answer::{BatchOutcome, Observed, ReceivedMsg, check_step};
pub use decision::{AckFacts, decide};
pub use failure::{CallError, FailureKind};
pub use judge::{
    CaseFacts, Check, JudgedMessage, Judgement, StepResult, WindowFacts, WindowJudgement,
    check_window, compare_outcomes, judge, judge_window,
};
pub use outcome::{CutReason, SendState, TrackedMessage, WindowEnd, classify, overall};
pub use stop::StopReason;
pub use verdict::{VerdictFacts, exit_code, run_exit_code, verdict};
