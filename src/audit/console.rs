//! What the audit says to the person running it while it runs: one `sqsprobe: ` line on
//! stderr (the reports go to stdout and the audit folder).

use std::io::Write;

/// Writes `line` to stderr as `sqsprobe: line`.
pub(crate) fn say(line: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr(), "sqsprobe: {line}");
}
