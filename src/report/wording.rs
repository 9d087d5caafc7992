//! Wording shared by the renderers beyond the evidence view: what an exit code means, the
//! playbook's decision names, durations and timestamps as shown, and what part of a split run
//! a run folder holds.

use sqsprobe_core::evidence::format::{Decision, RunStart};
use sqsprobe_core::evidence::view::RunView;
use sqsprobe_facts::exit_code;

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

/// What a run left on its target (`run_end.left_queues`), in words every renderer shows.
pub(crate) struct LeftWords {
    /// `2 owned queues may still be on the target (no definite answer to their DeleteQueue)`.
    pub headline: String,
    /// One per queue: `sqsprobe-…-east (us-east-1, case lifecycle-regions-are-namespaces)`.
    pub queues: Vec<String>,
    /// The commands that remove them, one per region; none for the embedded emulator, whose
    /// queues ended with the run.
    pub sweeps: Vec<String>,
}

/// The words for the queues a run may have left behind, or `None` when it left none.
pub(crate) fn left_words(run: &RunView) -> Option<LeftWords> {
    let end = run.end?;
    if end.left_queues.is_empty() {
        return None;
    }
    let n = end.left_queues.len();
    let embedded = run.start.is_some_and(|s| s.target == "embedded");
    let headline = if embedded {
        format!(
            "{n} owned queue{} had no definite DeleteQueue answer (they ended with the embedded \
             emulator)",
            if n == 1 { "" } else { "s" }
        )
    } else {
        format!(
            "{n} owned queue{} may still be on the target (no definite answer to {} DeleteQueue)",
            if n == 1 { "" } else { "s" },
            if n == 1 { "its" } else { "their" }
        )
    };
    let queues = end
        .left_queues
        .iter()
        .map(|q| format!("{} ({}, case {})", q.queue, q.region, q.case))
        .collect();
    let mut regions: Vec<&str> = end.left_queues.iter().map(|q| q.region.as_str()).collect();
    regions.sort_unstable();
    regions.dedup();
    let sweeps = match run.start {
        Some(start) if !embedded => regions
            .iter()
            .map(|region| sweep_command(start, region))
            .collect(),
        _ => Vec::new(),
    };
    Some(LeftWords {
        headline,
        queues,
        sweeps,
    })
}

/// The `sqsprobe sweep` line that removes this run's queues in `region` of its target.
pub(crate) fn sweep_command(start: &RunStart, region: &str) -> String {
    let target = match (start.target.as_str(), start.endpoint.as_deref()) {
        ("aws", _) => "--target aws".to_string(),
        (_, Some(url)) => format!("--endpoint-url {url}"),
        (_, None) => "--endpoint-url URL".to_string(),
    };
    format!(
        "sqsprobe sweep {target} --region {region} --run-id {}",
        start.run_id
    )
}

/// The documented meaning of an exit code (see `sqsprobe_facts::exit_code`).
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
    use sqsprobe_core::evidence::fixtures::{run_end, run_start};
    use sqsprobe_core::evidence::format::{LeftQueue, Record};

    #[test]
    fn left_queues_are_named_with_the_sweep_that_removes_them() {
        let Record::RunStart(mut start) = run_start(&["c"]) else {
            panic!("not a run_start")
        };
        start.target = "endpoint".into();
        start.endpoint = Some("http://127.0.0.1:5000".into());
        let Record::RunEnd(mut end) = run_end(sqsprobe_facts::exit_code::RUNTIME_ERROR) else {
            panic!("not a run_end")
        };
        let records = vec![Record::RunStart(start.clone()), Record::RunEnd(end.clone())];
        assert!(left_words(&RunView::new(&records)).is_none());
        end.left_queues = ["us-east-1", "us-west-2", "us-east-1"]
            .iter()
            .enumerate()
            .map(|(i, r)| LeftQueue {
                region: r.to_string(),
                queue: format!("q{i}"),
                case: "c".into(),
            })
            .collect();
        let records = vec![Record::RunStart(start.clone()), Record::RunEnd(end)];
        let words = left_words(&RunView::new(&records)).unwrap();
        assert!(
            words
                .headline
                .starts_with("3 owned queues may still be on the target")
        );
        assert_eq!(words.queues[1], "q1 (us-west-2, case c)");
        let id = &start.run_id;
        assert_eq!(
            words.sweeps,
            [
                format!(
                    "sqsprobe sweep --endpoint-url http://127.0.0.1:5000 --region us-east-1 --run-id {id}"
                ),
                format!(
                    "sqsprobe sweep --endpoint-url http://127.0.0.1:5000 --region us-west-2 --run-id {id}"
                ),
            ]
        );
    }

    #[test]
    fn every_exit_code_has_its_meaning() {
        for (code, _) in exit_code::ALL {
            assert_ne!(exit_meaning(code), exit_meaning(-1), "exit {code}");
        }
        assert_eq!(
            exit_meaning(exit_code::INTERRUPTED),
            "the run was interrupted"
        );
    }
}
