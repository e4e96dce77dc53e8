//! Reader of AIPerf's `server_metrics_export.json` (schema 1.0 and 1.1).
//!
//! The export can be several GB, so the reader streams it through `serde_json` and never builds
//! a DOM: the `metrics` / `warmup_metrics` maps are walked by a custom visitor that asks the
//! caller's [`FamilyFilter`] about each family name *before* touching its value, and skips
//! unwanted families with `IgnoredAny` (syntax-checked, never allocated).
//!
//! The schema is keyed off field presence, not `schema_version`: 1.1 only adds fields
//! (`metrics_phase`, `warmup_metrics`, `summary.phase_time_ranges`). Unknown fields are ignored
//! everywhere, and a `null` means the same as an omitted field.
//!
//! Counts above 2^53 − 1 are refused (`COUNT_TOO_LARGE`, see [`crate::read::count`]): the
//! `total` of a `counter` family's stats and timeslices, the `count` and bucket values of a
//! `histogram` family's stats, series and timeslices. AIPerf writes a family's `type` before its
//! `series`, so the series are read knowing what is a count and a refusal points at the value.
//! When `type` comes after `series`, the series are checked once the type is known; the error
//! then carries the value's JSON path but no line (the value has streamed by):
//! [`crate::read::read_run`], which can read the file again, adds the line and column.
//!
//! Positions: line and character column (see `read/json_stream.rs`). A repeated family
//! is reported at its second key, an unknown `type` at its value, a refused count at its
//! number, anything else where serde_json stopped.

mod fast;

use crate::error::{json_code, json_message, ErrorCode, ReadError};
use crate::model::{
    Bucket, CounterSlice, CounterStats, EndpointInfo, ExportSummary, Family, GaugeStats,
    HistogramStats, Labels, LeanSeries, MetricType, PhaseTimeRanges, Pieces, Series,
    ServerMetricsExport, ServerMetricsFormat, Stats, TimeRange, Timeslice,
};
use crate::read::count;
use crate::read::json_cursor::Cursor;
use crate::read::json_frame::{Framer, Sink, Stop, Whole};
use crate::read::json_stream::{at, refused_number_position};
use crate::read::locate::{serde_error_position, serde_offset, LineCol, OwnedPath};
use crate::read::push::{self, PushReader};
use crate::read::FamilyFilter;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::Read;
use std::marker::PhantomData;
use std::sync::Arc;

/// Read one server-metrics JSON export, keeping only the families `filter` wants.
pub fn read_server_metrics_json<R: Read>(
    file: &str,
    reader: R,
    filter: &FamilyFilter,
) -> Result<ServerMetricsExport, ReadError> {
    push::drive(file, ExportReader::new(file, filter.clone()), reader)
}

/// A refused export: the error, and for a count refused after its value streamed by, the
/// value's path (see the module docs).
pub(crate) struct Refusal {
    pub(crate) error: ReadError,
    pub(crate) relocate: Option<Box<OwnedPath>>,
}

impl From<ReadError> for Refusal {
    fn from(error: ReadError) -> Self {
        Refusal {
            error,
            relocate: None,
        }
    }
}

/// How a refused count is named: "counter value at `path`".
fn count_what(t: Option<MetricType>, path: &str) -> String {
    let kind = match t {
        Some(MetricType::Histogram) => "histogram count",
        _ => "counter value",
    };
    format!("{kind} at `{path}`")
}

// ---------------------------------------------------------------------------------------------
// Epoch nanoseconds

/// An epoch-ns value read straight from the integer token: these exceed 2^53, so a detour
/// through `f64` would silently round them. Floats and negatives are shape errors.
struct Ns(u64);

impl<'de> Deserialize<'de> for Ns {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct NsVisitor;
        impl Visitor<'_> for NsVisitor {
            type Value = Ns;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an epoch-nanosecond non-negative integer")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Ns, E> {
                Ok(Ns(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Ns, E> {
                u64::try_from(v)
                    .map(Ns)
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }
        }
        d.deserialize_u64(NsVisitor)
    }
}

fn ns<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    Ns::deserialize(d).map(|n| n.0)
}

fn opt_ns<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Option::<Ns>::deserialize(d).map(|o| o.map(|n| n.0))
}

// ---------------------------------------------------------------------------------------------
// Counts, checked by family type

/// Which counts the value being parsed holds, by its family's type (`None`: no counts: gauges,
/// `unknown` families, series read before their family's type). Set by
/// [`ExportState::parse`] for the one value it reads, and read by [`Total`] and [`HistCount`].
///
/// A value rather than a type parameter of the raw shapes: one compiled parser of stats,
/// timeslices and series serves every family type (three copies were ~40 KB of the `.wasm`,
/// issue 11). A thread-local, so parses on other threads never see it.
mod checks {
    use crate::model::MetricType;
    use std::cell::Cell;

    thread_local! {
        static COUNTS: Cell<Option<MetricType>> = const { Cell::new(None) };
    }

    /// Set while alive; the previous value is back on drop.
    pub(super) struct Counting(Option<MetricType>);

    impl Counting {
        pub(super) fn set(kind: Option<MetricType>) -> Counting {
            Counting(COUNTS.with(|c| c.replace(kind)))
        }
    }

    impl Drop for Counting {
        fn drop(&mut self) {
            COUNTS.with(|c| c.set(self.0));
        }
    }

    /// `total` is a counter value.
    pub(super) fn counter() -> bool {
        COUNTS.with(|c| c.get()) == Some(MetricType::Counter)
    }

    /// `count` and bucket values are histogram counts.
    pub(super) fn histogram() -> bool {
        COUNTS.with(|c| c.get()) == Some(MetricType::Histogram)
    }
}

/// A number, refused when `check` and it is a count above 2^53 − 1.
fn checked_f64<'de, D: Deserializer<'de>>(d: D, check: bool) -> Result<f64, D::Error> {
    let v = f64::deserialize(d)?;
    if check && count::too_large(v) {
        return Err(count::visitor_refusal(count::show(v)));
    }
    Ok(v)
}

/// A `total`: a count in counter families.
struct Total(f64);

impl<'de> Deserialize<'de> for Total {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        checked_f64(d, checks::counter()).map(Total)
    }
}

/// A `count` or bucket value: a count in histogram families.
struct HistCount(f64);

impl<'de> Deserialize<'de> for HistCount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        checked_f64(d, checks::histogram()).map(HistCount)
    }
}

fn total(t: Option<Total>) -> Option<f64> {
    t.map(|t| t.0)
}

fn hist_count(c: Option<HistCount>) -> Option<f64> {
    c.map(|c| c.0)
}

// ---------------------------------------------------------------------------------------------
// Buckets

/// A `le` → cumulative-count map kept in file order with keys exactly as written: the
/// spelling (`"1"` vs `"1.0"`, `"-5e-324"`) is data, and a `HashMap` would lose the order.
struct Buckets(Vec<Bucket>);

impl<'de> Deserialize<'de> for Buckets {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct BucketsVisitor;
        impl<'de> Visitor<'de> for BucketsVisitor {
            type Value = Buckets;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of `le` bounds to cumulative counts")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Buckets, A::Error> {
                let mut out = Vec::new();
                while let Some(le) = map.next_key::<String>()? {
                    let count = map.next_value::<HistCount>()?.0;
                    out.push(Bucket { le, count });
                }
                Ok(Buckets(out))
            }
        }
        d.deserialize_map(BucketsVisitor)
    }
}

fn buckets(b: Option<Buckets>) -> Option<Vec<Bucket>> {
    b.map(|b| b.0)
}

// ---------------------------------------------------------------------------------------------
// Type-agnostic raw shapes (a family's `type` may come after its `series`)

/// Every stat field of every family type; which ones are used is decided once `type` is known.
#[derive(Deserialize, Default)]
#[serde(default, expecting = "a stats object")]
struct RawStats {
    total: Option<Total>,
    rate: Option<f64>,
    rate_avg: Option<f64>,
    rate_min: Option<f64>,
    rate_max: Option<f64>,
    rate_std: Option<f64>,
    avg: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
    std: Option<f64>,
    p1: Option<f64>,
    p5: Option<f64>,
    p10: Option<f64>,
    p25: Option<f64>,
    p50: Option<f64>,
    p75: Option<f64>,
    p90: Option<f64>,
    p95: Option<f64>,
    p99: Option<f64>,
    count: Option<HistCount>,
    count_rate: Option<f64>,
    sum: Option<f64>,
    sum_rate: Option<f64>,
    p1_estimate: Option<f64>,
    p5_estimate: Option<f64>,
    p10_estimate: Option<f64>,
    p25_estimate: Option<f64>,
    p50_estimate: Option<f64>,
    p75_estimate: Option<f64>,
    p90_estimate: Option<f64>,
    p95_estimate: Option<f64>,
    p99_estimate: Option<f64>,
}

