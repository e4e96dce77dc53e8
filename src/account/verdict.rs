//! The verdict (`cache_validity`, CONTRACT section 6): statuses and reason codes, defined
//! once here and documented for consumers in `docs/accounting.md` (a test keeps the two in
//! step). Consumers switch on these strings: add codes, never rename or reuse one.

use serde::{Deserialize, Serialize};

/// Contract section 6. Checks run in this order; the status is the first that fails.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// Every check passed: the only status that may be priced.
    ValidComplete,
    /// No engine metrics for any priced role (prefill or unified).
    NotMeasured,
    /// Some endpoint's role could not be decided, or no priced role exists.
    RolesUnresolved,
    /// A counter the rate needs is absent (incl. offloading on with CPU hits uncounted).
    CountersMissing,
    /// A counter is unusable: a reset, replicas that disagree, an alias collision, hits > prompt.
    InvalidCounter,
    /// The profiling window or the in-window increase cannot be bounded tightly enough.
    WindowUnresolved,
    /// The requests the counters saw cannot be proven to be the profiling requests.
    RequestScopeUnresolved,
}

impl Status {
    /// The order checks are evaluated in (contract section 6).
    pub const CHECK_ORDER: [Status; 6] = [
        Status::NotMeasured,
        Status::RolesUnresolved,
        Status::CountersMissing,
        Status::InvalidCounter,
        Status::WindowUnresolved,
        Status::RequestScopeUnresolved,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::ValidComplete => "VALID_COMPLETE",
            Status::NotMeasured => "NOT_MEASURED",
            Status::RolesUnresolved => "ROLES_UNRESOLVED",
            Status::CountersMissing => "COUNTERS_MISSING",
            Status::InvalidCounter => "INVALID_COUNTER",
            Status::WindowUnresolved => "WINDOW_UNRESOLVED",
            Status::RequestScopeUnresolved => "REQUEST_SCOPE_UNRESOLVED",
        }
    }
}

