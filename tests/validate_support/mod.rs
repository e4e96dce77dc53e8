//! Uploads for the validate tests: a tar writer (honest or hostile headers), gzip, a run
//! folder's files, the real CLI's accounting of a run.
#![allow(dead_code)]

use kvledger::validate::{validate_upload, UploadLimits, UploadValidator, UploadVerdict};
use std::path::{Path, PathBuf};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A ustar header (POSIX magic) for `name` of `size` bytes and type `kind`, checksum right.
pub fn header(name: &str, size: u64, kind: u8) -> [u8; 512] {
    let mut h = [0u8; 512];
    let n = name.as_bytes();
    h[..n.len().min(100)].copy_from_slice(&n[..n.len().min(100)]);
    h[100..108].copy_from_slice(b"0000644\0");
    h[108..116].copy_from_slice(b"0000000\0");
    h[116..124].copy_from_slice(b"0000000\0");
    h[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
    h[136..148].copy_from_slice(b"15024614270\0");
    h[156] = kind;
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    seal(&mut h);
    h
}

/// Write the checksum of a header.
pub fn seal(h: &mut [u8; 512]) {
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
}

/// One member: header, data, padding.
pub fn member(name: &str, data: &[u8], kind: u8) -> Vec<u8> {
    let mut out = header(name, data.len() as u64, kind).to_vec();
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out
}

/// A pax extended header record `"<len> key=value\n"`.
pub fn pax_record(key: &str, value: &str) -> String {
    let body = format!(" {key}={value}\n");
    let mut len = body.len() + 1;
    while format!("{len}{body}").len() != len {
        len += 1;
    }
    format!("{len}{body}")
}

/// A tar archive of regular files, with the end-of-archive marker.
pub fn tar(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, data) in entries {
        out.extend(member(name, data, b'0'));
    }
    out.extend_from_slice(&[0u8; 1024]);
    out
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for &b in bytes {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    c ^ 0xFFFF_FFFF
}

/// One gzip member of `bytes`.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    out.extend(miniz_oxide::deflate::compress_to_vec(bytes, 6));
    out.extend_from_slice(&crc32(bytes).to_le_bytes());
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out
}

/// Every file below `dir`, by path relative to it, sorted.
pub fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .expect("below")
                    .to_string_lossy()
                    .into_owned();
                out.push((rel, std::fs::read(&p).expect("read")));
            }
        }
    }
    out.sort();
    out
}

/// The real CLI's `account --json` result of a run directory (the envelope's `result`).
pub fn account_json(dir: &Path) -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kvledger"))
        .args(["account", "--json"])
        .arg(dir)
        .output()
        .expect("run the CLI");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let env: serde_json::Value = serde_json::from_slice(&out.stdout).expect("envelope");
    env["result"].clone()
}

/// A bundle: `result` as result.json beside the run folder's files.
pub fn bundle(result: &serde_json::Value, run: &Path) -> Vec<u8> {
    let result = serde_json::to_vec_pretty(result).expect("json");
    let mut entries: Vec<(String, Vec<u8>)> = vec![("result.json".into(), result)];
    entries.extend(files(run).into_iter().filter(|(n, _)| n != "truth.json"));
    let refs: Vec<(&str, &[u8])> = entries
        .iter()
        .map(|(n, d)| (n.as_str(), d.as_slice()))
        .collect();
    tar(&refs)
}

pub fn verdict(bytes: &[u8]) -> UploadVerdict {
    validate_upload(bytes, UploadLimits::default()).expect("default limits")
}

pub fn verdict_with(bytes: &[u8], limits: UploadLimits) -> UploadVerdict {
    validate_upload(bytes, limits).expect("limits")
}

/// The verdict of `bytes` pushed in chunks of `size`.
pub fn chunked(bytes: &[u8], size: usize, limits: UploadLimits) -> UploadVerdict {
    let mut v = UploadValidator::new(limits).expect("limits");
    for c in bytes.chunks(size) {
        if !v.push(c) {
            break;
        }
    }
    v.finish()
}

pub fn json(v: &UploadVerdict) -> serde_json::Value {
    serde_json::to_value(v).expect("serialise")
}

pub fn codes(list: &[kvledger::validate::Issue]) -> Vec<&'static str> {
    list.iter().map(|i| i.code.as_str()).collect()
}

pub fn outcome(v: &UploadVerdict) -> &'static str {
    v.outcome.as_str()
}
