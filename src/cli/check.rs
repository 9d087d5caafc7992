//! `sqsprobe check RUN_DIR`: a run folder re-judged from its `evidence.jsonl` alone.
//!
//! Every case is judged again from the `facts` records and the `case_start` expectations the
//! run wrote — one judge (`classify::judge`), the trials pooled by the same rule
//! (`classify::trials`), mapped through the same target profile — and the run's exit code is
//! derived again from the verdicts and the stop `run_end` records. What the run printed and
//! what the evidence supports must agree: `check` prints each case's verdict, decision and
//! intervals as re-judged, says where they differ from what was recorded, and exits with the
//! re-derived code when everything agrees. A disagreement, or a folder it cannot re-judge (a
//! case with no facts: a file written before they were recorded), is a harness error (3),
//! said case by case: a verdict that cannot be re-derived from its evidence is not one to
//! trust.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sqsprobe_core::classify::{self, Judgement, StopReason, recorded};
use sqsprobe_core::conformance;
use sqsprobe_core::conformance::profile::Profile;
use sqsprobe_core::evidence::format::{Call, CaseEnd, Phase, RunEnd, RunStart, Verdict};
use sqsprobe_core::evidence::view::{CaseView, RunView};

use super::args::CheckArgs;
use super::error::{CommandError, Outcome};

/// What `check` found for one case.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct CaseCheck {
    pub case: String,
    /// The verdict as re-judged, or `None` when it could not be.
    pub verdict: Option<Verdict>,
    /// The decision and class re-judged (single-run cases).
    pub decision: Option<String>,
    pub class: Option<String>,
    /// A multi-trial case's pooled counts and intervals, re-judged.
    pub trials: Option<String>,
    /// Where the recorded case differs from the re-judged one, one line each.
    pub differences: Vec<String>,
    /// Why it could not be re-judged.
    pub cannot: Option<String>,
}

/// The whole folder, re-judged.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RunCheck {
    pub cases: Vec<CaseCheck>,
    /// The exit code derived again, and the one `run_end` recorded (absent: the run did not
    /// finish).
    pub exit_code: i32,
    pub recorded_exit_code: Option<i32>,
    /// Notes about the folder as a whole (a run that did not finish, a merged folder).
    pub notes: Vec<String>,
}

impl RunCheck {
    /// Whether every case was re-judged and agrees, and so does the exit code.
    pub(super) fn agrees(&self) -> bool {
        self.cases
            .iter()
            .all(|c| c.cannot.is_none() && c.differences.is_empty())
            && self.recorded_exit_code.is_none_or(|r| r == self.exit_code)
    }
}

/// Runs the command: the run's own code when the evidence supports it.
pub(super) fn check(args: CheckArgs) -> Result<Outcome, CommandError> {
    if crate::audit::check::is_audit_folder(&args.run_dir) {
        return check_audit(&args.run_dir);
    }
    let path = evidence_path(&args.run_dir);
    let evidence = sqsprobe_core::evidence::read_run(&path)
        .map_err(|e| CommandError::Evidence(e.to_string()))?;
    for w in &evidence.warnings {
        eprintln!("sqsprobe: warning: {}:{w}", path.display());
    }
    let view = RunView::new(&evidence.records);
    let profile = load_profile(view.start, args.target_profile.as_deref())
        .map_err(CommandError::CheckProfile)?;
    let result = check_run(&view, profile.as_ref());
    print!("{}", render(&result, &path));
    if result.agrees() {
        Ok(Outcome::Verdict(result.exit_code))
    } else {
        Err(CommandError::CheckDisagrees { audit: false })
    }
}

/// An audit folder: judged again from its evidence, compared with its `audit.json`; its exit
/// code when they agree, 3 when they do not or it cannot be re-judged.
fn check_audit(dir: &Path) -> Result<Outcome, CommandError> {
    let checks = crate::audit::check::check(dir).map_err(CommandError::Evidence)?;
    print!("{}", crate::audit::check::render(&checks));
    if checks.iter().all(|c| c.differences.is_empty()) {
        Ok(Outcome::Verdict(crate::audit::check::exit_code(&checks)))
    } else {
        Err(CommandError::CheckDisagrees { audit: true })
    }
}

