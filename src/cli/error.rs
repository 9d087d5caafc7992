//! How a command ends: the [`Outcome`] of one that finished, or the [`CommandError`] that
//! stopped it. Each is mapped to its exit code here and nowhere else (the codes are
//! `sqsprobe_facts::exit_code`'s, documented in `docs/exit-codes.md`), and [`finish`] prints an error
//! and turns either into the process's exit code, as nextest's `cargo-nextest/src/errors.rs`.
//!
//! An outcome is not an error: a run whose expectations failed, a baseline that differs, a
//! bench below `--fail-below` finished and said so; an error is what kept a command from
//! finishing, said in one line (after the diagnostics some errors render first).

use crate::audit::AuditError;
use crate::runner::target::TargetError;
use sqsprobe_facts::exit_code;
use std::io::Write;
use std::path::PathBuf;

/// How a command that ran to its end concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It did what it was asked.
    Done,
    /// A finding: something differs from the baseline, a history's rate changed, a bench
    /// figure fell below `--fail-below`.
    Failed,
    /// `report` merged a run that lacks partitions: its "every case passed" covers only the
    /// partitions given.
    Partial,
    /// A signal stopped it once it had said what it had done.
    Interrupted,
    /// It finished and printed all it could, but part of it broke: a sweep's listing or
    /// delete, a bench target or scale measurement.
    Broken,
    /// A run's, an audit's or a re-judged folder's own code, derived from its verdicts
    /// (`classify::verdict`, `audit::report`) and recorded in its evidence.
    Verdict(i32),
}

impl Outcome {
    /// The process exit code.
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Done => exit_code::OK,
            Outcome::Failed => exit_code::EXPECTATION_FAILED,
            Outcome::Partial => exit_code::INCONCLUSIVE,
            Outcome::Interrupted => exit_code::INTERRUPTED,
            Outcome::Broken => exit_code::RUNTIME_ERROR,
            Outcome::Verdict(code) => code,
        }
    }
}

