//! `sqsprobe run`: load, pick a target, run, write the run folder, print the summary.

use super::args::{RunArgs, TargetArg};
use super::error::{CommandError, Outcome};
use super::load::{self, Loaded};
use crate::report;
use crate::runner::target::{Target, TargetRequest};
use crate::runner::{self, PlannedCase, Registry, RunSettings};
use chrono::{DateTime, Utc};
use sqsprobe_core::evidence::{EvidenceWriter, Record, RunView};
use sqsprobe_core::suite::Limits;
use sqsprobe_facts::exit_code;
use std::io::Write;
use std::path::Path;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// Runs the command: the run's own code ([`Outcome::Verdict`]) once it has run.
pub(super) async fn run(args: RunArgs) -> Result<Outcome, CommandError> {
    // From the first moment: a signal during start-up is queued and stops the run cleanly
    // once it starts, instead of killing it before anything is accounted for.
    let signals = super::signals::Signals::new();
    let real_start = std::time::Instant::now();
    let clock = runner::RunClock::new(args.clock.kind());
    let limits = Limits {
        max_case_duration: args.suites.max_case_duration,
        max_slow_case_duration: args.suites.max_slow_case_duration,
        ..Limits::default()
    };
    let suites = match load::load(&args.suites.paths, &limits) {
        Loaded::Ok(s) => s,
        Loaded::Invalid { rendered, count } => {
            return Err(CommandError::InvalidSuites {
                rendered,
                count,
                in_a_run: true,
            });
        }
        Loaded::Unreadable(e) => return Err(CommandError::SuitesUnreadable(e)),
    };
    if load::uses_built_in(&args.suites.paths) {
        eprintln!(
            "sqsprobe: no suites/ in this folder: running the {} suite file(s) built into the \
             binary (`sqsprobe suites export` writes them out to edit)",
            suites.len()
        );
    }
    let include = load::Include {
        slow: args.include_slow,
        team_policy: args.include_team_policy,
    };
    let selected = load::select(&suites, &args.cases, include);
    if !args.include_team_policy {
        let policies: Vec<&str> = load::select(
            &suites,
            &args.cases,
            load::Include {
                team_policy: true,
                ..include
            },
        )
        .into_iter()
        .filter(|(_, c)| {
            c.tags
                .iter()
                .any(|t| t == sqsprobe_core::suite::TEAM_POLICY_TAG)
        })
        .map(|(_, c)| c.id.as_str())
        .collect();
        if !policies.is_empty() {
            say(format_args!(
                "{} team-policy case(s) left out ({}): bounds the team sets, not ones AWS \
                 publishes; --include-team-policy runs them",
                policies.len(),
                policies.join(", ")
            ));
        }
    }
    if selected.is_empty() {
        return Err(CommandError::NoCaseMatches {
            cases: args.cases.clone(),
            slow: args.include_slow,
            team_policy: args.include_team_policy,
        });
    }
    let profile = match &args.target_profile {
        Some(arg) => Some(super::profile::load(arg, &suites)?),
        None => None,
    };
    let mut plan: Vec<PlannedCase> = selected
        .iter()
        .map(|(s, c)| PlannedCase {
            suite: s.path.clone(),
            case: (*c).clone(),
        })
        .collect();
    if let Some((k, n)) = args.partition {
        // An empty share still writes its run folder (see `execute`), so a merge of the
        // partitions sees it was run rather than missing.
        plan = runner::schedule::partition(plan, k, n);
    }
    if args.dry_run {
        // Named the way a run names it, without reading a profile: a dry run touches nothing.
        let region = args
            .reach
            .region
            .first()
            .cloned()
            .or_else(|| std::env::var("AWS_REGION").ok())
            .or_else(|| std::env::var("AWS_DEFAULT_REGION").ok())
            .unwrap_or_else(|| "us-east-1".to_string());
        let target = match args.target.map(TargetArg::kind) {
            Some(runner::TargetKind::Aws) => format!("aws ({region})"),
            Some(runner::TargetKind::Endpoint) | None if args.reach.endpoint_url.is_some() => {
                "an endpoint".to_string()
            }
            _ => "the embedded emulator".to_string(),
        };
        let cases: Vec<&sqsprobe_core::suite::Case> = plan.iter().map(|p| &p.case).collect();
        print!("{}", report::dry_run::render(&target, &region, &cases));
        return Ok(Outcome::Done);
    }
    let suite_paths: Vec<String> = suites.iter().map(|s| s.path.clone()).collect();

    let protocol = args.protocol;
    if args.reach.region.len() > 1 {
        return Err(CommandError::OneRegion);
    }
    let seeds = runner::run::Seeds::resolve(args.seed, args.chaos, rand::random);
    let run_id = args.run_id.clone().unwrap_or_else(runner::new_run_id);
    let request = TargetRequest {
        protocol,
        chaos: seeds.chaos,
        // Queue names start with the run's prefix: the emulator's dice leave it out, so they
        // follow the recorded seeds, not the random run id.
        chaos_name_prefix: Some(runner::queues::run_prefix(&run_id)),
        clock,
        ..args.reach.request(args.target.map(TargetArg::kind))
    };
    // For --target aws the first line names the region and the masked account (and any
    // redirection) before anything else happens; the account guard has spoken once this returns.
    let target = runner::target::resolve(request, |line| say(line)).await?;
    let profile = profile.map(|p| std::sync::Arc::new(p.for_protocol(protocol.as_str())));
    let Target {
        info,
        client,
        emulator: embedded,
    } = target;
    if !args.regions.is_empty() && !args.regions.contains(&info.region) {
        return Err(CommandError::RegionNotListed {
            region: info.region,
            regions: args.regions,
        });
    }

    let ended = execute(
        signals,
        client,
        plan,
        RunSettings {
            run_id,
            jobs: args.jobs.unwrap_or(match info.kind {
                runner::TargetKind::Embedded => 64,
                runner::TargetKind::Endpoint | runner::TargetKind::Aws => 8,
            }),
            target: info.kind,
            endpoint: info.endpoint,
            region: info.region,
            target_profile: profile.as_ref().map(|p| p.target.clone()),
            target_profile_source: args.target_profile.clone(),
            protocol: protocol.as_str().to_string(),
            suites: suite_paths,
            profile,
            emulator_chaos: seeds.chaos.map(|c| c.to_string()),
            instance: runner::new_instance(),
            call_timeout: args.call_timeout,
            lost_after: args.lost_after,
            max_duration: args.max_duration,
            usage: std::sync::Arc::new(runner::policy::Usage::new(args.max_requests)),
            partition: args.partition.map(|(k, n)| format!("{k}/{n}")),
            seed: seeds.run,
            trials: args.trials,
            clock,
            allowed_regions: (!args.regions.is_empty()).then(|| args.regions.clone()),
        },
        &args.out,
        progress_mode(args.quiet, args.no_progress),
    )
    .await;
    if clock.kind() == runner::ClockKind::Virtual {
        say(format_args!(
            "clock: virtual — timestamps and durations in this run are simulated; it took {:.1} s of real time",
            real_start.elapsed().as_secs_f64()
        ));
    }
    if let Some(emu) = embedded {
        emu.shutdown().await;
    }
    ended
}

