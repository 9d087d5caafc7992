//! Practical facts beside the scores (pure): what `scripts/target-facts` measured of each
//! target — version, how it is installed and started, licence, protocols, start-up to first
//! answer, idle RSS and RSS with stored messages, raw SendMessage throughput against its own
//! no-op ceiling, whether it keeps regions and accounts apart, whether a restart keeps
//! messages — read from its `sqsprobe-facts/1` document and shown with the matrix
//! (`sqsprobe matrix --facts FILE`; the table is drawn by `markdown.rs`).

use serde::{Deserialize, Serialize};

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
    /// SendMessage req/s ÷ the reference server's (a bare hyper server) in the same bench run;
    /// absent in facts measured before the bench had one.
    #[serde(default)]
    pub reference_ratio: Option<f64>,
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
    /// Whether every process of the target ran with transparent huge pages off, read back
    /// from `/proc` (`THP_enabled: 0`): its RSS figures are then in 4 KiB pages. Where they
    /// are allowed, an allocator's arena may grow in 2 MiB pages and RSS at a given count of
    /// messages moves between runs. Absent in documents written before it was recorded.
    pub small_pages: Option<bool>,
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

#[cfg(test)]
mod tests {
    use super::*;

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
