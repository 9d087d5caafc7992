//! The bounds every bench run is checked against, whichever driver measures it: a bench is a
//! bounded experiment like any other. Shared by the SDK driver (`bench.rs`) and the raw one
//! (`raw.rs`), below both.

use std::time::Duration;

/// The longest measured phase accepted: a bench is a bounded experiment like any other.
const MAX_DURATION: Duration = Duration::from_secs(3600);
/// The most clients (sdk) or connections (raw) per run.
pub(super) const MAX_CLIENTS: usize = 256;

/// The measured phase and the warm-up are bounded like every experiment.
pub(super) fn check_phases(duration: Duration, warmup: Duration) -> Result<(), String> {
    if duration.is_zero() || duration > MAX_DURATION {
        return Err("--duration must be more than 0 and at most 1h".into());
    }
    if warmup > MAX_DURATION {
        return Err("--warmup must be at most 1h".into());
    }
    Ok(())
}
