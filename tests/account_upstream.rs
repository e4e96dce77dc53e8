//! The upstream producer's and dashboard's cache-accounting tests (research/producer.md
//! section 8), reproduced; where the contract deliberately differs, the corrected value is
//! pinned and the upstream bug (producer.md section 7) is named.

mod common;
use common::*;
use kvledger::account::{CpuComponent, Status};

const AGG: &str = "http://localhost:8000/metrics";
const P: &str = "http://10.0.0.1:7500/metrics";
const D: &str = "http://10.0.0.2:7501/metrics";
const FE: &str = "http://10.0.0.9:8000/metrics";

fn launch_agg(extra: &str) -> String {
    format!(
        r#"{{"framework":"vllm","disaggregated":false,"agg_endpoints":["localhost:8000"]{extra}}}"#
    )
}

/// 8.1 #27 `parses_real_server_metrics_schema`: hits 800 / queries 1000 → 0.8 upstream.
/// Contract: without `prompt_tokens_by_source` hits/queries is telemetry only (bug #3:
/// queries were re-counted per admission attempt), so the status is COUNTERS_MISSING.
#[test]
fn vllm_hits_over_queries_is_telemetry_bug_3() {
    let a = account_export(
        &[
            counter(AGG, "vllm:prefix_cache_hits", &[], 800.0),
            counter(AGG, "vllm:prefix_cache_queries", &[], 1000.0),
            counter(AGG, "vllm:prompt_tokens", &[], 12345.0),
            counter(AGG, "vllm:generation_tokens", &[], 6789.0),
        ],
        launch_agg(""),
    );
    assert!(approx(telemetry_rate(&a, "gpu"), 0.8));
    assert_eq!(a.cache_validity.status, Status::CountersMissing);
    assert!(codes(&a).contains(&"by_source_missing"));
    assert_eq!(a.legacy.total_prompt_tokens, Some(12345));
    assert_eq!(a.legacy.total_generation_tokens, Some(6789));
    assert!(approx(a.telemetry.vllm_hits_over_queries.expect("t"), 0.8));
}

/// 8.1 #28 `aggregates_across_multiple_series`: 100 + 200 over 400 + 600 → 0.3 (pools add).
#[test]
fn series_of_distinct_pools_add() {
    let a = account_export(
        &[
            counter(
                AGG,
                "vllm:prompt_tokens_by_source",
                &[("engine", "0"), ("source", "local_cache_hit")],
                100.0,
            ),
            counter(
                AGG,
                "vllm:prompt_tokens_by_source",
                &[("engine", "0"), ("source", "local_compute")],
                300.0,
            ),
            counter(
                AGG,
                "vllm:prompt_tokens_by_source",
                &[("engine", "1"), ("source", "local_cache_hit")],
                200.0,
            ),
            counter(
                AGG,
                "vllm:prompt_tokens_by_source",
                &[("engine", "1"), ("source", "local_compute")],
                400.0,
            ),
        ],
        launch_agg(""),
    );
    assert!(approx(telemetry_rate(&a, "gpu"), 0.3));
    assert!(approx(telemetry_rate(&a, "overall"), 0.3));
}

/// 8.1 #30 `ignores_server_warmup_metrics_for_headline_stats`: warmup 900,000 each is ignored.
#[test]
fn warmup_metrics_never_enter_the_rate() {
    let profiling = [
        counter(
            AGG,
            "vllm:prompt_tokens_by_source",
            &[("source", "local_cache_hit")],
            500.0,
        ),
        counter(
            AGG,
            "vllm:prompt_tokens_by_source",
            &[("source", "local_compute")],
            500.0,
        ),
        counter(AGG, "vllm:prompt_tokens", &[], 1000.0),
    ];
    let warmup = [
        counter(
            AGG,
            "vllm:prompt_tokens_by_source",
            &[("source", "local_cache_hit")],
            900_000.0,
        ),
        counter(
            AGG,
            "vllm:prompt_tokens_by_source",
            &[("source", "local_compute")],
            900_000.0,
        ),
        counter(AGG, "vllm:prompt_tokens", &[], 900_000.0),
    ];
    let a = account(&[
        (
            "server_metrics_export.json",
            export_json(&profiling, &warmup),
        ),
        ("launch.json", launch_agg("")),
    ]);
    assert!(approx(telemetry_rate(&a, "gpu"), 0.5));
    assert_eq!(a.legacy.total_prompt_tokens, Some(1000));
}