/// The target profile the run was mapped through: `--target-profile`, else the one its
/// `run_start` names. A run that had one and whose profile cannot be read is not re-judged.
fn load_profile(start: Option<&RunStart>, given: Option<&str>) -> Result<Option<Profile>, String> {
    let Some(start) = start else {
        return Ok(None);
    };
    let Some(name) = start.target_profile.as_deref() else {
        return Ok(None);
    };
    let source = given
        .or(start.target_profile_source.as_deref())
        .unwrap_or(name);
    let profile = super::profile::read(source).map_err(|why| {
        format!(
            "the run was mapped through target profile `{name}`, which cannot be read again \
             ({why}); name it with --target-profile"
        )
    })?;
    Ok(Some(profile.for_protocol(start.protocol.as_str())))
}

/// Re-judges every case of `view` and derives the run's exit code again.
pub(super) fn check_run(view: &RunView<'_>, profile: Option<&Profile>) -> RunCheck {
    let mut cases = Vec::new();
    let mut verdicts = Vec::new();
    for case in &view.cases {
        let Some(end) = case.end else {
            // Started and never closed (a killed run), or never started: nothing was judged,
            // and nothing counts toward the exit code.
            continue;
        };
        let c = check_case(case, end, view.end, profile);
        verdicts.push(c.verdict.unwrap_or(end.verdict));
        cases.push(c);
    }
    let mut notes = Vec::new();
    let planned = view.start.map_or(0, |s| s.cases.len());
    let exit_code = match view.end {
        Some(end) => run_exit_code(end, &verdicts, planned, &mut notes),
        None => {
            notes.push(
                "the run did not finish (no run_end): the exit code below is what its finished \
                 cases come to"
                    .to_string(),
            );
            classify::exit_code(&verdicts)
        }
    };
    if view.start.is_some_and(|s| s.merged.is_some()) {
        notes.push(
            "a merged folder: its exit code is the worst of its partitions'; check each \
             partition's folder to re-derive theirs"
                .to_string(),
        );
    }
    let merged = view.start.is_some_and(|s| s.merged.is_some());
    RunCheck {
        cases,
        exit_code: if merged {
            view.end.map_or(exit_code, |e| e.exit_code)
        } else {
            exit_code
        },
        recorded_exit_code: view.end.map(|e| e.exit_code),
        notes,
    }
}

/// The run's exit code from its re-judged verdicts, the queues it may have left, and the stop
/// `run_end` records.
fn run_exit_code(
    end: &RunEnd,
    verdicts: &[Verdict],
    planned: usize,
    notes: &mut Vec<String>,
) -> i32 {
    let stop = match &end.stop {
        Some(s) => match recorded::stop_of(s) {
            Ok(s) => Some(s),
            Err(why) => {
                notes.push(format!("run_end.stop does not read back ({why})"));
                None
            }
        },
        // Files written before the stop was typed: an interruption is still said.
        None if end.interrupted => Some(StopReason::Interrupted),
        None => None,
    };
    let mut all = verdicts.to_vec();
    if !end.left_queues.is_empty() {
        all.push(Verdict::Error);
    }
    // A run that planned cases and closed none never reached its plan (the target was not
    // reachable): nothing was judged, which is an error, never a pass.
    if planned > 0 && verdicts.is_empty() && stop.is_none() {
        all.push(Verdict::Error);
    }
    classify::run_exit_code(stop.as_ref(), &all)
}

