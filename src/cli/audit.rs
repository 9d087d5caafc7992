//! `sqsprobe audit [...] -- COMMAND [ARGS...]`: reads the command line and the plan, and hands
//! them to the audit's runner (`audit::runner`), which starts the emulator and the consumer,
//! watches, judges and writes the audit folder.

use std::io::Write;

use super::args::AuditArgs;
use super::signals::Signals;
use crate::audit::plan::Plan;
use crate::audit::runner::{self, Interrupts, Options};
use sqsprobe_facts::exit_code;

/// The queue of an audit without a plan: one emulator per audit, so a fixed name keeps a
/// seeded audit's dice (drawn per queue) the same from one audit to the next.
const QUEUE: &str = "sqsprobe-audit";

impl Interrupts for Signals {
    async fn next(&mut self) -> &'static str {
        Signals::next(self).await
    }
}

/// Runs the command and returns the process exit code.
pub async fn run(args: AuditArgs) -> i32 {
    let mut signals = Signals::new();
    let plan = match load_plan(&args) {
        Ok(plan) => plan,
        Err(code) => return code,
    };
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
    runner::run(&options, &plan, &mut signals).await
}

/// The plan: `--plan`'s file (its problems printed at their lines, exit 1), else one queue
/// from the flags.
fn load_plan(args: &AuditArgs) -> Result<Plan, i32> {
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
    let bytes = std::fs::read(path).map_err(|e| {
        let _ = writeln!(
            std::io::stderr(),
            "sqsprobe: failed to read the plan {shown}: {e}"
        );
        exit_code::BAD_COMMAND_LINE
    })?;
    let source = match sqsprobe_core::suite::utf8_text(&shown, &bytes) {
        Ok(s) => s.to_string(),
        Err(d) => {
            let _ = writeln!(std::io::stderr(), "{}", d.one_line());
            return Err(exit_code::BAD_COMMAND_LINE);
        }
    };
    crate::audit::parse_plan(&shown, &source).map_err(|diags| {
        let _ = write!(
            std::io::stderr(),
            "{}",
            sqsprobe_core::suite::render_all(&diags, &source)
        );
        exit_code::BAD_COMMAND_LINE
    })
}
