//! Which engine an endpoint runs, from the metric prefixes it exports. A framework name from
//! the launch facts is only a hint (Dynamo fronts vLLM, SGLang and TensorRT-LLM workers alike).

use crate::read::names::engine_prefix;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    Vllm,
    Sglang,
    Trtllm,
    Atom,
}

impl Engine {
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Vllm => "vllm",
            Engine::Sglang => "sglang",
            Engine::Trtllm => "trtllm",
            Engine::Atom => "atom",
        }
    }

    fn from_prefix(p: &str) -> Option<Engine> {
        match p {
            "vllm" => Some(Engine::Vllm),
            "sglang" => Some(Engine::Sglang),
            "trtllm" => Some(Engine::Trtllm),
            "atom" => Some(Engine::Atom),
            _ => None,
        }
    }

    /// The engine a framework string names (`dynamo-vllm` → vLLM, `mooncake-atom` → ATOM).
    pub fn from_framework(framework: &str) -> Option<Engine> {
        let f = framework.to_ascii_lowercase();
        if f.contains("sglang") {
            Some(Engine::Sglang)
        } else if f.contains("trt") {
            Some(Engine::Trtllm)
        } else if f.contains("atom") {
            Some(Engine::Atom)
        } else if f.contains("vllm") || f == "tilert" {
            Some(Engine::Vllm)
        } else {
            None
        }
    }
}

/// The engine of one endpoint: the engine prefix with the most families. Ties are broken by
/// the framework hint, then by name order, so the answer never depends on input order.
/// `None` when the endpoint exports no engine family (a frontend, a router, a bare process).
pub fn detect_engine<'a>(
    family_names: impl IntoIterator<Item = &'a str>,
    framework_hint: Option<&str>,
) -> Option<Engine> {
    let mut counts: BTreeMap<Engine, usize> = BTreeMap::new();
    for name in family_names {
        if let Some(e) = engine_prefix(name).and_then(Engine::from_prefix) {
            *counts.entry(e).or_default() += 1;
        }
    }
    let best = counts.values().copied().max()?;
    let tied: Vec<Engine> = counts
        .iter()
        .filter(|(_, c)| **c == best)
        .map(|(e, _)| *e)
        .collect();
    let hinted = framework_hint.and_then(Engine::from_framework);
    match hinted {
        Some(h) if tied.contains(&h) => Some(h),
        _ => tied.first().copied(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_decide() {
        assert_eq!(
            detect_engine(["vllm:prompt_tokens", "process_open_fds"], None),
            Some(Engine::Vllm)
        );
        assert_eq!(
            detect_engine(["atom_prefix_cache_full_tokens_total"], Some("vllm")),
            Some(Engine::Atom)
        );
        assert_eq!(
            detect_engine(["tensorrt_llm:prompt_tokens"], None),
            Some(Engine::Trtllm)
        );
        assert_eq!(
            detect_engine(["dynamo_frontend_requests"], Some("dynamo-vllm")),
            None
        );
    }

    #[test]
    fn framework_only_breaks_ties() {
        assert_eq!(
            detect_engine(["vllm:a", "sglang:b"], Some("dynamo-sglang")),
            Some(Engine::Sglang)
        );
        assert_eq!(
            detect_engine(["vllm:a", "sglang:b"], None),
            Some(Engine::Vllm)
        );
        assert_eq!(Engine::from_framework("mooncake-atom"), Some(Engine::Atom));
        assert_eq!(Engine::from_framework("dynamo-trt"), Some(Engine::Trtllm));
    }
}
