//! Why a case or a run stopped before its end: one ordered reason, as nextest keeps its
//! `CancelReason`.
//!
//! A case asks it at every step boundary, the run keeps the greatest one it has met (see
//! `runner::Halt`), the judge reads it from a case's facts, a cut observation window names it,
//! and the run's exit code follows it. Every sentence a reason leaves in evidence and reports
//! is written here, beside its variant, so the five reasons are stated once.
//!
//! The order is the one a reader of the run must hear: a greater reason replaces a lesser one,
//! and two of one kind keep the first (it says when the stop began).
//! 1. `Deadline`: one case's own; any reason of the run outranks it, since it explains every
//!    case it cut.
//! 2. `Budget`: the user's own limit; what the cut cases found is undecided (exit 5).
//! 3. `CredentialsRefused`: the target broke. A broken target is an error, and an error
//!    outranks an undecided case (`docs/exit-codes.md`), so it replaces a spent budget.
//! 4. `TargetLost`: the target broke and went silent. Besides the error, it changes how the run
//!    ends (every call gets one attempt), which a refusal does not: a target that refused and
//!    then stopped answering is lost.
//! 5. `Interrupted`: a signal is the user's final word: every call in flight is abandoned and
//!    the run exits 130 whatever else happened.

use crate::evidence::format::{Verdict, WindowEnded};

/// Something outside a case's steps that stopped it, or the run, before its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// The case ran past its deadline; the text says which (`1m 2s: its budget plus 10s`).
    Deadline(String),
    /// A budget of the run is spent (`--max-requests`, `--max-duration`); the text says which.
    Budget(String),
    /// The target refused the run's credentials or permissions (in this case or another); the
    /// text is its answer, described.
    CredentialsRefused(String),
    /// The run declared the target lost (it stopped answering); the text says what was seen.
    TargetLost(String),
    /// Ctrl-C, SIGTERM or SIGHUP.
    Interrupted,
}

impl StopReason {
    /// Its place in the order (see the module doc).
    fn rank(&self) -> u8 {
        match self {
            StopReason::Deadline(_) => 0,
            StopReason::Budget(_) => 1,
            StopReason::CredentialsRefused(_) => 2,
            StopReason::TargetLost(_) => 3,
            StopReason::Interrupted => 4,
        }
    }

    /// Whether this reason replaces `other`: it is greater. Two reasons of one kind keep the
    /// first, which says when the stop began.
    pub fn outranks(&self, other: &StopReason) -> bool {
        self.rank() > other.rank()
    }

    /// The greatest of `reasons`, the first of equals; `None` when there is none.
    pub fn greatest(reasons: impl IntoIterator<Item = Option<StopReason>>) -> Option<StopReason> {
        reasons
            .into_iter()
            .flatten()
            .fold(None, |best, reason| match best {
                Some(best) if !reason.outranks(&best) => Some(best),
                _ => Some(reason),
            })
    }

    /// The verdict of a case it stopped, or kept from starting: an error when the target broke
    /// (nothing about SQS was judged), inconclusive otherwise (never a pass).
    pub fn verdict(&self) -> Verdict {
        match self {
            StopReason::CredentialsRefused(_) | StopReason::TargetLost(_) => Verdict::Error,
            StopReason::Deadline(_) | StopReason::Budget(_) | StopReason::Interrupted => {
                Verdict::Inconclusive
            }
        }
    }

    /// The label of a window it cut (`window.ended` in evidence; see
    /// [`CutReason::Stopped`](super::outcome::CutReason::Stopped)).
    pub fn label(&self) -> WindowEnded {
        match self {
            StopReason::Deadline(_) => WindowEnded::Deadline,
            StopReason::Budget(_) => WindowEnded::RunBudget,
            StopReason::CredentialsRefused(_) => WindowEnded::CredentialsRefused,
            StopReason::TargetLost(_) => WindowEnded::TargetLost,
            StopReason::Interrupted => WindowEnded::Interrupted,
        }
    }

