//! Counts above 2^53 − 1 are refused by every reader (`COUNT_TOO_LARGE`, CONTRACT 7 r2), with
//! the value's line, character column and JSON path; 2^53 − 1 itself is read exactly, and
//! gauges (which may legitimately be that large) are never refused.
//!
//! Each case edits one value of a real fixture (see each fixture folder's ORIGIN.md) and
//! computes the expected position itself from the edited text.

use kvledger::model::{SampleValue, Scrape, ServerMetricsExport, Stats};
use kvledger::read::profile_jsonl::read_profile_jsonl;
use kvledger::read::profile_summary::read_run_summary;
use kvledger::read::prometheus_text::read_prometheus_text;
use kvledger::read::scrape_jsonl::read_scrapes_jsonl;
use kvledger::read::server_csv::read_server_metrics_csv;
use kvledger::read::server_json::read_server_metrics_json;
use kvledger::read::{read_run, CaptureMeta, FamilyFilter, InputFile, RunOptions};
use kvledger::{ErrorCode, ReadError};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
const MAX: &str = "9007199254740991";
const ABOVE: &str = "9007199254740992";

fn fixture(path: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}/{path}")).expect("fixture")
}

/// 1-based line and character column of byte `offset` of `text`, counted here (not by the
/// library under test).
fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line as u32, column as u32)
}

/// Replace the value after the `nth` occurrence of `lead` + `old` with `new`: the edited text
/// and the expected position of the new value.
fn edit(text: &str, lead: &str, old: &str, nth: usize, new: &str) -> (String, (u32, u32)) {
    let needle = format!("{lead}{old}");
    let at = text
        .match_indices(&needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("occurrence {nth} of `{needle}`"))
        .0
        + lead.len();
    let mut out = String::with_capacity(text.len() + new.len());
    out.push_str(&text[..at]);
    out.push_str(new);
    out.push_str(&text[at + old.len()..]);
    let pos = line_col(&out, at);
    (out, pos)
}

/// The refusal: code, line, column, JSON path, and the value named in the message.
fn assert_refused(e: &ReadError, at: (u32, u32), path: Option<&str>, shown: &str) {
    assert_eq!(e.code, ErrorCode::CountTooLarge, "{e}");
    assert_eq!(
        (e.position.line, e.position.column),
        (Some(at.0), Some(at.1)),
        "{e}"
    );
    assert_eq!(e.position.json_path.as_deref(), path, "{e}");
    assert!(e.message.contains(shown), "{}", e.message);
    assert!(e.message.contains("2^53 − 1"), "{}", e.message);
}

// ---------------------------------------------------------------------------------------------
// Server-metrics JSON

const SERVER_JSON: &str = "server-json/vllm-1-endpoint-timeslices.server_metrics_export.json";

fn server_json(text: &str) -> Result<ServerMetricsExport, ReadError> {
    read_server_metrics_json("export.json", text.as_bytes(), &FamilyFilter::all())
}

fn stats<'a>(e: &'a ServerMetricsExport, family: &str) -> &'a Stats {
    &e.metrics
        .iter()
        .find(|f| f.name == family)
        .expect("family")
        .series[0]
        .stats
}

#[test]
fn server_json_counter_total_at_and_above_the_limit() {
    let text = fixture(SERVER_JSON);
    let (ok, _) = edit(&text, "\"total\": ", "19.0", 0, MAX);
    let export = server_json(&ok).expect("2^53 - 1 is read");
    assert!(matches!(
        stats(&export, "vllm:request_success"),
        Stats::Counter(c) if c.total.get() == Some(9_007_199_254_740_991.0)
    ));
    for above in [ABOVE, "9007199254740993", "9.007199254740992e15", "1e300"] {
        let (bad, at) = edit(&text, "\"total\": ", "19.0", 0, above);
        let e = server_json(&bad).expect_err(above);
        assert_refused(
            &e,
            at,
            Some("metrics.vllm:request_success.series[0].stats.total"),
            "counter value at `metrics.vllm:request_success.series[0].stats.total`",
        );
    }
    // A timeslice's cumulative total.
    let (bad, at) = edit(&text, "\"total\": ", "9.0", 0, ABOVE);
    let e = server_json(&bad).expect_err("timeslice");
    assert_refused(
        &e,
        at,
        Some("metrics.vllm:request_success.series[0].timeslices[1].total"),
        ABOVE,
    );
}

