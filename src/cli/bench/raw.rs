//! `sqsprobe bench --driver raw`: the reference server (a bare hyper server, its no-op only),
//! then every target (the embedded emulator on its own threads, then each --endpoint) against
//! its own no-op ceiling and the reference, then the scale workloads on a `sqsprobe
//! serve` of their own ([`super::scale`]); the tables, the JSON, and the comparison with a
//! saved run.

use std::path::Path;

use super::super::args::{BenchArgs, BenchTargetArg, BenchWorkloadArg, bench_defaults};
use super::bounds::{MAX_CLIENTS, check_phases};
use super::interrupt::watch_signals;
use super::scale::{self, ScalePlan};
use crate::bench::raw::pin::{allowed, pin_process, split};
use crate::bench::raw::{
    CpuProbe, EmbeddedServer, Machine, Pinning, Protocol, RAW_REPORT_PREVIOUS_VERSION,
    RAW_REPORT_VERSION, REFERENCE, REFERENCE_END, RawOptions, RawReport, RawTarget, RawWorkload,
    ReferenceServer, ServerPlace, apply_ceilings, build_profile, compare, comparison_markdown,
    cpu::proc::listener_pid, cpu_notes, is_reference, load_average, parse_endpoint,
    raw_markdown_table, reference, run_target, spread_markdown, spreads,
};
use crate::bench::scale::{
    ScaleWorkload, compare_scale, scale_comparison_markdown, scale_markdown, scale_value,
};
use crate::cli::error::{CommandError, Outcome};
use sqsprobe_facts::text::escape::terminal;

/// Where a planned target is: a server this run starts, or an endpoint.
enum Place {
    /// The embedded emulator, started per target so it begins from an empty store.
    Embedded,
    /// The reference server (only the no-op is measured on it).
    Reference,
    Endpoint(String),
}

/// A planned target: the embedded emulator and the reference get their URL once their server
/// is up.
struct Planned {
    name: String,
    place: Place,
    protocol: Protocol,
}

fn parse_protocol(s: &str) -> Result<Protocol, String> {
    Protocol::from_name(s).ok_or_else(|| format!("`{s}` is not a protocol: use json or query"))
}

/// `--protocol`: a bare protocol for every target, then NAME=PROTO for single targets.
fn protocols(
    args: &BenchArgs,
    names: &[&str],
) -> Result<(Protocol, Vec<(String, Protocol)>), String> {
    let mut default = Protocol::Json;
    let mut per_target = Vec::new();
    for value in &args.protocol {
        match value.split_once('=') {
            None => default = parse_protocol(value)?,
            Some((name, proto)) => {
                if !names.contains(&name) {
                    return Err(format!(
                        "--protocol {value}: `{name}` is not a target; targets are: {}",
                        names.join(", ")
                    ));
                }
                per_target.push((name.to_string(), parse_protocol(proto)?));
            }
        }
    }
    Ok((default, per_target))
}

/// Flags of the SDK driver, refused here so none is silently ignored.
fn refuse_sdk_flags(args: &BenchArgs) -> Result<(), String> {
    let given = [
        (
            "--clients",
            args.clients.is_some(),
            "; the raw driver uses --connections",
        ),
        ("--messages", args.messages.is_some(), ""),
        (
            "--reference",
            args.reference.is_some(),
            "; raw rows are compared with their no-op ceiling",
        ),
        ("--region", args.region.is_some(), ""),
    ];
    match given.iter().find(|(_, on, _)| *on) {
        Some((flag, _, hint)) => Err(format!("{flag} is for --driver sdk{hint}")),
        None => Ok(()),
    }
}

