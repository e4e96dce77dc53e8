//! TensorRT-LLM (`trtllm-serve`, `/prometheus/metrics`; `research/engine-metrics.md`
//! section 3). Variant `token_counters` (1.3.0 line: `trtllm_prompt_tokens`,
//! `trtllm_prompt_cached_tokens` counter and, with a secondary tier, the per-tier
//! `trtllm_prompt_cache_hit_tokens{cache_level,cache_tier}`) and `no_token_counters` (older
//! builds as Dynamo prefixed them: latency histograms, success counter, ratio gauges, labels
//! `"undefined"`). No rank labels: DP pools are summed. The per-tier counter is
//! iteration-level in the engine; here it counts at completion like the other token counters
//! (simplification). A decode server's prompt/cached counting is not verified: modelled as a
//! prompt with no hits.

use super::{l, Builder, Field, HistKind, Labels, Src};
use crate::model::MetricType;
use crate::synth::faults::Fault;
use crate::synth::series::Moment::{Adm, Fin};

pub fn endpoint(b: &mut Builder, ep: usize) {
    let plan = b.plan;
    let spec = &plan.spec;
    let legacy = spec.variant_legacy;
    let (et, mn) = if legacy {
        ("undefined".to_string(), "undefined".to_string())
    } else {
        ("trtllm".to_string(), plan.model.clone())
    };
    let lab = || vec![l("engine_type", et.clone()), l("model_name", mn.clone())];
    b.ctr(
        "trtllm_request_success",
        "Count of successfully processed requests.",
        ep,
        None,
        {
            let mut v = lab();
            v.insert(1, l("finished_reason", "stop"));
            v
        },
        Fin,
        Field::Reqs,
    );
    b.hist(
        "trtllm_e2e_request_latency_seconds",
        "Histogram of end to end request latency in seconds.",
        ep,
        None,
        lab(),
        HistKind::E2e,
    );
    b.hist(
        "trtllm_time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        ep,
        None,
        lab(),
        HistKind::Ttft,
    );
    b.gauge(
        "trtllm_kv_cache_hit_rate",
        "KV cache hit rate (block-based).",
        ep,
        None,
        lab(),
        Src::LastHitRatio,
    );
    b.gauge(
        "trtllm_kv_cache_utilization",
        "KV cache utilization.",
        ep,
        None,
        lab(),
        Src::KvUsage,
    );
    if legacy {
        return;
    }
    token_counters(b, ep, &lab);
    kv_series(b, ep, &lab);
}

/// Prompt, generation and cached-token counters (per tier where offloading is on), and the
/// block reuse counters.
fn token_counters(b: &mut Builder, ep: usize, lab: &dyn Fn() -> Labels) {
    let plan = b.plan;
    let cpu_absent = plan.spec.has(Fault::CpuCounterAbsent);
    b.ctr(
        "trtllm_prompt_tokens",
        "Total number of prompt tokens processed.",
        ep,
        None,
        lab(),
        Fin,
        Field::Prompt,
    );
    b.ctr(
        "trtllm_generation_tokens",
        "Total number of generation tokens.",
        ep,
        None,
        lab(),
        Fin,
        Field::Gen,
    );
    let cached = if cpu_absent {
        Field::GpuExt
    } else {
        Field::Hits
    };
    let i = b.ctr(
        "trtllm_prompt_cached_tokens",
        "Total number of prompt tokens served from the KV cache.",
        ep,
        None,
        lab(),
        Fin,
        cached,
    );
    b.lazy(i);
    if plan.tiers_cpu || plan.tiers_ext {
        let d = "Prompt tokens served from the KV cache, by cache level and tier.";
        let lv = |lvl: &str, tier: &str| {
            let mut v = lab();
            v.insert(0, l("cache_level", lvl));
            v.insert(1, l("cache_tier", tier));
            v
        };
        b.ctr(
            "trtllm_prompt_cache_hit_tokens",
            d,
            ep,
            None,
            lv("0", "GPU_MEMORY"),
            Fin,
            Field::Gpu,
        );
        let mut level = 1;
        if plan.tiers_cpu && !cpu_absent {
            b.ctr(
                "trtllm_prompt_cache_hit_tokens",
                d,
                ep,
                None,
                lv("1", "HOST_MEMORY"),
                Fin,
                Field::Cpu,
            );
            level += 1;
        }
        if plan.tiers_ext {
            b.ctr(
                "trtllm_prompt_cache_hit_tokens",
                d,
                ep,
                None,
                lv(&level.to_string(), "DISK"),
                Fin,
                Field::Ext,
            );
        }
    }
    b.add(
        "trtllm_kv_cache_reused_blocks",
        MetricType::Counter,
        "Reused KV cache blocks.",
        ep,
        None,
        lab(),
        Src::Scaled(Adm, Field::Hits, 1.0 / 32.0),
    );
    b.add(
        "trtllm_kv_cache_missed_blocks",
        MetricType::Counter,
        "Missed KV cache blocks.",
        ep,
        None,
        lab(),
        Src::Scaled(Adm, Field::Compute, 1.0 / 32.0),
    );
}

/// The per-request cached-token histogram, KV-cache gauges and the cache config info.
fn kv_series(b: &mut Builder, ep: usize, lab: &dyn Fn() -> Labels) {
    let plan = b.plan;
    b.hist(
        "trtllm_prompt_cached_tokens_per_request",
        "Prompt tokens served from the KV cache per request.",
        ep,
        None,
        lab(),
        HistKind::CachedPerReq,
    );
    b.gauge(
        "trtllm_num_requests_running",
        "Number of running requests.",
        ep,
        None,
        lab(),
        Src::Running,
    );
    let blocks = b.capacity_blocks() as f64;
    b.gauge(
        "trtllm_kv_cache_max_blocks",
        "Maximum number of KV cache blocks.",
        ep,
        None,
        lab(),
        Src::Const(blocks),
    );
    b.gauge(
        "trtllm_kv_cache_used_blocks",
        "Used KV cache blocks.",
        ep,
        None,
        lab(),
        Src::KvUsedBlocks,
    );
    b.gauge(
        "trtllm_kv_cache_tokens_per_block",
        "Tokens per KV cache block.",
        ep,
        None,
        lab(),
        Src::Const(32.0),
    );
    let mut info = lab();
    // Block reuse is TensorRT-LLM's prefix caching.
    let reuse = if plan.spec.has(Fault::PrefixCachingDisabled) {
        "False"
    } else {
        "True"
    };
    info.push(l("enable_block_reuse", reuse));
    info.push(l(
        "host_cache_size",
        if plan.tiers_cpu { "68719476736" } else { "0" },
    ));
    info.push(l("tokens_per_block", "32"));
    b.gauge(
        "trtllm_kv_cache_config_info",
        "KV cache configuration.",
        ep,
        None,
        info,
        Src::Const(1.0),
    );
}
