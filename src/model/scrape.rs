//! Raw cumulative scrapes: AIPerf's `server_metrics_export.jsonl`, or Prometheus text
//! captures of `/metrics` taken at known times (e.g. before and after a run).

use super::{Bucket, Labels, MetricType, Phase};
use crate::error::Position;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScrapeSource {
    /// `server_metrics_export.jsonl` (no type information in the file).
    Jsonl,
    /// Prometheus text exposition (`# TYPE` lines give the types).
    PrometheusText,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ScrapeSet {
    pub source: ScrapeSource,
    /// In file order; readers do not sort (endpoints interleave in the JSONL).
    pub scrapes: Vec<Scrape>,
    /// Distinct families present but not kept by the caller's filter.
    pub skipped_families: u32,
}

/// One scrape of one endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Scrape {
    pub endpoint_url: String,
    /// Epoch ns of the scrape. Always known for JSONL; for a Prometheus text capture it comes
    /// from the caller (`CaptureMeta`) or from sample timestamps, else `None` (untimed: the
    /// capture is evidence of values, not of when they held).
    pub timestamp_ns: Option<u64>,
    /// Native JSONL `benchmark_phase`; `None` when absent or null (the baseline scrape).
    pub phase: Option<Phase>,
    pub families: Vec<ScrapeFamily>,
    /// Samples above 2^53 − 1 of families with no type that are not counters by their name
    /// (`crate::read::names::counter_by_name`), in file order: the reader cannot tell a gauge
    /// (which may be that large) from a counter (which may not), so it keeps where they are;
    /// `crate::read::read_run` refuses them (`COUNT_TOO_LARGE`) when another export of the run
    /// types the family as a counter.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub untyped_large: Vec<UntypedLarge>,
}

/// A sample of an untyped family above 2^53 − 1 (see [`Scrape::untyped_large`]).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct UntypedLarge {
    /// The family's name as written.
    pub family: String,
    /// The value as written in the file (or as read, for Prometheus text).
    pub value: String,
    /// Line, column and (JSONL) JSON path of the value.
    pub position: Position,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ScrapeFamily {
    /// Family name with the counter `_total` stripped as AIPerf does (Prometheus text), or
    /// exactly as written (JSONL).
    pub name: String,
    /// Known from `# TYPE` in Prometheus text; `None` in JSONL.
    pub metric_type: Option<MetricType>,
    pub help: Option<String>,
    pub samples: Vec<Sample>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Sample {
    pub labels: Labels,
    pub value: SampleValue,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SampleValue {
    /// Counter, gauge or untyped value. NaN and infinities are kept as read.
    Scalar { value: f64 },
    /// Cumulative-by-`le` buckets with sum and count.
    Histogram {
        buckets: Vec<Bucket>,
        sum: Option<f64>,
        count: Option<f64>,
    },
}
