//! Cache-aware pricing (CONTRACT section 8): rate cards, hit-rate and token-mix selection
//! under the `strict` / `theoretical` / `legacy` policies, money metrics, and frontier
//! interpolation with per-segment eligibility. Plain Rust: no wasm types here.
//!
//! Every refusal is a typed "not priced" outcome carrying stable reason codes
//! ([`PricingCode`]), never a number. The rules, formulas and their upstream origin are
//! documented in `docs/pricing.md`.

pub mod frontier;
pub mod point;
pub mod policy;
pub mod rate_card;
pub mod revenue;
pub mod share;
pub mod surface;
pub mod trend;

pub use frontier::{
    dashboard_monotone_slopes, interpolate_frontier, monotone_slopes, pareto_front_upper_left,
    price_frontier, spline, FrontierInterpolation, FrontierKnot, FrontierPricing, FrontierSegment,
    Slopes,
};
pub use point::{
    BenchmarkRow, CacheObservation, ObservedPoint, PointFacts, PointInput, RateInterval, TierRates,
    TokenSource, TokenTotals, Validity, Workload,
};
pub use policy::{
    price_point, price_point_on, select, select_on, HitRateSource, PricingPolicy, Selection,
};
pub use rate_card::{shipped_card, shipped_cards, CardChoice, Prices, RateCard, UsageConvention};
pub use revenue::{revenue_per_gpu_hour, MoneyMetrics, PowerCost};
pub use share::{calculator_input_token_share, input_token_share, ShareSource};
pub use surface::LegacySurface;
pub use trend::{interpolate_trend, trend_series, TrendGroup, TrendPoint};

use serde::{Deserialize, Serialize};

/// Every pricing reason code. Stable strings: consumers switch on them; add codes, never
/// rename or reuse one. Codes whose [`PricingCode::refuses`] is true make an outcome
/// `NOT_PRICED`; the others explain a priced outcome.
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
#[serde(rename_all = "kebab-case")]
pub enum PricingCode {
    // refusals (contract section 8)
    /// The accounting verdict says the rate may not be priced (status is not `VALID_COMPLETE`).
    CacheIneligible,
    /// A prefix-reuse point has no usable hit rate for the policy (no measured rate under
    /// `strict`, no theoretical rate under `theoretical`).
    CacheUnmeasured,
    /// The input share of the token mix is unknown and the input and output prices differ.
    NoTokenMix,
    /// The target lies outside the measured frontier (no extrapolation), or the result was clamped.
    OutsideMeasuredRange,
    // refusals (added by kvledger)
    /// `strict`: a measured rate without any validity flag: eligibility is not proven.
    CacheValidityMissing,
    /// A validity flag that is not a boolean, an unknown status, or a flag contradicting the status.
    CacheValidityMalformed,
    /// `strict`: a measured rate outside [0, 1] (clamping would hide a counter problem).
    CacheRateInvalid,
    /// The input share given is outside [0, 1] or not finite (`strict`).
    TokenMixInvalid,
    /// Throughput per GPU missing, negative or not finite (`strict`, `theoretical`).
    NoThroughput,
    /// No frontier point has both an x value and a throughput.
    EmptyFrontier,
    /// Profit estimator: yearly basis without power per GPU.
    NoPower,
    /// Profit estimator: no TCO for the hardware.
    NoCost,
    /// `legacy` chart: the chart prices its points only and computes no value between them.
    SurfaceNotInterpolated,
    // informational
    /// A point without cache telemetry (fixed-sequence workload): priced with no discount.
    NoCacheTelemetry,
    /// `legacy`: the hit rate is missing and the point is priced with no discount.
    UnmeasuredNoDiscount,
    /// `legacy`: the GB300-only theoretical fallback supplied the hit rate.
    TheoreticalFallback,
    /// `legacy` / `theoretical`: the hit rate was clamped to [0, 1].
    HitRateClamped,
    /// Input and output prices are equal and the cache discount is moot: the share is not needed.
    ShareNotNeeded,
    /// `legacy` calculator: the target was clamped to the frontier's range.
    TargetClamped,
    /// `legacy`: not every frontier point has a hit rate, so the whole frontier gets no discount.
    PartialFrontierNoDiscount,
    /// `legacy`: not every frontier point has an input share, so the share is unknown.
    PartialFrontierNoShare,
    /// `legacy` chart / trend: a `gb300` point without a measured rate gets no discount,
    /// because only the calculator applies the theoretical fallback.
    FallbackNotOnSurface,
}

impl PricingCode {
    pub const ALL: [PricingCode; 22] = [
        PricingCode::CacheIneligible,
        PricingCode::CacheUnmeasured,
        PricingCode::NoTokenMix,
        PricingCode::OutsideMeasuredRange,
        PricingCode::CacheValidityMissing,
        PricingCode::CacheValidityMalformed,
        PricingCode::CacheRateInvalid,
        PricingCode::TokenMixInvalid,
        PricingCode::NoThroughput,
        PricingCode::EmptyFrontier,
        PricingCode::NoPower,
        PricingCode::NoCost,
        PricingCode::SurfaceNotInterpolated,
        PricingCode::NoCacheTelemetry,
        PricingCode::UnmeasuredNoDiscount,
        PricingCode::TheoreticalFallback,
        PricingCode::HitRateClamped,
        PricingCode::ShareNotNeeded,
        PricingCode::TargetClamped,
        PricingCode::PartialFrontierNoDiscount,
        PricingCode::PartialFrontierNoShare,
        PricingCode::FallbackNotOnSurface,
    ];

