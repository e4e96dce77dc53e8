//! Builders of small hand-made runs for the accounting tests: a schema 1.0 server-metrics
//! export (stats only), raw-scrape JSONL with samples exactly at the window edges (exact
//! evidence), per-request records and launch facts.
#![allow(dead_code)]

use kvledger::account::{account_run, Accounting, Policy};
use kvledger::read::{read_run, InputFile, RunOptions};
use std::fmt::Write;
use std::path::{Path, PathBuf};

pub const S: u64 = 1_765_529_006_843_416_914; // window start (above 2^53)
pub const E: u64 = S + 600_000_000_000; // 10 minutes later

/// One series: endpoint URL, family, type, labels, value (counter total / gauge avg=max /
/// histogram sum), and for histograms the count.
#[derive(Clone, Debug)]
pub struct Ser {
    pub url: String,
    pub family: String,
    pub kind: &'static str,
    pub labels: Vec<(String, String)>,
    pub value: f64,
    pub count: f64,
}

pub fn ser(
    url: &str,
    family: &str,
    kind: &'static str,
    labels: &[(&str, &str)],
    value: f64,
) -> Ser {
    Ser {
        url: url.to_string(),
        family: family.to_string(),
        kind,
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        value,
        count: 0.0,
    }
}

pub fn counter(url: &str, family: &str, labels: &[(&str, &str)], v: f64) -> Ser {
    ser(url, family, "counter", labels, v)
}

pub fn gauge(url: &str, family: &str, labels: &[(&str, &str)], v: f64) -> Ser {
    ser(url, family, "gauge", labels, v)
}

pub fn hist(url: &str, family: &str, labels: &[(&str, &str)], count: f64, sum: f64) -> Ser {
    let mut s = ser(url, family, "histogram", labels, sum);
    s.count = count;
    s
}

fn labels_json(l: &[(String, String)]) -> String {
    let parts: Vec<String> = l
        .iter()
        .map(|(k, v)| format!("{}:{}", serde_json::json!(k), serde_json::json!(v)))
        .collect();
    format!("{{{}}}", parts.join(","))
}

/// A schema 1.0 export; `warmup` series go to `warmup_metrics` (making it 1.1-shaped).
pub fn export_json(series: &[Ser], warmup: &[Ser]) -> String {
    fn section(series: &[Ser]) -> String {
        let mut fams: std::collections::BTreeMap<(String, &str), Vec<&Ser>> = Default::default();
        for s in series {
            fams.entry((s.family.clone(), s.kind)).or_default().push(s);
        }
        let mut out = Vec::new();
        for ((name, kind), ss) in fams {
            let mut items = Vec::new();
            for s in ss {
                let stats = match kind {
                    "counter" => format!("{{\"total\":{},\"rate\":1.0}}", s.value),
                    "gauge" => format!("{{\"avg\":{0},\"min\":{0},\"max\":{0}}}", s.value),
                    _ => format!("{{\"count\":{},\"sum\":{}}}", s.count, s.value),
                };
                items.push(format!(
                    "{{\"endpoint_url\":{},\"labels\":{},\"stats\":{}}}",
                    serde_json::json!(s.url),
                    labels_json(&s.labels),
                    stats
                ));
            }
            out.push(format!(
                "{}:{{\"type\":\"{}\",\"description\":\"\",\"series\":[{}]}}",
                serde_json::json!(name),
                kind,
                items.join(",")
            ));
        }
        format!("{{{}}}", out.join(","))
    }
    let mut text = String::from("{\"schema_version\":\"1.0\",\"summary\":{},\"metrics\":");
    text.push_str(&section(series));
    if !warmup.is_empty() {
        text.push_str(",\"warmup_metrics\":");
        text.push_str(&section(warmup));
    }
    text.push('}');
    text
}

/// Raw scrapes: every counter/gauge series sampled at the window start (value 0 + `base`) and
/// end (`base + value`), so the in-window increase is exactly `value`.
pub fn scrapes_jsonl(series: &[Ser], base: f64) -> String {
    let mut by_url: std::collections::BTreeMap<&str, Vec<&Ser>> = Default::default();
    for s in series {
        by_url.entry(&s.url).or_default().push(s);
    }
    let mut out = String::new();
    for (t, at_end) in [(S, false), (E, true)] {
        for (url, ss) in &by_url {
            let mut fams: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
            for s in ss {
                let v = if s.kind == "gauge" {
                    s.value
                } else if at_end {
                    base + s.value
                } else {
                    base
                };
                fams.entry(&s.family).or_default().push(format!(
                    "{{\"labels\":{},\"value\":{}}}",
                    labels_json(&s.labels),
                    v
                ));
            }
            let metrics: Vec<String> = fams
                .iter()
                .map(|(f, samples)| format!("{}:[{}]", serde_json::json!(f), samples.join(",")))
                .collect();
            let _ = writeln!(
                out,
                "{{\"endpoint_url\":{},\"timestamp_ns\":{},\"metrics\":{{{}}}}}",
                serde_json::json!(url),
                t,
                metrics.join(",")
            );
        }
    }
    out
}

