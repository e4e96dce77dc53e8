//! Every limit, each named in its error with its value and what was observed, checked before
//! the work it bounds: the body's size, a gzip bomb, nesting depth (no recursion), strings,
//! series, timeslices, label keys, bundle members, the result JSON's size, the memory budget.

mod validate_support;

use kvledger::validate::{MemoryProbe, UploadLimits, UploadValidator};
use validate_support::*;

const RESULT: &[u8] = br#"{"server_gpu_cache_hit_rate": 0.5}"#;

/// The one error of `v` is `LIMIT_EXCEEDED` of `name`; its observed value (absent for the
/// byte counts of a stream: reading stops at the limit, the total is not known).
fn limit_hit(v: &kvledger::validate::UploadVerdict, name: &str) -> Option<u64> {
    assert_eq!(outcome(v), "limit_exceeded", "{:#?}", v.errors);
    assert_eq!(codes(&v.errors), ["LIMIT_EXCEEDED"]);
    let hit = v.errors[0].limit.as_ref().expect("the limit is named");
    assert_eq!(hit.name, name);
    assert_eq!(Some(hit.value), v.limits.get(name));
    assert!(
        v.errors[0].message.contains(&hit.value.to_string()),
        "{}",
        v.errors[0].message
    );
    assert!(v.claims.is_empty() && v.recomputed.is_none());
    hit.observed
}

fn with(name: &str, value: u64) -> UploadLimits {
    let mut l = UploadLimits::default();
    l.set(name, value).expect("known limit");
    l
}

#[test]
fn bytes_are_refused_at_the_first_chunk_past_the_limit() {
    let mut v = UploadValidator::new(with("bytes", 1000)).expect("limits");
    assert!(v.push(&[b' '; 600]));
    assert!(
        !v.push(&[b' '; 600]),
        "the chunk crossing the limit stops the upload"
    );
    assert!(!v.push(RESULT), "nothing more is taken");
    assert_eq!(v.bytes_read(), 1200);
    let verdict = v.finish();
    assert_eq!(limit_hit(&verdict, "bytes"), None);
    assert_eq!(verdict.errors[0].byte_offset, Some(1000));
}

#[test]
fn a_gzip_bomb_is_stopped_at_the_decompressed_limit() {
    // A bundle of 64 members of 16 MiB of zeros: 1 GiB once decompressed, about 1 MB sent
    // (each header and the zeros are gzip members of their own: one gzip stream).
    let zeros = gzip(&vec![0u8; 16 << 20]);
    let mut bomb = gzip(&member("result.json", RESULT, b'0'));
    for i in 0..64 {
        bomb.extend(gzip(&header(&format!("plots/p{i}.png"), 16 << 20, b'0')));
        bomb.extend(&zeros);
    }
    assert!(bomb.len() < 2 << 20, "{}", bomb.len());
    let limits = UploadLimits::default();
    let mut v = UploadValidator::new(limits).expect("limits");
    let mut sent = 0;
    for c in bomb.chunks(64 << 10) {
        sent += c.len();
        if !v.push(c) {
            break;
        }
    }
    let verdict = v.finish();
    assert_eq!(limit_hit(&verdict, "decompressed_bytes"), None);
    // Stopped at the limit (128 MiB of the 1 GiB), long before the end of what was sent.
    assert!(sent < bomb.len() / 4, "read {sent} of {} bytes", bomb.len());
    // Zeros alone are no format at all: refused after the first inflated piece.
    let naive: Vec<u8> = zeros
        .iter()
        .copied()
        .cycle()
        .take(zeros.len() * 64)
        .collect();
    let mut v = UploadValidator::new(limits).expect("limits");
    assert!(!v.push(&naive[..64 << 10]));
    assert_eq!(codes(&v.finish().errors), ["UNKNOWN_FORMAT"]);
}

