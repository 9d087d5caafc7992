//! `sqsprobe audit [...] -- COMMAND [ARGS...]`: reads the command line and the plan, and hands
//! them to the audit's runner (`audit::runner`), which starts the emulator and the consumer,
//! watches, judges and writes the audit folder.

use super::args::AuditArgs;
use super::error::{CommandError, Outcome};
use super::signals::Signals;
use crate::audit::AuditEnd;
use crate::audit::plan::Plan;
use crate::audit::runner::{self, Interrupts, Options};

/// The queue of an audit without a plan: one emulator per audit, so a fixed name keeps a
/// seeded audit's dice (drawn per queue) the same from one audit to the next.
const QUEUE: &str = "sqsprobe-audit";

impl Interrupts for Signals {
    async fn next(&mut self) -> &'static str {
        Signals::next(self).await
    }
}

/// Runs the command: the audits' own code once judged.
pub(super) async fn run(args: AuditArgs) -> Result<Outcome, CommandError> {
    let mut signals = Signals::new();
    let plan = load_plan(&args)?;
    let options = Options {
        run_id: args
            .run_id
            .clone()
            .unwrap_or_else(crate::runner::new_run_id),
        command: args.command,
        plan_path: args.plan,
        chaos: args.chaos,
        nemesis: args.nemesis,
        seed: args.seed,
        trials: args.trials,
        idle: args.idle,
        max_duration: args.max_duration,
        out: args.out,
        lambda: args.lambda.settings(),
    };
    match runner::run(&options, &plan, &mut signals).await? {
        AuditEnd::Judged(code) => Ok(Outcome::Verdict(code)),
        AuditEnd::Interrupted => Ok(Outcome::Interrupted),
    }
}

/// The plan: `--plan`'s file (its problems rendered at their lines), else one queue from the
/// flags.
fn load_plan(args: &AuditArgs) -> Result<Plan, CommandError> {
    let Some(path) = &args.plan else {
        return Ok(Plan::single(
            QUEUE,
            args.messages,
            args.fifo,
            args.groups,
            args.visibility_timeout,
        ));
    };
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| CommandError::PlanUnreadable {
        shown: shown.clone(),
        source,
    })?;
    let source = sqsprobe_core::suite::utf8_text(&shown, &bytes)
        .map_err(|d| CommandError::PlanNotText(d.one_line()))?
        .to_string();
    crate::audit::parse_plan(&shown, &source).map_err(|diags| CommandError::PlanInvalid {
        count: diags.len(),
        rendered: sqsprobe_core::suite::render_all(&diags, &source),
        shown,
    })
}
