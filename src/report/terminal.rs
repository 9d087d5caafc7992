//! The end-of-run summary printed to stdout: one screen, plain text.
//!
//! The mapping:
//! - one line per non-passing case, `FAIL  suite.yaml:12  case-id  reason`, pointing at the
//!   first finding's line (the step that failed) or else the case's, columns aligned,
//!   the reason cut to the terminal width; labels are `FAIL`, `ERROR`, `INCONCLUSIVE` and
//!   `DID-NOT-FINISH` (a case with no `case_end`); a multi-trial case has its `k/N` per class
//!   with intervals on an indented line below its row;
//! - a failed reachability check comes first, as `ERROR  <endpoint>  reachability check
//!   <what the target answered>`;
//! - cases never started are one `NOT-STARTED` line listing their ids;
//! - a blank line, then the totals alone on a line (`3 passed, 1 failed, 0 inconclusive,
//!   0 errors`: known divergences count as passed, unfinished cases as errors), each
//!   clarification of the totals indented below it;
//! - whether the run was interrupted, what the exit code means, and where the run folder is.
//!
//! [`progress_line`] is the line printed on stderr as each case of a live run finishes.
//!
//! Text from the records (ids, reasons, server messages) has its control characters replaced,
//! so a server cannot send escape sequences to the user's terminal.

use super::wording::run_exit_meaning;
use sqsprobe_core::evidence::Record;
use sqsprobe_core::evidence::format::{CaseEnd, Verdict};
use sqsprobe_core::evidence::view::{CaseState, CaseView, RunView};
use sqsprobe_facts::text::escape::terminal as plain;

/// Narrowest reason column kept when cutting to the width.
const MIN_REASON: usize = 16;

/// Renders the end-of-run summary. `width` is the terminal width in columns (0: do not cut);
/// `colour` adds ANSI colour to the verdict labels only, never to the totals line.
pub fn render(records: &[Record], run_dir: &str, width: usize, colour: bool) -> String {
    let run = RunView::new(records);
    let failing: Vec<&CaseView> = run
        .cases
        .iter()
        .filter(|c| c.state.needs_details())
        .collect();
    let not_started: Vec<&str> = run
        .cases
        .iter()
        .filter(|c| c.state == CaseState::NotStarted)
        .map(|c| c.id)
        .collect();

    let mut rows: Vec<(CaseState, [String; 4])> = Vec::new();
    if let Some(reason) = run.unreachable_reason() {
        let endpoint = run.start.and_then(|s| s.endpoint.as_deref()).unwrap_or("");
        rows.push((
            CaseState::Finished(Verdict::Error),
            [
                "ERROR".to_string(),
                plain(endpoint),
                "reachability check".to_string(),
                plain(&reason),
            ],
        ));
    }
    rows.extend(failing.iter().map(|c| {
        (
            c.state,
            [
                c.state.label().to_string(),
                plain(&c.first_finding_location()),
                plain(c.id),
                plain(&c.reason()),
            ],
        )
    }));
    // A multi-trial case's k/N goes on its own line under its row, where no cut hides it.
    let tallies: std::collections::BTreeMap<String, String> = failing
        .iter()
        .filter_map(|c| {
            let trials = c.end?.trials.as_ref()?;
            Some((plain(c.id), sqsprobe_core::classify::trials::tally(trials)))
        })
        .collect();
    let label_w = column_width(&rows, 0, not_started.is_empty());
    let loc_w = column_width(&rows, 1, true);
    let id_w = column_width(&rows, 2, true);

    let mut out = String::new();
    for (state, [label, location, id, reason]) in &rows {
        let prefix_len = label_w + 2 + loc_w + 2 + id_w + 2;
        let reason = cut(
            reason,
            width.saturating_sub(prefix_len).max(MIN_REASON),
            width,
        );
        let label = paint(label, label_w, *state, colour);
        out.push_str(&format!("{label}  {location:loc_w$}  {id:id_w$}  {reason}"));
        out.truncate(out.trim_end().len());
        out.push('\n');
        if let Some(tally) = tallies.get(id.as_str()) {
            let indent = label_w + 2;
            out.push_str(&format!(
                "{:indent$}{}\n",
                "",
                cut(tally, width.saturating_sub(indent).max(MIN_REASON), width)
            ));
        }
    }
    if !not_started.is_empty() {
        let label = paint("NOT-STARTED", label_w, CaseState::NotStarted, colour);
        let ids = plain(&not_started.join(", "));
        let ids = cut(
            &ids,
            width.saturating_sub(label_w + 2).max(MIN_REASON),
            width,
        );
        out.push_str(&format!("{label}  {ids}\n"));
    }
    if !out.is_empty() {
        out.push('\n');
    }

    let totals = run.totals();
    out.push_str(&totals.line());
    out.push('\n');
    for note in totals.notes() {
        out.push_str(&format!("  ({note})\n"));
    }
    let policies: Vec<String> = run
        .cases
        .iter()
        .filter(|c| {
            c.start.is_some_and(|s| {
                s.tags
                    .iter()
                    .any(|t| t == sqsprobe_core::suite::TEAM_POLICY_TAG)
            })
        })
        .map(|c| format!("{} {}", plain(c.id), c.state.label()))
        .collect();
    if !policies.is_empty() {
        out.push_str(&format!(
            "  (team policy, a bound the team sets and AWS does not publish: {})\n",
            policies.join(", ")
        ));
    }
    if run.interrupted() {
        out.push_str("run interrupted: results are partial\n");
    }
    if let Some(left) = crate::report::wording::left_words(&run) {
        out.push_str(&format!("{}:\n", plain(&left.headline)));
        for q in &left.queues {
            out.push_str(&format!("  {}\n", plain(q)));
        }
        for sweep in &left.sweeps {
            out.push_str(&format!("  remove with: {}\n", plain(sweep)));
        }
    }
    out.push_str(&run_exit_meaning(&run));
    out.push('\n');
    out.push_str(&format!("run folder: {}\n", plain(run_dir)));
    out
}

