//! What a case's timeline shows, worked out from its evidence (pure: [`super::timeline`]
//! draws it).
//!
//! Time is in milliseconds from the case's start. Lanes, top to bottom: `steps` (each finished
//! step as a span, sleeps hatched, the step whose check failed marked with its finding, and the
//! calls of steps bound to no attempt), one lane per attempt (`A`, `B`: its calls and the
//! leases it held), `observe` (the observation's receives, the window, sightings and
//! redeliveries) and `harness` (the harness's own calls: the ownership pre-check, creating and
//! tagging queues, teardown), drawn grey, never as the case failing. A fault sqsprobe injected
//! (`call.fault`) is a mark of its own on its call, so a refusal or silence it caused is never
//! read as the target's.
//!
//! Leases are drawn from the judge's own reading of the rows (`classify::leases`, through
//! [`super::leases`]): each message a receive returned is leased from the receive's answer for
//! its `lease_ms`, ended or moved by the calls with its handle that took, superseded by a newer
//! attempt once it was over. A call that used a handle outside its lease is marked with the
//! class the judge gave it (`late`, `superseded`, `other_attempt`, `unsure`).

use super::super::wording::format_ms;
use super::leases::leases;
pub(crate) use super::marks::outcome;
use super::marks::{
    HARNESS, Lane, Mark, MarkKind, OBSERVE, Part, Picture, STEPS, Shape, lane_name,
};
use chrono::{DateTime, FixedOffset};
use sqsprobe_core::evidence::facts::ClassName;
use sqsprobe_core::evidence::format::{Call, Completion, Phase, StepEnd};
use sqsprobe_core::evidence::view::{CaseView, parse_time};

/// Works out the picture of `case`, or `None` when it has nothing to draw.
pub(crate) fn picture(case: &CaseView) -> Option<Picture> {
    if case.calls.is_empty() && case.steps.is_empty() {
        return None;
    }
    let origin = case.origin()?;
    let rel = |t: &str| rel_ms(origin, t);
    let mut lanes: Vec<Lane> = vec![lane(STEPS, 2)];
    for call in &case.calls {
        let name = lane_name(call);
        if !lanes.iter().any(|l| l.name == name) && name != OBSERVE && name != HARNESS {
            lanes.push(lane(&name, 1));
        }
    }
    lanes.push(lane(OBSERVE, 1));
    lanes.push(lane(HARNESS, 1));

    let mut span = case.duration_ms().unwrap_or(0) as f64;
    for call in &case.calls {
        span = span.max(rel(&call.ended_at).unwrap_or(0.0));
    }
    for step in &case.steps {
        span = span.max(rel(&step.ended_at).unwrap_or(0.0));
    }
    let window = window_mark(case, &rel);
    if let Some((mark, _)) = &window {
        span = span.max(mark.parts.iter().map(|p| p.end).fold(0.0, f64::max));
    }
    let span = span.max(1.0);

    let findings = finding_steps(case);
    for step in &case.steps {
        if let Some(mark) = step_mark(step, &rel, findings.contains(&step.step)) {
            lanes[0].marks.push(mark);
        }
    }
    lanes[0].marks.extend(finding_marks(case, &rel));

    let leases = leases(case, &rel, span);
    for call in &case.calls {
        let Some(mut mark) = call_mark(case, call, &rel) else {
            continue;
        };
        if let Some(used) = leases.outside.iter().find(|s| std::ptr::eq(s.call, *call)) {
            let class = used.class.as_str();
            mark.class.push_str(" outside");
            mark.data.push(("ack", class.to_string()));
            mark.title.push_str(&format!(
                "\n{class}: attempt {}'s handle on {}, used outside its lease{}",
                used.attempt,
                used.message,
                used.since
                    .map(|t| format!(" (ended at +{})", format_ms(t.max(0.0) as u64)))
                    .unwrap_or_default()
            ));
            mark.label = Some(format!(
                "{} · {class} · {}",
                short_action(&call.action),
                outcome(call)
            ));
            mark.priority = 0;
        }
        let name = lane_name(call);
        let at = lanes.iter().position(|l| l.name == name).unwrap_or(0);
        let fault = fault_mark(call, &mark);
        lanes[at].marks.push(mark);
        lanes[at].marks.extend(fault);
        if call.phase == Phase::Observe {
            let sightings = sighting_marks(case, call, &rel);
            lanes[at].marks.extend(sightings);
        }
    }
    for lease in leases.leases {
        let at = lanes.iter().position(|l| l.name == lease.lane).unwrap_or(0);
        let base = if at == 0 { 2 } else { 1 };
        let track = base + lease.track;
        let lane = &mut lanes[at];
        lane.tracks = lane.tracks.max(track + 1);
        let mut mark = lease.mark;
        for part in &mut mark.parts {
            part.track = track;
        }
        lane.marks.push(mark);
    }
    let window_range = window.as_ref().map(|(_, range)| *range);
    if let Some((mark, _)) = window {
        let at = lanes.iter().position(|l| l.name == OBSERVE).unwrap_or(0);
        lanes[at].marks.push(mark);
    }
    lanes.retain(|l| !l.marks.is_empty());
    Some(Picture {
        span_ms: span,
        lanes,
        window: window_range,
    })
}

