//! `sqsprobe baseline save|compare`: keep a run as a reference, and compare later runs with it.

use super::args::{BaselineCommand, BaselineCompareArgs, BaselineSaveArgs};
use super::error::{CommandError, Outcome};
use crate::runner::TargetKind;
use crate::runner::target::is_aws_endpoint;
use sqsprobe_core::conformance::baseline::{self, Baseline};
use std::path::Path;

/// Runs the subcommand.
pub(super) fn baseline(cmd: BaselineCommand) -> Result<Outcome, CommandError> {
    match cmd {
        BaselineCommand::Save(a) => save(a),
        BaselineCommand::Compare(a) => compare(a),
    }
}

/// A run folder's evidence, normalized.
fn from_run(dir: &Path) -> Result<Baseline, String> {
    let records = super::report::read_run_folder(dir)?;
    baseline::normalize(&records).map_err(|e| format!("{}: {e}", dir.display()))
}

/// A baseline folder's `baseline.json`, or a run folder normalized on the fly.
fn from_dir(dir: &Path) -> Result<Baseline, String> {
    let json = dir.join("baseline.json");
    if !json.exists() {
        return from_run(dir);
    }
    let text = std::fs::read_to_string(&json)
        .map_err(|e| format!("failed to read {}: {e}", json.display()))?;
    let b: Baseline = serde_json::from_str(&text)
        .map_err(|e| format!("failed to parse {}: {e}", json.display()))?;
    if b.format != baseline::BASELINE_FORMAT {
        return Err(format!(
            "{}: format `{}`, expected `{}`",
            json.display(),
            b.format,
            baseline::BASELINE_FORMAT
        ));
    }
    Ok(b)
}

fn save(args: BaselineSaveArgs) -> Result<Outcome, CommandError> {
    let b = from_run(&args.run_dir).map_err(CommandError::Evidence)?;
    // Every later run would look changed against an incomplete one.
    if let Some(why) = &b.incomplete {
        return Err(CommandError::BaselineIncomplete {
            run_dir: args.run_dir,
            why: why.clone(),
        });
    }
    // A run redirected away from AWS (AWS_ENDPOINT_URL, a profile's endpoint_url, ...) says
    // `target: aws` but is no evidence of what AWS does.
    if b.target == TargetKind::Aws.as_str()
        && let Some(endpoint) = b.endpoint.as_deref().filter(|u| !is_aws_endpoint(u))
    {
        return Err(CommandError::BaselineNotAws {
            run_dir: args.run_dir,
            endpoint: endpoint.to_string(),
        });
    }
    let name = args.name.unwrap_or_else(|| baseline::default_name(&b));
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        return Err(CommandError::BaselineName { name });
    }
    let dir = args.dir.join(&name);
    if dir.exists() {
        return Err(CommandError::BaselineExists { dir });
    }
    let json = serde_json::to_string_pretty(&b).map_err(|source| CommandError::Serialize {
        what: "baseline",
        source,
    })? + "\n";
    let written = std::fs::create_dir_all(&dir)
        .and_then(|()| {
            std::fs::copy(
                args.run_dir.join("evidence.jsonl"),
                dir.join("evidence.jsonl"),
            )
        })
        .and_then(|_| std::fs::write(dir.join("baseline.json"), json));
    written.map_err(|e| CommandError::write(&dir, e))?;
    println!(
        "baseline `{name}`: {} case(s) from run {} → {}",
        b.cases.len(),
        b.run_id,
        dir.display()
    );
    Ok(Outcome::Done)
}

fn compare(args: BaselineCompareArgs) -> Result<Outcome, CommandError> {
    let base = from_dir(&args.baseline).map_err(CommandError::Evidence)?;
    let run = from_run(&args.run_dir).map_err(CommandError::Evidence)?;
    let diffs = baseline::compare(&base, &run);
    let out = args.out.unwrap_or_else(|| args.run_dir.clone());
    let path = out.join("comparison.md");
    let written = std::fs::create_dir_all(&out)
        .and_then(|()| std::fs::write(&path, baseline::render_markdown(&base, &run, &diffs)));
    written.map_err(|e| CommandError::write(&path, e))?;
    if let Some(why) = &run.incomplete {
        eprintln!(
            "sqsprobe: warning: {} is incomplete: {why}",
            args.run_dir.display()
        );
    }
    print!("{}", baseline::render_lines(&diffs));
    if diffs.is_empty() {
        println!(
            "identical to baseline run {} ({} case(s)); {}",
            base.run_id,
            base.cases.len(),
            path.display()
        );
        Ok(Outcome::Done)
    } else {
        println!(
            "{} difference(s) from baseline run {}; {}",
            diffs.len(),
            base.run_id,
            path.display()
        );
        Ok(Outcome::Failed)
    }
}
