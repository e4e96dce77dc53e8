//! Stage 10, what is reported and never priced (contract section 7): KV capacity and usage,
//! offload volume and bandwidth, ratio gauges, the Dynamo frontend's and vLLM's own hit
//! ratios, and the theoretical hit rate from the run summary. Notes say that ratio gauges and
//! frontends are telemetry.

use super::diagnostics;
use super::evidence::Evidence;
use super::lookup::{all_of_family, Cursor};
use super::output::{KvCache, KvEndpoint, Offload, Telemetry};
use super::roles::RoleDecision;
use super::tokens::{add_estimates, family_estimate};
use super::verdict::{Reason, ReasonCode};
use super::Ctx;
use crate::engines::{dynamo, Engine};
use crate::model::{Role, RunSummary};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Ratio gauges (means of series averages), frontend and vLLM hit ratios; the notes saying
/// they are telemetry, and that frontends re-exporting engine series are a separate scope.
pub fn telemetry(
    ctx: &Ctx<'_>,
    engines: &BTreeMap<Arc<str>, Engine>,
    decisions: &BTreeMap<Arc<str>, RoleDecision>,
    priced: &[String],
    mut ratio_gauges: BTreeSet<String>,
    reasons: &mut Vec<Reason>,
) -> Telemetry {
    let ev = ctx.ev;
    for g in dynamo::RATIO_GAUGES {
        if ev.families.values().any(|f| f.contains_key(g)) {
            ratio_gauges.insert(g.to_string());
        }
    }
    if !ratio_gauges.is_empty() {
        reasons.push(
            Reason::new(
                ReasonCode::RatioGaugeTelemetry,
                "ratio gauges are reported as telemetry only: never priced, never averaged into a rate",
            )
            .metric(ratio_gauges.iter().cloned().collect::<Vec<_>>().join(", ")),
        );
    }
    for (url, d) in decisions {
        if d.role == Some(Role::Frontend) && engines.contains_key(url) {
            reasons.push(
                Reason::new(
                    ReasonCode::FrontendSeparate,
                    "frontend endpoint re-exporting engine series: a separate scope, never priced",
                )
                .at(&**url),
            );
        }
    }
    let mut telemetry = Telemetry::default();
    for name in &ratio_gauges {
        let vals: Vec<f64> = all_of_family(&ev.gauges, name)
            .filter_map(|(_, g)| g.get().0.filter(|v| v.is_finite()))
            .collect();
        if !vals.is_empty() {
            telemetry
                .ratio_gauges
                .insert(name.clone(), vals.iter().sum::<f64>() / vals.len() as f64);
        }
    }
    telemetry.frontend_hit_rate = frontend_hit_rate(ev);
    telemetry.vllm_hits_over_queries = vllm_hits_over_queries(ctx, priced, engines);
    telemetry
}

/// The summary's theoretical prefix-cache hit rate as a fraction.
pub fn theoretical(summary: Option<&RunSummary>) -> Option<f64> {
    let s = summary?;
    let v = s.theoretical_prefix_cache_hit?;
    let percent = s
        .theoretical_prefix_cache_hit_unit
        .as_deref()
        .is_some_and(|u| u.contains('%') || u.eq_ignore_ascii_case("percent"));
    let v = if percent { v / 100.0 } else { v };
    v.is_finite().then_some(v)
}

pub fn kv_cache(
    ev: &Evidence,
    engines: &BTreeMap<Arc<str>, Engine>,
    decisions: &BTreeMap<Arc<str>, RoleDecision>,
) -> KvCache {
    let mut endpoints = Vec::with_capacity(engines.len());
    // Per role (indexed by `Role as usize`): `None` when no endpoint has the role, else the
    // summed capacity (`None` inside when some capacity is unknown).
    let mut pools: [Option<Option<f64>>; 5] = [None; 5];
    let mut decisions = Cursor::new(decisions);
    for (url, e) in engines {
        let role = decisions.get(url).and_then(|d| d.role);
        let cap = diagnostics::capacity(ev, url, *e);
        let (avg, max) = diagnostics::usage(ev, url, *e);
        if let Some(r) = role {
            let slot = pools[r as usize].get_or_insert(Some(0.0));
            *slot = match (*slot, cap) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            };
        }
        endpoints.push(KvEndpoint {
            endpoint_url: url.to_string(),
            role,
            capacity_tokens: cap,
            usage_avg: avg,
            usage_max: max,
        });
    }
    let prefill = pools[Role::Prefill as usize].flatten();
    let decode = pools[Role::Decode as usize].flatten();
    let unified = pools[Role::Unified as usize].flatten();
    KvCache {
        pool_tokens: if pools[Role::Decode as usize].is_some() {
            decode
        } else {
            unified
        },
        prefill_pool_tokens: prefill,
        decode_pool_tokens: decode,
        endpoints,
    }
}

pub fn offload(engines: &BTreeMap<Arc<str>, Engine>, ctx: &Ctx<'_>) -> Offload {
    let mut o = Offload::default();
    for (url, e) in engines {
        let Some(fams) = diagnostics::offload_families(*e) else {
            continue;
        };
        let mut found = [None; 4];
        add_estimates(ctx, url, &fams, &mut found);
        let slots = [
            &mut o.bytes_gpu_to_cpu,
            &mut o.bytes_cpu_to_gpu,
            &mut o.time_gpu_to_cpu_s,
            &mut o.time_cpu_to_gpu_s,
        ];
        for (slot, v) in slots.into_iter().zip(found) {
            if let Some(v) = v {
                *slot = Some(slot.unwrap_or(0.0) + v);
            }
        }
    }
    let bw = |b: Option<f64>, t: Option<f64>| match (b, t) {
        (Some(b), Some(t)) if t > 0.0 => Some(b / t),
        _ => None,
    };
    o.bandwidth_gpu_to_cpu_bytes_per_s = bw(o.bytes_gpu_to_cpu, o.time_gpu_to_cpu_s);
    o.bandwidth_cpu_to_gpu_bytes_per_s = bw(o.bytes_cpu_to_gpu, o.time_cpu_to_gpu_s);
    o
}

fn frontend_hit_rate(ev: &Evidence) -> Option<f64> {
    let sum_of = |fam: &str| -> Option<f64> {
        let v: Vec<f64> = all_of_family(&ev.histograms, fam)
            .filter_map(|(_, h)| h.get().1)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum())
    };
    let cached = sum_of(dynamo::FRONTEND_CACHED)?;
    let input = sum_of(dynamo::FRONTEND_ISL)?;
    (input > 0.0).then(|| cached / input)
}

fn vllm_hits_over_queries(
    ctx: &Ctx<'_>,
    priced: &[String],
    engines: &BTreeMap<Arc<str>, Engine>,
) -> Option<f64> {
    let eps: Vec<&str> = priced
        .iter()
        .map(String::as_str)
        .filter(|u| engines.get(*u) == Some(&Engine::Vllm))
        .collect();
    if eps.is_empty() {
        return None;
    }
    let hits = family_estimate(ctx, &eps, crate::engines::vllm::HITS)?;
    let queries = family_estimate(ctx, &eps, crate::engines::vllm::QUERIES)?;
    (queries > 0.0).then(|| hits / queries)
}
