//! The nemesis (pure): what `--nemesis SPEC` asks, the points of the consumer's history at
//! which it acts (drawn from the audit's seed), and what it did.
//!
//! As Jepsen's nemesis does to a database, it does to the consumer what production does to it
//! now and then, at points the seed chooses, and the checker then reads the whole history:
//! - `kill`: SIGKILL the consumer's process group, then start the same command again. The
//!   points are events the emulator sees synchronously, before it answers them: the N-th
//!   delete (the first kill, and every other one after it) and the N-th delivery (the others).
//!   A kill at a delete lands after the delete took and before the consumer hears of it, so
//!   a consumer that acknowledges before its work (at-most-once) loses that message's work
//!   every time, however fast its handler is; a kill at a delivery leaves the consumer's
//!   leased messages to come back to the consumer started again.
//! - `pause`: SIGSTOP the group at the N-th delivery and SIGCONT it once that delivery's lease
//!   has ended (by [`PAUSE_PAST_LEASE_MS`]), as a long garbage-collection pause or a stalled
//!   host would: whatever the consumer does with that attempt afterwards is after its lease.
//!
//! N is drawn uniformly from 1 to the plan's message count, so every point comes for a consumer
//! that deletes every message. A point fires at the first event of its kind at or past its N
//! while the consumer is up (not killed and waiting to be started again, not paused).

use std::fmt;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

/// How far past the paused attempt's lease end the consumer is continued.
pub(crate) const PAUSE_PAST_LEASE_MS: u64 = 500;

/// The most kills or pauses one audit asks for.
pub(crate) const MOST: u32 = 100;

/// What `--nemesis` asks: how many kills and pauses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Nemesis {
    pub kills: u32,
    pub pauses: u32,
}

/// Kills when `kill` names no count: one at a delete, one at a delivery.
const DEFAULT_KILLS: u32 = 2;
/// Pauses when `pause` names no count.
const DEFAULT_PAUSES: u32 = 1;

const WORDS: [&str; 2] = ["kill", "pause"];

impl Nemesis {
    /// Reads `kill`, `pause`, `kill=N`, `pause=N`, comma-separated (`kill,pause`, `kill=3`).
    pub fn parse(spec: &str) -> Result<Nemesis, String> {
        let mut out = Nemesis::default();
        let mut seen = Vec::new();
        for part in spec.split(',').map(str::trim) {
            if part.is_empty() {
                return Err(format!(
                    "an empty item in `{spec}`: write kill, pause, kill=N or pause=N"
                ));
            }
            let (word, count) = match part.split_once('=') {
                Some((w, n)) => (w.trim(), Some(n.trim())),
                None => (part, None),
            };
            if !WORDS.contains(&word) {
                return Err(format!(
                    "unknown nemesis `{word}`{}: write kill, pause, kill=N or pause=N",
                    sqsprobe_facts::text::suggest::suggest(word, &WORDS)
                ));
            }
            if seen.contains(&word) {
                return Err(format!("`{word}` is named twice in `{spec}`"));
            }
            seen.push(word);
            let n = match count {
                None if word == "kill" => DEFAULT_KILLS,
                None => DEFAULT_PAUSES,
                Some(n) => match n.parse::<u32>() {
                    Ok(n) if (1..=MOST).contains(&n) => n,
                    _ => {
                        return Err(format!(
                            "`{word}={n}`: the count is a whole number from 1 to {MOST}"
                        ));
                    }
                },
            };
            if word == "kill" {
                out.kills = n;
            } else {
                out.pauses = n;
            }
        }
        Ok(out)
    }

    /// The points of an audit of `messages` messages seeded `seed`.
    pub fn draw(&self, seed: u64, messages: u32) -> Vec<Point> {
        let mut rng = StdRng::seed_from_u64(mix(seed));
        let top = messages.max(1);
        let mut points = Vec::new();
        for k in 0..self.kills {
            // Every other kill at a delete, the first among them: the at-most-once window is
            // always tried.
            let on = if k % 2 == 0 { On::Delete } else { On::Delivery };
            points.push(Point {
                act: Strike::Kill,
                on,
                count: rng.random_range(1..=top),
            });
        }
        for _ in 0..self.pauses {
            points.push(Point {
                act: Strike::Pause,
                on: On::Delivery,
                count: rng.random_range(1..=top),
            });
        }
        points
    }
}

impl fmt::Display for Nemesis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.kills > 0 {
            parts.push(format!("kill={}", self.kills));
        }
        if self.pauses > 0 {
            parts.push(format!("pause={}", self.pauses));
        }
        f.write_str(&parts.join(","))
    }
}

/// The seed's own stream for the nemesis, apart from the chaos dice drawn from the same seed.
fn mix(seed: u64) -> u64 {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(seed.to_le_bytes());
    h.update(b"nemesis");
    let d = h.finalize();
    u64::from_le_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
}

/// What the nemesis does at a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strike {
    Kill,
    Pause,
}

/// The kind of event a point counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum On {
    /// A delete (single or a batch entry), as the emulator is about to answer it.
    Delete,
    /// A delivery (one message of a receive), as the emulator is about to answer it.
    Delivery,
}

impl On {
    pub fn as_str(self) -> &'static str {
        match self {
            On::Delete => "delete",
            On::Delivery => "delivery",
        }
    }
}

/// One point: strike at the `count`-th event `on` (or the first after it while the consumer
/// is up).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Point {
    pub act: Strike,
    pub on: On,
    pub count: u32,
}

