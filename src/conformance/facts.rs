//! Practical facts beside the scores (pure): what `scripts/target-facts` measured of each
//! target — version, how it is installed and started, licence, protocols, start-up to first
//! answer, idle RSS and RSS with stored messages, raw SendMessage throughput against its own
//! no-op ceiling, whether it keeps regions and accounts apart, whether a restart keeps
//! messages — read from its `sqsprobe-facts/1` document and shown with the matrix
//! (`sqsprobe matrix --facts FILE`).

use serde::{Deserialize, Serialize};

use super::matrix::Matrix;
use crate::text::escape::markdown_cell as md;

/// The document's format identifier.
pub const FACTS_FORMAT: &str = "sqsprobe-facts/1";

/// One `scripts/target-facts` run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    pub format: String,
    pub measured_at: String,
    pub cpus: Option<u32>,
    #[serde(default)]
    pub load_average_start: Option<[f64; 3]>,
    #[serde(default)]
    pub load_average_end: Option<[f64; 3]>,
    pub targets: Vec<TargetFacts>,
}

/// The raw bench's SendMessage figures at 16 connections.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct BenchFacts {
    pub send_per_second: Option<f64>,
    pub noop_per_second: Option<f64>,
    /// SendMessage req/s ÷ the same server's no-op req/s.
    pub ceiling_ratio: Option<f64>,
    pub errors: Option<u64>,
    /// Why the bench could not measure it.
    pub error: Option<String>,
}

/// What was measured of one target; a figure that could not be measured is absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct TargetFacts {
    /// `embedded` or a peer of scripts/peers: the name its target profile has.
    pub target: String,
    pub version: Option<String>,
    pub installed_from: Option<String>,
    pub started_with: Option<String>,
    pub licence: Option<String>,
    pub protocols: Vec<String>,
    /// The protocol the figures were measured over.
    pub protocol_measured: Option<String>,
    pub startup_ms: Option<u64>,
    pub idle_rss_kib: Option<u64>,
    pub bench: Option<BenchFacts>,
    pub stored_messages: Option<u64>,
    pub rss_at_messages_kib: Option<u64>,
    pub bytes_per_message: Option<i64>,
    pub fill_error: Option<String>,
    pub multi_region: Option<bool>,
    pub multi_region_seen: Option<String>,
    pub multi_account: Option<bool>,
    pub multi_account_seen: Option<String>,
    pub restart_keeps_messages: Option<bool>,
    pub restart_seen: Option<String>,
    /// A step that failed; the figures before it stand.
    pub error: Option<String>,
}

/// Reads a facts document; the error says what is wrong with it.
pub fn parse_facts(text: &str) -> Result<Facts, String> {
    let facts: Facts =
        serde_json::from_str(text).map_err(|e| format!("not a facts document: {e}"))?;
    if facts.format != FACTS_FORMAT {
        return Err(format!(
            "format {:?} is not {FACTS_FORMAT:?} (written by scripts/target-facts)",
            facts.format
        ));
    }
    Ok(facts)
}

/// The conformance of `target` over the protocol its facts were measured on: the first
/// column whose profile (or, without one, target kind) is its name and whose protocol is that
/// one, else any column of that name.
pub fn conformance_of(m: &Matrix, facts: &TargetFacts) -> Option<f64> {
    let named = |c: &&super::matrix::Column| {
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
            ..
        }) => {
            let mut s = format!("{send:.0}/s");
            if let (Some(noop), Some(r)) = (noop_per_second, ceiling_ratio) {
                s.push_str(&format!(" ({r:.2} of its no-op {noop:.0}/s)"));
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
            let mut s = format!("{} at {n} messages ({b} B each)", mib(rss));
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
        t.idle_rss_kib.map_or_else(|| "–".to_string(), mib),
        stored,
        throughput,
        yes_no(t.multi_region, t.multi_region_seen.as_deref()),
        yes_no(t.multi_account, t.multi_account_seen.as_deref()),
        yes_no(t.restart_keeps_messages, t.restart_seen.as_deref()),
    ]
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

/// The facts section of `matrix.md`.
pub fn render_markdown(m: &Matrix, facts: &Facts) -> String {
    let mut out = format!(
        "\n## Practical facts\n\nMeasured by `scripts/target-facts` on {} ({} CPUs, load \
         average {} before, {} after), one target at a time: a cold start to the first \
         ListQueues answer, RSS of the whole process group, `sqsprobe bench --driver raw \
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
        let facts = parse_facts(DOC).unwrap();
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
        let md = render_markdown(&m, &facts);
        assert!(
            md.contains("| moto | 5.2.5 | – | – | Apache-2.0 | json, query | 50.0% | 2218 ms | 85 MiB | 88 MiB at 1500 messages (2225 B each) | 46/s (0.45 of its no-op 104/s) | yes (two queues) | no (one namespace) | no (the queue is gone) |"),
            "{md}"
        );
        assert!(md.contains("load average 0.50 before, 0.90 after"), "{md}");
        assert!(md.contains("ghost: did not answer within 30s"), "{md}");
    }

    #[test]
    fn other_documents_are_refused_with_why() {
        assert!(
            parse_facts("{}")
                .unwrap_err()
                .contains("not a facts document")
        );
        let other = r#"{"format": "x", "measured_at": "", "cpus": 1, "targets": []}"#;
        assert!(
            parse_facts(other)
                .unwrap_err()
                .contains("is not \"sqsprobe-facts/1\"")
        );
    }
}
