//! Realistic uploads: a generated run's bundle with the real CLI's result (every claim
//! verified), the real mi355x run with a producer result JSON (honest, then lying), bundles
//! written by the system's own `tar`, plain and gzip'd, whatever the chunking.

mod validate_support;

use kvledger::validate::{ClaimStatus, UploadLimits};
use serde_json::json;
use validate_support::*;

fn clean_run() -> std::path::PathBuf {
    root().join("examples/synth/vllm-agg-clean")
}

fn mi355x() -> std::path::PathBuf {
    root().join("examples/vllm-mi355x-conc1")
}

fn producer_result() -> serde_json::Value {
    let text = std::fs::read_to_string(
        root().join("tests/fixtures/validate/vllm-mi355x-conc1.result.json"),
    )
    .expect("fixture");
    serde_json::from_str(&text).expect("fixture JSON")
}

#[test]
fn an_honest_bundle_is_accepted_with_every_priced_claim_verified() {
    let result = account_json(&clean_run());
    let upload = gzip(&bundle(&result, &clean_run()));
    let v = verdict(&upload);
    assert_eq!(outcome(&v), "accepted", "{:#?}", v.errors);
    assert!(v.errors.is_empty());
    let acc = v.recomputed.as_ref().expect("recomputed");
    assert_eq!(acc.cache_validity.status.as_str(), "VALID_COMPLETE");
    // The recomputation is the CLI's own accounting of the same files.
    assert_eq!(serde_json::to_value(acc).expect("json"), result);
    for field in [
        "legacy.server_gpu_cache_hit_rate",
        "rates.overall.value",
        "cache_validity.status",
        "cache_validity.pricing_eligible",
        "legacy.total_prompt_tokens",
    ] {
        let c = v
            .claims
            .iter()
            .find(|c| c.field == field)
            .unwrap_or_else(|| panic!("{field} claimed"));
        assert_eq!(c.status, ClaimStatus::Verified, "{field}");
    }
    assert!(v.warnings.is_empty(), "{:#?}", v.warnings);
}

#[test]
fn the_verdict_does_not_depend_on_chunking_or_compression() {
    let result = account_json(&clean_run());
    let plain = bundle(&result, &clean_run());
    let whole = json(&verdict(&plain));
    for size in [1, 7, 511, 512, 4096, 65536] {
        assert_eq!(
            json(&chunked(&plain, size, UploadLimits::default())),
            whole,
            "chunks of {size}"
        );
    }
    let gz = gzip(&plain);
    for size in [1, 13, 32768] {
        assert_eq!(
            json(&chunked(&gz, size, UploadLimits::default())),
            whole,
            "gzip, chunks of {size}"
        );
    }
}