/// Every reason code. Each failing code belongs to exactly one status (`ReasonCode::status`);
/// informational codes (`status() == None`) explain the result without failing it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum ReasonCode {
    // NOT_MEASURED
    /// No engine metric family on any prefill or unified endpoint.
    NoEngineMetrics,
    /// Engine metrics exist but of an engine kvledger has no adapter for.
    UnsupportedEngine,

    // ROLES_UNRESOLVED
    /// An engine endpoint whose role no launch fact, label or single-endpoint rule decides.
    RoleUnresolved,
    /// Launch facts and labels give an endpoint different roles.
    RoleConflict,
    /// Roles are resolved but none is prefill or unified.
    NoPricedRole,
    /// The roles the launch facts give contradict what the endpoints' metrics show (a
    /// "prefill" endpoint generating the decode output, a "decode" endpoint that generated
    /// none): the facts may be swapped, so nothing is priced from them.
    RoleShapeConflict,

    // COUNTERS_MISSING
    /// The prompt-token denominator (F) is absent on a priced endpoint.
    PromptCounterMissing,
    /// The hit counter (G) is absent on a priced endpoint.
    HitCounterMissing,
    /// vLLM without `prompt_tokens_by_source`: hits/queries is telemetry only.
    BySourceMissing,
    /// TensorRT-LLM before its token counters (1.3.0 line).
    TokenCountersAbsent,
    /// Offloading enabled, but this engine version leaves CPU-tier hits uncounted.
    CpuTierUncounted,
    /// The launch facts name a priced endpoint that the scrape does not contain.
    WorkerMissing,

    // INVALID_COUNTER
    /// A counter decreased inside the window and exact reset-aware accounting is impossible.
    CounterReset,
    /// Replica series (tp/pp/ep ranks) of one pool disagree.
    ReplicaDisagreement,
    /// A priced counter is exported under two alias names on one endpoint.
    AliasCollision,
    /// Hits exceed prompt tokens on an endpoint or tier.
    HitsExceedPrompt,
    /// A counter value is negative, NaN or infinite.
    NonFiniteCounter,
    /// Two pieces of evidence about one series contradict each other: intervals from two
    /// kinds of evidence are disjoint (a JSON export and a JSONL scrape file, the CSV and the
    /// JSON export of one run), or two samples at one timestamp differ. The interval kept is
    /// the hull of the candidates (or unbounded above), never a point made from nothing.
    EvidenceConflict,

    // WINDOW_UNRESOLVED
    /// No profiling window could be determined.
    WindowMissing,
    /// A counter's in-window increase has no upper bound from the evidence present.
    IncreaseUnbounded,
    /// The overall rate's interval is wider than `policy.max_rate_width`.
    RateTooWide,
    /// No prompt tokens are surely inside the window (zero traffic): the rate is 0/0, it
    /// has no value, and the legacy keys that derive from it are null.
    NoPromptInWindow,

    // REQUEST_SCOPE_UNRESOLVED
    /// No per-request export: the request scope cannot be proven.
    NoRequestRecords,
    /// Errors among the profiling records.
    ProfilingErrors,
    /// Cancelled profiling requests.
    ProfilingCancellations,
    /// The server's priced-role prompt interval does not contain the client's prompt sum.
    PromptNotConserved,
    /// The admissions interval (ATOM `prefix_cache_requests`) does not contain the profiling records.
    AdmissionsNotConserved,
    /// The per-request export has no prompt-token counts.
    ClientPromptUnknown,
    /// The run's files carry different `benchmark_id`s: they are not one benchmark.
    BenchmarkMismatch,
    /// Profiling records start before or end after the profiling window the counters are
    /// bounded over: the counters did not see the same requests.
    RecordsOutsideWindow,

    // informational
    /// vLLM `external_kv_transfer` with no offload backend named: reported as external.
    TierAmbiguous,
    /// The engine folds two tiers into one counter: overall stands, the split does not.
    TiersNotSeparable,
    /// vLLM versions between the by-source counter and its fix count one extra token per fully cached request.
    BySourceOffByOne,
    /// A diagnostic counter exported under two alias names was dropped.
    AliasDropped,
    /// Decode endpoints re-count prompts: excluded from rates and totals.
    DecodeExcluded,
    /// Frontend series are a separate scope, never priced.
    FrontendSeparate,
    /// A ratio gauge is present: telemetry only, never priced.
    RatioGaugeTelemetry,
    /// Phase totals were trusted as exact (`policy.trust_phase_totals`).
    PhaseTotalsTrusted,
    /// A counter reset was accounted exactly from raw samples.
    ResetAccounted,
    /// Warmup errors exist; they do not count against the window.
    WarmupErrorsIgnored,
    /// The launch facts say prefix caching is disabled: the hit rate is 0 by configuration.
    PrefixCachingDisabled,
    /// The observed scope (roles, tiers) differs from the requested one; the detail says how
    /// and why (e.g. a tier with no counter on any priced endpoint).
    ScopeDifference,
    /// A family repeated with identical content in one export was merged into one.
    DuplicateFamilyMerged,
    /// A Prometheus capture without a time contributed its labels (roles, engine) and its
    /// values as telemetry only: it bounds nothing.
    UntimedCapture,
    /// Raw samples were thinned to fit the streaming API's memory budget (kept are the first
    /// and last sample of each series, both samples of every decrease and every odd value),
    /// or past the budget still the export's counter timeslices were dropped, so
    /// every interval still contains the truth, only wider (a slice is compared with the
    /// samples around its bounds as a range; rates do not use the aligned `n ≤ d` bound).
    /// Never on the whole-buffer path.
    EvidenceCoarsened,
}

