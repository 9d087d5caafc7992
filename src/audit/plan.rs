//! An audit plan (`sqsprobe audit --plan PLAN.yaml`): the queues a consumer is audited on,
//! their attributes and dead-letter queues, the shape of the messages (body, message
//! attributes, FIFO group and deduplication ids: `shape`), where the business key is read
//! (`key`), each queue's own keys, the output queues the consumer forwards its work to, and
//! how many messages are sent before the consumer starts and at what rate the rest arrive
//! while it runs (docs/audit.md#plans).
//!
//! Without a plan the audit is [`Plan::single`]: one queue, every message sent before the
//! consumer starts, bodies `{"business_key": "b-<i>", "seq": <i>}`. Parsing is pure and
//! reports every problem at its `file:line:column`, as suites do; every message of the plan is
//! rendered once while parsing, so a plan whose messages do not each carry their own readable
//! business key (over all its queues) is refused before anything starts.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use saphyr::YamlData;

pub(crate) use super::key::{KeyMap, KeySpec, Role};
pub(crate) use super::shape::{AttributePlan, AttributeValue, Body, Planned, Template, Vars};
use super::shape::{attribute_name_problem, valid_id};
use sqsprobe_core::suite::Diagnostic;
use sqsprobe_core::suite::model::Pos;
use sqsprobe_core::suite::yaml::{DocumentKind, Node, Reader, parse_document, pos};

const PLAN_FILE: DocumentKind = DocumentKind {
    noun: "plan",
    empty_hint: "a plan is a mapping with `queues:`; see docs/audit.md#plans",
};

const PLAN_KEYS: &[&str] = &["queues"];
const QUEUE_KEYS: &[&str] = &[
    "name",
    "output",
    "fifo",
    "groups",
    "attributes",
    "dead_letter",
    "messages",
    "body",
    "message_attributes",
    "group_id",
    "deduplication_id",
    "keys",
    "key",
    "send",
];
/// What an output queue may say: it only receives the consumer's forwards.
const OUTPUT_KEYS: &[&str] = &["name", "output", "fifo", "attributes", "key"];
const DEAD_LETTER_KEYS: &[&str] = &["max_receive_count", "attributes"];
const SEND_KEYS: &[&str] = &["before", "rate"];
const BODY_LAYERS: &[&str] = &["base64", "sns"];
const ATTRIBUTE_KEYS: &[&str] = &["type", "value"];

/// Attributes a plan sets with its own keys, not under `attributes:`.
const OWN_KEYS: &[(&str, &str)] = &[
    ("FifoQueue", "fifo: true"),
    ("RedrivePolicy", "dead_letter: {max_receive_count: N}"),
];

/// The body every message has unless a plan says otherwise.
pub(crate) const DEFAULT_BODY: &str = r#"{"business_key": "{key}", "seq": {seq}}"#;

/// A FIFO queue's message group unless a plan says otherwise.
const DEFAULT_GROUP_ID: &str = "g-{group}";

/// A FIFO queue's deduplication id unless a plan says otherwise.
const DEFAULT_DEDUPLICATION_ID: &str = "{key}";

/// Most message attributes one message may carry (API_SendMessage).
const MAX_MESSAGE_ATTRIBUTES: usize = 10;

/// The most messages one audit sends, over all its queues.
pub(crate) const MAX_MESSAGES: u32 = 10_000;

/// A whole plan: at least one queue; the first is the consumer's `SQSPROBE_QUEUE_URL`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub queues: Vec<QueuePlan>,
}

/// One queue of a plan and the messages sent to it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QueuePlan {
    /// The queue's name, without `.fifo` (added for a FIFO queue).
    pub name: String,
    /// An output queue: the audit sends it nothing; a message the consumer sends to it is the
    /// commit of the business key it carries.
    pub output: bool,
    pub fifo: bool,
    /// How many values `{group}` takes (`seq` modulo it).
    pub groups: u32,
    /// CreateQueue attributes as written (`VisibilityTimeout: 5`); the emulator checks them.
    pub attributes: BTreeMap<String, String>,
    /// Where `attributes:` was written, for the emulator's refusal.
    pub attributes_at: Option<Pos>,
    /// A dead-letter queue `<name>-dlq` and the receives after which a message moves there.
    pub dead_letter: Option<u32>,
    /// The dead-letter queue's CreateQueue attributes as written (`MessageRetentionPeriod:
    /// 60`, to see the retention trap); the emulator checks them.
    pub dead_letter_attributes: BTreeMap<String, String>,
    pub messages: u32,
    pub body: Body,
    pub message_attributes: Vec<AttributePlan>,
    /// Each message's MessageGroupId (a FIFO queue's always; a standard queue's makes it a
    /// fair queue).
    pub group_id: Option<Template>,
    /// Each message's MessageDeduplicationId (FIFO only).
    pub deduplication_id: Option<Template>,
    /// Each message's business key, `{key}` in its templates.
    pub keys: Template,
    /// Where the business key is read from a message on this queue.
    pub key: KeySpec,
    /// How many of the messages are sent before the consumer starts.
    pub before: u32,
    /// The rest are sent while it runs, this many per second.
    pub rate: Option<f64>,
}

