//! Accounting never panics on input (a panic inside WASM kills the module for every later
//! call): generated runs with numbers replaced by hostile values (negative, huge, zero,
//! fractional, null) either fail to read with an error or are accounted, and the result is
//! always serialisable.

mod common;

use kvledger::account::{account_run, Policy};
use kvledger::read::{read_run, InputFile, RunOptions};
use std::path::Path;

/// Replace the `k`-th number (of every `stride`-th) in a JSON-ish text with `with`.
fn mutate(text: &str, stride: usize, offset: usize, with: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut n = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let starts_number = (c.is_ascii_digit() || c == b'-')
            && i > 0
            && matches!(bytes[i - 1], b':' | b' ' | b',' | b'[');
        if starts_number {
            let mut j = i + 1;
            while j < bytes.len()
                && (bytes[j].is_ascii_digit()
                    || matches!(bytes[j], b'.' | b'e' | b'E' | b'+' | b'-'))
            {
                j += 1;
            }
            if n % stride == offset {
                out.push_str(with);
            } else {
                out.push_str(&text[i..j]);
            }
            n += 1;
            i = j;
        } else {
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

#[test]
fn hostile_numbers_never_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/synth");
    let runs = [
        "vllm-1p1d-cpu-offload",
        "sglang-agg-hicache-tp2",
        "atom-agg-lmcache",
        "trtllm-agg-clean",
    ];
    let hostile = [
        "-1",
        "0",
        "1e308",
        "0.5",
        "null",
        "18446744073709551616",
        "-9223372036854775809",
    ];
    let mut accounted = 0;
    let mut refused = 0;
    for run in runs {
        let files = common::run_files(&root.join(run));
        for (k, with) in hostile.iter().enumerate() {
            for stride in [3usize, 17, 101] {
                let mutated: Vec<(String, Vec<u8>)> = files
                    .iter()
                    .map(|(n, b)| {
                        let text = String::from_utf8_lossy(b);
                        (
                            n.clone(),
                            mutate(&text, stride, k % stride, with).into_bytes(),
                        )
                    })
                    .collect();
                let inputs: Vec<InputFile<'_>> = mutated
                    .iter()
                    .map(|(n, b)| InputFile::bytes(n.clone(), b))
                    .collect();
                let outcome =
                    std::panic::catch_unwind(|| match read_run(&inputs, &RunOptions::default()) {
                        Ok(r) => {
                            let a = account_run(&r, &Policy::default());
                            serde_json::to_string(&a).map(|_| true).unwrap_or(false)
                        }
                        Err(_) => false,
                    });
                match outcome {
                    Ok(true) => accounted += 1,
                    Ok(false) => refused += 1,
                    Err(_) => {
                        panic!("{run}: panic with numbers replaced by {with} (stride {stride})")
                    }
                }
            }
        }
    }
    // Both outcomes occur: some mutations are refused by the readers, others accounted.
    assert!(
        accounted > 0 && refused > 0,
        "accounted {accounted}, refused {refused}"
    );
}
