//! Integration tests of the server-metrics JSON reader against the copied AIPerf samples
//! (see `tests/fixtures/server-json/ORIGIN.md`) and hand-made edge cases.

use kvledger::error::ErrorCode;
use kvledger::model::{Family, MetricType, Series, ServerMetricsExport, Stats};
use kvledger::read::server_json::read_server_metrics_json;
use kvledger::read::FamilyFilter;
use kvledger::ReadError;
use std::fmt::Write as _;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/server-json");

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DIR}/{name}")).expect("fixture exists")
}

fn read_bytes(bytes: &[u8], filter: &FamilyFilter) -> Result<ServerMetricsExport, ReadError> {
    read_server_metrics_json("test.json", bytes, filter)
}

fn read_all(s: &str) -> Result<ServerMetricsExport, ReadError> {
    read_bytes(s.as_bytes(), &FamilyFilter::all())
}

fn family<'a>(families: &'a [Family], name: &str) -> &'a Family {
    families
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("family {name} missing"))
}

fn bucket_keys(s: &Series) -> Vec<&str> {
    s.buckets
        .as_ref()
        .expect("buckets")
        .iter()
        .map(|b| b.le.as_str())
        .collect()
}

fn counter_total(s: &Series) -> Option<f64> {
    match &s.stats {
        Stats::Counter(c) => c.total.get(),
        other => panic!("not a counter: {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Samples

#[test]
fn doc_vllm_1_endpoint_timeslices() {
    let e = read_bytes(
        &fixture("vllm-1-endpoint-timeslices.server_metrics_export.json"),
        &FamilyFilter::all(),
    )
    .expect("reads");
    assert_eq!(e.schema_version.as_deref(), Some("1.0"));
    assert_eq!(e.aiperf_version.as_deref(), Some("0.3.0"));
    assert_eq!(
        e.benchmark_id.as_deref(),
        Some("2900a136-3c1a-4520-adaa-5719822b729b")
    );
    assert_eq!(e.metrics_phase, None);
    assert!(e.warmup_metrics.is_empty());
    assert_eq!(e.skipped_families, 0);
    let names: Vec<&str> = e.metrics.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "vllm:e2e_request_latency_seconds",
            "vllm:kv_cache_usage_perc",
            "vllm:request_success"
        ]
    );
    assert_eq!(
        e.summary.start_time.as_deref(),
        Some("2025-12-15T02:04:23.028529")
    );
    let info = &e.summary.endpoint_info["http://localhost:8000/metrics"];
    assert_eq!(info.first_fetch_ns, Some(1765793061967310848));
    assert_eq!(info.last_fetch_ns, Some(1765793114960054143));
    assert_eq!(info.total_fetches, Some(157));
    assert_eq!(info.median_update_interval_ms, Some(333.48));
    assert_eq!(e.summary.phase_time_ranges.profiling, None);

    let rs = family(&e.metrics, "vllm:request_success");
    assert_eq!(rs.metric_type, MetricType::Counter);
    assert_eq!(rs.unit.as_deref(), Some("requests"));
    let s = &rs.series[0];
    assert_eq!(counter_total(s), Some(19.0));
    assert_eq!(s.labels.get("finished_reason").unwrap(), "length");
    assert_eq!(s.labels.get("model_name").unwrap(), "Qwen/Qwen3-0.6B");
    assert_eq!(s.timeslices.len(), 2);
    assert_eq!(s.timeslices[1].start_ns, 1765793073028529452);
    assert_eq!(s.timeslices[1].total, Some(9.0));
    assert!(s.timeslices.iter().all(|t| t.is_complete));

    let h = &family(&e.metrics, "vllm:e2e_request_latency_seconds").series[0];
    assert_eq!(
        bucket_keys(h),
        ["0.3", "0.5", "1.0", "2.5", "5.0", "10.0", "15.0", "20.0", "30.0", "+Inf"]
    );
    assert_eq!(
        h.buckets.as_ref().and_then(|b| b.last()).map(|b| b.count),
        Some(19.0)
    );
    let tb = h.timeslices[0].buckets.as_ref().expect("slice buckets");
    assert_eq!(tb.len(), 9);
    assert_eq!(tb.last().map(|b| b.le.as_str()), Some("+Inf"));
    match &h.stats {
        Stats::Histogram(hs) => {
            assert_eq!(hs.count.get(), Some(19.0));
            assert_eq!(hs.p99_estimate.get(), Some(31.77));
        }
        other => panic!("{other:?}"),
    }
    let g = &family(&e.metrics, "vllm:kv_cache_usage_perc").series[0];
    assert!(matches!(&g.stats, Stats::Gauge(gs) if gs.p5.get() == Some(0.178)));
    assert_eq!(g.timeslices[0].max, Some(0.191));
}

#[test]
fn doc_vllm_3_endpoint_minimal() {
    let e = read_bytes(
        &fixture("vllm-3-endpoint-minimal.server_metrics_export.json"),
        &FamilyFilter::all(),
    )
    .expect("reads");
    assert_eq!(e.metrics.len(), 3);
    assert_eq!(e.summary.endpoints_configured.len(), 3);
    assert_eq!(
        e.summary.endpoint_info["http://localhost:10000/metrics"].first_fetch_ns,
        Some(1765529006843416914)
    );
    assert_eq!(
        e.summary.endpoint_info["http://localhost:10001/metrics"].last_update_ns,
        Some(1765529029554057293)
    );
    let rs = family(&e.metrics, "vllm:request_success");
    let urls: Vec<&str> = rs.series.iter().map(|s| &*s.endpoint_url).collect();
    assert_eq!(
        urls,
        [
            "http://localhost:10000/metrics",
            "http://localhost:10001/metrics",
            "http://localhost:10002/metrics"
        ]
    );
    assert!(rs.series.iter().all(|s| counter_total(s) == Some(50.0)));
    assert!(rs.series.iter().all(|s| s.timeslices.is_empty()));
    let h = family(&e.metrics, "vllm:e2e_request_latency_seconds");
    assert_eq!(bucket_keys(&h.series[1]), ["0.005", "0.05", "0.1", "+Inf"]);
    assert_eq!(h.series[1].buckets.as_ref().map(|b| b[1].count), Some(42.0));
}

/// The per-type doc examples are bare series; each is wrapped (textually, so bucket order is
/// untouched) in a family of the type its name says, with `type` after `series`.
#[test]
fn doc_series_shapes_by_type() {
    let text = String::from_utf8(fixture("series-shapes-by-type.json")).expect("utf8");
    let mut doc = String::new();
    let mut current_type = String::new();
    for line in text.lines() {
        if let Some(name) = line
            .strip_prefix("  \"")
            .and_then(|l| l.strip_suffix("\": {"))
        {
            current_type = name.split('_').next().expect("prefix").to_string();
            writeln!(doc, "  \"{name}\": {{\"series\": [{{").expect("w");
        } else if line == "  }," || line == "  }" {
            let comma = if line.ends_with(',') { "," } else { "" };
            writeln!(
                doc,
                "  }}], \"description\": \"\", \"type\": \"{current_type}\"}}{comma}"
            )
            .expect("w");
        } else {
            doc.push_str(line);
            doc.push('\n');
        }
    }
    let doc = format!("{{\"metrics\": {doc}}}");
    let e = read_all(&doc).expect("reads");
    assert_eq!(e.metrics.len(), 6);

    let g = &family(&e.metrics, "gauge_constant").series[0];
    assert_eq!(g.labels.get("dynamo_component").unwrap(), "prefill");
    assert!(
        matches!(&g.stats, Stats::Gauge(s) if s.p50.get() == Some(1024.0) && s.std.get() == Some(0.0))
    );

    let c = &family(&e.metrics, "counter_with_timeslices").series[0];
    assert_eq!(counter_total(c), Some(318092.0));
    assert_eq!(c.timeslices[0].start_ns, 1765411635103733481);
    assert_eq!(c.timeslices[1].rate, Some(37066.5));
    let idle = &family(&e.metrics, "counter_no_activity").series[0];
    assert!(
        matches!(&idle.stats, Stats::Counter(s) if s.total.get() == Some(0.0) && s.rate_avg.get().is_none())
    );

    let h = &family(&e.metrics, "histogram_with_timeslices").series[0];
    assert_eq!(
        bucket_keys(h),
        ["0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"]
    );
    assert_eq!(h.timeslices.len(), 2);
    assert_eq!(h.timeslices[1].count, Some(12.0));
    let empty = &family(&e.metrics, "histogram_no_observations").series[0];
    match &empty.stats {
        Stats::Histogram(s) => {
            assert_eq!(s.count.get(), Some(0.0));
            assert_eq!(s.sum.get(), None);
            assert_eq!(s.avg.get(), None);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn real_aiperf_080_mock_smoke_subset() {
    let bytes = fixture("smoke-100k-conc.server_metrics_export.SUBSET.json");
    let e = read_bytes(&bytes, &FamilyFilter::all()).expect("reads");
    assert_eq!(e.schema_version.as_deref(), Some("1.0"));
    assert_eq!(e.aiperf_version.as_deref(), Some("0.8.0"));
    assert_eq!(e.metrics.len(), 62);
    assert_eq!(e.skipped_families, 0);
    assert!(e.metrics.windows(2).all(|w| w[0].name <= w[1].name));
    assert_eq!(e.summary.endpoints_configured.len(), 9);
    assert_eq!(e.summary.endpoints_successful.len(), 8);
    assert_eq!(e.summary.endpoint_info.len(), 8);
    assert_eq!(
        e.summary.endpoint_info["http://192.168.199.67:3100/metrics"].first_fetch_ns,
        Some(1777613361931417695)
    );
    let decode =
        &e.summary.endpoint_info["http://192.168.202.118:8000/dynamo_component/decode/metrics"];
    assert_eq!(decode.median_update_interval_ms, None);
    assert_eq!(decode.unique_updates, Some(1));

    // Counters come without `_total`.
    assert!(e.metrics.iter().any(|f| f.name == "vllm:prompt_tokens"));
    assert!(!e
        .metrics
        .iter()
        .any(|f| f.name.ends_with("prompt_tokens_total")));
    let alloc = &family(&e.metrics, "go_memstats_alloc_bytes").series[0];
    assert_eq!(counter_total(alloc), Some(389440.0));
    assert!(alloc.labels.is_empty());
    assert!(
        family(&e.metrics, "cortex_distributor_ingester_clients").series[0]
            .labels
            .is_empty()
    );
    let pauses = &family(&e.metrics, "go_gc_pauses_seconds_total").series[0];
    let keys = bucket_keys(pauses);
    assert_eq!(keys.first(), Some(&"-5e-324"));
    assert_eq!(keys.last(), Some(&"+Inf"));
    assert_eq!(keys[1], "9.999999999999999e-10");
    let dyn_req = family(&e.metrics, "dynamo_component_requests");
    assert_eq!(dyn_req.series.len(), 2);
    assert_eq!(
        dyn_req.series[1].labels.get("dynamo_endpoint").unwrap(),
        "generate"
    );

    // Alias spelling in the filter finds the exported name.
    let f = FamilyFilter::only(["vllm:prompt_tokens_total"]);
    let e = read_bytes(&bytes, &f).expect("reads");
    assert_eq!(e.metrics.len(), 1);
    assert_eq!(e.metrics[0].name, "vllm:prompt_tokens");
    assert_eq!(e.skipped_families, 61);
    assert_eq!(e.summary.endpoint_info.len(), 8);
}

#[test]
fn handmade_schema_1_1_keeps_phases_apart() {
    let bytes = fixture("handmade-schema-1.1.server_metrics_export.json");
    let e = read_bytes(&bytes, &FamilyFilter::all()).expect("reads");
    assert_eq!(e.schema_version.as_deref(), Some("1.1"));
    assert_eq!(e.metrics_phase.as_deref(), Some("profiling"));
    assert_eq!(e.metrics.len(), 3);
    assert_eq!(e.warmup_metrics.len(), 2);
    let ranges = e.summary.phase_time_ranges;
    let p = ranges.profiling.expect("profiling range");
    let w = ranges.warmup.expect("warmup range");
    assert_eq!(
        (p.start_ns, p.end_ns),
        (1765529006843416914, 1765529015343416915)
    );
    assert_eq!(
        (w.start_ns, w.end_ns),
        (1765529000843416914, 1765529006843416913)
    );

    let prof = &family(&e.metrics, "vllm:prompt_tokens").series[0];
    let warm = &family(&e.warmup_metrics, "vllm:prompt_tokens").series[0];
    assert_eq!(counter_total(prof), Some(81920.0));
    assert_eq!(counter_total(warm), Some(4096.0));
    assert!(matches!(&prof.stats, Stats::Counter(c) if c.rate_avg.get().is_none()));
    assert_eq!(prof.timeslices.len(), 2);
    assert!(prof.timeslices[0].is_complete);
    assert!(!prof.timeslices[1].is_complete);
    assert_eq!(prof.timeslices[1].end_ns, 1765529015343416915);
    assert!(!warm.timeslices[1].is_complete);
    assert_eq!(warm.timeslices[1].end_ns, 1765529006843416913);
    assert!(
        warm.timeslices.last().map(|t| t.end_ns) <= prof.timeslices.first().map(|t| t.start_ns)
    );

    let g_prof = &family(&e.metrics, "vllm:kv_cache_usage_perc").series[0];
    let g_warm = &family(&e.warmup_metrics, "vllm:kv_cache_usage_perc").series[0];
    assert!(matches!(&g_prof.stats, Stats::Gauge(g) if g.avg.get() == Some(0.42)));
    assert!(
        matches!(&g_warm.stats, Stats::Gauge(g) if g.avg.get() == Some(0.05) && g.p50.get().is_none())
    );

    let h = &family(&e.metrics, "vllm:time_to_first_token_seconds").series[0];
    assert_eq!(bucket_keys(h).last(), Some(&"+Inf"));
    assert_eq!(bucket_keys(h)[0], "0.001");
    assert!(!h.timeslices[1].is_complete);
    assert_eq!(
        h.timeslices[1]
            .buckets
            .as_ref()
            .and_then(|b| b.last())
            .map(|b| (b.le.as_str(), b.count)),
        Some(("+Inf", 16.0))
    );

    let phases: Vec<&str> = e.families().map(|(p, _)| p).collect();
    assert_eq!(
        phases,
        ["profiling", "profiling", "profiling", "warmup", "warmup"]
    );

    // The filter applies to both maps; each skipped entry counts.
    let f = FamilyFilter::only(["vllm:prompt_tokens_total"]);
    let e = read_bytes(&bytes, &f).expect("reads");
    assert_eq!(e.metrics.len(), 1);
    assert_eq!(e.warmup_metrics.len(), 1);
    assert_eq!(e.skipped_families, 3);
}

// ---------------------------------------------------------------------------------------------
// Shape tolerance

#[test]
fn field_order_unknown_fields_and_nulls() {
    let doc = r#"{
      "future_top_level": {"anything": [1, 2, {"x": null}]},
      "metrics": {
        "b_gauge": {
          "series": [
            {"stats": {"max": 3, "avg": 2.5, "shiny_new_stat": 7}, "labels": null,
             "endpoint_url": "http://e/metrics", "extra": true,
             "timeslices": [{"avg": 1, "end_ns": 1765529006843416915, "start_ns": 1765529006843416914,
                             "is_complete": null, "new_field": "x"}]}
          ],
          "unit": null,
          "description": null,
          "type": "gauge",
          "new_family_field": {"deep": [1]}
        },
        "a_hist": {"type": "histogram", "description": "h", "series": [
          {"endpoint_url": "u", "stats": null, "buckets": null, "timeslices": null},
          {"endpoint_url": "u", "stats": {"count": 0}}
        ]}
      },
      "summary": {"start_time": null, "endpoint_info": {"u": {"first_fetch_ns": null, "future": 1}},
                  "phase_time_ranges": {"warmup": null}, "new_summary_field": 1},
      "schema_version": "1.1",
      "input_config": {"huge": [[[[]]]]}
    }"#;
    let e = read_all(doc).expect("reads");
    assert_eq!(e.schema_version.as_deref(), Some("1.1"));
    let names: Vec<&str> = e.metrics.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["a_hist", "b_gauge"], "sorted by name");
    let g = family(&e.metrics, "b_gauge");
    assert_eq!(g.metric_type, MetricType::Gauge);
    assert_eq!(g.description, "");
    assert_eq!(g.unit, None);
    let s = &g.series[0];
    assert!(s.labels.is_empty());
    assert!(
        matches!(&s.stats, Stats::Gauge(st) if st.avg.get() == Some(2.5) && st.max.get() == Some(3.0) && st.min.get().is_none())
    );
    assert!(s.timeslices[0].is_complete, "null is_complete = complete");
    assert_eq!(s.timeslices[0].start_ns, 1765529006843416914);
    let h = family(&e.metrics, "a_hist");
    assert!(matches!(&h.series[0].stats, Stats::Histogram(st) if st.count.get().is_none()));
    assert_eq!(h.series[0].buckets, None);
    assert!(h.series[0].timeslices.is_empty());
    assert!(matches!(&h.series[1].stats, Stats::Histogram(st) if st.count.get() == Some(0.0)));
    assert_eq!(e.summary.start_time, None);
    assert_eq!(e.summary.endpoint_info["u"].first_fetch_ns, None);
    assert_eq!(e.summary.phase_time_ranges.warmup, None);

    // The same with those fields simply omitted reads the same.
    let omitted = r#"{"metrics": {"b_gauge": {"type": "gauge", "series": [
        {"endpoint_url": "http://e/metrics", "stats": {"max": 3, "avg": 2.5},
         "timeslices": [{"start_ns": 1765529006843416914, "end_ns": 1765529006843416915, "avg": 1}]}]}}}"#;
    let o = read_all(omitted).expect("reads");
    assert_eq!(o.metrics[0], *g);
}

