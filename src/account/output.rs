//! The accounting result (CONTRACT sections 6 and 7): one JSON-serialisable object per run.
//! Optional values that are unknown are omitted; `hi` of an unbounded interval is omitted too
//! (JSON has no infinity). Every list is sorted, so equal inputs give byte-identical JSON.

use super::interval::{Interval, Method};
use super::policy::Policy;
use super::pools::Counted;
use super::rates::{rate, Rate};
use super::roles::{is_priced_role, role_name, Deployment, RoleSource};
use super::verdict::{CpuComponent, Reason, Status};
use crate::engines::{Counter, CounterMap, Engine};
use crate::model::Role;
use crate::strmap::StrMap;
use crate::wire::EpochNs;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// An interval of a counter's in-window increase. `hi` absent = unbounded.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct Bounds {
    pub lo: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub hi: Option<f64>,
    /// Point estimate (exact when `lo == hi`; the telemetry total when unbounded).
    pub value: f64,
}

impl From<Interval> for Bounds {
    fn from(i: Interval) -> Self {
        Bounds {
            lo: i.lo,
            hi: i.hi.is_finite().then_some(i.hi),
            value: i.est,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct Roles {
    pub source: RoleSource,
    pub prefill: Vec<String>,
    pub decode: Vec<String>,
    pub unified: Vec<String>,
    pub frontend: Vec<String>,
    pub excluded: Vec<String>,
    /// Engine endpoints whose role is unresolved.
    pub unresolved: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum WindowSource {
    PhaseTimeRanges,
    ProfileRecords,
    None,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct WindowInfo {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub start_ns: Option<EpochNs>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub end_ns: Option<EpochNs>,
    pub source: WindowSource,
    /// The weakest evidence that bounded a priced counter.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub evidence: Option<Method>,
    /// Edge slices whose mass counted toward the upper bound only (priced counters).
    pub straddles: u32,
    /// Gaps in the slice grid inside the window (priced counters).
    pub gaps: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct RequestScope {
    pub profiling_records: u64,
    pub errors: u64,
    pub cancelled: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub client_prompt_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub server_prompt: Option<Bounds>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub admissions: Option<Bounds>,
    pub conserved: bool,
}

/// What pricing needs and what the evidence gave.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct Scope {
    pub roles: Vec<Role>,
    pub tiers: Vec<String>,
}

/// `cache_validity` (CONTRACT section 6).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct CacheValidity {
    pub status: Status,
    pub pricing_eligible: bool,
    /// Every failed check and every informational note, sorted.
    pub reasons: Vec<Reason>,
    pub requested_scope: Scope,
    pub observed_scope: Scope,
    pub cpu_component: CpuComponent,
    pub roles: Roles,
    pub window: WindowInfo,
    pub request_scope: RequestScope,
    pub contract_version: String,
}

/// Tier rates with bounds; a tier is absent when no counter measures it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct Rates {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub gpu: Option<Rate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub cpu: Option<Rate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub external: Option<Rate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub overall: Option<Rate>,
    /// How `value` is chosen.
    pub value_rule: String,
    /// Tiers one counter stands for (e.g. `hit_external` aliases `hit_cpu` on ATOM).
    pub tier_aliases: Vec<TierAlias>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct TierAlias {
    pub tier: Counter,
    pub same_as: Counter,
}

/// Canonical counters of one role or endpoint; absent = not exported.
#[derive(Debug, Clone, PartialEq, Default, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct Counters {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub prompt: Option<Bounds>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub hit_gpu: Option<Bounds>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub hit_cpu: Option<Bounds>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub hit_external: Option<Bounds>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub admissions: Option<Bounds>,
}

impl Counters {
    pub fn set(&mut self, c: Counter, b: Bounds) {
        match c {
            Counter::Prompt => self.prompt = Some(b),
            Counter::HitGpu => self.hit_gpu = Some(b),
            Counter::HitCpu => self.hit_cpu = Some(b),
            Counter::HitExternal => self.hit_external = Some(b),
            Counter::Admissions => self.admissions = Some(b),
        }
    }
}

/// One endpoint: its role, engine, counters and how they were bounded.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[cfg_attr(target_arch = "wasm32", tsify(hashmap_as_object))]
pub struct Source {
    pub endpoint_url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub role: Option<Role>,
    pub role_source: RoleSource,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub engine: Option<Engine>,
    pub priced: bool,
    pub counters: Counters,
    /// Evidence method per counter.
    // Keyed by the counter's static name: a `String` each was five allocations per endpoint.
    pub methods: BTreeMap<&'static str, Method>,
    /// This endpoint's own overall rate (telemetry).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub overall: Option<Rate>,
}

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum TokenSource {
    /// Dynamo frontend totals.
    Frontend,
    /// The priced role's engine counters (aggregated deployments).
    PricedRole,
    /// The client's per-request records.
    Client,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct Tokens {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub prompt_total: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub generation_total: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub source: Option<TokenSource>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct KvEndpoint {
    pub endpoint_url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub role: Option<Role>,
    /// Tokens of KV capacity, from this endpoint's own block count × its own block size.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub capacity_tokens: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub usage_avg: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub usage_max: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct KvCache {
    /// The headline pool: unified endpoints summed (aggregated) or the decode pool (P/D).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub pool_tokens: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub prefill_pool_tokens: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub decode_pool_tokens: Option<f64>,
    pub endpoints: Vec<KvEndpoint>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct Offload {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub bytes_gpu_to_cpu: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub bytes_cpu_to_gpu: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub time_gpu_to_cpu_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub time_cpu_to_gpu_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub bandwidth_gpu_to_cpu_bytes_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub bandwidth_cpu_to_gpu_bytes_per_s: Option<f64>,
}

/// Telemetry that is reported and never priced.
#[derive(Debug, Clone, PartialEq, Default, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[cfg_attr(target_arch = "wasm32", tsify(hashmap_as_object))]
pub struct Telemetry {
    /// Ratio gauges (family → mean of series averages): never priced, never averaged into a rate.
    pub ratio_gauges: BTreeMap<String, f64>,
    /// Dynamo frontend hit rate (cached/input histogram sums).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub frontend_hit_rate: Option<f64>,
    /// vLLM `prefix_cache_hits / prefix_cache_queries` over priced roles.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub vllm_hits_over_queries: Option<f64>,
}

/// The flat keys the dashboard stores today, right under its current rule
/// (h = gpu + external when external is a number, even 0; else gpu + cpu).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[cfg_attr(target_arch = "wasm32", tsify(missing_as_null))]
pub struct Legacy {
    pub server_gpu_cache_hit_rate: Option<f64>,
    pub server_cpu_cache_hit_rate: Option<f64>,
    /// (C + X)/F whenever any non-GPU tier exists; null when none does.
    pub server_external_cache_hit_rate: Option<f64>,
    pub total_prompt_tokens: Option<u64>,
    pub total_generation_tokens: Option<u64>,
    pub kv_cache_pool_tokens: Option<u64>,
    pub theoretical_cache_hit_rate: Option<f64>,
    pub cache_pricing_eligible: bool,
    pub cache_validity_status: Status,
}

/// The whole result of accounting one run.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[cfg_attr(target_arch = "wasm32", tsify(hashmap_as_object))]
#[cfg_attr(target_arch = "wasm32", tsify(missing_as_null))]
pub struct Accounting {
    pub contract_version: String,
    pub cache_validity: CacheValidity,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub engine: Option<Engine>,
    pub rates: Rates,
    /// Canonical counters per role (decode and frontend are telemetry).
    pub counters: BTreeMap<String, Counters>,
    pub sources: Vec<Source>,
    pub tokens: Tokens,
    pub kv_cache: KvCache,
    pub offload: Offload,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub theoretical_hit_rate: Option<f64>,
    pub telemetry: Telemetry,
    pub policy: Policy,
    pub legacy: Legacy,
}

#[allow(clippy::too_many_arguments)]
pub fn legacy(
    rates: &Rates,
    tokens: &Tokens,
    kv: &KvCache,
    theoretical: Option<f64>,
    eligible: bool,
    status: Status,
    c: Option<Interval>,
    x: Option<Interval>,
) -> Legacy {
    let value = |r: Option<Rate>| r.and_then(|r| r.value);
    // A rate without a value (0/0) gives null keys, never a number made from nothing.
    let non_gpu = (c.is_some() || x.is_some()) && value(rates.gpu).is_some();
    let external =
        non_gpu.then(|| value(rates.cpu).unwrap_or(0.0) + value(rates.external).unwrap_or(0.0));
    let round = |v: f64| -> Option<u64> {
        (v.is_finite() && (0.0..1.8e19).contains(&v)).then(|| v.round() as u64)
    };
    Legacy {
        server_gpu_cache_hit_rate: value(rates.gpu),
        server_cpu_cache_hit_rate: value(rates.cpu),
        server_external_cache_hit_rate: external,
        total_prompt_tokens: tokens.prompt_total.and_then(round),
        total_generation_tokens: tokens.generation_total.and_then(round),
        kv_cache_pool_tokens: kv.pool_tokens.and_then(round),
        theoretical_cache_hit_rate: theoretical,
        cache_pricing_eligible: eligible,
        cache_validity_status: status,
    }
}

/// Per endpoint: its role, engine, counters, evidence and own overall rate; and the canonical
/// counters summed per role (decode and frontend as telemetry).
/// A role with `missing` workers (listed, never scraped) has sums unbounded above.
pub fn endpoint_sources(
    dep: &Deployment,
    engines: &BTreeMap<Arc<str>, Engine>,
    counted: &Counted,
    missing: &[(String, Role)],
) -> (Vec<Source>, BTreeMap<String, Counters>) {
    // Per role, each counter's sum.
    let mut by_role: StrMap<CounterMap<Interval>> = StrMap::new();
    // Sized exactly: grown by doubling, a many-endpoint run's list was up to half unused at
    // its peak, with its old copy beside it at each growth.
    let mut sources = Vec::with_capacity(dep.decisions.len());
    // In URL order, as the decisions.
    let mut engine_of = super::lookup::Cursor::new(engines);
    let mut counted_at = 0;
    for (url, d) in &dep.decisions {
        let e = counted.per_endpoint.get_from(&mut counted_at, url);
        let mut counters = Counters::default();
        let mut methods = BTreeMap::new();
        let role = d.role.map(role_name).unwrap_or("unresolved");
        for (c, (iv, m)) in e.iter().flat_map(|e| e.counters.iter()) {
            counters.set(c, Bounds::from(*iv));
            methods.insert(c.as_str(), *m);
            let sums = by_role.get_or_insert_with(role, CounterMap::default);
            let sum = sums.get(c).map_or(*iv, |a| a.plus(*iv));
            sums.insert(c, sum);
        }
        let overall = e.and_then(|e| {
            let f = e.counters.get(Counter::Prompt)?.0;
            let h = [Counter::HitGpu, Counter::HitCpu, Counter::HitExternal]
                .iter()
                .filter_map(|c| e.counters.get(*c).map(|(i, _)| *i))
                .reduce(Interval::plus)?;
            rate(h, f, e.aligned())
        });
        sources.push(Source {
            endpoint_url: url.to_string(),
            role: d.role,
            role_source: d.source,
            engine: engine_of.get(url).copied(),
            priced: is_priced_role(d.role),
            counters,
            methods,
            overall,
        });
    }
    for (_, role) in missing {
        if let Some(slot) = by_role.get_mut(role_name(*role)) {
            for iv in slot.values_mut() {
                *iv = iv.plus(Interval::unbounded(0.0));
            }
        }
    }
    let counters = crate::sort::map_of(by_role.into_pairs().map(|(role, m)| {
        let mut cs = Counters::default();
        for (c, iv) in m.iter() {
            cs.set(c, Bounds::from(*iv));
        }
        (role, cs)
    }));
    (sources, counters)
}
