//! Engine adapters: each maps one engine's metric names and labels onto the canonical
//! counters of CONTRACT section 2. Adapters know names and labels, never windows or roles.
//!
//! A series maps to zero or more canonical counters (a vLLM `prompt_tokens_by_source`
//! series with `source="local_cache_hit"` is both part of the prompt total F and the GPU hit
//! count G). What an endpoint's export lacks is reported by `assess` as reasons.

pub mod atom;
pub mod detect;
pub mod dynamo;
pub mod sglang;
pub mod trtllm;
pub mod vllm;

use crate::account::verdict::Reason;
use crate::model::{Labels, MetricType};
use serde::Serialize;

pub use detect::{detect_engine, Engine};

/// The canonical counters (contract section 2) plus the admissions counter of the request
/// scope check (section 5).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum Counter {
    /// F: prompt tokens subject to prefix caching.
    Prompt,
    /// G: prompt tokens served from the device (HBM) prefix cache.
    HitGpu,
    /// C: prompt tokens served from the host/CPU offload tier.
    HitCpu,
    /// X: prompt tokens served from a remote or storage tier.
    HitExternal,
    /// Requests admitted to prefix-cache accounting (ATOM `prefix_cache_requests`).
    Admissions,
}

impl Counter {
    pub const ALL: [Counter; 5] = [
        Counter::Prompt,
        Counter::HitGpu,
        Counter::HitCpu,
        Counter::HitExternal,
        Counter::Admissions,
    ];

    /// Counters that feed a priced rate (an alias collision on them is refused).
    pub fn is_priced(self) -> bool {
        !matches!(self, Counter::Admissions)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Counter::Prompt => "prompt",
            Counter::HitGpu => "hit_gpu",
            Counter::HitCpu => "hit_cpu",
            Counter::HitExternal => "hit_external",
            Counter::Admissions => "admissions",
        }
    }
}

/// A map keyed by [`Counter`]: one slot per counter, walked in [`Counter::ALL`]'s order (its
/// `Ord`). An endpoint's counters are at most five; a `BTreeMap` node for them took about
/// 380 B per endpoint, the largest of accounting's own allocations on a many-endpoint run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CounterMap<V>([Option<V>; Counter::ALL.len()]);

impl<V> Default for CounterMap<V> {
    fn default() -> Self {
        CounterMap(std::array::from_fn(|_| None))
    }
}

impl<V> CounterMap<V> {
    pub fn get(&self, c: Counter) -> Option<&V> {
        self.0.get(c as usize)?.as_ref()
    }

    pub fn insert(&mut self, c: Counter, v: V) {
        if let Some(slot) = self.0.get_mut(c as usize) {
            *slot = Some(v);
        }
    }

    /// Set `c` to `v` unless it has a value already.
    pub fn or_insert(&mut self, c: Counter, v: V) {
        if let Some(slot @ None) = self.0.get_mut(c as usize) {
            *slot = Some(v);
        }
    }

    /// The values, in `Counter`'s order.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.0.iter_mut().flatten()
    }

    /// The counters with a value, in `Counter`'s order.
    pub fn iter(&self) -> impl Iterator<Item = (Counter, &V)> {
        Counter::ALL
            .iter()
            .zip(&self.0)
            .filter_map(|(c, v)| v.as_ref().map(|v| (*c, v)))
    }
}

/// What the launcher says about offloading (contract section 1, launch facts).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TierContext {
    /// `KV_OFFLOADING`, lowercased: `none`, `cpu`, `dram`, `ssd`, ...; `None` when not given.
    pub offloading: Option<String>,
    /// `KV_OFFLOAD_BACKEND`, lowercased.
    pub backend: Option<String>,
}

impl TierContext {
    /// Offloading is known to be off.
    pub fn offload_off(&self) -> bool {
        self.offloading.as_deref() == Some("none")
    }

    /// Offloading is known to be on.
    pub fn offload_on(&self) -> bool {
        matches!(self.offloading.as_deref(), Some(o) if o != "none")
    }

    /// Offloading targets host memory (`cpu`, `dram`): a CPU-tier hit counter is expected.
    pub fn expects_cpu_tier(&self) -> bool {
        matches!(self.offloading.as_deref(), Some("cpu" | "dram"))
    }

    /// Offloading targets storage or a remote pool: an external-tier hit counter is expected.
    pub fn expects_external_tier(&self) -> bool {
        matches!(
            self.offloading.as_deref(),
            Some("ssd" | "disk" | "storage" | "remote")
        )
    }

    /// The offload target is a local host-memory tier (LMCache local CPU, native CPU offload).
    pub fn local_cpu_tier(&self) -> Option<bool> {
        let backend = self.backend.as_deref()?;
        let remote_backend = backend.contains("mooncake")
            || backend.contains("remote")
            || backend.contains("nixl")
            || backend.contains("3fs")
            || backend.contains("redis");
        let storage_tier = matches!(
            self.offloading.as_deref(),
            Some("ssd" | "disk" | "storage" | "remote")
        );
        Some(!remote_backend && !storage_tier)
    }
}

