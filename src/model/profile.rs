//! Per-request records (`profile_export.jsonl`) and the run summary
//! (`profile_export_aiperf.json`).

use serde::Serialize;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Warmup,
    Profiling,
}

impl Phase {
    /// Case-insensitive, as AIPerf's CreditPhase enum accepts it.
    pub fn parse(s: &str) -> Option<Phase> {
        // Compared in place: every record has a phase, and a lowered copy was an allocation.
        let s = s.trim();
        if s.eq_ignore_ascii_case("warmup") {
            Some(Phase::Warmup)
        } else if s.eq_ignore_ascii_case("profiling") {
            Some(Phase::Profiling)
        } else {
            None
        }
    }
}

/// How the JSONL was serialised (AIPerf changed it twice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum ProfileEra {
    /// Before 0.3.0: every field written, `null`s explicit.
    ExplicitNulls,
    /// 0.3.0 and later: `null` (and later default) fields omitted.
    OmittedNulls,
    /// Oct 2025 and before: `credit_phase` + `timestamp_ns` in the metadata.
    LegacyCreditPhase,
    /// Lines of more than one era in one file.
    Mixed,
    /// No records to tell.
    Empty,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ProfileExport {
    pub era: ProfileEra,
    pub records: Vec<RequestRecord>,
}

/// One request record, projected to the fields the contract uses.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RequestRecord {
    /// 1-based line in the file.
    pub line: u32,
    /// `benchmark_phase` (or legacy `credit_phase`); `None` when the record has none.
    pub phase: Option<Phase>,
    pub request_start_ns: Option<u64>,
    pub request_end_ns: Option<u64>,
    pub error: Option<RecordError>,
    pub was_cancelled: bool,
    pub usage_prompt_tokens: Option<u64>,
    pub input_sequence_length: Option<u64>,
    pub output_sequence_length: Option<u64>,
    pub conversation_id: Option<String>,
    pub turn_index: Option<u32>,
    pub x_correlation_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RecordError {
    pub code: Option<i64>,
    pub error_type: Option<String>,
    pub message: Option<String>,
}

/// `profile_export_aiperf.json`: the fields the contract uses. Top-level metrics are
/// profiling-only; `warmup_*` come from the fork's `warmup_metrics` block.
#[derive(Debug, Clone, PartialEq, Default, Serialize, schemars::JsonSchema)]
pub struct RunSummary {
    pub schema_version: Option<String>,
    pub aiperf_version: Option<String>,
    pub benchmark_id: Option<String>,
    /// Legacy (Oct 2025) layout with metrics under `records`.
    pub legacy_records_layout: bool,
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    pub request_count: Option<f64>,
    pub completed_request_count: Option<f64>,
    pub error_request_count: Option<f64>,
    pub min_request_timestamp_ns: Option<u64>,
    pub max_response_timestamp_ns: Option<u64>,
    pub benchmark_duration_s: Option<f64>,
    pub total_isl: Option<f64>,
    pub total_osl: Option<f64>,
    /// `theoretical_prefix_cache_hit` average (a 0–1 fraction or a percent, as written; see `theoretical_prefix_cache_hit_unit`).
    pub theoretical_prefix_cache_hit: Option<f64>,
    pub theoretical_prefix_cache_hit_unit: Option<String>,
    pub was_cancelled: Option<bool>,
    pub warmup_request_count: Option<f64>,
    pub warmup_error_request_count: Option<f64>,
}
