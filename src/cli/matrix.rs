//! `sqsprobe matrix`: read several run folders and write `matrix.md`, `matrix.json` and
//! `matrix.html` (each cell linking to the case in its run folder's `report.html`).

use super::args::MatrixArgs;
use super::error::{CommandError, Outcome};
use sqsprobe_core::conformance::matrix;
use sqsprobe_facts::text::escape::terminal;
use std::io::Write;

/// Runs the command.
pub(super) fn matrix(args: MatrixArgs) -> Result<Outcome, CommandError> {
    let mut runs = Vec::new();
    for dir in &args.run_dirs {
        let records = super::report::read_run_folder(dir).map_err(CommandError::Evidence)?;
        runs.push((dir.display().to_string(), records));
    }
    let facts = match &args.facts {
        None => None,
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| e.to_string())
                .and_then(|text| sqsprobe_core::conformance::facts::parse_facts(&text))
                .map_err(|reason| CommandError::FactsUnreadable {
                    path: path.clone(),
                    reason,
                })?,
        ),
    };
    let mut m = matrix::build(&runs).map_err(|e| CommandError::Evidence(e.to_string()))?;
    m.facts = facts;
    std::fs::create_dir_all(&args.out).map_err(|source| CommandError::CreateFolder {
        path: args.out.clone(),
        source,
    })?;
    let json = serde_json::to_string_pretty(&m).map_err(|source| CommandError::Serialize {
        what: "matrix",
        source,
    })? + "\n";
    for (name, text) in [
        (
            "matrix.md",
            sqsprobe_core::conformance::markdown::render_markdown(&m),
        ),
        ("matrix.json", json),
    ] {
        let path = args.out.join(name);
        std::fs::write(&path, text).map_err(|e| CommandError::write(&path, e))?;
    }
    super::report::write_side_by_side(&args.out, &args.run_dirs, &m, "matrix.html")
        .map_err(CommandError::Report)?;
    let mut out = String::new();
    for c in &m.columns {
        let s = &c.score;
        out.push_str(&format!(
            "{:<32} conformance {:>6} ({}/{} counted), {} known divergence(s), {} did not finish, {} unsupported{}\n",
            terminal(&c.name),
            s.conformance
                .map_or_else(|| "–".to_string(), |x| format!("{:.1}%", x * 100.0)),
            s.pass,
            s.run,
            s.known_divergence,
            s.did_not_finish,
            s.unsupported,
            if c.interrupted {
                "  INTERRUPTED: not a complete measurement"
            } else {
                ""
            }
        ));
    }
    out.push_str(&format!(
        "matrix: {}\n",
        args.out.join("matrix.md").display()
    ));
    let mut stdout = std::io::stdout();
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
    Ok(Outcome::Done)
}
