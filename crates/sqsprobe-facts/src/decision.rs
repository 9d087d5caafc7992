//! The playbook's four decisions about an acknowledgement (ACCEPT, REPAIR, HOLD,
//! RECONCILE): the vocabulary a suite expects (`expect: decision:`), the judge decides
//! (`classify::decide`), the evidence records and the reports show.
//!
//! A leaf, like `chaos.rs`: the suite model, the evidence format and the judge all name these
//! words, so they live below all three and none of them imports another for them.

use serde::{Deserialize, Serialize};

/// The playbook's four decisions about an acknowledgement (see `classify::decide`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Decision {
    /// The acknowledgement did what it meant: nothing to do.
    Accept,
    /// The consumer must change: the acknowledgement was wrong in a way it can prevent.
    Repair,
    /// Wait and look again: the outcome is not known yet (a lease may still lapse).
    Hold,
    /// The work may have happened twice or not at all: reconcile with the business record.
    Reconcile,
}

impl Decision {
    /// Every decision, in the playbook's order.
    pub const ALL: [Decision; 4] = [
        Decision::Accept,
        Decision::Repair,
        Decision::Hold,
        Decision::Reconcile,
    ];

    /// `ACCEPT`, as the playbook (and the evidence) writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Accept => "ACCEPT",
            Decision::Repair => "REPAIR",
            Decision::Hold => "HOLD",
            Decision::Reconcile => "RECONCILE",
        }
    }

    /// The decision a name gives (`HOLD`).
    pub fn from_name(name: &str) -> Option<Decision> {
        Decision::ALL.into_iter().find(|d| d.as_str() == name)
    }
}
