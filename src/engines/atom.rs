//! AMD ATOM → canonical counters.
//!
//! F = `prefix_cache_full_tokens`, G = `prefix_cache_cached_tokens`, C =
//! `prefix_cache_offload_tokens` where that family exists (then G is GPU-only and the tiers
//! are disjoint; external aliases C). Where it does not exist, older ATOM folded LMCache loads
//! into `cached_tokens`: overall = cached/full stands and the split is not separable (not a
//! refusal). `lmcache_loaded_tokens` is transfer volume: diagnostic only. `full_tokens` is
//! re-counted when a preempted request is re-admitted; `prefix_cache_requests` counts
//! admissions and feeds the request-scope check. Spellings `atom:x`, `atom_x`, ± `_total`.

use super::{Adapter, Assessment, Counter, Engine, FamilyView, Present, TierContext};
use crate::account::verdict::{Reason, ReasonCode};
use crate::model::Labels;

pub const FULL: &str = "atom:prefix_cache_full_tokens";
pub const CACHED: &str = "atom:prefix_cache_cached_tokens";
pub const OFFLOAD: &str = "atom:prefix_cache_offload_tokens";
pub const REQUESTS: &str = "atom:prefix_cache_requests";
pub const HIT_RATIO: &str = "atom:prefix_cache_hit_ratio";

pub struct Atom;

impl Adapter for Atom {
    fn engine(&self) -> Engine {
        Engine::Atom
    }

    fn map_series(
        &self,
        family: &FamilyView<'_>,
        _labels: &Labels,
        _present: &Present<'_>,
        _tiers: &TierContext,
    ) -> Vec<Counter> {
        if !family.is_counter_like() {
            return Vec::new();
        }
        match family.key {
            FULL => vec![Counter::Prompt],
            CACHED => vec![Counter::HitGpu],
            OFFLOAD => vec![Counter::HitCpu],
            REQUESTS => vec![Counter::Admissions],
            _ => Vec::new(),
        }
    }

    fn assess(&self, endpoint: &str, present: &Present<'_>, tiers: &TierContext) -> Assessment {
        let mut a = Assessment::default();
        if !present.contains(FULL) {
            a.reasons.push(
                Reason::new(
                    ReasonCode::PromptCounterMissing,
                    "no atom:prefix_cache_full_tokens counter",
                )
                .at(endpoint)
                .metric(FULL),
            );
        }
        if !present.contains(CACHED) {
            a.reasons.push(
                Reason::new(
                    ReasonCode::HitCounterMissing,
                    "no atom:prefix_cache_cached_tokens counter",
                )
                .at(endpoint)
                .metric(CACHED),
            );
        }
        if present.contains(OFFLOAD) {
            a.cpu_measured = true;
            a.tier_aliases.push((Counter::HitExternal, Counter::HitCpu));
        } else if !tiers.offload_off() {
            a.tier_aliases.push((Counter::HitGpu, Counter::HitCpu));
            a.reasons.push(
                Reason::new(
                    ReasonCode::TiersNotSeparable,
                    "no atom:prefix_cache_offload_tokens: this ATOM build folds LMCache reuse into cached_tokens (overall rate only)",
                )
                .at(endpoint)
                .metric(OFFLOAD),
            );
        }
        if present.contains(HIT_RATIO) {
            a.ratio_gauges.push(HIT_RATIO.to_string());
        }
        a
    }
}
