//! `matrix.md`: the matrix as a page a team decides from (pure). First the scores (overall,
//! semantics, validation), then the scores by area, the practical facts when given, what will
//! surprise a user of each target, the contested behaviours, and one table per area with
//! notes.

use super::facts::{BenchFacts, Facts, TargetFacts};
use super::matrix::{CellState, Column, Matrix, Score, percent};
use sqsprobe_facts::text::escape::{markdown_cell as md, markdown_code};

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
        out.push_str(&render_facts(m, facts));
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

/// The conformance of `target` over the protocol its facts were measured on: the first
/// column whose profile (or, without one, target kind) is its name and whose protocol is that
/// one, else any column of that name.
pub fn conformance_of(m: &Matrix, facts: &TargetFacts) -> Option<f64> {
    let named = |c: &&Column| {
        c.target_profile.as_deref() == Some(facts.target.as_str())
            || (c.target_profile.is_none() && c.target == facts.target)
    };
    let protocol = facts.protocol_measured.as_deref().unwrap_or("json");
    m.columns
        .iter()
        .filter(named)
        .find(|c| c.protocol == protocol)
        .or_else(|| m.columns.iter().find(named))
        .and_then(|c| c.score.conformance)
}

fn mib(kib: u64) -> String {
    format!("{:.0} MiB", kib as f64 / 1024.0)
}

fn yes_no(v: Option<bool>, seen: Option<&str>) -> String {
    let word = match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "not measured",
    };
    match seen {
        Some(s) if v.is_some() => format!("{word} ({s})"),
        _ => word.to_string(),
    }
}

/// One target's row of the facts table, cell by cell, as plain text (each renderer escapes).
pub fn row_cells(m: &Matrix, t: &TargetFacts) -> Vec<String> {
    let or = |v: &Option<String>| v.clone().unwrap_or_else(|| "–".to_string());
    let throughput = match &t.bench {
        Some(BenchFacts {
            send_per_second: Some(send),
            noop_per_second,
            ceiling_ratio,
            reference_ratio,
            ..
        }) => {
            let mut s = format!("{send:.0}/s");
            if let (Some(noop), Some(r)) = (noop_per_second, ceiling_ratio) {
                s.push_str(&format!(" ({r:.2} of its no-op {noop:.0}/s"));
                if let Some(x) = reference_ratio {
                    s.push_str(&format!(", {x:.2} of a bare HTTP server"));
                }
                s.push(')');
            }
            s
        }
        Some(BenchFacts { error: Some(e), .. }) => format!("not measured: {e}"),
        _ => "–".to_string(),
    };
    let stored = match (
        t.stored_messages,
        t.rss_at_messages_kib,
        t.bytes_per_message,
    ) {
        (Some(n), Some(rss), Some(b)) => {
            let pages = pages(t).map_or_else(String::new, |p| format!(", {p}"));
            let mut s = format!("{} at {n} messages ({b} B each{pages})", mib(rss));
            if let Some(e) = &t.fill_error {
                s.push_str(&format!("; stopped: {e}"));
            }
            s
        }
        _ => t
            .fill_error
            .clone()
            .map_or_else(|| "–".to_string(), |e| format!("not measured: {e}")),
    };
    vec![
        t.target.clone(),
        or(&t.version),
        or(&t.installed_from),
        or(&t.started_with),
        or(&t.licence),
        if t.protocols.is_empty() {
            "–".to_string()
        } else {
            t.protocols.join(", ")
        },
        conformance_of(m, t).map_or_else(|| "–".to_string(), |c| format!("{:.1}%", c * 100.0)),
        t.startup_ms
            .map_or_else(|| "–".to_string(), |ms| format!("{ms} ms")),
        t.idle_rss_kib.map_or_else(
            || "–".to_string(),
            |kib| match pages(t) {
                Some(p) => format!("{} ({p})", mib(kib)),
                None => mib(kib),
            },
        ),
        stored,
        throughput,
        yes_no(t.multi_region, t.multi_region_seen.as_deref()),
        yes_no(t.multi_account, t.multi_account_seen.as_deref()),
        yes_no(t.restart_keeps_messages, t.restart_seen.as_deref()),
    ]
}

/// How a target's RSS was counted, when the facts say: RSS in 4 KiB pages and RSS where huge
/// pages were allowed (the system's setting decides whether any are used) are different
/// measures, so both RSS cells name theirs.
fn pages(t: &TargetFacts) -> Option<&'static str> {
    t.small_pages.map(|small| {
        if small {
            "4 KiB pages"
        } else {
            "huge pages allowed"
        }
    })
}

/// The headings of [`row_cells`].
pub const HEADINGS: [&str; 14] = [
    "Target",
    "Version",
    "Installed from",
    "Started with",
    "Licence",
    "Protocols",
    "Conformance",
    "Start-up to first answer",
    "Idle RSS",
    "RSS with stored messages",
    "Raw SendMessage (16 connections)",
    "Regions kept apart",
    "Accounts kept apart",
    "Restart keeps messages",
];