/// Why a command could not finish. The message is the line the user reads after
/// `sqsprobe: `; [`CommandError::detail`] is what is printed above it, when there is more.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    // The command line (exit 1).
    /// clap refused the arguments; clap prints its own message.
    #[error("{0}")]
    CommandLine(clap::Error),
    /// A suite path that is not there or cannot be walked.
    #[error("{0}")]
    SuitesUnreadable(String),
    /// `--case`, the tags and the flags select nothing.
    #[error("no case matches{}", no_case_hint(cases, *slow, *team_policy))]
    NoCaseMatches {
        cases: Vec<String>,
        slow: bool,
        team_policy: bool,
    },
    /// Every selected case is skipped: a run that would run nothing does not pass.
    #[error(
        "no case can run: all {count} selected case(s) are skipped ({}); nothing was run",
        why.join(", ")
    )]
    NothingRunnable { count: usize, why: Vec<String> },
    /// `run` was given more than one `--region`.
    #[error(
        "run takes one --region, its own (--regions R,... lists the regions its cases may touch)"
    )]
    OneRegion,
    /// The run's own region is not among `--regions`.
    #[error("the run's region {region} is not in --regions {}; add it, or run in one of them", regions.join(","))]
    RegionNotListed {
        region: String,
        regions: Vec<String>,
    },
    /// The run folder of this run id already holds a run.
    #[error("{} already holds a run; a run id is never reused", dir.display())]
    RunIdReused { dir: PathBuf },
    /// The target could not be resolved (the command line, the account guard, or a failure).
    #[error("{0}")]
    Target(#[from] TargetError),
    /// `--target-profile` names no file and no built-in profile.
    #[error("failed to read target profile {shown}: {source}\n  built-in profiles: {}", built_in.join(", "))]
    ProfileUnreadable {
        shown: String,
        source: std::io::Error,
        built_in: Vec<&'static str>,
    },
    /// `matrix --facts`' file cannot be read or parsed.
    #[error("{}: {reason}", path.display())]
    FactsUnreadable { path: PathBuf, reason: String },
    /// `history` was given a path that is not a folder.
    #[error("{0}")]
    HistoryPath(String),
    /// `history`'s paths hold no run folder.
    #[error("no run folder (a folder holding evidence.jsonl) in {}", shown(paths))]
    NoRunFolder { paths: Vec<PathBuf> },
    /// `baseline save` on a run that did not finish.
    #[error("{} cannot be a baseline: {why}; save a run that finished", run_dir.display())]
    BaselineIncomplete { run_dir: PathBuf, why: String },
    /// `baseline save` on a `--target aws` run whose calls went elsewhere.
    #[error(
        "{} ran with --target aws but sent its calls to {endpoint}, which is not AWS \
         (redirected by --endpoint-url, AWS_ENDPOINT_URL[_SQS] or a profile's endpoint_url): \
         it cannot be saved as an AWS baseline",
        run_dir.display()
    )]
    BaselineNotAws { run_dir: PathBuf, endpoint: String },
    /// `baseline save --name` is not a plain folder name.
    #[error("baseline name `{name}` must be a plain folder name")]
    BaselineName { name: String },
    /// `baseline save` would overwrite a baseline.
    #[error("baseline {} already exists; pick another --name or remove it", dir.display())]
    BaselineExists { dir: PathBuf },
    /// `suites export` would overwrite files.
    #[error(
        "{} file(s) already exist, nothing was written (--force overwrites): {}",
        paths.len(),
        paths.join(", ")
    )]
    FilesExist { paths: Vec<String> },
    /// `sweep` was not told what to sweep.
    #[error("sweep needs --endpoint-url URL or --target aws: what to sweep is never implied")]
    SweepNeedsTarget,
    /// `sweep --regions-of` names a folder whose regions cannot be read.
    #[error("{0}")]
    SweepRegions(String),
    /// `bench`'s flags or `--baseline` file do not make a bench.
    #[error("{0}")]
    BenchPlan(String),
    /// A bench target's address is not one the raw driver can reach.
    #[error("{target}: {reason}")]
    BenchEndpoint { target: String, reason: String },
    /// `audit --plan`'s file cannot be read.
    #[error("failed to read the plan {shown}: {source}")]
    PlanUnreadable {
        shown: String,
        source: std::io::Error,
    },
    /// `audit --plan`'s file is not text (the diagnostic's one line).
    #[error("{0}")]
    PlanNotText(String),
    /// `audit --plan`'s file is invalid; the diagnostics are the detail.
    #[error("{count} error(s) in the plan {shown}; nothing was run")]
    PlanInvalid {
        shown: String,
        count: usize,
        rendered: String,
    },
    /// A failure of the audit runner (`audit::runner`), whose own error says which code.
    #[error("{0}")]
    Audit(#[from] AuditError),

    // A suite or target profile (exit 2).
    /// Suite files with errors; the rendered diagnostics are the detail.
    #[error("{count} error(s){}", if *in_a_run { " in suites; nothing was run" } else { "" })]
    InvalidSuites {
        rendered: String,
        count: usize,
        in_a_run: bool,
    },
    /// A target profile with errors; the rendered diagnostics are the detail.
    #[error("{count} error(s) in target profile {shown}; nothing was run")]
    ProfileInvalid {
        shown: String,
        count: usize,
        rendered: String,
    },

    // The harness (exit 3).
    /// The async runtime could not be built.
    #[error("failed to start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The signal handlers could not be installed.
    #[error("failed to install signal handlers: {0}")]
    Signals(std::io::Error),
    /// A folder could not be created.
    #[error("failed to create {}: {source}", path.display())]
    CreateFolder {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The evidence file could not be created.
    #[error("failed to create the evidence file: {0}")]
    CreateEvidence(std::io::Error),
    /// A file could not be written.
    #[error("failed to write {}: {reason}", path.display())]
    Write { path: PathBuf, reason: String },
    /// A JSON document could not be made.
    #[error("failed to serialize the {what}: {source}")]
    Serialize {
        what: &'static str,
        source: serde_json::Error,
    },
    /// A run folder's evidence (or a baseline) cannot be read.
    #[error("{0}")]
    Evidence(String),
    /// Reports could not be merged, rendered or written.
    #[error("{0}")]
    Report(String),
    /// None of `history`'s run folders could be read.
    #[error("none of the {count} run folder(s) could be read")]
    NoneReadable { count: usize },
    /// The target profile a run used cannot be read again by `check`.
    #[error("{0}")]
    CheckProfile(String),
    /// `check` found the verdicts on record unsupported by the evidence (said above, case
    /// by case), or could not re-judge them.
    #[error("{}", if *audit {
        "the audit on record differs from what its evidence gives"
    } else {
        "the run on record is not what its evidence gives, or cannot be re-judged (see above)"
    })]
    CheckDisagrees { audit: bool },
    /// `serve` could not bind its address.
    #[error("failed to listen on {addr}: {source}")]
    Listen {
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
    /// `serve`'s emulator stopped with an error.
    #[error("emulator failed: {0}")]
    Emulator(std::io::Error),
    /// A server a bench measures could not start.
    #[error("{0}")]
    ServerStart(String),
}

