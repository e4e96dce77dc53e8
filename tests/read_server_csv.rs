//! AIPerf `server_metrics_export.csv` reader: real files, hand-made errors, truncation sweep.

use kvledger::account::{account_run, families_read, Policy};
use kvledger::model::server_metrics::{CsvLean, CsvSeries};
use kvledger::model::{Family, MetricType, ServerMetricsExport, ServerMetricsFormat, Stats};
use kvledger::read::push::PushReader;
use kvledger::read::server_csv::{read_server_metrics_csv, ServerCsvReader};
use kvledger::read::{read_run, FamilyFilter, InputFile, RunOptions};
use kvledger::{ErrorCode, ReadError};
use std::path::PathBuf;
mod common;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/csv");

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIX}/{name}")).expect("fixture")
}

fn conc(n: u32) -> Vec<u8> {
    fixture(&format!("conc{n}_kvnone.server_metrics_export.csv"))
}

fn read(bytes: &[u8]) -> Result<ServerMetricsExport, ReadError> {
    read_server_metrics_csv("t.csv", bytes, &FamilyFilter::all())
}

fn read_str(s: &str) -> Result<ServerMetricsExport, ReadError> {
    read(s.as_bytes())
}

fn family<'a>(e: &'a ServerMetricsExport, name: &str) -> &'a Family {
    e.metrics
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no family {name}"))
}

fn counter_total(s: &Stats) -> Option<f64> {
    match s {
        Stats::Counter(c) => c.total.get(),
        _ => panic!("not a counter: {s:?}"),
    }
}

