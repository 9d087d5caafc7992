//! The judge's facts to and from their evidence form (`evidence::facts`), and a case re-judged
//! from the evidence alone.
//!
//! The runner writes a case's [`CaseFacts`] as a `facts` record and judges the record as it
//! reads back ([`facts_from_record`]), never the in-memory value: so a verdict in evidence is
//! always the judge's answer over recorded facts, and `sqsprobe check` reaches it again from
//! `evidence.jsonl` ([`rejudge`]). The conversions are exact both ways (a round-trip test holds
//! them to it); one that could not be read back is an error, never a default.

use std::collections::BTreeMap;

use crate::evidence::facts::{
    AckCounts, CaseFactsRecord, CheckKind, ClassName, ExpectRecord, OutcomeExpectRecord,
    RateBoundRecord, SendKind, StepFacts, StopFacts, StopKind, TrackedFacts, WindowEndFacts,
    WindowEndKind, WindowFactsRecord,
};
use crate::suite::model::{
    AllowedClasses, CaseExpect, OutcomeClass, OutcomeExpect, Pos, RateBound, RateExpect, Spanned,
};
use sqsprobe_facts::decision::Decision;

use super::decision::AckFacts;
use super::judge::{CaseFacts, Check, StepResult, WindowFacts};
use super::outcome::{CutReason, SendState, TrackedMessage, WindowEnd};
use super::stop::StopReason;

/// The wire name of a class.
pub fn class_name(class: OutcomeClass) -> ClassName {
    match class {
        OutcomeClass::ObservedRedelivery => ClassName::ObservedRedelivery,
        OutcomeClass::NoRedeliveryWithinWindow => ClassName::NoRedeliveryWithinWindow,
        OutcomeClass::Inconclusive => ClassName::Inconclusive,
        OutcomeClass::Delivered => ClassName::Delivered,
    }
}

/// The class a wire name stands for.
pub fn class_of(name: ClassName) -> OutcomeClass {
    match name {
        ClassName::ObservedRedelivery => OutcomeClass::ObservedRedelivery,
        ClassName::NoRedeliveryWithinWindow => OutcomeClass::NoRedeliveryWithinWindow,
        ClassName::Inconclusive => OutcomeClass::Inconclusive,
        ClassName::Delivered => OutcomeClass::Delivered,
    }
}

/// A stop in its evidence form.
pub fn stop_facts(stop: &StopReason) -> StopFacts {
    let (reason, detail) = match stop {
        StopReason::Deadline(d) => (StopKind::Deadline, Some(d.clone())),
        StopReason::Budget(d) => (StopKind::Budget, Some(d.clone())),
        StopReason::CredentialsRefused(d) => (StopKind::CredentialsRefused, Some(d.clone())),
        StopReason::TargetLost(d) => (StopKind::TargetLost, Some(d.clone())),
        StopReason::Interrupted => (StopKind::Interrupted, None),
    };
    StopFacts { reason, detail }
}

/// The stop a record names; `Err` when a reason that needs its text has none.
pub fn stop_of(stop: &StopFacts) -> Result<StopReason, String> {
    let text = || {
        stop.detail
            .clone()
            .ok_or_else(|| format!("a `{:?}` stop without its detail", stop.reason))
    };
    Ok(match stop.reason {
        StopKind::Deadline => StopReason::Deadline(text()?),
        StopKind::Budget => StopReason::Budget(text()?),
        StopKind::CredentialsRefused => StopReason::CredentialsRefused(text()?),
        StopKind::TargetLost => StopReason::TargetLost(text()?),
        StopKind::Interrupted => StopReason::Interrupted,
    })
}

fn end_facts(end: &WindowEnd) -> WindowEndFacts {
    let bare = |kind| WindowEndFacts {
        kind,
        code: None,
        used: None,
        stop: None,
    };
    match end {
        WindowEnd::Completed => bare(WindowEndKind::Completed),
        WindowEnd::AllSeen => bare(WindowEndKind::AllSeen),
        WindowEnd::Cut(CutReason::ReceiveFailed(code)) => WindowEndFacts {
            code: Some(code.clone()),
            ..bare(WindowEndKind::ReceiveFailed)
        },
        WindowEnd::Cut(CutReason::BudgetExhausted { used }) => WindowEndFacts {
            used: Some(*used),
            ..bare(WindowEndKind::BudgetExhausted)
        },
        WindowEnd::Cut(CutReason::Stopped(stop)) => WindowEndFacts {
            stop: Some(stop_facts(stop)),
            ..bare(WindowEndKind::Stopped)
        },
    }
}