impl QueuePlan {
    /// The queue's name as created (`.fifo` for a FIFO queue).
    pub(crate) fn queue_name(&self) -> String {
        with_fifo(&self.name, self.fifo)
    }

    /// The dead-letter queue's name as created, when there is one.
    pub(crate) fn dead_letter_name(&self) -> Option<String> {
        self.dead_letter
            .map(|_| with_fifo(&format!("{}-dlq", self.name), self.fifo))
    }

    /// The gap between two sends of the messages sent while the consumer runs.
    pub(crate) fn gap(&self) -> Option<Duration> {
        self.rate.map(|r| Duration::from_secs_f64(1.0 / r))
    }

    /// Message `i` (1-based, over this queue), rendered.
    pub(crate) fn message(&self, i: u32) -> Planned {
        let group = i % self.groups.max(1);
        let key = self.keys.render(&Vars {
            key: "",
            seq: i,
            group,
        });
        let v = Vars {
            key: &key,
            seq: i,
            group,
        };
        let attributes = self
            .message_attributes
            .iter()
            .map(|a| {
                let text = a.value.render(&v);
                let value = if a.base_type() == "Binary" {
                    AttributeValue::Bytes(text.into_bytes())
                } else {
                    AttributeValue::Text(text)
                };
                (a.name.clone(), a.data_type.clone(), value)
            })
            .collect();
        Planned {
            body: self.body.render(&self.name, &v),
            attributes,
            group_id: self.group_id.as_ref().map(|t| t.render(&v)),
            deduplication_id: self.deduplication_id.as_ref().map(|t| t.render(&v)),
            key,
        }
    }

    /// The environment variable naming this queue's URL (`SQSPROBE_QUEUE_URL_ORDERS`).
    pub(crate) fn env_name(&self) -> String {
        env_name("SQSPROBE_QUEUE_URL_", &self.name)
    }