/// 8.1 #31 `normalizes_sglang_server_metrics`: device 400 / host 100 of 1000.
#[test]
fn sglang_tiers() {
    let launch = r#"{"framework":"sglang","disaggregated":false,"agg_endpoints":["localhost:8000"],"kv_offloading":"cpu","kv_offload_backend":"hicache"}"#;
    let a = account_bounded(
        &[
            counter(AGG, "sglang:prompt_tokens", &[], 1000.0),
            counter(AGG, "sglang:generation_tokens", &[], 200.0),
            counter(
                AGG,
                "sglang:cached_tokens",
                &[("cache_source", "device")],
                400.0,
            ),
            counter(
                AGG,
                "sglang:cached_tokens",
                &[("cache_source", "host")],
                100.0,
            ),
            gauge(AGG, "sglang:token_usage", &[], 0.75),
            counter(
                AGG,
                "sglang:realtime_tokens",
                &[("mode", "prefill_compute")],
                500.0,
            ),
        ],
        launch.to_string(),
    );
    assert!(approx(telemetry_rate(&a, "gpu"), 0.4));
    assert!(approx(telemetry_rate(&a, "cpu"), 0.1));
    assert!(approx(telemetry_rate(&a, "overall"), 0.5));
    assert!(a.rates.external.is_none());
    // The dashboard's rule h = gpu + external must give 0.5: external carries (C + X)/F.
    assert!(approx(
        a.legacy.server_external_cache_hit_rate.expect("ext"),
        0.1
    ));
    assert!(approx(
        a.legacy.server_cpu_cache_hit_rate.expect("cpu"),
        0.1
    ));
    assert_eq!(a.cache_validity.cpu_component, CpuComponent::Measured);
    assert!(approx(
        a.kv_cache.endpoints[0].usage_max.expect("usage"),
        0.75
    ));
    assert_eq!(a.legacy.total_generation_tokens, Some(200));
}

/// Bug #4: SGLang's storage tier (`storage_<Backend>`) is counted, as external.
#[test]
fn sglang_storage_tier_is_external_bug_4() {
    let launch = r#"{"framework":"sglang","disaggregated":false,"agg_endpoints":["localhost:8000"],"kv_offloading":"storage","kv_offload_backend":"eic"}"#;
    let a = account_bounded(
        &[
            counter(AGG, "sglang:prompt_tokens", &[], 1000.0),
            counter(
                AGG,
                "sglang:cached_tokens",
                &[("cache_source", "device")],
                600.0,
            ),
            counter(
                AGG,
                "sglang:cached_tokens",
                &[("cache_source", "host")],
                100.0,
            ),
            counter(
                AGG,
                "sglang:cached_tokens",
                &[("cache_source", "storage_EICStorage")],
                50.0,
            ),
        ],
        launch.to_string(),
    );
    assert!(approx(telemetry_rate(&a, "external"), 0.05));
    assert!(approx(telemetry_rate(&a, "overall"), 0.75));
    assert!(approx(
        a.legacy.server_external_cache_hit_rate.expect("ext"),
        0.15
    ));
}