impl RawStats {
    fn into_stats(self, t: MetricType) -> Stats {
        match t {
            MetricType::Counter => Stats::Counter(CounterStats {
                total: total(self.total).into(),
                rate: self.rate.into(),
                rate_avg: self.rate_avg.into(),
                rate_min: self.rate_min.into(),
                rate_max: self.rate_max.into(),
                rate_std: self.rate_std.into(),
            }),
            MetricType::Gauge | MetricType::Unknown => Stats::Gauge(GaugeStats {
                avg: self.avg.into(),
                min: self.min.into(),
                max: self.max.into(),
                std: self.std.into(),
                p1: self.p1.into(),
                p5: self.p5.into(),
                p10: self.p10.into(),
                p25: self.p25.into(),
                p50: self.p50.into(),
                p75: self.p75.into(),
                p90: self.p90.into(),
                p95: self.p95.into(),
                p99: self.p99.into(),
            }),
            MetricType::Histogram => Stats::Histogram(HistogramStats {
                count: hist_count(self.count).into(),
                count_rate: self.count_rate.into(),
                sum: self.sum.into(),
                sum_rate: self.sum_rate.into(),
                avg: self.avg.into(),
                p1_estimate: self.p1_estimate.into(),
                p5_estimate: self.p5_estimate.into(),
                p10_estimate: self.p10_estimate.into(),
                p25_estimate: self.p25_estimate.into(),
                p50_estimate: self.p50_estimate.into(),
                p75_estimate: self.p75_estimate.into(),
                p90_estimate: self.p90_estimate.into(),
                p95_estimate: self.p95_estimate.into(),
                p99_estimate: self.p99_estimate.into(),
            }),
        }
    }
}

#[derive(Deserialize)]
#[serde(expecting = "a timeslice object")]
struct RawTimeslice {
    #[serde(deserialize_with = "ns")]
    start_ns: u64,
    #[serde(deserialize_with = "ns")]
    end_ns: u64,
    #[serde(default)]
    is_complete: Option<bool>,
    #[serde(default)]
    total: Option<Total>,
    #[serde(default)]
    rate: Option<f64>,
    #[serde(default)]
    avg: Option<f64>,
    #[serde(default)]
    min: Option<f64>,
    #[serde(default)]
    max: Option<f64>,
    #[serde(default)]
    count: Option<HistCount>,
    #[serde(default)]
    sum: Option<f64>,
    #[serde(default)]
    buckets: Option<Buckets>,
}

impl From<RawTimeslice> for Timeslice {
    fn from(r: RawTimeslice) -> Self {
        Timeslice {
            start_ns: r.start_ns,
            end_ns: r.end_ns,
            // AIPerf writes the flag only on a clipped tail slice.
            is_complete: r.is_complete.unwrap_or(true),
            total: total(r.total),
            rate: r.rate,
            avg: r.avg,
            min: r.min,
            max: r.max,
            count: hist_count(r.count),
            sum: r.sum,
            buckets: buckets(r.buckets),
        }
    }
}

#[derive(Deserialize)]
#[serde(expecting = "a series object")]
struct RawSeries {
    endpoint_url: String,
    #[serde(default)]
    labels: Option<Labels>,
    #[serde(default)]
    stats: Option<RawStats>,
    #[serde(default)]
    timeslices: Option<Vec<RawTimeslice>>,
    #[serde(default)]
    buckets: Option<Buckets>,
}

/// A gauge or histogram series read for its stats only ([`FamilyFilter::lean`]): its
/// timeslices are skipped unbuilt (still syntax-checked).
#[derive(Deserialize)]
#[serde(expecting = "a series object")]
struct RawSeriesStats {
    endpoint_url: String,
    #[serde(default)]
    labels: Option<Labels>,
    #[serde(default)]
    stats: Option<RawStats>,
    #[serde(default)]
    buckets: Option<Buckets>,
}

impl RawSeriesStats {
    fn into_series(self, t: MetricType, urls: &mut Urls) -> Series {
        Series {
            endpoint_url: urls.share(self.endpoint_url),
            labels: Arc::new(self.labels.unwrap_or_default()),
            stats: self.stats.unwrap_or_default().into_stats(t),
            timeslices: Vec::new(),
            buckets: buckets(self.buckets),
        }
    }

    /// The series as a lean read keeps it, with a counter's `slices` (its buckets, which
    /// accounting does not read, are dropped).
    fn into_lean(self, t: MetricType, slices: Vec<CounterSlice>, urls: &mut Urls) -> LeanSeries {
        LeanSeries::new(
            urls.share(self.endpoint_url),
            Arc::new(self.labels.unwrap_or_default()),
            &self.stats.unwrap_or_default().into_stats(t),
            slices.into(),
        )
    }
}

/// A counter series read lean ([`FamilyFilter::lean`]): its timeslices kept as
/// [`CounterSlice`]s.
#[derive(Deserialize)]
#[serde(expecting = "a series object")]
struct RawCounterSeries {
    endpoint_url: String,
    #[serde(default)]
    labels: Option<Labels>,
    #[serde(default)]
    stats: Option<RawStats>,
    #[serde(default)]
    timeslices: Option<LeanSlices>,
    #[serde(default)]
    buckets: Option<Buckets>,
}

impl RawCounterSeries {
    fn into_lean(self, urls: &mut Urls) -> LeanSeries {
        let stats_only = RawSeriesStats {
            endpoint_url: self.endpoint_url,
            labels: self.labels,
            stats: self.stats,
            buckets: self.buckets,
        };
        let slices = self.timeslices.map(|l| l.0).unwrap_or_default();
        stats_only.into_lean(MetricType::Counter, slices, urls)
    }
}

/// A counter's `timeslices` array read lean: each element is read whole as in a full read
/// (every field type-checked, a count above 2^53 − 1 refused at its place) and only its
/// bounds and `total` are kept.
struct LeanSlices(Vec<CounterSlice>);

impl<'de> Deserialize<'de> for LeanSlices {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct SlicesVisitor;
        impl<'de> Visitor<'de> for SlicesVisitor {
            type Value = LeanSlices;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                // As `Vec`'s visitor says: the same error as a full read.
                f.write_str("a sequence")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<LeanSlices, A::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
                while let Some(t) = seq.next_element::<RawTimeslice>()? {
                    if let Some(total) = total(t.total) {
                        out.push(CounterSlice {
                            start_ns: t.start_ns,
                            end_ns: t.end_ns,
                            total,
                        });
                    }
                }
                Ok(LeanSlices(out))
            }
        }
        d.deserialize_seq(SlicesVisitor)
    }
}

impl RawSeries {
    fn into_series(self, t: MetricType, urls: &mut Urls) -> Series {
        let stats_only = RawSeriesStats {
            endpoint_url: self.endpoint_url,
            labels: self.labels,
            stats: self.stats,
            buckets: self.buckets,
        };
        Series {
            timeslices: self
                .timeslices
                .unwrap_or_default()
                .into_iter()
                .map(Timeslice::from)
                .collect(),
            ..stats_only.into_series(t, urls)
        }
    }
}

