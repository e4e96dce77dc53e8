use kvledger::model::{Phase, ProfileEra, ProfileExport};
use kvledger::read::profile_jsonl::read_profile_jsonl;
use kvledger::read::profile_summary::read_run_summary;
use kvledger::{ErrorCode, ReadError};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/profile");

fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(format!("{DIR}/{path}")).expect("fixture")
}

fn jsonl(t: &str) -> Result<ProfileExport, ReadError> {
    read_profile_jsonl("p.jsonl", t.as_bytes())
}

#[test]
fn inferencex_conc1_real() {
    let p = read_profile_jsonl(
        "c1",
        &fixture("inferencex-mi355x-conc1/profile_export.jsonl")[..],
    )
    .unwrap();
    assert_eq!(p.records.len(), 196);
    assert_eq!(p.era, ProfileEra::OmittedNulls);
    let prof = p
        .records
        .iter()
        .filter(|r| r.phase == Some(Phase::Profiling))
        .count();
    let warm = p
        .records
        .iter()
        .filter(|r| r.phase == Some(Phase::Warmup))
        .count();
    assert_eq!((prof, warm), (195, 1));
    let first = &p.records[0];
    assert_eq!(first.line, 1);
    assert_eq!(first.phase, Some(Phase::Warmup));
    // Exact epoch ns (above 2^53; an f64 would round them).
    assert_eq!(first.request_start_ns, Some(1_783_588_508_057_339_762));
    assert_eq!(first.request_end_ns, Some(1_783_588_547_699_214_447));
    assert_eq!(first.usage_prompt_tokens, Some(192_422));
    assert_eq!(first.input_sequence_length, Some(192_422));
    assert_eq!(first.output_sequence_length, Some(1));
    assert_eq!(first.turn_index, Some(45));
    assert_eq!(
        first.conversation_id.as_deref(),
        Some("002001296e8a8c38ad9d7cc436d691afc602")
    );
    assert_eq!(
        first.x_correlation_id.as_deref(),
        Some("e9774bf0-73fe-4038-b71d-e0010f55d99f")
    );
    assert!(!first.was_cancelled);
    assert!(p.records.iter().all(|r| r.error.is_none()));
    // Profiling ISL equals the summary's total_isl (18,921,176).
    let isl: u64 = p
        .records
        .iter()
        .filter(|r| r.phase == Some(Phase::Profiling))
        .filter_map(|r| r.input_sequence_length)
        .sum();
    assert_eq!(isl, 18_921_176);
    let s = read_run_summary(
        "s",
        &fixture("inferencex-mi355x-conc1/profile_export_aiperf.json")[..],
    )
    .unwrap();
    assert_eq!(s.total_isl, Some(isl as f64));
    assert_eq!(s.request_count, Some(prof as f64));
    assert_eq!(s.warmup_request_count, Some(warm as f64));
}

#[test]
fn legacy_era() {
    let p = read_profile_jsonl(
        "l",
        &fixture("legacy-2025-10-gpt-oss-run1/profile_export.jsonl")[..],
    )
    .unwrap();
    assert_eq!(p.era, ProfileEra::LegacyCreditPhase);
    assert_eq!(p.records.len(), 100);
    assert!(p.records.iter().all(|r| r.phase == Some(Phase::Profiling)));
    let errs: Vec<_> = p.records.iter().filter_map(|r| r.error.as_ref()).collect();
    assert_eq!(errs.len(), 11);
    assert!(errs.iter().all(
        |e| e.code == Some(499) && e.error_type.as_deref() == Some("RequestCancellationError")
    ));
    let first = &p.records[0];
    assert_eq!(first.request_start_ns, Some(1_759_522_419_154_829_652));
    // Latency is a fractional ms float: no exact end.
    assert_eq!(first.request_end_ns, None);
    let isl: u64 = p
        .records
        .iter()
        .filter_map(|r| r.input_sequence_length)
        .sum();
    assert_eq!(isl, 48_950);
}

#[test]
fn explicit_null_era() {
    let p = read_profile_jsonl(
        "q",
        &fixture("qwen3-0.6b-c1-2025-11/profile_export.jsonl")[..],
    )
    .unwrap();
    assert_eq!(p.era, ProfileEra::ExplicitNulls);
    assert_eq!(p.records.len(), 10);
    let r = &p.records[0];
    assert_eq!(r.request_start_ns, Some(1_762_551_534_797_067_827));
    assert_eq!(r.request_end_ns, Some(1_762_551_538_441_354_976));
    assert_eq!(r.conversation_id, None);
    assert_eq!(r.input_sequence_length, Some(100));
    assert_eq!(r.output_sequence_length, Some(200));
    assert_eq!(r.usage_prompt_tokens, None);
    assert!(r.error.is_none());
}