#[test]
fn real_files_shape() {
    for (n, port) in [(1, 8889), (4, 8890), (8, 8894)] {
        let e = read(&conc(n)).unwrap();
        assert_eq!(e.format, ServerMetricsFormat::Csv);
        assert_eq!(e.schema_version.as_deref(), Some("1.0"));
        assert_eq!(e.aiperf_version.as_deref(), Some("0.8.0"));
        assert!(e.benchmark_id.is_some());
        assert!(e.warmup_metrics.is_empty());
        assert_eq!(e.summary, Default::default());
        assert_eq!(e.skipped_families, 0);
        // 10 gauge + 20 counter + 17 histogram families, plus 2 info metrics (as gauges).
        assert_eq!(e.metrics.len(), 49, "conc{n}");
        let count = |t: MetricType| e.metrics.iter().filter(|f| f.metric_type == t).count();
        assert_eq!(count(MetricType::Gauge), 12);
        assert_eq!(count(MetricType::Counter), 20);
        assert_eq!(count(MetricType::Histogram), 17);
        let series: usize = e.metrics.iter().map(|f| f.series.len()).sum();
        assert_eq!(series, 62 + 2, "conc{n}");
        // Sorted by name.
        let names: Vec<_> = e.metrics.iter().map(|f| f.name.clone()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        for f in &e.metrics {
            for s in &f.series {
                assert_eq!(&*s.endpoint_url, format!("http://localhost:{port}/metrics"));
                assert!(s.timeslices.is_empty());
                assert_eq!(s.buckets.is_some(), f.metric_type == MetricType::Histogram);
            }
        }
    }
    assert_eq!(
        read(&conc(1)).unwrap().benchmark_id.as_deref(),
        Some("6800941e-5f4b-4368-8520-474ee02c8a7f")
    );
}

#[test]
fn prompt_tokens_by_source_per_label() {
    let expect = [
        (1, [0.0, 17690047.0, 1439448.0]),
        (4, [0.0, 41833335.0, 2793196.0]),
        (8, [0.0, 72485084.0, 4208216.0]),
    ];
    for (n, totals) in expect {
        let e = read(&conc(n)).unwrap();
        let f = family(&e, "vllm:prompt_tokens_by_source");
        assert_eq!(f.metric_type, MetricType::Counter);
        assert_eq!(f.description, "Number of prompt tokens by source.");
        assert_eq!(f.unit, None);
        assert_eq!(f.series.len(), 3);
        let sources: Vec<_> = f
            .series
            .iter()
            .map(|s| s.labels.get("source").unwrap())
            .collect();
        assert_eq!(
            sources,
            ["external_kv_transfer", "local_cache_hit", "local_compute"]
        );
        for (s, t) in f.series.iter().zip(totals) {
            assert_eq!(counter_total(&s.stats), Some(t), "conc{n}");
            // Only the labels with a value in the row.
            let keys: Vec<_> = s.labels.keys().collect();
            assert_eq!(keys, ["engine", "model_name", "source"]);
            assert_eq!(s.labels.get("engine").unwrap(), "0");
        }
    }
    let e = read(&conc(1)).unwrap();
    let s = &family(&e, "vllm:prompt_tokens_by_source").series[1];
    let Stats::Counter(c) = &s.stats else {
        panic!()
    };
    assert_eq!(c.rate.get(), Some(4873.1159));
    assert_eq!(c.rate_avg.get(), Some(4873.2912));
    assert_eq!(c.rate_min.get(), Some(0.0));
    assert_eq!(c.rate_max.get(), Some(243355.0));
    assert_eq!(c.rate_std.get(), Some(24552.3101));
}

#[test]
fn gauge_values_and_quoted_description() {
    let e = read(&conc(1)).unwrap();
    let f = family(&e, "vllm:kv_cache_usage_perc");
    assert_eq!(f.metric_type, MetricType::Gauge);
    assert_eq!(f.unit.as_deref(), Some("ratio"));
    let Stats::Gauge(g) = &f.series[0].stats else {
        panic!()
    };
    assert_eq!(
        (g.avg.get(), g.min.get(), g.max.get()),
        (Some(0.0706), Some(0.0), Some(0.1378))
    );
    assert_eq!(g.p99.get(), Some(0.1365));
    // A quoted description with commas.
    let f = family(&e, "http_requests");
    assert_eq!(
        f.description,
        "Total number of requests by method, status and handler."
    );
    let l = &f.series[0].labels;
    assert_eq!(l.get("handler").unwrap(), "/v1/chat/completions");
    assert_eq!(l.get("method").unwrap(), "POST");
    assert_eq!(l.get("status").unwrap(), "2xx");
    // Label `le`-free gauge with three sleep states.
    let f = family(&e, "vllm:engine_sleep_state");
    let states: Vec<_> = f
        .series
        .iter()
        .map(|s| s.labels.get("sleep_state").unwrap())
        .collect();
    assert_eq!(states, ["awake", "discard_all", "weights_offloaded"]);
}

#[test]
fn histogram_buckets_in_order() {
    let e = read(&conc(1)).unwrap();
    let f = family(&e, "vllm:e2e_request_latency_seconds");
    assert_eq!(f.metric_type, MetricType::Histogram);
    assert_eq!(f.unit.as_deref(), Some("seconds"));
    let s = &f.series[0];
    let Stats::Histogram(h) = &s.stats else {
        panic!()
    };
    assert_eq!(h.count.get(), Some(195.0));
    assert_eq!(h.sum.get(), Some(4964.0747));
    assert_eq!(h.p99_estimate.get(), Some(187.3008));
    let b = s.buckets.as_ref().unwrap();
    let les: Vec<_> = b.iter().map(|b| b.le.as_str()).collect();
    assert_eq!(
        les,
        [
            "0.3", "0.5", "0.8", "1.0", "1.5", "2.0", "2.5", "5.0", "10.0", "15.0", "20.0", "30.0",
            "40.0", "50.0", "60.0", "120.0", "240.0", "480.0", "960.0", "1920.0", "7680.0", "+Inf"
        ]
    );
    let counts: Vec<_> = b.iter().map(|b| b.count).collect();
    assert_eq!(counts[0], 1.0);
    assert_eq!(counts[7], 65.0);
    assert_eq!(*counts.last().unwrap(), 195.0);

    let f = family(&e, "http_request_duration_seconds");
    let b = f.series[0].buckets.as_ref().unwrap();
    let got: Vec<_> = b.iter().map(|b| (b.le.as_str(), b.count)).collect();
    assert_eq!(
        got,
        [("0.1", 0.0), ("0.5", 3.0), ("1.0", 3.0), ("+Inf", 196.0)]
    );
    // The histogram named `…_total` keeps its name.
    assert_eq!(
        family(&e, "vllm:iteration_tokens_total").metric_type,
        MetricType::Histogram
    );
}

#[test]
fn info_section_becomes_gauges() {
    let e = read(&conc(1)).unwrap();
    let f = family(&e, "python_info");
    assert_eq!(f.metric_type, MetricType::Gauge);
    assert_eq!(f.description, "Python platform information");
    assert_eq!(f.series.len(), 1);
    let s = &f.series[0];
    assert_eq!(&*s.endpoint_url, "http://localhost:8889/metrics");
    let l: Vec<_> = s.labels.iter().collect();
    assert_eq!(
        l,
        [
            ("implementation", "CPython"),
            ("major", "3"),
            ("minor", "12"),
            ("patchlevel", "13"),
            ("version", "3.12.13")
        ]
    );
    let Stats::Gauge(g) = &s.stats else { panic!() };
    assert_eq!(
        (g.avg.get(), g.min.get(), g.max.get()),
        (Some(1.0), Some(1.0), Some(1.0))
    );
    let f = family(&e, "vllm:cache_config_info");
    assert_eq!(f.series.len(), 1);
    assert_eq!(f.series[0].labels.len(), 28);
    assert_eq!(f.series[0].labels.get("block_size").unwrap(), "1");
    assert_eq!(
        f.series[0].labels.get("user_specified_block_size").unwrap(),
        "True"
    );
}

#[test]
fn info_repeated_key_starts_new_series() {
    let csv = "Endpoint,Metric,Key,Value,Description\n\
               h:1,x_info,a,1,d\nh:1,x_info,b,2,d\nh:1,x_info,a,3,d\nh:2,x_info,a,9,d\n";
    let e = read_str(csv).unwrap();
    let f = family(&e, "x_info");
    assert_eq!(f.series.len(), 3);
    assert_eq!(f.series[0].labels.len(), 2);
    assert_eq!(f.series[1].labels.get("a").unwrap(), "3");
    assert_eq!(&*f.series[2].endpoint_url, "http://h:2/metrics");
}

/// A series of many keys (found through an index past 16, by a scan below) starts anew at
/// its first repeated key, whichever key repeats, on each endpoint apart.
#[test]
fn info_series_of_many_keys_start_anew_at_a_repeated_key() {
    for n in [3usize, 16, 17, 40] {
        for repeat in [0, n / 2, n - 1] {
            let mut csv = String::from("Endpoint,Metric,Key,Value,Description\n");
            for ep in ["h:1", "h:2"] {
                for k in 0..n {
                    csv.push_str(&format!("{ep},x_info,k{k},{k},d\n"));
                }
                csv.push_str(&format!("{ep},x_info,k{repeat},again,d\n"));
                csv.push_str(&format!("{ep},x_info,other,1,d\n"));
            }
            let e = read_str(&csv).unwrap();
            let f = family(&e, "x_info");
            let shape: Vec<(String, usize)> = f
                .series
                .iter()
                .map(|s| (s.endpoint_url.to_string(), s.labels.len()))
                .collect();
            let want = vec![
                ("http://h:1/metrics".to_string(), n),
                ("http://h:1/metrics".to_string(), 2),
                ("http://h:2/metrics".to_string(), n),
                ("http://h:2/metrics".to_string(), 2),
            ];
            assert_eq!(shape, want, "{n} keys, k{repeat} again");
            let again = format!("k{repeat}");
            assert_eq!(f.series[1].labels.get(&again).unwrap(), "again");
            assert_eq!(f.series[0].labels.get(&again).unwrap(), repeat.to_string());
        }
    }
}

#[test]
fn filter_with_alias_spellings() {
    let filter = FamilyFilter::only([
        "vllm:prompt_tokens_total",
        "vllm:gpu_prefix_cache_hits",
        "python_info",
    ]);
    let e = read_server_metrics_csv("t.csv", &conc(1)[..], &filter).unwrap();
    let names: Vec<_> = e.metrics.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "python_info",
            "vllm:prefix_cache_hits",
            "vllm:prompt_tokens"
        ]
    );
    assert_eq!(e.skipped_families, 49 - 3);
    assert_eq!(
        counter_total(&family(&e, "vllm:prompt_tokens").series[0].stats),
        Some(19129495.0)
    );
    let p = FamilyFilter::all().with_prefixes(["process_"]);
    let e = read_server_metrics_csv("t.csv", &conc(1)[..], &p).unwrap();
    assert!(e.metrics.iter().all(|f| f.name.starts_with("process_")));
    assert_eq!(e.metrics.len() as u32 + e.skipped_families, 49);
}

