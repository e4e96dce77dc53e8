//! Each engine's metric families: names as AIPerf exports them (a counter's `_total`
//! stripped), types, HELP, labels, and which true quantity at which counting moment each
//! series reads. Version variants follow `research/engine-metrics.md`.

pub mod atom;
pub mod dynamo;
pub mod sglang;
pub mod trtllm;
pub mod vllm;

use super::faults::Fault;
use super::plan::Plan;
use super::series::Moment;
pub use super::series::{infer_unit, l, FamilyDef, Field, HistKind, Labels, SeriesDef, Src};
use super::spec::Engine;
use crate::model::{MetricType, Role};
use std::collections::HashMap;

pub struct Builder<'p> {
    pub plan: &'p Plan,
    pub fams: Vec<FamilyDef>,
    pub series: Vec<SeriesDef>,
    index: HashMap<String, usize>,
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
            conflict: false,
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
    /// A series created on its first increment; with prefix caching disabled the engine's
    /// hit series are exported at 0 instead (the engine reports 0 hits).
    pub fn lazy(&mut self, i: usize) {
        if !self.plan.spec.has(Fault::PrefixCachingDisabled) {
            self.series[i].lazy = true;
        }
    }

    /// Whether role-stating labels are emitted (not with the swapped-launch fault, where the
    /// launch facts must be the only role evidence).
    pub fn role_labels(&self) -> bool {
        !self.plan.spec.has(Fault::SwappedLaunch)
    }

    /// A role-stating label (`key` = the endpoint's role), unless `role_labels` is off.
    pub fn role_label(&self, key: &str, ep: usize) -> Option<(String, String)> {
        let role = match self.plan.endpoints[ep].role {
            Role::Prefill => "prefill",
            Role::Decode => "decode",
            _ => "unified",
        };
        self.role_labels().then(|| l(key, role))
    }
    pub fn capacity_blocks(&self) -> u64 {
        engine_capacity_tokens() / self.plan.block_size.max(1) as u64
    }
}

/// KV capacity of one pool in tokens (usage gauges are in-flight tokens over this).
pub fn engine_capacity_tokens() -> u64 {
    1_048_576
}

/// The moment at which an engine counts the priced prompt and hit counters.
pub fn price_moment(e: Engine) -> Moment {
    match e {
        Engine::Vllm | Engine::Dynamo => Moment::Ftk,
        Engine::Sglang | Engine::Trtllm => Moment::Fin,
        Engine::Atom => Moment::Adm,
    }
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
        let start_s = (Plan::epoch_base(plan.spec.seed) / 1_000_000_000) as f64 - 600.0 - ep as f64;
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
    if spec.has(Fault::ConflictingExports) {
        for s in b.series.iter_mut() {
            s.conflict = s.ep == p0 && priced.contains(&b.fams[s.fam].name.as_str());
        }
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