/// What the nemesis did, in the history's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ActKind {
    /// SIGKILL to the consumer's process group.
    Kill,
    /// The same command started again after a kill.
    Restart,
    /// SIGSTOP to the group.
    Pause,
    /// SIGCONT to the group.
    Resume,
}

impl ActKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ActKind::Kill => "kill",
            ActKind::Restart => "restart",
            ActKind::Pause => "pause",
            ActKind::Resume => "resume",
        }
    }
}

/// One act of the nemesis: a `nemesis` evidence row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Act {
    pub act: ActKind,
    /// On the emulator's clock (epoch milliseconds), as deliveries and acknowledgements are.
    pub at_ms: u64,
    /// For a kill or a pause: the event that set it off and its count.
    pub on: Option<On>,
    pub count: Option<u32>,
    /// The message of that event.
    pub message_id: Option<String>,
    pub business_key: Option<String>,
    /// For a restart: which start of the consumer it is (2 for the first restart).
    pub start: Option<u32>,
}

/// The nemesis's part of an audit: what was asked, the points drawn, what was done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Record {
    /// As asked, written back (`kill=2,pause=1`).
    pub spec: String,
    pub points: Vec<Point>,
    pub acts: Vec<Act>,
}

impl Record {
    /// The strikes done (kills and pauses).
    pub(crate) fn strikes(&self) -> usize {
        self.acts
            .iter()
            .filter(|a| matches!(a.act, ActKind::Kill | ActKind::Pause))
            .count()
    }

    /// One line for the reports: `nemesis kill=2: killed at delete 3 and at delivery 5,
    /// restarted 2 times`.
    pub(crate) fn line(&self) -> String {
        let at = |kind: ActKind| -> Vec<String> {
            self.acts
                .iter()
                .filter(|a| a.act == kind)
                .map(|a| match (a.on, a.count) {
                    (Some(on), Some(n)) => format!("at {} {n}", on.as_str()),
                    _ => "at an unrecorded point".to_string(),
                })
                .collect()
        };
        let mut said = Vec::new();
        let kills = at(ActKind::Kill);
        if !kills.is_empty() {
            said.push(format!("killed {}", join(&kills)));
        }
        let restarts = self
            .acts
            .iter()
            .filter(|a| a.act == ActKind::Restart)
            .count();
        if restarts > 0 {
            said.push(format!(
                "started again {restarts} time{}",
                if restarts == 1 { "" } else { "s" }
            ));
        }
        let pauses = at(ActKind::Pause);
        if !pauses.is_empty() {
            said.push(format!("paused {} past the lease", join(&pauses)));
        }
        if said.is_empty() {
            said.push("never acted: no point of its came while the consumer was up".to_string());
        }
        let planned = self.points.len();
        let struck = self.strikes();
        if struck < planned && struck > 0 {
            said.push(format!(
                "{} of {planned} points never came",
                planned - struck
            ));
        }
        format!("nemesis {}: {}", self.spec, said.join("; "))
    }
}

fn join(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_reads_words_counts_and_refuses_the_rest() {
        assert_eq!(
            Nemesis::parse("kill").unwrap(),
            Nemesis {
                kills: 2,
                pauses: 0
            }
        );
        assert_eq!(
            Nemesis::parse("kill=3, pause").unwrap(),
            Nemesis {
                kills: 3,
                pauses: 1
            }
        );
        assert_eq!(Nemesis::parse("pause=2").unwrap().to_string(), "pause=2");
        let e = Nemesis::parse("kil").unwrap_err();
        assert!(e.contains("did you mean `kill`"), "{e}");
        assert!(Nemesis::parse("kill=0").is_err());
        assert!(Nemesis::parse("kill=x").is_err());
        assert!(Nemesis::parse("kill,kill").is_err());
        assert!(Nemesis::parse("kill,").is_err());
        assert!(Nemesis::parse("").is_err());
    }

    #[test]
    fn the_points_follow_the_seed_and_the_first_kill_is_at_a_delete() {
        let n = Nemesis {
            kills: 3,
            pauses: 2,
        };
        assert_eq!(n.draw(7, 20), n.draw(7, 20));
        let across: Vec<Vec<Point>> = (0..20).map(|s| n.draw(s, 20)).collect();
        assert!(across.windows(2).any(|w| w[0] != w[1]), "the seed matters");
        for points in &across {
            assert_eq!(points.len(), 5);
            assert_eq!((points[0].act, points[0].on), (Strike::Kill, On::Delete));
            assert_eq!(points[1].on, On::Delivery);
            assert!(points.iter().all(|p| (1..=20).contains(&p.count)));
            assert!(
                points[3..]
                    .iter()
                    .all(|p| p.act == Strike::Pause && p.on == On::Delivery)
            );
        }
        // One message: every point at the first event.
        assert!(n.draw(3, 1).iter().all(|p| p.count == 1));
    }

    #[test]
    fn the_line_says_what_was_done_and_what_never_came() {
        let act = |act, on, count| Act {
            act,
            at_ms: 0,
            on,
            count,
            message_id: None,
            business_key: None,
            start: None,
        };
        let record = Record {
            spec: "kill=2".into(),
            points: Nemesis {
                kills: 2,
                pauses: 0,
            }
            .draw(1, 4),
            acts: vec![
                act(ActKind::Kill, Some(On::Delete), Some(3)),
                act(ActKind::Restart, None, None),
            ],
        };
        assert_eq!(
            record.line(),
            "nemesis kill=2: killed at delete 3; started again 1 time; 1 of 2 points never came"
        );
        let idle = Record {
            acts: Vec::new(),
            ..record
        };
        assert!(idle.line().contains("never acted"), "{}", idle.line());
    }
}
