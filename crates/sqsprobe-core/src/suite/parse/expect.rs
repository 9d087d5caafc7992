//! Expectations: a step's `expect:` and the `outcome:` it or the case may state.

use std::collections::BTreeMap;

use saphyr::YamlData;

use super::scope::{Scope, message_ref, queue_ref};
use super::steps::StepSpec;
use crate::suite::model::*;
use crate::suite::yaml::{Fields, Node, Reader, pos};
use sqsprobe_facts::text::suggest::suggest;

/// Every key a step's `expect:` may have; which of them apply to which step is the step
/// table's `expect` column ([`super::steps::STEPS`]).
pub(super) const EXPECT_KEYS: &[&str] = &[
    "error",
    "status",
    "messages",
    "received",
    "successful",
    "failed",
    "attributes",
    "outcome",
    "rate",
    "message_contains",
    "message",
    "absent",
    "within",
    "policy_sids",
    "reply",
];

pub(super) fn decode_step_expect(
    r: &mut Reader,
    scope: &Scope,
    f: &Fields,
    spec: &StepSpec,
    action: &Action,
    at: Option<Pos>,
) -> StepExpect {
    let mut e = StepExpect {
        pos: at,
        ..StepExpect::default()
    };
    for (key, key_node, v) in &f.entries {
        if !spec.expects(key) {
            r.error(
                key_node,
                format!(
                    "`{key}` does not apply to {}",
                    super::input::a_step(spec.keyword)
                ),
            );
            continue;
        }
        match *key {
            "error" => e.error = r.nonempty(v, "`error` (an error code)"),
            "status" => e.status = r.int(v, "`status`", 100, 599).map(|n| n as u16),
            "messages" => e.messages = decode_count(r, v),
            "successful" => {
                e.successful = r
                    .int(v, "`successful`", 0, i64::from(u32::MAX))
                    .map(|n| n as u32)
            }
            "received" => {
                // ListDeadLetterSourceQueues answers queues, so its labels are queue labels.
                let queues = matches!(action, Action::ListDeadLetterSourceQueues { .. });
                if let Some(items) = r.seq(v, "message labels") {
                    e.received = items
                        .iter()
                        .filter_map(|i| {
                            if queues {
                                queue_ref(r, scope, i)
                            } else {
                                message_ref(r, scope, i)
                            }
                        })
                        .collect();
                }
            }
            "failed" => {
                if let Some(items) = r.seq(v, "failed entries") {
                    let mut out = Vec::new();
                    for item in items {
                        let Some(ff) = r.fields(
                            item,
                            item,
                            "a `failed` entry",
                            &["id", "code", "sender_fault"],
                        ) else {
                            continue;
                        };
                        if !r.require(&ff, &["code"]) {
                            continue;
                        }
                        let Some(code) = ff.get("code").and_then(|n| r.nonempty(n, "`code`"))
                        else {
                            continue;
                        };
                        out.push(FailedEntryExpect {
                            id: ff.get("id").and_then(|n| r.string(n, "`id`")),
                            code,
                            sender_fault: ff
                                .get("sender_fault")
                                .and_then(|n| r.bool(n, "`sender_fault`")),
                        });
                    }
                    e.failed = Some(out);
                }
            }
            "attributes" => {
                (e.attributes, e.attribute_shapes) = decode_attributes(r, v).unwrap_or_default()
            }
            "message_contains" => {
                e.message_contains = r.nonempty(v, "`message_contains` (error message text)")
            }
            "message" => e.message = r.nonempty(v, "`message` (the exact error message)"),
            "absent" => e.absent = r.strings(v, "attribute names", true).unwrap_or_default(),
            "within" => e.within = r.duration(v, "`within`"),
            "policy_sids" => e.policy_sids = decode_policy_sids(r, v),
            "reply" => {
                e.reply = super::wire::decode_format(r, v, "`reply`").map(|value| Spanned {
                    value,
                    pos: pos(key_node),
                })
            }
            "outcome" => {
                let tracks: Vec<String> = match action {
                    Action::Observe(o) => o.messages.iter().map(|m| m.value.clone()).collect(),
                    _ => Vec::new(),
                };
                e.outcome = decode_outcome(r, scope, v, &tracks);
            }
            "rate" => e.rate = decode_rate(r, v),
            _ => {}
        }
    }
    e
}

/// `attributes: {Name: value | "*" | {matches: <regex>, above: <integer>}}`: the values to
/// compare, and the shapes, each pattern compiled here so a bad one is an error at its position.
#[allow(clippy::type_complexity)]
fn decode_attributes(
    r: &mut Reader,
    v: &Node,
) -> Option<(BTreeMap<String, String>, BTreeMap<String, AttrShape>)> {
    let mut values = BTreeMap::new();
    let mut shapes = BTreeMap::new();
    for (name, key, value) in r.map_entries(v, "`attributes`")? {
        if !matches!(value.data, YamlData::Mapping(_)) {
            if let Some(s) = r.string(value, &format!("the value of `{name}`")) {
                values.insert(name.to_string(), s);
            }
            continue;
        }
        if let Some(shape) = decode_shape(r, key, value, name) {
            shapes.insert(name.to_string(), shape);
        }
    }
    Some((values, shapes))
}

