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

use crate::error::{ErrorCode, ReadError};
use crate::model::{
    Bucket, CounterStats, EndpointInfo, ExportSummary, Family, GaugeStats, HistogramStats, Labels,
    MetricType, PhaseTimeRanges, Series, ServerMetricsExport, ServerMetricsFormat, Stats,
    TimeRange, Timeslice,
};
use crate::read::FamilyFilter;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufReader, Read};

/// Read one server-metrics JSON export, keeping only the families `filter` wants.
pub fn read_server_metrics_json<R: Read>(
    file: &str,
    reader: R,
    filter: &FamilyFilter,
) -> Result<ServerMetricsExport, ReadError> {
    // serde_json's reader pulls one byte at a time: buffer, or a raw `File` crawls.
    let mut input = BufReader::with_capacity(64 * 1024, ContentProbe::new(reader));
    let dups = RefCell::new(Duplicates::default());
    let result = {
        let mut de = serde_json::Deserializer::from_reader(&mut input);
        let mut track = serde_path_to_error::Track::new();
        let parsed = ExportSeed {
            filter,
            dups: &dups,
        }
        .deserialize(serde_path_to_error::Deserializer::new(&mut de, &mut track));
        match parsed {
            Ok(export) => de
                .end()
                .map(|()| export)
                .map_err(|e| json_error(file, &e, None)),
            Err(e) => Err(match dups.borrow_mut().refused_at.take() {
                Some(path) => {
                    let mut err = json_error(file, &e, Some(path));
                    err.code = ErrorCode::DuplicateKey;
                    err
                }
                None => json_error(file, &e, Some(track.path().to_string())),
            }),
        }
    };
    result.map_err(|mut err| {
        if !input.get_ref().seen_content && err.code != ErrorCode::Io {
            // Whitespace only counts as empty, though serde_json reports it as a syntax EOF.
            err = ReadError::whole(ErrorCode::EmptyInput, file, "the file is empty");
        }
        err
    })
}

/// `ReadError::from_json`, except that a failing reader is an I/O problem, not bad JSON.
fn json_error(file: &str, e: &serde_json::Error, path: Option<String>) -> ReadError {
    let mut err = ReadError::from_json(file, e, path);
    if e.is_io() {
        err.code = ErrorCode::Io;
    }
    err
}

/// Passes bytes through and notes whether anything but JSON whitespace went by, so an
/// all-whitespace file is reported as empty rather than as a syntax error.
struct ContentProbe<R> {
    inner: R,
    seen_content: bool,
}

impl<R> ContentProbe<R> {
    fn new(inner: R) -> Self {
        ContentProbe {
            inner,
            seen_content: false,
        }
    }
}

impl<R: Read> Read for ContentProbe<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if !self.seen_content {
            self.seen_content = buf
                .get(..n)
                .is_some_and(|b| b.iter().any(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r')));
        }
        Ok(n)
    }
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
                    let count = map.next_value::<f64>()?;
                    out.push(Bucket { le, count });
                }
                Ok(Buckets(out))
            }
        }
        d.deserialize_map(BucketsVisitor)
    }
}

fn opt_buckets<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Bucket>>, D::Error> {
    Option::<Buckets>::deserialize(d).map(|o| o.map(|b| b.0))
}

// ---------------------------------------------------------------------------------------------
// Type-agnostic raw shapes (a family's `type` may come after its `series`)

