//! Metric-family name aliases. Engines and exporters spell the same family several ways:
//! a counter `x_total` is exported by AIPerf as `x`; ATOM's `atom:` may be renamed `atom_`;
//! TensorRT-LLM uses `trtllm_`, `trtllm:` or `tensorrt_llm:`; pipelines that rewrite `:` to
//! `_` turn `vllm:`, `sglang:` and `lmcache:` into `vllm_`, `sglang_`, `lmcache_`; vLLM renamed three families in
//! 0.9. `canonical_family` maps every spelling of one family to one key, used for lookup and
//! filtering only (exports keep the name as written).

/// vLLM's pre-0.9 names and their current spelling.
const VLLM_RENAMES: [(&str, &str); 3] = [
    ("vllm:gpu_prefix_cache_queries", "vllm:prefix_cache_queries"),
    ("vllm:gpu_prefix_cache_hits", "vllm:prefix_cache_hits"),
    ("vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"),
];

/// The lookup key of a family name: one key for every alias spelling.
pub fn canonical_family(name: &str) -> String {
    let name = name.trim();
    let base = name.strip_suffix("_total").unwrap_or(name);
    let mut key = if let Some(rest) = base.strip_prefix("atom_") {
        format!("atom:{rest}")
    } else if let Some(rest) = base.strip_prefix("vllm_") {
        format!("vllm:{rest}")
    } else if let Some(rest) = base.strip_prefix("sglang_") {
        format!("sglang:{rest}")
    } else if let Some(rest) = base.strip_prefix("lmcache_") {
        format!("lmcache:{rest}")
    } else if let Some(rest) = base.strip_prefix("tensorrt_llm:") {
        format!("trtllm_{rest}")
    } else if let Some(rest) = base.strip_prefix("trtllm:") {
        format!("trtllm_{rest}")
    } else {
        base.to_string()
    };
    if let Some((_, new)) = VLLM_RENAMES.iter().find(|(old, _)| *old == key) {
        key = (*new).to_string();
    }
    key
}

/// True when two spellings name the same family.
pub fn same_family(a: &str, b: &str) -> bool {
    canonical_family(a) == canonical_family(b)
}

/// The engine prefix of a family (`vllm`, `sglang`, `trtllm`, `atom`, `dynamo`), if any.
pub fn engine_prefix(name: &str) -> Option<&'static str> {
    let key = canonical_family(name);
    if key.starts_with("vllm:") {
        Some("vllm")
    } else if key.starts_with("sglang:") {
        Some("sglang")
    } else if key.starts_with("trtllm_") {
        Some("trtllm")
    } else if key.starts_with("atom:") {
        Some("atom")
    } else if key.starts_with("dynamo_") {
        Some("dynamo")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn total_suffix_is_one_family() {
        assert_eq!(
            canonical_family("vllm:prompt_tokens_total"),
            "vllm:prompt_tokens"
        );
        assert!(same_family(
            "vllm:prompt_tokens",
            "vllm:prompt_tokens_total"
        ));
        assert!(!same_family("vllm:prompt_tokens", "vllm:generation_tokens"));
    }

    #[test]
    fn atom_spellings() {
        for n in [
            "atom:prefix_cache_full_tokens",
            "atom_prefix_cache_full_tokens",
            "atom_prefix_cache_full_tokens_total",
            "atom:prefix_cache_full_tokens_total",
        ] {
            assert_eq!(canonical_family(n), "atom:prefix_cache_full_tokens", "{n}");
        }
    }

    #[test]
    fn colon_rewritten_to_underscore() {
        assert!(same_family(
            "vllm_prompt_tokens_by_source_total",
            "vllm:prompt_tokens_by_source"
        ));
        assert!(same_family(
            "sglang_cached_tokens",
            "sglang:cached_tokens_total"
        ));
        assert_eq!(engine_prefix("sglang_prompt_tokens"), Some("sglang"));
    }

    #[test]
    fn trtllm_spellings() {
        for n in [
            "trtllm_prompt_tokens",
            "trtllm:prompt_tokens",
            "tensorrt_llm:prompt_tokens_total",
        ] {
            assert_eq!(canonical_family(n), "trtllm_prompt_tokens", "{n}");
        }
        assert_eq!(
            engine_prefix("tensorrt_llm:request_success"),
            Some("trtllm")
        );
    }

    #[test]
    fn vllm_pre_09_names() {
        assert!(same_family(
            "vllm:gpu_prefix_cache_hits_total",
            "vllm:prefix_cache_hits"
        ));
        assert!(same_family(
            "vllm:gpu_prefix_cache_queries",
            "vllm:prefix_cache_queries"
        ));
        assert!(same_family(
            "vllm:gpu_cache_usage_perc",
            "vllm:kv_cache_usage_perc"
        ));
        assert_eq!(engine_prefix("dynamo_frontend_requests"), Some("dynamo"));
        assert_eq!(engine_prefix("process_open_fds"), None);
    }
}