/// The raw and the scale workloads `--workload` names, each in the order given; without
/// `--workload`, every raw one.
fn workloads(args: &BenchArgs) -> (Vec<RawWorkload>, Vec<ScaleWorkload>) {
    let mut raw: Vec<RawWorkload> = Vec::new();
    let mut scale: Vec<ScaleWorkload> = Vec::new();
    for w in &args.workload {
        match w {
            BenchWorkloadArg::Send => raw.push(RawWorkload::Send),
            BenchWorkloadArg::Receive => raw.push(RawWorkload::Receive),
            BenchWorkloadArg::Cycle => raw.push(RawWorkload::Cycle),
            BenchWorkloadArg::Batch => raw.push(RawWorkload::Batch),
            BenchWorkloadArg::Delete => raw.push(RawWorkload::Delete),
            BenchWorkloadArg::SendBatch => raw.push(RawWorkload::SendBatch),
            BenchWorkloadArg::DeleteBatch => raw.push(RawWorkload::DeleteBatch),
            BenchWorkloadArg::Memory => scale.push(ScaleWorkload::Memory),
            BenchWorkloadArg::Depth => scale.push(ScaleWorkload::Depth),
            BenchWorkloadArg::Queues => scale.push(ScaleWorkload::Queues),
            BenchWorkloadArg::Startup => scale.push(ScaleWorkload::Startup),
        }
    }
    let mut seen = Vec::new();
    raw.retain(|w| {
        !seen.contains(w) && {
            seen.push(*w);
            true
        }
    });
    let mut seen = Vec::new();
    scale.retain(|w| {
        !seen.contains(w) && {
            seen.push(*w);
            true
        }
    });
    if args.workload.is_empty() {
        raw = RawWorkload::CHOOSABLE.to_vec();
    }
    (raw, scale)
}

/// A run of only scale workloads measures no target: the target flags and those of the raw
/// rows are refused rather than ignored.
fn refuse_raw_only_flags(args: &BenchArgs) -> Result<(), String> {
    let given = [
        ("--endpoint", !args.endpoints.is_empty()),
        ("--target", !args.target.is_empty()),
        ("--connections", args.connections.is_some()),
        ("--no-reference", args.no_reference),
        ("--protocol", !args.protocol.is_empty()),
        ("--duration", args.duration.is_some()),
        ("--pin", args.pin),
        ("--repeat", args.repeat != 1),
    ];
    match given.iter().find(|(_, on)| *on) {
        Some((flag, _)) => Err(format!(
            "{flag} is for the raw workloads (send, receive, cycle, batch), and this run has \
             only scale workloads, which measure a `sqsprobe serve` they start themselves"
        )),
        None => Ok(()),
    }
}

/// What the command will do: raw targets and their options, and the scale workloads.
struct Plan {
    targets: Vec<Planned>,
    options: RawOptions,
    scale: Option<ScalePlan>,
}

