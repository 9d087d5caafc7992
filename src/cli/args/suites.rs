//! The flags of `sqsprobe suites`: the suites built into the binary.

use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum SuitesCommand {
    /// Write the built-in suites (the shipped `suites/` folder, sub-folders kept) to DIR, to
    /// copy and edit. `run`, `list` and `validate` read a `suites/` folder in the working folder
    /// before the built-in copy, so exporting to the default `suites` makes the copy the one
    /// that runs.
    Export(SuitesExportArgs),
}

#[derive(Debug, Args)]
pub struct SuitesExportArgs {
    /// The folder to write into (created when missing).
    #[arg(value_name = "DIR", default_value = "suites")]
    pub dir: PathBuf,

    /// Overwrite files that already exist (otherwise nothing is written when any does).
    #[arg(long)]
    pub force: bool,
}
