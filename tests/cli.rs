//! The CLI binary: help per command, exit codes, the `--json` envelope (results and errors),
//! usage errors naming the value, `-` for stdin, a closed stdout pipe, and synth's refusals.

#[path = "cli_support/mod.rs"]
mod cli_support;
use cli_support::{envelope, envelopes, kvledger, kvledger_stdin, ns, temp_dir};

const COMMANDS: [&str; 4] = ["inspect", "account", "price", "synth"];
const ROWS: &str = "tests/fixtures/app/cypress-api-benchmarks.json";

#[test]
fn help_for_every_command_exits_0_on_stdout() {
    for cmd in COMMANDS {
        for flag in ["--help", "-h"] {
            let (code, out, err) = kvledger(&[cmd, flag]);
            assert_eq!(code, 0, "{cmd} {flag}: {err}");
            assert!(err.is_empty(), "{cmd} {flag}: {err}");
            assert!(
                out.contains(&format!("Usage: kvledger {cmd} ")),
                "{cmd} {flag}:\n{out}"
            );
            assert!(out.contains("Exit codes"), "{cmd} {flag}:\n{out}");
        }
        let (code, out, _) = kvledger(&["help", cmd]);
        assert_eq!(code, 0);
        assert!(out.contains(&format!("Usage: kvledger {cmd} ")), "{out}");
    }
    let (code, out, err) = kvledger(&["--help"]);
    assert_eq!(code, 0, "{err}");
    for cmd in COMMANDS {
        assert!(out.contains(&format!("  {cmd} ")), "{cmd} listed:\n{out}");
    }
    let (code, out, _) = kvledger(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(
        out.trim(),
        format!("kvledger {} (kvledger/1)", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn help_states_every_option_with_its_meaning_and_the_lists() {
    let help = |cmd: &str| kvledger(&[cmd, "--help"]).1;
    let run_options = [
        "--json",
        "--families",
        "--family-prefix",
        "--launch ",
        "--launch-env",
        "--capture",
        "--stdin-name",
    ];
    for cmd in ["inspect", "account"] {
        let h = help(cmd);
        for o in run_options {
            assert!(h.contains(o), "{cmd}: {o}\n{h}");
        }
    }
    let account = help("account");
    for field in [
        "max_rate_width",
        "conservation_tolerance",
        "trust_phase_totals",
        "cached_price_ratio",
        "[default: 0.005]",
    ] {
        assert!(account.contains(field), "{field}\n{account}");
    }
    let price = help("price");
    for c in kvledger::pricing::rate_card::shipped_cards() {
        assert!(price.contains(&c.name), "card {}\n{price}", c.name);
    }
    for word in [
        "strict",
        "theoretical",
        "legacy",
        "chart",
        "calculator",
        "trend",
    ] {
        assert!(price.contains(word), "{word}\n{price}");
    }
    assert!(price.contains("[default: strict]") && price.contains("[default: normalized]"));
    let synth = help("synth");
    for f in kvledger::synth::Fault::ALL {
        assert!(synth.contains(f.as_str()), "fault {f}\n{synth}");
    }
    for o in [
        "--engine",
        "--variant",
        "--topology",
        "--tiers",
        "--seed",
        "--duration",
        "--target-bytes",
        "--concurrency",
        "--dp",
        "--tp",
        "--frontend",
        "--schema",
        "--exports",
        "--no-jsonl",
        "--warmup-per-lane",
        "--out",
        "--examples",
        "--force",
        "[default: vllm]",
        "[default: 60]",
    ] {
        assert!(synth.contains(o), "{o}\n{synth}");
    }
}

#[test]
fn inspect_table_on_a_run_dir() {
    let (code, out, err) = kvledger(&["inspect", "examples/vllm-mi355x-conc1"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("http://localhost:8889/metrics"), "{out}");
    assert!(out.contains("195 profiling"), "{out}");
}

#[test]
fn inspect_json_is_one_deterministic_exact_envelope() {
    let run = "examples/vllm-doc-timeslices";
    let (code, a, err) = kvledger(&["inspect", "--json", run]);
    assert_eq!(code, 0, "{err}");
    let (_, b, _) = kvledger(&["inspect", "--json", run]);
    assert_eq!(a, b);
    let v = envelope(&a, "inspect");
    assert_eq!(v["run"], run);
    let r = &v["result"];
    assert_eq!(r["contract_version"], "kvledger/1");
    let first = ns(&r["endpoints"][0]["first_fetch_ns"]);
    assert_eq!(first, Some(1_765_793_061_967_310_848));
}

#[test]
fn several_runs_give_one_envelope_each() {
    let runs = [
        "examples/vllm-doc-timeslices",
        "examples/sglang-minimax-conc16-captures",
    ];
    let (code, out, err) = kvledger(&["inspect", "--json", runs[0], runs[1]]);
    assert_eq!(code, 0, "{err}");
    let all = envelopes(&out, "inspect");
    let labels: Vec<&str> = all
        .iter()
        .map(|v| v["run"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(labels, runs);
    assert!(all.iter().all(|v| v["result"].is_object()));
}

#[test]
fn account_json_is_the_contract_result_in_an_envelope() {
    let run = "examples/synth/vllm-agg-clean";
    let (code, out, err) = kvledger(&["account", "--json", run]);
    assert_eq!(code, 0, "{err}");
    let v = envelope(&out, "account");
    assert_eq!(v["run"], run);
    // The envelope's fields first, in this order, then the payload.
    assert!(
        out.starts_with(&format!(
            "{{\"kvledger\":\"1\",\"command\":\"account\",\"run\":\"{run}\",\"result\":{{"
        )),
        "{out}"
    );
    assert_eq!(v.as_object().map(|o| o.len()), Some(4));
    assert_eq!(v["result"]["cache_validity"]["status"], "VALID_COMPLETE");
    assert_eq!(v["result"]["contract_version"], "kvledger/1");
}

#[test]
fn exit_codes() {
    let (code, _, err) = kvledger(&["inspect"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = kvledger(&[]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = kvledger(&["frobnicate"]);
    assert_eq!(code, 2);
    assert!(err.contains("frobnicate"), "{err}");
    // A file named on the command line must be recognisable.
    let (code, _, err) = kvledger(&["inspect", "Cargo.toml"]);
    assert_eq!(code, 1);
    assert!(err.contains("UNKNOWN_FORMAT"), "{err}");
    // A suffix that is not a number stays part of the capture's URL.
    let (code, _, err) = kvledger(&[
        "inspect",
        "--capture",
        "x.prom=http://h:1/metrics@12x",
        "examples/vllm-doc-timeslices",
    ]);
    assert_eq!(code, 0, "{err}");
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

/// A shipped card with its input price replaced by `value`, whatever the field's spelling.
fn card_with_input_price(value: f64) -> String {
    let text = std::fs::read_to_string("examples/rate-cards/normalized.json").expect("card");
    let mut card: serde_json::Value = serde_json::from_str(&text).expect("card json");
    let obj = card.as_object_mut().expect("card object");
    let key = obj
        .keys()
        .find(|k| k.replace('_', "").eq_ignore_ascii_case("inputpermillion"))
        .cloned()
        .expect("an input price field");
    obj.insert(key, serde_json::json!(value));
    card.to_string()
}

#[test]
fn usage_errors_name_the_bad_value_and_exit_2() {
    let dir = temp_dir("cli-usage");
    let card = dir.join("card.json");
    std::fs::write(&card, card_with_input_price(-3.0)).expect("write card");
    let card = card.display().to_string();
    let (code, out, err) = kvledger(&["price", "--rows", ROWS, "--card", &card]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("-3") && err.contains("not a finite price") && err.contains(&card),
        "{err}"
    );
    assert!(
        !err.contains("Usage:"),
        "names the value, not the usage text: {err}"
    );

    let (code, _, err) = kvledger(&["price", "--rows", ROWS, "--card", "no-such-card"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no-such-card") && err.contains("normalized"),
        "{err}"
    );

    let (code, _, err) = kvledger(&["price", "--rows", ROWS, "--policy", "lenient"]);
    assert_eq!(code, 2);
    assert!(err.contains("'lenient'"), "{err}");

    let (code, _, err) = kvledger(&["inspect", "--capture", "before.prom", "examples/synth"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("'before.prom'") && err.contains("FILE=URL[@NS]"),
        "{err}"
    );

    let policy = dir.join("policy.json");
    std::fs::write(
        &policy,
        r#"{"max_rate_width": 0.01, "max_rate_widht": 0.02}"#,
    )
    .unwrap();
    let p = policy.display().to_string();
    let (code, _, err) = kvledger(&["account", "--policy", &p, "examples/synth/vllm-agg-clean"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("max_rate_widht") && err.contains(&p), "{err}");

    let (code, _, err) = kvledger(&["synth", "--tp", "99", "--out", "x"]);
    assert_eq!(code, 2);
    assert!(err.contains("'99'") && err.contains("--tp"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn errors_under_json_are_envelopes_with_the_exit_code_kept() {
    // An input that cannot be read: its code and position.
    let broken = "tests/fixtures/sweep/profile_runs/run_0002";
    let (code, out, err) = kvledger(&["account", "--json", broken]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("JSON_SYNTAX"), "{err}");
    let v = envelope(&out, "account");
    assert_eq!(v["run"], broken);
    let e = &v["error"];
    assert_eq!(e["code"], "JSON_SYNTAX");
    assert!(e["file"]
        .as_str()
        .is_some_and(|f| f.ends_with("run_0002/server_metrics_export.json")));
    assert!(
        e["line"].as_u64().is_some() && e["column"].as_u64().is_some(),
        "{e}"
    );
    assert!(v.get("result").is_none());

    // A file that cannot be opened, before any run.
    let (code, out, _) = kvledger(&["price", "--json", "--rows", "no/such/rows.json"]);
    assert_eq!(code, 1);
    let e = &envelope(&out, "price")["error"];
    assert_eq!(e["code"], "IO");
    assert_eq!(e["file"], "no/such/rows.json");

    // A usage error (clap's, and one of the command's own).
    let (code, out, _) = kvledger(&["inspect", "--json", "--bogus", "examples/synth"]);
    assert_eq!(code, 2);
    let e = &envelope(&out, "inspect")["error"];
    assert_eq!(e["code"], "BAD_OPTIONS");
    assert!(
        e["message"].as_str().unwrap_or("").contains("--bogus"),
        "{e}"
    );
    let (code, out, _) = kvledger(&["price", "--json", "--rows", ROWS, "--surface", "chart"]);
    assert_eq!(code, 2);
    let e = &envelope(&out, "price")["error"];
    assert_eq!(e["code"], "BAD_OPTIONS");
    assert!(
        e["message"].as_str().unwrap_or("").contains("--surface"),
        "{e}"
    );

    // An option file's error: its JSON path.
    let (code, out, _) = kvledger_stdin(
        &[
            "account",
            "--json",
            "--policy",
            "-",
            "examples/synth/vllm-agg-clean",
        ],
        Some(br#"{"max_rate_width": 0.01, "bogus": true}"#),
    );
    assert_eq!(code, 2);
    let e = &envelope(&out, "account")["error"];
    assert_eq!(e["code"], "JSON_SHAPE");
    assert_eq!(e["json_path"], "bogus");
    assert_eq!(e["file"], "<stdin>");
}

#[test]
fn price_json_is_one_envelope() {
    let (code, out, err) = kvledger(&["price", "--json", "--rows", ROWS, "--policy", "legacy"]);
    assert_eq!(code, 0, "{err}");
    let v = envelope(&out, "price");
    assert_eq!(v["rows"], ROWS);
    let r = &v["result"];
    assert_eq!(r["policy"], "legacy");
    assert_eq!(r["surface"], "calculator");
    let n = r["outcomes"].as_array().map(Vec::len).unwrap_or(0);
    assert_eq!(n, 435);
    assert_eq!(
        r["priced"].as_u64().unwrap_or(0) + r["not_priced"].as_u64().unwrap_or(0),
        n as u64
    );
}

#[test]
fn a_dash_reads_stdin() {
    let file = "examples/vllm-doc-timeslices/server_metrics_export.json";
    let bytes = std::fs::read(file).expect("fixture");
    // A single artifact: recognised from its content.
    let (code, out, err) = kvledger_stdin(&["inspect", "--json", "-"], Some(&bytes));
    assert_eq!(code, 0, "{err}");
    let v = envelope(&out, "inspect");
    assert_eq!(v["run"], "<stdin>");
    assert_eq!(v["result"]["files"][0]["kind"], "server_metrics_json");
    // The same result as from the file, but for the file's name.
    let (_, from_file, _) = kvledger(&["account", "--json", file]);
    let (code, from_stdin, err) = kvledger_stdin(&["account", "--json", "-"], Some(&bytes));
    assert_eq!(code, 0, "{err}");
    let a = envelope(&from_file, "account");
    let b = envelope(&from_stdin, "account");
    assert_eq!(a["result"]["cache_validity"], b["result"]["cache_validity"]);
    assert_eq!(a["result"]["rates"], b["result"]["rates"]);

    // A capture without # HELP lines is not recognisable from its content: --stdin-name
    // names its format, and --capture its endpoint and time by that name.
    let prom = std::fs::read_to_string("examples/sglang-minimax-conc16-captures/conc16.after.prom")
        .expect("capture");
    let bare: String = prom
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    let (code, _, err) = kvledger_stdin(&["inspect", "-"], Some(bare.as_bytes()));
    assert_eq!(code, 1);
    assert!(
        err.contains("UNKNOWN_FORMAT") && err.contains("--stdin-name"),
        "{err}"
    );
    let (code, out, err) = kvledger_stdin(
        &[
            "inspect",
            "--stdin-name",
            "now.prom",
            "--capture",
            "now.prom=http://h:30000/metrics@1781000000000000000",
            "-",
        ],
        Some(bare.as_bytes()),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("prometheus_text") && out.contains("<stdin>/now.prom"),
        "{out}"
    );
    assert!(out.contains("http://h:30000/metrics"), "{out}");

    // --rows, --card, --policy and --launch take `-` too.
    let rows = std::fs::read(ROWS).expect("rows");
    let (code, out, err) = kvledger_stdin(&["price", "--rows", "-"], Some(&rows));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("435 rows: 435 priced"), "{out}");
    let card = card_with_input_price(2.0);
    let (code, out, err) = kvledger_stdin(
        &["price", "--rows", ROWS, "--card", "-"],
        Some(card.as_bytes()),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("input 2 /"), "{out}");
    let (code, out, err) = kvledger_stdin(
        &[
            "account",
            "--json",
            "--policy",
            "-",
            "examples/synth/vllm-agg-clean",
        ],
        Some(br#"{"max_rate_width": 0.25}"#),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        envelope(&out, "account")["result"]["policy"]["max_rate_width"],
        0.25
    );
    let launch = std::fs::read("tests/fixtures/sweep/conc8/launch.json").expect("launch");
    let (code, out, err) = kvledger_stdin(
        &[
            "inspect",
            "--json",
            "--launch",
            "-",
            "examples/vllm-doc-timeslices",
        ],
        Some(&launch),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        envelope(&out, "inspect")["result"]["launch"]["unified"],
        serde_json::json!(["localhost:8894"])
    );

    // Stdin can be read once.
    let (code, _, err) = kvledger_stdin(
        &["account", "--policy", "-", "-"],
        Some(br#"{"max_rate_width": 0.25}"#),
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("--policy") && err.contains("stdin can be read once"),
        "{err}"
    );
    let (code, _, err) = kvledger(&["inspect", "--stdin-name", "x.prom", "examples/synth"]);
    assert_eq!(code, 2);
    assert!(err.contains("--stdin-name x.prom"), "{err}");
}

/// Spawn kvledger with stdout piped, read `keep` bytes, then close the pipe: the command must
/// end on its own (no signal, no panic), with exit 0 and nothing on stderr.
#[cfg(unix)]
fn closed_pipe(args: &[&str], keep: usize) {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_kvledger"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run kvledger");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut head = vec![0u8; keep];
    stdout.read_exact(&mut head).expect("first bytes");
    drop(stdout);
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), None, "{args:?}: killed by a signal");
    assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
    assert!(err.is_empty(), "{args:?}: stderr {err}");
}

#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_quietly() {
    // Outputs far beyond a pipe's buffer (64 KiB): the writes after the close must fail.
    closed_pipe(&["price", "--json", "--rows", ROWS], 16);
    closed_pipe(&["price", "--rows", ROWS], 16);
    closed_pipe(
        &[
            "inspect",
            "--json",
            "tests/fixtures/sweep",
            "examples/synth",
        ],
        16,
    );
    closed_pipe(&["account", "examples/synth"], 1);
    closed_pipe(&["synth", "--help"], 1);
    // One run whose result is written as it is made (`account --json` of a single run).
    let dir = many_endpoint_run();
    let run = dir.to_string_lossy().into_owned();
    let (code, out, err) = kvledger(&["account", "--json", &run]);
    assert_eq!(code, 0, "{err}");
    assert!(out.len() > 4 * 65536, "{} bytes", out.len());
    closed_pipe(&["account", "--json", &run], 16);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run of one CSV export of 2,000 vLLM endpoints: its `account --json` result is far beyond
/// a pipe's buffer.
#[cfg(unix)]
fn many_endpoint_run() -> std::path::PathBuf {
    let dir = temp_dir("many-endpoints");
    let mut csv = String::from(
        "Endpoint,Type,Metric,Unit,total,rate,rate_avg,rate_min,rate_max,rate_std,engine,model_name,Description\n",
    );
    for family in ["vllm:prefix_cache_queries", "vllm:prefix_cache_hits"] {
        for port in 0..2000 {
            csv.push_str(&format!(
                "10.0.{}.{}:8000,counter,{family},,10.0,1.0,1.0,1.0,1.0,0.0,0,m,d\n",
                port / 250,
                port % 250
            ));
        }
    }
    std::fs::write(dir.join("server_metrics_export.csv"), csv).expect("write the export");
    dir
}

#[test]
fn text_shows_windows_in_utc_and_seconds() {
    let run = "examples/synth/vllm-agg-clean";
    let (code, out, err) = kvledger(&["account", run]);
    assert_eq!(code, 0, "{err}");
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("window ("))
        .expect("window line");
    let (_, json, _) = kvledger(&["account", "--json", run]);
    let w = &envelope(&json, "account")["result"]["cache_validity"]["window"];
    let (start, end) = (ns(&w["start_ns"]).unwrap(), ns(&w["end_ns"]).unwrap());
    // `YYYY-MM-DD hh:mm:ss[.frac]Z + S s`, read back independently of the formatter.
    let text = line.split("): ").nth(1).expect("window text");
    let (instant, rest) = text.split_once("Z + ").expect("start + span");
    let span = rest.split(" s").next().expect("span");
    assert_eq!(parse_utc(instant), start, "{line}");
    assert_eq!(parse_seconds(span), end - start, "{line}");
    assert!(line.contains("2026-"), "{line}");

    let (_, out, _) = kvledger(&["inspect", run]);
    assert!(
        out.lines()
            .any(|l| l.starts_with("  profiling window  2026-") && l.ends_with(" s")),
        "{out}"
    );
}

/// Epoch ns of `YYYY-MM-DD hh:mm:ss[.fraction]` (UTC).
fn parse_utc(s: &str) -> u64 {
    let (date, time) = s.split_once(' ').expect("date time");
    let d: Vec<i64> = date.split('-').map(|x| x.parse().unwrap()).collect();
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let t: Vec<u64> = hms.split(':').map(|x| x.parse().unwrap()).collect();
    // Days from civil (H. Hinnant), the inverse of what the CLI uses.
    let (y, m) = if d[1] <= 2 {
        (d[0] - 1, d[1] + 9)
    } else {
        (d[0], d[1] - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d[2] - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = (era * 146_097 + doe - 719_468) as u64;
    let secs = days * 86_400 + t[0] * 3600 + t[1] * 60 + t[2];
    secs * 1_000_000_000 + parse_fraction(frac)
}

fn parse_fraction(frac: &str) -> u64 {
    format!("{frac:0<9}").parse().unwrap()
}

/// Nanoseconds of `S.fraction`.
fn parse_seconds(s: &str) -> u64 {
    let (whole, frac) = s.split_once('.').expect("one decimal at least");
    whole.parse::<u64>().unwrap() * 1_000_000_000 + parse_fraction(frac)
}

#[test]
fn synth_refuses_what_it_cannot_honour() {
    let dir = temp_dir("cli-synth-refuse");
    let out = dir.join("run").display().to_string();
    let refusals: [(&[&str], &[&str]); 5] = [
        (
            &["--duration", "10", "--target-bytes", "1MB"],
            &["--duration", "--target-bytes"],
        ),
        (
            &["--target-bytes", "10KB"],
            &["--target-bytes 10000", "shortest run"],
        ),
        (
            &["--fault", "straddle_no_proof", "--schema", "1.1"],
            &["--schema 1.1", "straddle_no_proof"],
        ),
        (
            &["--engine", "vllm", "--tiers", "gpu,cpu,external"],
            &["--tiers gpu,cpu,external", "vllm"],
        ),
        (
            &["--fault", "decode_recount", "--topology", "agg"],
            &["--topology agg", "decode_recount"],
        ),
    ];
    for (args, named) in refusals {
        let argv: Vec<&str> = ["synth", "--out", &out]
            .iter()
            .chain(args)
            .copied()
            .collect();
        let (code, stdout, err) = kvledger(&argv);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(stdout.is_empty());
        for n in named {
            assert!(err.contains(n), "{args:?} should name {n}: {err}");
        }
        assert!(!dir.join("run").exists(), "{args:?}: nothing written");
    }
    // Left at their defaults, the settings a fault needs are adjusted and shown.
    let (code, stdout, err) = kvledger(&[
        "synth",
        "--fault",
        "straddle_no_proof",
        "--duration",
        "2",
        "--out",
        &out,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("schema 1.0"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn synth_writes_a_non_empty_folder_only_with_force() {
    let dir = temp_dir("cli-synth-force");
    let d = dir.display().to_string();
    let base = [
        "synth",
        "--duration",
        "2",
        "--seed",
        "3",
        "--out",
        d.as_str(),
    ];
    let (code, _, err) = kvledger(&base);
    assert_eq!(code, 0, "{err}");
    let jsonl = dir.join("aiperf_artifacts/server_metrics_export.jsonl");
    assert!(jsonl.is_file());
    std::fs::write(dir.join("notes.txt"), "mine").expect("write");
    let truth = std::fs::read(dir.join("truth.json")).expect("truth");

    let (code, out, err) = kvledger(&[&base[..], &["--exports", "json,csv"]].concat());
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains(&d) && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(dir.join("truth.json")).expect("truth"), truth);
    assert!(jsonl.is_file(), "refused: nothing touched");

    let (code, out, err) =
        kvledger(&[&base[..], &["--exports", "json,csv", "--force", "--json"]].concat());
    assert_eq!(code, 0, "{err}");
    let v = envelope(&out, "synth");
    assert_eq!(v["out"], d);
    assert_eq!(
        v["result"]["settings"]["exports"],
        serde_json::json!(["json", "csv"])
    );
    assert!(
        !jsonl.exists(),
        "the earlier run's JSONL export is not left stale"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).expect("kept"),
        "mine"
    );
    let files: Vec<&str> = v["result"]["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["path"].as_str().unwrap_or(""))
        .collect();
    assert!(!files
        .iter()
        .any(|f| f.ends_with(".jsonl") && f.contains("server")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn schema_prints_the_shipped_json_schema() {
    let (code, out, err) = kvledger(&["schema"]);
    assert_eq!(code, 0, "{err}");
    let shipped = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/kvledger.schema.json"),
    )
    .unwrap();
    assert_eq!(out, shipped);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["$defs"]["CliEnvelope"]["oneOf"].is_array());
}