#[test]
fn deep_nesting_is_refused_on_the_raw_bytes_without_recursion() {
    // A million open brackets: a recursive parser would overflow the stack.
    let deep = vec![b'['; 1_000_000];
    let v = verdict(&deep);
    assert_eq!(limit_hit(&v, "nesting_depth"), Some(65));
    assert_eq!(v.errors[0].byte_offset, Some(64));
    let mut obj = b"{\"a\":".repeat(200);
    obj.extend(b"1");
    obj.extend(b"}".repeat(200));
    let v = verdict_with(&obj, with("nesting_depth", 128));
    assert_eq!(limit_hit(&v, "nesting_depth"), Some(129));
    assert!(v.errors[0]
        .json_path
        .as_deref()
        .is_some_and(|p| p.starts_with("a.a.a")));
    // Deeper than serde_json can parse cannot be asked for.
    let e = UploadValidator::new(with("nesting_depth", 129))
        .err()
        .expect("refused");
    assert_eq!(e.name, "nesting_depth");
    // Within the limit, brackets in strings are text.
    let ok = format!(
        "{{\"s\": \"{}\", \"server_gpu_cache_hit_rate\": 0.1}}",
        "[".repeat(1000)
    );
    assert_eq!(outcome(&verdict(ok.as_bytes())), "accepted");
}

#[test]
fn deep_nesting_in_an_artifact_names_the_file() {
    let mut deep = b"{\"metrics\": ".to_vec();
    deep.extend(vec![b'['; 100]);
    let v = verdict(&tar(&[
        ("result.json", RESULT),
        ("aiperf_artifacts/server_metrics_export.json", &deep),
    ]));
    assert_eq!(limit_hit(&v, "nesting_depth"), Some(65));
    assert_eq!(
        v.errors[0].file.as_deref(),
        Some("aiperf_artifacts/server_metrics_export.json")
    );
    assert_eq!((v.errors[0].line, v.errors[0].column), (Some(1), Some(76)));
}

#[test]
fn string_length_in_the_result_and_in_member_names() {
    let long = format!("{{\"note\": \"{}\"}}", "x".repeat(70_000));
    assert_eq!(
        limit_hit(&verdict(long.as_bytes()), "string_length"),
        Some(65_537)
    );
    let v = verdict(&tar(&[("result.json", RESULT), (&"n".repeat(90), b"")]));
    assert_eq!(outcome(&v), "accepted");
    let v = verdict_with(
        &tar(&[("result.json", RESULT), (&"n".repeat(90), b"")]),
        with("string_length", 50),
    );
    assert_eq!(limit_hit(&v, "string_length"), Some(90));
}

/// A schema-1.1-shaped export with `series` series of `slices` timeslices and `labels` label
/// keys each.
fn export(series: usize, slices: usize, labels: usize) -> Vec<u8> {
    let labels: Vec<String> = (0..labels).map(|i| format!("\"k{i}\": \"v\"")).collect();
    let slices: Vec<String> = (0..slices)
        .map(|i| format!("{{\"start_ns\": {i}, \"end_ns\": {}, \"total\": 1}}", i + 1))
        .collect();
    let one = format!(
        "{{\"endpoint_url\": \"http://h:8000/metrics\", \"labels\": {{{}}}, \"stats\": {{\"total\": 1}}, \"timeslices\": [{}]}}",
        labels.join(", "),
        slices.join(", ")
    );
    let all = vec![one; series].join(", ");
    format!("{{\"schema_version\": \"1.1\", \"metrics\": {{\"vllm:prompt_tokens\": {{\"type\": \"counter\", \"series\": [{all}]}}}}}}").into_bytes()
}

#[test]
fn series_timeslices_and_label_keys_of_the_artifacts() {
    let up = |e: Vec<u8>| {
        tar(&[
            ("result.json", RESULT),
            ("aiperf_artifacts/server_metrics_export.json", &e),
        ])
    };
    assert_eq!(
        limit_hit(
            &verdict_with(&up(export(5, 1, 1)), with("series", 4)),
            "series"
        ),
        Some(5)
    );
    assert_eq!(
        limit_hit(
            &verdict_with(&up(export(2, 3, 1)), with("timeslices", 5)),
            "timeslices"
        ),
        Some(6)
    );
    let v = verdict_with(&up(export(1, 1, 4)), with("label_keys", 3));
    assert_eq!(limit_hit(&v, "label_keys"), Some(4));
    assert_eq!(
        v.errors[0].json_path.as_deref(),
        Some("metrics.vllm:prompt_tokens.series[0].labels")
    );
    // Series are counted over every file of the upload: two CSV-like captures of 3 lines.
    let lines = b"a 1\nb 2\nc 3\n";
    let v = verdict_with(
        &tar(&[
            ("result.json", RESULT),
            ("a.prom", lines),
            ("b.prom", lines),
        ]),
        with("series", 5),
    );
    assert_eq!(limit_hit(&v, "series"), Some(6));
    assert_eq!(v.errors[0].file.as_deref(), Some("b.prom"));
}

