//! Run assembly and inspection over the bundled example runs (real artifacts; see
//! examples/README.md for origins).

use kvledger::inspect::{inspect_run, WindowCandidateSource};
use kvledger::model::Role;
use kvledger::read::{read_run, ArtifactKind, CaptureMeta, FamilyFilter, InputFile, RunOptions};
use kvledger::ErrorCode;
use std::path::Path;

fn load(dir: &str) -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("example dir") {
            let p = entry.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let name = p.strip_prefix(&root).expect("prefix").display().to_string();
                out.push((name, std::fs::read(&p).expect("read")));
            }
        }
    }
    out
}

fn inputs(files: &[(String, Vec<u8>)]) -> Vec<InputFile<'_>> {
    files
        .iter()
        .map(|(n, b)| InputFile::bytes(n.clone(), b))
        .collect()
}

#[test]
fn vllm_csv_run_with_records_and_launch() {
    let files = load("examples/vllm-mi355x-conc1");
    let run = read_run(&inputs(&files), &RunOptions::default()).expect("run");
    let r = inspect_run(&run);
    assert_eq!(r.contract_version, "kvledger/1");
    assert_eq!(r.endpoints.len(), 1);
    let ep = &r.endpoints[0];
    assert_eq!(ep.endpoint_url, "http://localhost:8889/metrics");
    assert_eq!(ep.host_port, "localhost:8889");
    assert_eq!(ep.engines, vec!["vllm".to_string()]);
    assert!(ep.series > 40, "series {}", ep.series);
    assert!(r.evidence.csv_only);
    assert!(r.evidence.counter_series_with_totals > 0);
    assert_eq!(r.evidence.counter_series_with_timeslices, 0);
    let q = r.requests.as_ref().expect("records");
    assert_eq!((q.profiling, q.warmup, q.records), (195, 1, 196));
    assert!(r
        .window_candidates
        .iter()
        .any(|c| c.source == WindowCandidateSource::ProfileRecords && c.start_ns < c.end_ns));
    let launch = r.launch.as_ref().expect("launch");
    assert_eq!(launch.unified, vec!["localhost:8889".to_string()]);
    assert!(launch.not_scraped.is_empty(), "{:?}", launch.not_scraped);
    assert!(r.files.iter().any(|f| f.kind == ArtifactKind::LaunchFacts));
}

#[test]
fn json_export_with_timeslices() {
    let files = load("examples/vllm-doc-timeslices");
    let run = read_run(&inputs(&files), &RunOptions::default()).expect("run");
    let r = inspect_run(&run);
    assert_eq!(r.server_metrics.len(), 1);
    assert_eq!(r.server_metrics[0].schema_version.as_deref(), Some("1.0"));
    assert!(r.evidence.counter_series_with_timeslices > 0);
    assert!(r
        .window_candidates
        .iter()
        .any(|c| c.source == WindowCandidateSource::TimesliceGrid));
    // first_fetch_ns survives exactly (it exceeds 2^53).
    let text = std::str::from_utf8(&files[0].1).expect("utf8");
    let literal = text
        .split("\"first_fetch_ns\":")
        .nth(1)
        .and_then(|s| s.trim_start().split([',', '\n', '}']).next())
        .expect("literal")
        .trim()
        .to_string();
    assert_eq!(
        r.endpoints[0].first_fetch_ns.map(|n| n.to_string()),
        Some(literal)
    );
}

#[test]
fn captures_with_manifest_and_meta() {
    let files = load("examples/sglang-minimax-conc16-captures");
    let run = read_run(&inputs(&files), &RunOptions::default()).expect("run");
    let r = inspect_run(&run);
    assert_eq!(r.endpoints.len(), 1);
    assert_eq!(
        r.endpoints[0].endpoint_url,
        "http://localhost:30000/metrics"
    );
    assert_eq!(r.endpoints[0].scrapes, 2);
    assert_eq!(r.evidence.untimed_captures, 2);
    assert!(r.endpoints[0].engines.contains(&"sglang".to_string()));

    let mut opts = RunOptions::default();
    for (name, ns) in [
        ("conc16.before.prom", 1_781_000_000_000_000_001u64),
        ("conc16.after.prom", 1_781_000_900_000_000_003),
    ] {
        opts.captures.insert(
            name.to_string(),
            CaptureMeta {
                endpoint_url: Some("http://10.0.0.7:30000/metrics".into()),
                timestamp_ns: Some(ns),
            },
        );
    }
    let r = inspect_run(&read_run(&inputs(&files), &opts).expect("run"));
    assert_eq!(r.evidence.raw_scrapes, 2);
    assert_eq!(
        r.endpoints[0].first_scrape_ns,
        Some(kvledger::wire::EpochNs(1_781_000_000_000_000_001))
    );
    assert_eq!(
        r.endpoints[0].last_scrape_ns,
        Some(kvledger::wire::EpochNs(1_781_000_900_000_000_003))
    );
}

