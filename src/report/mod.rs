//! Reports rendered from evidence records: JUnit XML, Markdown summary, HTML evidence report
//! and the end-of-run terminal summary.
//!
//! Every renderer is a pure function of `&[Record]`: no I/O, no clock. They share one
//! intermediate view ([`model`]) that groups records by case and states honestly what an
//! interrupted run left (cases that did not finish, cases never started).

pub mod html;
pub mod junit;
mod model;
pub mod summary;
pub mod terminal;
