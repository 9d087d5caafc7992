//! The judge: one pure function from what a case run gathered to its verdict.
//!
//! The runner only gathers facts — each step's check, the tracked messages of the last
//! observation window with what is known of their sends and deliveries, how the window and
//! the case ended, the acknowledgements — and [`judge`] decides everything else: the class of
//! each message, the case's class, the playbook decision, the verdict, its reason and findings.
//! Keeping it here, away from the SDK, is what lets every honesty rule have a unit test.

use crate::evidence::format::{Finding, Verdict};
use crate::suite::model::{AllowedClasses, OutcomeClass, OutcomeExpect};
use sqsprobe_facts::decision::Decision;

use super::decision::{AckFacts, decide, decide_case};
use super::outcome::{self, CutReason, TrackedMessage, WindowEnd};
use super::stop::StopReason;
use super::verdict::{VerdictFacts, verdict};

/// What a step's check concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    Pass,
    /// Each string is one unmet expectation (a definite answer that differs from the suite).
    Fail(Vec<String>),
    /// Why the step's outcome cannot be judged (no definite answer, a doubt in the window).
    Inconclusive(String),
    /// The harness or the target broke (a reference that could not be resolved, credentials
    /// refused): nothing about SQS was judged.
    Error(String),
}

/// One step that ran, with its check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepResult {
    /// 0-based index in the case.
    pub index: usize,
    pub line: u32,
    /// The step keyword (`delete`), for findings.
    pub keyword: String,
    pub check: Check,
    /// The answer of the step's (last) call: its HTTP status and error code, when the step
    /// made one call. Its findings carry it, so a target profile can pin what was answered.
    pub status: Option<u16>,
    pub code: Option<String>,
}

/// The facts of one observation window (the case's last `observe`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowFacts {
    /// The observe step's index and line.
    pub step: usize,
    pub line: u32,
    pub planned_ms: u64,
    pub elapsed_ms: u64,
    pub receives_used: u32,
    pub receive_budget: u32,
    /// How it ended; `None` while still open, when a stop cut the case in the middle of it
    /// (its partial evidence is judged with the stop as the cut).
    pub end: Option<WindowEnd>,
    /// Receive attempts in the window without a definite answer, hidden retries included.
    pub unknown_receives: u32,
    /// Of `unknown_receives`, those whose answer a fault of the case took.
    pub faulted_receives: u32,
    /// Polls of the window made with WaitTimeSeconds 0 (`wait: 0s`): silence over them is no
    /// evidence.
    pub short_polls: u32,
    /// Messages the window saw that it could place as none of the case's.
    pub untracked_sightings: u32,
    /// Messages tracked, in tracking order.
    pub tracked: Vec<TrackedMessage>,
    /// Integrity problems the harness found in the window (an MD5 that does not match).
    pub integrity: Vec<String>,
    /// The observe step has an `outcome:` of its own: a doubt in the window is then never
    /// what the case expects.
    pub expects_outcome: bool,
}

impl WindowFacts {
    /// How the window ended, the stop that cut it when it was still open.
    pub fn resolved_end(&self, stop: Option<&StopReason>) -> WindowEnd {
        match (&self.end, stop) {
            (Some(end), _) => end.clone(),
            (None, Some(stop)) => WindowEnd::Cut(CutReason::Stopped(stop.clone())),
            (None, None) => WindowEnd::Cut(CutReason::Stopped(StopReason::Interrupted)),
        }
    }
}

/// One tracked message, judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgedMessage {
    pub label: String,
    pub message_id: Option<String>,
    pub class: OutcomeClass,
    /// Why, for `inconclusive`.
    pub reason: Option<String>,
    /// The case's own fault made its doubt (see [`outcome::Doubt`]).
    pub doubt_faulted: bool,
    pub sightings: u32,
}

/// A window's classes, and the class of the whole observation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowJudgement {
    pub end: WindowEnd,
    pub messages: Vec<JudgedMessage>,
    pub class: Option<OutcomeClass>,
}

/// Classifies every tracked message of a window.
pub fn judge_window(window: &WindowFacts, stop: Option<&StopReason>) -> WindowJudgement {
    let end = window.resolved_end(stop);
    let messages: Vec<JudgedMessage> = window
        .tracked
        .iter()
        .map(|m| {
            let watch = outcome::Watch {
                unknown_receives: window.unknown_receives,
                short_polls: window.short_polls,
                untracked_sightings: window.untracked_sightings,
                faulted_receives: window.faulted_receives,
            };
            let (class, doubt) = outcome::classify_doubt(m, &end, &watch);
            JudgedMessage {
                label: m.label.clone(),
                message_id: m.message_id.clone(),
                class,
                doubt_faulted: doubt.as_ref().is_some_and(|d| d.faulted),
                reason: doubt.map(|d| d.why),
                sightings: m.sightings,
            }
        })
        .collect();
    let class = outcome::overall(messages.iter().map(|m| m.class));
    WindowJudgement {
        end,
        messages,
        class,
    }
}

