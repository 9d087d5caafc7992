//! Draws a case's [`Picture`] as inline SVG: an axis with round ticks, one band per lane, and
//! every mark a `<g data-kind=…>` whose `<title>` is its evidence row (shown on hover).
//!
//! Labels go in up to [`LABEL_ROWS`] rows under each lane's bars, most important first
//! (findings, handles used outside their lease, redeliveries and the window, then leases, sleeps, steps, calls);
//! one that has no room is left out rather than drawn over another.

use super::axis::{GridTick, Want, place, text_width, tick_label, ticks};
use super::marks::{Lane, Mark, MarkKind, Picture, SWATCHES, Shape};
use super::picture::picture;
use sqsprobe_core::evidence::view::CaseView;
use sqsprobe_facts::text::escape::{html_attr as attr, html_text as esc};
use std::fmt::Write;

const WIDTH: f64 = 1000.0;
const PLOT_X: f64 = 96.0;
const PLOT_W: f64 = 884.0;
const AXIS_H: f64 = 22.0;
const TRACK_H: f64 = 14.0;
const LABEL_H: f64 = 12.0;
/// Most label rows under one lane.
pub(crate) const LABEL_ROWS: usize = 3;
const PAD: f64 = 4.0;

/// One lane's labels, placed: per mark, its row and left edge.
struct Placed {
    at: Vec<Option<(usize, f64)>>,
    rows: usize,
}

/// Writes the timeline of `case` as a figure with its legend, when it has anything to draw.
pub(crate) fn figure(out: &mut String, case: &CaseView) {
    if let Some(p) = picture(case) {
        out.push_str("<figure class=\"timeline\">\n");
        render(out, &p);
        out.push_str(&legend());
        out.push_str("</figure>\n");
    }
}

/// Writes the SVG of `picture` into `out`.
pub(crate) fn render(out: &mut String, picture: &Picture) {
    let span = picture.span_ms;
    let x = |ms: f64| PLOT_X + ms.clamp(0.0, span) / span * PLOT_W;
    let placed: Vec<Placed> = picture
        .lanes
        .iter()
        .map(|lane| place_labels(lane, &x))
        .collect();
    let heights: Vec<f64> = picture
        .lanes
        .iter()
        .zip(&placed)
        .map(|(lane, p)| PAD * 2.0 + lane.tracks as f64 * TRACK_H + p.rows as f64 * LABEL_H)
        .collect();
    let height = AXIS_H + heights.iter().sum::<f64>() + 2.0;
    let _ = writeln!(
        out,
        "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" \
         width=\"{WIDTH}\" height=\"{height}\" role=\"img\" aria-label=\"timeline of the case\">"
    );
    let mut y = AXIS_H;
    for (i, (lane, h)) in picture.lanes.iter().zip(&heights).enumerate() {
        let _ = writeln!(
            out,
            "<rect class=\"lane{}\" x=\"0\" y=\"{y}\" width=\"{WIDTH}\" height=\"{h}\"/>\
             <text class=\"lane-name\" x=\"6\" y=\"{}\">{}</text>",
            if i % 2 == 1 { " odd" } else { "" },
            y + PAD + 10.0,
            esc(&lane.name)
        );
        y += h;
    }
    if let Some((start, end)) = picture.window {
        let _ = writeln!(
            out,
            "<rect class=\"window-guide\" x=\"{:.1}\" y=\"{AXIS_H}\" width=\"{:.1}\" height=\"{:.1}\"/>",
            x(start),
            (x(end) - x(start)).max(1.0),
            height - AXIS_H
        );
    }
    for tick in ticks(span) {
        let tx = x(tick);
        let anchor = if tick == 0.0 { "start" } else { "middle" };
        GridTick {
            line: [tx, AXIS_H - 4.0, tx, height],
            at: (tx, 13.0),
            anchor,
            label: &tick_label(tick),
        }
        .write(out);
        out.push('\n');
    }
    let mut y = AXIS_H;
    for ((lane, p), h) in picture.lanes.iter().zip(&placed).zip(&heights) {
        // Bands first, so bars and labels stay on top of them.
        let mut order: Vec<usize> = (0..lane.marks.len()).collect();
        order.sort_by_key(|&i| !lane.marks[i].parts.iter().any(|p| p.shape == Shape::Band));
        for i in order {
            mark(out, lane, &lane.marks[i], p.at[i], y, *h, &x);
        }
        y += h;
    }
    out.push_str("</svg>\n");
}