fn end_of(end: &WindowEndFacts) -> Result<WindowEnd, String> {
    let missing = |what: &str| format!("a `{:?}` window end without its {what}", end.kind);
    Ok(match end.kind {
        WindowEndKind::Completed => WindowEnd::Completed,
        WindowEndKind::AllSeen => WindowEnd::AllSeen,
        WindowEndKind::ReceiveFailed => WindowEnd::Cut(CutReason::ReceiveFailed(
            end.code.clone().ok_or_else(|| missing("code"))?,
        )),
        WindowEndKind::BudgetExhausted => WindowEnd::Cut(CutReason::BudgetExhausted {
            used: end.used.ok_or_else(|| missing("count"))?,
        }),
        WindowEndKind::Stopped => WindowEnd::Cut(CutReason::Stopped(stop_of(
            end.stop.as_ref().ok_or_else(|| missing("stop"))?,
        )?)),
    })
}

/// The kind of a step's check, as `step.check` and the `facts` record write it.
pub fn check_kind(check: &Check) -> CheckKind {
    check_facts(check).0
}

fn check_facts(check: &Check) -> (CheckKind, Vec<String>) {
    match check {
        Check::Pass => (CheckKind::Pass, Vec::new()),
        Check::Fail(f) => (CheckKind::Fail, f.clone()),
        Check::Inconclusive(why) => (CheckKind::Inconclusive, vec![why.clone()]),
        Check::Error(why) => (CheckKind::Error, vec![why.clone()]),
    }
}

fn check_of(kind: CheckKind, details: &[String]) -> Result<Check, String> {
    let one = || match details {
        [why] => Ok(why.clone()),
        _ => Err(format!(
            "a step checked `{}` with {} reasons, not one",
            kind.as_str(),
            details.len()
        )),
    };
    Ok(match kind {
        CheckKind::Pass if details.is_empty() => Check::Pass,
        CheckKind::Pass => return Err("a passed step with reasons".to_string()),
        CheckKind::Fail if !details.is_empty() => Check::Fail(details.to_vec()),
        CheckKind::Fail => return Err("a failed step without its findings".to_string()),
        CheckKind::Inconclusive => Check::Inconclusive(one()?),
        CheckKind::Error => Check::Error(one()?),
    })
}

fn send_facts(send: &SendState) -> (SendKind, Option<String>) {
    match send {
        SendState::Sent => (SendKind::Sent, None),
        SendState::Refused(why) => (SendKind::Refused, Some(why.clone())),
        SendState::Unknown(why) => (SendKind::Unknown, Some(why.clone())),
        SendState::NotSent => (SendKind::NotSent, None),
    }
}

fn send_of(t: &TrackedFacts) -> Result<SendState, String> {
    let why = || {
        t.send_detail
            .clone()
            .ok_or_else(|| format!("message {}: a `{:?}` send without why", t.label, t.send))
    };
    Ok(match t.send {
        SendKind::Sent => SendState::Sent,
        SendKind::Refused => SendState::Refused(why()?),
        SendKind::Unknown => SendState::Unknown(why()?),
        SendKind::NotSent => SendState::NotSent,
    })
}