/// The first count of `t`'s family type above 2^53 − 1 in series read before the type was
/// known (keys in AIPerf's order: stats, buckets, timeslices), with its path below `family`.
fn first_large_count(
    family: &OwnedPath,
    t: MetricType,
    series: &[Series],
) -> Option<(OwnedPath, f64)> {
    let in_buckets = |base: OwnedPath, list: &[Bucket]| {
        list.iter().enumerate().find_map(|(j, b)| {
            let nth = list.iter().take(j).filter(|o| o.le == b.le).count();
            count::too_large(b.count).then(|| (base.clone().key(&b.le, nth), b.count))
        })
    };
    let count_of = |total: Option<f64>, hist: Option<f64>| match t {
        MetricType::Counter => total.map(|v| ("total", v)),
        MetricType::Histogram => hist.map(|v| ("count", v)),
        MetricType::Gauge | MetricType::Unknown => None,
    };
    let histogram = t == MetricType::Histogram;
    for (i, s) in series.iter().enumerate() {
        let base = family.clone().key("series", 0).index(i);
        let stat = match &s.stats {
            Stats::Counter(c) => count_of(c.total.get(), None),
            Stats::Histogram(h) => count_of(None, h.count.get()),
            Stats::Gauge(_) => None,
        };
        if let Some((name, v)) = stat.filter(|(_, v)| count::too_large(*v)) {
            return Some((base.key("stats", 0).key(name, 0), v));
        }
        let series_buckets = s.buckets.as_deref().filter(|_| histogram);
        if let Some(found) =
            series_buckets.and_then(|b| in_buckets(base.clone().key("buckets", 0), b))
        {
            return Some(found);
        }
        for (j, ts) in s.timeslices.iter().enumerate() {
            let at = base.clone().key("timeslices", 0).index(j);
            if let Some((name, v)) =
                count_of(ts.total, ts.count).filter(|(_, v)| count::too_large(*v))
            {
                return Some((at.key(name, 0), v));
            }
            let slice_buckets = ts.buckets.as_deref().filter(|_| histogram);
            if let Some(found) = slice_buckets.and_then(|b| in_buckets(at.key("buckets", 0), b)) {
                return Some(found);
            }
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Summary

#[derive(Deserialize)]
#[serde(expecting = "an endpoint info object")]
struct RawEndpointInfo {
    #[serde(default)]
    total_fetches: Option<u64>,
    #[serde(default, deserialize_with = "opt_ns")]
    first_fetch_ns: Option<u64>,
    #[serde(default, deserialize_with = "opt_ns")]
    last_fetch_ns: Option<u64>,
    #[serde(default)]
    avg_fetch_latency_ms: Option<f64>,
    #[serde(default)]
    unique_updates: Option<u64>,
    #[serde(default, deserialize_with = "opt_ns")]
    first_update_ns: Option<u64>,
    #[serde(default, deserialize_with = "opt_ns")]
    last_update_ns: Option<u64>,
    #[serde(default)]
    duration_seconds: Option<f64>,
    #[serde(default)]
    avg_update_interval_ms: Option<f64>,
    #[serde(default)]
    median_update_interval_ms: Option<f64>,
}

impl From<RawEndpointInfo> for EndpointInfo {
    fn from(r: RawEndpointInfo) -> Self {
        EndpointInfo {
            total_fetches: r.total_fetches,
            first_fetch_ns: r.first_fetch_ns,
            last_fetch_ns: r.last_fetch_ns,
            avg_fetch_latency_ms: r.avg_fetch_latency_ms,
            unique_updates: r.unique_updates,
            first_update_ns: r.first_update_ns,
            last_update_ns: r.last_update_ns,
            duration_seconds: r.duration_seconds,
            avg_update_interval_ms: r.avg_update_interval_ms,
            median_update_interval_ms: r.median_update_interval_ms,
        }
    }
}

#[derive(Deserialize)]
#[serde(expecting = "a time range object")]
struct RawRange {
    #[serde(deserialize_with = "ns")]
    start_ns: u64,
    #[serde(deserialize_with = "ns")]
    end_ns: u64,
}

#[derive(Default)]
struct RawPhaseRanges {
    profiling: Option<RawRange>,
    warmup: Option<RawRange>,
}

crate::fields!(RawPhaseRanges, expecting: "a phase time ranges object", deny_unknown: false, empty: RawPhaseRanges::default(), required: [], [profiling, warmup]);

#[derive(Default)]
struct RawSummary {
    endpoints_configured: Option<Vec<String>>,
    endpoints_successful: Option<Vec<String>>,
    start_time: Option<String>,
    end_time: Option<String>,
    endpoint_info: Option<BTreeMap<String, Option<RawEndpointInfo>>>,
    phase_time_ranges: Option<RawPhaseRanges>,
}

crate::fields!(RawSummary, expecting: "a summary object", deny_unknown: false, empty: RawSummary::default(), required: [], [endpoints_configured, endpoints_successful, start_time, end_time, endpoint_info, phase_time_ranges]);

impl From<RawSummary> for ExportSummary {
    fn from(r: RawSummary) -> Self {
        let range = |o: Option<RawRange>| {
            o.map(|x| TimeRange {
                start_ns: x.start_ns,
                end_ns: x.end_ns,
            })
        };
        let ranges = r.phase_time_ranges.unwrap_or_default();
        ExportSummary {
            endpoints_configured: r.endpoints_configured.unwrap_or_default(),
            endpoints_successful: r.endpoints_successful.unwrap_or_default(),
            start_time: r.start_time,
            end_time: r.end_time,
            endpoint_info: crate::sort::map_of(
                r.endpoint_info
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(url, info)| (url, info.map(EndpointInfo::from).unwrap_or_default())),
            ),
            phase_time_ranges: PhaseTimeRanges {
                profiling: range(ranges.profiling),
                warmup: range(ranges.warmup),
            },
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The streaming top level

/// The export pushed in chunks: the framer walks the top level, the `metrics` maps, each family
/// and its `series` array; every other value (a series, the summary, a family's `type`) is
/// parsed from its own bytes.
pub struct ExportReader {
    framer: Framer,
    state: ExportState,
}

impl ExportReader {
    pub fn new(file: &str, filter: FamilyFilter) -> Self {
        ExportReader {
            framer: Framer::new(file, MAX_VALUE),
            state: ExportState {
                file: file.to_string(),
                filter,
                ..ExportState::default()
            },
        }
    }

    /// An error with what a caller needs to place a late count refusal.
    pub(crate) fn refusal(&mut self, error: ReadError) -> Refusal {
        Refusal {
            error,
            relocate: self.state.late.take().map(Box::new),
        }
    }

    /// The counter slices of every series read lean so far (families kept, the family being
    /// read): the streaming API drops them when it runs out of memory (`crate::read::run`).
    pub(crate) fn slices_read_mut(
        &mut self,
    ) -> impl Iterator<Item = &mut Arc<[CounterSlice]>> + '_ {
        let s = &mut self.state;
        let done = s.metrics.iter_mut().chain(s.warmup.iter_mut());
        done.flat_map(|(families, _)| families.iter_mut())
            .chain(s.section.iter_mut().flat_map(|sec| sec.families.iter_mut()))
            .flat_map(|f| f.lean_series.iter_mut())
            .chain(s.family.iter_mut().flat_map(|f| f.lean.iter_mut()))
            .map(|l| &mut l.counter_slices)
    }

    pub(crate) fn finish_export(self) -> Result<ServerMetricsExport, Refusal> {
        let ExportReader { framer, mut state } = self;
        match framer.finish(&mut state) {
            Ok(()) => Ok(state.export()),
            Err(error) => Err(Refusal {
                error,
                relocate: state.late.take().map(Box::new),
            }),
        }
    }
}

impl PushReader for ExportReader {
    type Output = ServerMetricsExport;

    fn push(&mut self, chunk: &[u8]) -> Result<(), ReadError> {
        self.framer.push(chunk, &mut self.state)
    }

    fn finish(self) -> Result<ServerMetricsExport, ReadError> {
        self.finish_export().map_err(|r| r.error)
    }
}

/// The most bytes one value (a series with all its timeslices, the summary) may take.
const MAX_VALUE: usize = 256 << 20;

/// Where the framer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    /// `metrics` or `warmup_metrics`.
    Families,
    Family,
    /// A family's `series` array.
    Series,
    /// One series object, opened ([`OpenSeries`]).
    SeriesObject,
    /// The `timeslices` array of an opened series.
    Slices,
}

/// The families of one `metrics`-shaped map being read.
#[derive(Default)]
struct SectionAcc {
    name: &'static str,
    families: Vec<Family>,
    /// Name → index of its first occurrence in `families`. Hashed: a sorted map inserted into
    /// in file order was quadratic in an export's families (80,000 in shuffled order: 42 % of
    /// `inspect`'s 3.3 s).
    by_name: crate::hash::Map<String, u32>,
    /// Occurrences of each family's key so far, beside `families`.
    occurrences: Vec<usize>,
    skipped: u32,
}

/// One family being read.
struct FamilyAcc {
    name: String,
    /// Which occurrence of its key this is (JSON allows repeats).
    nth: usize,
    wanted: bool,
    /// The key's position: a conflicting repeat is reported there.
    key_at: LineCol,
    metric_type: Option<MetricType>,
    description: Option<String>,
    unit: Option<String>,
    series: Vec<Series>,
    /// Series read lean (`series` is then empty).
    lean: Pieces<LeanSeries>,
    /// Series read before `type`, typed (and checked) once it is known.
    untyped: Option<Vec<RawSeries>>,
    seen: Vec<&'static str>,
}

impl FamilyAcc {
    /// How many of its series were read so far (the next one's index).
    fn read(&self) -> usize {
        self.series.len() + self.lean.len() + self.untyped.as_ref().map_or(0, Vec::len)
    }
}

#[derive(Default)]
struct ExportState {
    file: String,
    filter: FamilyFilter,
    levels: Vec<Level>,
    /// The last key of the innermost open object.
    key: String,
    root_seen: Vec<&'static str>,
    schema_version: Option<String>,
    aiperf_version: Option<String>,
    benchmark_id: Option<String>,
    metrics_phase: Option<String>,
    summary: Option<RawSummary>,
    section: Option<SectionAcc>,
    family: Option<FamilyAcc>,
    metrics: Option<(Vec<Family>, u32)>,
    warmup: Option<(Vec<Family>, u32)>,
    merged: Vec<String>,
    /// A count refused after its value streamed by: its path (see [`Refusal`]).
    late: Option<OwnedPath>,
    /// The series object being read member by member.
    open_series: Option<OpenSeries>,
    /// Take every series whole, never opening one: set only by the tests, which compare both
    /// ways of reading (every reader opens series since whole buffers are read in pieces).
    whole_series: bool,
    urls: Urls,
}

/// One copy of each endpoint URL for all the series that name it: a run has a few endpoints
/// and may have hundreds of thousands of series.
#[derive(Default)]
struct Urls {
    all: BTreeSet<Arc<str>>,
    /// The URL given last: the series of one endpoint mostly come together.
    last: Option<Arc<str>>,
}

impl Urls {
    fn share(&mut self, url: String) -> Arc<str> {
        if let Some(last) = self.last.as_ref().filter(|l| ***l == *url) {
            return Arc::clone(last);
        }
        let shared = match self.all.get(url.as_str()) {
            Some(known) => Arc::clone(known),
            None => {
                let new: Arc<str> = Arc::from(url);
                self.all.insert(Arc::clone(&new));
                new
            }
        };
        self.last = Some(Arc::clone(&shared));
        shared
    }
}

/// Whether serde_json stopped at the end of `bytes`: a value cut short by the end of a chunk
/// (an EOF, or a number whose next byte is missing: `1.`, `-`, `1e`), not a fault in it.
fn cut_short(bytes: &[u8], err: &serde_json::Error) -> bool {
    err.is_eof()
        || serde_offset(bytes, err.line(), err.column()).is_none_or(|o| o + 1 >= bytes.len())
}

/// Where an error serde_json raises before reading any byte of a value is placed.
#[derive(Clone, Copy)]
enum Before {
    /// The byte before the value.
    Byte,
    At(LineCol),
}

/// Whether only whitespace follows the byte serde_json stopped at.
fn ends_in_space(bytes: &[u8], err: &serde_json::Error) -> bool {
    serde_offset(bytes, err.line(), err.column()).is_some_and(|o| {
        let rest = bytes.get(o + 1..).unwrap_or_default();
        rest.iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    })
}

/// serde_json's `trailing characters` after a value it read.
fn trailing(err: &serde_json::Error) -> bool {
    err.classify() == serde_json::error::Category::Syntax
        && err.to_string().starts_with("trailing characters")
}

/// What a value that must be a JSON object is called in the error serde_json gives when it is
/// not, and whether `null` (absent) is allowed.
trait ObjectWords {
    const WHAT: &'static str;
    const NULLABLE: bool;
}

/// The export itself.
struct ExportWords;
/// A `metrics` / `warmup_metrics` map.
struct FamiliesWords;
/// One family.
struct FamilyWords;

impl ObjectWords for ExportWords {
    const WHAT: &'static str = "an AIPerf server-metrics export object";
    const NULLABLE: bool = false;
}
impl ObjectWords for FamiliesWords {
    const WHAT: &'static str = "a map of metric family name to family";
    const NULLABLE: bool = true;
}
impl ObjectWords for FamilyWords {
    const WHAT: &'static str = "a metric family object";
    const NULLABLE: bool = false;
}

/// A value that must be an object (its content is checked, not kept): read where the framer
/// did not open it, i.e. when it is not an object, for serde_json's error.
struct ExpectObject<W>(PhantomData<W>);

impl<'de, W: ObjectWords> Deserialize<'de> for ExpectObject<W> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<W>(PhantomData<W>);
        impl<'de, W: ObjectWords> Visitor<'de> for V<W> {
            type Value = ExpectObject<W>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(W::WHAT)
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(ExpectObject(PhantomData))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(ExpectObject(PhantomData))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_map(self)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(ExpectObject(PhantomData))
            }
        }
        if W::NULLABLE {
            d.deserialize_option(V(PhantomData))
        } else {
            d.deserialize_map(V(PhantomData))
        }
    }
}

