//! vLLM V1 (`research/engine-metrics.md` section 1). Labels `engine` (DP rank) and
//! `model_name`. Variants: `by_source` (PR #33290 and later, >= 0.21 semantics: no
//! recomputed token) and `no_by_source` (before it: only `prefix_cache_queries/hits`, with
//! lookups re-counted while a request waits, before #48860).
//! Counting moments: prompt and by-source counters at the first output token; prefix-cache
//! lookups at admission; generation tokens and successes at completion (the per-batch
//! generation counting is collapsed to the completion: a simplification).

use super::{l, Builder, Field, HistKind, Labels, Src};
use crate::synth::faults::Fault;
use crate::synth::series::Moment::{Adm, Fin, Ftk};

/// One endpoint's families: per DP pool (`engine` label), the state gauges and config info,
/// the request counters, the prefix-cache counters and the latency histograms.
pub fn endpoint(b: &mut Builder, ep: usize, extra: &[(String, String)]) {
    let model = b.plan.model.clone();
    for pool in 0..b.plan.endpoints[ep].pools {
        let base = |more: &[(String, String)]| -> Labels {
            let mut v = vec![l("engine", pool.to_string())];
            v.extend_from_slice(more);
            v.push(l("model_name", model.clone()));
            v.extend_from_slice(extra);
            v
        };
        state_series(b, ep, pool, extra, &base);
        request_counters(b, ep, pool, &base);
        cache_counters(b, ep, pool, &base);
        let p = Some(pool);
        b.hist(
            "vllm:time_to_first_token_seconds",
            "Histogram of time to first token in seconds.",
            ep,
            p,
            base(&[]),
            HistKind::Ttft,
        );
        b.hist(
            "vllm:e2e_request_latency_seconds",
            "Histogram of e2e request latency in seconds.",
            ep,
            p,
            base(&[]),
            HistKind::E2e,
        );
    }
}

type Base<'a> = dyn Fn(&[(String, String)]) -> Labels + 'a;

/// Scheduler gauges and the cache-config info family of one pool.
fn state_series(b: &mut Builder, ep: usize, pool: u16, extra: &[(String, String)], base: &Base) {
    let plan = b.plan;
    let p = Some(pool);
    b.gauge(
        "vllm:num_requests_running",
        "Number of requests in model execution batches.",
        ep,
        p,
        base(&[]),
        Src::Running,
    );
    b.gauge(
        "vllm:num_requests_waiting",
        "Number of requests waiting to be processed.",
        ep,
        p,
        base(&[]),
        Src::Waiting,
    );
    b.gauge(
        "vllm:kv_cache_usage_perc",
        "KV-cache usage. 1 means 100 percent usage.",
        ep,
        p,
        base(&[]),
        Src::KvUsage,
    );
    let backend = if plan.tiers_cpu {
        "native"
    } else if plan.tiers_ext {
        "mooncake"
    } else {
        "None"
    };
    let mut info = vec![
        l("block_size", plan.block_size.to_string()),
        l("cache_dtype", "auto"),
        l(
            "enable_prefix_caching",
            if plan.spec.has(Fault::PrefixCachingDisabled) {
                "False"
            } else {
                "True"
            },
        ),
        l("engine", pool.to_string()),
        l("kv_offloading_backend", backend),
        l(
            "kv_offloading_size",
            if plan.tiers_cpu || plan.tiers_ext {
                "64.0"
            } else {
                "None"
            },
        ),
        l(
            "num_cpu_blocks",
            if plan.tiers_cpu { "65536" } else { "None" },
        ),
        l("num_gpu_blocks", b.capacity_blocks().to_string()),
    ];
    info.extend_from_slice(extra);
    b.gauge(
        "vllm:cache_config_info",
        "Information of the LLMEngine CacheConfig",
        ep,
        p,
        info,
        Src::Const(1.0),
    );
}

