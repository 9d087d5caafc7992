//! The evidence format's JSON Schema, generated from the record types (their serde attributes
//! included), so the documented format is the written one.
//!
//! `docs/evidence-schema.json` is this schema, checked in; a unit test fails when they differ
//! (`SQSPROBE_UPDATE_SNAPSHOTS=1 cargo test --lib evidence::schema` writes it anew), and a
//! test of the written evidence validates a real run's file against it.

use super::format::Record;

/// Where the schema is checked in, from the repository root.
pub const SCHEMA_PATH: &str = "docs/evidence-schema.json";

/// The schema of one line of `evidence.jsonl`, as pretty JSON with a trailing newline.
pub fn schema_json() -> String {
    let schema = schemars::schema_for!(Record);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checked-in schema is the one the record types give.
    #[test]
    fn the_checked_in_schema_is_the_generated_one() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(SCHEMA_PATH);
        let generated = schema_json();
        if std::env::var_os("SQSPROBE_UPDATE_SNAPSHOTS").is_some() {
            std::fs::write(&path, &generated).expect("write the schema");
        }
        let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            checked_in == generated,
            "{SCHEMA_PATH} differs from the record types' schema: run \
             `SQSPROBE_UPDATE_SNAPSHOTS=1 cargo test --lib evidence::schema` and review the diff"
        );
    }

    /// Every record of the fixtures' runs is valid JSON for the schema's shape: each type
    /// the schema lists is one the reader knows.
    #[test]
    fn the_schema_names_every_record_type() {
        let text = schema_json();
        for kind in <super::super::format::RecordType as strum::VariantNames>::VARIANTS {
            assert!(
                text.contains(&format!("\"{kind}\"")),
                "the schema does not name `{kind}`"
            );
        }
    }
}