/// Every stat field of every family type; which ones are used is decided once `type` is known.
#[derive(Default, Deserialize)]
#[serde(default)]
struct RawStats {
    total: Option<f64>,
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
    count: Option<f64>,
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
                total: self.total,
                rate: self.rate,
                rate_avg: self.rate_avg,
                rate_min: self.rate_min,
                rate_max: self.rate_max,
                rate_std: self.rate_std,
            }),
            MetricType::Gauge | MetricType::Unknown => Stats::Gauge(GaugeStats {
                avg: self.avg,
                min: self.min,
                max: self.max,
                std: self.std,
                p1: self.p1,
                p5: self.p5,
                p10: self.p10,
                p25: self.p25,
                p50: self.p50,
                p75: self.p75,
                p90: self.p90,
                p95: self.p95,
                p99: self.p99,
            }),
            MetricType::Histogram => Stats::Histogram(HistogramStats {
                count: self.count,
                count_rate: self.count_rate,
                sum: self.sum,
                sum_rate: self.sum_rate,
                avg: self.avg,
                p1_estimate: self.p1_estimate,
                p5_estimate: self.p5_estimate,
                p10_estimate: self.p10_estimate,
                p25_estimate: self.p25_estimate,
                p50_estimate: self.p50_estimate,
                p75_estimate: self.p75_estimate,
                p90_estimate: self.p90_estimate,
                p95_estimate: self.p95_estimate,
                p99_estimate: self.p99_estimate,
            }),
        }
    }
}

#[derive(Deserialize)]
struct RawTimeslice {
    #[serde(deserialize_with = "ns")]
    start_ns: u64,
    #[serde(deserialize_with = "ns")]
    end_ns: u64,
    #[serde(default)]
    is_complete: Option<bool>,
    #[serde(default)]
    total: Option<f64>,
    #[serde(default)]
    rate: Option<f64>,
    #[serde(default)]
    avg: Option<f64>,
    #[serde(default)]
    min: Option<f64>,
    #[serde(default)]
    max: Option<f64>,
    #[serde(default)]
    count: Option<f64>,
    #[serde(default)]
    sum: Option<f64>,
    #[serde(default, deserialize_with = "opt_buckets")]
    buckets: Option<Vec<Bucket>>,
}

impl From<RawTimeslice> for Timeslice {
    fn from(r: RawTimeslice) -> Self {
        Timeslice {
            start_ns: r.start_ns,
            end_ns: r.end_ns,
            // AIPerf writes the flag only on a clipped tail slice.
            is_complete: r.is_complete.unwrap_or(true),
            total: r.total,
            rate: r.rate,
            avg: r.avg,
            min: r.min,
            max: r.max,
            count: r.count,
            sum: r.sum,
            buckets: r.buckets,
        }
    }
}

#[derive(Deserialize)]
struct RawSeries {
    endpoint_url: String,
    #[serde(default)]
    labels: Option<Labels>,
    #[serde(default)]
    stats: Option<RawStats>,
    #[serde(default)]
    timeslices: Option<Vec<RawTimeslice>>,
    #[serde(default, deserialize_with = "opt_buckets")]
    buckets: Option<Vec<Bucket>>,
}

#[derive(Deserialize)]
struct RawFamily {
    #[serde(rename = "type")]
    metric_type: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    unit: Option<String>,
    #[serde(default)]
    series: Option<Vec<RawSeries>>,
}

/// A family value, typed only after the whole object is read; an unrecognised `type` fails
/// here so the error still carries the family's path.
struct FamilyValue {
    metric_type: MetricType,
    description: String,
    unit: Option<String>,
    series: Vec<Series>,
}

/// Duplicates met while reading: identical ones merged (their JSON paths, for the note
/// `duplicate_family_merged`), and where a non-identical one was refused (so the error gets
/// `DUPLICATE_KEY` and the second occurrence's path instead of a generic shape error).
#[derive(Default)]
struct Duplicates {
    merged: Vec<String>,
    refused_at: Option<String>,
}

/// Reads one family value.
struct FamilySeed;

