//! `sqsprobe report`: re-render run folders' reports from their evidence, and set several runs
//! side by side.
//!
//! The reports are pure functions of `evidence.jsonl`, so an older run (or one whose process
//! was killed before it wrote them) can always be rendered again. An interrupted run renders
//! as what it is: cases without `case_end` did not finish, and every output says the run was
//! interrupted. Given several folders, `report` also writes `<out>/report.html`: the runs as
//! columns (the conformance matrix's page), each cell linking to the case in its run's report.

use super::args::ReportArgs;
use crate::conformance::matrix;
use crate::evidence::{Record, read_run};
use crate::exit_code;
use crate::report;
use std::io::Write;
use std::path::Path;

pub fn report(args: ReportArgs) -> i32 {
    let mut runs = Vec::new();
    for dir in &args.run_dirs {
        let records = match read_run_folder(dir) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("sqsprobe: {e}");
                return exit_code::RUNTIME_ERROR;
            }
        };
        if let Err(e) = report::write_run_folder(dir, &records) {
            eprintln!("sqsprobe: {e}");
            return exit_code::RUNTIME_ERROR;
        }
        let shown = dir.display().to_string();
        let summary = report::terminal::render(&records, &shown, report::terminal::width(), false);
        let mut stdout = std::io::stdout();
        let _ = stdout.write_all(summary.as_bytes());
        let _ = stdout.flush();
        runs.push((shown, records));
    }
    if runs.len() < 2 {
        return exit_code::OK;
    }
    let m = match matrix::build(&runs) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("sqsprobe: {e}");
            return exit_code::RUNTIME_ERROR;
        }
    };
    let path = args.out.join("report.html");
    match write_side_by_side(&args.out, &args.run_dirs, &m, "report.html") {
        Ok(()) => {
            println!("runs side by side: {}", path.display());
            exit_code::OK
        }
        Err(e) => {
            eprintln!("sqsprobe: {e}");
            exit_code::RUNTIME_ERROR
        }
    }
}

/// Writes the matrix page `name` into `out`, its cells linking to each run folder's report.
pub(super) fn write_side_by_side(
    out: &Path,
    run_dirs: &[std::path::PathBuf],
    m: &matrix::Matrix,
    name: &str,
) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("failed to create {}: {e}", out.display()))?;
    let hrefs: Vec<Option<String>> = run_dirs
        .iter()
        .map(|dir| report_href(out, &dir.join("report.html")))
        .collect();
    let path = out.join(name);
    std::fs::write(&path, report::html::render_matrix(m, &hrefs))
        .map_err(|e| format!("failed to write {}: {e}", path.display()))
}

/// The address of `target` as a link from a page in `from` (both must exist): relative when
/// they share a root, each path segment percent-encoded. `None` when either cannot be resolved
/// or the path is not UTF-8.
pub(super) fn report_href(from: &Path, target: &Path) -> Option<String> {
    let from = std::fs::canonicalize(from).ok()?;
    let target = std::fs::canonicalize(target).ok()?;
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = target.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut segments: Vec<String> = vec!["..".to_string(); from.len() - common];
    for part in &to[common..] {
        segments.push(percent_encode(part.as_os_str().to_str()?));
    }
    Some(segments.join("/"))
}

/// Percent-encodes a path segment: every byte but unreserved URL characters.
fn percent_encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_relative_and_encoded() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("evidence/matrix");
        let run = root.path().join("evidence/run one");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("report.html"), "").unwrap();
        assert_eq!(
            report_href(&out, &run.join("report.html")).as_deref(),
            Some("../run%20one/report.html")
        );
        assert_eq!(report_href(&out, &root.path().join("missing")), None);
    }
}
