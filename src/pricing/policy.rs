//! Hit-rate and token-mix selection under the three policies (CONTRACT section 8), and
//! pricing one point.

use super::point::{legacy_tier_sum, PointFacts, Validity, Workload};
use super::rate_card::RateCard;
use super::revenue::revenue_per_gpu_hour;
use super::share::{calculator_input_token_share, input_token_share, ShareSource};
use super::surface::LegacySurface;
use super::{clamp01, finite, PriceOutcome, PriceStatus, PricingCode, PricingReason, ValueBounds};
use serde::{Deserialize, Serialize};

/// The pricing policy.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum PricingPolicy {
    /// Prefix-reuse points are priced only with an eligible measured rate; fixed-sequence
    /// points without cache telemetry are priced with no discount.
    #[default]
    Strict,
    /// The theoretical hit rate, for every hardware alike.
    Theoretical,
    /// Today's dashboard, number for number.
    Legacy,
}

impl PricingPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            PricingPolicy::Strict => "strict",
            PricingPolicy::Theoretical => "theoretical",
            PricingPolicy::Legacy => "legacy",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "strict" => Some(PricingPolicy::Strict),
            "theoretical" => Some(PricingPolicy::Theoretical),
            "legacy" => Some(PricingPolicy::Legacy),
            _ => None,
        }
    }
}

/// Where the priced hit rate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum HitRateSource {
    /// A measured server rate.
    Measured,
    /// The theoretical rate (`theoretical` policy).
    Theoretical,
    /// `legacy`: the GB300-only theoretical fallback.
    TheoreticalFallback,
    /// Interpolated along a frontier.
    Interpolated,
    /// No rate: no discount.
    None,
}

/// The `legacy` fallback allowlist, pinned upstream to exactly this (consumer.md b.1).
pub const LEGACY_FALLBACK_HARDWARE: [&str; 1] = ["gb300"];

/// What a policy selects for one point; refusals are in `reasons` (codes that refuse).
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    pub throughput: Option<f64>,
    pub hit_rate: Option<f64>,
    pub hit_bounds: Option<ValueBounds>,
    pub hit_source: HitRateSource,
    pub share: Option<f64>,
    pub share_source: ShareSource,
    pub reasons: Vec<PricingReason>,
}

impl Selection {
    pub fn refused(&self) -> bool {
        self.reasons.iter().any(|r| r.code.refuses())
    }
}

fn refuse(code: PricingCode, detail: impl Into<String>) -> PricingReason {
    PricingReason::new(code, detail)
}

/// The dashboard's measured rate (consumer.md b.1): clamp01(g + (x if a number, else c)).
pub fn legacy_measured(p: &PointFacts) -> Option<f64> {
    legacy_tier_sum(&p.tiers).map(clamp01)
}

/// Select throughput, hit rate and input share for `p` under `policy`; `legacy` reproduces
/// the default surface (the calculator).
pub fn select(p: &PointFacts, policy: PricingPolicy) -> Selection {
    select_on(p, policy, LegacySurface::default())
}

/// `legacy`'s hit rate on `surface` (consumer.md b.1, c.3b): the measured tier combination,
/// then, on the calculator only, the GB300 theoretical fallback; else no discount.
fn legacy_hit_rate(
    p: &PointFacts,
    surface: LegacySurface,
    reasons: &mut Vec<PricingReason>,
) -> (Option<f64>, HitRateSource) {
    if let Some(raw) = legacy_tier_sum(&p.tiers) {
        let h = clamp01(raw);
        if h != raw {
            reasons.push(PricingReason::new(
                PricingCode::HitRateClamped,
                format!("measured hit rate {raw} clamped to {h}"),
            ));
        }
        return (Some(h), HitRateSource::Measured);
    }
    if let (Some(hw), Some(t)) = (p.hardware.as_deref(), p.theoretical) {
        if LEGACY_FALLBACK_HARDWARE.contains(&hw) {
            if surface.applies_gb300_fallback() {
                reasons.push(PricingReason::new(
                    PricingCode::TheoreticalFallback,
                    format!("{hw}: no measured rate, theoretical {t} used"),
                ));
                return (Some(clamp01(t)), HitRateSource::TheoreticalFallback);
            }
            reasons.push(PricingReason::new(
                PricingCode::FallbackNotOnSurface,
                format!(
                    "{hw}: the {surface} surface applies no theoretical fallback (only the calculator does)"
                ),
            ));
        }
    }
    (None, HitRateSource::None)
}

