//! `report.html` of an audit (pure): the findings first, then one lane per message on one
//! time axis — each delivery as its lease (from the receive to the lease's end), each
//! acknowledgement as a mark at its moment, coloured by what the judge found of it (green:
//! clean, red: REPAIR, amber: HOLD), with its words on hover; under `--nemesis`, each kill
//! and each start after it as a line across the lanes, each pause as a band; then the
//! consumer's calls. Self-contained: inline CSS and SVG, no script; every text from the
//! consumer's run escaped.
//!
//! It is drawn with the run report's parts (`report::html`): its one stylesheet, its time
//! axis's ticks, and its calls table over the consumer's `call` rows, so a change to how the
//! reports look is made once.

use std::fmt::Write;

use super::judge::{Audit, FindingKind};
use super::log::Log;
use super::nemesis::ActKind;
use super::report::Ended;
use sqsprobe_core::evidence::format::{Call, Decision};
use sqsprobe_facts::text::escape::html_text as esc;

const WIDTH: f64 = 860.0;
const LANE: f64 = 26.0;

/// The page.
pub(crate) fn render(audit: &Audit, log: &Log, ended: &Ended, calls: &[Call]) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>sqsprobe audit</title><style>{}</style></head><body>\n<h1>sqsprobe audit</h1>\n",
        crate::report::html::stylesheet()
    );
    let _ = writeln!(
        out,
        "<p>{} messages, {} finding{}. Consumer: {}.</p>",
        audit.messages,
        audit.findings.len(),
        if audit.findings.len() == 1 { "" } else { "s" },
        esc(&ended.how)
    );
    if let Some(nemesis) = &ended.nemesis {
        let _ = writeln!(out, "<p>{}.</p>", esc(&nemesis.line()));
    }
    if !ended.concluded {
        let _ = writeln!(
            out,
            "<p class=\"banner\">The audit could not conclude: the consumer {}.</p>",
            esc(&ended.how)
        );
    }
    if ended.crashed {
        let _ = writeln!(
            out,
            "<p class=\"banner\">Not clean: the consumer {}. The last lines of <code>consumer.log</code>:</p>\n<pre class=\"tail\">{}</pre>",
            esc(&ended.how),
            esc(&ended.log_tail.join("\n"))
        );
    }
    if !audit.foreign_queues.is_empty() {
        let named: Vec<String> = audit
            .foreign_queues
            .iter()
            .map(|q| format!("<code>{}</code>", esc(&q.line())))
            .collect();
        let _ = writeln!(
            out,
            "<p class=\"banner\">The consumer used queues the audit did not make: {}. The plan's queues are in <code>SQSPROBE_QUEUE_URL</code> and <code>SQSPROBE_QUEUE_URL_&lt;NAME&gt;</code>.</p>",
            named.join("; ")
        );
    }
    if !audit.ledger {
        out.push_str("<p class=\"banner\">Not clean: no ledger was written (<code>SQSPROBE_LEDGER</code>), so the work was not checked (<code>ack_before_commit</code>, <code>duplicate_commit</code>, <code>lost_work</code>) and no message is ACCEPT.</p>\n");
    }
    if !audit.findings.is_empty() {
        out.push_str("<h2>Findings</h2>\n<ul class=\"findings\">\n");
        for f in &audit.findings {
            let _ = writeln!(
                out,
                "<li class=\"{}\"><code>{}</code> {}{}{}: {}</li>",
                f.decision.as_str(),
                esc(f.kind.as_str()),
                f.decision.as_str(),
                f.business_key
                    .as_deref()
                    .map(|k| format!(" <code>{}</code>", esc(k)))
                    .unwrap_or_default(),
                f.attempt
                    .map(|a| format!(" attempt {a}"))
                    .unwrap_or_default(),
                esc(&f.detail)
            );
        }
        out.push_str("</ul>\n");
    }
    lanes(&mut out, audit, log);
    if !calls.is_empty() {
        let _ = writeln!(
            out,
            "<h2>The consumer's calls</h2>\n<details><summary>{} request{} as the emulator answered them (handles and bodies as SHA-256)</summary>",
            calls.len(),
            if calls.len() == 1 { "" } else { "s" }
        );
        crate::report::html::calls_table(&mut out, "consumer", calls.iter().collect());
        out.push_str("</details>\n");
    }
    out.push_str("</body></html>\n");
    out
}

