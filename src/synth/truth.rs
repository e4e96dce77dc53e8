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

use super::aiperf::jsonl::{Edges, Pass1};
use super::aiperf::Shown;
use super::engines::{price_moment, Src};
use super::faults::Fault;
use super::launch::offload_facts;
use super::out::{Out, Sink};
use super::plan::Plan;
use super::scrape::{mi, Cum};
use super::series::Moment;
use super::spec::{Engine, Schema};
use crate::account::verdict::{ReasonCode, Status};
use crate::model::Role;
use serde_json::{json, Map, Value};
use std::io::{self, Write};

pub const MAX_RATE_WIDTH: f64 = 0.005;

fn rc(c: ReasonCode) -> Value {
    Value::String(c.as_str().to_string())
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
    le_t(e, t).map(|x| (x.1, x.2))
}

/// `(time, prompt, hits)` of the last recent scrape at or before `t`.
fn le_t(e: &Edges, t: u64) -> Option<(u64, u64, u64)> {
    e.ring.iter().rev().find(|x| x.0 <= t).copied()
}

/// Conflicting-exports fault: whether the JSON export's timeslice lower bound of the first
/// priced endpoint's prompt tokens (its interior slices, with the other run's x1.25 and
/// traffic ramp) exceeds the raw scrapes' upper bound, with a margin for per-series
/// rounding: then the two kinds of evidence are disjoint.
fn conflict_shows(plan: &Plan) -> bool {
    // The JSON export's timeslices are differences of the scrapes the JSONL holds: an export
    // computed from other values contradicts them slice by slice.
    plan.spec.json && plan.spec.jsonl && plan.spec.slice_s > 0.0
}

