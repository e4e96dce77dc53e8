//! Recognise what an input file is: by its name as AIPerf writes it (default names and the
//! `--profile-export-prefix` variants), else by sniffing the first bytes.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
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
}

/// Classify a file from its name (a path or a bare name) and its first bytes.
pub fn classify(name: &str, head: &[u8]) -> ArtifactKind {
    let base = name
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(name)
        .to_ascii_lowercase();
    if let Some(kind) = classify_by_name(&base) {
        return kind;
    }
    sniff(&base, head)
}

fn classify_by_name(base: &str) -> Option<ArtifactKind> {
    let ext = base.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    let stem = base.strip_suffix(&format!(".{ext}")).unwrap_or(base);
    // Files AIPerf writes beside the ones we read; never metrics or records.
    const OTHER: [&str; 5] = [
        "gpu_telemetry_export",
        "profile_export_raw",
        "inputs",
        "profile_export_aiperf_timeslices",
        "server_metrics_metadata",
    ];
    if OTHER
        .iter()
        .any(|o| stem == *o || stem.ends_with(&format!("_{o}")))
    {
        return Some(ArtifactKind::Other);
    }
    if stem.ends_with("_timeslices") || stem.ends_with("_raw") || ext == "parquet" {
        return Some(ArtifactKind::Other);
    }
    let server = stem == "server_metrics_export"
        || stem.ends_with("_server_metrics")
        || stem.ends_with(".server_metrics_export")
        || stem.ends_with("_server_metrics_export");
    if server {
        return match ext {
            "json" => Some(ArtifactKind::ServerMetricsJson),
            "csv" => Some(ArtifactKind::ServerMetricsCsv),
            "jsonl" => Some(ArtifactKind::ServerMetricsJsonl),
            _ => None,
        };
    }
    if stem == "profile_export_aiperf" || (stem.ends_with("_aiperf") && ext == "json") {
        return Some(ArtifactKind::RunSummary);
    }
    if stem == "profile_export" && ext == "jsonl" {
        return Some(ArtifactKind::ProfileJsonl);
    }
    if ext == "json" && (stem == "launch" || stem == "launch_facts" || stem.ends_with(".launch")) {
        return Some(ArtifactKind::LaunchFacts);
    }
    if ext == "json" && (stem == "captures" || stem.ends_with(".captures")) {
        return Some(ArtifactKind::CaptureManifest);
    }
    if matches!(ext, "prom" | "metrics") {
        return Some(ArtifactKind::PrometheusText);
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
}
