//! Opt-in chaos: the legal-but-rare behaviours AWS documents for SQS but an exact emulator never
//! shows, so suites can exercise consumers against them. Each setting is allowed by an AWS text
//! (the table in `docs/chaos.md` quotes it):
//!
//! - `stale_delete_keeps`: API_DeleteMessage says that with a receipt handle from an earlier
//!   receive "the request will succeed, but the message might not be deleted". By default the
//!   emulator deletes (see `lease_ops`); with this probability it answers 200 and keeps it.
//! - `redeliver_after_delete`: standard queues deliver "at least once" (SQS developer guide,
//!   standard-queues-at-least-once-delivery; API_DeleteMessage: "it is possible to receive a
//!   message even after you delete it"). With this probability a correct delete answers 200
//!   but the message stays leased and becomes visible again when its visibility timeout ends —
//!   once per message, so a consumer that deletes every delivery is not trapped in a loop.
//! - `short_poll_miss`: a short poll "queries only a subset of the servers … you might not
//!   receive any messages in a particular ReceiveMessage response" (SQS developer guide,
//!   sqs-short-and-long-polling). With this probability a short poll (WaitTimeSeconds 0) takes
//!   fewer messages than it could, possibly none.
//! - `reorder`: standard queues give "best-effort ordering … a message might be delivered out
//!   of order" (standard-queues). With this probability a response of several messages comes in
//!   another order than they were sent.
//! - `duplicate`: at-least-once delivery, "occasionally more than one copy of a message is
//!   delivered" (standard-queues-at-least-once-delivery). With this probability a receive also
//!   returns a copy of a message another receive holds, under a new receipt handle — once per
//!   message.
//! - `latency` and `throttle`, at the server: every request waits `latency` before it is
//!   handled, and with probability `throttle` a request is answered `RequestThrottled` (400)
//!   without being handled (API_ReceiveMessage, API_SendMessage: "RequestThrottled … the
//!   request was denied due to request throttling").
//!
//! `stale_delete_keeps`, `redeliver_after_delete`, `reorder` and `duplicate` apply to standard
//! queues only: FIFO queues reject stale handles, keep order and deliver exactly once.
//!
//! The grammar of the settings (`--chaos`, a case's `emulator_chaos:`, the queue tag) is
//! [`sqsprobe_facts::chaos`], below both the suite parser and the emulator; this file holds the dice.
//!
//! The settings come from `--chaos` for the whole server, or, for one queue, from its
//! [`QUEUE_TAG`] tag (same grammar, without the server-wide settings), which the runner sets on
//! a case's queues when the case names `emulator_chaos:`. The dice come from seeded RNGs — one
//! for the server, one per tagged queue — so a run is reproducible.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

pub use sqsprobe_facts::chaos::{Chaos, ChaosSpecError, QUEUE_TAG};

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};

/// An InvalidParameterValue-style message when `tags` carry a [`QUEUE_TAG`] that does not
/// parse as one queue's chaos.
pub(crate) fn check_queue_tag(tags: &BTreeMap<String, String>) -> Result<(), String> {
    match tags.get(QUEUE_TAG) {
        Some(spec) => Chaos::parse_queue(spec).map(|_| ()).map_err(|e| {
            format!(
                "Tag {QUEUE_TAG} is invalid: column {}: {}",
                e.column, e.message
            )
        }),
        None => Ok(()),
    }
}

/// The queue a chaos decision is about: its key in the store (its ARN: one name in two regions
/// is two queues with two sets of dice) and its tags (a [`QUEUE_TAG`] gives it its own
/// settings).
#[derive(Debug, Clone, Copy)]
pub(crate) struct On<'a> {
    pub key: &'a str,
    pub tags: &'a BTreeMap<String, String>,
    pub fifo: bool,
}

/// One queue's settings and dice.
#[derive(Debug)]
struct QueueDice {
    /// The tag the settings came from; `None` for a queue on the server's settings.
    spec: Option<String>,
    settings: Chaos,
    rng: StdRng,
    /// The queue's own throttle dice, so one queue's requests do not shift another's.
    throttle: StdRng,
}

