//! The conformance matrix: cases × targets, built from several runs' evidence (pure).
//!
//! Rows are cases grouped by suite file (an area, named by the file's stem so runs made from
//! different folders line up); columns are runs, named by `run_start.target_profile`, else
//! the target kind and endpoint, with the protocol added when it is not `json` and `(virtual
//! clock)` when the run's time was simulated. A cell is the
//! case's verdict in that run; `did_not_finish` when the run selected the case (or started
//! it) but has no `case_end` for it; `not_run` when the run did not select it at all.
//!
//! Each column has a conformance score: passes / cases counted, where the cases counted are
//! every case the run selected (`run_start.cases`, and any other it started) except the
//! unsupported ones. A known divergence is not a pass (it is documented non-conformance), and
//! neither is a case that did not finish: an interrupted run cannot score better by stopping
//! early. A column whose run was interrupted (no `run_end`, or `run_end.interrupted`) is
//! flagged as such.
//!
//! Cases tagged `contested` (behaviours emulators answer in different ways, such as a stale
//! handle's delete on a standard queue) are also listed first, side by side: per target what
//! it did — the answer of each acknowledgement step (DeleteMessage, ChangeMessageVisibility and
//! their batches) and the observed outcome — next to what AWS recorded or documents (the case's
//! `behaviour:` and sources).

use serde::Serialize;

use crate::evidence::Record;
use crate::evidence::format::{RunStart, Verdict};
use crate::evidence::view::{CaseView, RunView};
use crate::suite::area::AREAS;

/// A matrix cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CellState {
    Pass,
    Fail,
    KnownDivergence,
    Inconclusive,
    Unsupported,
    Error,
    /// Selected or started, but no `case_end`: the run stopped first. Counted, not conforming.
    DidNotFinish,
    /// Not selected in this run: not counted.
    NotRun,
}

impl CellState {
    fn from_verdict(v: Verdict) -> CellState {
        match v {
            Verdict::Pass => CellState::Pass,
            Verdict::Fail => CellState::Fail,
            Verdict::KnownDivergence => CellState::KnownDivergence,
            Verdict::Inconclusive => CellState::Inconclusive,
            Verdict::Unsupported => CellState::Unsupported,
            Verdict::Error => CellState::Error,
        }
    }

    /// The word shown in `matrix.md`.
    pub fn word(self) -> &'static str {
        match self {
            CellState::Pass => "pass",
            CellState::Fail => "**fail**",
            CellState::KnownDivergence => "known divergence",
            CellState::Inconclusive => "inconclusive",
            CellState::Unsupported => "unsupported",
            CellState::Error => "**error**",
            CellState::DidNotFinish => "**did not finish**",
            CellState::NotRun => "not run",
        }
    }
}

/// One case on one target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cell {
    pub state: CellState,
    /// The profile note (known divergence reason and reference, or why unsupported), else the
    /// verdict's reason for anything but a pass.
    pub note: Option<String>,
}

/// A case and its cells, one per column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    pub case: String,
    /// The case's title, from the first run that started it.
    pub title: Option<String>,
    /// `semantics` or `validation`, from the first run that started it; `None` for evidence
    /// written before the aspect was recorded (such a row counts in neither aspect's score).
    pub aspect: Option<String>,
    /// Where the case is written (`suite`, line of its `id:`), for links.
    pub suite: Option<String>,
    pub line: Option<u32>,
    pub cells: Vec<Cell>,
}

/// The cases of one area, with each column's score over them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Area {
    /// The area's key ([`AREAS`]), or for a case that names none the suite file's stem, e.g.
    /// `stale-handle`.
    pub area: String,
    /// Its heading: the area's title, else the key.
    pub title: String,
    /// One score per column, over this area's rows.
    pub scores: Vec<Score>,
    pub rows: Vec<Row>,
}

/// Counts and scores for one column.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Score {
    pub pass: u32,
    pub known_divergence: u32,
    pub fail: u32,
    pub inconclusive: u32,
    pub error: u32,
    pub unsupported: u32,
    /// Selected but without a `case_end` (the run stopped first).
    pub did_not_finish: u32,
    pub not_run: u32,
    /// Cases counted: every case the run selected but the unsupported ones (cases that did
    /// not finish included).
    pub run: u32,
    /// `pass / run`: known divergences and unfinished cases count as non-conforming. Null
    /// when nothing was counted.
    pub conformance: Option<f64>,
}