#[test]
fn endpoint_url_reconstruction() {
    let csv = "Endpoint,Type,Metric,Unit,total,rate,Description\n\
               10.0.0.1:30000/prefill,counter,c,,1,2,d\n\
               decode-0:8000,counter,c,,3,,d\n";
    let e = read_str(csv).unwrap();
    let f = family(&e, "c");
    assert_eq!(
        &*f.series[0].endpoint_url,
        "http://10.0.0.1:30000/prefill/metrics"
    );
    assert_eq!(&*f.series[1].endpoint_url, "http://decode-0:8000/metrics");
    let Stats::Counter(c) = &f.series[1].stats else {
        panic!()
    };
    assert_eq!(
        (c.total.get(), c.rate.get(), c.rate_avg.get()),
        (Some(3.0), None, None)
    );
    // No comment header: schema unknown, still read.
    assert_eq!(e.schema_version, None);
}

#[test]
fn columns_found_by_name_in_any_order() {
    let csv = "# schema_version: 1.0\n# benchmark_id: None\n\
               Endpoint,Metric,Type,Description,buckets,sum,count,zone,Unit\n\
               h:1,lat,histogram,\"a \"\"b\"\", c\",1=2;+Inf=5,7.5,5,eu,seconds\n";
    let e = read_str(csv).unwrap();
    assert_eq!(e.benchmark_id, None);
    let f = family(&e, "lat");
    assert_eq!(f.description, "a \"b\", c");
    assert_eq!(f.unit.as_deref(), Some("seconds"));
    let s = &f.series[0];
    assert_eq!(s.labels.get("zone").unwrap(), "eu");
    let Stats::Histogram(h) = &s.stats else {
        panic!()
    };
    assert_eq!(
        (h.sum.get(), h.count.get(), h.avg.get()),
        (Some(7.5), Some(5.0), None)
    );
    assert_eq!(s.buckets.as_ref().unwrap().len(), 2);
}

