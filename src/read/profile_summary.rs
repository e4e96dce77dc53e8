//! `profile_export_aiperf.json` (the run summary) → [`RunSummary`].
//!
//! Two layouts: the current flat one (one object per metric tag at the top level) and the
//! legacy Oct 2025 one (metric objects under `"records"`; `legacy_records_layout = true`).
//! Only the fields `RunSummary` holds are built; `input_config`, `telemetry_data` and every
//! other key are skipped without being materialised (serde's `IgnoredAny`; no `flatten`,
//! which would buffer them).
//!
//! Counts above 2^53 − 1 are refused (`COUNT_TOO_LARGE`, at the number): the `avg` of
//! `request_count`, `completed_request_count`, `error_request_count`, `total_isl`, `total_osl`
//! and of the warmup `request_count` / `error_request_count`.
//!
//! `min_request_timestamp.avg` / `max_response_timestamp.avg` (epoch ns) are taken exactly
//! when written as JSON integers. AIPerf usually writes them as floats (`1.78e18`), which have
//! already lost precision: such a value is taken only when it is an exact integer no larger
//! than 2^53 (i.e. the float is provably the written integer), otherwise it is `None`.

use crate::error::{ErrorCode, ReadError};
use crate::model::RunSummary;
use crate::read::count;
use crate::read::json_stream::slice_error;
use crate::read::push::{self, PushReader};
use serde::{Deserialize, Deserializer};
use serde_json::Number;
use std::marker::PhantomData;

/// Whether a metric's `avg` is a count (refused above 2^53 − 1) or another quantity.
trait AvgKind {
    const COUNT: bool;
}

/// `request_count`, `total_isl`, …
struct IsCount;
/// Durations, timestamps, ratios.
struct NotCount;

impl AvgKind for IsCount {
    const COUNT: bool = true;
}
impl AvgKind for NotCount {
    const COUNT: bool = false;
}

/// An `avg` as written (an integer stays exact), refused when it is a count above 2^53 − 1.
struct Avg<K>(Number, PhantomData<K>);

impl<'de, K: AvgKind> Deserialize<'de> for Avg<K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = Number::deserialize(d)?;
        let too_large = match n.as_u64() {
            Some(u) => count::too_large_u64(u),
            None => n.as_f64().is_some_and(count::too_large),
        };
        if K::COUNT && too_large {
            return Err(count::visitor_refusal(&n));
        }
        Ok(Avg(n, PhantomData))
    }
}

#[derive(Deserialize)]
#[serde(bound(deserialize = "K: AvgKind"), expecting = "a metric object")]
struct MetricDe<K> {
    #[serde(default)]
    avg: Option<Avg<K>>,
    #[serde(default)]
    unit: Option<String>,
}

type CountDe = Option<MetricDe<IsCount>>;
type ValueDe = Option<MetricDe<NotCount>>;

#[derive(Default)]
struct MetricsDe {
    request_count: CountDe,
    error_request_count: CountDe,
    completed_request_count: CountDe,
    min_request_timestamp: ValueDe,
    max_response_timestamp: ValueDe,
    benchmark_duration: ValueDe,
    total_isl: CountDe,
    total_osl: CountDe,
    theoretical_prefix_cache_hit: ValueDe,
}

crate::fields!(MetricsDe, expecting: "a records object", deny_unknown: false, empty: MetricsDe::default(), required: [], [request_count, error_request_count, completed_request_count, min_request_timestamp, max_response_timestamp, benchmark_duration, total_isl, total_osl, theoretical_prefix_cache_hit]);

#[derive(Default)]
struct WarmupDe {
    request_count: CountDe,
    error_request_count: CountDe,
}

crate::fields!(WarmupDe, expecting: "a warmup metrics object", deny_unknown: false, empty: WarmupDe::default(), required: [], [request_count, error_request_count]);

#[derive(Default)]
struct SummaryDe {
    schema_version: Option<String>,
    aiperf_version: Option<String>,
    benchmark_id: Option<String>,
    request_count: CountDe,
    error_request_count: CountDe,
    completed_request_count: CountDe,
    min_request_timestamp: ValueDe,
    max_response_timestamp: ValueDe,
    benchmark_duration: ValueDe,
    total_isl: CountDe,
    total_osl: CountDe,
    theoretical_prefix_cache_hit: ValueDe,
    records: Option<MetricsDe>,
    start_time: Option<String>,
    end_time: Option<String>,
    was_cancelled: Option<bool>,
    warmup_metrics: Option<WarmupDe>,
}

crate::fields!(SummaryDe, expecting: "an AIPerf run summary object", deny_unknown: false, empty: SummaryDe::default(), required: [], [schema_version, aiperf_version, benchmark_id, request_count, error_request_count, completed_request_count, min_request_timestamp, max_response_timestamp, benchmark_duration, total_isl, total_osl, theoretical_prefix_cache_hit, records, start_time, end_time, was_cancelled, warmup_metrics]);

fn avg<K>(m: &Option<MetricDe<K>>) -> Option<f64> {
    m.as_ref()
        .and_then(|m| m.avg.as_ref())
        .and_then(|a| a.0.as_f64())
}