fn lane(name: &str, tracks: usize) -> Lane {
    Lane {
        name: name.to_string(),
        tracks,
        marks: Vec::new(),
    }
}

fn rel_ms(origin: DateTime<FixedOffset>, t: &str) -> Option<f64> {
    let t = parse_time(t)?;
    let micros = (t - origin).num_microseconds()?;
    Some((micros as f64 / 1000.0).max(0.0))
}

/// `ReceiveMessage` → `Receive`, `ChangeMessageVisibilityBatch` → `ChangeVisibilityBatch`.
pub(crate) fn short_action(action: &str) -> String {
    action.replacen("Message", "", 1)
}

/// The step number as findings count it (1-based), for a 0-based index.
pub(crate) fn step_number(index: usize) -> usize {
    index + 1
}

/// What a harness call was for, and whether its answer was the expected one.
pub(crate) fn harness_role(call: &Call) -> (&'static str, bool) {
    let is = |shape: &str| {
        [&call.error_type, &call.error_code]
            .into_iter()
            .flatten()
            .any(|c| sqsprobe_facts::sqs::errors::by_code(c).is_some_and(|e| e.shape == shape))
    };
    match (call.phase, call.action.as_str()) {
        (Phase::Setup, "GetQueueUrl") if is("QueueDoesNotExist") => (
            "ownership pre-check: QueueDoesNotExist proves the name free, as expected",
            true,
        ),
        (Phase::Setup, "GetQueueUrl") => ("ownership pre-check", call.completion == Completion::Ok),
        (Phase::Setup, "ListQueueTags") => (
            "ownership check: the queue carries this run's tags",
            call.completion == Completion::Ok,
        ),
        (Phase::Setup, _) => (
            "setting up the case's queues",
            call.completion == Completion::Ok,
        ),
        (Phase::Teardown, "DeleteQueue") if is("QueueDoesNotExist") => {
            ("teardown: the queue was already gone", true)
        }
        (Phase::Teardown, _) => ("teardown", call.completion == Completion::Ok),
        _ => ("", call.completion == Completion::Ok),
    }
}

