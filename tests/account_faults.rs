//! Each failing check of the verdict on a small hand-made run: the status and reason codes
//! the contract requires (section 6), and the informational codes that must not fail a run.

mod common;
use common::*;
use kvledger::account::{Policy, Status};

const AGG: &str = "http://localhost:8000/metrics";
const LAUNCH: &str = r#"{"framework":"vllm","disaggregated":false,"agg_endpoints":["localhost:8000"],"kv_offloading":"none"}"#;

fn vllm_series(url: &str, hit: f64, compute: f64) -> Vec<Ser> {
    vec![
        counter(
            url,
            "vllm:prompt_tokens_by_source",
            &[("source", "local_cache_hit")],
            hit,
        ),
        counter(
            url,
            "vllm:prompt_tokens_by_source",
            &[("source", "local_compute")],
            compute,
        ),
    ]
}

fn valid_files(series: &[Ser], launch: &str, prompts: &[u64]) -> Vec<(&'static str, String)> {
    vec![
        ("server_metrics_export.jsonl", scrapes_jsonl(series, 1000.0)),
        ("launch.json", launch.to_string()),
        ("profile_export.jsonl", records(prompts, &[])),
    ]
}

#[test]
fn clean_run_is_valid() {
    let a = account(&valid_files(
        &vllm_series(AGG, 900.0, 100.0),
        LAUNCH,
        &[1000],
    ));
    assert_eq!(
        a.cache_validity.status,
        Status::ValidComplete,
        "{:?}",
        codes(&a)
    );
}

#[test]
fn counter_reset_is_invalid() {
    let mut jsonl = scrapes_jsonl(&vllm_series(AGG, 900.0, 100.0), 1000.0);
    // A restart mid-window: the counters read lower than at the window start.
    jsonl.push_str(&format!(
        "{{\"endpoint_url\":\"{AGG}\",\"timestamp_ns\":{},\"metrics\":{{\"vllm:prompt_tokens_by_source\":[{{\"labels\":{{\"source\":\"local_cache_hit\"}},\"value\":5}},{{\"labels\":{{\"source\":\"local_compute\"}},\"value\":5}}]}}}}\n",
        S + 1_000_000_000
    ));
    let a = account(&[
        ("server_metrics_export.jsonl", jsonl),
        ("launch.json", LAUNCH.to_string()),
        ("profile_export.jsonl", records(&[1000], &[])),
    ]);
    assert_eq!(a.cache_validity.status, Status::InvalidCounter);
    assert!(codes(&a).contains(&"counter_reset"));
}

#[test]
fn alias_collision_on_a_priced_counter_is_invalid() {
    let mut series = vllm_series(AGG, 900.0, 100.0);
    series.push(counter(
        AGG,
        "vllm:prompt_tokens_by_source_total",
        &[("source", "local_cache_hit")],
        900.0,
    ));
    let a = account(&valid_files(&series, LAUNCH, &[1000]));
    assert_eq!(a.cache_validity.status, Status::InvalidCounter);
    assert!(codes(&a).contains(&"alias_collision"));
    // Not double counted in the telemetry rate.
    assert!(approx(
        a.rates.gpu.expect("gpu").value.expect("a value"),
        0.9
    ));
}

#[test]
fn replicas_agree_once_and_disagree_invalid() {
    let launch =
        r#"{"disaggregated":false,"agg_endpoints":["localhost:8000"],"kv_offloading":"none"}"#;
    let agree = vec![
        counter(AGG, "sglang:prompt_tokens", &[], 1000.0),
        counter(
            AGG,
            "sglang:cached_tokens",
            &[("cache_source", "device"), ("tp_rank", "0")],
            800.0,
        ),
        counter(
            AGG,
            "sglang:cached_tokens",
            &[("cache_source", "device"), ("tp_rank", "1")],
            800.0,
        ),
    ];
    let a = account(&valid_files(&agree, launch, &[1000]));
    assert_eq!(
        a.cache_validity.status,
        Status::ValidComplete,
        "{:?}",
        codes(&a)
    );
    assert!(approx(
        a.rates.gpu.expect("gpu").value.expect("a value"),
        0.8
    ));

    let mut disagree = agree.clone();
    disagree[2].value = 700.0;
    let a = account(&valid_files(&disagree, launch, &[1000]));
    assert_eq!(a.cache_validity.status, Status::InvalidCounter);
    assert!(codes(&a).contains(&"replica_disagreement"));
}