/// A case's facts in their evidence form, every string through `mask`.
pub fn record_from_facts(
    facts: &CaseFacts,
    run_id: &str,
    case: &str,
    trial: Option<u32>,
    mask: &dyn Fn(&str) -> String,
) -> CaseFactsRecord {
    let masked = |v: &[String]| v.iter().map(|s| mask(s)).collect::<Vec<_>>();
    CaseFactsRecord {
        run_id: run_id.to_string(),
        case: case.to_string(),
        trial,
        line: facts.line,
        setup_error: facts.setup_error.as_deref().map(mask),
        steps: facts
            .steps
            .iter()
            .map(|s| {
                let (check, details) = check_facts(&s.check);
                StepFacts {
                    step: s.index,
                    line: s.line,
                    keyword: s.keyword.clone(),
                    check,
                    details: masked(&details),
                    status: s.status,
                    code: s.code.clone(),
                }
            })
            .collect(),
        steps_planned: facts.steps_planned,
        stopped: facts.stopped.as_ref().map(|s| {
            let mut f = stop_facts(s);
            f.detail = f.detail.as_deref().map(mask);
            f
        }),
        window: facts.window.as_ref().map(|w| WindowFactsRecord {
            step: w.step,
            line: w.line,
            planned_ms: w.planned_ms,
            elapsed_ms: w.elapsed_ms,
            receives_used: w.receives_used,
            receive_budget: w.receive_budget,
            end: w.end.as_ref().map(|e| {
                let mut f = end_facts(e);
                f.code = f.code.as_deref().map(mask);
                if let Some(stop) = &mut f.stop {
                    stop.detail = stop.detail.as_deref().map(mask);
                }
                f
            }),
            unknown_receives: w.unknown_receives,
            faulted_receives: w.faulted_receives,
            short_polls: w.short_polls,
            untracked_sightings: w.untracked_sightings,
            tracked: w
                .tracked
                .iter()
                .map(|t| {
                    let (send, send_detail) = send_facts(&t.send);
                    TrackedFacts {
                        label: t.label.clone(),
                        message_id: t.message_id.clone(),
                        send,
                        send_detail: send_detail.as_deref().map(mask),
                        deliveries_before: t.deliveries_before,
                        sightings: t.sightings,
                        unknown_receives_before: t.unknown_receives_before,
                        copies_unknown: t.copies_unknown,
                        ambiguous_copies: t.ambiguous_copies,
                        send_faulted: t.send_faulted,
                        faulted_receives_before: t.faulted_receives_before,
                    }
                })
                .collect(),
            integrity: masked(&w.integrity),
            expects_outcome: w.expects_outcome,
        }),
        acks: AckCounts {
            acks: facts.acks.acks,
            unbound_acks: facts.acks.unbound_acks,
            other_attempt_acks: facts.acks.other_attempt_acks,
            superseded_acks: facts.acks.superseded_acks,
            late_acks: facts.acks.late_acks,
            unsure_acks: facts.acks.unsure_acks,
            failed_acks: facts.acks.failed_acks,
            unknown_acks: facts.acks.unknown_acks,
        },
        unacknowledged: facts.unacknowledged.clone(),
        teardown_errors: masked(&facts.teardown_errors),
        faults_fired: facts.faults_fired,
        faulted_acks: facts.faulted_acks,
    }
}

