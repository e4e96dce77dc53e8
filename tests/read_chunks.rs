//! The line-oriented readers give the same result whatever the chunking of their input: every
//! fixture of their formats (under tests/fixtures and examples/), read in chunks of 1, 7 and
//! 4096 bytes and in one piece, gives the same model (compared as serialised JSON) or the same
//! error. A 1-byte chunk splits every multi-byte character.

use kvledger::read::artifact::{recognise, ArtifactKind};
use kvledger::read::profile_jsonl::ProfileJsonlReader;
use kvledger::read::prometheus_text::PrometheusTextReader;
use kvledger::read::push::PushReader;
use kvledger::read::scrape_jsonl::ScrapeJsonlReader;
use kvledger::read::server_csv::ServerCsvReader;
use kvledger::read::{CaptureMeta, FamilyFilter};
mod common;

/// Chunk sizes tried; `usize::MAX` is the whole input as one chunk.
const CHUNKS: [usize; 4] = [1, 7, 4096, usize::MAX];

/// Push `bytes` in `size`-byte chunks, then finish: the result or the error, as JSON.
fn run<P: PushReader>(mut reader: P, bytes: &[u8], size: usize) -> String
where
    P::Output: serde::Serialize,
{
    let pushed = if bytes.is_empty() {
        Ok(())
    } else {
        bytes
            .chunks(size.min(bytes.len()))
            .try_for_each(|c| reader.push(c))
    };
    let result = pushed.and_then(|()| reader.finish());
    match result {
        Ok(v) => serde_json::to_string(&v).expect("model serialises"),
        Err(e) => format!(
            "error {}",
            serde_json::to_string(&e).expect("error serialises")
        ),
    }
}

/// The reader's output for `bytes` in `size`-byte chunks, or `None` for a format not read
/// line by line.
fn read_as(kind: ArtifactKind, name: &str, bytes: &[u8], size: usize) -> Option<String> {
    let all = FamilyFilter::all();
    Some(match kind {
        ArtifactKind::ProfileJsonl => run(ProfileJsonlReader::new(name), bytes, size),
        ArtifactKind::ServerMetricsJsonl => run(ScrapeJsonlReader::new(name, &all), bytes, size),
        ArtifactKind::ServerMetricsCsv => run(ServerCsvReader::new(name, &all), bytes, size),
        ArtifactKind::PrometheusText => {
            let meta = CaptureMeta::default();
            run(PrometheusTextReader::new(name, &meta, &all), bytes, size)
        }
        _ => return None,
    })
}

fn same_for_every_chunking(kind: ArtifactKind, name: &str, bytes: &[u8]) -> Option<String> {
    let whole = read_as(kind, name, bytes, usize::MAX)?;
    for size in CHUNKS {
        let got = read_as(kind, name, bytes, size)?;
        assert!(
            got == whole,
            "{name}: chunks of {size} bytes differ from the whole input\n  chunked: {}\n  whole:   {}",
            &got[..got.len().min(400)],
            &whole[..whole.len().min(400)]
        );
    }
    Some(whole)
}

#[test]
fn every_fixture_reads_the_same_in_any_chunks() {
    let files = common::fixture_files();
    let mut read = [0usize; 4];
    for path in files {
        let bytes = std::fs::read(&path).expect("fixture readable");
        let name = path.display().to_string();
        let head = &bytes[..bytes.len().min(4096)];
        let Ok(kind) = recognise(&name, head) else {
            continue;
        };
        let slot = match kind {
            ArtifactKind::ProfileJsonl => 0,
            ArtifactKind::ServerMetricsJsonl => 1,
            ArtifactKind::ServerMetricsCsv => 2,
            ArtifactKind::PrometheusText => 3,
            _ => continue,
        };
        same_for_every_chunking(kind, &name, &bytes);
        read[slot] += 1;
    }
    // Every format has fixtures, so none is checked vacuously.
    assert!(read.iter().all(|n| *n > 0), "fixtures per format: {read:?}");
}

/// Broken and non-ASCII inputs: the error (code, message, position) or the result is the same
/// in any chunks, including a multi-byte character split between two chunks.
#[test]
fn broken_and_non_ascii_inputs_read_the_same_in_any_chunks() {
    use ArtifactKind::*;
    let scrape = r#"{"endpoint_url":"http://é:1/metrics","timestamp_ns":1,"metrics":{"vllm:prompt_tokens":[{"labels":{"model_name":"ñ😀"},"value":3}]}}"#;
    let cases: Vec<(ArtifactKind, &str, Vec<u8>, bool)> = vec![
        (ServerMetricsJsonl, "ok.jsonl", format!("{scrape}\n{scrape}").into_bytes(), true),
        (ServerMetricsJsonl, "cut.jsonl", format!("{scrape}\n{{\"endpoint_url\":").into_bytes(), false),
        (ServerMetricsJsonl, "cut-nl.jsonl", format!("{scrape}\n{{\"endpoint_url\":\n").into_bytes(), false),
        (ServerMetricsJsonl, "bad-utf8.jsonl", b"{\"endpoint_url\":\"\xc3\x28\"}\n".to_vec(), false),
        (ServerMetricsJsonl, "shape.jsonl", br#"{"endpoint_url":"u","timestamp_ns":1,"metrics":{"a":[{"value":"x"}]}}"#.to_vec(), false),
        (ProfileJsonl, "p.jsonl", "{\"metadata\":{\"conversation_id\":\"é😀\",\"request_start_ns\":1}}\n{\"metadata\":".as_bytes().to_vec(), false),
        (ProfileJsonl, "p2.jsonl", "\u{feff}{\"metadata\":{\"benchmark_phase\":\"profiling\",\"request_start_ns\":-1}}\n".as_bytes().to_vec(), false),
        (PrometheusText, "m.prom", "# HELP a_total ünïcode\n# TYPE a_total counter\na_total{x=\"é😀\"} 2\r\nb{y=\"z\"} 1".as_bytes().to_vec(), true),
        (PrometheusText, "bad.prom", "a{x=\"é} 1\n".as_bytes().to_vec(), false),
        (ServerMetricsCsv, "q.csv", "# AIPerf Server Metrics Export (CSV)\nEndpoint,Metric,Key,Value,Description\nh:1,m,k,\"é\nv\",\"d😀\"\n".as_bytes().to_vec(), true),
        (ServerMetricsCsv, "open.csv", "# AIPerf Server Metrics Export (CSV)\nEndpoint,Metric,Key,Value,Description\nh:1,m,k,\"é\nv,d\n".as_bytes().to_vec(), false),
    ];
    for (kind, name, bytes, ok) in cases {
        let whole = same_for_every_chunking(kind, name, &bytes).expect("a line format");
        assert_eq!(!whole.starts_with("error "), ok, "{name}: {whole}");
    }
}
