use kvledger::model::{FamilyView, MetricType, SampleValue, Scrape};
use kvledger::read::prometheus_text::parse_prom_float;
use kvledger::read::{read_prometheus_text, CaptureMeta, FamilyFilter};
use kvledger::{ErrorCode, ReadError};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/prometheus");

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{DIR}/{name}")).expect("fixture")
}

fn read_bytes(name: &str, bytes: &[u8], filter: &FamilyFilter) -> Result<Scrape, ReadError> {
    read_prometheus_text(name, bytes, &CaptureMeta::default(), filter)
}

fn read_fixture(name: &str) -> Scrape {
    read_bytes(name, &fixture(name), &FamilyFilter::all()).expect("parses")
}

fn text(t: &str) -> Result<Scrape, ReadError> {
    read_bytes("t.prom", t.as_bytes(), &FamilyFilter::all())
}

fn family<'a>(s: &'a Scrape, name: &str) -> FamilyView<'a> {
    s.families()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("family {name} missing"))
}

fn has_family(s: &Scrape, name: &str) -> bool {
    s.families().any(|f| f.name == name)
}

fn scalar(v: &SampleValue) -> f64 {
    match v {
        SampleValue::Scalar { value } => *value,
        other => panic!("not a scalar: {other:?}"),
    }
}

/// Sum of the scalar samples of `name` whose labels include all of `want`.
fn sum_where(s: &Scrape, name: &str, want: &[(&str, &str)]) -> f64 {
    family(s, name)
        .samples
        .iter()
        .filter(|x| want.iter().all(|(k, v)| x.labels.get(k) == Some(*v)))
        .map(|x| scalar(x.value))
        .sum()
}

#[test]
fn family_counts_match_prometheus_client_grouping() {
    for (f, n) in [
        ("sglang-nightly-20260921-live-excerpt.prom", 32),
        ("gloria-results_tau_c64.metrics_catalog.prom", 47),
        ("prathmesh-agg_vllm_tp4-conc16.before.prom", 49),
        ("prathmesh-agg_vllm_tp4-conc16.after.prom", 49),
        ("prathmesh-agg_sglang_tp4-conc16.before.prom", 64),
        ("prathmesh-agg_sglang_tp4-conc16.after.prom", 66),
    ] {
        let s = read_fixture(f);
        assert_eq!(s.families().len(), n, "{f}");
        // Sorted by name, no `_total` counter names, no `_created`, no summaries.
        let names: Vec<&str> = s.families().map(|f| f.name).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted, "{f}");
        for fam in s.families() {
            assert!(!fam.name.ends_with("_created"), "{f}: {}", fam.name);
            if fam.metric_type == Some(MetricType::Counter) {
                assert!(!fam.name.ends_with("_total"), "{f}: {}", fam.name);
            }
        }
        assert_eq!(s.endpoint_url, format!("capture:{f}"));
        assert_eq!(s.timestamp_ns, None);
        assert_eq!(s.phase, None);
    }
}