#[test]
fn unknown_type_rows_read_as_gauges() {
    let csv = "Endpoint,Type,Metric,Unit,avg,min,max,Description\nh:1,unknown,foo_total,,1,1,1,\n";
    let e = read_str(csv).unwrap();
    let f = family(&e, "foo_total");
    assert_eq!(f.metric_type, MetricType::Unknown);
    assert!(matches!(f.series[0].stats, Stats::Gauge(_)));
}

#[test]
fn crlf_and_lf_give_the_same_result() {
    let crlf = conc(4);
    let text = String::from_utf8(crlf.clone()).unwrap();
    assert!(text.contains("\r\n"));
    let lf = text.replace("\r\n", "\n");
    let all_crlf = lf.replace('\n', "\r\n");
    let a = read(&crlf).unwrap();
    assert_eq!(a, read_str(&lf).unwrap());
    assert_eq!(a, read_str(&all_crlf).unwrap());
}

#[test]
fn quoted_field_with_newline() {
    let csv = "Endpoint,Type,Metric,Unit,total,Description\r\nh:1,counter,c,,1,\"two\r\nlines, here\"\r\nh:1,counter,c,,2,x\r\n";
    let e = read_str(csv).unwrap();
    let f = family(&e, "c");
    assert_eq!(f.description, "two\r\nlines, here");
    assert_eq!(f.series.len(), 2);
    // An error after a multi-line row still names the right physical line.
    let bad = format!("{csv}h:1,counter,c,,zz,x\r\n");
    assert_eq!(read_str(&bad).unwrap_err().position.line, Some(5));
}

