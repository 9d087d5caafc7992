//! The report page: header, what the run found, and every case one click away.
//!
//! The mapping:
//! - a header saying what the target was in words (the embedded emulator and its chaos spec,
//!   an endpoint with its target profile, or AWS and its region), the sqsprobe version, the
//!   seed (`run_start.seed`, else an older file's chaos `seed=`), the run id, start and
//!   duration, which partitions of a split run it holds (and which it lacks), the totals line
//!   with its clarifications, a failed reachability check, interruption, and what the exit
//!   code means;
//! - two bars: cases by verdict and by observation class (a multi-trial case counted apart:
//!   its trials have a class each);
//! - the cases that did not pass (fail, error, did not finish, inconclusive, known
//!   divergence), worst first, one line each: verdict, id, the first finding's `suite:line`
//!   and the reason. Each line opens into the case;
//! - the experiments: cases that passed with an observation the playbook decided on
//!   (`case_end.classification` and `decision`), open when there are at most six (the playbook's), so their
//!   timelines are on the first screens;
//! - every other case grouped by suite, collapsed, one line each (verdict, id, class →
//!   decision, duration), opening into the case;
//! - a case: title and `suite:line`, reason, findings (`suite:line`), behaviour and sources
//!   (links only for `http(s)`), classification, decision with the playbook's meaning, window,
//!   receives, deliveries, queue cleanup, profile note, trials when the case ran several,
//!   per-message outcomes, the timeline ([`super::picture`], [`super::timeline`]) and the
//!   calls table ([`super::calls`]).
//!
//! No external asset and no script: CSS and SVG are inline, `<details>` opens and closes
//! natively, and hover text is SVG `<title>` and HTML `title`. Everything taken from the records
//! is escaped by `sqsprobe_facts::text::escape`: element content with `html_text`, attribute values with
//! `html_attr`. Suite authors control ids, titles, behaviour and sources; servers control error
//! codes, messages and request ids.

use super::super::wording::{decision_name, exit_meaning, format_ms, partition_words};
use super::parts::{case_anchor, findings, state_class};
use super::style::CSS;
use super::{calls, timeline, trials};
use sqsprobe_core::evidence::Record;
use sqsprobe_core::evidence::format::{CaseEnd, Decision, DenyEnd, RunStart, Verdict};
use sqsprobe_core::evidence::view::{CaseState, CaseView, RunView};
use sqsprobe_facts::text::escape::{html_attr as attr, html_text as esc};
use std::fmt::Write;

/// Renders the whole report as one HTML document.
pub fn render(records: &[Record]) -> String {
    let run = RunView::new(records);
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>sqsprobe run {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(run.run_id())
    );
    out.push_str(super::style::DEFS);
    header(&mut out, &run);
    overview(&mut out, &run);
    out.push_str("</body>\n</html>\n");
    out
}

/// What the target was, in words.
pub(crate) fn target_words(start: &RunStart) -> String {
    let mut words = match start.target.as_str() {
        "embedded" => match &start.emulator_chaos {
            Some(chaos) => format!("the embedded emulator with chaos {chaos}"),
            None => "the embedded emulator, exact (no chaos)".to_string(),
        },
        "aws" => match &start.endpoint {
            Some(endpoint) => format!("AWS in {}, through {endpoint}", start.region),
            None => format!("AWS in {}", start.region),
        },
        _ => format!(
            "an SQS endpoint at {}",
            start.endpoint.as_deref().unwrap_or("(unrecorded)")
        ),
    };
    if let Some(profile) = &start.target_profile {
        words.push_str(&format!(", target profile {profile}"));
    }
    if start.protocol != sqsprobe_facts::sqs::protocol::Protocol::Json {
        words.push_str(&format!(", over the {} protocol", start.protocol.as_str()));
    }
    words
}

/// The seed the run recorded: `run_start.seed` (faults and trials), else, in files written
/// before it existed, the emulator chaos spec's `seed=`.
fn seed(start: &RunStart) -> Option<String> {
    start.seed.map(|s| s.to_string()).or_else(|| {
        start
            .emulator_chaos
            .as_deref()?
            .split(',')
            .find_map(|kv| kv.strip_prefix("seed="))
            .map(str::to_string)
    })
}

