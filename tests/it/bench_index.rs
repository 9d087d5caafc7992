//! docs/bench/README.md, the index of the bench reports kept as evidence: every report in the
//! folder has its row, and every row names a report that is there (`scripts/bench-index`
//! writes it from the files).

use crate::common::root;

#[test]
fn the_bench_index_lists_exactly_the_reports_in_the_folder() {
    let bench = root().join("docs/bench");
    let index = std::fs::read_to_string(bench.join("README.md"))
        .expect("docs/bench/README.md: run scripts/bench-index");
    let mut on_disk: Vec<String> = std::fs::read_dir(&bench)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = index
        .lines()
        .filter_map(|l| l.strip_prefix("| [`"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect();
    listed.sort();
    assert_eq!(
        listed, on_disk,
        "docs/bench/README.md and the folder disagree: run scripts/bench-index"
    );
}