#[test]
fn label_keys_are_plain_data_and_duplicates_are_kept() {
    let doc = r#"{"metrics": {"m": {"type": "counter", "description": "", "series": [
        {"endpoint_url": "u", "labels": {"__proto__": "p", "constructor": "c", "le": "0.5"}, "stats": {"total": 1}},
        {"endpoint_url": "u", "labels": {"__proto__": "p", "constructor": "c", "le": "0.5"}, "stats": {"total": 2}}
    ]}}}"#;
    let e = read_all(doc).expect("reads");
    let s = &e.metrics[0].series;
    assert_eq!(s.len(), 2, "duplicate identity kept as-is");
    assert_eq!(s[0].labels.get("__proto__").unwrap(), "p");
    assert_eq!(s[0].labels.get("constructor").unwrap(), "c");
    assert_eq!(
        (counter_total(&s[0]), counter_total(&s[1])),
        (Some(1.0), Some(2.0))
    );
}

// ---------------------------------------------------------------------------------------------
// Streaming filter

#[test]
fn filter_skips_thousands_of_families() {
    let mut doc = String::from("{\"schema_version\": \"1.0\", \"metrics\": {");
    for i in 0..3000 {
        write!(
            doc,
            "\"other_family_{i:04}\": {{\"type\": \"gauge\", \"description\": \"x\", \"series\": ["
        )
        .expect("w");
        for j in 0..20 {
            if j > 0 {
                doc.push(',');
            }
            write!(
                doc,
                "{{\"endpoint_url\": \"http://h{j}/metrics\", \"labels\": {{\"k\": \"{j}\"}}, \"stats\": {{\"avg\": {i}.5, \"p99\": 1e3}}, \"timeslices\": [{{\"start_ns\": 1765529006843416914, \"end_ns\": 1765529007843416914, \"avg\": 1}}]}}"
            )
            .expect("w");
        }
        doc.push_str("]},");
        if i == 1500 {
            doc.push_str("\"vllm:prompt_tokens\": {\"type\": \"counter\", \"description\": \"p\", \"series\": [{\"endpoint_url\": \"u\", \"stats\": {\"total\": 123456789.0}}]},");
        }
    }
    doc.pop();
    doc.push_str("}}");
    let f = FamilyFilter::only(["vllm:prompt_tokens_total"]);
    let e = read_bytes(doc.as_bytes(), &f).expect("reads");
    assert_eq!(e.metrics.len(), 1);
    assert_eq!(e.skipped_families, 3000);
    assert_eq!(counter_total(&e.metrics[0].series[0]), Some(123456789.0));

    let everything = read_bytes(doc.as_bytes(), &FamilyFilter::all()).expect("reads");
    assert_eq!(everything.metrics.len(), 3001);
    assert_eq!(everything.skipped_families, 0);
}

