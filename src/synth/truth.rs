//! `truth.json` (the true in-window counters per role and tier, the true rates, and the
//! verdict the contract requires, per fault and overall) and `launch.json`.
//!
//! "In window" = counted at a moment t with P0 <= t <= P1 (the profiling phase range), from
//! the generator's own event stream, never from the exports. Canonical counters are what a
//! correct adapter of this engine version maps the exported families to (CONTRACT section 2);
//! `physical` is where the tokens were really served from. A tier is `null` where the engine
//! version cannot tell it (not separable, or its counter is absent); `hit_total` then carries
//! the overall hits when the engine still counts them.
//!
//! Expected window/conservation outcomes are computed, not assumed: the evidence bounds of
//! CONTRACT section 4 are evaluated from the generated scrapes (raw scrapes when the JSONL is
//! written, else timeslices, with the schema 1.1 warmup proof removing the pre-window mass of
//! the first slice) and the rate interval is checked against `max_rate_width` 0.005.

use super::aiperf::jsonl::{price_moment, Edges, Pass1};
use super::aiperf::{Out, Sink};
use super::plan::Plan;
use super::scrape::{mi, Cum};
use super::workload::Moment;
use super::{Engine, Fault, Schema};
use crate::account::verdict::{ReasonCode, Status};
use crate::model::Role;
use serde_json::{json, Map, Value};
use std::io::{self, Write};

pub const MAX_RATE_WIDTH: f64 = 0.005;

fn rc(c: ReasonCode) -> Value {
    Value::String(c.as_str().to_string())
}

pub fn offload_facts(plan: &Plan) -> (&'static str, Option<&'static str>) {
    let e = plan.spec.engine;
    if plan.tiers_cpu {
        let b = match e {
            Engine::Vllm | Engine::Dynamo => "native",
            Engine::Sglang => "hicache",
            Engine::Trtllm => "host",
            Engine::Atom => "lmcache",
        };
        ("cpu", Some(b))
    } else if plan.tiers_ext {
        let b = match e {
            Engine::Trtllm => "disk",
            _ => "mooncake",
        };
        ("storage", Some(b))
    } else {
        ("none", None)
    }
}

pub fn write_launch(plan: &Plan, sink: &Sink) -> io::Result<(String, u64)> {
    let mut m = Map::new();
    m.insert("framework".into(), json!(plan.spec.engine.as_str()));
    m.insert(
        "disaggregated".into(),
        json!(plan.spec.topology.is_disagg()),
    );
    let list = |r: Role| -> Vec<String> {
        plan.endpoints
            .iter()
            .filter(|e| e.role == r)
            .map(|e| e.host_port.clone())
            .collect()
    };
    if plan.spec.topology.is_disagg() {
        m.insert("prefill_endpoints".into(), json!(list(Role::Prefill)));
        m.insert("decode_endpoints".into(), json!(list(Role::Decode)));
    } else {
        m.insert("agg_endpoints".into(), json!(list(Role::Unified)));
    }
    if let Some(fe) = plan.frontend {
        let mut r = Map::new();
        r.insert(plan.endpoints[fe].host_port.clone(), json!("frontend"));
        m.insert("endpoint_roles".into(), Value::Object(r));
    }
    let (off, backend) = offload_facts(plan);
    m.insert("kv_offloading".into(), json!(off));
    if let Some(b) = backend {
        m.insert("kv_offload_backend".into(), json!(b));
    }
    let mut out = Out::open(sink, "launch.json")?;
    serde_json::to_writer_pretty(&mut out, &Value::Object(m))?;
    out.write_all(b"\n")?;
    out.finish()
}

/// Canonical counters of one endpoint's in-window increase.
#[derive(Debug, Clone, Copy, Default)]
struct Canon {
    prompt: Option<u64>,
    gpu: Option<u64>,
    cpu: Option<u64>,
    ext: Option<u64>,
    total: Option<u64>,
}

fn add_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x + y),
        _ => None,
    }
}

