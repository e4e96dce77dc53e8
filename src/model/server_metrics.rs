//! The AIPerf server-metrics export (JSON schema 1.0 / 1.1, or the CSV with stats only).

use super::{Labels, OptF64, Pieces};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "lowercase")]
pub enum MetricType {
    Counter,
    Gauge,
    Histogram,
    /// Untyped Prometheus families; AIPerf gives them gauge-shaped stats.
    Unknown,
}

impl MetricType {
    /// A type name, in any ASCII case (without a lowercased copy: the CSV reader asks once
    /// per row).
    pub fn parse(s: &str) -> Option<MetricType> {
        // The spellings AIPerf writes, before the trimmed, case-blind comparisons.
        match s {
            "counter" => return Some(MetricType::Counter),
            "gauge" => return Some(MetricType::Gauge),
            "histogram" => return Some(MetricType::Histogram),
            _ => {}
        }
        let s = s.trim();
        [
            ("counter", MetricType::Counter),
            ("gauge", MetricType::Gauge),
            ("histogram", MetricType::Histogram),
            ("unknown", MetricType::Unknown),
            ("untyped", MetricType::Unknown),
        ]
        .into_iter()
        .find_map(|(name, t)| s.eq_ignore_ascii_case(name).then_some(t))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MetricType::Counter => "counter",
            MetricType::Gauge => "gauge",
            MetricType::Histogram => "histogram",
            MetricType::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "lowercase")]
pub enum ServerMetricsFormat {
    Json,
    Csv,
}

/// One server-metrics export file.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ServerMetricsExport {
    pub format: ServerMetricsFormat,
    pub schema_version: Option<String>,
    pub aiperf_version: Option<String>,
    pub benchmark_id: Option<String>,
    pub summary: ExportSummary,
    /// Schema 1.1 only: which phase `metrics` describes (always "profiling" in practice).
    pub metrics_phase: Option<String>,
    /// Profiling-phase families, sorted by name.
    pub metrics: Vec<Family>,
    /// Schema 1.1 only: warmup-phase families (same shape), sorted by name.
    pub warmup_metrics: Vec<Family>,
    /// Families present in the file but not kept by the caller's family filter.
    pub skipped_families: u32,
    /// JSON paths of repeated family keys (`metrics.vllm:prompt_tokens`,
    /// `warmup_metrics.x`) whose value was identical to the first occurrence and was merged
    /// into it, sorted. A non-identical repeat is refused (`DUPLICATE_KEY`). Accounting notes
    /// `duplicate_family_merged` when this is not empty. (Repeated series within a family are
    /// kept as written, not merged.)
    pub merged_duplicates: Vec<String>,
    /// A CSV export read lean ([`crate::read::FamilyFilter::lean`]): its series, of each only
    /// what accounting reads. The families in `metrics` then hold no series. `None` for every
    /// other read. Not part of the serialized shape (a lean read is accounting's, not shown).
    #[serde(skip)]
    #[schemars(skip)]
    pub csv_lean: Option<CsvLean>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, schemars::JsonSchema)]
pub struct ExportSummary {
    pub endpoints_configured: Vec<String>,
    pub endpoints_successful: Vec<String>,
    /// Naive local-time ISO strings as AIPerf writes them (no timezone: never assume UTC).
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    pub endpoint_info: BTreeMap<String, EndpointInfo>,
    pub phase_time_ranges: PhaseTimeRanges,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, schemars::JsonSchema)]
pub struct EndpointInfo {
    pub total_fetches: Option<u64>,
    pub first_fetch_ns: Option<u64>,
    pub last_fetch_ns: Option<u64>,
    pub avg_fetch_latency_ms: Option<f64>,
    pub unique_updates: Option<u64>,
    pub first_update_ns: Option<u64>,
    pub last_update_ns: Option<u64>,
    pub duration_seconds: Option<f64>,
    pub avg_update_interval_ms: Option<f64>,
    pub median_update_interval_ms: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, schemars::JsonSchema)]
