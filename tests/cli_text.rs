//! The CLI's text output never shows Rust debug forms (`Some(..)`, `None`, enum variant names
//! like `NotOffloaded`, `["a", "b"]`, `Struct { field: .. }`): every bundled example run, the
//! real-folder and sweep fixtures, through `inspect`, `account` and `price`.

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

#[test]
fn no_debug_forms_in_text_output() {
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
    let found = debug_forms(&text);
    assert!(
        found.is_empty(),
        "debug forms in text output:\n{}",
        found.join("\n")
    );
}
