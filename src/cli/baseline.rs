//! `sqsprobe baseline save|compare`: keep a run as a reference, and compare later runs with it.

use super::args::{BaselineCommand, BaselineCompareArgs, BaselineSaveArgs};
use crate::runner::TargetKind;
use crate::runner::target::is_aws_endpoint;
use sqsprobe_core::conformance::baseline::{self, Baseline};
use sqsprobe_facts::exit_code;
use std::path::Path;

/// Runs the subcommand and returns the exit code.
pub fn baseline(cmd: BaselineCommand) -> i32 {
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

fn save(args: BaselineSaveArgs) -> i32 {
    let b = match from_run(&args.run_dir) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("sqsprobe: {e}");
            return exit_code::RUNTIME_ERROR;
        }
    };
    // Every later run would look changed against an incomplete one.
    if let Some(why) = &b.incomplete {
        eprintln!(
            "sqsprobe: {} cannot be a baseline: {why}; save a run that finished",
            args.run_dir.display()
        );
        return exit_code::BAD_COMMAND_LINE;
    }
    // A run redirected away from AWS (AWS_ENDPOINT_URL, a profile's endpoint_url, ...) says
    // `target: aws` but is no evidence of what AWS does.
    if b.target == TargetKind::Aws.as_str()
        && let Some(endpoint) = b.endpoint.as_deref().filter(|u| !is_aws_endpoint(u))
    {
        eprintln!(
            "sqsprobe: {} ran with --target aws but sent its calls to {endpoint}, which is not \
             AWS (redirected by --endpoint-url, AWS_ENDPOINT_URL[_SQS] or a profile's \
             endpoint_url): it cannot be saved as an AWS baseline",
            args.run_dir.display()
        );
        return exit_code::BAD_COMMAND_LINE;
    }
    let name = args.name.unwrap_or_else(|| baseline::default_name(&b));
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        eprintln!("sqsprobe: baseline name `{name}` must be a plain folder name");
        return exit_code::BAD_COMMAND_LINE;
    }
    let dir = args.dir.join(&name);
    if dir.exists() {
        eprintln!(
            "sqsprobe: baseline {} already exists; pick another --name or remove it",
            dir.display()
        );
        return exit_code::BAD_COMMAND_LINE;
    }
    let json = match serde_json::to_string_pretty(&b) {
        Ok(j) => j + "\n",
        Err(e) => {
            eprintln!("sqsprobe: failed to serialize the baseline: {e}");
            return exit_code::RUNTIME_ERROR;
        }
    };
    let written = std::fs::create_dir_all(&dir)
        .and_then(|()| {
            std::fs::copy(
                args.run_dir.join("evidence.jsonl"),
                dir.join("evidence.jsonl"),
            )
        })
        .and_then(|_| std::fs::write(dir.join("baseline.json"), json));
    if let Err(e) = written {
        eprintln!("sqsprobe: failed to write {}: {e}", dir.display());
        return exit_code::RUNTIME_ERROR;
    }
    println!(
        "baseline `{name}`: {} case(s) from run {} → {}",
        b.cases.len(),
        b.run_id,
        dir.display()
    );
    exit_code::OK
}

fn compare(args: BaselineCompareArgs) -> i32 {
    let (base, run) = match (from_dir(&args.baseline), from_run(&args.run_dir)) {
        (Ok(b), Ok(r)) => (b, r),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("sqsprobe: {e}");
            return exit_code::RUNTIME_ERROR;
        }
    };
    let diffs = baseline::compare(&base, &run);
    let out = args.out.unwrap_or_else(|| args.run_dir.clone());
    let path = out.join("comparison.md");
    let written = std::fs::create_dir_all(&out)
        .and_then(|()| std::fs::write(&path, baseline::render_markdown(&base, &run, &diffs)));
    if let Err(e) = written {
        eprintln!("sqsprobe: failed to write {}: {e}", path.display());
        return exit_code::RUNTIME_ERROR;
    }
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
        exit_code::OK
    } else {
        println!(
            "{} difference(s) from baseline run {}; {}",
            diffs.len(),
            base.run_id,
            path.display()
        );
        exit_code::EXPECTATION_FAILED
    }
}
