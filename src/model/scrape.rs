//! Raw cumulative scrapes: AIPerf's `server_metrics_export.jsonl`, or Prometheus text
//! captures of `/metrics` taken at known times (e.g. before and after a run).
//!
//! A file's scrapes repeat the same series thousands of times, so a series' family and labels
//! are kept once per file in a [`SeriesTable`] shared by its scrapes, and a scrape keeps per
//! sample only the series' index and the value. [`Scrape::families`] gives the family-by-family
//! view; serialised, a scrape has that shape (families with their samples and labels).

use super::{Labels, MetricType, Phase};
use crate::error::Position;
use serde::Serialize;
use std::sync::Arc;

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

/// The families and series of one file, shared by its scrapes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SeriesTable {
    pub families: Vec<FamilyMeta>,
    pub series: Vec<SeriesMeta>,
}

/// A family as its file names it.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyMeta {
    /// Family name with the counter `_total` stripped as AIPerf does (Prometheus text), or
    /// exactly as written (JSONL).
    pub name: String,
    /// Known from `# TYPE` in Prometheus text; `None` in JSONL.
    pub metric_type: Option<MetricType>,
    pub help: Option<String>,
}

/// A series: its family (index in [`SeriesTable::families`]) and labels.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesMeta {
    pub family: u32,
    /// Shared with the reader's index of its series and with accounting: one copy per series.
    pub labels: Arc<Labels>,
}

/// One scrape of one endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Scrape {
    pub endpoint_url: String,
    /// Epoch ns of the scrape. Always known for JSONL; for a Prometheus text capture it comes
    /// from the caller (`CaptureMeta`) or from sample timestamps, else `None` (untimed: the
    /// capture is evidence of values, not of when they held).
    pub timestamp_ns: Option<u64>,
    /// Native JSONL `benchmark_phase`; `None` when absent or null (the baseline scrape).
    pub phase: Option<Phase>,
    /// The file's families and series.
    pub table: Arc<SeriesTable>,
    /// The families of the scrape in order, each with the end of its samples in `samples`.
    pub groups: Vec<FamilyGroup>,
    /// The samples, family by family.
    pub samples: Vec<ScrapeSample>,
    /// Samples above 2^53 − 1 of families with no type that are not counters by their name
    /// (`crate::read::names::counter_by_name`), in file order: the reader cannot tell a gauge
    /// (which may be that large) from a counter (which may not), so it keeps where they are;
    /// `crate::read::read_run` refuses them (`COUNT_TOO_LARGE`) when another export of the run
    /// types the family as a counter.
    pub untyped_large: Vec<UntypedLarge>,
}

/// A family of a scrape: its index in [`SeriesTable::families`] and where its samples end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FamilyGroup {
    pub family: u32,
    pub end: u32,
}

/// One sample: its series (index in [`SeriesTable::series`]) and value.
#[derive(Debug, Clone, PartialEq)]
pub struct ScrapeSample {
    pub series: u32,
    pub value: SampleValue,
}

/// A sample above 2^53 − 1 of an untyped family (see [`Scrape::untyped_large`]).
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
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SampleValue {
    /// Counter, gauge or untyped value. NaN and infinities are kept as read.
    Scalar { value: f64 },
    /// Cumulative-by-`le` buckets with sum and count (boxed: most samples are scalars).
    Histogram(Box<Histogram>),
}

/// A histogram sample: bucket keys exactly as written, in file order (one list per distinct
/// key set of the file, shared), with their cumulative counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    pub les: Arc<[String]>,
    pub counts: Vec<f64>,
    pub sum: Option<f64>,
    pub count: Option<f64>,
}

impl Histogram {
    /// The buckets: (`le` as written, cumulative count).
    pub fn buckets(&self) -> impl ExactSizeIterator<Item = (&str, f64)> + '_ {
        self.les
            .iter()
            .map(String::as_str)
            .zip(self.counts.iter().copied())
    }
}

/// One family of a scrape with its samples.
#[derive(Debug, Clone, Copy)]
pub struct FamilyView<'a> {
    pub name: &'a str,
    pub metric_type: Option<MetricType>,
    pub help: Option<&'a str>,
    pub samples: Samples<'a>,
}

/// The samples of one family of a scrape.
#[derive(Debug, Clone, Copy)]
pub struct Samples<'a> {
    table: &'a SeriesTable,
    items: &'a [ScrapeSample],
}