impl<'de> DeserializeSeed<'de> for FamilySeed {
    type Value = FamilyValue;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<FamilyValue, D::Error> {
        let raw = RawFamily::deserialize(d)?;
        let metric_type = MetricType::parse(&raw.metric_type).ok_or_else(|| {
            de::Error::custom(format!(
                "unknown metric type `{}` (expected counter, gauge, histogram or unknown)",
                raw.metric_type
            ))
        })?;
        // Repeated series (same endpoint and labels) are kept as written: accounting sees both
        // and decides (they are one pool that must agree), nothing is overwritten here.
        let series = raw
            .series
            .unwrap_or_default()
            .into_iter()
            .map(|s| Series {
                endpoint_url: s.endpoint_url,
                labels: s.labels.unwrap_or_default(),
                stats: s.stats.unwrap_or_default().into_stats(metric_type),
                timeslices: s
                    .timeslices
                    .unwrap_or_default()
                    .into_iter()
                    .map(Timeslice::from)
                    .collect(),
                buckets: s.buckets,
            })
            .collect();
        Ok(FamilyValue {
            metric_type,
            description: raw.description.unwrap_or_default(),
            unit: raw.unit,
            series,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Summary

#[derive(Deserialize)]
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
struct RawRange {
    #[serde(deserialize_with = "ns")]
    start_ns: u64,
    #[serde(deserialize_with = "ns")]
    end_ns: u64,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct RawPhaseRanges {
    profiling: Option<RawRange>,
    warmup: Option<RawRange>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct RawSummary {
    endpoints_configured: Option<Vec<String>>,
    endpoints_successful: Option<Vec<String>>,
    start_time: Option<String>,
    end_time: Option<String>,
    endpoint_info: Option<BTreeMap<String, Option<RawEndpointInfo>>>,
    phase_time_ranges: Option<RawPhaseRanges>,
}

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
            endpoint_info: r
                .endpoint_info
                .unwrap_or_default()
                .into_iter()
                .map(|(url, info)| (url, info.map(EndpointInfo::from).unwrap_or_default()))
                .collect(),
            phase_time_ranges: PhaseTimeRanges {
                profiling: range(ranges.profiling),
                warmup: range(ranges.warmup),
            },
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The streaming top level

/// One `metrics`-shaped map: builds wanted families, skips the rest unbuilt.
struct FamiliesSeed<'f> {
    filter: &'f FamilyFilter,
    section: &'static str,
    dups: &'f RefCell<Duplicates>,
}

/// The families kept and how many entries were skipped.
type FamiliesOut = (Vec<Family>, u32);

impl<'de> DeserializeSeed<'de> for FamiliesSeed<'_> {
    type Value = FamiliesOut;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<FamiliesOut, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for FamiliesSeed<'_> {
    type Value = FamiliesOut;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map of metric family name to family")
    }

    fn visit_none<E: de::Error>(self) -> Result<FamiliesOut, E> {
        Ok((Vec::new(), 0))
    }

    fn visit_unit<E: de::Error>(self) -> Result<FamiliesOut, E> {
        Ok((Vec::new(), 0))
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<FamiliesOut, D::Error> {
        d.deserialize_map(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FamiliesOut, A::Error> {
        let mut families: Vec<Family> = Vec::new();
        let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
        let mut skipped: u32 = 0;
        while let Some(name) = map.next_key::<String>()? {
            if self.filter.wants(&name) {
                let v = map.next_value_seed(FamilySeed)?;
                let family = Family {
                    name,
                    metric_type: v.metric_type,
                    description: v.description,
                    unit: v.unit,
                    series: v.series,
                };
                // A repeated key: JSON parsers keep the last one, so the same bytes in another
                // key order would price differently. Merge identical repeats, refuse others.
                let path = format!("{}.{}", self.section, family.name);
                match by_name.get(&family.name).and_then(|&i| families.get(i)) {
                    Some(first) if *first == family => self.dups.borrow_mut().merged.push(path),
                    Some(_) => {
                        let msg = format!(
                            "family `{}` appears twice in `{}` with different content: refusing to pick one",
                            family.name, self.section
                        );
                        self.dups.borrow_mut().refused_at = Some(path);
                        return Err(de::Error::custom(msg));
                    }
                    None => {
                        by_name.insert(family.name.clone(), families.len());
                        families.push(family);
                    }
                }
            } else {
                map.next_value::<IgnoredAny>()?;
                skipped = skipped.saturating_add(1);
            }
        }
        // Writers sort by name, but nothing guarantees it.
        families.sort_by(|a, b| a.name.cmp(&b.name));
        Ok((families, skipped))
    }
}

struct ExportSeed<'f> {
    filter: &'f FamilyFilter,
    dups: &'f RefCell<Duplicates>,
}

impl<'de> DeserializeSeed<'de> for ExportSeed<'_> {
    type Value = ServerMetricsExport;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ServerMetricsExport, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ExportSeed<'_> {
    type Value = ServerMetricsExport;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an AIPerf server-metrics export object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ServerMetricsExport, A::Error> {
        let mut schema_version = None;
        let mut aiperf_version = None;
        let mut benchmark_id = None;
        let mut metrics_phase = None;
        let mut summary: Option<RawSummary> = None;
        let mut metrics: Option<FamiliesOut> = None;
        let mut warmup: Option<FamiliesOut> = None;
        // Each key at most once: a repeated `metrics` would otherwise merge or overwrite silently.
        let mut seen: Vec<&'static str> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let known: &'static str = match key.as_str() {
                "schema_version" => "schema_version",
                "aiperf_version" => "aiperf_version",
                "benchmark_id" => "benchmark_id",
                "metrics_phase" => "metrics_phase",
                "summary" => "summary",
                "metrics" => "metrics",
                "warmup_metrics" => "warmup_metrics",
                _ => {
                    // `input_config` (a user config dump) and anything newer.
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if seen.contains(&known) {
                return Err(de::Error::duplicate_field(known));
            }
            seen.push(known);
            match known {
                "schema_version" => schema_version = map.next_value::<Option<String>>()?,
                "aiperf_version" => aiperf_version = map.next_value::<Option<String>>()?,
                "benchmark_id" => benchmark_id = map.next_value::<Option<String>>()?,
                "metrics_phase" => metrics_phase = map.next_value::<Option<String>>()?,
                "summary" => summary = map.next_value::<Option<RawSummary>>()?,
                "metrics" => {
                    metrics = Some(map.next_value_seed(FamiliesSeed {
                        filter: self.filter,
                        section: "metrics",
                        dups: self.dups,
                    })?)
                }
                _ => {
                    warmup = Some(map.next_value_seed(FamiliesSeed {
                        filter: self.filter,
                        section: "warmup_metrics",
                        dups: self.dups,
                    })?)
                }
            }
        }
        let (metrics, skipped_p) = metrics.unwrap_or_default();
        let (warmup_metrics, skipped_w) = warmup.unwrap_or_default();
        Ok(ServerMetricsExport {
            format: ServerMetricsFormat::Json,
            schema_version,
            aiperf_version,
            benchmark_id,
            summary: summary.unwrap_or_default().into(),
            metrics_phase,
            metrics,
            warmup_metrics,
            skipped_families: skipped_p.saturating_add(skipped_w),
            merged_duplicates: {
                let mut m = std::mem::take(&mut self.dups.borrow_mut().merged);
                m.sort();
                m.dedup();
                m
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(matches!(&s.stats, Stats::Counter(c) if c.total == Some(5.0)));
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
        assert_eq!(err.position.json_path.as_deref(), Some("metrics.vllm:x"));
        assert!(err.message.contains("summary"), "{}", err.message);
    }

    #[test]
    fn untyped_is_gauge_shaped_unknown() {
        let s = r#"{"metrics": {"m_total": {"type": "unknown", "description": "",
            "series": [{"endpoint_url": "u", "stats": {"avg": 2, "total": 9}}]}}}"#;
        let e = read(s).expect("reads");
        assert_eq!(e.metrics[0].metric_type, MetricType::Unknown);
        assert!(matches!(&e.metrics[0].series[0].stats, Stats::Gauge(g) if g.avg == Some(2.0)));
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