fn check_case(
    case: &CaseView<'_>,
    end: &CaseEnd,
    run_end: Option<&RunEnd>,
    profile: Option<&Profile>,
) -> CaseCheck {
    let mut out = CaseCheck {
        case: case.id.to_string(),
        verdict: None,
        decision: None,
        class: None,
        trials: None,
        differences: Vec::new(),
        cannot: None,
    };
    let Some(start) = case.start else {
        // Closed without a run of its own: skipped (unsupported), kept from starting by the
        // run's stop, or its task failed. Its verdict is the skip's or the stop's, never a pass.
        let stop = run_end
            .and_then(|e| e.stop.as_ref())
            .and_then(|s| recorded::stop_of(s).ok());
        let derived = match end.verdict {
            Verdict::Unsupported => Verdict::Unsupported,
            _ => match &stop {
                Some(stop) if end.reason.starts_with("not run: the run stopped") => stop.verdict(),
                _ => Verdict::Error,
            },
        };
        out.verdict = Some(derived);
        if derived != end.verdict {
            out.differences.push(format!(
                "a case that never ran is recorded {}, its evidence supports {}",
                end.verdict.as_str(),
                derived.as_str()
            ));
        }
        return out;
    };
    let expect = start.expect.as_ref();
    let rejudged = if start.trials.is_some() {
        pooled_case(case, end, expect, start.line, &mut out)
    } else {
        single_case(case, end, expect, &mut out)
    };
    let Some(rejudged) = rejudged else {
        return out;
    };
    let mapped = match profile {
        Some(p) => conformance::apply(p, rejudged),
        None => rejudged,
    };
    out.verdict = Some(mapped.verdict);
    compare(end, &mapped, &mut out.differences);
    out
}

/// A single-run case: its one `facts` record judged.
fn single_case(
    case: &CaseView<'_>,
    end: &CaseEnd,
    expect: Option<&sqsprobe_core::evidence::format::ExpectRecord>,
    out: &mut CaseCheck,
) -> Option<CaseEnd> {
    let facts: Vec<_> = case.facts.iter().filter(|f| f.trial.is_none()).collect();
    let [record] = facts.as_slice() else {
        out.cannot = Some(match facts.len() {
            0 => "no `facts` record (written by a sqsprobe that did not record them, or cut \
                  before its judgement)"
                .to_string(),
            n => format!("{n} `facts` records for one case"),
        });
        return None;
    };
    let judged = match recorded::facts_from_record(record, expect) {
        Ok(f) => classify::judge(&with_history(f, case, None, out)),
        Err(why) => {
            out.cannot = Some(format!("its facts do not read back: {why}"));
            return None;
        }
    };
    out.decision = judged.decision.map(|d| d.as_str().to_string());
    out.class = judged.class.map(|c| c.as_str().to_string());
    Some(CaseEnd {
        verdict: judged.verdict,
        reason: judged.reason,
        findings: judged.findings,
        classification: judged.class.map(recorded::class_name),
        decision: judged.decision,
        profile_note: None,
        ..end.clone()
    })
}