fn header(out: &mut String, run: &RunView) {
    let _ = writeln!(
        out,
        "<header>\n<h1>sqsprobe run <code>{}</code></h1>",
        esc(run.run_id())
    );
    if let Some(start) = run.start {
        let _ = write!(
            out,
            "<p class=\"target\">Target: <strong>{}</strong> · sqsprobe {}",
            esc(&target_words(start)),
            esc(&start.sqsprobe_version)
        );
        if let Some(seed) = seed(start) {
            let _ = write!(out, " · seed {}", esc(&seed));
        }
        out.push_str("</p>\n<dl class=\"kv\">\n");
        if let Some(endpoint) = &start.endpoint {
            kv(out, "endpoint", &code(endpoint));
        }
        kv(out, "region", &esc(&start.region));
        kv(out, "started", &esc(&start.started_at));
        if start.clock.as_deref() == Some("virtual") {
            kv(
                out,
                "clock",
                "virtual: timestamps, durations and timelines are simulated time",
            );
        }
        if let Some(end) = run.end {
            kv(out, "duration", &format_ms(end.duration_ms));
        }
        if !start.suites.is_empty() {
            let suites: Vec<String> = start.suites.iter().map(|s| code(s)).collect();
            kv(out, "suites", &suites.join(" "));
        }
        let partition = partition_words(start);
        if let Some((what, _)) = &partition {
            kv(out, "partitions", &esc(what));
        }
        out.push_str("</dl>\n");
        if let Some((_, Some(warning))) = &partition {
            let _ = writeln!(out, "<p class=\"banner\">{}.</p>", esc(warning));
        }
    }
    let totals = run.totals();
    let _ = writeln!(
        out,
        "<p class=\"totals\"><strong>{}</strong></p>",
        esc(&totals.line())
    );
    let notes = totals.notes();
    if !notes.is_empty() {
        out.push_str("<ul class=\"notes\">\n");
        for note in notes {
            let _ = writeln!(out, "<li>{}</li>", esc(&note));
        }
        out.push_str("</ul>\n");
    }
    if let Some(reason) = run.unreachable_reason() {
        let _ = writeln!(
            out,
            "<p class=\"banner\">Nothing was run: {}.</p>",
            esc(&reason)
        );
    }
    if let Some(url) = run.redirected() {
        let _ = writeln!(
            out,
            "<p class=\"banner\">REDIRECTED: <code>--target aws</code>, but the calls went to \
             <code>{}</code>, which is not AWS: this run is no evidence of what AWS does.</p>",
            esc(url)
        );
    }
    if run.interrupted() {
        out.push_str("<p class=\"banner\">Run interrupted: results are partial.</p>\n");
    }
    if let Some(left) = crate::report::wording::left_words(run) {
        let _ = writeln!(
            out,
            "<div class=\"banner\"><p>Queues left behind: {}:</p><ul>",
            esc(&left.headline)
        );
        for q in &left.queues {
            let _ = writeln!(out, "<li><code>{}</code></li>", esc(q));
        }
        out.push_str("</ul>");
        for sweep in &left.sweeps {
            let _ = writeln!(out, "<p>Remove with <code>{}</code></p>", esc(sweep));
        }
        out.push_str("</div>\n");
    }
    match run.end {
        Some(end) => {
            let _ = writeln!(
                out,
                "<p>Exit {}: {}.</p>",
                end.exit_code,
                esc(exit_meaning(end.exit_code))
            );
        }
        None => out.push_str("<p>No exit code recorded (no <code>run_end</code>).</p>\n"),
    }
    out.push_str("</header>\n");
}

const BAR_STATES: [CaseState; 8] = [
    CaseState::Finished(Verdict::Pass),
    CaseState::Finished(Verdict::KnownDivergence),
    CaseState::Finished(Verdict::Fail),
    CaseState::Finished(Verdict::Error),
    CaseState::DidNotFinish,
    CaseState::Finished(Verdict::Inconclusive),
    CaseState::Finished(Verdict::Unsupported),
    CaseState::NotStarted,
];

