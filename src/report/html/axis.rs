//! The pictures' geometry that is not about evidence: axis ticks at round values, the grid
//! line and label each tick draws (the timeline's and the matrix's scatter alike), and labels
//! laid out so they never overprint.
//!
//! Ticks step by 1, 2 or 5 times a power of ten milliseconds (0, 500 ms, 1 s, 1.5 s …), the
//! smallest such step that keeps at most [`MAX_TICKS`] intervals on the axis. Labels are placed
//! greedily, most important first, in the first row where they overlap nothing; a label that
//! finds no free row is left out (its mark still shows the whole evidence row on hover).

/// Most tick intervals on one axis.
pub(crate) const MAX_TICKS: f64 = 8.0;

/// The tick step for an axis `span_ms` long: the smallest 1-2-5 step giving at most
/// [`MAX_TICKS`] intervals.
pub(crate) fn tick_step(span_ms: f64) -> f64 {
    let mut decade = 1.0;
    loop {
        for m in [1.0, 2.0, 5.0] {
            let step = m * decade;
            if span_ms / step <= MAX_TICKS {
                return step;
            }
        }
        decade *= 10.0;
    }
}

/// Tick positions from 0 to `span_ms` (inclusive when it falls on a tick).
pub(crate) fn ticks(span_ms: f64) -> Vec<f64> {
    let step = tick_step(span_ms.max(1.0));
    let count = (span_ms / step + 1e-9).floor() as usize;
    (0..=count).map(|k| k as f64 * step).collect()
}

/// A tick's label: `0`, `500 ms`, `1 s`, `1.5 s`, `20 s`.
pub(crate) fn tick_label(ms: f64) -> String {
    let ms = ms.round() as u64;
    match ms {
        0 => "0".to_string(),
        ms if ms < 1000 => format!("{ms} ms"),
        ms if ms % 1000 == 0 => format!("{} s", ms / 1000),
        ms if ms % 100 == 0 => format!("{:.1} s", ms as f64 / 1000.0),
        ms if ms % 10 == 0 => format!("{:.2} s", ms as f64 / 1000.0),
        ms => format!("{:.3} s", ms as f64 / 1000.0),
    }
}

/// A grid line across the plot and its tick's label, as SVG.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GridTick<'a> {
    /// The line, from `(x1, y1)` to `(x2, y2)`.
    pub line: [f64; 4],
    /// Where the label's anchor sits.
    pub at: (f64, f64),
    /// `start`, `middle` or `end`.
    pub anchor: &'static str,
    /// The label, already escaped for HTML.
    pub label: &'a str,
}

impl GridTick<'_> {
    /// Appends the line and the label to `out`: one shape for every picture's axes, so a
    /// change to how a tick looks is made once.
    pub(crate) fn write(&self, out: &mut String) {
        use std::fmt::Write as _;
        let [x1, y1, x2, y2] = self.line;
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\"/>\
             <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{}\">{}</text>",
            self.at.0, self.at.1, self.anchor, self.label
        );
    }
}

/// Width in pixels a 10 px sans-serif label takes, estimated generously (wide glyphs), so
/// placed labels keep clear of each other whatever the font.
pub(crate) fn text_width(text: &str) -> f64 {
    text.chars().count() as f64 * 6.0 + 4.0
}

/// A label to place: its wanted left edge and width, in pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Want {
    pub x: f64,
    pub width: f64,
}

/// Places labels in at most `rows` rows between `left` and `right`. `wants` come most
/// important first. Each label keeps its `x` when it fits, else is shifted left to end at
/// `right`; it goes in the first row where it overlaps no label already placed (with a gap).
/// Returns, per label, its row and left edge, or `None` when no row had room.
pub(crate) fn place(
    wants: &[Want],
    left: f64,
    right: f64,
    rows: usize,
) -> Vec<Option<(usize, f64)>> {
    const GAP: f64 = 6.0;
    let mut taken: Vec<Vec<(f64, f64)>> = vec![Vec::new(); rows];
    wants
        .iter()
        .map(|want| {
            let x = want.x.min(right - want.width).max(left);
            let end = x + want.width;
            let row = taken
                .iter()
                .position(|spans| spans.iter().all(|&(a, b)| end + GAP <= a || x >= b + GAP))?;
            taken[row].push((x, end));
            Some((row, x))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_tick_is_a_line_and_its_label() {
        let mut out = String::new();
        GridTick {
            line: [1.0, 2.0, 1.0, 30.25],
            at: (1.0, 13.0),
            anchor: "middle",
            label: "1 s",
        }
        .write(&mut out);
        assert_eq!(
            out,
            "<line class=\"grid\" x1=\"1.0\" y1=\"2.0\" x2=\"1.0\" y2=\"30.2\"/>\
             <text class=\"tick\" x=\"1.0\" y=\"13.0\" text-anchor=\"middle\">1 s</text>"
        );
    }

    #[test]
    fn ticks_fall_on_one_two_five_steps() {
        assert_eq!(tick_step(939.0), 200.0);
        assert_eq!(tick_step(2800.0), 500.0);
        assert_eq!(tick_step(4700.0), 1000.0);
        assert_eq!(tick_step(15_000.0), 2000.0);
        assert_eq!(tick_step(31_700.0), 5000.0);
        assert_eq!(tick_step(7.0), 1.0);
        let labels: Vec<String> = ticks(2800.0).into_iter().map(tick_label).collect();
        assert_eq!(labels, ["0", "500 ms", "1 s", "1.5 s", "2 s", "2.5 s"]);
        assert_eq!(
            ticks(5000.0).len(),
            6,
            "the end is a tick when it falls on one"
        );
        for span in [1.0, 24.0, 939.0, 2800.0, 4700.0, 61_000.0, 900_000.0] {
            let n = ticks(span).len() as f64;
            assert!(n - 1.0 <= MAX_TICKS && n >= 2.0, "{span}: {n} ticks");
        }
    }

    #[test]
    fn tick_labels_are_round() {
        assert_eq!(tick_label(0.0), "0");
        assert_eq!(tick_label(20.0), "20 ms");
        assert_eq!(tick_label(1000.0), "1 s");
        assert_eq!(tick_label(1500.0), "1.5 s");
        assert_eq!(tick_label(1250.0), "1.25 s");
        assert_eq!(tick_label(10_000.0), "10 s");
    }

    #[test]
    fn placed_labels_never_overlap_and_stay_inside() {
        let wants: Vec<Want> = (0..40)
            .map(|k| Want {
                x: 100.0 + (k * 7 % 23) as f64 * 30.0,
                width: 40.0 + (k % 5) as f64 * 25.0,
            })
            .collect();
        let placed = place(&wants, 100.0, 900.0, 3);
        let mut boxes: Vec<(usize, f64, f64)> = Vec::new();
        for (want, at) in wants.iter().zip(&placed) {
            let Some((row, x)) = *at else { continue };
            assert!(x >= 100.0 && x + want.width <= 900.0 + 1e-9);
            for &(r, a, b) in &boxes {
                assert!(
                    r != row || x + want.width <= a || x >= b,
                    "overlap in row {row}"
                );
            }
            boxes.push((row, x, x + want.width));
        }
        assert!(
            placed.iter().any(Option::is_none),
            "some labels are thinned out"
        );
        assert!(placed[0].is_some(), "the most important label is placed");
    }

    #[test]
    fn a_label_near_the_end_is_shifted_left_to_fit() {
        let placed = place(
            &[Want {
                x: 880.0,
                width: 60.0,
            }],
            100.0,
            900.0,
            1,
        );
        assert_eq!(placed, [Some((0, 840.0))]);
    }
}