#[test]
fn output_does_not_depend_on_file_order() {
    for dir in [
        "examples/vllm-mi355x-conc1",
        "examples/sglang-minimax-conc16-captures",
    ] {
        let files = load(dir);
        let forward = serde_json::to_string(&inspect_run(
            &read_run(&inputs(&files), &RunOptions::default()).expect("run"),
        ))
        .expect("json");
        let mut rev = files.clone();
        rev.reverse();
        let backward = serde_json::to_string(&inspect_run(
            &read_run(&inputs(&rev), &RunOptions::default()).expect("run"),
        ))
        .expect("json");
        assert_eq!(forward, backward, "{dir}");
    }
}

#[test]
fn family_filter_reaches_every_reader() {
    let files = load("examples/vllm-mi355x-conc1");
    let opts = RunOptions {
        families: FamilyFilter::only([
            "vllm:prompt_tokens_by_source_total",
            "vllm:prefix_cache_hits",
        ]),
        ..RunOptions::default()
    };
    let r = inspect_run(&read_run(&inputs(&files), &opts).expect("run"));
    let names: Vec<&str> = r.families.iter().map(|f| f.canonical.as_str()).collect();
    assert_eq!(
        names,
        vec!["vllm:prefix_cache_hits", "vllm:prompt_tokens_by_source"]
    );
    assert!(r.server_metrics[0].skipped_families > 30);
}

#[test]
fn run_level_errors() {
    let none = read_run(
        &[InputFile::bytes("notes.txt", b"hello")],
        &RunOptions::default(),
    )
    .expect_err("no artifacts");
    assert_eq!(none.code, ErrorCode::NoArtifacts);
    // The error names every file given, in name order, whatever the order given.
    let none = read_run(
        &[
            InputFile::bytes("z/notes.txt", b"hello"),
            InputFile::bytes("a.txt", b"hi"),
        ],
        &RunOptions::default(),
    )
    .expect_err("no artifacts");
    assert_eq!(
        (none.code, none.file.as_str()),
        (ErrorCode::NoArtifacts, "a.txt, z/notes.txt")
    );

    let a = b"{\"schema_version\":\"1.0\",\"summary\":{},\"metrics\":{}}".to_vec();
    let dup = read_run(
        &[
            InputFile::bytes("a/server_metrics_export.json", &a),
            InputFile::bytes("b/server_metrics_export.json", &a),
        ],
        &RunOptions::default(),
    )
    .expect_err("duplicate");
    assert_eq!(dup.code, ErrorCode::DuplicateInput);

    let bad = read_run(
        &[InputFile::bytes(
            "server_metrics_export.json",
            b"{\"metrics\": {,}}",
        )],
        &RunOptions::default(),
    )
    .expect_err("syntax");
    assert_eq!(bad.code, ErrorCode::JsonSyntax);
    assert_eq!(bad.file, "server_metrics_export.json");
    assert!(bad.position.line.is_some());

    let manifest = read_run(
        &[
            InputFile::bytes("captures.json", b"{\"captures\": [{\"file\": 3}]}"),
            InputFile::bytes("x.prom", b"a 1\n"),
        ],
        &RunOptions::default(),
    )
    .expect_err("manifest shape");
    assert_eq!(manifest.code, ErrorCode::JsonShape);
    assert!(manifest.position.json_path.is_some());
}

#[test]
fn roles_named_in_paths_are_hints() {
    let export = br#"{"schema_version":"1.0","summary":{},"metrics":{"vllm:prompt_tokens":{"type":"counter","description":"","series":[
      {"endpoint_url":"http://h:9/prefill/metrics","stats":{"total":10.0,"rate":1.0}},
      {"endpoint_url":"http://h:9/decode/metrics","stats":{"total":10.0,"rate":1.0}}]}}}"#;
    let run = read_run(
        &[InputFile::bytes("server_metrics_export.json", export)],
        &RunOptions::default(),
    )
    .expect("run");
    let r = inspect_run(&run);
    let roles: Vec<Option<Role>> = r.endpoints.iter().map(|e| e.path_role).collect();
    assert_eq!(roles, vec![Some(Role::Decode), Some(Role::Prefill)]);
}
