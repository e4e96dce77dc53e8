//! Typed models of every input kvledger reads. Readers (`crate::read`) build them; nothing
//! here parses bytes. Epoch-nanosecond fields are `u64` end to end (they exceed 2^53).

pub mod labels;
pub mod launch;
pub mod opt_f64;
pub mod pieces;
pub mod profile;
pub mod scrape;
pub mod server_metrics;

pub use labels::Labels;
pub use launch::{LaunchFacts, Role};
pub use opt_f64::OptF64;
pub use pieces::Pieces;
pub use profile::{Phase, ProfileEra, ProfileExport, RecordError, RequestRecord, RunSummary};
pub use scrape::{
    FamilyGroup, FamilyMeta, FamilyView, Histogram, SampleValue, SampleView, Samples, Scrape,
    ScrapeSample, ScrapeSet, ScrapeSource, SeriesMeta, SeriesTable, UntypedLarge,
};
pub use server_metrics::{
    Bucket, CounterSlice, CounterStats, EndpointInfo, ExportSummary, Family, GaugeStats,
    HistogramStats, LeanSeries, MetricType, PhaseTimeRanges, Series, ServerMetricsExport,
    ServerMetricsFormat, Stats, TimeRange, Timeslice,
};
