//! HTML evidence report for design reviews: one self-contained file.
//!
//! The page has no external assets and no script: CSS and SVG are inline, and each case is a
//! `<details>` element, so expand/collapse works natively (non-passing cases start open).
//!
//! The mapping:
//! - a run header: run id, target, endpoint, region, target profile, version, start time and
//!   duration, the totals line with its clarifications, a failed reachability check,
//!   interruption, and the exit meaning;
//! - an index of cases with verdict badges, linking to each case;
//! - per case: verdict badge, id, title and `suite:line`; the reason and findings
//!   (`suite:line`); the behaviour and cited sources (links only for `http(s)` sources);
//!   classification, decision (with the playbook's meaning), observation window, receives,
//!   deliveries, queue cleanup, profile note; the per-message outcomes;
//! - a timeline (inline SVG): one lane for setup/teardown, one per suite attempt (`A`, `B`),
//!   one for steps not bound to an attempt, one for the observation; each call attempt is a
//!   bar from its start to its end relative to the case start, coloured by completion
//!   (ok / fail / info), labelled with its action and status or error code; the observation
//!   window is a band (elapsed, and planned as a dashed outline); sightings (messages
//!   returned by the observation) are dots;
//! - below it, the table of call rows: phase, suite line, action, attempt, message label,
//!   handle digest (first 12 hex characters), request id, status, error code, completion,
//!   latency and the (masked) server message.
//!
//! Everything taken from the records is HTML-escaped (`crate::text::escape`): element content
//! with `html_text`, and the one attribute that carries record text, a source's `href`, with
//! `html_attr`. Suite authors control ids, titles, behaviour and sources; servers control
//! error codes, messages and request ids.

use super::wording::{decision_name, exit_meaning, format_ms};
use crate::evidence::Record;
use crate::evidence::format::{Call, CaseEnd, Completion, Decision, Phase};
use crate::evidence::view::{CaseState, CaseView, RunView, parse_time};
use crate::text::escape::{html_attr, html_text as esc};
use std::fmt::Write;

/// Renders the whole report as one HTML document.
pub fn render(records: &[Record]) -> String {
    let run = RunView::new(records);
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>sqsprobe run {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(run.run_id())
    );
    header(&mut out, &run);
    index(&mut out, &run);
    for (n, case) in run.cases.iter().enumerate() {
        case_section(&mut out, n, case);
    }
    out.push_str("</body>\n</html>\n");
    out
}

