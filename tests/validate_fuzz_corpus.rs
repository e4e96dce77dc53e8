//! The fuzz corpus (fuzz/corpus) and the inputs of bugs the fuzzer found (fuzz/regressions),
//! replayed on the stable toolchain through the fuzz targets' own checks: no panic, the
//! verdict's invariants, and the same verdict whatever the chunking.

mod validate_support;

use kvledger::validate::{validate_upload, UploadLimits, UploadValidator};
use validate_support::root;

/// The fuzz targets' limits (fuzz/fuzz_targets/*.rs).
fn fuzz_limits() -> UploadLimits {
    UploadLimits {
        bytes: 16 << 10,
        decompressed_bytes: 16 << 10,
        result_json_bytes: 8 << 10,
        string_length: 2 << 10,
        ..UploadLimits::default()
    }
}

fn inputs() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for dir in [
        "fuzz/corpus/validate_upload",
        "fuzz/corpus/validate_chunked",
        "fuzz/regressions",
    ] {
        let Ok(entries) = std::fs::read_dir(root().join(dir)) else {
            continue;
        };
        for e in entries {
            let p = e.expect("entry").path();
            out.push((p.display().to_string(), std::fs::read(&p).expect("read")));
        }
    }
    out.sort();
    out
}

fn check(name: &str, data: &[u8], limits: UploadLimits) {
    let v = validate_upload(data, limits).expect("limits");
    assert_eq!(v.accepted, v.errors.is_empty(), "{name}");
    assert!(
        v.errors.iter().all(|e| e.code.outcome().is_some()),
        "{name}"
    );
    assert!(
        v.warnings.iter().all(|w| w.code.outcome().is_none()),
        "{name}"
    );
    let whole = serde_json::to_value(&v).expect("serialises");
    for size in [1, 5, 64, 511] {
        let mut p = UploadValidator::new(limits).expect("limits");
        for c in data.chunks(size) {
            if !p.push(c) {
                break;
            }
        }
        assert_eq!(
            serde_json::to_value(p.finish()).expect("serialises"),
            whole,
            "{name}, chunks of {size}"
        );
    }
}

#[test]
fn the_corpus_replays_without_a_panic_and_chunking_changes_nothing() {
    let inputs = inputs();
    assert!(
        inputs.len() >= 100,
        "the kept corpus has {} inputs",
        inputs.len()
    );
    for (name, data) in &inputs {
        check(name, data, fuzz_limits());
        // The chunked target's inputs start with its chunk-size byte: the rest too.
        if let Some((_, rest)) = data.split_first() {
            check(name, rest, fuzz_limits());
        }
    }
}

#[test]
fn the_corpus_replays_at_the_default_limits() {
    for (name, data) in inputs() {
        let v = validate_upload(&data, UploadLimits::default()).expect("limits");
        assert_eq!(v.accepted, v.errors.is_empty(), "{name}");
    }
}
