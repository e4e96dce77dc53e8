//! AIPerf raw-scrape `server_metrics_export.jsonl` reader.

use kvledger::model::{FamilyView, Phase, SampleValue, Scrape, ScrapeSet, ScrapeSource};
use kvledger::read::scrape_jsonl::read_scrapes_jsonl;
use kvledger::read::FamilyFilter;
use kvledger::{ErrorCode, ReadError};

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/jsonl");

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIX}/{name}")).expect("fixture")
}

fn read(bytes: &[u8]) -> Result<ScrapeSet, ReadError> {
    read_scrapes_jsonl("t.jsonl", bytes, &FamilyFilter::all())
}

fn fam<'a>(s: &'a Scrape, name: &str) -> FamilyView<'a> {
    s.families()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no family {name}"))
}

fn scalar(f: FamilyView<'_>, i: usize) -> f64 {
    match *f.samples.get(i).unwrap().value {
        SampleValue::Scalar { value } => value,
        ref v => panic!("not scalar: {v:?}"),
    }
}

fn hist(f: FamilyView<'_>, i: usize) -> (Vec<(&str, f64)>, Option<f64>, Option<f64>) {
    match f.samples.get(i).unwrap().value {
        SampleValue::Histogram(h) => (h.buckets().collect(), h.sum, h.count),
        v => panic!("not histogram: {v:?}"),
    }
}

#[test]
fn vllm_doc_record() {
    let set = read(&fixture("vllm-1-record.server_metrics_export.jsonl")).unwrap();
    assert_eq!(set.source, ScrapeSource::Jsonl);
    assert_eq!(set.skipped_families, 0);
    assert_eq!(set.scrapes.len(), 1);
    let s = &set.scrapes[0];
    assert_eq!(s.endpoint_url, "http://localhost:8000/metrics");
    assert_eq!(s.timestamp_ns, Some(1763591215220757503));
    assert_eq!(s.phase, None);
    let names: Vec<_> = s.families().map(|f| f.name).collect();
    assert_eq!(
        names,
        [
            "vllm:num_requests_running",
            "vllm:kv_cache_usage_perc",
            "vllm:request_success",
            "vllm:time_to_first_token_seconds"
        ]
    );
    for f in s.families() {
        assert_eq!(f.metric_type, None);
        assert_eq!(f.help, None);
        assert!(f.samples.get(0).unwrap().labels.is_empty());
    }
    assert_eq!(scalar(fam(s, "vllm:num_requests_running"), 0), 12.0);
    assert_eq!(scalar(fam(s, "vllm:kv_cache_usage_perc"), 0), 0.72);
    assert_eq!(scalar(fam(s, "vllm:request_success"), 0), 1500.0);
    let (b, sum, count) = hist(fam(s, "vllm:time_to_first_token_seconds"), 0);
    assert_eq!(b, [("0.01", 145.0), ("0.1", 1498.0), ("+Inf", 1500.0)]);
    assert_eq!((sum, count), (Some(32.456), Some(1500.0)));
}

#[test]
fn legacy_histogram_key() {
    let set = read(&fixture(
        "legacy-2025-11-dynamo-real.server_metrics_export.jsonl",
    ))
    .unwrap();
    assert_eq!(set.scrapes.len(), 2);
    let a = &set.scrapes[0];
    let b = &set.scrapes[1];
    assert_eq!(a.endpoint_url, "http://localhost:8081/metrics");
    assert_eq!(a.timestamp_ns, Some(1763591215213919629));
    assert_eq!(b.endpoint_url, "http://localhost:8000/metrics");
    assert_eq!(b.timestamp_ns, Some(1763591215220757503));
    let f = fam(a, "dynamo_component_requests");
    assert_eq!(
        f.samples
            .get(0)
            .unwrap()
            .labels
            .get("dynamo_component")
            .unwrap(),
        "prefill"
    );
    assert_eq!(
        f.samples.get(0).unwrap().labels.get("model").unwrap(),
        "openai/gpt-oss-20b"
    );
    assert_eq!(scalar(f, 0), 360.0);
    assert_eq!(
        scalar(fam(a, "dynamo_component_nats_client_in_messages"), 0),
        59284.0
    );
    let (bk, sum, count) = hist(fam(a, "dynamo_component_request_duration_seconds"), 0);
    assert_eq!(
        bk,
        [
            ("0.005", 0.0),
            ("0.01", 0.0),
            ("0.025", 123.0),
            ("0.05", 327.0),
            ("0.1", 348.0),
            ("0.25", 360.0),
            ("+Inf", 360.0)
        ]
    );
    assert_eq!((sum, count), (Some(12.232215459), Some(360.0)));
    // Keys exactly as written ("0", "1", "10"), file order (not sorted as strings).
    let (bk, sum, _) = hist(fam(b, "dynamo_frontend_time_to_first_token_seconds"), 0);
    let les: Vec<_> = bk.iter().map(|(l, _)| *l).collect();
    assert_eq!(les, ["0", "0.0047", "0.1", "0.47", "1", "10", "+Inf"]);
    assert_eq!(sum, Some(765.15823571));
    assert_eq!(
        fam(b, "dynamo_frontend_requests")
            .samples
            .get(0)
            .unwrap()
            .labels
            .get("status")
            .unwrap(),
        "success"
    );
}

