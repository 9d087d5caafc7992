//! Markdown summary, for a pull-request comment or a CI artefact (GitHub-flavoured tables).
//!
//! The mapping:
//! - a header: run id, target (kind, endpoint, region, target profile), which partitions of
//!   a split run it holds (and which it lacks), the totals line
//!   (known divergences count as passed, unfinished cases as errors, each clarified below),
//!   why nothing was run when the reachability check failed, a warning when the run was
//!   interrupted, and what the exit code means;
//! - first, what did not pass, worst first (fail, error, did not finish, inconclusive): a
//!   section per case with its reason and its findings as `suite:line` and message;
//! - then every case, one table row each (collapsed in `<details>` beyond 20 cases), in run
//!   order: verdict, case id and `suite:line`, the
//!   classification (for a multi-trial case, its tally: `k/N` per class with the 95%
//!   interval over every started trial, the unknown ones counted both ways), the decision, the observation window (elapsed of planned, receives used
//!   of budget, how it ended), receives, deliveries per message, duration;
//!
//! Every string taken from the records is escaped for Markdown: identifiers go in code spans
//! (with `|` escaped, as tables require), prose has Markdown punctuation and `<` `>` escaped,
//! so a suite or server cannot inject links, images or HTML into the comment.

use super::wording::{decision_name, exit_meaning, format_ms, partition_words};
use sqsprobe_core::evidence::Record;
use sqsprobe_core::evidence::format::CaseEnd;
use sqsprobe_core::evidence::view::{CaseView, RunView};
use sqsprobe_facts::text::escape::{markdown_code as code, markdown_text as text};
use std::fmt::Write;

/// Above this many cases the full table is collapsed (`<details>`): a GitHub step summary
/// then shows what did not pass on its first screen.
const OPEN_TABLE_ROWS: usize = 20;

/// Renders the Markdown summary.
pub fn render(records: &[Record]) -> String {
    let run = RunView::new(records);
    let mut out = String::new();
    header(&mut out, &run);
    let mut failing: Vec<&CaseView> = run
        .cases
        .iter()
        .filter(|c| c.state.needs_details())
        .collect();
    failing.sort_by_key(|c| c.state.attention());
    if !failing.is_empty() {
        let _ = writeln!(out, "### Did not pass ({})", failing.len());
        for case in failing {
            details(&mut out, case);
        }
        out.push('\n');
    }
    let collapsed = run.cases.len() > OPEN_TABLE_ROWS;
    if collapsed {
        let _ = writeln!(
            out,
            "<details><summary>All {} cases</summary>\n",
            run.cases.len()
        );
    } else {
        out.push_str("### All cases\n\n");
    }
    table(&mut out, &run);
    if collapsed {
        out.push_str("\n</details>\n");
    }
    out
}

fn header(out: &mut String, run: &RunView) {
    let _ = writeln!(out, "## sqsprobe run {}\n", code(run.run_id()));
    if let Some(start) = run.start {
        let mut target = vec![text(&start.target)];
        if let Some(endpoint) = &start.endpoint {
            target.push(code(endpoint));
        }
        target.push(text(&start.region));
        if let Some(profile) = &start.target_profile {
            target.push(format!("profile {}", code(profile)));
        }
        if let Some(chaos) = &start.emulator_chaos {
            target.push(format!("chaos {}", code(chaos)));
        }
        if start.clock.as_deref() == Some("virtual") {
            target.push("virtual clock (simulated timestamps and durations)".to_string());
        }
        let _ = writeln!(out, "Target: {}\n", target.join(" · "));
        if let Some((what, warning)) = partition_words(start) {
            let _ = writeln!(out, "Partitions: {}\n", text(&what));
            if let Some(warning) = warning {
                let _ = writeln!(out, "> **Partial**: {}.\n", text(&warning));
            }
        }
    }
    let totals = run.totals();
    let _ = writeln!(out, "**{}**", totals.line());
    for note in totals.notes() {
        let _ = writeln!(out, "- {note}");
    }
    out.push('\n');
    if let Some(reason) = run.unreachable_reason() {
        let _ = writeln!(out, "> **Nothing was run**: {}.\n", text(&reason));
    }
    if let Some(url) = run.redirected() {
        let _ = writeln!(
            out,
            "> **REDIRECTED**: `--target aws`, but the calls went to {}, which is not AWS: this \
             run is no evidence of what AWS does.\n",
            code(url)
        );
    }
    if run.interrupted() {
        out.push_str("> **Run interrupted**: results are partial.\n\n");
    }
    if let Some(left) = crate::report::wording::left_words(run) {
        let _ = writeln!(out, "> **Queues left behind**: {}:", text(&left.headline));
        for q in &left.queues {
            let _ = writeln!(out, "> - {}", code(q));
        }
        for sweep in &left.sweeps {
            let _ = writeln!(out, ">\n> Remove with {}", code(sweep));
        }
        out.push('\n');
    }
    match run.end {
        Some(end) => {
            let _ = writeln!(
                out,
                "Exit {}: {}.\n",
                end.exit_code,
                exit_meaning(end.exit_code)
            );
            if let Some(requests) = end.requests {
                let fifo = end.fifo_requests.unwrap_or(0);
                let _ = writeln!(
                    out,
                    "{}.\n",
                    text(&sqsprobe_facts::sqs::pricing::cost_line(
                        requests.saturating_sub(fifo),
                        fifo,
                        run.start.map_or("us-east-1", |s| s.region.as_str())
                    ))
                );
            }
        }
        None => out.push_str("No exit code recorded (no `run_end`).\n\n"),
    }
}

