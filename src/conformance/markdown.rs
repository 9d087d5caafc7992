//! `matrix.md`: the matrix as a page a team decides from (pure). First the scores (overall,
//! semantics, validation), then the scores by area, the practical facts when given, what will
//! surprise a user of each target, the contested behaviours, and one table per area with
//! notes.

use super::matrix::{CellState, Column, Matrix, Score, percent};
use crate::text::escape::{markdown_cell as md, markdown_code};

/// What a reader must know before reading any score: how it is counted, and that the suite
/// and the embedded emulator have the same authors.
pub const READING: &str = "Conformance = passes / cases counted. A known divergence (a failure \
the target's profile explains) counts as non-conforming, and so does a case that did not finish. \
Cases counted: every case a run selected except the unsupported ones. **Semantics** cases check \
what a consumer can observe (leases, redelivery, ordering, deduplication, redrive, defaults); \
**validation** cases check the error code and message a bad input gets.";

/// Said wherever the embedded emulator is a column.
pub const SAME_AUTHORS: &str = "The suites and the embedded emulator are written by the same \
authors, so the embedded emulator's score here is not an independent measure: every behaviour \
the authors misread would be misread in both. The independent measure is LocalStack's own \
AWS-validated SQS tests (`tests/aws/services/sqs/test_sqs.py` with its AWS-recorded snapshots), \
run outside this repository against both: the embedded emulator passes as many of them as \
LocalStack itself does.";

/// A score as `85.0% (11/13)`, with ` · 2 known` when some of the non-passes are known
/// divergences, `–` when nothing was counted.
pub fn score_cell(s: &Score) -> String {
    if s.run == 0 {
        return "–".to_string();
    }
    let mut out = format!("{} ({}/{})", percent(s.conformance), s.pass, s.run);
    if s.known_divergence > 0 {
        out.push_str(&format!(" · {} known", s.known_divergence));
    }
    if s.fail + s.error > 0 {
        out.push_str(&format!(" · {} failing", s.fail + s.error));
    }
    out
}

/// `matrix.md` (see the module docs).
pub fn render_markdown(m: &Matrix) -> String {
    let mut out = String::from("# SQS conformance matrix\n\n");
    out.push_str(READING);
    out.push_str("\n\n");
    if m.columns.iter().any(|c| c.target == "embedded") {
        out.push_str(&format!("> {SAME_AUTHORS}\n\n"));
    }
    out.push_str("| Target | Run | Protocol | Conformance | Semantics | Validation | Pass | Known divergence | Fail | Inconclusive | Error | Did not finish | Unsupported | Not run |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for c in &m.columns {
        let s = &c.score;
        let flag = if c.interrupted {
            " **(interrupted)**"
        } else {
            ""
        };
        out.push_str(&format!(
            "| {}{flag} | {} | {} | {} ({}/{}) | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            md(&c.name),
            markdown_code(&c.run_id),
            md(&c.protocol),
            percent(s.conformance),
            s.pass,
            s.run,
            score_cell(&c.semantics),
            score_cell(&c.validation),
            s.pass,
            s.known_divergence,
            s.fail,
            s.inconclusive,
            s.error,
            s.did_not_finish,
            s.unsupported,
            s.not_run
        ));
    }
    render_interrupted(&mut out, m);
    let header: String = m
        .columns
        .iter()
        .map(|c| format!(" {} |", md(&c.name)))
        .collect();
    let rule: String = m.columns.iter().map(|_| "---|").collect();
    out.push_str(&format!(
        "\n## Scores by area\n\nEach cell: conformance over the area's cases counted on that \
         target (passes/counted), then how many of the rest are known divergences and how many \
         fail outside the profile.\n\n| Area |{header}\n|---|{rule}\n"
    ));
    for area in &m.areas {
        out.push_str(&format!("| {} |", md(&area.title)));
        for s in &area.scores {
            out.push_str(&format!(" {} |", md(&score_cell(s))));
        }
        out.push('\n');
    }
    if let Some(facts) = &m.facts {
        out.push_str(&super::facts::render_markdown(m, facts));
    }
    render_surprises(&mut out, m);
    render_contested(&mut out, m, &header, &rule);
    let mut notes: Vec<String> = Vec::new();
    for area in &m.areas {
        out.push_str(&format!(
            "\n## {}\n\n| Case | Aspect |{header}\n|---|---|{rule}\n",
            md(&area.title)
        ));
        for row in &area.rows {
            out.push_str(&format!(
                "| {} | {} |",
                markdown_code(&row.case),
                row.aspect.as_deref().unwrap_or("–")
            ));
            for (col, cell) in m.columns.iter().zip(&row.cells) {
                match (&cell.note, cell.state) {
                    (Some(note), CellState::KnownDivergence | CellState::Unsupported) => {
                        notes.push(format!(
                            "{}. {} on {}: {}",
                            notes.len() + 1,
                            markdown_code(&row.case),
                            md(&col.name),
                            md(note)
                        ));
                        out.push_str(&format!(" {} [{}] |", cell.state.word(), notes.len()));
                    }
                    _ => out.push_str(&format!(" {} |", cell.state.word())),
                }
            }
            out.push('\n');
        }
    }
    if !notes.is_empty() {
        out.push_str("\n## Notes\n\n");
        for n in notes {
            out.push_str(&n);
            out.push('\n');
        }
    }
    out
}