/// Native 0.12 style: benchmark_phase, labels: null, null latencies, interleaved endpoints.
const NATIVE: &str = r#"{"endpoint_url":"http://p:8000/metrics","timestamp_ns":1770000000000000001,"benchmark_phase":null,"endpoint_latency_ns":0,"request_sent_ns":null,"first_byte_ns":null,"metrics":{"vllm:prompt_tokens":[{"labels":null,"value":10.0}],"vllm:prefix_cache_hits":[{"labels":{"engine":"0"},"value":0.0}]}}
{"endpoint_url":"http://d:8001/metrics","timestamp_ns":1770000000000000002,"benchmark_phase":"warmup","metrics":{"vllm:prompt_tokens":[{"labels":null,"value":0.0}]}}

{"endpoint_url":"http://p:8000/metrics","timestamp_ns":1770000000333000001,"benchmark_phase":"WarmUp","metrics":{"vllm:prompt_tokens":[{"value":20.0}],"vllm:e2e_request_latency_seconds":[{"labels":null,"buckets":{"1.0":1,"+Inf":2},"sum":null,"count":null}]},"is_duplicate":false,"extra":{"nested":[1,2,{"x":null}]}}
   
{"endpoint_url":"http://d:8001/metrics","timestamp_ns":1770000000333000002,"benchmark_phase":"profiling","metrics":{}}
{"endpoint_url":"http://p:8000/metrics","timestamp_ns":9007199254740993,"benchmark_phase":"PROFILING","metrics":{"vllm:prompt_tokens":[{"labels":{"engine":"0"},"value":30.5},{"labels":{"engine":"1"},"value":1e3}],"legacy_summary":[{"summary":{"0.5":1.0},"sum":2.0,"count":3.0}]}}
"#;

#[test]
fn native_phases_and_nulls() {
    let set = read(NATIVE.as_bytes()).unwrap();
    let s = &set.scrapes;
    assert_eq!(s.len(), 5);
    let eps: Vec<_> = s.iter().map(|s| s.endpoint_url.as_str()).collect();
    assert_eq!(
        eps,
        [
            "http://p:8000/metrics",
            "http://d:8001/metrics",
            "http://p:8000/metrics",
            "http://d:8001/metrics",
            "http://p:8000/metrics"
        ]
    );
    let ts: Vec<_> = s.iter().map(|s| s.timestamp_ns.unwrap()).collect();
    assert_eq!(
        ts,
        [
            1770000000000000001,
            1770000000000000002,
            1770000000333000001,
            1770000000333000002,
            9007199254740993
        ]
    );
    let phases: Vec<_> = s.iter().map(|s| s.phase).collect();
    assert_eq!(
        phases,
        [
            None,
            Some(Phase::Warmup),
            Some(Phase::Warmup),
            Some(Phase::Profiling),
            Some(Phase::Profiling)
        ]
    );
    assert!(fam(&s[0], "vllm:prompt_tokens")
        .samples
        .get(0)
        .unwrap()
        .labels
        .is_empty());
    assert_eq!(
        fam(&s[0], "vllm:prefix_cache_hits")
            .samples
            .get(0)
            .unwrap()
            .labels
            .get("engine")
            .unwrap(),
        "0"
    );
    let (b, sum, count) = hist(fam(&s[2], "vllm:e2e_request_latency_seconds"), 0);
    assert_eq!(b, [("1.0", 1.0), ("+Inf", 2.0)]);
    assert_eq!((sum, count), (None, None));
    assert!(s[3].groups.is_empty());
    let f = fam(&s[4], "vllm:prompt_tokens");
    assert_eq!((scalar(f, 0), scalar(f, 1)), (30.5, 1000.0));
    assert_eq!(f.samples.get(1).unwrap().labels.get("engine").unwrap(), "1");
    // The summary-only family is dropped, not an error.
    assert!(s[4].families().all(|f| f.name != "legacy_summary"));
    assert_eq!(set.skipped_families, 0);
}

