//! Process exit codes, chosen in one place and documented in `docs/exit-codes.md`.

/// Every case passed (or the command succeeded).
pub const OK: i32 = 0;
/// The command line could not be understood (clap also uses 2 by default; we remap to 1).
pub const BAD_COMMAND_LINE: i32 = 1;
/// A suite file is invalid: syntax, unknown keys, bad references, unbounded cases.
pub const INVALID_SUITE: i32 = 2;
/// The harness or the target broke: unreachable endpoint, queue setup failed, I/O error.
pub const RUNTIME_ERROR: i32 = 3;
/// At least one expectation did not hold.
pub const EXPECTATION_FAILED: i32 = 4;
/// Nothing failed, but at least one case was inconclusive (never counted as a pass).
pub const INCONCLUSIVE: i32 = 5;
/// The run was interrupted (Ctrl-C, SIGTERM or SIGHUP); queues were torn down and the
/// evidence is valid.
pub const INTERRUPTED: i32 = 130;
