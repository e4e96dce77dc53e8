//! docs/validate.md and the README list every verdict code and every limit as the code
//! defines them (kind, outcome, default).

use kvledger::validate::{UploadCode, UploadLimits, LIMIT_NAMES};
use std::path::PathBuf;

fn read(rel: &str) -> String {
    std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)).expect(rel)
}

#[test]
fn every_code_is_documented_with_its_kind_and_outcome() {
    let doc = read("docs/validate.md");
    for code in UploadCode::ALL {
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{}` |", code.as_str())))
            .unwrap_or_else(|| panic!("{} has no row in docs/validate.md", code.as_str()));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        match code.outcome() {
            Some(o) => {
                assert_eq!(cells[2], "error", "{row}");
                assert_eq!(cells[3], format!("`{}`", o.as_str()), "{row}");
            }
            None => assert_eq!((cells[2], cells[3]), ("warning", ""), "{row}"),
        }
    }
    let rows = doc
        .lines()
        .filter(|l| l.starts_with("| `") && l.contains("| error |") || l.contains("| warning |"))
        .count();
    assert_eq!(
        rows,
        UploadCode::ALL.len(),
        "docs/validate.md lists codes that do not exist"
    );
}

#[test]
fn every_limit_is_documented_with_its_default() {
    let d = UploadLimits::default();
    for doc in [read("docs/validate.md"), read("README.md")] {
        for name in LIMIT_NAMES {
            let row = doc
                .lines()
                .find(|l| l.starts_with(&format!("| `{name}` |")))
                .unwrap_or_else(|| panic!("{name} has no row"));
            let default = d.get(name).expect("known").to_string();
            assert!(
                row.split('|')
                    .nth(2)
                    .is_some_and(|c| c.trim().starts_with(&default)),
                "{name}: {row}"
            );
        }
    }
}