pub struct PhaseTimeRanges {
    pub profiling: Option<TimeRange>,
    pub warmup: Option<TimeRange>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct TimeRange {
    pub start_ns: u64,
    pub end_ns: u64,
}

/// One metric family: its name as exported (AIPerf strips a counter's `_total`).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Family {
    pub name: String,
    pub metric_type: MetricType,
    pub description: String,
    pub unit: Option<String>,
    /// Empty in a lean read: see [`Family::lean_series`] (JSON) and
    /// [`ServerMetricsExport::csv_lean`] (CSV).
    pub series: Vec<Series>,
    /// A JSON export read lean ([`crate::read::FamilyFilter::lean`]): its series, of each only
    /// what accounting reads, in file order; `series` is then empty. Empty in every other
    /// read. Not part of the serialized shape (a lean read is accounting's, not shown). In
    /// pieces: one family can hold hundreds of thousands.
    #[serde(skip)]
    #[schemars(skip)]
    pub lean_series: Pieces<LeanSeries>,
}

/// Identity = (family, endpoint_url, labels).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Series {
    /// Shared: a reader gives the series of one endpoint one copy.
    #[serde(serialize_with = "str_ser")]
    #[schemars(with = "String")]
    pub endpoint_url: Arc<str>,
    /// Shared: a reader may give every series with the same label set one copy.
    #[serde(serialize_with = "labels_ser")]
    pub labels: Arc<Labels>,
    pub stats: Stats,
    /// Every timeslice as written.
    pub timeslices: Vec<Timeslice>,
    /// Histograms only: cumulative-by-`le` counts, keys exactly as scraped, in file order.
    pub buckets: Option<Vec<Bucket>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Stats {
    Counter(CounterStats),
    /// Gauges and `unknown` families.
    Gauge(GaugeStats),
    Histogram(HistogramStats),
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, schemars::JsonSchema)]
pub struct CounterStats {
    pub total: OptF64,
    pub rate: OptF64,
    pub rate_avg: OptF64,
    pub rate_min: OptF64,
    pub rate_max: OptF64,
    pub rate_std: OptF64,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, schemars::JsonSchema)]
pub struct GaugeStats {
    pub avg: OptF64,
    pub min: OptF64,
    pub max: OptF64,
    pub std: OptF64,
    pub p1: OptF64,
    pub p5: OptF64,
    pub p10: OptF64,
    pub p25: OptF64,
    pub p50: OptF64,
    pub p75: OptF64,
    pub p90: OptF64,
    pub p95: OptF64,
    pub p99: OptF64,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, schemars::JsonSchema)]
pub struct HistogramStats {
    pub count: OptF64,
    pub count_rate: OptF64,
    pub sum: OptF64,
    pub sum_rate: OptF64,
    pub avg: OptF64,
    pub p1_estimate: OptF64,
    pub p5_estimate: OptF64,
    pub p10_estimate: OptF64,
    pub p25_estimate: OptF64,
    pub p50_estimate: OptF64,
    pub p75_estimate: OptF64,
    pub p90_estimate: OptF64,
    pub p95_estimate: OptF64,
    pub p99_estimate: OptF64,
}

/// One timeslice. Which value fields are present depends on the family type:
/// counter `total`/`rate`; gauge `avg`/`min`/`max`; histogram `count`/`sum`/`avg`/`buckets`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Timeslice {
    pub start_ns: u64,
    pub end_ns: u64,
    /// False only on a clipped last slice (AIPerf omits the field when complete).
    pub is_complete: bool,
    pub total: Option<f64>,
    pub rate: Option<f64>,
    pub avg: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub count: Option<f64>,
    pub sum: Option<f64>,
    pub buckets: Option<Vec<Bucket>>,
}

fn str_ser<S: serde::Serializer>(v: &Arc<str>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(v)
}

fn labels_ser<S: serde::Serializer>(v: &Arc<Labels>, s: S) -> Result<S::Ok, S::Error> {
    v.as_ref().serialize(s)
}

