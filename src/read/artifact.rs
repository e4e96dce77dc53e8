//! Recognise what an input file is: by its name **and extension** as AIPerf writes it (default
//! names and the `--profile-export-prefix` variants), else by sniffing the first bytes.
//!
//! Every file is either read (an [`ArtifactKind`]) or ignored with a short reason: a real AIPerf
//! folder holds Parquet and CSV twins of what is read, `inputs.json`, plots and logs, and none of
//! them may fail a run.

use serde::Serialize;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum ArtifactKind {
    /// `server_metrics_export.json` (schema 1.0 / 1.1).
    ServerMetricsJson,
    /// `server_metrics_export.csv`.
    ServerMetricsCsv,
    /// `server_metrics_export.jsonl` (raw cumulative scrapes).
    ServerMetricsJsonl,
    /// A Prometheus text capture of `/metrics` (`.prom`, `.metrics`, `.txt`).
    PrometheusText,
    /// `profile_export.jsonl` (per-request records).
    ProfileJsonl,
    /// `profile_export_aiperf.json` (run summary).
    RunSummary,
    /// Launch facts JSON (`launch.json`, `launch_facts.json`, `*.launch.json`).
    LaunchFacts,
    /// `captures.json`: times and endpoints of Prometheus text captures.
    CaptureManifest,
    /// Anything else (GPU telemetry, inputs, raw exports, logs): not read.
    Other,
}

impl ArtifactKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ArtifactKind::ServerMetricsJson => "server_metrics_json",
            ArtifactKind::ServerMetricsCsv => "server_metrics_csv",
            ArtifactKind::ServerMetricsJsonl => "server_metrics_jsonl",
            ArtifactKind::PrometheusText => "prometheus_text",
            ArtifactKind::ProfileJsonl => "profile_jsonl",
            ArtifactKind::RunSummary => "run_summary",
            ArtifactKind::LaunchFacts => "launch_facts",
            ArtifactKind::CaptureManifest => "capture_manifest",
            ArtifactKind::Other => "other",
        }
    }

    /// Metrics or records: a folder holding one of these is a run (launch facts and capture
    /// manifests only describe one).
    pub fn defines_run(self) -> bool {
        !matches!(
            self,
            ArtifactKind::Other | ArtifactKind::LaunchFacts | ArtifactKind::CaptureManifest
        )
    }
}

/// What a file name alone says about a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recognition {
    /// A format kvledger reads.
    Read(ArtifactKind),
    /// A file kvledger does not read, with the reason shown to users.
    Ignored(&'static str),
    /// The name does not tell: the content must be sniffed.
    Unknown,
}

/// Reason given for a file whose name and content match no format kvledger reads.
pub const UNRECOGNISED: &str = "not a format kvledger reads";

/// Classify a file from its name (a path or a bare name) and its first bytes: `Ok(kind)` when
/// kvledger reads it, `Err(reason)` when it is ignored.
pub fn recognise(name: &str, head: &[u8]) -> Result<ArtifactKind, &'static str> {
    match recognise_name(name) {
        Recognition::Read(kind) => Ok(kind),
        Recognition::Ignored(reason) => Err(reason),
        Recognition::Unknown => match sniff(&base_lower(name), head) {
            ArtifactKind::Other => Err(UNRECOGNISED),
            kind => Ok(kind),
        },
    }
}

/// Classify a file from its name and first bytes; ignored files are [`ArtifactKind::Other`].
pub fn classify(name: &str, head: &[u8]) -> ArtifactKind {
    recognise(name, head).unwrap_or(ArtifactKind::Other)
}

fn base_lower(name: &str) -> String {
    name.rsplit(['/', '\\'])
        .next()
        .unwrap_or(name)
        .to_ascii_lowercase()
}

/// Classify a file by its name and extension only (no content): what discovery over bare
/// path lists (WASM drops, directory walks) can decide before any byte is read.
pub fn recognise_name(name: &str) -> Recognition {
    let base = base_lower(name);
    let (stem, ext) = match base.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s, e),
        _ => (base.as_str(), ""),
    };
    if let Some(reason) = ignored_by_extension(ext) {
        return Recognition::Ignored(reason);
    }
    if let Some(reason) = ignored_by_stem(stem) {
        return Recognition::Ignored(reason);
    }
    let server = stem == "server_metrics_export"
        || stem.ends_with("_server_metrics")
        || stem.ends_with(".server_metrics_export")
        || stem.ends_with("_server_metrics_export");
    if server {
        return match ext {
            "json" => Recognition::Read(ArtifactKind::ServerMetricsJson),
            "csv" => Recognition::Read(ArtifactKind::ServerMetricsCsv),
            "jsonl" => Recognition::Read(ArtifactKind::ServerMetricsJsonl),
            _ => Recognition::Ignored("server metrics in a format kvledger does not read"),
        };
    }
    if stem == "profile_export_aiperf" || stem.ends_with("_aiperf") {
        return match ext {
            "json" => Recognition::Read(ArtifactKind::RunSummary),
            "csv" => Recognition::Ignored("run summary as CSV: the JSON one is read"),
            _ => Recognition::Ignored("run summary in a format kvledger does not read"),
        };
    }
    if stem == "profile_export" {
        return match ext {
            "jsonl" => Recognition::Read(ArtifactKind::ProfileJsonl),
            _ => Recognition::Ignored("per-request records in a format kvledger does not read"),
        };
    }
    if ext == "json" && (stem == "launch" || stem == "launch_facts" || stem.ends_with(".launch")) {
        return Recognition::Read(ArtifactKind::LaunchFacts);
    }
    if ext == "json" && (stem == "captures" || stem.ends_with(".captures")) {
        return Recognition::Read(ArtifactKind::CaptureManifest);
    }
    if matches!(ext, "prom" | "metrics") {
        return Recognition::Read(ArtifactKind::PrometheusText);
    }
    if matches!(ext, "json" | "jsonl" | "csv" | "txt") || ext.is_empty() {
        // Prefix-named exports (`run7.jsonl`) and captures saved as `.txt` show in their bytes.
        return Recognition::Unknown;
    }
    Recognition::Ignored(UNRECOGNISED)
}

