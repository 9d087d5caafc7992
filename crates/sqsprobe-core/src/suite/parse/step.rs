//! One step: its keyword, its body, and its siblings `expect:`, `fault:` and `wire:`.

use saphyr::YamlData;

use super::expect::{EXPECT_KEYS, decode_step_expect};
use super::fault::{FaultSite, decode_fault};
use super::input::{Body, StepInput};
use super::scope::{Scope, queue_ref};
use super::steps::{self, StepSpec};
use super::wire::decode_wire;
use crate::suite::limits::Limits;
use crate::suite::model::*;
use crate::suite::yaml::{Fields, Node, Reader, pos};
use sqsprobe_facts::text::suggest::suggest;

pub(super) fn decode_step(
    r: &mut Reader,
    scope: &mut Scope,
    item: &Node,
    index: usize,
    limits: &Limits,
) -> Option<Step> {
    let YamlData::Mapping(map) = &item.data else {
        r.error_hint(
            item,
            "a step is a mapping like `- receive: {queue: q, as: A}`",
            format!("step keywords: {}", steps::keywords().join(", ")),
        );
        return None;
    };
    let mut keyword: Option<(&StepSpec, &Node, &Node)> = None;
    let mut expect: Option<(&Node, &Node)> = None;
    let mut fault: Option<(&Node, &Node)> = None;
    let mut wire: Option<(&Node, &Node)> = None;
    let mut all = steps::keywords();
    all.extend(["expect", "fault", "wire"]);
    for (k, v) in map {
        let Some(name) = k.data.as_str() else {
            r.error(k, "expected a step keyword");
            continue;
        };
        if name == "expect" {
            expect = Some((k, v));
        } else if name == "fault" {
            fault = Some((k, v));
        } else if name == "wire" {
            wire = Some((k, v));
        } else if let Some(spec) = steps::spec(name) {
            if let Some((first, _, _)) = keyword {
                r.error_hint(
                    k,
                    format!(
                        "a step has one keyword; this one already has `{}`",
                        first.keyword
                    ),
                    "start a new list item with `- ` for the next step",
                );
            } else {
                keyword = Some((spec, k, v));
            }
        } else {
            let what = if keyword.is_none() {
                "step"
            } else {
                "key beside the step keyword"
            };
            r.error_hint(k, format!("unknown {what} `{name}`"), suggest(name, &all));
        }
    }
    let Some((spec, key, body)) = keyword else {
        if !map.is_empty() && r.diags.last().is_some_and(|d| d.pos.line == pos(item).line) {
            return None;
        }
        r.error_hint(
            item,
            "this step has no step keyword",
            format!("step keywords: {}", steps::keywords().join(", ")),
        );
        return None;
    };
    let what = super::input::a_step(spec.keyword);
    let mut expect_fields = None;
    if let Some((ek, ev)) = expect {
        expect_fields = r.fields(ek, ev, "a step `expect`", EXPECT_KEYS);
    }
    // As StepExpect::expects_error: an error code, or a status of 400 or more.
    let expects_error = expect_fields.as_ref().is_some_and(|f| {
        f.has("error")
            || f.get("status")
                .and_then(|n| n.data.as_integer())
                .is_some_and(|s| s >= 400)
    });
    let refusal_tested = expects_error || expect_fields.as_ref().is_some_and(|f| f.has("failed"));
    let expecting = Expecting {
        error: expects_error,
        refusal: refusal_tested,
    };
    let action = decode_action(r, scope, spec, key, body, &what, expecting, limits);
    let step_expect = match (&expect_fields, &action) {
        (Some(ef), Some(a)) => {
            decode_step_expect(r, scope, ef, spec, a, expect.map(|(k, _)| pos(k)))
        }
        _ => StepExpect::default(),
    };
    let site = FaultSite::Step {
        keyword: spec.keyword,
        calls: steps::calls_of(spec, action.as_ref()),
    };
    let step_fault = match fault {
        Some((fk, fv)) => Some(decode_fault(r, fk, fv, site)?),
        None => None,
    };
    let step_wire = match wire {
        Some((wk, wv)) => Some(decode_wire(r, scope, wk, wv, spec)?),
        None => None,
    };
    Some(Step {
        index,
        pos: pos(key),
        action: action?,
        expect: step_expect,
        fault: step_fault,
        wire: step_wire,
    })
}

/// What a step's `expect:` expects SQS to refuse (see [`StepInput`]).
#[derive(Debug, Clone, Copy)]
struct Expecting {
    error: bool,
    refusal: bool,
}

/// Checks a step body against its row of the table, then hands it to the row's decoder.
#[allow(clippy::too_many_arguments)]
fn decode_action(
    r: &mut Reader,
    scope: &mut Scope,
    spec: &StepSpec,
    key: &Node,
    body: &Node,
    what: &str,
    expecting: Expecting,
    limits: &Limits,
) -> Option<Action> {
    let (fields, ok) = match spec.body {
        Body::Duration => (Fields::empty(key, what), true),
        Body::Mapping | Body::NewQueue => {
            let f = r.fields(key, body, what, &spec.keys())?;
            let ok = r.require(&f, spec.required);
            (f, ok)
        }
    };
    let queue = match spec.body {
        Body::Mapping => fields.get("queue").and_then(|n| queue_ref(r, scope, n)),
        Body::NewQueue | Body::Duration => None,
    };
    let input = StepInput {
        body,
        fields,
        queue,
        expects_error: expecting.error,
        refusal_tested: expecting.refusal,
        limits,
    };
    let action = (spec.decode)(r, scope, &input)?;
    ok.then_some(action)
}
