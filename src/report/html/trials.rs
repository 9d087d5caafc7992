//! A multi-trial case: its tally, a strip of per-trial outcomes, and every trial's own
//! timeline one click away.
//!
//! - The tally: every started trial counted once (its class, or `inconclusive` / `error`
//!   when it has none), and per class `k/N` with its 95% interval over all N trials, the
//!   unknown ones counted both ways (`case_end.trials`), drawn as a bar on a 0–100% scale with
//!   the range the rate is known to lie in and, for a class the case bounds (`rate:`, recorded
//!   as `trials.bounds`), the allowed zone and the bound's edges. The bar is coloured by what
//!   the judge makes of the interval ([`sqsprobe_core::classify::rate::judge`], the words of the
//!   case's own finding): inside (holds), outside (violated), or straddling it (too few
//!   trials, with how many would settle it and which way).
//! - The strip: one square per trial in trial order, coloured by its class and outlined by its
//!   verdict, each a link to that trial.
//! - Each trial (`trial_end` and the calls and steps tagged with it) as a `<details>`: its
//!   verdict, class and reason, findings, timeline and calls table, drawn exactly as a case.
//!
//! A trial that did not finish (the run stopped) has no `trial_end`: it is listed as such,
//! with whatever calls it made.

use super::parts::{case_anchor, findings, state_class};
use super::{calls, timeline};
use sqsprobe_core::classify::rate::{Bound, RateCheck, Sample, judge, percent};
use sqsprobe_core::classify::trials::sample_of;
use sqsprobe_core::evidence::facts::ClassName;
use sqsprobe_core::evidence::format::{RateBound, Trials, Verdict};
use sqsprobe_core::evidence::view::{CaseState, CaseView};
use sqsprobe_facts::text::escape::{html_attr as attr, html_text as esc};
use std::fmt::Write;

const BAR_W: f64 = 300.0;
const BAR_H: f64 = 18.0;

/// How many trials the case ran, or `None` for a single-trial case.
pub(crate) fn count(case: &CaseView) -> Option<u32> {
    let planned = case.start.and_then(|s| s.trials);
    let pooled = case.tally().map(|t| t.n);
    let seen = case.trials.iter().filter_map(|e| e.trial).max();
    planned.or(pooled).or(seen).filter(|&n| n > 1)
}

/// The fragment id of a trial's section. `~` never follows `case-` unescaped in a case
/// anchor, so no case id can produce it.
pub(crate) fn trial_anchor(case: &str, trial: u32) -> String {
    format!("{}~trial-{trial}", case_anchor(case))
}

/// Writes everything about the trials of a case that ran `n` of them.
pub(crate) fn render(out: &mut String, case: &CaseView, n: u32) {
    out.push_str("<section class=\"trials\">\n");
    if let Some(t) = case.tally() {
        tally(out, t);
    } else {
        let _ = writeln!(
            out,
            "<p class=\"banner\">{n} trials planned, no tally: the case did not finish.</p>"
        );
    }
    strip(out, case, n);
    for trial in 1..=n {
        trial_section(out, case, trial);
    }
    out.push_str("</section>\n");
}

/// What a bound makes of an interval.
struct Judged {
    class: &'static str,
    words: String,
}

/// The judge's own verdict and words for a bounded class (the same as the case's finding).
fn judge_bound(class: &str, s: Sample, b: &RateBound) -> Judged {
    let bound = Bound {
        at_least: b.at_least,
        at_most: b.at_most,
    };
    let (result, words) = judge(class, s, bound);
    let class = match result {
        RateCheck::Holds => "holds",
        RateCheck::Violated => "violated",
        RateCheck::TooFewTrials { .. } => "straddles",
    };
    Judged { class, words }
}

