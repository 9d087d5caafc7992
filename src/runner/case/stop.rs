//! What stops a case from outside its steps: an interruption of the run (a signal), the run
//! stopping itself (credentials refused, target lost, a budget spent), or the case's own
//! deadline, its budget plus some slack for a slow target.
//!
//! The step loop asks between steps; a call in flight, a sleep and an observation poll wait on
//! [`Stops::until_requested`] beside their own work, so a stop cuts them short.

use crate::runner::context::RunContext;
use crate::runner::halt::Halt;
use sqsprobe_core::classify::StopReason;
use sqsprobe_core::suite::model::Case;
use std::time::Duration;
use tokio::time::Instant;

/// Time a case may run past its computed budget before it is stopped as inconclusive.
const DEADLINE_SLACK: Duration = Duration::from_secs(10);

/// The stops that apply to one case (see the module doc).
#[derive(Debug, Clone)]
pub(super) struct Stops {
    /// The run's stop: its own reason and the signal.
    halt: Halt,
    /// The budget validate computed for the case.
    budget: Duration,
    /// Past this instant calls are abandoned and the case is cut as `deadline`.
    deadline: Instant,
}

impl Stops {
    /// The stops of `case` in the run of `ctx`, its deadline counted from now.
    pub(super) fn new(ctx: &RunContext, case: &Case) -> Stops {
        let budget = sqsprobe_core::suite::case_budget(case);
        Stops {
            halt: ctx.halt.clone(),
            budget,
            // The budget validate computed, plus slack for a slow target.
            deadline: Instant::now() + budget + DEADLINE_SLACK,
        }
    }

    /// What stops the case from outside its steps, if anything has yet: an interruption of
    /// the run, the run stopping itself (credentials refused, target lost, a budget spent),
    /// or the case's deadline.
    pub(super) fn requested(&self) -> Option<StopReason> {
        let past_deadline = Instant::now() >= self.deadline;
        StopReason::greatest([
            self.halt.stop_reason(),
            past_deadline.then(|| StopReason::Deadline(self.deadline_text())),
        ])
    }

    /// What cut a call or a wait short, once [`until_requested`](Self::until_requested) has
    /// resolved: a deadline, a halt of the run, a signal, each in its own words (the one
    /// wording a cut call and a cut sleep share).
    pub(super) fn why_cut(&self) -> &'static str {
        self.requested()
            .unwrap_or(StopReason::Interrupted)
            .cut_short()
    }

    /// Resolves once [`requested`](Self::requested) would answer.
    pub(super) async fn until_requested(&self) {
        tokio::select! {
            _ = self.halt.signalled() => {}
            _ = self.halt.stopped() => {}
            _ = tokio::time::sleep_until(self.deadline) => {}
        }
    }

    /// Whether a signal is ending the run.
    pub(super) fn interrupted(&self) -> bool {
        self.halt.interrupted()
    }

    /// The instant the case is cut as `deadline`.
    pub(super) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// The deadline, as a stopped case's reason says it.
    pub(super) fn deadline_text(&self) -> String {
        let budget = self.budget + DEADLINE_SLACK;
        format!(
            "{}: its budget plus {}s",
            sqsprobe_facts::duration::format(budget),
            DEADLINE_SLACK.as_secs()
        )
    }
}
