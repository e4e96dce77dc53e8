//! NVIDIA Dynamo. Its workers run vLLM, SGLang or TensorRT-LLM and are mapped by those
//! adapters (detected from the worker's metric prefixes, never from the framework string).
//! What is Dynamo's own: the frontend (`dynamo_frontend_*`, a separate, labelled scope: its
//! per-request histograms give token totals, never a priced rate) and the router/component
//! ratio gauges, which are *predicted* at routing time: telemetry only.

/// Prefix of frontend families.
pub const FRONTEND_PREFIX: &str = "dynamo_frontend_";
pub const FRONTEND_ISL: &str = "dynamo_frontend_input_sequence_tokens";
pub const FRONTEND_OSL: &str = "dynamo_frontend_output_sequence_tokens";
pub const FRONTEND_OUTPUT_TOKENS: &str = "dynamo_frontend_output_tokens";
pub const FRONTEND_CACHED: &str = "dynamo_frontend_cached_tokens";
pub const FRONTEND_REQUESTS: &str = "dynamo_frontend_requests";

/// Ratio gauges and predicted hit rates: reported, never priced, never averaged into a rate.
pub const RATIO_GAUGES: [&str; 4] = [
    "dynamo_component_router_kv_hit_rate",
    "dynamo_component_router_shared_cache_hit_rate",
    "dynamo_component_kvstats_gpu_prefix_cache_hit_rate",
    "dynamo_frontend_router_kv_hit_rate",
];

/// True for a family of the frontend scope.
pub fn is_frontend_family(key: &str) -> bool {
    key.starts_with(FRONTEND_PREFIX)
}

/// True for any Dynamo family (frontend or component).
pub fn is_dynamo_family(key: &str) -> bool {
    key.starts_with("dynamo_")
}
