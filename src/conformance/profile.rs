//! Target profiles: what a target is known to do differently, and what it cannot run at all.
//!
//! A profile (`targets/<name>.yaml`, format in `docs/target-profiles.md`) lists cases by id,
//! each with the reason and an upstream reference, the way ceph/s3-tests marks tests
//! `fails_on_*`. Parsing is pure and positioned like suites (unknown keys are errors with a
//! did-you-mean); applying a profile to a finished case is a pure function of its `case_end`.

use std::collections::BTreeMap;

use crate::evidence::format::{CaseEnd, Verdict};
use crate::suite::Diagnostic;
use crate::suite::model::Pos;
use crate::suite::yaml::{DocumentKind, Node, Reader, parse_document, pos};
use crate::text::suggest::closest;

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

/// The note a passing case gets when the profile expected it to diverge.
pub const NO_LONGER_OBSERVED: &str = "known divergence no longer observed — fixed upstream?";

/// One case the profile says something about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileEntry {
    /// The case id.
    pub case: String,
    /// Where the `case:` value is written.
    pub pos: Pos,
    /// What the target does instead (known divergence) or why it cannot run the case.
    pub reason: String,
    /// An upstream issue / PR URL or a code reference.
    pub reference: String,
    /// `protocols: [query]`: the entry holds only for runs over these protocols (empty: all).
    pub protocols: Vec<String>,
    /// Where the divergence shows (`step:`); a failure anywhere else in the case is not it.
    /// Required for known divergences.
    pub step: Option<StepPin>,
    /// `finding: text`: what the target answers at that step, as the finding says it (a part
    /// of the message). A failure there that does not say it is not this divergence.
    pub finding: Option<String>,
    /// `answer: {status, code}`: the HTTP status and error code the target answers at that
    /// step (`{status: 200}` for a success AWS would refuse).
    pub answer: Option<Answer>,
    /// `teardown: text`: the case's teardown fails on this target, saying this (a part of
    /// the finding: a DeleteQueue the target never answers, say). Without it a teardown
    /// finding is a failure elsewhere.
    pub teardown: Option<String>,
}

/// A known divergence's `step:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepPin {
    /// `step: N` (1-based, as findings number them).
    At(u32),
    /// `step: case`: the case's own findings, those that name no step (a `rate:` judged over
    /// trials, a trial that failed).
    Case,
}

/// What a target answered at a step: its HTTP status and error code, as a profile pins them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: Option<u16>,
    /// The error code (legacy query code or shape name: either matches the other through the
    /// SQS error table); absent for a success.
    pub code: Option<String>,
}

impl Answer {
    /// Whether a finding's recorded answer is this one. An empty code (an error answer that
    /// names none, as some emulators send) is no code.
    pub fn matches(&self, status: Option<u16>, code: Option<&str>) -> bool {
        let status_ok = self.status.is_none_or(|s| Some(s) == status);
        let code = code.filter(|c| !c.is_empty());
        let code_ok = match (&self.code, code) {
            (None, None) => true,
            (Some(want), Some(got)) => same_code(want, got),
            _ => false,
        };
        status_ok && code_ok
    }
}

/// Two names of one SQS error: equal, or the same row of the error table.
fn same_code(a: &str, b: &str) -> bool {
    use crate::sqs::errors::by_code;
    a == b || matches!((by_code(a), by_code(b)), (Some(x), Some(y)) if x.shape == y.shape)
}

impl ProfileEntry {
    /// `reason (reference)`, the text put into `case_end.profile_note`.
    pub fn note(&self) -> String {
        format!("{} ({})", self.reason, self.reference)
    }
}

/// A parsed target profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The file path as given.
    pub path: String,
    /// `target:` the name recorded in `run_start.target_profile` and shown in the matrix.
    pub target: String,
    pub description: Option<String>,
    /// `versions:` which versions of the target the entries were observed on.
    pub versions: Option<String>,
    /// Cases that fail on this target for a known, referenced reason.
    pub known_divergences: Vec<ProfileEntry>,
    /// Cases the target cannot run at all; they are not run.
    pub unsupported: Vec<ProfileEntry>,
}

