//! `sqsprobe bench`: runs the bench workload on each target in turn, prints a Markdown table.
//!
//! Two drivers (docs/performance.md): `raw`, the default, measures the server against its own
//! no-op ceiling; `sdk` measures what an aws-sdk-sqs client sees. This file holds the SDK
//! driver's command; [`raw`] the raw one, and [`scale`] the raw driver's scale workloads.
//! What both drivers share sits below them: the bounds of a run ([`bounds`]) and how a signal
//! stops it ([`interrupt`]).

mod bounds;
mod interrupt;
mod raw;
mod scale;

use std::time::Duration;

use super::args::{BenchArgs, BenchDriverArg, BenchTargetArg, bench_defaults};
use super::error::{CommandError, Outcome};
use crate::bench::{
    BenchReport, TargetResult, Workload, markdown_table, result_json, run_target, throughput_ratio,
};
use bounds::{MAX_CLIENTS, check_phases};
use interrupt::watch_signals;
use sqsprobe_emulator::{EmulatorConfig, RunningEmulator, spawn};

/// A target to measure: its table name, and how to reach it.
enum Planned {
    Embedded,
    Endpoint(String, String),
}

impl Planned {
    fn name(&self) -> &str {
        match self {
            Planned::Embedded => "embedded",
            Planned::Endpoint(name, _) => name,
        }
    }
}

/// Flags only the raw driver reads, refused with the SDK driver (and the other way round in
/// `raw`), so a flag is never silently ignored.
fn refuse_raw_flags(args: &BenchArgs) -> Result<(), String> {
    let given = [
        ("--connections", args.connections.is_some()),
        ("--no-reference", args.no_reference),
        ("--serve-reference", args.serve_reference.is_some()),
        (
            "--reference-answer-bytes",
            args.reference_answer_bytes.is_some(),
        ),
        ("--pin", args.pin),
        ("--repeat", args.repeat != 1),
        ("--workload", !args.workload.is_empty()),
        ("--protocol", !args.protocol.is_empty()),
        ("--baseline", args.baseline.is_some()),
        ("--depth", args.depth.is_some()),
        ("--memory-at", args.memory_at.is_some()),
        ("--groups", args.groups.is_some()),
        ("--cycles", args.cycles.is_some()),
        ("--queues", args.queues.is_some()),
        ("--startup-samples", args.startup_samples.is_some()),
        ("--serve-binary", args.serve_binary.is_some()),
    ];
    match given.iter().find(|(_, on)| *on) {
        Some((flag, _)) => Err(format!(
            "{flag} is for --driver raw (this run uses --driver sdk)"
        )),
        None => Ok(()),
    }
}

fn plan(args: &BenchArgs) -> Result<Vec<Planned>, String> {
    refuse_raw_flags(args)?;
    let mut targets: Vec<Planned> = Vec::new();
    if args.target.contains(&BenchTargetArg::Embedded) || args.endpoints.is_empty() {
        targets.push(Planned::Embedded);
    }
    for (name, url) in &args.endpoints {
        if targets.iter().any(|t| t.name() == name) {
            return Err(format!("target name `{name}` is given twice"));
        }
        targets.push(Planned::Endpoint(name.clone(), url.clone()));
    }
    if let Some(b) = &args.reference
        && !targets.iter().any(|t| t.name() == b)
    {
        let names: Vec<&str> = targets.iter().map(Planned::name).collect();
        return Err(format!(
            "--reference `{b}` is not a target; targets are: {}",
            names.join(", ")
        ));
    }
    check_phases(duration(args), args.warmup)?;
    if clients(args).iter().any(|&c| c == 0 || c > MAX_CLIENTS) {
        return Err(format!("--clients must be between 1 and {MAX_CLIENTS}"));
    }
    Ok(targets)
}

fn duration(args: &BenchArgs) -> Duration {
    args.duration.unwrap_or(bench_defaults::SDK_DURATION)
}

fn clients(args: &BenchArgs) -> Vec<usize> {
    args.clients
        .clone()
        .unwrap_or_else(|| bench_defaults::SDK_CLIENTS.to_vec())
}