#[test]
fn custom_harness_csv_rejected() {
    for name in [
        "tp4_bs64_offloadoff.metrics_server_metrics.csv",
        "tp4_bs64_offloadon.metrics_server_metrics.csv",
    ] {
        let err = read(&fixture(name)).unwrap_err();
        assert_eq!(err.code, ErrorCode::CsvSyntax, "{name}");
        assert_eq!(err.position.line, Some(1), "{name}");
        assert!(
            err.message.contains("not an AIPerf server-metrics CSV"),
            "{}",
            err.message
        );
        assert!(err.message.contains("timestamp_sec"), "{}", err.message);
    }
}

fn err_of(csv: &str) -> ReadError {
    let e = read_str(csv).unwrap_err();
    assert_eq!(e.code, ErrorCode::CsvSyntax, "{e}");
    e
}

const HEAD: &str =
    "# AIPerf Server Metrics Export (CSV)\n# aiperf_version: 0.8.0\n# schema_version: 1.0\n#\n";

#[test]
fn error_data_row_before_header() {
    let e = err_of(&format!("{HEAD}h:1,gauge,g,,1,1,1,d\n"));
    assert_eq!(e.position.line, Some(5));
    assert!(
        e.message.contains("before any section header"),
        "{}",
        e.message
    );
    // A data row after the empty row that closed a section.
    let e = err_of(&format!(
        "{HEAD}Endpoint,Type,Metric,Unit,avg,Description\nh:1,gauge,g,,1,d\n\nh:1,gauge,g,,1,d\n"
    ));
    assert_eq!(e.position.line, Some(8));
}

#[test]
fn error_cell_count() {
    let e = err_of(&format!(
        "{HEAD}Endpoint,Type,Metric,Unit,avg,Description\nh:1,gauge,g,,1,d\nh:1,gauge,g,,1\n"
    ));
    assert_eq!(e.position.line, Some(7));
    assert!(e.message.contains("5 cells"), "{}", e.message);
    assert!(e.message.contains("line 5"), "{}", e.message);
}

#[test]
fn error_non_numeric_stat() {
    let e = err_of(&format!(
        "{HEAD}Endpoint,Type,Metric,Unit,total,rate,Description\nh:1,counter,c,,12x,1,d\n"
    ));
    assert_eq!(e.position.line, Some(6));
    assert!(e.message.contains("`total`"), "{}", e.message);
    let e = err_of(&format!(
        "{HEAD}Endpoint,Type,Metric,Unit,count,sum,Description,buckets\nh:1,histogram,h,,1,1,d,1=1;+Inf=x\n"
    ));
    assert_eq!(e.position.line, Some(6));
    assert!(e.message.contains("`buckets`"), "{}", e.message);
}

#[test]
fn error_unterminated_quote() {
    let e = err_of(&format!(
        "{HEAD}Endpoint,Type,Metric,Unit,avg,Description\nh:1,gauge,g,,1,\"open\nstill open\n"
    ));
    assert_eq!(e.position.line, Some(6));
    assert!(e.message.contains("unterminated quote"), "{}", e.message);
}

#[test]
fn error_not_aiperf() {
    let e = err_of("a,b,c\n1,2,3\n");
    assert_eq!(e.position.line, Some(1));
    assert!(e.message.contains("not an AIPerf"), "{}", e.message);
    let e = err_of("# just a comment\n");
    assert!(e.message.contains("not an AIPerf"), "{}", e.message);
    // Header problems.
    let e = err_of(&format!("{HEAD}Endpoint,Type,Unit,avg\n"));
    assert!(e.message.contains("`Metric`"), "{}", e.message);
    assert_eq!(e.position.line, Some(5));
    let e = err_of(&format!("{HEAD}Endpoint,Type,Metric,Unit,foo\n"));
    assert!(e.message.contains("statistic"), "{}", e.message);
    // Unknown type, wrong section kind, conflicting types.
    let e = err_of(&format!(
        "{HEAD}Endpoint,Type,Metric,Unit,avg,Description\nh:1,summary,g,,1,d\n"
    ));
    assert!(e.message.contains("`Type`"), "{}", e.message);
    let e = err_of(&format!(
        "{HEAD}Endpoint,Type,Metric,Unit,avg,Description\nh:1,counter,g,,1,d\n"
    ));
    assert_eq!(e.position.line, Some(6));
    let e = err_of(&format!(
        "{HEAD}Endpoint,Type,Metric,Unit,avg,Description\nh:1,gauge,g,,1,d\n\nEndpoint,Type,Metric,Unit,total,Description\nh:1,counter,g,,1,d\n"
    ));
    assert_eq!(e.position.line, Some(9));
}

