//! Reading an evidence file back: leniently for the commands that render or compare runs,
//! strictly for the tests that check what the writer wrote.
//!
//! The format promises (`docs/evidence-format.md`) that a reader may skip record types it
//! does not know, and a run killed mid-write may leave its last line incomplete. So
//! [`read_run`] skips lines of unknown type and an incomplete last line, saying so in a
//! [`ReadWarning`] each, and refuses everything else that does not parse: an unknown field in
//! a known type, a broken line in the middle, a file that is not evidence at all.
//! [`read_evidence`] refuses even those two: our own writer never leaves either.

use super::format::{Record, RecordType};
use serde::Deserialize;
use std::fmt;
use std::io;
use std::path::Path;
use strum::VariantNames;

/// The record types of this format version (the `type` of the envelope): every variant of
/// [`Record`], so a line of any of them that does not parse is refused, never skipped.
const KNOWN_TYPES: &[&str] = RecordType::VARIANTS;

/// Why an evidence file could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("failed to read {path}: {source}")]
    Io { path: String, source: io::Error },
    #[error("{path}:{line}: not a sqsprobe evidence record: {source}")]
    Parse {
        path: String,
        line: usize,
        source: serde_json::Error,
    },
    /// What [`read_run`] would accept with a warning, refused by [`read_evidence`].
    #[error("{path}:{warning}")]
    Strict { path: String, warning: ReadWarning },
}

/// Something [`read_run`] passed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadWarning {
    /// Records of a type this version does not know (a newer sqsprobe wrote them): skipped.
    UnknownType {
        kind: String,
        /// Line of the first such record.
        line: usize,
        count: usize,
    },
    /// The last line ends without a newline and does not parse: the writer was killed while
    /// writing it. It is left out; every line before it was read.
    TruncatedLastLine { line: usize },
}

impl fmt::Display for ReadWarning {
    /// `12: ...`: the line, then what happened (shown after the file's path).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadWarning::UnknownType { kind, line, count } => write!(
                f,
                "{line}: skipped {count} record(s) of unknown type `{}` (written by a newer sqsprobe?)",
                sqsprobe_facts::text::escape::terminal(kind)
            ),
            ReadWarning::TruncatedLastLine { line } => write!(
                f,
                "{line}: the last line is incomplete (the run was killed while writing it); \
                 read every line before it"
            ),
        }
    }
}

/// An evidence file's records, and what was passed over to read them.
#[derive(Debug, Default, PartialEq)]
pub struct Evidence {
    pub records: Vec<Record>,
    pub warnings: Vec<ReadWarning>,
}

/// Just enough of a line to know its type.
#[derive(Deserialize)]
struct Envelope {
    #[serde(rename = "type")]
    kind: String,
}

/// Parses the bytes of an evidence file, leniently (see the module doc). `path` names the file
/// in errors.
pub fn parse_run(bytes: &[u8], path: &str) -> Result<Evidence, ReadError> {
    let mut evidence = Evidence::default();
    let complete = bytes.ends_with(b"\n");
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    for (i, line) in lines.iter().enumerate() {
        let number = i + 1;
        if line.trim_ascii().is_empty() {
            continue;
        }
        let error = match serde_json::from_slice::<Record>(line) {
            Ok(record) => {
                evidence.records.push(record);
                continue;
            }
            Err(e) => e,
        };
        if i + 1 == lines.len() && !complete && error.is_eof() {
            evidence
                .warnings
                .push(ReadWarning::TruncatedLastLine { line: number });
            continue;
        }
        match serde_json::from_slice::<Envelope>(line) {
            Ok(envelope) if !KNOWN_TYPES.contains(&envelope.kind.as_str()) => {
                skipped(&mut evidence.warnings, envelope.kind, number);
            }
            _ => {
                return Err(ReadError::Parse {
                    path: path.to_string(),
                    line: number,
                    source: error,
                });
            }
        }
    }
    Ok(evidence)
}

/// Counts one more skipped record of `kind`.
fn skipped(warnings: &mut Vec<ReadWarning>, kind: String, line: usize) {
    for w in warnings.iter_mut() {
        if let ReadWarning::UnknownType {
            kind: seen, count, ..
        } = w
            && *seen == kind
        {
            *count += 1;
            return;
        }
    }
    warnings.push(ReadWarning::UnknownType {
        kind,
        line,
        count: 1,
    });
}