/// Prompt, generation, success and preemption counters of one pool.
fn request_counters(b: &mut Builder, ep: usize, pool: u16, base: &Base) {
    let p = Some(pool);
    b.ctr(
        "vllm:prompt_tokens",
        "Number of prefill tokens processed.",
        ep,
        p,
        base(&[]),
        Ftk,
        Field::Prompt,
    );
    b.ctr(
        "vllm:generation_tokens",
        "Number of generation tokens processed.",
        ep,
        p,
        base(&[]),
        Fin,
        Field::Gen,
    );
    b.ctr(
        "vllm:request_success",
        "Count of successfully processed requests.",
        ep,
        p,
        base(&[l("finished_reason", "stop")]),
        Fin,
        Field::Reqs,
    );
    b.ctr(
        "vllm:num_preemptions",
        "Cumulative number of preemption from the engine.",
        ep,
        p,
        base(&[]),
        Fin,
        Field::Zero,
    );
}

/// Prefix-cache lookups, prompt tokens by source, connector and offload counters of one pool.
fn cache_counters(b: &mut Builder, ep: usize, pool: u16, base: &Base) {
    let plan = b.plan;
    let spec = &plan.spec;
    let legacy = spec.variant_legacy;
    let connector = plan.tiers_cpu || plan.tiers_ext || spec.topology.is_disagg();
    let cpu_absent = spec.has(Fault::CpuCounterAbsent);
    let p = Some(pool);
    let q = if legacy {
        Field::Queries
    } else {
        Field::Prompt
    };
    b.ctr(
        "vllm:prefix_cache_queries",
        "Prefix cache queries, in terms of number of queried tokens.",
        ep,
        p,
        base(&[]),
        Adm,
        q,
    );
    b.ctr(
        "vllm:prefix_cache_hits",
        "Prefix cache hits, in terms of number of cached tokens.",
        ep,
        p,
        base(&[]),
        Adm,
        Field::Gpu,
    );
    if !legacy {
        let d = "Number of prompt tokens by source.";
        let compute = if cpu_absent {
            Field::ComputeCpu
        } else {
            Field::Compute
        };
        b.ctr(
            "vllm:prompt_tokens_by_source",
            d,
            ep,
            p,
            base(&[l("source", "local_compute")]),
            Ftk,
            compute,
        );
        b.ctr(
            "vllm:prompt_tokens_by_source",
            d,
            ep,
            p,
            base(&[l("source", "local_cache_hit")]),
            Ftk,
            Field::Gpu,
        );
        let ext_field = if cpu_absent {
            Field::Ext
        } else {
            Field::CpuExt
        };
        // All three sources are created up front (zero when unused). A build whose
        // connector reports nothing into the by-source counter lacks the third series.
        if !cpu_absent {
            b.ctr(
                "vllm:prompt_tokens_by_source",
                d,
                ep,
                p,
                base(&[l("source", "external_kv_transfer")]),
                Ftk,
                ext_field,
            );
        }
        b.ctr(
            "vllm:prompt_tokens_cached",
            "Number of cached prompt tokens (local + external).",
            ep,
            p,
            base(&[]),
            Ftk,
            if cpu_absent {
                Field::GpuExt
            } else {
                Field::Hits
            },
        );
    }
    if connector && !cpu_absent {
        b.ctr(
            "vllm:external_prefix_cache_queries",
            "External prefix cache queries from KV connector.",
            ep,
            p,
            base(&[]),
            Adm,
            Field::NotGpu,
        );
        b.ctr(
            "vllm:external_prefix_cache_hits",
            "External prefix cache hits from KV connector.",
            ep,
            p,
            base(&[]),
            Adm,
            Field::CpuExt,
        );
    }
    if plan.tiers_cpu && !cpu_absent {
        b.add(
            "vllm:kv_offload_load_bytes",
            crate::model::MetricType::Counter,
            "Bytes loaded from the offloading tier.",
            ep,
            p,
            base(&[]),
            Src::Scaled(Ftk, Field::Cpu, 65536.0),
        );
    }
}
