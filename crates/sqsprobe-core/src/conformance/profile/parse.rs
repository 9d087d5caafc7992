//! A profile file, parsed like a suite: positioned, every problem found, unknown keys with a
//! did-you-mean; and its entries checked against the run's cases.

use std::collections::BTreeMap;

use super::model::{Answer, Profile, ProfileEntry, StepPin};
use crate::suite::Diagnostic;
use crate::suite::yaml::{DocumentKind, Node, Reader, parse_document, pos};
use sqsprobe_facts::text::suggest::closest;

const PROFILE_KEYS: &[&str] = &[
    "target",
    "description",
    "versions",
    "known_divergences",
    "unsupported",
];
const ENTRY_KEYS: &[&str] = &[
    "case",
    "reason",
    "reference",
    "protocols",
    "step",
    "finding",
    "answer",
    "teardown",
];
const REQUIRED_ENTRY_KEYS: &[&str] = &["case", "reason", "reference"];
const ANSWER_KEYS: &[&str] = &["status", "code"];

const PROFILE_FILE: DocumentKind = DocumentKind {
    noun: "profile",
    empty_hint: "a profile is a mapping with `target:`; see docs/target-profiles.md",
};

/// Parses one profile file. Returns every problem found, not just the first.
pub fn parse_profile(path: &str, source: &str) -> Result<Profile, Vec<Diagnostic>> {
    parse_document(path, source, PROFILE_FILE, decode)
}

/// Whether two entries can hold for one run: either applies to every protocol, or they name one
/// in common.
fn overlap(a: &ProfileEntry, b: &ProfileEntry) -> bool {
    a.protocols.is_empty()
        || b.protocols.is_empty()
        || a.protocols.iter().any(|p| b.protocols.contains(p))
}

fn decode(r: &mut Reader, root: &Node) -> Option<Profile> {
    let f = r.fields(root, root, "the target profile", PROFILE_KEYS)?;
    r.require(&f, &["target"]);
    let target = f.get("target").and_then(|n| r.nonempty(n, "`target`"));
    let description = f
        .get("description")
        .and_then(|n| r.string(n, "`description`"));
    let versions = f.get("versions").and_then(|n| r.string(n, "`versions`"));
    let known_divergences = entries(r, f.get("known_divergences"), "a known divergence", true);
    let unsupported = entries(r, f.get("unsupported"), "an unsupported case", false);

    // A case is either expected to diverge or not run at all, and listed once per protocol: a
    // target can show one case's divergence at another step over each wire protocol, so two
    // entries limited to protocols that do not overlap are two pins, never two answers for one run.
    let mut seen: BTreeMap<&str, Vec<&ProfileEntry>> = BTreeMap::new();
    let mut duplicates = Vec::new();
    for e in known_divergences.iter().chain(&unsupported) {
        let earlier = seen.entry(e.case.as_str()).or_default();
        match earlier.iter().find(|first| overlap(first, e)) {
            Some(first) => duplicates.push(Diagnostic::new(
                r.path,
                e.pos,
                e.case.chars().count() as u32,
                format!(
                    "case `{}` is listed twice; first at line {}",
                    e.case, first.pos.line
                ),
            )),
            None => earlier.push(e),
        }
    }
    r.diags.extend(duplicates);
    Some(Profile {
        path: r.path.to_string(),
        target: target?,
        description,
        versions,
        known_divergences,
        unsupported,
    })
}

