//! Which cases run, in which order: partitions for CI jobs, and longest first.
//!
//! The run's wall time is at least its longest case; starting the longest cases first lets the
//! short ones fill the gaps instead of trailing after them (nextest does the same with slow
//! tests). Partitions deal the cases out the same way, so N CI jobs get similar shares.

use sqsprobe_core::suite::case_budget;
use sqsprobe_core::suite::model::Case;

/// A case to run and the suite file it came from.
#[derive(Debug, Clone)]
pub(crate) struct PlannedCase {
    pub suite: String,
    pub case: Case,
}

/// Indices of `plan` in the order to start them: the longest budget first; equal budgets keep
/// their order in the plan.
pub(crate) fn longest_first(plan: &[PlannedCase]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..plan.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(case_budget(&plan[i].case)));
    order
}

/// Partition `k` of `n` (1-based): the cases sorted longest first (then by suite and id, so the
/// split does not depend on the order of the command line), dealt round-robin; the cases
/// kept stay in plan order. The same selection always splits the same way, and the `n`
/// partitions together hold every case exactly once.
pub(crate) fn partition(plan: Vec<PlannedCase>, k: usize, n: usize) -> Vec<PlannedCase> {
    let mut keyed: Vec<(usize, &PlannedCase)> = plan.iter().enumerate().collect();
    keyed.sort_by(|(_, a), (_, b)| {
        case_budget(&b.case)
            .cmp(&case_budget(&a.case))
            .then_with(|| a.suite.cmp(&b.suite))
            .then_with(|| a.case.id.cmp(&b.case.id))
    });
    let mut keep: Vec<usize> = keyed
        .iter()
        .enumerate()
        .filter(|(dealt, _)| dealt % n == k - 1)
        .map(|(_, (at, _))| *at)
        .collect();
    keep.sort_unstable();
    let mut kept = Vec::with_capacity(keep.len());
    for (at, case) in plan.into_iter().enumerate() {
        if keep.binary_search(&at).is_ok() {
            kept.push(case);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_core::suite::model::{
        Action, Case, CaseExpect, Pos, RetryPolicy, Step, StepExpect,
    };
    use std::time::Duration;

    fn planned(id: &str, sleep_s: u64) -> PlannedCase {
        PlannedCase {
            suite: "s.yaml".into(),
            case: Case {
                id: id.into(),
                pos: Pos::default(),
                title: None,
                tags: Vec::new(),
                behaviour: String::new(),
                sources: Vec::new(),
                retries: RetryPolicy::None,
                protocols: Vec::new(),
                queues: Vec::new(),
                steps: vec![Step {
                    index: 0,
                    pos: Pos::default(),
                    action: Action::Sleep(Duration::from_secs(sleep_s)),
                    expect: StepExpect::default(),
                    fault: None,
                    wire: None,
                }],
                expect: CaseExpect::default(),
                trials: 1,
                faults: Vec::new(),
                emulator_chaos: None,
                area: None,
                aspect: sqsprobe_core::suite::area::Aspect::Semantics,
            },
        }
    }

    #[test]
    fn the_longest_cases_start_first_and_ties_keep_their_order() {
        let plan = vec![
            planned("a", 1),
            planned("b", 9),
            planned("c", 1),
            planned("d", 5),
        ];
        assert_eq!(longest_first(&plan), vec![1, 3, 0, 2]);
    }

    #[test]
    fn partitions_are_disjoint_complete_and_balanced() {
        let plan: Vec<PlannedCase> = (0..10)
            .map(|i| planned(&format!("c{i}"), (i % 4) as u64))
            .collect();
        let mut seen: Vec<String> = Vec::new();
        for k in 1..=3 {
            let part = partition(plan.clone(), k, 3);
            assert!(
                (3..=4).contains(&part.len()),
                "partition {k}: {}",
                part.len()
            );
            // Plan order is kept within a partition.
            let ids: Vec<&str> = part.iter().map(|p| p.case.id.as_str()).collect();
            let mut sorted = ids.clone();
            sorted.sort_by_key(|id| id[1..].parse::<u32>().unwrap());
            assert_eq!(ids, sorted);
            seen.extend(ids.iter().map(|s| s.to_string()));
        }
        seen.sort();
        let mut all: Vec<String> = plan.iter().map(|p| p.case.id.clone()).collect();
        all.sort();
        assert_eq!(seen, all);
        // The split does not depend on the order the cases were given in.
        let mut reversed = plan.clone();
        reversed.reverse();
        let a: Vec<String> = partition(plan, 2, 3)
            .into_iter()
            .map(|p| p.case.id)
            .collect();
        let mut b: Vec<String> = partition(reversed, 2, 3)
            .into_iter()
            .map(|p| p.case.id)
            .collect();
        b.reverse();
        assert_eq!(a, b);
    }
}