#[test]
fn server_json_histogram_counts_but_not_its_sum() {
    let text = fixture(SERVER_JSON);
    let family = "metrics.vllm:e2e_request_latency_seconds.series[0]";
    for (lead, old, nth, path) in [
        ("\"+Inf\": ", "19", 0, "buckets.+Inf"),
        ("\"count\": ", "19", 0, "stats.count"),
        ("\"count\": ", "0", 0, "timeslices[0].count"),
        ("\"+Inf\": ", "0", 0, "timeslices[0].buckets.+Inf"),
    ] {
        let (ok, _) = edit(&text, lead, old, nth, MAX);
        server_json(&ok).expect("2^53 - 1 is read");
        let (bad, at) = edit(&text, lead, old, nth, ABOVE);
        let e = server_json(&bad).expect_err(path);
        assert_refused(&e, at, Some(&format!("{family}.{path}")), "histogram count");
    }
    // `sum` is not a count; gauges may be that large.
    let (big_sum, _) = edit(&text, "\"sum\": ", "259.87", 0, "1e300");
    server_json(&big_sum).expect("a sum is not a count");
    let (big_gauge, _) = edit(&text, "\"max\": ", "0.202", 0, "1.8446744073709552e19");
    let export = server_json(&big_gauge).expect("gauges are not counts");
    assert!(matches!(
        stats(&export, "vllm:kv_cache_usage_perc"),
        Stats::Gauge(g) if g.max.get() == Some(1.8446744073709552e19)
    ));
}

#[test]
fn server_json_warmup_phase_totals() {
    let text = fixture("server-json/handmade-schema-1.1.server_metrics_export.json");
    let (bad, at) = edit(&text, "\"total\": ", "4096.0", 0, ABOVE);
    let e = server_json(&bad).expect_err("warmup total");
    assert_refused(
        &e,
        at,
        Some("warmup_metrics.vllm:prompt_tokens.series[0].stats.total"),
        ABOVE,
    );
}

/// `type` after `series` (not AIPerf's order): the reader checks the series once the type is
/// known and gives the path; `read_run`, which can read the file again, adds line and column.
#[test]
fn server_json_type_after_series() {
    let text = "{\n  \"metrics\": {\n    \"vllm:prompt_tokens\": {\n      \"series\": [\n        {\"endpoint_url\": \"http://a:8000/metrics\", \"stats\": {\"total\": 5},\n         \"timeslices\": [{\"start_ns\": 1, \"end_ns\": 2, \"total\": 9007199254740992}]}\n      ],\n      \"type\": \"counter\"\n    },\n    \"vllm:kv_cache_usage_perc\": {\"series\": [{\"endpoint_url\": \"http://a:8000/metrics\", \"stats\": {\"avg\": 1e300, \"total\": 1e300}}], \"type\": \"gauge\"}\n  }\n}\n";
    let path = "metrics.vllm:prompt_tokens.series[0].timeslices[0].total";
    let e = server_json(text).expect_err("late refusal");
    assert_eq!(e.code, ErrorCode::CountTooLarge, "{e}");
    assert_eq!(e.position.json_path.as_deref(), Some(path));
    assert_eq!((e.position.line, e.position.column), (None, None));
    let e = read_run(
        &[InputFile::bytes(
            "server_metrics_export.json",
            text.as_bytes(),
        )],
        &RunOptions::default(),
    )
    .expect_err("late refusal in a run");
    let at = line_col(text, text.find(ABOVE).expect("value"));
    assert_refused(&e, at, Some(path), ABOVE);
    // The same family with its type first is refused as it streams.
    let first = text
        .replace(
            "\"vllm:prompt_tokens\": {\n",
            "\"vllm:prompt_tokens\": {\"type\": \"counter\",\n",
        )
        .replace(",\n      \"type\": \"counter\"", "");
    let e = server_json(&first).expect_err("type first");
    assert_refused(
        &e,
        line_col(&first, first.find(ABOVE).expect("value")),
        Some(path),
        ABOVE,
    );
}

// ---------------------------------------------------------------------------------------------
// Server-metrics CSV

const CSV: &str = "csv/conc1_kvnone.server_metrics_export.csv";

fn csv(text: &str) -> Result<ServerMetricsExport, ReadError> {
    read_server_metrics_csv("export.csv", text.as_bytes(), &FamilyFilter::all())
}