/// The evidence row of a call, as hover text.
pub(crate) fn call_title(call: &Call, rel: &impl Fn(&str) -> Option<f64>) -> String {
    let mut t = call.action.clone();
    let mut at = Vec::new();
    match call.phase {
        Phase::Setup | Phase::Teardown => at.push(harness_role(call).0.to_string()),
        Phase::Consumer => at.push("the audited consumer".to_string()),
        Phase::Step | Phase::Observe => {
            if let Some(step) = call.step {
                at.push(format!("step {}", step_number(step)));
            }
            if call.phase == Phase::Observe {
                at.push("observe".to_string());
            }
        }
    }
    if let Some(line) = call.line {
        at.push(format!("line {line}"));
    }
    if let Some(attempt) = &call.attempt {
        at.push(format!("attempt {attempt}"));
    }
    if !at.is_empty() {
        t.push_str(&format!(" ({})", at.join(", ")));
    }
    let completion = match call.completion {
        Completion::Ok => "ok: took effect",
        Completion::Fail => "fail: refused",
        Completion::Info => "info: outcome unknown",
    };
    t.push_str(&format!("\ncompletion {completion}"));
    if let Some(status) = call.http_status {
        t.push_str(&format!(" · status {status}"));
    }
    if let Some(code) = call.error_code.as_ref().or(call.error_type.as_ref()) {
        t.push_str(&format!(" · {code}"));
    }
    t.push_str(&format!(" · latency {:.1} ms", call.latency_ms));
    if let (Some(s), Some(e)) = (rel(&call.started_at), rel(&call.ended_at)) {
        t.push_str(&format!(
            " · +{} → +{}",
            format_ms(s as u64),
            format_ms(e as u64)
        ));
    }
    if call.attempt_number > 1 || call.retried {
        t.push_str(&format!(
            "\nSDK attempt {}{}",
            call.attempt_number,
            if call.retried { " (retried)" } else { "" }
        ));
    }
    if let Some(id) = &call.request_id {
        t.push_str(&format!("\nrequest id {id}"));
    }
    if let Some(message) = call.message.as_ref().or(call.message_id.as_ref()) {
        t.push_str(&format!("\nmessage {message}"));
    }
    if let Some(h) = &call.handle_digest {
        t.push_str(&format!("\nhandle sha256 {h}"));
    }
    if let Some(lease) = call.lease_ms {
        t.push_str(&format!("\nlease {}", format_ms(lease)));
    }
    for m in &call.messages {
        t.push_str(&format!(
            "\n{} id {}",
            m.message.as_deref().unwrap_or("message"),
            m.message_id
        ));
        if let Some(n) = m.receive_count {
            t.push_str(&format!(" · receive count {n}"));
        }
        if let Some(h) = &m.handle_digest {
            t.push_str(&format!(" · handle sha256 {h}"));
        }
        if let Some(b) = &m.body_digest {
            t.push_str(&format!(" · body sha256 {b}"));
        }
        if m.md5_ok == Some(false) {
            t.push_str(" · MD5 MISMATCH");
        }
    }
    for e in &call.entries {
        t.push_str(&format!("\nentry {} {}", e.id, e.result));
        if let Some(m) = &e.message {
            t.push_str(&format!(" · {m}"));
        }
        if let Some(code) = &e.code {
            t.push_str(&format!(" · {code}"));
        }
        if let Some(h) = &e.handle_digest {
            t.push_str(&format!(" · handle sha256 {h}"));
        }
        if let Some(lease) = e.lease_ms {
            t.push_str(&format!(" · lease {}", format_ms(lease)));
        }
    }
    if let Some(m) = &call.error_message {
        t.push_str(&format!("\nserver: {m}"));
    }
    t
}

fn call_mark(case: &CaseView, call: &Call, rel: &impl Fn(&str) -> Option<f64>) -> Option<Mark> {
    let (start, end) = (rel(&call.started_at)?, rel(&call.ended_at)?);
    let harness = matches!(call.phase, Phase::Setup | Phase::Teardown);
    let mut class = match call.completion {
        Completion::Ok => "call ok".to_string(),
        Completion::Fail => "call fail".to_string(),
        Completion::Info => "call info".to_string(),
    };
    if call.retried {
        class.push_str(" retried");
    }
    let mut label = None;
    let mut priority = 5;
    if harness {
        let (_, expected) = harness_role(call);
        class = format!(
            "call harness{}",
            if expected { "" } else { " harness-fail" }
        );
        if !expected {
            label = Some(format!("{} {}", short_action(&call.action), outcome(call)));
            priority = 1;
        }
    } else {
        let interesting = call.completion != Completion::Ok
            || !call.messages.is_empty()
            || !call.entries.is_empty()
            || call.attempt.is_some();
        let quiet =
            call.phase == Phase::Observe || (call.attempt.is_none() && call.phase == Phase::Step);
        if !quiet || call.completion != Completion::Ok {
            let mut text = format!("{} {}", short_action(&call.action), outcome(call));
            let labels = message_labels(call);
            if !labels.is_empty() && call.phase == Phase::Step {
                text.push_str(&format!(" · {}", labels.join(", ")));
            }
            label = Some(text);
            priority = if call.completion == Completion::Ok {
                4
            } else {
                1
            };
        } else if interesting && call.phase == Phase::Step {
            priority = 6;
        }
        if is_finding_call(case, call) {
            class.push_str(" finding-call");
            priority = priority.min(1);
        }
    }
    Some(Mark {
        kind: MarkKind::Call,
        class,
        parts: vec![Part {
            shape: Shape::Bar,
            track: if lane_name(call) == STEPS { 1 } else { 0 },
            start,
            end,
            class: "",
        }],
        label,
        priority,
        title: call_title(call, rel),
        data: vec![("action", call.action.clone())],
    })
}

