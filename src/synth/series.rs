//! The vocabulary shared by the engine models, the workload, the plan and the walker: the
//! counting moments of a request, the token split an endpoint counts, and how each exported
//! series reads the true state. A leaf module (it depends on no other generator module but
//! the formatting helpers), so those modules depend on it one way.

use super::fmt::py_float;
use crate::model::MetricType;

/// When an endpoint event happens in a request's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    Arrive,
    /// Admission to the running batch (ATOM counts here; vLLM lookup stats).
    Adm,
    /// First output token (vLLM prompt counters; latency to first token).
    Ftk,
    /// Completion (SGLang, TensorRT-LLM, ATOM `prompt_tokens`).
    Fin,
}

impl Moment {
    /// The name `truth.json` gives the moment (`counting_moment`).
    pub fn as_str(self) -> &'static str {
        match self {
            Moment::Arrive => "arrive",
            Moment::Adm => "adm",
            Moment::Ftk => "ftk",
            Moment::Fin => "fin",
        }
    }
}

/// Token split of one request as one endpoint counts it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Delta {
    pub prompt: u32,
    pub gpu: u32,
    pub cpu: u32,
    pub ext: u32,
    pub gen: u32,
    /// vLLM before #48860: extra lookup tokens re-counted for a request that waited.
    pub requery: u32,
    pub ttft_us: u32,
    pub e2e_us: u32,
}

impl Delta {
    pub fn hits(&self) -> u32 {
        self.gpu + self.cpu + self.ext
    }
}

/// A cumulative quantity of one pool at one counting moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Zero,
    Prompt,
    Gpu,
    Cpu,
    Ext,
    Reqs,
    Gen,
    /// gpu + cpu + ext.
    Hits,
    /// gpu + cpu (a build folding LMCache into the GPU counter).
    GpuCpu,
    /// gpu + ext (CPU hits left uncounted).
    GpuExt,
    /// cpu + ext (vLLM's `external_kv_transfer`).
    CpuExt,
    /// prompt - hits.
    Compute,
    /// prompt - gpu - ext (CPU hits counted as computed).
    ComputeCpu,
    /// prompt - gpu.
    NotGpu,
    /// prompt + re-counted lookups (vLLM before #48860).
    Queries,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistKind {
    Ttft = 0,
    E2e = 1,
    Http = 2,
    CachedPerReq = 3,
    FeIsl = 4,
    FeCached = 5,
    FeTtft = 6,
    FeDur = 7,
}

pub const N_HIST: usize = 8;

impl HistKind {
    pub const ALL: [HistKind; N_HIST] = [
        HistKind::Ttft,
        HistKind::E2e,
        HistKind::Http,
        HistKind::CachedPerReq,
        HistKind::FeIsl,
        HistKind::FeCached,
        HistKind::FeTtft,
        HistKind::FeDur,
    ];
    /// Upper bounds (without +Inf).
    pub fn bounds(self) -> &'static [f64] {
        const LAT: [f64; 17] = [
            0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
            40.0, 80.0,
        ];
        const E2E: [f64; 13] = [
            0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 60.0,
        ];
        const HTTP: [f64; 3] = [0.1, 0.5, 1.0];
        const TOK: [f64; 10] = [
            100.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0, 20000.0, 50000.0, 100000.0, 200000.0,
        ];
        match self {
            HistKind::Ttft | HistKind::FeTtft => &LAT,
            HistKind::E2e | HistKind::FeDur => &E2E,
            HistKind::Http => &HTTP,
            HistKind::CachedPerReq | HistKind::FeIsl | HistKind::FeCached => &TOK,
        }
    }
    /// Rust exporters print `1`, Python prints `1.0`.
    pub fn rust_le(self) -> bool {
        matches!(
            self,
            HistKind::FeIsl | HistKind::FeCached | HistKind::FeTtft | HistKind::FeDur
        )
    }
    pub fn le_strings(self) -> Vec<String> {
        let mut v: Vec<String> = self
            .bounds()
            .iter()
            .map(|b| {
                if self.rust_le() {
                    format!("{b}")
                } else {
                    py_float(*b)
                }
            })
            .collect();
        v.push("+Inf".into());
        v
    }
    /// The observation of one request event, if this kind observes at that moment.
    pub fn observe(self, m: Moment, d: &Delta) -> Option<f64> {
        match (self, m) {
            (HistKind::Ttft | HistKind::FeTtft, Moment::Ftk) => Some(d.ttft_us as f64 / 1e6),
            (HistKind::E2e | HistKind::Http | HistKind::FeDur, Moment::Fin) => {
                Some(d.e2e_us as f64 / 1e6)
            }
            (HistKind::CachedPerReq, Moment::Fin) => Some(d.hits() as f64),
            (HistKind::FeIsl, Moment::Ftk) => Some(d.prompt as f64),
            (HistKind::FeCached, Moment::Ftk) => Some(d.hits() as f64),
            _ => None,
        }
    }
}

/// How a series' value is computed from its endpoint pool's true state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Src {
    Ctr(Moment, Field),
    Scaled(Moment, Field, f64),
    Running,
    Waiting,
    KvUsage,
    KvUsedBlocks,
    Const(f64),
    /// `process_start_time_seconds`: the given start, or the restart time after a reset.
    ProcessStart(f64),
    /// Cumulative hits / prompt at a moment (0 before any request).
    HitRatioCum(Moment),
    /// The last request's hit ratio (SGLang's and TRT-LLM's per-batch gauges).
    LastHitRatio,
    Hist(HistKind),
}

impl Src {
    pub fn is_ratio_gauge(&self) -> bool {
        matches!(self, Src::HitRatioCum(_) | Src::LastHitRatio | Src::KvUsage)
    }
}

#[derive(Debug, Clone)]
pub struct FamilyDef {
    pub name: String,
    pub mtype: MetricType,
    pub desc: String,
    pub unit: Option<String>,
    /// `*_info` families: JSON gauges, the CSV's info section, absent from the JSONL.
    pub info: bool,
}

#[derive(Debug, Clone)]
pub struct SeriesDef {
    pub fam: usize,
    /// Endpoint the series is exported on.
    pub ep: usize,
    /// Endpoint whose state it reads (differs for frontend re-exports).
    pub state_ep: usize,
    /// Pool (DP rank); `None` sums the endpoint's pools.
    pub pool: Option<u16>,
    pub labels: Vec<(String, String)>,
    pub src: Src,
    /// Created at its first non-zero value (prometheus_client labelled children).
    pub lazy: bool,
    /// A disagreeing replica (reads 0.5 % low).
    pub lag: bool,
    /// The JSON export reads another run's values (conflicting-exports fault).
    pub conflict: bool,
}

/// AIPerf's unit inference from the name suffix.
pub fn infer_unit(name: &str) -> Option<String> {
    let rules: [(&str, &str); 12] = [
        ("_seconds", "seconds"),
        ("_milliseconds", "milliseconds"),
        ("_ms", "milliseconds"),
        ("_bytes", "bytes"),
        ("_tokens", "tokens"),
        ("_requests", "requests"),
        ("_reqs", "requests"),
        ("request_success", "requests"),
        ("_blocks", "blocks"),
        ("_ratio", "ratio"),
        ("_perc", "ratio"),
        ("_percent", "percent"),
    ];
    rules
        .iter()
        .find(|(s, _)| name.ends_with(s))
        .map(|(_, u)| u.to_string())
}

pub type Labels = Vec<(String, String)>;

pub fn l(k: &str, v: impl Into<String>) -> (String, String) {
    (k.to_string(), v.into())
}
