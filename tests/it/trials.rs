//! Repeated trials and rates, end to end on the embedded emulator: a rate
//! expectation fails when the measured interval sits above its bound, an all-inconclusive
//! case is never a pass, every trial runs on its own queues with its index on each row, and
//! the same seed gives the same per-trial outcomes.

use crate::common;

use common::{case_end as end, run_records};
use sqsprobe_core::evidence::format::{Record, Verdict};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(90);

fn run(extra: &[&str], expect_code: i32) -> (Vec<Record>, String) {
    let mut args = vec!["run", "tests/fixtures/trials.yaml"];
    args.extend_from_slice(extra);
    let (records, run) = run_records(&args, expect_code, LIMIT);
    (records, run.stdout)
}

#[test]
fn a_stale_handle_that_always_keeps_fails_an_at_most_rate() {
    // stale-delete-keeps=1: every superseded-handle delete leaves the message, so each trial
    // sees it again; 20/20 has a 95% interval [83.2%, 100%], wholly above the 5% bound.
    let (records, stdout) = run(
        &[
            "--case",
            "stale-delete-rate",
            "--chaos",
            "stale-delete-keeps=1",
        ],
        4,
    );
    let end = end(&records, "stale-delete-rate");
    assert_eq!(end.verdict, Verdict::Fail, "{end:?}");
    let trials = end.trials.as_ref().expect("case_end.trials");
    assert_eq!((trials.n, trials.conclusive), (20, 20));
    assert_eq!(trials.counts.get("observed_redelivery"), Some(&20));
    let [low, high] = trials.intervals["observed_redelivery"];
    assert!((low - 0.8316).abs() < 0.001, "low {low}");
    assert_eq!(high, 1.0);
    assert!(
        end.findings.iter().any(|f| f.message.contains("5%")),
        "{:?}",
        end.findings
    );
    assert!(stdout.contains("20/20"), "{stdout}");
    // The bound travels with the tally, so reports draw the interval against it.
    let bound = trials.bounds["observed_redelivery"];
    assert_eq!((bound.at_least, bound.at_most), (None, Some(0.05)));

    // Each trial is its own experiment: its own queue, its own trial_end, its index on every
    // row of its calls and steps.
    let mut queues_by_trial: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
    let mut trial_ends = 0;
    for r in &records {
        match r {
            Record::Call(c) if c.case == "stale-delete-rate" => {
                let trial = c
                    .trial
                    .expect("every call of a multi-trial case has its trial");
                assert!((1..=20).contains(&trial));
                if let Some(q) = &c.queue {
                    queues_by_trial.entry(trial).or_default().insert(q.clone());
                }
            }
            Record::Step(s) if s.case == "stale-delete-rate" => {
                assert!(s.trial.is_some(), "{s:?}");
            }
            Record::TrialEnd(t) if t.case == "stale-delete-rate" => {
                trial_ends += 1;
                assert!(t.trial.is_some() && t.trials.is_none());
            }
            _ => {}
        }
    }
    assert_eq!(trial_ends, 20);
    assert_eq!(queues_by_trial.len(), 20);
    let all: BTreeSet<&String> = queues_by_trial.values().flatten().collect();
    let per_trial: usize = queues_by_trial.values().map(BTreeSet::len).sum();
    assert_eq!(all.len(), per_trial, "no queue is shared between trials");
}

#[test]
fn the_same_case_without_chaos_passes_its_bound() {
    // The embedded emulator by default deletes with a superseded handle (as AWS usually
    // does): 0/20 redeliveries, upper bound 16.8%. That is still above 5%, so 20 trials
    // cannot prove "at most 5%": the honest verdict is inconclusive, never a pass.
    let (records, stdout) = run(&["--case", "stale-delete-rate"], 5);
    let end = end(&records, "stale-delete-rate");
    assert_eq!(end.verdict, Verdict::Inconclusive, "{end:?}");
    let trials = end.trials.as_ref().unwrap();
    assert_eq!(
        trials
            .counts
            .get("observed_redelivery")
            .copied()
            .unwrap_or(0),
        0
    );
    assert!(trials.intervals["observed_redelivery"][1] > 0.05);
    // 0 of n settles at most 5% only from n ≥ ln 0.025 / ln 0.95 = 72 (not the rule of
    // three's 60, which is one-sided).
    assert!(
        end.reason.contains("72 trials with no observed_redelivery"),
        "how many trials would settle it: {:?} {:?}",
        end.reason,
        end.findings
    );
    assert!(stdout.contains("0/20"), "{stdout}");
}