impl Profile {
    /// The known-divergence entry for `case`, if any.
    pub fn known_divergence(&self, case: &str) -> Option<&ProfileEntry> {
        self.known_divergences.iter().find(|e| e.case == case)
    }

    /// The unsupported entry for `case`, if any.
    pub fn unsupported(&self, case: &str) -> Option<&ProfileEntry> {
        self.unsupported.iter().find(|e| e.case == case)
    }

    fn entries(&self) -> impl Iterator<Item = &ProfileEntry> {
        self.known_divergences.iter().chain(&self.unsupported)
    }

    /// The profile as it applies to a run over `protocol`: entries limited to other protocols
    /// are dropped (a target can diverge over one protocol and not the other).
    pub fn for_protocol(&self, protocol: &str) -> Profile {
        let keep =
            |e: &&ProfileEntry| e.protocols.is_empty() || e.protocols.iter().any(|p| p == protocol);
        Profile {
            known_divergences: self
                .known_divergences
                .iter()
                .filter(keep)
                .cloned()
                .collect(),
            unsupported: self.unsupported.iter().filter(keep).cloned().collect(),
            ..self.clone()
        }
    }
}

/// Parses one profile file. Returns every problem found, not just the first.
pub fn parse_profile(path: &str, source: &str) -> Result<Profile, Vec<Diagnostic>> {
    parse_document(path, source, PROFILE_FILE, decode)
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

    // A case is either expected to diverge or not run at all, and listed once.
    let mut seen: BTreeMap<&str, Pos> = BTreeMap::new();
    let mut duplicates = Vec::new();
    for e in known_divergences.iter().chain(&unsupported) {
        match seen.get(e.case.as_str()) {
            Some(first) => duplicates.push(Diagnostic::new(
                r.path,
                e.pos,
                e.case.chars().count() as u32,
                format!(
                    "case `{}` is listed twice; first at line {}",
                    e.case, first.line
                ),
            )),
            None => {
                seen.insert(&e.case, e.pos);
            }
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

/// Maps a finished case through the profile.
///
/// A listed known divergence that failed becomes `known_divergence` with the profile's reason
/// and reference; one that passed stays a pass with a note asking whether it was fixed
/// upstream. Errors and inconclusive results are left alone: they show nothing about the
/// divergence either way — except an error of the teardown an entry pins (`teardown:`),
/// which is the divergence.
pub fn apply(profile: &Profile, mut end: CaseEnd) -> CaseEnd {
    let Some(entry) = profile.known_divergence(&end.case) else {
        return end;
    };
    match end.verdict {
        // A teardown error is a divergence only where the entry pins one.
        Verdict::Fail | Verdict::Error
            if end.verdict == Verdict::Fail || entry.teardown.is_some() =>
        {
            match explains(entry, &end) {
                Ok(()) => {
                    end.verdict = Verdict::KnownDivergence;
                    end.profile_note = Some(entry.note());
                }
                Err(why) => end.profile_note = Some(why),
            }
        }
        Verdict::Pass => end.profile_note = Some(NO_LONGER_OBSERVED.to_string()),
        _ => {}
    }
    end
}

/// Whether a failed case's findings are exactly the divergence the entry describes: all at
/// its step, and saying what it says the target answers there, and any teardown finding
/// saying what its `teardown:` says. `Err` says what differs.
fn explains(entry: &ProfileEntry, end: &CaseEnd) -> Result<(), String> {
    use crate::evidence::format::Finding;
    let at = |f: &&Finding| {
        !f.teardown
            && match entry.step {
                Some(StepPin::Case) => f.step.is_none(),
                Some(StepPin::At(n)) => f.step.map(|s| s as u32 + 1) == Some(n),
                // A teardown-only entry explains no step's finding.
                None => false,
            }
    };
    let pinned_at = match (entry.step, &entry.teardown) {
        (Some(StepPin::Case), _) => "case level".to_string(),
        (Some(StepPin::At(n)), _) => format!("step {n}"),
        (None, Some(_)) => "its teardown".to_string(),
        (None, None) => "no step".to_string(),
    };
    let elsewhere: Vec<&str> = end
        .findings
        .iter()
        // A teardown finding is the `teardown:` pin's to explain, if the entry has one.
        .filter(|f| !(at(f) || f.teardown && entry.teardown.is_some()))
        .map(|f| f.message.as_str())
        .collect();
    if !elsewhere.is_empty() {
        return Err(format!(
            "listed as a known divergence at {pinned_at}, but it failed elsewhere: {}",
            elsewhere.join("; ")
        ));
    }
    if let Some(text) = &entry.teardown {
        let other: Vec<&str> = end
            .findings
            .iter()
            .filter(|f| f.teardown && !f.message.contains(text.as_str()))
            .map(|f| f.message.as_str())
            .collect();
        if !other.is_empty() {
            return Err(format!(
                "listed as a known divergence whose teardown says {text:?}, but its teardown \
                 failed differently: {}",
                other.join("; ")
            ));
        }
    }
    if entry.step.is_none() {
        return Ok(());
    }
    let here: Vec<&Finding> = end.findings.iter().filter(at).collect();
    let said = entry
        .finding
        .as_deref()
        .is_none_or(|text| here.iter().any(|f| f.message.contains(text)));
    let answered = entry
        .answer
        .as_ref()
        .is_none_or(|a| here.iter().any(|f| a.matches(f.status, f.code.as_deref())));
    if said && answered {
        return Ok(());
    }
    let expected = match (&entry.finding, &entry.answer) {
        (Some(t), _) if !said => format!("a finding saying {t:?}"),
        (_, Some(a)) => format!(
            "the answer {}{}",
            a.status
                .map(|s| s.to_string())
                .unwrap_or_else(|| "any status".into()),
            a.code
                .as_deref()
                .map(|c| format!(" {c}"))
                .unwrap_or_default()
        ),
        _ => "what the profile pins".to_string(),
    };
    Err(format!(
        "listed as a known divergence at {pinned_at}, but it failed differently there (the \
         profile expects {expected}): {}",
        here.iter()
            .map(|f| f.message.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    ))
}

/// The `case_end` for a case the profile marks unsupported: it is written instead of running
/// the case (no `case_start`, no calls).
pub fn unsupported_end(
    profile: &Profile,
    run_id: &str,
    suite: &str,
    case: &str,
    at: &str,
) -> Option<CaseEnd> {
    let entry = profile.unsupported(case)?;
    Some(CaseEnd::unrun(
        run_id,
        suite,
        case,
        at,
        Verdict::Unsupported,
        format!(
            "not run: unsupported on target profile `{}`: {}",
            profile.target, entry.reason
        ),
        Some(entry.note()),
    ))
}

/// How a run's verdicts compare with what the profile expected.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ProfileChanges {
    /// Known divergences that showed as expected.
    pub confirmed: Vec<String>,
    /// Known divergences that passed: fixed upstream, or the case changed.
    pub no_longer_observed: Vec<String>,
    /// Failures and errors the profile does not list.
    pub newly_failing: Vec<String>,
    /// Cases not run because the profile marks them unsupported.
    pub unsupported: Vec<String>,
}

/// Sorts the run's finished cases against the profile.
pub fn changes<'a>(ends: impl IntoIterator<Item = &'a CaseEnd>) -> ProfileChanges {
    let mut c = ProfileChanges::default();
    for end in ends {
        let id = end.case.clone();
        match end.verdict {
            Verdict::KnownDivergence => c.confirmed.push(id),
            Verdict::Unsupported => c.unsupported.push(id),
            Verdict::Pass if end.profile_note.as_deref() == Some(NO_LONGER_OBSERVED) => {
                c.no_longer_observed.push(id)
            }
            Verdict::Fail | Verdict::Error => c.newly_failing.push(id),
            _ => {}
        }
    }
    c
}

impl ProfileChanges {
    /// Lines for the terminal, headed by the profile name; empty sections are left out.
    pub fn render(&self, profile: &str) -> String {
        let mut out = format!(
            "target profile `{profile}`: {} known divergence(s) observed, {} no longer observed, {} failing outside the profile, {} unsupported\n",
            self.confirmed.len(),
            self.no_longer_observed.len(),
            self.newly_failing.len(),
            self.unsupported.len()
        );
        for (title, ids) in [
            (
                "known divergence no longer observed (fixed upstream? remove it from the profile)",
                &self.no_longer_observed,
            ),
            ("failing, not in the profile", &self.newly_failing),
        ] {
            if !ids.is_empty() {
                out.push_str(&format!("  {title}:\n"));
                for id in ids {
                    out.push_str(&format!("    {id}\n"));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::evidence::format::Finding;

    const GOOD: &str = "\
target: moto
description: moto in server mode
versions: moto 5.1
known_divergences:
  - case: stale-handle-delete-after-lapse
    step: 3
    answer: {status: 400, code: ReceiptHandleIsInvalid}
    reason: moto answers ReceiptHandleIsInvalid with a different message
    reference: https://github.com/getmoto/moto/blob/master/moto/sqs/exceptions.py
unsupported:
  - case: move-task-start
    reason: moto has no message move tasks
    reference: https://github.com/getmoto/moto/issues/6980
";

    fn end(case: &str, verdict: Verdict) -> CaseEnd {
        let mut e = unsupported_end(
            &parse_profile("p.yaml", GOOD).unwrap(),
            "run-1",
            "suites/x.yaml",
            "move-task-start",
            "2026-01-01T00:00:00.000Z",
        )
        .unwrap();
        e.case = case.to_string();
        e.verdict = verdict;
        e.profile_note = None;
        e
    }

    #[test]
    fn an_empty_code_is_no_code() {
        let bare = Answer {
            status: Some(400),
            code: None,
        };
        assert!(bare.matches(Some(400), Some("")));
        assert!(bare.matches(Some(400), None));
        assert!(!bare.matches(Some(400), Some("InvalidAttributeName")));
        let coded = Answer {
            status: Some(400),
            code: Some("InvalidAttributeName".into()),
        };
        assert!(!coded.matches(Some(400), Some("")));
    }

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

    fn finding(step: usize, message: &str, status: u16, code: Option<&str>) -> Finding {
        Finding {
            step: Some(step),
            line: 10,
            message: format!("step {} (delete): {message}", step + 1),
            status: Some(status),
            code: code.map(str::to_string),
            teardown: false,
        }
    }

    fn failed_with(findings: Vec<Finding>) -> CaseEnd {
        let mut e = end("stale-handle-delete-after-lapse", Verdict::Fail);
        e.findings = findings;
        e
    }

    #[test]
    fn a_case_level_pin_explains_only_findings_without_a_step() {
        let text = GOOD.replace("    step: 3\n", "    step: case\n").replace(
            "    answer: {status: 400, code: ReceiptHandleIsInvalid}",
            "    finding: \"rate of observed_redelivery\"",
        );
        let p = parse_profile("p.yaml", &text).unwrap();
        assert_eq!(p.known_divergences[0].step, Some(StepPin::Case));
        let rate = Finding {
            step: None,
            line: 5,
            message: "rate of observed_redelivery in 15 of 15 trials".into(),
            status: None,
            code: None,
            teardown: false,
        };
        assert_eq!(
            apply(&p, failed_with(vec![rate.clone()])).verdict,
            Verdict::KnownDivergence
        );
        // The same words at a step are another failure, and so is a stepless finding that
        // says something else.
        let mut at_step = rate.clone();
        at_step.step = Some(2);
        assert_eq!(apply(&p, failed_with(vec![at_step])).verdict, Verdict::Fail);
        let mut other = rate;
        other.message = "trial 1: step 5 (delete): expected success".into();
        let kept = apply(&p, failed_with(vec![other]));
        assert_eq!(kept.verdict, Verdict::Fail);
        assert!(kept.profile_note.unwrap().contains("at case level"));
        let bad = GOOD.replace("    step: 3\n", "    step: somewhere\n");
        assert!(parse_profile("p.yaml", &bad).is_err());
    }

    fn teardown_finding(message: &str) -> Finding {
        Finding {
            step: None,
            line: 10,
            message: message.to_string(),
            status: None,
            code: None,
            teardown: true,
        }
    }

    /// sqslite never answers a DeleteQueue of a queue already gone: the case's teardown
    /// fails on it, and only a `teardown:` pin explains that.
    #[test]
    fn a_teardown_pin_explains_the_teardown_finding_and_nothing_else() {
        let moto = finding(2, "expected success", 400, Some("ReceiptHandleIsInvalid"));
        let hung = teardown_finding("failed to delete queue q-2 (in us-west-2): no answer");
        // Without the pin, a teardown finding is a failure elsewhere (and an error stays one).
        let p = parse_profile("p.yaml", GOOD).unwrap();
        let kept = apply(&p, failed_with(vec![moto.clone(), hung.clone()]));
        assert_eq!(kept.verdict, Verdict::Fail);
        assert!(kept.profile_note.unwrap().contains("failed elsewhere"));
        let mut errored = end("stale-handle-delete-after-lapse", Verdict::Error);
        errored.findings = vec![hung.clone()];
        assert_eq!(apply(&p, errored.clone()).verdict, Verdict::Error);

        // Pinned with the step: both are the divergence.
        let both = GOOD.replace(
            "    reason: moto answers",
            "    teardown: \"no answer\"\n    reason: moto answers",
        );
        let p = parse_profile("p.yaml", &both).unwrap();
        assert_eq!(
            p.known_divergences[0].teardown.as_deref(),
            Some("no answer")
        );
        assert_eq!(
            apply(&p, failed_with(vec![moto.clone(), hung.clone()])).verdict,
            Verdict::KnownDivergence
        );
        // A teardown that fails otherwise is not it.
        let refused =
            teardown_finding("failed to delete queue q-2 (in us-west-2): 403 AccessDenied");
        let kept = apply(&p, failed_with(vec![moto.clone(), refused]));
        assert_eq!(kept.verdict, Verdict::Fail);
        assert!(
            kept.profile_note
                .unwrap()
                .contains("teardown failed differently")
        );

        // A teardown-only pin: the error is the divergence; a step's failure is not.
        let only = GOOD.replace("    step: 3\n", "").replace(
            "    answer: {status: 400, code: ReceiptHandleIsInvalid}",
            "    teardown: \"no answer\"",
        );
        let p = parse_profile("p.yaml", &only).unwrap();
        assert_eq!(apply(&p, errored).verdict, Verdict::KnownDivergence);
        let kept = apply(&p, failed_with(vec![moto, hung]));
        assert_eq!(kept.verdict, Verdict::Fail);
        assert!(kept.profile_note.unwrap().contains("at its teardown"));

        // Unsupported entries take no teardown pin.
        let bad = GOOD.replace(
            "    reason: moto has no message move tasks",
            "    teardown: x\n    reason: moto has no message move tasks",
        );
        assert!(parse_profile("p.yaml", &bad).is_err());
    }

    #[test]
    fn a_pinned_divergence_explains_failures_at_its_step_only() {
        let p = parse_profile("p.yaml", GOOD).unwrap();
        let moto = finding(
            2,
            "expected success, got ReceiptHandleIsInvalid",
            400,
            Some("ReceiptHandleIsInvalid"),
        );
        assert_eq!(
            apply(&p, failed_with(vec![moto.clone()])).verdict,
            Verdict::KnownDivergence
        );
        let kept = apply(
            &p,
            failed_with(vec![moto, finding(4, "expected 1 message(s)", 200, None)]),
        );
        assert_eq!(kept.verdict, Verdict::Fail);
        assert!(
            kept.profile_note
                .unwrap()
                .contains("failed elsewhere: step 5")
        );
        let bad = GOOD.replace("    step: 3\n", "    step: 0\n");
        assert!(parse_profile("p.yaml", &bad).is_err());
    }

    #[test]
    fn a_different_answer_at_the_pinned_step_is_still_a_failure() {
        let p = parse_profile("p.yaml", GOOD).unwrap();
        let other = finding(
            2,
            "expected success, got InvalidParameterValue",
            400,
            Some("InvalidParameterValue"),
        );
        let kept = apply(&p, failed_with(vec![other]));
        assert_eq!(kept.verdict, Verdict::Fail);
        let note = kept.profile_note.unwrap();
        assert!(note.contains("failed differently there"), "{note}");
        assert!(note.contains("400 ReceiptHandleIsInvalid"), "{note}");
        // A success where the profile pins a refusal is different too.
        let ok = finding(2, "expected error X, but the call succeeded", 200, None);
        assert_eq!(apply(&p, failed_with(vec![ok])).verdict, Verdict::Fail);
    }

    #[test]
    fn answers_match_either_name_of_an_error_and_findings_by_text() {
        let by_shape = GOOD.replace(
            "answer: {status: 400, code: ReceiptHandleIsInvalid}",
            "answer: {code: QueueDoesNotExist}\n    finding: could not find",
        );
        let p = parse_profile("p.yaml", &by_shape).unwrap();
        let legacy = finding(
            2,
            "expected error X, got it: could not find DLQ",
            400,
            Some("AWS.SimpleQueueService.NonExistentQueue"),
        );
        assert_eq!(
            apply(&p, failed_with(vec![legacy.clone()])).verdict,
            Verdict::KnownDivergence
        );
        let mut unsaid = legacy;
        unsaid.message = "step 3 (delete): something else".into();
        assert_eq!(apply(&p, failed_with(vec![unsaid])).verdict, Verdict::Fail);
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
    fn apply_maps_known_divergences() {
        let p = parse_profile("p.yaml", GOOD).unwrap();
        let failed = apply(
            &p,
            failed_with(vec![finding(2, "x", 400, Some("ReceiptHandleIsInvalid"))]),
        );
        assert_eq!(failed.verdict, Verdict::KnownDivergence);
        assert_eq!(
            failed.profile_note.as_deref(),
            Some(
                "moto answers ReceiptHandleIsInvalid with a different message (https://github.com/getmoto/moto/blob/master/moto/sqs/exceptions.py)"
            )
        );
        let passed = apply(&p, end("stale-handle-delete-after-lapse", Verdict::Pass));
        assert_eq!(passed.verdict, Verdict::Pass);
        assert_eq!(passed.profile_note.as_deref(), Some(NO_LONGER_OBSERVED));
        let errored = apply(&p, end("stale-handle-delete-after-lapse", Verdict::Error));
        assert_eq!(
            (errored.verdict, errored.profile_note),
            (Verdict::Error, None)
        );
        let other = apply(&p, end("something-else", Verdict::Fail));
        assert_eq!((other.verdict, other.profile_note), (Verdict::Fail, None));
    }

    #[test]
    fn unsupported_cases_get_an_unsupported_end() {
        let p = parse_profile("p.yaml", GOOD).unwrap();
        let e = unsupported_end(&p, "r", "s.yaml", "move-task-start", "t").unwrap();
        assert_eq!(e.verdict, Verdict::Unsupported);
        assert_eq!(
            e.reason,
            "not run: unsupported on target profile `moto`: moto has no message move tasks"
        );
        assert!(unsupported_end(&p, "r", "s.yaml", "other", "t").is_none());
    }

    #[test]
    fn changes_sort_cases_against_the_profile() {
        let p = parse_profile("p.yaml", GOOD).unwrap();
        let ends = vec![
            apply(&p, end("stale-handle-delete-after-lapse", Verdict::Pass)),
            apply(&p, end("new-bug", Verdict::Fail)),
            end("fine", Verdict::Pass),
            unsupported_end(&p, "r", "s", "move-task-start", "t").unwrap(),
        ];
        let c = changes(&ends);
        assert_eq!(
            c.no_longer_observed,
            vec!["stale-handle-delete-after-lapse"]
        );
        assert_eq!(c.newly_failing, vec!["new-bug"]);
        assert_eq!(c.unsupported, vec!["move-task-start"]);
        assert!(c.confirmed.is_empty());
        let text = c.render("moto");
        assert!(text.starts_with("target profile `moto`: 0 known divergence(s) observed, 1 no longer observed, 1 failing outside the profile, 1 unsupported\n"), "{text}");
        assert!(text.contains("    new-bug\n"), "{text}");
    }

    #[test]
    fn shipped_profiles_parse_and_the_references_list_nothing() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("targets");
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
