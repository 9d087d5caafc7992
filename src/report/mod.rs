//! Reports rendered from evidence records: JUnit XML, Markdown summary, HTML evidence report
//! and the end-of-run terminal summary.
//!
//! Every renderer is a pure function of `&[Record]` (no I/O, no clock), so it can run on a
//! live run's records or on an `evidence.jsonl` read back later. They read the run through
//! [`sqsprobe_core::evidence::view`], which groups records by case and says honestly what an
//! interrupted run left: cases that did not finish, cases never started.
//!
//! - [`junit::render`]: JUnit XML for CI (`quick-junit`).
//! - [`summary::render`]: Markdown for a pull-request comment or CI artefact.
//! - [`html::render`]: one self-contained HTML page with a timeline per case.
//! - [`terminal::render`]: the one-screen summary printed at the end of a run, and
//!   [`terminal::progress_line`] for each case as it finishes.
//! - [`history::render`]: `sqsprobe history`, several runs' multi-trial cases pooled.
//! - [`progress::Board`]: the live lines of the running cases (phase, time left, SLOW).
//!
//! The I/O edges: [`write_run_folder`] writes the three files of a run folder (for `run` and
//! `report` alike), and [`live::consume`] writes a live run's evidence and progress.

pub mod dry_run;
mod folder;
pub mod history;
pub mod html;
pub mod junit;
pub mod live;
pub mod progress;
pub mod summary;
pub mod terminal;
pub(crate) mod wording;

pub use folder::{FolderError, write_run_folder};