impl Canon {
    fn add(&mut self, o: &Canon, first: bool) {
        if first {
            *self = *o;
            return;
        }
        self.prompt = add_opt(self.prompt, o.prompt);
        self.gpu = add_opt(self.gpu, o.gpu);
        self.cpu = add_opt(self.cpu, o.cpu);
        self.ext = add_opt(self.ext, o.ext);
        self.total = add_opt(self.total, o.total);
    }
    fn to_json(self) -> Value {
        json!({"prompt": self.prompt, "hit_gpu": self.gpu, "hit_cpu": self.cpu, "hit_external": self.ext, "hit_total": self.total})
    }
}

/// The tiers an adapter can tell apart for this engine version.
fn canonical(plan: &Plan, c: &Cum) -> Canon {
    let s = &plan.spec;
    let absent = s.has(Fault::CpuCounterAbsent);
    let off = plan.tiers_cpu || plan.tiers_ext;
    let z = |on: bool, v: u64| if on { Some(v) } else { Some(0) };
    let mut k = Canon::default();
    match s.engine {
        Engine::Vllm | Engine::Dynamo => {
            if s.variant_legacy {
                return k;
            }
            k.prompt = Some(c.prompt);
            k.gpu = Some(c.gpu);
            let ext_kv = if absent { c.ext } else { c.cpu + c.ext };
            if plan.tiers_cpu {
                k.cpu = if absent { None } else { Some(ext_kv) };
                k.ext = Some(if absent { ext_kv } else { 0 });
            } else {
                k.cpu = Some(0);
                k.ext = Some(ext_kv);
            }
        }
        Engine::Sglang => {
            k.prompt = Some(c.prompt);
            if s.variant_legacy && off {
                k.total = Some(if absent { c.gpu + c.ext } else { c.hits() });
                return k;
            }
            k.gpu = Some(c.gpu);
            k.cpu = if absent {
                None
            } else {
                z(plan.tiers_cpu, c.cpu)
            };
            k.ext = z(plan.tiers_ext, c.ext);
        }
        Engine::Trtllm => {
            if s.variant_legacy {
                return k;
            }
            k.prompt = Some(c.prompt);
            k.gpu = Some(if off { c.gpu } else { c.hits() });
            k.cpu = if absent {
                None
            } else {
                z(plan.tiers_cpu, c.cpu)
            };
            k.ext = z(plan.tiers_ext, c.ext);
        }
        Engine::Atom => {
            k.prompt = Some(c.prompt);
            if s.variant_legacy && plan.tiers_cpu && !absent {
                k.total = Some(c.gpu + c.cpu);
                return k;
            }
            k.gpu = Some(c.gpu);
            k.cpu = if absent {
                None
            } else {
                z(plan.tiers_cpu, c.cpu)
            };
            k.ext = Some(0);
        }
    }
    if k.total.is_none() {
        k.total = match (k.gpu, k.cpu, k.ext) {
            (Some(g), Some(cc), Some(x)) => Some(g + cc + x),
            _ => None,
        };
    }
    k
}

fn ratio(n: Option<u64>, d: Option<u64>) -> Value {
    match (n, d) {
        (Some(n), Some(d)) if d > 0 => json!(n as f64 / d as f64),
        _ => Value::Null,
    }
}

/// `v(<= t)` from an endpoint's recent scrapes.
fn le(e: &Edges, t: u64) -> Option<(u64, u64)> {
    e.ring.iter().rev().find(|x| x.0 <= t).map(|x| (x.1, x.2))
}