/// One run, shown as a column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    pub name: String,
    pub run_id: String,
    pub target: String,
    pub endpoint: Option<String>,
    pub target_profile: Option<String>,
    pub protocol: String,
    /// The run has no `run_end`, or its `run_end` says it was interrupted: its score counts
    /// what did not finish as not conforming, but it is not a complete measurement.
    pub interrupted: bool,
    pub score: Score,
    /// The score over the cases that check semantics (what a consumer can observe).
    pub semantics: Score,
    /// The score over the cases that check validation (error codes and messages).
    pub validation: Score,
    /// The failing and divergent semantics cases that weigh most ([`surprises`]).
    pub surprises: Vec<Surprise>,
}

/// A semantics case a target does not answer as AWS does: what a team choosing that target
/// should know first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Surprise {
    pub case: String,
    pub title: Option<String>,
    pub area: String,
    pub state: CellState,
    /// The profile's reason (a known divergence) or why the case did not pass.
    pub note: Option<String>,
}

/// A contested behaviour: a case tagged [`CONTESTED_TAG`], what AWS does, and what each
/// target did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Contested {
    pub case: String,
    /// What AWS recorded or documents: the case's `behaviour:`.
    pub behaviour: String,
    /// The case's citations.
    pub sources: Vec<String>,
    /// Per column (`null` where the run did not finish the case).
    pub did: Vec<Option<Did>>,
}

/// What one target did in a contested case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Did {
    pub state: CellState,
    /// Each acknowledgement step's final answer, `DeleteMessage 200` or `DeleteMessage 400
    /// ReceiptHandleIsInvalid`, then the observed outcome, then the first finding of a case that
    /// did not pass; joined by ` · `.
    pub summary: String,
}

/// The tag that puts a case among the contested behaviours.
pub const CONTESTED_TAG: &str = "contested";

/// The whole matrix (`matrix.json` is this, serialized).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Matrix {
    pub format: &'static str,
    pub columns: Vec<Column>,
    /// The contested behaviours, in case order.
    pub contested: Vec<Contested>,
    pub areas: Vec<Area>,
    /// The targets' practical facts, when given (`matrix --facts FILE`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub facts: Option<super::facts::Facts>,
}

/// Identifier written in `matrix.json`.
pub const MATRIX_FORMAT: &str = "sqsprobe-matrix/2";

/// How many surprises each column lists.
pub const MAX_SURPRISES: usize = 5;

/// Why a run cannot be a column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}: evidence has no run_start line")]
pub struct NoRunStart(pub String);

/// The column name of a run: its profile, else `target endpoint`; ` (protocol)` when not json,
/// ` (virtual clock)` when the run's time was simulated (`--clock virtual`), so such a column
/// is never read as a measurement of real time.
pub fn column_name(start: &RunStart) -> String {
    let mut name = match (&start.target_profile, &start.endpoint) {
        (Some(profile), _) => profile.clone(),
        (None, Some(endpoint)) if start.target != "embedded" => {
            format!("{} {endpoint}", start.target)
        }
        (None, _) => start.target.clone(),
    };
    if start.protocol != sqsprobe_facts::sqs::protocol::Protocol::Json {
        name.push_str(&format!(" ({})", start.protocol.as_str()));
    }
    if start.clock.as_deref() == Some("virtual") {
        name.push_str(" (virtual clock)");
    }
    name
}

/// The area of a suite path: its file stem.
fn area_of(suite: &str) -> String {
    let file = suite.rsplit(['/', '\\']).next().unwrap_or(suite);
    file.strip_suffix(".yaml")
        .or_else(|| file.strip_suffix(".yml"))
        .unwrap_or(file)
        .to_string()
}

