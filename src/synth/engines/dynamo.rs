//! NVIDIA Dynamo: a frontend (`dynamo_frontend_*`, Rust exporter: `le` like `1`) plus vLLM
//! workers whose engine series carry Dynamo's injected labels (`dynamo_component`,
//! `dynamo_endpoint`, `dynamo_namespace`, `model`, `worker_id`). Variant `no_by_source` also
//! uses the older `dynamo_component_kvstats_*` gauges.

use super::{l, Builder, Field, HistKind, Src};
use crate::model::Role;
use crate::synth::rng::hash;
use crate::synth::series::Moment::Fin;

pub fn worker(b: &mut Builder, ep: usize) {
    let plan = b.plan;
    let comp = if plan.endpoints[ep].role == Role::Prefill {
        "prefill"
    } else {
        "backend"
    };
    let wid = format!(
        "{:x}",
        hash(&[plan.spec.seed, ep as u64, 99]) & 0xffff_ffff_ffff
    );
    // No role-stating label when the launch facts are the only role evidence (swapped-launch).
    let comp_label: Vec<(String, String)> = if b.role_labels() {
        vec![l("dynamo_component", comp)]
    } else {
        Vec::new()
    };
    let mut extra = comp_label.clone();
    extra.extend([
        l("dynamo_endpoint", "generate"),
        l("dynamo_namespace", "dynamo"),
        l("model", plan.model.clone()),
        l("worker_id", wid.clone()),
    ]);
    super::vllm::endpoint(b, ep, &extra);
    let lab = || {
        let mut v = comp_label.clone();
        v.extend([
            l("dynamo_endpoint", "generate"),
            l("dynamo_namespace", "dynamo"),
            l("model", plan.model.clone()),
            l("worker_id", wid.clone()),
        ]);
        v
    };
    b.ctr(
        "dynamo_component_requests",
        "Total number of requests processed by work handler",
        ep,
        None,
        lab(),
        Fin,
        Field::Reqs,
    );
    if plan.spec.variant_legacy {
        b.gauge(
            "dynamo_component_kvstats_gpu_prefix_cache_hit_rate",
            "GPU prefix cache hit rate",
            ep,
            None,
            lab(),
            Src::HitRatioCum(Fin),
        );
        b.gauge(
            "dynamo_component_kvstats_gpu_cache_usage_percent",
            "GPU cache usage percent",
            ep,
            None,
            lab(),
            Src::KvUsage,
        );
    } else {
        b.gauge(
            "dynamo_component_gpu_cache_usage_percent",
            "GPU cache usage percent",
            ep,
            None,
            lab(),
            Src::KvUsage,
        );
    }
}

pub fn frontend(b: &mut Builder, ep: usize) {
    let m = b.plan.model.clone();
    let p = Some(0);
    let ml = || vec![l("model", m.clone())];
    b.ctr(
        "dynamo_frontend_requests",
        "Total number of LLM requests processed",
        ep,
        p,
        vec![
            l("endpoint", "chat_completions"),
            l("model", m.clone()),
            l("request_type", "stream"),
            l("status", "success"),
        ],
        Fin,
        Field::Reqs,
    );
    b.ctr(
        "dynamo_frontend_output_tokens",
        "Total number of output tokens generated",
        ep,
        p,
        ml(),
        Fin,
        Field::Gen,
    );
    b.hist(
        "dynamo_frontend_input_sequence_tokens",
        "Input sequence length in tokens",
        ep,
        p,
        ml(),
        HistKind::FeIsl,
    );
    b.hist(
        "dynamo_frontend_cached_tokens",
        "Number of cached tokens (prefix cache hits) per request",
        ep,
        p,
        ml(),
        HistKind::FeCached,
    );
    b.hist(
        "dynamo_frontend_time_to_first_token_seconds",
        "Time to first token in seconds",
        ep,
        p,
        ml(),
        HistKind::FeTtft,
    );
    b.hist(
        "dynamo_frontend_request_duration_seconds",
        "Duration of LLM requests",
        ep,
        p,
        ml(),
        HistKind::FeDur,
    );
    b.gauge(
        "dynamo_frontend_inflight_requests",
        "Number of inflight requests",
        ep,
        p,
        ml(),
        Src::Running,
    );
    b.gauge(
        "dynamo_frontend_queued_requests",
        "Number of requests in HTTP processing queue",
        ep,
        p,
        ml(),
        Src::Waiting,
    );
    let blocks = b.capacity_blocks() as f64;
    b.gauge(
        "dynamo_frontend_model_total_kv_blocks",
        "Total KV blocks available for a worker serving the model",
        ep,
        p,
        ml(),
        Src::Const(blocks),
    );
    b.gauge(
        "dynamo_frontend_model_kv_cache_block_size",
        "KV cache block size for a worker serving the model",
        ep,
        p,
        ml(),
        Src::Const(16.0),
    );
}
