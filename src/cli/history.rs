//! `sqsprobe history PATH...`: pool the multi-trial cases of several run folders (nightly runs)
//! per case, target and region, and flag a newest run whose rate differs from the others'.
//!
//! The I/O edge only: finding run folders, reading their evidence through
//! [`sqsprobe_core::evidence::view::RunView`]; the pooling and the test are
//! [`sqsprobe_core::classify::history`], the text is [`crate::report::history`].

use super::args::HistoryArgs;
use super::error::{CommandError, Outcome};
use sqsprobe_core::classify::history::{self, CaseSample};
use sqsprobe_core::evidence::view::RunView;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Runs the command.
pub(super) fn history(args: HistoryArgs) -> Result<Outcome, CommandError> {
    let dirs = run_folders(&args.paths).map_err(CommandError::HistoryPath)?;
    if dirs.is_empty() {
        return Err(CommandError::NoRunFolder { paths: args.paths });
    }
    let mut samples: Vec<CaseSample> = Vec::new();
    let mut unreadable = 0;
    let mut read = Vec::new();
    for dir in &dirs {
        // One damaged folder among many nights is said and skipped, not fatal.
        match super::report::read_run_folder(dir) {
            Ok(r) => read.push((dir, r)),
            Err(e) => {
                eprintln!("sqsprobe: warning: {e}; skipped");
                unreadable += 1;
            }
        }
    }
    // Each trial once: a folder is the runs it is made of (a merged folder's partitions, else
    // its run), and a folder sharing one with a folder already read is skipped. Merged folders
    // first, so a merge and its parts count as the merge.
    read.sort_by_key(|(_, records)| {
        RunView::new(records)
            .start
            .is_none_or(|s| s.merged.is_none())
    });
    let mut taken: HashMap<String, String> = HashMap::new();
    for (dir, records) in &read {
        let view = RunView::new(records);
        let Some(start) = view.start else {
            eprintln!(
                "sqsprobe: warning: {}: no run_start, so the run cannot be placed; skipped",
                dir.display()
            );
            continue;
        };
        let parts = history::parts(start);
        if let Some((part, other)) = parts
            .iter()
            .find_map(|p| taken.get(p).map(|other| (p, other)))
        {
            eprintln!(
                "sqsprobe: warning: {}: run {} was already read from {other}; skipped (each \
                 trial is pooled once)",
                dir.display(),
                sqsprobe_facts::text::escape::terminal(part)
            );
            continue;
        }
        for part in parts {
            taken.insert(part, dir.display().to_string());
        }
        let wanted = |case: &String| args.cases.is_empty() || args.cases.contains(case);
        let (cases, damaged) = history::samples(&view, &dir.display().to_string());
        for (case, why) in damaged.iter().filter(|(case, _)| wanted(case)) {
            eprintln!(
                "sqsprobe: warning: {}: case {}: {why}; not pooled",
                dir.display(),
                sqsprobe_facts::text::escape::terminal(case)
            );
        }
        samples.extend(cases.into_iter().filter(|s| wanted(&s.case)));
    }
    if unreadable == dirs.len() {
        return Err(CommandError::NoneReadable { count: unreadable });
    }
    if unreadable > 0 {
        eprintln!(
            "sqsprobe: warning: {unreadable} of {} run folders could not be read and are not in the history",
            dirs.len()
        );
    }
    let pooled = history::pool(samples);
    let text = if args.json {
        serde_json::to_string_pretty(&pooled).map_err(|source| CommandError::Serialize {
            what: "history",
            source,
        })? + "\n"
    } else {
        crate::report::history::render(&pooled)
    };
    let mut stdout = std::io::stdout();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    if args.fail_on_change && pooled.groups.iter().any(|g| g.flagged()) {
        Ok(Outcome::Failed)
    } else {
        Ok(Outcome::Done)
    }
}

/// The run folders under `paths`: a folder holding `evidence.jsonl` is one; any other folder is
/// searched (links not followed) for folders that are. Sorted, each once.
fn run_folders(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for p in paths {
        if !p.is_dir() {
            return Err(format!(
                "{}: not a folder (give run folders, or a folder of them)",
                p.display()
            ));
        }
        let mut found: Vec<PathBuf> = if is_run(p) {
            vec![p.clone()]
        } else {
            walkdir::WalkDir::new(p)
                .sort_by_file_name()
                .into_iter()
                .filter_map(|e| e.ok())
                .filter(|e| e.file_type().is_dir() && is_run(e.path()))
                .map(|e| e.into_path())
                .collect()
        };
        found.retain(|d| seen.insert(std::fs::canonicalize(d).unwrap_or_else(|_| d.clone())));
        out.extend(found);
    }
    Ok(out)
}

fn is_run(dir: &Path) -> bool {
    dir.join("evidence.jsonl").is_file()
}
