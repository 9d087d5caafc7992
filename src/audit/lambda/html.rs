//! The invocations of an `audit --lambda` as lanes of `report.html` (pure): one lane per
//! invocation on one time axis, its bar from the moment the mapping invoked the function to its
//! answer, coloured by how it ended, and one square per record of its batch — green deleted,
//! red returned to the queue. Inline SVG and CSS, no script; every text escaped.

use std::fmt::Write;

use super::invocation::Invocation;
use sqsprobe_facts::text::escape::html_text as esc;

const WIDTH: f64 = 960.0;
/// The left margin, where each lane's label sits.
const LABEL: f64 = 230.0;
const LANE: f64 = 22.0;
const SQUARE: f64 = 8.0;

const CSS: &str = "svg.invocations text{font:11px ui-monospace,monospace;fill:#59636e}\
svg.invocations rect.bar{fill-opacity:.3;stroke-width:.5}\
svg.invocations rect.success,svg.invocations rect.partial{fill:#54aeff;stroke:#0969da}\
svg.invocations rect.failure{fill:#ff8182;stroke:#cf222e}\
svg.invocations rect.deleted{fill:#2da44e}svg.invocations rect.returned{fill:#cf222e}";

/// The section: a heading, a legend and the lanes; empty without an invocation.
pub(crate) fn section(invocations: &[Invocation]) -> String {
    let mut out = String::new();
    let (Some(first), Some(last)) = (
        invocations.iter().map(|i| i.started_ms).min(),
        invocations.iter().map(|i| i.ended_ms).max(),
    ) else {
        return out;
    };
    let span = (last.saturating_sub(first)).max(1) as f64;
    let x = |ms: u64| LABEL + (ms.saturating_sub(first)) as f64 / span * (WIDTH - LABEL - 10.0);
    let height = invocations.len() as f64 * LANE + 10.0;
    let _ = write!(
        out,
        "<style>{CSS}</style>\n<h2>Invocations</h2>\n<p class=\"legend\">Each lane is one \
         invocation by the event source mapping: a bar from the invoke to the function's answer \
         (blue: success or a partial batch response, red: the whole batch failed), a square per \
         record of its batch (green deleted, red returned to the queue). Hover for the words.</p>\n\
         <svg class=\"invocations\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" \
         height=\"{height:.0}\" viewBox=\"0 0 {WIDTH} {height:.0}\" role=\"img\" \
         aria-label=\"invocations, their batches and outcomes\">\n"
    );
    for (n, inv) in invocations.iter().enumerate() {
        let y = n as f64 * LANE + 5.0;
        let class = if inv.outcome.answered() {
            inv.outcome.as_str()
        } else {
            "failure"
        };
        let why = inv
            .error_type
            .as_deref()
            .or(inv.wrong_identifier.map(|w| w.words()))
            .map_or(String::new(), |w| format!(" ({w})"));
        let _ = writeln!(
            out,
            "<text x=\"0\" y=\"{:.1}\">{} {}</text>",
            y + 13.0,
            esc(&inv.request_id[..inv.request_id.len().min(8)]),
            esc(inv.outcome.as_str())
        );
        let (x0, x1) = (x(inv.started_ms), x(inv.ended_ms));
        let width = (x1 - x0).max(SQUARE * inv.records.len() as f64 + 2.0);
        // A short invocation near the end of the axis is drawn wide enough for its records,
        // ending at the edge rather than past it.
        let x0 = x0.min(WIDTH - 2.0 - width).max(LABEL);
        let _ = writeln!(
            out,
            "<rect class=\"bar {class}\" data-outcome=\"{}\" x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{width:.1}\" height=\"{:.1}\"><title>invocation {}: {}{}, {} records, {} ms</title></rect>",
            esc(inv.outcome.as_str()),
            LANE - 4.0,
            esc(&inv.request_id),
            esc(inv.outcome.as_str()),
            esc(&why),
            inv.records.len(),
            inv.ended_ms.saturating_sub(inv.started_ms)
        );
        for (p, r) in inv.records.iter().enumerate() {
            let returned = inv.returned.contains(&p);
            let _ = writeln!(
                out,
                "<rect class=\"{}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"><title>{} (receive {}): {}</title></rect>",
                if returned { "returned" } else { "deleted" },
                x0 + 1.0 + p as f64 * SQUARE,
                y + 5.0,
                SQUARE - 2.0,
                SQUARE,
                esc(r.business_key.as_deref().unwrap_or(&r.message_id)),
                r.receive_count,
                if returned {
                    "returned to the queue"
                } else {
                    "deleted"
                }
            );
        }
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::lambda::invocation::Invoked;

    #[test]
    fn a_lane_per_invocation_and_a_square_per_record() {
        let record = |k: &str| Invoked {
            message_id: format!("m-{k}"),
            business_key: Some(k.to_string()),
            group: None,
            receive_count: 1,
            commits_before: None,
            commits_after: Some(1),
        };
        let inv = |id: &str, outcome: &'static str, returned: Vec<usize>| Invocation {
            request_id: id.into(),
            started_ms: 1000,
            ended_ms: 1200,
            records: vec![record("b-1"), record("<b-2>")],
            outcome: serde_json::from_value(serde_json::Value::String(outcome.into())).unwrap(),
            error_type: (outcome == "function_error").then(|| "ValueError".into()),
            wrong_identifier: None,
            returned,
            reset: false,
        };
        let page = section(&[
            inv("aaaaaaaa-1", "function_error", vec![0, 1]),
            inv("bbbbbbbb-2", "partial", vec![1]),
        ]);
        assert_eq!(page.matches("class=\"bar ").count(), 2, "{page}");
        assert_eq!(page.matches("class=\"returned\"").count(), 3, "{page}");
        assert_eq!(page.matches("class=\"deleted\"").count(), 1, "{page}");
        assert!(page.contains("(ValueError)"), "{page}");
        assert!(
            page.contains("&lt;b-2&gt;") && !page.contains("<b-2>"),
            "escaped: {page}"
        );
        assert!(section(&[]).is_empty());
    }
}
