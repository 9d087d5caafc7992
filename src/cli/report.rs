//! `sqsprobe report`: re-render a run folder's reports from its evidence.
//!
//! The reports are pure functions of `evidence.jsonl`, so an older run (or one whose process
//! was killed before it wrote them) can always be rendered again.

use super::args::ReportArgs;
use crate::evidence::read_evidence;
use crate::exit_code;
use crate::report;

pub fn report(args: ReportArgs) -> i32 {
    let path = args.run_dir.join("evidence.jsonl");
    let records = match read_evidence(&path) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sqsprobe: {e}");
            return exit_code::RUNTIME_ERROR;
        }
    };
    if let Err(e) = report::write_run_folder(&args.run_dir, &records) {
        eprintln!("sqsprobe: {e}");
        return exit_code::RUNTIME_ERROR;
    }
    let dir = args.run_dir.display().to_string();
    print!("{}", report::terminal::render(&records, &dir, 100, false));
    exit_code::OK
}
