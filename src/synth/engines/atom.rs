//! AMD ATOM (`research/engine-metrics.md` section 4). Snapshot counters carry no labels
//! (DP ranks summed) and count at admission (`prefix_cache_*`) or completion (`prompt_tokens`,
//! `generation_tokens`, `requests_finished`). Variant `offload_counter` (@1022e654:
//! `prefix_cache_offload_tokens` exists, `cached_tokens` is HBM-only) and
//! `no_offload_counter` (@ffdf3bb5: LMCache loads folded into `cached_tokens`; the decode path
//! does no cache accounting). Preemption re-counts are not modelled.

use super::{l, Builder, Field, HistKind, Src};
use crate::synth::faults::Fault;
use crate::synth::series::Moment::{Adm, Fin};

pub fn endpoint(b: &mut Builder, ep: usize) {
    let plan = b.plan;
    let spec = &plan.spec;
    let legacy = spec.variant_legacy;
    let cpu_absent = spec.has(Fault::CpuCounterAbsent);
    b.ctr(
        "atom:prefix_cache_requests",
        "Requests admitted through the prefix cache.",
        ep,
        None,
        vec![],
        Adm,
        Field::Reqs,
    );
    b.ctr(
        "atom:prefix_cache_full_tokens",
        "All input tokens considered by the prefix cache.",
        ep,
        None,
        vec![],
        Adm,
        Field::Prompt,
    );
    let cached = if legacy && !cpu_absent {
        Field::GpuCpu
    } else {
        Field::Gpu
    };
    let desc = if legacy {
        "Prompt tokens served from the admitted prefix cache."
    } else {
        "Prompt tokens served from the GPU/HBM prefix cache."
    };
    b.ctr(
        "atom:prefix_cache_cached_tokens",
        desc,
        ep,
        None,
        vec![],
        Adm,
        cached,
    );
    if !legacy && !cpu_absent {
        b.ctr(
            "atom:prefix_cache_offload_tokens",
            "Prompt tokens reused from LMCache beyond the GPU prefix.",
            ep,
            None,
            vec![],
            Adm,
            Field::Cpu,
        );
    }
    b.ctr(
        "atom:prompt_tokens",
        "Prompt tokens of finished requests.",
        ep,
        None,
        vec![],
        Fin,
        Field::Prompt,
    );
    b.ctr(
        "atom:generation_tokens",
        "Generation tokens of finished requests.",
        ep,
        None,
        vec![],
        Fin,
        Field::Gen,
    );
    b.ctr(
        "atom:requests_finished",
        "Finished requests.",
        ep,
        None,
        vec![],
        Fin,
        Field::Reqs,
    );
    b.ctr(
        "atom:preemptions",
        "Preemptions.",
        ep,
        None,
        vec![],
        Fin,
        Field::Zero,
    );
    if plan.tiers_cpu {
        b.ctr(
            "atom:lmcache_loaded_tokens",
            "Tokens loaded from LMCache (transfer volume).",
            ep,
            None,
            vec![],
            Adm,
            Field::Cpu,
        );
    }
    gauges(b, ep);
    ttft_histograms(b, ep);
}

/// Scheduler and KV-cache gauges, and the hit-ratio telemetry gauge.
fn gauges(b: &mut Builder, ep: usize) {
    let plan = b.plan;
    b.gauge(
        "atom:requests_running",
        "Running requests.",
        ep,
        None,
        vec![],
        Src::Running,
    );
    b.gauge(
        "atom:requests_waiting",
        "Waiting requests.",
        ep,
        None,
        vec![],
        Src::Waiting,
    );
    b.gauge(
        "atom:kv_cache_usage_ratio",
        "KV cache usage ratio.",
        ep,
        None,
        vec![],
        Src::KvUsage,
    );
    let blocks = b.capacity_blocks() as f64 * plan.endpoints[ep].pools as f64;
    b.gauge(
        "atom:kv_cache_blocks_total",
        "Total KV cache blocks.",
        ep,
        None,
        vec![],
        Src::Const(blocks),
    );
    b.gauge(
        "atom:kv_cache_blocks_used",
        "Used KV cache blocks.",
        ep,
        None,
        vec![],
        Src::KvUsedBlocks,
    );
    b.gauge(
        "atom:prefix_cache_hit_ratio",
        "Prefix cache hit ratio.",
        ep,
        None,
        vec![],
        Src::HitRatioCum(Adm),
    );
}

/// The per-DP-rank time-to-first-token histograms.
fn ttft_histograms(b: &mut Builder, ep: usize) {
    let plan = b.plan;
    let role = match plan.endpoints[ep].role {
        crate::model::Role::Prefill => "prefill",
        crate::model::Role::Decode => "decode",
        _ => "default",
    };
    // `engine_role` states the role: not emitted under the swapped-launch fault.
    let role_labels = b.role_labels();
    for pool in 0..plan.endpoints[ep].pools {
        let mut lab = vec![l("dp_rank", pool.to_string())];
        if role_labels {
            lab.push(l("engine_role", role));
        }
        lab.push(l("streaming", "true"));
        b.hist(
            "atom:time_to_first_token_seconds",
            "Time to first token.",
            ep,
            Some(pool),
            lab,
            HistKind::Ttft,
        );
    }
}
