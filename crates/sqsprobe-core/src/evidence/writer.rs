//! The evidence file: one record per line, flushed as it is written.
//!
//! Flushing every line costs a syscall per SQS call, which is nothing next to the call itself,
//! and it is what lets an interrupted or crashed run still leave every row it made.

use super::format::Record;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

/// Appends records to `evidence.jsonl`.
pub struct EvidenceWriter {
    file: File,
    rows: u64,
}

impl EvidenceWriter {
    /// Creates (truncates) the file at `path`.
    pub fn create(path: &Path) -> io::Result<Self> {
        Ok(Self {
            file: File::create(path)?,
            rows: 0,
        })
    }

    /// Writes one record as one line and hands it to the OS before returning.
    pub fn write(&mut self, record: &Record) -> io::Result<()> {
        let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
        line.push(b'\n');
        // A single write of the whole line keeps lines whole even if the process dies mid-run.
        self.file.write_all(&line)?;
        self.file.flush()?;
        self.rows += 1;
        Ok(())
    }

    /// Writes one row of a type outside [`Record`] (the audit's `delivery` and `ack`), in the
    /// same envelope and with the same flush.
    pub fn write_row(&mut self, kind: &str, data: &impl serde::Serialize) -> io::Result<()> {
        let row = serde_json::json!({ "type": kind, "data": data });
        let mut line = serde_json::to_vec(&row).map_err(io::Error::other)?;
        line.push(b'\n');
        self.file.write_all(&line)?;
        self.file.flush()?;
        self.rows += 1;
        Ok(())
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::format::RunEnd;
    use crate::evidence::read::read_evidence;
    use std::collections::BTreeMap;

    #[test]
    fn writes_then_reads_back_strictly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("evidence.jsonl");
        let mut w = EvidenceWriter::create(&path).unwrap();
        let end = Record::RunEnd(RunEnd {
            run_id: "r".into(),
            ended_at: "2026-11-29T00:00:00.000Z".into(),
            duration_ms: 5,
            interrupted: false,
            totals: BTreeMap::from([("pass".to_string(), 1)]),
            exit_code: 0,
            requests: None,
            fifo_requests: None,
            cost_usd: None,
            left_queues: Vec::new(),
            halted: None,
            stop: None,
        });
        w.write(&end).unwrap();
        assert_eq!(w.rows(), 1);
        // Written without dropping the writer: the row is already on disk.
        let back = read_evidence(&path).unwrap();
        assert_eq!(back, vec![end]);
    }
}