/// Builds the matrix from runs, given as `(label, records)` where the label (usually the run
/// folder) names a run in errors.
pub fn build(runs: &[(String, Vec<Record>)]) -> Result<Matrix, NoRunStart> {
    let mut columns = Vec::new();
    // (area, case) in first-seen order, across runs.
    let mut order: Vec<(String, String)> = Vec::new();
    let mut views = Vec::new();
    for (label, records) in runs {
        let view = RunView::new(records);
        let start = view.start.ok_or_else(|| NoRunStart(label.clone()))?;
        for case in &view.cases {
            if !order.iter().any(|(_, c)| c == case.id) {
                let area = case
                    .start
                    .and_then(|s| s.area.clone())
                    .or_else(|| case.suite.map(area_of))
                    .unwrap_or_else(|| "(unknown)".to_string());
                order.push((area, case.id.to_string()));
            }
        }
        columns.push(Column {
            name: column_name(start),
            run_id: start.run_id.clone(),
            target: start.target.clone(),
            endpoint: start.endpoint.clone(),
            target_profile: start.target_profile.clone(),
            protocol: start.protocol.as_str().to_string(),
            interrupted: view.interrupted(),
            score: Score::default(),
            semantics: Score::default(),
            validation: Score::default(),
            surprises: Vec::new(),
        });
        views.push(view);
    }
    disambiguate(&mut columns);
    // Known areas in their order of weight, then the others as first seen.
    let rank = |key: &str| {
        AREAS
            .iter()
            .position(|a| a.key == key)
            .unwrap_or(AREAS.len())
    };
    order.sort_by_key(|(area, _)| rank(area));

    let mut areas: Vec<Area> = Vec::new();
    let mut contested = Vec::new();
    for (area, case) in &order {
        let cells: Vec<Cell> = views.iter().map(|view| cell(view.case(case))).collect();
        let start = views
            .iter()
            .find_map(|view| view.case(case).and_then(|c| c.start));
        if let Some(start) = start.filter(|s| s.tags.iter().any(|t| t == CONTESTED_TAG)) {
            contested.push(Contested {
                case: case.clone(),
                behaviour: start.behaviour.trim().to_string(),
                sources: start.sources.clone(),
                did: views
                    .iter()
                    .map(|view| view.case(case).and_then(what_it_did))
                    .collect(),
            });
        }
        let row = Row {
            case: case.clone(),
            title: start.and_then(|s| s.title.clone()),
            aspect: start.and_then(|s| s.aspect.clone()),
            suite: start.map(|s| s.suite.clone()),
            line: start.map(|s| s.line),
            cells,
        };
        let at = match areas.iter().position(|a| &a.area == area) {
            Some(i) => i,
            None => {
                areas.push(Area {
                    area: area.clone(),
                    title: crate::suite::area::area(area)
                        .map_or_else(|| area.clone(), |a| a.title.to_string()),
                    scores: vec![Score::default(); columns.len()],
                    rows: Vec::new(),
                });
                areas.len() - 1
            }
        };
        let area = &mut areas[at];
        for (i, (col, cell)) in columns.iter_mut().zip(&row.cells).enumerate() {
            col.score.count(cell.state);
            area.scores[i].count(cell.state);
            match row.aspect.as_deref() {
                Some("semantics") => col.semantics.count(cell.state),
                Some("validation") => col.validation.count(cell.state),
                _ => {}
            }
            if row.aspect.as_deref() == Some("semantics")
                && matches!(cell.state, CellState::Fail | CellState::KnownDivergence)
                && col.surprises.len() < MAX_SURPRISES
            {
                col.surprises.push(Surprise {
                    case: row.case.clone(),
                    title: row.title.clone(),
                    area: area.title.clone(),
                    state: cell.state,
                    note: cell.note.clone(),
                });
            }
        }
        area.rows.push(row);
    }
    for col in &mut columns {
        col.score.finish();
        col.semantics.finish();
        col.validation.finish();
    }
    for area in &mut areas {
        area.scores.iter_mut().for_each(Score::finish);
    }
    Ok(Matrix {
        format: MATRIX_FORMAT,
        columns,
        contested,
        areas,
        facts: None,
    })
}

