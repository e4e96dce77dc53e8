//! `kvledger synth`: a deterministic generator of complete AIPerf benchmark runs whose true
//! cache accounting is known (`truth.json`). See `docs/synth.md` for the model, every
//! simplification, the fault list with expected verdicts and the coverage matrix.
//!
//! Layout, leaves first (each module depends only on modules listed before it):
//! `rng`, `fmt`, `out` (file sinks), `faults`, `spec` (what to generate), `series` (counting
//! moments, token splits, how a series reads the state), `plan` (endpoints, roles, times:
//! data), `workload` (sessions, requests, timed events), `engines` (each engine's metric
//! names, labels and counting moments), `planner` (builds the plan), `scrape` (engine state,
//! scrape schedules, the walker), `aiperf` (the exporters), `launch` (launch facts), `truth`
//! (true counters and expected verdicts); this module runs them in order.
//!
//! Memory: nothing proportional to the run is held except one metric family's samples while
//! its JSON block is written (the walker regenerates the run from the seed for every family)
//! and the per-request values the run summary's percentiles need.

#![allow(
    clippy::too_many_arguments,
    clippy::should_implement_trait,
    clippy::type_complexity,
    clippy::needless_range_loop
)]

pub mod aiperf;
pub mod engines;
pub mod faults;
pub mod fmt;
pub mod launch;
pub mod out;
pub mod plan;
pub mod planner;
pub mod rng;
pub mod scrape;
pub mod series;
pub mod spec;
pub mod truth;
pub mod workload;

use out::Sink;
use plan::Plan;
use std::path::Path;

pub use faults::Fault;
pub use spec::{Engine, Schema, SynthError, SynthSpec, SynthSummary, Topology};

/// Generate one run into `out_dir` (created if needed): `aiperf_artifacts/` with AIPerf's
/// files, `launch.json` and `truth.json` beside it.
pub fn generate(spec: &SynthSpec, out_dir: &Path) -> Result<SynthSummary, SynthError> {
    let mut spec = spec.resolved();
    if !(spec.duration_s.is_finite() && spec.duration_s >= 2.0 && spec.duration_s <= 1.0e7) {
        return Err(SynthError::Spec(format!(
            "duration {} s out of range [2, 1e7]",
            spec.duration_s
        )));
    }
    if !(spec.scrape_interval_s >= 0.05 && spec.slice_s >= 0.1) {
        return Err(SynthError::Spec(
            "scrape interval >= 0.05 s and slice >= 0.1 s".into(),
        ));
    }
    if let Some(target) = spec.target_bytes {
        spec.duration_s = calibrate(&spec, target)?;
    }
    if !(spec.json || spec.csv || spec.jsonl) {
        return Err(SynthError::Spec(
            "at least one server-metrics export (json, csv, jsonl)".into(),
        ));
    }
    let plan = prepare(&spec);
    write_run(&plan, &Sink::Dir(out_dir.to_path_buf()))
}

/// The plan of a spec, with the times that depend on a walk of the run settled.
fn prepare(spec: &SynthSpec) -> Plan {
    let mut plan = planner::build(spec);
    scrape::settle_unseen_restart(&mut plan);
    plan
}

/// Write every file of the run.
pub fn write_run(plan: &Plan, sink: &Sink) -> Result<SynthSummary, SynthError> {
    let mut files = Vec::new();
    let p1 = aiperf::jsonl::pass1(plan, sink, &mut files)?;
    let (rows, mut shown) = aiperf::json::write(plan, sink, &p1, &mut files)?;
    shown.duplicate_timestamp = p1.duplicate_timestamp;
    if plan.spec.csv {
        files.push(aiperf::csv::write(plan, sink, &rows)?);
    }
    files.push(aiperf::profile::write_summary(plan, sink, &p1)?);
    files.push(launch::write_launch(plan, sink)?);
    let (tf, status) = truth::write_truth(plan, sink, &p1, &shown)?;
    files.push(tf);
    files.sort();
    let total_bytes = files.iter().map(|(_, b)| b).sum();
    Ok(SynthSummary {
        files,
        total_bytes,
        duration_s: plan.spec.duration_s,
        requests: p1.prof.records + p1.warm.records,
        scrapes: p1.info.iter().map(|i| i.fetches).sum(),
        expected_status: status,
    })
}