/// The entries of one list. A known divergence (`pinned`) must say where it shows (`step`)
/// and what the target answers there (`finding` and/or `answer`), so that it explains that
/// failure and no other.
fn entries(r: &mut Reader, node: Option<&Node>, what: &str, pinned: bool) -> Vec<ProfileEntry> {
    let Some(node) = node else {
        return Vec::new();
    };
    if node.data.is_null() {
        return Vec::new();
    }
    let Some(items) = r.seq(node, what) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in items {
        let Some(f) = r.fields(item, item, what, ENTRY_KEYS) else {
            continue;
        };
        if !r.require(&f, REQUIRED_ENTRY_KEYS) {
            continue;
        }
        let step = f.get("step").and_then(|n| match n.data.as_str() {
            Some("case") => Some(StepPin::Case),
            _ => r
                .int(n, "`step` (or `case`)", 1, 10_000)
                .map(|n| StepPin::At(n as u32)),
        });
        let mut protocols = Vec::new();
        if let Some(n) = f.get("protocols") {
            for p in r.strings(n, "protocols", true).unwrap_or_default() {
                if crate::suite::PROTOCOLS.contains(&p.as_str()) {
                    protocols.push(p);
                } else {
                    let hint = closest(&p, crate::suite::PROTOCOLS.iter().copied())
                        .map(|c| format!("did you mean `{c}`?"))
                        .unwrap_or_else(|| "protocols are `json` and `query`".to_string());
                    r.error_hint(n, format!("unknown protocol `{p}`"), hint);
                }
            }
        }
        let finding = f.get("finding").and_then(|n| r.nonempty(n, "`finding`"));
        let teardown = f.get("teardown").and_then(|n| r.nonempty(n, "`teardown`"));
        let answer = f.get("answer").and_then(|n| {
            let a = r.fields(n, n, "an answer", ANSWER_KEYS)?;
            let status = a
                .get("status")
                .and_then(|s| r.int(s, "`status`", 100, 599))
                .map(|s| s as u16);
            let code = a.get("code").and_then(|c| r.nonempty(c, "`code`"));
            Some(Answer { status, code })
        });
        let case_node = f.get("case").expect("required");
        if pinned {
            if f.get("step").is_none() && f.get("teardown").is_none() {
                r.error_hint(
                    case_node,
                    "a known divergence needs `step:`",
                    "pin it to the step where the target diverges (1-based, as findings number steps), `case` for a rate or trial finding, or `teardown:` for a teardown the target fails",
                );
            }
            let teardown_only = f.get("step").is_none() && f.get("teardown").is_some();
            if !teardown_only && f.get("finding").is_none() && f.get("answer").is_none() {
                r.error_hint(
                    case_node,
                    "a known divergence needs `finding:` or `answer:`",
                    "say what the target answers at its step, so a different failure there stays a failure",
                );
            }
        } else {
            for key in ["step", "finding", "answer", "teardown"] {
                if let Some(n) = f.get(key) {
                    r.error(n, format!("`{key}` applies to known divergences only"));
                }
            }
        }
        let case = r.nonempty(case_node, "`case`");
        let reason = f.get("reason").and_then(|n| r.nonempty(n, "`reason`"));
        let reference = f
            .get("reference")
            .and_then(|n| r.nonempty(n, "`reference`"));
        if let (Some(case), Some(reason), Some(reference)) = (case, reason, reference) {
            out.push(ProfileEntry {
                case,
                pos: pos(case_node),
                reason,
                reference,
                protocols,
                step,
                finding,
                answer,
                teardown,
            });
        }
    }
    out
}