impl CommandError {
    /// The process exit code: the one table of which failure exits how.
    pub fn exit_code(&self) -> i32 {
        use CommandError::*;
        match self {
            CommandLine(_)
            | SuitesUnreadable(_)
            | NoCaseMatches { .. }
            | NothingRunnable { .. }
            | OneRegion
            | RegionNotListed { .. }
            | RunIdReused { .. }
            | ProfileUnreadable { .. }
            | FactsUnreadable { .. }
            | HistoryPath(_)
            | NoRunFolder { .. }
            | BaselineIncomplete { .. }
            | BaselineNotAws { .. }
            | BaselineName { .. }
            | BaselineExists { .. }
            | FilesExist { .. }
            | SweepNeedsTarget
            | SweepRegions(_)
            | BenchPlan(_)
            | BenchEndpoint { .. }
            | PlanUnreadable { .. }
            | PlanNotText(_)
            | PlanInvalid { .. } => exit_code::BAD_COMMAND_LINE,
            Target(TargetError::Usage(_) | TargetError::Refused(_)) => exit_code::BAD_COMMAND_LINE,
            Target(TargetError::Failed(_)) => exit_code::RUNTIME_ERROR,
            Audit(
                AuditError::RunIdReused { .. }
                | AuditError::NoCommand
                | AuditError::LambdaRefused(_),
            ) => exit_code::BAD_COMMAND_LINE,
            Audit(
                AuditError::LambdaFailed(_)
                | AuditError::CreateFolder { .. }
                | AuditError::CreateFile { .. }
                | AuditError::Files(_)
                | AuditError::Emulator(_)
                | AuditError::Setup(_)
                | AuditError::Start { .. },
            ) => exit_code::RUNTIME_ERROR,
            InvalidSuites { .. } | ProfileInvalid { .. } => exit_code::INVALID_SUITE,
            Runtime(_)
            | Signals(_)
            | CreateFolder { .. }
            | CreateEvidence(_)
            | Write { .. }
            | Serialize { .. }
            | Evidence(_)
            | Report(_)
            | NoneReadable { .. }
            | CheckProfile(_)
            | CheckDisagrees { .. }
            | Listen { .. }
            | Emulator(_)
            | ServerStart(_) => exit_code::RUNTIME_ERROR,
        }
    }

    /// What is printed above the one line: the rendered diagnostics of a file with errors.
    pub fn detail(&self) -> Option<&str> {
        match self {
            CommandError::InvalidSuites { rendered, .. }
            | CommandError::ProfileInvalid { rendered, .. }
            | CommandError::PlanInvalid { rendered, .. } => Some(rendered),
            _ => None,
        }
    }

    /// The error as the user reads it on stderr: the detail, then `sqsprobe: ` and the line.
    pub fn render(&self) -> String {
        match self {
            CommandError::CommandLine(e) => e.render().to_string(),
            _ => format!("{}sqsprobe: {self}\n", self.detail().unwrap_or_default()),
        }
    }

    /// A write failure with its reason.
    pub fn write(path: impl Into<PathBuf>, reason: impl std::fmt::Display) -> Self {
        CommandError::Write {
            path: path.into(),
            reason: reason.to_string(),
        }
    }
}

/// Prints the error, if any, and gives the process exit code: the one place a command's end
/// becomes one.
pub fn finish(result: Result<Outcome, CommandError>) -> i32 {
    match result {
        Ok(outcome) => outcome.exit_code(),
        Err(CommandError::CommandLine(e)) => {
            // clap writes to stdout or stderr as the error kind asks, coloured when it may.
            let _ = e.print();
            exit_code::BAD_COMMAND_LINE
        }
        Err(e) => {
            // A closed stderr is not worth a panic.
            let _ = std::io::stderr().write_all(e.render().as_bytes());
            e.exit_code()
        }
    }
}

fn no_case_hint(cases: &[String], slow: bool, team_policy: bool) -> String {
    let named = if cases.is_empty() {
        String::new()
    } else {
        format!(" --case {}", cases.join(" --case "))
    };
    let tags = match (slow, team_policy) {
        (true, true) => "",
        (false, true) => " (cases tagged `slow` need --include-slow)",
        (true, false) => " (cases tagged `team-policy` need --include-team-policy)",
        (false, false) => {
            " (cases tagged `slow` need --include-slow, `team-policy` --include-team-policy)"
        }
    };
    format!("{named}{tags}")
}

