//! Decoding a suite file into the model, checking references as it goes.
//!
//! One pass, in file order: a case's steps may only refer to queues, attempts, messages and
//! move tasks defined before them, which is exactly what the runner will have at that point.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use saphyr::{LoadableYamlNode, MarkedYaml, YamlData};

use super::diagnostic::{Diagnostic, suggest};
use super::limits::{Limits, case_budget};
use super::model::*;
use super::yaml::{Fields, Node, Reader, marker_pos, pos};
use crate::duration;

const SUITE_KEYS: &[&str] = &["suite", "description", "cases"];
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
];

/// The wire protocols a case may be limited to (`protocols:`).
pub const PROTOCOLS: &[&str] = &["json", "query"];
const QUEUE_KEYS: &[&str] = &[
    "type",
    "create",
    "visibility_timeout",
    "delay",
    "retention",
    "receive_wait",
    "max_message_size",
    "content_based_dedup",
    "dedup_scope",
    "throughput_limit",
    "redrive",
    "redrive_allow",
    "attributes",
    "tags",
];
const SEND_KEYS: &[&str] = &[
    "queue",
    "message",
    "body",
    "body_size",
    "delay",
    "group",
    "dedup_id",
    "attributes",
];
const STEP_EXPECT_KEYS: &[&str] = &[
    "error",
    "status",
    "messages",
    "received",
    "successful",
    "failed",
    "attributes",
    "outcome",
    "message_contains",
    "absent",
    "within",
];

/// Parses and validates one suite file. Returns every problem found, not just the first.
pub fn parse_suite(path: &str, source: &str, limits: &Limits) -> Result<Suite, Vec<Diagnostic>> {
    let mut r = Reader::new(path, source);
    let docs = match MarkedYaml::load_from_str(source) {
        Ok(docs) => docs,
        Err(e) => {
            let d = Diagnostic::new(
                path,
                marker_pos(e.marker()),
                1,
                format!("invalid YAML: {}", e.info()),
            );
            return Err(vec![d]);
        }
    };
    let Some(root) = docs.first() else {
        let d = Diagnostic::new(path, Pos { line: 1, col: 1 }, 1, "the suite file is empty")
            .with_hint("a suite is a mapping with `cases:`; see docs/suite-format.md");
        return Err(vec![d]);
    };
    if let Some(second) = docs.get(1) {
        r.error(
            second,
            "a suite file holds one YAML document; found another",
        );
    }
    let suite = decode_suite(&mut r, root, limits);
    match suite {
        Some(s) if r.diags.is_empty() => Ok(s),
        _ => {
            let mut diags = r.diags;
            diags.sort_by_key(|d| d.pos);
            Err(diags)
        }
    }
}

fn decode_suite(r: &mut Reader, root: &Node, limits: &Limits) -> Option<Suite> {
    let f = r.fields(root, root, "the suite", SUITE_KEYS)?;
    let name = match f.get("suite") {
        Some(n) => r.nonempty(n, "`suite`"),
        None => Some(
            Path::new(r.path)
                .file_stem()
                .map_or_else(|| r.path.to_string(), |s| s.to_string_lossy().into_owned()),
        ),
    };
    let description = f
        .get("description")
        .and_then(|n| r.string(n, "`description`"));
    let mut cases = Vec::new();
    match f.get("cases") {
        None => {
            r.error(root, "the suite needs `cases:`, a list of cases");
        }
        Some(list) => {
            let items = r.seq(list, "cases")?;
            if items.is_empty() {
                r.error(list, "`cases` is empty; a suite needs at least one case");
            }
            let mut ids: BTreeMap<String, Pos> = BTreeMap::new();
            for item in items {
                if let Some(case) = decode_case(r, item, limits) {
                    if let Some(first) = ids.get(&case.id) {
                        let msg = format!(
                            "duplicate case id `{}`; first used at line {}",
                            case.id, first.line
                        );
                        let key = item.data.as_mapping_get("id").unwrap_or(item);
                        r.error(key, msg);
                    } else {
                        ids.insert(case.id.clone(), case.pos);
                    }
                    cases.push(case);
                }
            }
        }
    }
    Some(Suite {
        path: r.path.to_string(),
        name: name?,
        description,
        cases,
    })
}

/// What a case has defined so far, for reference checks.
#[derive(Default)]
struct Scope {
    queues: BTreeMap<String, QueueKind>,
    /// attempt name → queue label of its receive.
    attempts: BTreeMap<String, String>,
    messages: BTreeMap<String, Pos>,
    sends: usize,
    tasks: BTreeMap<String, Pos>,
    observes: usize,
    /// Labels tracked by the last observe step (empty: every message).
    last_observe_tracks: Vec<String>,
}