impl ExportState {
    fn export(mut self) -> ServerMetricsExport {
        let (metrics, skipped_p) = self.metrics.take().unwrap_or_default();
        let (warmup_metrics, skipped_w) = self.warmup.take().unwrap_or_default();
        crate::sort::sort_by(&mut self.merged, |a, b| a.cmp(b));
        self.merged.dedup();
        ServerMetricsExport {
            format: ServerMetricsFormat::Json,
            schema_version: self.schema_version,
            aiperf_version: self.aiperf_version,
            benchmark_id: self.benchmark_id,
            summary: self.summary.unwrap_or_default().into(),
            metrics_phase: self.metrics_phase,
            metrics,
            warmup_metrics,
            skipped_families: skipped_p.saturating_add(skipped_w),
            merged_duplicates: self.merged,
            csv_lean: None,
        }
    }

    fn level(&self) -> Option<Level> {
        self.levels.last().copied()
    }

    fn section_name(&self) -> &'static str {
        self.section.as_ref().map_or("metrics", |s| s.name)
    }

    /// JSON path of the current family.
    fn family_path(&self) -> String {
        let name = self.family.as_ref().map_or("", |f| f.name.as_str());
        format!("{}.{name}", self.section_name())
    }

    /// The JSON path of the family's series `index` (`metrics.name.series[3]`).
    fn series_path(&self, index: usize) -> String {
        format!("{}.series[{index}]", self.family_path())
    }

    /// Parse the value at the start of `value.bytes` as `T` (setting `value.took` to its
    /// length); an error is placed in the file, its JSON path `prefix` followed by the path
    /// inside the value, a refused count named after `kind`. A value cut short by the end of
    /// the bytes at hand asks for more ([`Stop::More`]) unless they are the last.
    fn parse<T: serde::de::DeserializeOwned>(
        &self,
        value: &mut Whole<'_>,
        prefix: &str,
        kind: Option<MetricType>,
    ) -> Result<T, Stop> {
        self.parse_in(value, &|| prefix.to_string(), kind, None)
    }

    /// A value passed over unread (a family, series or timeslice the reading does not keep),
    /// its path `prefix`: checked by the JSON cursor ([`Cursor`]), which accepts only what
    /// serde_json accepts, and ends at a delimiter; anything else (an escape, a value the bytes
    /// at hand cut short, an error) is `IgnoredAny`'s, with its error or its wait. (serde_json
    /// calls out per token in the size-built `.wasm`: skipping was most of reading an export.)
    fn skip(
        &self,
        value: &mut Whole<'_>,
        prefix: &str,
        kind: Option<MetricType>,
    ) -> Result<(), Stop> {
        self.skip_in(value, &|| prefix.to_string(), kind, None)
    }

    /// [`Self::skip`] as [`Self::parse_in`] parses.
    fn skip_in(
        &self,
        value: &mut Whole<'_>,
        prefix: &dyn Fn() -> String,
        kind: Option<MetricType>,
        before: Option<Before>,
    ) -> Result<(), Stop> {
        let mut c = Cursor::indented(value.bytes);
        let delimited = c.skip_value(1).is_some()
            && matches!(
                value.bytes.get(c.i),
                Some(b' ' | b'\n' | b'\t' | b'\r' | b',' | b']' | b'}')
            );
        if delimited {
            value.took = c.i;
            return Ok(());
        }
        self.parse_in::<IgnoredAny>(value, prefix, kind, before)
            .map(|_| ())
    }

    /// [`Self::parse`] of a value inside a series read member by member: an error serde_json
    /// raises before reading any of the value's bytes is placed at `before` (where a parse of
    /// the whole series places it: the byte it had read last). The path is made only for an
    /// error (made for every timeslice, it was a tenth of reading an export).
    fn parse_in<T: serde::de::DeserializeOwned>(
        &self,
        value: &mut Whole<'_>,
        prefix: &dyn Fn() -> String,
        kind: Option<MetricType>,
        before: Option<Before>,
    ) -> Result<T, Stop> {
        let _counting = checks::Counting::set(kind);
        let mut stream = serde_json::Deserializer::from_slice(value.bytes).into_iter::<T>();
        match stream.next() {
            Some(Ok(v)) => {
                value.took = stream.byte_offset();
                Ok(v)
            }
            // A number or literal followed by more than a delimiter (`null1`): the value
            // itself was read (the framer reports what follows it), read it again alone.
            Some(Err(e)) if before.is_some() && trailing(&e) && stream.byte_offset() > 0 => {
                let end = stream.byte_offset();
                let mut alone = serde_json::Deserializer::from_slice(&value.bytes[..end]);
                let v = T::deserialize(&mut alone).map_err(|err| {
                    Stop::Error(self.unit_error(value, &prefix(), kind, &err, before))
                })?;
                value.took = end;
                Ok(v)
            }
            Some(Err(e)) if !value.last && cut_short(value.bytes, &e) => Err(Stop::More),
            // Inside a series read member by member, the path of an error at the value's end
            // depends on the next token (see `json_path`): wait for it.
            Some(Err(e)) if !value.last && before.is_some() && ends_in_space(value.bytes, &e) => {
                Err(Stop::More)
            }
            None if !value.last => Err(Stop::More),
            Some(Err(err)) => Err(Stop::Error(self.unit_error(
                value,
                &prefix(),
                kind,
                &err,
                before,
            ))),
            None => Err(Stop::Error(ReadError::new(
                ErrorCode::JsonSyntax,
                &self.file,
                at(Some(value.origin()), Some(prefix())),
                "EOF while parsing a value",
            ))),
        }
    }

    /// The error `err` of a whole value read as `T`, with its inner path found from the
    /// error's position in the value ([`crate::json_path`]): no tracked copy of `T`'s parser.
    fn unit_error(
        &self,
        value: &mut Whole<'_>,
        prefix: &str,
        kind: Option<MetricType>,
        err: &serde_json::Error,
        before: Option<Before>,
    ) -> ReadError {
        let bytes = value.bytes;
        let inner = crate::json_path::shown(&match count::refused_in_visitor(err) {
            Some(_) => crate::json_path::path_of_member_error(bytes, err),
            None => crate::json_path::path_of_error(bytes, err),
        });
        let path = match inner {
            None => Some(prefix.to_string()).filter(|p| !p.is_empty()),
            Some(i) if prefix.is_empty() => Some(i),
            Some(i) if i.starts_with('[') => Some(format!("{prefix}{i}")),
            Some(i) => Some(format!("{prefix}.{i}")),
        };
        let origin = value.origin();
        let before = before.map(|b| match b {
            Before::Byte => value.before(),
            Before::At(at) => at,
        });
        if let Some(shown) = count::refused_in_visitor(err) {
            let what = count_what(kind, path.as_deref().unwrap_or(""));
            let pos = refused_number_position(bytes, err)
                .map(|p| p.offset_by(origin))
                .or(before);
            return count::refuse(&self.file, at(pos, path), &what, &shown);
        }
        let pos = serde_error_position(bytes, err)
            .map(|p| p.offset_by(origin))
            .or(before);
        ReadError::new(json_code(err), &self.file, at(pos, path), json_message(err))
    }

    fn root_key(&mut self, key: &str, key_at: LineCol) -> Result<(), ReadError> {
        let known: &'static str = match key {
            "schema_version" => "schema_version",
            "aiperf_version" => "aiperf_version",
            "benchmark_id" => "benchmark_id",
            "metrics_phase" => "metrics_phase",
            "summary" => "summary",
            "metrics" => "metrics",
            "warmup_metrics" => "warmup_metrics",
            // `input_config` (a user config dump) and anything newer.
            _ => return Ok(()),
        };
        // Each key at most once: a repeated `metrics` would otherwise merge or overwrite silently.
        if self.root_seen.contains(&known) {
            return Err(ReadError::new(
                ErrorCode::JsonShape,
                &self.file,
                at(Some(key_at), Some(known.to_string())),
                format!("duplicate field `{known}`"),
            ));
        }
        self.root_seen.push(known);
        Ok(())
    }

    fn family_key(&mut self, key: &str, key_at: LineCol) -> Result<(), ReadError> {
        let path = self.family_path();
        let Some(fam) = self.family.as_mut() else {
            return Ok(());
        };
        let known: &'static str = match key {
            "type" => "type",
            "description" => "description",
            "unit" => "unit",
            "series" => "series",
            _ => return Ok(()),
        };
        if fam.wanted && fam.seen.contains(&known) {
            return Err(ReadError::new(
                ErrorCode::JsonShape,
                &self.file,
                at(Some(key_at), Some(format!("{path}.{known}"))),
                format!("duplicate field `{known}`"),
            ));
        }
        fam.seen.push(known);
        Ok(())
    }

    /// A family name in a `metrics` map: start reading it (or skipping it).
    fn begin_family(&mut self, name: String, key_at: LineCol) {
        let wanted = self.filter.wants(&name);
        let section = self.section.get_or_insert_with(SectionAcc::default);
        if !wanted {
            section.skipped = section.skipped.saturating_add(1);
        }
        let first = section.by_name.get(&name).map(|&i| i as usize);
        let nth = first.and_then(|i| section.occurrences.get(i).copied());
        let nth = nth.unwrap_or(0);
        self.family = Some(FamilyAcc {
            name,
            nth,
            wanted,
            key_at,
            metric_type: None,
            description: None,
            unit: None,
            series: Vec::new(),
            lean: Pieces::default(),
            untyped: None,
            seen: Vec::new(),
        });
    }

    fn root_value(&mut self, v: &mut Whole<'_>) -> Result<(), Stop> {
        let key = self.key.clone();
        match key.as_str() {
            "schema_version" => self.schema_version = self.parse(v, &key, None)?,
            "aiperf_version" => self.aiperf_version = self.parse(v, &key, None)?,
            "benchmark_id" => self.benchmark_id = self.parse(v, &key, None)?,
            "metrics_phase" => self.metrics_phase = self.parse(v, &key, None)?,
            "summary" => self.summary = self.parse(v, &key, None)?,
            "metrics" | "warmup_metrics" => {
                // Not an object: `null` (absent), or the error of a wrong type.
                self.parse::<ExpectObject<FamiliesWords>>(v, &key, None)?;
                let empty = Some((Vec::new(), 0));
                if key == "metrics" {
                    self.metrics = empty;
                } else {
                    self.warmup = empty;
                }
            }
            _ => {
                self.skip(v, &key, None)?;
            }
        }
        Ok(())
    }

    fn family_value(&mut self, v: &mut Whole<'_>) -> Result<(), Stop> {
        let Some(fam) = self.family.as_ref() else {
            return Ok(());
        };
        let wanted = fam.wanted;
        let field = format!("{}.{}", self.family_path(), self.key);
        if !wanted {
            self.skip(v, &field, None)?;
            return Ok(());
        }
        match self.key.as_str() {
            "type" => {
                let raw: String = self.parse(v, &field, None)?;
                let Some(t) = MetricType::parse(&raw) else {
                    return Err(Stop::Error(ReadError::new(
                        ErrorCode::JsonShape,
                        &self.file,
                        at(Some(v.origin()), Some(field)),
                        format!("unknown metric type `{raw}` (expected counter, gauge, histogram or unknown)"),
                    )));
                };
                if let Some(f) = self.family_mut() {
                    f.metric_type = Some(t);
                }
            }
            "description" => {
                let d = self.parse(v, &field, None)?;
                if let Some(f) = self.family_mut() {
                    f.description = d;
                }
            }
            "unit" => {
                let u = self.parse(v, &field, None)?;
                if let Some(f) = self.family_mut() {
                    f.unit = u;
                }
            }
            // Not an array: `null` (no series) or the error of a wrong type.
            "series" => {
                let list: Option<Vec<RawSeries>> = self.parse(v, &field, None)?;
                if let Some(list) = list {
                    self.add_series(list);
                }
            }
            _ => {
                self.skip(v, &field, None)?;
            }
        }
        Ok(())
    }

    /// The family being read; callers are reached only inside one (the framer opened it),
    /// and do nothing outside.
    fn family_mut(&mut self) -> Option<&mut FamilyAcc> {
        self.family.as_mut()
    }

    /// Series given as one value (not streamed): typed once `type` is known.
    fn add_series(&mut self, list: Vec<RawSeries>) {
        if let Some(f) = self.family_mut() {
            f.untyped.get_or_insert_with(Vec::new).extend(list);
        }
    }

    /// One element of a family's `series` array.
    fn series_value(&mut self, v: &mut Whole<'_>) -> Result<(), Stop> {
        let Some(fam) = self.family.as_ref() else {
            return Ok(());
        };
        let index = fam.read();
        let prefix = || format!("{}.series[{index}]", self.family_path());
        if !fam.wanted {
            self.skip_in(v, &prefix, None, None)?;
            return Ok(());
        }
        let lean = self.filter.is_lean();
        match (fam.metric_type, lean) {
            (Some(t @ MetricType::Counter), true) => {
                let raw = self.parse_in::<RawCounterSeries>(v, &prefix, Some(t), None)?;
                let series = raw.into_lean(&mut self.urls);
                if let Some(f) = self.family_mut() {
                    f.lean.push(series);
                }
            }
            (Some(t), true) => {
                let raw = self.parse_in::<RawSeriesStats>(v, &prefix, Some(t), None)?;
                let series = raw.into_lean(t, Vec::new(), &mut self.urls);
                if let Some(f) = self.family_mut() {
                    f.lean.push(series);
                }
            }
            (Some(t), false) => {
                let raw = self.parse_in::<RawSeries>(v, &prefix, Some(t), None)?;
                let series = raw.into_series(t, &mut self.urls);
                if let Some(f) = self.family_mut() {
                    f.series.push(series);
                }
            }
            (None, _) => {
                let raw = self.parse_in::<RawSeries>(v, &prefix, None, None)?;
                self.add_series(vec![raw]);
            }
        }
        Ok(())
    }

    /// A family's object ended: type its series, and add it to its section (merging an
    /// identical repeat, refusing a different one).
    fn end_family(&mut self, close_at: LineCol) -> Result<(), ReadError> {
        let Some(fam) = self.family.take() else {
            return Ok(());
        };
        if !fam.wanted {
            return Ok(());
        }
        let section_name = self.section_name();
        let path = format!("{section_name}.{}", fam.name);
        let Some(metric_type) = fam.metric_type else {
            return Err(ReadError::new(
                ErrorCode::JsonShape,
                &self.file,
                at(Some(close_at), Some(path)),
                "missing field `type`",
            ));
        };
        let (mut series, mut lean) = (fam.series, fam.lean);
        if let Some(raw) = fam.untyped {
            let typed: Vec<Series> = raw
                .into_iter()
                .map(|r| r.into_series(metric_type, &mut self.urls))
                .collect();
            let family_path = OwnedPath::default()
                .key(section_name, 0)
                .key(&fam.name, fam.nth);
            if let Some((p, v)) = first_large_count(&family_path, metric_type, &typed) {
                let what = count_what(Some(metric_type), &p.display());
                let err = count::refuse(
                    &self.file,
                    at(None, Some(p.display())),
                    &what,
                    &count::show(v),
                );
                self.late = Some(p);
                return Err(err);
            }
            if self.filter.is_lean() {
                lean.extend(typed.iter().map(LeanSeries::of));
            } else {
                series.extend(typed);
            }
        }
        // Repeated series (same endpoint and labels) are kept as written: accounting sees both
        // and decides (they are one pool that must agree), nothing is overwritten here.
        // The room the vector grew into is given back (up to half of it): in WASM it is linear
        // memory whether used or not, and the evidence built next can take it.
        series.shrink_to_fit();
        lean.shrink_to_fit();
        let family = Family {
            name: fam.name,
            metric_type,
            description: fam.description.unwrap_or_default(),
            unit: fam.unit,
            series,
            lean_series: lean,
        };
        let section = self.section.get_or_insert_with(SectionAcc::default);
        // A repeated key: JSON parsers keep the last one, so the same bytes in another key
        // order would price differently. Merge identical repeats, refuse others.
        match section.by_name.get(&family.name).map(|&i| i as usize) {
            Some(i) => {
                if section.families.get(i) != Some(&family) {
                    return Err(ReadError::new(
                        ErrorCode::DuplicateKey,
                        &self.file,
                        at(Some(fam.key_at), Some(path)),
                        format!(
                            "family `{}` appears twice in `{section_name}` with different content: refusing to pick one",
                            family.name
                        ),
                    ));
                }
                if let Some(n) = section.occurrences.get_mut(i) {
                    *n += 1;
                }
                self.merged.push(path);
            }
            None => {
                let i = u32::try_from(section.families.len()).unwrap_or(u32::MAX);
                section.by_name.insert(family.name.clone(), i);
                section.families.push(family);
                section.occurrences.push(1);
            }
        }
        Ok(())
    }

    fn end_section(&mut self) {
        let Some(mut section) = self.section.take() else {
            return;
        };
        // Writers sort by name, but nothing guarantees it.
        crate::sort::sort_by(&mut section.families, |a, b| a.name.cmp(&b.name));
        let out = Some((section.families, section.skipped));
        if section.name == "metrics" {
            self.metrics = out;
        } else {
            self.warmup = out;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A series read member by member

/// A member of a series object, as the lean read's shapes name them ([`RawSeriesStats`],
/// [`RawCounterSeries`]): `timeslices` is a field of counters only, ignored in the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SeriesField {
    EndpointUrl,
    Labels,
    Stats,
    Timeslices,
    Buckets,
    /// Ignored (unknown, or `timeslices` of a gauge or histogram): may repeat.
    Other,
}

impl SeriesField {
    fn of(key: &str, t: MetricType) -> SeriesField {
        match key {
            "endpoint_url" => SeriesField::EndpointUrl,
            "labels" => SeriesField::Labels,
            "stats" => SeriesField::Stats,
            "timeslices" if t == MetricType::Counter => SeriesField::Timeslices,
            "buckets" => SeriesField::Buckets,
            _ => SeriesField::Other,
        }
    }

    fn name(self) -> &'static str {
        match self {
            SeriesField::EndpointUrl => "endpoint_url",
            SeriesField::Labels => "labels",
            SeriesField::Stats => "stats",
            SeriesField::Timeslices => "timeslices",
            SeriesField::Buckets => "buckets",
            SeriesField::Other => "",
        }
    }
}

