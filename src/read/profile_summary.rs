//! `profile_export_aiperf.json` (the run summary) → [`RunSummary`].
//!
//! Two layouts: the current flat one (one object per metric tag at the top level) and the
//! legacy Oct 2025 one (metric objects under `"records"`; `legacy_records_layout = true`).
//! Only the fields `RunSummary` holds are built; `input_config`, `telemetry_data` and every
//! other key are skipped without being materialised (serde's `IgnoredAny`; no `flatten`,
//! which would buffer them).
//!
//! `min_request_timestamp.avg` / `max_response_timestamp.avg` (epoch ns) are taken exactly
//! when written as JSON integers. AIPerf usually writes them as floats (`1.78e18`), which have
//! already lost precision: such a value is taken only when it is an exact integer no larger
//! than 2^53 (i.e. the float is provably the written integer), otherwise it is `None`.

use crate::error::{ErrorCode, ReadError};
use crate::model::RunSummary;
use serde::Deserialize;
use serde_json::Number;

#[derive(Deserialize, Default)]
struct MetricDe {
    #[serde(default)]
    avg: Option<Number>,
    #[serde(default)]
    unit: Option<String>,
}

#[derive(Deserialize, Default)]
struct MetricsDe {
    #[serde(default)]
    request_count: Option<MetricDe>,
    #[serde(default)]
    error_request_count: Option<MetricDe>,
    #[serde(default)]
    completed_request_count: Option<MetricDe>,
    #[serde(default)]
    min_request_timestamp: Option<MetricDe>,
    #[serde(default)]
    max_response_timestamp: Option<MetricDe>,
    #[serde(default)]
    benchmark_duration: Option<MetricDe>,
    #[serde(default)]
    total_isl: Option<MetricDe>,
    #[serde(default)]
    total_osl: Option<MetricDe>,
    #[serde(default)]
    theoretical_prefix_cache_hit: Option<MetricDe>,
}

#[derive(Deserialize, Default)]
struct WarmupDe {
    #[serde(default)]
    request_count: Option<MetricDe>,
    #[serde(default)]
    error_request_count: Option<MetricDe>,
}

#[derive(Deserialize)]
struct SummaryDe {
    #[serde(default)]
    schema_version: Option<String>,
    #[serde(default)]
    aiperf_version: Option<String>,
    #[serde(default)]
    benchmark_id: Option<String>,
    #[serde(default)]
    request_count: Option<MetricDe>,
    #[serde(default)]
    error_request_count: Option<MetricDe>,
    #[serde(default)]
    completed_request_count: Option<MetricDe>,
    #[serde(default)]
    min_request_timestamp: Option<MetricDe>,
    #[serde(default)]
    max_response_timestamp: Option<MetricDe>,
    #[serde(default)]
    benchmark_duration: Option<MetricDe>,
    #[serde(default)]
    total_isl: Option<MetricDe>,
    #[serde(default)]
    total_osl: Option<MetricDe>,
    #[serde(default)]
    theoretical_prefix_cache_hit: Option<MetricDe>,
    #[serde(default)]
    records: Option<MetricsDe>,
    #[serde(default)]
    start_time: Option<String>,
    #[serde(default)]
    end_time: Option<String>,
    #[serde(default)]
    was_cancelled: Option<bool>,
    #[serde(default)]
    warmup_metrics: Option<WarmupDe>,
}

fn avg(m: &Option<MetricDe>) -> Option<f64> {
    m.as_ref()
        .and_then(|m| m.avg.as_ref())
        .and_then(Number::as_f64)
}

fn avg_ns(m: &Option<MetricDe>) -> Option<u64> {
    let n = m.as_ref().and_then(|m| m.avg.as_ref())?;
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

/// A reader that notes whether any non-whitespace byte went through (to tell an empty file
/// from a truncated one).
struct NoteContent<R> {
    inner: R,
    seen: bool,
}

impl<R: std::io::Read> std::io::Read for NoteContent<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if !self.seen {
            self.seen = buf
                .get(..n)
                .is_some_and(|b| b.iter().any(|c| !c.is_ascii_whitespace()));
        }
        Ok(n)
    }
}

/// Read a run summary.
pub fn read_run_summary<R: std::io::Read>(file: &str, reader: R) -> Result<RunSummary, ReadError> {
    let mut note = NoteContent {
        inner: reader,
        seen: false,
    };
    let result = {
        let mut de = serde_json::Deserializer::from_reader(&mut note);
        match serde_path_to_error::deserialize::<_, SummaryDe>(&mut de) {
            Ok(s) => de.end().map(|()| s).map_err(|e| (e, None)),
            Err(e) => {
                let path = Some(e.path().to_string());
                Err((e.into_inner(), path))
            }
        }
    };
    let s = match result {
        Ok(s) => s,
        Err((e, _)) if e.is_eof() && !note.seen => {
            return Err(ReadError::whole(
                ErrorCode::EmptyInput,
                file,
                "the run summary is empty",
            ));
        }
        Err((e, path)) => return Err(ReadError::from_json(file, &e, path)),
    };
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
    Ok(RunSummary {
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
    })
}
