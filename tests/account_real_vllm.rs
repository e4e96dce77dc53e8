//! The shared real vLLM points (CSV-only evidence): the counters' telemetry values (the CSV's
//! totals) give the upstream processor's by-source rates to 1e-5, token totals and the KV pool
//! match, and the status is what the contract decides for CSV-only evidence: `stats.total`
//! bounds nothing without `endpoint_info`, so the window increase is unbounded →
//! WINDOW_UNRESOLVED. No prompt token is surely in the window, so the rates have no value and
//! the legacy rate keys are null (contract r2, section 4): the upstream numbers are telemetry.

use kvledger::account::{account_run, Policy, ReasonCode, Status};
use kvledger::read::{read_run, InputFile, RunOptions};
use serde_json::Value;
use std::path::Path;

fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(rel),
    )
    .expect(rel)
}

const LAUNCH: &[u8] = br#"{"framework": "vllm", "disaggregated": false, "kv_offloading": "none"}"#;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn real_vllm_points_match_upstream_by_source_values() {
    for conc in [1, 4, 8] {
        let csv = fixture(&format!("csv/conc{conc}_kvnone.server_metrics_export.csv"));
        let summary = fixture(&format!(
            "profile/inferencex-mi355x-conc{conc}/profile_export_aiperf.json"
        ));
        let expected: Value = serde_json::from_slice(&fixture(&format!(
            "inferencex-vllm/conc{conc}_kvnone.processor_output_agg.json"
        )))
        .expect("json");
        let sm = &expected["server_metrics"];
        // Only conc1 kept its profile_export.jsonl upstream: it gives the window.
        let records =
            (conc == 1).then(|| fixture("profile/inferencex-mi355x-conc1/profile_export.jsonl"));
        let mut inputs = vec![
            InputFile::bytes("server_metrics_export.csv", &csv),
            InputFile::bytes("profile_export_aiperf.json", &summary),
            InputFile::bytes("launch.json", LAUNCH),
        ];
        if let Some(r) = &records {
            inputs.push(InputFile::bytes("profile_export.jsonl", r));
        }
        let run = read_run(&inputs, &RunOptions::default()).expect("run");
        let a = account_run(&run, &Policy::default());

        let unified = &a.counters["unified"];
        let prompt = unified.prompt.expect("prompt").value;
        let gpu = unified.hit_gpu.expect("hit_gpu").value / prompt;
        let overall = gpu
            + unified.hit_cpu.map_or(0.0, |c| c.value) / prompt
            + unified.hit_external.map_or(0.0, |x| x.value) / prompt;
        for r in [a.rates.gpu, a.rates.overall] {
            let r = r.expect("rate");
            assert_eq!((r.value, r.lo, r.hi), (None, 0.0, 1.0), "conc{conc}");
        }
        let exp_gpu = sm["cache"]["gpu_cache_hit_rate"].as_f64().expect("gpu");
        let exp_overall = sm["cache"]["overall_cache_hit_rate"]
            .as_f64()
            .expect("overall");
        assert!(
            close(gpu, exp_gpu, 1e-5),
            "conc{conc}: gpu {gpu} vs {exp_gpu}"
        );
        assert!(
            close(overall, exp_overall, 1e-5),
            "conc{conc}: overall {overall} vs {exp_overall}"
        );
        assert_eq!(a.legacy.server_gpu_cache_hit_rate, None, "conc{conc}");
        assert_eq!(a.legacy.server_external_cache_hit_rate, None, "conc{conc}");
        assert_eq!(a.legacy.server_cpu_cache_hit_rate, None, "conc{conc}");
        assert_eq!(
            a.legacy.total_prompt_tokens,
            sm["tokens"]["prompt_total"].as_u64(),
            "conc{conc}"
        );
        assert_eq!(
            a.legacy.total_generation_tokens,
            sm["tokens"]["generation_total"].as_u64(),
            "conc{conc}"
        );
        let theoretical = expected["request_metrics"]["cache"]["theoretical_cache_hit_rate"]
            .as_f64()
            .expect("theoretical");
        assert!(close(
            a.theoretical_hit_rate.expect("theo"),
            theoretical,
            1e-5
        ));
        // The KV pool from vllm:cache_config_info (num_gpu_blocks × block_size) equals the
        // upstream value, which came from the server log.
        assert_eq!(
            a.legacy.kv_cache_pool_tokens,
            sm["kv_cache"]["gpu_total_tokens"].as_u64(),
            "conc{conc}"
        );
        let usage_max = a.kv_cache.endpoints[0].usage_max.expect("usage");
        assert!(close(
            usage_max,
            sm["kv_cache"]["gpu_usage_pct"].as_f64().expect("u"),
            1e-4
        ));

        let v = &a.cache_validity;
        assert_eq!(v.status, Status::WindowUnresolved, "conc{conc}");
        assert!(!v.pricing_eligible);
        let has = |c: ReasonCode| v.reasons.iter().any(|r| r.code == c);
        if conc == 1 {
            // The window is known from the records; the CSV's totals bound nothing inside it.
            assert!(has(ReasonCode::IncreaseUnbounded) && has(ReasonCode::RateTooWide));
            assert!(has(ReasonCode::NoPromptInWindow));
            assert!(!has(ReasonCode::WindowMissing));
            assert_eq!(v.request_scope.profiling_records, 195);
            assert_eq!(v.request_scope.client_prompt_tokens, Some(18_921_176));
        } else {
            // No per-request export and the summary's timestamps are lossy floats: no window.
            assert!(has(ReasonCode::WindowMissing) && has(ReasonCode::NoRequestRecords));
            // Every failed check is listed, not only the first (contract r2, section 6).
            assert!(has(ReasonCode::IncreaseUnbounded) && has(ReasonCode::RateTooWide));
        }
        assert_eq!(
            v.cpu_component,
            kvledger::account::CpuComponent::NotOffloaded
        );
        assert_eq!(v.roles.unified.len(), 1);
    }
}