fn render_interrupted(out: &mut String, m: &Matrix) {
    let interrupted: Vec<String> = m
        .columns
        .iter()
        .filter(|c| c.interrupted)
        .map(|c| md(&c.name))
        .collect();
    if interrupted.is_empty() {
        return;
    }
    let one = interrupted.len() == 1;
    out.push_str(&format!(
        "\n> **Interrupted**: {}. {} stopped before {} finished: {} cases without a verdict \
         count as not conforming, and {} not a complete measurement.\n",
        interrupted.join(", "),
        if one { "This run" } else { "These runs" },
        if one { "it" } else { "they" },
        if one { "its" } else { "their" },
        if one {
            "its score is"
        } else {
            "their scores are"
        },
    ));
}

/// One line of a target's surprises: the case's title (else its id), its area, what it does.
pub fn surprise_line(s: &super::matrix::Surprise) -> String {
    let what = s.note.as_deref().unwrap_or("did not pass");
    format!(
        "{} ({}, {}; {}): {}",
        md(s.title.as_deref().unwrap_or(&s.case)),
        markdown_code(&s.case),
        md(&s.area),
        s.state.word().trim_matches('*'),
        md(what)
    )
}

/// Per target, the semantics cases it does not answer as AWS does, heaviest area first.
fn render_surprises(out: &mut String, m: &Matrix) {
    let with: Vec<&Column> = m
        .columns
        .iter()
        .filter(|c| !c.surprises.is_empty())
        .collect();
    out.push_str(&format!(
        "\n## What will surprise you\n\nPer target, the first {} semantics cases (heaviest area \
         first: leases, handles, FIFO, dead-letter queues, …) it does not answer as AWS does: \
         failures and known divergences, with the profile's reason. Validation cases (error \
         codes and messages) are left to the tables below.\n",
        super::matrix::MAX_SURPRISES
    ));
    if with.is_empty() {
        out.push_str("\nNone: every semantics case passed on every target.\n");
    }
    for c in &m.columns {
        if c.surprises.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\n**{}** (semantics {}):\n\n",
            md(&c.name),
            score_cell(&c.semantics)
        ));
        for s in &c.surprises {
            out.push_str(&format!("- {}\n", surprise_line(s)));
        }
    }
    let clean: Vec<String> = m
        .columns
        .iter()
        .filter(|c| c.surprises.is_empty() && c.semantics.run > 0)
        .map(|c| md(&c.name))
        .collect();
    if !with.is_empty() && !clean.is_empty() {
        out.push_str(&format!(
            "\nNo semantics case failed or diverged on: {}.\n",
            clean.join(", ")
        ));
    }
}

/// The contested behaviours, before the areas: what AWS does and what each target did.
fn render_contested(out: &mut String, m: &Matrix, header: &str, rule: &str) {
    if m.contested.is_empty() {
        return;
    }
    out.push_str(
        "\n## Contested behaviours\n\nCases tagged `contested`: behaviours the targets answer in \
         different ways. **AWS** is what AWS recorded or documents (the case's behaviour; its \
         sources below the table); each target's cell is what it did there — the answer of \
         every acknowledgement step (DeleteMessage, ChangeMessageVisibility), the outcome \
         observed afterwards, and the finding when the case did not pass — then the verdict.\n\n",
    );
    out.push_str(&format!("| Case | AWS |{header}\n|---|---|{rule}\n"));
    for c in &m.contested {
        out.push_str(&format!(
            "| {} | {} |",
            markdown_code(&c.case),
            md(&c.behaviour)
        ));
        for did in &c.did {
            match did {
                Some(d) => out.push_str(&format!(" {} ({}) |", md(&d.summary), d.state.word())),
                None => out.push_str(" not run |"),
            }
        }
        out.push('\n');
    }
    out.push('\n');
    for c in &m.contested {
        out.push_str(&format!(
            "- {}: {}\n",
            markdown_code(&c.case),
            md(&c.sources.join("; "))
        ));
    }
}
