//! `sqsprobe run --dry-run`: what a run would do, printed before anything is created.
//!
//! A pure function of the selected cases: for each, the queues the runner and its steps
//! create (each deleted at teardown), how long it waits (its sleeps, receive waits and
//! observe windows) and its budget (the deadline the runner gives it), the SQS requests it
//! makes and what they cost at AWS list prices ([`sqsprobe_facts::sqs::pricing`]), and whether it is
//! contested (tagged `contested`: targets answer it differently), a team policy (tagged
//! `team-policy`: a bound AWS does not publish), or slow. Nothing here needs a target,
//! credentials or the network, so a dry run against `--target aws` is free and safe.

use std::fmt::Write as _;

use sqsprobe_core::conformance::matrix::CONTESTED_TAG;
use sqsprobe_core::suite::model::{Action, Case, QueueKind, TEAM_POLICY_TAG};
use sqsprobe_core::suite::{case_budget, case_requests, case_waits};
use sqsprobe_facts::duration;
use sqsprobe_facts::sqs::pricing;

/// One case's line of the dry run.
#[derive(Debug, Clone, PartialEq)]
struct Line {
    id: String,
    queues: usize,
    fifo_queues: usize,
    trials: u32,
    waits: std::time::Duration,
    budget: std::time::Duration,
    standard: u64,
    fifo: u64,
    notes: Vec<&'static str>,
}

fn line(case: &Case) -> Line {
    let defs: Vec<_> = case
        .queues
        .iter()
        .filter(|q| q.create)
        .chain(case.steps.iter().filter_map(|s| match &s.action {
            Action::CreateQueue(def) => Some(def),
            _ => None,
        }))
        .collect();
    let trials = case.trials.max(1);
    let requests = case_requests(case);
    let tagged = |t: &str| case.tags.iter().any(|x| x == t);
    let mut notes = Vec::new();
    if tagged(CONTESTED_TAG) {
        notes.push("contested");
    }
    if tagged(TEAM_POLICY_TAG) {
        notes.push("team policy");
    }
    if tagged("slow") {
        notes.push("slow");
    }
    Line {
        id: case.id.clone(),
        queues: defs.len() * trials as usize,
        fifo_queues: defs.iter().filter(|d| d.kind == QueueKind::Fifo).count() * trials as usize,
        trials,
        waits: case_waits(case),
        budget: case_budget(case),
        standard: requests.standard * u64::from(trials),
        fifo: requests.fifo * u64::from(trials),
        notes,
    }
}

/// The dry run of `cases` against `target` (a description such as `aws (us-east-1)`).
pub fn render(target: &str, region: &str, cases: &[&Case]) -> String {
    let lines: Vec<Line> = cases.iter().map(|c| line(c)).collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "dry run against {target}: {} case(s); nothing has been created or sent",
        lines.len()
    );
    let width = lines.iter().map(|l| l.id.len()).max().unwrap_or(4).max(4);
    let _ = writeln!(
        out,
        "{:<width$}  {:>12}  {:>7}  {:>8}  {:>9}  {:>10}  notes",
        "case", "queues", "waits", "budget", "requests", "cost"
    );
    for l in &lines {
        let queues = match (l.fifo_queues, l.trials) {
            (0, 1) => format!("{}", l.queues),
            (f, 1) => format!("{} ({f} FIFO)", l.queues),
            (0, t) => format!("{} ({t} trials)", l.queues),
            (f, t) => format!("{} ({f} FIFO, {t}×)", l.queues),
        };
        let _ = writeln!(
            out,
            "{:<width$}  {:>12}  {:>7}  {:>8}  {:>9}  {:>10}  {}",
            l.id,
            queues,
            duration::format(l.waits),
            duration::format(l.budget),
            l.standard + l.fifo,
            format!("${:.6}", pricing::cost_usd(l.standard, l.fifo)),
            l.notes.join(", ")
        );
    }
    let queues: usize = lines.iter().map(|l| l.queues).sum();
    let standard: u64 = lines.iter().map(|l| l.standard).sum();
    let fifo: u64 = lines.iter().map(|l| l.fifo).sum();
    let longest = lines.iter().map(|l| l.budget).max().unwrap_or_default();
    let _ = writeln!(
        out,
        "total: {queues} queue(s) created and deleted again; cases run concurrently, the longest \
         may take up to {}",
        duration::format(longest)
    );
    let _ = writeln!(out, "about {}", pricing::cost_line(standard, fifo, region));
    for (note, what) in [
        (
            "contested",
            "targets answer these differently (docs/conformance-matrix.md, \"Contested behaviours\")",
        ),
        (
            "team policy",
            "a bound AWS does not publish: a failure breaches the team's policy, not AWS's behaviour",
        ),
    ] {
        let ids: Vec<&str> = lines
            .iter()
            .filter(|l| l.notes.contains(&note))
            .map(|l| l.id.as_str())
            .collect();
        if !ids.is_empty() {
            let _ = writeln!(out, "{note}: {} — {what}", ids.join(", "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_core::suite::{Limits, parse_suite};

    fn cases(src: &str) -> Vec<Case> {
        parse_suite("suites/x.yaml", src, &Limits::default())
            .unwrap()
            .cases
    }

    #[test]
    fn counts_queues_waits_requests_and_notes() {
        let all = cases(
            "cases:
  - id: plain
    behaviour: b
    source: s
    queues:
      q: {}
      f: {type: fifo, content_based_dedup: true}
    steps:
      - send: {queue: f, body: x, group: g}
      - sleep: 2s
      - observe: {queue: q, window: 3s, max_receives: 5, messages: [m1]}
  - id: disputed
    tags: [contested, team-policy, slow]
    behaviour: b
    source: s
    trials: 3
    queues:
      q: {}
    steps:
      - send: {queue: q, body: x}
",
        );
        let refs: Vec<&Case> = all.iter().collect();
        let plain = line(refs[0]);
        assert_eq!((plain.queues, plain.fifo_queues), (2, 1));
        assert_eq!(plain.waits, std::time::Duration::from_secs(5));
        // 2 creates + 2 deletes, 1 send (FIFO rate), 5 receives (FIFO rate: the case has one).
        assert_eq!((plain.standard, plain.fifo), (4, 6));
        let disputed = line(refs[1]);
        assert_eq!((disputed.queues, disputed.standard), (3, 9));
        assert_eq!(disputed.notes, vec!["contested", "team policy", "slow"]);
        let text = render("aws (us-east-1)", "us-east-1", &refs);
        assert!(
            text.starts_with(
                "dry run against aws (us-east-1): 2 case(s); nothing has been created"
            )
        );
        assert!(text.contains("\ncontested: disputed — "), "{text}");
        assert!(text.contains("\nteam policy: disputed — "), "{text}");
        assert!(text.contains("total: 5 queue(s) created"), "{text}");
    }
}
