//! The server-metrics JSON export read in chunks split anywhere gives the same result, and the
//! same error, as the whole file: every export under tests/fixtures and examples/, and broken
//! variants of them (truncated, a byte corrupted).

use kvledger::read::push::PushReader;
use kvledger::read::server_json::ExportReader;
use kvledger::read::FamilyFilter;
use std::path::PathBuf;

mod common;

fn all_exports() -> Vec<PathBuf> {
    let out: Vec<PathBuf> = common::fixture_files()
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.contains("server_metrics_export") && n.ends_with(".json"))
        })
        .collect();
    assert!(out.len() >= 15, "exports found: {}", out.len());
    out
}

/// The result (or error) as JSON text, read in chunks of `size`.
fn read_chunked(bytes: &[u8], size: usize, filter: &FamilyFilter) -> String {
    let mut r = ExportReader::new("export.json", filter.clone());
    let mut result = Ok(());
    for chunk in bytes.chunks(size.max(1)) {
        result = r.push(chunk);
        if result.is_err() {
            break;
        }
    }
    let out = match result {
        Ok(()) => r.finish(),
        Err(e) => Err(e),
    };
    match out {
        Ok(export) => serde_json::to_string(&export).expect("serialises"),
        Err(e) => format!("error {}", serde_json::to_string(&e).expect("serialises")),
    }
}

fn same_for_every_split(bytes: &[u8], filter: &FamilyFilter, what: &str) {
    let whole = read_chunked(bytes, bytes.len(), filter);
    let mut sizes = vec![7, 4096, 50_000, 65536];
    if bytes.len() < 64 * 1024 {
        sizes.push(1);
    }
    for size in sizes {
        let got = read_chunked(bytes, size, filter);
        if got != whole {
            let at = got
                .bytes()
                .zip(whole.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(whole.len()));
            let show = |s: &str| {
                s.get(at.saturating_sub(200)..(at + 200).min(s.len()))
                    .unwrap_or("")
                    .to_string()
            };
            panic!(
                "{what}: chunks of {size} differ at byte {at}:\n  got:   {}\n  whole: {}",
                show(&got),
                show(&whole)
            );
        }
    }
}

#[test]
fn every_export_reads_the_same_in_any_chunks() {
    for path in all_exports() {
        let bytes = std::fs::read(&path).expect("reads");
        let what = path.display().to_string();
        same_for_every_split(&bytes, &FamilyFilter::all(), &what);
        same_for_every_split(&bytes, &kvledger::account::families_read(), &what);
        // One fixture is truncated on purpose (tests/fixtures/sweep/ORIGIN.md).
        let broken = what.contains("run_0002");
        assert_eq!(
            read_chunked(&bytes, bytes.len(), &FamilyFilter::all()).starts_with("error"),
            broken,
            "{what} reads"
        );
    }
}

#[test]
fn broken_exports_fail_the_same_in_any_chunks() {
    for path in all_exports().into_iter().take(6) {
        let bytes = std::fs::read(&path).expect("reads");
        let what = path.display().to_string();
        for cut in [1, bytes.len() / 3, bytes.len() / 2, bytes.len() - 2] {
            same_for_every_split(
                &bytes[..cut],
                &FamilyFilter::all(),
                &format!("{what} cut {cut}"),
            );
        }
        for at in [bytes.len() / 5, bytes.len() / 2, bytes.len() * 4 / 5] {
            for bad in [b'x', b',', b'"', b'}'] {
                let mut broken = bytes.clone();
                broken[at] = bad;
                let label = format!("{what} byte {at} = {}", bad as char);
                same_for_every_split(&broken, &FamilyFilter::all(), &label);
            }
        }
    }
}

#[test]
fn a_character_split_across_chunks_reads_the_same() {
    let text = "{\"metrics\": {\"vllm:x\": {\"type\": \"counter\", \"description\": \"é😀 \\\" \\\\\",\n \"series\": [{\"endpoint_url\": \"http://a/metrics\", \"labels\": {\"k\": \"ü\"}, \"stats\": {\"total\": 5}}]}}}";
    same_for_every_split(text.as_bytes(), &FamilyFilter::all(), "multi-byte");
    let whole = read_chunked(text.as_bytes(), text.len(), &FamilyFilter::all());
    assert!(whole.contains("é😀"), "{whole}");
}
