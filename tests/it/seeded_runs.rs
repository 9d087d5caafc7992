//! A run is repeated from what it recorded: every random draw — the emulator's chaos dice, its
//! throttles, a fault's probability — comes from the seeds in `run_start`, and a `--chaos` spec's
//! own `seed=N` repeats the run by itself, with no `--seed` (docs/chaos.md). The real binary
//! runs `tests/fixtures/seeded-draws.yaml` twice with the same spec and records the same draws:
//! which attempts were throttled or hit by the fault, and the order every receive got.

use crate::common;

use common::{root, run_bin, single_run_dir};
use sqsprobe_core::evidence::{Record, read_evidence};
use std::collections::BTreeMap;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(90);

/// What one attempt drew: its phase and step, its operation and attempt number, how it ended
/// (the error code, the injected fault) and the messages a receive got, in the order it got
/// them. Ids, digests and times are left out: they differ from run to run by design.
type Draw = (
    String,
    Option<usize>,
    String,
    u32,
    String,
    Option<String>,
    Option<String>,
    Vec<String>,
);

/// The recorded draws of one run, per case and trial, each trial's in the order it made them
/// (trials run concurrently, so the file interleaves them); with the run's exit code,
/// `run_start.seed` and `run_start.emulator_chaos`.
struct Drawn {
    code: i32,
    seed: Option<u64>,
    chaos: Option<String>,
    draws: BTreeMap<(String, Option<u32>), Vec<Draw>>,
}

fn run(chaos: &str) -> Drawn {
    let out = tempfile::tempdir().unwrap();
    let args = [
        "run",
        "tests/fixtures/seeded-draws.yaml",
        "--chaos",
        chaos,
        "--quiet",
        "--out",
        out.path().to_str().unwrap(),
    ];
    let run = run_bin(&args, &root(), LIMIT);
    let records = read_evidence(&single_run_dir(out.path()).join("evidence.jsonl"))
        .unwrap_or_else(|e| panic!("{e}\nstdout:\n{}\nstderr:\n{}", run.stdout, run.stderr));
    let (seed, recorded) = records
        .iter()
        .find_map(|r| match r {
            Record::RunStart(s) => Some((s.seed, s.emulator_chaos.clone())),
            _ => None,
        })
        .expect("run_start");
    let mut draws: BTreeMap<(String, Option<u32>), Vec<Draw>> = BTreeMap::new();
    for r in &records {
        if let Record::Call(c) = r {
            draws.entry((c.case.clone(), c.trial)).or_default().push((
                format!("{:?}", c.phase),
                c.step,
                c.action.clone(),
                c.attempt_number,
                format!("{:?}", c.completion),
                c.error_code.clone(),
                c.fault.as_ref().map(|f| format!("{:?}", f.kind)),
                c.messages
                    .iter()
                    .map(|m| m.message.clone().unwrap_or_default())
                    .collect(),
            ));
        }
    }
    Drawn {
        code: run.code(),
        seed,
        chaos: recorded,
        draws,
    }
}

/// How many attempts of `d` ended with `code`, and how many receives got their messages out of
/// send order: proof that the dice were rolled at all.
fn tally(d: &Drawn, code: &str) -> (usize, usize) {
    let all = d.draws.values().flatten();
    let coded = all.clone().filter(|x| x.5.as_deref() == Some(code)).count();
    let reordered = all
        .filter(|x| x.2 == "ReceiveMessage" && x.7.len() > 1)
        .filter(|x| x.7.windows(2).any(|w| w[0] > w[1]))
        .count();
    (coded, reordered)
}

#[test]
fn a_chaos_seed_repeats_every_draw_without_a_run_seed() {
    let spec = "reorder=0.5,throttle=0.3,seed=42";
    let first = run(spec);
    assert_eq!(first.seed, Some(42), "the spec's seed is the run's");
    assert_eq!(first.chaos.as_deref(), Some(spec));
    let trials = first
        .draws
        .keys()
        .filter(|(case, _)| case == "dice")
        .count();
    assert_eq!(trials, 3, "three trials: {:?}", first.draws.keys());
    let (throttled, reordered) = tally(&first, "RequestThrottled");
    assert!(
        throttled > 0 && reordered > 0,
        "{throttled} throttled, {reordered} reordered"
    );
    let faulted = first
        .draws
        .values()
        .flatten()
        .filter(|x| x.6.is_some())
        .count();
    assert!(faulted > 0, "the probability fault hit some attempts");

    let again = run(spec);
    assert_eq!(again.seed, first.seed);
    assert_eq!(again.chaos, first.chaos);
    assert_eq!(again.draws, first.draws, "the same seed, the same draws");
    assert_eq!(again.code, first.code);

    let other = run("reorder=0.5,throttle=0.3,seed=43");
    assert_eq!(other.seed, Some(43));
    assert_ne!(other.draws, first.draws, "another seed draws other dice");
}

/// Throttles alone put no chaos tag on the run's queues: their dice are the server's, keyed by
/// each queue's name without the run's random id.
#[test]
fn throttles_alone_follow_the_seed_not_the_run_id() {
    let spec = "throttle=0.4,seed=5";
    let first = run(spec);
    assert_eq!(first.chaos.as_deref(), Some(spec));
    assert!(tally(&first, "RequestThrottled").0 > 0);
    let again = run(spec);
    assert_eq!(again.draws, first.draws);
    assert_eq!(again.code, first.code);
}

/// A spec without a seed draws from the run's seed, and `run_start.emulator_chaos` names it:
/// the recorded spec repeats the run.
#[test]
fn the_recorded_spec_names_the_seed_it_used() {
    let first = run("throttle=0.4");
    let seed = first.seed.expect("run_start.seed");
    let recorded = first.chaos.clone().expect("run_start.emulator_chaos");
    assert_eq!(recorded, format!("throttle=0.4,seed={seed}"));
    let again = run(&recorded);
    assert_eq!(again.seed, Some(seed));
    assert_eq!(again.draws, first.draws);
}
