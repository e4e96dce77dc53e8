//! TensorRT-LLM → canonical counters (token counters exist from the 1.3.0 line).
//!
//! F = `trtllm_prompt_tokens`; G = the `trtllm_prompt_cached_tokens` **counter** (an earlier
//! per-request histogram shares the name once `_total` is stripped: told apart by type); per
//! tier from `trtllm_prompt_cache_hit_tokens{cache_level,cache_tier}` where present (then the
//! cached-tokens counter is their sum and is not used). Spellings `trtllm_`, `trtllm:` and
//! `tensorrt_llm:` are one family (see `read::names`). `trtllm_kv_cache_hit_rate` is a
//! block-based gauge: telemetry only.

use super::{Adapter, Assessment, Counter, Engine, FamilyView, Present, TierContext};
use crate::account::verdict::{Reason, ReasonCode};
use crate::model::Labels;

pub const PROMPT: &str = "trtllm_prompt_tokens";
pub const CACHED: &str = "trtllm_prompt_cached_tokens";
pub const BY_TIER: &str = "trtllm_prompt_cache_hit_tokens";
pub const HIT_RATE_GAUGE: &str = "trtllm_kv_cache_hit_rate";

/// Marker the caller adds to `present` when `trtllm_prompt_cached_tokens` exists as a counter
/// (the histogram of the same key does not count).
pub const MARK_CACHED_COUNTER: &str = "trtllm_prompt_cached_tokens#counter";
/// Marker: `trtllm_prompt_cache_hit_tokens` has a host (CPU) tier series.
pub const MARK_HOST_TIER: &str = "trtllm_prompt_cache_hit_tokens#host";
/// Marker: `trtllm_prompt_cache_hit_tokens` has a disk/remote tier series.
pub const MARK_EXTERNAL_TIER: &str = "trtllm_prompt_cache_hit_tokens#external";
/// Marker: a per-request cached-tokens histogram exists (observed for every request, 0
/// included), so the build counts cached tokens even before the counter's first increment.
pub const MARK_CACHED_HISTOGRAM: &str = "trtllm_prompt_cached_tokens#histogram";
/// The per-request histogram of cached tokens (current name).
pub const CACHED_PER_REQUEST: &str = "trtllm_prompt_cached_tokens_per_request";

/// The tier a `cache_tier` label value names.
pub fn tier_counter(tier: &str) -> Option<Counter> {
    tier_of(tier)
}

pub struct Trtllm;

fn tier_of(tier: &str) -> Option<Counter> {
    let t = tier.to_ascii_lowercase();
    if matches!(
        t.as_str(),
        "gpu" | "device" | "gpu_memory" | "primary" | "hbm"
    ) {
        Some(Counter::HitGpu)
    } else if matches!(
        t.as_str(),
        "host" | "cpu" | "host_memory" | "secondary" | "dram"
    ) {
        Some(Counter::HitCpu)
    } else if t.contains("disk")
        || t.contains("ssd")
        || t.contains("remote")
        || t.contains("storage")
    {
        Some(Counter::HitExternal)
    } else {
        None
    }
}

impl Adapter for Trtllm {
    fn engine(&self) -> Engine {
        Engine::Trtllm
    }

    fn map_series(
        &self,
        family: &FamilyView<'_>,
        labels: &Labels,
        present: &Present<'_>,
        _tiers: &TierContext,
    ) -> Vec<Counter> {
        if !family.is_counter_like() {
            return Vec::new();
        }
        match family.key {
            PROMPT => vec![Counter::Prompt],
            CACHED if !present.contains(BY_TIER) => vec![Counter::HitGpu],
            BY_TIER => labels
                .get("cache_tier")
                .and_then(tier_of)
                .into_iter()
                .collect(),
            _ => Vec::new(),
        }
    }

    fn assess(&self, endpoint: &str, present: &Present<'_>, tiers: &TierContext) -> Assessment {
        let mut a = Assessment::default();
        let has_hits = present.contains(MARK_CACHED_COUNTER) || present.contains(BY_TIER);
        if !present.contains(PROMPT) && !has_hits {
            a.reasons.push(
                Reason::new(
                    ReasonCode::TokenCountersAbsent,
                    "this TensorRT-LLM build exports no prompt/cached token counters (they arrived in the 1.3.0 line)",
                )
                .at(endpoint),
            );
        } else {
            if !present.contains(PROMPT) {
                a.reasons.push(
                    Reason::new(
                        ReasonCode::PromptCounterMissing,
                        "no trtllm_prompt_tokens counter",
                    )
                    .at(endpoint)
                    .metric(PROMPT),
                );
            }
            if !has_hits && present.contains(MARK_CACHED_HISTOGRAM) {
                a.zero_when_absent.push(Counter::HitGpu);
            } else if !has_hits {
                a.reasons.push(
                    Reason::new(
                        ReasonCode::HitCounterMissing,
                        "no trtllm_prompt_cached_tokens counter (a histogram of that name is per-request telemetry)",
                    )
                    .at(endpoint)
                    .metric(CACHED),
                );
            }
        }
        let missing_tier = (tiers.expects_cpu_tier() && !present.contains(MARK_HOST_TIER))
            || (tiers.expects_external_tier() && !present.contains(MARK_EXTERNAL_TIER));
        if present.contains(BY_TIER) && !missing_tier {
            a.cpu_measured = true;
        } else if present.contains(BY_TIER) {
            a.reasons.push(
                Reason::new(
                    ReasonCode::CpuTierUncounted,
                    "offloading is on but trtllm_prompt_cache_hit_tokens has no series for the offload tier: those hits are not counted",
                )
                .at(endpoint)
                .metric(BY_TIER),
            );
        } else if tiers.offload_on() {
            a.reasons.push(
                Reason::new(
                    ReasonCode::CpuTierUncounted,
                    "offloading is on and this build has no per-tier hit counter (trtllm_prompt_cache_hit_tokens): host-tier hits cannot be told apart",
                )
                .at(endpoint)
                .metric(BY_TIER),
            );
        }
        if present.contains(HIT_RATE_GAUGE) {
            a.ratio_gauges.push(HIT_RATE_GAUGE.to_string());
        }
        a
    }
}
