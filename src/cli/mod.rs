//! The command line: argument parsing and the commands.
//!
//! Each command is a function returning the process exit code (`sqsprobe_facts::exit_code`); `main`
//! does nothing but call [`main`] and exit with what it returns.

mod args;
mod audit;
mod baseline;
mod bench;
mod builtin;
mod check;
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

use clap::Parser;

/// Parses the command line, runs the command, returns the exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // clap exits 2 on usage errors; 2 means "invalid suite" here.
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    sqsprobe_facts::exit_code::OK
                }
                _ => sqsprobe_facts::exit_code::BAD_COMMAND_LINE,
            };
        }
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

fn with_runtime(fut: impl std::future::Future<Output = i32>) -> i32 {
    block_on(
        tokio::runtime::Builder::new_multi_thread().enable_all(),
        fut,
    )
}

/// One thread, its clock paused: time moves only when every task waits, to the next deadline
/// (`run --clock virtual`, see `runner::clock`).
fn with_virtual_runtime(fut: impl std::future::Future<Output = i32>) -> i32 {
    block_on(
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true),
        fut,
    )
}

fn block_on(
    builder: &mut tokio::runtime::Builder,
    fut: impl std::future::Future<Output = i32>,
) -> i32 {
    match builder.build() {
        Ok(rt) => rt.block_on(fut),
        Err(e) => {
            eprintln!("sqsprobe: failed to start the async runtime: {e}");
            sqsprobe_facts::exit_code::RUNTIME_ERROR
        }
    }
}
