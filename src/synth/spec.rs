//! What to generate: the engine, topology, schema and fault switches of one run
//! (`SynthSpec`), and the generator's error and summary types. A leaf module: every other
//! module of the generator reads these types, none of them is read back here.

use super::faults::Fault;
use std::fmt as sfmt;

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
    /// Write `server_metrics_export.json` (off: a run whose server evidence is the CSV
    /// and/or the JSONL only).
    pub json: bool,
    /// Write `server_metrics_export.csv`.
    pub csv: bool,
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
            json: true,
            csv: true,
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
        // Decode re-counting and swapped prefill/decode lists need a disaggregated run.
        if (s.has(Fault::DecodeRecount) || s.has(Fault::SwappedLaunch)) && !s.topology.is_disagg() {
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
            s.json = true;
        }
        if s.has(Fault::StraddleProof) {
            s.schema = Schema::V1_1;
            s.jsonl = false;
            s.json = true;
        }
        s.resolve_evidence_faults();
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

    /// Adjustments of the faults that need a given evidence kind or topology to show.
    fn resolve_evidence_faults(&mut self) {
        let s = self;
        // Two kinds of evidence must both be present to disagree.
        if s.has(Fault::ConflictingExports) {
            s.json = true;
            s.jsonl = true;
        }
        if s.has(Fault::CsvJsonDisagree) {
            s.json = true;
            s.csv = true;
        }
        if s.has(Fault::DuplicateTimestamp) {
            s.jsonl = true;
        }
        if s.has(Fault::DuplicateFamily)
            || s.has(Fault::DuplicateFamilyConflict)
            || s.has(Fault::BenchmarkMismatch)
        {
            s.json = true;
        }
        // Without profiling records the window can only come from the 1.1 phase range; the
        // outside-window check needs that range too.
        if s.has(Fault::ZeroTraffic) || s.has(Fault::RecordsOutsideWindow) {
            s.schema = Schema::V1_1;
            s.json = true;
        }
        if s.has(Fault::PrefixCachingDisabled) {
            s.tier_cpu = false;
            s.tier_external = false;
        }
    }

    /// The server-metrics files this spec writes, in `--exports` spelling.
    pub fn exports(&self) -> String {
        let mut v = Vec::new();
        for (on, name) in [
            (self.json, "json"),
            (self.csv, "csv"),
            (self.jsonl, "jsonl"),
        ] {
            if on {
                v.push(name);
            }
        }
        v.join(",")
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