/// One queue's chaos: its dice (new ones when its tag changes) and the messages already
/// redelivered after a delete or duplicated (by seq, store-wide unique; a message that moves to
/// another queue gets a new seq there, so a queue's own record is all it needs).
#[derive(Debug)]
struct QueueChaos {
    dice: QueueDice,
    redelivered: Marks,
    duplicated: Marks,
}

/// A stored message as the chaos marks name it: its store-wide seq and its slot in its queue,
/// which together tell whether the queue still stores it.
pub(crate) type MessageRef = (u64, u32);

/// Whether a queue still stores a message: the marks keep only messages it does.
pub(crate) type Stored<'a> = &'a dyn Fn(MessageRef) -> bool;

/// Fewest marks a set holds before it is first pruned.
const MARKS_PRUNED_FROM: usize = 64;

/// The messages a setting already acted on, each at most once. The rule needs a mark only while
/// its message is stored, so whenever the set has doubled since it was last pruned, the marks
/// of messages the queue no longer stores are dropped: the set holds at most about twice the
/// marked messages still stored, and each insert costs O(1) amortised.
#[derive(Debug, Default)]
struct Marks {
    slots: HashMap<u64, u32>,
    kept: usize,
}

impl Marks {
    fn contains(&self, seq: u64) -> bool {
        self.slots.contains_key(&seq)
    }

    fn insert(&mut self, (seq, slot): MessageRef, stored: Stored<'_>) {
        if self.slots.len() >= (2 * self.kept).max(MARKS_PRUNED_FROM) {
            self.slots.retain(|&seq, &mut slot| stored((seq, slot)));
            self.kept = self.slots.len();
        }
        self.slots.insert(seq, slot);
    }
}

impl QueueDice {
    fn new(spec: Option<String>, settings: Chaos, stable_key: &str) -> QueueDice {
        // A queue on the server's settings draws from the server's seed mixed with its stable
        // key: its own dice, in its own request order, whatever other queues do meanwhile. A
        // tagged queue's seed is its tag's (the runner mixes the run's seed, the case, the trial
        // and the queue's label into it, so each trial's queue draws independently).
        let seed = match spec {
            Some(_) => settings.seed.unwrap_or(0),
            None => mix(settings.seed.unwrap_or(0), stable_key),
        };
        QueueDice {
            spec,
            settings,
            rng: StdRng::seed_from_u64(seed),
            throttle: StdRng::seed_from_u64(mix(seed, "throttle")),
        }
    }
}

/// `seed` mixed with `key`: a different, fixed stream of dice per key.
pub fn mix(seed: u64, key: &str) -> u64 {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(seed.to_le_bytes());
    h.update(key.as_bytes());
    let d = h.finalize();
    u64::from_le_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
}

/// The emulator's live chaos: the settings, the seeded dice, and which messages were already
/// redelivered after a delete or duplicated.
///
/// Every queue draws from its own dice, in its own request order: the same seed and the same
/// calls to a queue give the same outcomes on the real clock too, however requests to other
/// queues interleave with them. The operations roll a queue's dice under that queue's mutex
/// (`model/store.rs`), and each queue's dice have a mutex of their own, so two queues never
/// wait on each other here; a decision whose setting is off for its queue (no tag, the
/// server's probability 0) takes no lock at all, so without chaos none of this is on a
/// request's path.
#[derive(Debug)]
pub(crate) struct ChaosDice {
    settings: Chaos,
    /// A queue-name prefix left out of the key an untagged queue's dice are seeded from (see
    /// [`EmulatorConfig::chaos_name_prefix`](crate::EmulatorConfig)).
    name_prefix: Option<String>,
    /// The throttle's dice for requests that name no queue (ListQueues, say).
    server_rng: Mutex<StdRng>,
    /// Per queue key; written only when a queue is first seen.
    queues: RwLock<HashMap<String, Arc<Mutex<QueueChaos>>>>,
}

