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

/// Every code above with its name, in the order of `docs/exit-codes.md`'s table; tests hold
/// the constants, that table and `--help` to this list.
pub const ALL: [(i32, &str); 7] = [
    (OK, "OK"),
    (BAD_COMMAND_LINE, "BAD_COMMAND_LINE"),
    (INVALID_SUITE, "INVALID_SUITE"),
    (RUNTIME_ERROR, "RUNTIME_ERROR"),
    (EXPECTATION_FAILED, "EXPECTATION_FAILED"),
    (INCONCLUSIVE, "INCONCLUSIVE"),
    (INTERRUPTED, "INTERRUPTED"),
];

/// The worse of two runs' exit codes, as one run of both would have exited: interrupted (130)
/// > fail (4) > error (3) > inconclusive (5) > pass (0); any other code is worse than all.
pub fn worst(a: i32, b: i32) -> i32 {
    fn rank(code: i32) -> u8 {
        match code {
            OK => 0,
            INCONCLUSIVE => 1,
            RUNTIME_ERROR => 2,
            EXPECTATION_FAILED => 3,
            INTERRUPTED => 4,
            _ => 5,
        }
    }
    if rank(b) > rank(a) { b } else { a }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_code_follows_the_documented_order() {
        assert_eq!(worst(OK, INCONCLUSIVE), INCONCLUSIVE);
        assert_eq!(worst(INCONCLUSIVE, RUNTIME_ERROR), RUNTIME_ERROR);
        assert_eq!(worst(EXPECTATION_FAILED, RUNTIME_ERROR), EXPECTATION_FAILED);
        assert_eq!(worst(EXPECTATION_FAILED, INTERRUPTED), INTERRUPTED);
        assert_eq!(worst(OK, OK), OK);
    }

    /// A constant added to this file and not to [`ALL`] fails here (and [`ALL`] is what the
    /// docs and `--help` are held to).
    #[test]
    fn every_constant_is_in_the_list() {
        let declared: Vec<&str> = include_str!("exit_code.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("pub const ")?.strip_suffix(';'))
            .filter_map(|l| l.split_once(": i32 = ").map(|(name, _)| name))
            .collect();
        let listed: Vec<&str> = ALL.iter().map(|(_, name)| *name).collect();
        assert_eq!(declared, listed);
    }
}
