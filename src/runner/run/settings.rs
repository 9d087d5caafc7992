//! What a run needs besides its cases, and the id that names it.

use crate::runner::target::TargetKind;
use chrono::Utc;
use sqsprobe_core::conformance::Profile;
use std::sync::Arc;

/// Everything a run needs besides its cases.
#[derive(Debug, Clone)]
pub(crate) struct RunSettings {
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
    /// The embedded emulator's chaos spec (canonical form, its seed always named: see
    /// [`Seeds`]) when `--chaos` was given.
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
    /// The run's seed ([`Seeds::run`]): recorded in `run_start`, and every case's fault dice
    /// are drawn from it, so the same seed and suite inject the same faults.
    pub seed: u64,
    /// `--trials N`: run every case at least N times (a case keeps a larger `trials:`).
    pub trials: Option<u32>,
    /// The run's clock (`--clock`): every timestamp comes from it, and `run_start` names it.
    pub clock: crate::runner::clock::RunClock,
    /// `--regions`: the only regions the run may touch (an SCP may allow no others); a case
    /// whose queues are elsewhere is not run (`unsupported`, saying which region).
    pub allowed_regions: Option<Vec<String>>,
}

/// The seeds of a run, each recorded in `run_start`: every random draw of the run comes from
/// them, so a run is repeated from its records alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Seeds {
    /// The run's seed (`run_start.seed`): `--seed`, else the `--chaos` spec's own `seed=` (so
    /// that spec reproduces the run by itself), else drawn at random.
    pub run: u64,
    /// `--chaos` with its seed named (`run_start.emulator_chaos`): the spec's own `seed=`, else
    /// the run's seed.
    pub chaos: Option<sqsprobe_emulator::Chaos>,
}

impl Seeds {
    /// The seeds of a run given `--seed` and `--chaos`; `random` is the draw used when neither
    /// names a seed.
    pub(crate) fn resolve(
        seed: Option<u64>,
        chaos: Option<sqsprobe_emulator::Chaos>,
        random: impl FnOnce() -> u64,
    ) -> Seeds {
        let run = seed.or(chaos.and_then(|c| c.seed)).unwrap_or_else(random);
        Seeds {
            run,
            chaos: chaos.map(|c| sqsprobe_emulator::Chaos {
                seed: Some(c.seed.unwrap_or(run)),
                ..c
            }),
        }
    }
}

/// A run id: UTC time to the second plus 8 random hex digits, safe inside a queue name.
pub(crate) fn new_run_id() -> String {
    let now = Utc::now();
    // 32 random bits: two runs started in the same second must not share queue names.
    let salt: u32 = rand::random();
    format!("{}-{salt:08x}", now.format("%Y%m%d-%H%M%S"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_emulator::Chaos;

    #[test]
    fn every_seed_a_run_draws_from_is_named() {
        let spec = |s: &str| Some(Chaos::parse(s).unwrap());
        let never = || panic!("a named seed is used, never a random one");
        // The chaos spec's own seed is the run's when --seed is not given: the spec alone
        // repeats the run.
        let s = Seeds::resolve(None, spec("throttle=0.5,seed=7"), never);
        assert_eq!(s.run, 7);
        assert_eq!(s.chaos.unwrap().to_string(), "throttle=0.5,seed=7");
        // --seed wins for the run; the spec keeps its own.
        let s = Seeds::resolve(Some(3), spec("throttle=0.5,seed=7"), never);
        assert_eq!((s.run, s.chaos.unwrap().seed), (3, Some(7)));
        // A spec without a seed draws from the run's, and says so.
        let s = Seeds::resolve(Some(3), spec("reorder=1"), never);
        assert_eq!(s.chaos.unwrap().to_string(), "reorder=1,seed=3");
        let s = Seeds::resolve(None, spec("reorder=1"), || 11);
        assert_eq!(s.run, 11);
        assert_eq!(s.chaos.unwrap().to_string(), "reorder=1,seed=11");
        let s = Seeds::resolve(None, None, || 12);
        assert_eq!((s.run, s.chaos), (12, None));
    }
}