/// The tally table: one row per class seen or bounded, and one per kind of unknown trial.
fn tally(out: &mut String, t: &Trials) {
    let _ = writeln!(
        out,
        "<table class=\"trials\">\n<caption>{} trials, {} with a class, {} unknown: each \
         class's rate over all {} trials with its 95% interval, the unknown trials counted both \
         ways</caption>\n\
         <tr><th>class</th><th>trials</th><th>95% interval</th>\
         <th>0% <span class=\"scale-note\">rate, over every started trial</span> 100%</th>\
         <th>expectation</th></tr>",
        t.n, t.conclusive, t.unknown, t.n
    );
    let mut classes: Vec<&String> = t.counts.keys().chain(t.bounds.keys()).collect();
    classes.sort();
    classes.dedup();
    for class in classes {
        let k = t.counts.get(class).copied().unwrap_or(0);
        let interval = t.intervals.get(class).copied();
        let text = match interval {
            Some([lo, hi]) => format!("{} – {}", percent(lo), percent(hi)),
            None => "unknown: counted both ways in each class".to_string(),
        };
        let sample = sample_of(t, class);
        let judged = t
            .bounds
            .get(class)
            .map(|b| (b, judge_bound(class, sample, b)));
        let _ = write!(
            out,
            "<tr data-kind=\"rate\" data-class=\"{}\"><td><code>{}</code></td><td class=\"num\">{k}/{}</td><td>{}</td><td>",
            attr(class),
            esc(class),
            t.n,
            esc(&text)
        );
        if let Some([lo, hi]) = interval {
            interval_bar(out, class, sample, [lo, hi], judged.as_ref());
        }
        out.push_str("</td><td>");
        if let Some((_, j)) = &judged {
            let _ = write!(
                out,
                "<span class=\"bound-word {}\">{}</span>",
                j.class,
                esc(&j.words)
            );
        }
        out.push_str("</td></tr>\n");
    }
    out.push_str("</table>\n");
}

fn interval_bar(
    out: &mut String,
    class: &str,
    s: Sample,
    [lo, hi]: [f64; 2],
    judged: Option<&(&RateBound, Judged)>,
) {
    let x = |f: f64| f.clamp(0.0, 1.0) * BAR_W;
    let state = judged.map_or("unbounded", |(_, j)| j.class);
    let _ = write!(
        out,
        "<svg class=\"interval {state}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{BAR_W}\" height=\"{BAR_H}\" \
         viewBox=\"0 0 {BAR_W} {BAR_H}\" role=\"img\" aria-label=\"{}: 95% interval {} to {}\">\
         <rect class=\"scale\" x=\"0\" y=\"8\" width=\"{BAR_W}\" height=\"2\"/>",
        attr(class),
        percent(lo),
        percent(hi)
    );
    if let Some((b, j)) = judged {
        let (from, to) = (b.at_least.unwrap_or(0.0), b.at_most.unwrap_or(1.0));
        let _ = write!(
            out,
            "<g data-kind=\"bound\"><title>allowed: {}</title>\
             <rect class=\"allowed\" x=\"{:.1}\" y=\"0\" width=\"{:.1}\" height=\"{BAR_H}\"/>",
            esc(&j.words),
            x(from),
            (x(to) - x(from)).max(1.0)
        );
        for edge in [b.at_least, b.at_most].into_iter().flatten() {
            let _ = write!(
                out,
                "<rect class=\"edge\" x=\"{:.1}\" y=\"0\" width=\"2\" height=\"{BAR_H}\"/>",
                (x(edge) - 1.0).clamp(0.0, BAR_W - 2.0)
            );
        }
        out.push_str("</g>");
    }
    let _ = write!(
        out,
        "<g data-kind=\"interval\"><title>{}: {} of {} trials ({} unknown), 95% interval [{}, {}]</title>\
         <rect class=\"range\" x=\"{:.1}\" y=\"4\" width=\"{:.1}\" height=\"10\"/>",
        esc(class),
        s.k,
        s.n,
        s.unknown,
        percent(lo),
        percent(hi),
        x(lo),
        (x(hi) - x(lo)).max(2.0)
    );
    // The range the rate is known to lie in, k/n to (k + unknown)/n: a tick when no trial is
    // unknown.
    if s.n > 0 {
        let (from, to) = (
            f64::from(s.k) / f64::from(s.n),
            f64::from(s.k + s.unknown) / f64::from(s.n),
        );
        let _ = write!(
            out,
            "<rect class=\"rate\" x=\"{:.1}\" y=\"2\" width=\"{:.1}\" height=\"14\"/>",
            (x(from) - 1.0).clamp(0.0, BAR_W - 2.0),
            (x(to) - x(from)).max(2.0)
        );
    }
    out.push_str("</g></svg>");
}

