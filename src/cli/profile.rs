//! Finding and reading a target profile for `run --target-profile NAME|PATH`.

use crate::conformance::{Profile, parse_profile, unknown_cases};
use crate::exit_code;
use crate::suite::Suite;
use std::path::{Path, PathBuf};

/// Folder holding the shipped profiles, `targets/<name>.yaml`.
pub const TARGETS_DIR: &str = "targets";

/// Unknown-case warnings shown in full; the rest are counted.
const SHOWN_UNKNOWN: usize = 3;

/// A bare name means `targets/<name>.yaml`; anything that looks like a path is used as given.
pub fn resolve(arg: &str) -> PathBuf {
    let looks_like_path =
        arg.contains('/') || arg.contains('\\') || arg.ends_with(".yaml") || arg.ends_with(".yml");
    if looks_like_path {
        PathBuf::from(arg)
    } else {
        Path::new(TARGETS_DIR).join(format!("{arg}.yaml"))
    }
}

/// Reads and parses the profile, printing problems; unknown case ids are printed as warnings
/// (a run over some of the suites leaves other entries unmatched). `Err` is the exit code.
pub fn load(arg: &str, suites: &[Suite]) -> Result<Profile, i32> {
    let path = resolve(arg);
    let shown = path.display().to_string();
    let source = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("sqsprobe: failed to read target profile {shown}: {e}");
            if let Ok(dir) = std::fs::read_dir(TARGETS_DIR) {
                let mut names: Vec<String> = dir
                    .filter_map(|e| e.ok())
                    .filter_map(|e| {
                        let p = e.path();
                        if p.extension()? != "yaml" {
                            return None;
                        }
                        Some(p.file_stem()?.to_string_lossy().into_owned())
                    })
                    .collect();
                names.sort();
                eprintln!("  profiles in {TARGETS_DIR}/: {}", names.join(", "));
            }
            return Err(exit_code::BAD_COMMAND_LINE);
        }
    };
    let profile = match parse_profile(&shown, &source) {
        Ok(p) => p,
        Err(diags) => {
            for d in &diags {
                eprintln!("{}\n", d.render(&source));
            }
            eprintln!(
                "sqsprobe: {} error(s) in target profile {shown}; nothing was run",
                diags.len()
            );
            return Err(exit_code::INVALID_SUITE);
        }
    };
    let ids: Vec<&str> = suites
        .iter()
        .flat_map(|s| s.cases.iter().map(|c| c.id.as_str()))
        .collect();
    // A run over a few suite files leaves most entries unmatched: show a few, count the rest.
    let unknown = unknown_cases(&profile, &ids);
    for d in unknown.iter().take(SHOWN_UNKNOWN) {
        let text = d.render(&source);
        let text = text.strip_prefix("error: ").unwrap_or(&text);
        eprintln!("warning: {text}\n");
    }
    if unknown.len() > SHOWN_UNKNOWN {
        eprintln!(
            "warning: {} more entries of {shown} name cases that are not in this run's suites\n",
            unknown.len() - SHOWN_UNKNOWN
        );
    }
    Ok(profile)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_into_targets_and_paths_stay() {
        assert_eq!(resolve("moto"), PathBuf::from("targets/moto.yaml"));
        assert_eq!(resolve("my/moto.yaml"), PathBuf::from("my/moto.yaml"));
        assert_eq!(resolve("x.yml"), PathBuf::from("x.yml"));
    }
}