/// The practical facts section of `matrix.md`.
pub fn render_facts(m: &Matrix, facts: &Facts) -> String {
    let mut out = format!(
        "\n## Practical facts\n\nMeasured by `scripts/target-facts` on {} ({} CPUs, load \
         average {} before, {} after), one target at a time: a cold start to the first \
         ListQueues answer, RSS of the whole process group{}, `sqsprobe bench --driver raw \
         --workload send --connections 16` against the same server's no-op, 64-byte messages \
         sent in batches of ten, one queue name created in two regions and under two 12-digit \
         access keys, a restart on the same port. Conformance is the target's score over the \
         protocol measured.\n\n|",
        md(&facts.measured_at),
        facts
            .cpus
            .map_or_else(|| "?".to_string(), |c| c.to_string()),
        load(facts.load_average_start),
        load(facts.load_average_end),
        if facts.targets.iter().any(|t| t.small_pages.is_some()) {
            " (with transparent huge pages off for each target whose RSS cells say 4 KiB pages, \
             so that an allocator's 2 MiB steps are not counted)"
        } else {
            ""
        },
    );
    for h in HEADINGS {
        out.push_str(&format!(" {h} |"));
    }
    out.push_str("\n|");
    out.push_str(&"---|".repeat(HEADINGS.len()));
    out.push('\n');
    for t in &facts.targets {
        out.push('|');
        for cell in row_cells(m, t) {
            out.push_str(&format!(" {} |", md(&cell)));
        }
        out.push('\n');
    }
    let failed: Vec<String> = facts
        .targets
        .iter()
        .filter_map(|t| t.error.as_ref().map(|e| format!("{}: {}", t.target, e)))
        .collect();
    if !failed.is_empty() {
        out.push_str(&format!(
            "\nNot every figure could be measured: {}.\n",
            md(&failed.join("; "))
        ));
    }
    out
}

fn load(l: Option<[f64; 3]>) -> String {
    l.map_or_else(|| "?".to_string(), |l| format!("{:.2}", l[0]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::matrix::build;
    use crate::evidence::fixtures::verdicts_run as run;
    use crate::evidence::format::Verdict;

    const DOC: &str = r#"{"format": "sqsprobe-facts/1", "measured_at": "2026-12-02T04:00:00Z",
      "cpus": 2, "load_average_start": [0.5, 0.4, 0.3], "load_average_end": [0.9, 0.5, 0.3],
      "targets": [
        {"target": "moto", "version": "5.2.5", "licence": "Apache-2.0", "protocols": ["json", "query"],
         "protocol_measured": "json", "startup_ms": 2218, "idle_rss_kib": 86740,
         "bench": {"send_per_second": 46, "noop_per_second": 104, "ceiling_ratio": 0.447, "errors": 0},
         "stored_messages": 1500, "rss_at_messages_kib": 90000, "bytes_per_message": 2225,
         "multi_region": true, "multi_region_seen": "two queues",
         "multi_account": false, "multi_account_seen": "one namespace",
         "restart_keeps_messages": false, "restart_seen": "the queue is gone"},
        {"target": "ghost", "error": "did not answer within 30s"}
      ]}"#;

    #[test]
    fn a_facts_document_renders_beside_the_conformance_of_its_target() {
        let facts = crate::conformance::facts::parse_facts(DOC).unwrap();
        let m = build(&[(
            "m".to_string(),
            run(
                Some("moto"),
                "json",
                &[("a", Verdict::Pass), ("b", Verdict::Fail)],
            ),
        )])
        .unwrap();
        assert_eq!(conformance_of(&m, &facts.targets[0]), Some(0.5));
        assert_eq!(conformance_of(&m, &facts.targets[1]), None);
        let md = render_facts(&m, &facts);
        assert!(
            md.contains("| moto | 5.2.5 | – | – | Apache-2.0 | json, query | 50.0% | 2218 ms | 85 MiB | 88 MiB at 1500 messages (2225 B each) | 46/s (0.45 of its no-op 104/s) | yes (two queues) | no (one namespace) | no (the queue is gone) |"),
            "{md}"
        );
        assert!(md.contains("load average 0.50 before, 0.90 after"), "{md}");
        assert!(md.contains("ghost: did not answer within 30s"), "{md}");
        assert!(md.contains("process group, `sqsprobe bench"), "{md}");
    }

    /// Both RSS cells say which pages they were counted in when the document records it, and
    /// a document from before it was recorded reads as it always did (the test above).
    #[test]
    fn the_rss_cells_say_how_their_pages_were_counted() {
        let m = build(&[(
            "m".to_string(),
            run(Some("moto"), "json", &[("a", Verdict::Pass)]),
        )])
        .unwrap();
        for (small, idle, stored) in [
            (
                "true",
                "85 MiB (4 KiB pages)",
                "88 MiB at 1500 messages (2225 B each, 4 KiB pages)",
            ),
            (
                "false",
                "85 MiB (huge pages allowed)",
                "88 MiB at 1500 messages (2225 B each, huge pages allowed)",
            ),
        ] {
            let doc = DOC.replace(
                r#""bytes_per_message": 2225,"#,
                &format!(r#""bytes_per_message": 2225, "small_pages": {small},"#),
            );
            let facts = crate::conformance::facts::parse_facts(&doc).unwrap();
            assert_eq!(facts.targets[0].small_pages, Some(small == "true"));
            let md = render_facts(&m, &facts);
            assert!(md.contains(&format!("| {idle} | {stored} |")), "{md}");
            assert!(md.contains("load average 0.50 before, 0.90 after"), "{md}");
            assert!(
                md.contains("process group (with transparent huge pages off"),
                "{md}"
            );
        }
    }
}