/// Reads an evidence file leniently: unknown record types and an incomplete last line are
/// passed over with a warning each (print them: they are part of the truth about the run).
pub fn read_run(path: &Path) -> Result<Evidence, ReadError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| ReadError::Io {
        path: shown.clone(),
        source,
    })?;
    parse_run(&bytes, &shown)
}

/// Reads every record of an evidence file strictly: anything [`read_run`] would warn about is
/// an error too, as are unknown fields. For tests of what the writer wrote.
pub fn read_evidence(path: &Path) -> Result<Vec<Record>, ReadError> {
    let evidence = read_run(path)?;
    match evidence.warnings.into_iter().next() {
        None => Ok(evidence.records),
        Some(warning) => Err(ReadError::Strict {
            path: path.display().to_string(),
            warning,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::fixtures::full_run;

    fn file(records: &[Record]) -> Vec<u8> {
        let mut out = Vec::new();
        for r in records {
            out.extend(serde_json::to_vec(r).unwrap());
            out.push(b'\n');
        }
        out
    }

    #[test]
    fn a_full_run_holds_known_types_only() {
        let mut kinds: Vec<String> = full_run()
            .iter()
            .map(|r| {
                serde_json::to_value(r).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        kinds.sort();
        kinds.dedup();
        for kind in kinds {
            assert!(KNOWN_TYPES.contains(&kind.as_str()), "{kind} is not known");
        }
    }

    /// One record of each type; the match below stops compiling when a type is added and
    /// not given one here.
    fn one_of_each() -> Vec<Record> {
        use crate::evidence::facts::{AckCounts, CaseFactsRecord};
        use crate::evidence::fixtures::{call, case_end, case_start, run_end, run_start, step};
        use crate::evidence::format::{DenyEnd, Phase, Verdict};
        let mut trial = case_end("c", Verdict::Pass, "held", &[]);
        trial.trial = Some(1);
        let records = vec![
            run_start(&["c"]),
            case_start("c", 3),
            Record::Call(call("c", Phase::Step, "SendMessage", 0, 5)),
            Record::Step(step("c", 0, "send", 0, 5)),
            Record::TrialEnd(trial),
            Record::Deny(DenyEnd {
                run_id: "r".into(),
                case: "c".into(),
                step: 1,
                line: 7,
                queue: "q".into(),
                actions: vec!["sqs:DeleteMessage".into()],
                set_at: "t".into(),
                due_at: "t".into(),
                first_denied_at: None,
                took_effect_ms: None,
                denied_calls: 0,
                allowed_calls: 0,
                last_allowed_at: None,
                lifted_at: None,
                lifted_by: "teardown".into(),
                lift_error: None,
                trial: None,
            }),
            Record::Facts(CaseFactsRecord {
                run_id: "r".into(),
                case: "c".into(),
                trial: None,
                line: 3,
                setup_error: None,
                steps: Vec::new(),
                steps_planned: 0,
                stopped: None,
                window: None,
                acks: AckCounts::default(),
                unacknowledged: Vec::new(),
                teardown_errors: Vec::new(),
                faults_fired: 0,
                faulted_acks: 0,
            }),
            Record::CaseEnd(case_end("c", Verdict::Pass, "held", &[])),
            run_end(0),
        ];
        for r in &records {
            match r {
                Record::RunStart(_)
                | Record::CaseStart(_)
                | Record::Call(_)
                | Record::Step(_)
                | Record::TrialEnd(_)
                | Record::Deny(_)
                | Record::Facts(_)
                | Record::CaseEnd(_)
                | Record::RunEnd(_) => {}
            }
        }
        records
    }

    /// Every record type's serde name is the name the reader knows it by, and the reader knows
    /// every type.
    #[test]
    fn each_records_type_is_its_derived_name() {
        let records = one_of_each();
        assert_eq!(records.len(), KNOWN_TYPES.len());
        for r in records {
            let written = serde_json::to_value(&r).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string();
            let derived: &'static str = RecordType::from(&r).into();
            assert_eq!(written, derived);
            assert!(KNOWN_TYPES.contains(&derived));
        }
    }

    /// A malformed line of a known type is refused with its line, whatever the type: a
    /// `step`, `trial_end`, `deny` or `facts` line that does not parse is never skipped as
    /// "unknown".
    #[test]
    fn a_malformed_line_of_any_known_type_is_refused() {
        let records = full_run();
        for kind in KNOWN_TYPES {
            let mut bytes = file(&records[..2]);
            bytes.extend(format!("{{\"type\":\"{kind}\",\"data\":{{\"bogus\":1}}}}\n").as_bytes());
            bytes.extend(file(&records[2..]));
            match parse_run(&bytes, "e.jsonl") {
                Err(ReadError::Parse { line: 3, .. }) => {}
                other => panic!("a malformed `{kind}` line was not refused: {other:?}"),
            }
        }
    }

    #[test]
    fn a_complete_file_reads_without_warnings() {
        let records = full_run();
        let read = parse_run(&file(&records), "e.jsonl").unwrap();
        assert_eq!(read.records, records);
        assert!(read.warnings.is_empty());
    }

    #[test]
    fn unknown_record_types_are_skipped_with_one_warning_per_type() {
        let records = full_run();
        let mut bytes = file(&records[..2]);
        bytes.extend(b"{\"type\":\"trial_start\",\"data\":{\"trial\":1}}\n");
        bytes.extend(b"{\"type\":\"trial_start\",\"data\":{\"trial\":2}}\n");
        bytes.extend(b"{\"type\":\"fault\",\"data\":{}}\n");
        bytes.extend(file(&records[2..]));
        let read = parse_run(&bytes, "e.jsonl").unwrap();
        assert_eq!(read.records, records);
        assert_eq!(
            read.warnings,
            vec![
                ReadWarning::UnknownType {
                    kind: "trial_start".into(),
                    line: 3,
                    count: 2
                },
                ReadWarning::UnknownType {
                    kind: "fault".into(),
                    line: 5,
                    count: 1
                },
            ]
        );
        assert_eq!(
            read.warnings[0].to_string(),
            "3: skipped 2 record(s) of unknown type `trial_start` (written by a newer sqsprobe?)"
        );
    }

    #[test]
    fn a_truncated_last_line_is_left_out_with_a_warning() {
        let records = full_run();
        let mut bytes = file(&records);
        let last = serde_json::to_vec(&records[records.len() - 1]).unwrap();
        bytes.truncate(bytes.len() - 1 - last.len() / 2);
        let read = parse_run(&bytes, "e.jsonl").unwrap();
        assert_eq!(read.records, records[..records.len() - 1]);
        assert_eq!(
            read.warnings,
            vec![ReadWarning::TruncatedLastLine {
                line: records.len()
            }]
        );
    }

    #[test]
    fn everything_else_that_does_not_parse_is_refused_with_its_line() {
        let records = full_run();
        let good = file(&records[..1]);
        let cases: [(&[u8], usize, &str); 4] = [
            // An unknown field inside a known type: strictness stays.
            (
                b"{\"type\":\"run_end\",\"data\":{\"run_id\":\"r\",\"ended_at\":\"t\",\"duration_ms\":1,\"interrupted\":false,\"totals\":{},\"exit_code\":0,\"raw_handle\":\"x\"}}\n",
                2,
                "raw_handle",
            ),
            // A broken line that is not the last one.
            (b"{\"type\":\"call\",\"data\":{\n{}\n", 2, "EOF"),
            // A complete last line (it ends in a newline) that does not parse.
            (b"{\"type\":\"call\",\"data\":{\n", 2, "EOF"),
            // A last line without newline that is wrong, not cut short.
            (b"{\"type\":\"case_end\",\"data\":{\"oops\":1}}", 2, "oops"),
        ];
        for (tail, line, what) in cases {
            let mut bytes = good.clone();
            bytes.extend(tail);
            let err = parse_run(&bytes, "e.jsonl").unwrap_err().to_string();
            assert!(err.starts_with(&format!("e.jsonl:{line}: ")), "{err}");
            assert!(err.contains(what), "{err}");
        }
        let err = parse_run(b"not json at all\n", "e.jsonl").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("e.jsonl:1: not a sqsprobe evidence record")
        );
    }

    #[test]
    fn the_strict_reader_refuses_what_the_lenient_one_warns_about() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("evidence.jsonl");
        let records = full_run();
        std::fs::write(&path, file(&records)).unwrap();
        assert_eq!(read_evidence(&path).unwrap(), records);
        let mut bytes = file(&records);
        bytes.extend(b"{\"type\":\"later\",\"data\":{}}\n");
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read_run(&path).unwrap().records, records);
        let err = read_evidence(&path).unwrap_err().to_string();
        let line = records.len() + 1;
        assert!(
            err.ends_with(&format!(
                "evidence.jsonl:{line}: skipped 1 record(s) of unknown type `later` (written by a newer sqsprobe?)"
            )),
            "{err}"
        );
    }
}
