//! What a run says before any case: its `run_start`, and which planned cases it will not run
//! (a case for another protocol, with queues outside `--regions`, or that the target profile
//! marks unsupported), each answered at once by its `case_end`.

use super::closing::{Unrun, unrun_end};
use super::settings::RunSettings;
use crate::runner::call::rfc3339;
use crate::runner::schedule::PlannedCase;
use chrono::Utc;
use sqsprobe_core::conformance;
use sqsprobe_core::evidence::format::{CaseEnd, FORMAT, RunStart};

/// The first record of a run: what it is about to do, and against what.
pub(crate) fn run_start(
    settings: &RunSettings,
    plan: &[PlannedCase],
    started_at: chrono::DateTime<Utc>,
) -> RunStart {
    RunStart {
        format: FORMAT.to_string(),
        run_id: settings.run_id.clone(),
        sqsprobe_version: env!("CARGO_PKG_VERSION").to_string(),
        target: settings.target.as_str().to_string(),
        endpoint: settings.endpoint.clone(),
        region: settings.region.clone(),
        target_profile: settings.target_profile.clone(),
        target_profile_source: settings.target_profile_source.clone(),
        // The run's protocol was read from `--protocol`'s own list of names.
        protocol: sqsprobe_facts::sqs::protocol::Protocol::from_name(&settings.protocol)
            .unwrap_or_default(),
        started_at: rfc3339(started_at),
        suites: settings.suites.clone(),
        cases: plan.iter().map(|p| p.case.id.clone()).collect(),
        emulator_chaos: settings.emulator_chaos.clone(),
        partition: settings.partition.clone(),
        seed: Some(settings.seed),
        merged: None,
        clock: Some(settings.clock.kind().as_str().to_string()),
        regions: run_regions(settings, plan),
    }
}

/// Every region the run will touch: its own, and each region the cases that will run name.
fn run_regions(settings: &RunSettings, plan: &[PlannedCase]) -> Vec<String> {
    let mut regions = vec![settings.region.clone()];
    for p in plan.iter().filter(|p| not_runnable(p, settings).is_none()) {
        regions.extend(p.case.regions().into_iter().map(str::to_string));
    }
    regions.sort();
    regions.dedup();
    regions
}

/// Why a planned case is not run at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Skip {
    /// It checks another wire protocol than the run's (`protocols:`).
    Protocol,
    /// The target profile says the target cannot run it.
    Unsupported,
    /// Its queues are in a region outside `--regions`.
    Region,
}

/// Why a planned case will not run at all, with its `case_end` (verdict `unsupported`), if
/// it will not.
pub(crate) fn not_runnable(
    planned: &PlannedCase,
    settings: &RunSettings,
) -> Option<(Skip, CaseEnd)> {
    let protocols = &planned.case.protocols;
    if !protocols.is_empty() && !protocols.contains(&settings.protocol) {
        let skipped = Unrun::Skipped {
            reason: format!(
                "not run: the case checks the {} protocol only; this run uses {}",
                protocols.join(" and "),
                settings.protocol
            ),
            note: format!("protocols: [{}]", protocols.join(", ")),
        };
        return Some((Skip::Protocol, unrun_end(settings, planned, skipped)));
    }
    if let Some(allowed) = &settings.allowed_regions {
        let outside: Vec<&str> = planned
            .case
            .regions()
            .into_iter()
            .filter(|r| !allowed.iter().any(|a| a == r))
            .collect();
        if !outside.is_empty() {
            let skipped = Unrun::Skipped {
                reason: format!(
                    "not run: the case's queues are in {}, outside --regions {}",
                    outside.join(", "),
                    allowed.join(",")
                ),
                note: format!("regions: [{}]", outside.join(", ")),
            };
            return Some((Skip::Region, unrun_end(settings, planned, skipped)));
        }
    }
    // The profile's own sentence and note (`conformance::unsupported_end`), through the same
    // constructor as every other case_end without a run.
    settings.profile.as_deref().and_then(|p| {
        conformance::unsupported_end(
            p,
            &settings.run_id,
            &planned.suite,
            &planned.case.id,
            &rfc3339(settings.clock.now()),
        )
        .map(|end| (Skip::Unsupported, end))
    })
}
