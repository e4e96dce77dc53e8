//! Discovery over relative paths, as the WASM build does it with dropped files: the sweep
//! fixture's files, given as bytes in any order, give the same runs as the native walker.

use kvledger::read::discover::read_runs;
use kvledger::read::run_dir::discover_runs;
use kvledger::read::{InputFile, RunOptions};
use std::path::Path;

const SWEEP: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sweep");

fn sweep_files() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(SWEEP);
    kvledger::read::run_dir::walk(root)
        .expect("walk")
        .into_iter()
        .map(|rel| {
            let bytes = std::fs::read(root.join(&rel)).expect("read");
            (rel, bytes)
        })
        .collect()
}

#[test]
fn dropped_files_give_the_walkers_runs_in_any_order() {
    let files = sweep_files();
    let native = discover_runs(Path::new(SWEEP)).expect("discover");
    let roots: Vec<&str> = native.runs.iter().map(|r| r.root.as_str()).collect();
    assert_eq!(
        roots,
        [
            "conc1/aiperf_artifacts",
            "conc4/aiperf_artifacts/run_0",
            "conc8",
            "profile_runs/run_0001",
            "profile_runs/run_0002"
        ]
    );
    let summary = |files: &[(String, Vec<u8>)]| {
        let inputs: Vec<InputFile<'_>> = files
            .iter()
            .map(|(n, b)| InputFile::bytes(n.clone(), b))
            .collect();
        let (runs, stray) = read_runs(&inputs, &RunOptions::default());
        let runs: Vec<String> = runs
            .iter()
            .map(|r| match &r.result {
                Ok(run) => format!(
                    "{}: {} read, ignored {:?}, ids {:?}, launch {:?}",
                    r.run,
                    run.files.len(),
                    run.ignored,
                    run.benchmark_ids,
                    run.launch.as_ref().map(|l| l.agg_endpoints.clone())
                ),
                Err(e) => format!("{}: {} in {}", r.run, e.code, e.file),
            })
            .collect();
        (runs, stray)
    };
    let (runs, stray) = summary(&files);
    assert_eq!(runs.len(), 5);
    let run_roots: Vec<&str> = runs
        .iter()
        .map(|r| r.split(':').next().unwrap_or(""))
        .collect();
    assert_eq!(run_roots, roots);
    assert!(runs[0].contains("conc1/server.log"), "{}", runs[0]);
    assert!(runs[0].contains("profile_export_aiperf.csv"), "{}", runs[0]);
    assert!(
        runs[1].contains("localhost:8890"),
        "nearest launch.json: {}",
        runs[1]
    );
    assert_eq!(
        runs[4],
        "profile_runs/run_0002: JSON_SYNTAX in profile_runs/run_0002/server_metrics_export.json"
    );
    assert_eq!(stray.len(), 2, "{stray:?}"); // NOTES.md, ORIGIN.md
    let mut reversed = files.clone();
    reversed.reverse();
    assert_eq!(summary(&reversed), (runs, stray));
}

/// A run 32 folders down is found; a folder 33 down refuses the directory, naming it: it is
/// never skipped without a word (folders below 12 were, and a run there was missing).
#[test]
fn a_deep_run_is_found_and_a_deeper_folder_is_refused_by_name() {
    let top = std::env::temp_dir().join(format!("kvledger-deep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&top);
    let jsonl = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/jsonl/vllm-1-record.server_metrics_export.jsonl"
    );
    let rel32: Vec<String> = (0..32).map(|i| format!("d{i}")).collect();
    let run = top.join(rel32.join("/"));
    std::fs::create_dir_all(&run).expect("mkdir");
    std::fs::copy(jsonl, run.join("server_metrics_export.jsonl")).expect("copy");
    let found = discover_runs(&top).expect("32 folders down is searched");
    let roots: Vec<&str> = found.runs.iter().map(|r| r.root.as_str()).collect();
    assert_eq!(roots, [rel32.join("/")]);

    std::fs::create_dir_all(run.join("d32")).expect("mkdir");
    let err = discover_runs(&top).expect_err("33 folders down is refused");
    assert_eq!(err.code.as_str(), "IO");
    assert!(
        err.message.contains(&format!(
            "`{}/d32` is more than 32 folders below",
            rel32.join("/")
        )),
        "{}",
        err.message
    );
    let _ = std::fs::remove_dir_all(&top);
}