/// Bundles written by the system's tar (GNU tar: its default format, `--format=pax`, a
/// folder around them, a path longer than 100 bytes) read as the ones written here.
#[test]
fn bundles_written_by_tar_are_read() {
    let dir = std::env::temp_dir().join(format!("kvledger-validate-tar-{}", std::process::id()));
    let run = dir.join("run");
    let deep = run
        .join("aiperf_artifacts")
        .join("a".repeat(60))
        .join("b".repeat(60));
    std::fs::create_dir_all(&deep).expect("mkdir");
    for (name, data) in files(&clean_run()) {
        if name == "truth.json" {
            continue;
        }
        let target = if name.ends_with(".jsonl") && name.contains("profile") {
            deep.join("profile_export.jsonl")
        } else {
            run.join(&name)
        };
        std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
        std::fs::write(target, data).expect("write");
    }
    let result = account_json(&clean_run());
    std::fs::write(
        run.join("result.json"),
        serde_json::to_vec(&result).expect("json"),
    )
    .expect("write");
    let expected = verdict(&gzip(&bundle(&result, &clean_run())));
    for (archive, args) in [
        ("gnu.tgz", vec!["-czf", "gnu.tgz", "-C", "run", "."]),
        (
            "pax.tgz",
            vec!["--format=pax", "-czf", "pax.tgz", "-C", "run", "."],
        ),
        ("folder.tar", vec!["-cf", "folder.tar", "run"]),
    ] {
        let status = std::process::Command::new("tar")
            .args(&args)
            .current_dir(&dir)
            .status()
            .expect("tar runs");
        assert!(status.success(), "{archive}");
        let v = verdict(&std::fs::read(dir.join(archive)).expect("archive"));
        assert_eq!(outcome(&v), "accepted", "{archive}: {:#?}", v.errors);
        assert_eq!(v.recomputed, expected.recomputed, "{archive}");
        assert_eq!(json(&v)["claims"], json(&expected)["claims"], "{archive}");
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn a_producer_result_alone_is_accepted_with_its_rates_unverified() {
    let text = serde_json::to_vec(&producer_result()).expect("json");
    let v = verdict(&text);
    assert_eq!(outcome(&v), "accepted", "{:#?}", v.errors);
    assert!(v.recomputed.is_none());
    let unverified: Vec<&str> = v
        .warnings
        .iter()
        .filter(|w| w.code.as_str() == "CLAIM_UNVERIFIED")
        .filter_map(|w| w.json_path.as_deref())
        .collect();
    assert!(
        unverified.contains(&"server_metrics.cache.gpu_cache_hit_rate"),
        "{unverified:?}"
    );
    assert!(unverified.contains(&"request_metrics.cache.theoretical_cache_hit_rate"));
    assert!(v.claims.iter().all(|c| c.status == ClaimStatus::Unverified));
    // The nested producer fields are all found, counts and fractions included.
    let fields: Vec<&str> = v.claims.iter().map(|c| c.field.as_str()).collect();
    for f in [
        "server_metrics.tokens.prompt_by_source.raw.local_cache_hit",
        "server_metrics.sources[0].prefix_cache_hit_rate",
        "server_metrics.kv_cache.gpu_usage_pct",
        "kv_cache_pool_tokens",
    ] {
        assert!(fields.contains(&f), "{f} in {fields:?}");
    }
}

#[test]
fn the_real_run_checks_what_its_evidence_can_check() {
    // The real mi355x run has a CSV export only: the window increase is unbounded, so its
    // rates cannot be verified (a warning), while the theoretical rate and the totals can.
    let upload = bundle(&producer_result(), &mi355x());
    let v = verdict(&upload);
    assert_eq!(outcome(&v), "accepted", "{:#?}", v.errors);
    let status = |f: &str| v.claims.iter().find(|c| c.field == f).map(|c| c.status);
    assert_eq!(
        status("server_metrics.cache.gpu_cache_hit_rate"),
        Some(ClaimStatus::Unverified)
    );
    assert_eq!(
        status("request_metrics.cache.theoretical_cache_hit_rate"),
        Some(ClaimStatus::Verified)
    );
    assert_eq!(
        status("server_metrics.tokens.prompt_total"),
        Some(ClaimStatus::Verified)
    );
    assert_eq!(status("kv_cache_pool_tokens"), Some(ClaimStatus::Verified));
    assert_eq!(
        v.recomputed
            .as_ref()
            .map(|a| a.cache_validity.status.as_str()),
        Some("WINDOW_UNRESOLVED")
    );
}

#[test]
fn a_claim_of_eligibility_the_evidence_does_not_support_is_refused() {
    let mut result = producer_result();
    result["cache_validity"] = json!({"status": "VALID_COMPLETE", "pricing_eligible": true, "contract_version": "kvledger/1"});
    let v = verdict(&gzip(&bundle(&result, &mi355x())));
    assert_eq!(outcome(&v), "claims_refused");
    assert!(!v.accepted);
    assert_eq!(
        codes(&v.errors),
        ["CLAIM_CONTRADICTED", "ELIGIBILITY_UNSUPPORTED"]
    );
    let e = &v.errors[1];
    assert_eq!(
        e.json_path.as_deref(),
        Some("cache_validity.pricing_eligible")
    );
    assert_eq!(e.file.as_deref(), Some("result.json"));
    assert!(
        e.message.contains("WINDOW_UNRESOLVED") && e.message.contains("rate_too_wide"),
        "{}",
        e.message
    );
    assert!(e.line.is_some() && e.column.is_some());
    // Without the raw artifacts the same claim is only unverified.
    let alone = verdict(&serde_json::to_vec(&result).expect("json"));
    assert_eq!(outcome(&alone), "accepted");
    let c = alone
        .claims
        .iter()
        .find(|c| c.field == "cache_validity.pricing_eligible")
        .expect("claimed");
    assert_eq!(c.status, ClaimStatus::Unverified);
}

#[test]
fn a_rate_outside_the_recomputed_interval_is_refused() {
    let mut result = account_json(&clean_run());
    result["legacy"]["server_gpu_cache_hit_rate"] = json!(0.95);
    let v = verdict(&bundle(&result, &clean_run()));
    assert_eq!(outcome(&v), "claims_refused");
    assert_eq!(codes(&v.errors), ["CLAIM_CONTRADICTED"]);
    let c = v
        .claims
        .iter()
        .find(|c| c.field == "legacy.server_gpu_cache_hit_rate")
        .expect("claimed");
    assert_eq!(c.status, ClaimStatus::Contradicted);
    // Within max_rate_width of the recomputed interval is still verified.
    let exact = result["rates"]["gpu"]["value"].as_f64().expect("rate");
    result["legacy"]["server_gpu_cache_hit_rate"] = json!(exact + 0.004);
    assert_eq!(
        outcome(&verdict(&bundle(&result, &clean_run()))),
        "accepted"
    );
}

#[test]
fn an_upload_that_contradicts_itself_is_refused_without_artifacts() {
    let mut result = producer_result();
    result["cache_validity"] = json!({"status": "ROLES_UNRESOLVED", "pricing_eligible": true});
    let v = verdict(&serde_json::to_vec(&result).expect("json"));
    assert_eq!(outcome(&v), "claims_refused");
    assert_eq!(codes(&v.errors), ["CLAIM_INCONSISTENT"]);
}

#[test]
fn plain_and_gzipped_results_give_the_same_verdict() {
    let text = serde_json::to_vec(&producer_result()).expect("json");
    assert_eq!(json(&verdict(&text)), json(&verdict(&gzip(&text))));
}
