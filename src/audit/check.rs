//! `sqsprobe check` on an audit folder: the audit judged again from its `evidence.jsonl`
//! alone ([`super::history`]), compared field by field with the `audit.json` it wrote, and its
//! exit code derived again. A folder of trials (`trials.json`) is checked trial by trial.
//!
//! The runner already judges what it reads back from the file, so a difference here means the
//! folder was changed after the audit, or was written by a build that judged otherwise: either
//! way the verdict on record is not one the evidence supports.

use std::path::{Path, PathBuf};

use super::history;
use super::judge::judge;
use super::report;

/// What checking one audit folder found.
#[derive(Debug, Clone)]
pub(crate) struct AuditCheck {
    pub folder: PathBuf,
    /// The audit judged again from the evidence.
    pub audit: super::Audit,
    /// Where `audit.json` differs from the judgement made again, one line per field.
    pub differences: Vec<String>,
    /// Whether it concluded and whether the consumer crashed, as the evidence's `audit_end`
    /// row says: they are the consumer's run, not the judge's, and go into the exit code.
    pub concluded: bool,
    pub crashed: bool,
}

/// Whether `dir` holds an audit (one, or trials of one) rather than a suite run.
pub(crate) fn is_audit_folder(dir: &Path) -> bool {
    dir.join("audit.json").is_file() || dir.join("trials.json").is_file()
}

/// Checks the audit in `dir`, or each of its trials; `Err` when one cannot be re-judged.
pub(crate) fn check(dir: &Path) -> Result<Vec<AuditCheck>, String> {
    if dir.join("audit.json").is_file() {
        return Ok(vec![check_one(dir)?]);
    }
    let mut checks = Vec::new();
    for k in 1.. {
        let trial = dir.join(format!("trial-{k}"));
        if !trial.is_dir() {
            break;
        }
        checks.push(check_one(&trial)?);
    }
    if checks.is_empty() {
        return Err(format!(
            "{} holds trials.json but no trial-1 folder",
            dir.display()
        ));
    }
    Ok(checks)
}

/// The exit code the checked audits come to, judged again.
pub(crate) fn exit_code(checks: &[AuditCheck]) -> i32 {
    let outcomes: Vec<(&super::Audit, bool, bool)> = checks
        .iter()
        .map(|c| (&c.audit, c.concluded, c.crashed))
        .collect();
    report::exit_code(&outcomes)
}

fn check_one(dir: &Path) -> Result<AuditCheck, String> {
    let evidence = dir.join("evidence.jsonl");
    let text = std::fs::read_to_string(&evidence)
        .map_err(|e| format!("cannot read {}: {e}", evidence.display()))?;
    let history = history::read(&text).map_err(|e| format!("{}: {e}", evidence.display()))?;
    let mut audit = judge(&history.log, &history.end);
    if let Some((invocations, facts)) = &history.lambda {
        // The Lambda findings, from the invocations the evidence holds, as the audit made them.
        super::lambda::report::apply(&mut audit, invocations, facts);
    }
    let recorded_path = dir.join("audit.json");
    let recorded: serde_json::Value = std::fs::read_to_string(&recorded_path)
        .map_err(|e| format!("cannot read {}: {e}", recorded_path.display()))
        .and_then(|t| {
            serde_json::from_str(&t)
                .map_err(|e| format!("{} is not JSON: {e}", recorded_path.display()))
        })?;
    let judged = serde_json::to_value(&audit).map_err(|e| e.to_string())?;
    let mut differences = differences(&judged, &recorded);
    // How the consumer's run ended is the evidence's `audit_end` row, not the summary's claim.
    let (concluded, crashed) = ended_row(&text)
        .ok_or_else(|| format!("{}: no `audit_end` row that reads", evidence.display()))?;
    for (name, value) in [("concluded", concluded), ("crashed", crashed)] {
        if recorded["ended"][name].as_bool() != Some(value) {
            differences.push(format!(
                "`ended.{name}`: recorded {}, the evidence gives {value}",
                recorded["ended"][name]
            ));
        }
    }
    Ok(AuditCheck {
        folder: dir.to_path_buf(),
        audit,
        differences,
        concluded,
        crashed,
    })
}

/// Whether the audit concluded and whether the consumer crashed, as the `audit_end` row of
/// the evidence `text` says; `None` without one that reads (the audit did not finish).
fn ended_row(text: &str) -> Option<(bool, bool)> {
    let row: serde_json::Value = text
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|r| r["type"] == "audit_end")?;
    Some((
        row["data"]["concluded"].as_bool()?,
        row["data"]["crashed"].as_bool()?,
    ))
}

/// Each field of the judgement that `recorded` holds otherwise, one line each.
fn differences(judged: &serde_json::Value, recorded: &serde_json::Value) -> Vec<String> {
    let Some(fields) = judged.as_object() else {
        return vec!["the judgement is not an object".into()];
    };
    let short = |v: &serde_json::Value| {
        let text = v.to_string();
        if text.chars().count() > 160 {
            format!("{}…", text.chars().take(160).collect::<String>())
        } else {
            text
        }
    };
    fields
        .iter()
        .filter(|(name, value)| recorded.get(name.as_str()) != Some(value))
        .map(|(name, value)| {
            format!(
                "`{name}`: recorded {}, the evidence gives {}",
                recorded.get(name.as_str()).map_or("nothing".into(), short),
                short(value)
            )
        })
        .collect()
}

/// `check`'s lines for the audits.
pub(crate) fn render(checks: &[AuditCheck]) -> String {
    let mut out = String::new();
    for c in checks {
        let state = if c.differences.is_empty() {
            "agrees"
        } else {
            "DIFFERS"
        };
        out.push_str(&format!(
            "{state:<8} audit {}: {} messages, {} finding{}{}{}\n",
            sqsprobe_facts::text::escape::terminal(&c.folder.display().to_string()),
            c.audit.messages,
            c.audit.findings.len(),
            if c.audit.findings.len() == 1 { "" } else { "s" },
            if c.audit.clean { ", clean" } else { "" },
            if c.crashed {
                "; the consumer crashed"
            } else {
                ""
            }
        ));
        for d in &c.differences {
            out.push_str(&format!(
                "         {}\n",
                sqsprobe_facts::text::escape::terminal(d)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_recorded_otherwise_is_named_with_both_values() {
        let judged = serde_json::json!({"clean": false, "counts": {"lost_work": 1}});
        let recorded = serde_json::json!({"clean": true, "counts": {"lost_work": 1}, "ended": {}});
        assert_eq!(
            differences(&judged, &recorded),
            vec!["`clean`: recorded true, the evidence gives false".to_string()]
        );
        assert!(differences(&judged, &judged).is_empty());
    }

    #[test]
    fn how_the_run_ended_is_read_from_the_last_audit_end_row() {
        let text = [
            r#"{"type":"audit_start","data":{}}"#,
            r#"{"type":"audit_end","data":{"concluded":true,"crashed":true}}"#,
        ]
        .join("\n");
        assert_eq!(ended_row(&text), Some((true, true)));
        assert_eq!(ended_row(r#"{"type":"audit_start","data":{}}"#), None);
        assert_eq!(
            ended_row(r#"{"type":"audit_end","data":{"concluded":true}}"#),
            None,
            "a row without `crashed` does not say how the run ended"
        );
    }
}