/// 8.1 #32 `normalizes_dynamo_server_metrics`: frontend totals win; the by-source rate of the
/// prefill worker is the rate (gpu 300/900, external 150/900, overall 0.5). Upstream also
/// calls 150/900 "cpu": with no offload backend named the tier is ambiguous, so kvledger
/// reports it as external with `tier_ambiguous` (the overall rate is unaffected).
#[test]
fn dynamo_vllm_frontend_and_prefill_worker() {
    let worker = "http://10.0.0.1:9009/metrics";
    let frontend = "http://10.0.0.1:9007/metrics";
    let p = [("dynamo_component", "prefill"), ("worker_id", "p0")];
    let a = account(&[
        (
            "server_metrics_export.json",
            export_json(
                &[
                    hist(
                        frontend,
                        "dynamo_frontend_input_sequence_tokens",
                        &[],
                        3.0,
                        900.0,
                    ),
                    counter(frontend, "dynamo_frontend_output_tokens", &[], 300.0),
                    hist(frontend, "dynamo_frontend_cached_tokens", &[], 3.0, 450.0),
                    gauge(
                        worker,
                        "dynamo_component_router_shared_cache_hit_rate",
                        &[],
                        0.55,
                    ),
                    counter(worker, "vllm:prefix_cache_hits", &p, 400.0),
                    counter(worker, "vllm:prefix_cache_queries", &p, 800.0),
                    counter(
                        worker,
                        "vllm:prompt_tokens_by_source",
                        &[p[0], p[1], ("source", "local_cache_hit")],
                        300.0,
                    ),
                    counter(
                        worker,
                        "vllm:prompt_tokens_by_source",
                        &[p[0], p[1], ("source", "external_kv_transfer")],
                        150.0,
                    ),
                    counter(
                        worker,
                        "vllm:prompt_tokens_by_source",
                        &[p[0], p[1], ("source", "local_compute")],
                        450.0,
                    ),
                ],
                &[],
            ),
        ),
        (
            "launch.json",
            r#"{"framework":"dynamo-vllm","disaggregated":true}"#.to_string(),
        ),
    ]);
    assert!(approx(telemetry_rate(&a, "gpu"), 300.0 / 900.0));
    assert!(approx(telemetry_rate(&a, "external"), 150.0 / 900.0));
    assert!(approx(telemetry_rate(&a, "overall"), 0.5));
    assert!(codes(&a).contains(&"tier_ambiguous"));
    assert!(codes(&a).contains(&"ratio_gauge_telemetry"));
    assert_eq!(a.legacy.total_prompt_tokens, Some(900));
    assert_eq!(a.legacy.total_generation_tokens, Some(300));
    assert_eq!(
        a.tokens.source,
        Some(kvledger::account::output::TokenSource::Frontend)
    );
    assert!(approx(a.telemetry.frontend_hit_rate.expect("fe"), 0.5));
    assert_eq!(a.cache_validity.roles.prefill, vec![worker.to_string()]);
    assert_eq!(a.cache_validity.roles.frontend, vec![frontend.to_string()]);
}

/// 8.1 #29 `surfaces_vllm_kv_offload_transfer_stats` with vLLM's real family names
/// (`kv_offload_{store,load}_{bytes,time}`): bandwidth = bytes / time per direction.
#[test]
fn vllm_offload_bandwidth() {
    let a = account_export(
        &[
            counter(
                AGG,
                "vllm:prompt_tokens_by_source",
                &[("source", "local_compute")],
                10.0,
            ),
            counter(AGG, "vllm:kv_offload_store_bytes", &[], 10_000_000.0),
            counter(AGG, "vllm:kv_offload_load_bytes", &[], 5_000_000.0),
            counter(AGG, "vllm:kv_offload_store_time", &[], 2.0),
            counter(AGG, "vllm:kv_offload_load_time", &[], 0.5),
        ],
        launch_agg(""),
    );
    assert_eq!(
        a.offload.bandwidth_gpu_to_cpu_bytes_per_s,
        Some(5_000_000.0)
    );
    assert_eq!(
        a.offload.bandwidth_cpu_to_gpu_bytes_per_s,
        Some(10_000_000.0)
    );
}