    /// What cut a window or a call short, for the inconclusive reason that says so.
    pub fn cut_short(&self) -> &'static str {
        match self {
            StopReason::Deadline(_) => "the case reached its deadline",
            StopReason::Budget(_) => "a budget of the run (requests or time) was spent",
            StopReason::CredentialsRefused(_) => "the target refused the run's credentials",
            StopReason::TargetLost(_) => "the target stopped answering",
            StopReason::Interrupted => "the run was interrupted",
        }
    }

    /// The finding of a case it stopped.
    pub fn finding(&self) -> String {
        match self {
            StopReason::Deadline(what) => format!("the case ran past its deadline ({what})"),
            StopReason::Budget(which) => format!("the run stopped: {which} is spent"),
            StopReason::CredentialsRefused(why) => format!(
                "the run stopped: the target refused its credentials or permissions ({why})"
            ),
            StopReason::TargetLost(why) => {
                format!("the target was lost before the case finished: {why}")
            }
            StopReason::Interrupted => {
                "the run was interrupted before the case finished".to_string()
            }
        }
    }

    /// One line for the terminal and `run_end.halted`, and for the cases it kept from
    /// starting (`not run: the run stopped: …`).
    pub fn describe(&self) -> String {
        match self {
            StopReason::Deadline(what) => format!("the case ran past its deadline ({what})"),
            StopReason::Budget(which) => format!("{which} is spent"),
            StopReason::CredentialsRefused(why) => {
                format!("the target refused this run's credentials or permissions ({why})")
            }
            StopReason::TargetLost(why) => format!("the target was lost ({why})"),
            StopReason::Interrupted => "the run was interrupted".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use StopReason::*;

    fn all() -> Vec<StopReason> {
        vec![
            Deadline("1m 10s: its budget plus 10s".into()),
            Budget("the request budget (--max-requests 8)".into()),
            CredentialsRefused("AccessDenied (403)".into()),
            TargetLost("5 calls in a row got no response".into()),
            Interrupted,
        ]
    }

    #[test]
    fn a_greater_reason_replaces_a_lesser_one_and_equals_keep_the_first() {
        let reasons = all();
        for (i, lesser) in reasons.iter().enumerate() {
            for greater in &reasons[i + 1..] {
                assert!(greater.outranks(lesser), "{greater:?} over {lesser:?}");
                assert!(!lesser.outranks(greater), "{lesser:?} under {greater:?}");
            }
        }
        let first = Budget("the request budget (--max-requests 8)".into());
        let second = Budget("the time budget (--max-duration 1s)".into());
        assert!(!second.outranks(&first));
        assert_eq!(
            StopReason::greatest([Some(first.clone()), None, Some(second)]),
            Some(first)
        );
        assert_eq!(
            StopReason::greatest([None, Some(Interrupted), Some(TargetLost("x".into()))]),
            Some(Interrupted)
        );
        assert_eq!(StopReason::greatest([None, None]), None);
    }

    #[test]
    fn a_broken_target_is_an_error_and_every_other_stop_is_undecided() {
        let verdicts: Vec<Verdict> = all().iter().map(StopReason::verdict).collect();
        assert_eq!(
            verdicts,
            [
                Verdict::Inconclusive,
                Verdict::Inconclusive,
                Verdict::Error,
                Verdict::Error,
                Verdict::Inconclusive
            ]
        );
    }

    /// The labels and sentences are the evidence format's (docs/evidence-format.md): written
    /// out here so that a change to one is a change to this test too.
    #[test]
    fn the_words_each_reason_leaves_in_evidence() {
        let labels: Vec<&str> = all().iter().map(|s| s.label().as_str()).collect();
        assert_eq!(
            labels,
            [
                "deadline",
                "run_budget",
                "credentials_refused",
                "target_lost",
                "interrupted"
            ]
        );
        let lines: Vec<String> = all().iter().map(StopReason::describe).collect();
        assert_eq!(
            lines,
            [
                "the case ran past its deadline (1m 10s: its budget plus 10s)",
                "the request budget (--max-requests 8) is spent",
                "the target refused this run's credentials or permissions (AccessDenied (403))",
                "the target was lost (5 calls in a row got no response)",
                "the run was interrupted",
            ]
        );
        let findings: Vec<String> = all().iter().map(StopReason::finding).collect();
        assert_eq!(
            findings,
            [
                "the case ran past its deadline (1m 10s: its budget plus 10s)",
                "the run stopped: the request budget (--max-requests 8) is spent",
                "the run stopped: the target refused its credentials or permissions (AccessDenied (403))",
                "the target was lost before the case finished: 5 calls in a row got no response",
                "the run was interrupted before the case finished",
            ]
        );
        for reason in all() {
            let cut = crate::classify::CutReason::Stopped(reason.clone());
            assert_eq!(cut.label(), reason.label());
            assert_eq!(cut.describe(), reason.cut_short());
        }
    }
}