/// The progress line printed as a case finishes: verdict, duration, how many cases are done,
/// suite and case id, and the observation class and decision when there was one.
pub fn progress_line(end: &CaseEnd, done: usize, total: usize) -> String {
    let label = end.verdict.as_str().to_uppercase();
    let class = match &end.trials {
        Some(trials) => format!("  {}", sqsprobe_core::classify::trials::tally(trials)),
        None => end
            .classification
            .map(|c| c.as_str())
            .map(|c| format!("  {c}"))
            .unwrap_or_default(),
    };
    let decision = end
        .decision
        .map(|d| format!(" → {d:?}").to_uppercase())
        .unwrap_or_default();
    plain(&format!(
        "{label:>16} [{:>6.1}s] ({done}/{total}) {}  {}{class}{decision}",
        end.duration_ms as f64 / 1000.0,
        end.suite,
        end.case,
    ))
}

/// The width to cut summary lines to: `COLUMNS` when set to a number; else 100 on a terminal,
/// and 0 (do not cut) when stdout is a file or a pipe, so a CI log keeps whole reasons.
pub fn width() -> usize {
    use std::io::IsTerminal;
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(if std::io::stdout().is_terminal() {
            100
        } else {
            0
        })
}

fn column_width(rows: &[(CaseState, [String; 4])], column: usize, only_rows: bool) -> usize {
    let widest = rows
        .iter()
        .map(|(_, r)| r[column].chars().count())
        .max()
        .unwrap_or(0);
    if only_rows {
        widest
    } else {
        widest.max("NOT-STARTED".len())
    }
}

fn paint(label: &str, width: usize, state: CaseState, colour: bool) -> String {
    let padded = format!("{label:width$}");
    if !colour {
        return padded;
    }
    let code = match state {
        CaseState::Finished(Verdict::Fail | Verdict::Error) | CaseState::DidNotFinish => "31",
        CaseState::Finished(Verdict::Inconclusive | Verdict::Unsupported)
        | CaseState::NotStarted => "33",
        CaseState::Finished(Verdict::Pass | Verdict::KnownDivergence) => "32",
    };
    format!("\x1b[{code}m{label}\x1b[0m{}", &padded[label.len()..])
}