/// Evidence bounds `(lo_F, hi_F, lo_H, hi_H)` of one endpoint, or `None` when unbounded.
fn bounds(plan: &Plan, p1: &Pass1, ep: usize, source_raw: bool) -> Option<(f64, f64, f64, f64)> {
    let e = &p1.edges[ep];
    let t = &plan.times;
    if source_raw {
        // Raw evidence is what the JSONL holds (duplicate scrapes are not written), over the
        // window an accountant can know: the phase range (1.1), else the profiling records.
        let (ws, we) = if plan.spec.schema == Schema::V1_1 {
            (t.p0, t.p1)
        } else {
            (p1.prof.min_start, p1.prof.max_end)
        };
        let r = &e.recorded;
        let a = r
            .iter()
            .rev()
            .find(|v| v.0 <= ws)
            .copied()
            .unwrap_or((0, 0, 0));
        let b = *r.iter().find(|v| v.0 >= ws)?;
        let c = *r.iter().rev().find(|v| v.0 <= we)?;
        let d = *r.iter().find(|v| v.0 >= we)?;
        if c.0 < b.0 {
            return Some((0.0, (d.1 - a.1) as f64, 0.0, (d.2 - a.2) as f64));
        }
        return Some((
            (c.1 - b.1) as f64,
            (d.1 - a.1) as f64,
            (c.2 - b.2) as f64,
            (d.2 - a.2) as f64,
        ));
    }
    let slice = (plan.spec.slice_s * 1e9) as u64;
    let we = t.p1.max(p1.info[ep].last_update);
    let k = (we - t.p0 - 1) / slice;
    let lastb = t.p0 + k * slice;
    let v0 = e.le_p0?;
    let v1 = e.le_p0s?;
    let vl = le(e, lastb)?;
    let ve = le(e, we)?;
    let lo_f = vl.0.saturating_sub(v1.1);
    let lo_h = vl.1.saturating_sub(v1.2);
    let (mut hi_f, mut hi_h) = (ve.0 - v0.1, ve.1 - v0.2);
    if plan.spec.schema == Schema::V1_1 && plan.spec.warmup_per_lane > 0 {
        // Warmup proof: the pre-window mass of the first slice.
        let m = mi(price_moment(plan.spec.engine));
        let before = &p1.probes[1][ep][m];
        hi_f -= before.prompt.saturating_sub(v0.1).min(hi_f);
        hi_h -= before.hits().saturating_sub(v0.2).min(hi_h);
    }
    if k == 0 {
        return Some((0.0, hi_f as f64, 0.0, hi_h as f64));
    }
    Some((lo_f as f64, hi_f as f64, lo_h as f64, hi_h as f64))
}