/// `strict`'s hit rate (CONTRACT section 8): the measured rate, only with an eligible verdict
/// and inside [0, 1]; every other case pushes a refusal.
fn strict_hit_rate(
    p: &PointFacts,
    reasons: &mut Vec<PricingReason>,
) -> (Option<f64>, Option<ValueBounds>, HitRateSource) {
    let mut hit_rate = None;
    let mut hit_bounds = None;
    let mut hit_source = HitRateSource::None;
    let measured = p.measured.and_then(|m| finite(m.value).map(|v| (v, m)));
    match (&p.validity, measured) {
        (
            Validity::Ineligible {
                status,
                reasons: vr,
            },
            _,
        ) => {
            let mut r = refuse(
                PricingCode::CacheIneligible,
                format!(
                    "the accounting verdict is {}: the rate may not be priced",
                    status.as_deref().unwrap_or("not eligible")
                ),
            );
            r.verdict_status = status.clone();
            r.verdict_reasons = vr.clone();
            reasons.push(r);
        }
        (Validity::Malformed { detail }, _) => {
            reasons.push(refuse(PricingCode::CacheValidityMalformed, detail.clone()))
        }
        (_, None) => reasons.push(refuse(
            PricingCode::CacheUnmeasured,
            if p.workload == Workload::PrefixReuse {
                "prefix-reuse workload without a measured hit rate"
            } else {
                "no measured hit rate and the workload is not known to be fixed-sequence"
            },
        )),
        (Validity::Missing, Some(_)) => reasons.push(refuse(
            PricingCode::CacheValidityMissing,
            "a measured rate without a validity verdict: eligibility not proven",
        )),
        (Validity::Eligible, Some((v, m))) => {
            if !(0.0..=1.0).contains(&v) {
                reasons.push(refuse(
                    PricingCode::CacheRateInvalid,
                    format!("measured hit rate {v} is outside [0, 1]"),
                ));
            } else {
                hit_rate = Some(v);
                hit_source = HitRateSource::Measured;
                if let (Some(lo), Some(hi)) = (finite(m.lo), finite(m.hi)) {
                    if lo <= v && v <= hi {
                        hit_bounds = Some(ValueBounds {
                            lo: clamp01(lo),
                            hi: clamp01(hi),
                        });
                    }
                }
            }
        }
    }
    (hit_rate, hit_bounds, hit_source)
}

/// Select throughput, hit rate and input share for `p` under `policy`; `surface` matters only
/// under `legacy`.
pub fn select_on(p: &PointFacts, policy: PricingPolicy, surface: LegacySurface) -> Selection {
    let mut reasons = Vec::new();
    let mut hit_rate = None;
    let mut hit_bounds = None;
    let mut hit_source = HitRateSource::None;
    let no_telemetry_by_design = !p.has_cache_telemetry && p.workload == Workload::FixedSequence;

    let throughput = finite(p.throughput);
    if policy != PricingPolicy::Legacy && !throughput.is_some_and(|t| t >= 0.0) {
        reasons.push(refuse(
            PricingCode::NoThroughput,
            "no finite, non-negative throughput per GPU",
        ));
    }

    match policy {
        PricingPolicy::Legacy => {
            (hit_rate, hit_source) = legacy_hit_rate(p, surface, &mut reasons);
            if hit_rate.is_none() {
                reasons.push(PricingReason::new(
                    if no_telemetry_by_design {
                        PricingCode::NoCacheTelemetry
                    } else {
                        PricingCode::UnmeasuredNoDiscount
                    },
                    "no hit rate: every input token at the fresh price",
                ));
            }
        }
        _ if no_telemetry_by_design => {
            reasons.push(PricingReason::new(
                PricingCode::NoCacheTelemetry,
                "fixed-sequence workload without cache telemetry: no discount",
            ));
        }
        PricingPolicy::Theoretical => match p.theoretical {
            Some(t) => {
                let h = clamp01(t);
                if h != t {
                    reasons.push(PricingReason::new(
                        PricingCode::HitRateClamped,
                        format!("theoretical hit rate {t} clamped to {h}"),
                    ));
                }
                hit_rate = Some(h);
                hit_source = HitRateSource::Theoretical;
            }
            None => reasons.push(refuse(
                PricingCode::CacheUnmeasured,
                "no theoretical hit rate",
            )),
        },
        PricingPolicy::Strict => {
            (hit_rate, hit_bounds, hit_source) = strict_hit_rate(p, &mut reasons);
        }
    }

    let (share, share_source) =
        if policy == PricingPolicy::Legacy && surface.output_defaults_to_total() {
            calculator_input_token_share(p)
        } else {
            input_token_share(p)
        };
    if policy != PricingPolicy::Legacy {
        if let Some(s) = share {
            if !(s.is_finite() && (0.0..=1.0).contains(&s)) {
                reasons.push(refuse(
                    PricingCode::TokenMixInvalid,
                    format!("input share {s} is outside [0, 1]"),
                ));
            }
        }
    }
    Selection {
        throughput,
        hit_rate,
        hit_bounds,
        hit_source,
        share,
        share_source,
        reasons,
    }
}