const CLASSES: [&str; 4] = [
    "no_redelivery_within_window",
    "delivered",
    "observed_redelivery",
    "inconclusive",
];

fn overview(out: &mut String, run: &RunView) {
    if run.cases.is_empty() {
        out.push_str("<p>No cases.</p>\n");
        return;
    }
    out.push_str("<section class=\"found\">\n<h2>What the run found</h2>\n");
    let verdicts: Vec<(String, &str, usize)> = BAR_STATES
        .iter()
        .map(|&s| {
            let n = run.cases.iter().filter(|c| c.state == s).count();
            (s.word().to_string(), state_class(s), n)
        })
        .collect();
    bar(out, "by verdict", &verdicts);
    let mut classes: Vec<(String, &str, usize)> = CLASSES
        .iter()
        .map(|&class| {
            let n = run
                .case_ends()
                .filter(|e| e.classification.map(|c| c.as_str()) == Some(class))
                .count();
            (class.to_string(), class, n)
        })
        .collect();
    let other = run
        .case_ends()
        .filter(|e| {
            e.classification
                .map(|c| c.as_str())
                .is_some_and(|c| !CLASSES.contains(&c))
        })
        .count();
    classes.push(("other class".to_string(), "other", other));
    // A multi-trial case has a class per trial, not one: counted apart, its tally inside.
    let pooled = run.case_ends().filter(|e| e.trials.is_some()).count();
    classes.push((
        "multi-trial (a class per trial)".to_string(),
        "pooled",
        pooled,
    ));
    let unobserved = run
        .case_ends()
        .filter(|e| e.classification.is_none() && e.trials.is_none())
        .count();
    classes.push(("no observation".to_string(), "none", unobserved));
    bar(out, "by observation class", &classes);
    out.push_str("</section>\n");

    let mut listed: Vec<&CaseView> = run
        .cases
        .iter()
        .filter(|c| c.state.attention().is_some())
        .collect();
    listed.sort_by_key(|c| c.state.attention());
    let _ = writeln!(
        out,
        "<section class=\"attention\">\n<h2>Did not pass ({})</h2>",
        listed.len()
    );
    if listed.is_empty() {
        out.push_str("<p>Every case that ran passed.</p>\n");
    }
    for case in listed {
        case_section(out, case, false);
    }
    out.push_str("</section>\n");

    let experiments: Vec<&CaseView> = run.cases.iter().filter(|c| is_experiment(c)).collect();
    if !experiments.is_empty() {
        let open = experiments.len() <= OPEN_EXPERIMENTS;
        let _ = writeln!(
            out,
            "<section class=\"experiments\">\n<h2>Experiments and their decisions ({})</h2>\n\
             <p class=\"note\">The cases that passed with an observation judged by the playbook{}.</p>",
            experiments.len(),
            if open { ", open" } else { "" }
        );
        for case in experiments {
            case_section(out, case, open);
        }
        out.push_str("</section>\n");
    }

    out.push_str("<section class=\"suites\">\n<h2>Everything else, by suite</h2>\n");
    let rest = |c: &&CaseView| c.state.attention().is_none() && !is_experiment(c);
    if !run.cases.iter().any(|c| rest(&c)) {
        out.push_str("<p class=\"note\">Nothing else.</p>\n");
    }
    for suite in run.suites().into_iter().map(Some).chain([None]) {
        let cases: Vec<&CaseView> = run
            .cases
            .iter()
            .filter(|c| c.suite == suite && rest(c))
            .collect();
        if cases.is_empty() {
            continue;
        }
        let mut counts: Vec<String> = Vec::new();
        for s in BAR_STATES {
            let n = cases.iter().filter(|c| c.state == s).count();
            if n > 0 {
                counts.push(format!("{n} {}", s.word()));
            }
        }
        let _ = writeln!(
            out,
            "<details class=\"suite\"><summary><code>{}</code> <small>{}</small></summary>",
            esc(suite.unwrap_or("(not started: suite unknown)")),
            esc(&counts.join(", "))
        );
        for case in cases {
            case_section(out, case, false);
        }
        out.push_str("</details>\n");
    }
    out.push_str("</section>\n");
}