/// The check of an observe step: its integrity, then its `outcome:` expectation if it has one;
/// without one, any inconclusive message makes the step inconclusive (the case stops there).
pub fn check_window(window: &WindowFacts, expect: Option<&OutcomeExpect>) -> Check {
    if !window.integrity.is_empty() {
        // A body that does not match its MD5 fails the case wherever it is received.
        return Check::Fail(window.integrity.clone());
    }
    let judged = judge_window(window, None);
    match expect {
        Some(expect) => compare_outcomes(expect, &judged.messages),
        None => unsure(&judged.messages).map_or(Check::Pass, Check::Inconclusive),
    }
}

fn unsure(messages: &[JudgedMessage]) -> Option<String> {
    let reasons: Vec<String> = messages
        .iter()
        .filter(|m| m.class == OutcomeClass::Inconclusive)
        .map(|m| {
            m.reason
                .clone()
                .unwrap_or_else(|| format!("{} is inconclusive", m.label))
        })
        .collect();
    (!reasons.is_empty()).then(|| dedup_join(reasons))
}

fn dedup_join(mut reasons: Vec<String>) -> String {
    let mut seen = std::collections::HashSet::new();
    reasons.retain(|r| seen.insert(r.clone()));
    reasons.join("; ")
}

/// Compares judged messages with an `outcome:` expectation. A mismatch against a definite
/// class fails; an inconclusive message defers (never a pass, never a failure).
pub fn compare_outcomes(expect: &OutcomeExpect, got: &[JudgedMessage]) -> Check {
    let wanted: Vec<(String, &AllowedClasses)> = match expect {
        OutcomeExpect::All(c) => got.iter().map(|m| (m.label.clone(), &c.value)).collect(),
        OutcomeExpect::PerMessage(map) => map.iter().map(|(l, c)| (l.clone(), &c.value)).collect(),
    };
    if wanted.is_empty() {
        // An expectation over no message is met by nothing the window saw: never a pass.
        return Check::Inconclusive(
            "the observation tracked no message (none was sent before it), so its outcome \
             proves nothing"
                .to_string(),
        );
    }
    let mut failures = Vec::new();
    let mut doubts = Vec::new();
    for (label, want) in wanted {
        match got.iter().find(|m| m.label == label) {
            None => failures.push(format!(
                "message {label} was not tracked by the observation"
            )),
            Some(m) if m.class == OutcomeClass::Inconclusive => doubts.push(
                m.reason
                    .clone()
                    .unwrap_or_else(|| format!("outcome of {label} is inconclusive")),
            ),
            Some(m) if !want.allows(m.class) => failures.push(format!(
                "expected {label}: {}, observed {}",
                want.describe(),
                m.class.as_str()
            )),
            Some(_) => {}
        }
    }
    if !failures.is_empty() {
        Check::Fail(failures)
    } else if !doubts.is_empty() {
        Check::Inconclusive(dedup_join(doubts))
    } else {
        Check::Pass
    }
}

/// Everything the runner gathered about one case.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CaseFacts {
    /// Line of the case's `id:` (findings that belong to no step point here).
    pub line: u32,
    /// Setup could not create the case's queues (the harness error).
    pub setup_error: Option<String>,
    /// Every step that ran, in order, with its check.
    pub steps: Vec<StepResult>,
    /// How many steps the case has: those past the last that ran never ran, and their
    /// expectations were never checked (0: not recorded, read as every step ran).
    pub steps_planned: usize,
    /// What stopped the case from outside its steps, if anything.
    pub stopped: Option<StopReason>,
    /// The case's last observation window, if an observe step started.
    pub window: Option<WindowFacts>,
    /// The case-level `expect: {outcome}` (applies to the last window).
    pub expect_outcome: Option<OutcomeExpect>,
    /// The case-level `expect: {decision}`: the playbook decisions the case allows.
    pub expect_decision: Option<Vec<Decision>>,
    pub acks: AckFacts,
    /// Messages a receive step of the case returned (by label, or MessageId for one it cannot
    /// place) of which no acknowledgement took effect: each is explained only when the
    /// observation saw it again, else ACCEPT is not the decision.
    pub unacknowledged: Vec<String>,
    /// Harness errors while tearing down (a queue that could not be deleted).
    pub teardown_errors: Vec<String>,
    /// Calls of the case whose answer its own faults changed (an injected timeout, throttle,
    /// error, reset or lost answer, a `deny` that denied).
    pub faults_fired: u32,
    /// Of the acknowledgements refused or left without a definite answer (`acks.failed_acks`,
    /// `acks.unknown_acks`), those whose answer the case's own fault made: an expected HOLD
    /// the acknowledgements decided is credited to the fault only when one is.
    pub faulted_acks: u32,
}