fn plan(args: &BenchArgs) -> Result<Plan, String> {
    refuse_sdk_flags(args)?;
    let (workloads, scale_workloads) = workloads(args);
    let scale = scale::plan(args, &scale_workloads)?;
    if workloads.is_empty() {
        refuse_raw_only_flags(args)?;
    }
    let mut names: Vec<&str> = Vec::new();
    if workloads.is_empty() {
        // Only scale workloads: no raw target.
    } else if args.target.contains(&BenchTargetArg::Embedded) || args.endpoints.is_empty() {
        names.push("embedded");
    }
    for (name, url) in &args.endpoints {
        if names.contains(&name.as_str()) {
            return Err(format!("target name `{name}` is given twice"));
        }
        // Refuses AWS hosts (and https) before anything is sent anywhere.
        parse_endpoint(url).map_err(|e| format!("--endpoint {name}: {e}"))?;
        names.push(name);
    }
    let (default, per_target) = protocols(args, &names)?;
    let protocol_of = |name: &str| {
        per_target
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map_or(default, |(_, p)| *p)
    };
    let mut targets = Vec::new();
    if !names.is_empty() && !args.no_reference {
        if let Some(taken) = names.iter().find(|n| is_reference(n)) {
            return Err(format!(
                "target name `{taken}` is the reference server's; name the endpoint otherwise \
                 (or leave the reference out with --no-reference)"
            ));
        }
        targets.push(Planned {
            name: REFERENCE.into(),
            place: Place::Reference,
            protocol: Protocol::Json,
        });
    }
    if names.first() == Some(&"embedded") {
        targets.push(Planned {
            name: "embedded".into(),
            place: Place::Embedded,
            protocol: protocol_of("embedded"),
        });
    }
    for (name, url) in &args.endpoints {
        targets.push(Planned {
            name: name.clone(),
            place: Place::Endpoint(url.clone()),
            protocol: protocol_of(name),
        });
    }
    // The reference again after every target: each fraction is taken against the mean of its
    // rate at both ends of the run, because on a shared machine the reference alone moved by a
    // quarter between runs a few minutes apart (docs/performance.md, "The reference server").
    if targets.first().is_some_and(|t| t.name == REFERENCE) {
        targets.push(Planned {
            name: REFERENCE_END.into(),
            place: Place::Reference,
            protocol: Protocol::Json,
        });
    }
    let duration = args.duration.unwrap_or(bench_defaults::RAW_DURATION);
    check_phases(duration, args.warmup)?;
    let connections = args
        .connections
        .clone()
        .unwrap_or_else(|| bench_defaults::RAW_CONNECTIONS.to_vec());
    if connections.iter().any(|&c| c == 0 || c > MAX_CLIENTS) {
        return Err(format!("--connections must be between 1 and {MAX_CLIENTS}"));
    }
    if args.prefill > 1_000_000 {
        return Err("--prefill must be at most 1000000".into());
    }
    if args.shared_queues == 0 || args.shared_queues > MAX_CLIENTS {
        return Err(format!(
            "--shared-queues must be between 1 and {MAX_CLIENTS}"
        ));
    }
    if args.repeat == 0 || args.repeat > 100 {
        return Err("--repeat must be between 1 and 100".into());
    }
    if let Some(r) = args.fail_below
        && !(r > 0.0 && r.is_finite())
    {
        return Err("--fail-below must be a ratio above 0, e.g. 0.8".into());
    }
    Ok(Plan {
        targets,
        options: RawOptions {
            duration,
            warmup: args.warmup,
            connections: if workloads.is_empty() {
                Vec::new()
            } else {
                connections
            },
            workloads,
            prefill: args.prefill,
            shared_queues: args.shared_queues,
            stop: crate::bench::Stop::default(),
        },
        scale,
    })
}

/// Reads a saved raw run strictly; a target name where a file was expected gets a hint,
/// since `--baseline NAME` was the SDK driver's flag before it was `--reference`.
fn read_baseline(path: &Path, targets: &[Planned]) -> Result<RawReport, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        let shown = path.display().to_string();
        if targets.iter().any(|t| t.name == shown) {
            format!(
                "--baseline takes a saved `bench --json` file, and `{shown}` is a target name: \
                 for ratios against a target use --driver sdk --reference {shown}"
            )
        } else {
            format!("failed to read the baseline {shown}: {e}")
        }
    })?;
    let report: RawReport = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not a raw bench JSON (version {RAW_REPORT_VERSION} or {RAW_REPORT_PREVIOUS_VERSION}, `--driver raw --json`): {e}",
            path.display()
        )
    })?;
    let known = [RAW_REPORT_VERSION, RAW_REPORT_PREVIOUS_VERSION];
    if !known.contains(&report.version) || report.driver != "raw" {
        return Err(format!(
            "{} is a version {} `{}` bench JSON; --baseline reads version {RAW_REPORT_VERSION} and {RAW_REPORT_PREVIOUS_VERSION} raw runs",
            path.display(),
            report.version,
            report.driver
        ));
    }
    Ok(report)
}

/// `--serve-reference ADDR`: the reference server alone, until a signal.
async fn serve_reference(
    addr: std::net::SocketAddr,
    answer_bytes: Option<usize>,
) -> Result<Outcome, CommandError> {
    let body = reference::answer_of(answer_bytes).map_err(CommandError::BenchPlan)?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| CommandError::ServerStart(format!("cannot listen on {addr}: {e}")))?;
    let bound = listener.local_addr().map_or(addr, |a| a);
    eprintln!("sqsprobe: the bench's reference server on http://{bound} (Ctrl-C to stop)");
    let mut signals = crate::cli::signals::Signals::new();
    tokio::select! {
        _ = ReferenceServer::serve_forever(listener, body) => Ok(Outcome::Done),
        _ = signals.next() => Ok(Outcome::Done),
    }
}