/// A fault sqsprobe injected into `call` (drawn over its bar, `call_mark` being the bar): a
/// marker that says the call's answer, or its silence, was the harness's doing.
fn fault_mark(call: &Call, call_mark: &Mark) -> Option<Mark> {
    let fault = call.fault.as_ref()?;
    let part = call_mark.parts.first()?;
    let mut what = fault.kind.clone();
    if let Some(ms) = fault.delay_ms {
        what.push_str(&format!(" {}", format_ms(ms)));
    }
    if let Some(status) = fault.status {
        what.push_str(&format!(" {status}"));
    }
    if let Some(code) = &fault.code {
        what.push_str(&format!(" {code}"));
    }
    Some(Mark {
        kind: MarkKind::Fault,
        class: format!("fault {}", fault.kind),
        parts: vec![Part {
            shape: Shape::Point,
            track: part.track,
            start: part.start,
            end: part.start,
            class: "",
        }],
        label: Some(format!("fault: {what}")),
        priority: 1,
        title: format!(
            "injected fault ({} scope): {what}\non {}",
            fault.scope, call_mark.title
        ),
        data: vec![("fault", fault.kind.clone())],
    })
}

/// The messages a call concerns: its own label, else what it sent, received or batched.
pub(crate) fn message_labels(call: &Call) -> Vec<&str> {
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

/// Whether a finding is about this call's answer: same step, and the finding's status and
/// code (when it records them) are this call's.
fn is_finding_call(case: &CaseView, call: &Call) -> bool {
    let Some(end) = case.end else { return false };
    end.findings.iter().any(|f| {
        f.step.is_some()
            && f.step == call.step
            && (f.status.is_some() || f.code.is_some())
            && f.status == call.http_status
            && f.code.as_ref().is_none_or(|code| {
                [&call.error_code, &call.error_type]
                    .into_iter()
                    .flatten()
                    .any(|c| c == code)
            })
    })
}

fn finding_steps(case: &CaseView) -> Vec<usize> {
    case.end
        .map(|e| e.findings.iter().filter_map(|f| f.step).collect())
        .unwrap_or_default()
}

fn step_mark(step: &StepEnd, rel: &impl Fn(&str) -> Option<f64>, failed: bool) -> Option<Mark> {
    let (start, end) = (rel(&step.started_at)?, rel(&step.ended_at)?);
    let n = step_number(step.step);
    let sleep = step.keyword == "sleep";
    let mut class = format!("step check-{}", step.check.as_str());
    if failed {
        class.push_str(" failed-step");
    }
    Some(Mark {
        kind: if sleep {
            MarkKind::Sleep
        } else {
            MarkKind::Step
        },
        class: if sleep {
            format!("{class} sleep")
        } else {
            class
        },
        parts: vec![Part {
            shape: Shape::Bar,
            track: 0,
            start,
            end,
            class: "",
        }],
        label: Some(if sleep {
            format!("{n} sleep {}", format_ms((end - start).round() as u64))
        } else {
            format!("{n} {}", step.keyword)
        }),
        priority: if sleep { 2 } else { 3 },
        title: format!(
            "step {n} ({}), line {}: check {}\n+{} → +{} ({})",
            step.keyword,
            step.line,
            step.check.as_str(),
            format_ms(start as u64),
            format_ms(end as u64),
            format_ms((end - start).round() as u64)
        ),
        data: vec![("step", n.to_string())],
    })
}

/// One mark per finding tied to a step: at the step's span (its `step` record, else its calls).
fn finding_marks(case: &CaseView, rel: &impl Fn(&str) -> Option<f64>) -> Vec<Mark> {
    let Some(end) = case.end else {
        return Vec::new();
    };
    end.findings
        .iter()
        .filter_map(|f| {
            let step = f.step?;
            let (start, stop) = match case.step(step) {
                Some(s) => (rel(&s.started_at)?, rel(&s.ended_at)?),
                None => {
                    let calls = case.calls.iter().filter(|c| c.step == Some(step));
                    let times: Vec<(f64, f64)> = calls
                        .filter_map(|c| Some((rel(&c.started_at)?, rel(&c.ended_at)?)))
                        .collect();
                    let start = times.iter().map(|t| t.0).reduce(f64::min)?;
                    (start, times.iter().map(|t| t.1).fold(start, f64::max))
                }
            };
            let mut answer = String::new();
            if let Some(status) = f.status {
                answer.push_str(&format!(" · answer {status}"));
            }
            if let Some(code) = &f.code {
                answer.push_str(&format!(" {code}"));
            }
            Some(Mark {
                kind: MarkKind::Finding,
                class: "finding".to_string(),
                parts: vec![Part {
                    shape: Shape::Point,
                    track: 0,
                    start: (start + stop) / 2.0,
                    end: (start + stop) / 2.0,
                    class: "",
                }],
                label: Some(format!("✗ {}", f.message)),
                priority: 0,
                title: format!(
                    "finding at {}:{} (step {}){answer}\n{}",
                    end.suite,
                    f.line,
                    step_number(step),
                    f.message
                ),
                data: vec![("step", step_number(step).to_string())],
            })
        })
        .collect()
}

fn window_mark(case: &CaseView, rel: &impl Fn(&str) -> Option<f64>) -> Option<(Mark, (f64, f64))> {
    let end = case.end?;
    let w = end.window.as_ref()?;
    let start = match case.step(w.step) {
        Some(step) => rel(&step.started_at)?,
        None => {
            let first = case
                .calls
                .iter()
                .filter(|c| c.phase == Phase::Observe)
                .find(|c| c.step == Some(w.step))?;
            rel(&first.started_at)?
        }
    };
    let elapsed = start + w.elapsed_ms as f64;
    let planned = start + w.planned_ms as f64;
    let class = end.classification.map(|c| c.as_str()).unwrap_or("no class");
    let mut title = format!(
        "observation window (step {}, line {}): {} of {} planned, {}/{} receives, ended {}",
        step_number(w.step),
        w.line,
        format_ms(w.elapsed_ms),
        format_ms(w.planned_ms),
        w.receives_used,
        w.receive_budget,
        w.ended
    );
    if w.unknown_receives > 0 {
        title.push_str(&format!(
            ", {} receive(s) without a definite answer",
            w.unknown_receives
        ));
    }
    for o in &end.outcomes {
        title.push_str(&format!(
            "\n{}: {} ({} sighting(s) in the window, {} delivery(ies) in the case){}",
            o.message,
            o.class,
            o.sightings,
            o.deliveries,
            o.reason
                .as_ref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        ));
    }
    let mark = Mark {
        kind: MarkKind::Window,
        class: format!("window ended-{}", w.ended.as_str().replace('_', "-")),
        parts: vec![
            Part {
                shape: Shape::Band,
                track: 0,
                start,
                end: elapsed.max(start + 1.0),
                class: "band",
            },
            Part {
                shape: Shape::Outline,
                track: 0,
                start,
                end: planned.max(start + 1.0),
                class: "planned",
            },
        ],
        label: Some(format!(
            "window {} {} → {class}",
            format_ms(w.elapsed_ms),
            w.ended
        )),
        priority: 0,
        title,
        data: vec![("ended", w.ended.as_str().to_string())],
    };
    Some((mark, (start, elapsed)))
}

fn sighting_marks(case: &CaseView, call: &Call, rel: &impl Fn(&str) -> Option<f64>) -> Vec<Mark> {
    let Some(at) = rel(&call.ended_at) else {
        return Vec::new();
    };
    call.messages
        .iter()
        .map(|m| {
            let label = m.message.as_deref().unwrap_or(&m.message_id);
            let class = case.end.and_then(|e| {
                e.outcomes.iter().find(|o| {
                    o.message == label || o.message_id.as_deref() == Some(m.message_id.as_str())
                })
            });
            let redelivered = class.is_some_and(|o| o.class == ClassName::ObservedRedelivery);
            let count = m
                .receive_count
                .map(|n| format!(" (receive count {n})"))
                .unwrap_or_default();
            Mark {
                kind: if redelivered {
                    MarkKind::Redelivery
                } else {
                    MarkKind::Sighting
                },
                class: if redelivered {
                    "redelivery"
                } else {
                    "sighting"
                }
                .to_string(),
                parts: vec![Part {
                    shape: Shape::Point,
                    track: 0,
                    start: at,
                    end: at,
                    class: "",
                }],
                label: Some(if redelivered {
                    format!("{label} back{count}")
                } else {
                    format!("{label} seen{count}")
                }),
                priority: if redelivered { 0 } else { 2 },
                title: format!(
                    "{} {label}{count} at +{}\nmessage id {}{}{}",
                    if redelivered {
                        "redelivery of"
                    } else {
                        "sighting of"
                    },
                    format_ms(at as u64),
                    m.message_id,
                    m.handle_digest
                        .as_ref()
                        .map(|h| format!("\nhandle sha256 {h}"))
                        .unwrap_or_default(),
                    class
                        .map(|o| format!("\nclass {}", o.class))
                        .unwrap_or_default()
                ),
                data: vec![("message", label.to_string())],
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_core::evidence::Record;
    use sqsprobe_core::evidence::fixtures::*;
    use sqsprobe_core::evidence::format::{Phase, Verdict};
    use sqsprobe_core::evidence::view::RunView;

    /// The stale-handle experiment: A's 1 s lease lapses, B receives with 30 s, A deletes.
    fn stale_handle() -> Vec<Record> {
        let case = "stale";
        let mut records = vec![run_start(&[case]), case_start(case, 10)];
        let mut pre = call(case, Phase::Setup, "GetQueueUrl", 0, 10);
        pre.completion = Completion::Fail;
        pre.http_status = Some(400);
        pre.error_code = Some("AWS.SimpleQueueService.NonExistentQueue".to_string());
        pre.error_type = Some("QueueDoesNotExist".to_string());
        let mut a = call(case, Phase::Step, "ReceiveMessage", 100, 120);
        a.attempt = Some("A".to_string());
        a.lease_ms = Some(1000);
        a.messages = vec![received("m1", &"a1".repeat(32), 1)];
        let mut b = call(case, Phase::Step, "ReceiveMessage", 1700, 1720);
        b.attempt = Some("B".to_string());
        b.lease_ms = Some(30_000);
        b.messages = vec![received("m1", &"b2".repeat(32), 2)];
        let mut del = call(case, Phase::Step, "DeleteMessage", 1750, 1760);
        del.attempt = Some("A".to_string());
        del.handle_digest = Some("a1".repeat(32));
        del.message = Some("m1".to_string());
        records.extend([pre, a, b, del].map(Record::Call));
        let mut end = case_end(case, Verdict::Pass, "ok", &[]);
        end.duration_ms = 4700;
        records.push(Record::CaseEnd(end));
        records
    }

    fn lease_marks<'a>(p: &'a Picture, lane: &str) -> Vec<&'a Mark> {
        p.lanes
            .iter()
            .filter(|l| l.name == lane)
            .flat_map(|l| &l.marks)
            .filter(|m| m.kind == MarkKind::Lease)
            .collect()
    }

    #[test]
    fn a_lapsed_lease_and_a_superseded_delete() {
        let records = stale_handle();
        let run = RunView::new(&records);
        let p = picture(&run.cases[0]).unwrap();
        let a = lease_marks(&p, "attempt A");
        assert_eq!(a.len(), 1);
        let held = &a[0].parts[0];
        // Rows are written to the millisecond: the answer came before 121.
        assert_eq!((held.start, held.end, held.class), (121.0, 1121.0, "held"));
        assert!(
            a[0].parts
                .iter()
                .any(|x| x.shape == Shape::Cap && x.start == 1121.0)
        );
        let kept = a[0]
            .parts
            .iter()
            .find(|x| x.shape == Shape::Dashed)
            .unwrap();
        assert_eq!((kept.start, kept.end), (1121.0, 1750.0));
        assert!(a[0].title.contains("lapsed at +1.1 s"), "{}", a[0].title);
        let b = lease_marks(&p, "attempt B");
        assert_eq!(b.len(), 1);
        assert_eq!(
            b[0].parts[0].end, 4700.0,
            "B's 30 s lease runs past the axis"
        );
        assert!(b[0].label.as_deref().unwrap().ends_with("to +31.7 s"));
        let delete = p
            .lanes
            .iter()
            .flat_map(|l| &l.marks)
            .find(|m| {
                m.data
                    .iter()
                    .any(|d| d == &("action", "DeleteMessage".to_string()))
            })
            .unwrap();
        // B had received the message since: the judge's class for A's delete, drawn as is.
        assert!(delete.class.contains("outside"));
        assert!(delete.data.contains(&("ack", "other_attempt".to_string())));
        let harness = p.lanes.iter().find(|l| l.name == "harness").unwrap();
        assert_eq!(
            harness.marks[0].class, "call harness",
            "the pre-check is not a failure"
        );
        assert!(harness.marks[0].title.contains("ownership pre-check"));
    }

    #[test]
    fn a_delete_in_time_cuts_the_lease_and_a_change_extends_it() {
        let case = "c";
        let mut records = vec![run_start(&[case]), case_start(case, 10)];
        let mut a = call(case, Phase::Step, "ReceiveMessage", 0, 100);
        a.attempt = Some("A".to_string());
        a.lease_ms = Some(1000);
        a.messages = vec![received("m1", &"a1".repeat(32), 1)];
        let mut change = call(case, Phase::Step, "ChangeMessageVisibility", 500, 600);
        change.attempt = Some("A".to_string());
        change.handle_digest = Some("a1".repeat(32));
        change.lease_ms = Some(10_000);
        let mut refused = call(case, Phase::Step, "DeleteMessage", 800, 900);
        refused.attempt = Some("A".to_string());
        refused.handle_digest = Some("a1".repeat(32));
        refused.completion = Completion::Fail;
        refused.http_status = Some(400);
        let mut del = call(case, Phase::Step, "DeleteMessage", 2000, 2100);
        del.attempt = Some("A".to_string());
        del.handle_digest = Some("a1".repeat(32));
        records.extend([a, change, refused, del].map(Record::Call));
        records.push(Record::CaseEnd(case_end(case, Verdict::Pass, "ok", &[])));
        let run = RunView::new(&records);
        let p = picture(&run.cases[0]).unwrap();
        let lease = lease_marks(&p, "attempt A")[0];
        let bars: Vec<(f64, f64, &str)> = lease
            .parts
            .iter()
            .filter(|x| x.shape == Shape::Bar)
            .map(|x| (x.start, x.end, x.class))
            .collect();
        assert_eq!(bars, [(101.0, 601.0, "held"), (601.0, 2101.0, "extended")]);
        assert!(
            lease
                .parts
                .iter()
                .any(|x| x.class == "was" && x.start == 1101.0)
        );
        assert!(lease.title.contains("deleted at +2.1 s"), "{}", lease.title);
        assert!(lease.title.contains("refused"), "{}", lease.title);
        assert!(
            !p.lanes
                .iter()
                .flat_map(|l| &l.marks)
                .any(|m| m.class.contains("outside"))
        );
    }

    #[test]
    fn sleeps_findings_and_redeliveries_are_marked() {
        let mut records = full_run();
        records.insert(
            3,
            Record::Step(sqsprobe_core::evidence::format::StepEnd {
                run_id: RUN.to_string(),
                case: "stale-ack".to_string(),
                step: 1,
                line: 30,
                keyword: "sleep".to_string(),
                started_at: at(200),
                ended_at: at(1150),
                check: sqsprobe_core::evidence::facts::CheckKind::Fail,
                trial: None,
            }),
        );
        for r in &mut records {
            if let Record::CaseEnd(e) = r
                && e.case == "stale-ack"
            {
                e.findings.push(sqsprobe_core::evidence::format::Finding {
                    step: Some(1),
                    line: 30,
                    message: "step 2 (sleep): it broke".to_string(),
                    status: None,
                    code: None,
                    teardown: false,
                });
            }
        }
        let run = RunView::new(&records);
        let p = picture(&run.cases[0]).unwrap();
        let all: Vec<&Mark> = p.lanes.iter().flat_map(|l| &l.marks).collect();
        let sleep = all.iter().find(|m| m.kind == MarkKind::Sleep).unwrap();
        assert_eq!(sleep.label.as_deref(), Some("2 sleep 950 ms"));
        assert!(sleep.class.contains("failed-step"));
        let finding = all.iter().find(|m| m.kind == MarkKind::Finding).unwrap();
        assert_eq!(finding.label.as_deref(), Some("✗ step 2 (sleep): it broke"));
        let back = all.iter().find(|m| m.kind == MarkKind::Redelivery).unwrap();
        assert_eq!(back.label.as_deref(), Some("m1 back (receive count 3)"));
        assert!(all.iter().any(|m| m.kind == MarkKind::Window));
    }

    #[test]
    fn an_injected_fault_is_marked_apart_from_the_call() {
        let mut records = full_run();
        for r in &mut records {
            if let Record::Call(c) = r
                && c.action == "DeleteMessage"
            {
                c.completion = Completion::Info;
                c.http_status = None;
                c.fault = Some(sqsprobe_core::evidence::format::FaultEvidence {
                    kind: "lose-response".to_string(),
                    scope: "step".to_string(),
                    delay_ms: None,
                    status: None,
                    code: None,
                });
            }
        }
        let run = RunView::new(&records);
        let p = picture(&run.cases[0]).unwrap();
        let lane = p.lanes.iter().find(|l| l.name == "attempt B").unwrap();
        let fault = lane
            .marks
            .iter()
            .find(|m| m.kind == MarkKind::Fault)
            .unwrap();
        assert_eq!(fault.label.as_deref(), Some("fault: lose-response"));
        assert!(
            fault
                .title
                .starts_with("injected fault (step scope): lose-response\non DeleteMessage"),
            "{}",
            fault.title
        );
        let delete = lane
            .marks
            .iter()
            .find(|m| {
                m.kind == MarkKind::Call
                    && m.data.contains(&("action", "DeleteMessage".to_string()))
            })
            .unwrap();
        assert!(delete.class.starts_with("call info"), "{}", delete.class);
        assert_eq!(fault.parts[0].start, delete.parts[0].start);
    }

    #[test]
    fn an_unexpected_harness_failure_is_still_shown() {
        let mut c = call("x", Phase::Setup, "CreateQueue", 0, 10);
        c.completion = Completion::Fail;
        assert_eq!(harness_role(&c), ("setting up the case's queues", false));
        c.action = "GetQueueUrl".to_string();
        c.error_type = Some("QueueDoesNotExist".to_string());
        assert!(harness_role(&c).1);
        c.error_type = None;
        c.error_code = Some("AWS.SimpleQueueService.NonExistentQueue".to_string());
        assert!(harness_role(&c).1, "the legacy code names the same error");
    }
}