/// One square per trial: its class as the colour, its verdict as the outline.
fn strip(out: &mut String, case: &CaseView, n: u32) {
    out.push_str("<p class=\"trial-strip\"><span class=\"strip-name\">per trial</span>");
    for trial in 1..=n {
        let view = case.trial(trial);
        let pooled = case
            .tally()
            .and_then(|t| t.per_trial.iter().find(|p| p.trial == trial));
        let verdict = pooled.map(|p| p.verdict).or(view.end.map(|e| e.verdict));
        let class = pooled
            .and_then(|p| p.class)
            .or_else(|| view.end.and_then(|e| e.classification));
        let colour = class.map_or("none", ClassName::as_str);
        let verdict_class = match verdict {
            Some(v) => state_class(CaseState::Finished(v)),
            None => "did_not_finish",
        };
        let said = format!(
            "trial {trial}: {}, {}",
            verdict.map_or("did not finish", Verdict::as_str),
            class.map_or("no observation", ClassName::as_str)
        );
        let _ = write!(
            out,
            "<a class=\"trial {} v-{verdict_class}\" data-kind=\"trial\" href=\"#{}\" title=\"{}\">{trial}</a>",
            attr(colour),
            attr(&trial_anchor(case.id, trial)),
            attr(&said)
        );
    }
    out.push_str(
        "<span class=\"strip-note\">colour: the trial's class · red outline: the trial \
         failed · dashed: inconclusive · click for its timeline</span></p>\n",
    );
}

