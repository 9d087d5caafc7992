//! `wire:` beside a step: the query-protocol request form of the step's call, the `reply:`
//! expectation's format names, and the rule that both belong to query-only cases.
//!
//! A few things AWS answers are properties of the query wire itself, not of an operation: a
//! GET of a queue URL without `Action`, a service action (CreateQueue, ListQueues) sent to a
//! queue URL, a request that accepts JSON. No SDK operation sends those forms, so a step says
//! how its one call goes out (`wire: {method: GET, to: q, accept: json, params: none}`) and
//! the query client sends exactly that; its call row records the form.

use super::scope::push_at;
use super::scope::{Scope, queue_ref};
use super::steps::StepSpec;
use crate::suite::model::{ReplyFormat, Step, Wire, WireMethod};
use crate::suite::yaml::{Node, Reader, pos};
use sqsprobe_facts::text::suggest::suggest;

/// The keys of `wire:`.
const WIRE_KEYS: &[&str] = &["method", "to", "accept", "params", "indexes"];
const METHODS: &[&str] = &["GET", "POST"];
const FORMATS: &[&str] = &["json", "xml"];

/// Decodes `wire:` for a step of `spec`'s keyword; `None` (with an error) when the step does
/// not make exactly one SQS call, since a wire form belongs to one request.
pub(super) fn decode_wire(
    r: &mut Reader,
    scope: &Scope,
    key: &Node,
    value: &Node,
    spec: &StepSpec,
) -> Option<Wire> {
    let f = r.fields(key, value, "`wire`", WIRE_KEYS)?;
    // `deny` lists one operation but makes two calls (the policy set, and lifted later).
    if spec.calls.len() != 1 || spec.keyword == "deny" {
        r.error_hint(
            key,
            format!(
                "`wire` applies to a step that makes one SQS call; {} makes {}",
                super::input::a_step(spec.keyword),
                match spec.calls.len() {
                    0 => "none",
                    1 => "two (it sets a policy and lifts it later)",
                    _ => "several",
                }
            ),
            "put `wire` on a step such as get-queue-url, get-attributes, list-queues or create-queue",
        );
        return None;
    }
    let mut wire = Wire {
        pos: pos(key),
        ..Wire::default()
    };
    let mut ok = true;
    if let Some(n) = f.get("method") {
        match r.string(n, "`method`").as_deref() {
            Some("GET") => wire.method = WireMethod::Get,
            Some("POST") => wire.method = WireMethod::Post,
            Some(other) => {
                r.error_hint(
                    n,
                    format!("unknown method `{other}` in `wire`"),
                    suggest(other, METHODS),
                );
                ok = false;
            }
            None => ok = false,
        }
    }
    if let Some(n) = f.get("to") {
        wire.to = queue_ref(r, scope, n);
        ok &= wire.to.is_some();
    }
    if let Some(n) = f.get("accept") {
        wire.accept = decode_format(r, n, "`accept`");
        ok &= wire.accept.is_some();
    }
    if let Some(n) = f.get("params") {
        match r.string(n, "`params`").as_deref() {
            Some("none") => wire.no_params = true,
            Some(other) => {
                r.error_hint(
                    n,
                    format!("`params` is `none` or absent, not `{other}`"),
                    "`params: none` sends no parameters at all, not even Action",
                );
                ok = false;
            }
            None => ok = false,
        }
    }
    if let Some(n) = f.get("indexes") {
        match r.string(n, "`indexes`").as_deref() {
            Some("none") => wire.unindexed = true,
            Some(other) => {
                r.error_hint(
                    n,
                    format!("`indexes` is `none` or absent, not `{other}`"),
                    "`indexes: none` sends a list or map of one item without its `.1`, as boto 2 did",
                );
                ok = false;
            }
            None => ok = false,
        }
    }
    ok.then_some(wire)
}

/// `json` or `xml`, for `accept:` and `reply:`.
pub(super) fn decode_format(r: &mut Reader, n: &Node, what: &str) -> Option<ReplyFormat> {
    match r.string(n, what)?.as_str() {
        "json" => Some(ReplyFormat::Json),
        "xml" => Some(ReplyFormat::Xml),
        other => {
            r.error_hint(
                n,
                format!("unknown reply format `{other}` in {what}"),
                suggest(other, FORMATS),
            );
            None
        }
    }
}

