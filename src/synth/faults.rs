//! Named fault switches. Each one changes what the run's artifacts carry in a way the
//! contract has a rule for; `truth.rs` states the verdict each requires.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    /// No scrape of any endpoint from 0.5 s before the window start until 10 % of the
    /// duration (>= 5 s) after it: the first in-window slices read 0, the next absorbs the mass.
    StartGap,
    /// Profiling starts while warmup requests run and the last pre-window scrape is 1.5 s old:
    /// the first slice straddles the start. Schema 1.1 with `warmup_metrics` (the proof); no JSONL.
    StraddleProof,
    /// The same straddle, schema 1.0 (no warmup metrics, no phase ranges); no JSONL.
    StraddleNoProof,
    /// The first priced endpoint restarts mid-window: every counter and histogram restarts at 0.
    CounterReset,
    /// The first priced endpoint exports its priced counters under a second alias spelling.
    AliasCollision,
    /// CPU offload on (launch facts say so), CPU-tier hits happen, but the engine exports no
    /// CPU-tier counter and counts those tokens as computed.
    CpuCounterAbsent,
    /// Decode workers re-count every prompt with the prefill's full hit split (forces 1P1D on
    /// an aggregated topology).
    DecodeRecount,
    /// The launch facts list a priced worker the scrape never reached.
    WorkerMissing,
    /// The frontend endpoint re-exports every priced worker series (same labels and values).
    FrontendDuplicates,
    /// Errors and cancellations among warmup requests only.
    ErrorsWarmup,
    /// Errors and cancellations among profiling requests.
    ErrorsProfiling,
    /// Hit-rate and usage gauges read NaN on some scrapes.
    NanGauges,
    /// The final scrape comes 3-6 s after the profiling end while unrecorded traffic continues.
    LateFinalScrape,
    /// Label keys `__proto__`, `constructor`, `hasOwnProperty` on every series of one endpoint.
    ProtoLabels,
    /// The priced counters of the first priced endpoint have `tp_rank` replica series that
    /// disagree (replica 1 lags by 0.5 %).
    TpDisagree,
    /// JSONL on: the JSON export (and the CSV written from it) of the first priced endpoint
    /// carries another run's priced counters (x1.25, plus 50k prompt tokens/s of traffic the
    /// scrapes never saw), so its timeslices and the raw scrapes give disjoint intervals.
    ConflictingExports,
    /// JSON and CSV on: the CSV's priced `total`/`rate` cells of the first priced endpoint are
    /// half the JSON's (far beyond `%.4f` rounding).
    CsvJsonDisagree,
    /// The first priced endpoint restarts early in the window (P0 + 15 %) and no scrape reaches
    /// it until every counter and histogram has climbed back to at least its pre-restart
    /// value: no decrease is ever seen, only `process_start_time_seconds` changes.
    RestartUnseen,
    /// No requests during the profiling window: warmup only, then an idle server scraped
    /// through the window (schema 1.1 JSON on, so the window is the phase range).
    ZeroTraffic,
    /// The JSON export writes the first priced family twice with identical content.
    DuplicateFamily,
    /// The JSON export writes the first priced family twice, the second copy with one
    /// series' `total` changed: the file cannot be read (`DUPLICATE_KEY`).
    DuplicateFamilyConflict,
    /// A disaggregated run (1P1D when the topology is aggregated) whose launch facts swap the
    /// prefill and decode endpoint lists; role-stating labels (SGLang `engine_type`, Dynamo
    /// `dynamo_component`) are not emitted, so only the counters' shape contradicts the launch.
    SwappedLaunch,
    /// `profile_export_aiperf.json` carries another `benchmark_id` than the server exports.
    BenchmarkMismatch,
    /// Schema 1.1: the profiling phase range ends at the issue deadline while in-flight
    /// profiling requests finish after it, so their records end outside the window.
    RecordsOutsideWindow,
    /// JSONL on: one scrape of the first priced endpoint is written twice at one timestamp,
    /// the copy with one priced series halfway between its previous and true values.
    DuplicateTimestamp,
    /// Launch facts say `"enable_prefix_caching": "False"` and the engine serves no prefix
    /// hits (hit series exported at 0; no offload tier).
    PrefixCachingDisabled,
}

impl Fault {
    pub const ALL: [Fault; 26] = [
        Fault::StartGap,
        Fault::StraddleProof,
        Fault::StraddleNoProof,
        Fault::CounterReset,
        Fault::AliasCollision,
        Fault::CpuCounterAbsent,
        Fault::DecodeRecount,
        Fault::WorkerMissing,
        Fault::FrontendDuplicates,
        Fault::ErrorsWarmup,
        Fault::ErrorsProfiling,
        Fault::NanGauges,
        Fault::LateFinalScrape,
        Fault::ProtoLabels,
        Fault::TpDisagree,
        Fault::ConflictingExports,
        Fault::CsvJsonDisagree,
        Fault::RestartUnseen,
        Fault::ZeroTraffic,
        Fault::DuplicateFamily,
        Fault::DuplicateFamilyConflict,
        Fault::SwappedLaunch,
        Fault::BenchmarkMismatch,
        Fault::RecordsOutsideWindow,
        Fault::DuplicateTimestamp,
        Fault::PrefixCachingDisabled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Fault::StartGap => "start_gap",
            Fault::StraddleProof => "straddle_proof",
            Fault::StraddleNoProof => "straddle_no_proof",
            Fault::CounterReset => "counter_reset",
            Fault::AliasCollision => "alias_collision",
            Fault::CpuCounterAbsent => "cpu_counter_absent",
            Fault::DecodeRecount => "decode_recount",
            Fault::WorkerMissing => "worker_missing",
            Fault::FrontendDuplicates => "frontend_duplicates",
            Fault::ErrorsWarmup => "errors_warmup",
            Fault::ErrorsProfiling => "errors_profiling",
            Fault::NanGauges => "nan_gauges",
            Fault::LateFinalScrape => "late_final_scrape",
            Fault::ProtoLabels => "proto_labels",
            Fault::TpDisagree => "tp_disagree",
            Fault::ConflictingExports => "conflicting_exports",
            Fault::CsvJsonDisagree => "csv_json_disagree",
            Fault::RestartUnseen => "restart_unseen",
            Fault::ZeroTraffic => "zero_traffic",
            Fault::DuplicateFamily => "duplicate_family",
            Fault::DuplicateFamilyConflict => "duplicate_family_conflict",
            Fault::SwappedLaunch => "swapped_launch",
            Fault::BenchmarkMismatch => "benchmark_mismatch",
            Fault::RecordsOutsideWindow => "records_outside_window",
            Fault::DuplicateTimestamp => "duplicate_timestamp",
            Fault::PrefixCachingDisabled => "prefix_caching_disabled",
        }
    }

    pub fn parse(s: &str) -> Option<Fault> {
        let s = s.trim().to_ascii_lowercase().replace('-', "_");
        Fault::ALL.into_iter().find(|f| f.as_str() == s)
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