#[test]
fn dp_pools_are_summed() {
    let launch =
        r#"{"disaggregated":false,"agg_endpoints":["localhost:8000"],"kv_offloading":"none"}"#;
    let series = vec![
        counter(AGG, "sglang:prompt_tokens", &[("dp_rank", "0")], 600.0),
        counter(AGG, "sglang:prompt_tokens", &[("dp_rank", "1")], 400.0),
        counter(
            AGG,
            "sglang:cached_tokens",
            &[("cache_source", "device"), ("dp_rank", "0")],
            500.0,
        ),
        counter(
            AGG,
            "sglang:cached_tokens",
            &[("cache_source", "device"), ("dp_rank", "1")],
            300.0,
        ),
    ];
    let a = account(&valid_files(&series, launch, &[1000]));
    assert!(approx(
        a.rates.gpu.expect("gpu").value.expect("a value"),
        0.8
    ));
    assert_eq!(
        a.cache_validity.status,
        Status::ValidComplete,
        "{:?}",
        codes(&a)
    );
}

#[test]
fn errors_in_profiling_fail_in_warmup_do_not() {
    let err = |phase: &str| {
        format!("{{\"metadata\":{{\"benchmark_phase\":\"{phase}\",\"request_start_ns\":{S},\"request_end_ns\":{S}}},\"metrics\":{{}},\"error\":{{\"code\":500,\"type\":\"HTTPStatusError\",\"message\":\"boom\"}}}}")
    };
    let series = vllm_series(AGG, 900.0, 100.0);
    let with = |line: String| {
        account(&[
            (
                "server_metrics_export.jsonl",
                scrapes_jsonl(&series, 1000.0),
            ),
            ("launch.json", LAUNCH.to_string()),
            ("profile_export.jsonl", records(&[1000], &[line])),
        ])
    };
    let a = with(err("warmup"));
    assert_eq!(
        a.cache_validity.status,
        Status::ValidComplete,
        "{:?}",
        codes(&a)
    );
    assert!(codes(&a).contains(&"warmup_errors_ignored"));
    let a = with(err("profiling"));
    assert_eq!(a.cache_validity.status, Status::RequestScopeUnresolved);
    assert!(codes(&a).contains(&"profiling_errors"));
    let cancelled = format!("{{\"metadata\":{{\"benchmark_phase\":\"profiling\",\"request_start_ns\":{S},\"request_end_ns\":{S},\"was_cancelled\":true}},\"metrics\":{{}},\"error\":{{\"code\":499,\"type\":\"RequestCancellationError\",\"message\":\"cancelled\"}}}}");
    let a = with(cancelled);
    assert!(codes(&a).contains(&"profiling_cancellations"));
}

#[test]
fn prompt_conservation() {
    let a = account(&valid_files(
        &vllm_series(AGG, 900.0, 100.0),
        LAUNCH,
        &[999],
    ));
    assert_eq!(a.cache_validity.status, Status::RequestScopeUnresolved);
    assert!(codes(&a).contains(&"prompt_not_conserved"));
    let tolerant = Policy {
        conservation_tolerance: 1.0,
        ..Policy::default()
    };
    let a = account_with(
        &valid_files(&vllm_series(AGG, 900.0, 100.0), LAUNCH, &[999]),
        &tolerant,
    );
    assert_eq!(
        a.cache_validity.status,
        Status::ValidComplete,
        "{:?}",
        codes(&a)
    );
    let a = account(&[
        (
            "server_metrics_export.jsonl",
            scrapes_jsonl(&vllm_series(AGG, 900.0, 100.0), 0.0),
        ),
        ("launch.json", LAUNCH.to_string()),
    ]);
    assert!(codes(&a).contains(&"no_request_records"));
}