/// `--pin`: the split of the CPUs, with this process's threads (the client's, and every
/// thread they start) pinned to the client's half; refused where it cannot be done.
fn pin_client(args: &BenchArgs) -> Result<Option<Pinning>, CommandError> {
    if !args.pin {
        return Ok(None);
    }
    let pinning = allowed()
        .and_then(|cpus| split(&cpus))
        .map_err(CommandError::BenchPlan)?;
    pin_process(None, &pinning.client)
        .map_err(|e| CommandError::BenchPlan(format!("--pin: {e}")))?;
    Ok(Some(pinning))
}

/// Where a target's server runs, for its CPU (and, with `--pin`, pinned to the server's
/// half): in this process, or the process listening on a loopback endpoint's port.
fn server_place(
    planned: &Planned,
    port: u16,
    host: &str,
    pinning: Option<&Pinning>,
) -> Result<ServerPlace, CommandError> {
    if !matches!(planned.place, Place::Endpoint(_)) {
        return Ok(ServerPlace::InProcess);
    }
    let loopback = matches!(host, "127.0.0.1" | "localhost" | "::1" | "[::1]");
    let pid = if loopback { listener_pid(port) } else { None };
    match (pid, pinning) {
        (Some(pid), Some(p)) => {
            pin_process(Some(pid), &p.server).map_err(|e| {
                CommandError::BenchPlan(format!("--pin: target {}: {e}", planned.name))
            })?;
            Ok(ServerPlace::Process(pid))
        }
        (Some(pid), None) => Ok(ServerPlace::Process(pid)),
        (None, Some(_)) => Err(CommandError::BenchPlan(format!(
            "--pin: the server of target {} is not a process of this user listening on this \
             machine's port {port}, so it cannot be pinned; pin it yourself (taskset) and run \
             without --pin",
            planned.name
        ))),
        (None, None) => Ok(ServerPlace::Unknown),
    }
}

