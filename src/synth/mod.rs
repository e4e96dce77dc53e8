//! `kvledger synth`: a deterministic generator of complete AIPerf benchmark runs whose true
//! cache accounting is known (`truth.json`). See `docs/synth.md` for the model, every
//! simplification, the fault list with expected verdicts and the coverage matrix.
//!
//! Layout: `rng` (PRNG), `workload` (sessions, requests, timed events), `plan` (endpoints,
//! roles, times), `engines` (each engine's metric names, labels and counting moments),
//! `scrape` (engine state, jittered scrape schedules, the walker), `aiperf` (the exporters),
//! `faults` + `truth` (expected verdicts and true counters).
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
pub mod plan;
pub mod rng;
pub mod scrape;
pub mod truth;
pub mod workload;

use std::fmt as sfmt;
use std::path::Path;

pub use faults::Fault;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Engine {
    Vllm,
    Sglang,
    Trtllm,
    Atom,
    /// Dynamo frontend plus vLLM workers.
    Dynamo,
}

impl Engine {
    pub const ALL: [Engine; 5] = [
        Engine::Vllm,
        Engine::Sglang,
        Engine::Trtllm,
        Engine::Atom,
        Engine::Dynamo,
    ];
    pub fn parse(s: &str) -> Option<Engine> {
        Some(match s.to_ascii_lowercase().as_str() {
            "vllm" => Engine::Vllm,
            "sglang" => Engine::Sglang,
            "trtllm" | "tensorrt-llm" | "tensorrt_llm" => Engine::Trtllm,
            "atom" => Engine::Atom,
            "dynamo" | "dynamo-vllm" => Engine::Dynamo,
            _ => return None,
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Vllm => "vllm",
            Engine::Sglang => "sglang",
            Engine::Trtllm => "trtllm",
            Engine::Atom => "atom",
            Engine::Dynamo => "dynamo",
        }
    }
    /// The version variant names: `(current, legacy)`.
    pub fn variants(self) -> (&'static str, &'static str) {
        match self {
            Engine::Vllm | Engine::Dynamo => ("by_source", "no_by_source"),
            Engine::Sglang => ("cache_source", "no_cache_source"),
            Engine::Trtllm => ("token_counters", "no_token_counters"),
            Engine::Atom => ("offload_counter", "no_offload_counter"),
        }
    }
}

/// `agg` / `aggN` (N aggregated endpoints) or `xPyD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Topology {
    pub agg: u32,
    pub prefill: u32,
    pub decode: u32,
}

impl Topology {
    pub fn parse(s: &str) -> Option<Topology> {
        let l = s.to_ascii_lowercase();
        if let Some(rest) = l.strip_prefix("agg") {
            let n = if rest.is_empty() {
                1
            } else {
                rest.trim_start_matches([':', 'x']).parse().ok()?
            };
            return (1..=64).contains(&n).then_some(Topology {
                agg: n,
                prefill: 0,
                decode: 0,
            });
        }
        let (p, d) = l.strip_suffix('d')?.split_once('p')?;
        let (p, d): (u32, u32) = (p.parse().ok()?, d.parse().ok()?);
        (p >= 1 && d >= 1 && p <= 64 && d <= 64).then_some(Topology {
            agg: 0,
            prefill: p,
            decode: d,
        })
    }
    pub fn is_disagg(&self) -> bool {
        self.agg == 0
    }
}