/// A series of a typed family in a lean read, opened so that no series is gathered whole
/// (a histogram series of a long run is tens of MB; the streaming API must stay within its
/// memory, issue 11): each member (its labels, its stats, each timeslice) is parsed on its
/// own and folded into what the lean read keeps of the series, the same as a whole parse
/// with [`RawSeriesStats`] / [`RawCounterSeries`] would give, errors included.
struct OpenSeries {
    /// Its index in its family's `series` (its JSON path, made only for an error, is
    /// [`ExportState::series_path`]).
    index: usize,
    metric_type: MetricType,
    /// The member being read.
    field: SeriesField,
    seen: Vec<SeriesField>,
    endpoint_url: Option<String>,
    labels: Option<Labels>,
    stats: Option<RawStats>,
    buckets: Option<Buckets>,
    /// A counter's slices with a `total`, in file order.
    slices: Vec<CounterSlice>,
    /// Elements of the opened `timeslices` array read so far.
    slices_read: usize,
    /// Where the opened `timeslices` array starts.
    slices_at: Option<LineCol>,
    /// A key and its `:` were read, its value not yet (a syntax error is the member's).
    awaiting: bool,
}

impl OpenSeries {
    /// A series just opened: nothing of it read yet.
    fn new(index: usize, metric_type: MetricType) -> Self {
        OpenSeries {
            index,
            metric_type,
            field: SeriesField::Other,
            seen: Vec::new(),
            endpoint_url: None,
            labels: None,
            stats: None,
            buckets: None,
            slices: Vec::new(),
            slices_read: 0,
            slices_at: None,
            awaiting: false,
        }
    }