#[test]
fn filter_and_skipped_count() {
    let filter = FamilyFilter::only(["vllm:prompt_tokens_total"]);
    let set = read_scrapes_jsonl("t.jsonl", NATIVE.as_bytes(), &filter).unwrap();
    // Skipped: vllm:prefix_cache_hits, vllm:e2e_request_latency_seconds, legacy_summary.
    assert_eq!(set.skipped_families, 3);
    assert_eq!(set.scrapes.len(), 5);
    for s in &set.scrapes {
        assert!(s.families().all(|f| f.name == "vllm:prompt_tokens"));
    }
    assert_eq!(scalar(fam(&set.scrapes[2], "vllm:prompt_tokens"), 0), 20.0);
    // A skipped family is not built, so a malformed sample inside it is not an error.
    let line = r#"{"endpoint_url":"u","timestamp_ns":5,"metrics":{"other":[{"nonsense":true}],"vllm:prompt_tokens":[{"value":1}]}}"#;
    let set = read_scrapes_jsonl("t", line.as_bytes(), &filter).unwrap();
    assert_eq!(set.skipped_families, 1);
    assert_eq!(set.scrapes[0].families().len(), 1);
}

fn err(text: &str) -> ReadError {
    read(text.as_bytes()).unwrap_err()
}

const OK_LINE: &str = r#"{"endpoint_url":"u","timestamp_ns":1,"metrics":{}}"#;

#[test]
fn bad_timestamps() {
    for (ts, what) in [
        ("1.7e18", "non-integer"),
        ("1770000000000000000.0", "non-integer"),
        ("-5", "negative"),
        ("\"1770000000000000000\"", "string"),
        ("null", "null"),
        ("18446744073709551616", "out-of-range"),
    ] {
        let text = format!(
            "{OK_LINE}\n{OK_LINE}\n{{\"endpoint_url\":\"u\",\"timestamp_ns\":{ts},\"metrics\":{{}}}}\n"
        );
        let e = err(&text);
        assert_eq!(e.code, ErrorCode::BadTimestamp, "{ts}: {e}");
        assert_eq!(e.position.line, Some(3), "{ts}");
        assert_eq!(e.position.json_path.as_deref(), Some("timestamp_ns"));
        assert!(e.message.contains(what), "{ts}: {}", e.message);
    }
    let e = err(&format!(
        "{OK_LINE}\n{{\"endpoint_url\":\"u\",\"metrics\":{{}}}}\n"
    ));
    assert_eq!(e.code, ErrorCode::BadTimestamp);
    assert_eq!(e.position.line, Some(2));
    assert!(e.message.contains("no `timestamp_ns`"), "{}", e.message);
}

