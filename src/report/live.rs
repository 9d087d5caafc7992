//! The consumer of a live run's records: each record goes to the evidence file as it arrives,
//! each finished case to a progress line on stderr, and everything is handed back at the end
//! for the run folder's reports.
//!
//! It is the one place a running `sqsprobe run` does output; the runner only sends records
//! down a channel (nextest's runner → events → reporters). On a terminal it also keeps the
//! live board ([`super::progress`]) under the finished lines, redrawn a few times a second;
//! elsewhere (CI logs, pipes, `--no-progress`) it prints the finished lines only.

use super::progress::{Board, CasePlan};
use super::terminal;
use sqsprobe_core::evidence::{EvidenceWriter, Record};
use std::io::Write;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// How often the live board is redrawn when no record arrives.
const REDRAW: Duration = Duration::from_millis(250);

/// What the consumer prints while the run goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Nothing (`--quiet`).
    Off,
    /// One line per finished case (not a terminal, or `--no-progress`).
    Lines,
    /// The finished lines, and the board of running cases below them (a terminal).
    Live,
}

/// Where the board is drawn: stderr, remembering how many lines it took, so each redraw
/// first moves back over them and clears them.
struct Screen {
    drawn: usize,
    width: usize,
    height: usize,
}

impl Screen {
    fn new() -> Screen {
        let env = |name: &str, default: usize| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        Screen {
            drawn: 0,
            // Unknown widths are taken as 80: a board line that wrapped would break the redraw.
            width: env("COLUMNS", 80).max(20),
            height: env("LINES", 24).clamp(4, 200),
        }
    }

    /// Erases the board, prints `finished` above where it was, and draws `board` again.
    fn draw(&mut self, finished: &[String], board: &Board, now: Instant) {
        let mut out = String::new();
        if self.drawn > 0 {
            // CPL then ED: to the start of the board's first line, then clear to the end.
            out.push_str(&format!("\x1b[{}F\x1b[J", self.drawn));
        }
        for line in finished {
            out.push_str(line);
            out.push('\n');
        }
        let lines = board.lines(now, self.width.saturating_sub(1), self.height / 2);
        for line in &lines {
            out.push_str(line);
            out.push('\n');
        }
        self.drawn = lines.len();
        let _ = std::io::stderr().write_all(out.as_bytes());
    }
}

/// Writes each record as it arrives and prints what `progress` says (one line per finished
/// case, and on a terminal the board of running cases for the `plans` of the run); returns every record and the first write error, if any (later rows are not written
/// after one fails, but are still returned for the reports).
///
/// `held` are records made before the run started (the reachability check's calls): they go
/// right after the `run_start`, which must stay the file's first line.
pub async fn consume(
    mut rx: mpsc::UnboundedReceiver<Record>,
    mut writer: EvidenceWriter,
    held: Vec<Record>,
    progress: Progress,
    plans: Vec<CasePlan>,
) -> (Vec<Record>, Option<String>) {
    let mut records = Vec::new();
    let mut write_error = None;
    let total = plans.len();
    let mut done = 0;
    let mut held = Some(held);
    let mut board = Board::new(plans);
    let mut screen = Screen::new();
    let mut tick = tokio::time::interval(REDRAW);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let record = if progress == Progress::Live {
            tokio::select! {
                r = rx.recv() => r,
                _ = tick.tick() => {
                    screen.draw(&[], &board, Instant::now());
                    continue;
                }
            }
        } else {
            rx.recv().await
        };
        let Some(record) = record else { break };
        let is_start = matches!(record, Record::RunStart(_));
        let mut batch = vec![record];
        if is_start && let Some(held) = held.take() {
            batch.extend(held);
        }
        for record in batch {
            if write_error.is_none()
                && let Err(e) = writer.write(&record)
            {
                write_error = Some(e.to_string());
            }
            let now = Instant::now();
            board.apply(&record, now);
            if let Record::CaseEnd(end) = &record {
                done += 1;
                let line = terminal::progress_line(end, done, total);
                match progress {
                    Progress::Off => {}
                    // A closed stderr stops the progress lines, not the run.
                    Progress::Lines => {
                        let _ = writeln!(std::io::stderr(), "{line}");
                    }
                    Progress::Live => screen.draw(&[line], &board, now),
                }
            }
            records.push(record);
        }
    }
    if progress == Progress::Live && screen.drawn > 0 {
        let _ = write!(std::io::stderr(), "\x1b[{}F\x1b[J", screen.drawn);
    }
    // Without a run_start the held rows still belong in the evidence, last.
    for record in held.into_iter().flatten() {
        if write_error.is_none()
            && let Err(e) = writer.write(&record)
        {
            write_error = Some(e.to_string());
        }
        records.push(record);
    }
    (records, write_error)
}