/// Per-request records inside the window: `prompts` successful profiling requests (one line
/// each), plus extra lines given verbatim.
pub fn records(prompts: &[u64], extra: &[String]) -> String {
    let mut out = String::new();
    let n = prompts.len().max(1) as u64;
    let step = (E - S) / (n + 1);
    for (i, p) in prompts.iter().enumerate() {
        let start = S + step * i as u64;
        let end = if i + 1 == prompts.len() {
            E
        } else {
            start + step / 2
        };
        let _ = writeln!(
            out,
            "{{\"metadata\":{{\"benchmark_phase\":\"profiling\",\"request_start_ns\":{start},\"request_end_ns\":{end}}},\"metrics\":{{\"usage_prompt_tokens\":{{\"value\":{p},\"unit\":\"tokens\"}},\"output_sequence_length\":{{\"value\":10,\"unit\":\"tokens\"}}}}}}"
        );
    }
    for e in extra {
        out.push_str(e);
        out.push('\n');
    }
    out
}

/// Account a run from (file name, content) pairs.
pub fn account(files: &[(&str, String)]) -> Accounting {
    account_with(files, &Policy::default())
}

/// Account a run made of one schema 1.0 export of these series and launch facts (JSON text).
pub fn account_export(series: &[Ser], launch: impl Into<String>) -> Accounting {
    account(&[
        ("server_metrics_export.json", export_json(series, &[])),
        ("launch.json", launch.into()),
    ])
}

pub fn account_with(files: &[(&str, String)], policy: &Policy) -> Accounting {
    let inputs: Vec<InputFile<'_>> = files
        .iter()
        .map(|(n, t)| InputFile::bytes(*n, t.as_bytes()))
        .collect();
    let run = read_run(&inputs, &RunOptions::default()).expect("run");
    account_run(&run, policy)
}

pub fn codes(a: &Accounting) -> Vec<&'static str> {
    a.cache_validity
        .reasons
        .iter()
        .map(|r| r.code.as_str())
        .collect()
}

pub fn approx(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-5
}

/// A tier's rate (`gpu`, `cpu`, `external`, `overall`) from the priced role's counter
/// telemetry values (the exports' totals): the arithmetic the upstream tests check. The rate
/// itself has no value where the evidence does not bound the window (contract r2, section 4).
pub fn telemetry_rate(a: &Accounting, tier: &str) -> f64 {
    let role = if a.counters.contains_key("prefill") {
        "prefill"
    } else {
        "unified"
    };
    let c = &a.counters[role];
    let v = |b: Option<kvledger::account::output::Bounds>| b.map_or(0.0, |b| b.value);
    let hits = match tier {
        "gpu" => v(c.hit_gpu),
        "cpu" => v(c.hit_cpu),
        "external" => v(c.hit_external),
        _ => v(c.hit_gpu) + v(c.hit_cpu) + v(c.hit_external),
    };
    hits / v(c.prompt)
}

/// `account_export` plus raw scrapes at the window's edges and one profiling record that
/// spans the window: the counters' increases are exact, so the rates have values.
pub fn account_bounded(series: &[Ser], launch: impl Into<String>) -> Accounting {
    account(&[
        ("server_metrics_export.json", export_json(series, &[])),
        ("server_metrics_export.jsonl", scrapes_jsonl(series, 1000.0)),
        ("profile_export.jsonl", records(&[1], &[])),
        ("launch.json", launch.into()),
    ])
}

/// Every file under tests/fixtures and examples/, sorted. Symlinks and installed packages are
/// not fixtures (examples/edge-worker's node_modules/kvledger links back to the repository).
pub fn fixture_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let linked = e.file_type().map_or(true, |t| t.is_symlink());
            if linked || p.ends_with("node_modules") {
                continue;
            }
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    walk(&root.join("tests/fixtures"), &mut out);
    walk(&root.join("examples"), &mut out);
    out.sort();
    out
}

/// Every file of a generated run folder but the generator's `truth.json` (the answer, not an
/// artifact), by name relative to `dir`, with its bytes, sorted by name.
pub fn run_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if !p.ends_with("truth.json") {
                let name = p.strip_prefix(dir).expect("prefix").display().to_string();
                out.push((name, std::fs::read(&p).expect("read")));
            }
        }
    }
    out.sort();
    out
}
