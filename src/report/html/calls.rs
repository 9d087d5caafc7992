//! A case's calls as a table that fits its box: step (1-based, as findings count it; `harness`
//! for the harness's own calls), attempt, action, message, digest (12 characters, the whole
//! digest on hover), status, error code, latency. The request id and the whole evidence row
//! are on hover; a server message gets a row of its own under its call, wrapped.
//!
//! The table has fixed column widths and cells that cut with an ellipsis, so no request id or
//! digest can push it out of its box.

use super::picture::{call_title, harness_role, message_labels, step_number};
use sqsprobe_core::evidence::format::{Call, Completion, Phase};
use sqsprobe_core::evidence::view::{CaseView, parse_time};
use sqsprobe_facts::text::escape::{html_attr as attr, html_text as esc};
use std::fmt::Write;

/// Columns: header and width in percent.
const COLUMNS: [(&str, u8); 8] = [
    ("step", 8),
    ("attempt", 7),
    ("action", 22),
    ("message", 12),
    ("digest", 15),
    ("status", 7),
    ("error code", 20),
    ("latency", 9),
];

/// Writes the calls table of `case`.
pub(crate) fn table(out: &mut String, case: &CaseView) {
    out.push_str("<div class=\"calls-box\"><table class=\"calls\">\n<colgroup>");
    for (_, width) in COLUMNS {
        let _ = write!(out, "<col style=\"width:{width}%\">");
    }
    out.push_str("</colgroup>\n<tr>");
    for (name, _) in COLUMNS {
        let _ = write!(out, "<th>{name}</th>");
    }
    out.push_str("</tr>\n");
    let origin = case.origin();
    let rel = |t: &str| {
        let t = parse_time(t)?;
        Some(((t - origin?).num_microseconds()? as f64 / 1000.0).max(0.0))
    };
    for call in &case.calls {
        row(out, call, &rel);
    }
    out.push_str("</table></div>\n");
}

fn row(out: &mut String, call: &Call, rel: &impl Fn(&str) -> Option<f64>) {
    let harness = matches!(call.phase, Phase::Setup | Phase::Teardown);
    let step = match (call.phase, call.step) {
        (Phase::Setup | Phase::Teardown, _) => "harness".to_string(),
        (Phase::Observe, Some(s)) => format!("{} observe", step_number(s)),
        (_, Some(s)) => step_number(s).to_string(),
        (_, None) => String::new(),
    };
    let mut class = match call.completion {
        Completion::Ok => "ok",
        Completion::Fail => "fail",
        Completion::Info => "info",
    }
    .to_string();
    if harness {
        class = format!(
            "harness{}",
            if harness_role(call).1 {
                ""
            } else {
                " harness-fail"
            }
        );
    }
    let mut action = esc(&call.action);
    if call.attempt_number > 1 || call.retried {
        let _ = write!(
            action,
            " <small>try {}{}</small>",
            call.attempt_number,
            if call.retried { ", retried" } else { "" }
        );
    }
    let digests = digests(call);
    let digest_cell: Vec<String> = digests
        .iter()
        .map(|d| format!("<code title=\"{}\">{}</code>", attr(d), esc(short(d))))
        .collect();
    let status = call
        .http_status
        .map(|s| s.to_string())
        .unwrap_or_else(|| match call.completion {
            Completion::Info => "none".to_string(),
            _ => String::new(),
        });
    let code = call
        .error_code
        .as_deref()
        .or(call.error_type.as_deref())
        .unwrap_or("");
    let labels = message_labels(call).join(", ");
    let _ = writeln!(
        out,
        "<tr class=\"{class}\" title=\"{}\"><td>{}</td><td>{}</td><td>{action}</td><td title=\"{}\">{}</td><td>{}</td><td class=\"num\">{}</td><td title=\"{}\">{}</td><td class=\"num\">{:.0} ms</td></tr>",
        attr(&call_title(call, rel)),
        esc(&step),
        esc(call.attempt.as_deref().unwrap_or("")),
        attr(&labels),
        esc(&labels),
        digest_cell.join(" "),
        esc(&status),
        attr(code),
        esc(code),
        call.latency_ms,
    );
    if let Some(message) = call.error_message.as_deref().filter(|m| !m.is_empty()) {
        let _ = writeln!(
            out,
            "<tr class=\"more {class}\"><td></td><td colspan=\"7\">server: {}{}</td></tr>",
            esc(message),
            call.request_id
                .as_deref()
                .map(|id| format!(" <small>(request id {})</small>", esc(id)))
                .unwrap_or_default()
        );
    }
}

/// The handle digest the call sent, else those it received or batched.
fn digests(call: &Call) -> Vec<&str> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_core::evidence::fixtures::full_run;
    use sqsprobe_core::evidence::view::RunView;

    #[test]
    fn digests_are_short_with_the_whole_on_hover_and_steps_count_from_one() {
        let records = full_run();
        let run = RunView::new(&records);
        let mut out = String::new();
        table(&mut out, &run.cases[0]);
        let b2 = "b2".repeat(32);
        assert!(out.contains(&format!("<code title=\"{b2}\">{}</code>", &b2[..12])));
        assert!(out.contains("<tr class=\"harness\""), "{out}");
        assert!(
            out.contains("<td>1</td><td>A</td><td>ReceiveMessage</td>"),
            "{out}"
        );
        assert!(out.contains("<td>4 observe</td>"), "{out}");
        assert!(out.contains("request id req-1300"));
        assert_eq!(out.matches("<col ").count(), COLUMNS.len());
        let widths: u32 = COLUMNS.iter().map(|c| u32::from(c.1)).sum();
        assert_eq!(widths, 100);
    }

    #[test]
    fn a_server_message_gets_its_own_row() {
        let mut records = full_run();
        for r in &mut records {
            if let sqsprobe_core::evidence::Record::Call(c) = r
                && c.action == "DeleteMessage"
            {
                c.completion = Completion::Fail;
                c.http_status = Some(400);
                c.error_code = Some("ReceiptHandleIsInvalid".to_string());
                c.error_message = Some("The input receipt handle is not valid.".to_string());
            }
        }
        let run = RunView::new(&records);
        let mut out = String::new();
        table(&mut out, &run.cases[0]);
        assert!(out.contains("<tr class=\"more fail\"><td></td><td colspan=\"7\">server: The input receipt handle is not valid. <small>(request id req-1300)</small></td></tr>"), "{out}");
    }
}
