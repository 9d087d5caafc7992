//! The top level of a suite file: `suite`, `description`, `area`, `cases`.

use std::collections::BTreeMap;
use std::path::Path;

use super::case::decode_case;
use crate::suite::diagnostic::Diagnostic;
use crate::suite::limits::Limits;
use crate::suite::model::*;
use crate::suite::yaml::{DocumentKind, Node, Reader, parse_document};

const SUITE_KEYS: &[&str] = &["suite", "description", "area", "cases"];

const SUITE_FILE: DocumentKind = DocumentKind {
    noun: "suite file",
    empty_hint: "a suite is a mapping with `cases:`; see docs/suite-format.md",
};

/// Parses and validates one suite file. Returns every problem found, not just the first.
pub fn parse_suite(path: &str, source: &str, limits: &Limits) -> Result<Suite, Vec<Diagnostic>> {
    parse_document(path, source, SUITE_FILE, |r, root| {
        decode_suite(r, root, limits)
    })
}

fn decode_suite(r: &mut Reader, root: &Node, limits: &Limits) -> Option<Suite> {
    let f = r.fields(root, root, "the suite", SUITE_KEYS)?;
    let name = match f.get("suite") {
        Some(n) => r.nonempty(n, "`suite`"),
        None => Some(
            Path::new(r.path)
                .file_stem()
                .map_or_else(|| r.path.to_string(), |s| s.to_string_lossy().into_owned()),
        ),
    };
    let description = f
        .get("description")
        .and_then(|n| r.string(n, "`description`"));
    let area = f.get("area").and_then(|n| super::case::decode_area(r, n));
    let mut cases = Vec::new();
    match f.get("cases") {
        None => {
            r.error(root, "the suite needs `cases:`, a list of cases");
        }
        Some(list) => {
            let items = r.seq(list, "cases")?;
            if items.is_empty() {
                r.error(list, "`cases` is empty; a suite needs at least one case");
            }
            let mut ids: BTreeMap<String, Pos> = BTreeMap::new();
            for item in items {
                if let Some(mut case) = decode_case(r, item, limits) {
                    if case.area.is_none() {
                        case.area.clone_from(&area);
                    }
                    if let Some(first) = ids.get(&case.id) {
                        let msg = format!(
                            "duplicate case id `{}`; first used at line {}",
                            case.id, first.line
                        );
                        let key = item.data.as_mapping_get("id").unwrap_or(item);
                        r.error(key, msg);
                    } else {
                        ids.insert(case.id.clone(), case.pos);
                    }
                    cases.push(case);
                }
            }
        }
    }
    Some(Suite {
        path: r.path.to_string(),
        name: name?,
        description,
        area,
        cases,
    })
}