/// One family of one endpoint as an adapter sees it: its canonical key, the spelling in the
/// export, and its type (unknown for untyped JSONL scrapes).
#[derive(Debug, Clone)]
pub struct FamilyView<'a> {
    pub key: &'a str,
    pub spelling: &'a str,
    pub metric_type: Option<MetricType>,
}

impl FamilyView<'_> {
    /// A counter, or an untyped family (JSONL scrapes carry no types): not a gauge or a
    /// histogram that shares the name.
    pub fn is_counter_like(&self) -> bool {
        !matches!(
            self.metric_type,
            Some(MetricType::Histogram | MetricType::Gauge)
        )
    }
}

/// The canonical keys of the families an endpoint exports, plus the markers its caller adds
/// for facts that depend on labels or type: borrowed names in a sorted list. It is made for
/// every endpoint, and a set of copied names was an allocation per family per endpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Present<'a> {
    /// Sorted, each name once.
    names: Vec<&'a str>,
}

impl<'a> Present<'a> {
    /// The set of `names`, given sorted and each once (a map's keys), with room for `more`
    /// names to be inserted.
    pub fn of_sorted(names: impl ExactSizeIterator<Item = &'a str>, more: usize) -> Self {
        let mut sorted = Vec::with_capacity(names.len() + more);
        sorted.extend(names);
        debug_assert!(sorted.is_sorted_by(|a, b| a < b));
        Present { names: sorted }
    }

    pub fn insert(&mut self, name: &'a str) {
        if let Err(i) = self.names.binary_search(&name) {
            self.names.insert(i, name);
        }
    }

    pub fn contains(&self, name: &str) -> bool {
        self.names.binary_search(&name).is_ok()
    }
}

/// What an adapter concludes about an endpoint's export as a whole.
#[derive(Debug, Clone, Default)]
pub struct Assessment {
    /// Failing reasons (COUNTERS_MISSING and the like) and informational notes.
    pub reasons: Vec<Reason>,
    /// A CPU-tier hit counter is read from this export.
    pub cpu_measured: bool,
    /// Tier aliases: e.g. `("hit_external", "hit_cpu")` when one counter stands for both.
    pub tier_aliases: Vec<(Counter, Counter)>,
    /// Ratio gauges present (telemetry only).
    pub ratio_gauges: Vec<String>,
    /// Counters whose series the engine creates on first increment: absent means exactly 0.
    pub zero_when_absent: Vec<Counter>,
}

/// The mapping of one engine.
pub trait Adapter {
    fn engine(&self) -> Engine;

    /// The canonical counters one series feeds. `present` holds the canonical keys of every
    /// family the endpoint exports (mapping can depend on what else exists).
    fn map_series(
        &self,
        family: &FamilyView<'_>,
        labels: &Labels,
        present: &Present<'_>,
        tiers: &TierContext,
    ) -> Vec<Counter>;

    /// Reasons about the export as a whole (missing counters, tier separability, telemetry).
    fn assess(&self, endpoint: &str, present: &Present<'_>, tiers: &TierContext) -> Assessment;
}

/// The adapter of an engine.
pub fn adapter(engine: Engine) -> &'static dyn Adapter {
    match engine {
        Engine::Vllm => &vllm::Vllm,
        Engine::Sglang => &sglang::Sglang,
        Engine::Trtllm => &trtllm::Trtllm,
        Engine::Atom => &atom::Atom,
    }
}

/// Series labels that mark replicas of one pool (they must agree, never add).
pub const REPLICA_LABELS: [&str; 4] = ["tp_rank", "pp_rank", "moe_ep_rank", "ep_rank"];

/// True when `labels[key] == value` (case-insensitive value).
pub(crate) fn label_is(labels: &Labels, key: &str, value: &str) -> bool {
    labels
        .get(key)
        .is_some_and(|v| v.eq_ignore_ascii_case(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn present_holds_its_names_and_the_markers_inserted() {
        let mut p = Present::of_sorted(["a:x", "b", "vllm:y"].into_iter(), 1);
        for m in ["vllm:y#mark", "0", "b", "zz"] {
            p.insert(m);
        }
        for n in ["0", "a:x", "b", "vllm:y", "vllm:y#mark", "zz"] {
            assert!(p.contains(n), "{n}");
        }
        for n in ["", "a", "vllm:", "c"] {
            assert!(!p.contains(n), "{n}");
        }
        assert_eq!(p.names, ["0", "a:x", "b", "vllm:y", "vllm:y#mark", "zz"]);
    }
}
