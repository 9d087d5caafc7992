//! The audit's reports (pure): `audit.json`, `summary.md`, `junit.xml` and the terminal's
//! lines, from one [`Audit`].
//!
//! JUnit: one `<testsuite>` named `sqsprobe audit`, one `<testcase>` per message (its
//! MessageId, classname its business key), a `<failure>` naming each finding of it, and one
//! `<testcase>` `unplaced acknowledgements` with a `<failure>` for the acknowledgements that
//! named no message (invalid handles), and one `effects` for what the ledger and the forwards
//! hold that no message accounts for; a consumer that could not be judged to the end (it
//! crashed, the audit ran out of time) is one `<error>` test case `consumer`.

use std::fmt::Write;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::judge::{Audit, Finding};
use sqsprobe_facts::text::escape::{markdown_code as code, markdown_text as text};

/// How the consumer's run ended, for the reports.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Ended {
    /// One line: `exited 0`, `crashed: exit 1`, `stopped after --idle 3s with nothing in
    /// flight`, `stopped at --max-duration 2m with 3 messages in flight`.
    pub how: String,
    /// Whether the audit could conclude: every message deleted and nothing in flight, or the
    /// consumer ended by itself.
    pub concluded: bool,
    /// The consumer's own exit status, when it ended by itself.
    pub exit_status: Option<i32>,
    /// Under `--nemesis`: what it was asked, its points, and what it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nemesis: Option<super::nemesis::Record>,
    /// The consumer ended by itself with a failure (a non-zero exit or a signal the audit did
    /// not send): never a clean audit, and a JUnit error carrying [`Ended::log_tail`].
    #[serde(default)]
    pub crashed: bool,
    /// When it crashed: the last lines of `consumer.log` (its stdout and stderr), masked as
    /// the evidence is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub log_tail: Vec<String>,
}

/// What the reports say of the queues the consumer used that the audit did not make.
fn foreign_line(audit: &Audit) -> Option<String> {
    if audit.foreign_queues.is_empty() {
        return None;
    }
    let named: Vec<String> = audit.foreign_queues.iter().map(|q| q.line()).collect();
    Some(format!(
        "the consumer used queue(s) the audit did not make: {}; the plan's queues are in \
         SQSPROBE_QUEUE_URL and SQSPROBE_QUEUE_URL_<NAME>",
        named.join("; ")
    ))
}

/// The exit code of audits, each its judgement, whether it concluded and whether the consumer
/// crashed: 4 when one found something definite (or ended judged with a finding), else 5 when
/// one could not conclude, could not see the work (no ledger) or crashed, else 0: never a clean
/// exit without proof of work.
pub(crate) fn exit_code(outcomes: &[(&Audit, bool, bool)]) -> i32 {
    use sqsprobe_facts::exit_code;
    let definite = outcomes.iter().any(|(audit, concluded, _)| {
        audit
            .findings
            .iter()
            .any(|f| f.kind != super::judge::FindingKind::NeverAcked)
            || (*concluded && !audit.findings.is_empty())
    });
    if definite {
        exit_code::EXPECTATION_FAILED
    } else if outcomes
        .iter()
        .any(|(audit, concluded, crashed)| !concluded || !audit.clean || *crashed)
    {
        exit_code::INCONCLUSIVE
    } else {
        exit_code::OK
    }
}

/// `audit.json`: the judgement, and how the run ended.
pub(crate) fn json(audit: &Audit, ended: &Ended) -> String {
    #[derive(serde::Serialize)]
    struct Out<'a> {
        #[serde(flatten)]
        audit: &'a Audit,
        ended: &'a Ended,
    }
    serde_json::to_string_pretty(&Out { audit, ended }).unwrap_or_default() + "\n"
}

fn finding_line(f: &Finding) -> String {
    let mut what = vec![f.kind.as_str().to_string(), f.decision.as_str().to_string()];
    if let Some(key) = &f.business_key {
        what.push(key.clone());
    }
    if let Some(a) = f.attempt {
        what.push(format!("attempt {a}"));
    }
    format!("{}: {}", what.join(" · "), f.detail)
}

/// The terminal's lines: each finding, then the counts and the verdict.
pub(crate) fn terminal(audit: &Audit, ended: &Ended, run_dir: &str) -> String {
    let mut out = String::new();
    for f in &audit.findings {
        let _ = writeln!(
            out,
            "FINDING  {}",
            sqsprobe_facts::text::escape::terminal(&finding_line(f))
        );
    }
    let counts: Vec<String> = audit
        .counts
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    let _ = writeln!(
        out,
        "{} messages, {} finding{}{}; consumer {}",
        audit.messages,
        audit.findings.len(),
        if audit.findings.len() == 1 { "" } else { "s" },
        if counts.is_empty() {
            String::new()
        } else {
            format!(" ({})", counts.join(", "))
        },
        sqsprobe_facts::text::escape::terminal(&ended.how)
    );
    if let Some(nemesis) = &ended.nemesis {
        let _ = writeln!(
            out,
            "{}",
            sqsprobe_facts::text::escape::terminal(&nemesis.line())
        );
    }
    if ended.crashed && !ended.log_tail.is_empty() {
        out.push_str("the consumer crashed; the last lines of consumer.log:\n");
        for line in &ended.log_tail {
            let _ = writeln!(out, "  | {}", sqsprobe_facts::text::escape::terminal(line));
        }
    }
    if let Some(line) = foreign_line(audit) {
        let _ = writeln!(out, "{}", sqsprobe_facts::text::escape::terminal(&line));
    }
    if !audit.ledger {
        out.push_str(&not_checked_line());
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "audit folder: {}",
        sqsprobe_facts::text::escape::terminal(run_dir)
    );
    out
}