fn ignored_by_extension(ext: &str) -> Option<&'static str> {
    Some(match ext {
        "parquet" => "Parquet export: the JSON, CSV and JSONL exports are read",
        "png" | "jpg" | "jpeg" | "svg" | "gif" | "webp" | "html" | "pdf" => {
            "plot or report: not data"
        }
        "log" | "out" | "err" => "log file: not read",
        "gz" | "zst" | "bz2" | "xz" | "zip" | "tar" | "tgz" => {
            "compressed file: decompress it to have it read"
        }
        "md" | "yaml" | "yml" | "toml" | "py" | "sh" => UNRECOGNISED,
        _ => return None,
    })
}

/// Files AIPerf writes beside the ones kvledger reads (default and prefixed names).
fn ignored_by_stem(stem: &str) -> Option<&'static str> {
    const KNOWN: [(&str, &str); 7] = [
        (
            "profile_export_aiperf_timeslices",
            "client-side timeslices: not used for cache accounting",
        ),
        (
            "profile_export_aiperf_aggregate",
            "multi-run aggregate: each run's own summary is read",
        ),
        (
            "profile_export_raw",
            "raw requests and responses: not used for cache accounting",
        ),
        (
            "gpu_telemetry_export",
            "GPU telemetry: not used for cache accounting",
        ),
        (
            "gpu_telemetry",
            "GPU telemetry: not used for cache accounting",
        ),
        (
            "inputs",
            "inputs sent to the server: not used for cache accounting",
        ),
        (
            "server_metrics_metadata",
            "scrape metadata of pre-0.4 exports: not needed",
        ),
    ];
    for (name, reason) in KNOWN {
        if stem == name || stem.ends_with(&format!("_{name}")) {
            return Some(reason);
        }
    }
    if stem.ends_with("_timeslices") {
        return Some("client-side timeslices: not used for cache accounting");
    }
    if stem.ends_with("_raw") {
        return Some("raw requests and responses: not used for cache accounting");
    }
    if stem.ends_with("_aggregate") {
        return Some("multi-run aggregate: each run's own summary is read");
    }
    None
}

/// Content sniffing for files named otherwise (e.g. `--profile-export-prefix` runs).
fn sniff(base: &str, head: &[u8]) -> ArtifactKind {
    let text = String::from_utf8_lossy(head);
    let t = text.trim_start_matches('\u{feff}').trim_start();
    let first_line = t.lines().next().unwrap_or("");
    if t.starts_with("# AIPerf Server Metrics Export") {
        return ArtifactKind::ServerMetricsCsv;
    }
    if t.starts_with("# HELP ") || t.starts_with("# TYPE ") {
        return ArtifactKind::PrometheusText;
    }
    if base.ends_with(".jsonl") || (first_line.starts_with('{') && first_line.ends_with('}')) {
        if first_line.contains("\"endpoint_url\"") && first_line.contains("\"metrics\"") {
            return ArtifactKind::ServerMetricsJsonl;
        }
        if first_line.contains("\"metadata\"") {
            return ArtifactKind::ProfileJsonl;
        }
    }
    if t.starts_with('{') {
        if t.contains("\"endpoint_info\"")
            || t.contains("\"metrics_phase\"")
            || (t.contains("\"endpoints_configured\""))
        {
            return ArtifactKind::ServerMetricsJson;
        }
        if t.contains("\"request_throughput\"")
            || t.contains("\"request_count\"")
            || t.contains("\"records\"")
        {
            return ArtifactKind::RunSummary;
        }
    }
    if base.ends_with(".txt") && looks_like_exposition(t) {
        return ArtifactKind::PrometheusText;
    }
    ArtifactKind::Other
}

