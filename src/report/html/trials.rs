//! A multi-trial case's tally: `k/N` per observation class, and each class's 95% interval
//! (over the conclusive trials) drawn as a bar on a 0–100% scale with the observed rate on it.

use crate::evidence::format::Trials;
use crate::text::escape::html_text as esc;
use std::fmt::Write;

const BAR_W: f64 = 240.0;

/// `20 trials: no_redelivery_within_window 17/20, observed_redelivery 3/20`.
pub(crate) fn line(t: &Trials) -> String {
    let counts: Vec<String> = t
        .counts
        .iter()
        .map(|(class, k)| format!("{class} {k}/{}", t.n))
        .collect();
    format!("{} trials: {}", t.n, counts.join(", "))
}

/// Trials that decided something: inconclusive ones are counted, never in the denominator.
fn conclusive(t: &Trials) -> u32 {
    t.n.saturating_sub(t.counts.get("inconclusive").copied().unwrap_or(0))
}

/// Writes the tally table.
pub(crate) fn render(out: &mut String, t: &Trials) {
    let decided = conclusive(t);
    let _ = writeln!(
        out,
        "<table class=\"trials\">\n<caption>{} trials, {decided} conclusive</caption>\n\
         <tr><th>class</th><th>trials</th><th>95% interval (conclusive trials)</th><th></th></tr>",
        t.n
    );
    for (class, &k) in &t.counts {
        let interval = t.intervals.get(class);
        let text = interval
            .map(|[lo, hi]| format!("{:.1}% – {:.1}%", lo * 100.0, hi * 100.0))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<tr><td><code>{}</code></td><td class=\"num\">{k}/{}</td><td>{}</td><td>",
            esc(class),
            t.n,
            esc(&text)
        );
        if let Some(&[lo, hi]) = interval {
            let (lo, hi) = (lo.clamp(0.0, 1.0), hi.clamp(lo.clamp(0.0, 1.0), 1.0));
            let rate = if decided > 0 && class != "inconclusive" {
                Some(f64::from(k) / f64::from(decided))
            } else {
                None
            };
            let _ = write!(
                out,
                "<svg class=\"interval\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{BAR_W}\" height=\"14\" viewBox=\"0 0 {BAR_W} 14\">\
                 <title>{}: {k} of {decided} conclusive trials, 95% interval {}</title>\
                 <rect class=\"scale\" x=\"0\" y=\"6\" width=\"{BAR_W}\" height=\"2\"/>\
                 <rect class=\"range\" x=\"{:.1}\" y=\"2\" width=\"{:.1}\" height=\"10\"/>",
                esc(class),
                esc(&text),
                lo * BAR_W,
                ((hi - lo) * BAR_W).max(2.0)
            );
            if let Some(rate) = rate {
                let _ = write!(
                    out,
                    "<rect class=\"rate\" x=\"{:.1}\" y=\"0\" width=\"2\" height=\"14\"/>",
                    (rate * BAR_W - 1.0).clamp(0.0, BAR_W - 2.0)
                );
            }
            out.push_str("</svg>");
        }
        out.push_str("</td></tr>\n");
    }
    out.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn tally() -> Trials {
        Trials {
            n: 20,
            conclusive: 18,
            counts: BTreeMap::from([
                ("inconclusive".to_string(), 2),
                ("observed_redelivery".to_string(), 0),
                ("no_redelivery_within_window".to_string(), 18),
            ]),
            intervals: BTreeMap::from([
                ("observed_redelivery".to_string(), [0.0, 0.1853]),
                ("no_redelivery_within_window".to_string(), [0.8147, 1.0]),
            ]),
            per_trial: Vec::new(),
        }
    }

    #[test]
    fn counts_and_intervals_over_the_conclusive_trials() {
        let t = tally();
        assert_eq!(
            line(&t),
            "20 trials: inconclusive 2/20, no_redelivery_within_window 18/20, observed_redelivery 0/20"
        );
        let mut out = String::new();
        render(&mut out, &t);
        assert!(
            out.contains("<caption>20 trials, 18 conclusive</caption>"),
            "{out}"
        );
        assert!(
            out.contains("<td class=\"num\">0/20</td><td>0.0% – 18.5%</td>"),
            "{out}"
        );
        // 18 of 18 conclusive: the rate sits at the right end of the scale.
        assert!(out.contains("<rect class=\"rate\" x=\"238.0\""), "{out}");
        assert_eq!(out.matches("<svg").count(), 2, "no interval, no bar: {out}");
    }
}