/// Price a selection: the revenue function decides whether the share is needed.
pub fn price_selection(
    sel: Selection,
    card: &RateCard,
    policy: PricingPolicy,
    surface: LegacySurface,
) -> PriceOutcome {
    let prices = card.prices();
    let mut reasons = sel.reasons;
    let mut revenue = None;
    let mut bounds = None;
    if !reasons.iter().any(|r| r.code.refuses()) {
        let t = sel.throughput.unwrap_or(0.0);
        match revenue_per_gpu_hour(t, sel.share, sel.hit_rate, &prices) {
            Some(r) => {
                if sel.share.is_none() {
                    reasons.push(PricingReason::new(
                        PricingCode::ShareNotNeeded,
                        "input and output prices are equal and no discount applies",
                    ));
                }
                revenue = Some(r);
                if let Some(b) = sel.hit_bounds {
                    let at = |h| revenue_per_gpu_hour(t, sel.share, Some(h), &prices);
                    if let (Some(lo), Some(hi)) = (at(b.hi), at(b.lo)) {
                        bounds = Some(ValueBounds { lo, hi });
                    }
                }
            }
            None => reasons.push(not_priced_reason(t, sel.share, &prices)),
        }
    }
    let priced = revenue.is_some();
    PriceOutcome {
        status: if priced {
            PriceStatus::Priced
        } else {
            PriceStatus::NotPriced
        },
        priced,
        policy,
        surface: (policy == PricingPolicy::Legacy).then_some(surface),
        card: card.name.clone(),
        revenue_per_gpu_hour: revenue,
        revenue_bounds: bounds,
        throughput_per_gpu: sel.throughput,
        hit_rate: sel.hit_rate,
        hit_rate_source: sel.hit_source,
        input_share: sel.share,
        share_source: sel.share_source,
        reasons,
    }
}

/// Why `revenue_per_gpu_hour` gave `None`: an unknown mix, or a non-finite result.
pub(crate) fn not_priced_reason(
    t: f64,
    share: Option<f64>,
    p: &super::rate_card::Prices,
) -> PricingReason {
    if share.is_some() || revenue_per_gpu_hour(t, Some(0.5), None, p).is_none() {
        PricingReason::new(
            PricingCode::NoThroughput,
            format!("revenue at throughput {t} is not a finite number"),
        )
    } else {
        PricingReason::new(
            PricingCode::NoTokenMix,
            "the input share is unknown and input and output prices differ",
        )
    }
}

/// Price one point under `policy` with `card`; `legacy` reproduces the default surface (the
/// calculator).
pub fn price_point(p: &PointFacts, card: &RateCard, policy: PricingPolicy) -> PriceOutcome {
    price_point_on(p, card, policy, LegacySurface::default())
}

/// Price one point under `policy` with `card`; `surface` matters only under `legacy`.
pub fn price_point_on(
    p: &PointFacts,
    card: &RateCard,
    policy: PricingPolicy,
    surface: LegacySurface,
) -> PriceOutcome {
    price_selection(select_on(p, policy, surface), card, policy, surface)
}