/// `{matches: <regex>, above: <integer>}`, at least one of them.
fn decode_shape(r: &mut Reader, key: &Node, value: &Node, name: &str) -> Option<AttrShape> {
    let what = format!("the shape of `{name}`");
    let f = r.fields(key, value, &what, &["matches", "above"])?;
    if f.entries.is_empty() {
        // Unknown keys were reported as such; an empty mapping says nothing.
        if matches!(&value.data, YamlData::Mapping(m) if m.is_empty()) {
            r.error_hint(
                value,
                format!("{what} is empty"),
                "give `matches: <regex>`, `above: <integer>`, or both",
            );
        }
        return None;
    }
    let mut shape = AttrShape::default();
    let mut ok = true;
    if let Some(node) = f.get("matches") {
        match r.nonempty(node, "`matches` (a regular expression)") {
            Some(pattern) => match Pattern::new(&pattern) {
                Ok(compiled) => shape.matches = Some(compiled),
                Err(err) => {
                    // regex-lite explains over several lines; the last says what is wrong.
                    let why = err.to_string();
                    let why = why.lines().last().unwrap_or_default().trim().to_string();
                    r.error_hint(
                        node,
                        format!("`matches` is not a regular expression: {why}"),
                        "regex-lite syntax (Rust's regex without Unicode classes): e.g. `^[1-9][0-9]{19,}$`",
                    );
                    ok = false;
                }
            },
            None => ok = false,
        }
    }
    if let Some(node) = f.get("above") {
        match r.string(node, "`above` (a decimal integer)") {
            Some(n) if is_decimal(&n) => shape.above = Some(n),
            Some(n) => {
                r.error_hint(
                    node,
                    format!("`above` is `{n}`, not a decimal integer"),
                    "digits only, without leading zeros: e.g. `above: '18446744073709551615'`",
                );
                ok = false;
            }
            None => ok = false,
        }
    }
    ok.then_some(shape)
}

/// Digits only, without leading zeros (`0` itself allowed).
fn is_decimal(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
}

/// `policy_sids: [label, ...]`: never empty (a Policy without statements is not what AWS
/// leaves behind: after the last RemovePermission there is no Policy, which `absent` says).
fn decode_policy_sids(r: &mut Reader, v: &Node) -> Option<Vec<String>> {
    let sids = r.strings(v, "statement Sids", true)?;
    if sids.is_empty() {
        r.error_hint(
            v,
            "`policy_sids` is empty",
            "to expect no Policy at all (after the last RemovePermission), write `absent: [Policy]`",
        );
        return None;
    }
    Some(sids)
}

/// One expectable class name.
fn outcome_class(r: &mut Reader, n: &Node, what: &str) -> Option<OutcomeClass> {
    let s = r.string(n, "an outcome class")?;
    match OutcomeClass::from_name(&s) {
        Some(OutcomeClass::Inconclusive) => {
            r.error_hint(
                n,
                format!("`inconclusive` is never {what}"),
                "expect `delivered`, `observed_redelivery` or `no_redelivery_within_window`; an inconclusive run is reported as such",
            );
            None
        }
        Some(class) => Some(class),
        None => {
            r.error_hint(
                n,
                format!("unknown outcome class `{s}`"),
                suggest(&s, OutcomeClass::EXPECTABLE),
            );
            None
        }
    }
}

/// One class or a list of the classes allowed.
fn allowed_classes(r: &mut Reader, n: &Node) -> Option<Spanned<AllowedClasses>> {
    let classes = match &n.data {
        YamlData::Sequence(items) => {
            if items.is_empty() {
                r.error_hint(
                    n,
                    "the list of allowed outcome classes is empty",
                    format!(
                        "allow one or more of: {}",
                        OutcomeClass::EXPECTABLE.join(", ")
                    ),
                );
                return None;
            }
            let mut out = Vec::new();
            let mut ok = true;
            for item in items {
                match outcome_class(r, item, "an expectation") {
                    Some(c) => out.push(c),
                    None => ok = false,
                }
            }
            if !ok {
                return None;
            }
            out
        }
        _ => vec![outcome_class(r, n, "an expectation")?],
    };
    Some(Spanned {
        value: AllowedClasses::new(classes)?,
        pos: pos(n),
    })
}

