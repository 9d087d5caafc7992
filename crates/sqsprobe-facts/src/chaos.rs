//! The grammar of the embedded emulator's opt-in chaos: `stale-delete-keeps=1,seed=7` as given
//! to `--chaos`, to a case's `emulator_chaos:`, or in a queue's [`QUEUE_TAG`] tag, parsed into
//! [`Chaos`] with positioned errors and printed back in canonical form. What each setting does
//! (and the AWS text that allows it) is the emulator's, in `emulator/support/chaos.rs`; the
//! grammar lives here, below both the suite parser and the emulator, which both read it.

use std::fmt;
use std::time::Duration;

/// The tag whose value sets one queue's chaos (`redeliver-after-delete=1,seed=3`).
pub const QUEUE_TAG: &str = "sqsprobe:emulator-chaos";

/// The longest server `latency` a spec may ask for.
const MAX_LATENCY: Duration = Duration::from_secs(30);

/// Chaos settings. [`Default`] turns every behaviour off.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Chaos {
    /// Probability, in 0..=1, that DeleteMessage with a handle from an earlier receive, while a
    /// newer receive holds the message, answers 200 but keeps the message.
    pub stale_delete_keeps: f64,
    /// Probability, in 0..=1, that a correct delete answers 200 but the message becomes visible
    /// again after its visibility timeout, as a duplicate (at most once per message).
    pub redeliver_after_delete: f64,
    /// Probability, in 0..=1, that a short poll samples fewer messages than it could take.
    pub short_poll_miss: f64,
    /// Probability, in 0..=1, that a response of several messages is out of send order.
    pub reorder: f64,
    /// Probability, in 0..=1, per message another receive holds, that a receive also gets a copy
    /// (at most once per message).
    pub duplicate: f64,
    /// Server-wide: how long every request waits before it is handled.
    pub latency: Duration,
    /// Server-wide: probability, in 0..=1, that a request is answered `RequestThrottled`.
    pub throttle: f64,
    /// RNG seed (`seed=N`): the same seed and the same calls give the same outcomes. `None`
    /// when the spec names none: `sqsprobe run` then draws from the run's seed and records the
    /// one it used; `serve` and a queue's tag draw from 0.
    pub seed: Option<u64>,
}

/// What a setting's value is.
#[derive(Debug, Clone, Copy)]
enum Value {
    Probability(fn(&mut Chaos) -> &mut f64),
    Delay,
    Seed,
}

/// One key of the grammar.
struct Setting {
    key: &'static str,
    value: Value,
    /// Applies to the whole server, so a queue's tag may not set it.
    server_wide: bool,
}

/// The keys a chaos spec accepts, in canonical order.
const SETTINGS: &[Setting] = &[
    Setting {
        key: "stale-delete-keeps",
        value: Value::Probability(|c| &mut c.stale_delete_keeps),
        server_wide: false,
    },
    Setting {
        key: "redeliver-after-delete",
        value: Value::Probability(|c| &mut c.redeliver_after_delete),
        server_wide: false,
    },
    Setting {
        key: "short-poll-miss",
        value: Value::Probability(|c| &mut c.short_poll_miss),
        server_wide: false,
    },
    Setting {
        key: "reorder",
        value: Value::Probability(|c| &mut c.reorder),
        server_wide: false,
    },
    Setting {
        key: "duplicate",
        value: Value::Probability(|c| &mut c.duplicate),
        server_wide: false,
    },
    Setting {
        key: "latency",
        value: Value::Delay,
        server_wide: true,
    },
    Setting {
        key: "throttle",
        value: Value::Probability(|c| &mut c.throttle),
        server_wide: true,
    },
    Setting {
        key: "seed",
        value: Value::Seed,
        server_wide: false,
    },
];

/// A chaos spec that does not parse: where (1-based column in the spec) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--chaos column {column}: {message}")]
pub struct ChaosSpecError {
    /// 1-based character column of the offending key or value.
    pub column: usize,
    /// What is wrong, with a suggestion when there is one.
    pub message: String,
}