/// A multi-trial case: each trial's `facts` judged, then pooled.
fn pooled_case(
    case: &CaseView<'_>,
    end: &CaseEnd,
    expect: Option<&sqsprobe_core::evidence::format::ExpectRecord>,
    line: u32,
    out: &mut CaseCheck,
) -> Option<CaseEnd> {
    let Some(recorded_trials) = &end.trials else {
        out.cannot = Some("a multi-trial case whose case_end pools no trials".to_string());
        return None;
    };
    let planned = case
        .start
        .and_then(|s| s.trials)
        .unwrap_or(recorded_trials.n);
    let mut judged: Vec<Judgement> = Vec::new();
    for t in &recorded_trials.per_trial {
        let facts: Vec<_> = case
            .facts
            .iter()
            .filter(|f| f.trial == Some(t.trial))
            .collect();
        match facts.as_slice() {
            [record] => match recorded::facts_from_record(record, expect) {
                Ok(f) => judged.push(classify::judge(&with_history(f, case, Some(t.trial), out))),
                Err(why) => {
                    out.cannot = Some(format!(
                        "trial {}: its facts do not read back: {why}",
                        t.trial
                    ));
                    return None;
                }
            },
            // A trial whose task failed has no judgement of its own: an error, as the run
            // counted it.
            [] if t.verdict == Verdict::Error && t.class.is_none() => {
                judged.push(Judgement::task_failed("its task failed".to_string()))
            }
            [] => {
                out.cannot = Some(format!("trial {}: no `facts` record", t.trial));
                return None;
            }
            _ => {
                out.cannot = Some(format!("trial {}: more than one `facts` record", t.trial));
                return None;
            }
        }
    }
    let (outcome, rate, _) = match recorded::expectations_of(expect) {
        Ok(e) => e,
        Err(why) => {
            out.cannot = Some(format!("its expectations do not read back: {why}"));
            return None;
        }
    };
    let mut pooled = classify::trials::pool(&judged, outcome.as_ref(), rate.as_ref(), line);
    let not_run = planned.saturating_sub(judged.len() as u32);
    classify::trials::account_not_run(&mut pooled, not_run, planned, line);
    out.trials = Some(classify::trials::tally(&pooled.trials));
    Some(CaseEnd {
        verdict: pooled.verdict,
        reason: pooled.reason,
        findings: pooled.findings,
        trials: Some(pooled.trials),
        profile_note: None,
        ..end.clone()
    })
}

/// The facts with their acknowledgements, and the messages none took, read from the case's
/// (or the trial's) `call` rows, as the run reads them: the history decides, and a `facts` record that counted them
/// otherwise is a difference. Rows written before receives recorded their lease cannot be
/// read for it; the record's counts stand.
fn with_history(
    mut facts: classify::CaseFacts,
    case: &CaseView<'_>,
    trial: Option<u32>,
    out: &mut CaseCheck,
) -> classify::CaseFacts {
    let rows: Vec<&Call> = case
        .calls
        .iter()
        .copied()
        .filter(|c| c.trial == trial && c.phase != Phase::Consumer)
        .collect();
    let unleased = rows
        .iter()
        .any(|c| c.action == "ReceiveMessage" && !c.messages.is_empty() && c.lease_ms.is_none());
    if unleased {
        return facts;
    }
    let which = trial.map(|t| format!("trial {t}: ")).unwrap_or_default();
    let mut differ = |what: &str, recorded: String, read: String| {
        out.differences.push(format!(
            "{which}the facts record {what} {recorded}, the call rows show {read}"
        ));
    };
    let read = classify::ack_history::ack_facts(&rows);
    if read != facts.acks {
        differ(
            "counts the acknowledgements",
            format!("{:?}", facts.acks),
            format!("{read:?}"),
        );
        facts.acks = read;
    }
    // The messages no acknowledgement took: from the same rows, by the run's own reading.
    let unacknowledged = classify::ack_history::unacknowledged(&rows);
    if unacknowledged != facts.unacknowledged {
        differ(
            "names the unacknowledged messages",
            format!("{:?}", facts.unacknowledged),
            format!("{unacknowledged:?}"),
        );
        facts.unacknowledged = unacknowledged;
    }
    facts
}

