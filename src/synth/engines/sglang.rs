//! SGLang (`research/engine-metrics.md` section 2). Tokenizer-manager families (no rank
//! labels; DP already summed) count at completion: `prompt_tokens`, `generation_tokens`,
//! `num_requests`, `cached_tokens{cache_source}` (variant `cache_source`: `device`, `host`,
//! `storage_MooncakeStore`, each created at its first non-zero value; variant
//! `no_cache_source`: one unlabelled series). Scheduler families repeat per `tp_rank`
//! (`--enable-metrics-for-all-schedulers`) and carry `dp_rank` with DP attention.

use super::{l, Builder, Field, HistKind, Labels, Src};
use crate::synth::faults::Fault;
use crate::synth::series::Moment::{Adm, Fin};

pub fn endpoint(b: &mut Builder, ep: usize) {
    let plan = b.plan;
    let spec = &plan.spec;
    let role = b.role_label("engine_type", ep);
    let model = plan.model.clone();
    let tok = |more: &[(String, String)]| -> Labels {
        let mut v = vec![l("model_name", model.clone())];
        v.extend(role.clone());
        v.extend_from_slice(more);
        v
    };
    b.ctr(
        "sglang:prompt_tokens",
        "Number of prefill tokens processed.",
        ep,
        None,
        tok(&[]),
        Fin,
        Field::Prompt,
    );
    b.ctr(
        "sglang:generation_tokens",
        "Number of generation tokens processed.",
        ep,
        None,
        tok(&[]),
        Fin,
        Field::Gen,
    );
    b.ctr(
        "sglang:num_requests",
        "Number of requests processed.",
        ep,
        None,
        tok(&[]),
        Fin,
        Field::Reqs,
    );
    let cd = "Number of cached prompt tokens by source (device/host/storage).";
    let cpu_absent = spec.has(Fault::CpuCounterAbsent);
    if spec.variant_legacy {
        let f = if cpu_absent {
            Field::GpuExt
        } else {
            Field::Hits
        };
        let i = b.ctr(
            "sglang:cached_tokens",
            "Number of cached prompt tokens.",
            ep,
            None,
            tok(&[]),
            Fin,
            f,
        );
        b.lazy(i);
    } else {
        let i = b.ctr(
            "sglang:cached_tokens",
            cd,
            ep,
            None,
            tok(&[l("cache_source", "device")]),
            Fin,
            Field::Gpu,
        );
        b.lazy(i);
        if plan.tiers_cpu && !cpu_absent {
            let i = b.ctr(
                "sglang:cached_tokens",
                cd,
                ep,
                None,
                tok(&[l("cache_source", "host")]),
                Fin,
                Field::Cpu,
            );
            b.lazy(i);
        }
        if plan.tiers_ext {
            let i = b.ctr(
                "sglang:cached_tokens",
                cd,
                ep,
                None,
                tok(&[l("cache_source", "storage_MooncakeStore")]),
                Fin,
                Field::Ext,
            );
            b.lazy(i);
        }
    }
    b.hist(
        "sglang:time_to_first_token_seconds",
        "Histogram of time to first token in seconds.",
        ep,
        None,
        tok(&[]),
        HistKind::Ttft,
    );
    b.hist(
        "sglang:e2e_request_latency_seconds",
        "Histogram of End-to-end request latency in seconds",
        ep,
        None,
        tok(&[]),
        HistKind::E2e,
    );
    scheduler_gauges(b, ep, &role);
}

/// The scheduler's gauges, per DP pool and repeated per TP rank (replica series).
fn scheduler_gauges(b: &mut Builder, ep: usize, role: &Option<(String, String)>) {
    let plan = b.plan;
    let spec = &plan.spec;
    let model = plan.model.clone();
    let dp = plan.endpoints[ep].pools;
    let cap = super::engine_capacity_tokens() as f64;
    for pool in 0..dp {
        for tp in 0..spec.tp {
            let mut sl = vec![l("model_name", model.clone())];
            sl.extend(role.clone());
            if dp > 1 {
                sl.push(l("dp_rank", pool.to_string()));
            }
            sl.push(l("moe_ep_rank", "0"));
            sl.push(l("pp_rank", "0"));
            sl.push(l("tp_rank", tp.to_string()));
            let p = Some(pool);
            b.gauge(
                "sglang:num_running_reqs",
                "The number of running requests.",
                ep,
                p,
                sl.clone(),
                Src::Running,
            );
            b.gauge(
                "sglang:num_queue_reqs",
                "The number of requests in the waiting queue.",
                ep,
                p,
                sl.clone(),
                Src::Waiting,
            );
            b.gauge(
                "sglang:token_usage",
                "The token usage.",
                ep,
                p,
                sl.clone(),
                Src::KvUsage,
            );
            b.gauge(
                "sglang:cache_hit_rate",
                "The prefix cache hit rate.",
                ep,
                p,
                sl.clone(),
                Src::LastHitRatio,
            );
            b.gauge(
                "sglang:max_total_num_tokens",
                "Maximum total number of tokens in the KV cache pool.",
                ep,
                p,
                sl.clone(),
                Src::Const(cap),
            );
            let rd = "Number of tokens processed by the scheduler in real time, by mode.";
            let mut a = sl.clone();
            a.push(l("mode", "prefill_compute"));
            b.ctr("sglang:realtime_tokens", rd, ep, p, a, Adm, Field::Compute);
            let mut a = sl.clone();
            a.push(l("mode", "prefill_cache"));
            b.ctr("sglang:realtime_tokens", rd, ep, p, a, Adm, Field::Hits);
        }
    }
}