/// A proportional bar with its legend: `(label, class, count)` per segment.
fn bar(out: &mut String, what: &str, segments: &[(String, &str, usize)]) {
    let _ = write!(
        out,
        "<div class=\"bar-row\"><span class=\"bar-name\">{}</span><div class=\"bar\">",
        esc(what)
    );
    for (label, class, n) in segments.iter().filter(|s| s.2 > 0) {
        let _ = write!(
            out,
            "<span class=\"seg {}\" style=\"flex-grow:{n}\" title=\"{n} {}\"></span>",
            attr(class),
            attr(label)
        );
    }
    out.push_str("</div><ul class=\"bar-legend\">");
    for (label, class, n) in segments.iter().filter(|s| s.2 > 0) {
        let _ = write!(
            out,
            "<li><span class=\"sw {}\"></span>{} <strong>{n}</strong></li>",
            attr(class),
            esc(label)
        );
    }
    out.push_str("</ul></div>\n");
}

/// Up to this many experiments are shown open on the opening screen.
const OPEN_EXPERIMENTS: usize = 6;

/// A case that passed with an observation (`classification`) the playbook decided on
/// (`decision`): the experiments a design review is about, shown before the rest.
fn is_experiment(case: &CaseView) -> bool {
    case.state.attention().is_none()
        && case
            .end
            .is_some_and(|e| e.classification.is_some() && e.decision.is_some())
}

/// A case: one summary line opening into everything recorded about it (open already when
/// `open`).
fn case_section(out: &mut String, case: &CaseView, open: bool) {
    let _ = write!(
        out,
        "<details class=\"case\"{}><summary>{} <code>{}</code>",
        if open { " open" } else { "" },
        badge(case.state),
        esc(case.id)
    );
    if case.state.attention().is_some() {
        let _ = write!(
            out,
            " <small>{}</small> <span class=\"why\">{}</span>",
            esc(&case.first_finding_location()),
            esc(&case.reason())
        );
    } else {
        if let Some(end) = case.end {
            let mut what = end
                .classification
                .map(|c| c.as_str().to_string())
                .unwrap_or_default();
            if let Some(d) = end.decision {
                what.push_str(&format!(" → {}", decision_name(d)));
            }
            let _ = write!(out, " <span class=\"why\">{}</span>", esc(&what));
        }
        if let Some(ms) = case.duration_ms() {
            let _ = write!(out, " <small>{}</small>", format_ms(ms));
        }
    }
    if let Some(t) = case.tally() {
        let _ = write!(
            out,
            " <small>{}</small>",
            esc(&sqsprobe_core::classify::trials::tally(t))
        );
    }
    // The anchor is inside the collapsed part, so following a link to it opens the case.
    let _ = writeln!(
        out,
        "</summary>\n<div class=\"case-body\" id=\"{}\">",
        attr(&case_anchor(case.id))
    );
    if let Some(title) = case.start.and_then(|s| s.title.as_deref()) {
        let _ = writeln!(out, "<h3>{}</h3>", esc(title));
    }
    let location = case.location();
    if !location.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"where\"><code>{}</code></p>",
            esc(&location)
        );
    }
    let _ = writeln!(out, "<p class=\"reason\">{}</p>", esc(&case.reason()));
    findings(out, case);
    // A multi-trial case is drawn trial by trial (below): its trials ran side by side, and
    // one timeline of them all would mix their leases.
    let trials = trials::count(case);
    match trials {
        Some(n) => trials::render(out, case, n),
        None => timeline::figure(out, case),
    }
    out.push_str("<dl class=\"kv\">\n");
    if let Some(start) = case.start {
        kv(out, "behaviour", &esc(&start.behaviour));
        if !start.sources.is_empty() {
            let sources: Vec<String> = start.sources.iter().map(|s| source(s)).collect();
            kv(out, "sources", &sources.join("<br>"));
        }
        if !start.tags.is_empty() {
            let tags: Vec<String> = start.tags.iter().map(|t| code(t)).collect();
            kv(out, "tags", &tags.join(" "));
        }
        if let Some(chaos) = &start.emulator_chaos {
            kv(out, "emulator chaos", &code(chaos));
        }
    }
    if let Some(end) = case.end {
        case_end_facts(out, end);
    }
    for d in &case.denies {
        kv(out, "deny", &deny_facts(d));
    }
    if let Some(ms) = case.duration_ms() {
        kv(out, "duration", &format_ms(ms));
    }
    out.push_str("</dl>\n");
    if let Some(end) = case.end
        && !end.outcomes.is_empty()
    {
        out.push_str("<table class=\"outcomes\">\n<tr><th>message</th><th>message id</th><th>class</th><th>reason</th><th>sightings</th><th>deliveries</th></tr>\n");
        for o in &end.outcomes {
            let _ = writeln!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                esc(&o.message),
                esc(o.message_id.as_deref().unwrap_or("")),
                esc(&o.class.as_str().to_uppercase()),
                esc(o.reason.as_deref().unwrap_or("")),
                o.sightings,
                o.deliveries
            );
        }
        out.push_str("</table>\n");
    }
    if !case.calls.is_empty() && trials.is_none() {
        calls::table(out, case);
    }
    out.push_str("</div>\n</details>\n");
}

