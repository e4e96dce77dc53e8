//! Runs the built `kvledger` binary for the CLI tests (not a test target itself), and reads
//! its `--json` envelopes.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Stdio};

/// Run `kvledger ARGS` from the repository root: (exit code, stdout, stderr). A run killed by
/// a signal has code -1.
pub fn kvledger(args: &[&str]) -> (i32, String, String) {
    kvledger_stdin(args, None)
}

/// Run `kvledger ARGS` with `stdin` written to its stdin (closed at the end), or no stdin.
pub fn kvledger_stdin(args: &[&str], stdin: Option<&[u8]>) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kvledger"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kvledger");
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // The binary may refuse before reading stdin: a closed pipe here is not a failure.
        let _ = pipe.write_all(bytes);
    }
    let out = child.wait_with_output().expect("wait for kvledger");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every stdout line as a JSON envelope (`{"kvledger": "1", "command": ..., ...}`), checked.
pub fn envelopes(out: &str, command: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("each line is one JSON");
            assert_eq!(v["kvledger"], "1", "{l}");
            assert_eq!(v["command"], command, "{l}");
            v
        })
        .collect()
}

/// The single envelope of `out`.
pub fn envelope(out: &str, command: &str) -> serde_json::Value {
    let mut all = envelopes(out, command);
    assert_eq!(all.len(), 1, "one envelope expected:\n{out}");
    all.remove(0)
}

/// An epoch-ns value as the output carries it: a decimal string (exact), never a number.
pub fn ns(v: &serde_json::Value) -> Option<u64> {
    v.as_str().and_then(|s| s.parse().ok())
}

/// A fresh empty temporary folder for one test.
pub fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("kvledger-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}