#[test]
fn vllm_invariants() {
    for (f, prompt, compute, hit) in [
        (
            "prathmesh-agg_vllm_tp4-conc16.before.prom",
            22_912_105.0,
            1_179_513.0,
            21_732_592.0,
        ),
        (
            "prathmesh-agg_vllm_tp4-conc16.after.prom",
            34_068_033.0,
            1_193_665.0,
            32_874_368.0,
        ),
    ] {
        let s = read_fixture(f);
        let p = sum_where(&s, "vllm:prompt_tokens", &[]);
        assert_eq!(p, prompt, "{f}");
        let by = |src| sum_where(&s, "vllm:prompt_tokens_by_source", &[("source", src)]);
        assert_eq!(by("local_compute"), compute);
        assert_eq!(by("local_cache_hit"), hit);
        assert_eq!(by("external_kv_transfer"), 0.0);
        assert_eq!(
            p,
            by("local_compute") + by("local_cache_hit") + by("external_kv_transfer")
        );
        assert_eq!(sum_where(&s, "vllm:prefix_cache_queries", &[]), p);
        assert_eq!(sum_where(&s, "vllm:prefix_cache_hits", &[]), hit);
        assert_eq!(sum_where(&s, "vllm:prompt_tokens_cached", &[]), hit);
        let fam = family(&s, "vllm:prompt_tokens");
        assert_eq!(fam.metric_type, Some(MetricType::Counter));
        assert!(fam.help.is_some());
        assert!(!has_family(&s, "vllm:prompt_tokens_total"));
        assert!(!has_family(&s, "vllm:prompt_tokens_created"));
        assert!(
            !has_family(&s, "http_request_size_bytes"),
            "summary dropped"
        );
        // Info gauge kept with its labels.
        let info = family(&s, "vllm:cache_config_info");
        assert_eq!(info.metric_type, Some(MetricType::Gauge));
        assert_eq!(
            info.samples
                .get(0)
                .unwrap()
                .labels
                .get("num_gpu_blocks")
                .unwrap(),
            "444200"
        );
        // A histogram named `..._total` keeps the suffix.
        if has_family(&s, "vllm:iteration_tokens_total") {
            assert_eq!(
                family(&s, "vllm:iteration_tokens_total").metric_type,
                Some(MetricType::Histogram)
            );
        }
    }
}

#[test]
fn sglang_invariants() {
    for (f, prompt, device) in [
        (
            "prathmesh-agg_sglang_tp4-conc16.before.prom",
            22_912_111.0,
            21_641_152.0,
        ),
        (
            "prathmesh-agg_sglang_tp4-conc16.after.prom",
            34_068_039.0,
            32_739_264.0,
        ),
    ] {
        let s = read_fixture(f);
        assert_eq!(sum_where(&s, "sglang:prompt_tokens", &[]), prompt, "{f}");
        assert_eq!(
            sum_where(&s, "sglang:cached_tokens", &[("cache_source", "device")]),
            device,
            "{f}"
        );
        // The stale gauge reads 0 on every rank.
        assert!(family(&s, "sglang:cache_hit_rate")
            .samples
            .iter()
            .all(|x| scalar(x.value) == 0.0));
    }
}