/// A counter timeslice as accounting keeps it: its stated bounds and its mass (24 B; a
/// [`Timeslice`] is 160 B). `rate` is the mass over the bounds and `is_complete` only marks
/// a clipped tail, which the bounds already say: accounting reads neither.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CounterSlice {
    pub start_ns: u64,
    pub end_ns: u64,
    pub total: f64,
}

/// A series of a JSON export read lean (64 B where a [`Series`] is 208: an export of many
/// label sets holds one per series): its endpoint and shared label set, the stats accounting
/// reads (by the family's type, placed as [`CsvSeries::values_of`] places them), and of a
/// counter each timeslice's bounds and `total`, in file order, slices without a `total`
/// left out. Shared, so accounting keeps the slices without a copy.
#[derive(Debug, Clone, PartialEq)]
pub struct LeanSeries {
    pub endpoint_url: Arc<str>,
    pub labels: Arc<Labels>,
    values: [OptF64; 3],
    pub counter_slices: Arc<[CounterSlice]>,
}

impl LeanSeries {
    pub fn new(
        endpoint_url: Arc<str>,
        labels: Arc<Labels>,
        stats: &Stats,
        counter_slices: Arc<[CounterSlice]>,
    ) -> Self {
        LeanSeries {
            endpoint_url,
            labels,
            values: CsvSeries::values_of(stats).map(OptF64::new),
            counter_slices,
        }
    }

    /// What a lean read keeps of a full read's series: a counter's slices with a `total`,
    /// in file order.
    pub fn of(s: &Series) -> Self {
        let slices = match s.stats {
            Stats::Counter(_) => s
                .timeslices
                .iter()
                .filter_map(|t| {
                    t.total.map(|total| CounterSlice {
                        start_ns: t.start_ns,
                        end_ns: t.end_ns,
                        total,
                    })
                })
                .collect(),
            _ => Arc::default(),
        };
        LeanSeries::new(
            Arc::clone(&s.endpoint_url),
            Arc::clone(&s.labels),
            &s.stats,
            slices,
        )
    }

    /// Stat `i` (see [`CsvSeries`]'s docs for which is which).
    pub fn value(&self, i: usize) -> Option<f64> {
        self.values.get(i)?.get()
    }
}

/// A histogram bucket: the `le` key exactly as the server printed it and its cumulative count.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Bucket {
    pub le: String,
    pub count: f64,
}

impl Bucket {
    /// The numeric upper bound (`+Inf` sorts last); `None` if the key is not a number.
    pub fn upper_bound(&self) -> Option<f64> {
        crate::read::prometheus_text::parse_prom_float(&self.le)
    }
}

impl ServerMetricsExport {
    /// Profiling families followed by warmup families, each tagged with its phase.
    pub fn families(&self) -> impl Iterator<Item = (&'static str, &Family)> {
        self.metrics
            .iter()
            .map(|f| ("profiling", f))
            .chain(self.warmup_metrics.iter().map(|f| ("warmup", f)))
    }
}

/// The series of a CSV export as accounting reads them: a CSV of many endpoints has one row
/// per series (a 100 MB export holds about 400,000), and a full [`Series`] (about 330 B, most
/// of it the stats of its kind) per row was most of the memory of reading one.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CsvLean {
    /// Endpoint URLs (as [`Series::endpoint_url`]), each once; [`CsvSeries::endpoint`]
    /// indexes this list.
    pub endpoint_urls: Vec<Arc<str>>,
    /// Label sets, each shared copy once; [`CsvSeries::labels`] indexes this list. Ids and
    /// not the shared copies on each series: accounting maps each id to its own copy in a
    /// vector, where copies had to be found by their address in a table (2.2 MB of a CSV of
    /// 80,000 label sets).
    pub label_sets: Vec<Arc<Labels>>,
    /// In the order of a full read: by family (as [`ServerMetricsExport::metrics`]), then as
    /// the rows come.
    pub series: Vec<CsvSeries>,
}