/// What a target did in a finished case (see [`Did`]); `None` when the case has no `case_end`.
fn what_it_did(case: &CaseView) -> Option<Did> {
    let end = case.end?;
    let mut parts: Vec<String> = Vec::new();
    let mut last_step = None;
    // The final attempt of each acknowledgement step, in step order.
    let mut answers: Vec<(usize, String)> = Vec::new();
    for call in &case.calls {
        let Some(step) = call.step else { continue };
        if call.phase != crate::evidence::format::Phase::Step
            || !sqsprobe_facts::sqs::operations::acknowledges(&call.action)
        {
            continue;
        }
        let mut answer = call.action.clone();
        match call.http_status {
            Some(status) => answer.push_str(&format!(" {status}")),
            None => answer.push_str(" no answer"),
        }
        if let Some(code) = call.error_code.as_ref().or(call.error_type.as_ref()) {
            answer.push_str(&format!(" {code}"));
        }
        if last_step == Some(step) {
            answers.pop();
        }
        last_step = Some(step);
        answers.push((step, answer));
    }
    parts.extend(answers.into_iter().map(|(_, a)| a));
    if let Some(class) = &end.classification {
        parts.push(class.as_str().replace('_', " "));
    }
    if end.verdict != Verdict::Pass
        && let Some(finding) = end.findings.first()
    {
        parts.push(finding.message.clone());
    }
    Some(Did {
        state: CellState::from_verdict(end.verdict),
        summary: parts.join(" · "),
    })
}

/// The cell of a case in one run: its verdict; `did_not_finish` when the run has it (selected
/// or started) without a `case_end`; `not_run` when the run does not have it.
fn cell(case: Option<&CaseView>) -> Cell {
    match case {
        Some(CaseView { end: Some(end), .. }) => Cell {
            state: CellState::from_verdict(end.verdict),
            note: end
                .profile_note
                .clone()
                .or_else(|| (end.verdict != Verdict::Pass).then(|| end.reason.clone())),
        },
        Some(case) => Cell {
            state: CellState::DidNotFinish,
            note: Some(case.reason()),
        },
        None => Cell {
            state: CellState::NotRun,
            note: None,
        },
    }
}

/// Two runs of the same profile would share a name; add the run id to tell them apart.
fn disambiguate(columns: &mut [Column]) {
    let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
    for col in columns.iter_mut() {
        if names.iter().filter(|n| **n == col.name).count() > 1 {
            col.name = format!("{} [{}]", col.name, col.run_id);
        }
    }
}

impl Score {
    fn count(&mut self, state: CellState) {
        match state {
            CellState::Pass => self.pass += 1,
            CellState::Fail => self.fail += 1,
            CellState::KnownDivergence => self.known_divergence += 1,
            CellState::Inconclusive => self.inconclusive += 1,
            CellState::Unsupported => self.unsupported += 1,
            CellState::Error => self.error += 1,
            CellState::DidNotFinish => self.did_not_finish += 1,
            CellState::NotRun => self.not_run += 1,
        }
    }

    fn finish(&mut self) {
        self.run = self.pass
            + self.known_divergence
            + self.fail
            + self.inconclusive
            + self.error
            + self.did_not_finish;
        if self.run > 0 {
            self.conformance = Some(f64::from(self.pass) / f64::from(self.run));
        }
    }
}