/// The judge's answer for one case.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub verdict: Verdict,
    /// The class of the last observation, the least certain over its messages.
    pub class: Option<OutcomeClass>,
    /// The last window's end, resolved (a stop that cut it included).
    pub window_end: Option<WindowEnd>,
    pub messages: Vec<JudgedMessage>,
    pub decision: Option<Decision>,
    /// One sentence: the first finding, or what held.
    pub reason: String,
    pub findings: Vec<Finding>,
    /// The expectations the case could not check besides its observation's class: a step's
    /// doubt (the observe step's own `outcome:` included), a decision it could not settle,
    /// steps that never ran. A trial's class is pooled with the other trials'
    /// (`super::trials::pool`) and its doubt accounted for there; nothing pools these, so a
    /// trial with any leaves its case unknown.
    pub unchecked: Vec<String>,
}

impl Judgement {
    /// The judgement of a trial whose task failed before it could judge itself: an error,
    /// with nothing observed.
    pub fn task_failed(reason: String) -> Judgement {
        Judgement {
            verdict: Verdict::Error,
            class: None,
            window_end: None,
            messages: Vec::new(),
            decision: None,
            reason,
            findings: Vec::new(),
            unchecked: Vec::new(),
        }
    }
}

/// Whether a doubt in the case's last window is what the case expects: it allows `HOLD`,
/// expects no outcome (at case level or on the observe step), and the window was watched to its
/// end (a cut window, a stop or an integrity problem is never expected).
fn doubt_is_expected(facts: &CaseFacts) -> bool {
    facts
        .expect_decision
        .as_ref()
        .is_some_and(|d| d.contains(&Decision::Hold))
        && facts.expect_outcome.is_none()
        && facts.stopped.is_none()
        && facts.window.as_ref().is_some_and(|w| {
            !w.expects_outcome
                && w.integrity.is_empty()
                && matches!(w.end, Some(WindowEnd::Completed | WindowEnd::AllSeen))
        })
}

