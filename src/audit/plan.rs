//! An audit plan (`sqsprobe audit --plan PLAN.yaml`): the queues a consumer is audited on,
//! their attributes and dead-letter queues, the bodies of the messages, where the business key
//! sits in a body, and how many messages are sent before the consumer starts and at what rate
//! the rest arrive while it runs (docs/audit.md#plans).
//!
//! Without a plan the audit is [`Plan::single`]: one queue, every message sent before the
//! consumer starts, bodies `{"business_key": "b-<i>", "seq": <i>}`. Parsing is pure and
//! reports every problem at its `file:line:column`, as suites do.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::suite::Diagnostic;
use crate::suite::model::Pos;
use crate::suite::yaml::{DocumentKind, Node, Reader, parse_document, pos};

const PLAN_FILE: DocumentKind = DocumentKind {
    noun: "plan",
    empty_hint: "a plan is a mapping with `queues:`; see docs/audit.md#plans",
};

const PLAN_KEYS: &[&str] = &["queues"];
const QUEUE_KEYS: &[&str] = &[
    "name",
    "fifo",
    "groups",
    "attributes",
    "dead_letter",
    "messages",
    "body",
    "key",
    "send",
];
const DEAD_LETTER_KEYS: &[&str] = &["max_receive_count"];
const SEND_KEYS: &[&str] = &["before", "rate"];

/// Attributes a plan sets with its own keys, not under `attributes:`.
const OWN_KEYS: &[(&str, &str)] = &[
    ("FifoQueue", "fifo: true"),
    ("RedrivePolicy", "dead_letter: {max_receive_count: N}"),
];

/// The body every message has unless a plan says otherwise.
pub const DEFAULT_BODY: &str = r#"{"business_key": "{key}", "seq": {seq}}"#;

/// The most messages one audit sends, over all its queues.
pub const MAX_MESSAGES: u32 = 10_000;

/// A whole plan: at least one queue; the first is the consumer's `SQSPROBE_QUEUE_URL`.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub queues: Vec<QueuePlan>,
}

/// One queue of a plan and the messages sent to it.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuePlan {
    /// The queue's name, without `.fifo` (added for a FIFO queue).
    pub name: String,
    pub fifo: bool,
    /// Message groups of a FIFO queue; messages are dealt round-robin.
    pub groups: u32,
    /// CreateQueue attributes as written (`VisibilityTimeout: 5`); the emulator checks them.
    pub attributes: BTreeMap<String, String>,
    /// Where `attributes:` was written, for the emulator's refusal.
    pub attributes_at: Option<Pos>,
    /// A dead-letter queue `<name>-dlq` and the receives after which a message moves there.
    pub dead_letter: Option<u32>,
    pub messages: u32,
    pub body: Template,
    pub key: KeyPath,
    /// How many of the messages are sent before the consumer starts.
    pub before: u32,
    /// The rest are sent while it runs, this many per second.
    pub rate: Option<f64>,
}

impl QueuePlan {
    /// The queue's name as created (`.fifo` for a FIFO queue).
    pub fn queue_name(&self) -> String {
        with_fifo(&self.name, self.fifo)
    }

    /// The dead-letter queue's name as created, when there is one.
    pub fn dead_letter_name(&self) -> Option<String> {
        self.dead_letter
            .map(|_| with_fifo(&format!("{}-dlq", self.name), self.fifo))
    }

    /// The gap between two sends of the messages sent while the consumer runs.
    pub fn gap(&self) -> Option<Duration> {
        self.rate.map(|r| Duration::from_secs_f64(1.0 / r))
    }

    /// Message `i`'s (1-based, over this queue) business key and body.
    pub fn message(&self, i: u32) -> (String, String) {
        let key = format!("b-{i}");
        let body = self.body.render(&key, i);
        (key, body)
    }

    /// The environment variable naming this queue's URL (`SQSPROBE_QUEUE_URL_ORDERS`).
    pub fn env_name(&self) -> String {
        env_name("SQSPROBE_QUEUE_URL_", &self.name)
    }

    /// The environment variable naming its dead-letter queue's URL (`SQSPROBE_DLQ_URL_ORDERS`).
    pub fn dead_letter_env_name(&self) -> String {
        env_name("SQSPROBE_DLQ_URL_", &self.name)
    }
}