    fn into_lean(self, urls: &mut Urls) -> Option<LeanSeries> {
        let stats_only = RawSeriesStats {
            endpoint_url: self.endpoint_url?,
            labels: self.labels,
            stats: self.stats,
            buckets: self.buckets,
        };
        Some(stats_only.into_lean(self.metric_type, self.slices, urls))
    }
}

impl ExportState {
    /// A series object starts: opened when a lean read knows its family's type (the type is
    /// needed to read its members; AIPerf writes it first), else taken whole.
    fn open_series(&mut self) -> Option<Level> {
        let fam = self.family.as_ref()?;
        let t = fam.metric_type?;
        if !fam.wanted || !self.filter.is_lean() || self.whole_series {
            return None;
        }
        let index = fam.read();
        self.open_series = Some(OpenSeries::new(index, t));
        Some(Level::SeriesObject)
    }

    /// A key of an opened series: a repeated field is refused where serde_json refuses it.
    fn series_key(&mut self, key: &str, after: LineCol) -> Result<(), ReadError> {
        let Some(open) = self.open_series.as_mut() else {
            return Ok(());
        };
        let field = SeriesField::of(key, open.metric_type);
        if field != SeriesField::Other && open.seen.contains(&field) {
            let index = open.index;
            return Err(ReadError::new(
                ErrorCode::JsonShape,
                &self.file,
                at(Some(after), Some(self.series_path(index))),
                format!("duplicate field `{}`", field.name()),
            ));
        }
        open.seen.push(field);
        open.field = field;
        Ok(())
    }

    /// A member of an opened series taken whole.
    fn series_member(&mut self, v: &mut Whole<'_>) -> Result<(), Stop> {
        let Some(open) = self.open_series.as_ref() else {
            return Ok(());
        };
        let t = open.metric_type;
        let field = open.field;
        self.open_series_mut().awaiting = false;
        let path = || {
            let index = self.open_series.as_ref().map_or(0, |o| o.index);
            format!("{}.{}", self.series_path(index), self.key)
        };
        let before = Some(Before::Byte);
        match field {
            SeriesField::EndpointUrl => {
                let url: String = self.parse_in(v, &path, Some(t), before)?;
                self.open_series_mut().endpoint_url = Some(url);
            }
            SeriesField::Labels => {
                let labels: Option<Labels> = self.parse_in(v, &path, Some(t), before)?;
                self.open_series_mut().labels = labels;
            }
            SeriesField::Stats => {
                let stats: Option<RawStats> = self.parse_in(v, &path, Some(t), before)?;
                self.open_series_mut().stats = stats;
            }
            SeriesField::Buckets => {
                let buckets: Option<Buckets> = self.parse_in(v, &path, Some(t), before)?;
                self.open_series_mut().buckets = buckets;
            }
            // Not an array: `null` (none) or the error of a wrong type.
            SeriesField::Timeslices => {
                if let Some(l) = self.parse_in::<Option<LeanSlices>>(v, &path, Some(t), before)? {
                    self.open_series_mut().slices = l.0;
                }
            }
            SeriesField::Other => {
                self.skip_in(v, &path, Some(t), before)?;
            }
        }
        Ok(())
    }

    /// One element of an opened series' `timeslices` array: of a counter its bounds and
    /// `total` are kept (every field checked, as [`LeanSlices`] does), of a gauge or a
    /// histogram nothing (syntax-checked only, as a whole lean read skips it).
    fn slice_value(&mut self, v: &mut Whole<'_>) -> Result<(), Stop> {
        let Some(open) = self.open_series.as_ref() else {
            return Ok(());
        };
        let t = open.metric_type;
        let path = || {
            let series = self.series_path(open.index);
            format!("{series}.timeslices[{}]", open.slices_read)
        };
        // As the whole series' parse places it: the first element's at the array's `[`
        // when whitespace is between them.
        let before = match (open.slices_read, open.slices_at) {
            (0, Some(at)) => Some(Before::At(at)),
            _ => Some(Before::Byte),
        };
        if open.field == SeriesField::Timeslices {
            if let Some((s, took)) = fast::counter_slice(v.bytes, t) {
                v.took = took;
                let open = self.open_series_mut();
                if let Some(total) = s.total {
                    open.slices.push(CounterSlice {
                        start_ns: s.start_ns,
                        end_ns: s.end_ns,
                        total,
                    });
                }
                open.slices_read += 1;
                return Ok(());
            }
            let ts: RawTimeslice = self.parse_in(v, &path, Some(t), before)?;
            if let Some(total) = total(ts.total) {
                self.open_series_mut().slices.push(CounterSlice {
                    start_ns: ts.start_ns,
                    end_ns: ts.end_ns,
                    total,
                });
            }
        } else {
            self.skip_in(v, &path, Some(t), before)?;
        }
        self.open_series_mut().slices_read += 1;
        Ok(())
    }

    /// Reached only with a series open (the framer opened it).
    fn open_series_mut(&mut self) -> &mut OpenSeries {
        self.open_series
            .get_or_insert_with(|| OpenSeries::new(0, MetricType::Unknown))
    }

    /// An opened series ended: it is the family's next series.
    fn end_series(&mut self, close_at: LineCol) -> Result<(), ReadError> {
        let Some(open) = self.open_series.take() else {
            return Ok(());
        };
        let index = open.index;
        let Some(series) = open.into_lean(&mut self.urls) else {
            return Err(ReadError::new(
                ErrorCode::JsonShape,
                &self.file,
                at(Some(close_at), Some(self.series_path(index))),
                "missing field `endpoint_url`",
            ));
        };
        if let Some(f) = self.family_mut() {
            f.lean.push(series);
        }
        Ok(())
    }
}

impl Sink for ExportState {
    fn opened_at(&mut self, at: LineCol) {
        if self.level() == Some(Level::Slices) {
            let open = self.open_series_mut();
            open.slices_at = Some(at);
            open.slices_read = 0;
        }
    }

    fn open(&mut self, first: u8) -> bool {
        let open = match (self.level(), first) {
            (None, b'{') => Some(Level::Root),
            (Some(Level::Root), b'{') if self.key == "metrics" || self.key == "warmup_metrics" => {
                let name = if self.key == "metrics" {
                    "metrics"
                } else {
                    "warmup_metrics"
                };
                self.section = Some(SectionAcc {
                    name,
                    ..SectionAcc::default()
                });
                Some(Level::Families)
            }
            (Some(Level::Families), b'{') => Some(Level::Family),
            (Some(Level::Family), b'[') if self.key == "series" => Some(Level::Series),
            (Some(Level::Series), b'{') => self.open_series(),
            (Some(Level::SeriesObject), b'[') if self.key == "timeslices" => Some(Level::Slices),
            _ => None,
        };
        if let Some(o) = self.open_series.as_mut() {
            o.awaiting = false;
        }
        if let Some(l) = open {
            self.levels.push(l);
        }
        open.is_some()
    }

