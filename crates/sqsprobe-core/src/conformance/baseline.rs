//! Baselines: a run reduced to what must stay the same, and comparing two such reductions.
//!
//! A baseline keeps, per case, the verdict and the outcome class, and per step call the
//! action, HTTP status, error code, error type, sender fault and the `Failed` entries of batch
//! calls. It keeps no handles, bodies, message ids, request ids or timings: those change
//! every run. Observation receives are left out too (how many polls a window takes depends on
//! timing); the outcome class is what they decided. A multi-trial case's calls are kept trial
//! by trial, since its concurrent trials interleave differently every run.
//!
//! Only a complete run can be a baseline ([`RunView::finished`]): an interrupted run, one
//! killed mid-write or stopped at its reachability check, would make every later run look
//! changed. A run being compared may be incomplete; its unfinished cases are differences
//! ("did not finish"), and the comparison says why the run is incomplete.

use serde::{Deserialize, Serialize};

use crate::evidence::Record;
use crate::evidence::format::{Call, Completion, Phase, Verdict};
use crate::evidence::view::RunView;
use sqsprobe_facts::text::escape::{markdown_code, markdown_text, terminal};

/// Identifier written in `baseline.json`.
pub const BASELINE_FORMAT: &str = "sqsprobe-baseline/1";

/// A normalized run (`baseline.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    pub format: String,
    pub run_id: String,
    pub target: String,
    pub endpoint: Option<String>,
    pub target_profile: Option<String>,
    pub region: String,
    pub protocol: String,
    pub started_at: String,
    pub cases: Vec<CaseBaseline>,
    /// Why the run is not complete (interrupted, killed, stopped at its reachability check,
    /// cases without `case_end`), or absent when it is. A baseline is only ever saved from a
    /// complete run; a run being compared may be incomplete, and the comparison says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// Cases the run selected that have no `case_end` (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub did_not_finish: Vec<String>,
}

/// One case of a baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseBaseline {
    pub case: String,
    pub suite: String,
    /// Line of the case's `id:`.
    pub line: Option<u32>,
    pub verdict: Verdict,
    /// The case's outcome class (`observed_redelivery`, ...), when it observed.
    pub classification: Option<String>,
    pub steps: Vec<StepCall>,
}

/// The last attempt of one call made by a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepCall {
    pub step: Option<usize>,
    pub line: Option<u32>,
    pub action: String,
    /// `ok`, `fail` or `info` (no response).
    pub completion: Completion,
    pub http_status: Option<u16>,
    pub error_code: Option<String>,
    pub error_type: Option<String>,
    pub sender_fault: Option<bool>,
    /// Failed batch entries as `id: code (sender|receiver)`, sorted by id.
    pub batch_failed: Vec<String>,
}

/// Why records cannot be normalized.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the evidence has no run_start line")]
pub struct NoRunStart;

/// Reduces a run's records to a baseline: its finished cases in plan order.
pub fn normalize(records: &[Record]) -> Result<Baseline, NoRunStart> {
    let run = RunView::new(records);
    let start = run.start.ok_or(NoRunStart)?;
    let cases = run
        .cases
        .iter()
        .filter_map(|case| {
            let end = case.end?;
            Some(CaseBaseline {
                case: end.case.clone(),
                suite: end.suite.clone(),
                line: case.line(),
                verdict: end.verdict,
                classification: end.classification.map(|c| c.as_str().to_string()),
                steps: {
                    // The trials of a multi-trial case run concurrently, so their calls
                    // interleave differently every run: compare them trial by trial (a stable
                    // sort keeps each trial's own order).
                    let mut calls: Vec<&Call> = case
                        .calls
                        .iter()
                        .copied()
                        .filter(|c| c.phase == Phase::Step && !c.retried)
                        .collect();
                    calls.sort_by_key(|c| c.trial);
                    calls.into_iter().map(step_call).collect()
                },
            })
        })
        .collect();
    Ok(Baseline {
        format: BASELINE_FORMAT.to_string(),
        run_id: start.run_id.clone(),
        target: start.target.clone(),
        endpoint: start.endpoint.clone(),
        target_profile: start.target_profile.clone(),
        region: start.region.clone(),
        protocol: start.protocol.as_str().to_string(),
        started_at: start.started_at.clone(),
        cases,
        incomplete: run.why_unfinished(),
        did_not_finish: run
            .cases
            .iter()
            .filter(|c| c.end.is_none())
            .map(|c| c.id.to_string())
            .collect(),
    })
}

