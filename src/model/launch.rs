//! Launch facts: how the deployment was started (framework, roles, offloading).

use serde::Serialize;
use std::collections::BTreeMap;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Prefill,
    Decode,
    /// Aggregated: prefill and decode in one engine.
    Unified,
    Frontend,
    Excluded,
}

impl Role {
    /// The role as the JSON output spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Prefill => "prefill",
            Role::Decode => "decode",
            Role::Unified => "unified",
            Role::Frontend => "frontend",
            Role::Excluded => "excluded",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s.trim().to_ascii_lowercase().as_str() {
            "prefill" => Some(Role::Prefill),
            "decode" => Some(Role::Decode),
            "unified" | "agg" | "aggregated" => Some(Role::Unified),
            "frontend" | "router" => Some(Role::Frontend),
            "excluded" => Some(Role::Excluded),
            _ => None,
        }
    }
}

/// The launcher's facts about one run. Endpoint entries are normalised `host:port`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, schemars::JsonSchema)]
pub struct LaunchFacts {
    pub framework: Option<String>,
    pub disaggregated: Option<bool>,
    pub prefill_endpoints: Vec<String>,
    pub decode_endpoints: Vec<String>,
    pub agg_endpoints: Vec<String>,
    /// Explicit endpoint (`host:port`) → role map.
    pub endpoint_roles: BTreeMap<String, Role>,
    /// `KV_OFFLOADING`: `none` or a tier name (e.g. `cpu`, `dram`, `ssd`).
    pub kv_offloading: Option<String>,
    /// `KV_OFFLOAD_BACKEND` (e.g. `lmcache`, `native`, `mooncake`).
    pub kv_offload_backend: Option<String>,
    /// `enable_prefix_caching` (`ENABLE_PREFIX_CACHING`): whether the engine was started with
    /// prefix caching; `None` when the launcher did not say. `Some(false)` means the hit rate
    /// is 0 by configuration (accounting notes `prefix_caching_disabled`).
    pub enable_prefix_caching: Option<bool>,
}
