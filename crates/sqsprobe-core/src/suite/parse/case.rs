//! One case: its metadata, its `queues:`, its steps in order, and its case-level `expect:`.

use super::aspect::derive_aspect;
use super::budget::case_budget;
use super::expect::{decode_outcome, decode_rate};
use super::fault::{FaultSite, decode_fault};
use super::queue::{check_queue_label, check_queue_refs, decode_queue_entry};
use super::scope::{Scope, is_label, push_at};
use super::step::decode_step;
use super::steps::step_calls;
use crate::suite::area::{self, Aspect};
use crate::suite::limits::Limits;
use crate::suite::model::*;
use crate::suite::yaml::{Node, Reader, pos};
use sqsprobe_facts::duration;
use sqsprobe_facts::text::suggest::suggest;

const CASE_KEYS: &[&str] = &[
    "id",
    "title",
    "tags",
    "behaviour",
    "source",
    "retries",
    "protocols",
    "queues",
    "steps",
    "expect",
    "trials",
    "faults",
    "emulator_chaos",
    "area",
    "aspect",
];

/// The most `trials:` a case may ask for.
const MAX_TRIALS: u32 = 1000;

/// The wire protocols a case may be limited to (`protocols:`).
pub const PROTOCOLS: &[&str] = &sqsprobe_facts::sqs::protocol::Protocol::NAMES;