/// A case's facts read back from their record, with the case's recorded `expect:` (of which a
/// trial of a multi-trial case takes the decision only: its outcome is judged over all
/// trials).
pub fn facts_from_record(
    record: &CaseFactsRecord,
    expect: Option<&ExpectRecord>,
) -> Result<CaseFacts, String> {
    let steps = record
        .steps
        .iter()
        .map(|s| {
            Ok(StepResult {
                index: s.step,
                line: s.line,
                keyword: s.keyword.clone(),
                check: check_of(s.check, &s.details)
                    .map_err(|e| format!("step {}: {e}", s.step + 1))?,
                status: s.status,
                code: s.code.clone(),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let window = match &record.window {
        None => None,
        Some(w) => Some(WindowFacts {
            step: w.step,
            line: w.line,
            planned_ms: w.planned_ms,
            elapsed_ms: w.elapsed_ms,
            receives_used: w.receives_used,
            receive_budget: w.receive_budget,
            end: w.end.as_ref().map(end_of).transpose()?,
            unknown_receives: w.unknown_receives,
            faulted_receives: w.faulted_receives,
            short_polls: w.short_polls,
            untracked_sightings: w.untracked_sightings,
            tracked: w
                .tracked
                .iter()
                .map(|t| {
                    Ok(TrackedMessage {
                        label: t.label.clone(),
                        message_id: t.message_id.clone(),
                        send: send_of(t)?,
                        deliveries_before: t.deliveries_before,
                        sightings: t.sightings,
                        unknown_receives_before: t.unknown_receives_before,
                        copies_unknown: t.copies_unknown,
                        ambiguous_copies: t.ambiguous_copies,
                        send_faulted: t.send_faulted,
                        faulted_receives_before: t.faulted_receives_before,
                    })
                })
                .collect::<Result<Vec<_>, String>>()?,
            integrity: w.integrity.clone(),
            expects_outcome: w.expects_outcome,
        }),
    };
    let (expect_outcome, expect_decision) = match expect {
        // A trial's outcome is judged with the other trials' (`super::trials::pool`); its
        // decision is its own.
        Some(e) if record.trial.is_some() => (None, e.decision.clone()),
        Some(e) => (
            e.outcome.as_ref().map(outcome_of).transpose()?,
            e.decision.clone(),
        ),
        None => (None, None),
    };
    Ok(CaseFacts {
        line: record.line,
        setup_error: record.setup_error.clone(),
        steps,
        steps_planned: record.steps_planned,
        stopped: record.stopped.as_ref().map(stop_of).transpose()?,
        window,
        expect_outcome,
        expect_decision,
        acks: AckFacts {
            acks: record.acks.acks,
            unbound_acks: record.acks.unbound_acks,
            other_attempt_acks: record.acks.other_attempt_acks,
            superseded_acks: record.acks.superseded_acks,
            late_acks: record.acks.late_acks,
            unsure_acks: record.acks.unsure_acks,
            failed_acks: record.acks.failed_acks,
            unknown_acks: record.acks.unknown_acks,
        },
        unacknowledged: record.unacknowledged.clone(),
        teardown_errors: record.teardown_errors.clone(),
        faults_fired: record.faults_fired,
        faulted_acks: record.faulted_acks,
    })
}

fn names(classes: &AllowedClasses) -> Vec<ClassName> {
    classes.classes().iter().map(|c| class_name(*c)).collect()
}

fn allowed(names: &[ClassName]) -> Result<Spanned<AllowedClasses>, String> {
    AllowedClasses::new(names.iter().map(|n| class_of(*n)))
        .map(|value| Spanned {
            value,
            pos: Pos { line: 0, col: 0 },
        })
        .ok_or_else(|| "an outcome expectation allowing no class, or `inconclusive`".to_string())
}

fn outcome_of(e: &OutcomeExpectRecord) -> Result<OutcomeExpect, String> {
    Ok(match e {
        OutcomeExpectRecord::All(c) => OutcomeExpect::All(allowed(c)?),
        OutcomeExpectRecord::PerMessage(map) => OutcomeExpect::PerMessage(
            map.iter()
                .map(|(label, c)| Ok((label.clone(), allowed(c)?)))
                .collect::<Result<BTreeMap<_, _>, String>>()?,
        ),
    })
}

/// A case's `expect:` in its evidence form; `None` when it expects nothing at case level.
pub fn expect_record(expect: &CaseExpect) -> Option<ExpectRecord> {
    let record = ExpectRecord {
        outcome: expect.outcome.as_ref().map(|o| match o {
            OutcomeExpect::All(c) => OutcomeExpectRecord::All(names(&c.value)),
            OutcomeExpect::PerMessage(map) => OutcomeExpectRecord::PerMessage(
                map.iter()
                    .map(|(l, c)| (l.clone(), names(&c.value)))
                    .collect(),
            ),
        }),
        rate: expect
            .rate
            .as_ref()
            .map(|r| {
                r.bounds
                    .iter()
                    .map(|(c, b)| {
                        (
                            class_name(*c),
                            RateBoundRecord {
                                at_least: b.value.at_least,
                                at_most: b.value.at_most,
                            },
                        )
                    })
                    .collect()
            })
            .unwrap_or_default(),
        decision: expect.decision.as_ref().map(|d| d.value.clone()),
    };
    (record != ExpectRecord::default()).then_some(record)
}

/// The outcome, rate and decision expectations an [`ExpectRecord`] holds.
pub type Expectations = (
    Option<OutcomeExpect>,
    Option<RateExpect>,
    Option<Vec<Decision>>,
);

/// A recorded `expect:` read back.
pub fn expectations_of(record: Option<&ExpectRecord>) -> Result<Expectations, String> {
    let Some(e) = record else {
        return Ok((None, None, None));
    };
    let outcome = e.outcome.as_ref().map(outcome_of).transpose()?;
    let rate = (!e.rate.is_empty()).then(|| RateExpect {
        bounds: e
            .rate
            .iter()
            .map(|(c, b)| {
                (
                    class_of(*c),
                    Spanned {
                        value: RateBound {
                            at_least: b.at_least,
                            at_most: b.at_most,
                        },
                        pos: Pos { line: 0, col: 0 },
                    },
                )
            })
            .collect(),
    });
    Ok((outcome, rate, e.decision.clone()))
}
