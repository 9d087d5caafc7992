//! `sqsprobe sweep`: delete the queues that runs left behind, and only those
//! (the rule is `runner::sweep`'s; this parses, resolves the target and prints).
//!
//! Output: on stderr, `--target aws`'s first line (region, masked account, endpoint) and
//! what is being swept; on stdout, one line per queue decided and a total. Exit codes: 0 the
//! sweep finished with nothing failed (nothing to delete included), 1 bad command line or a
//! refused account, 3 listing failed or a queue could not be read or deleted, 130 stopped by
//! a signal (after the queue in flight).

use super::args::{SweepArgs, SweepTargetArg};
use super::error::{CommandError, Outcome};
use super::signals::Signals;
use crate::runner::TargetKind;
use crate::runner::sweep::{SweepFilter, SweepTotals, human, sweep};
use crate::runner::target;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Runs the command: [`Outcome::Broken`] when a listing or a queue failed,
/// [`Outcome::Interrupted`] when a signal stopped it.
pub(super) async fn run(args: SweepArgs) -> Result<Outcome, CommandError> {
    // From the first moment, so a signal during start-up stops the sweep instead of killing it.
    let signals = Signals::new();
    let kind = match (args.target, &args.reach.endpoint_url) {
        (Some(SweepTargetArg::Aws), _) => TargetKind::Aws,
        (Some(SweepTargetArg::Endpoint), _) | (None, Some(_)) => TargetKind::Endpoint,
        (None, None) => return Err(CommandError::SweepNeedsTarget),
    };
    let regions = regions_to_sweep(&args).map_err(CommandError::SweepRegions)?;
    let filter = SweepFilter::new(args.older_than, args.run_id.clone());
    let which = match (&filter.run_id, filter.older_than) {
        (Some(run), None) => format!("the queues of run {run}"),
        (Some(run), Some(age)) => format!("the queues of run {run} if older than {}", human(age)),
        (None, Some(age)) => format!("runs older than {}", human(age)),
        (None, None) => "every run".to_string(),
    };

    let stop = Arc::new(AtomicBool::new(false));
    let watcher = tokio::spawn(watch_signals(signals, stop.clone()));
    let mut stdout = std::io::stdout();
    let mut totals = SweepTotals::default();
    let mut failed_regions = Vec::new();
    // One region after another (each is its own namespace of queues, and its own client);
    // `None`: the region the environment or profile names.
    let several = regions.len() > 1;
    for region in regions {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let mut request = args.reach.request(Some(kind));
        if region.is_some() {
            request.region = region.clone();
        }
        let target = match target::resolve(request, |line| say(line)).await {
            Ok(t) => t,
            Err(e) => {
                watcher.abort();
                return Err(e.into());
            }
        };
        say(format_args!(
            "sweeping {}* queues tagged by sqsprobe{}: {which}{}",
            filter.prefix(),
            if several {
                format!(" in {}", target.info.region)
            } else {
                String::new()
            },
            if args.dry_run {
                " (dry run: nothing is deleted)"
            } else {
                ""
            }
        ));
        let result = sweep(
            &target.client,
            &filter,
            args.dry_run,
            stop.clone(),
            |line| {
                // A closed stdout loses lines, not the sweep.
                let _ = writeln!(stdout, "{line}");
            },
        )
        .await;
        match result {
            Ok(t) => totals.add(&t),
            Err(e) => {
                say(&e);
                failed_regions.push(target.info.region.clone());
            }
        }
    }
    watcher.abort();
    let _ = writeln!(stdout, "sweep: {totals}");
    let _ = stdout.flush();
    if !failed_regions.is_empty() {
        say(format_args!(
            "listing failed in {}: what is left there is unknown",
            failed_regions.join(", ")
        ));
    }
    Ok(if stop.load(Ordering::SeqCst) {
        Outcome::Interrupted
    } else if totals.failed > 0 || !failed_regions.is_empty() {
        Outcome::Broken
    } else {
        Outcome::Done
    })
}

/// The regions to sweep, in order: each `--region`, then each region `--regions-of` names
/// that is not already there; `[None]` (the environment's or profile's region) when neither
/// is given.
fn regions_to_sweep(args: &SweepArgs) -> Result<Vec<Option<String>>, String> {
    let mut regions: Vec<String> = args.reach.region.clone();
    if let Some(dir) = &args.regions_of {
        let records = super::report::read_run_folder(dir)?;
        let view = sqsprobe_core::evidence::RunView::new(&records);
        let start = view.start.ok_or_else(|| {
            format!(
                "{}: no run_start, so the regions the run touched are unknown; give them with --region",
                dir.display()
            )
        })?;
        // Files written before `regions` existed name the run's own region only.
        let named = if start.regions.is_empty() {
            vec![start.region.clone()]
        } else {
            start.regions.clone()
        };
        for r in named {
            if !regions.contains(&r) {
                regions.push(r);
            }
        }
    }
    if regions.is_empty() {
        return Ok(vec![None]);
    }
    Ok(regions.into_iter().map(Some).collect())
}

/// The first signal stops the sweep after the queue in flight; a second leaves at once.
async fn watch_signals(mut signals: Signals, stop: Arc<AtomicBool>) {
    let first = signals.next().await;
    say(format_args!(
        "{first}: stopping after the queue in flight (signal again to leave at once)"
    ));
    stop.store(true, Ordering::SeqCst);
    let second = signals.next().await;
    say(format_args!("{second}: left at once"));
    std::process::exit(Outcome::Interrupted.exit_code());
}

/// One line on stderr, prefixed `sqsprobe: `; a closed stderr is not worth a panic.
fn say(line: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr(), "sqsprobe: {line}");
}
