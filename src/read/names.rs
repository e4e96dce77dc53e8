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

/// Families that are Prometheus counters in every engine version kvledger knows, by canonical
/// name ([`canonical_family`]): every counter the engine adapters read, and the engines' other
/// token and request counters. A sample of one of these without a type is a counter.
pub const KNOWN_COUNTERS: [&str; 31] = [
    "vllm:prompt_tokens",
    "vllm:generation_tokens",
    "vllm:prompt_tokens_by_source",
    "vllm:prompt_tokens_cached",
    "vllm:prompt_tokens_recomputed",
    "vllm:prefix_cache_queries",
    "vllm:prefix_cache_hits",
    "vllm:external_prefix_cache_queries",
    "vllm:external_prefix_cache_hits",
    "vllm:request_success",
    "vllm:num_preemptions",
    "sglang:prompt_tokens",
    "sglang:generation_tokens",
    "sglang:cached_tokens",
    "sglang:num_requests",
    "sglang:realtime_tokens",
    "trtllm_prompt_tokens",
    "trtllm_generation_tokens",
    "trtllm_prompt_cached_tokens",
    "trtllm_prompt_cache_hit_tokens",
    "trtllm_request_success",
    "atom:prefix_cache_requests",
    "atom:prefix_cache_full_tokens",
    "atom:prefix_cache_cached_tokens",
    "atom:prefix_cache_offload_tokens",
    "atom:prompt_tokens",
    "atom:generation_tokens",
    "atom:requests_finished",
    "dynamo_component_requests",
    "dynamo_frontend_requests",
    "dynamo_frontend_output_tokens",
];

/// Whether a family seen without a type (a raw JSONL scrape, a Prometheus sample with no
/// `# TYPE`) is a counter by its name: it ends in `_total` (the Prometheus counter suffix,
/// which AIPerf strips from the names it exports) or is one of [`KNOWN_COUNTERS`] in any
/// alias spelling. Any other untyped family may be a gauge, and gauges may exceed 2^53.
pub fn counter_by_name(name: &str) -> bool {
    let name = name.trim();
    name.ends_with("_total") || KNOWN_COUNTERS.contains(&canonical_family(name).as_str())
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
    fn counters_by_name() {
        for n in [
            "vllm:prompt_tokens",
            "vllm_prompt_tokens_total",
            "vllm:request_success",
            "process_cpu_seconds_total",
            "atom_prefix_cache_cached_tokens",
            "tensorrt_llm:prompt_tokens",
        ] {
            assert!(counter_by_name(n), "{n}");
        }
        for n in [
            "vllm:kv_cache_usage_perc",
            "process_virtual_memory_max_bytes",
            "vllm:num_requests_running",
            "vllm:time_to_first_token_seconds",
        ] {
            assert!(!counter_by_name(n), "{n}");
        }
    }

    #[test]
    fn every_counter_an_adapter_reads_is_known() {
        use crate::engines::{atom, dynamo, sglang, trtllm, vllm};
        for n in [
            vllm::BY_SOURCE,
            vllm::QUERIES,
            vllm::HITS,
            vllm::RECOMPUTED,
            sglang::PROMPT,
            sglang::CACHED,
            trtllm::PROMPT,
            trtllm::CACHED,
            trtllm::BY_TIER,
            atom::FULL,
            atom::CACHED,
            atom::OFFLOAD,
            atom::REQUESTS,
            dynamo::FRONTEND_REQUESTS,
            dynamo::FRONTEND_OUTPUT_TOKENS,
        ] {
            assert!(
                KNOWN_COUNTERS.contains(&canonical_family(n).as_str()),
                "{n}"
            );
        }
        for n in KNOWN_COUNTERS {
            assert_eq!(canonical_family(n), n, "listed by canonical name");
        }
    }

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