/// The nemesis's acts across the lanes (from `top` to `bottom`): a line at each kill and
/// start after it, labelled above the lanes, and a band over each pause until its resume (or
/// the kill that ended it, or the end of the axis).
fn nemesis(out: &mut String, log: &Log, x: &dyn Fn(u64) -> f64, top: f64, bottom: f64) {
    let acts = &log.nemesis;
    for (i, act) in acts.iter().enumerate() {
        let at = x(act.at_ms);
        let why = match (act.on, act.count, act.business_key.as_deref()) {
            (Some(on), Some(n), Some(key)) => format!(" at {} {n} ({key})", on.as_str()),
            (Some(on), Some(n), None) => format!(" at {} {n}", on.as_str()),
            _ => act
                .start
                .map(|s| format!(": start {s}"))
                .unwrap_or_default(),
        };
        let title = format!("{}{why}", act.act.as_str());
        match act.act {
            ActKind::Kill | ActKind::Restart => {
                let _ = writeln!(
                    out,
                    "<line class=\"nemesis {kind}\" x1=\"{at:.1}\" y1=\"{:.1}\" x2=\"{at:.1}\" y2=\"{bottom:.1}\"><title>{t}</title></line><text class=\"nemesis\" x=\"{at:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{kind}</text>",
                    top - 4.0,
                    top - 8.0,
                    kind = act.act.as_str(),
                    t = esc(&title),
                    anchor = if act.act == ActKind::Kill {
                        "end"
                    } else {
                        "start"
                    },
                );
            }
            ActKind::Pause => {
                let until = acts[i + 1..]
                    .iter()
                    .find(|a| matches!(a.act, ActKind::Resume | ActKind::Kill))
                    .map_or(x(u64::MAX).min(WIDTH - 10.0), |a| x(a.at_ms));
                let _ = writeln!(
                    out,
                    "<rect class=\"pause\" x=\"{at:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"><title>{}</title></rect><text class=\"nemesis\" x=\"{at:.1}\" y=\"{:.1}\">pause</text>",
                    top - 4.0,
                    (until - at).max(2.0),
                    bottom - top + 4.0,
                    esc(&format!("paused (SIGSTOP){why}, until SIGCONT")),
                    top - 8.0,
                );
            }
            ActKind::Resume => {}
        }
    }
}

