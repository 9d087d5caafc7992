//! Outcome classes of a bounded observation.
//!
//! The rule is deliberately asymmetric, like Jepsen's checkers: one sighting is proof that the
//! message came back, while the absence of sightings is only evidence if the whole window was
//! watched. Anything that cut the window short makes silence worthless, so it is `inconclusive`,
//! never a pass.

use crate::suite::model::OutcomeClass;

/// How an observation window ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowEnd {
    /// The full window elapsed.
    Completed,
    /// Every tracked message was seen, so the window was cut short on purpose.
    AllSeen,
    /// The window could not be completed; the string says why (for the report).
    Cut(CutReason),
}

/// Why a window could not be completed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CutReason {
    /// The target throttled a receive (`RequestThrottled`, `ThrottlingException`, ...).
    Throttled(String),
    /// A receive got no response (refused, reset, timed out).
    Transport(String),
    /// A receive got an unexpected error response.
    ReceiveFailed(String),
    /// The receive budget ran out before the window ended.
    BudgetExhausted { used: u32 },
    /// The run was interrupted (Ctrl-C) or hit its deadline.
    Interrupted,
}

impl CutReason {
    /// A short machine-friendly label for evidence (`throttled`, `budget_exhausted`, ...).
    pub fn label(&self) -> &'static str {
        match self {
            CutReason::Throttled(_) => "throttled",
            CutReason::Transport(_) => "transport_error",
            CutReason::ReceiveFailed(_) => "receive_failed",
            CutReason::BudgetExhausted { .. } => "budget_exhausted",
            CutReason::Interrupted => "interrupted",
        }
    }

    /// A sentence for humans.
    pub fn describe(&self) -> String {
        match self {
            CutReason::Throttled(code) => format!("a receive was throttled ({code})"),
            CutReason::Transport(what) => format!("a receive got no response ({what})"),
            CutReason::ReceiveFailed(code) => format!("a receive failed ({code})"),
            CutReason::BudgetExhausted { used } => format!(
                "the receive budget ({used} call{}) ran out before the window ended",
                if *used == 1 { "" } else { "s" }
            ),
            CutReason::Interrupted => "the run was interrupted".to_string(),
        }
    }
}

impl WindowEnd {
    /// The `ended` field of the evidence window.
    pub fn label(&self) -> &'static str {
        match self {
            WindowEnd::Completed => "completed",
            WindowEnd::AllSeen => "all_seen",
            WindowEnd::Cut(reason) => reason.label(),
        }
    }
}

/// Classifies one tracked message from its sightings in the window and how the window ended.
pub fn classify(sightings: u32, end: &WindowEnd) -> OutcomeClass {
    if sightings > 0 {
        return OutcomeClass::ObservedRedelivery;
    }
    match end {
        WindowEnd::Completed => OutcomeClass::NoRedeliveryWithinWindow,
        // AllSeen with zero sightings cannot happen for this message; treat it as not proven.
        WindowEnd::AllSeen | WindowEnd::Cut(_) => OutcomeClass::Inconclusive,
    }
}

/// The class of a whole observation: inconclusive if any message is, else redelivery if any
/// message came back, else no redelivery.
pub fn overall(classes: impl IntoIterator<Item = OutcomeClass>) -> Option<OutcomeClass> {
    let mut worst: Option<OutcomeClass> = None;
    for class in classes {
        worst = Some(match (worst, class) {
            (_, OutcomeClass::Inconclusive) | (Some(OutcomeClass::Inconclusive), _) => {
                OutcomeClass::Inconclusive
            }
            (_, OutcomeClass::ObservedRedelivery) | (Some(OutcomeClass::ObservedRedelivery), _) => {
                OutcomeClass::ObservedRedelivery
            }
            _ => OutcomeClass::NoRedeliveryWithinWindow,
        });
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;
    use OutcomeClass::*;

    #[test]
    fn a_sighting_is_redelivery_even_if_the_window_was_cut() {
        assert_eq!(classify(1, &WindowEnd::Completed), ObservedRedelivery);
        assert_eq!(classify(2, &WindowEnd::AllSeen), ObservedRedelivery);
        assert_eq!(
            classify(
                1,
                &WindowEnd::Cut(CutReason::Throttled("RequestThrottled".into()))
            ),
            ObservedRedelivery
        );
    }

    #[test]
    fn silence_counts_only_over_a_completed_window() {
        assert_eq!(classify(0, &WindowEnd::Completed), NoRedeliveryWithinWindow);
    }

    #[test]
    fn every_cut_makes_silence_inconclusive() {
        for reason in [
            CutReason::Throttled("ThrottlingException".into()),
            CutReason::Transport("connection refused".into()),
            CutReason::ReceiveFailed("InternalError".into()),
            CutReason::BudgetExhausted { used: 20 },
            CutReason::Interrupted,
        ] {
            assert_eq!(
                classify(0, &WindowEnd::Cut(reason.clone())),
                Inconclusive,
                "{reason:?}"
            );
            assert!(!reason.describe().is_empty());
        }
    }

    #[test]
    fn overall_takes_the_least_certain_class() {
        assert_eq!(overall([]), None);
        assert_eq!(
            overall([NoRedeliveryWithinWindow]),
            Some(NoRedeliveryWithinWindow)
        );
        assert_eq!(
            overall([NoRedeliveryWithinWindow, ObservedRedelivery]),
            Some(ObservedRedelivery)
        );
        assert_eq!(
            overall([ObservedRedelivery, Inconclusive, NoRedeliveryWithinWindow]),
            Some(Inconclusive)
        );
    }
}