fn with_fifo(name: &str, fifo: bool) -> String {
    if fifo {
        format!("{name}.fifo")
    } else {
        name.to_string()
    }
}

fn env_name(prefix: &str, name: &str) -> String {
    let tail: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{prefix}{tail}")
}

/// A body template: the text as written, with `{key}` standing for the message's business key
/// (`b-<i>`) and `{seq}` for its number; every other character, braces included, is itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template(pub String);

impl Template {
    pub fn render(&self, key: &str, seq: u32) -> String {
        self.0
            .replace("{key}", key)
            .replace("{seq}", &seq.to_string())
    }
}

/// Where the business key sits in a JSON body: object keys (and list indexes) from the top,
/// written `order.id` or `items.0.sku`. The default finds `business_key` (or `business_id`)
/// at the top, as the rest of sqsprobe does.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyPath(pub Vec<String>);

impl KeyPath {
    /// The path as written, `business_key` for the default.
    pub fn written(&self) -> String {
        if self.0.is_empty() {
            "business_key".to_string()
        } else {
            self.0.join(".")
        }
    }

    /// The business key of `body`: a string there, or a number as written.
    pub fn of(&self, body: &str) -> Option<String> {
        if self.0.is_empty() {
            return crate::evidence::business_key(body);
        }
        let value: serde_json::Value = serde_json::from_str(body).ok()?;
        let mut at = &value;
        for segment in &self.0 {
            at = match at {
                serde_json::Value::Object(map) => map.get(segment)?,
                serde_json::Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        match at {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }
}

/// Where each queue's bodies hold the business key, by queue name (dead-letter queues too).
pub type KeyPaths = std::collections::HashMap<String, KeyPath>;

/// The business key of `body` on `queue` (a name or an ARN: its last segment is the name),
/// by that queue's path, else the default one.
pub fn key_on(paths: &KeyPaths, queue: Option<&str>, body: &str) -> Option<String> {
    let name = queue.map(|q| q.rsplit([':', '/']).next().unwrap_or(q));
    match name.and_then(|n| paths.get(n)) {
        Some(path) => path.of(body),
        None => KeyPath::default().of(body),
    }
}

impl Plan {
    /// The plan of an audit without `--plan`: one queue as the command line says.
    pub fn single(
        name: &str,
        messages: u32,
        fifo: bool,
        groups: u32,
        visibility: Duration,
    ) -> Plan {
        Plan {
            queues: vec![QueuePlan {
                name: name.to_string(),
                fifo,
                groups,
                attributes: BTreeMap::from([(
                    "VisibilityTimeout".to_string(),
                    visibility.as_secs().max(1).to_string(),
                )]),
                attributes_at: None,
                dead_letter: None,
                messages,
                body: Template(DEFAULT_BODY.to_string()),
                key: KeyPath::default(),
                before: messages,
                rate: None,
            }],
        }
    }

    /// All messages over all queues.
    pub fn messages(&self) -> u32 {
        self.queues.iter().map(|q| q.messages).sum()
    }

    /// Whether some messages arrive while the consumer runs.
    pub fn sends_during_run(&self) -> bool {
        self.queues.iter().any(|q| q.before < q.messages)
    }
}

/// Parses a plan file. Returns every problem found, not just the first.
pub fn parse_plan(path: &str, source: &str) -> Result<Plan, Vec<Diagnostic>> {
    parse_document(path, source, PLAN_FILE, decode)
}

fn decode(r: &mut Reader, root: &Node) -> Option<Plan> {
    let f = r.fields(root, root, "the plan", PLAN_KEYS)?;
    r.require(&f, &["queues"]);
    let node = f.get("queues")?;
    let items = r.seq(node, "`queues` (a list of queues)")?;
    if items.is_empty() {
        r.error(node, "`queues` lists no queue");
        return None;
    }
    let mut queues: Vec<QueuePlan> = Vec::new();
    let mut names: BTreeMap<String, Pos> = BTreeMap::new();
    for item in items {
        let Some(q) = decode_queue(r, item) else {
            continue;
        };
        // Queue names and the environment variables derived from them must be one each.
        for name in [
            Some(q.name.clone()),
            q.dead_letter.map(|_| format!("{}-dlq", q.name)),
        ]
        .into_iter()
        .flatten()
        {
            let env = env_name("", &name);
            if let Some(first) = names.get(&env) {
                let message = format!(
                    "queue `{name}` clashes with a queue first written at line {} (names and \
                     their SQSPROBE_QUEUE_URL_ variables must differ)",
                    first.line
                );
                r.error(item, message);
            } else {
                names.insert(env, pos(item));
            }
        }
        queues.push(q);
    }
    let total: u64 = queues.iter().map(|q| u64::from(q.messages)).sum();
    if total > u64::from(MAX_MESSAGES) {
        r.error(
            node,
            format!("the plan sends {total} messages; an audit sends at most {MAX_MESSAGES}"),
        );
    }
    (queues.len() == items.len()).then_some(Plan { queues })
}

fn decode_queue(r: &mut Reader, item: &Node) -> Option<QueuePlan> {
    let f = r.fields(item, item, "a queue", QUEUE_KEYS)?;
    r.require(&f, &["name"]);
    let name = f.get("name").and_then(|n| {
        let name = r.nonempty(n, "`name`")?;
        let ok = name.len() <= 70
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !ok {
            r.error_hint(
                n,
                format!("`{name}` is not a queue name"),
                "1 to 70 letters, digits, `-` or `_` (`.fifo` and `-dlq` are added)",
            );
            return None;
        }
        Some(name)
    });
    let fifo = f.get("fifo").map_or(Some(false), |n| r.bool(n, "`fifo`"));
    let groups = f
        .get("groups")
        .map_or(Some(4), |n| r.int(n, "`groups`", 1, 1000).map(|g| g as u32));
    if f.has("groups") && fifo == Some(false) {
        let n = f.key("groups").expect("has");
        r.error_hint(
            n,
            "`groups` is for a FIFO queue",
            "add `fifo: true`, or remove `groups`",
        );
    }
    let attributes_at = f.get("attributes").map(pos);
    let attributes = match f.get("attributes") {
        Some(n) => r.string_map(n, "`attributes`").inspect(|map| {
            for (own, instead) in OWN_KEYS {
                if map.contains_key(*own) {
                    r.error_hint(
                        n,
                        format!("`{own}` is set by the plan, not under `attributes`"),
                        format!("write `{instead}`"),
                    );
                }
            }
        }),
        None => Some(BTreeMap::new()),
    };
    // `Some(None)`: no dead-letter queue; `None`: one written wrong (reported).
    let dead_letter = match f.get("dead_letter") {
        Some(n) => {
            let owner = f.key("dead_letter").unwrap_or(n);
            r.fields(owner, n, "`dead_letter`", DEAD_LETTER_KEYS)
                .and_then(|d| {
                    r.require(&d, &["max_receive_count"]);
                    d.get("max_receive_count")
                })
                .and_then(|n| r.int(n, "`max_receive_count`", 1, 1000))
                .map(|m| Some(m as u32))
        }
        None => Some(None),
    };
    let messages = f.get("messages").map_or(Some(20), |n| {
        r.int(n, "`messages`", 1, i64::from(MAX_MESSAGES))
            .map(|m| m as u32)
    });
    let key = f.get("key").map_or(Some(KeyPath::default()), |n| {
        let written = r.nonempty(n, "`key`")?;
        let segments: Vec<String> = written.split('.').map(str::to_string).collect();
        if segments.iter().any(|s| s.is_empty()) {
            r.error_hint(
                n,
                format!("`{written}` is not a key path"),
                "object keys (and list indexes) joined by `.`, e.g. `order.id`",
            );
            return None;
        }
        Some(KeyPath(segments))
    });
    let body = match f.get("body") {
        Some(n) => r.nonempty(n, "`body`").and_then(|text| {
            if text.contains("{key}") {
                return Some((Template(text), n));
            }
            r.error_hint(
                n,
                "the body template holds no `{key}`",
                "write `{key}` where the business key goes (and `{seq}` for the number)",
            );
            None
        }),
        None => Some((Template(DEFAULT_BODY.to_string()), item)),
    };
    // Every message must carry its own business key where `key:` says.
    if let (Some((template, at)), Some(key)) = (&body, &key) {
        let (one, two) = (
            key.of(&template.render("b-1", 1)),
            key.of(&template.render("b-2", 2)),
        );
        match (one, two) {
            (Some(a), Some(b)) if a != b => {}
            (Some(_), Some(_)) => {
                r.error_hint(
                    at,
                    format!("every message's body has the same value at `{}`", key.written()),
                    "put `{key}` (or `{seq}`) at the key path, so each message has its own business key",
                );
            }
            _ => {
                r.error_hint(
                    at,
                    format!(
                        "the body is not JSON with a business key at `{}` (seen for message 1)",
                        key.written()
                    ),
                    "a body such as {\"order\": {\"id\": \"{key}\"}} with `key: order.id`",
                );
            }
        }
    }
    let (mut before, mut rate, mut bad_send) = (None, None, false);
    if let Some(n) = f.get("send") {
        let s = r.fields(f.key("send").unwrap_or(n), n, "`send`", SEND_KEYS)?;
        before = s
            .get("before")
            .and_then(|b| r.int(b, "`before`", 0, i64::from(MAX_MESSAGES)))
            .map(|b| b as u32);
        rate = s.get("rate").and_then(|n| parse_rate(r, n));
        if (s.has("before") && before.is_none()) || (s.has("rate") && rate.is_none()) {
            bad_send = true;
        }
        if let (Some(b), Some(m)) = (before, messages)
            && b > m
        {
            let at = s.get("before").expect("has");
            r.error(
                at,
                format!("`before` is {b}, more than the queue's {m} messages"),
            );
        }
        if before.is_some_and(|b| Some(b) != messages) && rate.is_none() && !bad_send {
            r.error_hint(
                n,
                "`send` holds messages back without a `rate`",
                "add `rate: 5/s` (the held-back messages are sent at it while the consumer runs)",
            );
        }
    }
    let messages = messages?;
    if bad_send {
        return None;
    }
    Some(QueuePlan {
        name: name?,
        fifo: fifo?,
        groups: groups?,
        attributes: attributes?,
        attributes_at,
        dead_letter: dead_letter?,
        messages,
        body: body?.0,
        key: key?,
        before: before.unwrap_or(if rate.is_some() { 0 } else { messages }),
        rate,
    })
}

/// `5/s`, `120/m` or a bare number per second; at most 1000 a second.
fn parse_rate(r: &mut Reader, n: &Node) -> Option<f64> {
    const HINT: &str = "write messages per second or minute, e.g. `5/s` or `30/m`";
    let text = r.string(n, "`rate`")?;
    let (number, per) = match text.trim().split_once('/') {
        Some((number, "s")) => (number, 1.0),
        Some((number, "m")) => (number, 60.0),
        Some(_) => {
            r.error_hint(n, format!("`{text}` is not a rate"), HINT);
            return None;
        }
        None => (text.trim(), 1.0),
    };
    match number.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v / per <= 1000.0 => Some(v / per),
        _ => {
            r.error_hint(
                n,
                format!("`{text}` is not a rate above 0 and at most 1000/s"),
                HINT,
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(src: &str) -> Result<Plan, Vec<String>> {
        parse_plan("plan.yaml", src).map_err(|d| d.iter().map(Diagnostic::one_line).collect())
    }

    #[test]
    fn a_full_plan_reads_every_key() {
        let p = plan(
            r#"
queues:
  - name: orders
    fifo: true
    groups: 3
    attributes: {VisibilityTimeout: 4, ReceiveMessageWaitTimeSeconds: 1}
    dead_letter: {max_receive_count: 3}
    messages: 12
    body: '{"order": {"id": "{key}", "n": {seq}}}'
    key: order.id
    send: {before: 2, rate: 120/m}
  - name: audit-log
"#,
        )
        .unwrap();
        let q = &p.queues[0];
        assert_eq!(q.queue_name(), "orders.fifo");
        assert_eq!(q.dead_letter_name().as_deref(), Some("orders-dlq.fifo"));
        assert_eq!(q.attributes["VisibilityTimeout"], "4");
        assert_eq!((q.messages, q.before, q.rate), (12, 2, Some(2.0)));
        assert_eq!(q.gap(), Some(Duration::from_millis(500)));
        let (key, body) = q.message(7);
        assert_eq!(body, r#"{"order": {"id": "b-7", "n": 7}}"#);
        assert_eq!(q.key.of(&body), Some(key));
        assert_eq!(q.env_name(), "SQSPROBE_QUEUE_URL_ORDERS");
        let d = &p.queues[1];
        assert_eq!(
            (d.messages, d.before, d.rate, d.fifo),
            (20, 20, None, false)
        );
        assert_eq!(d.env_name(), "SQSPROBE_QUEUE_URL_AUDIT_LOG");
        assert_eq!(p.messages(), 32);
        assert!(p.sends_during_run());
    }

    #[test]
    fn a_rate_alone_sends_everything_during_the_run() {
        let p = plan("queues:\n  - name: q\n    messages: 5\n    send: {rate: 10}\n").unwrap();
        assert_eq!((p.queues[0].before, p.queues[0].rate), (0, Some(10.0)));
    }

    #[test]
    fn key_paths_read_strings_numbers_and_list_indexes() {
        let k = KeyPath(vec!["items".into(), "1".into(), "sku".into()]);
        assert_eq!(
            k.of(r#"{"items": [{"sku": "a"}, {"sku": 9}]}"#),
            Some("9".into())
        );
        assert_eq!(k.of(r#"{"items": []}"#), None);
        assert_eq!(k.of("not json"), None);
        assert_eq!(
            KeyPath::default().of(r#"{"business_id": "x"}"#),
            Some("x".into())
        );
    }

    #[test]
    fn mistakes_are_reported_at_their_line_and_column() {
        let errors = plan(
            r#"
queues:
  - name: "bad name"
    groups: 2
    attributes: {FifoQueue: "true"}
    body: '{"id": "{key}"}'
    key: order.id
    send: {before: 30, rate: fast}
    messages: 10
    dead_letter: {max_recieve_count: 2}
"#,
        )
        .unwrap_err();
        let want = [
            "plan.yaml:3:11: `bad name` is not a queue name",
            "plan.yaml:4:5: `groups` is for a FIFO queue",
            "plan.yaml:5:17: `FifoQueue` is set by the plan",
            "plan.yaml:6:11: the body is not JSON with a business key at `order.id`",
            "plan.yaml:8:20: `before` is 30, more than the queue's 10 messages",
            "plan.yaml:8:30: `fast` is not a rate",
            "plan.yaml:10:19: unknown key `max_recieve_count`",
        ];
        for w in want {
            assert!(errors.iter().any(|e| e.starts_with(w)), "{w}\n{errors:#?}");
        }
    }

    #[test]
    fn a_body_without_its_own_key_per_message_is_refused() {
        let errors = plan("queues:\n  - name: q\n    body: '{\"business_key\": \"x-{key}\", \"k\": 1}'\n    key: k\n").unwrap_err();
        assert!(errors[0].contains("the same value at `k`"), "{errors:?}");
        let errors = plan("queues:\n  - name: q\n    body: 'plain {seq}'\n").unwrap_err();
        assert!(errors[0].contains("holds no `{key}`"), "{errors:?}");
    }

    #[test]
    fn names_must_differ_with_their_dead_letter_queues() {
        let errors = plan(
            "queues:\n  - name: a\n    dead_letter: {max_receive_count: 2}\n  - name: a-dlq\n",
        )
        .unwrap_err();
        assert!(
            errors[0].starts_with("plan.yaml:4:5: queue `a-dlq` clashes"),
            "{errors:?}"
        );
    }

    #[test]
    fn held_back_messages_need_a_rate_and_the_total_is_bounded() {
        let errors = plan("queues:\n  - name: q\n    send: {before: 3}\n").unwrap_err();
        assert!(errors[0].contains("without a `rate`"), "{errors:?}");
        let errors =
            plan("queues:\n  - name: a\n    messages: 6000\n  - name: b\n    messages: 6000\n")
                .unwrap_err();
        assert!(errors[0].contains("sends 12000 messages"), "{errors:?}");
        let errors = plan("").unwrap_err();
        assert!(errors[0].contains("the plan is empty"), "{errors:?}");
    }
}