/// What an audit without a ledger could not check, in one line.
fn not_checked_line() -> String {
    "no ledger was written (SQSPROBE_LEDGER, SQSPROBE_LEDGER_URL) and the plan names no output \
     queue: the work was not checked (ack_before_commit, duplicate_commit, lost_work and \
     unmatched_commit), so no message is ACCEPT and the audit is not clean (exit 5)"
        .to_string()
}

/// `summary.md`: the verdict, the findings first, then every message.
pub(crate) fn summary(audit: &Audit, ended: &Ended) -> String {
    let mut out = String::from("## sqsprobe audit\n\n");
    let verdict = if audit.clean && ended.concluded && !ended.crashed {
        "clean".to_string()
    } else if ended.crashed && audit.findings.is_empty() {
        "**not clean: the consumer crashed**".to_string()
    } else if !audit.findings.is_empty() {
        format!("**{} finding(s)**", audit.findings.len())
    } else if !audit.ledger {
        "**not clean: the work was not checked**".to_string()
    } else {
        "**could not conclude**".to_string()
    };
    let _ = writeln!(
        out,
        "{} messages: {verdict}. Consumer: {}.\n",
        audit.messages,
        text(&ended.how)
    );
    if let Some(nemesis) = &ended.nemesis {
        let _ = writeln!(out, "{}.\n", text(&nemesis.line()));
    }
    if !audit.ledger {
        let _ = writeln!(out, "> {}\n", text(&not_checked_line()));
    }
    if let Some(line) = foreign_line(audit) {
        let _ = writeln!(out, "> {}\n", text(&line));
    }
    if ended.crashed && !ended.log_tail.is_empty() {
        // An indented block: Markdown shows it as it is, whatever the consumer printed.
        out.push_str("### The consumer crashed: the last lines of `consumer.log`\n\n");
        for line in &ended.log_tail {
            let _ = writeln!(out, "    {line}");
        }
        out.push('\n');
    }
    if !audit.findings.is_empty() {
        out.push_str("### Findings\n\n");
        for f in &audit.findings {
            let _ = writeln!(
                out,
                "- {} ({}){}{}: {}",
                code(f.kind.as_str()),
                f.decision.as_str(),
                f.business_key
                    .as_deref()
                    .map(|k| format!(" {}", code(k)))
                    .unwrap_or_default(),
                f.attempt
                    .map(|a| format!(" attempt {a}"))
                    .unwrap_or_default(),
                text(&f.detail)
            );
        }
        out.push('\n');
    }
    out.push_str("### Messages\n\n| Business key | Deliveries | Acks | Commits | Deleted | Decision | Findings |\n|---|---|---|---|---|---|---|\n");
    for m in &audit.per_message {
        let findings: Vec<String> = m.findings.iter().map(|k| code(k.as_str())).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            m.business_key.as_deref().map_or("–".to_string(), code),
            m.deliveries,
            m.acks,
            m.commits.map_or("–".to_string(), |c| c.to_string()),
            if m.deleted { "yes" } else { "**no**" },
            m.decision.as_str(),
            if findings.is_empty() {
                "–".to_string()
            } else {
                findings.join(", ")
            }
        );
    }
    out
}

