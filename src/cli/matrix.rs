//! `sqsprobe matrix`: read several run folders and write `matrix.md` and `matrix.json`.

use super::args::MatrixArgs;
use crate::conformance::matrix;
use crate::exit_code;

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
    let m = match matrix::build(&runs) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("sqsprobe: {e}");
            return exit_code::RUNTIME_ERROR;
        }
    };
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
        ("matrix.md", matrix::render_markdown(&m)),
        ("matrix.json", json),
    ] {
        let path = args.out.join(name);
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("sqsprobe: failed to write {}: {e}", path.display());
            return exit_code::RUNTIME_ERROR;
        }
    }
    for c in &m.columns {
        let s = &c.score;
        println!(
            "{:<32} conformance {:>6} ({}/{} run), {} known divergence(s), {} unsupported",
            c.name,
            s.conformance
                .map_or_else(|| "–".to_string(), |x| format!("{:.1}%", x * 100.0)),
            s.pass,
            s.run,
            s.known_divergence,
            s.unsupported
        );
    }
    println!("matrix: {}", args.out.join("matrix.md").display());
    exit_code::OK
}