#[test]
fn era_detection_and_fields() {
    let omitted = r#"{"metadata":{"benchmark_phase":"PROFILING","request_start_ns":18446744073709551615},"metrics":{}}"#;
    let explicit = r#"{"metadata":{"benchmark_phase":"warmup","conversation_id":null},"metrics":{},"error":null}"#;
    let legacy = r#"{"metadata":{"credit_phase":"Warmup","timestamp_ns":1000},"metrics":{"request_latency":{"value":2,"unit":"ms"}}}"#;
    let p = jsonl(&format!("{omitted}\n")).unwrap();
    assert_eq!(p.era, ProfileEra::OmittedNulls);
    assert_eq!(p.records[0].phase, Some(Phase::Profiling));
    assert_eq!(p.records[0].request_start_ns, Some(u64::MAX));
    let p = jsonl(explicit).unwrap();
    assert_eq!(p.era, ProfileEra::ExplicitNulls);
    assert_eq!(p.records[0].phase, Some(Phase::Warmup));
    let p = jsonl(legacy).unwrap();
    assert_eq!(p.era, ProfileEra::LegacyCreditPhase);
    assert_eq!(p.records[0].phase, Some(Phase::Warmup));
    assert_eq!(p.records[0].request_start_ns, Some(1000));
    // Integer latency: exact end.
    assert_eq!(p.records[0].request_end_ns, Some(2_001_000));
    // Mixed, blank lines skipped (line numbers still count them), CRLF.
    let p = jsonl(&format!("{omitted}\r\n\n  \n{explicit}\r\n")).unwrap();
    assert_eq!(p.era, ProfileEra::Mixed);
    assert_eq!(p.records[1].line, 4);
    // A string "null" is not an explicit null.
    let p = jsonl(r#"{"metadata":{"x_correlation_id":"null"},"metrics":{}}"#).unwrap();
    assert_eq!(p.era, ProfileEra::OmittedNulls);
    assert_eq!(p.records[0].phase, None);
    // Empty.
    let p = jsonl("\n\n").unwrap();
    assert_eq!(p.era, ProfileEra::Empty);
    assert!(p.records.is_empty());
    // Integral float counts, cancellation, error object without code.
    let p = jsonl(r#"{"metadata":{"was_cancelled":true},"metrics":{"usage_prompt_tokens":{"value":123.0}},"error":{"message":"m"}}"#).unwrap();
    let r = &p.records[0];
    assert_eq!(r.usage_prompt_tokens, Some(123));
    assert!(r.was_cancelled);
    let e = r.error.as_ref().unwrap();
    assert_eq!(
        (e.code, e.error_type.as_deref(), e.message.as_deref()),
        (None, None, Some("m"))
    );
}

#[test]
fn record_errors_with_lines() {
    let ok = r#"{"metadata":{},"metrics":{}}"#;
    // Fractional count.
    let e = jsonl(&format!(
        "{ok}\n{}\n",
        r#"{"metrics":{"input_sequence_length":{"value":1.5}}}"#
    ))
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::ProfileRecord);
    assert_eq!(e.position.line, Some(2));
    assert!(e.message.contains("input_sequence_length"), "{}", e.message);
    // Negative count.
    let e = jsonl(r#"{"metrics":{"usage_prompt_tokens":{"value":-3}}}"#).unwrap_err();
    assert_eq!(e.code, ErrorCode::ProfileRecord);
    assert!(e.message.contains("usage_prompt_tokens"));
    // Float timestamp.
    let e = jsonl(&format!(
        "{ok}\n\n{}\n",
        r#"{"metadata":{"request_start_ns":1.7e18}}"#
    ))
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::BadTimestamp);
    assert_eq!(e.position.line, Some(3));
    assert_eq!(
        e.position.json_path.as_deref(),
        Some("metadata.request_start_ns")
    );
    // Negative and too-large timestamps.
    let e = jsonl(r#"{"metadata":{"request_end_ns":-1}}"#).unwrap_err();
    assert_eq!(e.code, ErrorCode::BadTimestamp);
    let e = jsonl(r#"{"metadata":{"timestamp_ns":18446744073709551616}}"#).unwrap_err();
    assert_eq!(e.code, ErrorCode::BadTimestamp);
    // Shape error with a JSON path.
    let e = jsonl(&format!("{ok}\n{}\n", r#"{"metadata":{"turn_index":"x"}}"#)).unwrap_err();
    assert_eq!(e.code, ErrorCode::ProfileRecord);
    assert_eq!(e.position.line, Some(2));
    assert_eq!(e.position.json_path.as_deref(), Some("metadata.turn_index"));
    // Syntax error.
    let e = jsonl(&format!("{ok}\n{{\"metadata\": \n")).unwrap_err();
    assert_eq!(e.code, ErrorCode::ProfileRecord);
    assert_eq!(e.position.line, Some(2));
    // Not an object.
    let e = jsonl("[1,2]\n").unwrap_err();
    assert_eq!(e.code, ErrorCode::ProfileRecord);
    // Unknown phase.
    let e = jsonl(r#"{"metadata":{"benchmark_phase":"cooldown"}}"#).unwrap_err();
    assert_eq!(e.code, ErrorCode::ProfileRecord);
    assert!(e.message.contains("cooldown"));
}

/// Lines that are not UTF-8 read as they always did: bytes in a string the reader skips are
/// not looked at, a string it reads must be UTF-8 (an error at that string); escaped and
/// non-ASCII strings read the same as plain ones.
#[test]
fn non_utf8_and_escaped_lines() {
    let read = |b: &[u8]| read_profile_jsonl("p.jsonl", b);
    let p =
        read(b"{\"metadata\":{\"x_request_id\":\"a\xff\",\"benchmark_phase\":\"profiling\"}}\n")
            .unwrap();
    assert_eq!(p.records[0].phase, Some(Phase::Profiling));
    let e =
        read(b"{\"metadata\":{}}\n{\"metadata\":{\"conversation_id\":\"a\xffb\"}}\n").unwrap_err();
    assert_eq!(e.code, ErrorCode::ProfileRecord);
    assert_eq!(e.position.line, Some(2));
    assert_eq!(
        e.position.json_path.as_deref(),
        Some("metadata.conversation_id")
    );
    let p = jsonl(concat!(
        "\u{feff}",
        r#"{"metadata":{"conversation_id":"q\"\u00e9\n","x_correlation_id":"ét😀","benchmark_phase":" Warm\u0055p "},"error":{"type":"t\u0041","message":"m\\"}}"#
    ))
    .unwrap();
    let r = &p.records[0];
    assert_eq!(r.conversation_id.as_deref(), Some("q\"\u{e9}\n"));
    assert_eq!(r.x_correlation_id.as_deref(), Some("\u{e9}t\u{1F600}"));
    assert_eq!(r.phase, Some(Phase::Warmup));
    let err = r.error.as_ref().unwrap();
    assert_eq!(
        (err.error_type.as_deref(), err.message.as_deref()),
        (Some("tA"), Some("m\\"))
    );
}

#[test]
fn truncation_sweep_never_panics() {
    let bytes = fixture("qwen3-0.6b-c1-2025-11/profile_export.jsonl");
    for cut in (0..bytes.len()).step_by(97) {
        let _ = read_profile_jsonl("t", &bytes[..cut]);
    }
    let bytes = fixture("legacy-2025-10-gpt-oss-run1/profile_export.jsonl");
    for cut in (0..bytes.len()).step_by(1013) {
        let _ = read_profile_jsonl("t", &bytes[..cut]);
    }
    let s = fixture("inferencex-mi355x-conc1/profile_export_aiperf.json");
    for cut in (0..s.len()).step_by(211) {
        let r = read_run_summary("t", &s[..cut]);
        assert!(
            r.is_err(),
            "a truncated summary must not read as complete ({cut})"
        );
    }
}

#[test]
fn summaries_real() {
    for (dir, req, warm, dur, isl, osl, hit, start) in [
        (
            "inferencex-mi355x-conc1",
            195.0,
            1.0,
            3542.81860992,
            18_921_176.0,
            213_017.0,
            92.78687414280634,
            "2026-07-09T09:15:47.824596",
        ),
        (
            "inferencex-mi355x-conc4",
            547.0,
            5.0,
            3625.9412828160002,
            44_360_550.0,
            589_666.0,
            93.89201036178103,
            "2026-07-09T10:23:29.033942",
        ),
        (
            "inferencex-mi355x-conc8",
            873.0,
            12.0,
            3628.164498176,
            76_192_681.0,
            720_245.0,
            95.47079576174855,
            "2026-07-09T09:07:43.913788",
        ),
    ] {
        let s = read_run_summary(
            dir,
            &fixture(&format!("{dir}/profile_export_aiperf.json"))[..],
        )
        .unwrap();
        assert_eq!(s.schema_version.as_deref(), Some("1.2"));
        assert_eq!(s.aiperf_version.as_deref(), Some("0.8.0"));
        assert!(s.benchmark_id.is_some());
        assert!(!s.legacy_records_layout);
        assert_eq!(s.request_count, Some(req), "{dir}");
        assert_eq!(s.warmup_request_count, Some(warm), "{dir}");
        assert_eq!(s.warmup_error_request_count, None);
        assert_eq!(s.error_request_count, None);
        assert_eq!(s.completed_request_count, None);
        // serde_json is built without `float_roundtrip`: its float parsing may be 1 ULP off.
        let d = s.benchmark_duration_s.unwrap();
        assert!((d - dur).abs() <= dur * 1e-15, "{dir}: {d} vs {dur}");
        assert_eq!(s.total_isl, Some(isl));
        assert_eq!(s.total_osl, Some(osl));
        let h = s.theoretical_prefix_cache_hit.unwrap();
        assert!((h - hit).abs() <= hit * 1e-15, "{dir}: {h} vs {hit}");
        assert_eq!(s.theoretical_prefix_cache_hit_unit.as_deref(), Some("%"));
        assert_eq!(s.start_time.as_deref(), Some(start));
        assert!(s.end_time.is_some());
        assert_eq!(s.was_cancelled, Some(false));
        // Written as floats above 2^53: lossy, so not taken.
        assert_eq!(s.min_request_timestamp_ns, None);
        assert_eq!(s.max_response_timestamp_ns, None);
    }
}

#[test]
fn summary_legacy_and_explicit_null_layouts() {
    let s = read_run_summary(
        "l",
        &fixture("legacy-2025-10-gpt-oss-run1/profile_export_aiperf.json")[..],
    )
    .unwrap();
    assert!(s.legacy_records_layout);
    assert_eq!(s.request_count, Some(89.0));
    assert_eq!(s.error_request_count, Some(11.0));
    assert_eq!(s.benchmark_duration_s, Some(9.317788951));
    assert_eq!(s.total_isl, Some(48_950.0));
    assert_eq!(s.total_osl, Some(21_624.0));
    assert_eq!(s.start_time.as_deref(), Some("2025-10-03T13:13:39.146443"));
    assert_eq!(s.end_time.as_deref(), Some("2025-10-03T13:13:48.474205"));
    assert_eq!(s.was_cancelled, Some(false));
    assert_eq!(s.schema_version, None);

    let s = read_run_summary(
        "q",
        &fixture("qwen3-0.6b-c1-2025-11/profile_export_aiperf.json")[..],
    )
    .unwrap();
    assert!(!s.legacy_records_layout);
    assert_eq!(s.request_count, Some(64.0));
    assert_eq!(s.total_isl, Some(6400.0));
    assert_eq!(s.total_osl, Some(12_799.0));
    assert_eq!(s.benchmark_duration_s, Some(255.56017270100003));
}

#[test]
fn summary_exact_timestamps_and_errors() {
    let t = r#"{"min_request_timestamp":{"unit":"ns","avg":1783588550633024512},
               "max_response_timestamp":{"unit":"ns","avg":1000.0},
               "error_request_count":{"avg":2.0},"completed_request_count":{"avg":7},
               "warmup_metrics":{"error_request_count":{"avg":1.0}},
               "input_config":{"huge":[1,2,3,{"x":null}]}, "unknown": 5}"#;
    let s = read_run_summary("s", t.as_bytes()).unwrap();
    assert_eq!(s.min_request_timestamp_ns, Some(1_783_588_550_633_024_512));
    assert_eq!(s.max_response_timestamp_ns, Some(1000));
    assert_eq!(s.error_request_count, Some(2.0));
    assert_eq!(s.completed_request_count, Some(7.0));
    assert_eq!(s.warmup_error_request_count, Some(1.0));
    let e = read_run_summary("s", &br#"{"request_count": {"avg": "x"}}"#[..]).unwrap_err();
    assert_eq!(e.code, ErrorCode::JsonShape);
    assert_eq!(e.position.json_path.as_deref(), Some("request_count.avg"));
    let e = read_run_summary("s", &b"{\"a\":1} x"[..]).unwrap_err();
    assert_eq!(e.code, ErrorCode::JsonSyntax);
    let e = read_run_summary("s", &b""[..]).unwrap_err();
    assert_eq!(e.code, ErrorCode::EmptyInput);
}