/// Cuts `text` to `room` characters with an ellipsis, unless `width` is 0.
fn cut(text: &str, room: usize, width: usize) -> String {
    if width == 0 || text.chars().count() <= room {
        return text.to_string();
    }
    let kept: String = text.chars().take(room.saturating_sub(1)).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_core::evidence::fixtures::*;

    #[test]
    fn full_run_lists_non_passing_cases_and_totals() {
        let out = render(&full_run(), "runs/run-1", 0, false);
        assert_eq!(
            out,
            "\
FAIL          suites/ack.yaml:61   old-handle  1 expectation did not hold
INCONCLUSIVE  suites/ack.yaml:90   no-window   observation throttled
ERROR         suites/ack.yaml:121  broken      queue setup failed

2 passed, 1 failed, 1 inconclusive, 1 error
  (1 of the passes is a known divergence of the target profile)
exit 4: at least one expectation did not hold
run folder: runs/run-1
"
        );
        assert!(
            out.lines()
                .any(|l| l == "2 passed, 1 failed, 1 inconclusive, 1 error")
        );
    }

    /// A case tagged team-policy is named as the team's policy under the totals, with its
    /// verdict; a run without one has no such line (the test above).
    #[test]
    fn a_team_policy_case_is_named_as_such() {
        let mut records = full_run();
        for r in &mut records {
            if let Record::CaseStart(s) = r
                && s.case == "old-handle"
            {
                s.tags
                    .push(sqsprobe_core::suite::TEAM_POLICY_TAG.to_string());
            }
        }
        let out = render(&records, "runs/run-1", 0, false);
        assert!(
            out.lines().any(|l| l
                == "  (team policy, a bound the team sets and AWS does not publish: old-handle FAIL)"),
            "{out}"
        );
    }

    #[test]
    fn interrupted_run_says_so() {
        let out = render(&interrupted_run(), "runs/x", 0, false);
        assert_eq!(
            out,
            "\
DID-NOT-FINISH  suites/ack.yaml:30  cut  did not finish (run interrupted)
NOT-STARTED     never

1 passed, 0 failed, 0 inconclusive, 1 error
  (1 of the errors did not finish: the run was interrupted)
  (1 selected case was not started)
run interrupted: results are partial
no exit code recorded: the run was interrupted before run_end
run folder: runs/x
"
        );
    }

    #[test]
    fn exit_130_reads_as_an_interruption() {
        let mut records = interrupted_run();
        let Record::RunEnd(mut end) = run_end(sqsprobe_facts::exit_code::INTERRUPTED) else {
            unreachable!()
        };
        end.interrupted = true;
        records.push(Record::RunEnd(end));
        let out = render(&records, "runs/x", 0, false);
        assert!(
            out.contains("run interrupted: results are partial\n"),
            "{out}"
        );
        assert!(out.contains("exit 130: the run was interrupted\n"), "{out}");
    }

    #[test]
    fn a_failed_reachability_check_leads_and_the_cases_are_not_started() {
        let records = unreachable_run(&["a", "b"]);
        assert_eq!(
            render(&records, "runs/x", 0, false),
            "\
ERROR        http://127.0.0.1:4566  reachability check  the target could not be reached: ListQueues failed: no response: connection refused
NOT-STARTED  a, b

0 passed, 0 failed, 0 inconclusive, 1 error
  (1 of the errors is the reachability check: the target could not be reached, so no case was run)
  (2 selected cases were not started)
exit 3: the harness or the target broke
run folder: runs/x
"
        );
    }

    #[test]
    fn reasons_are_cut_to_width_and_control_characters_removed() {
        let mut records = full_run();
        for r in &mut records {
            if let Record::CaseEnd(end) = r
                && end.case == "old-handle"
            {
                end.reason = format!("\x1b[2Jwiped {}", "x".repeat(200));
            }
        }
        let out = render(&records, "runs/run-1", 80, false);
        let line = out.lines().next().unwrap();
        assert!(line.starts_with("FAIL "));
        assert_eq!(line.chars().count(), 80, "{line}");
        assert!(line.ends_with('…'));
        assert!(!out.contains('\x1b'));
    }

    #[test]
    fn progress_lines_name_the_case_and_carry_no_control_characters() {
        let mut end = case_end("stale-ack", Verdict::Pass, "ok", &[]);
        end.classification = Some(sqsprobe_core::evidence::facts::ClassName::ObservedRedelivery);
        end.decision = Some(sqsprobe_core::evidence::format::Decision::Reconcile);
        assert_eq!(
            progress_line(&end, 2, 5),
            "            PASS [   1.5s] (2/5) suites/ack.yaml  stale-ack  observed_redelivery → RECONCILE"
        );
        end.case = "evil\u{1b}[2J".to_string();
        assert!(!progress_line(&end, 1, 1).contains('\u{1b}'));
    }

    #[test]
    fn colour_touches_labels_only() {
        let out = render(&full_run(), "runs/run-1", 0, true);
        assert!(out.starts_with("\x1b[31mFAIL\x1b[0m          suites"));
        assert!(
            out.lines()
                .any(|l| l == "2 passed, 1 failed, 1 inconclusive, 1 error")
        );
    }
}