/// A `deny` step as the calls saw it: what, where, when set, when first refused, when lifted.
fn deny_facts(d: &DenyEnd) -> String {
    let actions: Vec<String> = d.actions.iter().map(|a| code(a)).collect();
    let seen = match (&d.first_denied_at, d.took_effect_ms) {
        (Some(at), Some(ms)) => format!(
            "first refused {} ({} after it was set)",
            esc(at),
            format_ms(ms)
        ),
        _ => "no call was refused".to_string(),
    };
    let lifted = match &d.lifted_at {
        Some(at) => format!("lifted {} by {}", esc(at), esc(&d.lifted_by)),
        None => format!(
            "<strong>not lifted</strong> ({})",
            esc(d.lift_error.as_deref().unwrap_or("unknown"))
        ),
    };
    format!(
        "{} on {} (step {}, line {}): set {}; {seen}; {} refused, {} let through; {lifted}",
        actions.join(" "),
        code(&d.queue),
        d.step + 1,
        d.line,
        esc(&d.set_at),
        d.denied_calls,
        d.allowed_calls,
    )
}

fn case_end_facts(out: &mut String, end: &CaseEnd) {
    if let Some(class) = &end.classification {
        kv(out, "classification", &code(&class.as_str().to_uppercase()));
    }
    if let Some(d) = end.decision {
        kv(
            out,
            "decision",
            &format!(
                "<strong>{}</strong>: {}",
                decision_name(d),
                decision_meaning(d)
            ),
        );
    }
    if let Some(w) = &end.window {
        kv(
            out,
            "observation window",
            &format!(
                "step {} (line {}): {} of {} planned, {}/{} receives, ended {}",
                w.step + 1,
                w.line,
                format_ms(w.elapsed_ms),
                format_ms(w.planned_ms),
                w.receives_used,
                w.receive_budget,
                code(w.ended.as_str())
            ),
        );
    }
    kv(out, "receives", &end.receives.to_string());
    if !end.deliveries.is_empty() {
        let d: Vec<String> = end
            .deliveries
            .iter()
            .map(|(label, n)| format!("{}&times;{n}", code(label)))
            .collect();
        kv(out, "deliveries", &d.join(" "));
    }
    let deleted = end.queues.iter().filter(|q| q.deleted).count();
    if end.trials.is_some() && deleted == end.queues.len() {
        // One queue per trial: the count says it, the names are in each trial's calls.
        kv(
            out,
            "queues",
            &format!("{deleted} (the trials' own), all deleted"),
        );
    } else if !end.queues.is_empty() {
        let q: Vec<String> = end
            .queues
            .iter()
            .map(|q| {
                format!(
                    "{} {}",
                    code(&q.queue),
                    if q.deleted {
                        "deleted"
                    } else {
                        "<strong>left behind</strong>"
                    }
                )
            })
            .collect();
        kv(out, "queues", &q.join("<br>"));
    }
    if let Some(note) = &end.profile_note {
        kv(out, "profile note", &esc(note));
    }
}