#[test]
fn sglang_excerpt_specials() {
    let s = read_fixture("sglang-nightly-20260921-live-excerpt.prom");
    // Exponent notation.
    assert_eq!(
        sum_where(&s, "sglang:cached_tokens", &[("cache_source", "device")]),
        3_797_696.0
    );
    assert_eq!(
        sum_where(
            &s,
            "sglang:prefill_effective_tokens",
            &[("mode", "device_hit")]
        ),
        3_829_888.0
    );
    // NaN gauge kept.
    let nan = family(&s, "sglang:fwd_occupancy");
    assert!(scalar(nan.samples.get(0).unwrap().value).is_nan());
    // A gauge with an `le` label: `le` stays a label, 11 series.
    let g = family(&s, "sglang:routing_key_running_req_count");
    assert_eq!(g.metric_type, Some(MetricType::Gauge));
    assert_eq!(g.samples.len(), 11);
    assert!(g
        .samples
        .iter()
        .all(|x| x.labels.contains_key("le") && x.labels.contains_key("gt")));
    assert_eq!(g.samples.get(10).unwrap().labels.get("le").unwrap(), "+Inf");
    // A histogram: buckets as printed, in file order, with sum and count.
    let h = family(&s, "sglang:queue_time_seconds");
    assert_eq!(h.metric_type, Some(MetricType::Histogram));
    assert_eq!(h.samples.len(), 1);
    assert!(!h.samples.get(0).unwrap().labels.contains_key("le"));
    match h.samples.get(0).unwrap().value {
        SampleValue::Histogram(h) => {
            let buckets: Vec<(&str, f64)> = h.buckets().collect();
            assert_eq!(buckets.len(), 41);
            assert_eq!(buckets[0].0, "0.0");
            assert_eq!(buckets[1], ("0.001", 182.0));
            assert_eq!(buckets[40].0, "+Inf");
            assert_eq!(parse_prom_float(buckets[40].0), Some(f64::INFINITY));
            assert_eq!(h.sum, Some(0.14237947700166842));
            assert_eq!(h.count, Some(214.0));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn gloria_zero_traffic() {
    let s = read_fixture("gloria-results_tau_c64.metrics_catalog.prom");
    for src in ["local_compute", "local_cache_hit", "external_kv_transfer"] {
        assert_eq!(
            sum_where(&s, "vllm:prompt_tokens_by_source", &[("source", src)]),
            0.0
        );
    }
    let info = family(&s, "vllm:cache_config_info");
    assert_eq!(
        info.samples
            .get(0)
            .unwrap()
            .labels
            .get("enable_prefix_caching")
            .unwrap(),
        "True"
    );
    assert_eq!(
        sum_where(&s, "vllm:engine_sleep_state", &[("sleep_state", "awake")]),
        1.0
    );
}

#[test]
fn capture_meta_is_used() {
    let meta = CaptureMeta {
        endpoint_url: Some("http://10.0.0.5:8000/metrics".into()),
        timestamp_ns: Some(1_783_588_508_032_991_372),
    };
    let s = read_prometheus_text(
        "x.prom",
        &b"m 1 1700000000000\n"[..],
        &meta,
        &FamilyFilter::all(),
    )
    .unwrap();
    assert_eq!(s.endpoint_url, "http://10.0.0.5:8000/metrics");
    assert_eq!(s.timestamp_ns, Some(1_783_588_508_032_991_372));
    // A path-like file name: base name only.
    let s = read_bytes("dir/sub/a.prom", b"m 1\n", &FamilyFilter::all()).unwrap();
    assert_eq!(s.endpoint_url, "capture:a.prom");
}

#[test]
fn edge_cases() {
    let t = "# HELP m A \\\\ back\\nslash é\n# TYPE m gauge\n\
             m{a=\"q\\\"uote\",b=\"back\\\\slash\",c=\"new\\nline\",} 1.5e3\n";
    let s = text(t).unwrap();
    let f = family(&s, "m");
    assert_eq!(f.help, Some("A \\ back\nslash é"));
    let l = &f.samples.get(0).unwrap().labels;
    assert_eq!(l.get("a").unwrap(), "q\"uote");
    assert_eq!(l.get("b").unwrap(), "back\\slash");
    assert_eq!(l.get("c").unwrap(), "new\nline");
    assert_eq!(scalar(f.samples.get(0).unwrap().value), 1500.0);

    // Special values, whitespace tolerance, CRLF.
    let s = text("a +Inf\r\nb -Inf\r\n c   NaN  \r\nd{ x = \"1\" , y=\"2\" }\t7\r\n").unwrap();
    assert_eq!(
        scalar(family(&s, "a").samples.get(0).unwrap().value),
        f64::INFINITY
    );
    assert_eq!(
        scalar(family(&s, "b").samples.get(0).unwrap().value),
        f64::NEG_INFINITY
    );
    assert!(scalar(family(&s, "c").samples.get(0).unwrap().value).is_nan());
    assert_eq!(
        family(&s, "d")
            .samples
            .get(0)
            .unwrap()
            .labels
            .get("y")
            .unwrap(),
        "2"
    );
    // Untyped families keep their full names, type Unknown.
    let s = text("x_total 3\nx_total{a=\"1\"} 4\n").unwrap();
    let f = family(&s, "x_total");
    assert_eq!(f.metric_type, Some(MetricType::Unknown));
    assert_eq!(f.samples.len(), 2);

    // Counter TYPE without `_total` keeps its name; samples may carry `_total`.
    let s = text("# TYPE dynamo_frontend_requests counter\ndynamo_frontend_requests_total 5\n")
        .unwrap();
    assert_eq!(
        scalar(
            family(&s, "dynamo_frontend_requests")
                .samples
                .get(0)
                .unwrap()
                .value
        ),
        5.0
    );

    // Summary dropped, `_created` dropped, uptime dropped.
    let s = text(
        "# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 2\ns_count 3\ns_created 4\n\
         # TYPE c_total counter\nc_total 1\nc_created 9\n# TYPE g_created gauge\ng_created 1\n\
         # TYPE proc_uptime_seconds gauge\nproc_uptime_seconds 5\n",
    )
    .unwrap();
    let names: Vec<&str> = s.families().map(|f| f.name).collect();
    assert_eq!(names, ["c"]);

    // Duplicate label set: last wins.
    let s = text("# TYPE g gauge\ng{a=\"1\"} 1\ng{a=\"2\"} 2\ng{a=\"1\"} 3\n").unwrap();
    let f = family(&s, "g");
    assert_eq!(f.samples.len(), 2);
    assert_eq!(scalar(f.samples.get(0).unwrap().value), 3.0);

    // Timestamps: all samples timed → max × 10^6; some untimed → None.
    let s = text("a 1 1700000000000\nb 2 1700000000500\n").unwrap();
    assert_eq!(s.timestamp_ns, Some(1_700_000_000_500_000_000));
    let s = text("a 1 1700000000000\nb 2\n").unwrap();
    assert_eq!(s.timestamp_ns, None);
    let s = text("a 1 -5\n").unwrap();
    assert_eq!(
        s.timestamp_ns, None,
        "negative timestamps cannot be epoch ns"
    );
    let s = text("a 1 9223372036854775807\n").unwrap();
    assert_eq!(s.timestamp_ns, None, "overflow is not a time");

    // Histogram grouped by labels minus `le`; keys as printed.
    let s = text(
        "# TYPE h histogram\nh_bucket{x=\"a\",le=\"1\"} 1\nh_bucket{le=\"+Inf\",x=\"a\"} 2\n\
         h_sum{x=\"a\"} 3.5\nh_count{x=\"a\"} 2\nh_created{x=\"a\"} 1e9\nh_bucket{x=\"b\",le=\"1.0\"} 0\n",
    )
    .unwrap();
    let f = family(&s, "h");
    assert_eq!(f.samples.len(), 2);
    match f.samples.get(0).unwrap().value {
        SampleValue::Histogram(h) => {
            let les: Vec<&str> = h.buckets().map(|b| b.0).collect();
            assert_eq!(les, ["1", "+Inf"]);
            assert_eq!((h.sum, h.count), (Some(3.5), Some(2.0)));
        }
        other => panic!("{other:?}"),
    }
    // Empty input: no families.
    assert!(text("").unwrap().groups.is_empty());
    assert!(text("# just a comment\n\n").unwrap().groups.is_empty());
}

#[test]
fn float_parsing() {
    assert_eq!(parse_prom_float("+Inf"), Some(f64::INFINITY));
    assert_eq!(parse_prom_float("-Inf"), Some(f64::NEG_INFINITY));
    assert_eq!(parse_prom_float("Inf"), Some(f64::INFINITY));
    assert!(parse_prom_float("NaN").unwrap().is_nan());
    assert_eq!(
        parse_prom_float("1.7809599766007705e+09"),
        Some(1.7809599766007705e9)
    );
    assert_eq!(parse_prom_float("1e-3"), Some(0.001));
    assert_eq!(parse_prom_float("0.005"), Some(0.005));
    assert_eq!(parse_prom_float("12"), Some(12.0));
    assert_eq!(parse_prom_float("x"), None);
    assert_eq!(parse_prom_float("1.2.3"), None);
}

#[test]
fn filter_and_aliases() {
    let bytes = fixture("prathmesh-agg_vllm_tp4-conc16.after.prom");
    let f = FamilyFilter::only(["vllm:prompt_tokens_total", "vllm:gpu_prefix_cache_hits"]);
    let s = read_bytes("a.prom", &bytes, &f).unwrap();
    let names: Vec<&str> = s.families().map(|f| f.name).collect();
    assert_eq!(names, ["vllm:prefix_cache_hits", "vllm:prompt_tokens"]);
    let p = FamilyFilter::only(["none"]).with_prefixes(["sglang:"]);
    let s = read_bytes("a.prom", &bytes, &p).unwrap();
    assert!(s.groups.is_empty());
    let s = read_bytes(
        "b.prom",
        &fixture("prathmesh-agg_sglang_tp4-conc16.after.prom"),
        &p,
    )
    .unwrap();
    assert!(!s.groups.is_empty());
    assert!(s.families().all(|f| f.name.starts_with("sglang:")));
}

fn err(t: &str) -> ReadError {
    text(t).unwrap_err()
}

#[test]
fn errors_with_line_and_column() {
    let cases: [(&str, u32, u32); 10] = [
        ("ok 1\nm{a=\"1\" 2\n", 2, 9),         // missing `,` or `}`
        ("m{a=\"unterminated} 1\n", 1, 5),     // unterminated quote
        ("m{1a=\"x\"} 1\n", 1, 3),             // bad label name
        ("m{a \"x\"} 1\n", 1, 5),              // missing `=`
        ("m{a=x} 1\n", 1, 5),                  // value not quoted
        ("m abc\n", 1, 3),                     // bad value
        ("m\n", 1, 2),                         // missing value
        ("m 1 2 3\n", 1, 7),                   // trailing text
        ("m 1 1.5\n", 1, 5),                   // bad timestamp
        ("# TYPE m histogramx\nm 1\n", 1, 10), // unknown TYPE
    ];
    for (t, line, col) in cases {
        let e = err(t);
        assert_eq!(e.code, ErrorCode::PromSyntax, "{t:?}: {e}");
        assert_eq!(e.position.line, Some(line), "{t:?}: {e}");
        assert_eq!(e.position.column, Some(col), "{t:?}: {e}");
        assert!(!e.message.is_empty());
        assert_eq!(e.file, "t.prom");
    }
    // Columns count characters, not bytes.
    let e = err("m{a=\"é\" b=\"x\"} 1\n");
    assert_eq!(e.position.column, Some(9));
    // Not UTF-8.
    let e = read_bytes("t.prom", b"m{a=\"\xff\"} 1\n", &FamilyFilter::all()).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotUtf8);
    // Syntax errors do not depend on the filter.
    let e = read_bytes("t.prom", b"m{a=\"x} 1\n", &FamilyFilter::only(["other"])).unwrap_err();
    assert_eq!(e.code, ErrorCode::PromSyntax);
    // Histogram bucket without `le`.
    let e = err("# TYPE h histogram\nh_bucket{x=\"a\"} 1\n");
    assert_eq!(e.position.line, Some(2));
}

#[test]
fn truncation_sweep_never_panics() {
    let bytes = fixture("sglang-nightly-20260921-live-excerpt.prom");
    let text = String::from_utf8(bytes.clone()).unwrap();
    // Every byte prefix (including ones that split multi-byte chars in crafted input).
    for cut in (0..bytes.len()).step_by(7) {
        let _ = read_bytes("t.prom", &bytes[..cut], &FamilyFilter::all());
    }
    // Every line prefix is valid up to a cut inside a sample.
    let lines: Vec<&str> = text.lines().collect();
    for n in 0..lines.len() {
        let mut prefix = lines[..n].join("\n");
        prefix.push('\n');
        assert!(
            read_bytes("t.prom", prefix.as_bytes(), &FamilyFilter::all()).is_ok(),
            "{n}"
        );
    }
    let multi = "# HELP m ü😀\nm{a=\"é😀ü\"} 1\n".as_bytes();
    for cut in 0..multi.len() {
        let _ = read_bytes("t.prom", &multi[..cut], &FamilyFilter::all());
    }
}