/// Runs the command.
pub(super) async fn run(args: BenchArgs) -> Result<Outcome, CommandError> {
    if let Some(addr) = args.serve_reference {
        return serve_reference(addr, args.reference_answer_bytes).await;
    }
    let Plan {
        targets,
        options,
        scale: scale_plan,
    } = plan(&args).map_err(CommandError::BenchPlan)?;
    let baseline = match args.baseline.as_deref() {
        None => None,
        Some(p) => Some(read_baseline(p, &targets).map_err(CommandError::BenchPlan)?),
    };
    let started_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let load_start = load_average();
    if let Some([one, five, fifteen]) = load_start {
        eprintln!("sqsprobe: {cpus} CPUs, load average {one:.2} {five:.2} {fifteen:.2}");
    }
    let pinning = if targets.is_empty() {
        None
    } else {
        pin_client(&args)?
    };
    if let Some(p) = &pinning {
        eprintln!("sqsprobe: {}", p.describe());
        // Every endpoint's server found and pinned before anything is measured.
        for planned in &targets {
            if let Place::Endpoint(url) = &planned.place
                && let Ok(e) = parse_endpoint(url)
            {
                server_place(planned, e.port, &e.host, Some(p))?;
            }
        }
    }
    let mut rows = Vec::new();
    let mut infos: Vec<crate::bench::raw::RawTargetInfo> = Vec::new();
    let mut failed = false;
    let watcher = tokio::spawn(watch_signals(options.stop.clone()));
    for repeat in 0..args.repeat {
        if options.stop.requested() {
            break;
        }
        if args.repeat > 1 {
            eprintln!("sqsprobe: run {} of {}", repeat + 1, args.repeat);
        }
        let mut run_rows = Vec::new();
        for planned in &targets {
            if options.stop.requested() {
                break;
            }
            let server_pin = pinning.as_ref().map(|p| p.server.as_slice());
            // The servers this run starts are started per target, the emulator from an empty store.
            let mut servers: (Option<EmbeddedServer>, Option<ReferenceServer>) = (None, None);
            let started = match &planned.place {
                Place::Endpoint(url) => Ok(url.clone()),
                Place::Embedded => EmbeddedServer::start(server_pin)
                    .map(|s| servers.0.insert(s).endpoint_url())
                    .map_err(|e| format!("failed to start the embedded emulator: {e}")),
                Place::Reference => ReferenceServer::start(server_pin)
                    .map(|s| servers.1.insert(s).endpoint_url())
                    .map_err(|e| format!("failed to start the reference server: {e}")),
            };
            let url = started.map_err(CommandError::ServerStart)?;
            let endpoint = parse_endpoint(&url).map_err(|e| CommandError::BenchEndpoint {
                target: planned.name.clone(),
                reason: e.to_string(),
            })?;
            let place = server_place(planned, endpoint.port, &endpoint.host, pinning.as_ref())?;
            let target = RawTarget {
                name: planned.name.clone(),
                url,
                endpoint,
                protocol: planned.protocol,
                cpu: CpuProbe {
                    server: place,
                    cpus,
                    client_cores: pinning.as_ref().map_or(cpus, |p| p.client.len()),
                    client_cpus: pinning.as_ref().map_or(Vec::new(), |p| p.client.clone()),
                    pinned: pinning.is_some(),
                },
            };
            eprintln!(
                "sqsprobe: bench {} ({}, {}): {} warm-up + {} measured per row",
                target.name,
                target.url,
                target.protocol.as_str(),
                sqsprobe_facts::duration::format(options.warmup),
                sqsprobe_facts::duration::format(options.duration)
            );
            let mut progress = |line: &str| eprintln!("sqsprobe:   {}", terminal(line));
            let outcome = match planned.place {
                // The reference answers everything with one 200: only its no-op is a figure.
                Place::Reference => {
                    let noop_only = RawOptions {
                        workloads: Vec::new(),
                        ..options.clone()
                    };
                    run_target(&target, &noop_only, &mut progress).await
                }
                _ => run_target(&target, &options, &mut progress).await,
            };
            drop(servers);
            for row in &outcome.rows {
                if let Some(e) = &row.first_error {
                    eprintln!(
                        "sqsprobe:   {} {} × {}: {} error(s), first: {}",
                        row.target,
                        row.workload.as_str(),
                        row.connections,
                        row.errors,
                        terminal(e)
                    );
                }
            }
            if let Some(e) = &outcome.info.error {
                eprintln!("sqsprobe:   {} failed: {}", target.name, terminal(e));
                failed = true;
            }
            if !outcome.info.leaked_queues.is_empty() {
                eprintln!(
                    "sqsprobe:   could not delete: {}",
                    terminal(&outcome.info.leaked_queues.join(", "))
                );
            }
            run_rows.extend(outcome.rows);
            // One entry per target: a later run adds what it could not delete, and why it
            // stopped, to the first run's.
            match infos.iter_mut().find(|i| i.name == outcome.info.name) {
                Some(info) => {
                    info.leaked_queues.extend(outcome.info.leaked_queues);
                    info.error = info.error.take().or(outcome.info.error);
                }
                None => infos.push(outcome.info),
            }
        }
        // Each run's fractions are of its own reference.
        apply_ceilings(&mut run_rows);
        for row in &mut run_rows {
            row.repeat = repeat as u32;
        }
        rows.extend(run_rows);
    }
    let scale_report = match &scale_plan {
        Some(p) if !options.stop.requested() => Some(scale::run(p, &options.stop).await),
        _ => None,
    };
    watcher.abort();
    if !targets.is_empty() {
        print!("{}", raw_markdown_table(&rows));
        print!("{}", cpu_notes(&rows, pinning.as_ref()));
        print!("{}", spread_markdown(&spreads(&rows), args.repeat));
    }
    if let Some(s) = &scale_report {
        print!("{}", scale_markdown(s));
        // What was not measured is an error of the run, unless a signal cut it.
        failed |= !s.errors.is_empty() && !options.stop.requested();
    }
    let load_end = load_average();
    if let Some([one, five, fifteen]) = load_end {
        eprintln!("sqsprobe: load average at the end {one:.2} {five:.2} {fifteen:.2}");
    }
    let report = RawReport {
        version: RAW_REPORT_VERSION,
        driver: "raw".into(),
        sqsprobe_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at,
        duration_s: options.duration.as_secs_f64(),
        warmup_s: options.warmup.as_secs_f64(),
        prefill: options.prefill,
        shared_queues: options.shared_queues,
        connections: options.connections.clone(),
        workloads: options.workloads.clone(),
        machine: Machine {
            cpus,
            load_average_start: load_start,
            load_average_end: load_end,
        },
        build: Some(build_profile().to_string()),
        targets: infos,
        rows,
        scale: scale_report,
        repeats: args.repeat,
        pinning,
    };
    if let Some(path) = &args.json {
        let written = serde_json::to_string_pretty(&report)
            .map_err(|e| format!("failed to encode the JSON report: {e}"))
            .and_then(|text| {
                std::fs::write(path, text + "\n")
                    .map_err(|e| format!("failed to write {}: {e}", path.display()))
            });
        written.map_err(CommandError::Report)?;
    }
    let regressed = baseline
        .as_ref()
        .is_some_and(|base| compare_with(base, &report, args.fail_below));
    Ok(if options.stop.requested() {
        Outcome::Interrupted
    } else if failed {
        Outcome::Broken
    } else if regressed {
        Outcome::Failed
    } else {
        Outcome::Done
    })
}

