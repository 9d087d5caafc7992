//! A target profile as parsed: its entries, where each pins a divergence, and what a target
//! answered.

use crate::suite::model::Pos;

/// One case the profile says something about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileEntry {
    /// The case id.
    pub case: String,
    /// Where the `case:` value is written.
    pub pos: Pos,
    /// What the target does instead (known divergence) or why it cannot run the case.
    pub reason: String,
    /// An upstream issue / PR URL or a code reference.
    pub reference: String,
    /// `protocols: [query]`: the entry holds only for runs over these protocols (empty: all).
    pub protocols: Vec<String>,
    /// Where the divergence shows (`step:`); a failure anywhere else in the case is not it.
    /// Required for known divergences.
    pub step: Option<StepPin>,
    /// `finding: text`: what the target answers at that step, as the finding says it (a part
    /// of the message). A failure there that does not say it is not this divergence.
    pub finding: Option<String>,
    /// `answer: {status, code}`: the HTTP status and error code the target answers at that
    /// step (`{status: 200}` for a success AWS would refuse).
    pub answer: Option<Answer>,
    /// `teardown: text`: the case's teardown fails on this target, saying this (a part of
    /// the finding: a DeleteQueue the target never answers, say). Without it a teardown
    /// finding is a failure elsewhere.
    pub teardown: Option<String>,
}

/// A known divergence's `step:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepPin {
    /// `step: N` (1-based, as findings number them).
    At(u32),
    /// `step: case`: the case's own findings, those that name no step (a `rate:` judged over
    /// trials, a trial that failed).
    Case,
}

/// What a target answered at a step: its HTTP status and error code, as a profile pins them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: Option<u16>,
    /// The error code (legacy query code or shape name: either matches the other through the
    /// SQS error table); absent for a success.
    pub code: Option<String>,
}

impl Answer {
    /// Whether a finding's recorded answer is this one. An empty code (an error answer that
    /// names none, as some emulators send) is no code.
    pub fn matches(&self, status: Option<u16>, code: Option<&str>) -> bool {
        let status_ok = self.status.is_none_or(|s| Some(s) == status);
        let code = code.filter(|c| !c.is_empty());
        let code_ok = match (&self.code, code) {
            (None, None) => true,
            (Some(want), Some(got)) => same_code(want, got),
            _ => false,
        };
        status_ok && code_ok
    }
}

/// Two names of one SQS error: equal, or the same row of the error table.
fn same_code(a: &str, b: &str) -> bool {
    use sqsprobe_facts::sqs::errors::by_code;
    a == b || matches!((by_code(a), by_code(b)), (Some(x), Some(y)) if x.shape == y.shape)
}

impl ProfileEntry {
    /// `reason (reference)`, the text put into `case_end.profile_note`.
    pub fn note(&self) -> String {
        format!("{} ({})", self.reason, self.reference)
    }
}

/// A parsed target profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The file path as given.
    pub path: String,
    /// `target:` the name recorded in `run_start.target_profile` and shown in the matrix.
    pub target: String,
    pub description: Option<String>,
    /// `versions:` which versions of the target the entries were observed on.
    pub versions: Option<String>,
    /// Cases that fail on this target for a known, referenced reason.
    pub known_divergences: Vec<ProfileEntry>,
    /// Cases the target cannot run at all; they are not run.
    pub unsupported: Vec<ProfileEntry>,
}

impl Profile {
    /// The known-divergence entry for `case`, if any.
    pub fn known_divergence(&self, case: &str) -> Option<&ProfileEntry> {
        self.known_divergences.iter().find(|e| e.case == case)
    }

    /// The unsupported entry for `case`, if any.
    pub fn unsupported(&self, case: &str) -> Option<&ProfileEntry> {
        self.unsupported.iter().find(|e| e.case == case)
    }

    pub(super) fn entries(&self) -> impl Iterator<Item = &ProfileEntry> {
        self.known_divergences.iter().chain(&self.unsupported)
    }

    /// The profile as it applies to a run over `protocol`: entries limited to other protocols
    /// are dropped (a target can diverge over one protocol and not the other).
    pub fn for_protocol(&self, protocol: &str) -> Profile {
        let keep =
            |e: &&ProfileEntry| e.protocols.is_empty() || e.protocols.iter().any(|p| p == protocol);
        Profile {
            known_divergences: self
                .known_divergences
                .iter()
                .filter(keep)
                .cloned()
                .collect(),
            unsupported: self.unsupported.iter().filter(keep).cloned().collect(),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_code_is_no_code() {
        let bare = Answer {
            status: Some(400),
            code: None,
        };
        assert!(bare.matches(Some(400), Some("")));
        assert!(bare.matches(Some(400), None));
        assert!(!bare.matches(Some(400), Some("InvalidAttributeName")));
        let coded = Answer {
            status: Some(400),
            code: Some("InvalidAttributeName".into()),
        };
        assert!(!coded.matches(Some(400), Some("")));
    }
}