    fn key(&mut self, key: String, key_at: LineCol, after: LineCol) -> Result<(), ReadError> {
        match self.level() {
            Some(Level::Root) => self.root_key(&key, key_at)?,
            Some(Level::Families) => self.begin_family(key.clone(), key_at),
            Some(Level::Family) => self.family_key(&key, key_at)?,
            Some(Level::SeriesObject) => self.series_key(&key, after)?,
            _ => {}
        }
        self.key = key;
        Ok(())
    }

    fn whole(&mut self, value: &mut Whole<'_>) -> Result<(), Stop> {
        match self.level() {
            None => self
                .parse::<ExpectObject<ExportWords>>(value, "", None)
                .map(|_| ()),
            Some(Level::Root) => self.root_value(value),
            Some(Level::Families) => {
                // A family that is not an object.
                let wanted = self.family.as_ref().is_some_and(|f| f.wanted);
                let path = self.family_path();
                let done = if wanted {
                    self.parse::<ExpectObject<FamilyWords>>(value, &path, None)
                        .map(|_| ())
                } else {
                    self.skip(value, &path, None)
                };
                if done.is_ok() {
                    self.family = None;
                }
                done
            }
            Some(Level::Family) => self.family_value(value),
            Some(Level::Series) => self.series_value(value),
            Some(Level::SeriesObject) => self.series_member(value),
            Some(Level::Slices) => self.slice_value(value),
        }
    }

    fn path(&self) -> Option<String> {
        match self.level()? {
            Level::Root => None,
            Level::Families => Some(self.section_name().to_string()),
            Level::Family => Some(self.family_path()),
            Level::Series => Some(format!("{}.series", self.family_path())),
            Level::SeriesObject => self.open_series.as_ref().map(|o| match o.awaiting {
                true => format!("{}.{}", self.series_path(o.index), self.key),
                false => self.series_path(o.index),
            }),
            Level::Slices => self
                .open_series
                .as_ref()
                .map(|o| format!("{}.timeslices", self.series_path(o.index))),
        }
    }

    fn colon(&mut self) {
        if let Some(o) = self.open_series.as_mut() {
            o.awaiting = true;
        }
    }

    fn skipped_array(&self) -> Option<String> {
        let open = self.open_series.as_ref()?;
        let skipped = self.level() == Some(Level::Slices) && open.field != SeriesField::Timeslices;
        skipped.then(|| {
            let series = self.series_path(open.index);
            format!("{series}.timeslices[{}]", open.slices_read)
        })
    }

    fn exact(&self) -> bool {
        matches!(self.level(), Some(Level::SeriesObject | Level::Slices))
    }

    fn close(&mut self, close_at: LineCol) -> Result<(), ReadError> {
        match self.levels.pop() {
            Some(Level::Family) => self.end_family(close_at),
            Some(Level::Families) => {
                self.end_section();
                Ok(())
            }
            Some(Level::SeriesObject) => self.end_series(close_at),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Position;

    #[test]
    fn value_error_paths_match_serde_path_to_error() {
        // As `unit_error` places them: a count refused once parsed is its member's error.
        fn locate(text: &[u8], err: &serde_json::Error) -> Vec<crate::json_path::Seg> {
            match count::refused_in_visitor(err) {
                Some(_) => crate::json_path::path_of_member_error(text, err),
                None => crate::json_path::path_of_error(text, err),
            }
        }
        use crate::json_path::testing::{compare, compare_located};
        // Each as `parse` reads it: the family's type set for the value.
        let with = |kind: Option<MetricType>, compared: fn() -> usize| {
            let _counting = checks::Counting::set(kind);
            compared()
        };
        let n = with(None, || {
            compare::<Option<Vec<RawSeries>>>(
                r#"[{"endpoint_url": "http://a/metrics", "labels": {"model": "m"}, "stats": {"total": 5, "rate": 0.5},
                 "timeslices": [{"start_ns": 1765529006843416914, "end_ns": 1765529007843416914, "total": 5}],
                 "buckets": {"0.5": 1, "+Inf": 3}}]"#,
                true,
            )
        }) + with(Some(MetricType::Counter), || {
            compare_located::<Vec<RawSeries>>(
                r#"[{"endpoint_url": "u", "timeslices": [{"start_ns": 1, "total": 9007199254740993}]}]"#,
                true,
                locate,
            ) + compare_located::<RawSeries>(
                r#"{"endpoint_url": "u", "stats": {"total": 9007199254740992, "rate": 0.5}}"#,
                true,
                locate,
            )
        }) + with(Some(MetricType::Histogram), || {
            compare_located::<RawSeries>(
                r#"{"endpoint_url": "u", "buckets": {"0.5": 1, "+Inf": 9007199254740993}}"#,
                true,
                locate,
            )
        });
        // The counts were checked: a refused count is among the broken inputs.
        let _counting = checks::Counting::set(Some(MetricType::Counter));
        assert!(serde_json::from_str::<RawSeries>(
            r#"{"endpoint_url": "u", "stats": {"total": 9007199254740993}}"#
        )
        .is_err());
        assert!(n > 1000, "only {n} broken series were compared");
    }

    fn read(s: &str) -> Result<ServerMetricsExport, ReadError> {
        read_server_metrics_json("t.json", s.as_bytes(), &FamilyFilter::all())
    }

