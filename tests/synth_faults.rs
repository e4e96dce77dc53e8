//! `kvledger synth`: the contract-r2 faults. Each one generates deterministically, its
//! artifacts show the fault (the files are parsed and checked directly, not through the
//! readers, which the faults are meant to challenge) and its truth states the expected
//! status and reasons. Also: a reset in every kind of server evidence, and one
//! `benchmark_id` in every file of a normal run.

use kvledger::synth::{generate, Engine, Fault, Schema, SynthSpec, Topology};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kvledger-synthf-{}-{}", std::process::id(), name));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn spec(engine: Engine, topo: &str, faults: &[Fault]) -> SynthSpec {
    SynthSpec {
        engine,
        topology: Topology::parse(topo).unwrap(),
        faults: faults.to_vec(),
        duration_s: 10.0,
        concurrency: 4,
        seed: 11,
        ..SynthSpec::default()
    }
}

fn art(dir: &Path, name: &str) -> PathBuf {
    dir.join("aiperf_artifacts").join(name)
}

fn json_file(p: &Path) -> Value {
    let text = std::fs::read(p).unwrap_or_else(|_| panic!("{} missing", p.display()));
    serde_json::from_slice(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn jsonl(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap_or_else(|_| panic!("{} missing", p.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn all_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for sub in [dir.to_path_buf(), dir.join("aiperf_artifacts")] {
        for e in std::fs::read_dir(&sub).unwrap().flatten() {
            if e.path().is_file() {
                let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

/// Generate twice into two directories; the files must be byte-identical. Returns one.
fn generate_twice(s: &SynthSpec, name: &str) -> PathBuf {
    let (a, b) = (tmp(&format!("{name}-a")), tmp(&format!("{name}-b")));
    generate(s, &a).expect("generate");
    generate(s, &b).expect("generate");
    let (fa, fb) = (all_files(&a), all_files(&b));
    assert_eq!(fa.keys().collect::<Vec<_>>(), fb.keys().collect::<Vec<_>>());
    for (k, v) in &fa {
        assert!(
            v == &fb[k],
            "{name}: {k} differs between two runs of one seed"
        );
    }
    let _ = std::fs::remove_dir_all(&b);
    a
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str().map(String::from))
        .collect()
}

/// The truth's expectation: status, and the reasons that must be among its reasons.
fn expect(t: &Value, status: &str, reasons: &[&str]) {
    let e = &t["expected"];
    assert_eq!(e["status"], status, "{e}");
    let got = strs(&e["reasons"]);
    for r in reasons {
        assert!(got.iter().any(|g| g == r), "missing {r} in {e}");
    }
    assert_eq!(e["pricing_eligible"], status == "VALID_COMPLETE");
}

fn window(t: &Value) -> (u64, u64) {
    (
        t["window"]["start_ns"].as_u64().unwrap(),
        t["window"]["end_ns"].as_u64().unwrap(),
    )
}

/// URL of the first endpoint the truth gives `role`.
fn url_of(t: &Value, role: &str) -> String {
    t["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["role"] == role)
        .map(|e| e["endpoint_url"].as_str().unwrap().to_string())
        .unwrap()
}

fn first_priced(t: &Value) -> String {
    let eps = t["endpoints"].as_array().unwrap();
    eps.iter()
        .find(|e| e["role"] == "prefill" || e["role"] == "unified")
        .map(|e| e["endpoint_url"].as_str().unwrap().to_string())
        .unwrap()
}

/// Sum of a JSONL sample family's scalar values (all label sets).
fn sample_sum(line: &Value, fam: &str) -> Option<f64> {
    let ss = line["metrics"][fam].as_array()?;
    Some(ss.iter().filter_map(|s| s["value"].as_f64()).sum())
}

const PROMPT: &str = "vllm:prompt_tokens";

#[test]
fn conflicting_exports_disagree_with_the_scrapes() {
    let dir = generate_twice(
        &spec(Engine::Vllm, "agg", &[Fault::ConflictingExports]),
        "conflict",
    );
    let t = json_file(&dir.join("truth.json"));
    expect(&t, "INVALID_COUNTER", &["evidence_conflict"]);
    let ep = first_priced(&t);
    let (p0, p1) = window(&t);
    // The raw scrapes' widest increase over the window...
    let lines: Vec<Value> = jsonl(&art(&dir, "server_metrics_export.jsonl"))
        .into_iter()
        .filter(|l| l["endpoint_url"] == ep.as_str())
        .collect();
    let ts = |l: &Value| l["timestamp_ns"].as_u64().unwrap();
    let before = lines.iter().rev().find(|l| ts(l) <= p0).unwrap();
    let after = lines.iter().find(|l| ts(l) >= p1).unwrap();
    let raw_hi = sample_sum(after, PROMPT).unwrap() - sample_sum(before, PROMPT).unwrap();
    // ...is below what the JSON export's in-window slices alone already count.
    let js = json_file(&art(&dir, "server_metrics_export.json"));
    let series = js["metrics"][PROMPT]["series"].as_array().unwrap();
    let s = series
        .iter()
        .find(|s| s["endpoint_url"] == ep.as_str())
        .unwrap();
    let slices = s["timeslices"].as_array().unwrap();
    let inner: f64 = slices[1..slices.len() - 1]
        .iter()
        .map(|x| x["total"].as_f64().unwrap())
        .sum();
    assert!(inner > raw_hi, "json interior {inner} vs raw hi {raw_hi}");
    // The truth keeps the true counters: the raw increase bounds them.
    let truth_prompt = t["roles"]["unified"]["canonical"]["prompt"]
        .as_f64()
        .unwrap();
    assert!(truth_prompt <= raw_hi);
    let _ = std::fs::remove_dir_all(&dir);
}

/// CSV rows (counter section) as maps of column name to cell.
fn csv_counters(p: &Path) -> Vec<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(p).unwrap();
    let mut rows = Vec::new();
    let mut header: Option<Vec<String>> = None;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.starts_with('#') || line.is_empty() {
            header = None;
            continue;
        }
        let cells: Vec<String> = line
            .split(',')
            .map(|c| c.trim_matches('"').into())
            .collect();
        match &header {
            None => header = Some(cells),
            Some(h) => {
                let row: BTreeMap<String, String> = h.iter().cloned().zip(cells).collect();
                if row.get("Type").map(String::as_str) == Some("counter") {
                    rows.push(row);
                }
            }
        }
    }
    rows
}

#[test]
fn csv_totals_disagree_with_json() {
    let dir = generate_twice(
        &spec(Engine::Sglang, "agg", &[Fault::CsvJsonDisagree]),
        "csvjson",
    );
    let t = json_file(&dir.join("truth.json"));
    expect(&t, "INVALID_COUNTER", &["evidence_conflict"]);
    let js = json_file(&art(&dir, "server_metrics_export.json"));
    let rows = csv_counters(&art(&dir, "server_metrics_export.csv"));
    let fam = "sglang:prompt_tokens";
    let json_total: f64 = js["metrics"][fam]["series"].as_array().unwrap()[0]["stats"]["total"]
        .as_f64()
        .unwrap();
    let csv_total: f64 = rows
        .iter()
        .find(|r| r["Metric"] == fam)
        .map(|r| r["total"].parse().unwrap())
        .unwrap();
    assert!(
        (json_total - csv_total).abs() > 1.0,
        "json {json_total} csv {csv_total}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn restart_unseen_shows_only_in_the_process_start_time() {
    for engine in [Engine::Vllm, Engine::Sglang, Engine::Atom] {
        let dir = generate_twice(
            &spec(engine, "agg", &[Fault::RestartUnseen]),
            &format!("unseen-{}", engine.as_str()),
        );
        let t = json_file(&dir.join("truth.json"));
        expect(&t, "INVALID_COUNTER", &["counter_reset"]);
        let (p0, p1) = window(&t);
        let ep = first_priced(&t);
        let js = json_file(&art(&dir, "server_metrics_export.json"));
        let kind = |fam: &str| js["metrics"][fam]["type"].as_str().map(String::from);
        let mut last: BTreeMap<String, f64> = BTreeMap::new();
        let mut starts = Vec::new();
        for l in jsonl(&art(&dir, "server_metrics_export.jsonl")) {
            if l["endpoint_url"] != ep.as_str() {
                continue;
            }
            for (fam, ss) in l["metrics"].as_object().unwrap() {
                for s in ss.as_array().unwrap() {
                    if fam == "process_start_time_seconds" {
                        let v = s["value"].as_f64().unwrap();
                        if starts.last() != Some(&v) {
                            starts.push(v);
                        }
                        continue;
                    }
                    if !matches!(kind(fam).as_deref(), Some("counter" | "histogram")) {
                        continue;
                    }
                    let v = s["value"].as_f64().or(s["count"].as_f64()).unwrap();
                    let key = format!("{fam}{}", s["labels"]);
                    if let Some(prev) = last.insert(key.clone(), v) {
                        assert!(v >= prev, "{}: {key} decreased", engine.as_str());
                    }
                }
            }
        }
        assert_eq!(starts.len(), 2, "{}: {starts:?}", engine.as_str());
        let restart_ns = (starts[1] * 1e9) as u64;
        assert!(restart_ns > p0 && restart_ns < p1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn zero_traffic_has_no_profiling_records_and_flat_counters() {
    let dir = generate_twice(&spec(Engine::Trtllm, "agg", &[Fault::ZeroTraffic]), "zero");
    let t = json_file(&dir.join("truth.json"));
    expect(
        &t,
        "WINDOW_UNRESOLVED",
        &["no_prompt_in_window", "no_request_records"],
    );
    assert!(t["rates"]["overall"].is_null() && t["rates"]["gpu"].is_null());
    assert_eq!(t["requests"]["profiling_records"], 0);
    let recs = jsonl(&art(&dir, "profile_export.jsonl"));
    assert!(!recs.is_empty());
    assert!(recs
        .iter()
        .all(|r| r["metadata"]["benchmark_phase"] == "warmup"));
    let (p0, p1) = window(&t);
    let js = json_file(&art(&dir, "server_metrics_export.json"));
    let ptr = &js["summary"]["phase_time_ranges"]["profiling"];
    assert_eq!(ptr["start_ns"].as_u64(), Some(p0));
    let inside: Vec<f64> = jsonl(&art(&dir, "server_metrics_export.jsonl"))
        .iter()
        .filter(|l| (p0..=p1).contains(&l["timestamp_ns"].as_u64().unwrap()))
        .filter_map(|l| sample_sum(l, "trtllm_prompt_tokens"))
        .collect();
    // An idle server's scrapes repeat: AIPerf keeps only the 1.1 boundary snapshots.
    assert!(inside.len() >= 2 && inside.iter().all(|v| *v == inside[0]));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every `"<fam>": {` block of the JSON export's `metrics` object (not `warmup_metrics`).
fn family_blocks<'a>(text: &'a str, fam: &str) -> Vec<&'a str> {
    let start = text.find("\n  \"metrics\": {").unwrap();
    let end = text.find("\n  \"warmup_metrics\": {").unwrap_or(text.len());
    let text = &text[start..end];
    let key = format!("\n    \"{fam}\": {{");
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(&key) {
        let start = from + i;
        let end = text[start + 1..]
            .find("\n    }")
            .map(|j| start + 1 + j)
            .unwrap();
        out.push(&text[start..end]);
        from = end;
    }
    out
}

#[test]
fn duplicate_family_identical_and_conflicting() {
    for (f, same) in [
        (Fault::DuplicateFamily, true),
        (Fault::DuplicateFamilyConflict, false),
    ] {
        let dir = generate_twice(&spec(Engine::Atom, "agg", &[f]), f.as_str());
        let t = json_file(&dir.join("truth.json"));
        let text = std::fs::read_to_string(art(&dir, "server_metrics_export.json")).unwrap();
        let blocks = family_blocks(&text, "atom:prefix_cache_cached_tokens");
        assert_eq!(blocks.len(), 2, "{f}");
        assert_eq!(blocks[0] == blocks[1], same, "{f}");
        if same {
            expect(&t, "VALID_COMPLETE", &[]);
            assert!(strs(&t["expected"]["info"]).contains(&"duplicate_family_merged".into()));
            assert!(t["expected"].get("read_error").is_none());
        } else {
            assert_eq!(t["expected"]["read_error"], "DUPLICATE_KEY");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn swapped_launch_lists_and_worker_shapes() {
    for engine in Engine::ALL {
        let dir = generate_twice(
            &spec(engine, "agg", &[Fault::SwappedLaunch]),
            &format!("swap-{}", engine.as_str()),
        );
        let t = json_file(&dir.join("truth.json"));
        expect(&t, "ROLES_UNRESOLVED", &["role_shape_conflict"]);
        let (prefill, decode) = (url_of(&t, "prefill"), url_of(&t, "decode"));
        let launch = json_file(&dir.join("launch.json"));
        let hp = |u: &str| u.split('/').nth(2).unwrap().to_string();
        assert_eq!(strs(&launch["prefill_endpoints"]), vec![hp(&decode)]);
        assert_eq!(strs(&launch["decode_endpoints"]), vec![hp(&prefill)]);
        let text = std::fs::read_to_string(art(&dir, "server_metrics_export.json")).unwrap();
        for role_label in ["engine_role", "dynamo_component", "disaggregation_mode"] {
            assert!(!text.contains(&format!("\"{role_label}\"")), "{role_label}");
        }
        // SGLang's `engine_type` states a role (TensorRT-LLM's names the engine).
        if engine == Engine::Sglang {
            assert!(!text.contains("\"engine_type\""));
        }
        // Real disaggregated workers: the prefill generates ~1 token per request, the decode
        // the whole output.
        let js = json_file(&art(&dir, "server_metrics_export.json"));
        let (gen, reqs) = match engine {
            Engine::Sglang => ("sglang:generation_tokens", "sglang:num_requests"),
            Engine::Trtllm => ("trtllm_generation_tokens", "trtllm_request_success"),
            Engine::Atom => ("atom:generation_tokens", "atom:requests_finished"),
            _ => ("vllm:generation_tokens", "vllm:request_success"),
        };
        let total = |fam: &str, url: &str| -> f64 {
            js["metrics"][fam]["series"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["endpoint_url"] == url)
                .map(|s| s["stats"]["total"].as_f64().unwrap())
                .sum()
        };
        let (pg, pr) = (total(gen, &prefill), total(reqs, &prefill));
        let (dg, dr) = (total(gen, &decode), total(reqs, &decode));
        assert!(pr > 0.0 && dr > 0.0);
        assert!(pg <= 1.5 * pr, "prefill {pg} tokens / {pr} requests");
        assert!(dg >= 20.0 * dr, "decode {dg} tokens / {dr} requests");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

fn csv_benchmark_id(dir: &Path) -> String {
    std::fs::read_to_string(art(dir, "server_metrics_export.csv"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("# benchmark_id: ").map(String::from))
        .unwrap()
}

#[test]
fn benchmark_ids_agree_in_normal_runs_and_differ_under_the_fault() {
    for (faults, same) in [(vec![], true), (vec![Fault::BenchmarkMismatch], false)] {
        let dir = generate_twice(&spec(Engine::Vllm, "1P1D", &faults), &format!("bid-{same}"));
        let js = json_file(&art(&dir, "server_metrics_export.json"));
        let sum = json_file(&art(&dir, "profile_export_aiperf.json"));
        assert_eq!(js["benchmark_id"].as_str().unwrap(), csv_benchmark_id(&dir));
        assert_eq!(js["benchmark_id"] == sum["benchmark_id"], same);
        let t = json_file(&dir.join("truth.json"));
        if same {
            expect(&t, "VALID_COMPLETE", &[]);
        } else {
            expect(&t, "REQUEST_SCOPE_UNRESOLVED", &["benchmark_mismatch"]);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn records_outside_the_phase_range() {
    let mut s = spec(Engine::Sglang, "agg", &[Fault::RecordsOutsideWindow]);
    s.schema = Schema::V1_0; // forced back to 1.1: the window must be the phase range
    let dir = generate_twice(&s, "outside");
    let t = json_file(&dir.join("truth.json"));
    expect(&t, "REQUEST_SCOPE_UNRESOLVED", &["records_outside_window"]);
    let js = json_file(&art(&dir, "server_metrics_export.json"));
    assert_eq!(js["schema_version"], "1.1");
    let end = js["summary"]["phase_time_ranges"]["profiling"]["end_ns"]
        .as_u64()
        .unwrap();
    let late = jsonl(&art(&dir, "profile_export.jsonl"))
        .iter()
        .filter(|r| r["metadata"]["benchmark_phase"] == "profiling")
        .filter(|r| r["metadata"]["request_end_ns"].as_u64().unwrap() > end)
        .count();
    assert!(late > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn duplicate_timestamp_two_values() {
    for engine in [Engine::Vllm, Engine::Trtllm] {
        let mut s = spec(engine, "agg", &[Fault::DuplicateTimestamp]);
        s.jsonl = false; // forced back on
        let dir = generate_twice(&s, &format!("dupts-{}", engine.as_str()));
        let t = json_file(&dir.join("truth.json"));
        expect(&t, "INVALID_COUNTER", &["evidence_conflict"]);
        let ep = first_priced(&t);
        let mut seen: BTreeMap<u64, Value> = BTreeMap::new();
        let mut doubled = 0;
        for l in jsonl(&art(&dir, "server_metrics_export.jsonl")) {
            if l["endpoint_url"] != ep.as_str() {
                continue;
            }
            let ts = l["timestamp_ns"].as_u64().unwrap();
            if let Some(prev) = seen.insert(ts, l["metrics"].clone()) {
                assert_ne!(prev, l["metrics"]);
                doubled += 1;
            }
        }
        assert_eq!(doubled, 1, "{}", engine.as_str());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn prefix_caching_disabled_reports_zero_hits() {
    for engine in [Engine::Sglang, Engine::Trtllm] {
        let mut s = spec(engine, "agg", &[Fault::PrefixCachingDisabled]);
        s.tier_cpu = true; // forced off
        let dir = generate_twice(&s, &format!("nopc-{}", engine.as_str()));
        let t = json_file(&dir.join("truth.json"));
        expect(&t, "VALID_COMPLETE", &[]);
        assert!(strs(&t["expected"]["info"]).contains(&"prefix_caching_disabled".into()));
        assert_eq!(t["rates"]["overall"].as_f64(), Some(0.0));
        assert_eq!(t["expected"]["cpu_component"], "not_offloaded");
        let launch = json_file(&dir.join("launch.json"));
        assert_eq!(launch["enable_prefix_caching"], "False");
        let hit_fam = match engine {
            Engine::Sglang => "sglang:cached_tokens",
            _ => "trtllm_prompt_cached_tokens",
        };
        if engine == Engine::Trtllm {
            let text = std::fs::read_to_string(art(&dir, "server_metrics_export.json")).unwrap();
            assert!(text.contains("\"enable_block_reuse\": \"False\""));
        }
        let lines = jsonl(&art(&dir, "server_metrics_export.jsonl"));
        let last = lines.last().unwrap();
        // Exported, and 0.
        assert_eq!(sample_sum(last, hit_fam), Some(0.0), "{}", engine.as_str());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn counter_reset_in_every_evidence_kind() {
    // (schema, json, csv, jsonl)
    let kinds = [
        (Schema::V1_1, true, true, false),
        (Schema::V1_0, true, false, false),
        (Schema::V1_1, false, true, false),
        (Schema::V1_1, false, false, true),
        (Schema::V1_0, false, false, true),
    ];
    for (i, (schema, json, csv, jl)) in kinds.into_iter().enumerate() {
        let mut s = spec(Engine::Vllm, "agg", &[Fault::CounterReset]);
        (s.schema, s.json, s.csv, s.jsonl) = (schema, json, csv, jl);
        let dir = generate_twice(&s, &format!("reset-{i}"));
        let t = json_file(&dir.join("truth.json"));
        expect(&t, "INVALID_COUNTER", &["counter_reset"]);
        for (on, name) in [
            (json, "server_metrics_export.json"),
            (csv, "server_metrics_export.csv"),
            (jl, "server_metrics_export.jsonl"),
        ] {
            assert_eq!(art(&dir, name).exists(), on, "{i}: {name}");
        }
        assert!(art(&dir, "profile_export.jsonl").exists());
        if csv && !json {
            // The restart is still evidence in the CSV: the process start gauge moves.
            let text = std::fs::read_to_string(art(&dir, "server_metrics_export.csv")).unwrap();
            let row = text
                .lines()
                .find(|l| l.contains("process_start_time_seconds"))
                .unwrap();
            let cells: Vec<&str> = row.split(',').collect();
            // Endpoint, Type, Metric, Unit, avg, min, max, ...
            assert_ne!(cells[5], cells[6], "{row}");
            let ev = &t["evidence"];
            assert_eq!(ev["source"], "stats_total");
        }
        if jl && !json {
            assert_eq!(t["spec"]["json"], false);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn no_server_export_is_refused() {
    let mut s = spec(Engine::Vllm, "agg", &[]);
    (s.json, s.csv, s.jsonl) = (false, false, false);
    let dir = tmp("none");
    assert!(generate(&s, &dir).is_err());
}
