//! What a run needs besides its cases, and the id that names it.

use crate::conformance::Profile;
use crate::runner::target::TargetKind;
use chrono::Utc;
use std::sync::Arc;

/// Everything a run needs besides its cases.
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub run_id: String,
    pub jobs: usize,
    pub target: TargetKind,
    pub endpoint: Option<String>,
    pub region: String,
    pub target_profile: Option<String>,
    /// The `--target-profile` as given (a built-in name or a file), for `sqsprobe check`.
    pub target_profile_source: Option<String>,
    pub protocol: String,
    pub suites: Vec<String>,
    /// The target profile: its unsupported cases are not run, and each finished case is
    /// mapped through it (`conformance::apply`) before its `case_end` is sent.
    pub profile: Option<Arc<Profile>>,
    /// The embedded emulator's chaos spec (canonical form) when `--chaos` was given.
    pub emulator_chaos: Option<String>,
    /// This process's instance id (see [`crate::runner::queues::INSTANCE_TAG`]).
    pub instance: String,
    /// The timeout of one attempt of a call without a long poll (`--call-timeout`).
    pub call_timeout: std::time::Duration,
    /// Calls in a row without a response after which the target counts as lost.
    pub lost_after: u32,
    /// `--max-duration`: the run stops cleanly (cases cut, teardown done) once it has run this
    /// long.
    pub max_duration: Option<std::time::Duration>,
    /// The run's request count and budget (`--max-requests`), shared with the reachability
    /// check so that it counts too.
    pub usage: Arc<crate::runner::policy::Usage>,
    /// `K/N` when this run is one partition of a split selection.
    pub partition: Option<String>,
    /// The run's seed (`--seed`, else random): recorded in `run_start`, and every case's
    /// fault dice are drawn from it, so the same seed and suite inject the same faults.
    pub seed: u64,
    /// `--trials N`: run every case at least N times (a case keeps a larger `trials:`).
    pub trials: Option<u32>,
    /// The run's clock (`--clock`): every timestamp comes from it, and `run_start` names it.
    pub clock: crate::runner::clock::RunClock,
    /// `--regions`: the only regions the run may touch (an SCP may allow no others); a case
    /// whose queues are elsewhere is not run (`unsupported`, saying which region).
    pub allowed_regions: Option<Vec<String>>,
}

/// A run id: UTC time to the second plus 8 random hex digits, safe inside a queue name.
pub fn new_run_id() -> String {
    let now = Utc::now();
    // 32 random bits: two runs started in the same second must not share queue names.
    let salt: u32 = rand::random();
    format!("{}-{salt:08x}", now.format("%Y%m%d-%H%M%S"))
}
