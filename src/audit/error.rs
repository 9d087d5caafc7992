//! Why an audit could not end in a judgement, and how one that did not judge ended.
//!
//! The runner says what failed; which exit code that is is the command line's decision
//! (`cli::error`), made there for every command alike.

use std::path::PathBuf;

/// How the audit runner ended without failing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuditEnd {
    /// Judged: the audits' exit code ([`super::report::exit_code`]).
    Judged(i32),
    /// A signal stopped it before anything could be judged (said as it came).
    Interrupted,
}

/// What kept an audit from being judged. The message is the line the user reads after
/// `sqsprobe: `.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The audit folder of this run id already holds an audit.
    #[error("{} already holds an audit; a run id is never reused", dir.display())]
    RunIdReused { dir: PathBuf },
    /// No consumer command was given.
    #[error("no consumer command: give it after `--`")]
    NoCommand,
    /// What CreateEventSourceMapping would refuse (`--lambda`'s settings).
    #[error("{0}")]
    LambdaRefused(String),
    /// The event source mapping could not start.
    #[error("{0}")]
    LambdaFailed(String),
    /// A folder could not be created.
    #[error("failed to create {}: {source}", path.display())]
    CreateFolder {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file of the audit folder could not be created.
    #[error("failed to create {name}: {source}")]
    CreateFile {
        name: &'static str,
        source: std::io::Error,
    },
    /// The audit folder's evidence or reports could not be written or read back.
    #[error("{0}")]
    Files(String),
    /// The embedded emulator could not start.
    #[error("the emulator failed to start: {0}")]
    Emulator(std::io::Error),
    /// The audit's queues or messages could not be set up.
    #[error("{0}")]
    Setup(String),
    /// The consumer (or, under `--lambda`, the function) could not be started.
    #[error("the {what} could not start ({program}): {source}")]
    Start {
        what: &'static str,
        program: String,
        source: std::io::Error,
    },
}