pub(super) fn decode_case(r: &mut Reader, item: &Node, limits: &Limits) -> Option<Case> {
    let f = r.fields(item, item, "a case", CASE_KEYS)?;
    let errors_before = r.diags.len();
    let id_node = f.get("id");
    let id = match id_node {
        None if !f.missing("id") => None,
        None => {
            r.error(item, "a case needs `id`");
            None
        }
        Some(n) => r.string(n, "`id`").and_then(|id| {
            let ok = is_label(&id, 40) && !id.starts_with('-');
            if !ok {
                r.error_hint(
                    n,
                    format!("invalid case id `{id}`"),
                    "ids are 1 to 40 characters of `a-z`, `0-9` and `-`, starting with a letter or digit (they go into queue names)",
                );
                None
            } else {
                Some(id)
            }
        }),
    };
    let title = f.get("title").and_then(|n| r.string(n, "`title`"));
    let tags = f
        .get("tags")
        .and_then(|n| r.strings(n, "tags", false))
        .unwrap_or_default();
    let behaviour = match f.get("behaviour") {
        Some(n) => r.nonempty(n, "`behaviour`"),
        None if !f.missing("behaviour") => None,
        None => {
            r.error_hint(
                item,
                "a case needs `behaviour`",
                "say in a sentence what AWS does here",
            );
            None
        }
    };
    let sources = match f.get("source") {
        Some(n) => r.strings(n, "sources", true).and_then(|s| {
            if s.is_empty() {
                r.error(n, "`source` is empty");
                None
            } else {
                Some(s)
            }
        }),
        None if !f.missing("source") => None,
        None => {
            r.error_hint(
                item,
                "a case needs `source`",
                "cite the AWS doc page or AWS-recorded test the expectation comes from",
            );
            None
        }
    };
    let retries = match f.get("retries") {
        None => RetryPolicy::None,
        Some(n) => match r.string(n, "`retries`").as_deref() {
            Some("none") => RetryPolicy::None,
            Some("standard") => RetryPolicy::Standard,
            Some(other) => {
                r.error_hint(
                    n,
                    format!("unknown retry policy `{other}`"),
                    suggest(other, &["none", "standard"]),
                );
                RetryPolicy::None
            }
            None => RetryPolicy::None,
        },
    };

    let mut protocols = Vec::new();
    if let Some(n) = f.get("protocols") {
        for (i, p) in r
            .strings(n, "protocols", true)
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            if PROTOCOLS.contains(&p.as_str()) {
                protocols.push(p);
            } else {
                let at = match &n.data {
                    saphyr::YamlData::Sequence(items) => items.get(i).unwrap_or(n),
                    _ => n,
                };
                r.error_hint(
                    at,
                    format!("unknown protocol `{p}`"),
                    suggest(&p, PROTOCOLS),
                );
            }
        }
    }

    let mut scope = Scope::default();
    let mut queues = Vec::new();
    if let Some(qnode) = f.get("queues") {
        let entries = r.map_entries(qnode, "`queues`").unwrap_or_default();
        for (label, key, _) in &entries {
            if check_queue_label(r, key, label) {
                scope.queues.insert(label.to_string(), QueueKind::Standard);
            }
        }
        // Kinds first, so a redrive may point at a DLQ listed after its source.
        let mut decoded = Vec::new();
        for (label, key, value) in &entries {
            let def = decode_queue_entry(r, key, value, label);
            if let Some(def) = &def {
                scope.queues.insert(label.to_string(), def.kind);
                scope
                    .placement
                    .insert(label.to_string(), super::scope::Placement::of(def));
            }
            decoded.push(def);
        }
        for def in decoded.into_iter().flatten() {
            check_queue_refs(r, &scope, &def);
            queues.push(def);
        }
    }

    let mut steps = Vec::new();
    match f.get("steps") {
        None if !f.missing("steps") => {}
        None => {
            r.error(item, "a case needs `steps`");
        }
        Some(list) => {
            if let Some(items) = r.seq(list, "steps") {
                if items.is_empty() {
                    r.error(list, "`steps` is empty");
                }
                for (index, step) in items.iter().enumerate() {
                    if let Some(step) = decode_step(r, &mut scope, step, index, limits) {
                        steps.push(step);
                    }
                }
            }
        }
    }

    super::wire::check_query_only(r, &protocols, &steps);

    let mut expect = CaseExpect::default();
    let case_expect = f.get("expect").and_then(|n| {
        r.fields(
            f.key("expect").unwrap_or(n),
            n,
            "a case `expect`",
            &["outcome", "rate", "decision"],
        )
    });
    if let Some(ef) = case_expect {
        for (name, key, _) in &ef.entries {
            if scope.observes == 0 && *name != "decision" {
                r.error_hint(
                    key,
                    format!("a case `{name}` needs an `observe` step"),
                    format!("add an `observe` step; the {name} applies to the last one"),
                );
            }
        }
        if let Some(v) = ef.get("outcome") {
            let tracks = scope.last_observe_tracks.clone();
            expect.outcome = decode_outcome(r, &scope, v, &tracks);
        }
        expect.rate = ef.get("rate").and_then(|v| decode_rate(r, v));
        expect.decision = ef.get("decision").and_then(|v| decode_decision(r, v));
    }

    check_short_poll_silence(r, &steps, expect.outcome.as_ref());

    let trials = match f.get("trials") {
        Some(n) => r
            .int(n, "`trials`", 1, i64::from(MAX_TRIALS))
            .map(|t| t as u32),
        None => Some(1),
    };
    let faults = f
        .get("faults")
        .map(|n| decode_case_faults(r, n, &steps))
        .unwrap_or_default();
    // HOLD is what not knowing decides (a fault the case injects), or what an
    // acknowledgement after its lease decides (a `sleep` can let the lease lapse first).
    if let Some(d) = &expect.decision
        && d.value.contains(&Decision::Hold)
        && faults.is_empty()
        && !steps
            .iter()
            .any(|s| s.fault.is_some() || matches!(s.action, Action::Deny(_) | Action::Sleep(_)))
    {
        push_at(
            r,
            d.pos,
            "HOLD",
            "a case expects `HOLD` only of a fault it injects or of an acknowledgement after its \
             lease: HOLD is what not knowing decides"
                .to_string(),
            Some(
                "add the fault (`faults:`, a step's `fault:`, a `deny` step) or the `sleep` that \
                 lets the lease lapse, or expect an outcome"
                    .to_string(),
            ),
        );
    }
    let emulator_chaos = f
        .get("emulator_chaos")
        .and_then(|n| decode_emulator_chaos(r, n));

    let area = f.get("area").and_then(|n| decode_area(r, n));
    let aspect = f.get("aspect").and_then(|n| {
        let word = r.string(n, "`aspect`")?;
        let aspect = Aspect::parse(&word);
        if aspect.is_none() {
            r.error_hint(
                n,
                format!("unknown aspect `{word}`"),
                suggest(&word, Aspect::KEYS),
            );
        }
        aspect
    });

    let mut case = Case {
        id: id?,
        pos: pos(id_node?),
        title,
        tags,
        behaviour: behaviour?,
        sources: sources?,
        retries,
        protocols,
        queues,
        steps,
        expect,
        trials: trials?,
        faults,
        emulator_chaos,
        area,
        aspect: Aspect::Semantics,
    };
    case.aspect = aspect.unwrap_or_else(|| derive_aspect(&case));
    if r.diags.len() == errors_before {
        let budget = case_budget(&case);
        let max = limits.max_for(&case);
        if budget > max {
            r.error_hint(
                id_node?,
                format!(
                    "case `{}` may take up to {} (sleeps, receive waits, observe windows and 2s per SQS call), over the limit of {}",
                    case.id,
                    duration::format(budget),
                    duration::format(max)
                ),
                "shorten sleeps or observe windows, or split the case",
            );
        }
    }
    Some(case)
}

/// `area:` (of a case or a suite): one of [`AREAS`](crate::suite::area::AREAS).
pub(super) fn decode_area(r: &mut Reader, n: &Node) -> Option<String> {
    let word = r.string(n, "`area`")?;
    if area::area(&word).is_some() {
        Some(word)
    } else {
        r.error_hint(
            n,
            format!("unknown area `{word}`"),
            suggest(&word, &area::area_keys()),
        );
        None
    }
}