fn avg_ns<K>(m: &Option<MetricDe<K>>) -> Option<u64> {
    let n = &m.as_ref().and_then(|m| m.avg.as_ref())?.0;
    if let Some(u) = n.as_u64() {
        return Some(u);
    }
    let f = n.as_f64()?;
    // 2^53: beyond it a float no longer identifies one integer.
    if f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f <= 9_007_199_254_740_992.0 {
        Some(f as u64)
    } else {
        None
    }
}

/// The most bytes a run summary may take (a few KB in practice; gathered whole).
const MAX_SUMMARY: usize = 64 << 20;

/// The run summary pushed in chunks: a small file, gathered, then parsed from its bytes.
pub struct RunSummaryReader {
    file: String,
    bytes: Vec<u8>,
}

impl RunSummaryReader {
    pub fn new(file: &str) -> Self {
        RunSummaryReader {
            file: file.to_string(),
            bytes: Vec::new(),
        }
    }
}

impl PushReader for RunSummaryReader {
    type Output = RunSummary;

    fn push(&mut self, chunk: &[u8]) -> Result<(), ReadError> {
        if self.bytes.len() + chunk.len() > MAX_SUMMARY {
            return Err(ReadError::whole(
                ErrorCode::InputTooLarge,
                &self.file,
                format!("a run summary larger than {MAX_SUMMARY} bytes is not read"),
            ));
        }
        self.bytes.extend_from_slice(chunk);
        Ok(())
    }

    fn finish(self) -> Result<RunSummary, ReadError> {
        parse_run_summary(&self.file, &self.bytes)
    }
}

/// Read a run summary.
pub fn read_run_summary<R: std::io::Read>(file: &str, reader: R) -> Result<RunSummary, ReadError> {
    push::drive(file, RunSummaryReader::new(file), reader)
}

fn parse_run_summary(file: &str, text: &[u8]) -> Result<RunSummary, ReadError> {
    let mut de = serde_json::Deserializer::from_slice(text);
    let parsed = SummaryDe::deserialize(&mut de);
    let err = match parsed.and_then(|s| de.end().map(|()| s)) {
        Ok(s) => return Ok(summary(s)),
        Err(e) => e,
    };
    let path = crate::json_path::shown(&error_path(text, &err));
    Err(slice_error(file, text, &err, path, |p| {
        format!("run summary count at `{p}`")
    }))
}

/// The JSON path of `err` ([`crate::json_path`]); a count refused once parsed is its
/// member's error.
fn error_path(text: &[u8], err: &serde_json::Error) -> Vec<crate::json_path::Seg> {
    match count::refused_in_visitor(err) {
        Some(_) => crate::json_path::path_of_member_error(text, err),
        None => crate::json_path::path_of_error(text, err),
    }
}

fn summary(s: SummaryDe) -> RunSummary {
    let legacy = s.records.is_some();
    let m = match s.records {
        Some(r) => r,
        None => MetricsDe {
            request_count: s.request_count,
            error_request_count: s.error_request_count,
            completed_request_count: s.completed_request_count,
            min_request_timestamp: s.min_request_timestamp,
            max_response_timestamp: s.max_response_timestamp,
            benchmark_duration: s.benchmark_duration,
            total_isl: s.total_isl,
            total_osl: s.total_osl,
            theoretical_prefix_cache_hit: s.theoretical_prefix_cache_hit,
        },
    };
    let warm = s.warmup_metrics.unwrap_or_default();
    RunSummary {
        schema_version: s.schema_version,
        aiperf_version: s.aiperf_version,
        benchmark_id: s.benchmark_id,
        legacy_records_layout: legacy,
        start_time: s.start_time,
        end_time: s.end_time,
        request_count: avg(&m.request_count),
        completed_request_count: avg(&m.completed_request_count),
        error_request_count: avg(&m.error_request_count),
        min_request_timestamp_ns: avg_ns(&m.min_request_timestamp),
        max_response_timestamp_ns: avg_ns(&m.max_response_timestamp),
        benchmark_duration_s: avg(&m.benchmark_duration),
        total_isl: avg(&m.total_isl),
        total_osl: avg(&m.total_osl),
        theoretical_prefix_cache_hit: avg(&m.theoretical_prefix_cache_hit),
        theoretical_prefix_cache_hit_unit: m.theoretical_prefix_cache_hit.and_then(|t| t.unit),
        was_cancelled: s.was_cancelled,
        warmup_request_count: avg(&warm.request_count),
        warmup_error_request_count: avg(&warm.error_request_count),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_paths_match_serde_path_to_error() {
        use crate::json_path::testing::compare_located;
        let n = compare_located::<SummaryDe>(
            r#"{"schema_version": "1.1", "records": {"request_count": {"avg": 200, "unit": "requests"},
                "total_isl": {"avg": 9007199254740993}, "benchmark_duration": {"avg": 12.5}},
                "warmup_metrics": {"request_count": {"avg": 2}}, "was_cancelled": false}"#,
            true,
            error_path,
        );
        assert!(n > 1000, "only {n} broken summaries were compared");
    }
}