#[test]
fn atom_admissions_must_cover_the_records() {
    let launch = r#"{"framework":"atom","disaggregated":false,"agg_endpoints":["localhost:8000"],"kv_offloading":"none"}"#;
    let series = |admissions: f64| {
        vec![
            counter(AGG, "atom:prefix_cache_full_tokens", &[], 1000.0),
            counter(AGG, "atom:prefix_cache_cached_tokens", &[], 800.0),
            counter(AGG, "atom:prefix_cache_requests", &[], admissions),
        ]
    };
    let a = account(&valid_files(&series(2.0), launch, &[500, 500]));
    assert_eq!(
        a.cache_validity.status,
        Status::ValidComplete,
        "{:?}",
        codes(&a)
    );
    // A preempted request re-admitted: 3 admissions for 2 requests.
    let a = account(&valid_files(&series(3.0), launch, &[500, 500]));
    assert!(codes(&a).contains(&"admissions_not_conserved"));
}

#[test]
fn offloading_with_uncounted_cpu_tier_is_counters_missing() {
    let launch = r#"{"framework":"trt","disaggregated":false,"agg_endpoints":["localhost:8000"],"kv_offloading":"cpu","kv_offload_backend":"native"}"#;
    let series = vec![
        counter(AGG, "trtllm_prompt_tokens", &[], 1000.0),
        counter(AGG, "trtllm_prompt_cached_tokens", &[], 800.0),
    ];
    let a = account(&valid_files(&series, launch, &[1000]));
    assert_eq!(a.cache_validity.status, Status::CountersMissing);
    assert!(codes(&a).contains(&"cpu_tier_uncounted"));
    assert_eq!(
        a.cache_validity.cpu_component,
        kvledger::account::CpuComponent::Missing
    );

    let mut tiered = series.clone();
    tiered.push(counter(
        AGG,
        "trtllm_prompt_cache_hit_tokens",
        &[("cache_level", "0"), ("cache_tier", "GPU")],
        700.0,
    ));
    tiered.push(counter(
        AGG,
        "trtllm_prompt_cache_hit_tokens",
        &[("cache_level", "1"), ("cache_tier", "HOST")],
        100.0,
    ));
    let a = account(&valid_files(&tiered, launch, &[1000]));
    assert_eq!(
        a.cache_validity.status,
        Status::ValidComplete,
        "{:?}",
        codes(&a)
    );
    assert!(approx(
        a.rates.cpu.expect("cpu").value.expect("a value"),
        0.1
    ));
    assert!(approx(
        a.rates.gpu.expect("gpu").value.expect("a value"),
        0.7
    ));

    let old = vec![
        gauge(AGG, "trtllm_kv_cache_hit_rate", &[], 0.9),
        counter(AGG, "trtllm_request_success", &[], 5.0),
    ];
    let a = account(&valid_files(&old, launch, &[1000]));
    assert_eq!(a.cache_validity.status, Status::CountersMissing);
    assert!(codes(&a).contains(&"token_counters_absent"));
}

#[test]
fn worker_missing_from_the_scrape() {
    let launch = r#"{"framework":"vllm","disaggregated":false,"agg_endpoints":["localhost:8000","localhost:8001"],"kv_offloading":"none"}"#;
    let a = account(&valid_files(
        &vllm_series(AGG, 900.0, 100.0),
        launch,
        &[1000],
    ));
    assert_eq!(a.cache_validity.status, Status::CountersMissing);
    assert!(codes(&a).contains(&"worker_missing"));
}