/// 8.3 PR #2625 (TRT-LLM, disaggregated): upstream averaged the per-endpoint
/// `trtllm_kv_cache_hit_rate` gauges 0.4 / 0.6 into 0.5 (bug #1, decode dilutes prefill) and
/// summed block counts × the largest block size into 19,200 (bugs #2, #16). kvledger prices
/// the prefill role's token counters only: 200 / 600; pools pair each endpoint's own blocks
/// with its own block size, and the headline pool of a P/D deployment is the decode pool.
#[test]
fn trtllm_disaggregated_bugs_1_2_16() {
    let launch = r#"{"framework":"dynamo-trt","disaggregated":true,"prefill_endpoints":["10.0.0.1:7500"],"decode_endpoints":["10.0.0.2:7501"]}"#;
    let a = account_export(
        &[
            hist(
                FE,
                "dynamo_frontend_input_sequence_tokens",
                &[],
                2.0,
                1000.0,
            ),
            counter(FE, "dynamo_frontend_output_tokens", &[], 200.0),
            counter(P, "trtllm_prompt_tokens", &[], 600.0),
            counter(D, "trtllm_prompt_tokens", &[], 400.0),
            counter(D, "trtllm_generation_tokens", &[], 200.0),
            counter(P, "trtllm_prompt_cached_tokens", &[], 200.0),
            counter(D, "trtllm_prompt_cached_tokens", &[], 300.0),
            gauge(P, "trtllm_kv_cache_hit_rate", &[], 0.4),
            gauge(D, "trtllm_kv_cache_hit_rate", &[], 0.6),
            gauge(P, "trtllm_kv_cache_utilization", &[], 0.7),
            gauge(D, "trtllm_kv_cache_utilization", &[], 0.8),
            counter(
                P,
                "trtllm_kv_cache_offload_bytes",
                &[("disaggregation_mode", "prefill")],
                4096.0,
            ),
            counter(D, "trtllm_kv_cache_onboard_bytes", &[], 2048.0),
            gauge(P, "trtllm_kv_cache_max_blocks", &[], 100.0),
            gauge(D, "trtllm_kv_cache_max_blocks", &[], 200.0),
            gauge(P, "trtllm_kv_cache_tokens_per_block", &[], 64.0),
            gauge(D, "trtllm_kv_cache_tokens_per_block", &[], 64.0),
        ],
        launch.to_string(),
    );
    assert!(approx(telemetry_rate(&a, "gpu"), 200.0 / 600.0));
    assert!(approx(telemetry_rate(&a, "overall"), 200.0 / 600.0));
    assert!(approx(
        a.telemetry.ratio_gauges["trtllm_kv_cache_hit_rate"],
        0.5
    ));
    assert_eq!(a.legacy.total_prompt_tokens, Some(1000));
    assert_eq!(a.legacy.total_generation_tokens, Some(200));
    assert_eq!(a.kv_cache.prefill_pool_tokens, Some(6400.0));
    assert_eq!(a.kv_cache.decode_pool_tokens, Some(12800.0));
    assert_eq!(a.legacy.kv_cache_pool_tokens, Some(12800));
    assert_eq!(a.offload.bytes_gpu_to_cpu, Some(4096.0));
    assert_eq!(a.offload.bytes_cpu_to_gpu, Some(2048.0));
    assert!(codes(&a).contains(&"decode_excluded"));
}

/// Bug #2 with different block sizes: 1000×32 + 2000×128 = 288,000, not Σ × max = 384,000.
#[test]
fn trtllm_capacity_pairs_per_endpoint_bug_2() {
    let launch = r#"{"framework":"trt","disaggregated":false,"agg_endpoints":["10.0.0.1:7500","10.0.0.2:7501"]}"#;
    let a = account_export(
        &[
            counter(P, "trtllm_prompt_tokens", &[], 600.0),
            counter(D, "trtllm_prompt_tokens", &[], 400.0),
            gauge(P, "trtllm_kv_cache_max_blocks", &[], 1000.0),
            gauge(D, "trtllm_kv_cache_max_blocks", &[], 2000.0),
            gauge(P, "trtllm_kv_cache_tokens_per_block", &[], 32.0),
            gauge(D, "trtllm_kv_cache_tokens_per_block", &[], 128.0),
        ],
        launch.to_string(),
    );
    assert_eq!(a.legacy.kv_cache_pool_tokens, Some(288_000));
}

