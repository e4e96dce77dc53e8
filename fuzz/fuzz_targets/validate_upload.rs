//! validate_upload over arbitrary bytes: never a panic, and the verdict keeps its promises
//! (one JSON shape; accepted exactly when there is no error; an error's outcome is the one the
//! verdict gives when it is the gravest).
#![no_main]

use kvledger::validate::{validate_upload, UploadLimits};
use libfuzzer_sys::fuzz_target;

/// Small limits keep each run fast (a mutated gzip stream easily inflates to megabytes); every
/// limit is still reachable, and the code paths are the same as at the defaults.
fn fuzz_limits() -> UploadLimits {
    UploadLimits {
        bytes: 16 << 10,
        decompressed_bytes: 16 << 10,
        result_json_bytes: 8 << 10,
        string_length: 2 << 10,
        ..UploadLimits::default()
    }
}

fuzz_target!(|data: &[u8]| {
    let v = validate_upload(data, fuzz_limits()).expect("default limits");
    assert_eq!(v.accepted, v.errors.is_empty());
    assert!(v.errors.iter().all(|e| e.code.outcome().is_some()));
    assert!(v.warnings.iter().all(|w| w.code.outcome().is_none()));
    serde_json::to_string(&v).expect("the verdict serialises");
});
