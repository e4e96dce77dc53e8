//! SGLang → canonical counters.
//!
//! F = `sglang:prompt_tokens` (summed over label sets); `sglang:cached_tokens{cache_source}`:
//! `device` → G, `host` → C, `storage_<Backend>` → X. `cache_source="total"` is what the
//! tokenizer sends when the scheduler gave no breakdown: a fallback, used only when no tier
//! series exists. Builds without the label give only the overall rate (tiers not separable).
//! Zero-valued sources are never created, so with a breakdown a missing `host` series is 0.

use super::{Adapter, Assessment, Counter, Engine, FamilyView, Present, TierContext};
use crate::account::verdict::{Reason, ReasonCode};
use crate::model::Labels;

pub const PROMPT: &str = "sglang:prompt_tokens";
pub const CACHED: &str = "sglang:cached_tokens";

pub struct Sglang;

/// How `cached_tokens` is broken down on one endpoint (decided from its series' labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breakdown {
    /// `device`/`host`/`storage_*` series.
    Tiers,
    /// Only `cache_source="total"`.
    TotalOnly,
    /// No `cache_source` label (builds before the breakdown).
    Unlabelled,
}

/// The breakdown of a set of `cached_tokens` label sets.
pub fn breakdown<'a>(label_sets: impl IntoIterator<Item = &'a Labels>) -> Breakdown {
    let mut any_tier = false;
    let mut any_total = false;
    for l in label_sets {
        match l.get("cache_source").map(|s| s.to_ascii_lowercase()) {
            Some(s) if s == "total" => any_total = true,
            Some(_) => any_tier = true,
            None => {}
        }
    }
    if any_tier {
        Breakdown::Tiers
    } else if any_total {
        Breakdown::TotalOnly
    } else {
        Breakdown::Unlabelled
    }
}

fn tier_of(source: &str) -> Option<Counter> {
    let s = source.to_ascii_lowercase();
    if s == "device" {
        Some(Counter::HitGpu)
    } else if s == "host" {
        Some(Counter::HitCpu)
    } else if s.starts_with("storage") {
        Some(Counter::HitExternal)
    } else {
        None
    }
}

/// Marker families the caller adds to `present` so the adapter knows the breakdown.
pub const MARK_TIERS: &str = "sglang:cached_tokens#tiers";
pub const MARK_TOTAL_ONLY: &str = "sglang:cached_tokens#total_only";

impl Adapter for Sglang {
    fn engine(&self) -> Engine {
        Engine::Sglang
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
            CACHED => match labels.get("cache_source") {
                Some(src) if src.eq_ignore_ascii_case("total") => {
                    if present.contains(MARK_TIERS) {
                        Vec::new()
                    } else {
                        vec![Counter::HitGpu]
                    }
                }
                Some(src) => tier_of(src).into_iter().collect(),
                None => vec![Counter::HitGpu],
            },
            _ => Vec::new(),
        }
    }

    fn assess(&self, endpoint: &str, present: &Present<'_>, tiers: &TierContext) -> Assessment {
        let mut a = Assessment::default();
        if !present.contains(PROMPT) {
            a.reasons.push(
                Reason::new(
                    ReasonCode::PromptCounterMissing,
                    "no sglang:prompt_tokens counter",
                )
                .at(endpoint)
                .metric(PROMPT),
            );
        }
        if !present.contains(CACHED) {
            // The tokenizer creates a `cached_tokens` series on the first request with a hit:
            // with the prompt counter present, no series means no hit yet.
            a.zero_when_absent.push(Counter::HitGpu);
        } else if present.contains(MARK_TIERS) {
            // Zero-valued sources are never created: a missing `host` or `storage` series
            // is zero hits from that tier.
            a.cpu_measured = true;
        } else if !tiers.offload_off() {
            a.tier_aliases.push((Counter::HitGpu, Counter::HitCpu));
            a.reasons.push(
                Reason::new(
                    ReasonCode::TiersNotSeparable,
                    "cached_tokens has no per-tier breakdown: device and host hits are one number (overall rate only)",
                )
                .at(endpoint)
                .metric(CACHED),
            );
        }
        if present.contains("sglang:cache_hit_rate") {
            a.ratio_gauges.push("sglang:cache_hit_rate".to_string());
        }
        a
    }
}