fn keys() -> Vec<&'static str> {
    SETTINGS.iter().map(|s| s.key).collect()
}

impl Chaos {
    /// Whether any behaviour can fire.
    pub fn is_off(&self) -> bool {
        self.stale_delete_keeps <= 0.0
            && self.redeliver_after_delete <= 0.0
            && self.short_poll_miss <= 0.0
            && self.reorder <= 0.0
            && self.duplicate <= 0.0
            && self.latency.is_zero()
            && self.throttle <= 0.0
    }

    /// Parses `key=value,key=value` (e.g. `stale-delete-keeps=1,latency=200ms,seed=7`).
    /// Keys may come in any order, each at most once; unset ones keep their default.
    pub fn parse(spec: &str) -> Result<Self, ChaosSpecError> {
        Self::parse_with(spec, false)
    }

    /// Parses one queue's [`QUEUE_TAG`] value: the same grammar, without the server-wide
    /// settings (`latency`, `throttle`).
    pub fn parse_queue(spec: &str) -> Result<Self, ChaosSpecError> {
        Self::parse_with(spec, true)
    }

    fn parse_with(spec: &str, queue: bool) -> Result<Self, ChaosSpecError> {
        let mut chaos = Chaos::default();
        let mut seen: Vec<&str> = Vec::new();
        let mut offset = 0;
        if spec.trim().is_empty() {
            return Err(error(
                0,
                format!(
                    "empty spec; expected key=value pairs ({})",
                    keys().join(", ")
                ),
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
            let Some(setting) = SETTINGS.iter().find(|s| s.key == key) else {
                return Err(error(
                    start + lead,
                    match crate::text::suggest::closest(key, keys()) {
                        Some(c) => format!("unknown chaos setting `{key}`; did you mean `{c}`?"),
                        None => format!(
                            "unknown chaos setting `{key}`; expected one of: {}",
                            keys().join(", ")
                        ),
                    },
                ));
            };
            if seen.contains(&key) {
                return Err(error(start + lead, format!("`{key}` given twice")));
            }
            seen.push(key);
            if queue && setting.server_wide {
                return Err(error(
                    start + lead,
                    format!(
                        "`{key}` applies to the whole server, not to one queue; set it with --chaos"
                    ),
                ));
            }
            match setting.value {
                Value::Seed => {
                    chaos.seed = Some(value.parse().map_err(|_| {
                        error(
                            value_col,
                            format!("seed must be a whole number ≥ 0, got `{value}`"),
                        )
                    })?);
                }
                Value::Delay => {
                    let d = crate::duration::parse(value)
                        .map_err(|e| error(value_col, format!("{key}: {e}")))?;
                    if d > MAX_LATENCY {
                        return Err(error(
                            value_col,
                            format!(
                                "{key} must be at most {}, got `{value}`",
                                crate::duration::format(MAX_LATENCY)
                            ),
                        ));
                    }
                    chaos.latency = d;
                }
                Value::Probability(field) => {
                    *field(&mut chaos) = probability(value).ok_or_else(|| {
                        error(
                            value_col,
                            format!("{key} must be a probability between 0 and 1, got `{value}`"),
                        )
                    })?;
                }
            }
        }
        Ok(chaos)
    }
}

/// The settings of a recorded spec without its seed (`reorder=1,seed=7` → `reorder=1`), which
/// say what a run measured; a spec that does not parse is returned as it is.
pub fn settings_of(spec: &str) -> String {
    match Chaos::parse(spec) {
        Ok(c) => Chaos { seed: None, ..c }.to_string(),
        Err(_) => spec.to_string(),
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

/// The canonical spec: each setting that is on, in canonical order, then the seed when the spec
/// has one (`run_start.emulator_chaos` always does: the runner records the seed it used). It
/// parses back to the same settings.
impl fmt::Display for Chaos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut copy = *self;
        let mut parts = Vec::new();
        for s in SETTINGS {
            match s.value {
                Value::Probability(field) => {
                    let p = *field(&mut copy);
                    if p > 0.0 {
                        parts.push(format!("{}={p}", s.key));
                    }
                }
                Value::Delay if !self.latency.is_zero() => {
                    parts.push(format!(
                        "{}={}",
                        s.key,
                        crate::duration::format(self.latency)
                    ));
                }
                Value::Seed => {
                    if let Some(seed) = self.seed {
                        parts.push(format!("{}={seed}", s.key));
                    }
                }
                Value::Delay => {}
            }
        }
        f.write_str(&parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_key_in_any_order() {
        let c = Chaos::parse(
            "seed=7, redeliver-after-delete=0.1,stale-delete-keeps=1,throttle=0.25,latency=150ms,\
             duplicate=0.5,reorder=1,short-poll-miss=0.3",
        )
        .unwrap();
        assert_eq!(
            c,
            Chaos {
                stale_delete_keeps: 1.0,
                redeliver_after_delete: 0.1,
                short_poll_miss: 0.3,
                reorder: 1.0,
                duplicate: 0.5,
                latency: Duration::from_millis(150),
                throttle: 0.25,
                seed: Some(7)
            }
        );
        assert!(!c.is_off());
        assert_eq!(
            c.to_string(),
            "stale-delete-keeps=1,redeliver-after-delete=0.1,short-poll-miss=0.3,reorder=1,\
             duplicate=0.5,latency=150ms,throttle=0.25,seed=7"
        );
        assert_eq!(Chaos::parse(&c.to_string()).unwrap(), c);
        // The canonical form names only what is on, and the seed only when the spec has one.
        let one = Chaos::parse("stale-delete-keeps=1").unwrap();
        assert_eq!(one.seed, None);
        assert_eq!(one.to_string(), "stale-delete-keeps=1");
        assert_eq!(Chaos::parse(&one.to_string()).unwrap(), one);
        let zero = Chaos::parse("seed=0,stale-delete-keeps=1").unwrap();
        assert_eq!(zero.to_string(), "stale-delete-keeps=1,seed=0");
        assert_ne!(zero, one, "seed=0 is a seed the spec names");
    }

    #[test]
    fn settings_of_a_spec_leave_its_seed_out() {
        assert_eq!(settings_of("reorder=1,seed=7"), "reorder=1");
        assert_eq!(settings_of("seed=7,reorder=1"), "reorder=1");
        assert_eq!(settings_of("not a spec"), "not a spec");
    }

    #[test]
    fn default_and_zero_are_off() {
        assert!(Chaos::default().is_off());
        assert!(
            Chaos::parse("stale-delete-keeps=0,latency=0ms,throttle=0,seed=3")
                .unwrap()
                .is_off()
        );
        for on in ["latency=1ms", "throttle=0.1", "duplicate=1", "reorder=1"] {
            assert!(!Chaos::parse(on).unwrap().is_off(), "{on}");
        }
    }

    #[test]
    fn unknown_key_is_positioned_with_suggestion() {
        let err = Chaos::parse("seed=1,stale-delete-keep=1").unwrap_err();
        assert_eq!(err.column, 8);
        assert!(
            err.message.contains("did you mean `stale-delete-keeps`?"),
            "{err}"
        );
        let err = Chaos::parse("seed=1,duplicat=0.5").unwrap_err();
        assert!(err.message.contains("did you mean `duplicate`?"), "{err}");
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
            "short-poll-miss=2",
            "throttle=-1",
        ] {
            assert!(Chaos::parse(bad).is_err(), "{bad}");
        }
        let err = Chaos::parse("seed=-1").unwrap_err();
        assert_eq!(err.column, 6);
        let err = Chaos::parse("reorder=1,latency=2").unwrap_err();
        assert_eq!(err.column, 19);
        assert!(err.message.contains("no unit"), "{err}");
        let err = Chaos::parse("latency=31s").unwrap_err();
        assert!(err.message.contains("at most 30s"), "{err}");
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
}