/// What the run prints as it goes: nothing with `--quiet`; plain lines with `--no-progress`,
/// when stderr is not a terminal (CI logs, pipes) or on a dumb terminal; else the live board.
fn progress_mode(quiet: bool, no_progress: bool) -> report::live::Progress {
    use std::io::IsTerminal;
    let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
    if quiet {
        report::live::Progress::Off
    } else if no_progress || dumb || !std::io::stderr().is_terminal() {
        report::live::Progress::Lines
    } else {
        report::live::Progress::Live
    }
}

/// Runs the plan with the run folder, progress output and Ctrl-C handling around it.
async fn execute(
    signals: super::signals::Signals,
    client: aws_sdk_sqs::Client,
    plan: Vec<PlannedCase>,
    settings: RunSettings,
    out: &Path,
    progress: report::live::Progress,
) -> Result<Outcome, CommandError> {
    // A run that would run nothing does not pass (nextest refuses an empty run the same way).
    let skipped: Vec<runner::run::Skip> = plan
        .iter()
        .filter_map(|p| runner::run::not_runnable(p, &settings).map(|(skip, _)| skip))
        .collect();
    if !plan.is_empty() && skipped.len() == plan.len() {
        let count = |kind| skipped.iter().filter(|s| **s == kind).count();
        let by_protocol = count(runner::run::Skip::Protocol);
        let by_region = count(runner::run::Skip::Region);
        let by_profile = count(runner::run::Skip::Unsupported);
        let mut why = Vec::new();
        if by_profile > 0 {
            why.push(format!(
                "{by_profile} unsupported by the target profile `{}`",
                settings.target_profile.as_deref().unwrap_or_default()
            ));
        }
        if by_protocol > 0 {
            why.push(format!(
                "{by_protocol} for another protocol than `{}`",
                settings.protocol
            ));
        }
        if by_region > 0 {
            why.push(format!("{by_region} in regions outside --regions"));
        }
        return Err(CommandError::NothingRunnable {
            count: plan.len(),
            why,
        });
    }
    let run_dir = out.join(&settings.run_id);
    if run_dir.join("evidence.jsonl").exists() {
        return Err(CommandError::RunIdReused { dir: run_dir });
    }
    std::fs::create_dir_all(&run_dir).map_err(|source| CommandError::CreateFolder {
        path: run_dir.clone(),
        source,
    })?;
    let writer = EvidenceWriter::create(&run_dir.join("evidence.jsonl"))
        .map_err(CommandError::CreateEvidence)?;

    if plan.is_empty() {
        return empty_share(&settings, writer, &run_dir);
    }

    // Before anything is created: is the target there at all?
    let (started_at, started) = (settings.clock.now(), Instant::now());
    let (probe_tx, mut probe_rx) = mpsc::unbounded_channel();
    let reached = runner::preflight(
        &client,
        settings.clock,
        &settings.run_id,
        &settings.usage,
        &probe_tx,
    )
    .await;
    let mut check_rows = Vec::new();
    while let Ok(r) = probe_rx.try_recv() {
        check_rows.push(r);
    }

    let (records, mut code, write_error, leftover) = match reached {
        Err(e) => {
            say(&e);
            if let Some(url) = &settings.endpoint {
                let _ = writeln!(std::io::stderr(), "  endpoint: {url}");
            }
            let records = unreached_run(&settings, &plan, started_at, started, check_rows);
            let write_error = write_all(writer, &records).err();
            (records, exit_code::RUNTIME_ERROR, write_error, Vec::new())
        }
        Ok(masker) => {
            let (events_tx, events_rx) = mpsc::unbounded_channel();
            let (cancel_tx, cancel_rx) = watch::channel(false);
            let registry = Registry::default();
            let plans = plan
                .iter()
                .map(|p| {
                    let mut board = report::progress::CasePlan::of(&p.case);
                    board.trials = runner::run::trials_of(&p.case, settings.trials);
                    board
                })
                .collect();
            let consumer = tokio::spawn(report::live::consume(
                events_rx, writer, check_rows, progress, plans,
            ));
            let interrupt = tokio::spawn(watch_interrupts(signals, cancel_tx, registry.clone()));
            let outcome = runner::run_plan(
                client, masker, plan, &settings, registry, events_tx, cancel_rx,
            )
            .await;
            interrupt.abort();
            let (records, write_error) = consumer.await.unwrap_or_default();
            if let Some(why) = &outcome.halted {
                say(format_args!(
                    "the run stopped itself: {}; the cases it had not started were not run",
                    why.describe()
                ));
            }
            (records, outcome.exit_code, write_error, outcome.leftover)
        }
    };

    if let Some(e) = write_error {
        say(format_args!("failed to write evidence: {e}"));
        code = with_runtime_error(code);
    }
    if let Err(e) = report::write_run_folder(&run_dir, &records) {
        say(&e);
        code = with_runtime_error(code);
    }
    let dir = run_dir.display().to_string();
    let mut summary = report::terminal::render(&records, &dir, report::terminal::width(), false);
    if let Some(profile) = &settings.profile {
        let run = RunView::new(&records);
        summary.push_str(
            &sqsprobe_core::conformance::profile::changes(run.case_ends()).render(&profile.target),
        );
    }
    let (standard, fifo) = settings.usage.counts();
    summary.push_str(&sqsprobe_facts::sqs::pricing::cost_line(
        standard,
        fifo,
        &settings.region,
    ));
    summary.push('\n');
    // A closed stdout (`sqsprobe run | head`) loses the summary, not the run's exit code.
    let mut stdout = std::io::stdout();
    let _ = stdout.write_all(summary.as_bytes());
    let _ = stdout.flush();
    // The summary above names what was left and the sweep that removes it; stderr repeats
    // the count, so a log read for errors only still sees it.
    if !leftover.is_empty() {
        say(format_args!(
            "{} owned queue(s) may still be on the target: see the summary above and run_end.left_queues",
            leftover.len()
        ));
    }
    Ok(Outcome::Verdict(code))
}

