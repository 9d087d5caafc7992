//! The case's record: the facts the judge reads besides the ledger's (why setup failed, each
//! step's result, what stopped the case, the observation window, what teardown could not
//! delete), filled in as the case runs so that a case cut at any point still hands over what it
//! gathered.

use sqsprobe_core::classify::{StepResult, StopReason, WindowFacts};

/// The record of one case (see the module doc).
#[derive(Debug, Default)]
pub(super) struct CaseRecord {
    /// Why setup failed, masked; the case ran no step.
    pub setup_error: Option<String>,
    /// Each step that ran, in order, with its check.
    pub results: Vec<StepResult>,
    /// What stopped the case before its steps were done, if anything did.
    pub stopped: Option<StopReason>,
    /// The observation window's facts, kept as they are gathered.
    pub window: Option<WindowFacts>,
    /// Queues teardown could not prove deleted, each one line (masked).
    pub teardown_errors: Vec<String>,
}
