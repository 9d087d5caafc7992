//! `sqsprobe bench --workload memory,depth,queues,startup`: the scale workloads' flags checked
//! and turned into sizes, the workloads run on `sqsprobe serve` started from this executable,
//! and what they measured.

use super::super::args::{BenchArgs, bench_defaults};
use crate::bench::Stop;
use crate::bench::scale::{Measure, ScaleReport, ScaleSizes, ScaleWorkload, growth_ratios};
use sqsprobe_facts::text::escape::terminal;

/// Largest size of a depth or memory fill: 10M 11-byte messages is ~3 GB of RSS.
const MAX_MESSAGES: u64 = 10_000_000;
/// Smallest: the ten warm-up messages and a held-groups queue's free groups fit well below.
const MIN_MESSAGES: u64 = 100;
/// The FIFO groups: at least twice the free groups of the held case, and held heads stay
/// below AWS's 120,000 in-flight messages per queue.
const GROUPS: std::ops::RangeInclusive<u64> = 20..=100_000;
const MAX_CYCLES: u64 = 1_000_000;
/// Most queues (the names are numbered with one width).
const MAX_QUEUES: u64 = 100_000;
const MAX_STARTUP_SAMPLES: u64 = 1_000;

/// What the scale workloads will do.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ScalePlan {
    pub workloads: Vec<ScaleWorkload>,
    pub sizes: ScaleSizes,
    /// `--serve-binary`; `None` for this executable.
    pub binary: Option<std::path::PathBuf>,
}

/// Sorted, without repeats; each within `range`.
fn sizes(
    flag: &str,
    given: Option<&Vec<u64>>,
    default: &[u64],
    range: std::ops::RangeInclusive<u64>,
) -> Result<Vec<u64>, String> {
    let mut v = given.cloned().unwrap_or_else(|| default.to_vec());
    if v.is_empty() || v.iter().any(|n| !range.contains(n)) {
        return Err(format!(
            "{flag} takes counts from {} to {}",
            range.start(),
            range.end()
        ));
    }
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

fn one(
    flag: &str,
    given: Option<u64>,
    default: u64,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, String> {
    let v = given.unwrap_or(default);
    if range.contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "{flag} must be from {} to {}",
            range.start(),
            range.end()
        ))
    }
}

/// The scale plan for the `chosen` workloads; `None` when none is chosen. A scale flag whose
/// workload is not chosen is refused, so none is silently ignored.
pub(super) fn plan(
    args: &BenchArgs,
    chosen: &[ScaleWorkload],
) -> Result<Option<ScalePlan>, String> {
    use ScaleWorkload::{Depth, Memory, Queues, Startup};
    let flags: [(&str, bool, &[ScaleWorkload]); 7] = [
        ("--depth", args.depth.is_some(), &[Depth]),
        ("--memory-at", args.memory_at.is_some(), &[Memory]),
        ("--groups", args.groups.is_some(), &[Memory, Depth]),
        ("--cycles", args.cycles.is_some(), &[Depth, Queues]),
        ("--queues", args.queues.is_some(), &[Queues]),
        (
            "--startup-samples",
            args.startup_samples.is_some(),
            &[Startup],
        ),
        (
            "--serve-binary",
            args.serve_binary.is_some(),
            &[Memory, Depth, Queues, Startup],
        ),
    ];
    for (flag, given, for_workloads) in flags {
        if given && !for_workloads.iter().any(|w| chosen.contains(w)) {
            let names: Vec<&str> = for_workloads.iter().map(|w| w.as_str()).collect();
            let names = match names.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                _ => names.join(""),
            };
            return Err(format!(
                "{flag} is for --workload {names}, which this run does not include"
            ));
        }
    }
    if chosen.is_empty() {
        return Ok(None);
    }
    let messages = MIN_MESSAGES..=MAX_MESSAGES;
    let sizes = ScaleSizes {
        depths: sizes(
            "--depth",
            args.depth.as_ref(),
            bench_defaults::DEPTHS,
            messages.clone(),
        )?,
        memory_at: sizes(
            "--memory-at",
            args.memory_at.as_ref(),
            bench_defaults::MEMORY_AT,
            messages,
        )?,
        groups: one("--groups", args.groups, bench_defaults::GROUPS, GROUPS)?,
        cycles: one(
            "--cycles",
            args.cycles,
            bench_defaults::CYCLES,
            1..=MAX_CYCLES,
        )?,
        queues: sizes(
            "--queues",
            args.queues.as_ref(),
            bench_defaults::QUEUES,
            1..=MAX_QUEUES,
        )?,
        startup_samples: one(
            "--startup-samples",
            args.startup_samples,
            bench_defaults::STARTUP_SAMPLES,
            1..=MAX_STARTUP_SAMPLES,
        )?,
    };
    if let Some(b) = &args.serve_binary
        && !b.is_file()
    {
        return Err(format!("--serve-binary {}: no such file", b.display()));
    }
    Ok(Some(ScalePlan {
        workloads: chosen.to_vec(),
        sizes,
        binary: args.serve_binary.clone(),
    }))
}

