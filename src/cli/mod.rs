//! The command line: argument parsing and the commands.
//!
//! Each command is a function returning its [`Outcome`] or the [`CommandError`] that stopped
//! it; [`error::finish`] prints the error and maps either to the exit code, in one place.
//! The binary's `main` does nothing but call [`main`] and exit with what it returns.

mod args;
mod audit;
mod baseline;
mod bench;
mod builtin;
mod check;
pub mod error;
mod history;
mod load;
mod matrix;
mod profile;
mod report;
mod run;
mod serve;
mod signals;
mod sweep;
mod validate;

pub use args::Cli;
pub use error::{CommandError, Outcome};

use clap::Parser;

/// Parses the command line, runs the command, returns the exit code.
pub fn main() -> i32 {
    error::finish(command())
}

fn command() -> Result<Outcome, CommandError> {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Help and the version are what was asked for, not a bad command line.
        Err(e) => match e.kind() {
            clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                let _ = e.print();
                return Ok(Outcome::Done);
            }
            _ => return Err(CommandError::CommandLine(e)),
        },
    };
    match cli.command {
        args::Command::Validate(a) => validate::validate(a),
        args::Command::List(a) => validate::list(a),
        args::Command::Report(a) => report::report(a),
        args::Command::Matrix(a) => matrix::matrix(a),
        args::Command::History(a) => history::history(a),
        args::Command::Check(a) => check::check(a),
        args::Command::Baseline(a) => baseline::baseline(a),
        args::Command::Suites(args::SuitesCommand::Export(a)) => builtin::export(a),
        args::Command::Run(a) if a.clock == args::ClockArg::Virtual => {
            with_virtual_runtime(run::run(*a))
        }
        args::Command::Run(a) => with_runtime(run::run(*a)),
        args::Command::Serve(a) => with_runtime(serve::run(a)),
        args::Command::Bench(a) => with_runtime(bench::run(*a)),
        args::Command::Sweep(a) => with_runtime(sweep::run(a)),
        args::Command::Audit(a) => with_runtime(audit::run(*a)),
    }
}

/// What every command returns.
type Ended = Result<Outcome, CommandError>;

fn with_runtime(fut: impl std::future::Future<Output = Ended>) -> Ended {
    block_on(
        tokio::runtime::Builder::new_multi_thread().enable_all(),
        fut,
    )
}

/// One thread, its clock paused: time moves only when every task waits, to the next deadline
/// (`run --clock virtual`, see `runner::clock`).
fn with_virtual_runtime(fut: impl std::future::Future<Output = Ended>) -> Ended {
    block_on(
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true),
        fut,
    )
}

fn block_on(
    builder: &mut tokio::runtime::Builder,
    fut: impl std::future::Future<Output = Ended>,
) -> Ended {
    builder
        .build()
        .map_err(CommandError::Runtime)?
        .block_on(fut)
}
