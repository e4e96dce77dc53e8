//! Runs the built `kvledger` binary for the CLI tests (not a test target itself).
#![allow(dead_code)]

use std::process::Command;

/// Run `kvledger ARGS` from the repository root: (exit code, stdout, stderr).
pub fn kvledger(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kvledger"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run kvledger");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