#[test]
fn the_same_seed_gives_the_same_trials() {
    let per_trial = |seed: &str| {
        let (records, _) = run(&["--case", "coin-flip-deletes", "--seed", seed], 0);
        let trials = end(&records, "coin-flip-deletes").trials.clone().unwrap();
        trials
            .per_trial
            .iter()
            .map(|t| (t.trial, t.class))
            .collect::<Vec<_>>()
    };
    let first = per_trial("11");
    assert_eq!(first.len(), 10);
    let classes: BTreeSet<_> = first.iter().map(|(_, c)| *c).collect();
    assert_eq!(
        classes.len(),
        2,
        "a fair coin over ten trials shows both sides: {first:?}"
    );
    assert_eq!(per_trial("11"), first);
}

/// The per-trial classes of `case`, in trial order.
fn classes(records: &[Record], case: &str) -> Vec<Option<String>> {
    end(records, case)
        .trials
        .clone()
        .unwrap()
        .per_trial
        .iter()
        .map(|t| t.class.map(|c| c.as_str().to_string()))
        .collect()
}

/// Every trial's queue rolls its own dice. With one seed for all, every trial rolled
/// the same first die and a 50% chance came out 0/30 or 30/30; now the trials are independent
/// draws, and the same `--seed` repeats them trial by trial (on the real clock: each queue
/// draws in its own request order).
#[test]
fn each_trial_rolls_its_own_emulator_chaos_dice_and_the_seed_repeats_them() {
    for (case, chaos) in [
        ("chaos-coin", None),
        ("plain-coin", Some("redeliver-after-delete=0.5,seed=1")),
    ] {
        let once = |seed: &str| {
            let mut args = vec!["--case", case, "--seed", seed];
            if let Some(spec) = chaos {
                args.extend(["--chaos", spec]);
            }
            let (records, _) = run(&args, 0);
            classes(&records, case)
        };
        let first = once("5");
        assert_eq!(first.len(), 30);
        let back = first
            .iter()
            .filter(|c| c.as_deref() == Some("observed_redelivery"))
            .count();
        let quiet = first
            .iter()
            .filter(|c| c.as_deref() == Some("no_redelivery_within_window"))
            .count();
        assert_eq!(
            back + quiet,
            30,
            "{case}: every trial has a class: {first:?}"
        );
        assert!(
            (5..=25).contains(&back),
            "{case}: 30 independent fair coins: {back} of 30 came back"
        );
        assert_eq!(
            once("5"),
            first,
            "{case}: the same seed repeats every trial"
        );
        assert_ne!(once("6"), first, "{case}: another seed draws other dice");
    }
}

/// A step whose expectation no trial could check (its answer lost by the case's own fault)
/// leaves the case inconclusive however many trials ran: one run of it is, and `--trials 2`
/// (each trial's class known and allowed) used to make it a pass.
#[test]
fn an_expectation_no_trial_could_check_is_never_a_pass() {
    let fixture = "tests/fixtures/unchecked-trials.yaml";
    let (single, _) = run_records(&["run", fixture], 5, LIMIT);
    let once = end(&single, "unchecked-after-window");
    assert_eq!(once.verdict, Verdict::Inconclusive, "{}", once.reason);

    let (pooled, _) = run_records(&["run", fixture, "--trials", "2"], 5, LIMIT);
    let twice = end(&pooled, "unchecked-after-window");
    assert_eq!(twice.verdict, Verdict::Inconclusive, "{}", twice.reason);
    let trials = twice.trials.as_ref().expect("case_end.trials");
    assert_eq!(
        trials.counts.get("no_redelivery_within_window"),
        Some(&2),
        "each trial's class is known: {:?}",
        trials.counts
    );
    assert!(
        twice
            .reason
            .contains("2 of 2 trials left an expectation unchecked"),
        "{}",
        twice.reason
    );
    assert!(
        twice.reason.contains("step 5 (get-queue-url)"),
        "{}",
        twice.reason
    );
}
