//! HTML evidence report for design reviews: one self-contained file per run folder, with a
//! timeline per case, and the page that sets several runs side by side.
//!
//! - [`page`]: the page (header, what the run found, cases one click away);
//! - [`picture`]: what a case's timeline shows, worked out from its evidence (lanes, the
//!   window, redeliveries, findings), in the shapes of [`marks`], with the leases and the
//!   handles used outside them as [`leases`] draws the judge's own reading of them;
//! - [`timeline`]: that picture as inline SVG; [`axis`]: round ticks and labels that never
//!   overprint;
//! - [`calls`]: the calls table; [`trials`]: a multi-trial case's tally;
//! - [`matrix`]: several runs side by side, linking into each run's report;
//! - [`parts`]: what they all share (a case's anchor, its state's class, its findings);
//! - [`style`]: the one stylesheet.

mod axis;
mod calls;
mod leases;
mod marks;
mod matrix;
mod page;
mod parts;
mod picture;
mod style;
mod timeline;
mod trials;

pub use matrix::render as render_matrix;

/// The report's one stylesheet, for a page of another command (`sqsprobe audit`'s report).
pub fn stylesheet() -> &'static str {
    style::CSS
}

/// The run report's calls table over `calls` (rows of one history, in order), as a case's is
/// drawn, for a page of another command: the audit's consumer calls read as a case's do.
pub fn calls_table(out: &mut String, id: &str, calls: Vec<&sqsprobe_core::evidence::format::Call>) {
    let view = sqsprobe_core::evidence::view::CaseView {
        id,
        suite: None,
        start: None,
        calls,
        steps: Vec::new(),
        trials: Vec::new(),
        denies: Vec::new(),
        facts: Vec::new(),
        end: None,
        state: sqsprobe_core::evidence::view::CaseState::DidNotFinish,
    };
    calls::table(out, &view);
}

/// The time axis's tick positions over `span_ms` and a tick's label, as the run report's
/// timelines draw them.
pub fn axis_ticks(span_ms: f64) -> Vec<(f64, String)> {
    axis::ticks(span_ms)
        .into_iter()
        .map(|t| (t, axis::tick_label(t)))
        .collect()
}
pub use page::render;
pub use parts::case_anchor;
