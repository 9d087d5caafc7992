//! `sqsprobe report`: re-render run folders' reports from their evidence, merge the folders
//! of a `--partition` run back into one run, and set several runs side by side.
//!
//! The reports are pure functions of `evidence.jsonl`, so an older run (or one whose process
//! was killed before it wrote them) can always be rendered again. An interrupted run renders
//! as what it is: cases without `case_end` did not finish, and every output says the run was
//! interrupted.
//!
//! Every folder given gets its own reports rendered again. Folders that are partitions of one
//! run (`evidence::merge`) are merged into one run folder: `--out` itself when that is all
//! that was given, else `<out>/merged-<first run id>/`, with its `evidence.jsonl` and the
//! three reports. When two or more runs remain, `<out>/report.html` sets them side by side
//! (the conformance matrix's page), each cell linking to the case in its run's report.

use super::args::ReportArgs;
use super::error::{CommandError, Outcome};
use crate::report;
use sqsprobe_core::conformance::matrix;
use sqsprobe_core::evidence::{EvidenceWriter, Record, merge, read_run};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Renders the reports; [`Outcome::Partial`] when a merge lacks partitions and
/// `--allow-partial` was not given.
pub(super) fn report(args: ReportArgs) -> Result<Outcome, CommandError> {
    let partial = render_all(&args).map_err(CommandError::Report)?;
    Ok(if partial && !args.allow_partial {
        Outcome::Partial
    } else {
        Outcome::Done
    })
}

/// One run to report on: where its reports live, and its records.
struct Shown {
    dir: PathBuf,
    records: Vec<Record>,
}

/// Renders every run; `Ok(true)` when a merge lacks partitions (each is named on stderr).
fn render_all(args: &ReportArgs) -> Result<bool, String> {
    let mut partial = false;
    let mut runs: Vec<merge::Run> = Vec::new();
    for dir in &args.run_dirs {
        let records = read_run_folder(dir)?;
        report::write_run_folder(dir, &records).map_err(|e| e.to_string())?;
        runs.push((dir.display().to_string(), records));
    }
    let groups = merge::group(&runs).map_err(|e| e.to_string())?;
    let alone = groups.len() == 1;
    let mut shown: Vec<Shown> = Vec::new();
    for group in groups {
        if let [i] = group[..] {
            shown.push(Shown {
                dir: args.run_dirs[i].clone(),
                records: std::mem::take(&mut runs[i].1),
            });
            continue;
        }
        let parts: Vec<&[Record]> = group.iter().map(|&i| runs[i].1.as_slice()).collect();
        let records = merge::merge(&parts);
        let first = sqsprobe_core::evidence::RunView::new(parts[0])
            .run_id()
            .to_string();
        let dir = if alone {
            args.out.clone()
        } else {
            args.out.join(format!("merged-{first}"))
        };
        write_merged(&dir, &records)?;
        if let Some(Record::RunStart(start)) = records.first()
            && let Some(m) = start.merged.as_ref().filter(|m| !m.missing.is_empty())
        {
            partial = true;
            let missing: Vec<String> = m.missing.iter().map(|k| format!("{k}/{}", m.of)).collect();
            eprintln!(
                "sqsprobe: {}: partition{} {} of run {} not given: {} cases are not in this \
                 report{}",
                dir.display(),
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", "),
                start.run_id,
                if missing.len() == 1 { "its" } else { "their" },
                if args.allow_partial {
                    " (--allow-partial)"
                } else {
                    "; exit 5 (--allow-partial to accept it)"
                }
            );
        }
        let from: Vec<String> = group.iter().map(|&i| runs[i].0.clone()).collect();
        println!(
            "merged {} partitions into {}: {}",
            group.len(),
            dir.display(),
            from.join(" ")
        );
        shown.push(Shown { dir, records });
    }
    let mut stdout = std::io::stdout();
    for run in &shown {
        let dir = run.dir.display().to_string();
        let summary =
            report::terminal::render(&run.records, &dir, report::terminal::width(), false);
        let _ = stdout.write_all(summary.as_bytes());
    }
    let _ = stdout.flush();
    if shown.len() < 2 {
        return Ok(partial);
    }
    let labelled: Vec<(String, Vec<Record>)> = shown
        .into_iter()
        .map(|s| (s.dir.display().to_string(), s.records))
        .collect();
    let m = matrix::build(&labelled).map_err(|e| e.to_string())?;
    let dirs: Vec<PathBuf> = labelled.iter().map(|(d, _)| PathBuf::from(d)).collect();
    write_side_by_side(&args.out, &dirs, &m, "report.html")?;
    println!(
        "runs side by side: {}",
        args.out.join("report.html").display()
    );
    Ok(partial)
}

/// Writes a merged run as a run folder: its evidence and its three reports.
fn write_merged(dir: &Path, records: &[Record]) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("failed to create {}: {e}", dir.display()))?;
    let path = dir.join("evidence.jsonl");
    let failed = |e: std::io::Error| format!("failed to write {}: {e}", path.display());
    let mut writer = EvidenceWriter::create(&path).map_err(failed)?;
    for record in records {
        writer.write(record).map_err(failed)?;
    }
    report::write_run_folder(dir, records).map_err(|e| e.to_string())
}

/// Writes the matrix page `name` into `out`, its cells linking to each run folder's report.
pub(super) fn write_side_by_side(
    out: &Path,
    run_dirs: &[PathBuf],
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
