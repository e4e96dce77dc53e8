//! The CLI's text output never shows Rust debug forms (`Some(..)`, `None`, enum variant names
//! like `NotOffloaded`, `["a", "b"]`, `Struct { field: .. }`) nor raw epoch nanoseconds (times
//! are UTC): every bundled example run, the real-folder and sweep fixtures, through
//! `inspect`, `account`, `price` and `synth`.

#[path = "cli_support/mod.rs"]
mod cli_support;
use cli_support::kvledger;

fn output(args: &[&str]) -> String {
    let (code, out, err) = kvledger(args);
    assert!(matches!(code, 0 | 1), "{args:?}: exit {code}\n{err}");
    format!("{out}{err}")
}

/// Variant names of the crate's enums as Rust's `Debug` spells them (the JSON and the text
/// spell them snake_case).
const VARIANTS: [&str; 30] = [
    "NotOffloaded",
    "RawScrapes",
    "Timeslices",
    "StatsTotal",
    "PhaseTotal",
    "PhaseTotals",
    "PricedRole",
    "Unresolved",
    "PhaseTimeRanges",
    "ProfileRecords",
    "TimesliceGrid",
    "SingleEndpoint",
    "Measured",
    "Missing",
    "Client",
    "Launch",
    "Labels",
    "Unbounded",
    "Exact",
    "Midpoint",
    "ServerMetricsJson",
    "ServerMetricsCsv",
    "ServerMetricsJsonl",
    "PrometheusText",
    "ProfileJsonl",
    "RunSummary",
    "LaunchFacts",
    "Prefill",
    "Unified",
    "Frontend",
];

fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// Every debug form found in `text`, with its line.
fn debug_forms(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let mut hit = |what: &str| found.push(format!("{what}: {line}"));
        for needle in ["Some(", "Ok(", "Err(", "[\"", "\"]"] {
            if line.contains(needle) {
                hit(needle);
            }
        }
        for w in words(line) {
            if w == "None" || VARIANTS.contains(&w) {
                hit(w);
            }
        }
        // `Name { field: ...` : a struct's debug form.
        let b = line.as_bytes();
        for (i, _) in line.match_indices(" { ") {
            let before = i.checked_sub(1).and_then(|j| b.get(j)).copied();
            let after: String = line[i + 3..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if before.is_some_and(|c| c.is_ascii_alphanumeric())
                && !after.is_empty()
                && line[i + 3 + after.len()..].starts_with(':')
            {
                hit("struct");
            }
        }
    }
    found
}

#[test]
fn the_detector_catches_debug_forms() {
    for bad in [
        format!("cpu: {:?}", Some("x")),
        "  verdict: VALID  cpu: NotOffloaded".to_string(),
        format!("roles {:?}", vec!["http://a:1/metrics"]),
        "evidence Some(RawScrapes)".to_string(),
        "tokens (None): prompt 1".to_string(),
        "window Window { start_ns: 1 }".to_string(),
    ] {
        assert!(!debug_forms(&bad).is_empty(), "missed: {bad}");
    }
    let clean = "  roles (launch): prefill -  unified http://localhost:8889/metrics\n  \
                 window (phase_time_ranges): 1 .. 2  evidence raw_scrapes  kv_offloading none";
    assert_eq!(debug_forms(clean), Vec::<String>::new());
}

/// Numbers of 16 or more digits that are not a decimal's fraction: raw epoch ns (or ms, us).
fn raw_epochs(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if !b[i].is_ascii_digit() {
                i += 1;
                continue;
            }
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let after_point = start > 0 && b[start - 1] == b'.';
            if i - start >= 16 && !after_point {
                found.push(line.to_string());
            }
        }
    }
    found
}

#[test]
fn the_epoch_detector_catches_raw_ns() {
    assert_eq!(raw_epochs("window 1783588550633024589 .. 2").len(), 1);
    assert!(
        raw_epochs("theoretical 92.78687414280634  at 2026-07-09 09:15:50.633024589Z").is_empty()
    );
}

/// The text of every command over every bundled run and fixture (computed once).
fn all_text() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(collect_text)
}

fn collect_text() -> String {
    let runs = [
        "examples/vllm-mi355x-conc1",
        "examples/vllm-doc-timeslices",
        "examples/sglang-minimax-conc16-captures",
        "examples/synth",
        "tests/fixtures/aiperf-folder",
        "tests/fixtures/sweep",
    ];
    let mut text = String::new();
    for run in runs {
        for cmd in ["inspect", "account"] {
            let out = output(&[cmd, run]);
            assert!(out.contains("run: "), "{cmd} {run}: {out}");
            text.push_str(&out);
        }
    }
    for policy in ["strict", "theoretical", "legacy"] {
        text.push_str(&output(&[
            "price",
            "--rows",
            "tests/fixtures/app/cypress-api-benchmarks.json",
            "--policy",
            policy,
        ]));
    }
    // Error text too (a read error and a launch refusal).
    text.push_str(&output(&[
        "account",
        "tests/fixtures/sweep/profile_runs/run_0002",
    ]));
    let dir = std::env::temp_dir().join(format!("kvledger-cli-text-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.display().to_string();
    let synth = output(&[
        "synth",
        "--fault",
        "counter_reset",
        "--duration",
        "4",
        "--out",
        &d,
    ]);
    assert!(synth.contains("settings: "), "{synth}");
    text.push_str(&synth);
    let _ = std::fs::remove_dir_all(&dir);
    text
}

#[test]
fn no_debug_forms_in_text_output() {
    let found = debug_forms(all_text());
    assert!(
        found.is_empty(),
        "debug forms in text output:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_raw_epoch_ns_in_text_output() {
    let text = all_text();
    assert!(text.contains("Z + "), "windows in UTC + seconds");
    let found = raw_epochs(text);
    assert!(found.is_empty(), "raw epoch numbers:\n{}", found.join("\n"));
}
