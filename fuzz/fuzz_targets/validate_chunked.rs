//! The push API over arbitrary bytes split into arbitrary chunks (the first byte picks the
//! chunk size): the verdict is the whole upload's, whatever the chunking.
#![no_main]

use kvledger::validate::{validate_upload, UploadLimits, UploadValidator};
use libfuzzer_sys::fuzz_target;

/// The small limits of the whole-upload target (see there).
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
    let Some((&first, upload)) = data.split_first() else {
        return;
    };
    let size = usize::from(first) + 1;
    let mut v = UploadValidator::new(fuzz_limits()).expect("default limits");
    for chunk in upload.chunks(size) {
        if !v.push(chunk) {
            break;
        }
    }
    let chunked = serde_json::to_value(v.finish()).expect("serialises");
    let whole = validate_upload(upload, fuzz_limits()).expect("default limits");
    assert_eq!(chunked, serde_json::to_value(whole).expect("serialises"));
});