/// The records of a run that stopped at its reachability check: `run_start` (the runner
/// writes it when the plan starts, which this run never does), the check's call rows, and a
/// `run_end` with exit 3, so the run folder says what happened like any other.
fn unreached_run(
    settings: &RunSettings,
    plan: &[PlannedCase],
    started_at: DateTime<Utc>,
    started: Instant,
    check_rows: Vec<Record>,
) -> Vec<Record> {
    let mut records = vec![Record::RunStart(runner::run::run_start(
        settings, plan, started_at,
    ))];
    records.extend(check_rows);
    records.push(Record::RunEnd(runner::run::run_end(
        settings,
        started,
        runner::run::RunClose {
            exit_code: exit_code::RUNTIME_ERROR,
            ..runner::run::RunClose::default()
        },
    )));
    records
}

/// Writes `records` in order, stopping at the first failure.
/// A partition whose share holds no case: its run folder records the empty share (`run_start`
/// with no case, `run_end` exit 0) so that `sqsprobe report` merging the partitions sees this
/// one ran, and one line says so.
fn empty_share(
    settings: &RunSettings,
    writer: EvidenceWriter,
    run_dir: &Path,
) -> Result<Outcome, CommandError> {
    let now = settings.clock.now();
    let records = vec![
        Record::RunStart(runner::run::run_start(settings, &[], now)),
        Record::RunEnd(runner::run::run_end(
            settings,
            Instant::now(),
            runner::run::RunClose {
                exit_code: exit_code::OK,
                ..runner::run::RunClose::default()
            },
        )),
    ];
    let written = write_all(writer, &records)
        .and_then(|()| report::write_run_folder(run_dir, &records).map_err(|e| e.to_string()));
    written.map_err(|e| CommandError::write(run_dir, e))?;
    say(format_args!(
        "partition {} holds no case (the selection has fewer cases than partitions); recorded as \
         an empty share in {}",
        settings.partition.as_deref().unwrap_or("?"),
        run_dir.display()
    ));
    Ok(Outcome::Done)
}

