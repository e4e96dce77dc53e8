//! Each engine's metric families: names as AIPerf exports them (a counter's `_total`
//! stripped), types, HELP, labels, and which true quantity at which counting moment each
//! series reads. Version variants follow `research/engine-metrics.md`.

pub mod atom;
pub mod dynamo;
pub mod sglang;
pub mod trtllm;
pub mod vllm;

use super::plan::Plan;
use super::workload::Moment;
use super::{Engine, Fault};
use crate::model::{MetricType, Role};
use std::collections::HashMap;

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
                    super::fmt::py_float(*b)
                }
            })
            .collect();
        v.push("+Inf".into());
        v
    }
    /// The observation of one request event, if this kind observes at that moment.
    pub fn observe(self, m: Moment, d: &super::workload::Delta) -> Option<f64> {
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

pub struct Builder<'p> {
    pub plan: &'p Plan,
    pub fams: Vec<FamilyDef>,
    pub series: Vec<SeriesDef>,
    index: HashMap<String, usize>,
}

pub type Labels = Vec<(String, String)>;

pub fn l(k: &str, v: impl Into<String>) -> (String, String) {
    (k.to_string(), v.into())
}

impl<'p> Builder<'p> {
    pub fn fam(&mut self, name: &str, t: MetricType, desc: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.fams.push(FamilyDef {
            name: name.to_string(),
            mtype: t,
            desc: desc.to_string(),
            unit: infer_unit(name),
            info: name.ends_with("_info"),
        });
        self.index.insert(name.to_string(), self.fams.len() - 1);
        self.fams.len() - 1
    }

    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &mut self,
        name: &str,
        t: MetricType,
        desc: &str,
        ep: usize,
        pool: Option<u16>,
        labels: Labels,
        src: Src,
    ) -> usize {
        let fam = self.fam(name, t, desc);
        self.series.push(SeriesDef {
            fam,
            ep,
            state_ep: ep,
            pool,
            labels,
            src,
            lazy: false,
            lag: false,
        });
        self.series.len() - 1
    }

    pub fn ctr(
        &mut self,
        name: &str,
        desc: &str,
        ep: usize,
        pool: Option<u16>,
        labels: Labels,
        m: Moment,
        f: Field,
    ) -> usize {
        self.add(
            name,
            MetricType::Counter,
            desc,
            ep,
            pool,
            labels,
            Src::Ctr(m, f),
        )
    }
    pub fn gauge(
        &mut self,
        name: &str,
        desc: &str,
        ep: usize,
        pool: Option<u16>,
        labels: Labels,
        src: Src,
    ) -> usize {
        self.add(name, MetricType::Gauge, desc, ep, pool, labels, src)
    }
    pub fn hist(
        &mut self,
        name: &str,
        desc: &str,
        ep: usize,
        pool: Option<u16>,
        labels: Labels,
        k: HistKind,
    ) -> usize {
        self.add(
            name,
            MetricType::Histogram,
            desc,
            ep,
            pool,
            labels,
            Src::Hist(k),
        )
    }
    pub fn lazy(&mut self, i: usize) {
        self.series[i].lazy = true;
    }

    pub fn role_str(&self, ep: usize) -> &'static str {
        match self.plan.endpoints[ep].role {
            Role::Prefill => "prefill",
            Role::Decode => "decode",
            _ => "unified",
        }
    }
    pub fn capacity_blocks(&self) -> u64 {
        engine_capacity_tokens() / self.plan.block_size.max(1) as u64
    }
}

/// KV capacity of one pool in tokens (usage gauges are in-flight tokens over this).
pub fn engine_capacity_tokens() -> u64 {
    1_048_576
}

/// The families whose series feed a priced rate (F or a hit tier), per engine.
pub fn priced_families(e: Engine) -> &'static [&'static str] {
    match e {
        Engine::Vllm | Engine::Dynamo => &["vllm:prompt_tokens_by_source", "vllm:prompt_tokens"],
        Engine::Sglang => &["sglang:prompt_tokens", "sglang:cached_tokens"],
        Engine::Trtllm => &[
            "trtllm_prompt_tokens",
            "trtllm_prompt_cached_tokens",
            "trtllm_prompt_cache_hit_tokens",
        ],
        Engine::Atom => &[
            "atom:prefix_cache_full_tokens",
            "atom:prefix_cache_cached_tokens",
            "atom:prefix_cache_offload_tokens",
        ],
    }
}