fn is_label(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

fn decode_case(r: &mut Reader, item: &Node, limits: &Limits) -> Option<Case> {
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
            let def = decode_queue_fields(r, key, value, label, "a queue definition", &[]);
            if let Some(def) = &def {
                scope.queues.insert(label.to_string(), def.kind);
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

    let mut expect = CaseExpect::default();
    let case_expect = f.get("expect").and_then(|n| {
        r.fields(
            f.key("expect").unwrap_or(n),
            n,
            "a case `expect`",
            &["outcome"],
        )
    });
    if let Some(ef) = case_expect
        && let (Some(key), Some(v)) = (ef.key("outcome"), ef.get("outcome"))
    {
        if scope.observes == 0 {
            r.error_hint(
                key,
                "a case `outcome` needs an `observe` step",
                "add an `observe` step; the outcome applies to the last one",
            );
        }
        let tracks = scope.last_observe_tracks.clone();
        expect.outcome = decode_outcome(r, &scope, v, &tracks);
    }

    let case = Case {
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
    };
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

fn check_queue_label(r: &mut Reader, node: &Node, label: &str) -> bool {
    if is_label(label, 20) {
        return true;
    }
    r.error_hint(
        node,
        format!("invalid queue label `{label}`"),
        "queue labels are 1 to 20 characters of `a-z`, `0-9` and `-`",
    );
    false
}

/// Reference checks of a queue definition against the queues in scope.
fn check_queue_refs(r: &mut Reader, scope: &Scope, def: &QueueDef) {
    check_arn_refs(r, scope, def.pos, &def.attributes);
    if let Some(redrive) = &def.redrive {
        match scope.queues.get(&redrive.dlq.value) {
            None => push_at(r, redrive.dlq.pos, &redrive.dlq.value, format!("unknown dead-letter queue `{}`", redrive.dlq.value), Some(known_queues(scope))),
            Some(kind) if *kind != def.kind => push_at(
                r,
                redrive.dlq.pos,
                &redrive.dlq.value,
                format!("dead-letter queue `{}` is {}, but `{}` is {}", redrive.dlq.value, kind_name(*kind), def.label, kind_name(def.kind)),
                Some("a DLQ must be the same type as its source queue (API_CreateQueue, RedrivePolicy)".into()),
            ),
            Some(_) => {}
        }
    }
    if let Some(RedriveAllow::ByQueue(labels)) = &def.redrive_allow {
        for l in labels {
            if !scope.queues.contains_key(&l.value) {
                push_at(
                    r,
                    l.pos,
                    &l.value,
                    format!("unknown queue `{}` in `by_queue`", l.value),
                    Some(known_queues(scope)),
                );
            }
        }
    }
}

/// Every `${arn:<label>}` in raw attribute values must name a queue of the case.
fn check_arn_refs(r: &mut Reader, scope: &Scope, at: Pos, attributes: &BTreeMap<String, String>) {
    for (name, value) in attributes {
        for label in super::model::arn_refs(value) {
            if !scope.queues.contains_key(label) {
                push_at(
                    r,
                    at,
                    name,
                    format!("`${{arn:{label}}}` in attribute `{name}` names no queue of this case"),
                    Some(known_queues(scope)),
                );
            }
        }
    }
}

fn kind_name(k: QueueKind) -> &'static str {
    match k {
        QueueKind::Standard => "a standard queue",
        QueueKind::Fifo => "a FIFO queue",
    }
}

fn known_queues(scope: &Scope) -> String {
    if scope.queues.is_empty() {
        "no queues are defined yet; add one under `queues:` or with a `create-queue` step".into()
    } else {
        let names: Vec<&str> = scope.queues.keys().map(String::as_str).collect();
        format!("defined queues: {}", names.join(", "))
    }
}

/// Records an error at a stored position, underlining `text`'s length.
fn push_at(r: &mut Reader, at: Pos, text: &str, message: String, hint: Option<String>) {
    let mut d = Diagnostic::new(r.path, at, text.chars().count() as u32, message);
    d.hint = hint;
    r.diags.push(d);
}

/// A queue definition body (shared by `queues:` entries and `create-queue` steps).
/// Returns the definition; `extra` keys (like `queue`) are allowed and left to the caller.
fn decode_queue_fields<'a, 'n>(
    r: &mut Reader,
    owner: &'a Node<'n>,
    node: &'a Node<'n>,
    label: &str,
    what: &str,
    extra: &[&str],
) -> Option<QueueDef> {
    let allowed: Vec<&str> = QUEUE_KEYS.iter().chain(extra).copied().collect();
    let f = r.fields(owner, node, what, &allowed)?;
    let kind = match f.get("type") {
        None => QueueKind::Standard,
        Some(n) => match r.string(n, "`type`").as_deref() {
            Some("standard") => QueueKind::Standard,
            Some("fifo") => QueueKind::Fifo,
            Some(other) => {
                r.error_hint(
                    n,
                    format!("unknown queue type `{other}`"),
                    suggest(other, &["standard", "fifo"]),
                );
                QueueKind::Standard
            }
            None => QueueKind::Standard,
        },
    };
    let secs =
        |r: &mut Reader, key: &str| f.get(key).and_then(|n| r.seconds(n, &format!("`{key}`")));
    let visibility_timeout = secs(r, "visibility_timeout");
    let delay = secs(r, "delay");
    let retention = secs(r, "retention");
    let receive_wait = secs(r, "receive_wait");
    let max_message_size = f
        .get("max_message_size")
        .and_then(|n| r.int(n, "`max_message_size`", 0, u32::MAX as i64))
        .map(|n| n as u32);
    let content_based_dedup = f
        .get("content_based_dedup")
        .and_then(|n| r.bool(n, "`content_based_dedup`"));
    let dedup_scope = f
        .get("dedup_scope")
        .and_then(|n| one_of(r, n, "`dedup_scope`", &["queue", "messageGroup"]));
    let throughput_limit = f.get("throughput_limit").and_then(|n| {
        one_of(
            r,
            n,
            "`throughput_limit`",
            &["perQueue", "perMessageGroupId"],
        )
    });
    let redrive = f.get("redrive").and_then(|n| {
        let rf = r.fields(
            f.key("redrive").unwrap_or(n),
            n,
            "`redrive`",
            &["dlq", "max_receive_count"],
        )?;
        if !r.require(&rf, &["dlq", "max_receive_count"]) {
            return None;
        }
        let dlq_node = rf.get("dlq")?;
        let dlq = r.string(dlq_node, "`dlq` (a queue label)")?;
        let max = r.int(rf.get("max_receive_count")?, "`max_receive_count`", 1, 1000)?;
        Some(Redrive {
            dlq: Spanned {
                value: dlq,
                pos: pos(dlq_node),
            },
            max_receive_count: max as u32,
        })
    });
    let redrive_allow = f.get("redrive_allow").and_then(|n| match &n.data {
        YamlData::Mapping(_) => {
            let af = r.fields(
                f.key("redrive_allow").unwrap_or(n),
                n,
                "`redrive_allow`",
                &["by_queue"],
            )?;
            if !r.require(&af, &["by_queue"]) {
                return None;
            }
            let list = af.get("by_queue")?;
            let items = r.seq(list, "queue labels")?;
            let mut labels = Vec::new();
            for i in items {
                labels.push(Spanned {
                    value: r.string(i, "a queue label")?,
                    pos: pos(i),
                });
            }
            Some(RedriveAllow::ByQueue(labels))
        }
        _ => match r.string(n, "`redrive_allow`").as_deref() {
            Some("allowAll") => Some(RedriveAllow::AllowAll),
            Some("denyAll") => Some(RedriveAllow::DenyAll),
            Some(other) => {
                r.error_hint(
                    n,
                    format!("unknown `redrive_allow` value `{other}`"),
                    "write `allowAll`, `denyAll` or `{by_queue: [<label>, ...]}`",
                );
                None
            }
            None => None,
        },
    });
    let attributes = f
        .get("attributes")
        .and_then(|n| r.string_map(n, "`attributes`"))
        .unwrap_or_default();
    let tags = f
        .get("tags")
        .and_then(|n| r.string_map(n, "`tags`"))
        .unwrap_or_default();
    let create = f
        .get("create")
        .and_then(|n| r.bool(n, "`create`"))
        .unwrap_or(true);
    let def = QueueDef {
        label: label.to_string(),
        pos: pos(owner),
        kind,
        create,
        visibility_timeout,
        delay,
        retention,
        receive_wait,
        max_message_size,
        content_based_dedup,
        dedup_scope,
        throughput_limit,
        redrive,
        redrive_allow,
        attributes,
        tags,
        name_suffix: None,
    };
    Some(def)
}

fn one_of(r: &mut Reader, n: &Node, what: &str, allowed: &[&str]) -> Option<String> {
    let s = r.string(n, what)?;
    if allowed.contains(&s.as_str()) {
        Some(s)
    } else {
        r.error_hint(
            n,
            format!("unknown {what} value `{s}`"),
            suggest(&s, allowed),
        );
        None
    }
}

/// A queue label that must already be defined.
fn queue_ref(r: &mut Reader, scope: &Scope, n: &Node) -> Option<Spanned<String>> {
    let label = r.string(n, "a queue label")?;
    if !scope.queues.contains_key(&label) {
        let names: Vec<&str> = scope.queues.keys().map(String::as_str).collect();
        let hint = match super::diagnostic::closest(&label, names.iter().copied()) {
            Some(c) => format!("did you mean `{c}`?"),
            None => known_queues(scope),
        };
        r.error_hint(n, format!("unknown queue `{label}`"), hint);
        return None;
    }
    Some(Spanned {
        value: label,
        pos: pos(n),
    })
}

/// A message label that must have been sent earlier in the case.
fn message_ref(r: &mut Reader, scope: &Scope, n: &Node) -> Option<Spanned<String>> {
    let label = r.string(n, "a message label")?;
    if !scope.messages.contains_key(&label) {
        let names: Vec<&str> = scope.messages.keys().map(String::as_str).collect();
        let hint = match super::diagnostic::closest(&label, names.iter().copied()) {
            Some(c) => format!("did you mean `{c}`?"),
            None if names.is_empty() => "no message was sent before this step".to_string(),
            None => format!("messages sent so far: {}", names.join(", ")),
        };
        r.error_hint(
            n,
            format!("unknown message `{label}`: no earlier send has this label"),
            hint,
        );
        return None;
    }
    Some(Spanned {
        value: label,
        pos: pos(n),
    })
}

fn decode_step(
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
            format!("step keywords: {}", Action::KEYWORDS.join(", ")),
        );
        return None;
    };
    let mut keyword: Option<(&str, &Node, &Node)> = None;
    let mut expect: Option<(&Node, &Node)> = None;
    let mut all: Vec<&str> = Action::KEYWORDS.to_vec();
    all.push("expect");
    for (k, v) in map {
        let Some(name) = k.data.as_str() else {
            r.error(k, "expected a step keyword");
            continue;
        };
        if name == "expect" {
            expect = Some((k, v));
        } else if Action::KEYWORDS.contains(&name) {
            if let Some((first, _, _)) = keyword {
                r.error_hint(
                    k,
                    format!("a step has one keyword; this one already has `{first}`"),
                    "start a new list item with `- ` for the next step",
                );
            } else {
                keyword = Some((name, k, v));
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
    let Some((name, key, body)) = keyword else {
        if !map.is_empty() && r.diags.last().is_some_and(|d| d.pos.line == pos(item).line) {
            return None;
        }
        r.error_hint(
            item,
            "this step has no step keyword",
            format!("step keywords: {}", Action::KEYWORDS.join(", ")),
        );
        return None;
    };
    let what = format!("a `{name}` step");
    let mut expect_fields = None;
    if let Some((ek, ev)) = expect {
        expect_fields = r.fields(ek, ev, "a step `expect`", STEP_EXPECT_KEYS);
    }
    let expects_error = expect_fields
        .as_ref()
        .is_some_and(|f| f.has("error") || f.has("status"));
    let action = decode_action(r, scope, name, key, body, &what, expects_error, limits);
    let step_expect = match (&expect_fields, &action) {
        (Some(ef), Some(a)) => decode_step_expect(r, scope, ef, a, expect.map(|(k, _)| pos(k))),
        _ => StepExpect::default(),
    };
    Some(Step {
        index,
        pos: pos(key),
        action: action?,
        expect: step_expect,
    })
}

#[allow(clippy::too_many_arguments)]
fn decode_action(
    r: &mut Reader,
    scope: &mut Scope,
    name: &str,
    key: &Node,
    body: &Node,
    what: &str,
    expects_error: bool,
    limits: &Limits,
) -> Option<Action> {
    if name == "sleep" {
        return r.duration(body, "`sleep`").map(Action::Sleep);
    }
    if name == "create-queue" {
        let Some(label_node) = body.data.as_mapping_get("queue") else {
            if body.data.is_mapping() || body.data.is_null() {
                decode_queue_fields(r, key, body, "", what, &["queue"]);
            }
            r.error(key, format!("{what} needs `queue` (the new queue's label)"));
            return None;
        };
        let label = r.string(label_node, "a queue label")?;
        if !check_queue_label(r, label_node, &label) {
            return None;
        }
        // Only the definition keys are checked here; `queue` was read above.
        let mut def = decode_queue_fields(r, key, body, &label, what, &["queue", "name_suffix"])?;
        def.pos = pos(label_node);
        if let Some(n) = body.data.as_mapping_get("name_suffix") {
            let suffix = r.string(n, "`name_suffix`")?;
            if scope.queues.contains_key(&label) {
                r.error_hint(
                    n,
                    format!("`name_suffix` on queue `{label}`, which is already defined"),
                    "a re-created label keeps its first name; use a new label",
                );
                return None;
            }
            def.name_suffix = Some(suffix);
        }
        // A known label is created again under the same name (idempotent CreateQueue,
        // QueueAlreadyExists, QueueDeletedRecently); its name depends on its type, so the
        // type must stay.
        if let Some(kind) = scope.queues.get(&label)
            && *kind != def.kind
        {
            r.error_hint(
                label_node,
                format!(
                    "queue `{label}` is already defined as {}; a `create-queue` of a known label re-creates the same name",
                    kind_name(*kind)
                ),
                "keep its `type`, or use a new label for a different queue",
            );
            return None;
        }
        check_queue_refs(r, scope, &def);
        scope.queues.insert(label, def.kind);
        return Some(Action::CreateQueue(def));
    }
    let allowed: &[&str] = match name {
        "send" => SEND_KEYS,
        "send-batch" => &["queue", "entries"],
        "receive" => &[
            "queue",
            "as",
            "max",
            "wait",
            "visibility_timeout",
            "attribute_names",
            "message_attribute_names",
            "request_attempt_id",
        ],
        "delete" => &["queue", "attempt", "message", "handle"],
        "delete-batch" | "change-visibility-batch" => &["queue", "entries"],
        "change-visibility" => &["queue", "attempt", "message", "handle", "timeout"],
        "get-attributes" => &["queue", "names"],
        "set-attributes" => &["queue", "attributes"],
        "observe" => &[
            "queue",
            "window",
            "max_receives",
            "wait",
            "visibility_timeout",
            "messages",
            "delete",
        ],
        "list-queues" => &["max_results"],
        "tag-queue" => &["queue", "tags"],
        "untag-queue" => &["queue", "keys"],
        "start-move-task" => &["source", "destination", "max_per_second", "as"],
        "list-move-tasks" => &["source"],
        "cancel-move-task" => &["task"],
        _ => &["queue"],
    };
    let f = r.fields(key, body, what, allowed)?;
    let required: &[&str] = match name {
        "send-batch" | "delete-batch" | "change-visibility-batch" => &["entries"],
        "set-attributes" => &["queue", "attributes"],
        "tag-queue" => &["queue", "tags"],
        "untag-queue" => &["queue", "keys"],
        "observe" => &["queue", "window"],
        "change-visibility" => &["timeout"],
        "delete" | "list-queues" => &[],
        "start-move-task" | "list-move-tasks" => &["source"],
        "cancel-move-task" => &["task"],
        _ => &["queue"],
    };
    let mut ok = r.require(&f, required);
    if name == "send-batch" {
        ok &= r.require(&f, &["queue"]);
    }
    let queue = f.get("queue").and_then(|n| queue_ref(r, scope, n));
    let action = match name {
        "send" => Action::Send(decode_send(r, scope, &f, queue?, expects_error)?),
        "send-batch" => {
            let queue = queue?;
            let items = r.seq(f.get("entries")?, "batch entries")?;
            let mut entries = Vec::new();
            for item in items {
                let Some(ef) = r.fields(
                    item,
                    item,
                    "a `send-batch` entry",
                    &[&["id"], SEND_KEYS].concat(),
                ) else {
                    continue;
                };
                if let Some(k) = ef.key("queue") {
                    r.error(
                        k,
                        "a batch entry has no `queue`; the batch's `queue` applies to every entry",
                    );
                    continue;
                }
                let id = ef.get("id").and_then(|n| r.string(n, "an entry `id`"));
                if let Some(send) = decode_send(r, scope, &ef, queue.clone(), expects_error) {
                    entries.push(BatchSend {
                        id: id.unwrap_or_else(|| send.message.clone()),
                        send,
                    });
                }
            }
            Action::SendBatch { queue, entries }
        }
        "receive" => {
            let attempt = match f.get("as") {
                Some(n) => {
                    let a = r.nonempty(n, "`as` (an attempt name)")?;
                    if scope.attempts.contains_key(&a) {
                        r.error_hint(
                            n,
                            format!("attempt `{a}` is already defined in this case"),
                            "give every receive its own attempt name",
                        );
                        return None;
                    }
                    if let Some(q) = &queue {
                        scope.attempts.insert(a.clone(), q.value.clone());
                    }
                    Some(Spanned {
                        value: a,
                        pos: pos(n),
                    })
                }
                None => None,
            };
            let secs =
                |r: &mut Reader, k: &str| f.get(k).and_then(|n| r.seconds(n, &format!("`{k}`")));
            Action::Receive(Receive {
                queue: queue?,
                attempt,
                max: f
                    .get("max")
                    .and_then(|n| r.int(n, "`max`", i32::MIN as i64, i32::MAX as i64))
                    .map(|n| n as i32),
                wait: secs(r, "wait"),
                visibility_timeout: secs(r, "visibility_timeout"),
                attribute_names: f
                    .get("attribute_names")
                    .and_then(|n| r.strings(n, "attribute names", true))
                    .unwrap_or_else(|| vec!["All".to_string()]),
                message_attribute_names: f
                    .get("message_attribute_names")
                    .and_then(|n| r.strings(n, "message attribute names", true))
                    .unwrap_or_default(),
                request_attempt_id: f
                    .get("request_attempt_id")
                    .and_then(|n| r.string(n, "`request_attempt_id`")),
            })
        }
        "delete" => {
            let target = handle_ref(r, scope, &f)?;
            let queue = batch_queue(r, scope, &f, queue, std::slice::from_ref(&target))?;
            Action::Delete { queue, target }
        }
        "change-visibility" => {
            let target = handle_ref(r, scope, &f);
            let timeout = r.seconds(f.get("timeout")?, "`timeout`");
            let target = target?;
            let queue = batch_queue(r, scope, &f, queue, std::slice::from_ref(&target))?;
            Action::ChangeVisibility {
                queue,
                target,
                timeout: timeout?,
            }
        }
        "delete-batch" | "change-visibility-batch" => {
            let items = r.seq(f.get("entries")?, "batch entries")?;
            let mut handles = Vec::new();
            let mut timeouts = Vec::new();
            let entry_keys: &[&str] = if name == "delete-batch" {
                &["id", "attempt", "message", "handle"]
            } else {
                &["id", "attempt", "message", "handle", "timeout"]
            };
            let entry_what = format!("a `{name}` entry");
            let mut good = true;
            for (i, item) in items.iter().enumerate() {
                let Some(ef) = r.fields(item, item, &entry_what, entry_keys) else {
                    good = false;
                    continue;
                };
                let id = ef
                    .get("id")
                    .and_then(|n| r.string(n, "an entry `id`"))
                    .unwrap_or_else(|| format!("e{}", i + 1));
                let target = handle_ref(r, scope, &ef);
                let timeout = if name == "change-visibility-batch" {
                    if !r.require(&ef, &["timeout"]) {
                        good = false;
                        continue;
                    }
                    r.seconds(ef.get("timeout")?, "`timeout`")
                } else {
                    Some(Duration::ZERO)
                };
                match (target, timeout) {
                    (Some(t), Some(d)) => {
                        handles.push((id, t));
                        timeouts.push(d);
                    }
                    _ => good = false,
                }
            }
            if !good {
                return None;
            }
            let targets: Vec<HandleRef> = handles.iter().map(|(_, t)| t.clone()).collect();
            let queue = batch_queue(r, scope, &f, queue, &targets)?;
            if name == "delete-batch" {
                let entries = handles
                    .into_iter()
                    .map(|(id, target)| BatchHandle { id, target })
                    .collect();
                Action::DeleteBatch { queue, entries }
            } else {
                let entries = handles
                    .into_iter()
                    .zip(timeouts)
                    .map(|((id, target), timeout)| BatchVisibility {
                        id,
                        target,
                        timeout,
                    })
                    .collect();
                Action::ChangeVisibilityBatch { queue, entries }
            }
        }
        "get-attributes" => Action::GetAttributes {
            queue: queue?,
            names: f
                .get("names")
                .and_then(|n| r.strings(n, "attribute names", true))
                .unwrap_or_else(|| vec!["All".into()]),
        },
        "set-attributes" => {
            let attributes = r.string_map(f.get("attributes")?, "`attributes`")?;
            check_arn_refs(r, scope, pos(f.get("attributes")?), &attributes);
            Action::SetAttributes {
                queue: queue?,
                attributes,
            }
        }
        "purge" => Action::Purge { queue: queue? },
        "delete-queue" => Action::DeleteQueue { queue: queue? },
        "get-queue-url" => Action::GetQueueUrl { queue: queue? },
        "list-queue-tags" => Action::ListQueueTags { queue: queue? },
        "list-dead-letter-source-queues" => Action::ListDeadLetterSourceQueues { queue: queue? },
        "list-queues" => Action::ListQueues {
            max_results: f
                .get("max_results")
                .and_then(|n| r.int(n, "`max_results`", i32::MIN as i64, i32::MAX as i64))
                .map(|n| n as i32),
        },
        "tag-queue" => {
            let tags = r.string_map(f.get("tags")?, "`tags`")?;
            Action::TagQueue {
                queue: queue?,
                tags,
            }
        }
        "untag-queue" => {
            let keys = r.strings(f.get("keys")?, "tag keys", true)?;
            Action::UntagQueue {
                queue: queue?,
                keys,
            }
        }
        "observe" => Action::Observe(decode_observe(r, scope, &f, queue, limits)?),
        "start-move-task" => {
            let source = queue_ref(r, scope, f.get("source")?);
            let destination = f.get("destination").and_then(|n| queue_ref(r, scope, n));
            let max_per_second = f
                .get("max_per_second")
                .and_then(|n| r.int(n, "`max_per_second`", i32::MIN as i64, i32::MAX as i64))
                .map(|n| n as i32);
            let task = match f.get("as") {
                Some(n) => {
                    let t = r.nonempty(n, "`as` (a task name)")?;
                    if let Some(first) = scope.tasks.get(&t) {
                        r.error(
                            n,
                            format!("move task `{t}` is already defined at line {}", first.line),
                        );
                        return None;
                    }
                    scope.tasks.insert(t.clone(), pos(n));
                    Some(t)
                }
                None => None,
            };
            Action::StartMoveTask {
                source: source?,
                destination,
                max_per_second,
                name: task,
            }
        }
        "list-move-tasks" => Action::ListMoveTasks {
            source: queue_ref(r, scope, f.get("source")?)?,
        },
        "cancel-move-task" => {
            let n = f.get("task")?;
            let t = r.string(n, "`task` (a move task name)")?;
            if !scope.tasks.contains_key(&t) {
                r.error_hint(
                    n,
                    format!("unknown move task `{t}`"),
                    "name a task with `start-move-task: {..., as: <name>}` in an earlier step",
                );
                return None;
            }
            Action::CancelMoveTask {
                task: Spanned {
                    value: t,
                    pos: pos(n),
                },
            }
        }
        other => unreachable!("step keyword `{other}` is in KEYWORDS but not decoded"),
    };
    ok.then_some(action)
}

fn decode_send(
    r: &mut Reader,
    scope: &mut Scope,
    f: &Fields,
    queue: Spanned<String>,
    expects_error: bool,
) -> Option<Send> {
    scope.sends += 1;
    let (message, label_node) = match f.get("message") {
        Some(n) => (r.nonempty(n, "`message` (a message label)")?, Some(n)),
        None => (format!("m{}", scope.sends), None),
    };
    if let Some(first) = scope.messages.get(&message) {
        let at = label_node.unwrap_or(f.owner);
        let why = if label_node.is_none() {
            " (the default label of this send)"
        } else {
            ""
        };
        let first_line = first.line;
        r.error_hint(
            at,
            format!("message label `{message}`{why} is already used at line {first_line}"),
            "give each send its own `message:` label",
        );
        return None;
    }
    scope
        .messages
        .insert(message.clone(), label_node.map_or(pos(f.owner), pos));
    let body = match (f.get("body"), f.get("body_size")) {
        (Some(_), Some(_)) => {
            r.error(
                f.key("body_size")?,
                "write either `body` or `body_size`, not both",
            );
            return None;
        }
        (Some(n), None) => Body::Text(r.string(n, "`body`")?),
        (None, Some(n)) => Body::Size(r.int(n, "`body_size`", 0, i64::MAX)? as usize),
        (None, None) if !f.missing("body") || !f.missing("body_size") => return None,
        (None, None) => {
            r.error_hint(
                f.owner,
                format!("{} needs `body` or `body_size`", f.what),
                "e.g. `body: hello`",
            );
            return None;
        }
    };
    let delay = f.get("delay").and_then(|n| r.seconds(n, "`delay`"));
    let group = f.get("group").and_then(|n| r.string(n, "`group`"));
    if group.is_none() && !expects_error && scope.queues.get(&queue.value) == Some(&QueueKind::Fifo)
    {
        r.error_hint(
            f.owner,
            format!(
                "a send to FIFO queue `{}` needs `group` (MessageGroupId)",
                queue.value
            ),
            "add `group: g1`, or `expect: {error: MissingParameter}` to test that SQS refuses it",
        );
    }
    let dedup_id = f.get("dedup_id").and_then(|n| r.string(n, "`dedup_id`"));
    let mut attributes = Vec::new();
    if let Some(n) = f.get("attributes") {
        for (name, _, v) in r.map_entries(n, "`attributes`").unwrap_or_default() {
            if let YamlData::Mapping(_) = &v.data {
                let Some(af) = r.fields(v, v, "a message attribute", &["type", "value"]) else {
                    continue;
                };
                if !r.require(&af, &["type", "value"]) {
                    continue;
                }
                let (Some(t), Some(val)) = (
                    r.string(af.get("type")?, "`type`"),
                    r.string(af.get("value")?, "`value`"),
                ) else {
                    continue;
                };
                attributes.push(MessageAttr {
                    name: name.to_string(),
                    data_type: t,
                    value: val,
                });
            } else if let Some(val) = r.string(v, "an attribute value") {
                attributes.push(MessageAttr {
                    name: name.to_string(),
                    data_type: "String".into(),
                    value: val,
                });
            }
        }
    }
    Some(Send {
        queue,
        message,
        body,
        delay,
        group,
        dedup_id,
        attributes,
    })
}

/// `attempt` (+ `message`) or `handle`.
fn handle_ref(r: &mut Reader, scope: &Scope, f: &Fields) -> Option<HandleRef> {
    match (f.get("attempt"), f.get("handle")) {
        (Some(_), Some(_)) => {
            r.error(
                f.key("handle")?,
                "write either `attempt` or `handle`, not both",
            );
            None
        }
        (None, None) => {
            r.error_hint(
                f.owner,
                format!("{} needs `attempt` or `handle`", f.what),
                "e.g. `attempt: A` (a receive's `as:`)",
            );
            None
        }
        (None, Some(h)) => {
            if let Some(m) = f.key("message") {
                r.error(m, "`message` picks a message of an attempt; it does not apply to a literal `handle`");
                return None;
            }
            Some(HandleRef::Literal(r.string(h, "`handle`")?))
        }
        (Some(a), None) => {
            let name = r.string(a, "`attempt`")?;
            let message = match f.get("message") {
                Some(m) => Some(message_ref(r, scope, m)?),
                None => None,
            };
            if !scope.attempts.contains_key(&name) {
                let names: Vec<&str> = scope.attempts.keys().map(String::as_str).collect();
                let hint = match super::diagnostic::closest(&name, names.iter().copied()) {
                    Some(c) => format!("did you mean `{c}`?"),
                    None if names.is_empty() => "name a receive with `as:` in an earlier step, e.g. `receive: {queue: q, as: A}`".into(),
                    None => format!("attempts defined so far: {}", names.join(", ")),
                };
                r.error_hint(
                    a,
                    format!("unknown attempt `{name}`: no earlier receive has `as: {name}`"),
                    hint,
                );
                return None;
            }
            Some(HandleRef::Attempt {
                attempt: Spanned {
                    value: name,
                    pos: pos(a),
                },
                message,
            })
        }
    }
}

/// The `queue` of a handle step: given, or implied by the attempts it uses.
fn batch_queue(
    r: &mut Reader,
    scope: &Scope,
    f: &Fields,
    queue: Option<Spanned<String>>,
    targets: &[HandleRef],
) -> Option<Option<Spanned<String>>> {
    if f.has("queue") {
        return queue.map(Some);
    }
    let mut implied: Vec<&str> = targets
        .iter()
        .filter_map(|t| match t {
            HandleRef::Attempt { attempt, .. } => {
                scope.attempts.get(&attempt.value).map(String::as_str)
            }
            HandleRef::Literal(_) => None,
        })
        .collect();
    implied.dedup();
    implied.sort_unstable();
    implied.dedup();
    match implied.len() {
        1 => Some(None),
        0 => {
            r.error_hint(
                f.owner,
                format!("{} needs `queue`: no attempt implies one", f.what),
                "add `queue: <label>`",
            );
            None
        }
        _ => {
            r.error_hint(
                f.owner,
                format!(
                    "{} uses attempts from queues {}; say which with `queue`",
                    f.what,
                    implied.join(", ")
                ),
                "add `queue: <label>`",
            );
            None
        }
    }
}

fn decode_observe(
    r: &mut Reader,
    scope: &mut Scope,
    f: &Fields,
    queue: Option<Spanned<String>>,
    limits: &Limits,
) -> Option<Observe> {
    let window = r.duration(f.get("window")?, "`window`");
    if window == Some(Duration::ZERO) {
        r.error(f.get("window")?, "`window` must be longer than 0ms");
    }
    let max_receives = match f.get("max_receives") {
        None => Some(20),
        Some(n) => {
            let v = r
                .int(n, "`max_receives`", 1, i64::from(u32::MAX))
                .map(|v| v as u32);
            match v {
                Some(v) if v > limits.max_observe_receives => {
                    r.error_hint(
                        n,
                        format!("`max_receives` is {v}, over the limit of {}", limits.max_observe_receives),
                        "observe windows are bounded; lower `max_receives` or raise the limit on the command line",
                    );
                    None
                }
                v => v,
            }
        }
    };
    let wait = match f.get("wait") {
        None => Some(Duration::from_secs(1)),
        Some(n) => r.seconds(n, "`wait`"),
    };
    let visibility_timeout = f
        .get("visibility_timeout")
        .and_then(|n| r.seconds(n, "`visibility_timeout`"));
    let mut messages = Vec::new();
    if let Some(n) = f.get("messages") {
        for item in r.seq(n, "message labels")? {
            if let Some(m) = message_ref(r, scope, item) {
                messages.push(m);
            }
        }
    }
    let delete_seen = f
        .get("delete")
        .and_then(|n| r.bool(n, "`delete`"))
        .unwrap_or(false);
    scope.observes += 1;
    scope.last_observe_tracks = messages.iter().map(|m| m.value.clone()).collect();
    Some(Observe {
        queue: queue?,
        window: window?,
        max_receives: max_receives?,
        wait: wait?,
        visibility_timeout,
        messages,
        delete_seen,
    })
}

/// Which expectation keys make sense on which step.
fn expect_applies(key: &str, action: &Action) -> bool {
    let batch = matches!(
        action,
        Action::SendBatch { .. }
            | Action::DeleteBatch { .. }
            | Action::ChangeVisibilityBatch { .. }
    );
    match (key, action) {
        (_, Action::Sleep(_)) => false,
        ("outcome", a) => matches!(a, Action::Observe(_)),
        ("received", a) => matches!(
            a,
            Action::Receive(_) | Action::Observe(_) | Action::ListDeadLetterSourceQueues { .. }
        ),
        (_, Action::Observe(_)) => false,
        // The runner counts queue URLs for the two listing calls.
        ("messages", a) => matches!(
            a,
            Action::Receive(_)
                | Action::ListQueues { .. }
                | Action::ListDeadLetterSourceQueues { .. }
        ),
        ("successful" | "failed", _) => batch,
        // Tags (list-queue-tags) and the newest task's fields (list-move-tasks) are checked
        // like queue attributes.
        ("attributes", a) => matches!(
            a,
            Action::Receive(_)
                | Action::GetAttributes { .. }
                | Action::ListQueueTags { .. }
                | Action::ListMoveTasks { .. }
        ),
        ("absent", a) => matches!(a, Action::Receive(_) | Action::GetAttributes { .. }),
        ("within", a) => matches!(a, Action::Receive(_)),
        _ => true,
    }
}

fn decode_step_expect(
    r: &mut Reader,
    scope: &Scope,
    f: &Fields,
    action: &Action,
    at: Option<Pos>,
) -> StepExpect {
    let mut e = StepExpect {
        pos: at,
        ..StepExpect::default()
    };
    for (key, key_node, v) in &f.entries {
        if !expect_applies(key, action) {
            r.error(
                key_node,
                format!("`{key}` does not apply to a `{}` step", action.keyword()),
            );
            continue;
        }
        match *key {
            "error" => e.error = r.nonempty(v, "`error` (an error code)"),
            "status" => e.status = r.int(v, "`status`", 100, 599).map(|n| n as u16),
            "messages" => {
                e.messages = r
                    .int(v, "`messages`", 0, i64::from(u32::MAX))
                    .map(|n| n as u32)
            }
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
            "attributes" => e.attributes = r.string_map(v, "`attributes`").unwrap_or_default(),
            "message_contains" => {
                e.message_contains = r.nonempty(v, "`message_contains` (error message text)")
            }
            "absent" => e.absent = r.strings(v, "attribute names", true).unwrap_or_default(),
            "within" => e.within = r.duration(v, "`within`"),
            "outcome" => {
                let tracks: Vec<String> = match action {
                    Action::Observe(o) => o.messages.iter().map(|m| m.value.clone()).collect(),
                    _ => Vec::new(),
                };
                e.outcome = decode_outcome(r, scope, v, &tracks);
            }
            _ => {}
        }
    }
    e
}

fn outcome_class(r: &mut Reader, n: &Node) -> Option<Spanned<OutcomeClass>> {
    let s = r.string(n, "an outcome class")?;
    let class = match s.as_str() {
        "observed_redelivery" => OutcomeClass::ObservedRedelivery,
        "no_redelivery_within_window" => OutcomeClass::NoRedeliveryWithinWindow,
        "delivered" => OutcomeClass::Delivered,
        "inconclusive" => {
            r.error_hint(
                n,
                "`inconclusive` is never an expectation",
                "expect `observed_redelivery`, `no_redelivery_within_window` or `delivered`; an inconclusive run is reported as such",
            );
            return None;
        }
        other => {
            r.error_hint(
                n,
                format!("unknown outcome class `{other}`"),
                suggest(other, OutcomeClass::EXPECTABLE),
            );
            return None;
        }
    };
    Some(Spanned {
        value: class,
        pos: pos(n),
    })
}

/// `outcome: <class>` or `outcome: {label: class}`; labels must be sent and, when the
/// observe step names its messages, tracked by it.
fn decode_outcome(
    r: &mut Reader,
    scope: &Scope,
    v: &Node,
    tracks: &[String],
) -> Option<OutcomeExpect> {
    if !matches!(v.data, YamlData::Mapping(_)) {
        return outcome_class(r, v).map(OutcomeExpect::All);
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
        if let Some(c) = outcome_class(r, class) {
            per.insert(label.to_string(), c);
        }
    }
    if per.is_empty() && matches!(&v.data, YamlData::Mapping(m) if m.is_empty()) {
        r.error(v, "`outcome` is empty");
    }
    Some(OutcomeExpect::PerMessage(per))
}