fn place_labels(lane: &Lane, x: &impl Fn(f64) -> f64) -> Placed {
    let mut order: Vec<usize> = (0..lane.marks.len())
        .filter(|&i| lane.marks[i].label.is_some())
        .collect();
    order.sort_by(|&a, &b| {
        let (ma, mb) = (&lane.marks[a], &lane.marks[b]);
        ma.priority
            .cmp(&mb.priority)
            .then(ma.anchor_ms().total_cmp(&mb.anchor_ms()))
    });
    let wants: Vec<Want> = order
        .iter()
        .map(|&i| Want {
            x: x(lane.marks[i].anchor_ms()),
            width: text_width(&fit(lane.marks[i].label.as_deref().unwrap_or(""))),
        })
        .collect();
    let placed = place(&wants, PLOT_X, PLOT_X + PLOT_W, LABEL_ROWS);
    let mut at = vec![None; lane.marks.len()];
    for (&i, p) in order.iter().zip(placed) {
        at[i] = p;
    }
    let rows = at
        .iter()
        .flatten()
        .map(|(row, _)| row + 1)
        .max()
        .unwrap_or(0);
    Placed { at, rows }
}

/// A label cut to what the plot can hold.
fn fit(label: &str) -> String {
    let room = ((PLOT_W - 8.0) / 6.0) as usize;
    if label.chars().count() <= room {
        return label.to_string();
    }
    let mut cut: String = label.chars().take(room.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

fn mark(
    out: &mut String,
    lane: &Lane,
    m: &Mark,
    label_at: Option<(usize, f64)>,
    lane_y: f64,
    lane_h: f64,
    x: &impl Fn(f64) -> f64,
) {
    let _ = write!(
        out,
        "<g data-kind=\"{}\" class=\"{}\"",
        attr(m.kind.as_str()),
        attr(&m.class)
    );
    for (name, value) in &m.data {
        let _ = write!(out, " data-{name}=\"{}\"", attr(value));
    }
    let _ = write!(out, "><title>{}</title>", esc(&m.title));
    for part in &m.parts {
        let top = lane_y + PAD + part.track as f64 * TRACK_H;
        let (x0, x1) = (x(part.start), x(part.end));
        let class = if part.class.is_empty() {
            String::new()
        } else {
            format!(" class=\"{}\"", attr(part.class))
        };
        let _ = match part.shape {
            Shape::Bar => {
                let (inset, h) = if m.kind == MarkKind::Lease {
                    (4.0, 6.0)
                } else {
                    (2.0, 10.0)
                };
                // A handle used outside its lease or the failing call is the point of its
                // picture: never a sliver, however fast it answered.
                let min = if m.class.contains("outside") || m.class.contains("finding-call") {
                    7.0
                } else {
                    2.0
                };
                write!(
                    out,
                    "<rect{class} x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h}\"/>",
                    top + inset,
                    (x1 - x0).max(min)
                )
            }
            Shape::Dashed => write!(
                out,
                "<line{class} x1=\"{x0:.1}\" y1=\"{:.1}\" x2=\"{x1:.1}\" y2=\"{:.1}\"/>",
                top + 7.0,
                top + 7.0
            ),
            Shape::Cap => write!(
                out,
                "<line{class} x1=\"{x1:.1}\" y1=\"{:.1}\" x2=\"{x1:.1}\" y2=\"{:.1}\"/>",
                top + 1.0,
                top + TRACK_H - 1.0
            ),
            Shape::Point => {
                let cy = top + 7.0;
                write!(
                    out,
                    "<path{class} d=\"M{x0:.1} {:.1}l5 5l-5 5l-5 -5z\"/>",
                    cy - 5.0
                )
            }
            Shape::Band => write!(
                out,
                "<rect{class} x=\"{x0:.1}\" y=\"{lane_y:.1}\" width=\"{:.1}\" height=\"{lane_h:.1}\"/>",
                (x1 - x0).max(1.0)
            ),
            Shape::Outline => write!(
                out,
                "<rect{class} x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
                lane_y + 1.0,
                (x1 - x0).max(1.0),
                lane_h - 2.0
            ),
        };
    }
    if let (Some(label), Some((row, lx))) = (&m.label, label_at) {
        let ty = lane_y + PAD + lane.tracks as f64 * TRACK_H + row as f64 * LABEL_H + 9.0;
        let _ = write!(
            out,
            "<text x=\"{lx:.1}\" y=\"{ty:.1}\">{}</text>",
            esc(&fit(label))
        );
    }
    out.push_str("</g>\n");
}

/// The key to the timelines' marks, shown under each one: a swatch per row of [`SWATCHES`].
pub(crate) fn legend() -> String {
    let mut out = String::from("<p class=\"legend\">");
    for (class, words) in SWATCHES {
        let _ = write!(
            out,
            "<span><span class=\"sw {class}\"></span>{}</span> ",
            esc(words)
        );
    }
    out.push_str("<span>· hover a mark for its evidence row</span></p>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqsprobe_core::evidence::fixtures::full_run;
    use sqsprobe_core::evidence::view::RunView;

    /// The legend's table and the stylesheet agree: every swatch is coloured, and every kind
    /// the picture draws is one of the table's.
    #[test]
    fn every_swatch_has_its_style_and_every_kind_its_name() {
        for (class, words) in SWATCHES {
            assert!(
                super::super::style::CSS.contains(&format!(".sw.{class}{{"))
                    || super::super::style::CSS.contains(&format!(".sw.{class},")),
                "no .sw.{class} rule in the stylesheet"
            );
            assert!(legend().contains(words));
        }
        let mut names: Vec<&str> = MarkKind::ALL.iter().map(|k| k.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), MarkKind::ALL.len());
        let records = full_run();
        let run = RunView::new(&records);
        let p = picture(&run.cases[0]).unwrap();
        let mut svg = String::new();
        render(&mut svg, &p);
        for kind in svg.split("<g data-kind=\"").skip(1) {
            let kind = &kind[..kind.find('"').unwrap()];
            assert!(names.contains(&kind), "{kind} is not a MarkKind");
        }
    }

    #[test]
    fn every_mark_is_a_group_with_its_kind_and_evidence() {
        let records = full_run();
        let run = RunView::new(&records);
        let p = picture(&run.cases[0]).unwrap();
        let mut svg = String::new();
        render(&mut svg, &p);
        assert_eq!(
            svg.matches("<g data-kind=").count(),
            svg.matches("<title>").count()
        );
        assert_eq!(svg.matches("data-kind=\"window\"").count(), 1);
        assert_eq!(svg.matches("data-kind=\"redelivery\"").count(), 1);
        assert!(
            svg.contains(">0</text>") && svg.contains(">500 ms</text>"),
            "{svg}"
        );
        assert!(!svg.contains("NaN"), "{svg}");
    }

    #[test]
    fn long_labels_are_cut_to_the_plot() {
        let long = "x".repeat(400);
        let cut = fit(&long);
        assert!(text_width(&cut) <= PLOT_W);
        assert!(cut.ends_with('…'));
        assert_eq!(fit("short"), "short");
    }
}