#[test]
fn roles_and_measurement() {
    // Two engine endpoints, no launch facts: unresolved.
    let mut two = vllm_series(AGG, 900.0, 100.0);
    two.extend(vllm_series("http://localhost:8001/metrics", 900.0, 100.0));
    let a = account(&[
        ("server_metrics_export.jsonl", scrapes_jsonl(&two, 0.0)),
        ("profile_export.jsonl", records(&[2000], &[])),
    ]);
    assert_eq!(a.cache_validity.status, Status::RolesUnresolved);
    assert_eq!(a.cache_validity.roles.unresolved.len(), 2);

    // Only a frontend: nothing measured.
    let fe = vec![counter(AGG, "dynamo_frontend_requests", &[], 5.0)];
    let a = account(&valid_files(&fe, r#"{"disaggregated":false}"#, &[1000]));
    assert_eq!(a.cache_validity.status, Status::NotMeasured);
    assert!(codes(&a).contains(&"no_engine_metrics"));

    // An engine kvledger has no adapter for.
    let a = account(&valid_files(
        &fe,
        r#"{"framework":"lmdeploy","disaggregated":false}"#,
        &[1000],
    ));
    assert!(codes(&a).contains(&"unsupported_engine"));

    // Only decode endpoints with engine metrics.
    let launch = r#"{"disaggregated":true,"decode_endpoints":["localhost:8000"]}"#;
    let a = account(&valid_files(
        &vllm_series(AGG, 900.0, 100.0),
        launch,
        &[1000],
    ));
    assert_eq!(a.cache_validity.status, Status::NotMeasured);
}

#[test]
fn decode_is_excluded_and_label_keys_are_data() {
    let p = "http://10.0.0.1:8000/metrics";
    let d = "http://10.0.0.2:8000/metrics";
    let launch = r#"{"framework":"vllm","disaggregated":true,"prefill_endpoints":["10.0.0.1:8000"],"decode_endpoints":["10.0.0.2:8000"],"kv_offloading":"none"}"#;
    let mut series = vec![
        counter(
            p,
            "vllm:prompt_tokens_by_source",
            &[
                ("source", "local_cache_hit"),
                ("__proto__", "x"),
                ("constructor", "y"),
            ],
            900.0,
        ),
        counter(
            p,
            "vllm:prompt_tokens_by_source",
            &[
                ("source", "local_compute"),
                ("__proto__", "x"),
                ("constructor", "y"),
            ],
            100.0,
        ),
    ];
    // Decode re-counts the prompt, receiving the KV as external transfer.
    series.push(counter(
        d,
        "vllm:prompt_tokens_by_source",
        &[("source", "external_kv_transfer")],
        1000.0,
    ));
    let a = account(&valid_files(&series, launch, &[1000]));
    assert_eq!(
        a.cache_validity.status,
        Status::ValidComplete,
        "{:?}",
        codes(&a)
    );
    assert!(approx(
        a.rates.overall.expect("overall").value.expect("a value"),
        0.9
    ));
    assert!(codes(&a).contains(&"decode_excluded"));
    assert!(a.counters.contains_key("decode"));
    assert_eq!(a.legacy.total_prompt_tokens, Some(1000));
}

#[test]
fn nan_counter_is_invalid_nan_gauge_is_not() {
    let mut series = vllm_series(AGG, 900.0, 100.0);
    series.push(gauge(AGG, "vllm:kv_cache_usage_perc", &[], f64::NAN));
    let files = valid_files(&series, LAUNCH, &[1000]);
    // JSON has no NaN literal: AIPerf writes null for it, which the reader takes as NaN.
    let files: Vec<(&str, String)> = files
        .into_iter()
        .map(|(n, t)| (n, t.replace("NaN", "null")))
        .collect();
    let a = account(&files);
    assert_eq!(
        a.cache_validity.status,
        Status::ValidComplete,
        "{:?}",
        codes(&a)
    );
    assert_eq!(a.kv_cache.endpoints[0].usage_max, None);
}

#[test]
fn timeslices_straddle_and_warmup_totals() {
    // Schema 1.1: window [S, S+10s), ten 1 s slices of 1000 prompt / 900 hits each; the
    // first slice also holds 400 prompt / 100 hits of warmup mass.
    let sec = 1_000_000_000u64;
    let slices = |first: f64, rest: f64| -> String {
        (0..10)
            .map(|i| {
                let t = if i == 0 { first } else { rest };
                format!(
                    "{{\"start_ns\":{},\"end_ns\":{},\"total\":{t},\"rate\":{t}}}",
                    S + i * sec,
                    S + (i + 1) * sec
                )
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    let wslices = |total: f64| -> String {
        (0..5)
            .map(|i| {
                format!(
                    "{{\"start_ns\":{},\"end_ns\":{},\"total\":{total},\"rate\":{total}}}",
                    S - (5 - i) * sec,
                    S - (4 - i) * sec
                )
            })
            .collect::<Vec<_>>()
            .join(",")
    };
    let export = |proof: bool| -> String {
        let fam = |phase_first: f64, rest: f64, src: &str| {
            format!("{{\"endpoint_url\":\"{AGG}\",\"labels\":{{\"source\":\"{src}\"}},\"stats\":{{\"total\":{}}},\"timeslices\":[{}]}}", phase_first + 9.0 * rest, slices(phase_first, rest))
        };
        let wfam = |total: f64, per: f64, src: &str| {
            format!("{{\"endpoint_url\":\"{AGG}\",\"labels\":{{\"source\":\"{src}\"}},\"stats\":{{\"total\":{total}}},\"timeslices\":[{}]}}", wslices(per))
        };
        let warmup = if proof {
            format!(
                ",\"warmup_metrics\":{{\"vllm:prompt_tokens_by_source\":{{\"type\":\"counter\",\"description\":\"\",\"series\":[{},{}]}}}}",
                wfam(5.0 * 60.0 + 100.0, 60.0, "local_cache_hit"),
                wfam(5.0 * 40.0 + 300.0, 40.0, "local_compute")
            )
        } else {
            String::new()
        };
        format!(
            "{{\"schema_version\":\"1.1\",\"summary\":{{\"phase_time_ranges\":{{\"warmup\":{{\"start_ns\":{},\"end_ns\":{S}}},\"profiling\":{{\"start_ns\":{S},\"end_ns\":{}}}}}}},\"metrics_phase\":\"profiling\",\"metrics\":{{\"vllm:prompt_tokens_by_source\":{{\"type\":\"counter\",\"description\":\"\",\"series\":[{},{}]}}}}{warmup}}}",
            S - 5 * sec,
            S + 10 * sec,
            fam(1000.0, 900.0, "local_cache_hit"),
            fam(500.0, 100.0, "local_compute"),
        )
    };
    let recs = records(&[10_000], &[]);
    let recs = recs.replace(
        &format!("\"request_end_ns\":{E}"),
        &format!("\"request_end_ns\":{}", S + 10 * sec),
    );
    let run = |proof: bool| {
        account(&[
            ("server_metrics_export.json", export(proof)),
            ("launch.json", LAUNCH.to_string()),
            ("profile_export.jsonl", recs.clone()),
        ])
    };
    let without = run(false);
    let o = without.rates.overall.expect("overall");
    assert!(o.lo <= 0.9 && 0.9 <= o.hi, "{o:?}");
    assert!(without.cache_validity.window.straddles > 0);
    // AIPerf may end a phase's total at the endpoint's last update, after the phase end, so a
    // warmup total is no proof unless phase totals are trusted: the bound stays as wide.
    let with = run(true);
    let p = with.rates.overall.expect("overall");
    assert!(p.lo <= 0.9 && 0.9 <= p.hi, "{p:?}");
    assert_eq!(p.width(), o.width());
    // With the phase totals trusted, the rate is their ratio: (1000+8100)/(1500+9000).
    let trusting = Policy {
        trust_phase_totals: true,
        ..Policy::default()
    };
    let t = account_with(
        &[
            ("server_metrics_export.json", export(false)),
            ("launch.json", LAUNCH.to_string()),
            ("profile_export.jsonl", recs.clone()),
        ],
        &trusting,
    );
    let r = t.rates.overall.expect("overall");
    assert_eq!(r.lo, r.hi);
    assert!(codes(&t).iter().all(|c| *c != "increase_unbounded"));
}
