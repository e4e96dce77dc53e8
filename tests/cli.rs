//! The CLI binary: exit codes, table and JSON output over the bundled examples.

#[path = "cli_support/mod.rs"]
mod cli_support;
use cli_support::kvledger;

#[test]
fn inspect_table_on_a_run_dir() {
    let (code, out, err) = kvledger(&["inspect", "examples/vllm-mi355x-conc1"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("http://localhost:8889/metrics"), "{out}");
    assert!(out.contains("195 profiling"), "{out}");
}

#[test]
fn inspect_json_is_deterministic_and_exact() {
    let (code, a, err) = kvledger(&["inspect", "--json", "examples/vllm-doc-timeslices"]);
    assert_eq!(code, 0, "{err}");
    let (_, b, _) = kvledger(&["inspect", "--json", "examples/vllm-doc-timeslices"]);
    assert_eq!(a, b);
    let v: serde_json::Value = serde_json::from_str(&a).expect("json");
    assert_eq!(v["contractVersion"], "kvledger/1");
    assert!(v["endpoints"][0]["firstFetchNs"].is_u64());
}

#[test]
fn several_runs_give_an_array() {
    let (code, out, err) = kvledger(&[
        "inspect",
        "--json",
        "examples/vllm-doc-timeslices",
        "examples/sglang-minimax-conc16-captures",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v.as_array().map(Vec::len), Some(2));
}

#[test]
fn exit_codes() {
    let (code, _, err) = kvledger(&["inspect"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, _) = kvledger(&["frobnicate"]);
    assert_eq!(code, 2);
    // A file named on the command line must be recognisable.
    let (code, _, err) = kvledger(&["inspect", "Cargo.toml"]);
    assert_eq!(code, 1);
    assert!(err.contains("UNKNOWN_FORMAT"), "{err}");
    let (code, _, err) = kvledger(&[
        "inspect",
        "--capture",
        "x.prom=http://h:1/metrics@12x",
        "examples/vllm-doc-timeslices",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = kvledger(&["--version"]);
    assert_eq!(code, 0);
    assert!(out.contains("kvledger/1"));
}

#[test]
fn launch_env_refusals_are_named() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kvledger"))
        .args(["inspect", "--launch-env", "examples/vllm-doc-timeslices"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("DISAGG", "maybe")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("LAUNCH_VALUE") && err.contains("DISAGG"),
        "{err}"
    );
}