/// What each decision means, in the playbook's words.
fn decision_meaning(d: Decision) -> &'static str {
    match d {
        Decision::Accept => "the acknowledgement was bound to its own attempt; accept it",
        Decision::Repair => "a delete used another attempt's handle; repair the binding",
        Decision::Hold => "whether the delete took effect is unproven; hold the claim",
        Decision::Reconcile => "the message was redelivered; reconcile against the business ledger",
    }
}

fn badge(state: CaseState) -> String {
    format!(
        "<span class=\"badge {}\">{}</span>",
        state_class(state),
        state.label()
    )
}

/// A cited source: a link when it is an http(s) URL, plain text otherwise.
fn source(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let is_web = (lower.starts_with("https://") || lower.starts_with("http://"))
        && !text.chars().any(|c| c.is_whitespace() || c.is_control());
    if is_web {
        format!(
            "<a href=\"{}\" rel=\"noopener noreferrer\">{}</a>",
            attr(text),
            esc(text)
        )
    } else {
        esc(text)
    }
}

fn kv(out: &mut String, key: &str, value_html: &str) {
    let _ = writeln!(out, "<dt>{}</dt><dd>{value_html}</dd>", esc(key));
}

pub(crate) fn code(text: &str) -> String {
    format!("<code>{}</code>", esc(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_core::evidence::fixtures::*;
    use sqsprobe_core::evidence::format::{Finding, MessageOutcome};

    const SCRIPT: &str = "<script>alert(1)</script>";
    const IMG: &str = "\"><img src=x onerror=alert(1)>";

    fn hostile_run() -> Vec<Record> {
        let mut records = full_run();
        let evil = format!("{SCRIPT}{IMG}");
        for record in &mut records {
            match record {
                Record::RunStart(r) => {
                    r.run_id = evil.clone();
                    r.target_profile = Some(evil.clone());
                    r.endpoint = Some(evil.clone());
                    r.emulator_chaos = Some(format!("seed={evil}"));
                    r.cases[0] = evil.clone();
                }
                Record::CaseStart(r) if r.case == "stale-ack" => {
                    r.case = evil.clone();
                    r.title = Some(evil.clone());
                    r.behaviour = evil.clone();
                    r.tags = vec![evil.clone()];
                    r.sources = vec![
                        "https://example.com/\"><svg/onload=alert(1)>".to_string(),
                        "javascript:alert(1)".to_string(),
                        evil.clone(),
                    ];
                }
                Record::Call(c) if c.case == "stale-ack" => {
                    c.case = evil.clone();
                    c.action = evil.clone();
                    c.attempt = c.attempt.as_ref().map(|_| evil.clone());
                    c.request_id = Some(evil.clone());
                    c.error_code = Some(evil.clone());
                    c.error_message = Some(evil.clone());
                    c.message = Some(evil.clone());
                    c.handle_digest = Some(evil.clone());
                    for m in &mut c.messages {
                        m.message = Some(evil.clone());
                        m.handle_digest = Some(evil.clone());
                    }
                }
                Record::CaseStart(r) if r.case == "old-handle" => {
                    r.emulator_chaos = Some(evil.clone());
                }
                Record::CaseEnd(e) if e.case == "stale-ack" => {
                    e.case = evil.clone();
                    e.suite = evil.clone();
                    e.reason = evil.clone();
                    e.profile_note = Some(evil.clone());
                    e.findings.push(Finding {
                        step: Some(0),
                        line: 1,
                        message: evil.clone(),
                        status: None,
                        code: Some(evil.clone()),
                        teardown: false,
                    });
                    e.outcomes.push(MessageOutcome {
                        message: evil.clone(),
                        message_id: Some(evil.clone()),
                        // Classes are typed: nothing a target says reaches them.
                        class: sqsprobe_core::evidence::facts::ClassName::Inconclusive,
                        reason: Some(evil.clone()),
                        sightings: 1,
                        deliveries: 2,
                    });
                    // A window's end is typed: nothing a target says reaches it.
                    e.deliveries.insert(evil.clone(), 1);
                }
                _ => {}
            }
        }
        records
    }

    #[test]
    fn everything_from_the_records_is_escaped() {
        let html = render(&hostile_run());
        assert!(!html.contains("<script"), "raw script tag in report");
        assert!(!html.contains("<img"), "raw img tag in report");
        assert!(!html.contains("\"><img"), "attribute break-out in report");
        assert!(!html.to_lowercase().contains("href=\"javascript"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(
            html.contains("<a href=\"https://example.com/&quot;&gt;&lt;svg/onload=alert(1)&gt;\"")
        );
        assert!(!html.contains("<svg/onload"));
        assert!(
            html.contains("id=\"case-~3Cscript~3Ealert~281~29~3C~2Fscript~3E~22~3E~3Cimg~20src~3Dx~20onerror~3Dalert~281~29~3E\""),
            "anchors keep only safe characters"
        );
    }

    #[test]
    fn page_is_self_contained() {
        let html = render(&full_run());
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(!html.contains("<script"));
        assert!(!html.contains("<link"));
        assert!(!html.contains("src="));
        assert!(!html.contains("url(http"));
        assert!(!html.contains("@import"));
        assert_eq!(
            html.matches("<svg class=\"timeline\"").count(),
            1,
            "one timeline for the case with calls"
        );
    }

    #[test]
    fn the_opening_screen_lists_what_did_not_pass_worst_first() {
        let html = render(&full_run());
        let attention = &html[html.find("<section class=\"attention\">").unwrap()
            ..html.find("<section class=\"suites\">").unwrap()];
        let order: Vec<usize> = ["old-handle", "broken", "no-window", "fifo-div"]
            .iter()
            .map(|id| attention.find(&format!("<code>{id}</code>")).expect(id))
            .collect();
        assert!(
            order.windows(2).all(|w| w[0] < w[1]),
            "fail, error, inconclusive, known divergence"
        );
        assert!(attention.contains("<small>suites/ack.yaml:61</small> <span class=\"why\">1 expectation did not hold</span>"));
        // The passing experiment comes next, open; nothing is left for the suites.
        let experiments = &html[html.find("<section class=\"experiments\">").unwrap()
            ..html.find("<section class=\"suites\">").unwrap()];
        assert!(experiments.contains("<h2>Experiments and their decisions (1)</h2>"));
        assert!(
            experiments.contains("<details class=\"case\" open><summary><span class=\"badge pass\">PASS</span> <code>stale-ack</code> <span class=\"why\">observed_redelivery → RECONCILE</span>"),
            "{experiments}"
        );
        let suites = &html[html.find("<section class=\"suites\">").unwrap()..];
        assert!(!suites.contains("stale-ack"), "{suites}");
        assert!(
            html.contains(
                "<span class=\"seg pass\" style=\"flex-grow:1\" title=\"1 pass\"></span>"
            )
        );
        assert!(html.contains("<li><span class=\"sw observed_redelivery\"></span>observed_redelivery <strong>2</strong></li>"));
    }

    #[test]
    fn a_multi_trial_case_is_counted_apart_in_the_class_bar() {
        let html = render(&trials_run());
        assert!(
            html.contains("<li><span class=\"sw pooled\"></span>multi-trial (a class per trial) <strong>1</strong></li>"),
            "{html}"
        );
        assert!(!html.contains("no observation <strong>"), "{html}");
    }

    #[test]
    fn the_header_says_what_the_target_was() {
        let Record::RunStart(mut s) = run_start(&[]) else {
            unreachable!()
        };
        s.target_profile = None;
        assert_eq!(seed(&s).as_deref(), Some("7"), "run_start.seed");
        s.seed = None;
        assert_eq!(target_words(&s), "the embedded emulator, exact (no chaos)");
        s.emulator_chaos = Some("stale-delete-keeps=1,redeliver-after-delete=0,seed=7".to_string());
        assert_eq!(
            target_words(&s),
            "the embedded emulator with chaos stale-delete-keeps=1,redeliver-after-delete=0,seed=7"
        );
        assert_eq!(seed(&s).as_deref(), Some("7"), "an older file's chaos seed");
        s.emulator_chaos = None;
        s.target = "endpoint".to_string();
        s.target_profile = Some("moto".to_string());
        assert_eq!(
            target_words(&s),
            "an SQS endpoint at http://127.0.0.1:4566, target profile moto"
        );
        s.target = "aws".to_string();
        s.target_profile = None;
        s.endpoint = None;
        s.region = "eu-west-1".to_string();
        s.protocol = sqsprobe_facts::sqs::protocol::Protocol::Query;
        assert_eq!(
            target_words(&s),
            "AWS in eu-west-1, over the query protocol"
        );
        assert_eq!(seed(&s), None, "no seed is invented");
    }

    #[test]
    fn a_failed_reachability_check_says_nothing_was_run() {
        let records = unreachable_run(&["a"]);
        let out = render(&records);
        assert!(out.contains("<p class=\"banner\">Nothing was run: the target could not be reached: ListQueues failed: no response: connection refused.</p>"), "{out}");
        assert!(
            out.contains("1 of the errors is the reachability check"),
            "{out}"
        );
    }

    #[test]
    fn interrupted_run_is_rendered_honestly() {
        let html = render(&interrupted_run());
        assert!(html.contains("Run interrupted: results are partial."));
        assert!(html.contains("<span class=\"badge did_not_finish\">DID-NOT-FINISH</span>"));
        assert!(html.contains("did not finish (run interrupted)"));
        assert!(html.contains("<span class=\"badge not_started\">NOT-STARTED</span>"));
        assert!(html.contains("No exit code recorded"));
    }

    #[test]
    fn anchors_are_distinct_for_distinct_ids() {
        assert_eq!(case_anchor("stale-handle.v2_x"), "case-stale-handle.v2_x");
        assert_ne!(case_anchor("a b"), case_anchor("a~20b"));
        assert_eq!(case_anchor("é"), "case-~C3~A9");
    }

    #[test]
    fn a_deny_says_when_the_calls_saw_it_escaped() {
        use sqsprobe_core::evidence::format::DenyEnd;
        let mut records = full_run();
        records.insert(
            records.len() - 1,
            Record::Deny(DenyEnd {
                run_id: RUN.to_string(),
                case: "stale-ack".to_string(),
                step: 2,
                line: 14,
                queue: format!("q{SCRIPT}"),
                actions: vec!["sqs:DeleteMessage".to_string(), SCRIPT.to_string()],
                set_at: "2025-01-01T00:00:01.000Z".to_string(),
                due_at: "2025-01-01T00:00:06.000Z".to_string(),
                first_denied_at: Some("2025-01-01T00:00:01.020Z".to_string()),
                took_effect_ms: Some(20),
                denied_calls: 1,
                allowed_calls: 0,
                last_allowed_at: None,
                lifted_at: None,
                lifted_by: "teardown".to_string(),
                lift_error: Some(IMG.to_string()),
                trial: None,
            }),
        );
        let html = render(&records);
        assert!(
            html.contains(
                "<code>sqs:DeleteMessage</code> <code>&lt;script&gt;alert(1)&lt;/script&gt;</code> on \
                 <code>q&lt;script&gt;alert(1)&lt;/script&gt;</code> (step 3, line 14): set \
                 2025-01-01T00:00:01.000Z; first refused 2025-01-01T00:00:01.020Z (20 ms after it was \
                 set); 1 refused, 0 let through; <strong>not lifted</strong>"
            ),
            "{html}"
        );
        assert!(!html.contains("<script") && !html.contains("<img"));
    }
}