pub fn percent(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_string(), |x| format!("{:.1}%", x * 100.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::markdown::render_markdown;
    use crate::evidence::fixtures::{
        case_end, case_start, run_end, run_start, verdicts_run as run,
    };

    /// A run of one contested case whose stale delete got `answer` and whose observation ended
    /// `class`.
    fn contested_run(profile: &str, answer: (u16, Option<&str>), verdict: Verdict) -> Vec<Record> {
        use crate::evidence::fixtures::call;
        use crate::evidence::format::Phase;
        let mut start = run_start(&["stale"]);
        if let Record::RunStart(s) = &mut start {
            s.target_profile = Some(profile.to_string());
        }
        let mut case = case_start("stale", 10);
        if let Record::CaseStart(c) = &mut case {
            c.tags.push(CONTESTED_TAG.to_string());
        }
        let receive = call("stale", Phase::Step, "ReceiveMessage", 0, 10);
        let mut first = call("stale", Phase::Step, "DeleteMessage", 10, 20);
        first.step = Some(4);
        first.http_status = Some(500);
        let mut retried = first.clone();
        retried.http_status = Some(answer.0);
        retried.error_code = answer.1.map(str::to_string);
        let mut end = case_end("stale", verdict, "why", &[]);
        end.classification = Some(crate::evidence::facts::ClassName::ObservedRedelivery);
        if verdict != Verdict::Pass {
            end.findings.push(crate::evidence::format::Finding {
                step: Some(4),
                line: 20,
                message: "step 5 (delete): expected status 200, got 400".to_string(),
                status: Some(400),
                code: None,
                teardown: false,
            });
        }
        vec![
            start,
            case,
            Record::Call(receive),
            Record::Call(first),
            Record::Call(retried),
            Record::CaseEnd(end),
            run_end(0),
        ]
    }

    #[test]
    fn contested_cases_come_first_with_what_each_target_did() {
        let m = build(&[
            (
                "e".into(),
                contested_run("embedded", (200, None), Verdict::Pass),
            ),
            (
                "m".into(),
                contested_run(
                    "moto",
                    (400, Some("ReceiptHandleIsInvalid")),
                    Verdict::KnownDivergence,
                ),
            ),
            (
                "x".into(),
                run(Some("other"), "json", &[("a", Verdict::Pass)]),
            ),
        ])
        .unwrap();
        assert_eq!(m.contested.len(), 1);
        let c = &m.contested[0];
        assert_eq!(c.behaviour, "DeleteMessage with an old handle may succeed");
        let did: Vec<Option<&str>> = c
            .did
            .iter()
            .map(|d| d.as_ref().map(|d| d.summary.as_str()))
            .collect();
        // Only the final attempt of the delete step counts; receives are not shown.
        assert_eq!(
            did,
            vec![
                Some("DeleteMessage 200 · observed redelivery"),
                Some(
                    "DeleteMessage 400 ReceiptHandleIsInvalid · observed redelivery · step 5 (delete): expected status 200, got 400"
                ),
                None,
            ]
        );
        let md = render_markdown(&m);
        let contested = md.find("## Contested behaviours").expect(&md);
        assert!(contested < md.find("## ack").unwrap(), "first: {md}");
        assert!(
            md.contains("| Case | AWS | embedded | moto | other |\n"),
            "{md}"
        );
        assert!(
            md.contains("| `stale` | DeleteMessage with an old handle may succeed | DeleteMessage 200 · observed redelivery (pass) | DeleteMessage 400 ReceiptHandleIsInvalid · observed redelivery · step 5 (delete): expected status 200, got 400 (known divergence) | not run |"),
            "{md}"
        );
        assert!(
            md.contains("- `stale`: https://docs.aws.amazon.com/"),
            "{md}"
        );
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["contested"][0]["did"][0]["state"], "pass");
        // Without contested cases there is no such section.
        let plain = build(&[("x".into(), run(None, "json", &[("a", Verdict::Pass)]))]).unwrap();
        assert!(!render_markdown(&plain).contains("Contested"));
    }

    #[test]
    fn builds_cells_scores_and_names() {
        let embedded = run(
            None,
            "json",
            &[
                ("a", Verdict::Pass),
                ("b", Verdict::Pass),
                ("c", Verdict::Pass),
            ],
        );
        let moto = run(
            Some("moto"),
            "json",
            &[
                ("a", Verdict::Pass),
                ("b", Verdict::KnownDivergence),
                ("c", Verdict::Unsupported),
            ],
        );
        let query = run(Some("moto"), "query", &[("a", Verdict::Fail)]);
        let m = build(&[
            ("e".to_string(), embedded),
            ("m".to_string(), moto),
            ("q".to_string(), query),
        ])
        .unwrap();
        let names: Vec<&str> = m.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, vec!["embedded", "moto", "moto (query)"]);
        assert_eq!(m.areas.len(), 1);
        assert_eq!(m.areas[0].area, "ack");
        let states: Vec<Vec<CellState>> = m.areas[0]
            .rows
            .iter()
            .map(|r| r.cells.iter().map(|c| c.state).collect())
            .collect();
        use CellState::*;
        assert_eq!(
            states,
            vec![
                vec![Pass, Pass, Fail],
                vec![Pass, KnownDivergence, NotRun],
                vec![Pass, Unsupported, NotRun],
            ]
        );
        let moto = &m.columns[1].score;
        assert_eq!((moto.pass, moto.run, moto.unsupported), (1, 2, 1));
        assert_eq!(moto.conformance, Some(0.5));
        assert_eq!(m.columns[0].score.conformance, Some(1.0));
        assert_eq!(m.columns[2].score.conformance, Some(0.0));

        let md = render_markdown(&m);
        assert!(
            md.contains("| embedded | `run-1` | json | 100.0% (3/3) | – | – | 3 |"),
            "{md}"
        );
        assert!(
            md.contains("| moto | `run-1` | json | 50.0% (1/2) | – | – | 1 | 1 |"),
            "{md}"
        );
        assert!(
            md.contains("\n## ack\n\n| Case | Aspect | embedded | moto | moto (query) |\n"),
            "{md}"
        );
        assert!(
            md.contains("| `c` | – | pass | unsupported [2] | not run |"),
            "{md}"
        );
        assert!(
            md.contains("2. `c` on moto: no move tasks (moto#1)"),
            "{md}"
        );
    }

    #[test]
    fn cases_that_did_not_finish_count_as_not_conforming_and_the_column_is_flagged() {
        // a passes, b started and never ended, c never started, d unsupported; no run_end.
        let mut records = run(
            Some("moto"),
            "json",
            &[("a", Verdict::Pass), ("d", Verdict::Unsupported)],
        );
        records.pop();
        if let Record::RunStart(s) = &mut records[0] {
            s.cases = ["a", "b", "c", "d"].map(str::to_string).to_vec();
        }
        records.push(case_start("b", 20));
        let complete = run(None, "json", &[("a", Verdict::Pass), ("b", Verdict::Pass)]);
        let m = build(&[
            ("cut".to_string(), records),
            ("whole".to_string(), complete),
        ])
        .unwrap();
        let cut = &m.columns[0];
        assert!(cut.interrupted);
        assert!(!m.columns[1].interrupted);
        let s = &cut.score;
        assert_eq!(
            (s.pass, s.did_not_finish, s.unsupported, s.not_run, s.run),
            (1, 2, 1, 0, 3)
        );
        assert_eq!(s.conformance, Some(1.0 / 3.0));
        let cells: Vec<(&str, CellState, CellState)> = m
            .areas
            .iter()
            .flat_map(|a| &a.rows)
            .map(|r| (r.case.as_str(), r.cells[0].state, r.cells[1].state))
            .collect();
        use CellState::*;
        assert_eq!(
            cells,
            vec![
                ("a", Pass, Pass),
                ("b", DidNotFinish, Pass),
                ("d", Unsupported, NotRun),
                // Never started: only its id is known, so its area is too.
                ("c", DidNotFinish, NotRun),
            ]
        );
        assert_eq!(m.columns[1].score.run, 2);

        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["columns"][0]["interrupted"], true);
        assert_eq!(json["columns"][1]["interrupted"], false);
        assert_eq!(json["columns"][0]["score"]["did_not_finish"], 2);
        assert_eq!(
            json["areas"][0]["rows"][1]["cells"][0]["state"],
            "did_not_finish"
        );
        assert_eq!(json["areas"][1]["area"], "(unknown)");

        let md = render_markdown(&m);
        assert!(
            md.contains("| moto **(interrupted)** | `run-1` | json | 33.3% (1/3) |"),
            "{md}"
        );
        assert!(
            md.contains("\n> **Interrupted**: moto. This run stopped"),
            "{md}"
        );
        assert!(
            md.contains("| `c` | – | **did not finish** | not run |"),
            "{md}"
        );
    }

    /// A run of cases given as (id, area, aspect, verdict).
    fn run_with_areas(profile: &str, cases: &[(&str, &str, &str, Verdict)]) -> Vec<Record> {
        let ids: Vec<&str> = cases.iter().map(|c| c.0).collect();
        let mut records = run(Some(profile), "json", &[]);
        if let Record::RunStart(s) = &mut records[0] {
            s.cases = ids.iter().map(|c| c.to_string()).collect();
            s.target = "endpoint".to_string();
        }
        records.pop();
        for (id, area, aspect, verdict) in cases {
            let mut start = case_start(id, 10);
            if let Record::CaseStart(c) = &mut start {
                c.area = Some(area.to_string());
                c.aspect = Some(aspect.to_string());
            }
            records.push(start);
            let mut end = case_end(id, *verdict, "why", &[]);
            if *verdict == Verdict::KnownDivergence {
                end.profile_note = Some(format!("{id} differs (ref)"));
            }
            records.push(Record::CaseEnd(end));
        }
        records.push(run_end(0));
        records
    }

    #[test]
    fn areas_in_order_of_weight_with_scores_aspects_and_surprises() {
        use Verdict::*;
        let cases = [
            ("e1", "errors", "validation", Fail),
            ("b1", "batches", "semantics", KnownDivergence),
            ("l1", "leases", "semantics", Pass),
            ("l2", "leases", "semantics", Fail),
            ("l3", "leases", "validation", KnownDivergence),
            ("h1", "handles", "semantics", KnownDivergence),
            ("x1", "mine", "semantics", Pass),
        ];
        let m = build(&[("1".to_string(), run_with_areas("moto", &cases))]).unwrap();
        let areas: Vec<(&str, &str)> = m
            .areas
            .iter()
            .map(|a| (a.area.as_str(), a.title.as_str()))
            .collect();
        assert_eq!(
            areas,
            vec![
                ("leases", "Leases and visibility"),
                ("handles", "Receipt handles and acknowledgements"),
                ("batches", "Batches"),
                ("errors", "Errors and validation"),
                // An area outside the list keeps its key and comes last.
                ("mine", "mine"),
            ]
        );
        let leases = &m.areas[0].scores[0];
        assert_eq!(
            (
                leases.pass,
                leases.run,
                leases.known_divergence,
                leases.fail
            ),
            (1, 3, 1, 1)
        );
        let col = &m.columns[0];
        assert_eq!((col.semantics.pass, col.semantics.run), (2, 5));
        assert_eq!((col.validation.pass, col.validation.run), (0, 2));
        assert_eq!(col.score.run, 7);
        // Semantics only, heaviest area first; a validation divergence is not a surprise.
        let surprises: Vec<&str> = col.surprises.iter().map(|s| s.case.as_str()).collect();
        assert_eq!(surprises, vec!["l2", "h1", "b1"]);
        assert_eq!(col.surprises[1].note.as_deref(), Some("h1 differs (ref)"));

        let md = render_markdown(&m);
        assert!(
            md.contains("| moto | `run-1` | json | 28.6% (2/7) | 40.0% (2/5) · 2 known · 1 failing | 0.0% (0/2) · 1 known · 1 failing |"),
            "{md}"
        );
        assert!(
            md.contains("| Leases and visibility | 33.3% (1/3) · 1 known · 1 failing |"),
            "{md}"
        );
        assert!(
            md.contains("- title of h1 (`h1`, Receipt handles and acknowledgements; known divergence): h1 differs (ref)"),
            "{md}"
        );
        assert!(
            md.contains("| `l3` | validation | known divergence [1] |"),
            "{md}"
        );
        assert!(!md.contains("same authors"), "no embedded column: {md}");

        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["format"], "sqsprobe-matrix/2");
        assert!(json["columns"][0]["score"].get("accepted").is_none());
        assert_eq!(json["areas"][0]["scores"][0]["pass"], 1);
        assert_eq!(json["columns"][0]["surprises"][0]["case"], "l2");
    }

    #[test]
    fn same_names_get_the_run_id_and_missing_run_start_is_an_error() {
        let a = run(Some("moto"), "json", &[("a", Verdict::Pass)]);
        let m = build(&[("1".to_string(), a.clone()), ("2".to_string(), a)]).unwrap();
        assert_eq!(m.columns[0].name, "moto [run-1]");
        let err = build(&[("dir".to_string(), Vec::new())]).unwrap_err();
        assert_eq!(err.to_string(), "dir: evidence has no run_start line");
    }

    #[test]
    fn column_names_fall_back_to_target_and_endpoint() {
        let Record::RunStart(mut s) = run_start(&[]) else {
            unreachable!()
        };
        s.target_profile = None;
        s.target = "endpoint".to_string();
        s.endpoint = Some("http://localhost:4566".to_string());
        assert_eq!(column_name(&s), "endpoint http://localhost:4566");
        s.target = "embedded".to_string();
        assert_eq!(column_name(&s), "embedded");
        s.protocol = sqsprobe_facts::sqs::protocol::Protocol::Query;
        assert_eq!(column_name(&s), "embedded (query)");
        s.clock = Some("virtual".to_string());
        assert_eq!(column_name(&s), "embedded (query) (virtual clock)");
    }
}
