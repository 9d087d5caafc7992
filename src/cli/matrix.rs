//! `sqsprobe matrix`: read several run folders and write `matrix.md`, `matrix.json` and
//! `matrix.html` (each cell linking to the case in its run folder's `report.html`).

use super::args::MatrixArgs;
use sqsprobe_core::conformance::matrix;
use sqsprobe_facts::exit_code;
use sqsprobe_facts::text::escape::terminal;
use std::io::Write;

/// Runs the command and returns the exit code.
pub fn matrix(args: MatrixArgs) -> i32 {
    let mut runs = Vec::new();
    for dir in &args.run_dirs {
        match super::report::read_run_folder(dir) {
            Ok(records) => runs.push((dir.display().to_string(), records)),
            Err(e) => {
                eprintln!("sqsprobe: {e}");
                return exit_code::RUNTIME_ERROR;
            }
        }
    }
    let facts = match &args.facts {
        None => None,
        Some(path) => match std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|text| sqsprobe_core::conformance::facts::parse_facts(&text))
        {
            Ok(f) => Some(f),
            Err(e) => {
                eprintln!("sqsprobe: {}: {e}", path.display());
                return exit_code::BAD_COMMAND_LINE;
            }
        },
    };
    let mut m = match matrix::build(&runs) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("sqsprobe: {e}");
            return exit_code::RUNTIME_ERROR;
        }
    };
    m.facts = facts;
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("sqsprobe: failed to create {}: {e}", args.out.display());
        return exit_code::RUNTIME_ERROR;
    }
    let json = match serde_json::to_string_pretty(&m) {
        Ok(j) => j + "\n",
        Err(e) => {
            eprintln!("sqsprobe: failed to serialize the matrix: {e}");
            return exit_code::RUNTIME_ERROR;
        }
    };
    for (name, text) in [
        (
            "matrix.md",
            sqsprobe_core::conformance::markdown::render_markdown(&m),
        ),
        ("matrix.json", json),
    ] {
        let path = args.out.join(name);
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("sqsprobe: failed to write {}: {e}", path.display());
            return exit_code::RUNTIME_ERROR;
        }
    }
    if let Err(e) = super::report::write_side_by_side(&args.out, &args.run_dirs, &m, "matrix.html")
    {
        eprintln!("sqsprobe: {e}");
        return exit_code::RUNTIME_ERROR;
    }
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
    exit_code::OK
}