/// A text file whose first non-comment line is `name{...} value` or `name value`.
fn looks_like_exposition(t: &str) -> bool {
    let Some(line) = t
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
    else {
        return false;
    };
    let name_end = line.find(['{', ' ']).unwrap_or(line.len());
    let name = &line[..name_end];
    let after_labels = match line[name_end..].find('}') {
        Some(i) if line[name_end..].starts_with('{') => &line[name_end + i + 1..],
        _ => &line[name_end..],
    };
    let value = after_labels.split_whitespace().next().unwrap_or("");
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        && super::prometheus_text::parse_prom_float(value).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ArtifactKind::*;

    #[test]
    fn default_names() {
        assert_eq!(
            classify("a/b/server_metrics_export.json", b""),
            ServerMetricsJson
        );
        assert_eq!(classify("server_metrics_export.csv", b""), ServerMetricsCsv);
        assert_eq!(
            classify("server_metrics_export.jsonl", b""),
            ServerMetricsJsonl
        );
        assert_eq!(classify("profile_export.jsonl", b""), ProfileJsonl);
        assert_eq!(classify("profile_export_aiperf.json", b""), RunSummary);
        assert_eq!(
            classify("gpu_telemetry_export.jsonl", b"{\"metadata\":1}"),
            Other
        );
        assert_eq!(classify("conc16.before.prom", b""), PrometheusText);
        assert_eq!(classify("launch.json", b""), LaunchFacts);
        assert_eq!(classify("captures.json", b""), CaptureManifest);
    }

    #[test]
    fn prefix_names() {
        assert_eq!(classify("run7_server_metrics.json", b""), ServerMetricsJson);
        assert_eq!(
            classify("run7_server_metrics.jsonl", b""),
            ServerMetricsJsonl
        );
        assert_eq!(classify("run7_aiperf.json", b""), RunSummary);
        assert_eq!(
            classify("x.server_metrics_export.json", b""),
            ServerMetricsJson
        );
    }

    #[test]
    fn sniffing() {
        assert_eq!(
            classify(
                "run7.jsonl",
                b"{\"metadata\": {\"x\": 1}, \"metrics\": {}}\n"
            ),
            ProfileJsonl
        );
        assert_eq!(
            classify(
                "dump.jsonl",
                b"{\"endpoint_url\":\"u\",\"timestamp_ns\":1,\"metrics\":{}}\n"
            ),
            ServerMetricsJsonl
        );
        assert_eq!(
            classify("x.csv", b"# AIPerf Server Metrics Export (CSV)\n"),
            ServerMetricsCsv
        );
        assert_eq!(
            classify("cap.txt", b"vllm:num_requests_running{a=\"b\"} 1\n"),
            PrometheusText
        );
        assert_eq!(classify("notes.txt", b"hello world, this is text"), Other);
        assert_eq!(
            classify(
                "m.json",
                b"{\"schema_version\":\"1.1\",\"summary\":{\"endpoint_info\":{}}}"
            ),
            ServerMetricsJson
        );
    }

    #[test]
    fn every_file_aiperf_writes_is_read_or_ignored_by_name() {
        let read = [
            ("server_metrics_export.json", ServerMetricsJson),
            ("server_metrics_export.csv", ServerMetricsCsv),
            ("server_metrics_export.jsonl", ServerMetricsJsonl),
            ("profile_export.jsonl", ProfileJsonl),
            ("profile_export_aiperf.json", RunSummary),
        ];
        for (name, kind) in read {
            assert_eq!(recognise_name(name), Recognition::Read(kind), "{name}");
        }
        let ignored = [
            "profile_export_aiperf.csv",
            "server_metrics_export.parquet",
            "profile_export.parquet",
            "profile_export_raw.jsonl",
            "inputs.json",
            "gpu_telemetry_export.jsonl",
            "gpu_telemetry_export.csv",
            "profile_export_aiperf_timeslices.json",
            "profile_export_aiperf_timeslices.csv",
            "server_metrics_metadata.json",
            "aggregate/profile_export_aiperf_aggregate.json",
            "plots/ttft_over_time.png",
            "logs/aiperf.log",
            "run7_aiperf.csv",
            "run7_gpu_telemetry.jsonl",
            "server_metrics_export.json.gz",
        ];
        for name in ignored {
            assert!(
                matches!(recognise_name(name), Recognition::Ignored(_)),
                "{name}"
            );
        }
    }

    #[test]
    fn summary_csv_is_ignored_not_read_as_json() {
        let csv = b"Metric,avg,min,max\nRequest Latency (ms),1.0,1.0,1.0\n";
        assert_eq!(
            recognise("aiperf_artifacts/profile_export_aiperf.csv", csv),
            Err("run summary as CSV: the JSON one is read")
        );
        assert_eq!(classify("profile_export_aiperf.csv", csv), Other);
        // Junk that sniffs as nothing is ignored with the generic reason.
        assert_eq!(recognise("notes.txt", b"hello"), Err(UNRECOGNISED));
        assert_eq!(recognise_name("dump.jsonl"), Recognition::Unknown);
    }
}
