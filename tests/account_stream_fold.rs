//! The streaming path folds a scrape JSONL into per-series evidence as it is read
//! (`RunReader::with_fold`, what `accountStream` does) instead of keeping its scrapes: its
//! accounting must equal the whole-buffer path's byte for byte on every fixture and example
//! run, and on generated runs of every engine with every fault (resets, conflicts, NaNs,
//! out-of-order scrapes...), whatever the chunking and the order files come in. Thinned under
//! memory pressure, the result says so (`evidence_coarsened`); that every interval still
//! contains the truth is checked by `account_truth.rs` over its generated runs.

mod common;

use kvledger::account::{account_run, account_run_folded, families_read, Policy};
use kvledger::read::discover::group_runs;
use kvledger::read::run::{MemoryBudget, RunReader};
use kvledger::read::{read_run, read_run_folded, InputFile, RunOptions};
use kvledger::synth::{generate, Engine, Fault, SynthSpec, Topology};
use std::path::Path;

type Files = Vec<(String, Vec<u8>)>;

fn options() -> RunOptions {
    RunOptions {
        families: families_read(),
        ..RunOptions::default()
    }
}

/// The files as whole-buffer inputs.
fn inputs(files: &Files) -> Vec<InputFile<'_>> {
    files
        .iter()
        .map(|(n, b)| InputFile::bytes(n.clone(), b))
        .collect()
}

/// The accounting (or the error) as JSON text.
fn whole(files: &Files) -> String {
    let inputs = inputs(files);
    match read_run(&inputs, &options()) {
        Ok(run) => serde_json::to_string(&account_run(&run, &Policy::default())).unwrap(),
        Err(e) => format!("error {} {}", e.code.as_str(), e.file),
    }
}

/// The same files pushed in `chunk`-byte pieces into a folding reader, `reversed` or not.
fn folded(files: &Files, chunk: usize, reversed: bool, budget: Option<MemoryBudget>) -> String {
    let mut reader = RunReader::new(&options()).with_fold();
    if let Some(b) = budget {
        reader = reader.with_memory_budget(b);
    }
    let order: Vec<&(String, Vec<u8>)> = if reversed {
        files.iter().rev().collect()
    } else {
        files.iter().collect()
    };
    for (name, bytes) in order {
        reader.begin_file(name);
        for c in bytes.chunks(chunk) {
            if !reader.push(c) {
                break;
            }
        }
        reader.end_file();
    }
    match reader.finish_folded() {
        Ok((run, fold)) => {
            serde_json::to_string(&account_run_folded(run, fold, &Policy::default())).unwrap()
        }
        Err(e) => format!("error {} {}", e.code.as_str(), e.file),
    }
}

fn files_under(root: &Path, names: &[String]) -> Files {
    names
        .iter()
        .map(|n| (n.clone(), std::fs::read(root.join(n)).expect("read")))
        .collect()
}

/// The same files given whole to `read_run_folded` (one push each: a folding reader is then
/// fed it in pieces, each folded before the next is read).
fn whole_folded(files: &Files) -> String {
    let inputs = inputs(files);
    match read_run_folded(&inputs, &options()) {
        Ok((run, fold)) => {
            serde_json::to_string(&account_run_folded(run, fold, &Policy::default())).unwrap()
        }
        Err(e) => format!("error {} {}", e.code.as_str(), e.file),
    }
}

fn assert_same(what: &str, files: &Files) {
    let want = whole(files);
    let got = whole_folded(files);
    assert!(
        got == want,
        "{what}: whole buffers folded differ:\nwhole:  {want}\nfolded: {got}"
    );
    for (chunk, reversed) in [(1 << 20, false), (4093, true), (65537, false)] {
        let got = folded(files, chunk, reversed, None);
        assert!(
            got == want,
            "{what}: folded in chunks of {chunk} (reversed: {reversed}) differs:\nwhole:  {want}\nfolded: {got}"
        );
    }
}

#[test]
fn every_fixture_run_accounts_the_same_folded() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let paths: Vec<String> = common::fixture_files()
        .iter()
        .filter_map(|p| p.strip_prefix(root).ok())
        .map(|p| p.display().to_string())
        .collect();
    let runs = group_runs(&paths).runs;
    let mut with_scrapes = 0;
    for run in &runs {
        let files = files_under(root, &run.files);
        if files.iter().any(|(n, _)| n.ends_with(".jsonl")) {
            with_scrapes += 1;
        }
        // The run's files by their names inside the run, as a caller would give them.
        let local: Files = files
            .into_iter()
            .map(|(n, b)| {
                let inside = n
                    .strip_prefix(&run.root)
                    .unwrap_or(&n)
                    .trim_start_matches('/')
                    .to_string();
                (inside, b)
            })
            .collect();
        assert_same(&run.root, &local);
    }
    assert!(runs.len() > 20, "only {} runs found", runs.len());
    assert!(with_scrapes > 5, "only {with_scrapes} runs with a JSONL");
}

#[test]
fn generated_runs_with_every_fault_account_the_same_folded() {
    let tmp = std::env::temp_dir().join(format!("kvledger-fold-{}", std::process::id()));
    let mut n = 0;
    for engine in Engine::ALL {
        for fault in Fault::ALL {
            let spec = SynthSpec {
                engine,
                topology: Topology {
                    agg: 0,
                    prefill: 1,
                    decode: 1,
                },
                faults: vec![fault],
                seed: 7 + n,
                duration_s: 20.0,
                jsonl: true,
                json: true,
                ..SynthSpec::default()
            };
            let dir = tmp.join(format!("run{n}"));
            let _ = std::fs::remove_dir_all(&dir);
            generate(&spec, &dir).expect("generate");
            let files = common::run_files(&dir);
            assert_same(&format!("{engine:?} {fault:?}"), &files);
            n += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(n > 50);
}

/// Files of over 1 MiB: a whole buffer is folded piece by piece (1 MiB), the same result.
#[test]
fn a_large_run_given_whole_accounts_the_same_folded() {
    let dir = std::env::temp_dir().join(format!("kvledger-fold-large-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let spec = SynthSpec {
        jsonl: true,
        target_bytes: Some(6_000_000),
        ..SynthSpec::default()
    };
    generate(&spec, &dir).expect("generate");
    let files = common::run_files(&dir);
    let sizes: Vec<(&str, usize)> = files.iter().map(|(n, b)| (n.as_str(), b.len())).collect();
    let big = |suffix: &str| {
        sizes
            .iter()
            .any(|(n, len)| n.ends_with(suffix) && *len > 1 << 20)
    };
    assert!(
        big("server_metrics_export.jsonl") && big("profile_export.jsonl"),
        "{sizes:?}"
    );
    assert_same("6 MB synth run", &files);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A budget always three quarters full: the fold is thinned as far as it goes.
fn squeezed() -> MemoryBudget {
    MemoryBudget {
        limit: 1000,
        in_use: || 800,
    }
}

#[test]
fn a_thinned_run_says_so_and_an_unthinned_one_does_not() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/synth/vllm-agg-clean");
    let files = common::run_files(&dir);
    assert!(files.iter().any(|(n, _)| n.ends_with(".jsonl")));
    let plain = folded(&files, 65536, false, None);
    assert!(!plain.contains("evidence_coarsened"));
    let thin = folded(&files, 65536, false, Some(squeezed()));
    assert!(thin.contains("\"evidence_coarsened\""), "{thin}");
    // Reading went on to the end: the run was accounted, not refused.
    assert!(thin.contains("\"contract_version\""), "{thin}");
}