/// One lane per message on one time axis.
fn lanes(out: &mut String, audit: &Audit, log: &Log) {
    let times = log
        .deliveries
        .iter()
        .flat_map(|d| [d.at_ms, d.lease_until_ms])
        .chain(audit.acknowledgements.iter().map(|a| a.at_ms))
        .chain(log.nemesis.iter().map(|a| a.at_ms));
    let (Some(start), Some(end)) = (times.clone().min(), times.max()) else {
        out.push_str("<p>Nothing was delivered.</p>\n");
        return;
    };
    let span = (end - start).max(1) as f64;
    let label_w = 90.0;
    let x = |t: u64| label_w + (t.saturating_sub(start) as f64 / span) * (WIDTH - label_w - 10.0);
    // Under a nemesis, a strip above the lanes names its acts.
    let top = if log.nemesis.is_empty() { 8.0 } else { 24.0 };
    let height = LANE * audit.per_message.len() as f64 + top + 16.0;
    out.push_str("<h2>Messages</h2>\n<p class=\"legend\">Each lane is a message: a blue bar is a delivery's lease (receive to lease end), a mark an acknowledgement (● delete, ◆ visibility change), green when clean, red REPAIR, amber HOLD. Hover for the words.");
    let did = |kind: ActKind| log.nemesis.iter().any(|a| a.act == kind);
    if did(ActKind::Kill) {
        out.push_str(" The nemesis: a red dashed line where it killed the consumer, a green one where the consumer was started again.");
    }
    if did(ActKind::Pause) {
        out.push_str(" A grey band: the nemesis had paused the consumer (SIGSTOP until SIGCONT).");
    }
    out.push_str("</p>\n");
    let _ = writeln!(
        out,
        "<svg class=\"lanes\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height:.0}\" viewBox=\"0 0 {WIDTH} {height:.0}\" role=\"img\" aria-label=\"deliveries and acknowledgements per message\">"
    );
    // The time axis, as the run report's timelines tick it: from the first event on.
    let lanes_bottom = height - 16.0;
    for (t, label) in crate::report::html::axis_ticks(span) {
        let gx = x(start + t as u64);
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{gx:.1}\" y1=\"{:.1}\" x2=\"{gx:.1}\" y2=\"{lanes_bottom:.1}\"/><text class=\"tick\" x=\"{gx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            top - 4.0,
            lanes_bottom + 12.0,
            esc(&label)
        );
    }
    nemesis(out, log, &x, top, lanes_bottom);
    for (row, m) in audit.per_message.iter().enumerate() {
        let y = top + row as f64 * LANE;
        let _ = writeln!(
            out,
            "<text x=\"0\" y=\"{:.1}\">{}</text>",
            y + 13.0,
            esc(m.business_key.as_deref().unwrap_or(&m.message))
        );
        for (i, d) in log
            .deliveries
            .iter()
            .filter(|d| d.message_id == m.message)
            .enumerate()
        {
            let (x0, x1) = (x(d.at_ms), x(d.lease_until_ms));
            let _ = writeln!(
                out,
                "<rect class=\"lease\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"10\"><title>attempt {}: leased for {} ms</title></rect>",
                y + 4.0 + (i % 2) as f64 * 3.0,
                (x1 - x0).max(2.0),
                i + 1,
                d.lease_until_ms - d.at_ms
            );
        }
        for a in audit
            .acknowledgements
            .iter()
            .filter(|a| a.message.as_deref() == Some(m.message.as_str()))
        {
            let class = match a.finding.map(FindingKind::decision) {
                None => "ok",
                Some(Decision::Repair) => "repair",
                Some(Decision::Hold) => "hold",
                Some(_) => "reconcile",
            };
            let said = format!(
                "{} by attempt {}: {}",
                a.op,
                a.attempt.unwrap_or(0),
                a.finding.map_or("clean", FindingKind::as_str)
            );
            let (cx, cy) = (x(a.at_ms), y + 9.0);
            if a.op == "delete" {
                let _ = writeln!(
                    out,
                    "<circle class=\"ack {class}\" cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"5\"><title>{}</title></circle>",
                    esc(&said)
                );
            } else {
                let _ = writeln!(
                    out,
                    "<path class=\"ack {class}\" d=\"M{cx:.1} {:.1} l5 5 l-5 5 l-5 -5 z\"><title>{}</title></path>",
                    cy - 5.0,
                    esc(&said)
                );
            }
        }
    }
    out.push_str("</svg>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::judge::judge;
    use crate::audit::judge::tests::keyed;
    use crate::audit::log::{AckFact, End};
    use sqsprobe_emulator::audit::{Ack, AckOp, Delivery};

    #[test]
    fn findings_come_first_and_each_ack_is_a_mark_in_its_lane() {
        let delivery = |nonce, at| Delivery {
            queue: "q".into(),
            message_id: "m1".into(),
            seq: 1,
            nonce,
            body: r#"{"business_key": "<script>x</script>"}"#.into(),
            attributes: Default::default(),
            at_ms: at,
            lease_until_ms: at + 1_000,
        };
        let log = keyed(Log {
            deliveries: vec![delivery(1, 0), delivery(2, 1_500)],
            acks: vec![AckFact {
                ack: Ack {
                    queue: "q".into(),
                    op: AckOp::Delete,
                    handle: Some((1, 1)),
                    handle_digest: "ab".repeat(32),
                    at_ms: 2_000,
                },
                business_key: None,
                commits_at_ack: None,
                handed_off: false,
            }],
            ..Log::default()
        });
        let audit = judge(
            &log,
            &End {
                sent: vec!["m1".into()],
                remaining: Vec::new(),
                dead_lettered: Vec::new(),
                ledger: None,
                queues: Vec::new(),
            },
        );
        let ended = Ended {
            how: "exited 0".into(),
            concluded: true,
            exit_status: Some(0),
            ..Ended::default()
        };
        let page = render(&audit, &log, &ended, &[]);
        let findings = page.find("<h2>Findings</h2>").expect("findings listed");
        let lanes = page.find("<svg class=\"lanes\"").expect("the lanes drawn");
        assert!(findings < lanes);
        assert_eq!(page.matches("<rect class=\"lease\"").count(), 2);
        assert!(page.contains("<circle class=\"ack repair\""), "{page}");
        assert!(
            page.contains("delete by attempt 1: stale_handle_ack"),
            "{page}"
        );
        assert!(!page.contains("<script>"), "escaped: {page}");
        assert!(page.contains("no ledger was written"));
        assert!(
            !page.contains("<line class=\"nemesis") && !page.contains("The nemesis:"),
            "no nemesis, no word of it"
        );
    }

    /// A killed-and-restarted consumer and a pause, on the timeline: a line at the kill and at
    /// the restart across the lanes, a band over the pause, and the nemesis's line on top.
    #[test]
    fn the_nemesis_kill_restart_and_pause_are_on_the_timeline() {
        use crate::audit::nemesis::{Act, On, Record};
        let act = |act, at_ms, on: Option<On>| Act {
            act,
            at_ms,
            on,
            count: on.map(|_| 2),
            message_id: None,
            business_key: Some("b-2".into()),
            start: (act == ActKind::Restart).then_some(2),
        };
        let delivery = |seq: u64, at| Delivery {
            queue: "q".into(),
            message_id: format!("m{seq}"),
            seq,
            nonce: seq,
            body: format!(r#"{{"business_key": "b-{seq}"}}"#),
            attributes: serde_json::Map::new(),
            at_ms: at,
            lease_until_ms: at + 1_000,
        };
        let acts = vec![
            act(ActKind::Pause, 100, Some(On::Delivery)),
            act(ActKind::Resume, 1_600, None),
            act(ActKind::Kill, 2_000, Some(On::Delete)),
            act(ActKind::Restart, 2_100, None),
        ];
        let log = keyed(Log {
            deliveries: vec![delivery(1, 0), delivery(2, 100)],
            nemesis: acts.clone(),
            ..Log::default()
        });
        let audit = judge(
            &log,
            &End {
                sent: vec!["m1".into(), "m2".into()],
                ..End::default()
            },
        );
        let ended = Ended {
            how: "stopped".into(),
            concluded: true,
            nemesis: Some(Record {
                spec: "kill=1,pause=1".into(),
                points: Vec::new(),
                acts,
            }),
            ..Ended::default()
        };
        let page = render(&audit, &log, &ended, &[]);
        assert_eq!(
            page.matches("<line class=\"nemesis kill\"").count(),
            1,
            "{page}"
        );
        assert_eq!(page.matches("<line class=\"nemesis restart\"").count(), 1);
        assert_eq!(page.matches("<rect class=\"pause\"").count(), 1);
        assert!(
            page.contains("<title>kill at delete 2 (b-2)</title>"),
            "{page}"
        );
        assert!(page.contains("<title>restart: start 2</title>"), "{page}");
        assert!(
            page.contains("nemesis kill=1,pause=1: killed at delete 2; started again 1 time; paused at delivery 2 past the lease."),
            "{page}"
        );
    }
}
