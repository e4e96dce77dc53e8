//! `kvledger synth`: every generated file reads back through the spine's readers, truth
//! invariants hold, output is deterministic by seed, and the bundled examples regenerate
//! byte for byte.

use kvledger::model::{SampleValue, Scrape};
use kvledger::read::{read_run, InputFile, RunOptions};
use kvledger::synth::{examples, generate, Engine, Fault, SynthSpec, Topology};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kvledger-synth-{}-{}", std::process::id(), name));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn files_of(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for sub in [dir.to_path_buf(), dir.join("aiperf_artifacts")] {
        if let Ok(rd) = std::fs::read_dir(&sub) {
            for e in rd.flatten() {
                if e.path().is_file() {
                    out.push(e.path());
                }
            }
        }
    }
    out.sort();
    out
}

fn truth(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("truth.json")).expect("truth"))
        .expect("truth json")
}

/// Read every AIPerf file and the launch facts back with the spine's readers.
fn read_back(dir: &Path) -> kvledger::read::Run {
    let inputs: Vec<InputFile> = files_of(dir)
        .into_iter()
        .filter(|p| !p.ends_with("truth.json"))
        .map(|p| InputFile::path(p.display().to_string(), p))
        .collect();
    assert!(inputs.len() >= 5, "files: {inputs:?}");
    read_run(&inputs, &RunOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

fn scalar_sum(
    s: &Scrape,
    fam: &str,
    filter: &dyn Fn(&kvledger::model::Labels) -> bool,
) -> Option<f64> {
    let f = s.families().find(|f| f.name == fam)?;
    let mut t = 0.0;
    for smp in &f.samples {
        if let SampleValue::Scalar { value } = *smp.value {
            if filter(smp.labels) {
                t += value;
            }
        }
    }
    Some(t)
}

/// (prompt, hits) of an endpoint's priced counters in one scrape.
fn priced(engine: &str, s: &Scrape) -> Option<(f64, f64)> {
    let all = |_: &kvledger::model::Labels| true;
    match engine {
        "vllm" | "dynamo" => Some((
            scalar_sum(s, "vllm:prompt_tokens_by_source", &all)?,
            scalar_sum(s, "vllm:prompt_tokens_by_source", &|l| {
                l.get("source") != Some("local_compute")
            })?,
        )),
        "sglang" => Some((
            scalar_sum(s, "sglang:prompt_tokens", &all)?,
            scalar_sum(s, "sglang:cached_tokens", &all).unwrap_or(0.0),
        )),
        "trtllm" => Some((
            scalar_sum(s, "trtllm_prompt_tokens", &all)?,
            scalar_sum(s, "trtllm_prompt_cached_tokens", &all).unwrap_or(0.0),
        )),
        "atom" => Some((
            scalar_sum(s, "atom:prefix_cache_full_tokens", &all)?,
            scalar_sum(s, "atom:prefix_cache_cached_tokens", &all)?
                + scalar_sum(s, "atom:prefix_cache_offload_tokens", &all).unwrap_or(0.0),
        )),
        _ => None,
    }
}

fn check_invariants(dir: &Path, run: &kvledger::read::Run) {
    let t = truth(dir);
    let engine = t["spec"]["engine"].as_str().unwrap().to_string();
    let faults: Vec<String> = t["spec"]["faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect();
    let reset = faults.iter().any(|f| f == "counter_reset");
    // Warmup and profiling never overlap.
    let (w0, w1) = (
        t["warmup"]["start_ns"].as_u64().unwrap(),
        t["warmup"]["end_ns"].as_u64().unwrap(),
    );
    let (p0, p1) = (
        t["window"]["start_ns"].as_u64().unwrap(),
        t["window"]["end_ns"].as_u64().unwrap(),
    );
    assert!(w0 <= w1 && w1 < p0 && p0 < p1, "phases overlap");
    if let Some(js) = &run.server_json {
        if let Some(r) = js.summary.phase_time_ranges.warmup {
            assert!(r.end_ns < js.summary.phase_time_ranges.profiling.unwrap().start_ns);
        }
        for f in &js.warmup_metrics {
            for s in &f.series {
                for sl in &s.timeslices {
                    assert!(sl.end_ns < p0, "warmup slice past the window start");
                }
            }
        }
        for f in &js.metrics {
            for s in &f.series {
                for (i, sl) in s.timeslices.iter().enumerate() {
                    assert!(sl.start_ns >= p0);
                    assert_eq!(
                        sl.is_complete,
                        i + 1 != s.timeslices.len() || sl.end_ns - sl.start_ns == 1_000_000_000,
                        "{}",
                        f.name
                    );
                }
            }
        }
    }
    // Truth: hits never exceed prompt tokens, per role.
    for (_, r) in t["roles"].as_object().unwrap() {
        let c = &r["physical"];
        let h = c["gpu"].as_u64().unwrap()
            + c["cpu"].as_u64().unwrap()
            + c["external"].as_u64().unwrap();
        assert!(h <= c["prompt"].as_u64().unwrap());
    }
    // Raw scrapes: counters never decrease (except a reset), and hits never exceed prompt
    // tokens between any two scrapes of a priced endpoint.
    let counters: Vec<String> = run
        .server_json
        .iter()
        .flat_map(|j| j.metrics.iter().chain(j.warmup_metrics.iter()))
        .filter(|f| f.metric_type == kvledger::model::MetricType::Counter)
        .map(|f| f.name.clone())
        .collect();
    let mut last: BTreeMap<(String, String, String), f64> = BTreeMap::new();
    let mut last_p: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for s in &run.scrapes {
        for f in s
            .families()
            .filter(|f| counters.iter().any(|c| c == f.name))
        {
            for smp in &f.samples {
                if let SampleValue::Scalar { value } = *smp.value {
                    let k = (
                        s.endpoint_url.clone(),
                        f.name.to_string(),
                        format!("{:?}", smp.labels),
                    );
                    if let Some(prev) = last.insert(k.clone(), value) {
                        assert!(
                            value >= prev || reset,
                            "counter decreased: {k:?} {prev} -> {value}"
                        );
                    }
                }
            }
        }
        if faults.is_empty() {
            if let Some((f, h)) = priced(&engine, s) {
                if let Some((f0, h0)) = last_p.insert(s.endpoint_url.clone(), (f, h)) {
                    assert!(
                        h - h0 <= f - f0 + 1e-9,
                        "hits exceed prompt on {}",
                        s.endpoint_url
                    );
                }
                assert!(h <= f);
            }
        }
    }
}

fn spec(engine: Engine, topo: &str, faults: &[Fault], duration: f64) -> SynthSpec {
    SynthSpec {
        engine,
        topology: Topology::parse(topo).unwrap(),
        faults: faults.to_vec(),
        duration_s: duration,
        concurrency: 4,
        seed: 7,
        ..SynthSpec::default()
    }
}

#[test]
fn clean_runs_read_back_and_hold_invariants() {
    for engine in Engine::ALL {
        for topo in ["agg", "agg2", "1P2D"] {
            for (legacy, cpu) in [(false, false), (false, true), (true, true)] {
                let mut s = spec(engine, topo, &[], 12.0);
                s.variant_legacy = legacy;
                s.tier_cpu = cpu;
                let dir = tmp(&format!("clean-{}-{topo}-{legacy}-{cpu}", engine.as_str()));
                generate(&s, &dir).expect("generate");
                let run = read_back(&dir);
                assert!(
                    !run.scrapes.is_empty()
                        && run.profile.is_some()
                        && run.summary.is_some()
                        && run.launch.is_some()
                );
                check_invariants(&dir, &run);
                let t = truth(&dir);
                if !legacy {
                    assert_eq!(
                        t["expected"]["status"],
                        "VALID_COMPLETE",
                        "{} {topo}: {}",
                        engine.as_str(),
                        t["expected"]
                    );
                    let r = t["physical_rates"]["overall"].as_f64().unwrap();
                    assert!((0.75..0.99).contains(&r), "rate {r}");
                }
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
    }
}

#[test]
fn every_fault_reads_back_with_its_verdict() {
    for engine in Engine::ALL {
        for f in Fault::ALL {
            let mut s = spec(engine, "1P1D", &[f], 10.0);
            s.tier_cpu = true;
            let dir = tmp(&format!("fault-{}-{f}", engine.as_str()));
            generate(&s, &dir).expect("generate");
            // Launch keys the reader does not know yet and a duplicated JSON key are the
            // accounting's to refuse or accept (tests/synth_faults.rs checks those files).
            let run = (!matches!(
                f,
                Fault::PrefixCachingDisabled | Fault::DuplicateFamilyConflict
            ))
            .then(|| read_back(&dir));
            if let Some(run) = &run {
                check_invariants(&dir, run);
            }
            let t = truth(&dir);
            let fj = &t["faults"][0];
            assert_eq!(fj["fault"], f.as_str());
            let expect = match f {
                Fault::CounterReset | Fault::AliasCollision | Fault::TpDisagree => {
                    "INVALID_COUNTER"
                }
                // ATOM without its offload counter and SGLang with a lazily created `host`
                // series look like a folded tier / zero host hits: not detectable.
                Fault::CpuCounterAbsent if matches!(engine, Engine::Atom | Engine::Sglang) => {
                    "VALID_COMPLETE"
                }
                Fault::CpuCounterAbsent | Fault::WorkerMissing => "COUNTERS_MISSING",
                Fault::ErrorsProfiling => "REQUEST_SCOPE_UNRESOLVED",
                Fault::StartGap | Fault::LateFinalScrape | Fault::StraddleNoProof => {
                    "WINDOW_UNRESOLVED"
                }
                Fault::StraddleProof => fj["status"].as_str().unwrap(),
                Fault::ConflictingExports
                | Fault::CsvJsonDisagree
                | Fault::DuplicateTimestamp
                | Fault::RestartUnseen => "INVALID_COUNTER",
                Fault::ZeroTraffic => "WINDOW_UNRESOLVED",
                Fault::SwappedLaunch => "ROLES_UNRESOLVED",
                Fault::BenchmarkMismatch | Fault::RecordsOutsideWindow => {
                    "REQUEST_SCOPE_UNRESOLVED"
                }
                _ => "VALID_COMPLETE",
            };
            assert_eq!(fj["status"], expect, "{} {f}: {fj}", engine.as_str());
            // Label keys like __proto__ are plain data.
            if f == Fault::ProtoLabels {
                let js = run.as_ref().unwrap().server_json.as_ref().unwrap();
                assert!(js.metrics.iter().any(|m| m
                    .series
                    .iter()
                    .any(|s| s.labels.contains_key("__proto__")
                        && s.labels.contains_key("constructor"))));
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

#[test]
fn one_p_seven_d_and_schema_1_0() {
    let mut s = spec(Engine::Sglang, "1P7D", &[], 10.0);
    s.schema = kvledger::synth::Schema::V1_0;
    s.dp = 2;
    let dir = tmp("1p7d");
    generate(&s, &dir).expect("generate");
    let run = read_back(&dir);
    check_invariants(&dir, &run);
    let js = run.server_json.as_ref().unwrap();
    assert_eq!(js.schema_version.as_deref(), Some("1.0"));
    assert!(js.warmup_metrics.is_empty() && js.summary.phase_time_ranges.profiling.is_none());
    assert_eq!(run.launch.as_ref().unwrap().decode_endpoints.len(), 7);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn same_seed_same_bytes() {
    let mut s = spec(
        Engine::Dynamo,
        "2P1D",
        &[Fault::NanGauges, Fault::ErrorsWarmup],
        8.0,
    );
    s.tier_external = true;
    let (a, b) = (tmp("det-a"), tmp("det-b"));
    generate(&s, &a).unwrap();
    generate(&s, &b).unwrap();
    let fa = files_of(&a);
    assert_eq!(fa.len(), files_of(&b).len());
    for p in &fa {
        let q = b.join(p.strip_prefix(&a).unwrap());
        assert!(
            std::fs::read(p).unwrap() == std::fs::read(&q).unwrap(),
            "{} differs",
            p.display()
        );
    }
    s.seed += 1;
    let c = tmp("det-c");
    generate(&s, &c).unwrap();
    assert_ne!(
        std::fs::read(a.join("truth.json")).unwrap(),
        std::fs::read(c.join("truth.json")).unwrap()
    );
    for d in [a, b, c] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn epoch_ns_are_exact_integers() {
    let dir = tmp("ns");
    generate(&spec(Engine::Vllm, "agg", &[], 6.0), &dir).unwrap();
    let text =
        std::fs::read_to_string(dir.join("aiperf_artifacts/server_metrics_export.json")).unwrap();
    assert!(!text.ends_with('\n'));
    let t = truth(&dir);
    let p0 = t["window"]["start_ns"].as_u64().unwrap();
    assert!(p0 > 1u64 << 53);
    assert!(text.contains(&format!("\"start_ns\": {p0}")));
    let csv =
        std::fs::read_to_string(dir.join("aiperf_artifacts/server_metrics_export.csv")).unwrap();
    assert!(csv.contains("\r\n") && csv.starts_with("# AIPerf Server Metrics Export (CSV)\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bundled_examples_regenerate_identically() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/synth");
    for (name, s) in examples() {
        let want = root.join(name);
        let dir = tmp(&format!("ex-{name}"));
        generate(&s, &dir).unwrap();
        let got = files_of(&dir);
        assert!(!got.is_empty());
        for p in &got {
            let rel = p.strip_prefix(&dir).unwrap();
            let committed = std::fs::read(want.join(rel)).unwrap_or_else(|_| panic!("examples/synth/{name}/{} missing (run `kvledger synth --examples examples/synth`)", rel.display()));
            assert!(
                committed == std::fs::read(p).unwrap(),
                "examples/synth/{name}/{} is stale",
                rel.display()
            );
            assert!(committed.len() < 1_000_000);
        }
        assert_eq!(files_of(&want).len(), got.len(), "{name}: extra files");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