fn shown(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// The codes of `docs/exit-codes.md`'s first table, with their names, in order.
    fn documented() -> Vec<(i32, String)> {
        include_str!("../../docs/exit-codes.md")
            .lines()
            .skip_while(|l| !l.starts_with("| code | name |"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                let code = cells[1].parse().unwrap_or_else(|_| panic!("a code: {l}"));
                (code, cells[2].trim_matches('`').to_string())
            })
            .collect()
    }

    /// The codes the top-level `--help` lists after "Exit codes:", in order.
    fn in_help() -> Vec<i32> {
        let help = crate::cli::Cli::command().render_long_help().to_string();
        let text = help.split_whitespace().collect::<Vec<_>>().join(" ");
        let (_, list) = text
            .split_once("Exit codes: ")
            .expect("--help has exit codes");
        let (list, _) = list
            .split_once(". ")
            .expect("the list ends with a full stop");
        list.split(", ")
            .map(|item| {
                let code = item.split(' ').next().unwrap_or_default();
                code.parse().unwrap_or_else(|_| panic!("a code: {item}"))
            })
            .collect()
    }

    #[test]
    fn the_table_the_docs_and_help_list_the_same_codes() {
        let table: Vec<(i32, String)> = exit_code::ALL
            .iter()
            .map(|(code, name)| (*code, name.to_string()))
            .collect();
        assert_eq!(
            documented(),
            table,
            "docs/exit-codes.md vs crates/sqsprobe-facts/src/exit_code.rs"
        );
        let codes: Vec<i32> = exit_code::ALL.iter().map(|(code, _)| *code).collect();
        assert_eq!(
            in_help(),
            codes,
            "--help (src/cli/args.rs) vs crates/sqsprobe-facts/src/exit_code.rs"
        );
    }

    /// The per-command table of the docs names no code outside the list.
    #[test]
    fn the_other_commands_table_uses_listed_codes() {
        let header = include_str!("../../docs/exit-codes.md")
            .lines()
            .find(|l| l.starts_with("| command |"))
            .expect("the other commands' table");
        for cell in header.split('|').map(str::trim).skip(2) {
            if cell.is_empty() {
                continue;
            }
            let code: i32 = cell.parse().unwrap_or_else(|_| panic!("a code: {cell}"));
            assert!(
                exit_code::ALL.iter().any(|(c, _)| *c == code),
                "{code} is not in crates/sqsprobe-facts/src/exit_code.rs"
            );
        }
    }

    /// Every outcome and error exits with a listed code, and the mapping says which.
    #[test]
    fn outcomes_and_errors_exit_with_listed_codes() {
        let listed = |code: i32| exit_code::ALL.iter().any(|(c, _)| *c == code);
        for outcome in [
            Outcome::Done,
            Outcome::Failed,
            Outcome::Partial,
            Outcome::Interrupted,
            Outcome::Broken,
        ] {
            assert!(listed(outcome.exit_code()), "{outcome:?}");
        }
        let io = || std::io::Error::other("disk full");
        let cases = [
            (CommandError::OneRegion, exit_code::BAD_COMMAND_LINE),
            (
                CommandError::Target(TargetError::Refused("account".into())),
                exit_code::BAD_COMMAND_LINE,
            ),
            (
                CommandError::Target(TargetError::Failed("sts".into())),
                exit_code::RUNTIME_ERROR,
            ),
            (
                CommandError::Audit(AuditError::LambdaRefused("batch size".into())),
                exit_code::BAD_COMMAND_LINE,
            ),
            (
                CommandError::Audit(AuditError::Emulator(io())),
                exit_code::RUNTIME_ERROR,
            ),
            (
                CommandError::InvalidSuites {
                    rendered: String::new(),
                    count: 1,
                    in_a_run: true,
                },
                exit_code::INVALID_SUITE,
            ),
            (CommandError::CreateEvidence(io()), exit_code::RUNTIME_ERROR),
        ];
        for (error, code) in cases {
            assert_eq!(error.exit_code(), code, "{error:?}");
        }
    }

    /// The line a user reads: the diagnostics first, then one `sqsprobe: ` line.
    #[test]
    fn an_error_renders_its_detail_then_one_line() {
        let invalid = CommandError::InvalidSuites {
            rendered: "error: at a.yaml:1:1\n\n".into(),
            count: 2,
            in_a_run: true,
        };
        assert_eq!(
            invalid.render(),
            "error: at a.yaml:1:1\n\nsqsprobe: 2 error(s) in suites; nothing was run\n"
        );
        let none = CommandError::NoCaseMatches {
            cases: vec!["a".into(), "b".into()],
            slow: true,
            team_policy: false,
        };
        assert_eq!(
            none.to_string(),
            "no case matches --case a --case b (cases tagged `team-policy` need \
             --include-team-policy)"
        );
    }

    /// The commands end through this module: `exit_code::` is named elsewhere in `cli/` only
    /// where a run records the code its verdicts give (`run.rs`).
    #[test]
    fn no_command_chooses_an_exit_code_itself() {
        let cli = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli");
        let mut offenders = Vec::new();
        for entry in walkdir::WalkDir::new(&cli) {
            let entry = entry.unwrap();
            let path = entry.path();
            let name = path
                .strip_prefix(&cli)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if !name.ends_with(".rs") || name == "error.rs" || name == "run.rs" {
                continue;
            }
            let text = std::fs::read_to_string(path).unwrap();
            if text.contains("exit_code::") || text.contains("process::exit(1") {
                offenders.push(name);
            }
        }
        assert!(offenders.is_empty(), "exit codes chosen in {offenders:?}");
    }
}
