//! The CLI over a real AIPerf folder (every file AIPerf writes: read or ignored, never an
//! error) and over a sweep tree (each run on its own, the broken one reported in its place).

#[path = "cli_support/mod.rs"]
mod cli_support;
use cli_support::{envelope, envelopes, kvledger};

const FOLDER: &str = "tests/fixtures/aiperf-folder";
const SWEEP: &str = "tests/fixtures/sweep";
const RUNS: [&str; 5] = [
    "conc1/aiperf_artifacts",
    "conc4/aiperf_artifacts/run_0",
    "conc8",
    "profile_runs/run_0001",
    "profile_runs/run_0002",
];

#[test]
fn a_real_aiperf_folder_reads_every_file_or_ignores_it() {
    let (code, out, err) = kvledger(&["inspect", "--json", FOLDER]);
    assert_eq!(code, 0, "{err}");
    let env = envelope(&out, "inspect");
    assert_eq!(env["run"], FOLDER);
    let v = &env["result"];
    let read: Vec<&str> = v["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["kind"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        read,
        [
            "profile_jsonl",
            "run_summary",
            "server_metrics_csv",
            "server_metrics_json",
            "server_metrics_jsonl"
        ]
    );
    let ignored: Vec<(String, String)> = v["ignored"]
        .as_array()
        .expect("ignored")
        .iter()
        .map(|f| {
            let name = f["name"].as_str().unwrap_or("");
            let base = name
                .strip_prefix(FOLDER)
                .unwrap_or(name)
                .trim_start_matches('/');
            (
                base.to_string(),
                f["reason"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let names: Vec<&str> = ignored.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "ORIGIN.md",
            "gpu_telemetry_export.jsonl",
            "inputs.json",
            "logs/aiperf.log",
            "plots/itl_over_time.png",
            "plots/ttft_over_time.png",
            "profile_export_aiperf.csv",
            "profile_export_aiperf_timeslices.csv",
            "profile_export_aiperf_timeslices.json",
            "profile_export_raw.jsonl",
            "server_metrics_export.parquet",
        ]
    );
    assert!(ignored.iter().all(|(_, r)| !r.is_empty()));
    assert_eq!(
        ignored[6].1, "run summary as CSV: the JSON one is read",
        "the CSV summary is not read as JSON"
    );
    // Both exports state their benchmark id; the summary of this composite states none.
    let ids = v["benchmark_ids"].as_object().expect("benchmark_ids");
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(ids.keys().any(|k| k.ends_with("server_metrics_export.csv")));

    let (code, out, err) = kvledger(&["account", FOLDER]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(&format!("run: {FOLDER}\n")), "{out}");
}

#[test]
fn sweep_json_lines_one_per_run_and_the_broken_one_in_its_place() {
    for cmd in ["account", "inspect"] {
        let (code, out, err) = kvledger(&[cmd, "--json", SWEEP]);
        assert_eq!(code, 1, "{cmd}: one run cannot be read\n{err}");
        assert!(err.contains("1 of 5 runs could not be read"), "{err}");
        let lines = envelopes(&out, cmd);
        let runs: Vec<&str> = lines
            .iter()
            .map(|l| l["run"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(runs, RUNS, "{cmd}: sorted by run folder");
        for l in &lines[..4] {
            assert!(l.get("result").is_some() && l.get("error").is_none(), "{l}");
        }
        let e = &lines[4]["error"];
        assert_eq!(e["code"], "JSON_SYNTAX");
        assert!(e["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("profile_runs/run_0002/server_metrics_export.json")));
        assert!(e["line"].as_u64().is_some(), "{e}");
        assert!(e["json_path"].as_str().is_some(), "{e}");
        assert!(!e["message"].as_str().unwrap_or("").is_empty());
    }
    // Account: each run with its own launch facts (the nearest launch.json wins).
    let (_, out, _) = kvledger(&["account", "--json", SWEEP]);
    let lines = envelopes(&out, "account");
    let unified = |i: usize| lines[i]["result"]["cache_validity"]["roles"]["unified"].clone();
    assert_eq!(
        unified(0),
        serde_json::json!(["http://localhost:8889/metrics"])
    );
    assert_eq!(
        unified(1),
        serde_json::json!(["http://localhost:8890/metrics"])
    );
    assert_eq!(
        unified(2),
        serde_json::json!(["http://localhost:8894/metrics"])
    );
}

#[test]
fn sweep_text_shows_every_run_and_the_error_with_its_position() {
    let (code, out, _) = kvledger(&["account", SWEEP]);
    assert_eq!(code, 1);
    for run in RUNS {
        assert!(
            out.contains(&format!("run: {run}\n")),
            "{run} missing:\n{out}"
        );
    }
    let broken = out
        .split("run: profile_runs/run_0002\n")
        .nth(1)
        .expect("broken run's section");
    assert!(
        broken.starts_with("  error JSON_SYNTAX in "),
        "error in the run's place:\n{broken}"
    );
    assert!(
        broken.contains("line ") && broken.contains("column "),
        "{broken}"
    );
    assert!(
        out.contains("not in any run:") && out.contains("NOTES.md"),
        "{out}"
    );
    let (code, out, _) = kvledger(&["inspect", SWEEP]);
    assert_eq!(code, 1);
    assert!(out.contains("ignored  tests/fixtures/sweep/conc1/server.log  (log file: not read)"));
}

#[test]
fn a_single_run_inside_a_sweep_folder_keeps_the_single_run_output() {
    let (code, out, err) = kvledger(&["account", "--json", "tests/fixtures/sweep/conc8"]);
    assert_eq!(code, 0, "{err}");
    let v = envelope(&out, "account");
    assert_eq!(v["run"], "tests/fixtures/sweep/conc8");
    assert!(v["result"].get("cache_validity").is_some());
    // A broken single run is still an error of the command: on stderr (text), and as the
    // run's error envelope under --json.
    let broken = "tests/fixtures/sweep/profile_runs/run_0002";
    let (code, out, err) = kvledger(&["account", broken]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(err.contains("JSON_SYNTAX"), "{err}");
    let (code, out, _) = kvledger(&["account", "--json", broken]);
    assert_eq!(code, 1);
    assert_eq!(envelope(&out, "account")["error"]["code"], "JSON_SYNTAX");
}

#[test]
fn explicit_launch_replaces_a_broken_launch_json_unread() {
    let dir = std::env::temp_dir().join(format!("kvledger-cli-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp");
    for f in ["server_metrics_export.csv", "profile_export_aiperf.json"] {
        std::fs::copy(format!("{SWEEP}/conc8/{f}"), dir.join(f)).expect("copy");
    }
    std::fs::write(dir.join("launch.json"), "{\"framework\": \"vllm\", ").expect("write");
    let d = dir.display().to_string();
    let (code, _, err) = kvledger(&["account", &d]);
    assert_eq!(code, 1);
    assert!(
        err.contains("JSON_SYNTAX") && err.contains("launch.json"),
        "{err}"
    );
    let (code, out, err) = kvledger(&[
        "inspect",
        "--json",
        "--launch",
        "tests/fixtures/sweep/conc8/launch.json",
        &d,
    ]);
    assert_eq!(code, 0, "{err}");
    let v = &envelope(&out, "inspect")["result"];
    assert_eq!(
        v["launch"]["unified"],
        serde_json::json!(["localhost:8894"])
    );
    let ignored = v["ignored"].to_string();
    assert!(
        ignored.contains("launch.json") && ignored.contains("replaced"),
        "{ignored}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn several_run_dirs_keep_a_broken_one_in_its_place() {
    let broken = "tests/fixtures/sweep/profile_runs/run_0002";
    let good = "tests/fixtures/sweep/conc8";
    let (code, out, err) = kvledger(&["account", "--json", good, broken]);
    assert_eq!(code, 1);
    assert!(err.contains("1 of 2 runs could not be read"), "{err}");
    let lines = envelopes(&out, "account");
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["run"], good);
    assert!(lines[0]["result"].is_object());
    assert_eq!(lines[1]["run"], broken);
    assert_eq!(lines[1]["error"]["code"], "JSON_SYNTAX");
    let (code, out, _) = kvledger(&["account", good, broken]);
    assert_eq!(code, 1);
    assert!(out.contains(&format!("run: {good}\n")), "{out}");
    assert!(
        out.contains(&format!("run: {broken}\n  error JSON_SYNTAX in ")),
        "{out}"
    );
}