/// Profile entries naming a case that is not among `known_cases` (the run's suites), with a
/// did-you-mean. The caller decides whether these are warnings or errors: a run over a subset
/// of the suites legitimately leaves profile entries unmatched.
pub fn unknown_cases(profile: &Profile, known_cases: &[&str]) -> Vec<Diagnostic> {
    profile
        .entries()
        .filter(|e| !known_cases.contains(&e.case.as_str()))
        .map(|e| {
            let d = Diagnostic::new(
                &profile.path,
                e.pos,
                e.case.chars().count() as u32,
                format!("no case `{}` in the suites of this run", e.case),
            );
            match closest(&e.case, known_cases.iter().copied()) {
                Some(c) => d.with_hint(format!("did you mean `{c}`?")),
                None => d,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;
    use crate::suite::model::Pos;

    #[test]
    fn parses_a_profile() {
        let p = parse_profile("targets/moto.yaml", GOOD).unwrap();
        assert_eq!(p.target, "moto");
        assert_eq!(p.versions.as_deref(), Some("moto 5.1"));
        assert_eq!(p.known_divergences.len(), 1);
        assert_eq!(p.known_divergences[0].pos, Pos { line: 5, col: 11 });
        assert_eq!(p.unsupported[0].case, "move-task-start");
    }

    #[test]
    fn protocol_limited_entries_apply_only_to_their_protocol() {
        let src = "\
target: moto
known_divergences:
  - case: a
    step: 1
    finding: f
    reason: r
    reference: x
  - case: b
    protocols: [query]
    step: 1
    answer: {status: 400}
    reason: r
    reference: x
";
        let p = parse_profile("p.yaml", src).unwrap();
        let json = p.for_protocol("json");
        assert!(json.known_divergence("a").is_some());
        assert!(json.known_divergence("b").is_none());
        let query = p.for_protocol("query");
        assert!(query.known_divergence("a").is_some());
        assert!(query.known_divergence("b").is_some());
        let bad = src.replace("[query]", "[qurey]");
        let errs = parse_profile("p.yaml", &bad).unwrap_err();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].one_line().contains("did you mean `query`?"),
            "{}",
            errs[0].one_line()
        );
    }

    #[test]
    fn a_case_is_listed_once_per_protocol() {
        let src = "\
target: ministack
known_divergences:
  - case: a
    protocols: [json]
    step: 2
    finding: f
    reason: r
    reference: x
  - case: a
    protocols: [query]
    step: 1
    answer: {status: 400}
    reason: r
    reference: x
";
        let p = parse_profile("p.yaml", src).unwrap();
        let pinned = |protocol: &str| {
            p.for_protocol(protocol)
                .known_divergence("a")
                .and_then(|e| e.step)
        };
        assert_eq!(pinned("json"), Some(StepPin::At(2)));
        assert_eq!(pinned("query"), Some(StepPin::At(1)));
        // Entries that can both hold for one run are refused, whichever list they are in.
        for other in ["[json, query]", "[json]"] {
            let bad = src.replacen("[query]", other, 1);
            let errs = parse_profile("p.yaml", &bad).unwrap_err();
            assert_eq!(
                errs[0].one_line(),
                "p.yaml:9:11: case `a` is listed twice; first at line 3"
            );
        }
        let unlimited = src.replacen("    protocols: [query]\n", "", 1);
        assert!(parse_profile("p.yaml", &unlimited).is_err());
    }

    #[test]
    fn empty_lists_are_allowed() {
        let p = parse_profile(
            "e.yaml",
            "target: aws\nknown_divergences: []\nunsupported:\n",
        )
        .unwrap();
        assert!(p.known_divergences.is_empty() && p.unsupported.is_empty());
    }

    #[test]
    fn unknown_keys_missing_fields_and_duplicates_are_positioned() {
        let src = "\
target: moto
known_divergence:
  - case: a
unsupported:
  - case: a
    reason: r
    referense: x
  - case: b
    reason: r
    reference: x
  - case: b
    reason: r
    reference: y
";
        let diags = parse_profile("p.yaml", src).unwrap_err();
        let lines: Vec<String> = diags.iter().map(|d| d.one_line()).collect();
        assert_eq!(
            lines,
            vec![
                "p.yaml:2:1: unknown key `known_divergence` in the target profile (did you mean `known_divergences`?)",
                "p.yaml:7:5: unknown key `referense` in an unsupported case (did you mean `reference`?)",
                "p.yaml:11:11: case `b` is listed twice; first at line 8",
            ]
        );
    }

    #[test]
    fn missing_target_and_bad_yaml_are_errors() {
        let diags = parse_profile("p.yaml", "description: x\n").unwrap_err();
        assert_eq!(
            diags[0].one_line(),
            "p.yaml:1:1: the target profile needs `target`"
        );
        let diags = parse_profile("p.yaml", "target: [\n").unwrap_err();
        assert!(diags[0].message.starts_with("invalid YAML"), "{diags:?}");
        assert!(parse_profile("p.yaml", "").is_err());
    }

    #[test]
    fn unknown_case_ids_point_at_the_entry_with_a_suggestion() {
        let p = parse_profile("targets/moto.yaml", GOOD).unwrap();
        let diags = unknown_cases(
            &p,
            &["stale-handle-delete-after-lapse", "move-task-started"],
        );
        assert_eq!(diags.len(), 1);
        assert_eq!(
            diags[0].one_line(),
            "targets/moto.yaml:11:11: no case `move-task-start` in the suites of this run (did you mean `move-task-started`?)"
        );
    }

    #[test]
    fn known_divergences_must_be_pinned_and_unsupported_entries_must_not() {
        let unpinned = "\
target: moto
known_divergences:
  - case: a
    reason: r
    reference: x
unsupported:
  - case: b
    step: 2
    reason: r
    reference: x
";
        let lines: Vec<String> = parse_profile("p.yaml", unpinned)
            .unwrap_err()
            .iter()
            .map(|d| d.one_line())
            .collect();
        assert_eq!(
            lines,
            vec![
                "p.yaml:3:11: a known divergence needs `step:` (pin it to the step where the target diverges (1-based, as findings number steps), `case` for a rate or trial finding, or `teardown:` for a teardown the target fails)",
                "p.yaml:3:11: a known divergence needs `finding:` or `answer:` (say what the target answers at its step, so a different failure there stays a failure)",
                "p.yaml:8:11: `step` applies to known divergences only",
            ]
        );
    }

    #[test]
    fn shipped_profiles_parse_and_the_references_list_nothing() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join("targets");
        let mut seen = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let source = std::fs::read_to_string(&path).unwrap();
            let shown = path.display().to_string();
            let p = parse_profile(&shown, &source).unwrap_or_else(|d| panic!("{d:?}"));
            assert_eq!(
                Some(p.target.as_str()),
                path.file_stem().and_then(|s| s.to_str())
            );
            if p.target == "embedded" || p.target == "aws" {
                assert!(p.known_divergences.is_empty() && p.unsupported.is_empty());
            }
            seen.push(p.target);
        }
        seen.sort();
        assert_eq!(
            seen,
            vec![
                "aws",
                "elasticmq",
                "embedded",
                "fakecloud",
                "fauxqs",
                "goaws",
                "localstack",
                "ministack",
                "moto",
                "sqslite"
            ]
        );
    }
}
