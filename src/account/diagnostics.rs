//! Diagnostics per engine: generation tokens, KV capacity and usage, offload volume. Never
//! priced; reported beside the rates. Names follow `research/engine-metrics.md`.

use super::evidence::{Evidence, SeriesKey};
use super::lookup::of_family;
use crate::engines::{Engine, REPLICA_LABELS};
use crate::model::Labels;
use std::collections::BTreeMap;

/// The prompt-token counter of an engine (requests' prompts, for token totals; the canonical
/// F may count differently, e.g. ATOM re-counts re-admissions).
pub fn prompt_family(e: Engine) -> &'static str {
    match e {
        Engine::Vllm => "vllm:prompt_tokens",
        Engine::Sglang => "sglang:prompt_tokens",
        Engine::Trtllm => "trtllm_prompt_tokens",
        Engine::Atom => "atom:prompt_tokens",
    }
}

/// The generation-token counter of an engine.
pub fn generation_family(e: Engine) -> &'static str {
    match e {
        Engine::Vllm => "vllm:generation_tokens",
        Engine::Sglang => "sglang:generation_tokens",
        Engine::Trtllm => "trtllm_generation_tokens",
        Engine::Atom => "atom:generation_tokens",
    }
}

/// The KV-usage gauge of an engine (a 0–1 fraction).
pub fn usage_family(e: Engine) -> &'static str {
    match e {
        Engine::Vllm => "vllm:kv_cache_usage_perc",
        Engine::Sglang => "sglang:token_usage",
        Engine::Trtllm => "trtllm_kv_cache_utilization",
        Engine::Atom => "atom:kv_cache_usage_ratio",
    }
}

/// An endpoint's gauges of one family: their keys and (`avg`, `max`).
fn gauges_of<'a>(
    ev: &'a Evidence,
    endpoint: &'a str,
    family: &'a str,
) -> impl Iterator<Item = (&'a SeriesKey, (Option<f64>, Option<f64>))> + 'a {
    of_family(&ev.gauges, endpoint, family).map(|(k, v)| (k, v.get()))
}

/// Usage gauge (mean of series averages, max of series maxima), as a fraction.
pub fn usage(ev: &Evidence, endpoint: &str, e: Engine) -> (Option<f64>, Option<f64>) {
    let mut avgs = Vec::new();
    let mut max: Option<f64> = None;
    for (_, (a, m)) in gauges_of(ev, endpoint, usage_family(e)) {
        if let Some(a) = a.filter(|v| v.is_finite()) {
            avgs.push(a);
        }
        if let Some(m) = m.filter(|v| v.is_finite()) {
            max = Some(max.map_or(m, |x| x.max(m)));
        }
    }
    let avg = (!avgs.is_empty()).then(|| avgs.iter().sum::<f64>() / avgs.len() as f64);
    // A percent-scaled gauge (Dynamo's) is above 1 by construction.
    let frac = |v: f64| if v > 1.0 { v / 100.0 } else { v };
    (avg.map(frac), max.map(frac))
}

fn label_f64(l: &Labels, keys: &[&str]) -> Option<f64> {
    keys.iter()
        .find_map(|k| l.get(k))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// Pool key of a series: its labels minus replica labels.
fn pool_key(l: &Labels) -> Labels {
    l.without(|k| REPLICA_LABELS.contains(&k))
}

/// KV capacity of one endpoint in tokens, pairing its own block count with its own block size.
/// Replica series of one pool must agree (else `None`); pools are summed.
pub fn capacity(ev: &Evidence, endpoint: &str, e: Engine) -> Option<f64> {
    match e {
        Engine::Vllm => {
            let mut total = 0.0;
            let mut any = false;
            for (k, _) in gauges_of(ev, endpoint, "vllm:cache_config_info") {
                let blocks = label_f64(&k.labels, &["num_gpu_blocks"])?;
                let size = label_f64(&k.labels, &["block_size"])?;
                total += blocks * size;
                any = true;
            }
            any.then_some(total)
        }
        Engine::Sglang => {
            let mut pools: BTreeMap<Labels, f64> = BTreeMap::new();
            for (k, (avg, max)) in gauges_of(ev, endpoint, "sglang:max_total_num_tokens") {
                let v = max.or(avg).filter(|v| v.is_finite() && *v > 0.0)?;
                let key = pool_key(&k.labels);
                match pools.get(&key) {
                    Some(prev) if (*prev - v).abs() > 0.5 => return None,
                    _ => {
                        pools.insert(key, v);
                    }
                }
            }
            (!pools.is_empty()).then(|| pools.values().sum())
        }
        Engine::Trtllm => {
            let blocks: Vec<f64> = gauges_of(ev, endpoint, "trtllm_kv_cache_max_blocks")
                .filter_map(|(_, (a, m))| m.or(a))
                .collect();
            let per_block = gauges_of(ev, endpoint, "trtllm_kv_cache_tokens_per_block")
                .find_map(|(_, (a, m))| m.or(a))
                .or_else(|| {
                    gauges_of(ev, endpoint, "trtllm_kv_cache_config_info").find_map(|(k, _)| {
                        label_f64(&k.labels, &["tokens_per_block", "block_size", "page_size"])
                    })
                })?;
            let b = blocks.first().copied()?;
            (b.is_finite() && per_block.is_finite()).then_some(b * per_block)
        }
        // ATOM exports block counts but not the block size (it is in the startup log).
        Engine::Atom => None,
    }
}

/// (bytes GPU→CPU, bytes CPU→GPU, seconds GPU→CPU, seconds CPU→GPU) family names.
pub fn offload_families(e: Engine) -> Option<[&'static str; 4]> {
    match e {
        Engine::Vllm => Some([
            "vllm:kv_offload_store_bytes",
            "vllm:kv_offload_load_bytes",
            "vllm:kv_offload_store_time",
            "vllm:kv_offload_load_time",
        ]),
        Engine::Trtllm => Some([
            "trtllm_kv_cache_offload_bytes",
            "trtllm_kv_cache_onboard_bytes",
            "",
            "",
        ]),
        Engine::Sglang | Engine::Atom => None,
    }
}
