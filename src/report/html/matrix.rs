//! Several runs side by side (`matrix.html`, and `report A B …`'s page): targets as columns
//! with their scores, cases grouped by area, each cell linking to the case in its run's
//! `report.html`. The model is [`crate::conformance::matrix`]; this is only its picture.
//!
//! Self-contained like the report: the report's stylesheet inline, no script, everything from
//! the records escaped. A cell's hover text is its note (the profile's reason, or why the case
//! did not pass).

use super::parts::case_anchor;
use super::style::CSS;
use crate::conformance::markdown::{SAME_AUTHORS, score_cell};
use crate::conformance::matrix::{CellState, MAX_SURPRISES, Matrix, percent};
use crate::text::escape::{html_attr as attr, html_text as esc};
use std::fmt::Write;

/// The CSS class of a cell: the report's verdict colours.
fn class(state: CellState) -> &'static str {
    match state {
        CellState::Pass => "pass",
        CellState::Fail => "fail",
        CellState::KnownDivergence => "known_divergence",
        CellState::Inconclusive => "inconclusive",
        CellState::Unsupported => "unsupported",
        CellState::Error => "error",
        CellState::DidNotFinish => "did_not_finish",
        CellState::NotRun => "not_run",
    }
}

/// The word shown in a cell.
fn word(state: CellState) -> &'static str {
    match state {
        CellState::KnownDivergence => "known divergence",
        CellState::DidNotFinish => "did not finish",
        CellState::NotRun => "not run",
        other => class(other),
    }
}

/// Renders the page. `reports[i]` is the address of column `i`'s `report.html` relative to
/// where the page is written, or `None` to link nothing for that column.
pub fn render(m: &Matrix, reports: &[Option<String>]) -> String {
    let mut out = String::with_capacity(32 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>SQS conformance matrix</title>\n<style>{CSS}{MATRIX_CSS}</style>\n</head>\n<body>\n\
         <h1>SQS conformance matrix</h1>\n<p>Conformance = passes / cases counted; a known \
         divergence and a case that did not finish count as non-conforming. Each cell links to \
         the case in its run's report. Semantics cases check what a consumer can observe; \
         validation cases check the error a bad input gets. Each area row gives every target's \
         score over that area.</p>\n"
    );
    if m.columns.iter().any(|c| c.target == "embedded") {
        let _ = writeln!(
            out,
            "<p class=\"note\">{}</p>",
            esc(&SAME_AUTHORS.replace('`', ""))
        );
    }
    out.push_str("<div class=\"matrix-box\"><table class=\"matrix\">\n<tr><th>case</th>");
    let href = |i: usize| reports.get(i).and_then(Option::as_deref);
    for (i, c) in m.columns.iter().enumerate() {
        let name = match href(i) {
            Some(h) => format!("<a href=\"{}\">{}</a>", attr(h), esc(&c.name)),
            None => esc(&c.name),
        };
        let _ = write!(
            out,
            "<th>{name}<br><small><code>{}</code></small><br><small>{} conformance ({}/{})<br>semantics {}<br>validation {}{}</small></th>",
            esc(&c.run_id),
            percent(c.score.conformance),
            c.score.pass,
            c.score.run,
            esc(&score_cell(&c.semantics)),
            esc(&score_cell(&c.validation)),
            if c.interrupted {
                " <strong>interrupted</strong>"
            } else {
                ""
            }
        );
    }
    out.push_str("</tr>\n");
    for area in &m.areas {
        let _ = write!(out, "<tr class=\"area\"><th>{}</th>", esc(&area.title));
        for score in &area.scores {
            let _ = write!(out, "<th>{}</th>", esc(&score_cell(score)));
        }
        out.push_str("</tr>\n");
        for row in &area.rows {
            let _ = write!(out, "<tr><td><code>{}</code></td>", esc(&row.case));
            for (i, cell) in row.cells.iter().enumerate() {
                let title = cell
                    .note
                    .as_deref()
                    .map(|n| format!(" title=\"{}\"", attr(n)))
                    .unwrap_or_default();
                let shown = esc(word(cell.state));
                let inner = match href(i) {
                    Some(h) if cell.state != CellState::NotRun => format!(
                        "<a href=\"{}#{}\">{shown}</a>",
                        attr(h),
                        attr(&case_anchor(&row.case))
                    ),
                    _ => shown,
                };
                let _ = write!(
                    out,
                    "<td class=\"cell {}\"{title}>{inner}</td>",
                    class(cell.state)
                );
            }
            out.push_str("</tr>\n");
        }
    }
    out.push_str("</table></div>\n");
    surprises(&mut out, m, &href);
    out.push_str("</body>\n</html>\n");
    out
}