#[test]
fn members_of_a_bundle() {
    let entries: Vec<(String, Vec<u8>)> = (0..5).map(|i| (format!("f{i}.bin"), vec![])).collect();
    let mut refs: Vec<(&str, &[u8])> = vec![("result.json", RESULT)];
    refs.extend(entries.iter().map(|(n, d)| (n.as_str(), d.as_slice())));
    let v = verdict_with(&tar(&refs), with("files", 4));
    assert_eq!(limit_hit(&v, "files"), Some(5));
    assert_eq!(v.errors[0].byte_offset, Some(4 * 512 + 512));
}

#[test]
fn the_result_json_size() {
    let big = format!(
        "{{\"server_gpu_cache_hit_rate\": 0.5, \"pad\": \"{}\"}}",
        "x".repeat(2000)
    );
    assert_eq!(
        limit_hit(
            &verdict_with(big.as_bytes(), with("result_json_bytes", 1000)),
            "result_json_bytes"
        ),
        None
    );
    // In a bundle the stated size is refused before its bytes are read.
    let v = verdict_with(
        &tar(&[("result.json", big.as_bytes())]),
        with("result_json_bytes", 1000),
    );
    assert_eq!(limit_hit(&v, "result_json_bytes"), Some(big.len() as u64));
    assert_eq!(v.errors[0].file.as_deref(), Some("result.json"));
}

static HEAP: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn heap() -> u64 {
    HEAP.load(std::sync::atomic::Ordering::Relaxed)
}

/// Linear memory's size, for a probe: none here (the ceiling is then the budget's slack).
fn no_memory() -> u64 {
    0
}

#[test]
fn the_memory_budget_of_the_run_reader() {
    let upload = tar(&[
        ("result.json", RESULT),
        (
            "aiperf_artifacts/server_metrics_export.json",
            &export(3, 3, 2),
        ),
    ]);
    HEAP.store(1 << 30, std::sync::atomic::Ordering::Relaxed);
    let mut v = UploadValidator::new(UploadLimits::default())
        .expect("limits")
        .with_memory_probe(MemoryProbe {
            in_use: heap,
            memory: no_memory,
        });
    v.push(&upload);
    let verdict = v.finish();
    assert_eq!(limit_hit(&verdict, "memory_budget"), Some(1 << 30));
    assert_eq!(
        verdict.errors[0].file.as_deref(),
        Some("aiperf_artifacts/server_metrics_export.json")
    );
}

#[test]
fn limits_that_cannot_be_honoured_are_refused() {
    for (name, value) in [
        ("bytes", 0),
        ("files", 0),
        ("nesting_depth", 1000),
        ("memory_budget", u64::MAX),
    ] {
        let e = UploadValidator::new(with(name, value))
            .err()
            .expect("refused");
        assert_eq!(e.name, name);
    }
    // series and timeslices may be 0: an upload without raw artifacts.
    let v = verdict_with(RESULT, with("series", 0));
    assert_eq!(outcome(&v), "accepted");
}

#[test]
fn a_known_size_past_the_limit_is_refused_before_reading() {
    let mut v = UploadValidator::new(with("bytes", 1000)).expect("limits");
    assert!(v.expect_size(1000));
    assert!(!v.expect_size(1001));
    assert!(!v.push(RESULT), "nothing is read once decided");
    assert_eq!(v.bytes_read(), 0);
    let verdict = v.finish();
    assert_eq!(limit_hit(&verdict, "bytes"), Some(1001));
}