/// Bug #12: ATOM `lmcache_loaded_tokens` is transfer volume, not reuse. Upstream reported it
/// as the external rate (200/800 = 0.25); kvledger keeps cached/full = 0.75 as the overall
/// rate and, without the offload counter, reports the tier split as not separable.
#[test]
fn atom_lmcache_volume_is_not_reuse_bug_12() {
    let launch = r#"{"framework":"atom","disaggregated":false,"agg_endpoints":["localhost:8000"],"kv_offloading":"dram","kv_offload_backend":"lmcache"}"#;
    let a = account_export(
        &[
            counter(AGG, "atom:prefix_cache_full_tokens", &[], 800.0),
            counter(AGG, "atom:prefix_cache_cached_tokens", &[], 600.0),
            counter(AGG, "atom:lmcache_loaded_tokens", &[], 200.0),
            counter(AGG, "atom:prompt_tokens", &[], 1000.0),
            counter(AGG, "atom_generation_tokens", &[], 25.0),
            gauge(AGG, "atom:kv_cache_usage_ratio", &[], 0.4),
        ],
        launch.to_string(),
    );
    assert!(approx(telemetry_rate(&a, "overall"), 0.75));
    assert!(a.rates.external.is_none());
    assert!(codes(&a).contains(&"tiers_not_separable"));
    assert_eq!(a.legacy.total_prompt_tokens, Some(1000));
    assert_eq!(a.legacy.total_generation_tokens, Some(25));
}

/// ATOM with the offload counter: tiers are disjoint; external aliases cpu.
#[test]
fn atom_offload_counter_separates_tiers() {
    let launch = r#"{"framework":"atom","disaggregated":false,"agg_endpoints":["localhost:8000"],"kv_offloading":"dram","kv_offload_backend":"lmcache"}"#;
    let a = account_bounded(
        &[
            counter(AGG, "atom:prefix_cache_full_tokens", &[], 20000.0),
            counter(AGG, "atom:prefix_cache_cached_tokens", &[], 7000.0),
            counter(AGG, "atom:prefix_cache_offload_tokens", &[], 3000.0),
        ],
        launch.to_string(),
    );
    assert!(approx(telemetry_rate(&a, "gpu"), 0.35));
    assert!(approx(telemetry_rate(&a, "cpu"), 0.15));
    assert!(approx(telemetry_rate(&a, "overall"), 0.5));
    assert_eq!(a.cache_validity.cpu_component, CpuComponent::Measured);
    assert!(approx(
        a.legacy.server_external_cache_hit_rate.expect("ext"),
        0.15
    ));
}