#[test]
fn csv_counter_totals_and_histogram_counts() {
    let text = fixture(CSV);
    for (lead, old, what) in [
        // A counter's total; a histogram's count; a bucket count inside the `buckets` cell.
        (
            "localhost:8889,counter,process_cpu_seconds,seconds,",
            "217.3300",
            "`total` of `process_cpu_seconds`",
        ),
        (
            "localhost:8889,histogram,vllm:e2e_request_latency_seconds,seconds,",
            "195",
            "`count` of `vllm:e2e_request_latency_seconds`",
        ),
        (
            ";2.0=",
            "15",
            "count of bucket `2.0` of `http_request_duration_highr_seconds`",
        ),
    ] {
        let (ok, _) = edit(&text, lead, old, 0, MAX);
        csv(&ok).expect("2^53 - 1 is read");
        let (bad, at) = edit(&text, lead, old, 0, ABOVE);
        let e = csv(&bad).expect_err(lead);
        assert_refused(&e, at, None, &format!("{what} is {ABOVE}"));
    }
    let (ok, _) = edit(
        &text,
        "localhost:8889,counter,process_cpu_seconds,seconds,",
        "217.3300",
        0,
        MAX,
    );
    let export = csv(&ok).expect("reads");
    assert!(matches!(
        stats(&export, "process_cpu_seconds"),
        Stats::Counter(c) if c.total.get() == Some(9_007_199_254_740_991.0)
    ));
    // A gauge (virtual memory bytes) far above 2^53 is read.
    let (big, _) = edit(
        &text,
        "localhost:8889,gauge,process_virtual_memory_bytes,bytes,",
        "179734010338.0483",
        0,
        "18446744073709551615",
    );
    csv(&big).expect("gauges are not counts");
}

// ---------------------------------------------------------------------------------------------
// Raw-scrape JSONL

const JSONL: &str = "jsonl/vllm-1-record.server_metrics_export.jsonl";

fn jsonl(text: &str) -> Result<Vec<Scrape>, ReadError> {
    read_scrapes_jsonl("export.jsonl", text.as_bytes(), &FamilyFilter::all()).map(|s| s.scrapes)
}

/// Read as accounting reads (lean: a histogram's buckets checked, not kept).
fn jsonl_lean(text: &str) -> Result<Vec<Scrape>, ReadError> {
    let filter = kvledger::account::families_read();
    read_scrapes_jsonl("export.jsonl", text.as_bytes(), &filter).map(|s| s.scrapes)
}

#[test]
fn jsonl_counters_by_name_and_histogram_counts() {
    // The record is line 3 of the file (a blank line and another record before it).
    let record = fixture(JSONL);
    let text = format!("{}\n{record}", record.trim_end());
    let text = text.replacen('\n', "\n\n", 1);
    for (lead, old, nth, path, what) in [
        // `vllm:request_success` is a known counter (AIPerf strips `_total`).
        (
            "\"vllm:request_success\":[{\"value\":",
            "1500.0",
            1,
            "metrics.vllm:request_success[0].value",
            "counter value",
        ),
        (
            "\"+Inf\":",
            "1500.0",
            1,
            "metrics.vllm:time_to_first_token_seconds[0].buckets.+Inf",
            "histogram bucket count",
        ),
        (
            "\"count\":",
            "1500.0",
            1,
            "metrics.vllm:time_to_first_token_seconds[0].count",
            "histogram count",
        ),
    ] {
        let (ok, _) = edit(&text, lead, old, nth, MAX);
        jsonl(&ok).expect("2^53 - 1 is read");
        jsonl_lean(&ok).expect("2^53 - 1 is read lean");
        let (bad, at) = edit(&text, lead, old, nth, ABOVE);
        assert_eq!(at.0, 3);
        let e = jsonl(&bad).expect_err(path);
        assert_refused(&e, at, Some(path), &format!("{what} at `{path}`"));
        assert_eq!(jsonl_lean(&bad).expect_err(path), e, "lean: {path}");
    }
    let (ok, _) = edit(
        &text,
        "\"vllm:request_success\":[{\"value\":",
        "1500.0",
        0,
        MAX,
    );
    let scrapes = jsonl(&ok).expect("reads");
    let fam = scrapes[0]
        .families()
        .find(|f| f.name == "vllm:request_success")
        .expect("family");
    assert!(
        matches!(*fam.samples.get(0).unwrap().value, SampleValue::Scalar { value } if value == 9_007_199_254_740_991.0)
    );
    // A sum is not a count; a `_total` family is a counter whatever its prefix.
    let (big_sum, _) = edit(&text, "\"sum\":", "32.456", 1, "1e300");
    jsonl(&big_sum).expect("a sum is not a count");
    let total = text.replacen(
        "\"metrics\":{",
        "\"metrics\":{\"process_cpu_seconds_total\":[{\"value\":9007199254740992.0}],",
        1,
    );
    let e = jsonl(&total).expect_err("_total");
    let at = line_col(&total, total.find(ABOVE).expect("value"));
    assert_refused(
        &e,
        at,
        Some("metrics.process_cpu_seconds_total[0].value"),
        ABOVE,
    );
}