fn table(out: &mut String, run: &RunView) {
    if run.cases.is_empty() {
        out.push_str("No cases.\n");
        return;
    }
    out.push_str(
        "| Verdict | Case | Class | Decision | Window | Receives | Deliveries | Duration |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|---|\n");
    for case in &run.cases {
        let verdict = if case.state.is_passing() {
            case.state.word().to_string()
        } else {
            format!("**{}**", case.state.word())
        };
        let mut name = code(case.id);
        let location = case.location();
        if !location.is_empty() {
            let _ = write!(name, " {}", code(&location));
        }
        let end = case.end;
        let _ = writeln!(
            out,
            "| {verdict} | {name} | {} | {} | {} | {} | {} | {} |",
            end.map_or_else(dash, class),
            end.and_then(|e| e.decision)
                .map_or_else(dash, |d| decision_name(d).to_string()),
            end.map_or_else(dash, window),
            end.map_or_else(dash, |e| e.receives.to_string()),
            end.map_or_else(dash, deliveries),
            case.duration_ms().map_or_else(dash, format_ms),
        );
    }
}

fn details(out: &mut String, case: &CaseView) {
    let _ = write!(out, "\n#### {} {}", case.state.label(), code(case.id));
    let location = case.location();
    if !location.is_empty() {
        let _ = write!(out, " ({})", code(&location));
    }
    let _ = writeln!(out, "\n\n{}", text(&case.reason()));
    let findings = case.findings();
    if !findings.is_empty() {
        out.push('\n');
        for (at, message) in findings {
            let _ = writeln!(out, "- {} {}", code(&at), text(message));
        }
    }
}

/// The observation class, or for a multi-trial case its tally (`k/N` per class with the 95%
/// interval over every started trial).
fn class(end: &CaseEnd) -> String {
    match (&end.trials, &end.classification) {
        (Some(trials), _) => text(&sqsprobe_core::classify::trials::tally(trials)),
        (None, Some(class)) => code(class.as_str()),
        (None, None) => dash(),
    }
}

fn dash() -> String {
    "–".to_string()
}

fn window(end: &CaseEnd) -> String {
    match &end.window {
        Some(w) => format!(
            "{} of {}, {}/{} receives, {}",
            format_ms(w.elapsed_ms),
            format_ms(w.planned_ms),
            w.receives_used,
            w.receive_budget,
            code(w.ended.as_str())
        ),
        None => dash(),
    }
}