impl ReasonCode {
    pub const ALL: [ReasonCode; 45] = [
        ReasonCode::NoEngineMetrics,
        ReasonCode::UnsupportedEngine,
        ReasonCode::RoleUnresolved,
        ReasonCode::RoleConflict,
        ReasonCode::NoPricedRole,
        ReasonCode::PromptCounterMissing,
        ReasonCode::HitCounterMissing,
        ReasonCode::BySourceMissing,
        ReasonCode::TokenCountersAbsent,
        ReasonCode::CpuTierUncounted,
        ReasonCode::WorkerMissing,
        ReasonCode::CounterReset,
        ReasonCode::ReplicaDisagreement,
        ReasonCode::AliasCollision,
        ReasonCode::HitsExceedPrompt,
        ReasonCode::NonFiniteCounter,
        ReasonCode::WindowMissing,
        ReasonCode::IncreaseUnbounded,
        ReasonCode::RateTooWide,
        ReasonCode::NoRequestRecords,
        ReasonCode::ProfilingErrors,
        ReasonCode::ProfilingCancellations,
        ReasonCode::PromptNotConserved,
        ReasonCode::AdmissionsNotConserved,
        ReasonCode::ClientPromptUnknown,
        ReasonCode::TierAmbiguous,
        ReasonCode::TiersNotSeparable,
        ReasonCode::BySourceOffByOne,
        ReasonCode::AliasDropped,
        ReasonCode::DecodeExcluded,
        ReasonCode::FrontendSeparate,
        ReasonCode::RatioGaugeTelemetry,
        ReasonCode::PhaseTotalsTrusted,
        ReasonCode::ResetAccounted,
        ReasonCode::WarmupErrorsIgnored,
        ReasonCode::EvidenceConflict,
        ReasonCode::RoleShapeConflict,
        ReasonCode::NoPromptInWindow,
        ReasonCode::BenchmarkMismatch,
        ReasonCode::RecordsOutsideWindow,
        ReasonCode::PrefixCachingDisabled,
        ReasonCode::ScopeDifference,
        ReasonCode::DuplicateFamilyMerged,
        ReasonCode::UntimedCapture,
        ReasonCode::EvidenceCoarsened,
    ];

    /// The status this code fails, or `None` for an informational code.
    pub fn status(self) -> Option<Status> {
        use ReasonCode::*;
        match self {
            NoEngineMetrics | UnsupportedEngine => Some(Status::NotMeasured),
            RoleUnresolved | RoleConflict | NoPricedRole | RoleShapeConflict => {
                Some(Status::RolesUnresolved)
            }
            PromptCounterMissing | HitCounterMissing | BySourceMissing | TokenCountersAbsent
            | CpuTierUncounted | WorkerMissing => Some(Status::CountersMissing),
            CounterReset | ReplicaDisagreement | AliasCollision | HitsExceedPrompt
            | NonFiniteCounter | EvidenceConflict => Some(Status::InvalidCounter),
            WindowMissing | IncreaseUnbounded | RateTooWide | NoPromptInWindow => {
                Some(Status::WindowUnresolved)
            }
            NoRequestRecords
            | ProfilingErrors
            | ProfilingCancellations
            | PromptNotConserved
            | AdmissionsNotConserved
            | ClientPromptUnknown
            | BenchmarkMismatch
            | RecordsOutsideWindow => Some(Status::RequestScopeUnresolved),
            TierAmbiguous
            | TiersNotSeparable
            | BySourceOffByOne
            | AliasDropped
            | DecodeExcluded
            | FrontendSeparate
            | RatioGaugeTelemetry
            | PhaseTotalsTrusted
            | ResetAccounted
            | WarmupErrorsIgnored
            | PrefixCachingDisabled
            | ScopeDifference
            | DuplicateFamilyMerged
            | UntimedCapture
            | EvidenceCoarsened => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        use ReasonCode::*;
        match self {
            NoEngineMetrics => "no_engine_metrics",
            UnsupportedEngine => "unsupported_engine",
            RoleUnresolved => "role_unresolved",
            RoleConflict => "role_conflict",
            NoPricedRole => "no_priced_role",
            PromptCounterMissing => "prompt_counter_missing",
            HitCounterMissing => "hit_counter_missing",
            BySourceMissing => "by_source_missing",
            TokenCountersAbsent => "token_counters_absent",
            CpuTierUncounted => "cpu_tier_uncounted",
            WorkerMissing => "worker_missing",
            CounterReset => "counter_reset",
            ReplicaDisagreement => "replica_disagreement",
            AliasCollision => "alias_collision",
            HitsExceedPrompt => "hits_exceed_prompt",
            NonFiniteCounter => "non_finite_counter",
            WindowMissing => "window_missing",
            IncreaseUnbounded => "increase_unbounded",
            RateTooWide => "rate_too_wide",
            NoRequestRecords => "no_request_records",
            ProfilingErrors => "profiling_errors",
            ProfilingCancellations => "profiling_cancellations",
            PromptNotConserved => "prompt_not_conserved",
            AdmissionsNotConserved => "admissions_not_conserved",
            ClientPromptUnknown => "client_prompt_unknown",
            TierAmbiguous => "tier_ambiguous",
            TiersNotSeparable => "tiers_not_separable",
            BySourceOffByOne => "by_source_off_by_one",
            AliasDropped => "alias_dropped",
            DecodeExcluded => "decode_excluded",
            FrontendSeparate => "frontend_separate",
            RatioGaugeTelemetry => "ratio_gauge_telemetry",
            PhaseTotalsTrusted => "phase_totals_trusted",
            ResetAccounted => "reset_accounted",
            WarmupErrorsIgnored => "warmup_errors_ignored",
            EvidenceConflict => "evidence_conflict",
            RoleShapeConflict => "role_shape_conflict",
            NoPromptInWindow => "no_prompt_in_window",
            BenchmarkMismatch => "benchmark_mismatch",
            RecordsOutsideWindow => "records_outside_window",
            PrefixCachingDisabled => "prefix_caching_disabled",
            ScopeDifference => "scope_difference",
            DuplicateFamilyMerged => "duplicate_family_merged",
            UntimedCapture => "untimed_capture",
            EvidenceCoarsened => "evidence_coarsened",
        }
    }
}

/// One reason: the code, a sentence for people, and where it applies.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct Reason {
    pub code: ReasonCode,
    pub detail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub endpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub metric: Option<String>,
}