fn say(line: &str) {
    eprintln!("sqsprobe:   {}", terminal(line));
}

/// Runs the plan's workloads: memory, depth, queues, then startup (each server is stopped
/// before the next starts, so no measurement shares the machine with another server).
pub(super) async fn run(plan: &ScalePlan, stop: &Stop) -> ScaleReport {
    let mut report = ScaleReport {
        workloads: plan.workloads.clone(),
        sizes: plan.sizes.clone(),
        server_binary: String::new(),
        memory: Vec::new(),
        depth: Vec::new(),
        queues: Vec::new(),
        ratios: Vec::new(),
        startup: None,
        errors: Vec::new(),
    };
    let binary = match plan.binary.clone().map_or_else(std::env::current_exe, Ok) {
        Ok(b) => b,
        Err(e) => {
            report
                .errors
                .push(format!("cannot find this executable to start serve: {e}"));
            return report;
        }
    };
    report.server_binary = binary.display().to_string();
    let names: Vec<&str> = plan.workloads.iter().map(|w| w.as_str()).collect();
    eprintln!(
        "sqsprobe: bench scale ({}): sqsprobe serve from {}",
        names.join(", "),
        terminal(&report.server_binary)
    );
    let measure = Measure {
        binary: binary.clone(),
        sizes: &plan.sizes,
        workloads: &plan.workloads,
        stop: stop.clone(),
    };
    let recorded = measure.run(&mut say).await;
    report.memory = recorded.memory;
    report.depth = recorded.depth;
    report.queues = recorded.queues;
    report.errors = recorded.errors;
    if plan.workloads.contains(&ScaleWorkload::Startup) && !stop.requested() {
        let samples = plan.sizes.startup_samples;
        let stop = stop.clone();
        // Its own thread: the samples block (0.5 ms polls), and every child it starts is
        // killed before the thread ends.
        let measured = tokio::task::spawn_blocking(move || {
            crate::bench::scale::measure_startup(&binary, samples, &stop, &mut say)
        })
        .await;
        match measured {
            Ok(Ok(startup)) => report.startup = Some(startup),
            Ok(Err(e)) => report.errors.push(format!("startup: {e}")),
            Err(e) => report.errors.push(format!("startup: {e}")),
        }
    }
    report.ratios = growth_ratios(&report.depth, &report.queues);
    for e in &report.errors {
        eprintln!("sqsprobe:   not measured: {}", terminal(e));
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::args::{Cli, Command};
    use clap::Parser;

    fn args(line: &[&str]) -> BenchArgs {
        let mut all = vec!["sqsprobe", "bench"];
        all.extend_from_slice(line);
        match Cli::try_parse_from(all).expect("parses").command {
            Command::Bench(a) => *a,
            _ => unreachable!("a bench command line"),
        }
    }

    #[test]
    fn defaults_are_the_full_measurement() {
        let p = plan(&args(&[]), &[ScaleWorkload::Depth])
            .expect("valid")
            .expect("a plan");
        assert_eq!(p.sizes.depths, [1_000, 1_000_000]);
        assert_eq!(p.sizes.memory_at, [200_000, 1_000_000]);
        assert_eq!(
            (p.sizes.groups, p.sizes.cycles, p.sizes.startup_samples),
            (10_000, 5_000, 15)
        );
        assert_eq!(p.sizes.queues, [10, 10_000]);
        assert_eq!(plan(&args(&[]), &[]), Ok(None));
    }

    #[test]
    fn sizes_are_sorted_and_bounded() {
        let p = plan(
            &args(&["--depth", "5000,200,5000", "--cycles", "3"]),
            &[ScaleWorkload::Depth],
        )
        .expect("valid")
        .expect("a plan");
        assert_eq!(
            (p.sizes.depths.clone(), p.sizes.cycles),
            (vec![200, 5000], 3)
        );
        for (line, workload) in [
            (vec!["--depth", "50"], ScaleWorkload::Depth),
            (vec!["--depth", "20000000"], ScaleWorkload::Depth),
            (vec!["--groups", "5"], ScaleWorkload::Memory),
            (vec!["--cycles", "0"], ScaleWorkload::Queues),
            (vec!["--queues", "0"], ScaleWorkload::Queues),
            (vec!["--startup-samples", "0"], ScaleWorkload::Startup),
        ] {
            assert!(plan(&args(&line), &[workload]).is_err(), "{line:?}");
        }
    }

    #[test]
    fn a_flag_without_its_workload_is_refused() {
        let e = plan(&args(&["--queues", "10"]), &[ScaleWorkload::Depth]).unwrap_err();
        assert_eq!(
            e,
            "--queues is for --workload queues, which this run does not include"
        );
        let e = plan(&args(&["--groups", "100"]), &[]).unwrap_err();
        assert!(e.contains("memory or depth"), "{e}");
    }
}
