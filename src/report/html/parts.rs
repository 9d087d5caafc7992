//! The small pieces every part of the report shares — the page, the trials of a case, the
//! side-by-side matrix: a case's fragment id, the CSS class of its state, its findings as a
//! list. Kept below them all, so none of them imports another for these.

use sqsprobe_core::evidence::view::{CaseState, CaseView};
use sqsprobe_facts::text::escape::html_text as esc;
use std::fmt::Write;

/// The fragment id of a case's section (`report.html#case-…`): the id's letters, digits,
/// `-`, `_` and `.` as they are, every other byte as `~XX`, so distinct ids never share one.
pub fn case_anchor(id: &str) -> String {
    let mut out = String::from("case-");
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.') {
            out.push(b as char);
        } else {
            let _ = write!(out, "~{b:02X}");
        }
    }
    out
}

/// The CSS class of a state (also its badge colour).
pub(crate) fn state_class(state: CaseState) -> &'static str {
    match state {
        CaseState::Finished(v) => v.as_str(),
        CaseState::DidNotFinish => "did_not_finish",
        CaseState::NotStarted => "not_started",
    }
}

/// A case's (or a trial's) findings, each with its `suite:line`.
pub(crate) fn findings(out: &mut String, case: &CaseView) {
    let findings = case.findings();
    if !findings.is_empty() {
        out.push_str("<ul class=\"findings\">\n");
        for (at, message) in findings {
            let _ = writeln!(out, "<li><code>{}</code> {}</li>", esc(&at), esc(message));
        }
        out.push_str("</ul>\n");
    }
}