/// A family key repeated in one record (its samples merge): the refusal points at the value in
/// the occurrence that holds it, also after an occurrence of legacy summary samples only.
#[test]
fn jsonl_repeated_family_keys() {
    let line = "{\"endpoint_url\":\"u\",\"timestamp_ns\":1,\"metrics\":{\"vllm:prompt_tokens\":[{\"summary\":{\"0.5\":1},\"sum\":1,\"count\":1}],\"vllm:prompt_tokens\":[{\"value\":5}],\"vllm:prompt_tokens\":[{\"value\":9007199254740992}]}}\n";
    let e = jsonl(line).expect_err("third occurrence");
    let at = line_col(line, line.find(ABOVE).expect("value"));
    assert_refused(&e, at, Some("metrics.vllm:prompt_tokens[0].value"), ABOVE);
}

/// A family that is neither typed (JSONL has no types) nor a counter by name may be a gauge:
/// the reader keeps where its large values are, and the run refuses them only when another
/// export types the family as a counter.
#[test]
fn jsonl_untyped_families_are_decided_by_the_run() {
    let record = fixture(JSONL);
    let big = |family: &str| {
        record.replacen(
            "\"metrics\":{",
            &format!("\"metrics\":{{\"{family}\":[{{\"labels\":{{\"generation\":\"0\"}},\"value\":1.8446744073709552e19}}],"),
            1,
        )
    };
    let gauge = big("process_virtual_memory_max_bytes");
    let scrapes = jsonl(&gauge).expect("maybe a gauge: read");
    let noted = &scrapes[0].untyped_large;
    assert_eq!(noted.len(), 1);
    assert_eq!(noted[0].family, "process_virtual_memory_max_bytes");
    let run = read_run(
        &[InputFile::bytes(
            "server_metrics_export.jsonl",
            gauge.as_bytes(),
        )],
        &RunOptions::default(),
    );
    assert!(run.is_ok(), "no export types it: read");

    // `python_gc_collections` is a counter in the CSV export of the same run.
    let counter = big("python_gc_collections");
    let csv_text = fixture(CSV);
    let inputs = [
        InputFile::bytes("server_metrics_export.jsonl", counter.as_bytes()),
        InputFile::bytes("server_metrics_export.csv", csv_text.as_bytes()),
    ];
    let e = read_run(&inputs, &RunOptions::default()).expect_err("typed as a counter elsewhere");
    assert_eq!(e.file, "server_metrics_export.jsonl");
    let at = line_col(
        &counter,
        counter.find("1.8446744073709552e19").expect("value"),
    );
    assert_refused(
        &e,
        at,
        Some("metrics.python_gc_collections[0].value"),
        "a counter in another export of the run",
    );
}

// ---------------------------------------------------------------------------------------------
// Prometheus text

const PROM: &str = "prometheus/prathmesh-agg_vllm_tp4-conc16.after.prom";

fn prom(text: &str) -> Result<Scrape, ReadError> {
    read_prometheus_text(
        "after.prom",
        text.as_bytes(),
        &CaptureMeta::default(),
        &FamilyFilter::all(),
    )
}

#[test]
fn prometheus_counters_and_histogram_counts() {
    let text = fixture(PROM);
    for (lead, old, what) in [
        ("vllm:prompt_tokens_total{engine=\"0\",model_name=\"minimax\"} ", "3.4068033e+07", "counter value of `vllm:prompt_tokens`"),
        ("vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"0.5\",model_name=\"minimax\"} ", "77.0", "histogram bucket count"),
    ] {
        let (ok, _) = edit(&text, lead, old, 0, MAX);
        prom(&ok).expect("2^53 - 1 is read");
        let (bad, at) = edit(&text, lead, old, 0, "9.007199254740992e+15");
        let e = prom(&bad).expect_err(lead);
        assert_refused(&e, at, None, what);
    }
    // The `_count` of a histogram.
    let count_line = text
        .lines()
        .find(|l| l.starts_with("vllm:e2e_request_latency_seconds_count"))
        .expect("count line");
    let (lead, old) = count_line.rsplit_once(' ').expect("value");
    let (bad, at) = edit(&text, &format!("{lead} "), old, 0, ABOVE);
    assert_refused(&prom(&bad).expect_err("count"), at, None, "histogram count");
    // A gauge may be far above 2^53.
    let (big, _) = edit(
        &text,
        "process_virtual_memory_bytes ",
        "5.2678230016e+010",
        0,
        "1.8446744073709552e+19",
    );
    prom(&big).expect("gauges are not counts");
}

