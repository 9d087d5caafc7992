//! The run folder's reports, rendered from its records and written side by side with
//! `evidence.jsonl`: the same three files whether `run` just finished or `report` re-renders.

use sqsprobe_core::evidence::Record;
use std::io;
use std::path::{Path, PathBuf};

/// A pure renderer of a whole run.
type Render = fn(&[Record]) -> String;

/// The reports of a run folder: file name and renderer.
const REPORTS: [(&str, Render); 3] = [
    ("junit.xml", super::junit::render),
    ("summary.md", super::summary::render),
    ("report.html", super::html::render),
];

/// A report that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("failed to write {}: {source}", path.display())]
pub struct FolderError {
    pub path: PathBuf,
    pub source: io::Error,
}

/// Renders `junit.xml`, `summary.md` and `report.html` from `records` into `dir`.
pub fn write_run_folder(dir: &Path, records: &[Record]) -> Result<(), FolderError> {
    for (name, render) in REPORTS {
        let path = dir.join(name);
        std::fs::write(&path, render(records)).map_err(|source| FolderError { path, source })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_core::evidence::fixtures::full_run;

    #[test]
    fn writes_the_three_reports_and_names_the_file_that_failed() {
        let dir = tempfile::tempdir().unwrap();
        let records = full_run();
        write_run_folder(dir.path(), &records).unwrap();
        for (name, _) in REPORTS {
            let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
            assert!(text.contains("run-1"), "{name}");
        }
        let missing = dir.path().join("gone");
        let err = write_run_folder(&missing, &records)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("failed to write "), "{err}");
        assert!(err.contains("junit.xml"), "{err}");
    }
}