/// The alias spelling used by the alias-collision fault.
pub fn alias_of(name: &str) -> String {
    if let Some(r) = name.strip_prefix("vllm:") {
        format!("vllm_{r}")
    } else if let Some(r) = name.strip_prefix("sglang:") {
        format!("sglang_{r}")
    } else if let Some(r) = name.strip_prefix("atom:") {
        format!("atom_{r}")
    } else if let Some(r) = name.strip_prefix("trtllm_") {
        format!("trtllm:{r}")
    } else {
        format!("{name}_alias")
    }
}

/// Build every family and series of the plan, then apply the fault rewrites.
pub fn build(plan: &Plan) -> (Vec<FamilyDef>, Vec<SeriesDef>) {
    let mut b = Builder {
        plan,
        fams: Vec::new(),
        series: Vec::new(),
        index: HashMap::new(),
    };
    for ep in 0..plan.endpoints.len() {
        let role = plan.endpoints[ep].role;
        if role == Role::Frontend {
            if plan.spec.engine == Engine::Dynamo {
                dynamo::frontend(&mut b, ep);
            } else {
                generic_frontend(&mut b, ep);
            }
            continue;
        }
        // Every Python engine's registry carries the process collector; a restart shows as a
        // new start time (the evidence of a reset that the counters may hide).
        let start_s = (crate::synth::plan::Plan::epoch_base(plan.spec.seed) / 1_000_000_000) as f64
            - 600.0
            - ep as f64;
        b.gauge(
            "process_start_time_seconds",
            "Start time of the process since unix epoch in seconds.",
            ep,
            None,
            Vec::new(),
            Src::ProcessStart(start_s),
        );
        match plan.spec.engine {
            Engine::Vllm => vllm::endpoint(&mut b, ep, &[]),
            Engine::Dynamo => dynamo::worker(&mut b, ep),
            Engine::Sglang => sglang::endpoint(&mut b, ep),
            Engine::Trtllm => trtllm::endpoint(&mut b, ep),
            Engine::Atom => atom::endpoint(&mut b, ep),
        }
    }
    let spec = &plan.spec;
    let p0 = plan.priced[0];
    let priced = priced_families(spec.engine);
    let is_priced = |b: &Builder, s: &SeriesDef| priced.contains(&b.fams[s.fam].name.as_str());
    if spec.has(Fault::TpDisagree) {
        let mut out = Vec::new();
        for s in std::mem::take(&mut b.series) {
            if s.ep == p0 && is_priced(&b, &s) && !s.labels.iter().any(|(k, _)| k == "tp_rank") {
                for r in 0..spec.tp {
                    let mut c = s.clone();
                    c.labels.push(l("tp_rank", r.to_string()));
                    c.lag = r == 1;
                    out.push(c);
                }
            } else {
                out.push(s);
            }
        }
        b.series = out;
    }
    if spec.has(Fault::AliasCollision) {
        let extra: Vec<SeriesDef> = b
            .series
            .iter()
            .filter(|s| s.ep == p0 && is_priced(&b, s))
            .cloned()
            .collect();
        for mut s in extra {
            let f = &b.fams[s.fam];
            let (name, t, desc) = (alias_of(&f.name), f.mtype, f.desc.clone());
            s.fam = b.fam(&name, t, &desc);
            b.series.push(s);
        }
    }
    if let (true, Some(fe)) = (spec.has(Fault::FrontendDuplicates), plan.frontend) {
        let extra: Vec<SeriesDef> = b
            .series
            .iter()
            .filter(|s| plan.priced.contains(&s.ep) && plan.endpoints[s.ep].scraped)
            .cloned()
            .collect();
        for mut s in extra {
            s.ep = fe;
            b.series.push(s);
        }
    }
    if spec.has(Fault::ProtoLabels) {
        for s in b.series.iter_mut().filter(|s| s.ep == p0) {
            s.labels.push(l("__proto__", "polluted"));
            s.labels.push(l("constructor", "Object"));
            s.labels.push(l("hasOwnProperty", "no"));
        }
    }
    let fams = b.fams;
    (fams, b.series)
}

/// A non-Dynamo frontend (an OpenAI-compatible router): HTTP instrumentation only.
fn generic_frontend(b: &mut Builder, ep: usize) {
    let lab = || {
        vec![
            l("handler", "/v1/chat/completions"),
            l("method", "POST"),
            l("status", "2xx"),
        ]
    };
    b.ctr(
        "http_requests",
        "Total number of requests by method, status and handler.",
        ep,
        Some(0),
        lab(),
        Moment::Fin,
        Field::Reqs,
    );
    b.hist(
        "http_request_duration_seconds",
        "Latency with only few buckets by handler.",
        ep,
        Some(0),
        vec![l("handler", "/v1/chat/completions"), l("method", "POST")],
        HistKind::Http,
    );
}