/// Duration that makes the run about `target` bytes: the size is affine in the duration, so
/// two dry runs (counted, not written) fix the line.
fn calibrate(spec: &SynthSpec, target: u64) -> Result<f64, SynthError> {
    let size = |d: f64| -> Result<u64, SynthError> {
        let mut s = spec.clone();
        s.duration_s = d;
        s.target_bytes = None;
        let plan = prepare(&s);
        Ok(write_run(&plan, &Sink::Count)?.total_bytes)
    };
    let (d1, d2) = (20.0, 60.0);
    let (b1, b2) = (size(d1)? as f64, size(d2)? as f64);
    let slope = ((b2 - b1) / (d2 - d1)).max(1.0);
    let d = d2 + (target as f64 - b2) / slope;
    Ok(d.clamp(5.0, 1.0e7).round())
}

/// The bundled example runs (`examples/synth/<name>/`): every engine, aggregated and
/// disaggregated topologies, clean runs and a few faulty ones. Small (each well under 1 MB).
pub fn examples() -> Vec<(&'static str, SynthSpec)> {
    let base = |engine: Engine, topo: &str| SynthSpec {
        engine,
        topology: Topology::parse(topo).unwrap_or(Topology {
            agg: 1,
            prefill: 0,
            decode: 0,
        }),
        duration_s: 12.0,
        concurrency: 4,
        seed: 42,
        ..SynthSpec::default()
    };
    let with = |mut s: SynthSpec, f: &dyn Fn(&mut SynthSpec)| {
        f(&mut s);
        s
    };
    vec![
        ("vllm-agg-clean", base(Engine::Vllm, "agg")),
        (
            "vllm-1p1d-cpu-offload",
            with(base(Engine::Vllm, "1P1D"), &|s| s.tier_cpu = true),
        ),
        (
            "vllm-agg-counter-reset",
            with(base(Engine::Vllm, "agg"), &|s| {
                s.faults = vec![Fault::CounterReset]
            }),
        ),
        (
            "vllm-agg-straddle-no-proof",
            with(base(Engine::Vllm, "agg"), &|s| {
                s.faults = vec![Fault::StraddleNoProof]
            }),
        ),
        (
            "sglang-agg-hicache-tp2",
            with(base(Engine::Sglang, "agg"), &|s| {
                s.tier_cpu = true;
                s.tier_external = true;
                s.tp = 2;
            }),
        ),
        (
            "sglang-agg-errors-profiling",
            with(base(Engine::Sglang, "agg"), &|s| {
                s.faults = vec![Fault::ErrorsProfiling]
            }),
        ),
        ("trtllm-agg-clean", base(Engine::Trtllm, "agg")),
        (
            "trtllm-agg-legacy-late-scrape",
            with(base(Engine::Trtllm, "agg"), &|s| {
                s.variant_legacy = true;
                s.faults = vec![Fault::LateFinalScrape];
            }),
        ),
        (
            "atom-agg-lmcache",
            with(base(Engine::Atom, "agg"), &|s| s.tier_cpu = true),
        ),
        (
            "atom-1p1d-legacy-alias",
            with(base(Engine::Atom, "1P1D"), &|s| {
                s.variant_legacy = true;
                s.faults = vec![Fault::AliasCollision];
            }),
        ),
        (
            "dynamo-1p1d-clean",
            with(base(Engine::Dynamo, "1P1D"), &|s| s.duration_s = 8.0),
        ),
    ]
}
