//! Which engine an endpoint runs, from the metric prefixes it exports. A framework name from
//! the launch facts is only a hint (Dynamo fronts vLLM, SGLang and TensorRT-LLM workers alike).

use crate::read::names::engine_prefix;
use serde::Serialize;

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

/// Every engine, in its order.
const ENGINES: [Engine; 4] = [Engine::Vllm, Engine::Sglang, Engine::Trtllm, Engine::Atom];

/// The engine of one endpoint: the engine prefix with the most families. Ties are broken by
/// the framework hint, then by name order, so the answer never depends on input order.
/// `None` when the endpoint exports no engine family (a frontend, a router, a bare process).
pub fn detect_engine<'a>(
    family_names: impl IntoIterator<Item = &'a str>,
    framework_hint: Option<&str>,
) -> Option<Engine> {
    // Families per engine, indexed in `Engine`'s order (no map code per key type in the
    // `.wasm`, issue 11).
    let mut counts = [0usize; ENGINES.len()];
    for name in family_names {
        if let Some(e) = engine_prefix(name).and_then(Engine::from_prefix) {
            counts[e as usize] += 1;
        }
    }
    let best = counts.iter().copied().filter(|c| *c > 0).max()?;
    let tied: Vec<Engine> = ENGINES
        .into_iter()
        .filter(|e| counts[*e as usize] == best)
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
    fn engines_are_listed_in_their_order() {
        for (i, e) in ENGINES.iter().enumerate() {
            assert_eq!(*e as usize, i);
        }
        assert!(ENGINES.windows(2).all(|w| w[0] < w[1]));
        // Counters are indexed the same way (`CounterMap`), which walks them in `Ord` order.
        let all = crate::engines::Counter::ALL;
        for (i, c) in all.iter().enumerate() {
            assert_eq!(*c as usize, i);
        }
        assert!(all.windows(2).all(|w| w[0] < w[1]));
    }

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