/// Judges one case from its facts.
pub fn judge(facts: &CaseFacts) -> Judgement {
    let mut findings = Vec::new();
    let mut v = VerdictFacts::default();
    let finding = |step: Option<usize>, line: u32, message: String| Finding {
        step,
        line,
        message,
        status: None,
        code: None,
        teardown: false,
    };
    let answered = |step: &StepResult, message: String| Finding {
        step: Some(step.index),
        line: step.line,
        message,
        status: step.status,
        code: step.code.clone(),
        teardown: false,
    };

    if let Some(error) = &facts.setup_error {
        v.errored = true;
        findings.push(finding(None, facts.line, error.clone()));
    }
    let expected_doubt = doubt_is_expected(facts);
    let mut held_doubt = None;
    let mut window_step_checked = false;
    let mut unchecked = Vec::new();
    for step in &facts.steps {
        let prefix = format!("step {} ({})", step.index + 1, step.keyword);
        let is_window = facts.window.as_ref().is_some_and(|w| w.step == step.index);
        // The observe step's doubt is its window's class, which trials pool; an `outcome:` of
        // the step's own is an expectation like any other step's.
        let class_doubt = is_window && facts.window.as_ref().is_some_and(|w| !w.expects_outcome);
        if is_window {
            window_step_checked = step.check != Check::Pass;
        }
        match &step.check {
            Check::Pass => {}
            Check::Inconclusive(why) if is_window && expected_doubt => {
                held_doubt = Some(why.clone());
            }
            Check::Fail(failures) => {
                v.failed = true;
                for f in failures {
                    findings.push(answered(step, format!("{prefix}: {f}")));
                }
            }
            Check::Inconclusive(why) => {
                v.inconclusive = true;
                if !class_doubt {
                    unchecked.push(format!("{prefix}: {why}"));
                }
                findings.push(answered(step, format!("{prefix}: {why}")));
            }
            Check::Error(why) => {
                v.errored = true;
                findings.push(answered(step, format!("{prefix}: {why}")));
            }
        }
    }
    let ran = facts.steps.len();
    if facts.setup_error.is_none() && facts.steps_planned > ran {
        unchecked.push(never_ran(ran, facts.steps_planned));
    }
    if let Some(stop) = &facts.stopped {
        match stop.verdict() {
            Verdict::Error => v.errored = true,
            _ => v.inconclusive = true,
        }
        findings.push(finding(None, facts.line, stop.finding()));
    }

    let judged = facts
        .window
        .as_ref()
        .map(|w| judge_window(w, facts.stopped.as_ref()));
    // The case-level expectation, unless a definite finding already decided the case or the
    // window's own step already reported on this window.
    if let Some(expect) = &facts.expect_outcome
        && !v.failed
        && !v.errored
    {
        match &judged {
            Some(j) if !window_step_checked => match compare_outcomes(expect, &j.messages) {
                Check::Pass => {}
                Check::Fail(failures) => {
                    v.failed = true;
                    for f in failures {
                        findings.push(finding(None, facts.line, f));
                    }
                }
                Check::Inconclusive(why) | Check::Error(why) => {
                    v.inconclusive = true;
                    findings.push(finding(None, facts.line, why));
                }
            },
            Some(_) => {}
            None => {
                v.inconclusive = true;
                findings.push(finding(
                    None,
                    facts.line,
                    "the case expects an outcome, but its observe step never ran".to_string(),
                ));
            }
        }
    }
    for error in &facts.teardown_errors {
        v.errored = true;
        findings.push(Finding {
            teardown: true,
            ..finding(None, facts.line, error.clone())
        });
    }

    let class = judged.as_ref().and_then(|j| j.class);
    let seen_again = |label: &String| {
        judged.as_ref().is_some_and(|j| {
            j.messages
                .iter()
                .any(|m| &m.label == label && m.sightings > 0)
        })
    };
    let unexplained: Vec<&str> = facts
        .unacknowledged
        .iter()
        .filter(|l| !seen_again(l))
        .map(String::as_str)
        .collect();
    let decision = decide_case(class, facts.acks, unexplained.len() as u32);
    // What held an ACCEPT back, when only the unacknowledged messages did.
    let held_back = if decision != decide(class, facts.acks) {
        format!(
            " (received, and neither acknowledged nor seen again: {})",
            unexplained.join(", ")
        )
    } else {
        String::new()
    };
    let wanted = |allowed: &[Decision]| {
        allowed
            .iter()
            .map(|d| d.as_str())
            .collect::<Vec<_>>()
            .join(" or ")
    };
    if let Some(allowed) = &facts.expect_decision
        && !v.failed
        && !v.errored
        && v.inconclusive
    {
        unchecked.push(format!(
            "expected decision {}: not checked, the case is already undecided",
            wanted(allowed)
        ));
    }
    if let Some(allowed) = &facts.expect_decision
        && !v.failed
        && !v.errored
        && !v.inconclusive
    {
        let wanted = wanted(allowed);
        match decision {
            Some(d) if allowed.contains(&d) => {}
            // A doubt is never a failure: the class may yet be one the case allows.
            _ if class == Some(OutcomeClass::Inconclusive) => {
                v.inconclusive = true;
                let why =
                    format!("expected decision {wanted}, but the observation is inconclusive");
                unchecked.push(why.clone());
                findings.push(finding(None, facts.line, why));
            }
            Some(d) => {
                v.failed = true;
                findings.push(finding(
                    None,
                    facts.line,
                    format!(
                        "expected decision {wanted}, the playbook decided {}{held_back}",
                        d.as_str()
                    ),
                ));
            }
            None => {
                v.failed = true;
                findings.push(finding(
                    None,
                    facts.line,
                    format!(
                        "expected decision {wanted}, but the case acknowledged and observed nothing to decide on"
                    ),
                ));
            }
        }
    }
    // HOLD is what the case expects of its own fault: a HOLD whose doubt came from elsewhere
    // (the target throttling, a lost answer, a fault that fired on an unrelated call) proves
    // nothing about the fault. The doubt that decided it is the window's when the window is
    // undecided (the decision's first rule), else the acknowledgements' refused or unanswered.
    // An acknowledgement definitely after its lease (`late`, `superseded`) decides HOLD by
    // itself, from the history, with no doubt to credit.
    let holds = held_doubt.is_some() || decision == Some(Decision::Hold);
    let credited = if class == Some(OutcomeClass::Inconclusive) {
        judged.as_ref().is_some_and(|j| {
            j.messages
                .iter()
                .any(|m| m.class == OutcomeClass::Inconclusive && m.doubt_faulted)
        })
    } else if facts.acks.failed_acks + facts.acks.unknown_acks > 0 {
        facts.faulted_acks > 0
    } else {
        facts.acks.late_acks + facts.acks.superseded_acks > 0
    };
    if holds
        && !credited
        && facts
            .expect_decision
            .as_ref()
            .is_some_and(|d| d.contains(&Decision::Hold))
        && !v.failed
        && !v.errored
        && !v.inconclusive
    {
        v.inconclusive = true;
        let from = match (&held_doubt, class) {
            (Some(why), _) => format!(" (the doubt came from elsewhere: {why})"),
            (None, Some(OutcomeClass::Inconclusive)) => {
                " (the doubt came from elsewhere: the observation is inconclusive)".to_string()
            }
            (None, _) => " (the doubt came from elsewhere: an acknowledgement the target \
                           refused or left unanswered)"
                .to_string(),
        };
        let fault = if facts.faults_fired == 0 {
            "its fault did not fire"
        } else {
            "its fault did not make the doubt that holds"
        };
        let why = format!("the case expects HOLD of its fault, but {fault}{from}");
        unchecked.push(why.clone());
        findings.push(finding(None, facts.line, why));
    }
    let reason = match (findings.first(), &held_doubt) {
        (Some(f), _) => f.message.clone(),
        (None, Some(why)) => format!(
            "every expectation held: the playbook holds, as the case expects of its fault ({why})"
        ),
        (None, None) => match class {
            Some(c) => format!("every expectation held; observation: {}", c.as_str()),
            None => "every expectation held".to_string(),
        },
    };
    Judgement {
        verdict: verdict(&v),
        class,
        window_end: judged.as_ref().map(|j| j.end.clone()),
        messages: judged.map(|j| j.messages).unwrap_or_default(),
        decision,
        reason,
        findings,
        unchecked,
    }
}