/// Evidence bounds `(lo_F, hi_F, lo_H, hi_H)` of one endpoint, or `None` when unbounded.
fn bounds(plan: &Plan, p1: &Pass1, ep: usize, source_raw: bool) -> Option<(f64, f64, f64, f64)> {
    let e = &p1.edges[ep];
    let t = &plan.times;
    if source_raw {
        // Raw evidence is what the JSONL holds (duplicate scrapes are not written), over the
        // window an accountant can know: the phase range (a 1.1 JSON export), else the
        // profiling records.
        let (ws, we) = if plan.spec.schema == Schema::V1_1 && plan.spec.json {
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

/// Stage 1: the true in-window counters per endpoint and per role, and the priced sums.
struct Counted {
    endpoints: Vec<Value>,
    roles: Map<String, Value>,
    priced: Canon,
    priced_phys: Cum,
}

fn phys_json(c: &Cum) -> Value {
    json!({"prompt": c.prompt, "gpu": c.gpu, "cpu": c.cpu, "external": c.ext})
}

fn role_name(r: Role) -> String {
    match r {
        Role::Prefill => "prefill",
        Role::Decode => "decode",
        Role::Unified => "unified",
        Role::Frontend => "frontend",
        Role::Excluded => "excluded",
    }
    .to_string()
}

/// True increase between the P0 (strict) and P1 probes of one endpoint at one moment.
fn inc(p1: &Pass1, ep: usize, m: usize) -> Cum {
    p1.probes[2][ep][m].minus(&p1.probes[1][ep][m])
}

fn count_roles(plan: &Plan, p1: &Pass1) -> Counted {
    let m = mi(price_moment(plan.spec.engine));
    let mut roles: Vec<(Role, Canon, Cum)> = Vec::new();
    let mut endpoints = Vec::new();
    for (ep, e) in plan.endpoints.iter().enumerate() {
        let (c, k) = if e.role == Role::Frontend {
            let c = inc(p1, ep, mi(Moment::Ftk));
            let k = Canon {
                prompt: Some(c.prompt),
                total: Some(c.hits()),
                ..Canon::default()
            };
            (c, k)
        } else {
            let c = inc(p1, ep, m);
            (c, canonical(plan, &c))
        };
        endpoints.push(json!({
            "endpoint_url": e.url,
            "role": role_name(e.role),
            "scraped": e.scraped,
            "canonical": k.to_json(),
            "physical": phys_json(&c),
        }));
        match roles.iter_mut().find(|r| r.0 == e.role) {
            Some(r) => {
                r.1.add(&k, false);
                r.2.plus(&c);
            }
            None => roles.push((e.role, k, c)),
        }
    }
    let mut out = Counted {
        endpoints,
        roles: Map::new(),
        priced: Canon::default(),
        priced_phys: Cum::default(),
    };
    let mut first = true;
    for (r, k, c) in &roles {
        out.roles.insert(
            role_name(*r),
            json!({"canonical": k.to_json(), "physical": phys_json(c)}),
        );
        if matches!(r, Role::Prefill | Role::Unified) {
            out.priced.add(k, first);
            first = false;
            out.priced_phys.plus(c);
        }
    }
    out
}

/// Canonical and physical tier rates of the priced roles.
fn rates_json(c: &Counted) -> (Value, Value) {
    let (k, ph) = (&c.priced, &c.priced_phys);
    let rates = json!({
        "gpu": ratio(k.gpu, k.prompt),
        "cpu": ratio(k.cpu, k.prompt),
        "external": ratio(k.ext, k.prompt),
        "overall": ratio(k.total, k.prompt),
    });
    let phys = json!({
        "gpu": ratio(Some(ph.gpu), Some(ph.prompt)),
        "cpu": ratio(Some(ph.cpu), Some(ph.prompt)),
        "external": ratio(Some(ph.ext), Some(ph.prompt)),
        "overall": ratio(Some(ph.hits()), Some(ph.prompt)),
    });
    (rates, phys)
}

/// Stage 2: CONTRACT section 4 bounds over the scraped priced endpoints.
struct Evidence {
    json: Value,
    /// Width of the overall rate's interval, when bounded.
    width: Option<f64>,
    /// The priced prompt interval, when bounded.
    server_prompt: Option<(f64, f64)>,
    unbounded: bool,
}

fn evidence(plan: &Plan, p1: &Pass1, countable: bool, scraped: &[usize]) -> Evidence {
    let raw = plan.spec.jsonl;
    let source = if raw {
        "raw_scrapes"
    } else if plan.spec.json {
        "timeslices"
    } else {
        "stats_total"
    };
    let mut ev = Evidence {
        json: json!({ "source": source }),
        width: None,
        server_prompt: None,
        unbounded: false,
    };
    if !countable || scraped.is_empty() {
        return ev;
    }
    if !raw && !plan.spec.json {
        // CSV only: `stats.total` is never a lower bound, and without `endpoint_info` it
        // cannot be shown to cover the window: unbounded above, and the rate spans [0, 1].
        ev.unbounded = true;
        ev.width = Some(1.0);
        return ev;
    }
    let (mut lf, mut hf, mut lh, mut hh) = (0.0, 0.0, 0.0, 0.0);
    for &ep in scraped {
        let Some((a, b, c, d)) = bounds(plan, p1, ep, raw) else {
            ev.unbounded = true;
            return ev;
        };
        lf += a;
        hf += b;
        lh += c;
        hh += d;
    }
    let (n, d_, nn, dd) = (lh, lf, hh - lh, hf - lf);
    let mm = nn.min(dd);
    let lo = if d_ + dd > 0.0 { n / (d_ + dd) } else { 0.0 };
    let hi = if d_ + mm > 0.0 {
        (n + mm) / (d_ + mm)
    } else {
        1.0
    };
    ev.width = Some(hi - lo);
    ev.server_prompt = Some((lf, hf));
    ev.json = json!({
        "source": source,
        "priced_prompt": {"lo": lf, "hi": hf},
        "priced_hits": {"lo": lh, "hi": hh},
        "overall_rate": {"lo": lo, "hi": hi, "width": hi - lo},
        "warmup_proof": !raw && plan.spec.schema == Schema::V1_1,
    });
    ev
}

/// What the checks of stage 3 found, shared by the run's and each fault's reasons.
struct Found {
    too_wide: bool,
    not_conserved: bool,
    prof_errs: u64,
    /// Legacy builds without any priced counter: a counter fault changes no priced rate.
    no_priced: bool,
    legacy_missing: bool,
    not_sep: bool,
}

/// Stage 3: the run's own failing and informational codes (faults aside).
fn run_checks(
    plan: &Plan,
    p1: &Pass1,
    ev: &Evidence,
    counted: &Counted,
    scraped: &[usize],
) -> (Found, Vec<ReasonCode>, Vec<ReasonCode>) {
    let s = &plan.spec;
    let countable = countable(plan, counted);
    let (mut fails, mut info) = (Vec::new(), Vec::new());
    // No prompt token truly counted in the window: no evidence can prove one, so the rate
    // has no value (0/0). (An evidence-only zero lower bound, e.g. CSV-only, is a width
    // matter and is not listed.)
    if counted.priced.prompt == Some(0) && !scraped.is_empty() {
        fails.push(ReasonCode::NoPromptInWindow);
    }
    if p1.prof.records == 0 {
        fails.push(ReasonCode::NoRequestRecords);
    }
    if s.has(Fault::PrefixCachingDisabled) {
        info.push(ReasonCode::PrefixCachingDisabled);
    }
    if ev.unbounded {
        fails.push(ReasonCode::IncreaseUnbounded);
    }
    if scraped.is_empty() {
        fails.push(ReasonCode::NoEngineMetrics);
    }
    let legacy_missing =
        s.variant_legacy && matches!(s.engine, Engine::Vllm | Engine::Dynamo | Engine::Trtllm);
    if legacy_missing {
        fails.push(if s.engine == Engine::Trtllm {
            ReasonCode::TokenCountersAbsent
        } else {
            ReasonCode::BySourceMissing
        });
    }
    let too_wide = ev.width.is_some_and(|w| w > MAX_RATE_WIDTH);
    if too_wide {
        fails.push(ReasonCode::RateTooWide);
    }
    let prof = &p1.prof;
    let client = prof.client_prompt as f64;
    let not_conserved = ev
        .server_prompt
        .is_some_and(|(lo, hi)| client < lo || client > hi);
    if not_conserved {
        fails.push(ReasonCode::PromptNotConserved);
    }
    if s.engine == Engine::Atom && countable {
        let adm: u64 = plan.priced.iter().map(|&ep| inc(p1, ep, 0).reqs).sum();
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
    if plan
        .series
        .iter()
        .any(|x| matches!(x.src, Src::HitRatioCum(_) | Src::LastHitRatio))
    {
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
    let found = Found {
        too_wide,
        not_conserved,
        prof_errs,
        no_priced: legacy_missing,
        legacy_missing,
        not_sep,
    };
    (found, fails, info)
}

/// Whether the priced counters exist and no restart hides their increase.
fn countable(plan: &Plan, counted: &Counted) -> bool {
    let s = &plan.spec;
    counted.priced.prompt.is_some() && !s.has(Fault::CounterReset) && !s.has(Fault::RestartUnseen)
}

/// The engine variant exports a generation-token counter (the role-shape evidence).
fn exports_generation(plan: &Plan) -> bool {
    plan.families
        .iter()
        .any(|f| f.name.ends_with("generation_tokens"))
}

/// Stage 4: the failing and informational codes one fault requires.
fn fault_codes(
    plan: &Plan,
    p1: &Pass1,
    f: Fault,
    k: &Found,
    shown: &Shown,
) -> (Vec<ReasonCode>, Vec<ReasonCode>) {
    let s = &plan.spec;
    let prof = &p1.prof;
    let m = mi(price_moment(s.engine));
    let conflict = |on: bool| match on && !k.no_priced {
        true => vec![ReasonCode::EvidenceConflict],
        false => vec![],
    };
    match f {
        Fault::ConflictingExports => (conflict(conflict_shows(plan)), vec![]),
        Fault::CsvJsonDisagree => (conflict(shown.csv_disagrees), vec![]),
        Fault::DuplicateTimestamp => (conflict(shown.duplicate_timestamp), vec![]),
        Fault::RestartUnseen if k.no_priced => (vec![], vec![]),
        Fault::RestartUnseen => (vec![ReasonCode::CounterReset], vec![]),
        Fault::ZeroTraffic => {
            let mut v = vec![ReasonCode::NoRequestRecords];
            if !k.no_priced {
                v.push(ReasonCode::NoPromptInWindow);
            }
            if k.too_wide {
                v.push(ReasonCode::RateTooWide);
            }
            (v, vec![])
        }
        Fault::DuplicateFamily if shown.duplicate_family => {
            (vec![], vec![ReasonCode::DuplicateFamilyMerged])
        }
        // The file cannot be read: `expected.read_error`; no verdict codes.
        Fault::DuplicateFamily | Fault::DuplicateFamilyConflict => (vec![], vec![]),
        // The shape (generation tokens per request) shows once requests were served, where
        // the build exports a generation-token counter (TensorRT-LLM before 1.3 does not).
        Fault::SwappedLaunch if prof.ok > 0 && exports_generation(plan) => {
            (vec![ReasonCode::RoleShapeConflict], vec![])
        }
        Fault::SwappedLaunch => (vec![], vec![]),
        Fault::BenchmarkMismatch => (vec![ReasonCode::BenchmarkMismatch], vec![]),
        Fault::RecordsOutsideWindow => {
            let t = &plan.times;
            let mut v = Vec::new();
            if prof.records > 0 && (prof.min_start < t.p0 || prof.max_end > t.p1) {
                v.push(ReasonCode::RecordsOutsideWindow);
            }
            if k.not_conserved {
                v.push(ReasonCode::PromptNotConserved);
            }
            (v, vec![])
        }
        Fault::PrefixCachingDisabled => (vec![], vec![ReasonCode::PrefixCachingDisabled]),
        Fault::StartGap
        | Fault::StraddleProof
        | Fault::StraddleNoProof
        | Fault::LateFinalScrape => {
            let mut v = Vec::new();
            if k.too_wide {
                v.push(ReasonCode::RateTooWide);
            }
            if k.not_conserved {
                v.push(ReasonCode::PromptNotConserved);
            }
            (v, vec![])
        }
        Fault::CounterReset | Fault::AliasCollision | Fault::TpDisagree if k.no_priced => {
            (vec![], vec![])
        }
        // The lagging replica reads 0.995 × the value: with (next to) no traffic on the
        // first priced endpoint in the window, the replicas still agree.
        Fault::TpDisagree if inc(p1, plan.priced[0], m).prompt < 1000 => (vec![], vec![]),
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
            if k.prof_errs > 0 {
                v.push(ReasonCode::ProfilingErrors);
            }
            if prof.cancelled > 0 {
                v.push(ReasonCode::ProfilingCancellations);
            }
            (v, vec![])
        }
        Fault::NanGauges | Fault::ProtoLabels => (vec![], vec![]),
        Fault::TpDisagree => (vec![ReasonCode::ReplicaDisagreement], vec![]),
    }
}

fn spec_json(plan: &Plan) -> Value {
    let s = &plan.spec;
    let (off, backend) = offload_facts(plan);
    let (cur, leg) = s.engine.variants();
    let mut v = json!({
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
    });
    // Only when off, so that the default runs' truth stays as it was.
    for (on, key) in [(s.json, "json"), (s.csv, "csv")] {
        if !on {
            v[key] = json!(false);
        }
    }
    v
}

fn codes_json(codes: &[ReasonCode]) -> Vec<Value> {
    codes.iter().map(|c| rc(*c)).collect()
}

fn requests_json(p1: &Pass1, prof_errs: u64) -> Value {
    let prof = &p1.prof;
    json!({
        "profiling_records": prof.records,
        "profiling_errors": prof_errs,
        "profiling_cancelled": prof.cancelled,
        "client_prompt_tokens": prof.client_prompt,
        "warmup_records": p1.warm.records,
        "warmup_errors": p1.warm.errors,
        "theoretical_hit_rate": if prof.theory_blocks > 0 { json!(prof.theory_hit as f64 / prof.theory_blocks as f64) } else { Value::Null },
    })
}

/// Write `truth.json`; returns the file and the expected status.
pub fn write_truth(
    plan: &Plan,
    sink: &Sink,
    p1: &Pass1,
    shown: &Shown,
) -> io::Result<((String, u64), String)> {
    let s = &plan.spec;
    let t = &plan.times;
    let counted = count_roles(plan, p1);
    let (rates, phys_rates) = rates_json(&counted);
    let scraped: Vec<usize> = plan
        .priced
        .iter()
        .copied()
        .filter(|&e| plan.endpoints[e].scraped)
        .collect();
    let ev = evidence(plan, p1, countable(plan, &counted), &scraped);
    let (found, mut fails, mut info) = run_checks(plan, p1, &ev, &counted, &scraped);
    let mut fault_json = Vec::new();
    for f in &s.faults {
        let (codes, inf) = fault_codes(plan, p1, *f, &found, shown);
        for c in &codes {
            if !fails.contains(c) {
                fails.push(*c);
            }
        }
        fault_json.push(json!({
            "fault": f.as_str(),
            "status": status_of(&codes).as_str(),
            "reasons": codes_json(&codes),
            "info": codes_json(&inf),
        }));
    }
    if s.has(Fault::DuplicateFamily) && shown.duplicate_family {
        info.push(ReasonCode::DuplicateFamilyMerged);
    }
    fails.sort();
    fails.dedup();
    info.sort();
    info.dedup();
    let status = status_of(&fails);
    let cpu_component = if !plan.tiers_cpu && !plan.tiers_ext {
        "not_offloaded"
    } else if s.has(Fault::CpuCounterAbsent) || found.not_sep || found.legacy_missing {
        "missing"
    } else {
        "measured"
    };
    let mut expected = json!({
        "status": status.as_str(),
        "pricing_eligible": status == Status::ValidComplete,
        "reasons": codes_json(&fails),
        "info": codes_json(&info),
        "cpu_component": cpu_component,
        "max_rate_width": MAX_RATE_WIDTH,
    });
    if s.has(Fault::DuplicateFamilyConflict) && shown.duplicate_family {
        // The run cannot be read at all: the reader refuses the file with this code.
        expected["read_error"] = json!("DUPLICATE_KEY");
    }
    let doc = json!({
        "generator": "kvledger synth",
        "contract_version": "kvledger/1",
        "spec": spec_json(plan),
        "window": {"start_ns": t.p0, "end_ns": t.p1},
        "warmup": {"start_ns": t.w0, "end_ns": t.p0 - 1},
        "counting_moment": price_moment(s.engine).as_str(),
        "roles": Value::Object(counted.roles),
        "rates": rates,
        "physical_rates": phys_rates,
        "endpoints": counted.endpoints,
        "requests": requests_json(p1, found.prof_errs),
        "evidence": ev.json,
        "expected": expected,
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