#[test]
fn empty_and_not_utf8() {
    assert_eq!(read_str("").unwrap_err().code, ErrorCode::EmptyInput);
    let e = read(b"# aiperf_version: 1\nEndpoint,Type,Metric,avg\n\xff,gauge,g,1\n").unwrap_err();
    assert_eq!(e.code, ErrorCode::NotUtf8);
    assert_eq!(e.position.line, Some(3));
    // A header-only AIPerf file (no metrics) is valid and empty.
    let e = read_str(HEAD).unwrap();
    assert!(e.metrics.is_empty());
    // A byte-order mark before the comment header.
    let e = read_str(&format!("\u{feff}{HEAD}")).unwrap();
    assert_eq!(e.schema_version.as_deref(), Some("1.0"));
}

#[test]
fn truncation_sweep_never_panics() {
    for name in [
        "conc1_kvnone.server_metrics_export.csv",
        "conc8_kvnone.server_metrics_export.csv",
        "tp4_bs64_offloadoff.metrics_server_metrics.csv",
    ] {
        let bytes = fixture(name);
        let step = (bytes.len() / 700).max(1);
        let mut ok = 0;
        let mut err = 0;
        let mut cut = 0;
        while cut <= bytes.len() {
            match read(&bytes[..cut]) {
                Ok(_) => ok += 1,
                Err(_) => err += 1,
            }
            cut += step;
        }
        assert!(ok + err > 500, "{name}");
        if name.starts_with("conc") {
            assert!(ok > 0 && err > 0, "{name}: ok {ok} err {err}");
        } else {
            assert_eq!(ok, 0, "{name}");
        }
    }
    // Every byte offset across the header and the first rows, and every offset of the tail.
    let bytes = conc(1);
    for cut in (0..1500).chain(bytes.len() - 1500..=bytes.len()) {
        let _ = read(&bytes[..cut]);
    }
    // Random-ish byte corruption.
    for i in (0..bytes.len()).step_by(151) {
        let mut b = bytes.clone();
        b[i] = [b'"', b',', b'\n', 0xff, b'x'][i % 5];
        let _ = read(&b);
    }
}

// ---------------------------------------------------------------------------------------------
// The lean read (what `account` reads): the same checks, only what accounting needs kept.

/// Every CSV of tests/fixtures and examples/.
fn csv_files() -> Vec<PathBuf> {
    common::fixture_files()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect()
}

fn read_lean(bytes: &[u8]) -> Result<ServerMetricsExport, ReadError> {
    read_server_metrics_csv("t.csv", bytes, &FamilyFilter::all().lean())
}

/// Each series of a lean read: family, endpoint URL, labels and values (endpoint indices
/// depend on the order endpoints were first seen).
/// Values as bits, so that a NaN read equals itself.
type SeriesView = (u32, String, kvledger::model::Labels, [Option<u64>; 3]);

fn series_view(lean: &CsvLean) -> Vec<SeriesView> {
    lean.series
        .iter()
        .map(|s| {
            let values = [0, 1, 2].map(|i| s.value(i).map(f64::to_bits));
            (
                s.family,
                lean.url(s).to_string(),
                lean.labels(s).map(|l| (**l).clone()).unwrap_or_default(),
                values,
            )
        })
        .collect()
}