/// App `index.test.ts`: disaggregated hit rate from prefill only (900/1000 = 0.9), and the
/// token totals: frontend wins; disaggregated without a frontend → client; aggregated →
/// engine sum (2000 + 1900 = 3900). Bug #6: prefill and decode prompts are never added.
#[test]
fn disaggregated_rates_and_token_sources_bug_6() {
    let launch = r#"{"framework":"sglang","disaggregated":true,"prefill_endpoints":["10.0.0.1:7500"],"decode_endpoints":["10.0.0.2:7501"],"kv_offloading":"none"}"#;
    let series = [
        counter(P, "sglang:prompt_tokens", &[], 1000.0),
        counter(
            P,
            "sglang:cached_tokens",
            &[("cache_source", "device")],
            900.0,
        ),
        counter(D, "sglang:prompt_tokens", &[], 1000.0),
        counter(
            D,
            "sglang:cached_tokens",
            &[("cache_source", "device")],
            950.0,
        ),
    ];
    let recs = records(&[970, 970], &[]);
    let a = account(&[
        ("server_metrics_export.json", export_json(&series, &[])),
        ("launch.json", launch.to_string()),
        ("profile_export.jsonl", recs.clone()),
    ]);
    assert!(approx(telemetry_rate(&a, "gpu"), 0.9));
    assert_eq!(a.legacy.total_prompt_tokens, Some(1940));
    assert_eq!(
        a.tokens.source,
        Some(kvledger::account::output::TokenSource::Client)
    );

    let mut with_fe = series.to_vec();
    with_fe.push(hist(
        FE,
        "dynamo_frontend_input_sequence_tokens",
        &[],
        2.0,
        1950.0,
    ));
    let a = account(&[
        ("server_metrics_export.json", export_json(&with_fe, &[])),
        ("launch.json", launch.to_string()),
        ("profile_export.jsonl", recs),
    ]);
    assert_eq!(a.legacy.total_prompt_tokens, Some(1950));

    let agg = r#"{"framework":"sglang","disaggregated":false,"agg_endpoints":["10.0.0.1:7500","10.0.0.2:7501"]}"#;
    let a = account_export(
        &[
            counter(P, "sglang:prompt_tokens", &[], 2000.0),
            counter(D, "sglang:prompt_tokens", &[], 1900.0),
        ],
        agg.to_string(),
    );
    assert_eq!(a.legacy.total_prompt_tokens, Some(3900));
}

/// Bug #11 / app: a hit rate above 1 (1010 / 1000) means counter windows do not line up:
/// upstream nulled or reported it; kvledger refuses it as INVALID_COUNTER (hits_exceed_prompt).
#[test]
fn hits_above_prompt_are_invalid_bug_11() {
    let series = [
        counter(AGG, "sglang:prompt_tokens", &[], 1000.0),
        counter(
            AGG,
            "sglang:cached_tokens",
            &[("cache_source", "device")],
            1010.0,
        ),
    ];
    let a = account(&[
        (
            "server_metrics_export.jsonl",
            scrapes_jsonl(&series, 5000.0),
        ),
        (
            "launch.json",
            r#"{"disaggregated":false,"agg_endpoints":["localhost:8000"],"kv_offloading":"none"}"#
                .to_string(),
        ),
        ("profile_export.jsonl", records(&[1000], &[])),
    ]);
    assert_eq!(a.cache_validity.status, Status::InvalidCounter);
    assert!(codes(&a).contains(&"hits_exceed_prompt"));
}

/// Exact raw evidence, one aggregated endpoint, conserved requests: VALID_COMPLETE.
#[test]
fn exact_evidence_is_valid_complete() {
    let series = [
        counter(
            AGG,
            "vllm:prompt_tokens_by_source",
            &[("source", "local_cache_hit")],
            900.0,
        ),
        counter(
            AGG,
            "vllm:prompt_tokens_by_source",
            &[("source", "local_compute")],
            100.0,
        ),
        counter(
            AGG,
            "vllm:prompt_tokens_by_source",
            &[("source", "external_kv_transfer")],
            0.0,
        ),
        counter(AGG, "vllm:prompt_tokens", &[], 1000.0),
    ];
    let a = account(&[
        (
            "server_metrics_export.jsonl",
            scrapes_jsonl(&series, 12_345.0),
        ),
        ("launch.json", launch_agg(r#","kv_offloading":"none""#)),
        ("profile_export.jsonl", records(&[400, 600], &[])),
    ]);
    assert_eq!(
        a.cache_validity.status,
        Status::ValidComplete,
        "{:?}",
        a.cache_validity.reasons
    );
    assert!(a.cache_validity.pricing_eligible);
    let o = a.rates.overall.expect("overall");
    assert_eq!((o.value, o.lo, o.hi), (Some(0.9), 0.9, 0.9));
    assert!(a.cache_validity.request_scope.conserved);
    assert_eq!(a.legacy.cache_validity_status, Status::ValidComplete);
    assert!(a.legacy.cache_pricing_eligible);
}
