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
pub use page::render;
pub use parts::case_anchor;