/// A lean read gives what a full read gives (its series made lean), or the same error.
fn assert_lean_matches_full(bytes: &[u8], what: &str) {
    match (read(bytes), read_lean(bytes)) {
        (Ok(full), Ok(lean)) => {
            let made_lean = CsvLean::of_families(&full.metrics);
            let got = lean.csv_lean.as_ref().map(series_view);
            assert!(got == Some(series_view(&made_lean)), "{what}");
            assert!(lean.metrics.iter().all(|f| f.series.is_empty()), "{what}");
            let bare = |e: &ServerMetricsExport| {
                let mut e = e.clone();
                e.csv_lean = None;
                for f in &mut e.metrics {
                    f.series.clear();
                }
                e
            };
            assert_eq!(bare(&full), bare(&lean), "{what}");
            assert!(full.csv_lean.is_none(), "{what}");
        }
        (Err(a), Err(b)) => assert_eq!(a, b, "{what}"),
        (a, b) => panic!(
            "{what}: full read {:?}, lean read {:?}",
            a.map(|_| "ok"),
            b.map(|_| "ok")
        ),
    }
}

#[test]
fn lean_read_of_every_fixture_matches_the_full_read() {
    let files = csv_files();
    assert!(files.len() >= 20, "{} CSV files", files.len());
    let mut lean_series = 0;
    for path in files {
        let bytes = std::fs::read(&path).expect("fixture");
        assert_lean_matches_full(&bytes, &path.display().to_string());
        if let Ok(e) = read_lean(&bytes) {
            lean_series += e.csv_lean.map_or(0, |l| l.series.len());
        }
    }
    assert!(lean_series > 500, "{lean_series}");
}

#[test]
fn lean_series_values_by_type() {
    let e = read_lean(&conc(1)).unwrap();
    let lean = e.csv_lean.as_ref().unwrap();
    let of = |name: &str| -> Vec<&CsvSeries> {
        let i = e.metrics.iter().position(|f| f.name == name).unwrap() as u32;
        lean.series.iter().filter(|s| s.family == i).collect()
    };
    let full = read(&conc(1)).unwrap();
    let by_source = of("vllm:prompt_tokens_by_source");
    let want: Vec<Option<f64>> = family(&full, "vllm:prompt_tokens_by_source")
        .series
        .iter()
        .map(|s| counter_total(&s.stats))
        .collect();
    let got: Vec<Option<f64>> = by_source
        .iter()
        .map(|s| s.value(CsvSeries::TOTAL))
        .collect();
    assert_eq!(got, want);
    assert!(by_source
        .iter()
        .all(|s| s.value(1).is_none() && s.value(2).is_none()));
    for s in &by_source {
        assert_eq!(lean.url(s), "http://localhost:8889/metrics");
        assert!(lean.labels(s).is_some_and(|l| l.contains_key("source")));
    }
    // The info series: one per endpoint and metric, value 1, labels from Key/Value.
    let info = of("vllm:cache_config_info");
    assert_eq!(info.len(), 1);
    assert_eq!(info[0].value(CsvSeries::AVG), Some(1.0));
    assert_eq!(info[0].value(CsvSeries::MAX), Some(1.0));
    assert!(lean.labels(info[0]).is_some_and(|l| !l.is_empty()));
}

/// Inputs a lean read must refuse exactly as a full read: truncations, byte flips, and cells
/// replaced by bad numbers, counts above 2^53 − 1, wrong types and quotes.
fn corruptions(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let step = (bytes.len() / 150).max(1);
    for cut in (0..bytes.len()).step_by(step) {
        out.push(bytes[..cut].to_vec());
    }
    for (n, i) in (0..bytes.len()).step_by(step + 13).enumerate() {
        let mut b = bytes.to_vec();
        b[i] = [b'"', b',', b'\n', 0xff, b'x', b' ', b'#', b'='][n % 8];
        out.push(b);
    }
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.split('\n').collect();
    let bad = [
        "abc",
        "9007199254740993",
        "1e400",
        "nan",
        " 5 ",
        "\"a,b\"",
        "\"x\"\"y\"",
        "\"multi\nline\"",
        "counter",
        "histogram",
        "gauge",
        "0.1=1;+Inf=9007199254740993",
        "0.1=x",
        "\"open",
        "é",
        "",
    ];
    for (n, li) in (7..lines.len()).step_by(lines.len() / 40 + 1).enumerate() {
        let cells: Vec<&str> = lines[li].split(',').collect();
        for k in 0..cells.len().min(20) {
            if (n + k) % 3 != 0 {
                continue;
            }
            let mut c = cells.clone();
            c[k] = bad[(n * 7 + k) % bad.len()];
            let mut l = lines.clone();
            let row = c.join(",");
            l[li] = &row;
            out.push(l.join("\n").into_bytes());
        }
    }
    out
}

