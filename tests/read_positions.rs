//! Errors point at the fault: code, line, character column and JSON path for realistic
//! malformed artifacts in every format; no `?` path step, no column 0, no Rust type name in a
//! message. Expected positions are computed here from the edited text (columns count
//! characters, so `é` and `😀` are one column each).

use kvledger::read::launch::read_launch_json;
use kvledger::read::profile_jsonl::read_profile_jsonl;
use kvledger::read::profile_summary::read_run_summary;
use kvledger::read::prometheus_text::read_prometheus_text;
use kvledger::read::scrape_jsonl::read_scrapes_jsonl;
use kvledger::read::server_csv::read_server_metrics_csv;
use kvledger::read::server_json::read_server_metrics_json;
use kvledger::read::{read_run, CaptureMeta, FamilyFilter, InputFile, RunOptions};
use kvledger::{ErrorCode, ReadError};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn fixture(path: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}/{path}")).expect("fixture")
}

/// 1-based line and character column of byte `offset` of `text`, counted here.
fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line as u32, column as u32)
}

/// Replace the `nth` occurrence of `old` with `new`: the edited text and the position of the
/// `mark`-th byte of `new` (where the fault is).
fn edit(text: &str, old: &str, nth: usize, new: &str, mark: &str) -> (String, (u32, u32)) {
    let at = text
        .match_indices(old)
        .nth(nth)
        .unwrap_or_else(|| panic!("occurrence {nth} of `{old}`"))
        .0;
    let out = format!("{}{new}{}", &text[..at], &text[at + old.len()..]);
    let fault = at
        + new
            .find(mark)
            .unwrap_or_else(|| panic!("`{mark}` in `{new}`"));
    let pos = line_col(&out, fault);
    (out, pos)
}

fn assert_at(e: &ReadError, code: ErrorCode, at: (u32, u32), path: Option<&str>) {
    assert_eq!(e.code, code, "{e}");
    assert_eq!(
        (e.position.line, e.position.column),
        (Some(at.0), Some(at.1)),
        "{e}"
    );
    assert_eq!(e.position.json_path.as_deref(), path, "{e}");
    assert_user_facing(e);
}

/// No placeholder position and no Rust in the message.
fn assert_user_facing(e: &ReadError) {
    assert_ne!(e.position.column, Some(0), "{e}");
    assert_ne!(e.position.line, Some(0), "{e}");
    if let Some(p) = &e.position.json_path {
        assert!(
            !p.is_empty() && !p.split(['.', '[']).any(|s| s == "?" || s.starts_with("?]")),
            "{e}"
        );
    }
    for rust in [
        "f64",
        "u64",
        "u32",
        "i64",
        "usize",
        "struct ",
        "enum ",
        "Raw",
        "unit value",
        "sequence",
        "Option",
    ] {
        assert!(!e.message.contains(rust), "`{rust}` in: {e}");
    }
}

// ---------------------------------------------------------------------------------------------
// Server-metrics JSON (streamed)

const SERVER_JSON: &str = "server-json/vllm-1-endpoint-timeslices.server_metrics_export.json";

fn server_json(text: &str) -> ReadError {
    read_server_metrics_json("export.json", text.as_bytes(), &FamilyFilter::all())
        .expect_err("malformed")
}

#[test]
fn server_json_syntax_errors_in_characters() {
    let text = fixture(SERVER_JSON);
    // A missing comma: at the next key.
    let (bad, _) = edit(&text, "\"rate\": 0.359,", 0, "\"rate\": 0.359", "\"rate\"");
    let next = bad.find("\"rate_avg\": 0.38").expect("next key");
    let stats = Some("metrics.vllm:request_success.series[0].stats");
    assert_at(
        &server_json(&bad),
        ErrorCode::JsonSyntax,
        line_col(&bad, next),
        stats,
    );
    // Multi-byte characters before the fault on its line count one column each.
    let (bad, at) = edit(
        &text,
        "\"unit\": \"seconds\",",
        0,
        "\"unit\": \"sécönds 😀\" \"x\",",
        "\"x\"",
    );
    let family = Some("metrics.vllm:e2e_request_latency_seconds");
    assert_at(&server_json(&bad), ErrorCode::JsonSyntax, at, family);
    // Truncated: at the last byte there is.
    let cut = &text[..text
        .find("\"vllm:e2e_request_latency_seconds\"")
        .expect("family")
        + 10];
    let e = server_json(cut);
    assert_at(
        &e,
        ErrorCode::JsonSyntax,
        line_col(cut, cut.len() - 1),
        Some("metrics"),
    );
}