impl ChaosDice {
    pub fn new(settings: Chaos, name_prefix: Option<String>) -> Self {
        Self {
            settings,
            name_prefix,
            server_rng: Mutex::new(StdRng::seed_from_u64(
                settings.seed.unwrap_or(0).rotate_left(32),
            )),
            queues: RwLock::new(HashMap::new()),
        }
    }

    /// The key an untagged queue's dice are seeded from: its store key (its ARN), with the
    /// name prefix left out of the name, so a queue named after a random run id draws the same
    /// dice in every run of the same seed.
    fn stable_key<'k>(&self, key: &'k str) -> std::borrow::Cow<'k, str> {
        let Some(prefix) = self.name_prefix.as_deref().filter(|p| !p.is_empty()) else {
            return key.into();
        };
        let (head, name) = key.rsplit_once(':').unwrap_or(("", key));
        match name.strip_prefix(prefix) {
            Some(rest) => format!("{head}:{rest}").into(),
            None => key.into(),
        }
    }

    /// Whether the setting `knob` is off for queue `on`: no chaos tag, and the server's
    /// probability 0. Rolling it would then touch no dice (`roll` draws nothing at 0), so the
    /// decision is its default without looking the queue's dice up.
    fn off(&self, on: On<'_>, knob: fn(&Chaos) -> f64) -> bool {
        knob(&self.settings) <= 0.0 && !on.tags.contains_key(QUEUE_TAG)
    }

    /// Runs `f` with the settings and dice of queue `on`: its tag's settings, else the
    /// server's, each queue with dice of its own.
    fn with<T>(&self, on: On<'_>, f: impl FnOnce(&Chaos, &mut StdRng) -> T) -> T {
        self.dice(on.key, on.tags, |d| f(&d.dice.settings, &mut d.dice.rng))
    }

    fn dice<T>(
        &self,
        key: &str,
        tags: &BTreeMap<String, String>,
        f: impl FnOnce(&mut QueueChaos) -> T,
    ) -> T {
        let tagged = tags
            .get(QUEUE_TAG)
            .and_then(|spec| Chaos::parse_queue(spec).ok().map(|c| (spec.clone(), c)));
        let fresh = || match &tagged {
            Some((spec, c)) => QueueDice::new(Some(spec.clone()), *c, key),
            None => QueueDice::new(None, self.settings, &self.stable_key(key)),
        };
        let known = self
            .queues
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .cloned();
        let cell = match known {
            Some(cell) => cell,
            None => Arc::clone(
                self.queues
                    .write()
                    .unwrap_or_else(|e| e.into_inner())
                    .entry(key.to_owned())
                    .or_insert_with(|| {
                        Arc::new(Mutex::new(QueueChaos {
                            dice: fresh(),
                            redelivered: Marks::default(),
                            duplicated: Marks::default(),
                        }))
                    }),
            ),
        };
        let mut entry = cell.lock().unwrap_or_else(|e| e.into_inner());
        // A tag set or changed after the queue was first seen gives it new settings and dice.
        let spec = tagged.as_ref().map(|(s, _)| s);
        if entry.dice.spec.as_ref() != spec {
            entry.dice = fresh();
        }
        f(&mut entry)
    }

    /// Forgets queue `key`'s dice and marks: the queue was deleted, and one created again
    /// under its name starts with fresh dice, as a first queue of that name would.
    pub fn forget(&self, key: &str) {
        let mut queues = self.queues.write().unwrap_or_else(|e| e.into_inner());
        queues.remove(key);
        if queues.is_empty() {
            queues.shrink_to(16);
        }
    }

    /// How many queues have dice (for tests of what the emulator keeps).
    #[cfg(test)]
    pub fn queues_known(&self) -> usize {
        self.queues.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether a stale-handle delete on a standard queue keeps the message.
    pub fn stale_delete_keeps(&self, on: On<'_>) -> bool {
        !on.fifo
            && !self.off(on, |c| c.stale_delete_keeps)
            && self.with(on, |c, rng| roll(rng, c.stale_delete_keeps))
    }

    /// Whether a correct delete of message `seq` on a standard queue is turned into a
    /// redelivery. True at most once per message.
    pub fn redeliver_after_delete(
        &self,
        on: On<'_>,
        message: MessageRef,
        stored: Stored<'_>,
    ) -> bool {
        if on.fifo || self.off(on, |c| c.redeliver_after_delete) {
            return false;
        }
        self.dice(on.key, on.tags, |q| {
            if q.redelivered.contains(message.0)
                || !roll(&mut q.dice.rng, q.dice.settings.redeliver_after_delete)
            {
                return false;
            }
            q.redelivered.insert(message, stored);
            true
        })
    }

    /// How many messages a short poll that could take `max` (the visible messages it asked
    /// for) takes: `max`, or with probability `short-poll-miss` fewer (from 0 to `max - 1`,
    /// evenly).
    pub fn short_poll_take(&self, on: On<'_>, max: usize) -> usize {
        if self.off(on, |c| c.short_poll_miss) {
            return max;
        }
        self.with(on, |c, rng| {
            if max > 0 && roll(rng, c.short_poll_miss) {
                rng.random_range(0..max)
            } else {
                max
            }
        })
    }

    /// Puts a response's messages out of order with probability `reorder` (standard queues,
    /// two messages or more): always into an order other than the one they came in.
    pub fn reorder<T>(&self, on: On<'_>, items: &mut Vec<T>) {
        if on.fifo || items.len() < 2 || self.off(on, |c| c.reorder) {
            return;
        }
        let order: Option<Vec<usize>> = self.with(on, |c, rng| {
            if !roll(rng, c.reorder) {
                return None;
            }
            let mut order: Vec<usize> = (0..items.len()).collect();
            order.shuffle(rng);
            if order.iter().enumerate().all(|(i, &o)| i == o) {
                order.swap(0, 1);
            }
            Some(order)
        });
        if let Some(order) = order {
            let mut slots: Vec<Option<T>> = items.drain(..).map(Some).collect();
            items.extend(order.into_iter().filter_map(|i| slots[i].take()));
        }
    }

    /// Whether a receive on this queue may get duplicates at all ([`ChaosDice::duplicates`]),
    /// so that a receive without chaos never lists the messages other receives hold.
    pub fn may_duplicate(&self, on: On<'_>) -> bool {
        !on.fifo && !self.off(on, |c| c.duplicate) && self.with(on, |c, _| c.duplicate > 0.0)
    }

    /// Of `held` (messages other receives hold, oldest first), the ones a receive on a standard
    /// queue also gets a copy of: each with probability `duplicate`, at most `room`, and each
    /// message at most once.
    pub fn duplicates(
        &self,
        on: On<'_>,
        held: &[MessageRef],
        room: usize,
        stored: Stored<'_>,
    ) -> Vec<u64> {
        if on.fifo || room == 0 || held.is_empty() || self.off(on, |c| c.duplicate) {
            return Vec::new();
        }
        self.dice(on.key, on.tags, |q| {
            let QueueChaos {
                dice, duplicated, ..
            } = q;
            let p = dice.settings.duplicate;
            if p <= 0.0 {
                return Vec::new();
            }
            let picked: Vec<MessageRef> = held
                .iter()
                .copied()
                .filter(|&(seq, _)| !duplicated.contains(seq))
                .filter(|_| roll(&mut dice.rng, p))
                .take(room)
                .collect();
            for &message in &picked {
                duplicated.insert(message, stored);
            }
            picked.into_iter().map(|(seq, _)| seq).collect()
        })
    }

    /// The server-wide delay before a request is handled, if any.
    pub fn latency(&self) -> Option<Duration> {
        (!self.settings.latency.is_zero()).then_some(self.settings.latency)
    }

    /// Whether the server throttles at all (so a request's queue need only be looked up then).
    pub fn throttles(&self) -> bool {
        self.settings.throttle > 0.0
    }

    /// Whether the server answers this request `RequestThrottled` instead of handling it: the
    /// server-wide probability, drawn from the dice of the queue the request names (`queue`,
    /// its store key), else from the server's.
    pub fn throttle(&self, queue: Option<(&str, &BTreeMap<String, String>)>) -> bool {
        if !self.throttles() {
            return false;
        }
        match queue {
            Some((key, tags)) => self.dice(key, tags, |q| {
                roll(&mut q.dice.throttle, self.settings.throttle)
            }),
            None => {
                let mut rng = self.server_rng.lock().unwrap_or_else(|e| e.into_inner());
                roll(&mut rng, self.settings.throttle)
            }
        }
    }
}