#[test]
fn lean_read_refuses_what_the_full_read_refuses() {
    let mut errors = 0;
    let sources = [
        "conc1_kvnone.server_metrics_export.csv",
        "tp4_bs64_offloadon.metrics_server_metrics.csv",
    ];
    for name in sources {
        for (n, b) in corruptions(&fixture(name)).iter().enumerate() {
            assert_lean_matches_full(b, &format!("{name} #{n}"));
            errors += usize::from(read(b).is_err());
        }
    }
    assert!(errors > 200, "{errors} inputs refused");
}

/// Push `bytes` in `size`-byte chunks into a lean reader.
fn read_lean_chunked(bytes: &[u8], size: usize) -> Result<ServerMetricsExport, ReadError> {
    let mut r = ServerCsvReader::new("t.csv", &FamilyFilter::all().lean());
    for c in bytes.chunks(size.max(1)) {
        r.push(c)?;
    }
    r.finish()
}

#[test]
fn lean_read_same_for_every_chunking() {
    let mut inputs: Vec<Vec<u8>> = csv_files()
        .iter()
        .map(|p| std::fs::read(p).expect("fixture"))
        .collect();
    inputs.extend(corruptions(&conc(4)).into_iter().step_by(9));
    for (n, b) in inputs.iter().enumerate() {
        let whole = read_lean(b);
        for size in [1, 7, 4096] {
            assert_eq!(
                read_lean_chunked(b, size),
                whole,
                "input {n}, chunks of {size}"
            );
        }
    }
}

/// The run of one CSV as `account` reads it, and the same run with the CSV read in full
/// (the same families, every series as a `Series`): accounting gives one result.
#[test]
fn accounting_from_a_lean_read_equals_from_a_full_read() {
    let mut dirs: Vec<PathBuf> = csv_files()
        .iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n == "server_metrics_export.csv")
        })
        .filter_map(|p| p.parent().map(PathBuf::from))
        .collect();
    dirs.dedup();
    assert!(dirs.len() >= 10, "{} runs", dirs.len());
    let opts = RunOptions {
        families: families_read(),
        ..RunOptions::default()
    };
    let policy = Policy::default();
    for dir in dirs {
        let inputs: Vec<InputFile<'_>> = std::fs::read_dir(&dir)
            .expect("dir")
            .flatten()
            .filter(|e| e.path().is_file())
            .map(|e| InputFile::path(e.file_name().to_string_lossy().to_string(), e.path()))
            .collect();
        let Ok(lean_run) = read_run(&inputs, &opts) else {
            continue;
        };
        let Some(lean) = &lean_run.server_csv else {
            continue;
        };
        assert!(lean.csv_lean.is_some(), "{}", dir.display());
        let bytes = std::fs::read(dir.join("server_metrics_export.csv")).expect("csv");
        let mut full = read(&bytes).expect("full read");
        full.metrics
            .retain(|f| lean.metrics.iter().any(|l| l.name == f.name));
        full.skipped_families = lean.skipped_families;
        let mut full_run = lean_run.clone();
        full_run.server_csv = Some(full);
        let a = serde_json::to_string(&account_run(&lean_run, &policy)).expect("json");
        let b = serde_json::to_string(&account_run(&full_run, &policy)).expect("json");
        assert_eq!(a, b, "{}", dir.display());
    }
}