/// A reader that hands out one byte per call, like a slow pipe.
struct Trickle<'a>(&'a [u8]);

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match (self.0.split_first(), buf.first_mut()) {
            (Some((b, rest)), Some(slot)) => {
                *slot = *b;
                self.0 = rest;
                Ok(1)
            }
            _ => Ok(0),
        }
    }
}

#[test]
fn reads_from_a_trickling_reader() {
    let bytes = fixture("handmade-schema-1.1.server_metrics_export.json");
    let a = read_bytes(&bytes, &FamilyFilter::all()).expect("reads");
    let b = read_server_metrics_json("t", Trickle(&bytes), &FamilyFilter::all()).expect("reads");
    assert_eq!(a, b);
}

// ---------------------------------------------------------------------------------------------
// Errors

#[test]
fn syntax_error_has_line_and_column() {
    let err = read_all("{\n  \"metrics\": {\n    \"m\": {,}\n  }\n}").expect_err("syntax");
    assert_eq!(err.code, ErrorCode::JsonSyntax);
    assert_eq!(err.position.line, Some(3));
    assert!(err.position.column.is_some());
    assert_eq!(err.file, "test.json");
}

#[test]
fn float_ns_is_a_shape_error_with_json_path() {
    let doc = r#"{"metrics": {"vllm:x": {"type": "counter", "description": "", "series": [
        {"endpoint_url": "u", "stats": {}, "timeslices": [
            {"start_ns": 1765529006843416914, "end_ns": 1765529007843416914},
            {"start_ns": 1765529007843416914.0, "end_ns": 1765529008843416914}]}]}}}"#;
    let err = read_all(doc).expect_err("float ns");
    assert_eq!(err.code, ErrorCode::JsonShape);
    assert_eq!(
        err.position.json_path.as_deref(),
        Some("metrics.vllm:x.series[0].timeslices[1].start_ns")
    );
    assert!(err.position.line.is_some() && err.position.column.is_some());

    // Warmup errors say so in their path; a missing required ns is a shape error too.
    let doc = r#"{"warmup_metrics": {"m": {"type": "gauge", "series": [
        {"endpoint_url": "u", "timeslices": [{"end_ns": 5}]}]}}}"#;
    let err = read_all(doc).expect_err("missing start_ns");
    assert_eq!(err.code, ErrorCode::JsonShape);
    assert_eq!(
        err.position.json_path.as_deref(),
        Some("warmup_metrics.m.series[0].timeslices[0]")
    );
    let err = read_all(
        r#"{"summary": {"phase_time_ranges": {"warmup": {"start_ns": -3, "end_ns": 1}}}}"#,
    )
    .expect_err("negative");
    assert_eq!(err.code, ErrorCode::JsonShape);
    assert_eq!(
        err.position.json_path.as_deref(),
        Some("summary.phase_time_ranges.warmup.start_ns")
    );
}