/// A draw with probability `p`; never touches the RNG when `p` is 0 or 1, so an off setting
/// does not shift another setting's outcomes.
fn roll(rng: &mut StdRng, p: f64) -> bool {
    if p <= 0.0 {
        return false;
    }
    if p >= 1.0 {
        return true;
    }
    rng.random_bool(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_TAGS: &BTreeMap<String, String> = &BTreeMap::new();
    const ALL_STORED: Stored<'static> = &|_| true;

    fn on<'a>(tags: &'a BTreeMap<String, String>) -> On<'a> {
        On {
            key: "q",
            tags,
            fifo: false,
        }
    }

    #[test]
    fn a_queue_tag_takes_queue_settings_only() {
        assert_eq!(
            Chaos::parse_queue("redeliver-after-delete=1,seed=4").unwrap(),
            Chaos {
                redeliver_after_delete: 1.0,
                seed: Some(4),
                ..Chaos::default()
            }
        );
        let err = Chaos::parse_queue("duplicate=1,throttle=0.5").unwrap_err();
        assert_eq!(err.column, 13);
        assert!(err.message.contains("whole server"), "{err}");
        let mut tags = BTreeMap::new();
        tags.insert(QUEUE_TAG.to_string(), "latency=1s".to_string());
        assert!(check_queue_tag(&tags).unwrap_err().contains("column 1"));
        tags.insert(QUEUE_TAG.to_string(), "reorder=1".to_string());
        assert_eq!(check_queue_tag(&tags), Ok(()));
        assert_eq!(check_queue_tag(NO_TAGS), Ok(()));
    }

    #[test]
    fn seeded_dice_repeat_and_redeliver_once() {
        let settings = Chaos {
            stale_delete_keeps: 0.5,
            redeliver_after_delete: 1.0,
            seed: Some(42),
            ..Chaos::default()
        };
        let draws = |d: &ChaosDice| {
            (0..64)
                .map(|_| d.stale_delete_keeps(on(NO_TAGS)))
                .collect::<Vec<_>>()
        };
        let a = draws(&ChaosDice::new(settings, None));
        assert_eq!(a, draws(&ChaosDice::new(settings, None)));
        assert!(a.contains(&true) && a.contains(&false));
        let dice = ChaosDice::new(settings, None);
        assert!(dice.redeliver_after_delete(on(NO_TAGS), (9, 0), ALL_STORED));
        assert!(!dice.redeliver_after_delete(on(NO_TAGS), (9, 0), ALL_STORED));
        assert!(
            !ChaosDice::new(Chaos::default(), None).redeliver_after_delete(
                on(NO_TAGS),
                (9, 0),
                ALL_STORED
            )
        );
        let fifo = On {
            fifo: true,
            ..on(NO_TAGS)
        };
        assert!(!dice.redeliver_after_delete(fifo, (10, 0), ALL_STORED));
        assert!(!dice.stale_delete_keeps(fifo));
    }

    /// A queue's outcomes follow its own requests, however other queues' requests
    /// interleave with them (on the real clock, arrival order is not the same twice).
    #[test]
    fn each_queue_draws_in_its_own_request_order() {
        let settings = Chaos {
            stale_delete_keeps: 0.5,
            throttle: 0.5,
            seed: Some(7),
            ..Chaos::default()
        };
        let a = On {
            key: "arn:aws:sqs:us-east-1:000000000000:a",
            ..on(NO_TAGS)
        };
        let b = On {
            key: "arn:aws:sqs:us-east-1:000000000000:b",
            ..on(NO_TAGS)
        };
        let alone = ChaosDice::new(settings, None);
        let a_alone: Vec<bool> = (0..40).map(|_| alone.stale_delete_keeps(a)).collect();
        let throttles_alone: Vec<bool> = (0..40)
            .map(|_| alone.throttle(Some((a.key, NO_TAGS))))
            .collect();
        let mixed = ChaosDice::new(settings, None);
        let mut a_mixed = Vec::new();
        let mut throttles_mixed = Vec::new();
        for i in 0..40 {
            // Another queue's requests in between, a varying number of them.
            for _ in 0..(i % 3) {
                mixed.stale_delete_keeps(b);
                mixed.throttle(Some((b.key, NO_TAGS)));
                mixed.throttle(None);
            }
            a_mixed.push(mixed.stale_delete_keeps(a));
            throttles_mixed.push(mixed.throttle(Some((a.key, NO_TAGS))));
        }
        assert_eq!(a_alone, a_mixed);
        assert_eq!(throttles_alone, throttles_mixed);
        assert!(a_alone.contains(&true) && a_alone.contains(&false));
        // Two queues on the server's settings do not share dice.
        let b_first = ChaosDice::new(settings, None);
        let b_seq: Vec<bool> = (0..40).map(|_| b_first.stale_delete_keeps(b)).collect();
        assert_ne!(a_alone, b_seq);
    }

    /// A run names its queues after a random run id; with that prefix left out, a queue's
    /// dice follow the seed and the rest of its name alone.
    #[test]
    fn a_name_prefix_is_left_out_of_an_untagged_queues_dice() {
        let settings = Chaos {
            throttle: 0.5,
            seed: Some(7),
            ..Chaos::default()
        };
        let draws = |prefix: &str, name: &str| {
            let dice = ChaosDice::new(settings, Some(prefix.to_string()));
            let key = format!("arn:aws:sqs:us-east-1:000000000000:{name}");
            (0..40)
                .map(|_| dice.throttle(Some((&key, NO_TAGS))))
                .collect::<Vec<_>>()
        };
        let one = draws("sqsprobe-r1-", "sqsprobe-r1-case-q");
        assert!(one.contains(&true) && one.contains(&false));
        assert_eq!(one, draws("sqsprobe-r2-", "sqsprobe-r2-case-q"));
        assert_ne!(one, draws("sqsprobe-r1-", "sqsprobe-r1-case-other"));
        assert_ne!(
            draws("", "sqsprobe-r1-case-q"),
            draws("", "sqsprobe-r2-case-q"),
            "without the prefix the run id is part of the key"
        );
    }

    #[test]
    fn a_tagged_queue_has_its_own_settings_and_dice() {
        let dice = ChaosDice::new(Chaos::default(), None);
        let mut tags = BTreeMap::new();
        tags.insert(
            QUEUE_TAG.to_string(),
            "redeliver-after-delete=1".to_string(),
        );
        assert!(dice.redeliver_after_delete(on(&tags), (1, 0), ALL_STORED));
        assert!(
            !dice.redeliver_after_delete(on(NO_TAGS), (2, 0), ALL_STORED),
            "untagged: off"
        );
        // A new tag value is read at the next decision.
        tags.insert(QUEUE_TAG.to_string(), "stale-delete-keeps=1".to_string());
        assert!(dice.stale_delete_keeps(on(&tags)));
        assert!(!dice.redeliver_after_delete(on(&tags), (3, 0), ALL_STORED));
    }

    #[test]
    fn short_polls_miss_with_their_probability() {
        let always = ChaosDice::new(
            Chaos {
                short_poll_miss: 1.0,
                ..Chaos::default()
            },
            None,
        );
        for _ in 0..50 {
            assert!(always.short_poll_take(on(NO_TAGS), 10) < 10);
        }
        assert_eq!(always.short_poll_take(on(NO_TAGS), 1), 0);
        let half = ChaosDice::new(
            Chaos {
                short_poll_miss: 0.5,
                seed: Some(9),
                ..Chaos::default()
            },
            None,
        );
        let full = (0..200)
            .filter(|_| half.short_poll_take(on(NO_TAGS), 10) == 10)
            .count();
        assert!((60..=140).contains(&full), "{full} of 200 untouched");
        assert_eq!(
            ChaosDice::new(Chaos::default(), None).short_poll_take(on(NO_TAGS), 10),
            10
        );
    }

    #[test]
    fn reorder_always_changes_the_order_it_touches() {
        let dice = ChaosDice::new(
            Chaos {
                reorder: 1.0,
                seed: Some(3),
                ..Chaos::default()
            },
            None,
        );
        for n in 2..8 {
            let mut v: Vec<usize> = (0..n).collect();
            dice.reorder(on(NO_TAGS), &mut v);
            assert_ne!(v, (0..n).collect::<Vec<_>>());
            let mut sorted = v.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "a permutation");
        }
        let mut one = vec![1];
        dice.reorder(on(NO_TAGS), &mut one);
        assert_eq!(one, [1]);
        let mut fifo = vec![1, 2, 3];
        dice.reorder(
            On {
                fifo: true,
                ..on(NO_TAGS)
            },
            &mut fifo,
        );
        assert_eq!(fifo, [1, 2, 3]);
    }

    #[test]
    fn duplicates_copy_each_held_message_once() {
        let dice = ChaosDice::new(
            Chaos {
                duplicate: 1.0,
                ..Chaos::default()
            },
            None,
        );
        let held = [(4, 0), (5, 1), (6, 2)];
        assert_eq!(dice.duplicates(on(NO_TAGS), &held, 2, ALL_STORED), [4, 5]);
        assert_eq!(dice.duplicates(on(NO_TAGS), &held, 10, ALL_STORED), [6]);
        assert!(
            dice.duplicates(on(NO_TAGS), &held, 10, ALL_STORED)
                .is_empty()
        );
        assert!(
            ChaosDice::new(Chaos::default(), None)
                .duplicates(on(NO_TAGS), &[(1, 0)], 1, ALL_STORED)
                .is_empty()
        );
    }

    #[test]
    fn only_a_standard_queue_with_duplicates_on_may_duplicate() {
        let dice = ChaosDice::new(
            Chaos {
                duplicate: 0.5,
                ..Chaos::default()
            },
            None,
        );
        assert!(dice.may_duplicate(on(NO_TAGS)));
        let fifo = On {
            fifo: true,
            ..on(NO_TAGS)
        };
        assert!(!dice.may_duplicate(fifo));
        assert!(!ChaosDice::new(Chaos::default(), None).may_duplicate(on(NO_TAGS)));
    }

    #[test]
    fn the_server_throttles_and_waits_as_set() {
        let dice = ChaosDice::new(
            Chaos {
                throttle: 0.5,
                latency: Duration::from_millis(20),
                seed: Some(1),
                ..Chaos::default()
            },
            None,
        );
        let throttled = (0..400).filter(|_| dice.throttle(None)).count();
        assert!((140..=260).contains(&throttled), "{throttled} of 400");
        assert_eq!(dice.latency(), Some(Duration::from_millis(20)));
        let off = ChaosDice::new(Chaos::default(), None);
        assert!(!off.throttle(None) && off.latency().is_none());
    }

    #[test]
    fn marks_of_messages_no_longer_stored_are_dropped_and_deleted_queues_forgotten() {
        let dice = ChaosDice::new(
            Chaos {
                redeliver_after_delete: 1.0,
                ..Chaos::default()
            },
            None,
        );
        // Each message is marked, then leaves the queue (only the last 10 are still stored).
        let total = 100_000u64;
        let stored = |(seq, _): MessageRef| seq + 10 >= total;
        for seq in 0..total {
            assert!(dice.redeliver_after_delete(on(NO_TAGS), (seq, 0), &stored));
        }
        let kept = dice.dice("q", NO_TAGS, |q| q.redelivered.slots.len());
        assert!(kept <= 2 * MARKS_PRUNED_FROM, "{kept} marks kept");
        // A mark of a message still stored is kept: it is not redelivered twice.
        assert!(!dice.redeliver_after_delete(on(NO_TAGS), (total - 1, 0), &stored));
        assert_eq!(dice.queues_known(), 1);
        dice.forget("q");
        assert_eq!(dice.queues_known(), 0);
    }
}