impl sfmt::Display for Topology {
    fn fmt(&self, f: &mut sfmt::Formatter) -> sfmt::Result {
        if self.agg == 1 {
            write!(f, "agg")
        } else if self.agg > 1 {
            write!(f, "agg{}", self.agg)
        } else {
            write!(f, "{}P{}D", self.prefill, self.decode)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schema {
    V1_0,
    V1_1,
}

/// What to generate. `Default` is a clean aggregated vLLM run of 60 s.
#[derive(Debug, Clone)]
pub struct SynthSpec {
    pub engine: Engine,
    /// The engine's older metric variant (see `Engine::variants`).
    pub variant_legacy: bool,
    pub topology: Topology,
    /// Cache tiers besides the GPU: CPU offload and external/storage.
    pub tier_cpu: bool,
    pub tier_external: bool,
    pub faults: Vec<Fault>,
    pub seed: u64,
    /// Profiling phase length (requests are issued this long; the last ones then finish).
    pub duration_s: f64,
    pub warmup_per_lane: u32,
    pub concurrency: u32,
    /// DP ranks (pools) per engine endpoint.
    pub dp: u32,
    /// TP replica series for engines that repeat a pool's values per `tp_rank` (SGLang).
    pub tp: u32,
    /// Add a frontend endpoint (always present for Dynamo).
    pub frontend: bool,
    pub schema: Schema,
    /// Write `server_metrics_export.jsonl` (AIPerf's default formats are json and csv).
    pub jsonl: bool,
    pub scrape_interval_s: f64,
    pub slice_s: f64,
    /// Choose the duration so that the run's files total about this many bytes.
    pub target_bytes: Option<u64>,
}

impl Default for SynthSpec {
    fn default() -> Self {
        SynthSpec {
            engine: Engine::Vllm,
            variant_legacy: false,
            topology: Topology {
                agg: 1,
                prefill: 0,
                decode: 0,
            },
            tier_cpu: false,
            tier_external: false,
            faults: Vec::new(),
            seed: 1,
            duration_s: 60.0,
            warmup_per_lane: 2,
            concurrency: 8,
            dp: 1,
            tp: 1,
            frontend: false,
            schema: Schema::V1_1,
            jsonl: true,
            scrape_interval_s: 0.333,
            slice_s: 1.0,
            target_bytes: None,
        }
    }
}

impl SynthSpec {
    pub fn has(&self, f: Fault) -> bool {
        self.faults.contains(&f)
    }

    /// The spec after fault-implied adjustments (documented per fault in `faults.rs`).
    pub fn resolved(&self) -> SynthSpec {
        let mut s = self.clone();
        s.faults.sort();
        s.faults.dedup();
        if s.engine == Engine::Dynamo {
            s.frontend = true;
        }
        if s.has(Fault::FrontendDuplicates) {
            s.frontend = true;
        }
        if s.has(Fault::DecodeRecount) && !s.topology.is_disagg() {
            s.topology = Topology {
                agg: 0,
                prefill: 1,
                decode: 1,
            };
        }
        if s.has(Fault::CpuCounterAbsent) {
            s.tier_cpu = true;
            // vLLM reports every connector's hits as one `external_kv_transfer` source: the
            // fault drops that series, so no external tier can be reported beside it.
            if matches!(s.engine, Engine::Vllm | Engine::Dynamo) {
                s.tier_external = false;
            }
        }
        if s.has(Fault::StraddleNoProof) {
            s.schema = Schema::V1_0;
            s.jsonl = false;
        }
        if s.has(Fault::StraddleProof) {
            s.schema = Schema::V1_1;
            s.jsonl = false;
        }
        if s.has(Fault::TpDisagree) {
            s.tp = s.tp.max(2);
        }
        if s.has(Fault::WorkerMissing) {
            // Keep a second priced worker so the run still measures something.
            if s.topology.is_disagg() {
                s.topology.prefill = s.topology.prefill.max(2);
            } else {
                s.topology.agg = s.topology.agg.max(2);
            }
        }
        match s.engine {
            // vLLM collapses every connector into one unlabelled bucket: one non-GPU tier.
            Engine::Vllm | Engine::Dynamo if s.tier_cpu && s.tier_external => {
                s.tier_external = false
            }
            // ATOM's LMCache tier is the CPU tier (`external` aliases it).
            Engine::Atom if s.tier_external => {
                s.tier_external = false;
                s.tier_cpu = true;
            }
            _ => {}
        }
        s.concurrency = s.concurrency.clamp(1, 4096);
        s.dp = s.dp.clamp(1, 64);
        s.tp = s.tp.clamp(1, 16);
        s
    }

    pub fn name(&self) -> String {
        let (cur, leg) = self.engine.variants();
        format!(
            "{}-{}-{}",
            self.engine.as_str(),
            if self.variant_legacy { leg } else { cur },
            self.topology
        )
    }
}

#[derive(Debug)]
pub enum SynthError {
    Io(std::io::Error),
    Spec(String),
}

impl sfmt::Display for SynthError {
    fn fmt(&self, f: &mut sfmt::Formatter) -> sfmt::Result {
        match self {
            SynthError::Io(e) => write!(f, "I/O error: {e}"),
            SynthError::Spec(s) => write!(f, "invalid spec: {s}"),
        }
    }
}

impl std::error::Error for SynthError {}

impl From<std::io::Error> for SynthError {
    fn from(e: std::io::Error) -> Self {
        SynthError::Io(e)
    }
}

/// What was written.
#[derive(Debug, Clone)]
pub struct SynthSummary {
    /// Paths relative to the output directory, with their sizes, sorted.
    pub files: Vec<(String, u64)>,
    pub total_bytes: u64,
    pub duration_s: f64,
    pub requests: u64,
    pub scrapes: u64,
    pub expected_status: String,
}

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
    let plan = plan::Plan::build(&spec);
    aiperf::write_run(&plan, &aiperf::Sink::Dir(out_dir.to_path_buf()))
}

/// Duration that makes the run about `target` bytes: the size is affine in the duration, so
/// two dry runs (counted, not written) fix the line.
fn calibrate(spec: &SynthSpec, target: u64) -> Result<f64, SynthError> {
    let size = |d: f64| -> Result<u64, SynthError> {
        let mut s = spec.clone();
        s.duration_s = d;
        s.target_bytes = None;
        let plan = plan::Plan::build(&s);
        Ok(aiperf::write_run(&plan, &aiperf::Sink::Count)?.total_bytes)
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