/// Runs the command with the chosen driver: [`Outcome::Broken`] when a target or a scale
/// measurement failed (the rest still measured and reported), [`Outcome::Failed`] when a
/// figure fell below `--fail-below`, [`Outcome::Interrupted`] when a signal stopped it.
pub(super) async fn run(args: BenchArgs) -> Result<Outcome, CommandError> {
    match args.driver {
        BenchDriverArg::Raw => raw::run(args).await,
        BenchDriverArg::Sdk => run_sdk(args).await,
    }
}

async fn run_sdk(args: BenchArgs) -> Result<Outcome, CommandError> {
    let targets = plan(&args).map_err(CommandError::BenchPlan)?;
    let baseline = args
        .reference
        .clone()
        .unwrap_or_else(|| targets[0].name().to_string());
    let duration = duration(&args);
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let mut results: Vec<TargetResult> = Vec::new();
    let mut failed = false;
    let stop = crate::bench::Stop::default();
    let watcher = tokio::spawn(watch_signals(stop.clone()));
    for target in &targets {
        if stop.requested() {
            break;
        }
        // The embedded emulator is started per target so every run begins from an empty store.
        let mut embedded: Option<RunningEmulator> = None;
        let url = match target {
            Planned::Embedded => {
                match spawn(([127, 0, 0, 1], 0).into(), EmulatorConfig::default()).await {
                    Ok(emu) => {
                        let url = emu.endpoint_url();
                        embedded = Some(emu);
                        url
                    }
                    Err(e) => {
                        return Err(CommandError::ServerStart(format!(
                            "failed to start the embedded emulator: {e}"
                        )));
                    }
                }
            }
            Planned::Endpoint(_, url) => url.clone(),
        };
        for &clients in &clients(&args) {
            let workload = Workload {
                clients,
                duration,
                warmup: args.warmup,
                messages_per_client: args.messages,
                region: args.region.clone(),
                stop: stop.clone(),
            };
            eprintln!(
                "sqsprobe: bench {} ({url}): {clients} client(s), {} warm-up + {} measured",
                target.name(),
                sqsprobe_facts::duration::format(args.warmup),
                sqsprobe_facts::duration::format(duration)
            );
            if stop.requested() {
                break;
            }
            match run_target(target.name(), &url, &workload).await {
                // A phase cut by a signal is not the figure its row would claim.
                Ok(_) if stop.requested() => {}
                Ok(r) => {
                    for op in &r.operations {
                        if let Some(e) = &op.first_error {
                            eprintln!(
                                "sqsprobe:   {} errors: {} (first: {e})",
                                op.operation.as_str(),
                                op.errors
                            );
                        }
                    }
                    if !r.leaked_queues.is_empty() {
                        eprintln!(
                            "sqsprobe:   could not delete: {}",
                            r.leaked_queues.join(", ")
                        );
                    }
                    results.push(r);
                }
                Err(e) => {
                    eprintln!("sqsprobe:   {} failed: {e}", target.name());
                    failed = true;
                }
            }
        }
        if let Some(emu) = embedded {
            emu.shutdown().await;
        }
    }
    watcher.abort();
    print!("{}", markdown_table(&results, &baseline));
    if let Some(path) = &args.json {
        let report = BenchReport {
            version: 2,
            driver: "sdk".to_string(),
            sqsprobe_version: env!("CARGO_PKG_VERSION").to_string(),
            started_at,
            duration_s: duration.as_secs_f64(),
            warmup_s: args.warmup.as_secs_f64(),
            messages_per_client: args.messages,
            reference: baseline.clone(),
            results: results
                .iter()
                .map(|r| result_json(r.clone(), throughput_ratio(r, &results, &baseline)))
                .collect(),
        };
        let text =
            serde_json::to_string_pretty(&report).map_err(|source| CommandError::Serialize {
                what: "JSON report",
                source,
            })?;
        std::fs::write(path, text + "\n").map_err(|e| CommandError::write(path, e))?;
    }
    Ok(if stop.requested() {
        Outcome::Interrupted
    } else if failed {
        Outcome::Broken
    } else {
        Outcome::Done
    })
}
