//! Bounds on what a case may cost, and the checks that need every file of a run. What a case
//! does cost is counted by the parser (`parse/budget.rs`, from its step table); the bounds
//! are handed to the parser's step decoders, so this file imports nothing of the parser.

use std::collections::BTreeMap;
use std::time::Duration;

use super::diagnostic::Diagnostic;
use super::model::{Case, Pos, Suite};

/// Bounds every case must stay within; a case over them is refused at parse time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest [`case_budget`](super::case_budget) a case may have (default 5 minutes).
    pub max_case_duration: Duration,
    /// The same for cases tagged `slow`, which run only when asked and may wait out SQS's own
    /// long intervals (the 5-minute FIFO deduplication window): default 15 minutes.
    pub max_slow_case_duration: Duration,
    /// The most ReceiveMessage calls one `observe` step may make (default 100).
    pub max_observe_receives: u32,
    /// The largest suite file read, in bytes (default 4 MiB); a larger one is an invalid
    /// suite, refused before it is read whole.
    pub max_suite_bytes: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_case_duration: Duration::from_secs(5 * 60),
            max_slow_case_duration: Duration::from_secs(15 * 60),
            max_observe_receives: 100,
            max_suite_bytes: 4 * 1024 * 1024,
        }
    }
}

impl Limits {
    /// The bound that applies to `case`: the slow one for cases tagged `slow`.
    pub fn max_for(&self, case: &Case) -> Duration {
        if case.tags.iter().any(|t| t == "slow") {
            self.max_slow_case_duration
        } else {
            self.max_case_duration
        }
    }
}

/// Checks across the files of one run: a case id may be used once (ids go into queue names
/// and evidence). The error is at the later case and names the first one's `file:line`.
pub fn check_run(suites: &[Suite]) -> Vec<Diagnostic> {
    let mut seen: BTreeMap<&str, (&str, Pos)> = BTreeMap::new();
    let mut diags = Vec::new();
    for suite in suites {
        for case in &suite.cases {
            match seen.get(case.id.as_str()) {
                Some((path, first)) => diags.push(
                    Diagnostic::new(
                        &suite.path,
                        case.pos,
                        case.id.chars().count() as u32,
                        format!(
                            "duplicate case id `{}`, first used at {path}:{}",
                            case.id, first.line
                        ),
                    )
                    .with_hint("case ids are unique across every suite of a run"),
                ),
                None => {
                    seen.insert(&case.id, (&suite.path, case.pos));
                }
            }
        }
    }
    diags
}