#[test]
fn server_json_shape_errors_at_the_value() {
    let text = fixture(SERVER_JSON);
    let (bad, at) = edit(
        &text,
        "\"rate\": 0.359",
        0,
        "\"rate\": \"0.359\"",
        "\"0.359\"",
    );
    let e = server_json(&bad);
    assert_at(
        &e,
        ErrorCode::JsonShape,
        at,
        Some("metrics.vllm:request_success.series[0].stats.rate"),
    );
    assert!(e.message.contains("expected a number"), "{}", e.message);
    // An epoch-ns written as a float.
    let (bad, at) = edit(
        &text,
        "\"end_ns\": 1765793078028529452",
        0,
        "\"end_ns\": 1.765793078028529452e18",
        "1.7",
    );
    assert_at(
        &server_json(&bad),
        ErrorCode::JsonShape,
        at,
        Some("metrics.vllm:request_success.series[0].timeslices[1].end_ns"),
    );
    // An unknown family type: at its value.
    let (bad, at) = edit(
        &text,
        "\"type\": \"counter\"",
        0,
        "\"type\": \"summary\"",
        "\"summary\"",
    );
    assert_at(
        &server_json(&bad),
        ErrorCode::JsonShape,
        at,
        Some("metrics.vllm:request_success.type"),
    );
    // A family that is not an object: named as such, not as a Rust type.
    let (bad, _) = edit(
        &text,
        "\"vllm:request_success\": {",
        0,
        "\"vllm:request_success\": [1], \"x\": {",
        "",
    );
    let e = server_json(&bad);
    assert_eq!(e.code, ErrorCode::JsonShape);
    assert!(e.message.contains("expected a metric family object"), "{e}");
    assert_user_facing(&e);
}

#[test]
fn server_json_repeated_family_at_its_second_key() {
    let text = fixture(SERVER_JSON);
    // The histogram family repeated under the gauge's name, with different content.
    let start = text
        .find("\"vllm:e2e_request_latency_seconds\": {")
        .expect("family");
    let end = text
        .rfind("\n  },\n  \"input_config\"")
        .expect("end of metrics");
    let copy = text[start..end].replace(
        "\"vllm:e2e_request_latency_seconds\"",
        "\"vllm:kv_cache_usage_perc\"",
    );
    let bad = format!("{},\n    {copy}{}", &text[..end], &text[end..]);
    let second = bad
        .rfind("\"vllm:kv_cache_usage_perc\"")
        .expect("second key");
    let e = server_json(&bad);
    assert_at(
        &e,
        ErrorCode::DuplicateKey,
        line_col(&bad, second),
        Some("metrics.vllm:kv_cache_usage_perc"),
    );
}

// ---------------------------------------------------------------------------------------------
// Run summary (streamed)

#[test]
fn run_summary_errors() {
    let text = fixture("profile/qwen3-0.6b-c1-2025-11/profile_export_aiperf.json");
    let (bad, at) = edit(&text, "\"avg\": 64.0", 0, "\"avg\": \"64\"", "\"64\"");
    let e = read_run_summary("s.json", bad.as_bytes()).expect_err("string avg");
    assert_at(&e, ErrorCode::JsonShape, at, Some("request_count.avg"));
    let (bad, at) = edit(
        &text,
        "\"was_cancelled\": false",
        0,
        "\"was_cancelled\": nope",
        "nope",
    );
    let e = read_run_summary("s.json", bad.as_bytes()).expect_err("syntax");
    // serde_json reads `n`, then finds `o` where it wanted `u`.
    assert_at(
        &e,
        ErrorCode::JsonSyntax,
        (at.0, at.1 + 1),
        Some("was_cancelled"),
    );
}

// ---------------------------------------------------------------------------------------------
// Raw-scrape JSONL

