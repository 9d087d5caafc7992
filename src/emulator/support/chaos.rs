//! Opt-in chaos: the at-least-once behaviours AWS documents for standard queues but an exact
//! emulator never shows, so suites can exercise consumers against them.
//!
//! - `stale_delete_keeps`: API_DeleteMessage says that with a receipt handle from an earlier
//!   receive "the request will succeed, but the message might not be deleted". By default the
//!   emulator deletes (see `lease_ops`); with this probability it answers 200 and keeps it.
//! - `redeliver_after_delete`: standard queues deliver "at least once" (SQS developer guide,
//!   standard-queues-at-least-once-delivery; API_DeleteMessage: "it is possible to receive a
//!   message even after you delete it"). With this probability a correct delete answers 200
//!   but the message stays leased and becomes visible again when its visibility timeout ends —
//!   once per message, so a consumer that deletes every delivery is not trapped in a loop.
//!
//! Both apply to standard queues only: FIFO queues reject stale handles and deliver exactly once.
//! The dice come from a seeded RNG so a run is reproducible. `docs/chaos.md` has the details.

use std::collections::HashSet;
use std::fmt;
use std::sync::Mutex;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// Chaos settings. [`Default`] turns every behaviour off.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Chaos {
    /// Probability, in 0..=1, that DeleteMessage with a handle from an earlier receive, while a
    /// newer receive holds the message, answers 200 but keeps the message.
    pub stale_delete_keeps: f64,
    /// Probability, in 0..=1, that a correct delete answers 200 but the message becomes visible
    /// again after its visibility timeout, as a duplicate (at most once per message).
    pub redeliver_after_delete: f64,
    /// RNG seed: the same seed and the same calls give the same outcomes.
    pub seed: u64,
}

/// The keys a chaos spec accepts, in canonical order.
const KEYS: [&str; 3] = ["stale-delete-keeps", "redeliver-after-delete", "seed"];

/// A chaos spec that does not parse: where (1-based column in the spec) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--chaos column {column}: {message}")]
pub struct ChaosSpecError {
    /// 1-based character column of the offending key or value.
    pub column: usize,
    /// What is wrong, with a suggestion when there is one.
    pub message: String,
}

impl Chaos {
    /// Whether any behaviour can fire.
    pub fn is_off(&self) -> bool {
        self.stale_delete_keeps <= 0.0 && self.redeliver_after_delete <= 0.0
    }

    /// Parses `key=value,key=value` (e.g. `stale-delete-keeps=1,redeliver-after-delete=0.1,seed=7`).
    /// Keys may come in any order, each at most once; unset ones keep their default.
    pub fn parse(spec: &str) -> Result<Self, ChaosSpecError> {
        let mut chaos = Chaos::default();
        let mut seen: Vec<&str> = Vec::new();
        let mut offset = 0;
        if spec.trim().is_empty() {
            return Err(error(
                0,
                format!("empty spec; expected key=value pairs ({})", KEYS.join(", ")),
            ));
        }
        for part in spec.split(',') {
            let start = offset;
            offset += part.chars().count() + 1;
            let lead = part.chars().take_while(|c| c.is_whitespace()).count();
            let item = part.trim();
            let Some((raw_key, raw_value)) = item.split_once('=') else {
                return Err(error(
                    start + lead,
                    format!("expected key=value, got `{item}`"),
                ));
            };
            let key = raw_key.trim();
            let value = raw_value.trim();
            let value_col = start + lead + raw_key.chars().count() + 1;
            if !KEYS.contains(&key) {
                return Err(error(
                    start + lead,
                    match crate::suite::closest(key, KEYS) {
                        Some(c) => format!("unknown chaos setting `{key}`; did you mean `{c}`?"),
                        None => format!(
                            "unknown chaos setting `{key}`; expected one of: {}",
                            KEYS.join(", ")
                        ),
                    },
                ));
            }
            if seen.contains(&key) {
                return Err(error(start + lead, format!("`{key}` given twice")));
            }
            seen.push(key);
            match key {
                "seed" => {
                    chaos.seed = value.parse().map_err(|_| {
                        error(
                            value_col,
                            format!("seed must be a whole number ≥ 0, got `{value}`"),
                        )
                    })?;
                }
                _ => {
                    let p = probability(value).ok_or_else(|| {
                        error(
                            value_col,
                            format!("{key} must be a probability between 0 and 1, got `{value}`"),
                        )
                    })?;
                    if key == "stale-delete-keeps" {
                        chaos.stale_delete_keeps = p;
                    } else {
                        chaos.redeliver_after_delete = p;
                    }
                }
            }
        }
        Ok(chaos)
    }
}

fn error(column0: usize, message: String) -> ChaosSpecError {
    ChaosSpecError {
        column: column0 + 1,
        message,
    }
}

fn probability(value: &str) -> Option<f64> {
    let p: f64 = value.parse().ok()?;
    (p.is_finite() && (0.0..=1.0).contains(&p)).then_some(p)
}