/// `wire:` and `reply:` are details of the query protocol's wire: a case that uses them runs
/// over that protocol only, and says so, so that a JSON run skips it instead of failing it.
pub(super) fn check_query_only(r: &mut Reader, protocols: &[String], steps: &[Step]) {
    if protocols.iter().all(|p| p == "query") && !protocols.is_empty() {
        return;
    }
    for step in steps {
        let at = match (&step.wire, &step.expect.reply) {
            (Some(w), _) => Some((w.pos, "wire")),
            (None, Some(reply)) => Some((reply.pos, "reply")),
            (None, None) => None,
        };
        if let Some((pos, text)) = at {
            push_at(
                r,
                pos,
                text,
                format!(
                    "step {} uses the query protocol's wire (`wire:` or `reply:`), so the case runs over that protocol only",
                    step.index + 1
                ),
                Some("add `protocols: [query]` to the case".to_string()),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::suite::{Limits, ReplyFormat, WireMethod, parse_suite};

    fn suite(protocols: &str, step: &str) -> String {
        format!(
            "cases:\n  - id: c1\n    behaviour: b\n    source: s\n{protocols}    queues:\n      q: {{}}\n    steps:\n{step}"
        )
    }

    fn only_error(src: &str) -> String {
        let errs = parse_suite("x.yaml", src, &Limits::default()).expect_err("errors");
        assert_eq!(errs.len(), 1, "{errs:#?}");
        errs[0].one_line()
    }

    const QUERY: &str = "    protocols: [query]\n";

    #[test]
    fn a_wire_form_is_read_with_its_queue() {
        let src = suite(
            QUERY,
            "      - get-queue-url: {queue: q}\n        wire: {method: GET, to: q, accept: json, params: none}\n        expect: {error: UnknownOperationException, reply: xml}\n",
        );
        let s = parse_suite("x.yaml", &src, &Limits::default()).unwrap();
        let step = &s.cases[0].steps[0];
        let wire = step.wire.as_ref().unwrap();
        assert_eq!(wire.method, WireMethod::Get);
        assert_eq!(wire.to.as_ref().unwrap().value, "q");
        assert_eq!(wire.accept, Some(ReplyFormat::Json));
        assert!(wire.no_params);
        assert_eq!(wire.pos.line, 10);
        assert_eq!(
            step.expect.reply.as_ref().map(|r| r.value),
            Some(ReplyFormat::Xml)
        );
    }

    #[test]
    fn bad_wire_forms_are_positioned() {
        let step = |w: &str| {
            suite(
                QUERY,
                &format!("      - get-queue-url: {{queue: q}}\n        wire: {w}\n"),
            )
        };
        assert_eq!(
            only_error(&step("{method: PUT}")),
            "x.yaml:10:24: unknown method `PUT` in `wire` (expected one of: GET, POST)"
        );
        assert!(only_error(&step("{to: nowhere}")).contains("unknown queue `nowhere`"));
        assert!(only_error(&step("{params: some}")).contains("`params` is `none` or absent"));
        assert!(only_error(&step("{accept: yaml}")).contains("unknown reply format `yaml`"));
        assert!(only_error(&step("{verb: GET}")).contains("unknown key `verb` in `wire`"));
        let sleep = suite(QUERY, "      - sleep: 1s\n        wire: {method: GET}\n");
        assert!(only_error(&sleep).contains("`wire` applies to a step that makes one SQS call"));
        let deny = suite(
            QUERY,
            "      - deny: {queue: q, actions: [sqs:SendMessage], for: 1s}\n        wire: {method: GET}\n",
        );
        assert!(
            only_error(&deny).contains("makes two"),
            "{}",
            only_error(&deny)
        );
    }

    #[test]
    fn wire_and_reply_need_a_query_only_case() {
        let wired = "      - list-queues: {}\n        wire: {method: GET, to: q}\n";
        let e = only_error(&suite("", wired));
        assert!(
            e.starts_with("x.yaml:9:9: step 1 uses the query protocol's wire"),
            "{e}"
        );
        assert!(
            only_error(&suite("    protocols: [json, query]\n", wired))
                .contains("protocols: [query]")
        );
        let reply = "      - list-queues: {}\n        expect: {reply: xml}\n";
        // At `reply:` itself, not at its `expect:`.
        assert!(only_error(&suite("", reply)).starts_with("x.yaml:9:18: step 1"));
        assert!(parse_suite("x.yaml", &suite(QUERY, reply), &Limits::default()).is_ok());
    }
}
