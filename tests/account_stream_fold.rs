//! The streaming path folds a scrape JSONL into per-series evidence as it is read
//! (`RunReader::with_fold`, what `accountStream` does) instead of keeping its scrapes: its
//! accounting must equal the whole-buffer path's byte for byte on every fixture and example
//! run, and on generated runs of every engine with every fault (resets, conflicts, NaNs,
//! out-of-order scrapes...), whatever the chunking and the order files come in. Thinned under
//! memory pressure, the result says so (`evidence_coarsened`); that every interval still
//! contains the truth is checked by `account_truth.rs` over its generated runs.

mod common;

use kvledger::account::{account_run, account_run_folded, families_read, Policy};
use kvledger::admission::{self, HeapLimit};
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

/// A budget always more than three quarters full: the fold is thinned as far as it goes (with
/// room left for the readers' tables, which are admitted under the budget as they grow).
fn squeezed() -> MemoryBudget {
    MemoryBudget {
        limit: 1 << 30,
        in_use: || 800 << 20,
        ceiling: None,
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

/// An export whose families hold more series than the evidence takes at once from a taken
/// run (`account_run_folded` gives a family of over 4,096 series a quarter at a time, each
/// dropped before the next): the same accounting as the run borrowed whole, also where a
/// label set comes twice (the later series stands) in different quarters.
#[test]
fn a_taken_family_of_many_series_accounts_as_borrowed() {
    let t0: u64 = 1_781_634_703_000_000_000;
    let series = |n: usize, distinct: usize, total: &dyn Fn(usize) -> f64| -> String {
        (0..n)
            .map(|i| {
                let (a, b) = (t0 + (i % 7) as u64 * 1_000_000_000, t0 + 9_000_000_000);
                format!(
                    r#"{{"endpoint_url": "http://h{}:8000/metrics", "labels": {{"engine": "{}"}}, "stats": {{"total": {t:.1}, "rate": 1.0}}, "timeslices": [{{"start_ns": {a}, "end_ns": {b}, "total": {t:.1}}}]}}"#,
                    i % 3,
                    i % distinct,
                    t = total(i)
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let gauges = (0..5_000)
        .map(|i| {
            format!(
                r#"{{"endpoint_url": "http://h{}:8000/metrics", "labels": {{"engine": "{}"}}, "stats": {{"avg": {i}.0, "min": {i}.0, "max": {i}.5}}}}"#,
                i % 3,
                i % 1_700
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let export = format!(
        r#"{{"schema_version": "1.0", "aiperf_version": "0.12.0", "benchmark_id": "x", "metrics": {{
"vllm:prefix_cache_queries": {{"type": "counter", "description": "d", "series": [{}]}},
"vllm:prefix_cache_hits": {{"type": "counter", "description": "d", "series": [{}]}},
"process_start_time_seconds": {{"type": "gauge", "description": "d", "series": [{gauges}]}},
"vllm:kv_cache_usage_perc": {{"type": "gauge", "description": "d", "series": [{gauges}]}}}}}}"#,
        series(9_000, 6_000, &|i| (i * 3 + 1) as f64),
        series(4_097, 4_000, &|i| (i % 5) as f64),
    );
    let files: Files = vec![("server_metrics_export.json".into(), export.into_bytes())];
    let want = whole(&files);
    assert!(want.starts_with('{'), "{want}");
    let got = whole_folded(&files);
    assert!(got == want, "taken:\n{got}\nborrowed:\n{want}");
}

/// No heap in use: admission is decided by the tables' sizes alone.
fn nothing_in_use() -> u64 {
    0
}

/// The same files folded, then accounted under a heap limit (what a stream's budget does after
/// the last byte, `admission`): `None` when a table of series was refused.
fn under_limit(files: &Files, limit: u64) -> Option<String> {
    let inputs = inputs(files);
    let (run, fold) = read_run_folded(&inputs, &options()).expect("read");
    let limit = HeapLimit {
        limit,
        in_use: nothing_in_use,
        ceiling: None,
    };
    admission::under(limit, || account_run_folded(run, fold, &Policy::default()))
        .map(|a| serde_json::to_string(&a).expect("json"))
}

/// Under a heap limit the accounting's tables of series are admitted before they are made: a
/// limit some table passes refuses the run (never an answer from evidence cut short), and a
/// limit every table fits changes nothing. Limits from 1 KB to 64 MB, on a capture of many
/// series (its fold, the evidence's table, an endpoint's mapped series) and on generated runs
/// with a JSON export, a CSV export and scrape JSONL.
#[test]
fn tables_past_a_heap_limit_refuse_the_run_and_a_limit_they_fit_changes_nothing() {
    for (what, files) in &admission_runs() {
        over_limits(what, files, |limit| under_limit(files, limit));
    }
}

/// While a stream is read, the tables its readers grow by series (a capture's label sets and
/// values, the fold's intakes and key tables, a CSV's series and label sets) are admitted under
/// its budget before each growth: a budget some growth passes fails a file with
/// `INPUT_TOO_LARGE` (never a result from evidence cut short), one every growth fits changes
/// nothing. No heap is counted in use, so only admission can refuse (the budget's own check
/// between pushes never does).
#[test]
fn reading_past_a_memory_budget_refuses_a_file_and_a_budget_it_fits_changes_nothing() {
    for (what, files) in &admission_runs() {
        over_limits(what, files, |limit| {
            let budget = MemoryBudget {
                limit,
                in_use: nothing_in_use,
                ceiling: None,
            };
            let got = folded(files, 1 << 16, false, Some(budget));
            (!got.starts_with("error INPUT_TOO_LARGE")).then_some(got)
        });
    }
}

/// `attempt` under limits of 1 KB to 64 MB (`None`: refused): the smallest refuses, the largest
/// gives the whole-buffer result, and once one has given it every larger one does.
fn over_limits(what: &str, files: &Files, mut attempt: impl FnMut(u64) -> Option<String>) {
    let want = whole(files);
    let (mut refused, mut accounted) = (0, 0);
    let mut limit = 1 << 10;
    while limit <= 64 << 20 {
        match attempt(limit) {
            None => {
                assert_eq!(
                    accounted, 0,
                    "{what}: refused at {limit}, after a smaller limit"
                );
                refused += 1;
            }
            Some(got) => {
                assert!(got == want, "{what}, limit {limit}: differs: {got}");
                accounted += 1;
            }
        }
        limit *= 2;
    }
    assert!(
        refused > 0 && accounted > 0,
        "{what}: {refused} refused, {accounted} accounted"
    );
}

/// A capture of 20,000 series and two generated runs (a JSON export, a CSV export, scrape
/// JSONL), for the admission tests above.
fn admission_runs() -> Vec<(String, Files)> {
    let mut capture = String::from("# TYPE vllm:prefix_cache_queries counter\n");
    for i in 0..20_000 {
        capture += &format!(
            "vllm:prefix_cache_queries_total{{engine=\"{i}\",model_name=\"m\"}} {i}.0 1781634703000\n"
        );
    }
    let mut runs: Vec<(String, Files)> = vec![(
        "capture".to_string(),
        vec![("capture.prom".to_string(), capture.into_bytes())],
    )];
    // A folder of each call's own: the tests that call this run in parallel.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp =
        std::env::temp_dir().join(format!("kvledger-admission-{}-{call}", std::process::id()));
    for (n, (json, csv)) in [(true, false), (false, true)].into_iter().enumerate() {
        let spec = SynthSpec {
            topology: Topology {
                agg: 0,
                prefill: 8,
                decode: 8,
            },
            jsonl: true,
            json,
            csv,
            seed: 3 + n as u64,
            ..SynthSpec::default()
        };
        let dir = tmp.join(format!("run{n}"));
        let _ = std::fs::remove_dir_all(&dir);
        generate(&spec, &dir).expect("generate");
        runs.push((format!("json {json} csv {csv}"), common::run_files(&dir)));
    }
    let _ = std::fs::remove_dir_all(&tmp);
    runs
}