#[test]
fn scrape_jsonl_errors() {
    let record = fixture("jsonl/vllm-1-record.server_metrics_export.jsonl");
    let record = record.trim_end();
    let file = |line: &str| format!("{record}\n{record}\n{line}\n");
    let read = |t: &str| {
        read_scrapes_jsonl("s.jsonl", t.as_bytes(), &FamilyFilter::all()).expect_err("bad")
    };
    // A float timestamp on line 3: at the value.
    let (line, _) = edit(
        record,
        "\"timestamp_ns\":1763591215220757503",
        0,
        "\"timestamp_ns\":1.7e18",
        "",
    );
    let text = file(&line);
    let at = line_col(&text, text.rfind("1.7e18").expect("value"));
    assert_at(
        &read(&text),
        ErrorCode::BadTimestamp,
        at,
        Some("timestamp_ns"),
    );
    // A sample value of the wrong type, after multi-byte label values.
    let (line, _) = edit(
        record,
        "\"vllm:kv_cache_usage_perc\":[{\"value\":0.72}]",
        0,
        "\"vllm:kv_cache_usage_perc\":[{\"labels\":{\"model\":\"ça-😀\"},\"value\":\"0.72\"}]",
        "",
    );
    let text = file(&line);
    let at = line_col(&text, text.rfind("\"0.72\"").expect("value"));
    assert_at(
        &read(&text),
        ErrorCode::JsonlRecord,
        at,
        Some("metrics.vllm:kv_cache_usage_perc[0].value"),
    );
    // A syntax error: where serde_json stopped, in characters.
    let text = file("{\"endpoint_url\":\"é\",,}");
    let at = line_col(&text, text.rfind(",,").expect("fault") + 1);
    assert_eq!(at, (3, 21));
    assert_at(&read(&text), ErrorCode::JsonlRecord, at, None);
}

// ---------------------------------------------------------------------------------------------
// Per-request records