/// The steps past the `ran` that ran, of `planned`, as one unchecked expectation.
fn never_ran(ran: usize, planned: usize) -> String {
    if planned == ran + 1 {
        format!("step {planned} never ran")
    } else {
        format!("steps {} to {planned} never ran", ran + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::outcome::SendState;
    use crate::suite::model::{Pos, Spanned};
    use OutcomeClass::*;

    fn tracked(label: &str, deliveries_before: u32, sightings: u32) -> TrackedMessage {
        TrackedMessage {
            label: label.into(),
            message_id: Some(format!("id-{label}")),
            send: SendState::Sent,
            deliveries_before,
            sightings,
            unknown_receives_before: 0,
            copies_unknown: false,
            ambiguous_copies: 0,
            send_faulted: false,
            faulted_receives_before: 0,
        }
    }

    fn window(tracked: Vec<TrackedMessage>, end: Option<WindowEnd>) -> WindowFacts {
        WindowFacts {
            step: 1,
            line: 9,
            planned_ms: 3000,
            elapsed_ms: 3000,
            receives_used: 3,
            receive_budget: 20,
            end,
            unknown_receives: 0,
            faulted_receives: 0,
            short_polls: 0,
            untracked_sightings: 0,
            tracked,
            integrity: Vec::new(),
            expects_outcome: false,
        }
    }

    fn steps(checks: &[Check]) -> Vec<StepResult> {
        checks
            .iter()
            .enumerate()
            .map(|(i, c)| StepResult {
                index: i,
                line: 5 + i as u32,
                keyword: if i == 1 { "observe" } else { "send" }.into(),
                check: c.clone(),
                status: Some(400),
                code: None,
            })
            .collect()
    }

    fn expect_all(class: OutcomeClass) -> Option<OutcomeExpect> {
        Some(OutcomeExpect::All(Spanned {
            value: class.into(),
            pos: Pos::default(),
        }))
    }

    fn case(w: WindowFacts) -> CaseFacts {
        CaseFacts {
            line: 2,
            steps: steps(&[Check::Pass, Check::Pass]),
            window: Some(w),
            ..CaseFacts::default()
        }
    }

    #[test]
    fn send_then_observe_is_a_delivery_not_a_redelivery() {
        let j = judge(&case(window(
            vec![tracked("m1", 0, 1)],
            Some(WindowEnd::AllSeen),
        )));
        assert_eq!(j.class, Some(Delivered));
        assert_eq!(j.verdict, Verdict::Pass);
        assert_eq!(j.decision, None);
        assert_eq!(j.reason, "every expectation held; observation: delivered");
    }

    #[test]
    fn a_refused_send_makes_the_observation_inconclusive_not_a_clean_accept() {
        let m = TrackedMessage {
            send: SendState::Refused("InvalidMessageContents (400)".into()),
            message_id: None,
            ..tracked("m1", 0, 0)
        };
        let mut facts = case(window(vec![m], Some(WindowEnd::Completed)));
        facts.expect_outcome = expect_all(NoRedeliveryWithinWindow);
        let j = judge(&facts);
        assert_eq!(j.class, Some(Inconclusive));
        assert_eq!(j.verdict, Verdict::Inconclusive);
        assert_eq!(j.decision, Some(Decision::Hold));
        assert!(j.reason.contains("never sent"), "{}", j.reason);
    }

    #[test]
    fn a_lost_receive_answer_in_the_window_makes_silence_inconclusive() {
        let mut w = window(vec![tracked("m1", 1, 0)], Some(WindowEnd::Completed));
        w.unknown_receives = 1;
        let mut facts = case(w);
        facts.expect_outcome = expect_all(NoRedeliveryWithinWindow);
        let j = judge(&facts);
        assert_eq!(j.class, Some(Inconclusive));
        assert_eq!(j.verdict, Verdict::Inconclusive);
        assert_eq!(j.decision, Some(Decision::Hold));
    }

    #[test]
    fn a_deadline_cut_keeps_the_partial_window_and_says_deadline() {
        let mut facts = case(window(vec![tracked("m1", 1, 1), tracked("m2", 1, 0)], None));
        let deadline = StopReason::Deadline("1m 10s: its budget plus 10s".into());
        facts.stopped = Some(deadline.clone());
        let j = judge(&facts);
        assert_eq!(
            j.window_end,
            Some(WindowEnd::Cut(CutReason::Stopped(deadline)))
        );
        assert_eq!(j.messages[0].class, ObservedRedelivery);
        assert_eq!(j.messages[1].class, Inconclusive);
        assert_eq!(j.verdict, Verdict::Inconclusive);
        assert!(
            j.findings
                .iter()
                .any(|f| f.message.contains("past its deadline"))
        );
    }

    #[test]
    fn an_interrupted_window_is_labelled_interrupted() {
        let mut facts = case(window(vec![tracked("m1", 1, 0)], None));
        facts.stopped = Some(StopReason::Interrupted);
        let j = judge(&facts);
        assert_eq!(
            j.window_end,
            Some(WindowEnd::Cut(CutReason::Stopped(StopReason::Interrupted)))
        );
        assert_eq!(
            j.window_end.as_ref().map(|e| e.label().as_str()),
            Some("interrupted")
        );
        assert_eq!(j.verdict, Verdict::Inconclusive);
    }

    #[test]
    fn a_lost_target_is_an_error() {
        let mut facts = case(window(vec![tracked("m1", 1, 0)], None));
        let lost = StopReason::TargetLost("5 calls in a row got no response".into());
        facts.stopped = Some(lost.clone());
        let j = judge(&facts);
        assert_eq!(j.verdict, Verdict::Error);
        assert_eq!(j.window_end, Some(WindowEnd::Cut(CutReason::Stopped(lost))));
    }

    #[test]
    fn case_level_outcomes_fail_on_a_definite_mismatch_and_defer_on_doubt() {
        let mut facts = case(window(vec![tracked("m1", 1, 1)], Some(WindowEnd::AllSeen)));
        facts.expect_outcome = expect_all(NoRedeliveryWithinWindow);
        let j = judge(&facts);
        assert_eq!(j.verdict, Verdict::Fail);
        assert_eq!(
            j.findings[0].message,
            "expected m1: no_redelivery_within_window, observed observed_redelivery"
        );
        assert_eq!(j.decision, Some(Decision::Reconcile));

        facts.expect_outcome = expect_all(Delivered);
        facts.window = Some(window(vec![tracked("m1", 0, 1)], Some(WindowEnd::AllSeen)));
        assert_eq!(judge(&facts).verdict, Verdict::Pass);
    }

    #[test]
    fn an_expected_outcome_without_a_window_is_inconclusive() {
        let facts = CaseFacts {
            line: 2,
            steps: steps(&[Check::Pass]),
            expect_outcome: expect_all(ObservedRedelivery),
            ..CaseFacts::default()
        };
        let j = judge(&facts);
        assert_eq!(j.verdict, Verdict::Inconclusive);
        assert!(j.reason.contains("observe step never ran"));
    }

    #[test]
    fn step_findings_are_numbered_from_one_and_worst_verdict_wins() {
        let facts = CaseFacts {
            line: 2,
            steps: steps(&[
                Check::Inconclusive("throttled".into()),
                Check::Fail(vec!["expected 1 message(s), received 0".into()]),
            ]),
            teardown_errors: vec!["failed to delete queue q".into()],
            ..CaseFacts::default()
        };
        let j = judge(&facts);
        assert_eq!(j.verdict, Verdict::Fail);
        assert_eq!(j.findings[0].message, "step 1 (send): throttled");
        assert_eq!(
            j.findings[1].message,
            "step 2 (observe): expected 1 message(s), received 0"
        );
        assert_eq!(j.findings[1].step, Some(1));
        assert_eq!(j.findings[2].message, "failed to delete queue q");
        assert!(j.findings[2].teardown && !j.findings[0].teardown);
    }

    #[test]
    fn a_harness_error_is_an_error_not_a_failure() {
        let facts = CaseFacts {
            line: 2,
            steps: steps(&[Check::Error("the target refused the credentials".into())]),
            ..CaseFacts::default()
        };
        assert_eq!(judge(&facts).verdict, Verdict::Error);
        let setup = CaseFacts {
            setup_error: Some("failed to create queue".into()),
            ..CaseFacts::default()
        };
        assert_eq!(judge(&setup).verdict, Verdict::Error);
    }

    #[test]
    fn observe_step_checks_integrity_then_its_expectation() {
        let mut w = window(vec![tracked("m1", 1, 1)], Some(WindowEnd::AllSeen));
        assert_eq!(check_window(&w, None), Check::Pass);
        assert_eq!(
            check_window(&w, expect_all(ObservedRedelivery).as_ref()),
            Check::Pass
        );
        assert!(matches!(
            check_window(&w, expect_all(Delivered).as_ref()),
            Check::Fail(_)
        ));
        w.integrity
            .push("m1: MD5OfBody does not match the body received".into());
        assert!(matches!(check_window(&w, None), Check::Fail(_)));

        let cut = window(
            vec![tracked("m1", 1, 0)],
            Some(WindowEnd::Cut(CutReason::BudgetExhausted { used: 20 })),
        );
        match check_window(&cut, None) {
            Check::Inconclusive(why) => assert!(why.contains("receive budget"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_window_step_reporting_doubt_is_not_repeated_at_case_level() {
        let mut facts = case(window(
            vec![tracked("m1", 1, 0)],
            Some(WindowEnd::Cut(CutReason::BudgetExhausted { used: 2 })),
        ));
        facts.steps = steps(&[
            Check::Pass,
            Check::Inconclusive("observation window not completed".into()),
        ]);
        facts.expect_outcome = expect_all(NoRedeliveryWithinWindow);
        let j = judge(&facts);
        assert_eq!(j.findings.len(), 1);
        assert_eq!(j.verdict, Verdict::Inconclusive);
    }
    fn observe_steps(window_check: Check) -> Vec<StepResult> {
        steps(&[Check::Pass, window_check])
    }

    /// A window watched to its end with one poll that got no definite answer, and the observe
    /// step's own check of it.
    fn doubtful(end: WindowEnd) -> CaseFacts {
        let mut w = window(vec![tracked("m1", 1, 0)], Some(end));
        w.unknown_receives = 1;
        w.faulted_receives = 1;
        let check = check_window(&w, None);
        CaseFacts {
            line: 2,
            steps: observe_steps(check),
            window: Some(w),
            expect_decision: Some(vec![Decision::Hold]),
            faults_fired: 1,
            ..CaseFacts::default()
        }
    }

    /// An expected HOLD needs the case's own fault to have fired; a doubt from
    /// elsewhere (the target throttling) is inconclusive, neither a pass nor a failure.
    #[test]
    fn a_hold_whose_fault_never_fired_is_inconclusive() {
        let mut facts = doubtful(WindowEnd::Completed);
        facts.faults_fired = 0;
        if let Some(w) = facts.window.as_mut() {
            w.faulted_receives = 0;
        }
        let j = judge(&facts);
        assert_eq!(j.decision, Some(Decision::Hold));
        assert_eq!(j.verdict, Verdict::Inconclusive, "{j:?}");
        assert!(j.reason.contains("its fault did not fire"), "{}", j.reason);
        // The same on the decision path: an unknown acknowledgement nobody injected.
        let mut acked = case(window(
            vec![tracked("m1", 1, 0)],
            Some(WindowEnd::Completed),
        ));
        acked.acks = AckFacts {
            acks: 1,
            unknown_acks: 1,
            ..AckFacts::default()
        };
        acked.expect_decision = Some(vec![Decision::Hold]);
        assert_eq!(judge(&acked).verdict, Verdict::Inconclusive);
        acked.faults_fired = 1;
        acked.faulted_acks = 1;
        assert_eq!(judge(&acked).verdict, Verdict::Pass);
    }

    /// An expected HOLD is credited to the fault that made the doubt, never to one that fired
    /// on an unrelated call while the doubt came from elsewhere.
    #[test]
    fn a_hold_is_credited_only_to_the_fault_that_made_its_doubt() {
        // The window's doubt: a poll the target throttled, while the case's fault hit another
        // call (its answer changed, so the fault fired).
        let mut facts = doubtful(WindowEnd::Completed);
        if let Some(w) = facts.window.as_mut() {
            w.faulted_receives = 0;
        }
        let j = judge(&facts);
        assert_eq!(j.decision, Some(Decision::Hold));
        assert_eq!(j.verdict, Verdict::Inconclusive, "{j:?}");
        assert!(
            j.reason
                .contains("its fault did not make the doubt that holds"),
            "{}",
            j.reason
        );
        // A fault on an earlier receive that left the message's silence in doubt is credited.
        if let Some(w) = facts.window.as_mut() {
            w.unknown_receives = 0;
            w.tracked[0].unknown_receives_before = 1;
            w.tracked[0].faulted_receives_before = 1;
            facts.steps[1].check = check_window(w, None);
        }
        assert_eq!(judge(&facts).verdict, Verdict::Pass);
        // A send whose answer the case's fault lost is credited; one the target lost is not.
        let mut lost_send = doubtful(WindowEnd::Completed);
        if let Some(w) = lost_send.window.as_mut() {
            w.unknown_receives = 0;
            w.faulted_receives = 0;
            w.tracked[0].send = SendState::Unknown("no response".into());
            lost_send.steps[1].check = check_window(w, None);
        }
        assert_eq!(judge(&lost_send).verdict, Verdict::Inconclusive);
        if let Some(w) = lost_send.window.as_mut() {
            w.tracked[0].send_faulted = true;
        }
        assert_eq!(judge(&lost_send).verdict, Verdict::Pass);
        // The acknowledgements' doubt: a delete the target left unanswered, while the case's
        // fault fired on something else.
        let mut acked = case(window(
            vec![tracked("m1", 1, 0)],
            Some(WindowEnd::Completed),
        ));
        acked.acks = AckFacts {
            acks: 1,
            unknown_acks: 1,
            ..AckFacts::default()
        };
        acked.expect_decision = Some(vec![Decision::Hold]);
        acked.faults_fired = 1;
        let j = judge(&acked);
        assert_eq!(j.verdict, Verdict::Inconclusive, "{j:?}");
        assert!(
            j.reason
                .contains("an acknowledgement the target refused or left unanswered"),
            "{}",
            j.reason
        );
        // A window the case's fault left undecided decides HOLD before the acknowledgements:
        // a faulted ack does not vouch for a window the target left in doubt.
        let mut both = doubtful(WindowEnd::Completed);
        if let Some(w) = both.window.as_mut() {
            w.faulted_receives = 0;
        }
        both.acks = acked.acks;
        both.faulted_acks = 1;
        assert_eq!(judge(&both).verdict, Verdict::Inconclusive);
    }

    #[test]
    fn a_hold_expected_of_a_fault_passes_when_the_window_is_undecided() {
        let j = judge(&doubtful(WindowEnd::Completed));
        assert_eq!(j.class, Some(Inconclusive));
        assert_eq!(j.decision, Some(Decision::Hold));
        assert_eq!(j.verdict, Verdict::Pass, "{j:?}");
        assert!(j.findings.is_empty());
        assert!(
            j.reason.contains("the playbook holds, as the case expects"),
            "{}",
            j.reason
        );
    }

    #[test]
    fn a_cut_or_stopped_window_or_an_expected_outcome_keeps_the_doubt() {
        let cut = judge(&doubtful(WindowEnd::Cut(CutReason::BudgetExhausted {
            used: 3,
        })));
        assert_eq!(cut.verdict, Verdict::Inconclusive);

        let mut stopped = doubtful(WindowEnd::Completed);
        stopped.stopped = Some(StopReason::Interrupted);
        assert_eq!(judge(&stopped).verdict, Verdict::Inconclusive);

        let mut outcome = doubtful(WindowEnd::Completed);
        outcome.expect_outcome = expect_all(NoRedeliveryWithinWindow);
        assert_eq!(judge(&outcome).verdict, Verdict::Inconclusive);

        let mut on_step = doubtful(WindowEnd::Completed);
        if let Some(w) = on_step.window.as_mut() {
            w.expects_outcome = true;
        }
        assert_eq!(judge(&on_step).verdict, Verdict::Inconclusive);

        // Without HOLD among the allowed decisions a doubt is a doubt, never a failure.
        let mut accept = doubtful(WindowEnd::Completed);
        accept.expect_decision = Some(vec![Decision::Accept]);
        let j = judge(&accept);
        assert_eq!(j.verdict, Verdict::Inconclusive);
        assert!(j.reason.contains("silence proves nothing"), "{}", j.reason);
    }

    /// ACCEPT needs every message the case's receives returned to be acknowledged or seen
    /// again: a second message (or a duplicate copy) left leased and silent in the window is
    /// work nobody can say is done.
    #[test]
    fn accept_needs_every_received_message_acknowledged_or_explained() {
        let mut facts = crate::classify::test_facts::acked_and_observed(false, None);
        facts.expect_decision = Some(vec![Decision::Accept]);
        assert_eq!(judge(&facts).decision, Some(Decision::Accept));
        facts.unacknowledged = vec!["m2".into()];
        let j = judge(&facts);
        assert_eq!(j.decision, Some(Decision::Hold));
        assert_eq!(j.verdict, Verdict::Fail, "{j:?}");
        // Tracked by the window and silent there: still nobody's.
        if let Some(w) = facts.window.as_mut() {
            w.tracked.push(tracked("m2", 1, 0));
        }
        assert_eq!(judge(&facts).decision, Some(Decision::Hold));
        // Seen again in the window: the observation explains it (it came back).
        if let Some(w) = facts.window.as_mut() {
            w.tracked[1].sightings = 1;
        }
        assert_eq!(judge(&facts).decision, Some(Decision::Reconcile));
    }

    #[test]
    fn a_definite_decision_other_than_the_expected_one_fails() {
        let mut facts = case(window(
            vec![tracked("m1", 1, 0)],
            Some(WindowEnd::Completed),
        ));
        facts.acks = AckFacts {
            acks: 1,
            unknown_acks: 1,
            ..AckFacts::default()
        };
        facts.expect_decision = Some(vec![Decision::Accept]);
        let j = judge(&facts);
        assert_eq!(j.verdict, Verdict::Fail);
        assert_eq!(
            j.reason,
            "expected decision ACCEPT, the playbook decided HOLD"
        );
        facts.expect_decision = Some(vec![Decision::Hold, Decision::Reconcile]);
        facts.faults_fired = 1;
        facts.faulted_acks = 1;
        assert_eq!(judge(&facts).verdict, Verdict::Pass);

        let nothing = CaseFacts {
            line: 2,
            steps: steps(&[Check::Pass]),
            expect_decision: Some(vec![Decision::Accept]),
            ..CaseFacts::default()
        };
        let j = judge(&nothing);
        assert_eq!(j.verdict, Verdict::Fail);
        assert!(j.reason.contains("nothing to decide on"), "{}", j.reason);
    }
}
