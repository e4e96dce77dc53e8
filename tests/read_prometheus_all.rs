//! Every real Prometheus capture of the shared data (tests/fixtures/prometheus/all/) reads
//! without error, and the invariants their origin READMEs state hold on what was read.

use kvledger::model::{MetricType, SampleValue, Scrape};
use kvledger::read::{read_prometheus_text, CaptureMeta, FamilyFilter};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/prometheus/all")
}

fn read(path: &Path) -> Scrape {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let bytes = std::fs::read(path).expect("read");
    read_prometheus_text(
        &name,
        &bytes[..],
        &CaptureMeta::default(),
        &FamilyFilter::all(),
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Σ of a counter family's scalar samples, optionally only those with `label = value`.
fn sum(s: &Scrape, family: &str, label: Option<(&str, &str)>) -> Option<f64> {
    let f = s.families().find(|f| f.name == family)?;
    Some(
        f.samples
            .iter()
            .filter(|x| label.is_none_or(|(k, v)| x.labels.get(k) == Some(v)))
            .filter_map(|x| match x.value {
                SampleValue::Scalar { value } => Some(value),
                SampleValue::Histogram { .. } => None,
            })
            .sum(),
    )
}

fn captures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "prom"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_capture_reads() {
    let files = captures();
    assert_eq!(files.len(), 43, "every shared capture is a fixture");
    for p in &files {
        let s = read(p);
        assert!(
            s.families().len() > 20,
            "{}: {} families",
            p.display(),
            s.families().len()
        );
        assert!(s
            .families()
            .any(|f| f.metric_type == Some(MetricType::Counter)));
        assert!(s.families().all(|f| !f.name.ends_with("_created")));
    }
}

#[test]
fn vllm_by_source_invariants() {
    let mut checked = 0;
    for p in captures() {
        let s = read(&p);
        let (Some(prompt), Some(by_source)) = (
            sum(&s, "vllm:prompt_tokens", None),
            sum(&s, "vllm:prompt_tokens_by_source", None),
        ) else {
            continue;
        };
        // prompt_tokens == local_compute + local_cache_hit + external_kv_transfer
        assert_eq!(prompt, by_source, "{}", p.display());
        let hit = sum(
            &s,
            "vllm:prompt_tokens_by_source",
            Some(("source", "local_cache_hit")),
        );
        assert_eq!(
            sum(&s, "vllm:prefix_cache_hits", None),
            hit,
            "{}",
            p.display()
        );
        assert_eq!(
            sum(&s, "vllm:prefix_cache_queries", None),
            Some(prompt),
            "{}",
            p.display()
        );
        checked += 1;
    }
    assert!(
        checked >= 20,
        "{checked} vLLM captures with the by-source counter"
    );
}

#[test]
fn sglang_hits_within_prompts() {
    let mut checked = 0;
    for p in captures() {
        let s = read(&p);
        let Some(prompt) = sum(&s, "sglang:prompt_tokens", None) else {
            continue;
        };
        let cached = sum(&s, "sglang:cached_tokens", None).unwrap_or(0.0);
        assert!(cached <= prompt, "{}: {cached} > {prompt}", p.display());
        checked += 1;
    }
    assert!(checked >= 8, "{checked} SGLang captures");
}

#[test]
fn before_and_after_of_each_step_only_grow() {
    let mut by_step: BTreeMap<String, (Option<PathBuf>, Option<PathBuf>)> = BTreeMap::new();
    for p in captures() {
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        if let Some(stem) = name.strip_suffix(".before.prom") {
            by_step.entry(stem.to_string()).or_default().0 = Some(p.clone());
        } else if let Some(stem) = name.strip_suffix(".after.prom") {
            by_step.entry(stem.to_string()).or_default().1 = Some(p.clone());
        }
    }
    let mut pairs = 0;
    for (step, (before, after)) in by_step {
        let (Some(b), Some(a)) = (before, after) else {
            continue;
        };
        let (b, a) = (read(&b), read(&a));
        for family in [
            "vllm:prompt_tokens",
            "vllm:prompt_tokens_by_source",
            "sglang:prompt_tokens",
            "sglang:cached_tokens",
        ] {
            if let (Some(x), Some(y)) = (sum(&b, family, None), sum(&a, family, None)) {
                assert!(y >= x, "{step} {family}: after {y} < before {x}");
            }
        }
        pairs += 1;
    }
    assert!(pairs >= 18, "{pairs} before/after pairs");
}
