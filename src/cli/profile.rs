//! Finding and reading a target profile for `run --target-profile NAME|PATH`.

use super::error::CommandError;
use sqsprobe_core::conformance::{Profile, parse_profile, unknown_cases};
use sqsprobe_core::suite::Suite;
use std::path::{Path, PathBuf};

/// Folder holding the shipped profiles, `targets/<name>.yaml`.
pub(super) const TARGETS_DIR: &str = "targets";

/// The shipped profiles, built into the binary (`build.rs` embeds every `targets/*.yaml`) so
/// `--target-profile moto` works from any folder; a `targets/<name>.yaml` in the working
/// folder (or a path) overrides one.
fn built_in() -> impl Iterator<Item = (&'static str, &'static str)> {
    super::builtin::target_profiles()
}

/// What `versions:` says in a profile no run has measured yet.
const UNMEASURED: &str = "not yet run";

/// Unknown-case warnings shown in full; the rest are counted.
const SHOWN_UNKNOWN: usize = 3;

/// Where a profile comes from: a file (a path, or `targets/<name>.yaml` in the working
/// folder), or the copy built into the binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Source {
    File(PathBuf),
    BuiltIn(&'static str, &'static str),
}

/// A bare name means `targets/<name>.yaml` when the working folder has it, else the built-in
/// profile of that name; anything that looks like a path is used as given.
pub(super) fn resolve(arg: &str) -> Source {
    let looks_like_path =
        arg.contains('/') || arg.contains('\\') || arg.ends_with(".yaml") || arg.ends_with(".yml");
    let local = Path::new(TARGETS_DIR).join(format!("{arg}.yaml"));
    if looks_like_path {
        return Source::File(PathBuf::from(arg));
    }
    if local.is_file() {
        return Source::File(local);
    }
    match built_in().find(|(name, _)| *name == arg) {
        Some((name, text)) => Source::BuiltIn(name, text),
        None => Source::File(local),
    }
}

/// Reads and parses the profile; unknown case ids are printed as warnings (a run over some of
/// the suites leaves other entries unmatched).
pub(super) fn load(arg: &str, suites: &[Suite]) -> Result<Profile, CommandError> {
    let (shown, source) = match resolve(arg) {
        Source::BuiltIn(name, text) => (format!("{name} (built in)"), text.to_string()),
        Source::File(path) => {
            let shown = path.display().to_string();
            match std::fs::read_to_string(&path) {
                Ok(s) => (shown, s),
                Err(source) => {
                    return Err(CommandError::ProfileUnreadable {
                        shown,
                        source,
                        built_in: built_in().map(|(n, _)| n).collect(),
                    });
                }
            }
        }
    };
    let profile = parse_profile(&shown, &source).map_err(|diags| {
        let rendered = diags
            .iter()
            .map(|d| format!("{}\n\n", d.render(&source)))
            .collect();
        CommandError::ProfileInvalid {
            shown: shown.clone(),
            count: diags.len(),
            rendered,
        }
    })?;
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
    if profile.versions.as_deref() == Some(UNMEASURED) {
        eprintln!(
            "sqsprobe: target profile `{}` is unmeasured: no run of the suites against {} is \
             recorded (versions: {UNMEASURED}), so it knows no divergence and every failure \
             counts",
            profile.target, profile.target
        );
    }
    Ok(profile)
}

/// Reads the profile `arg` names (a built-in name or a file), quietly: for `sqsprobe check`,
/// which maps a finished run's cases again and has no suites to hold its entries against.
pub(super) fn read(arg: &str) -> Result<Profile, String> {
    let (shown, source) = match resolve(arg) {
        Source::BuiltIn(name, text) => (format!("{name} (built in)"), text.to_string()),
        Source::File(path) => {
            let shown = path.display().to_string();
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{shown}: {e}"))?;
            (shown, text)
        }
    };
    parse_profile(&shown, &source).map_err(|diags| {
        format!(
            "{} error(s) in target profile {shown}: {}",
            diags.len(),
            diags
                .iter()
                .map(|d| d.render(&source))
                .collect::<Vec<_>>()
                .join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_to_built_in_profiles_and_paths_stay() {
        // The test runs in the repository, whose targets/ holds moto.yaml: that file wins.
        assert_eq!(
            resolve("moto"),
            Source::File(PathBuf::from("targets/moto.yaml"))
        );
        assert_eq!(
            resolve("my/moto.yaml"),
            Source::File(PathBuf::from("my/moto.yaml"))
        );
        assert_eq!(resolve("x.yml"), Source::File(PathBuf::from("x.yml")));
        assert_eq!(
            resolve("nothing-such"),
            Source::File(PathBuf::from("targets/nothing-such.yaml"))
        );
    }

    /// Every shipped profile is built in, and parses.
    #[test]
    fn the_built_in_profiles_are_every_shipped_one_and_parse() {
        let mut shipped: Vec<String> = std::fs::read_dir(TARGETS_DIR)
            .unwrap()
            .filter_map(|e| {
                let p = e.ok()?.path();
                let stem = p.file_stem()?.to_string_lossy().into_owned();
                (p.extension()? == "yaml").then_some(stem)
            })
            .collect();
        shipped.sort();
        let built: Vec<&str> = built_in().map(|(n, _)| n).collect();
        assert_eq!(shipped, built);
        for (name, text) in built_in() {
            let p = parse_profile(name, text).unwrap_or_else(|d| panic!("{name}: {d:?}"));
            assert_eq!(p.target, name);
        }
    }
}