    const ONE: &str = r#"{
  "schema_version": "1.0",
  "summary": {"endpoints_configured": ["http://a/metrics"], "endpoint_info": {
    "http://a/metrics": {"first_fetch_ns": 1765529006843416914, "median_update_interval_ms": null}}},
  "metrics": {
    "vllm:x": {"series": [{"endpoint_url": "http://a/metrics", "stats": {"total": 5, "rate": 0.5},
      "timeslices": [{"start_ns": 1765529006843416914, "end_ns": 1765529007843416914, "total": 5},
                     {"start_ns": 1765529007843416914, "end_ns": 1765529008000000001, "is_complete": false}]}],
      "description": "d", "type": "counter"}
  }
}"#;

    #[test]
    fn reads_counter_with_type_last_and_exact_ns() {
        let e = read(ONE).expect("reads");
        assert_eq!(e.metrics.len(), 1);
        let f = &e.metrics[0];
        assert_eq!(f.metric_type, MetricType::Counter);
        let s = &f.series[0];
        assert!(matches!(&s.stats, Stats::Counter(c) if c.total.get() == Some(5.0)));
        assert_eq!(s.timeslices[0].start_ns, 1_765_529_006_843_416_914);
        assert!(s.timeslices[0].is_complete);
        assert!(!s.timeslices[1].is_complete);
        assert_eq!(s.timeslices[1].end_ns, 1_765_529_008_000_000_001);
        let info = &e.summary.endpoint_info["http://a/metrics"];
        assert_eq!(info.first_fetch_ns, Some(1_765_529_006_843_416_914));
        assert_eq!(info.median_update_interval_ms, None);
        assert!(e.summary.endpoints_successful.is_empty());
    }

    #[test]
    fn float_ns_is_a_shape_error_with_path() {
        let bad = ONE.replace("\"end_ns\": 1765529007843416914", "\"end_ns\": 1.5e18");
        let err = read(&bad).expect_err("float ns");
        assert_eq!(err.code, ErrorCode::JsonShape);
        assert_eq!(
            err.position.json_path.as_deref(),
            Some("metrics.vllm:x.series[0].timeslices[0].end_ns")
        );
        assert!(err.position.line.is_some());
        let neg = ONE.replace(
            "\"first_fetch_ns\": 1765529006843416914",
            "\"first_fetch_ns\": -1",
        );
        let err = read(&neg).expect_err("negative ns");
        assert_eq!(err.code, ErrorCode::JsonShape);
        assert_eq!(
            err.position.json_path.as_deref(),
            Some("summary.endpoint_info.http://a/metrics.first_fetch_ns")
        );
    }

    #[test]
    fn unknown_type_string_is_a_shape_error() {
        let err = read(&ONE.replace("\"counter\"", "\"summary\"")).expect_err("bad type");
        assert_eq!(err.code, ErrorCode::JsonShape);
        assert_eq!(
            err.position.json_path.as_deref(),
            Some("metrics.vllm:x.type")
        );
        // At the value, though serde_json read on to the family's end.
        assert_eq!(err.position, {
            let mut p = Position::line_col(9, 35);
            p.json_path = Some("metrics.vllm:x.type".to_string());
            p
        });
        assert!(err.message.contains("summary"), "{}", err.message);
    }

    #[test]
    fn untyped_is_gauge_shaped_unknown() {
        let s = r#"{"metrics": {"m_total": {"type": "unknown", "description": "",
            "series": [{"endpoint_url": "u", "stats": {"avg": 2, "total": 9}}]}}}"#;
        let e = read(s).expect("reads");
        assert_eq!(e.metrics[0].metric_type, MetricType::Unknown);
        assert!(
            matches!(&e.metrics[0].series[0].stats, Stats::Gauge(g) if g.avg.get() == Some(2.0))
        );
    }

    #[test]
    fn empty_and_whitespace_are_empty_input() {
        for s in ["", "  \n\t "] {
            let err = read(s).expect_err("empty");
            assert_eq!(err.code, ErrorCode::EmptyInput, "{s:?}");
        }
    }

    #[test]
    fn trailing_garbage_is_a_syntax_error() {
        let err = read("{} x").expect_err("garbage");
        assert_eq!(err.code, ErrorCode::JsonSyntax);
        assert_eq!(err.position.line, Some(1));
    }

    #[test]
    fn duplicate_top_level_key_is_rejected() {
        let err = read(r#"{"metrics": {}, "metrics": {}}"#).expect_err("dup");
        assert_eq!(err.code, ErrorCode::JsonShape);
    }

    #[test]
    fn null_sections_mean_absent() {
        let e = read(
            r#"{"schema_version": null, "summary": null, "metrics": null, "warmup_metrics": null}"#,
        )
        .expect("reads");
        assert!(e.schema_version.is_none());
        assert!(e.metrics.is_empty() && e.warmup_metrics.is_empty());
        assert_eq!(e.summary, ExportSummary::default());
    }

    /// A lean read of `text`, series opened or taken whole, pushed in chunks of `chunk` bytes.
    fn lean_read(text: &[u8], whole_series: bool, chunk: usize) -> String {
        let mut reader = ExportReader::new("t.json", FamilyFilter::all().lean());
        reader.state.whole_series = whole_series;
        let pushed = text
            .chunks(chunk.max(1))
            .try_for_each(|c| PushReader::push(&mut reader, c));
        format!("{:?}", pushed.and_then(|()| PushReader::finish(reader)))
    }

    const LEAN: &str = r#"{"metrics": {
  "c": {"type": "counter", "series": [
    {"endpoint_url": "u", "labels": {"m": "x"}, "stats": {"total": 7, "rate": 0.5},
     "timeslices": [{"start_ns": 1765529006843416914, "end_ns": 1765529007843416914, "total": 5},
                    {"start_ns": 1765529007843416914, "end_ns": 1765529008000000001, "is_complete": false}],
     "buckets": null, "extra": [1, {"a": 2}]}]},
  "h": {"type": "histogram", "series": [
    {"endpoint_url": "u", "stats": {"count": 3, "sum": 1.5},
     "timeslices": [{"start_ns": 1, "end_ns": 2, "buckets": {"0.5": 1, "+Inf": 3}}, {"x": 1}],
     "buckets": {"0.5": 1, "+Inf": 3}}, {"endpoint_url": "v"}]},
  "g": {"type": "gauge", "series": [{"labels": null, "endpoint_url": "w", "stats": {"avg": 2},
     "timeslices": []}]}
}}"#;

    #[test]
    fn opened_series_read_as_whole_ones() {
        let mut texts = crate::json_path::testing::mutations(LEAN);
        texts.push(LEAN.replace(r#""buckets": null"#, r#""labels": {}"#));
        texts.push(LEAN.replace(r#""buckets": null"#, r#""timeslices": []"#));
        texts.push(LEAN.replace(r#""buckets": null"#, r#""timeslices"  :  []"#));
        texts.push(LEAN.replace(r#""buckets": null"#, "\"stats\"\n  :  {}"));
        texts.push(LEAN.replace(r#""x": 1"#, r#""start_ns": "s""#));
        texts.push(LEAN.replace(r#""total": 5"#, r#""total": 9007199254740993"#));
        texts.push(LEAN.replace(r#""total": 5"#, r#""total": "5""#));
        texts.push(LEAN.replace(r#""endpoint_url": "w", "#, ""));
        texts.push(LEAN.replace(
            r#""timeslices": []"#,
            r#""timeslices": 4, "timeslices": {}"#,
        ));
        let mut failures = Vec::new();
        for (n, text) in texts.iter().enumerate() {
            let whole = lean_read(text.as_bytes(), true, usize::MAX);
            let chunks = [usize::MAX, 1 + n % 97, 1 + n % 13];
            for chunk in chunks {
                let opened = lean_read(text.as_bytes(), false, chunk);
                if opened != whole {
                    failures.push(format!(
                        "{text}\nchunk {chunk}\n  whole  {whole}\n  opened {opened}"
                    ));
                    break;
                }
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} differ:\n{}",
            failures.len(),
            texts.len(),
            failures[..failures.len().min(8)].join("\n\n")
        );
        // The valid text itself is read, its slices kept.
        assert!(lean_read(LEAN.as_bytes(), false, 7).contains("total: 5.0"));
    }

    /// The valid texts of the opened-series test: each mutation of [`LEAN`] that reads.
    fn valid_lean_texts() -> Vec<String> {
        let mut texts = crate::json_path::testing::mutations(LEAN);
        texts.push(LEAN.to_string());
        // Types after the series: the series are typed when the family ends.
        texts.push(
            LEAN.replace(r#""c": {"type": "counter", "series""#, r#""c": {"series""#)
                .replace(
                    r#""extra": [1, {"a": 2}]}]}"#,
                    r#""extra": [1, {"a": 2}]}], "type": "counter"}"#,
                ),
        );
        let full = FamilyFilter::all();
        texts.retain(|t| read_server_metrics_json("t.json", t.as_bytes(), &full).is_ok());
        texts
    }

    #[test]
    fn a_lean_read_keeps_of_each_series_what_accounting_reads() {
        let texts = valid_lean_texts();
        assert!(texts.len() > 10, "{} valid texts", texts.len());
        for text in &texts {
            let full = read_server_metrics_json("t.json", text.as_bytes(), &FamilyFilter::all())
                .expect("valid");
            let lean =
                read_server_metrics_json("t.json", text.as_bytes(), &FamilyFilter::all().lean())
                    .expect("valid");
            assert_eq!(full.metrics.len(), lean.metrics.len(), "{text}");
            for (f, l) in full.metrics.iter().zip(&lean.metrics) {
                assert!(l.series.is_empty() && f.lean_series.is_empty(), "{text}");
                let made: Vec<LeanSeries> = f.series.iter().map(LeanSeries::of).collect();
                let read: Vec<LeanSeries> = l.lean_series.iter().cloned().collect();
                assert_eq!(made, read, "{text}");
            }
        }
        let lean = read_server_metrics_json("t.json", LEAN.as_bytes(), &FamilyFilter::all().lean())
            .expect("valid");
        let [c, g, h] = &lean.metrics[..] else {
            panic!("three families: {:?}", lean.metrics);
        };
        let c = c.lean_series.iter().next().expect("a series");
        assert_eq!(c.value(0), Some(7.0));
        let slices: Vec<(u64, f64)> = c
            .counter_slices
            .iter()
            .map(|s| (s.end_ns, s.total))
            .collect();
        assert_eq!(
            slices,
            [(1_765_529_007_843_416_914, 5.0)],
            "the slice without a total left out"
        );
        assert_eq!(
            [0, 1, 2].map(|i| g.lean_series.iter().next().expect("a series").value(i)),
            [Some(2.0), None, None]
        );
        let h = h.lean_series.iter().next().expect("a series");
        assert_eq!([h.value(0), h.value(1)], [Some(3.0), Some(1.5)]);
        assert!(h.counter_slices.is_empty());
    }

    const FAM_A: &str = r#"{"type": "counter", "description": "d",
      "series": [{"endpoint_url": "http://a/metrics", "stats": {"total": 5}}]}"#;
    const FAM_B: &str = r#"{"type": "counter", "description": "d",
      "series": [{"endpoint_url": "http://a/metrics", "stats": {"total": 9}}]}"#;

    #[test]
    fn identical_duplicate_families_merge_and_are_recorded() {
        let text = format!(
            r#"{{"metrics": {{"vllm:x": {FAM_A}, "vllm:y": {FAM_B}, "vllm:x": {FAM_A}}},
                "warmup_metrics": {{"vllm:x": {FAM_A}, "vllm:x": {FAM_A}}}}}"#
        );
        let e = read(&text).expect("identical repeats merge");
        assert_eq!(e.metrics.len(), 2);
        assert_eq!(e.metrics[0].series.len(), 1);
        assert_eq!(e.warmup_metrics.len(), 1);
        assert_eq!(
            e.merged_duplicates,
            ["metrics.vllm:x", "warmup_metrics.vllm:x"]
        );
    }

    #[test]
    fn different_duplicate_families_are_refused_in_either_order() {
        for (first, second) in [(FAM_A, FAM_B), (FAM_B, FAM_A)] {
            let text =
                format!("{{\"metrics\": {{\n\"vllm:x\": {first},\n\"vllm:x\": {second}\n}}}}");
            let err = read(&text).expect_err("conflicting repeat");
            assert_eq!(err.code, ErrorCode::DuplicateKey, "{err}");
            assert_eq!(err.position.json_path.as_deref(), Some("metrics.vllm:x"));
            assert!(err.message.contains("`vllm:x`"), "{}", err.message);
            // The position is that of the second occurrence (after the first one's lines).
            assert!(err.position.line.is_some_and(|l| l >= 4), "{err}");
        }
    }

    #[test]
    fn a_filtered_out_duplicate_is_skipped_unread() {
        let text =
            format!(r#"{{"metrics": {{"other": {FAM_A}, "other": {FAM_B}, "vllm:x": {FAM_A}}}}}"#);
        let e =
            read_server_metrics_json("t.json", text.as_bytes(), &FamilyFilter::only(["vllm:x"]))
                .expect("unwanted families are not compared");
        assert_eq!(e.metrics.len(), 1);
        assert_eq!(e.skipped_families, 2);
    }
}