impl Reason {
    pub fn new(code: ReasonCode, detail: impl Into<String>) -> Self {
        Reason {
            code,
            detail: detail.into(),
            endpoint: None,
            metric: None,
        }
    }

    pub fn at(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    pub fn metric(mut self, metric: impl Into<String>) -> Self {
        self.metric = Some(metric.into());
        self
    }
}

/// Whether the CPU tier was measured (contract section 6).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum CpuComponent {
    /// A CPU-tier hit counter was read.
    Measured,
    /// `KV_OFFLOADING=none`: C = 0 exactly.
    NotOffloaded,
    /// Offloading may be on and no CPU-tier counter separates it.
    Missing,
}

/// The status implied by a set of reasons: the first failing check in contract order.
pub fn status_of(reasons: &[Reason]) -> Status {
    Status::CHECK_ORDER
        .into_iter()
        .find(|s| reasons.iter().any(|r| r.code.status() == Some(*s)))
        .unwrap_or(Status::ValidComplete)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn codes_are_unique_and_listed() {
        let strs: BTreeSet<&str> = ReasonCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(strs.len(), ReasonCode::ALL.len());
        for c in ReasonCode::ALL {
            let json = serde_json::to_string(&c).expect("json");
            assert_eq!(json, format!("\"{}\"", c.as_str()));
        }
    }

    #[test]
    fn every_code_is_documented() {
        let doc = include_str!("../../docs/accounting.md");
        for c in ReasonCode::ALL {
            assert!(
                doc.contains(&format!("| `{}` |", c.as_str())),
                "{} not in docs/accounting.md",
                c.as_str()
            );
        }
    }

    #[test]
    fn status_is_first_failing_check() {
        let r = |c| Reason::new(c, "x");
        assert_eq!(status_of(&[]), Status::ValidComplete);
        assert_eq!(
            status_of(&[r(ReasonCode::TierAmbiguous)]),
            Status::ValidComplete
        );
        assert_eq!(
            status_of(&[r(ReasonCode::RateTooWide), r(ReasonCode::CounterReset)]),
            Status::InvalidCounter
        );
        assert_eq!(
            status_of(&[
                r(ReasonCode::NoRequestRecords),
                r(ReasonCode::RoleUnresolved)
            ]),
            Status::RolesUnresolved
        );
    }
}