    /// The environment variable naming its dead-letter queue's URL (`SQSPROBE_DLQ_URL_ORDERS`).
    pub(crate) fn dead_letter_env_name(&self) -> String {
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

/// The keys of the first queue unless it says otherwise: `b-1`, `b-2`, ...
const FIRST_KEYS: &str = "b-{seq}";

impl Plan {
    /// The plan of an audit without `--plan`: one queue as the command line says.
    pub(crate) fn single(
        name: &str,
        messages: u32,
        fifo: bool,
        groups: u32,
        visibility: Duration,
    ) -> Plan {
        Plan {
            queues: vec![QueuePlan {
                name: name.to_string(),
                output: false,
                fifo,
                groups,
                attributes: BTreeMap::from([(
                    "VisibilityTimeout".to_string(),
                    visibility.as_secs().max(1).to_string(),
                )]),
                attributes_at: None,
                dead_letter: None,
                dead_letter_attributes: BTreeMap::new(),
                messages,
                body: Body::Text(Template(DEFAULT_BODY.to_string())),
                message_attributes: Vec::new(),
                group_id: fifo.then(|| Template(DEFAULT_GROUP_ID.to_string())),
                deduplication_id: fifo.then(|| Template(DEFAULT_DEDUPLICATION_ID.to_string())),
                keys: Template(FIRST_KEYS.to_string()),
                key: KeySpec::default(),
                before: messages,
                rate: None,
            }],
        }
    }

    /// The queues the audit sends to (every queue but the output queues).
    pub(crate) fn sources(&self) -> impl Iterator<Item = &QueuePlan> {
        self.queues.iter().filter(|q| !q.output)
    }

    /// Every queue by its name as created (dead-letter queues too): where its messages hold
    /// the business key, and its role.
    pub(crate) fn key_map(&self) -> KeyMap {
        let mut map = KeyMap::default();
        for q in &self.queues {
            let role = if q.output { Role::Output } else { Role::Source };
            map.insert(q.queue_name(), q.key.clone(), role);
            if let Some(dlq) = q.dead_letter_name() {
                map.insert(dlq, q.key.clone(), Role::DeadLetter);
            }
        }
        map
    }
}

/// Parses a plan file. Returns every problem found, not just the first.
pub(crate) fn parse_plan(path: &str, source: &str) -> Result<Plan, Vec<Diagnostic>> {
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
    // Every business key of the plan, with the queue and message that has it: no two queues
    // may share one, or a correct consumer's commits would read as duplicates.
    let mut keys: HashMap<String, (String, u32)> = HashMap::new();
    for (index, item) in items.iter().enumerate() {
        let Some((q, rendered)) = decode_queue(r, item, index) else {
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
        for (i, key) in rendered {
            if let Some((other, j)) = keys.get(&key) {
                r.error_hint(
                    item,
                    format!(
                        "message {i} of queue `{}` has the business key `{key}`, as message {j} \
                         of queue `{other}` does: each queue needs keys of its own",
                        q.name
                    ),
                    "set `keys:` on one of them, e.g. `keys: 'refund-{seq}'`",
                );
                break;
            }
            keys.insert(key, (q.name.clone(), i));
        }
        queues.push(q);
    }
    if queues.first().is_some_and(|q| q.output) {
        r.error_hint(
            &items[0],
            "the first queue is an output queue",
            "list the queue the consumer consumes first (it is SQSPROBE_QUEUE_URL), then its \
             output queues",
        );
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

/// One queue of the plan, with each of its messages' business keys as read back (number,
/// key); `None` when it is written wrong (every problem reported).
fn decode_queue(
    r: &mut Reader,
    item: &Node,
    index: usize,
) -> Option<(QueuePlan, Vec<(u32, String)>)> {
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
    let output = f
        .get("output")
        .map_or(Some(false), |n| r.bool(n, "`output`"));
    if output == Some(true) {
        for (key, k, _) in &f.entries {
            if !OUTPUT_KEYS.contains(key) {
                r.error_hint(
                    k,
                    format!("`{key}` is for a queue the audit sends to, not an output queue"),
                    "an output queue only receives the consumer's forwards: it takes `name`, \
                     `fifo`, `attributes` and `key` (where a forward carries its business key)",
                );
            }
        }
    }
    let fifo = f.get("fifo").map_or(Some(false), |n| r.bool(n, "`fifo`"));
    let groups = f
        .get("groups")
        .map_or(Some(4), |n| r.int(n, "`groups`", 1, 1000).map(|g| g as u32));
    if f.has("groups") && fifo == Some(false) && !f.has("group_id") {
        let n = f.key("groups").expect("has");
        r.error_hint(
            n,
            "`groups` is for a queue with message groups",
            "add `fifo: true` (or `group_id:` for a standard queue's fair groups), or remove \
             `groups`",
        );
    }
    let attributes_at = f.get("attributes").map(pos);
    let attributes = match f.get("attributes") {
        Some(n) => r
            .string_map(n, "`attributes`")
            .inspect(|map| refuse_own_keys(r, n, map)),
        None => Some(BTreeMap::new()),
    };
    // `Some(None)`: no dead-letter queue; `None`: one written wrong (reported).
    let mut dead_letter_attributes = Some(BTreeMap::new());
    let dead_letter = match f.get("dead_letter") {
        Some(n) => {
            let owner = f.key("dead_letter").unwrap_or(n);
            r.fields(owner, n, "`dead_letter`", DEAD_LETTER_KEYS)
                .and_then(|d| {
                    r.require(&d, &["max_receive_count"]);
                    if let Some(a) = d.get("attributes") {
                        dead_letter_attributes = r
                            .string_map(a, "`dead_letter.attributes`")
                            .inspect(|map| refuse_own_keys(r, a, map));
                    }
                    d.get("max_receive_count")
                })
                .and_then(|n| r.int(n, "`max_receive_count`", 1, 1000))
                .map(|m| Some(m as u32))
        }
        None => Some(None),
    };
    let default_messages = if output == Some(true) { 0 } else { 20 };
    let messages = f.get("messages").map_or(Some(default_messages), |n| {
        r.int(n, "`messages`", 1, i64::from(MAX_MESSAGES))
            .map(|m| m as u32)
    });
    let key = f.get("key").map_or(Some(KeySpec::default()), |n| {
        let written = r.nonempty(n, "`key`")?;
        KeySpec::parse(&written)
            .map_err(|(message, hint)| r.error_hint(n, message, hint))
            .ok()
    });
    let body = f
        .get("body")
        .map_or(Some(Body::Text(Template(DEFAULT_BODY.to_string()))), |n| {
            decode_body(r, n)
        });
    let message_attributes = f
        .get("message_attributes")
        .map_or(Some(Vec::new()), |n| decode_attributes(r, n));
    if let (Some(k), Some(attrs)) = (&key, &message_attributes)
        && let Some(wanted) = k.attribute()
        && !attrs.iter().any(|a| a.name == wanted)
    {
        let at = f.get("key").expect("an attribute key was written");
        let names: Vec<&str> = attrs.iter().map(|a| a.name.as_str()).collect();
        r.error_hint(
            at,
            format!("the key is read from the attribute `{wanted}`, which no message carries"),
            if names.is_empty() {
                "add it under `message_attributes:`".to_string()
            } else {
                sqsprobe_facts::text::suggest::suggest(wanted, &names)
            },
        );
    }
    let template = |r: &mut Reader, what: &str| {
        f.get(what).map(|n| {
            r.nonempty(n, &format!("`{what}`"))
                .map(|t| (Template(t), n))
        })
    };
    let group_id = match template(r, "group_id") {
        Some(written) => written.map(|(t, _)| Some(t)),
        None => Some(
            fifo.unwrap_or(false)
                .then(|| Template(DEFAULT_GROUP_ID.to_string())),
        ),
    };
    let deduplication_id = match template(r, "deduplication_id") {
        Some(Some((t, n))) => {
            if fifo == Some(false) {
                r.error_hint(
                    n,
                    "`deduplication_id` is for a FIFO queue",
                    "add `fifo: true`, or remove `deduplication_id`",
                );
            }
            Some(Some(t))
        }
        Some(None) => None,
        None => Some(
            fifo.unwrap_or(false)
                .then(|| Template(DEFAULT_DEDUPLICATION_ID.to_string())),
        ),
    };
    let first = index == 0;
    let keys = match f.get("keys") {
        Some(n) => r.nonempty(n, "`keys`").and_then(|t| {
            if t.contains("{key}") || t.trim() != t || t.contains(['\n', '\r']) {
                r.error_hint(
                    n,
                    format!("`{t}` cannot be a business key's template"),
                    "one line without spaces at either end, with `{seq}` (and `{group}`), e.g. \
                     `order-{seq}`",
                );
                return None;
            }
            Some(Template(t))
        }),
        None => Some(Template(if first {
            FIRST_KEYS.to_string()
        } else {
            format!("{}-{{seq}}", name.as_deref().unwrap_or("q"))
        })),
    };
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
    if bad_send
        || output == Some(true) && f.entries.iter().any(|(k, _, _)| !OUTPUT_KEYS.contains(k))
    {
        return None;
    }
    let queue = QueuePlan {
        name: name?,
        output: output?,
        fifo: fifo?,
        groups: groups?,
        attributes: attributes?,
        attributes_at,
        dead_letter: dead_letter?,
        dead_letter_attributes: dead_letter_attributes?,
        messages,
        body: body?,
        message_attributes: message_attributes?,
        group_id: group_id?,
        deduplication_id: deduplication_id?,
        keys: keys?,
        key: key?,
        before: before.unwrap_or(if rate.is_some() { 0 } else { messages }),
        rate,
    };
    let rendered = check_messages(r, &f, item, &queue)?;
    Some((queue, rendered))
}

/// A body: a template, or one layer (`base64:`, `sns:`) around another body.
fn decode_body(r: &mut Reader, n: &Node) -> Option<Body> {
    if !matches!(n.data, YamlData::Mapping(_)) {
        return r.nonempty(n, "`body`").map(|t| Body::Text(Template(t)));
    }
    let f = r.fields(n, n, "a body layer", BODY_LAYERS)?;
    let [(layer, _, inner)] = f.entries.as_slice() else {
        r.error_hint(
            n,
            "a body layer is one mapping key, `base64:` or `sns:`",
            "nest layers: `body: {sns: {base64: '{\"id\": \"{key}\"}'}}`",
        );
        return None;
    };
    let inner = Box::new(decode_body(r, inner)?);
    Some(match *layer {
        "base64" => Body::Base64(inner),
        _ => Body::Sns(inner),
    })
}

/// The attributes a plan sets with its own keys are refused under `attributes:` (the queue's
/// or its dead-letter queue's), with the key that sets them.
fn refuse_own_keys(r: &mut Reader, n: &Node, map: &BTreeMap<String, String>) {
    for (own, instead) in OWN_KEYS {
        if map.contains_key(*own) {
            r.error_hint(
                n,
                format!("`{own}` is set by the plan, not under `attributes`"),
                format!("write `{instead}`"),
            );
        }
    }
}

/// `message_attributes:`: each a template (a String attribute) or `{type, value}`.
fn decode_attributes(r: &mut Reader, n: &Node) -> Option<Vec<AttributePlan>> {
    let entries = r.map_entries(n, "`message_attributes`")?;
    if entries.len() > MAX_MESSAGE_ATTRIBUTES {
        r.error(
            n,
            format!(
                "{} message attributes; a message carries at most {MAX_MESSAGE_ATTRIBUTES}",
                entries.len()
            ),
        );
    }
    let mut out = Vec::new();
    let mut ok = true;
    for (name, k, v) in entries {
        if let Some(problem) = attribute_name_problem(name) {
            r.error_hint(
                k,
                format!("`{name}` is not a message attribute name"),
                problem,
            );
            ok = false;
            continue;
        }
        let (data_type, value) = if matches!(v.data, YamlData::Mapping(_)) {
            let Some(a) = r.fields(k, v, &format!("the attribute `{name}`"), ATTRIBUTE_KEYS) else {
                ok = false;
                continue;
            };
            r.require(&a, ATTRIBUTE_KEYS);
            let data_type = a.get("type").and_then(|t| {
                let text = r.nonempty(t, "`type`")?;
                let base = text.split_once('.').map_or(text.as_str(), |(b, _)| b);
                let label_ok = text.split_once('.').is_none_or(|(_, l)| {
                    !l.is_empty()
                        && l.chars()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
                });
                if !matches!(base, "String" | "Number" | "Binary") || !label_ok {
                    r.error_hint(
                        t,
                        format!("`{text}` is not a message attribute type"),
                        "`String`, `Number` or `Binary`, optionally with a label: `Number.int`",
                    );
                    return None;
                }
                Some(text)
            });
            let value = a.get("value").and_then(|t| r.nonempty(t, "`value`"));
            (data_type, value)
        } else {
            (
                Some("String".to_string()),
                r.nonempty(v, &format!("the attribute `{name}`")),
            )
        };
        match (data_type, value) {
            (Some(data_type), Some(value)) => out.push(AttributePlan {
                name: name.to_string(),
                data_type,
                value: Template(value),
            }),
            _ => ok = false,
        }
    }
    ok.then_some(out)
}

/// Renders every message of `q` once: each must carry a business key readable where `key:`
/// says, its own within the queue, numbers where an attribute is a Number, and valid group
/// and deduplication ids (distinct deduplication ids: SQS would drop a repeat). The first
/// problem of each sort is reported. Returns each message's key.
fn check_messages(
    r: &mut Reader,
    f: &sqsprobe_core::suite::yaml::Fields,
    item: &Node,
    q: &QueuePlan,
) -> Option<Vec<(u32, String)>> {
    let at = |k: &str| f.get(k).unwrap_or(item);
    // A key read from the body fails by the body (or the key); one from an attribute, by the key.
    let key_at = if q.key.attribute().is_some() {
        at("key")
    } else if f.has("body") {
        at("body")
    } else {
        at("key")
    };
    let mut out = Vec::with_capacity(q.messages as usize);
    let mut seen: HashMap<String, u32> = HashMap::new();
    let mut dedup: HashMap<String, u32> = HashMap::new();
    let mut ok = true;
    for i in 1..=q.messages {
        let m = q.message(i);
        let attributes = m.attributes_json();
        let Some(key) = q.key.read(&m.body, attributes.as_ref()) else {
            let hint = if q.key.attribute().is_some() {
                "the attribute must hold the key (`{key}`), or a body the rest of `key:` reads"
            } else if !body_mentions(&q.body) {
                "the body holds no `{key}` (or `{seq}`); write it where the business key goes"
            } else {
                "a body such as {\"order\": {\"id\": \"{key}\"}} with `key: order.id`"
            };
            r.error_hint(
                key_at,
                format!(
                    "message {i} has no business key at `{}` (its body is not one `key:` reads)",
                    q.key.written()
                ),
                hint,
            );
            return None;
        };
        if let Some(j) = seen.insert(key.clone(), i) {
            // Keys written without `{seq}` are the likelier cause than the body.
            let keys_at = f
                .get("keys")
                .filter(|_| !q.keys.0.contains("{seq}"))
                .unwrap_or(key_at);
            r.error_hint(
                keys_at,
                format!(
                    "messages {j} and {i} have the same business key `{key}` at `{}`",
                    q.key.written()
                ),
                "put `{key}` (or `{seq}`) where the key is read, so each message has its own",
            );
            return None;
        }
        for (name, data_type, value) in &m.attributes {
            if let AttributeValue::Text(s) = value
                && data_type.starts_with("Number")
                && s.trim().parse::<f64>().is_err()
            {
                r.error(
                    at("message_attributes"),
                    format!("message {i}'s Number attribute `{name}` is `{s}`, not a number"),
                );
                ok = false;
            }
        }
        for (what, id) in [
            ("group_id", &m.group_id),
            ("deduplication_id", &m.deduplication_id),
        ] {
            if let Some(id) = id
                && !valid_id(id)
            {
                r.error_hint(
                    at(what),
                    format!("message {i}'s `{what}` is `{id}`, which SQS refuses"),
                    "1 to 128 letters, digits and punctuation (API_SendMessage)",
                );
                ok = false;
            }
        }
        if let Some(d) = &m.deduplication_id
            && let Some(j) = dedup.insert(d.clone(), i)
        {
            r.error_hint(
                at("deduplication_id"),
                format!("messages {j} and {i} have the deduplication id `{d}`"),
                "SQS keeps only the first of two sends with one id in five minutes; put \
                 `{key}` or `{seq}` in it",
            );
            ok = false;
        }
        if !ok {
            return None;
        }
        out.push((i, key));
    }
    Some(out)
}

/// Whether a body's text names `{key}` or `{seq}` anywhere.
fn body_mentions(body: &Body) -> bool {
    match body {
        Body::Text(t) => t.0.contains("{key}") || t.0.contains("{seq}"),
        Body::Base64(inner) | Body::Sns(inner) => body_mentions(inner),
    }
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
        let m = q.message(7);
        assert_eq!(m.body, r#"{"order": {"id": "b-7", "n": 7}}"#);
        assert_eq!(q.key.read(&m.body, None), Some(m.key.clone()));
        // A FIFO queue's defaults: groups dealt round-robin, the key as deduplication id.
        assert_eq!(
            (m.group_id.as_deref(), m.deduplication_id.as_deref()),
            (Some("g-1"), Some("b-7"))
        );
        assert_eq!(q.env_name(), "SQSPROBE_QUEUE_URL_ORDERS");
        let d = &p.queues[1];
        assert_eq!(
            (d.messages, d.before, d.rate, d.fifo),
            (20, 20, None, false)
        );
        assert_eq!(d.env_name(), "SQSPROBE_QUEUE_URL_AUDIT_LOG");
        // Every queue but the first has keys of its own.
        assert_eq!(d.message(3).key, "audit-log-3");
        assert_eq!(d.message(3).group_id, None);
        assert_eq!(p.queues.iter().map(|q| q.messages).sum::<u32>(), 32);
        assert!(p.queues.iter().any(|q| q.before < q.messages));
    }

    #[test]
    fn a_rate_alone_sends_everything_during_the_run() {
        let p = plan("queues:\n  - name: q\n    messages: 5\n    send: {rate: 10}\n").unwrap();
        assert_eq!((p.queues[0].before, p.queues[0].rate), (0, Some(10.0)));
    }

    /// Real shapes: the key in an attribute, a base64 body, an SNS envelope, a raw body, and
    /// FIFO ids of the plan's own.
    #[test]
    fn message_shapes_render_and_their_keys_read_back() {
        let p = plan(
            r#"
queues:
  - name: tasks
    keys: 'task-{seq}'
    body: 'not json at all'
    message_attributes:
      TaskId: '{key}'
      Priority: {type: Number, value: '{seq}'}
      Trace: {type: Binary.raw, value: 'trace-{seq}'}
    key: attribute:TaskId
  - name: actors
    body: {base64: '{"queue_name": "default", "args": ["{key}"]}'}
    key: base64 | args.0
  - name: events
    body: {sns: '{"order": {"id": "{key}"}}'}
    key: Message.order.id
  - name: raw
    body: '{key}'
    key: .
  - name: ordered
    fifo: true
    groups: 2
    group_id: 'customer-{group}'
    deduplication_id: 'dedup-{seq}'
"#,
        )
        .unwrap();
        let tasks = p.queues[0].message(2);
        assert_eq!(tasks.key, "task-2");
        assert_eq!(tasks.body, "not json at all");
        assert_eq!(
            tasks.attributes,
            vec![
                (
                    "TaskId".into(),
                    "String".into(),
                    AttributeValue::Text("task-2".into())
                ),
                (
                    "Priority".into(),
                    "Number".into(),
                    AttributeValue::Text("2".into())
                ),
                (
                    "Trace".into(),
                    "Binary.raw".into(),
                    AttributeValue::Bytes(b"trace-2".to_vec())
                ),
            ]
        );
        for q in &p.queues {
            let m = q.message(5);
            assert_eq!(
                q.key.read(&m.body, m.attributes_json().as_ref()),
                Some(m.key.clone()),
                "{}",
                q.name
            );
        }
        assert_eq!(p.queues[1].message(1).key, "actors-1");
        let ordered = p.queues[4].message(3);
        assert_eq!(
            (
                ordered.group_id.as_deref(),
                ordered.deduplication_id.as_deref()
            ),
            (Some("customer-1"), Some("dedup-3"))
        );
    }

    #[test]
    fn an_output_queue_is_sent_nothing_and_keyed_by_its_forwards() {
        let p = plan(
            "queues:\n  - name: orders\n  - name: shipments\n    output: true\n    key: shipment.order\n",
        )
        .unwrap();
        let out = &p.queues[1];
        assert!(out.output && out.messages == 0);
        assert_eq!(p.sources().count(), 1);
        assert_eq!(p.queues.iter().map(|q| q.messages).sum::<u32>(), 20);
        let map = p.key_map();
        assert_eq!(map.of(Some("shipments")).map(|e| e.1), Some(Role::Output));
        assert_eq!(map.of(Some("orders")).map(|e| e.1), Some(Role::Source));
        let errors =
            plan("queues:\n  - name: in\n  - name: out\n    output: true\n    messages: 3\n")
                .unwrap_err();
        assert!(
            errors
                .iter()
                .any(|e| e
                    .starts_with("plan.yaml:5:5: `messages` is for a queue the audit sends to")),
            "{errors:#?}"
        );
        let errors = plan("queues:\n  - name: out\n    output: true\n  - name: in\n").unwrap_err();
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("plan.yaml:2:5: the first queue is an output queue")),
            "{errors:#?}"
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
            "plan.yaml:4:5: `groups` is for a queue with message groups",
            "plan.yaml:5:17: `FifoQueue` is set by the plan",
            "plan.yaml:8:20: `before` is 30, more than the queue's 10 messages",
            "plan.yaml:8:30: `fast` is not a rate",
            "plan.yaml:10:19: unknown key `max_recieve_count`",
        ];
        for w in want {
            assert!(errors.iter().any(|e| e.starts_with(w)), "{w}\n{errors:#?}");
        }
    }

    #[test]
    fn shapes_written_wrong_are_reported_at_their_line_and_column() {
        let errors = plan(
            r#"
queues:
  - name: a
    body: '{"id": "{key}"}'
    key: order.id
  - name: b
    message_attributes:
      AWS.x: '{key}'
      N: {type: Number, value: 'n-{seq}'}
      T: {type: Text, value: x}
    key: attribute:Nope
  - name: c
    body: {base64: x, sns: y}
  - name: d
    key: 'a || b'
  - name: e
    fifo: true
    deduplication_id: 'same'
  - name: f
    group_id: 'has space {seq}'
  - name: g
    deduplication_id: '{key}'
"#,
        )
        .unwrap_err();
        let want = [
            "plan.yaml:4:11: message 1 has no business key at `order.id`",
            "plan.yaml:8:7: `AWS.x` is not a message attribute name",
            "plan.yaml:10:17: `Text` is not a message attribute type",
            "plan.yaml:13:11: a body layer is one mapping key",
            "plan.yaml:15:10: `a || b` has an empty stage",
            "plan.yaml:18:23: messages 1 and 2 have the deduplication id `same`",
            "plan.yaml:20:15: message 1's `group_id` is `has space 1`",
            "plan.yaml:22:23: `deduplication_id` is for a FIFO queue",
        ];
        for w in want {
            assert!(errors.iter().any(|e| e.starts_with(w)), "{w}\n{errors:#?}");
        }
        let errors = plan(
            "queues:\n  - name: q\n    message_attributes: {Id: '{key}'}\n    key: attribute:ID\n",
        )
        .unwrap_err();
        assert!(
            errors[0].starts_with(
                "plan.yaml:4:10: the key is read from the attribute `ID`, which no message carries"
            ),
            "{errors:?}"
        );
        let errors = plan(
            "queues:\n  - name: q\n    message_attributes: {N: {type: Number, value: 'n-{seq}'}}\n",
        )
        .unwrap_err();
        assert!(
            errors[0].starts_with("plan.yaml:3:25: message 1's Number attribute `N` is `n-1`"),
            "{errors:?}"
        );
    }

    #[test]
    fn a_body_without_its_own_key_per_message_is_refused() {
        let errors = plan("queues:\n  - name: q\n    body: '{\"business_key\": \"x-{key}\", \"k\": 1}'\n    key: k\n").unwrap_err();
        assert!(
            errors[0].contains("messages 1 and 2 have the same business key `1`"),
            "{errors:?}"
        );
        let errors = plan("queues:\n  - name: q\n    body: 'plain'\n").unwrap_err();
        assert!(
            errors[0].contains("no business key at `business_key`"),
            "{errors:?}"
        );
        let d = parse_plan("plan.yaml", "queues:\n  - name: q\n    body: 'plain'\n").unwrap_err();
        assert!(
            d[0].hint
                .as_deref()
                .unwrap_or("")
                .contains("holds no `{key}`"),
            "{d:?}"
        );
    }

    /// Two queues whose keys would meet (here both written `b-{seq}`) are refused: a correct
    /// consumer's commits of one would read as duplicates of the other's.
    #[test]
    fn keys_must_differ_across_queues() {
        let p = plan("queues:\n  - name: a\n  - name: refunds\n").unwrap();
        assert_eq!(
            (p.queues[0].message(1).key, p.queues[1].message(1).key),
            ("b-1".to_string(), "refunds-1".to_string())
        );
        let errors = plan("queues:\n  - name: a\n  - name: b\n").unwrap_err();
        assert!(
            errors[0].starts_with("plan.yaml:3:5: message 1 of queue `b` has the business key `b-1`, as message 1 of queue `a` does"),
            "{errors:?}"
        );
        let errors = plan("queues:\n  - name: q\n    keys: 'order'\n").unwrap_err();
        assert!(
            errors[0]
                .starts_with("plan.yaml:3:11: messages 1 and 2 have the same business key `order`"),
            "{errors:?}"
        );
        let errors = plan("queues:\n  - name: q\n    keys: '{key}-x'\n").unwrap_err();
        assert!(
            errors[0].contains("cannot be a business key's template"),
            "{errors:?}"
        );
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

#[cfg(test)]
mod dead_letter_attribute_tests {
    use super::*;

    fn plan(src: &str) -> Result<Plan, Vec<String>> {
        parse_plan("plan.yaml", src).map_err(|d| d.iter().map(Diagnostic::one_line).collect())
    }

    /// Every queue attribute can be set, the dead-letter queue's too: its retention is what
    /// shows the retention trap (a standard queue's moved message keeps its send time).
    #[test]
    fn a_dead_letter_queue_takes_its_own_attributes() {
        let p = plan(
            "queues:\n  - name: orders\n    attributes: {MessageRetentionPeriod: 600}\n    \
             dead_letter: {max_receive_count: 2, attributes: {MessageRetentionPeriod: 60, \
             VisibilityTimeout: 5}}\n",
        )
        .unwrap();
        let q = &p.queues[0];
        assert_eq!(q.attributes["MessageRetentionPeriod"], "600");
        assert_eq!(q.dead_letter, Some(2));
        assert_eq!(q.dead_letter_attributes["MessageRetentionPeriod"], "60");
        assert_eq!(q.dead_letter_attributes["VisibilityTimeout"], "5");
        let bad = plan(
            "queues:\n  - name: o\n    dead_letter: {max_receive_count: 2, attributes: {RedrivePolicy: x}}\n",
        )
        .unwrap_err();
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert!(
            bad[0].contains("`RedrivePolicy` is set by the plan, not under `attributes`"),
            "{bad:?}"
        );
        let misspelt =
            plan("queues:\n  - name: o\n    dead_letter: {max_receive_count: 2, atributes: {}}\n")
                .unwrap_err();
        assert!(
            misspelt[0].contains("did you mean `attributes`"),
            "{misspelt:?}"
        );
    }
}