#[test]
fn record_errors() {
    // Syntax error: line and column.
    let e = err(&format!("{OK_LINE}\n{{\"endpoint_url\":\"u\",,}}\n"));
    assert_eq!(e.code, ErrorCode::JsonlRecord);
    assert_eq!(e.position.line, Some(2));
    assert_eq!(e.position.column, Some(21));
    // Shape error: JSON path.
    let e = err(&format!(
        "{OK_LINE}\n\n{{\"endpoint_url\":\"u\",\"timestamp_ns\":1,\"metrics\":{{\"a\":[{{\"value\":1}},{{\"value\":\"x\"}}]}}}}\n"
    ));
    assert_eq!(e.code, ErrorCode::JsonlRecord);
    assert_eq!(e.position.line, Some(3));
    assert_eq!(e.position.json_path.as_deref(), Some("metrics.a[1].value"));
    // A sample with neither value nor buckets.
    let e = err(r#"{"endpoint_url":"u","timestamp_ns":1,"metrics":{"a":[{"labels":{}}]}}"#);
    assert_eq!(e.code, ErrorCode::JsonlRecord);
    assert!(e.message.contains("neither"), "{}", e.message);
    assert_eq!(e.position.json_path.as_deref(), Some("metrics.a[0]"));
    // Missing fields.
    let e = err(r#"{"timestamp_ns":1,"metrics":{}}"#);
    assert_eq!(e.code, ErrorCode::JsonlRecord);
    assert!(e.message.contains("endpoint_url"));
    let e = err(&format!(
        "{OK_LINE}\n{{\"endpoint_url\":\"u\",\"timestamp_ns\":1}}"
    ));
    assert_eq!(e.code, ErrorCode::JsonlRecord);
    assert_eq!(e.position.line, Some(2));
    assert!(e.message.contains("metrics"));
    // Not an object; trailing garbage; bad phase; label value not a string.
    for (text, line) in [
        ("[1,2]", 1),
        (&format!("{OK_LINE} x")[..], 1),
        (
            r#"{"endpoint_url":"u","timestamp_ns":1,"benchmark_phase":"cooldown","metrics":{}}"#,
            1,
        ),
        (
            r#"{"endpoint_url":"u","timestamp_ns":1,"metrics":{"a":[{"labels":{"k":1},"value":1}]}}"#,
            1,
        ),
        (
            &format!("{OK_LINE}\n{OK_LINE}\n{OK_LINE}\n{{\"endpoint")[..],
            4,
        ),
    ] {
        let e = err(text);
        assert_eq!(e.code, ErrorCode::JsonlRecord, "{text}: {e}");
        assert_eq!(e.position.line, Some(line), "{text}");
    }
    // Invalid UTF-8.
    let mut bytes = format!("{OK_LINE}\n").into_bytes();
    bytes.extend_from_slice(b"{\"endpoint_url\":\"\xff\"}\n");
    let e = read(&bytes).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotUtf8);
    assert_eq!(e.position.line, Some(2));
}

#[test]
fn empty_and_blank_input_is_an_empty_set() {
    assert!(read(b"").unwrap().scrapes.is_empty());
    assert!(read(b"\n  \r\n\n").unwrap().scrapes.is_empty());
    // CRLF line ends.
    let set = read(format!("{OK_LINE}\r\n{OK_LINE}\r\n").as_bytes()).unwrap();
    assert_eq!(set.scrapes.len(), 2);
    // A byte-order mark before the first record.
    let set = read(format!("\u{feff}{OK_LINE}\n").as_bytes()).unwrap();
    assert_eq!(set.scrapes.len(), 1);
}

#[test]
fn truncation_sweep_never_panics() {
    let mut all = fixture("legacy-2025-11-dynamo-real.server_metrics_export.jsonl");
    all.extend_from_slice(NATIVE.as_bytes());
    all.extend(fixture("vllm-1-record.server_metrics_export.jsonl"));
    let (mut ok, mut bad) = (0, 0);
    for cut in 0..=all.len() {
        match read(&all[..cut]) {
            Ok(_) => ok += 1,
            Err(e) => {
                bad += 1;
                assert!(
                    matches!(
                        e.code,
                        ErrorCode::JsonlRecord | ErrorCode::BadTimestamp | ErrorCode::NotUtf8
                    ),
                    "{e}"
                );
                assert!(e.position.line.is_some());
            }
        }
    }
    assert!(ok > 5 && bad > 1000, "ok {ok} bad {bad}");
    for i in (0..all.len()).step_by(7) {
        let mut b = all.clone();
        b[i] = [b'"', b',', b'\n', 0xff, b'}', b'-', b'.'][i % 7];
        let _ = read(&b);
    }
}

/// The pretty-printed real Dynamo frontend record, compacted to one JSONL line: legacy
/// `histogram` buckets, the exact epoch-ns timestamp, and the frontend's families.
#[test]
fn real_dynamo_frontend_record() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/jsonl/legacy-2025-11-dynamo-frontend-real.record.json"),
    )
    .expect("fixture");
    let value: serde_json::Value = serde_json::from_str(&text).expect("json");
    let line = serde_json::to_string(&value).expect("compact") + "\n";
    let set = kvledger::read::scrape_jsonl::read_scrapes_jsonl(
        "frontend.jsonl",
        line.as_bytes(),
        &kvledger::read::FamilyFilter::all(),
    )
    .expect("reads");
    assert_eq!(set.scrapes.len(), 1);
    let s = &set.scrapes[0];
    assert_eq!(s.timestamp_ns, Some(1_763_591_215_220_757_503));
    assert_eq!(s.endpoint_url, "http://localhost:8000/metrics");
    assert!(s.families().all(|f| f.name.starts_with("dynamo_frontend_")));
    let ttft = s
        .families()
        .find(|f| f.name == "dynamo_frontend_time_to_first_token_seconds")
        .expect("ttft");
    assert!(matches!(
        &ttft.samples.get(0).unwrap().value,
        kvledger::model::SampleValue::Histogram(h) if h.buckets().len() > 0
    ));
}