/// The shape of one step call's last attempt.
fn step_call(c: &Call) -> StepCall {
    let mut batch_failed: Vec<String> = c
        .entries
        .iter()
        .filter(|e| e.result == "failed")
        .map(|e| {
            let fault = match e.sender_fault {
                Some(true) => " (sender)",
                Some(false) => " (receiver)",
                None => "",
            };
            format!("{}: {}{fault}", e.id, e.code.as_deref().unwrap_or("?"))
        })
        .collect();
    batch_failed.sort();
    StepCall {
        step: c.step,
        line: c.line,
        action: c.action.clone(),
        completion: c.completion,
        http_status: c.http_status,
        error_code: c.error_code.clone(),
        error_type: c.error_type.clone(),
        sender_fault: c.sender_fault,
        batch_failed,
    }
}

/// The default baseline name: `<profile or target>-<region>-<date>`.
pub fn default_name(b: &Baseline) -> String {
    let target = b.target_profile.as_deref().unwrap_or(&b.target);
    let date: String = b.started_at.chars().take(10).collect();
    let raw = format!("{target}-{}-{date}", b.region);
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// One way a run differs from its baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    pub case: String,
    /// `suite:line` of the step (or of the case), when known.
    pub location: String,
    /// What differs: `verdict`, `classification`, `step 2 DeleteMessage: error_code`, ...
    pub what: String,
    pub baseline: String,
    pub run: String,
}

fn show<T: std::fmt::Debug>(v: &Option<T>) -> String {
    match v {
        Some(v) => format!("{v:?}").trim_matches('"').to_string(),
        None => "–".to_string(),
    }
}

fn location(suite: &str, line: Option<u32>) -> String {
    match line {
        Some(l) => format!("{suite}:{l}"),
        None => suite.to_string(),
    }
}

/// Compares a run with a baseline, case by case, in the baseline's order (cases only in the
/// run come last).
pub fn compare(base: &Baseline, run: &Baseline) -> Vec<Difference> {
    let mut diffs = Vec::new();
    for b in &base.cases {
        let Some(r) = run.cases.iter().find(|r| r.case == b.case) else {
            let missing = if run.did_not_finish.contains(&b.case) {
                "did not finish"
            } else {
                "not run"
            };
            diffs.push(Difference {
                case: b.case.clone(),
                location: location(&b.suite, b.line),
                what: "case".to_string(),
                baseline: b.verdict.as_str().to_string(),
                run: missing.to_string(),
            });
            continue;
        };
        let mut push = |line: Option<u32>, what: String, bv: String, rv: String| {
            if bv != rv {
                diffs.push(Difference {
                    case: b.case.clone(),
                    location: location(&b.suite, line.or(b.line)),
                    what,
                    baseline: bv,
                    run: rv,
                });
            }
        };
        push(
            None,
            "verdict".to_string(),
            b.verdict.as_str().to_string(),
            r.verdict.as_str().to_string(),
        );
        // A case not run on one side has no calls to compare.
        if b.verdict == Verdict::Unsupported || r.verdict == Verdict::Unsupported {
            continue;
        }
        push(
            None,
            "outcome class".to_string(),
            show(&b.classification),
            show(&r.classification),
        );
        let n = b.steps.len().max(r.steps.len());
        for i in 0..n {
            match (b.steps.get(i), r.steps.get(i)) {
                (Some(bs), Some(rs)) => {
                    let label = format!(
                        "step {} {}",
                        bs.step
                            .map_or_else(|| "?".to_string(), |s| (s + 1).to_string()),
                        bs.action
                    );
                    if bs.action != rs.action || bs.step != rs.step {
                        push(
                            bs.line,
                            format!("call {}", i + 1),
                            label.clone(),
                            format!(
                                "step {} {}",
                                rs.step
                                    .map_or_else(|| "?".to_string(), |s| (s + 1).to_string()),
                                rs.action
                            ),
                        );
                        continue;
                    }
                    let fields: [(&str, String, String); 6] = [
                        (
                            "completion",
                            format!("{:?}", bs.completion).to_lowercase(),
                            format!("{:?}", rs.completion).to_lowercase(),
                        ),
                        ("http status", show(&bs.http_status), show(&rs.http_status)),
                        ("error code", show(&bs.error_code), show(&rs.error_code)),
                        ("error type", show(&bs.error_type), show(&rs.error_type)),
                        (
                            "sender fault",
                            show(&bs.sender_fault),
                            show(&rs.sender_fault),
                        ),
                        (
                            "batch Failed",
                            bs.batch_failed.join(", "),
                            rs.batch_failed.join(", "),
                        ),
                    ];
                    for (name, bv, rv) in fields {
                        push(bs.line, format!("{label}: {name}"), bv, rv);
                    }
                }
                (Some(bs), None) => push(
                    bs.line,
                    format!("call {}", i + 1),
                    bs.action.clone(),
                    "not made".to_string(),
                ),
                (None, Some(rs)) => push(
                    rs.line,
                    format!("call {}", i + 1),
                    "not made".to_string(),
                    rs.action.clone(),
                ),
                (None, None) => {}
            }
        }
    }
    for r in &run.cases {
        if !base.cases.iter().any(|b| b.case == r.case) {
            diffs.push(Difference {
                case: r.case.clone(),
                location: location(&r.suite, r.line),
                what: "case".to_string(),
                baseline: "not in baseline".to_string(),
                run: r.verdict.as_str().to_string(),
            });
        }
    }
    diffs
}