#[test]
fn prometheus_untyped_samples() {
    // No `# TYPE`: `_total` makes a counter; another name may be a gauge (kept for the run).
    let e = prom("# HELP x\nup 1\nmy_requests_total 9007199254740992\n").expect_err("_total");
    assert_refused(&e, (3, 19), None, ABOVE);
    let s = prom("other_bytes 1.8446744073709552e+19\n").expect("maybe a gauge");
    assert_eq!(s.untyped_large.len(), 1);
    assert_eq!(s.untyped_large[0].value, "1.8446744073709552e+19");
    assert_eq!(s.untyped_large[0].position.column, Some(13));
}

// ---------------------------------------------------------------------------------------------
// Per-request records and the run summary

#[test]
fn profile_token_counts() {
    let text = fixture("profile/qwen3-0.6b-c1-2025-11/profile_export.jsonl");
    for (tag, old, nth) in [
        ("input_sequence_length", "100", 5),
        ("output_sequence_length", "200", 5),
    ] {
        let lead = format!("\"{tag}\": {{\"value\": ");
        let (ok, _) = edit(&text, &lead, old, nth, MAX);
        let records = read_profile_jsonl("p.jsonl", ok.as_bytes())
            .expect("2^53 - 1")
            .records;
        let value = match tag {
            "input_sequence_length" => records[nth].input_sequence_length,
            _ => records[nth].output_sequence_length,
        };
        assert_eq!(value, Some(9_007_199_254_740_991));
        for above in [ABOVE, "9007199254740992.0", "1e20"] {
            let (bad, at) = edit(&text, &lead, old, nth, above);
            assert_eq!(at.0 as usize, nth + 1);
            let e = read_profile_jsonl("p.jsonl", bad.as_bytes()).expect_err(above);
            assert_refused(
                &e,
                at,
                Some(&format!("metrics.{tag}.value")),
                &format!("token count `{tag}`"),
            );
        }
    }
    // The usage count the server reported.
    let text = fixture("profile/inferencex-mi355x-conc1/profile_export.jsonl");
    let (bad, at) = edit(
        &text,
        "\"usage_prompt_tokens\":{\"value\":",
        "192422",
        0,
        ABOVE,
    );
    let e = read_profile_jsonl("p.jsonl", bad.as_bytes()).expect_err("usage");
    assert_refused(&e, at, Some("metrics.usage_prompt_tokens.value"), ABOVE);
}

#[test]
fn run_summary_counts() {
    let text = fixture("profile/qwen3-0.6b-c1-2025-11/profile_export_aiperf.json");
    for (lead, old, path) in [
        (
            "\"unit\": \"tokens\",\n    \"avg\": ",
            "6400.0",
            "total_isl.avg",
        ),
        (
            "\"unit\": \"requests\",\n    \"avg\": ",
            "64.0",
            "request_count.avg",
        ),
    ] {
        let (ok, _) = edit(&text, lead, old, 0, MAX);
        read_run_summary("s.json", ok.as_bytes()).expect("2^53 - 1 is read");
        let (bad, at) = edit(&text, lead, old, 0, "9007199254740992.0");
        let e = read_run_summary("s.json", bad.as_bytes()).expect_err(path);
        assert_refused(
            &e,
            at,
            Some(path),
            &format!("run summary count at `{path}`"),
        );
    }
    // The legacy layout keeps its metrics under `records`.
    let text = fixture("profile/legacy-2025-10-gpt-oss-run1/profile_export_aiperf.json");
    let (bad, at) = edit(
        &text,
        "\"header\": \"Request Count\",\n      \"avg\": ",
        "89.0",
        0,
        ABOVE,
    );
    let e = read_run_summary("s.json", bad.as_bytes()).expect_err("legacy");
    assert_refused(&e, at, Some("records.request_count.avg"), ABOVE);
    // Timestamps above 2^53 are not counts.
    let text = fixture("profile/qwen3-0.6b-c1-2025-11/profile_export_aiperf.json");
    let s = read_run_summary("s.json", text.as_bytes()).expect("reads");
    assert_eq!(s.total_isl, Some(6400.0));
    assert!(text.contains("\"avg\": 1.7625515347970678e+18"));
}