#[test]
fn other_shape_errors() {
    for (doc, path) in [
        ("[]", None),
        ("null", None),
        (r#"{"metrics": []}"#, Some("metrics")),
        (
            r#"{"metrics": {"m": {"description": "", "series": []}}}"#,
            Some("metrics.m"),
        ),
        (
            r#"{"metrics": {"m": {"type": "gauge", "series": [{"stats": {}}]}}}"#,
            Some("metrics.m.series[0]"),
        ),
        (
            r#"{"metrics": {"m": {"type": "histogram", "series": [{"endpoint_url": "u", "buckets": {"1": "x"}}]}}}"#,
            Some("metrics.m.series[0].buckets.1"),
        ),
        (
            r#"{"metrics": {"m": {"type": "gauge", "series": [{"endpoint_url": "u", "labels": {"a": 1}}]}}}"#,
            Some("metrics.m.series[0].labels.a"),
        ),
        (
            r#"{"metrics": {"m": {"type": "counter", "series": [{"endpoint_url": "u", "stats": {"total": "1"}}]}}}"#,
            Some("metrics.m.series[0].stats.total"),
        ),
        (r#"{"schema_version": 1.1}"#, Some("schema_version")),
    ] {
        let err = read_all(doc).expect_err(doc);
        assert_eq!(err.code, ErrorCode::JsonShape, "{doc}: {err}");
        assert_eq!(err.position.json_path.as_deref(), path, "{doc}: {err}");
    }
}

#[test]
fn empty_input() {
    for doc in ["", "   \n\r\n\t"] {
        let err = read_all(doc).expect_err("empty");
        assert_eq!(err.code, ErrorCode::EmptyInput, "{doc:?}");
    }
}

#[test]
fn trailing_garbage() {
    for doc in ["{} {}", "{\"metrics\": {}}\nx", "{}]"] {
        let err = read_all(doc).expect_err(doc);
        assert_eq!(err.code, ErrorCode::JsonSyntax, "{doc}: {err}");
        assert!(err.position.line.is_some());
    }
    // Trailing whitespace is fine.
    assert!(read_all("{}\n\n  ").is_ok());
}

struct Failing;

impl std::io::Read for Failing {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        Err(std::io::Error::other("disk on fire"))
    }
}

#[test]
fn reader_failure_is_io() {
    let err = read_server_metrics_json("f", Failing, &FamilyFilter::all()).expect_err("io");
    assert_eq!(err.code, ErrorCode::Io);
}

#[test]
fn every_truncation_is_an_error_not_a_panic() {
    for name in [
        "handmade-schema-1.1.server_metrics_export.json",
        "vllm-1-endpoint-timeslices.server_metrics_export.json",
    ] {
        let bytes = fixture(name);
        let end = bytes
            .iter()
            .rposition(|b| *b == b'}')
            .expect("closing brace");
        for cut in 0..=end {
            let prefix = bytes.get(..cut).expect("in range");
            let r = read_bytes(prefix, &FamilyFilter::all());
            let err = r.expect_err("truncated input must fail");
            let expected = if prefix.iter().all(|b| b.is_ascii_whitespace()) {
                ErrorCode::EmptyInput
            } else {
                ErrorCode::JsonSyntax
            };
            assert_eq!(err.code, expected, "{name} cut at {cut}: {err}");
        }
        assert!(read_bytes(&bytes, &FamilyFilter::all()).is_ok());
    }
}