/// What differs between the recorded `case_end` and the re-judged one.
fn compare(recorded: &CaseEnd, rejudged: &CaseEnd, differences: &mut Vec<String>) {
    let mut differ = |what: &str, r: String, j: String| {
        if r != j {
            differences.push(format!("{what}: recorded {r}, re-judged {j}"));
        }
    };
    differ(
        "verdict",
        recorded.verdict.as_str().to_string(),
        rejudged.verdict.as_str().to_string(),
    );
    differ(
        "decision",
        format!("{:?}", recorded.decision),
        format!("{:?}", rejudged.decision),
    );
    differ(
        "class",
        format!("{:?}", recorded.classification),
        format!("{:?}", rejudged.classification),
    );
    differ("reason", recorded.reason.clone(), rejudged.reason.clone());
    let messages = |e: &CaseEnd| {
        e.findings
            .iter()
            .map(|f| f.message.clone())
            .collect::<Vec<_>>()
    };
    // A trial whose task failed is named by its panic in the run and not in the evidence.
    let failed_task = rejudged.trials.as_ref().is_some_and(|t| {
        t.per_trial
            .iter()
            .any(|p| p.verdict == Verdict::Error && p.class.is_none())
    });
    if !failed_task {
        differ(
            "findings",
            format!("{:?}", messages(recorded)),
            format!("{:?}", messages(rejudged)),
        );
    }
    differ(
        "profile note",
        format!("{:?}", recorded.profile_note),
        format!("{:?}", rejudged.profile_note),
    );
    if let (Some(r), Some(j)) = (&recorded.trials, &rejudged.trials) {
        differ(
            "trial counts",
            format!("{:?} of n={}", r.counts, r.n),
            format!("{:?} of n={}", j.counts, j.n),
        );
        differ(
            "intervals",
            format!("{:?}", r.intervals),
            format!("{:?}", j.intervals),
        );
        let per = |t: &sqsprobe_core::evidence::format::Trials| {
            t.per_trial
                .iter()
                .map(|p| (p.trial, p.verdict.as_str(), p.class))
                .collect::<Vec<_>>()
        };
        differ("trials", format!("{:?}", per(r)), format!("{:?}", per(j)));
    }
}

/// The text `check` prints.
pub(super) fn render(result: &RunCheck, path: &Path) -> String {
    let mut out = String::new();
    let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
    for c in &result.cases {
        let verdict = c.verdict.map_or("UNJUDGED", |v| match v {
            Verdict::Pass => "PASS",
            Verdict::Unsupported => "UNSUPPORTED",
            Verdict::KnownDivergence => "KNOWN",
            Verdict::Inconclusive => "INCONCLUSIVE",
            Verdict::Error => "ERROR",
            Verdict::Fail => "FAIL",
        });
        let mut line = format!("{verdict:>13} {}", c.case);
        if let Some(class) = &c.class {
            line.push_str(&format!("  {class}"));
        }
        if let Some(d) = &c.decision {
            line.push_str(&format!(" → {d}"));
        }
        if let Some(t) = &c.trials {
            line.push_str(&format!("  trials: {t}"));
        }
        let state = if let Some(why) = &c.cannot {
            *counts.entry("cannot be re-judged").or_default() += 1;
            format!("  CANNOT RE-JUDGE: {why}")
        } else if c.differences.is_empty() {
            *counts.entry("agree").or_default() += 1;
            String::new()
        } else {
            *counts.entry("differ").or_default() += 1;
            format!("  DIFFERS: {}", c.differences.join("; "))
        };
        out.push_str(&sqsprobe_facts::text::escape::terminal(&format!(
            "{line}{state}"
        )));
        out.push('\n');
    }
    for note in &result.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    let tally: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    out.push_str(&format!(
        "{} case(s) re-judged from {}: {}\n",
        result.cases.len(),
        path.display(),
        if tally.is_empty() {
            "none".to_string()
        } else {
            tally.join(", ")
        }
    ));
    match result.recorded_exit_code {
        Some(r) if r == result.exit_code => out.push_str(&format!(
            "exit {}: the evidence gives the exit code the run recorded\n",
            result.exit_code
        )),
        Some(r) => out.push_str(&format!(
            "exit code DIFFERS: the run recorded {r}, the evidence gives {}\n",
            result.exit_code
        )),
        None => out.push_str(&format!(
            "exit {}: re-derived (the run recorded none)\n",
            result.exit_code
        )),
    }
    out.push_str(if result.agrees() {
        "check: the evidence supports every verdict the run recorded\n"
    } else {
        "check: the evidence does NOT support what the run recorded (exit 3)\n"
    });
    out
}

/// The evidence file of a run folder, or the file itself.
pub(super) fn evidence_path(dir: &Path) -> PathBuf {
    if dir.is_dir() {
        dir.join("evidence.jsonl")
    } else {
        dir.to_path_buf()
    }
}