    /// True when the code makes an outcome `NOT_PRICED`.
    pub fn refuses(self) -> bool {
        use PricingCode::*;
        matches!(
            self,
            CacheIneligible
                | CacheUnmeasured
                | NoTokenMix
                | OutsideMeasuredRange
                | CacheValidityMissing
                | CacheValidityMalformed
                | CacheRateInvalid
                | TokenMixInvalid
                | NoThroughput
                | EmptyFrontier
                | NoPower
                | NoCost
                | SurfaceNotInterpolated
        )
    }

    pub fn as_str(self) -> &'static str {
        use PricingCode::*;
        match self {
            CacheIneligible => "cache-ineligible",
            CacheUnmeasured => "cache-unmeasured",
            NoTokenMix => "no-token-mix",
            OutsideMeasuredRange => "outside-measured-range",
            CacheValidityMissing => "cache-validity-missing",
            CacheValidityMalformed => "cache-validity-malformed",
            CacheRateInvalid => "cache-rate-invalid",
            TokenMixInvalid => "token-mix-invalid",
            NoThroughput => "no-throughput",
            EmptyFrontier => "empty-frontier",
            NoPower => "no-power",
            NoCost => "no-cost",
            SurfaceNotInterpolated => "surface-not-interpolated",
            NoCacheTelemetry => "no-cache-telemetry",
            UnmeasuredNoDiscount => "unmeasured-no-discount",
            TheoreticalFallback => "theoretical-fallback",
            HitRateClamped => "hit-rate-clamped",
            ShareNotNeeded => "share-not-needed",
            TargetClamped => "target-clamped",
            PartialFrontierNoDiscount => "partial-frontier-no-discount",
            PartialFrontierNoShare => "partial-frontier-no-share",
            FallbackNotOnSurface => "fallback-not-on-surface",
        }
    }
}

/// One pricing reason, in the verdict's shape (`{code, detail, ...}`), optionally naming the
/// frontier knot it concerns and carrying the accounting verdict's status and reason codes
/// verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct PricingReason {
    pub code: PricingCode,
    pub detail: String,
    /// Index (in the caller's input list) of the frontier point this reason concerns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub knot: Option<u32>,
    /// The accounting verdict's status (e.g. `WINDOW_UNRESOLVED`), carried verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub verdict_status: Option<String>,
    /// The accounting verdict's reason codes, carried verbatim.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub verdict_reasons: Vec<String>,
}

impl PricingReason {
    pub fn new(code: PricingCode, detail: impl Into<String>) -> Self {
        PricingReason {
            code,
            detail: detail.into(),
            knot: None,
            verdict_status: None,
            verdict_reasons: Vec::new(),
        }
    }

    pub fn at_knot(mut self, knot: usize) -> Self {
        self.knot = Some(knot as u32);
        self
    }
}

/// `PRICED` or `NOT_PRICED`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PriceStatus {
    Priced,
    NotPriced,
}

/// The outcome of pricing one point.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct PriceOutcome {
    pub status: PriceStatus,
    /// True only when `status` is `PRICED`; then `revenue_per_gpu_hour` is present.
    pub priced: bool,
    pub policy: PricingPolicy,
    /// The dashboard surface reproduced (present only under `legacy`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub surface: Option<surface::LegacySurface>,
    /// The rate card's name.
    pub card: String,
    /// $ per GPU-hour (present only when priced).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub revenue_per_gpu_hour: Option<f64>,
    /// Bounds of the revenue from the hit rate's `[lo, hi]` interval, when known
    /// (revenue falls as the hit rate rises: `lo` comes from the rate's `hi`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub revenue_bounds: Option<ValueBounds>,
    /// Throughput per GPU (tok/s) used.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub throughput_per_gpu: Option<f64>,
    /// The hit rate priced (absent: no discount).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub hit_rate: Option<f64>,
    pub hit_rate_source: HitRateSource,
    /// The input share of the token mix (absent: unknown or not needed).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub input_share: Option<f64>,
    pub share_source: ShareSource,
    /// Refusals (when not priced) and notes (when priced), in order.
    pub reasons: Vec<PricingReason>,
}

/// A closed interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct ValueBounds {
    pub lo: f64,
    pub hi: f64,
}

/// An error in the call itself (an unknown or invalid rate card), not a pricing refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PricingError {
    pub message: String,
}

impl std::fmt::Display for PricingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PricingError {}

pub(crate) fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite())
}

pub(crate) fn clamp01(v: f64) -> f64 {
    if v.is_nan() {
        0.0
    } else {
        v.clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn codes_are_unique_and_serialise_as_listed() {
        let strs: BTreeSet<&str> = PricingCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(strs.len(), PricingCode::ALL.len());
        for c in PricingCode::ALL {
            assert_eq!(
                serde_json::to_string(&c).unwrap(),
                format!("\"{}\"", c.as_str())
            );
        }
    }
}

/// The result of pricing a rows file (`kvledger price --json`): the card and policy used, the
/// counts, and one outcome per row in the rows' order.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PriceReport<'a> {
    pub card: &'a RateCard,
    pub policy: PricingPolicy,
    /// The dashboard surface reproduced (present only under `legacy`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub surface: Option<LegacySurface>,
    pub priced: usize,
    pub not_priced: usize,
    pub outcomes: &'a [PriceOutcome],
}

impl<'a> PriceReport<'a> {
    pub fn new(
        card: &'a RateCard,
        policy: PricingPolicy,
        surface: Option<LegacySurface>,
        outcomes: &'a [PriceOutcome],
    ) -> Self {
        let priced = outcomes.iter().filter(|o| o.priced).count();
        PriceReport {
            card,
            policy,
            surface,
            priced,
            not_priced: outcomes.len() - priced,
            outcomes,
        }
    }
}