/// One line per difference, for the terminal: `suite:line: case `x`: what: baseline → run`,
/// with control characters removed (case ids come from suites, values from servers).
pub fn render_lines(diffs: &[Difference]) -> String {
    diffs
        .iter()
        .map(|d| {
            terminal(&format!(
                "{}: case `{}`: {}: {} → {}",
                d.location, d.case, d.what, d.baseline, d.run
            )) + "\n"
        })
        .collect()
}

/// `comparison.md`.
pub fn render_markdown(base: &Baseline, run: &Baseline, diffs: &[Difference]) -> String {
    let describe = |b: &Baseline| {
        format!(
            "{} ({}{}, {}, protocol {})",
            markdown_code(&b.run_id),
            markdown_text(&b.target),
            b.target_profile
                .as_deref()
                .map(|p| format!(", profile {}", markdown_text(p)))
                .unwrap_or_default(),
            markdown_text(&b.region),
            markdown_text(&b.protocol)
        )
    };
    let mut out = String::from("# Baseline comparison\n\n");
    out.push_str(&format!("- baseline: {}\n", describe(base)));
    out.push_str(&format!("- run: {}\n\n", describe(run)));
    if let Some(why) = &run.incomplete {
        out.push_str(&format!(
            "> **The run is incomplete**: {}. Cases it did not finish differ from the baseline.\n\n",
            markdown_text(why)
        ));
    }
    if diffs.is_empty() {
        out.push_str(&format!(
            "Identical: {} case(s), same verdicts, outcome classes and error shapes per step.\n",
            base.cases.len()
        ));
        return out;
    }
    let cases: std::collections::BTreeSet<&str> = diffs.iter().map(|d| d.case.as_str()).collect();
    out.push_str(&format!(
        "{} difference(s) in {} case(s).\n\n| Case | Where | What | Baseline | Run |\n|---|---|---|---|---|\n",
        diffs.len(),
        cases.len()
    ));
    for d in diffs {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            markdown_code(&d.case),
            markdown_code(&d.location),
            markdown_text(&d.what),
            markdown_text(&d.baseline),
            markdown_text(&d.run)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::fixtures::{call, case_end, case_start, run_end, run_start};
    use crate::evidence::format::EntryEvidence;

    fn records(delete_code: Option<&str>, verdict: Verdict) -> Vec<Record> {
        let mut out = vec![run_start(&["a"]), case_start("a", 10)];
        let mut recv = call("a", Phase::Step, "ReceiveMessage", 0, 10);
        recv.line = Some(12);
        recv.step = Some(0);
        let mut del = call("a", Phase::Step, "DeleteMessageBatch", 10, 20);
        del.line = Some(15);
        del.step = Some(1);
        del.handle_digest = Some("ab".repeat(32));
        del.entries = vec![EntryEvidence {
            id: "bad".to_string(),
            message: None,
            message_id: None,
            handle_digest: None,
            result: "failed".to_string(),
            code: delete_code.map(str::to_string),
            sender_fault: Some(true),
            error_message: Some("x".to_string()),
            lease_ms: None,
        }];
        let mut retried = call("a", Phase::Step, "ReceiveMessage", 20, 30);
        retried.retried = true;
        retried.http_status = Some(500);
        let obs = call("a", Phase::Observe, "ReceiveMessage", 30, 40);
        out.extend([recv, del, retried, obs].map(Record::Call));
        let mut end = case_end("a", verdict, "r", &[]);
        end.classification = Some(crate::evidence::facts::ClassName::NoRedeliveryWithinWindow);
        out.push(Record::CaseEnd(end));
        out.push(run_end(0));
        out
    }

    #[test]
    fn normalize_keeps_shapes_and_drops_handles_retries_and_observes() {
        let b = normalize(&records(Some("ReceiptHandleIsInvalid"), Verdict::Pass)).unwrap();
        assert_eq!(b.cases.len(), 1);
        let c = &b.cases[0];
        assert_eq!(c.line, Some(10));
        assert_eq!(c.steps.len(), 2);
        assert_eq!(
            c.steps[1].batch_failed,
            vec!["bad: ReceiptHandleIsInvalid (sender)"]
        );
        let json = serde_json::to_string(&b).unwrap();
        assert!(!json.contains(&"ab".repeat(32)), "{json}");
        assert_eq!(default_name(&b), "emulator-us-east-1-2025-01-01");
        let back: Baseline = serde_json::from_str(&json).unwrap();
        assert_eq!(back, b);
    }

    #[test]
    fn identical_runs_have_no_differences() {
        let a = normalize(&records(Some("ReceiptHandleIsInvalid"), Verdict::Pass)).unwrap();
        let mut b = a.clone();
        b.run_id = "other".to_string();
        assert!(compare(&a, &b).is_empty());
        assert!(render_markdown(&a, &b, &[]).contains("Identical: 1 case(s)"));
    }

    #[test]
    fn differences_name_the_case_step_line_and_values() {
        let base = normalize(&records(Some("ReceiptHandleIsInvalid"), Verdict::Pass)).unwrap();
        let run = normalize(&records(Some("InternalError"), Verdict::Fail)).unwrap();
        let diffs = compare(&base, &run);
        assert_eq!(
            render_lines(&diffs),
            "suites/ack.yaml:10: case `a`: verdict: pass → fail\n\
             suites/ack.yaml:15: case `a`: step 2 DeleteMessageBatch: batch Failed: bad: ReceiptHandleIsInvalid (sender) → bad: InternalError (sender)\n"
        );
        let md = render_markdown(&base, &run, &diffs);
        assert!(md.contains("2 difference(s) in 1 case(s)."), "{md}");
    }

    #[test]
    fn missing_and_extra_cases_and_calls_are_differences() {
        let base = normalize(&records(None, Verdict::Pass)).unwrap();
        let mut run = base.clone();
        run.cases[0].steps.pop();
        run.cases[0].case = "b".to_string();
        let diffs = compare(&base, &run);
        let whats: Vec<(&str, &str, &str)> = diffs
            .iter()
            .map(|d| (d.case.as_str(), d.baseline.as_str(), d.run.as_str()))
            .collect();
        assert_eq!(
            whats,
            vec![("a", "pass", "not run"), ("b", "not in baseline", "pass")]
        );
        let mut run = base.clone();
        run.cases[0].steps.pop();
        let diffs = compare(&base, &run);
        assert_eq!(diffs.len(), 1);
        assert_eq!(
            (diffs[0].what.as_str(), diffs[0].run.as_str()),
            ("call 2", "not made")
        );
    }

    #[test]
    fn record_text_cannot_break_the_comparison_table_or_the_terminal() {
        let mut base = normalize(&records(Some("ReceiptHandleIsInvalid"), Verdict::Pass)).unwrap();
        base.cases[0].case = "a|<b>".to_string();
        let mut run = base.clone();
        run.cases[0].steps[1].batch_failed = vec!["bad: <img src=x>|\n\u{1b}[2J".to_string()];
        let diffs = compare(&base, &run);
        let md = render_markdown(&base, &run, &diffs);
        let row = md.lines().last().unwrap();
        assert_eq!(row.matches(" | ").count(), 4, "{row}");
        assert!(!md.contains("<img"), "{md}");
        assert!(row.starts_with("| `a\\|<b>` |"), "{row}");
        let lines = render_lines(&diffs);
        assert!(!lines.contains('\u{1b}'), "{lines:?}");
        assert_eq!(lines.lines().count(), 1, "{lines:?}");
    }

    #[test]
    fn an_interrupted_run_is_marked_and_its_unfinished_cases_differ() {
        let complete = records(None, Verdict::Pass);
        let base = normalize(&complete).unwrap();
        assert_eq!(base.incomplete, None);
        let json = serde_json::to_string(&base).unwrap();
        assert!(
            !json.contains("incomplete") && !json.contains("did_not_finish"),
            "{json}"
        );

        // The same run, killed before the case ended.
        let cut: Vec<Record> = complete
            .into_iter()
            .filter(|r| !matches!(r, Record::CaseEnd(_) | Record::RunEnd(_)))
            .collect();
        let run = normalize(&cut).unwrap();
        assert_eq!(
            run.incomplete.as_deref(),
            Some(
                "it has no run_end (killed, or its evidence was cut short); 1 case(s) have no case_end"
            )
        );
        assert_eq!(run.did_not_finish, vec!["a".to_string()]);
        let diffs = compare(&base, &run);
        assert_eq!(
            render_lines(&diffs),
            "suites/ack.yaml:10: case `a`: case: pass → did not finish\n"
        );
        let md = render_markdown(&base, &run, &diffs);
        assert!(
            md.contains("> **The run is incomplete**: it has no run\\_end"),
            "{md}"
        );
    }

    #[test]
    fn no_run_start_is_an_error() {
        assert_eq!(normalize(&[]), Err(NoRunStart));
    }
}
