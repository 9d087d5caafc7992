//! `sqsprobe validate` and `sqsprobe list`: read-only views of suites.

use super::args::{ListArgs, ValidateArgs};
use super::error::{CommandError, Outcome};
use super::load::{self, Loaded};
use sqsprobe_core::suite::{Limits, Suite, case_budget};
use std::io::Write;

/// Writes to stdout; a closed pipe (`sqsprobe list | head`) ends the output, not the process.
fn out(text: std::fmt::Arguments) {
    let _ = std::io::stdout().lock().write_fmt(text);
}

fn load_or_report(
    paths: &[std::path::PathBuf],
    limits: &Limits,
) -> Result<Vec<Suite>, CommandError> {
    match load::load(paths, limits) {
        Loaded::Ok(s) => Ok(s),
        Loaded::Invalid { rendered, count } => Err(CommandError::InvalidSuites {
            rendered,
            count,
            in_a_run: false,
        }),
        Loaded::Unreadable(e) => Err(CommandError::SuitesUnreadable(e)),
    }
}

/// Checks suites; prints every error, or a one-line confirmation.
pub(super) fn validate(args: ValidateArgs) -> Result<Outcome, CommandError> {
    let limits = Limits {
        max_case_duration: args.suites.max_case_duration,
        max_slow_case_duration: args.suites.max_slow_case_duration,
        ..Limits::default()
    };
    let suites = load_or_report(&args.suites.paths, &limits)?;
    let cases: usize = suites.iter().map(|s| s.cases.len()).sum();
    out(format_args!(
        "{} suite file(s), {cases} case(s): valid\n",
        suites.len()
    ));
    Ok(Outcome::Done)
}

/// Prints one line per case: `file:line  id  [tags]  budget  source`, then a total.
pub(super) fn list(args: ListArgs) -> Result<Outcome, CommandError> {
    let limits = Limits {
        max_case_duration: args.suites.max_case_duration,
        max_slow_case_duration: args.suites.max_slow_case_duration,
        ..Limits::default()
    };
    let suites = load_or_report(&args.suites.paths, &limits)?;
    let mut rows = Vec::new();
    for s in &suites {
        for c in &s.cases {
            rows.push((
                format!("{}:{}", s.path, c.pos.line),
                c.id.clone(),
                if c.tags.is_empty() {
                    "-".to_string()
                } else {
                    c.tags.join(",")
                },
                sqsprobe_facts::duration::format(case_budget(c)),
                c.sources.first().cloned().unwrap_or_default(),
            ));
        }
    }
    let w0 = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let w1 = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    let w2 = rows.iter().map(|r| r.2.len()).max().unwrap_or(0);
    let w3 = rows.iter().map(|r| r.3.len()).max().unwrap_or(0);
    for (at, id, tags, budget, source) in &rows {
        out(format_args!(
            "{at:w0$}  {id:w1$}  {tags:w2$}  {budget:>w3$}  {source}\n"
        ));
    }
    let slow = suites
        .iter()
        .flat_map(|s| &s.cases)
        .filter(|c| c.tags.iter().any(|t| t == "slow"))
        .count();
    out(format_args!(
        "{} case(s) in {} suite file(s) ({slow} tagged slow)\n",
        rows.len(),
        suites.len()
    ));
    Ok(Outcome::Done)
}