/// `faults:`: a list of faults, each naming operations some step of the case calls.
fn decode_case_faults(r: &mut Reader, n: &Node, steps: &[Step]) -> Vec<Fault> {
    let Some(items) = r.seq(n, "faults") else {
        return Vec::new();
    };
    let called: Vec<&str> = steps
        .iter()
        .flat_map(|s| step_calls(&s.action))
        .copied()
        .collect();
    let mut faults = Vec::new();
    for item in items {
        let Some(fault) = decode_fault(r, item, item, FaultSite::Case) else {
            continue;
        };
        let mut ok = true;
        for op in &fault.actions {
            if !called.contains(&op.value.as_str()) {
                let mut ops = called.clone();
                ops.sort_unstable();
                ops.dedup();
                push_at(
                    r,
                    op.pos,
                    &op.value,
                    format!(
                        "no step of this case calls `{}`: the fault would never fire",
                        op.value
                    ),
                    Some(format!("the steps call {}", ops.join(", "))),
                );
                ok = false;
            }
        }
        if ok {
            faults.push(fault);
        }
    }
    faults
}

/// `decision: HOLD` or a list of the playbook decisions allowed.
fn decode_decision(r: &mut Reader, v: &Node) -> Option<Spanned<Vec<Decision>>> {
    let names: Vec<String> = Decision::ALL
        .iter()
        .map(|d| d.as_str().to_string())
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let items: Vec<&Node> = match &v.data {
        saphyr::YamlData::Sequence(items) => items.iter().collect(),
        _ => vec![v],
    };
    if items.is_empty() {
        r.error_hint(
            v,
            "the list of allowed decisions is empty",
            format!("allow one or more of: {}", names.join(", ")),
        );
        return None;
    }
    let mut out = Vec::new();
    let mut ok = true;
    for item in items {
        let Some(name) = r.string(item, "a decision") else {
            ok = false;
            continue;
        };
        match Decision::from_name(&name) {
            Some(d) if !out.contains(&d) => out.push(d),
            Some(_) => {}
            None => {
                let upper = name.to_ascii_uppercase();
                let hint = if Decision::from_name(&upper).is_some() {
                    format!("decisions are written in capitals: `{upper}`")
                } else {
                    suggest(&name, &names)
                };
                r.error_hint(item, format!("unknown decision `{name}`"), hint);
                ok = false;
            }
        }
    }
    (ok && !out.is_empty()).then(|| Spanned {
        value: out,
        pos: pos(v),
    })
}

/// `emulator_chaos: <spec>`: one queue's chaos in the `--chaos` grammar, checked here so a
/// mistake points at the suite; kept in canonical form.
fn decode_emulator_chaos(r: &mut Reader, n: &Node) -> Option<String> {
    let spec = r.nonempty(n, "`emulator_chaos` (a chaos spec)")?;
    match sqsprobe_facts::chaos::Chaos::parse_queue(&spec) {
        Ok(chaos) => Some(chaos.to_string()),
        Err(e) => {
            r.error_hint(
                n,
                format!("`emulator_chaos` column {}: {}", e.column, e.message),
                "e.g. `emulator_chaos: redeliver-after-delete=1` (docs/chaos.md)",
            );
            None
        }
    }
}

/// Refuses an expectation only silence can meet over a window that short-polls (`wait: 0s`):
/// AWS samples a subset of its servers on a short poll and may return nothing while a message
/// is there, so silence over one is no evidence and such a case could never pass. The step's
/// own `outcome:`, and the case's (which applies to the last observe), are each checked.
fn check_short_poll_silence(r: &mut Reader, steps: &[Step], case_outcome: Option<&OutcomeExpect>) {
    let last_observe = steps
        .iter()
        .rposition(|s| matches!(s.action, Action::Observe(_)));
    for (i, step) in steps.iter().enumerate() {
        let Action::Observe(o) = &step.action else {
            continue;
        };
        if !o.wait.is_zero() {
            continue;
        }
        let case_level = (Some(i) == last_observe).then_some(case_outcome).flatten();
        for expect in [step.expect.outcome.as_ref(), case_level]
            .into_iter()
            .flatten()
        {
            if let Some(at) = silence_only(expect) {
                push_at(
                    r,
                    at,
                    "no_redelivery_within_window",
                    "only silence meets this outcome, and this window short-polls (`wait: 0s`): \
                     a short poll samples a subset of the servers and may return nothing while \
                     the message is there, so silence over it proves nothing"
                        .to_string(),
                    Some("long-poll the window: `wait: 1s` or more".to_string()),
                );
            }
        }
    }
}

/// Where an outcome expectation that only silence can meet is written, if it is one.
fn silence_only(expect: &OutcomeExpect) -> Option<Pos> {
    let only = |c: &Spanned<AllowedClasses>| {
        (c.value.classes() == [OutcomeClass::NoRedeliveryWithinWindow]).then_some(c.pos)
    };
    match expect {
        OutcomeExpect::All(c) => only(c),
        OutcomeExpect::PerMessage(map) => map.values().find_map(only),
    }
}
