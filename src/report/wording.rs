//! Wording shared by the renderers beyond the evidence view: what an exit code means, the
//! playbook's decision names, durations and timestamps as shown, and what part of a split run
//! a run folder holds.

use crate::evidence::format::{Decision, RunStart};
use crate::evidence::view::RunView;
use crate::exit_code;

/// What the run's exit code means, or that none was recorded.
pub(crate) fn run_exit_meaning(run: &RunView) -> String {
    match run.end {
        Some(end) => format!("exit {}: {}", end.exit_code, exit_meaning(end.exit_code)),
        None => "no exit code recorded: the run was interrupted before run_end".to_string(),
    }
}

/// What part of a `--partition` run this run is, and what that leaves out, or `None` for a
/// whole run: `(what, warning)`.
pub(crate) fn partition_words(start: &RunStart) -> Option<(String, Option<String>)> {
    if let Some(m) = &start.merged {
        let parts: Vec<String> = m
            .partitions
            .iter()
            .map(|p| {
                let seed = p.seed.map(|s| format!(", seed {s}")).unwrap_or_default();
                format!("{} (run {}{seed})", p.partition, p.run_id)
            })
            .collect();
        let mut warnings = Vec::new();
        if !m.missing.is_empty() {
            let missing: Vec<String> = m.missing.iter().map(|k| format!("{k}/{}", m.of)).collect();
            warnings.push(format!(
                "partition{} {} not given: {} cases are not in this report",
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", "),
                if missing.len() == 1 { "its" } else { "their" }
            ));
        }
        let unfinished: Vec<&str> = m
            .partitions
            .iter()
            .filter(|p| !p.complete)
            .map(|p| p.partition.as_str())
            .collect();
        if !unfinished.is_empty() {
            warnings.push(format!(
                "partition{} {} did not end cleanly (interrupted or killed)",
                if unfinished.len() == 1 { "" } else { "s" },
                unfinished.join(", ")
            ));
        }
        let warning = (!warnings.is_empty()).then(|| warnings.join("; "));
        return Some((
            format!(
                "merged from {} of {} partitions: {}",
                m.partitions.len(),
                m.of,
                parts.join(", ")
            ),
            warning,
        ));
    }
    let p = start.partition.as_deref()?;
    Some((
        format!("partition {p} of a split run"),
        Some(format!(
            "this folder holds partition {p} only: merge the partitions with `sqsprobe report DIR...`"
        )),
    ))
}

/// The documented meaning of an exit code (see `crate::exit_code`).
pub(crate) fn exit_meaning(code: i32) -> &'static str {
    match code {
        exit_code::OK => "every case passed",
        exit_code::BAD_COMMAND_LINE => "the command line could not be understood",
        exit_code::INVALID_SUITE => "a suite file is invalid",
        exit_code::RUNTIME_ERROR => "the harness or the target broke",
        exit_code::EXPECTATION_FAILED => "at least one expectation did not hold",
        exit_code::INCONCLUSIVE => "nothing failed, but at least one case was inconclusive",
        exit_code::INTERRUPTED => "the run was interrupted",
        _ => "not a documented sqsprobe exit code",
    }
}

/// `ACCEPT`, as the playbook writes decisions.
pub(crate) fn decision_name(d: Decision) -> &'static str {
    d.as_str()
}

/// `850 ms`, `12.3 s`.
pub(crate) fn format_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exit_code_has_its_meaning() {
        for code in [
            exit_code::OK,
            exit_code::BAD_COMMAND_LINE,
            exit_code::INVALID_SUITE,
            exit_code::RUNTIME_ERROR,
            exit_code::EXPECTATION_FAILED,
            exit_code::INCONCLUSIVE,
            exit_code::INTERRUPTED,
        ] {
            assert_ne!(exit_meaning(code), exit_meaning(-1), "exit {code}");
        }
        assert_eq!(
            exit_meaning(exit_code::INTERRUPTED),
            "the run was interrupted"
        );
    }
}
