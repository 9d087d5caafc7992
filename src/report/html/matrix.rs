//! Several runs side by side (`matrix.html`, and `report A B …`'s page): targets as columns
//! with their scores, cases grouped by area, each cell linking to the case in its run's
//! `report.html`. The model is [`sqsprobe_core::conformance::matrix`]; this is only its picture.
//!
//! Self-contained like the report: the report's stylesheet inline, no script, everything from
//! the records escaped. A cell's hover text is its note (the profile's reason, or why the case
//! did not pass).

use super::axis::GridTick;
use super::parts::case_anchor;
use super::style::CSS;
use sqsprobe_core::conformance::facts::{Facts, TargetFacts};
use sqsprobe_core::conformance::markdown as facts;
use sqsprobe_core::conformance::markdown::{SAME_AUTHORS, score_cell};
use sqsprobe_core::conformance::matrix::{CellState, MAX_SURPRISES, Matrix, percent};
use sqsprobe_facts::text::escape::{html_attr as attr, html_text as esc};
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
         divergence and a case that did not finish count as non-conforming. {} Semantics cases \
         check what a consumer can observe; validation cases check the error a bad input gets. \
         Each area row gives every target's score over that area.</p>\n",
        links_sentence(m.columns.len(), reports)
    );
    if m.columns.iter().any(|c| c.target == "embedded") {
        let _ = writeln!(
            out,
            "<p class=\"note\">{}</p>",
            esc(&SAME_AUTHORS.replace('`', ""))
        );
    }
    if let Some(facts) = &m.facts {
        facts_section(&mut out, m, facts);
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

/// What the intro may say of the cells' links: only what the page holds. A column links its
/// cells only when its run folder holds a `report.html` (the committed matrix in docs/ was
/// built from folders that are not committed, so it links none).
fn links_sentence(columns: usize, reports: &[Option<String>]) -> &'static str {
    let linked = (0..columns)
        .filter(|&i| reports.get(i).is_some_and(Option::is_some))
        .count();
    if columns > 0 && linked == columns {
        "Each cell links to the case in its run's report."
    } else if linked > 0 {
        "A cell links to the case in its run's report where the column's name is a link; the \
         other columns' run folders hold no report.html."
    } else {
        "No run folder held a report.html, so the cells link nothing."
    }
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

/// The facts table and the two pictures: conformance against raw SendMessage throughput and
/// against start-up time, one point per target (log scale across: the targets differ by
/// orders of magnitude).
fn facts_section(out: &mut String, m: &Matrix, facts: &Facts) {
    out.push_str(
        "<h2>Practical facts</h2>\n<div class=\"matrix-box\"><table class=\"matrix facts\">\n<tr>",
    );
    for h in facts::HEADINGS {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr>\n");
    for t in &facts.targets {
        out.push_str("<tr>");
        for cell in facts::row_cells(m, t) {
            let _ = write!(out, "<td>{}</td>", esc(&cell));
        }
        out.push_str("</tr>\n");
    }
    let _ = writeln!(
        out,
        "</table></div>\n<p><small>Measured by <code>scripts/target-facts</code> on {}, one \
         target at a time.</small></p>",
        esc(&facts.measured_at)
    );
    let points = |x: &dyn Fn(&TargetFacts) -> Option<f64>| -> Vec<(String, f64, f64)> {
        facts
            .targets
            .iter()
            .filter_map(|t| Some((t.target.clone(), x(t)?, facts::conformance_of(m, t)?)))
            .filter(|(_, x, _)| *x > 0.0)
            .collect()
    };
    out.push_str("<div class=\"scatter-row\">");
    scatter(
        out,
        "Conformance against raw SendMessage throughput",
        "SendMessage requests/s (16 connections, log scale)",
        &points(&|t| t.bench.as_ref().and_then(|b| b.send_per_second)),
    );
    scatter(
        out,
        "Conformance against start-up",
        "start-up to first answer, ms (log scale)",
        &points(&|t| t.startup_ms.map(|ms| ms as f64)),
    );
    out.push_str("</div>\n");
}

/// One scatter picture as inline SVG: `points` are (label, x > 0, conformance 0..1).
fn scatter(out: &mut String, title: &str, x_label: &str, points: &[(String, f64, f64)]) {
    const W: f64 = 440.0;
    const H: f64 = 280.0;
    const LEFT: f64 = 48.0;
    const RIGHT: f64 = 24.0;
    const TOP: f64 = 16.0;
    const BOTTOM: f64 = 44.0;
    let _ = write!(
        out,
        "<figure class=\"scatter\"><figcaption>{}</figcaption><svg viewBox=\"0 0 {W} {H}\" \
         width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"{}\">",
        esc(title),
        attr(title)
    );
    if points.is_empty() {
        out.push_str("<text x=\"20\" y=\"40\">nothing measured</text></svg></figure>");
        return;
    }
    let logs: Vec<f64> = points.iter().map(|p| p.1.log10()).collect();
    let lo = logs.iter().copied().fold(f64::INFINITY, f64::min).floor();
    let hi = logs
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max)
        .ceil()
        .max(lo + 1.0);
    let x_of = |v: f64| LEFT + (v.log10() - lo) / (hi - lo) * (W - LEFT - RIGHT);
    let y_of = |c: f64| TOP + (1.0 - c) * (H - TOP - BOTTOM);
    // Axes, a grid line per quarter of conformance and per power of ten.
    for q in 0..=4 {
        let c = f64::from(q) / 4.0;
        let y = y_of(c);
        GridTick {
            line: [LEFT, y, W - RIGHT, y],
            at: (LEFT - 4.0, y + 4.0),
            anchor: "end",
            label: &format!("{}%", q * 25),
        }
        .write(out);
    }
    let mut e = lo as i32;
    while f64::from(e) <= hi {
        let x = x_of(10f64.powi(e));
        GridTick {
            line: [x, TOP, x, H - BOTTOM],
            at: (x, H - BOTTOM + 14.0),
            anchor: "middle",
            label: &10u64.saturating_pow(e.max(0) as u32).to_string(),
        }
        .write(out);
        e += 1;
    }
    let _ = write!(
        out,
        "<text class=\"axis\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
         <text class=\"axis\" transform=\"translate(12 {:.1}) rotate(-90)\" \
         text-anchor=\"middle\">conformance</text>",
        (LEFT + W - RIGHT) / 2.0,
        H - 8.0,
        esc(x_label),
        (TOP + H - BOTTOM) / 2.0
    );
    for (label, x, c) in points {
        let (px, py) = (x_of(*x), y_of(*c));
        let _ = write!(
            out,
            "<circle class=\"point\" cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"5\"><title>{}: {:.1}%, {x:.0}</title></circle>\
             <text class=\"label\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            esc(label),
            c * 100.0,
            px + 7.0,
            py - 6.0,
            esc(label)
        );
    }
    out.push_str("</svg></figure>");
}

const MATRIX_CSS: &str = "
.matrix-box{max-width:100%;overflow-x:auto}table.matrix td,table.matrix th{white-space:nowrap}
table.matrix tr.area th{background:#eaeef2;text-align:left}
td.cell a{color:inherit;text-decoration:none;display:block}td.cell{color:#fff;font-weight:600}
td.cell.not_run{background:#fff;color:#8c959f;font-weight:400}
table.facts td{white-space:normal;max-width:18em;font-size:.85em}
.scatter-row{display:flex;flex-wrap:wrap;gap:1em}.scatter figcaption{font-weight:600}
.scatter .grid{stroke:#d0d7de;stroke-width:1}.scatter .tick,.scatter .axis{font-size:11px;fill:#57606a}
.scatter .point{fill:#0969da}.scatter .label{font-size:11px;fill:#24292f}
";

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_core::conformance::matrix::build;
    use sqsprobe_core::evidence::fixtures::verdicts_run as run;
    use sqsprobe_core::evidence::format::Verdict;

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
        assert!(
            html.contains("where the column's name is a link") && !html.contains("Each cell links"),
            "one column of two is linked: the intro says so, not that every cell links: {html}"
        );
        assert!(!html.contains("<script") && !html.contains("src="));
    }

    #[test]
    fn the_intro_claims_links_only_where_the_page_has_them() {
        let r = Some("r/report.html".to_string());
        assert_eq!(
            links_sentence(2, &[r.clone(), r.clone()]),
            "Each cell links to the case in its run's report."
        );
        assert!(
            links_sentence(2, &[r.clone(), None]).contains("where the column's name is a link")
        );
        assert!(links_sentence(2, &[r]).contains("where the column's name is a link"));
        assert!(links_sentence(2, &[None, None]).contains("link nothing"));
        assert!(links_sentence(0, &[]).contains("link nothing"));
    }

    #[test]
    fn facts_give_a_table_and_one_point_per_measured_target_in_each_picture() {
        let a = run(
            Some("<m>"),
            "json",
            &[("a", Verdict::Pass), ("b", Verdict::Fail)],
        );
        let mut m = build(&[("1".to_string(), a)]).unwrap();
        m.facts = Some(
            sqsprobe_core::conformance::facts::parse_facts(
                r#"{"format": "sqsprobe-facts/1", "measured_at": "t", "cpus": 2, "targets": [
                  {"target": "<m>", "startup_ms": 120, "bench": {"send_per_second": 5000}},
                  {"target": "other", "startup_ms": 3}]}"#,
            )
            .unwrap(),
        );
        let html = render(&m, &[None]);
        assert!(html.contains("<h2>Practical facts</h2>"), "{html}");
        // `<m>` has a conformance and both figures; `other` has no column, so no point.
        assert_eq!(html.matches("<circle").count(), 2, "{html}");
        assert!(
            html.contains("<title>&lt;m&gt;: 50.0%, 5000</title>"),
            "{html}"
        );
        assert!(!html.contains("<m>"), "escaped everywhere: {html}");
        assert!(
            !html.contains("NaN") && !html.contains("\"inf") && !html.contains("\"-inf"),
            "{html}"
        );
    }
}