/// Prints the comparison of `report` with `base` (raw rows, then scale figures); true when a
/// figure fell below `fail_below`.
fn compare_with(base: &RawReport, report: &RawReport, fail_below: Option<f64>) -> bool {
    let mut regressed = false;
    println!();
    if !report.rows.is_empty() || !base.rows.is_empty() {
        let comparison = compare(base, report);
        print!("{}", comparison_markdown(&comparison, &base.started_at));
        if let Some(limit) = fail_below {
            for r in comparison.below(limit) {
                eprintln!(
                    "sqsprobe: {} {} × {}: {} {:.2}× the baseline's, below {limit}",
                    terminal(&r.target),
                    r.workload.as_str(),
                    r.connections,
                    r.change_subject(),
                    r.ceiling_change.unwrap_or(0.0)
                );
                regressed = true;
            }
        }
    } else {
        println!("Against the baseline of {}:", terminal(&base.started_at));
    }
    match (&base.scale, &report.scale) {
        (Some(then), Some(now)) => {
            let comparison = compare_scale(then, now);
            print!("{}", scale_comparison_markdown(&comparison));
            if let Some(limit) = fail_below {
                for f in comparison.below(limit) {
                    eprintln!(
                        "sqsprobe: {}: {} {} now, {} in the baseline: change (then ÷ now) {:.2}×, below {limit}",
                        terminal(&f.figure),
                        scale_value(f.unit, f.current),
                        f.unit.as_str(),
                        scale_value(f.unit, f.baseline),
                        f.change.unwrap_or(0.0)
                    );
                    regressed = true;
                }
            }
        }
        (None, Some(_)) => println!("\nThe baseline has no scale figures to compare."),
        (Some(_), None) => println!("\nThis run has no scale figures; the baseline has."),
        (None, None) => {}
    }
    if base.build.is_some() && base.build != report.build {
        eprintln!(
            "sqsprobe: the baseline was measured by a {} build, this run by a {} build: \
             latencies and start-up differ by the build as well",
            base.build.as_deref().unwrap_or("?"),
            report.build.as_deref().unwrap_or("?")
        );
    }
    if base.machine.cpus != report.machine.cpus {
        eprintln!(
            "sqsprobe: the baseline's machine had {} CPUs, this one {}: start-up milliseconds \
             are absolute and differ by the machine as well",
            base.machine.cpus, report.machine.cpus
        );
    }
    regressed
}