/// `junit.xml`.
pub(crate) fn junit(audit: &Audit, ended: &Ended) -> String {
    let mut report = Report::new("sqsprobe audit");
    let mut suite = TestSuite::new("sqsprobe audit");
    suite.add_property(Property::new(
        "ledger",
        if audit.ledger { "true" } else { "false" },
    ));
    suite.add_property(Property::new("consumer", &ended.how));
    if let Some(nemesis) = &ended.nemesis {
        suite.add_property(Property::new("nemesis", nemesis.line()));
    }
    if !audit.ledger {
        // The work checks are a case of their own: not run is not passed.
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status
            .set_type("not_checked")
            .set_message(not_checked_line());
        suite.add_test_case(TestCase::new("work", status));
    }
    if let Some(line) = foreign_line(audit) {
        suite.add_property(Property::new("foreign_queues", line));
    }
    if ended.crashed {
        // A crash is the consumer's error, not a finding of one message: the cause is in
        // what it printed last.
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status
            .set_type("crashed")
            .set_message(format!("the consumer {}", ended.how))
            .set_description(ended.log_tail.join("\n"));
        let mut case = TestCase::new("consumer", status);
        case.set_system_err(ended.log_tail.join("\n"));
        suite.add_test_case(case);
    } else if !ended.concluded {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status
            .set_type("not_concluded")
            .set_message(format!("the audit could not conclude: {}", ended.how));
        suite.add_test_case(TestCase::new("consumer", status));
    }
    let failure = |findings: Vec<&Finding>| {
        if findings.is_empty() {
            return TestCaseStatus::success();
        }
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
        let names: Vec<&str> = findings.iter().map(|f| f.kind.as_str()).collect();
        status
            .set_type(names[0])
            .set_message(names.join(", "))
            .set_description(
                findings
                    .iter()
                    .map(|f| finding_line(f))
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
        status
    };
    for m in &audit.per_message {
        let of: Vec<&Finding> = audit
            .findings
            .iter()
            .filter(|f| f.message.as_deref() == Some(m.message.as_str()))
            .collect();
        let mut case = TestCase::new(m.message.clone(), failure(of));
        case.set_classname(m.business_key.clone().unwrap_or_default());
        case.add_property(Property::new("decision", m.decision.as_str()));
        suite.add_test_case(case);
    }
    // Findings of no judged message: acknowledgements that named none, and what the channels
    // hold that no message accounts for (a forward, a stray ledger line).
    let (unplaced, effects): (Vec<&Finding>, Vec<&Finding>) = audit
        .findings
        .iter()
        .filter(|f| {
            f.message
                .as_ref()
                .is_none_or(|id| !audit.per_message.iter().any(|m| &m.message == id))
        })
        .partition(|f| {
            matches!(
                f.kind,
                super::judge::FindingKind::InvalidHandle | super::judge::FindingKind::UnplacedAck
            )
        });
    for (name, of) in [
        ("unplaced acknowledgements", unplaced),
        ("effects", effects),
    ] {
        if !of.is_empty() {
            suite.add_test_case(TestCase::new(name, failure(of)));
        }
    }
    report.add_test_suite(suite);
    report
        .to_string()
        .expect("quick-junit serialises into memory, which cannot fail")
}

/// Each finding kind over the trials of an audit (`--trials N`): in how many trials it was
/// found, as a rate with the interval of a case's trials (`classify::rate::Sample`: a trial
/// that could not conclude counted both ways).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Rates {
    pub trials: u32,
    /// Trials that could not conclude (messages still in flight at `--max-duration`).
    pub unknown: u32,
    /// Per kind: in how many trials it was found, and the 95% interval of that rate.
    pub kinds: std::collections::BTreeMap<String, KindRate>,
}

/// One kind's rate over the trials.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct KindRate {
    pub found: u32,
    pub interval: [f64; 2],
}

/// The rates of `done`, `n` trials started.
pub(crate) fn rates(done: &[(Audit, Ended)], n: u32) -> Rates {
    let unknown = done.iter().filter(|(_, e)| !e.concluded).count() as u32;
    let mut kinds = std::collections::BTreeMap::new();
    let lambda = super::judge::FindingKind::LAMBDA;
    for kind in super::judge::FindingKind::ALL.into_iter().chain(lambda) {
        // The Lambda kinds only where an audit counted them (`--lambda`).
        let counted =
            |a: &Audit| a.counts.contains_key(kind.as_str()) || a.unchecked.contains(&kind);
        if lambda.contains(&kind) && !done.iter().any(|(a, _)| counted(a)) {
            continue;
        }
        // A trial that did not check this kind (no ledger for the work's kinds) is unknown
        // for it, as one that did not conclude is; a kind no trial checked is not reported.
        let unchecked = |a: &Audit| a.unchecked.contains(&kind);
        if done.iter().all(|(a, _)| unchecked(a)) {
            continue;
        }
        let found = done
            .iter()
            .filter(|(a, e)| {
                e.concluded && !unchecked(a) && a.findings.iter().any(|f| f.kind == kind)
            })
            .count() as u32;
        let unknown_here = done
            .iter()
            .filter(|(a, e)| !e.concluded || unchecked(a))
            .count() as u32;
        let (low, high) = sqsprobe_core::classify::rate::Sample {
            k: found,
            unknown: unknown_here,
            n,
        }
        .interval();
        kinds.insert(
            kind.as_str().to_string(),
            KindRate {
                found,
                interval: [low, high],
            },
        );
    }
    Rates {
        trials: n,
        unknown,
        kinds,
    }
}

impl Rates {
    /// `trials.json`.
    pub(crate) fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// One line per kind: `stale_handle_ack in 5 of 5 trials [47.8%, 100%]`.
    pub(crate) fn terminal(&self) -> String {
        let mut out = format!(
            "{} trials{}:\n",
            self.trials,
            if self.unknown > 0 {
                format!(" ({} could not conclude, counted both ways)", self.unknown)
            } else {
                String::new()
            }
        );
        for (kind, r) in &self.kinds {
            let _ = writeln!(
                out,
                "  {kind} in {} of {} trials [{}, {}]",
                r.found,
                self.trials,
                sqsprobe_core::classify::rate::percent(r.interval[0]),
                sqsprobe_core::classify::rate::percent(r.interval[1])
            );
        }
        out
    }
}
