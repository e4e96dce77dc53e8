//! vLLM (V1) → canonical counters.
//!
//! F = every `vllm:prompt_tokens_by_source` source; G = `source="local_cache_hit"`;
//! `source="external_kv_transfer"` (every KV connector collapses into it, tier unlabelled) is C
//! when the offload backend is a local CPU tier and X otherwise, with `tier_ambiguous` when no
//! backend is named. Without the by-source counter the rate is not eligible:
//! `prefix_cache_queries` was re-counted on every admission attempt before a 2026 fix, so
//! hits/queries is kept as telemetry only (mapped to F/G so it is still reported).

use super::{label_is, Adapter, Assessment, Counter, Engine, FamilyView, Present, TierContext};
use crate::account::verdict::{Reason, ReasonCode};
use crate::model::Labels;

pub const BY_SOURCE: &str = "vllm:prompt_tokens_by_source";
pub const QUERIES: &str = "vllm:prefix_cache_queries";
pub const HITS: &str = "vllm:prefix_cache_hits";
/// Exists only between the by-source counter's arrival and the fix of its off-by-one.
pub const RECOMPUTED: &str = "vllm:prompt_tokens_recomputed";
/// Marker the caller adds to `present` when a `source="external_kv_transfer"` series exists.
pub const MARK_EXTERNAL_SOURCE: &str = "vllm:prompt_tokens_by_source#external_kv_transfer";

pub struct Vllm;

impl Adapter for Vllm {
    fn engine(&self) -> Engine {
        Engine::Vllm
    }

    fn map_series(
        &self,
        family: &FamilyView<'_>,
        labels: &Labels,
        present: &Present<'_>,
        tiers: &TierContext,
    ) -> Vec<Counter> {
        if !family.is_counter_like() {
            return Vec::new();
        }
        // Asked only of the two families it decides (most series are of neither).
        let has_by_source = || present.contains(BY_SOURCE);
        match family.key {
            BY_SOURCE => {
                let mut out = vec![Counter::Prompt];
                if label_is(labels, "source", "local_cache_hit") {
                    out.push(Counter::HitGpu);
                } else if label_is(labels, "source", "external_kv_transfer") {
                    out.push(if tiers.local_cpu_tier() == Some(true) {
                        Counter::HitCpu
                    } else {
                        Counter::HitExternal
                    });
                }
                out
            }
            QUERIES if !has_by_source() => vec![Counter::Prompt],
            HITS if !has_by_source() => vec![Counter::HitGpu],
            _ => Vec::new(),
        }
    }

    fn assess(&self, endpoint: &str, present: &Present<'_>, tiers: &TierContext) -> Assessment {
        let mut a = Assessment::default();
        if present.contains(BY_SOURCE) {
            // vLLM creates every source's series up front: with offloading on, a missing
            // `external_kv_transfer` series means offloaded hits are counted nowhere.
            if tiers.offload_on() && !present.contains(MARK_EXTERNAL_SOURCE) {
                a.reasons.push(
                    Reason::new(
                        ReasonCode::CpuTierUncounted,
                        "offloading is on but prompt_tokens_by_source has no external_kv_transfer series",
                    )
                    .at(endpoint)
                    .metric(BY_SOURCE),
                );
            } else if tiers.local_cpu_tier() == Some(true) {
                a.cpu_measured = true;
            } else if tiers.backend.is_none() && !tiers.offload_off() {
                a.reasons.push(
                    Reason::new(
                        ReasonCode::TierAmbiguous,
                        "external_kv_transfer has no tier label and no offload backend is named: reported as external",
                    )
                    .at(endpoint)
                    .metric(BY_SOURCE),
                );
            }
            if present.contains(RECOMPUTED) {
                a.reasons.push(
                    Reason::new(
                        ReasonCode::BySourceOffByOne,
                        "this vLLM build counts one extra computed token per fully cached request (fixed in vLLM #38709)",
                    )
                    .at(endpoint)
                    .metric(BY_SOURCE),
                );
            }
        } else if present.contains(QUERIES) || present.contains(HITS) {
            a.reasons.push(
                Reason::new(
                    ReasonCode::BySourceMissing,
                    "no vllm:prompt_tokens_by_source: prefix_cache_hits/queries is telemetry only (queries were re-counted per admission attempt)",
                )
                .at(endpoint)
                .metric(BY_SOURCE),
            );
            if tiers.offload_on() {
                a.reasons.push(
                    Reason::new(
                        ReasonCode::CpuTierUncounted,
                        "offloading is on and this vLLM build exports no counter of offloaded-tier hits per prompt token",
                    )
                    .at(endpoint),
                );
            }
        } else {
            a.reasons.push(
                Reason::new(
                    ReasonCode::PromptCounterMissing,
                    "no vLLM prompt-token counter",
                )
                .at(endpoint)
                .metric(BY_SOURCE),
            );
        }
        for g in [
            "vllm:gpu_prefix_cache_hit_rate",
            "vllm:cpu_prefix_cache_hit_rate",
        ] {
            if present.contains(g) {
                a.ratio_gauges.push(g.to_string());
            }
        }
        a
    }
}