/// One sample with its labels.
#[derive(Debug, Clone, Copy)]
pub struct SampleView<'a> {
    /// The sample's series (index in [`SeriesTable::series`]).
    pub series: u32,
    pub labels: &'a Labels,
    pub value: &'a SampleValue,
}

/// Labels of a series missing from its table (never the case for a reader's scrapes).
static NO_LABELS: std::sync::OnceLock<Labels> = std::sync::OnceLock::new();

impl<'a> Samples<'a> {
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<SampleView<'a>> {
        self.items.get(i).map(|s| self.view(s))
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = SampleView<'a>> + 'a {
        let table = self.table;
        self.items.iter().map(move |s| view(table, s))
    }

    fn view(&self, s: &'a ScrapeSample) -> SampleView<'a> {
        view(self.table, s)
    }
}

impl<'a> IntoIterator for Samples<'a> {
    type Item = SampleView<'a>;
    type IntoIter = Box<dyn ExactSizeIterator<Item = SampleView<'a>> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl<'a> IntoIterator for &Samples<'a> {
    type Item = SampleView<'a>;
    type IntoIter = Box<dyn ExactSizeIterator<Item = SampleView<'a>> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

fn view<'a>(table: &'a SeriesTable, s: &'a ScrapeSample) -> SampleView<'a> {
    let labels = table
        .series
        .get(s.series as usize)
        .map_or_else(|| NO_LABELS.get_or_init(Labels::new), |m| m.labels.as_ref());
    SampleView {
        series: s.series,
        labels,
        value: &s.value,
    }
}

impl Scrape {
    /// The scrape's families in order, each with its samples.
    pub fn families(&self) -> impl ExactSizeIterator<Item = FamilyView<'_>> + '_ {
        let table: &SeriesTable = &self.table;
        let mut start = 0usize;
        self.groups.iter().map(move |g| {
            let end = (g.end as usize).clamp(start, self.samples.len());
            let items = self.samples.get(start..end).unwrap_or(&[]);
            start = end;
            let meta = table.families.get(g.family as usize);
            FamilyView {
                name: meta.map_or("", |m| m.name.as_str()),
                metric_type: meta.and_then(|m| m.metric_type),
                help: meta.and_then(|m| m.help.as_deref()),
                samples: Samples { table, items },
            }
        })
    }

    /// The family named `name`, if the scrape has it.
    pub fn family(&self, name: &str) -> Option<FamilyView<'_>> {
        self.families().find(|f| f.name == name)
    }
}

// Serialised, a scrape is its family-by-family view.

#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Scrape")]
struct ScrapeShape<'a> {
    endpoint_url: &'a str,
    timestamp_ns: Option<u64>,
    phase: Option<Phase>,
    families: Vec<FamilyShape<'a>>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    untyped_large: &'a [UntypedLarge],
}

#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "ScrapeFamily")]
struct FamilyShape<'a> {
    name: &'a str,
    metric_type: Option<MetricType>,
    help: Option<&'a str>,
    samples: Vec<SampleShape<'a>>,
}

#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Sample")]
struct SampleShape<'a> {
    labels: &'a Labels,
    value: &'a SampleValue,
}

#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Histogram")]
struct HistogramShape<'a> {
    buckets: Vec<BucketShape<'a>>,
    sum: Option<f64>,
    count: Option<f64>,
}

#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "Bucket")]
struct BucketShape<'a> {
    le: &'a str,
    count: f64,
}

impl Serialize for Scrape {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let families = self
            .families()
            .map(|f| FamilyShape {
                name: f.name,
                metric_type: f.metric_type,
                help: f.help,
                samples: f
                    .samples
                    .iter()
                    .map(|v| SampleShape {
                        labels: v.labels,
                        value: v.value,
                    })
                    .collect(),
            })
            .collect();
        ScrapeShape {
            endpoint_url: &self.endpoint_url,
            timestamp_ns: self.timestamp_ns,
            phase: self.phase,
            families,
            untyped_large: &self.untyped_large,
        }
        .serialize(s)
    }
}

impl schemars::JsonSchema for Scrape {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        ScrapeShape::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        ScrapeShape::json_schema(generator)
    }
}

impl Serialize for Histogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        HistogramShape {
            buckets: self
                .buckets()
                .map(|(le, count)| BucketShape { le, count })
                .collect(),
            sum: self.sum,
            count: self.count,
        }
        .serialize(s)
    }
}

impl schemars::JsonSchema for Histogram {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        HistogramShape::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        HistogramShape::json_schema(generator)
    }
}