/// The canonical spec, every key spelled out (recorded in `run_start.emulator_chaos`).
impl fmt::Display for Chaos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "stale-delete-keeps={},redeliver-after-delete={},seed={}",
            self.stale_delete_keeps, self.redeliver_after_delete, self.seed
        )
    }
}

/// The emulator's live chaos: the settings, the seeded dice, and which messages were already
/// redelivered after a delete.
#[derive(Debug)]
pub(crate) struct ChaosDice {
    settings: Chaos,
    rng: Mutex<StdRng>,
    redelivered: Mutex<HashSet<u64>>,
}

impl ChaosDice {
    pub fn new(settings: Chaos) -> Self {
        Self {
            settings,
            rng: Mutex::new(StdRng::seed_from_u64(settings.seed)),
            redelivered: Mutex::new(HashSet::new()),
        }
    }

    /// Whether a stale-handle delete on a standard queue keeps the message.
    pub fn stale_delete_keeps(&self) -> bool {
        self.roll(self.settings.stale_delete_keeps)
    }

    /// Whether a correct delete of message `seq` on a standard queue is turned into a
    /// redelivery. True at most once per message.
    pub fn redeliver_after_delete(&self, seq: u64) -> bool {
        if self.settings.redeliver_after_delete <= 0.0 {
            return false;
        }
        let mut done = self.redelivered.lock().unwrap_or_else(|e| e.into_inner());
        if done.contains(&seq) || !self.roll(self.settings.redeliver_after_delete) {
            return false;
        }
        done.insert(seq);
        true
    }

    /// A draw with probability `p`; never touches the RNG when `p` is 0 or 1, so an off setting
    /// does not shift another setting's outcomes.
    fn roll(&self, p: f64) -> bool {
        if p <= 0.0 {
            return false;
        }
        if p >= 1.0 {
            return true;
        }
        let mut rng = self.rng.lock().unwrap_or_else(|e| e.into_inner());
        rng.random_bool(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_key_in_any_order() {
        let c = Chaos::parse("seed=7, redeliver-after-delete=0.1,stale-delete-keeps=1").unwrap();
        assert_eq!(
            c,
            Chaos {
                stale_delete_keeps: 1.0,
                redeliver_after_delete: 0.1,
                seed: 7
            }
        );
        assert!(!c.is_off());
        assert_eq!(
            c.to_string(),
            "stale-delete-keeps=1,redeliver-after-delete=0.1,seed=7"
        );
        assert_eq!(Chaos::parse(&c.to_string()).unwrap(), c);
    }

    #[test]
    fn default_and_zero_are_off() {
        assert!(Chaos::default().is_off());
        assert!(
            Chaos::parse("stale-delete-keeps=0,seed=3")
                .unwrap()
                .is_off()
        );
    }

    #[test]
    fn unknown_key_is_positioned_with_suggestion() {
        let err = Chaos::parse("seed=1,stale-delete-keep=1").unwrap_err();
        assert_eq!(err.column, 8);
        assert!(
            err.message.contains("did you mean `stale-delete-keeps`?"),
            "{err}"
        );
        let err = Chaos::parse("bogus=1").unwrap_err();
        assert_eq!(err.column, 1);
        assert!(err.message.contains("expected one of"), "{err}");
    }

    #[test]
    fn bad_values_are_positioned() {
        let err = Chaos::parse("stale-delete-keeps=1.5").unwrap_err();
        assert_eq!(err.column, 20);
        assert!(err.message.contains("between 0 and 1"), "{err}");
        for bad in [
            "redeliver-after-delete=-0.1",
            "redeliver-after-delete=NaN",
            "redeliver-after-delete=x",
        ] {
            assert!(Chaos::parse(bad).is_err(), "{bad}");
        }
        let err = Chaos::parse("seed=-1").unwrap_err();
        assert_eq!(err.column, 6);
        assert!(
            Chaos::parse("seed")
                .unwrap_err()
                .message
                .contains("key=value")
        );
        assert!(Chaos::parse("").is_err());
        assert!(Chaos::parse("seed=1,,").is_err());
        assert!(
            Chaos::parse("seed=1,seed=2")
                .unwrap_err()
                .message
                .contains("twice")
        );
    }

    #[test]
    fn seeded_dice_repeat_and_redeliver_once() {
        let settings = Chaos {
            stale_delete_keeps: 0.5,
            redeliver_after_delete: 1.0,
            seed: 42,
        };
        let draws = |d: &ChaosDice| (0..64).map(|_| d.stale_delete_keeps()).collect::<Vec<_>>();
        let a = draws(&ChaosDice::new(settings));
        assert_eq!(a, draws(&ChaosDice::new(settings)));
        assert!(a.contains(&true) && a.contains(&false));
        let dice = ChaosDice::new(settings);
        assert!(dice.redeliver_after_delete(9));
        assert!(!dice.redeliver_after_delete(9));
        assert!(!ChaosDice::new(Chaos::default()).redeliver_after_delete(9));
    }
}
