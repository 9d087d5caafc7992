//! `sqsprobe report`: re-render a run folder's reports from its evidence.
//!
//! The reports are pure functions of `evidence.jsonl`, so an older run (or one whose process
//! was killed before it wrote them) can always be rendered again. An interrupted run renders
//! as what it is: cases without `case_end` did not finish, and every output says the run was
//! interrupted.

use super::args::ReportArgs;
use crate::evidence::{Record, read_run};
use crate::exit_code;
use crate::report;
use std::io::Write;
use std::path::Path;

pub fn report(args: ReportArgs) -> i32 {
    let records = match read_run_folder(&args.run_dir) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sqsprobe: {e}");
            return exit_code::RUNTIME_ERROR;
        }
    };
    if let Err(e) = report::write_run_folder(&args.run_dir, &records) {
        eprintln!("sqsprobe: {e}");
        return exit_code::RUNTIME_ERROR;
    }
    let dir = args.run_dir.display().to_string();
    let summary = report::terminal::render(&records, &dir, report::terminal::width(), false);
    let mut stdout = std::io::stdout();
    let _ = stdout.write_all(summary.as_bytes());
    let _ = stdout.flush();
    exit_code::OK
}

/// Reads a run folder's `evidence.jsonl` the lenient way (`evidence::read_run`), printing a
/// warning on stderr for each thing passed over: skipped unknown record types, an incomplete
/// last line.
pub(super) fn read_run_folder(dir: &Path) -> Result<Vec<Record>, String> {
    let path = dir.join("evidence.jsonl");
    let evidence = read_run(&path).map_err(|e| e.to_string())?;
    let mut stderr = std::io::stderr();
    for warning in &evidence.warnings {
        let _ = writeln!(stderr, "sqsprobe: warning: {}:{warning}", path.display());
    }
    Ok(evidence.records)
}