/// Per target, the semantics cases it does not answer as AWS does, each linked to the case in
/// the target's report.
fn surprises<'a>(out: &mut String, m: &Matrix, href: &dyn Fn(usize) -> Option<&'a str>) {
    let _ = write!(
        out,
        "<h2>What will surprise you</h2>\n<p>Per target, the first {MAX_SURPRISES} semantics \
         cases (heaviest area first) it does not answer as AWS does.</p>\n"
    );
    let mut any = false;
    for (i, c) in m.columns.iter().enumerate() {
        if c.surprises.is_empty() {
            continue;
        }
        any = true;
        let _ = write!(out, "<h3>{}</h3>\n<ul>\n", esc(&c.name));
        for s in &c.surprises {
            let title = esc(s.title.as_deref().unwrap_or(&s.case));
            let what = match href(i) {
                Some(h) => format!(
                    "<a href=\"{}#{}\">{title}</a>",
                    attr(h),
                    attr(&case_anchor(&s.case))
                ),
                None => title,
            };
            let _ = writeln!(
                out,
                "<li>{what} <small>(<code>{}</code>, {}; {})</small>: {}</li>",
                esc(&s.case),
                esc(&s.area),
                esc(word(s.state)),
                esc(s.note.as_deref().unwrap_or("did not pass"))
            );
        }
        out.push_str("</ul>\n");
    }
    if !any {
        out.push_str("<p>None: every semantics case passed on every target.</p>\n");
    }
}

const MATRIX_CSS: &str = "
.matrix-box{max-width:100%;overflow-x:auto}table.matrix td,table.matrix th{white-space:nowrap}
table.matrix tr.area th{background:#eaeef2;text-align:left}
td.cell a{color:inherit;text-decoration:none;display:block}td.cell{color:#fff;font-weight:600}
td.cell.not_run{background:#fff;color:#8c959f;font-weight:400}
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::matrix::build;
    use crate::evidence::fixtures::verdicts_run as run;
    use crate::evidence::format::Verdict;

    #[test]
    fn every_run_cell_links_to_its_case() {
        let a = run(
            None,
            "json",
            &[("a b", Verdict::Pass), ("c", Verdict::Fail)],
        );
        let b = run(Some("<moto>"), "json", &[("a b", Verdict::KnownDivergence)]);
        let m = build(&[("1".to_string(), a), ("2".to_string(), b)]).unwrap();
        let html = render(&m, &[Some("../r1/report.html".to_string()), None]);
        assert!(
            html.contains(
                "<td class=\"cell pass\"><a href=\"../r1/report.html#case-a~20b\">pass</a></td>"
            ),
            "{html}"
        );
        assert!(
            html.contains("<td class=\"cell fail\" title=\"why\"><a href=\"../r1/report.html#case-c\">fail</a></td>"),
            "{html}"
        );
        assert!(
            html.contains(
                "<td class=\"cell known_divergence\" title=\"why\">known divergence</td>"
            ),
            "a column without a report links nothing: {html}"
        );
        assert!(
            html.contains("<td class=\"cell not_run\">not run</td>"),
            "{html}"
        );
        assert!(
            html.contains("<tr class=\"area\"><th>ack</th><th>50.0% (1/2) · 1 failing</th><th>0.0% (0/1) · 1 known</th></tr>"),
            "{html}"
        );
        assert!(html.contains("<p>None: every semantics case passed on every target.</p>"));
        assert!(html.contains("&lt;moto&gt;") && !html.contains("<moto>"));
        assert!(!html.contains("<script") && !html.contains("src="));
    }
}