fn deliveries(end: &CaseEnd) -> String {
    if end.deliveries.is_empty() {
        return dash();
    }
    end.deliveries
        .iter()
        .map(|(label, n)| format!("{}×{n}", code(label)))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_core::evidence::fixtures::*;

    #[test]
    fn full_run_snapshot() {
        let expected = "\
## sqsprobe run `run-1`

Target: embedded · `http://127.0.0.1:4566` · us-east-1 · profile `emulator`

**2 passed, 1 failed, 1 inconclusive, 1 error**
- 1 of the passes is a known divergence of the target profile

Exit 4: at least one expectation did not hold.

12 SQS requests ≈ $0.000005 at AWS list prices ($0.40/million standard, $0.50/million FIFO, us-east-1, as published 2026-06; the monthly free million not assumed).

### Did not pass (3)

#### FAIL `old-handle` (`suites/ack.yaml:50`)

1 expectation did not hold

- `suites/ack.yaml:61` expected redelivery of m1, none within 2 s

#### ERROR `broken` (`suites/ack.yaml:120`)

queue setup failed

- `suites/ack.yaml:121` CreateQueue returned 500

#### INCONCLUSIVE `no-window` (`suites/ack.yaml:80`)

observation throttled

- `suites/ack.yaml:90` receive budget exhausted

### All cases

| Verdict | Case | Class | Decision | Window | Receives | Deliveries | Duration |
|---|---|---|---|---|---|---|---|
| pass | `stale-ack` `suites/ack.yaml:10` | `observed_redelivery` | RECONCILE | 1.0 s of 1.0 s, 1/10 receives, `all_seen` | 3 | `m1`×3 | 2.5 s |
| **fail** | `old-handle` `suites/ack.yaml:50` | `observed_redelivery` | HOLD | – | 0 | – | 1.5 s |
| **inconclusive** | `no-window` `suites/ack.yaml:80` | – | – | – | 0 | – | 1.5 s |
| known_divergence | `fifo-div` `suites/ack.yaml:100` | – | – | – | 0 | – | 1.5 s |
| **error** | `broken` `suites/ack.yaml:120` | – | – | – | 0 | – | 1.5 s |
";
        assert_eq!(render(&full_run()), expected);
    }

    #[test]
    fn a_multi_trial_case_shows_k_of_n_with_its_interval() {
        let out = render(&trials_run());
        assert!(
            out.contains("| **inconclusive** | `stale-rate` `suites/ack.yaml:10` | 3 trials: no\\_redelivery\\_within\\_window 2/3 \\[9.4%, 99.2%\\], observed\\_redelivery 1/3 \\[0.84%, 90.6%\\] | – |"),
            "{out}"
        );
    }

    #[test]
    fn chaos_is_shown_in_the_header() {
        let mut records = full_run();
        if let Some(Record::RunStart(start)) = records.first_mut() {
            start.emulator_chaos =
                Some("stale-delete-keeps=1,redeliver-after-delete=0,seed=0".into());
        }
        let out = render(&records);
        assert!(out.contains(
            "profile `emulator` · chaos `stale-delete-keeps=1,redeliver-after-delete=0,seed=0`\n"
        ), "{out}");
        assert!(!render(&full_run()).contains("chaos"));
    }

    #[test]
    fn a_virtual_clock_is_shown_in_the_header() {
        let mut records = full_run();
        if let Some(Record::RunStart(start)) = records.first_mut() {
            start.clock = Some("virtual".into());
        }
        assert!(
            render(&records).contains(" · virtual clock (simulated timestamps and durations)\n")
        );
        assert!(!render(&full_run()).contains("virtual clock"));
    }

    #[test]
    fn a_failed_reachability_check_says_nothing_was_run() {
        let records = unreachable_run(&["a"]);
        let out = render(&records);
        assert!(out.contains("> **Nothing was run**: the target could not be reached: ListQueues failed: no response: connection refused."), "{out}");
        assert!(
            out.contains("1 of the errors is the reachability check"),
            "{out}"
        );
    }

    /// A long run's table is collapsed; what did not pass stays open above it.
    #[test]
    fn a_long_table_is_collapsed_below_what_did_not_pass() {
        let ids: Vec<String> = (0..25).map(|i| format!("c{i}")).collect();
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let mut records = vec![run_start(&refs)];
        for id in &ids {
            let verdict = if id == "c7" {
                sqsprobe_core::evidence::format::Verdict::Fail
            } else {
                sqsprobe_core::evidence::format::Verdict::Pass
            };
            records.push(Record::CaseEnd(case_end(id, verdict, "why", &[])));
        }
        records.push(run_end(sqsprobe_facts::exit_code::EXPECTATION_FAILED));
        let out = render(&records);
        let failing = out.find("#### FAIL `c7`").expect("the failure is listed");
        let table = out
            .find("<details><summary>All 25 cases</summary>")
            .expect("collapsed");
        assert!(failing < table, "{out}");
        assert!(out.trim_end().ends_with("</details>"), "{out}");
    }

    #[test]
    fn interrupted_run_snapshot() {
        let expected = "\
## sqsprobe run `run-1`

Target: embedded · `http://127.0.0.1:4566` · us-east-1 · profile `emulator`

**1 passed, 0 failed, 0 inconclusive, 1 error**
- 1 of the errors did not finish: the run was interrupted
- 1 selected case was not started

> **Run interrupted**: results are partial.

No exit code recorded (no `run_end`).

### Did not pass (1)

#### DID-NOT-FINISH `cut` (`suites/ack.yaml:30`)

did not finish (run interrupted)

### All cases

| Verdict | Case | Class | Decision | Window | Receives | Deliveries | Duration |
|---|---|---|---|---|---|---|---|
| pass | `done` `suites/ack.yaml:10` | – | – | – | 0 | – | 1.5 s |
| **did not finish** | `cut` `suites/ack.yaml:30` | – | – | – | – | – | 900 ms |
| **not started** | `never` | – | – | – | – | – | – |
";
        assert_eq!(render(&interrupted_run()), expected);
    }
}
