//! `inspect`: what one run's artifacts contain, before any accounting. Endpoints with their
//! family and series counts, phases and window candidates, schema versions, and which kinds of
//! evidence (raw scrapes, timeslices, totals, per-request records) are present.

use crate::model::{
    Family, LaunchFacts, MetricType, Phase, ProfileEra, Role, ServerMetricsExport,
    ServerMetricsFormat,
};
use crate::read::names::{canonical_family, engine_prefix};
use crate::read::run::IgnoredFile;
use crate::read::{ArtifactKind, Run};
use crate::strmap::StrMap;
use crate::wire::EpochNs;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The accounting contract this build implements.
pub const CONTRACT_VERSION: &str = "kvledger/1";

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[cfg_attr(target_arch = "wasm32", tsify(hashmap_as_object))]
#[serde(rename_all = "snake_case")]
pub struct RunInspection {
    pub contract_version: String,
    /// Every input file with what it was recognised as, sorted by name.
    pub files: Vec<InspectedFile>,
    /// Every input file not read, with the reason, sorted by name.
    pub ignored: Vec<IgnoredFile>,
    /// The `benchmark_id` each file states, by file name (files stating none are not listed).
    pub benchmark_ids: BTreeMap<String, String>,
    /// One entry per server-metrics export (JSON, CSV).
    pub server_metrics: Vec<ServerMetricsInfo>,
    /// Every endpoint seen in any export or scrape, sorted by URL.
    pub endpoints: Vec<EndpointInspection>,
    /// Every metric family kept, sorted by name.
    pub families: Vec<FamilyInspection>,
    /// Phase ranges as the exports state them (schema 1.1 `phase_time_ranges`, else records).
    pub phases: Phases,
    /// Every source that could fix the profiling window, strongest first.
    pub window_candidates: Vec<WindowCandidate>,
    pub evidence: Evidence,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub requests: Option<RequestCounts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub run_summary: Option<RunSummaryInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub launch: Option<LaunchInfo>,
    /// Plain-language observations a reader of the table should know.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct InspectedFile {
    pub name: String,
    pub kind: ArtifactKind,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct ServerMetricsInfo {
    pub format: ServerMetricsFormat,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub schema_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub aiperf_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub benchmark_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub metrics_phase: Option<String>,
    pub families: u32,
    pub warmup_families: u32,
    pub skipped_families: u32,
    pub series: u32,
    pub timeslices: u32,
    pub has_phase_time_ranges: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub start_time: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub end_time: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct EndpointInspection {
    pub endpoint_url: String,
    /// `host:port` as launch facts name endpoints.
    pub host_port: String,
    /// Engines whose metric prefixes this endpoint exports (`vllm`, `sglang`, `trtllm`, `atom`, `dynamo`).
    pub engines: Vec<String>,
    /// A role named in the URL path (e.g. `/prefill/metrics`), a hint only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub path_role: Option<Role>,
    /// Families with at least one series on this endpoint (profiling and warmup together).
    pub families: u32,
    pub series: u32,
    pub counter_series: u32,
    pub gauge_series: u32,
    pub histogram_series: u32,
    pub timeslices: u32,
    /// Raw scrapes of this endpoint (JSONL records and Prometheus captures).
    pub scrapes: u32,
    /// Where this endpoint was seen: `json`, `csv`, `jsonl`, `prometheus_text`.
    pub sources: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub first_fetch_ns: Option<EpochNs>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub last_fetch_ns: Option<EpochNs>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub first_scrape_ns: Option<EpochNs>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub last_scrape_ns: Option<EpochNs>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct FamilyInspection {
    /// The name as exported (first spelling seen, by sorted order).
    pub name: String,
    /// The lookup key shared by every alias spelling.
    pub canonical: String,
    /// Every spelling seen, when more than one (an alias collision to look at).
    pub spellings: Vec<String>,
    /// `None` when only untyped JSONL scrapes carry it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub metric_type: Option<MetricType>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub engine: Option<String>,
    pub endpoints: u32,
    pub series: u32,
    pub in_warmup: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct Phases {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub profiling: Option<NsRange>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub warmup: Option<NsRange>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct NsRange {
    pub start_ns: EpochNs,
    pub end_ns: EpochNs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum WindowCandidateSource {
    /// `summary.phase_time_ranges.profiling` of a schema 1.1 export.
    PhaseTimeRanges,
    /// First start and last end of the profiling records in `profile_export.jsonl`.
    ProfileRecords,
    /// `min_request_timestamp` / `max_response_timestamp` of `profile_export_aiperf.json`.
    RunSummaryTimestamps,
    /// The timeslice grid of a schema 1.0 export (first slice start, last slice end).
    TimesliceGrid,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct WindowCandidate {
    pub source: WindowCandidateSource,
    pub start_ns: EpochNs,
    pub end_ns: EpochNs,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct Evidence {
    /// Timed raw cumulative scrapes (JSONL records, timed Prometheus captures).
    pub raw_scrapes: u32,
    /// Prometheus captures without a known time: values only.
    pub untimed_captures: u32,
    /// Counter series carrying timeslices.
    pub counter_series_with_timeslices: u32,
    /// Counter series carrying `stats.total` (upper bounds of the window increase).
    pub counter_series_with_totals: u32,
    /// Schema 1.1 phase-scoped totals (`metrics_phase` with `phase_time_ranges`).
    pub phase_totals: bool,
    pub warmup_metrics: bool,
    pub profile_records: bool,
    pub run_summary: bool,
    pub launch_facts: bool,
    /// Only the CSV export (stats without timeslices) carries server metrics.
    pub csv_only: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct RequestCounts {
    pub era: ProfileEra,
    pub records: u32,
    pub profiling: u32,
    pub warmup: u32,
    /// Records without a phase (older exports; InferenceX treats them as profiling).
    pub without_phase: u32,
    pub profiling_errors: u32,
    pub warmup_errors: u32,
    pub cancelled: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct RunSummaryInfo {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub schema_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub aiperf_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub request_count: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub error_request_count: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub theoretical_prefix_cache_hit: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub benchmark_duration_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct LaunchInfo {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub framework: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub disaggregated: Option<bool>,
    pub prefill: Vec<String>,
    pub decode: Vec<String>,
    pub unified: Vec<String>,
    /// Endpoints named in the launch facts that no export or scrape contains.
    pub not_scraped: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub kv_offloading: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub kv_offload_backend: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub enable_prefix_caching: Option<bool>,
}

/// What follows a URL's first `://` (all of it without one), found by a byte search:
/// `split_once("://")` sets up a two-way searcher per call, slow in V8's baseline code (the
/// same search in the CSV reader was 9.5 ms of a 274 ms first call on 2,560 endpoints).
fn after_scheme(url: &str) -> &str {
    match url.as_bytes().windows(3).position(|w| w == b"://") {
        Some(i) => url.get(i + 3..).unwrap_or(""),
        None => url,
    }
}

/// `host:port` of a scrape URL: scheme, credentials and path dropped, host lowercased.
pub fn host_port(endpoint_url: &str) -> String {
    let rest = after_scheme(endpoint_url);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    authority.to_ascii_lowercase()
}

/// A role spelled as a path segment of the URL (`/prefill/metrics`, `/decode/metrics`).
pub fn role_from_path(endpoint_url: &str) -> Option<Role> {
    let rest = after_scheme(endpoint_url);
    let path = rest.split_once('/').map(|(_, p)| p).unwrap_or("");
    const SEGMENTS: [(&str, Role); 7] = [
        ("prefill", Role::Prefill),
        ("decode", Role::Decode),
        ("frontend", Role::Frontend),
        ("router", Role::Frontend),
        ("unified", Role::Unified),
        ("agg", Role::Unified),
        ("aggregated", Role::Unified),
    ];
    // Compared ignoring case in place: no lowercased copy of every segment of every URL.
    path.split('/').find_map(|seg| {
        SEGMENTS
            .iter()
            .find(|(name, _)| seg.eq_ignore_ascii_case(name))
            .map(|(_, role)| *role)
    })
}

#[derive(Default)]
struct EndpointAcc {
    families: BTreeSet<String>,
    engines: BTreeSet<&'static str>,
    series: u32,
    counter: u32,
    gauge: u32,
    histogram: u32,
    timeslices: u32,
    scrapes: u32,
    sources: BTreeSet<&'static str>,
    first_fetch_ns: Option<u64>,
    last_fetch_ns: Option<u64>,
    first_scrape_ns: Option<u64>,
    last_scrape_ns: Option<u64>,
}

#[derive(Default)]
struct FamilyAcc {
    spellings: BTreeSet<String>,
    metric_type: Option<MetricType>,
    endpoints: BTreeSet<String>,
    series: u32,
    in_warmup: bool,
}

/// Accumulators by key while a run is read, put in key order once at the end. Found by hash:
/// keys come in file order, and a sorted map grown in that order was quadratic in them (an
/// export of 80,000 families in shuffled order, or scrapes naming as many).
struct ByKey<V> {
    at: crate::hash::Map<String, u32>,
    items: Vec<V>,
}

impl<V: Default> ByKey<V> {
    fn new() -> Self {
        ByKey {
            at: crate::hash::Map::default(),
            items: Vec::new(),
        }
    }

    fn get_or_default(&mut self, key: &str) -> &mut V {
        let i = match self.at.get(key) {
            Some(&i) => i as usize,
            None => {
                let i = self.items.len();
                self.at
                    .insert(key.to_owned(), u32::try_from(i).unwrap_or(u32::MAX));
                self.items.push(V::default());
                i
            }
        };
        &mut self.items[i]
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        let i = *self.at.get(key)?;
        self.items.get_mut(i as usize)
    }

    /// The pairs in key order.
    fn sorted(self) -> Vec<(String, V)> {
        let mut keys: Vec<(String, u32)> = self.at.into_iter().collect();
        crate::sort::sort_by(&mut keys, |a, b| a.0.cmp(&b.0));
        let mut items: Vec<Option<V>> = self.items.into_iter().map(Some).collect();
        keys.into_iter()
            .filter_map(|(k, i)| Some((k, items.get_mut(i as usize)?.take()?)))
            .collect()
    }
}

fn add(a: &mut u32, n: usize) {
    *a = a.saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
}

fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) | (None, x) => x,
    }
}

fn max_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) | (None, x) => x,
    }
}

fn add_family(
    endpoints: &mut ByKey<EndpointAcc>,
    families: &mut ByKey<FamilyAcc>,
    family: &Family,
    source: &'static str,
    warmup: bool,
) {
    let key = canonical_family(&family.name);
    let fam = families.get_or_default(&key);
    fam.spellings.insert(family.name.clone());
    fam.metric_type = Some(family.metric_type);
    fam.in_warmup |= warmup;
    add(&mut fam.series, family.series.len());
    for s in &family.series {
        fam.endpoints.insert(s.endpoint_url.to_string());
        let ep = endpoints.get_or_default(&s.endpoint_url);
        ep.families.insert(canonical_family(&family.name));
        if let Some(e) = engine_prefix(&family.name) {
            ep.engines.insert(e);
        }
        ep.sources.insert(source);
        ep.series = ep.series.saturating_add(1);
        match family.metric_type {
            MetricType::Counter => ep.counter = ep.counter.saturating_add(1),
            MetricType::Histogram => ep.histogram = ep.histogram.saturating_add(1),
            MetricType::Gauge | MetricType::Unknown => ep.gauge = ep.gauge.saturating_add(1),
        }
        add(&mut ep.timeslices, s.timeslices.len());
    }
}

fn export_info(export: &ServerMetricsExport) -> ServerMetricsInfo {
    let mut series = 0u32;
    let mut timeslices = 0u32;
    for (_, f) in export.families() {
        add(&mut series, f.series.len());
        for s in &f.series {
            add(&mut timeslices, s.timeslices.len());
        }
    }
    ServerMetricsInfo {
        format: export.format,
        schema_version: export.schema_version.clone(),
        aiperf_version: export.aiperf_version.clone(),
        benchmark_id: export.benchmark_id.clone(),
        metrics_phase: export.metrics_phase.clone(),
        families: u32::try_from(export.metrics.len()).unwrap_or(u32::MAX),
        warmup_families: u32::try_from(export.warmup_metrics.len()).unwrap_or(u32::MAX),
        skipped_families: export.skipped_families,
        series,
        timeslices,
        has_phase_time_ranges: export.summary.phase_time_ranges.profiling.is_some()
            || export.summary.phase_time_ranges.warmup.is_some(),
        start_time: export.summary.start_time.clone(),
        end_time: export.summary.end_time.clone(),
    }
}

fn timeslice_grid(export: &ServerMetricsExport) -> Option<NsRange> {
    let mut start = None;
    let mut end = None;
    for f in &export.metrics {
        for s in &f.series {
            for t in &s.timeslices {
                start = min_opt(start, Some(t.start_ns));
                end = max_opt(end, Some(t.end_ns));
            }
        }
    }
    Some(NsRange {
        start_ns: EpochNs(start?),
        end_ns: EpochNs(end?),
    })
}

fn launch_info(launch: &LaunchFacts, seen: &BTreeSet<String>) -> LaunchInfo {
    let mut prefill: BTreeSet<String> =
        crate::sort::set_of(launch.prefill_endpoints.iter().cloned());
    let mut decode: BTreeSet<String> = crate::sort::set_of(launch.decode_endpoints.iter().cloned());
    let mut unified: BTreeSet<String> = crate::sort::set_of(launch.agg_endpoints.iter().cloned());
    for (ep, role) in &launch.endpoint_roles {
        match role {
            Role::Prefill => prefill.insert(ep.clone()),
            Role::Decode => decode.insert(ep.clone()),
            Role::Unified => unified.insert(ep.clone()),
            Role::Frontend | Role::Excluded => false,
        };
    }
    let named: BTreeSet<String> = crate::sort::set_of(
        prefill
            .iter()
            .chain(&decode)
            .chain(&unified)
            .chain(launch.endpoint_roles.keys())
            .cloned(),
    );
    LaunchInfo {
        framework: launch.framework.clone(),
        disaggregated: launch.disaggregated,
        prefill: prefill.into_iter().collect(),
        decode: decode.into_iter().collect(),
        unified: unified.into_iter().collect(),
        not_scraped: named.into_iter().filter(|e| !seen.contains(e)).collect(),
        kv_offloading: launch.kv_offloading.clone(),
        kv_offload_backend: launch.kv_offload_backend.clone(),
        enable_prefix_caching: launch.enable_prefix_caching,
    }
}

/// Summarise a run. Deterministic: every list is sorted, independent of input order.
pub fn inspect_run(run: &Run) -> RunInspection {
    let mut endpoints: ByKey<EndpointAcc> = ByKey::new();
    let mut families: ByKey<FamilyAcc> = ByKey::new();
    let mut server_metrics = Vec::new();
    let mut notes = Vec::new();
    let mut evidence = Evidence::default();
    let mut phases = Phases::default();
    let mut candidates = Vec::new();

    let exports = [run.server_json.as_ref(), run.server_csv.as_ref()];
    for export in exports.into_iter().flatten() {
        let source = match export.format {
            ServerMetricsFormat::Json => "json",
            ServerMetricsFormat::Csv => "csv",
        };
        server_metrics.push(export_info(export));
        for (phase, f) in export.families() {
            add_family(&mut endpoints, &mut families, f, source, phase == "warmup");
            if f.metric_type == MetricType::Counter {
                for s in &f.series {
                    if !s.timeslices.is_empty() {
                        evidence.counter_series_with_timeslices += 1;
                    }
                    if matches!(&s.stats, crate::model::Stats::Counter(c) if c.total.get().is_some())
                    {
                        evidence.counter_series_with_totals += 1;
                    }
                }
            }
        }
        for (url, info) in &export.summary.endpoint_info {
            let ep = endpoints.get_or_default(url);
            ep.first_fetch_ns = min_opt(ep.first_fetch_ns, info.first_fetch_ns);
            ep.last_fetch_ns = max_opt(ep.last_fetch_ns, info.last_fetch_ns);
            ep.sources.insert(source);
        }
        let ranges = export.summary.phase_time_ranges;
        if let Some(p) = ranges.profiling {
            let r = NsRange {
                start_ns: EpochNs(p.start_ns),
                end_ns: EpochNs(p.end_ns),
            };
            phases.profiling.get_or_insert(r);
            candidates.push(WindowCandidate {
                source: WindowCandidateSource::PhaseTimeRanges,
                start_ns: r.start_ns,
                end_ns: r.end_ns,
            });
            if export.metrics_phase.is_some() {
                evidence.phase_totals = true;
            }
        }
        if let Some(w) = ranges.warmup {
            phases.warmup.get_or_insert(NsRange {
                start_ns: EpochNs(w.start_ns),
                end_ns: EpochNs(w.end_ns),
            });
        }
        if !export.warmup_metrics.is_empty() {
            evidence.warmup_metrics = true;
        }
        if ranges.profiling.is_none() {
            if let Some(g) = timeslice_grid(export) {
                candidates.push(WindowCandidate {
                    source: WindowCandidateSource::TimesliceGrid,
                    start_ns: g.start_ns,
                    end_ns: g.end_ns,
                });
            }
        }
    }
    evidence.csv_only = run.server_csv.is_some() && run.server_json.is_none();
    if evidence.csv_only {
        notes.push(
            "only the CSV export carries server metrics: stats totals without timeslices (upper bounds only)"
                .to_string(),
        );
    }

    for (scrape, file) in run.scrapes.iter().zip(&run.scrape_files) {
        let source = if file.to_ascii_lowercase().ends_with(".jsonl") {
            "jsonl"
        } else {
            "prometheus_text"
        };
        let ep = endpoints.get_or_default(&scrape.endpoint_url);
        ep.sources.insert(source);
        ep.scrapes = ep.scrapes.saturating_add(1);
        ep.first_scrape_ns = min_opt(ep.first_scrape_ns, scrape.timestamp_ns);
        ep.last_scrape_ns = max_opt(ep.last_scrape_ns, scrape.timestamp_ns);
        match scrape.timestamp_ns {
            Some(_) => evidence.raw_scrapes += 1,
            None => evidence.untimed_captures += 1,
        }
        for fam in scrape.families() {
            let key = canonical_family(fam.name);
            ep.families.insert(key.clone());
            if let Some(e) = engine_prefix(fam.name) {
                ep.engines.insert(e);
            }
            let acc = families.get_or_default(&key);
            acc.spellings.insert(fam.name.to_string());
            if acc.metric_type.is_none() {
                acc.metric_type = fam.metric_type;
            }
            acc.endpoints.insert(scrape.endpoint_url.clone());
            acc.in_warmup |= scrape.phase == Some(Phase::Warmup);
        }
    }
    if evidence.untimed_captures > 0 {
        notes.push(format!(
            "{} Prometheus capture(s) without a known time: give captures.json or --capture to use them as window evidence",
            evidence.untimed_captures
        ));
    }
    // Series counts per endpoint from scrapes: the label sets of the latest scrape of each
    // endpoint (every scrape repeats them).
    let mut latest: StrMap<&crate::model::Scrape> = StrMap::new();
    for s in &run.scrapes {
        latest.insert(&s.endpoint_url, s);
    }
    for (url, s) in latest.into_pairs() {
        let Some(ep) = endpoints.get_mut(&url) else {
            continue;
        };
        if ep.sources.contains("json") || ep.sources.contains("csv") {
            continue;
        }
        for fam in s.families() {
            add(&mut ep.series, fam.samples.len());
            match fam.metric_type {
                Some(MetricType::Counter) => add(&mut ep.counter, fam.samples.len()),
                Some(MetricType::Histogram) => add(&mut ep.histogram, fam.samples.len()),
                Some(MetricType::Gauge | MetricType::Unknown) => {
                    add(&mut ep.gauge, fam.samples.len())
                }
                None => {}
            }
            if let Some(acc) = families.get_mut(&canonical_family(fam.name)) {
                add(&mut acc.series, fam.samples.len());
            }
        }
    }

    let requests = run.profile.as_ref().map(|p| {
        let mut c = RequestCounts {
            era: p.era,
            records: 0,
            profiling: 0,
            warmup: 0,
            without_phase: 0,
            profiling_errors: 0,
            warmup_errors: 0,
            cancelled: 0,
        };
        let mut start: Option<u64> = None;
        let mut end: Option<u64> = None;
        for r in &p.records {
            c.records += 1;
            let failed = r.error.is_some();
            match r.phase {
                Some(Phase::Profiling) => {
                    c.profiling += 1;
                    if failed {
                        c.profiling_errors += 1;
                    }
                    start = min_opt(start, r.request_start_ns);
                    end = max_opt(end, r.request_end_ns);
                }
                Some(Phase::Warmup) => {
                    c.warmup += 1;
                    if failed {
                        c.warmup_errors += 1;
                    }
                }
                None => c.without_phase += 1,
            }
            if r.was_cancelled {
                c.cancelled += 1;
            }
        }
        if let (Some(s), Some(e)) = (start, end) {
            let r = NsRange {
                start_ns: EpochNs(s),
                end_ns: EpochNs(e),
            };
            phases.profiling.get_or_insert(r);
            candidates.push(WindowCandidate {
                source: WindowCandidateSource::ProfileRecords,
                start_ns: EpochNs(s),
                end_ns: EpochNs(e),
            });
        }
        c
    });
    evidence.profile_records = run.profile.is_some();

    let run_summary = run.summary.as_ref().map(|s| {
        if let (Some(a), Some(b)) = (s.min_request_timestamp_ns, s.max_response_timestamp_ns) {
            candidates.push(WindowCandidate {
                source: WindowCandidateSource::RunSummaryTimestamps,
                start_ns: EpochNs(a),
                end_ns: EpochNs(b),
            });
        }
        RunSummaryInfo {
            schema_version: s.schema_version.clone(),
            aiperf_version: s.aiperf_version.clone(),
            request_count: s.request_count,
            error_request_count: s.error_request_count,
            theoretical_prefix_cache_hit: s.theoretical_prefix_cache_hit,
            benchmark_duration_s: s.benchmark_duration_s,
        }
    });
    evidence.run_summary = run.summary.is_some();
    evidence.launch_facts = run.launch.is_some();

    let endpoints = endpoints.sorted();
    let families = families.sorted();
    let seen: BTreeSet<String> = crate::sort::set_of(endpoints.iter().map(|(u, _)| host_port(u)));
    let launch = run.launch.as_ref().map(|l| launch_info(l, &seen));
    if let Some(l) = &launch {
        if !l.not_scraped.is_empty() {
            notes.push(format!(
                "launch facts name endpoint(s) with no metrics in the inputs: {}",
                l.not_scraped.join(", ")
            ));
        }
    }
    if endpoints.is_empty() {
        notes.push("no server metrics in the inputs".to_string());
    }
    for (key, fam) in &families {
        if fam.spellings.len() > 1 {
            let names: Vec<&str> = fam.spellings.iter().map(String::as_str).collect();
            notes.push(format!(
                "family `{key}` is exported under {} spellings: {}",
                names.len(),
                names.join(", ")
            ));
        }
    }

    crate::sort::sort_by_key(&mut candidates, |c| (c.source, c.start_ns, c.end_ns));
    candidates.dedup();

    RunInspection {
        contract_version: CONTRACT_VERSION.to_string(),
        files: run
            .files
            .iter()
            .map(|f| InspectedFile {
                name: f.name.clone(),
                kind: f.kind,
            })
            .collect(),
        ignored: run.ignored.clone(),
        benchmark_ids: run.benchmark_ids.clone(),
        server_metrics,
        endpoints: endpoints
            .into_iter()
            .map(|(url, e)| EndpointInspection {
                host_port: host_port(&url),
                path_role: role_from_path(&url),
                endpoint_url: url,
                engines: e.engines.iter().map(|s| s.to_string()).collect(),
                families: u32::try_from(e.families.len()).unwrap_or(u32::MAX),
                series: e.series,
                counter_series: e.counter,
                gauge_series: e.gauge,
                histogram_series: e.histogram,
                timeslices: e.timeslices,
                scrapes: e.scrapes,
                sources: e.sources.iter().map(|s| s.to_string()).collect(),
                first_fetch_ns: e.first_fetch_ns.map(EpochNs),
                last_fetch_ns: e.last_fetch_ns.map(EpochNs),
                first_scrape_ns: e.first_scrape_ns.map(EpochNs),
                last_scrape_ns: e.last_scrape_ns.map(EpochNs),
            })
            .collect(),
        families: families
            .into_iter()
            .map(|(key, f)| FamilyInspection {
                name: f
                    .spellings
                    .iter()
                    .next()
                    .cloned()
                    .unwrap_or_else(|| key.clone()),
                engine: engine_prefix(&key).map(str::to_string),
                canonical: key,
                spellings: if f.spellings.len() > 1 {
                    f.spellings.into_iter().collect()
                } else {
                    Vec::new()
                },
                metric_type: f.metric_type,
                endpoints: u32::try_from(f.endpoints.len()).unwrap_or(u32::MAX),
                series: f.series,
                in_warmup: f.in_warmup,
            })
            .collect(),
        phases,
        window_candidates: candidates,
        evidence,
        requests,
        run_summary,
        launch,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_port_forms() {
        assert_eq!(host_port("http://LocalHost:8000/metrics"), "localhost:8000");
        assert_eq!(
            host_port("https://user:pw@10.0.0.5:9009/prefill/metrics"),
            "10.0.0.5:9009"
        );
        assert_eq!(host_port("localhost:8889"), "localhost:8889");
    }

    #[test]
    fn roles_in_paths() {
        assert_eq!(
            role_from_path("http://h:1/prefill/metrics"),
            Some(Role::Prefill)
        );
        assert_eq!(
            role_from_path("http://h:1/decode/metrics"),
            Some(Role::Decode)
        );
        assert_eq!(role_from_path("http://h:1/metrics"), None);
        assert_eq!(role_from_path("http://prefill:1/metrics"), None);
    }
}