/// One CSV series read lean (40 B): its family, endpoint and shared label set, and the stats
/// accounting reads. Which stat is where depends on the family's type: a counter's `total`
/// is [`CsvSeries::TOTAL`], a gauge's (and an `unknown` family's) `avg`, `min` and `max` are
/// [`CsvSeries::AVG`], [`CsvSeries::MIN`], [`CsvSeries::MAX`], a histogram's `count` and `sum`
/// are [`CsvSeries::COUNT`] and [`CsvSeries::SUM`].
#[derive(Debug, Clone, PartialEq)]
pub struct CsvSeries {
    /// Index of its family in [`ServerMetricsExport::metrics`].
    pub family: u32,
    /// Index of its endpoint in [`CsvLean::endpoint_urls`].
    pub endpoint: u32,
    /// Index of its label set in [`CsvLean::label_sets`].
    pub labels: u32,
    /// Every stat value may be absent, NaN included.
    values: [OptF64; 3],
}

impl CsvSeries {
    pub const TOTAL: usize = 0;
    pub const AVG: usize = 0;
    pub const MIN: usize = 1;
    pub const MAX: usize = 2;
    pub const COUNT: usize = 0;
    pub const SUM: usize = 1;

    pub fn new(family: u32, endpoint: u32, labels: u32, values: [Option<f64>; 3]) -> Self {
        CsvSeries {
            family,
            endpoint,
            labels,
            values: values.map(OptF64::new),
        }
    }

    /// Stat `i` (see the type's docs for which is which).
    pub fn value(&self, i: usize) -> Option<f64> {
        self.values.get(i)?.get()
    }

    /// The stats a lean read keeps of a full read's series, by its stats' kind.
    pub fn values_of(stats: &Stats) -> [Option<f64>; 3] {
        match stats {
            Stats::Counter(c) => [c.total.get(), None, None],
            Stats::Gauge(g) => [g.avg.get(), g.min.get(), g.max.get()],
            Stats::Histogram(h) => [h.count.get(), h.sum.get(), None],
        }
    }
}

impl CsvLean {
    /// The endpoint URL of one of its series.
    pub fn url(&self, s: &CsvSeries) -> &str {
        self.endpoint_urls
            .get(s.endpoint as usize)
            .map_or("", |u| u)
    }

    /// The label set of one of its series (none for an id beyond the list).
    pub fn labels(&self, s: &CsvSeries) -> Option<&Arc<Labels>> {
        self.label_sets.get(s.labels as usize)
    }

    /// The lean form of a full read's families (the same series in the same order), so that
    /// accounting takes both reads one way.
    pub fn of_families(families: &[Family]) -> CsvLean {
        let mut lean = CsvLean::default();
        let mut ids: crate::hash::Map<Arc<str>, u32> = crate::hash::Map::default();
        for (fi, f) in families.iter().enumerate() {
            let family = u32::try_from(fi).unwrap_or(u32::MAX);
            for s in &f.series {
                let endpoint = match ids.get(&*s.endpoint_url) {
                    Some(&id) => id,
                    None => {
                        let id = u32::try_from(lean.endpoint_urls.len()).unwrap_or(u32::MAX);
                        lean.endpoint_urls.push(s.endpoint_url.clone());
                        ids.insert(s.endpoint_url.clone(), id);
                        id
                    }
                };
                // Series of one set mostly come together: the same copy, one id.
                let same = lean
                    .label_sets
                    .last()
                    .is_some_and(|l| Arc::ptr_eq(l, &s.labels));
                if !same {
                    lean.label_sets.push(Arc::clone(&s.labels));
                }
                let labels =
                    u32::try_from(lean.label_sets.len().saturating_sub(1)).unwrap_or(u32::MAX);
                let values = CsvSeries::values_of(&s.stats);
                lean.series
                    .push(CsvSeries::new(family, endpoint, labels, values));
            }
        }
        lean
    }
}
