//! `sqsprobe bench`: runs the bench workload on each target in turn, prints a Markdown table.

use std::time::Duration;

use super::args::{BenchArgs, BenchTargetArg};
use crate::bench::{
    BenchReport, TargetResult, Workload, markdown_table, result_json, run_target, throughput_ratio,
};
use crate::emulator::{EmulatorConfig, RunningEmulator, spawn};
use crate::exit_code;

/// The longest measured phase accepted: a bench is a bounded experiment like any other.
const MAX_DURATION: Duration = Duration::from_secs(3600);
/// The most clients per run: each has its own queue and connection pool.
const MAX_CLIENTS: usize = 256;

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

fn plan(args: &BenchArgs) -> Result<Vec<Planned>, String> {
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
    if let Some(b) = &args.baseline
        && !targets.iter().any(|t| t.name() == b)
    {
        let names: Vec<&str> = targets.iter().map(Planned::name).collect();
        return Err(format!(
            "--baseline `{b}` is not a target; targets are: {}",
            names.join(", ")
        ));
    }
    if args.duration.is_zero() || args.duration > MAX_DURATION {
        return Err("--duration must be more than 0 and at most 1h".into());
    }
    if args.warmup > MAX_DURATION {
        return Err("--warmup must be at most 1h".into());
    }
    if args.clients.iter().any(|&c| c == 0 || c > MAX_CLIENTS) {
        return Err(format!("--clients must be between 1 and {MAX_CLIENTS}"));
    }
    Ok(targets)
}

/// Runs the command; returns the exit code.
pub async fn run(args: BenchArgs) -> i32 {
    let targets = match plan(&args) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("sqsprobe: {e}");
            return exit_code::BAD_COMMAND_LINE;
        }
    };
    let baseline = args
        .baseline
        .clone()
        .unwrap_or_else(|| targets[0].name().to_string());
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let mut results: Vec<TargetResult> = Vec::new();
    let mut failed = false;
    for target in &targets {
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
                        eprintln!("sqsprobe: failed to start the embedded emulator: {e}");
                        return exit_code::RUNTIME_ERROR;
                    }
                }
            }
            Planned::Endpoint(_, url) => url.clone(),
        };
        for &clients in &args.clients {
            let workload = Workload {
                clients,
                duration: args.duration,
                warmup: args.warmup,
                messages_per_client: args.messages,
                region: args.region.clone(),
            };
            eprintln!(
                "sqsprobe: bench {} ({url}): {clients} client(s), {} warm-up + {} measured",
                target.name(),
                crate::duration::format(args.warmup),
                crate::duration::format(args.duration)
            );
            match run_target(target.name(), &url, &workload).await {
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
    print!("{}", markdown_table(&results, &baseline));
    if let Some(path) = &args.json {
        let report = BenchReport {
            version: 1,
            sqsprobe_version: env!("CARGO_PKG_VERSION").to_string(),
            started_at,
            duration_s: args.duration.as_secs_f64(),
            warmup_s: args.warmup.as_secs_f64(),
            messages_per_client: args.messages,
            baseline: baseline.clone(),
            results: results
                .iter()
                .map(|r| result_json(r.clone(), throughput_ratio(r, &results, &baseline)))
                .collect(),
        };
        let text = match serde_json::to_string_pretty(&report) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("sqsprobe: failed to encode the JSON report: {e}");
                return exit_code::RUNTIME_ERROR;
            }
        };
        if let Err(e) = std::fs::write(path, text + "\n") {
            eprintln!("sqsprobe: failed to write {}: {e}", path.display());
            return exit_code::RUNTIME_ERROR;
        }
    }
    if failed {
        exit_code::RUNTIME_ERROR
    } else {
        exit_code::OK
    }
}
