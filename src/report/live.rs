//! The consumer of a live run's records: each record goes to the evidence file as it arrives,
//! each finished case to a progress line on stderr, and everything is handed back at the end
//! for the run folder's reports.
//!
//! It is the one place a running `sqsprobe run` does output; the runner only sends records
//! down a channel (nextest's runner → events → reporters).

use super::terminal;
use crate::evidence::{EvidenceWriter, Record};
use std::io::Write;
use tokio::sync::mpsc;

/// Writes each record as it arrives and, when `progress` is set, prints one line per finished
/// case; returns every record and the first write error, if any (later rows are not written
/// after one fails, but are still returned for the reports).
///
/// `held` are records made before the run started (the reachability check's calls): they go
/// right after the `run_start`, which must stay the file's first line.
pub async fn consume(
    mut rx: mpsc::UnboundedReceiver<Record>,
    mut writer: EvidenceWriter,
    held: Vec<Record>,
    progress: bool,
    total: usize,
) -> (Vec<Record>, Option<String>) {
    let mut records = Vec::new();
    let mut write_error = None;
    let mut done = 0;
    let mut held = Some(held);
    while let Some(record) = rx.recv().await {
        let is_start = matches!(record, Record::RunStart(_));
        let mut batch = vec![record];
        if is_start && let Some(held) = held.take() {
            batch.extend(held);
        }
        for record in batch {
            if write_error.is_none()
                && let Err(e) = writer.write(&record)
            {
                write_error = Some(e.to_string());
            }
            if let Record::CaseEnd(end) = &record {
                done += 1;
                if progress {
                    // A closed stderr stops the progress lines, not the run.
                    let _ = writeln!(
                        std::io::stderr(),
                        "{}",
                        terminal::progress_line(end, done, total)
                    );
                }
            }
            records.push(record);
        }
    }
    // Without a run_start the held rows still belong in the evidence, last.
    for record in held.into_iter().flatten() {
        if write_error.is_none()
            && let Err(e) = writer.write(&record)
        {
            write_error = Some(e.to_string());
        }
        records.push(record);
    }
    (records, write_error)
}