#[test]
fn profile_jsonl_errors() {
    let text = fixture("profile/qwen3-0.6b-c1-2025-11/profile_export.jsonl");
    let read = |t: &str| read_profile_jsonl("p.jsonl", t.as_bytes()).expect_err("bad");
    // A negative start on record 3: at the value (BAD_TIMESTAMP used to have no column).
    let start = text.lines().nth(2).expect("line 3");
    let ns = start
        .split("\"request_start_ns\": ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .expect("start ns");
    let (bad, at) = edit(
        &text,
        &format!("\"request_start_ns\": {ns}"),
        0,
        "\"request_start_ns\": -5",
        "-5",
    );
    // (Each start is unique, so the edit is on line 3.)
    assert_eq!(at.0, 3);
    assert_at(
        &read(&bad),
        ErrorCode::BadTimestamp,
        at,
        Some("metadata.request_start_ns"),
    );
    // An unknown phase on line 1.
    let (bad, at) = edit(
        &text,
        "\"benchmark_phase\": \"profiling\"",
        0,
        "\"benchmark_phase\": \"cooldown\"",
        "\"cooldown\"",
    );
    assert_at(
        &read(&bad),
        ErrorCode::ProfileRecord,
        at,
        Some("metadata.benchmark_phase"),
    );
    // Metadata of the wrong shape, in JSON words.
    let bad = "{\"metadata\": 5}\n";
    let e = read(bad);
    assert_at(&e, ErrorCode::ProfileRecord, (1, 14), Some("metadata"));
    assert!(e.message.contains("expected a metadata object"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Launch facts

#[test]
fn launch_values_at_their_key_or_value() {
    let json = |t: &str| read_launch_json("launch.json", t).expect_err("refused");
    let find = |t: &str, needle: &str, nth: usize| {
        line_col(t, t.match_indices(needle).nth(nth).expect("needle").0)
    };
    let text = "{\n  \"framework\": \"vllm\",\n  \"disagg\": \"perhaps\",\n  \"prefill_endpoints\": [\"p1:8000\", \"p2\"]\n}\n";
    let e = json(text);
    assert_at(
        &e,
        ErrorCode::LaunchValue,
        find(text, "\"perhaps\"", 0),
        Some("disagg"),
    );
    assert_eq!(find(text, "\"perhaps\"", 0), (3, 13));
    let fixed = text.replace("\"perhaps\"", "true");
    let e = json(&fixed);
    assert_at(
        &e,
        ErrorCode::LaunchValue,
        find(&fixed, "\"p2\"", 0),
        Some("prefill_endpoints[1]"),
    );
    // An unknown key: at the key.
    let t = "{\"framework\": \"sglang\",\n \"frameworks\": \"x\"}";
    assert_at(&json(t), ErrorCode::LaunchValue, (2, 2), Some("frameworks"));
    // A key given twice (a JSON map would keep only the last): at the second.
    let t = "{\"kv_offloading\": \"cpu\", \"kv_offloading\": \"none\"}";
    let e = json(t);
    assert_at(
        &e,
        ErrorCode::LaunchValue,
        find(t, "\"kv_offloading\"", 1),
        Some("kv_offloading"),
    );
    assert!(e.message.contains("given twice"), "{e}");
    // Two spellings of one key: at the second spelling.
    let t = "{\"DISAGG\": \"1\", \"disagg\": true}";
    assert_at(
        &json(t),
        ErrorCode::LaunchValue,
        find(t, "\"disagg\"", 0),
        Some("disagg"),
    );
    // An endpoint given two roles, once as `a:1` and once as its URL: at the second role.
    let t = "{\"endpoint_roles\": {\"a:1\": \"prefill\", \"http://A:1/m\": \"decode\"}}";
    let e = json(t);
    assert_at(
        &e,
        ErrorCode::LaunchValue,
        find(t, "\"decode\"", 0),
        Some("endpoint_roles.http://A:1/m"),
    );
    // Repeated with two roles under the very same spelling (a JSON map keeps the last).
    let t = "{\"endpoint_roles\": {\"a:1\": \"prefill\", \"a:1\": \"decode\"}}";
    assert_at(
        &json(t),
        ErrorCode::LaunchValue,
        find(t, "\"decode\"", 0),
        Some("endpoint_roles.a:1"),
    );
    // The same endpoint in two lists, named by the keys as written.
    let t = "{\"prefill_endpoints\": [\"a:1\"],\n \"decode_endpoints\": [\"b:2\", \"http://a:1\"]}";
    let e = json(t);
    assert_at(
        &e,
        ErrorCode::LaunchValue,
        find(t, "\"http://a:1\"", 0),
        Some("decode_endpoints[1]"),
    );
    assert!(
        e.message.contains("prefill_endpoints and decode_endpoints"),
        "{e}"
    );
    // JSON errors of the file itself: in characters.
    let t = "{\"framework\": \"é\" \"x\"}";
    assert_at(&json(t), ErrorCode::JsonSyntax, find(t, "\"x\"", 0), None);
    let e = json("\n[1]");
    assert_at(&e, ErrorCode::JsonShape, (2, 1), None);
}

// ---------------------------------------------------------------------------------------------
// Capture manifest (through a run)

#[test]
fn capture_manifest_paths_have_no_placeholder() {
    let prom = fixture("prometheus/prathmesh-agg_vllm_tp4-conc16.after.prom");
    let manifest = "{\"captures\": [\n  {\"file\": \"after.prom\", \"endpoint_url\": \"http://h:8000/metrics\",\n   \"timestamp_ns\": \"soon\"}\n]}";
    let inputs = [
        InputFile::bytes("after.prom", prom.as_bytes()),
        InputFile::bytes("captures.json", manifest.as_bytes()),
    ];
    let e = read_run(&inputs, &RunOptions::default()).expect_err("bad manifest");
    let at = line_col(manifest, manifest.find("\"soon\"").expect("value"));
    assert_at(
        &e,
        ErrorCode::JsonShape,
        at,
        Some("captures[0].timestamp_ns"),
    );
    assert_eq!(e.file, "captures.json");
}

// ---------------------------------------------------------------------------------------------
// Server-metrics CSV

#[test]
fn csv_errors_at_the_cell() {
    let text = fixture("csv/conc1_kvnone.server_metrics_export.csv");
    let read = |t: &str| {
        read_server_metrics_csv("m.csv", t.as_bytes(), &FamilyFilter::all()).expect_err("bad")
    };
    let row = "localhost:8889,counter,process_cpu_seconds,seconds,217.3300,0.0599,";
    let (bad, at) = edit(&text, row, 0, &row.replace("0.0599", "n/a"), "n/a");
    let e = read(&bad);
    assert_eq!(e.code, ErrorCode::CsvSyntax);
    assert_eq!(
        (e.position.line, e.position.column),
        (Some(at.0), Some(at.1)),
        "{e}"
    );
    assert!(e.message.contains("`rate`"), "{e}");
    // A type that is no metric type: at the Type cell.
    let (bad, at) = edit(
        &text,
        "localhost:8889,counter,http_requests",
        0,
        "localhost:8889,countr,http_requests",
        "countr",
    );
    let e = read(&bad);
    assert_eq!(
        (e.position.line, e.position.column),
        (Some(at.0), Some(at.1)),
        "{e}"
    );
    // Text after a closing quote: at that character.
    let (bad, at) = edit(
        &text,
        ",\"Total number of requests",
        0,
        ",\"Total number\"x of requests",
        "x of",
    );
    let e = read(&bad);
    assert_eq!(
        (e.position.line, e.position.column),
        (Some(at.0), Some(at.1)),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------------
// Prometheus text

#[test]
fn prometheus_columns_count_characters() {
    let e = read_prometheus_text(
        "c.prom",
        "# TYPE g gauge\ng{model=\"ça-😀\"} 1,5\n".as_bytes(),
        &CaptureMeta::default(),
        &FamilyFilter::all(),
    )
    .expect_err("bad value");
    assert_eq!(e.code, ErrorCode::PromSyntax);
    assert_eq!(
        (e.position.line, e.position.column),
        (Some(2), Some(17)),
        "{e}"
    );
    assert_user_facing(&e);
}

// ---------------------------------------------------------------------------------------------
// Every error of many broken inputs is user-facing

/// Truncate and corrupt real fixtures of every JSON format; whatever the error, no column 0,
/// no `?` step, no Rust type name, and a column only with a line.
#[test]
fn no_placeholder_positions_in_broken_inputs() {
    let server = fixture("server-json/handmade-schema-1.1.server_metrics_export.json");
    let summary = fixture("profile/qwen3-0.6b-c1-2025-11/profile_export_aiperf.json");
    let profile: String = fixture("profile/qwen3-0.6b-c1-2025-11/profile_export.jsonl")
        .lines()
        .take(2)
        .map(|l| format!("{l}\n"))
        .collect();
    let jsonl = fixture("jsonl/legacy-2025-11-dynamo-real.server_metrics_export.jsonl");
    let launch = fixture("sweep/conc8/launch.json");
    let mut errors = 0usize;
    let mut check = |e: ReadError| {
        errors += 1;
        assert_user_facing(&e);
        assert!(
            e.position.column.is_none() || e.position.line.is_some(),
            "{e}"
        );
    };
    type Reader = fn(&str) -> Result<(), ReadError>;
    let readers: [(&str, Reader); 5] = [
        (&server, |t| {
            read_server_metrics_json("x", t.as_bytes(), &FamilyFilter::all()).map(|_| ())
        }),
        (&summary, |t| {
            read_run_summary("x", t.as_bytes()).map(|_| ())
        }),
        (&profile, |t| {
            read_profile_jsonl("x", t.as_bytes()).map(|_| ())
        }),
        (&jsonl, |t| {
            read_scrapes_jsonl("x", t.as_bytes(), &FamilyFilter::all()).map(|_| ())
        }),
        (&launch, |t| read_launch_json("x", t).map(|_| ())),
    ];
    for (text, read) in readers {
        let step = (text.len() / 400).max(1);
        for cut in (0..text.len()).step_by(step) {
            if let Some(t) = text.get(..cut) {
                if let Err(e) = read(t) {
                    check(e);
                }
            }
        }
        // Replace one token by something of another shape.
        for (i, _) in text.match_indices(':').step_by(3).take(200) {
            for junk in [": \"s\"", ": [1]", ": {}", ": -1", ": true", ": 1e400"] {
                let t = format!("{}{junk}{}", &text[..i], &text[i + 1..]);
                if let Err(e) = read(&t) {
                    check(e);
                }
            }
        }
    }
    assert!(errors > 2000, "{errors} errors checked");
}
