//! The integration tests, one binary: each file beside this one is a module (its tests are
//! `NAME::test`, so `cargo test --test it report_html::` runs one file's), sharing the helpers
//! of `tests/common/`. One binary instead of one per file: the crate and its dependencies are
//! linked once, not thirty times, and the tests of every file share one pool of test threads.
//! The longest files are the other binary, `tests/long/`, which `scripts/test` runs beside this
//! one; a file moves between the two with its `mod` line.
//!
//! The tests run on threads of one process, so none may change what the process shares: no
//! `std::env::set_var` or `set_current_dir` (give the child `Command` its environment and
//! folder instead), no signal handlers; each server a test starts is its own, on a free port.
//! `layout::every_test_file_is_a_module_of_a_test_binary` fails a file that is not declared
//! below (cargo would not build it, and its tests would silently not run).

#[path = "../common/mod.rs"]
mod common;

mod aws;
mod aws_path;
mod bench_index;
mod bench_scale;
mod bench_signals;
mod bounded;
mod chaos;
mod check;
mod ci_examples;
mod cli_bench;
mod cli_bench_raw;
mod cli_run;
mod cli_validate;
mod cli_validate_hostile;
mod deny;
mod dry_run;
mod emulator_fidelity;
mod emulator_robustness;
mod emulator_sdk;
mod history;
mod honesty;
mod interrupted_runs;
mod layout;
mod ownership;
mod pin_profile;
mod progress;
mod query_protocol;
mod release_files;
mod rendered;
mod report_html;
mod report_many;
mod seeded_runs;
mod serve_clients;
mod serve_limits;
mod signals;
mod standalone;
mod trials;
mod virtual_clock;