/// `outcome: <classes>` or `outcome: {label: <classes>}`, where `<classes>` is one class or a
/// list; labels must be sent and, when the observe step names its messages, tracked by it.
pub(super) fn decode_outcome(
    r: &mut Reader,
    scope: &Scope,
    v: &Node,
    tracks: &[String],
) -> Option<OutcomeExpect> {
    if !matches!(v.data, YamlData::Mapping(_)) {
        return allowed_classes(r, v).map(OutcomeExpect::All);
    }
    let mut per = BTreeMap::new();
    for (label, key, class) in r.map_entries(v, "`outcome`")? {
        let known = message_ref(r, scope, key).is_some();
        if known && !tracks.is_empty() && !tracks.iter().any(|t| t == label) {
            r.error_hint(
                key,
                format!("message `{label}` is not tracked by the observe step"),
                format!("it tracks: {}", tracks.join(", ")),
            );
        }
        if let Some(c) = allowed_classes(r, class) {
            per.insert(label.to_string(), c);
        }
    }
    if per.is_empty() && matches!(&v.data, YamlData::Mapping(m) if m.is_empty()) {
        r.error(v, "`outcome` is empty");
    }
    Some(OutcomeExpect::PerMessage(per))
}

/// `messages: N` (exactly) or `messages: {at_least?: N, at_most?: N}` (a range, for answers
/// AWS leaves open: a short poll that may miss).
fn decode_count(r: &mut Reader, v: &Node) -> Option<CountExpect> {
    let max = i64::from(u32::MAX);
    if !matches!(v.data, YamlData::Mapping(_)) {
        return r
            .int(v, "`messages`", 0, max)
            .map(|n| CountExpect::exactly(n as u32));
    }
    let f = r.fields(v, v, "a message count", &["at_least", "at_most"])?;
    let at_least = f
        .get("at_least")
        .and_then(|n| r.int(n, "`at_least`", 0, max));
    let at_most = f.get("at_most").and_then(|n| r.int(n, "`at_most`", 0, max));
    if f.entries.is_empty() {
        if f.missing("at_least") && f.missing("at_most") {
            r.error_hint(
                v,
                "`messages` has no bound",
                "give a number, or `at_least`, `at_most`, or both",
            );
        }
        return None;
    }
    if f.entries.len() != usize::from(at_least.is_some()) + usize::from(at_most.is_some()) {
        return None;
    }
    if let (Some(lo), Some(hi)) = (at_least, at_most)
        && lo > hi
    {
        r.error(
            f.key("at_least").unwrap_or(v),
            format!("`at_least` ({lo}) is above `at_most` ({hi}): no count meets both"),
        );
        return None;
    }
    Some(CountExpect {
        at_least: at_least.unwrap_or(0) as u32,
        at_most: at_most.map(|n| n as u32),
    })
}

/// `rate: {<class>: {at_least?: <share>, at_most?: <share>}}`.
pub(super) fn decode_rate(r: &mut Reader, v: &Node) -> Option<RateExpect> {
    let entries = r.map_entries(v, "`rate`")?;
    if entries.is_empty() {
        r.error_hint(
            v,
            "`rate` is empty",
            "e.g. `rate: {observed_redelivery: {at_most: 5%}}`",
        );
        return None;
    }
    let mut rate = RateExpect::default();
    for (_, key, bounds) in entries {
        let Some(class) = outcome_class(
            r,
            key,
            "a rate (an inconclusive trial has no class: it counts both ways in every class's rate)",
        ) else {
            continue;
        };
        let Some(bf) = r.fields(key, bounds, "a rate bound", &["at_least", "at_most"]) else {
            continue;
        };
        let at_least = bf.get("at_least").and_then(|n| r.share(n, "`at_least`"));
        let at_most = bf.get("at_most").and_then(|n| r.share(n, "`at_most`"));
        if bf.entries.is_empty() {
            // A misspelt bound was reported as such already.
            if !(bf.missing("at_least") && bf.missing("at_most")) {
                continue;
            }
            r.error_hint(
                key,
                format!("the rate of `{}` has no bound", class.as_str()),
                "give `at_least`, `at_most`, or both",
            );
            continue;
        }
        if let (Some(lo), Some(hi)) = (at_least, at_most)
            && lo > hi
        {
            r.error(
                bf.key("at_least").unwrap_or(key),
                format!(
                    "`at_least` ({}) is above `at_most` ({}): no rate meets both",
                    percent(lo),
                    percent(hi)
                ),
            );
            continue;
        }
        if bf.entries.len() != usize::from(at_least.is_some()) + usize::from(at_most.is_some()) {
            continue;
        }
        rate.bounds.insert(
            class,
            Spanned {
                value: RateBound { at_least, at_most },
                pos: pos(key),
            },
        );
    }
    Some(rate)
}

/// `0.05` as `5%`.
fn percent(share: f64) -> String {
    format!("{}%", (share * 1e6).round() / 1e4)
}
