//! How a signal stops a bench, whichever driver measures it. Shared by the SDK driver
//! (`bench.rs`) and the raw one (`raw.rs`), below both.

use crate::cli::error::Outcome;

/// The first Ctrl-C, SIGTERM or SIGHUP stops the bench cleanly: the phase in flight ends
/// within a call, its queues are deleted, its row is dropped, no further phase or target
/// starts, and what was measured is printed (and saved with `--json`), exit 130. A second
/// signal leaves at once; the queues of the phase in flight are named by their prefix.
pub(super) async fn watch_signals(stop: crate::bench::Stop) {
    let mut signals = crate::cli::signals::Signals::new();
    let first = signals.next().await;
    eprintln!(
        "sqsprobe: {first}: stopping the bench — the phase in flight is cut and dropped, its queues \
         deleted; nothing more is measured (again to leave at once)"
    );
    stop.request();
    let second = signals.next().await;
    // Leaving without unwinding: the servers the scale workloads started are killed here.
    stop.kill_children();
    eprintln!(
        "sqsprobe: {second} again: leaving now; queues named sqsprobe-bench-* of the phase in \
         flight may remain on the target"
    );
    std::process::exit(Outcome::Interrupted.exit_code());
}