fn trial_section(out: &mut String, case: &CaseView, trial: u32) {
    let view = case.trial(trial);
    let badge_class = state_class(view.state);
    let label = view.state.label();
    let class = view
        .end
        .and_then(|e| e.classification.map(|c| c.as_str()))
        .unwrap_or("");
    let reason = match view.end {
        Some(e) => e.reason.clone(),
        None => "did not finish (no trial_end)".to_string(),
    };
    let _ = writeln!(
        out,
        "<details class=\"trial\"><summary>trial {trial} <span class=\"badge {badge_class}\">{}</span> \
         <code>{}</code> <span class=\"why\">{}</span></summary>\n<div class=\"trial-body\" id=\"{}\">",
        esc(label),
        esc(class),
        esc(&reason),
        attr(&trial_anchor(case.id, trial))
    );
    findings(out, &view);
    timeline::figure(out, &view);
    if !view.calls.is_empty() {
        calls::table(out, &view);
    }
    out.push_str("</div>\n</details>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_core::evidence::fixtures::{TRIALS_CASE, trials_run};
    use sqsprobe_core::evidence::format::Record;
    use sqsprobe_core::evidence::view::RunView;

    fn rendered(records: &[Record]) -> String {
        let run = RunView::new(records);
        let case = run.case(TRIALS_CASE).unwrap();
        let mut out = String::new();
        render(&mut out, case, count(case).unwrap());
        out
    }

    #[test]
    fn the_tally_draws_each_interval_against_the_bound() {
        let out = rendered(&trials_run());
        assert!(
            out.contains("<caption>3 trials, 3 with a class, 0 unknown: each class's rate over all 3 trials with its 95% interval, the unknown trials counted both ways</caption>"),
            "{out}"
        );
        let row = &out[out.find("data-class=\"observed_redelivery\"").unwrap()..];
        let row = &row[..row.find("</tr>").unwrap()];
        assert!(
            row.contains("<td class=\"num\">1/3</td><td>0.84% – 90.6%</td>"),
            "{row}"
        );
        // at most 5% of 300 px: the allowed zone ends at 15 px, its edge drawn there.
        assert!(row.contains("<svg class=\"interval straddles\""), "{row}");
        assert!(
            row.contains("<rect class=\"allowed\" x=\"0.0\" y=\"0\" width=\"15.0\""),
            "{row}"
        );
        assert!(row.contains("<rect class=\"edge\" x=\"14.0\""), "{row}");
        assert!(
            row.contains("<rect class=\"range\" x=\"2.5\" y=\"4\" width=\"269.2\""),
            "{row}"
        );
        // 1 of 3: the rate sits at a third of the scale.
        assert!(row.contains("<rect class=\"rate\" x=\"99.0\""), "{row}");
        assert!(
            row.contains("too few trials: rate of observed_redelivery in 1 of 3 trials, 95% interval [0.84%, 90.6%] straddles the expected at most 5.0%; about 8 trials in all would settle it as a failure if the known trials' rate holds"),
            "{row}"
        );
        let unbounded = &out[out
            .find("data-class=\"no_redelivery_within_window\"")
            .unwrap()..];
        let unbounded = &unbounded[..unbounded.find("</tr>").unwrap()];
        assert!(
            unbounded.contains("<svg class=\"interval unbounded\""),
            "{unbounded}"
        );
        assert!(!unbounded.contains("data-kind=\"bound\""), "{unbounded}");
    }

    #[test]
    fn a_bound_decides_the_colour_of_the_interval() {
        let b = RateBound {
            at_least: None,
            at_most: Some(0.05),
        };
        let j = |k, unknown, n| judge_bound("observed_redelivery", Sample { k, unknown, n }, &b);
        assert_eq!(j(0, 0, 100).class, "holds");
        assert_eq!(j(18, 0, 20).class, "violated");
        assert_eq!(j(0, 0, 20).class, "straddles");
        assert!(
            j(0, 0, 20)
                .words
                .contains("72 trials with no observed_redelivery"),
            "{}",
            j(0, 0, 20).words
        );
        // 0 of 100 holds; with 10 of them unknown, it cannot.
        assert_eq!(j(0, 10, 100).class, "straddles");
        assert_eq!(j(0, 0, 0).class, "straddles");
    }

    #[test]
    fn each_trial_is_a_square_linking_to_its_own_timeline() {
        let out = rendered(&trials_run());
        assert_eq!(out.matches("data-kind=\"trial\"").count(), 3, "{out}");
        assert!(
            out.contains("<a class=\"trial observed_redelivery v-pass\" data-kind=\"trial\" href=\"#case-stale-rate~trial-2\" title=\"trial 2: pass, observed_redelivery\">2</a>"),
            "{out}"
        );
        assert_eq!(out.matches("<details class=\"trial\">").count(), 3);
        assert!(out.contains("<div class=\"trial-body\" id=\"case-stale-rate~trial-2\">"));
        // Each trial's timeline has its own calls only: A's superseded delete once per trial.
        assert_eq!(out.matches("<svg class=\"timeline\"").count(), 3);
        assert_eq!(out.matches("class=\"call ok outside\"").count(), 3, "{out}");
        let second = &out[out.find("id=\"case-stale-rate~trial-2\"").unwrap()..];
        let second = &second[..second.find("</details>").unwrap()];
        assert_eq!(
            second.matches("data-kind=\"redelivery\"").count(),
            1,
            "{second}"
        );
    }

    #[test]
    fn an_unfinished_case_lists_its_trials_without_a_tally() {
        let records: Vec<Record> = trials_run()
            .into_iter()
            .filter(|r| !matches!(r, Record::CaseEnd(_) | Record::RunEnd(_)))
            .filter(|r| !matches!(r, Record::TrialEnd(e) if e.trial == Some(3)))
            .collect();
        let out = rendered(&records);
        assert!(out.contains("3 trials planned, no tally"), "{out}");
        assert!(
            out.contains("title=\"trial 3: did not finish, no observation\""),
            "{out}"
        );
        assert!(out.contains("<span class=\"badge did_not_finish\">DID-NOT-FINISH</span>"));
    }
}