pub fn write_truth(plan: &Plan, sink: &Sink, p1: &Pass1) -> io::Result<((String, u64), String)> {
    let s = &plan.spec;
    let t = &plan.times;
    let pm = price_moment(s.engine);
    let m = mi(pm);
    let inc = |ep: usize, mm: usize| -> Cum { p1.probes[2][ep][mm].minus(&p1.probes[1][ep][mm]) };
    // Per endpoint and per role.
    let mut roles: Vec<(Role, Canon, Cum, bool)> = Vec::new();
    let mut eps_json = Vec::new();
    for (ep, e) in plan.endpoints.iter().enumerate() {
        let c = if e.role == Role::Frontend {
            inc(ep, mi(Moment::Ftk))
        } else {
            inc(ep, m)
        };
        let k = if e.role == Role::Frontend {
            Canon {
                prompt: Some(c.prompt),
                total: Some(c.hits()),
                ..Canon::default()
            }
        } else {
            canonical(plan, &c)
        };
        eps_json.push(json!({
            "endpoint_url": e.url,
            "role": format!("{:?}", e.role).to_lowercase(),
            "scraped": e.scraped,
            "canonical": k.to_json(),
            "physical": {"prompt": c.prompt, "gpu": c.gpu, "cpu": c.cpu, "external": c.ext},
        }));
        match roles.iter_mut().find(|r| r.0 == e.role) {
            Some(r) => {
                r.1.add(&k, false);
                r.2.prompt += c.prompt;
                r.2.gpu += c.gpu;
                r.2.cpu += c.cpu;
                r.2.ext += c.ext;
            }
            None => roles.push((e.role, k, c, true)),
        }
    }
    let mut roles_json = Map::new();
    let mut priced = Canon::default();
    let mut priced_phys = Cum::default();
    let mut first = true;
    for (r, k, c, _) in &roles {
        let name = format!("{r:?}").to_lowercase();
        roles_json.insert(
            name,
            json!({"canonical": k.to_json(), "physical": {"prompt": c.prompt, "gpu": c.gpu, "cpu": c.cpu, "external": c.ext}}),
        );
        if matches!(r, Role::Prefill | Role::Unified) {
            priced.add(k, first);
            first = false;
            priced_phys.prompt += c.prompt;
            priced_phys.gpu += c.gpu;
            priced_phys.cpu += c.cpu;
            priced_phys.ext += c.ext;
        }
    }
    let rates = json!({
        "gpu": ratio(priced.gpu, priced.prompt),
        "cpu": ratio(priced.cpu, priced.prompt),
        "external": ratio(priced.ext, priced.prompt),
        "overall": ratio(priced.total, priced.prompt),
    });
    let phys_rates = json!({
        "gpu": ratio(Some(priced_phys.gpu), Some(priced_phys.prompt)),
        "cpu": ratio(Some(priced_phys.cpu), Some(priced_phys.prompt)),
        "external": ratio(Some(priced_phys.ext), Some(priced_phys.prompt)),
        "overall": ratio(Some(priced_phys.hits()), Some(priced_phys.prompt)),
    });
    // Evidence bounds over scraped priced endpoints.
    let raw = s.jsonl;
    let mut fails: Vec<ReasonCode> = Vec::new();
    let mut info: Vec<ReasonCode> = Vec::new();
    let mut fault_json = Vec::new();
    let scraped: Vec<usize> = plan
        .priced
        .iter()
        .copied()
        .filter(|&e| plan.endpoints[e].scraped)
        .collect();
    let countable = priced.prompt.is_some() && !(s.has(Fault::CounterReset));
    let mut evidence = json!({"source": if raw {"raw_scrapes"} else {"timeslices"}});
    let mut width = None;
    let mut server_prompt = None;
    if countable && !scraped.is_empty() {
        let (mut lf, mut hf, mut lh, mut hh) = (0.0, 0.0, 0.0, 0.0);
        let mut bounded = true;
        for &ep in &scraped {
            match bounds(plan, p1, ep, raw) {
                Some((a, b, c, d)) => {
                    lf += a;
                    hf += b;
                    lh += c;
                    hh += d;
                }
                None => bounded = false,
            }
        }
        if bounded {
            let (n, d_, nn, dd) = (lh, lf, hh - lh, hf - lf);
            let mm = nn.min(dd);
            let lo = if d_ + dd > 0.0 { n / (d_ + dd) } else { 0.0 };
            let hi = if d_ + mm > 0.0 {
                (n + mm) / (d_ + mm)
            } else {
                1.0
            };
            width = Some(hi - lo);
            server_prompt = Some((lf, hf));
            evidence = json!({
                "source": if raw {"raw_scrapes"} else {"timeslices"},
                "priced_prompt": {"lo": lf, "hi": hf},
                "priced_hits": {"lo": lh, "hi": hh},
                "overall_rate": {"lo": lo, "hi": hi, "width": hi - lo},
                "warmup_proof": !raw && s.schema == Schema::V1_1,
            });
        } else {
            fails.push(ReasonCode::IncreaseUnbounded);
        }
    }
    if scraped.is_empty() {
        fails.push(ReasonCode::NoEngineMetrics);
    }
    let legacy_missing =
        s.variant_legacy && matches!(s.engine, Engine::Vllm | Engine::Dynamo | Engine::Trtllm);
    // Legacy vLLM (no by-source counter) and TensorRT-LLM (no token counters) export no
    // counter the contract prices: a fault on their counters changes no priced rate.
    let no_priced = legacy_missing;
    if legacy_missing {
        fails.push(if s.engine == Engine::Trtllm {
            ReasonCode::TokenCountersAbsent
        } else {
            ReasonCode::BySourceMissing
        });
    }
    let too_wide = width.is_some_and(|w| w > MAX_RATE_WIDTH);
    if too_wide {
        fails.push(ReasonCode::RateTooWide);
    }
    let prof = &p1.prof;
    let not_conserved = server_prompt.is_some_and(|(lo, hi)| {
        (prof.client_prompt as f64) < lo || (prof.client_prompt as f64) > hi
    });
    if not_conserved {
        fails.push(ReasonCode::PromptNotConserved);
    }
    if s.engine == Engine::Atom && countable {
        let adm: u64 = plan.priced.iter().map(|&ep| inc(ep, 0).reqs).sum();
        if adm != prof.ok {
            fails.push(ReasonCode::AdmissionsNotConserved);
        }
    }
    let prof_errs = prof.errors - prof.cancelled;
    if prof_errs > 0 {
        fails.push(ReasonCode::ProfilingErrors);
    }
    if prof.cancelled > 0 {
        fails.push(ReasonCode::ProfilingCancellations);
    }
    if s.topology.is_disagg() {
        info.push(ReasonCode::DecodeExcluded);
    }
    if plan.frontend.is_some() {
        info.push(ReasonCode::FrontendSeparate);
    }
    if plan.series.iter().any(|x| {
        matches!(
            x.src,
            super::engines::Src::HitRatioCum(_) | super::engines::Src::LastHitRatio
        )
    }) {
        info.push(ReasonCode::RatioGaugeTelemetry);
    }
    let not_sep = (plan.tiers_cpu || plan.tiers_ext)
        && !s.has(Fault::CpuCounterAbsent)
        && ((s.engine == Engine::Sglang && s.variant_legacy)
            || (s.engine == Engine::Atom && s.variant_legacy && plan.tiers_cpu));
    if not_sep {
        info.push(ReasonCode::TiersNotSeparable);
    }
    if p1.warm.errors > 0 {
        info.push(ReasonCode::WarmupErrorsIgnored);
    }
    for f in &s.faults {
        let (codes, inf): (Vec<ReasonCode>, Vec<ReasonCode>) = match f {
            Fault::StartGap
            | Fault::StraddleProof
            | Fault::StraddleNoProof
            | Fault::LateFinalScrape => {
                let mut v = Vec::new();
                if too_wide {
                    v.push(ReasonCode::RateTooWide);
                }
                if not_conserved {
                    v.push(ReasonCode::PromptNotConserved);
                }
                (v, vec![])
            }
            Fault::CounterReset | Fault::AliasCollision | Fault::TpDisagree if no_priced => {
                (vec![], vec![])
            }
            // The lagging replica reads 0.995 × the value: with (next to) no traffic on the
            // first priced endpoint in the window, the replicas still agree.
            Fault::TpDisagree if inc(plan.priced[0], m).prompt < 1000 => (vec![], vec![]),
            Fault::CounterReset => (vec![ReasonCode::CounterReset], vec![]),
            Fault::AliasCollision => (vec![ReasonCode::AliasCollision], vec![]),
            // Without the offload counter (ATOM) or a tier label (legacy SGLang) the export
            // looks like a build that folds CPU hits into the GPU counter: the contract keeps
            // the overall rate and reports the split as not separable.
            Fault::CpuCounterAbsent
                if s.engine == Engine::Atom || (s.engine == Engine::Sglang && s.variant_legacy) =>
            {
                (vec![], vec![ReasonCode::TiersNotSeparable])
            }
            // SGLang creates a `cache_source` series on its first hit: a missing `host` series
            // reads as zero host hits (research/engine-metrics.md 2.1), so this is undetectable.
            Fault::CpuCounterAbsent if s.engine == Engine::Sglang => (vec![], vec![]),
            Fault::CpuCounterAbsent => (vec![ReasonCode::CpuTierUncounted], vec![]),
            Fault::DecodeRecount => (vec![], vec![ReasonCode::DecodeExcluded]),
            Fault::WorkerMissing => (vec![ReasonCode::WorkerMissing], vec![]),
            Fault::FrontendDuplicates => (vec![], vec![ReasonCode::FrontendSeparate]),
            Fault::ErrorsWarmup => (vec![], vec![ReasonCode::WarmupErrorsIgnored]),
            Fault::ErrorsProfiling => {
                let mut v = vec![];
                if prof_errs > 0 {
                    v.push(ReasonCode::ProfilingErrors);
                }
                if prof.cancelled > 0 {
                    v.push(ReasonCode::ProfilingCancellations);
                }
                (v, vec![])
            }
            Fault::NanGauges | Fault::ProtoLabels => (vec![], vec![]),
            Fault::TpDisagree => (vec![ReasonCode::ReplicaDisagreement], vec![]),
        };
        for c in &codes {
            if !fails.contains(c) {
                fails.push(*c);
            }
        }
        let st = status_of(&codes);
        fault_json.push(json!({
            "fault": f.as_str(),
            "status": st.as_str(),
            "reasons": codes.iter().map(|c| rc(*c)).collect::<Vec<_>>(),
            "info": inf.iter().map(|c| rc(*c)).collect::<Vec<_>>(),
        }));
    }
    fails.sort();
    fails.dedup();
    info.sort();
    info.dedup();
    let status = status_of(&fails);
    let cpu_component = if !plan.tiers_cpu && !plan.tiers_ext {
        "not_offloaded"
    } else if s.has(Fault::CpuCounterAbsent) || not_sep || legacy_missing {
        "missing"
    } else {
        "measured"
    };
    let (off, backend) = offload_facts(plan);
    let (cur, leg) = s.engine.variants();
    let doc = json!({
        "generator": "kvledger synth",
        "contract_version": "kvledger/1",
        "spec": {
            "engine": s.engine.as_str(),
            "variant": if s.variant_legacy { leg } else { cur },
            "topology": s.topology.to_string(),
            "tiers": {"gpu": true, "cpu": plan.tiers_cpu, "external": plan.tiers_ext},
            "kv_offloading": off,
            "kv_offload_backend": backend,
            "faults": s.faults.iter().map(|f| f.as_str()).collect::<Vec<_>>(),
            "seed": s.seed,
            "duration_s": s.duration_s,
            "concurrency": s.concurrency,
            "dp": s.dp,
            "tp": s.tp,
            "frontend": s.frontend,
            "schema": if s.schema == Schema::V1_1 {"1.1"} else {"1.0"},
            "jsonl": s.jsonl,
            "scrape_interval_s": s.scrape_interval_s,
            "slice_s": s.slice_s,
        },
        "window": {"start_ns": t.p0, "end_ns": t.p1},
        "warmup": {"start_ns": t.w0, "end_ns": t.p0 - 1},
        "counting_moment": format!("{pm:?}").to_lowercase(),
        "roles": Value::Object(roles_json),
        "rates": rates,
        "physical_rates": phys_rates,
        "endpoints": eps_json,
        "requests": {
            "profiling_records": prof.records,
            "profiling_errors": prof_errs,
            "profiling_cancelled": prof.cancelled,
            "client_prompt_tokens": prof.client_prompt,
            "warmup_records": p1.warm.records,
            "warmup_errors": p1.warm.errors,
            "theoretical_hit_rate": if prof.theory_blocks > 0 { json!(prof.theory_hit as f64 / prof.theory_blocks as f64) } else { Value::Null },
        },
        "evidence": evidence,
        "expected": {
            "status": status.as_str(),
            "pricing_eligible": status == Status::ValidComplete,
            "reasons": fails.iter().map(|c| rc(*c)).collect::<Vec<_>>(),
            "info": info.iter().map(|c| rc(*c)).collect::<Vec<_>>(),
            "cpu_component": cpu_component,
            "max_rate_width": MAX_RATE_WIDTH,
        },
        "faults": fault_json,
    });
    let mut out = Out::open(sink, "truth.json")?;
    serde_json::to_writer_pretty(&mut out, &doc)?;
    out.write_all(b"\n")?;
    Ok((out.finish()?, status.as_str().to_string()))
}

fn status_of(codes: &[ReasonCode]) -> Status {
    Status::CHECK_ORDER
        .into_iter()
        .find(|st| codes.iter().any(|c| c.status() == Some(*st)))
        .unwrap_or(Status::ValidComplete)
}