fn write_all(mut writer: EvidenceWriter, records: &[Record]) -> Result<(), String> {
    for record in records {
        writer.write(record).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The exit code once the harness itself failed (evidence or reports not written): a failed
/// expectation still wins, an interruption still says so, anything milder becomes 3.
fn with_runtime_error(code: i32) -> i32 {
    match code {
        exit_code::OK | exit_code::INCONCLUSIVE => exit_code::RUNTIME_ERROR,
        other => other,
    }
}

/// One line on stderr, prefixed `sqsprobe: `; a closed stderr is not worth a panic.
fn say(line: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr(), "sqsprobe: {line}");
}

/// The first signal (Ctrl-C, SIGTERM, SIGHUP): stop starting steps, let every case tear its
/// queues down, write the reports. A second: leave now, naming the queues left behind.
async fn watch_interrupts(
    mut signals: super::signals::Signals,
    cancel: watch::Sender<bool>,
    registry: Registry,
) {
    let first = signals.next().await;
    say(format_args!(
        "{first}: interrupted; tearing down owned queues (signal again to abandon them)"
    ));
    let _ = cancel.send(true);
    let second = signals.next().await;
    let left = registry.remaining();
    say(format_args!(
        "{second}: abandoned {} owned queue(s):",
        left.len()
    ));
    for q in left {
        say(format_args!("  {} (in {})", q.name, q.region));
    }
    std::process::exit(Outcome::Interrupted.exit_code());
}