const CSS: &str = "
body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:1100px;padding:0 1rem;color:#1f2328}
h1{font-size:1.4rem}code{font:12px ui-monospace,monospace;background:#f3f4f6;padding:0 .2em;border-radius:3px}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;margin:.5rem 0}dl.kv dt{color:#59636e}dl.kv dd{margin:0}
.badge{display:inline-block;font:600 11px system-ui;padding:.1rem .45rem;border-radius:3px;color:#fff;vertical-align:middle}
.pass{background:#1a7f37}.known_divergence{background:#0969da}.inconclusive{background:#9a6700}.error{background:#cf222e}
.fail{background:#a40e26}.did_not_finish{background:#6e7781}.not_started{background:#afb8c1;color:#1f2328}.unsupported{background:#8250df}
.banner{background:#fff8c5;border:1px solid #d4a72c;padding:.4rem .7rem;border-radius:4px}
details.case{border:1px solid #d0d7de;border-radius:6px;margin:1rem 0;padding:.4rem .8rem}
details.case>summary{cursor:pointer;font-weight:600}
table{border-collapse:collapse;font-size:12px;margin:.5rem 0}th,td{border:1px solid #d0d7de;padding:.15rem .4rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.num{text-align:right}
svg.timeline{display:block;margin:.5rem 0;max-width:100%;height:auto}
svg .ok{fill:#2da44e}svg .failed{fill:#cf222e}svg .info{fill:#bf8700}svg .retried{fill-opacity:.45}
svg .lane{fill:#f6f8fa}svg .band{fill:#0969da;fill-opacity:.12}svg .planned{fill:none;stroke:#0969da;stroke-dasharray:4 3}
svg .sighting{fill:#8250df}svg text{font:10px system-ui,sans-serif;fill:#1f2328}svg .axis{stroke:#8c959f}
";

fn header(out: &mut String, run: &RunView) {
    let _ = writeln!(
        out,
        "<header>\n<h1>sqsprobe run <code>{}</code></h1>",
        esc(run.run_id())
    );
    out.push_str("<dl class=\"kv\">\n");
    if let Some(start) = run.start {
        kv(out, "target", &esc(&start.target));
        if let Some(endpoint) = &start.endpoint {
            kv(out, "endpoint", &code(endpoint));
        }
        kv(out, "region", &esc(&start.region));
        if let Some(profile) = &start.target_profile {
            kv(out, "target profile", &code(profile));
        }
        kv(out, "sqsprobe", &esc(&start.sqsprobe_version));
        kv(out, "started", &esc(&start.started_at));
        if start.clock.as_deref() == Some("virtual") {
            kv(
                out,
                "clock",
                "virtual: timestamps, durations and timelines are simulated time",
            );
        }
    }
    if let Some(end) = run.end {
        kv(out, "duration", &format_ms(end.duration_ms));
    }
    out.push_str("</dl>\n");
    let totals = run.totals();
    let _ = writeln!(out, "<p><strong>{}</strong></p>", esc(&totals.line()));
    let notes = totals.notes();
    if !notes.is_empty() {
        out.push_str("<ul>\n");
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
    if run.interrupted() {
        out.push_str("<p class=\"banner\">Run interrupted: results are partial.</p>\n");
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

fn index(out: &mut String, run: &RunView) {
    if run.cases.is_empty() {
        out.push_str("<p>No cases.</p>\n");
        return;
    }
    out.push_str(
        "<nav>\n<table>\n<tr><th>verdict</th><th>case</th><th>where</th><th>reason</th></tr>\n",
    );
    for (n, case) in run.cases.iter().enumerate() {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td><a href=\"#case-{n}\"><code>{}</code></a></td><td>{}</td><td>{}</td></tr>",
            badge(case.state),
            esc(case.id),
            esc(&case.location()),
            esc(&case.reason())
        );
    }
    out.push_str("</table>\n</nav>\n");
}

fn case_section(out: &mut String, n: usize, case: &CaseView) {
    let open = if case.state.is_passing() { "" } else { " open" };
    let _ = write!(
        out,
        "<details class=\"case\" id=\"case-{n}\"{open}>\n<summary>{} <code>{}</code>",
        badge(case.state),
        esc(case.id)
    );
    if let Some(title) = case.start.and_then(|s| s.title.as_deref()) {
        let _ = write!(out, " {}", esc(title));
    }
    let location = case.location();
    if !location.is_empty() {
        let _ = write!(out, " <small>{}</small>", esc(&location));
    }
    out.push_str("</summary>\n");
    let _ = writeln!(out, "<p>{}</p>", esc(&case.reason()));

    let findings = case.findings();
    if !findings.is_empty() {
        out.push_str("<ul class=\"findings\">\n");
        for (at, message) in findings {
            let _ = writeln!(out, "<li><code>{}</code> {}</li>", esc(&at), esc(message));
        }
        out.push_str("</ul>\n");
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
    }
    if let Some(end) = case.end {
        case_end_facts(out, end);
    }
    if let Some(ms) = case.duration_ms() {
        kv(out, "duration", &format_ms(ms));
    }
    out.push_str("</dl>\n");

    if let Some(end) = case.end
        && !end.outcomes.is_empty()
    {
        out.push_str("<table>\n<tr><th>message</th><th>message id</th><th>class</th><th>reason</th><th>sightings</th><th>deliveries</th></tr>\n");
        for o in &end.outcomes {
            let _ = writeln!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                esc(&o.message),
                esc(o.message_id.as_deref().unwrap_or("")),
                esc(&o.class.to_uppercase()),
                esc(o.reason.as_deref().unwrap_or("")),
                o.sightings,
                o.deliveries
            );
        }
        out.push_str("</table>\n");
    }

    if !case.calls.is_empty() {
        timeline(out, case);
        calls_table(out, &case.calls);
    }
    out.push_str("</details>\n");
}

fn case_end_facts(out: &mut String, end: &CaseEnd) {
    if let Some(class) = &end.classification {
        kv(out, "classification", &code(&class.to_uppercase()));
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
                "step at line {}: {} of {} planned, {}/{} receives, ended {}",
                w.line,
                format_ms(w.elapsed_ms),
                format_ms(w.planned_ms),
                w.receives_used,
                w.receive_budget,
                code(&w.ended)
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
    if !end.queues.is_empty() {
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

const LABEL_W: f64 = 110.0;
const PLOT_W: f64 = 830.0;
const AXIS_H: f64 = 22.0;
const LANE_H: f64 = 46.0;

fn lane_of(call: &Call) -> String {
    match (call.phase, &call.attempt) {
        (Phase::Setup | Phase::Teardown, _) => "setup/teardown".to_string(),
        (Phase::Observe, _) => "observe".to_string(),
        (Phase::Step, Some(attempt)) => format!("attempt {attempt}"),
        (Phase::Step, None) => "steps".to_string(),
    }
}

fn timeline(out: &mut String, case: &CaseView) {
    let origin = case
        .start
        .and_then(|s| parse_time(&s.started_at))
        .or_else(|| {
            case.calls
                .iter()
                .filter_map(|c| parse_time(&c.started_at))
                .min()
        });
    let Some(origin) = origin else {
        return;
    };
    let rel = |t: &str| parse_time(t).map(|t| (t - origin).num_milliseconds().max(0) as f64);

    let mut lanes: Vec<String> = Vec::new();
    let mut push_lane = |name: String| {
        if !lanes.contains(&name) {
            lanes.push(name);
        }
    };
    if case.calls.iter().any(|c| c.phase == Phase::Setup) {
        push_lane("setup/teardown".to_string());
    }
    for call in &case.calls {
        if call.phase == Phase::Step {
            push_lane(lane_of(call));
        }
    }
    for call in &case.calls {
        push_lane(lane_of(call));
    }

    let window = case.end.and_then(|e| e.window.as_ref()).and_then(|w| {
        let first = case
            .calls
            .iter()
            .filter(|c| c.phase == Phase::Observe)
            .find(|c| c.step == Some(w.step))
            .or_else(|| case.calls.iter().find(|c| c.phase == Phase::Observe))?;
        Some((rel(&first.started_at)?, w))
    });

    let mut span = case.duration_ms().unwrap_or(0) as f64;
    for call in &case.calls {
        span = span.max(rel(&call.ended_at).unwrap_or(0.0));
    }
    if let Some((start, w)) = window {
        span = span.max(start + w.planned_ms.max(w.elapsed_ms) as f64);
    }
    let span = span.max(1.0);
    let x = |ms: f64| LABEL_W + ms / span * PLOT_W;
    let height = AXIS_H + LANE_H * lanes.len() as f64;
    let width = LABEL_W + PLOT_W + 20.0;

    let _ = writeln!(
        out,
        "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"timeline of the case's calls\">"
    );
    for (i, lane) in lanes.iter().enumerate() {
        let y = AXIS_H + LANE_H * i as f64;
        let _ = writeln!(
            out,
            "<rect class=\"lane\" x=\"{LABEL_W}\" y=\"{}\" width=\"{PLOT_W}\" height=\"{}\"/><text x=\"4\" y=\"{}\">{}</text>",
            y + 2.0,
            LANE_H - 4.0,
            y + LANE_H / 2.0,
            esc(lane)
        );
    }
    for tick in 0..=5 {
        let ms = span * tick as f64 / 5.0;
        let tx = x(ms);
        let _ = writeln!(
            out,
            "<line class=\"axis\" x1=\"{tx:.1}\" y1=\"{}\" x2=\"{tx:.1}\" y2=\"{height}\"/><text x=\"{tx:.1}\" y=\"12\" text-anchor=\"middle\">{}</text>",
            AXIS_H - 4.0,
            format_ms(ms.round() as u64)
        );
    }
    if let Some((start, w)) = window {
        let _ = writeln!(
            out,
            "<rect class=\"band\" x=\"{:.1}\" y=\"{AXIS_H}\" width=\"{:.1}\" height=\"{}\"><title>observation window: {} of {} planned, ended {}</title></rect>\
             <rect class=\"planned\" x=\"{:.1}\" y=\"{AXIS_H}\" width=\"{:.1}\" height=\"{}\"/>",
            x(start),
            (x(start + w.elapsed_ms as f64) - x(start)).max(1.0),
            height - AXIS_H,
            format_ms(w.elapsed_ms),
            format_ms(w.planned_ms),
            esc(&w.ended),
            x(start),
            (x(start + w.planned_ms as f64) - x(start)).max(1.0),
            height - AXIS_H,
        );
    }
    let mut per_lane = vec![0usize; lanes.len()];
    for call in &case.calls {
        let (Some(start), Some(end)) = (rel(&call.started_at), rel(&call.ended_at)) else {
            continue;
        };
        let lane = lanes.iter().position(|l| *l == lane_of(call)).unwrap_or(0);
        let y = AXIS_H + LANE_H * lane as f64;
        let class = match call.completion {
            Completion::Ok => "ok",
            Completion::Fail => "failed",
            Completion::Info => "info",
        };
        let retried = if call.retried { " retried" } else { "" };
        let outcome = call_outcome(call);
        let _ = writeln!(
            out,
            "<rect class=\"{class}{retried}\" x=\"{:.1}\" y=\"{}\" width=\"{:.1}\" height=\"12\"><title>{} {} at +{} for {}{}</title></rect>",
            x(start),
            y + 8.0,
            (x(end) - x(start)).max(2.0),
            esc(&call.action),
            esc(&outcome),
            format_ms(start as u64),
            format_ms((end - start) as u64),
            if call.retried { " (retried)" } else { "" }
        );
        let row = per_lane[lane] % 2;
        per_lane[lane] += 1;
        // Labels of calls late in the case end at the bar's end, so they stay inside the SVG.
        let (label_x, anchor) = if x(start) > LABEL_W + PLOT_W * 0.7 {
            (x(end).max(x(start) + 2.0), "end")
        } else {
            (x(start), "start")
        };
        let _ = writeln!(
            out,
            "<text x=\"{label_x:.1}\" y=\"{}\" text-anchor=\"{anchor}\">{} {}</text>",
            y + 31.0 + 10.0 * row as f64,
            esc(&call.action),
            esc(&outcome)
        );
        if call.phase == Phase::Observe {
            for (k, m) in call.messages.iter().enumerate() {
                let label = m.message.as_deref().unwrap_or(&m.message_id);
                let _ = writeln!(
                    out,
                    "<circle class=\"sighting\" cx=\"{:.1}\" cy=\"{}\" r=\"4\"><title>sighting: {}{}</title></circle>",
                    x(end) + 6.0 * k as f64,
                    y + 14.0,
                    esc(label),
                    m.receive_count
                        .map(|n| format!(" (receive count {n})"))
                        .unwrap_or_default()
                );
            }
        }
    }
    out.push_str("</svg>\n");
}

/// `200`, or the error code, or what is known of an unanswered call.
fn call_outcome(call: &Call) -> String {
    match (&call.error_code, call.http_status, call.completion) {
        (Some(code), _, _) => code.clone(),
        (None, Some(status), _) => status.to_string(),
        (None, None, Completion::Info) => "no response".to_string(),
        (None, None, _) => "no status".to_string(),
    }
}

fn calls_table(out: &mut String, calls: &[&Call]) {
    out.push_str(
        "<table class=\"calls\">\n<tr><th>phase</th><th>line</th><th>action</th><th>attempt</th><th>message</th>\
         <th>handle digest</th><th>request id</th><th>status</th><th>error code</th><th>completion</th>\
         <th>latency</th><th>server message</th></tr>\n",
    );
    for call in calls {
        let phase = match call.phase {
            Phase::Setup => "setup",
            Phase::Step => "step",
            Phase::Observe => "observe",
            Phase::Teardown => "teardown",
        };
        let completion = match call.completion {
            Completion::Ok => "ok",
            Completion::Fail => "fail",
            Completion::Info => "info",
        };
        let mut action = esc(&call.action);
        if call.attempt_number > 1 || call.retried {
            let _ = write!(
                action,
                " <small>try {}{}</small>",
                call.attempt_number,
                if call.retried { ", retried" } else { "" }
            );
        }
        let _ = writeln!(
            out,
            "<tr><td>{phase}</td><td class=\"num\">{}</td><td>{action}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{completion}</td><td class=\"num\">{:.0} ms</td><td>{}</td></tr>",
            call.line.map(|l| l.to_string()).unwrap_or_default(),
            esc(call.attempt.as_deref().unwrap_or("")),
            esc(&message_labels(call).join(", ")),
            handle_digests(call)
                .iter()
                .map(|d| code(short(d)))
                .collect::<Vec<_>>()
                .join(" "),
            esc(call.request_id.as_deref().unwrap_or("")),
            call.http_status.map(|s| s.to_string()).unwrap_or_default(),
            esc(call.error_code.as_deref().unwrap_or("")),
            call.latency_ms,
            esc(call.error_message.as_deref().unwrap_or("")),
        );
    }
    out.push_str("</table>\n");
}

/// The messages a call concerns: its own label, else what it sent, received or batched.
fn message_labels(call: &Call) -> Vec<&str> {
    if let Some(label) = call.message.as_deref().or(call.message_id.as_deref()) {
        return vec![label];
    }
    let mut labels: Vec<&str> = call
        .messages
        .iter()
        .map(|m| m.message.as_deref().unwrap_or(&m.message_id))
        .collect();
    labels.extend(
        call.entries
            .iter()
            .map(|e| e.message.as_deref().unwrap_or(&e.id)),
    );
    labels
}

/// The handle digest the call sent, else those it received or batched.
fn handle_digests(call: &Call) -> Vec<&str> {
    if let Some(digest) = &call.handle_digest {
        return vec![digest];
    }
    call.messages
        .iter()
        .filter_map(|m| m.handle_digest.as_deref())
        .chain(
            call.entries
                .iter()
                .filter_map(|e| e.handle_digest.as_deref()),
        )
        .collect()
}

/// The first 12 characters of a digest.
fn short(digest: &str) -> &str {
    digest
        .char_indices()
        .nth(12)
        .map_or(digest, |(i, _)| &digest[..i])
}

fn badge(state: CaseState) -> String {
    let class = match state {
        CaseState::Finished(v) => v.as_str(),
        CaseState::DidNotFinish => "did_not_finish",
        CaseState::NotStarted => "not_started",
    };
    format!("<span class=\"badge {class}\">{}</span>", state.label())
}

/// A cited source: a link when it is an http(s) URL, plain text otherwise.
fn source(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let is_web = (lower.starts_with("https://") || lower.starts_with("http://"))
        && !text.chars().any(|c| c.is_whitespace() || c.is_control());
    if is_web {
        format!(
            "<a href=\"{}\" rel=\"noopener noreferrer\">{}</a>",
            html_attr(text),
            esc(text)
        )
    } else {
        esc(text)
    }
}

fn kv(out: &mut String, key: &str, value_html: &str) {
    let _ = writeln!(out, "<dt>{}</dt><dd>{value_html}</dd>", esc(key));
}

fn code(text: &str) -> String {
    format!("<code>{}</code>", esc(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::fixtures::*;
    use crate::evidence::format::{Finding, MessageOutcome};

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
                    for m in &mut c.messages {
                        m.message = Some(evil.clone());
                    }
                }
                Record::CaseEnd(e) if e.case == "stale-ack" => {
                    e.case = evil.clone();
                    e.suite = evil.clone();
                    e.reason = evil.clone();
                    e.classification = Some(evil.clone());
                    e.profile_note = Some(evil.clone());
                    e.findings.push(Finding {
                        step: None,
                        line: 1,
                        message: evil.clone(),
                        status: None,
                        code: Some(evil.clone()),
                    });
                    e.outcomes.push(MessageOutcome {
                        message: evil.clone(),
                        message_id: Some(evil.clone()),
                        class: evil.clone(),
                        reason: Some(evil.clone()),
                        sightings: 1,
                        deliveries: 2,
                    });
                    e.deliveries.insert(evil.clone(), 1);
                    if let Some(w) = &mut e.window {
                        w.ended = evil.clone();
                    }
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
        assert!(html.contains("\"&gt;&lt;img src=x onerror=alert(1)&gt;"));
        assert!(
            html.contains("&lt;SCRIPT&gt;ALERT(1)&lt;/SCRIPT&gt;"),
            "upper-cased class escaped"
        );
        assert!(
            html.contains("<a href=\"https://example.com/&quot;&gt;&lt;svg/onload=alert(1)&gt;\"")
        );
        assert!(!html.contains("<svg/onload"));
    }

    #[test]
    fn page_is_self_contained() {
        let html = render(&full_run());
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(!html.contains("<script"));
        assert!(!html.contains("<link"));
        assert!(!html.contains("src="));
        assert_eq!(
            html.matches("<svg").count(),
            1,
            "one timeline for the case with calls"
        );
    }

    #[test]
    fn timeline_has_lanes_window_band_and_sightings() {
        let html = render(&full_run());
        let svg = &html[html.find("<svg").unwrap()..html.find("</svg>").unwrap()];
        let lanes: Vec<_> = ["setup/teardown", "attempt A", "attempt B", "observe"]
            .iter()
            .map(|l| svg.find(&format!(">{l}</text>")).expect(l))
            .collect();
        assert!(lanes.windows(2).all(|w| w[0] < w[1]), "lane order");
        assert!(svg.contains("class=\"band\""));
        assert!(svg.contains("observation window: 1.0 s of 1.0 s planned, ended all_seen"));
        assert_eq!(svg.matches("class=\"ok\"").count(), 6);
        assert!(svg.contains(">DeleteMessage 200</text>"));
        assert!(svg.contains("<title>sighting: m1 (receive count 3)</title>"));
        assert!(svg.contains("text-anchor=\"end\">DeleteQueue 200</text>"));
        // The observe receive at 1400..2400 ms of a 2500 ms span starts at 110 + 0.56 * 830.
        assert!(svg.contains("x=\"574.8\""), "{svg}");
    }

    #[test]
    fn call_table_shortens_digests_and_shows_ids() {
        let html = render(&full_run());
        assert!(html.contains(&format!("<code>{}</code>", "b2".repeat(6))));
        assert!(!html.contains(&"b2".repeat(7)));
        assert!(html.contains("req-1300"));
        assert!(html.contains("<strong>RECONCILE</strong>"));
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
}
