//! Historical-trend style pricing (consumer.md c.3): per date, interpolate the throughput,
//! the input share and the hit rate separately along the frontier, then price. No
//! extrapolation; a single point only at its exact x (within 1e-6). Under `legacy` this is the
//! trend surface ([`LegacySurface::Trend`]) whatever surface other calls use.

use super::frontier::{interpolate_frontier, FrontierInterpolation};
use super::point::PointFacts;
use super::policy::PricingPolicy;
use super::rate_card::RateCard;
use super::surface::LegacySurface;
use serde::Serialize;

/// Interpolate and price at `target` on the trend surface.
pub fn interpolate_trend(
    points: &[PointFacts],
    target: f64,
    card: &RateCard,
    policy: PricingPolicy,
) -> FrontierInterpolation {
    interpolate_frontier(points, target, card, policy, LegacySurface::Trend)
}

/// The points of one date.
#[derive(Debug, Clone, PartialEq)]
pub struct TrendGroup {
    pub date: String,
    pub points: Vec<PointFacts>,
}

/// One dated value of a trend line.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct TrendPoint {
    pub date: String,
    /// A copy of the last value carried to `extend_to` (not a measurement).
    pub synthetic: bool,
    pub value: FrontierInterpolation,
}

/// A trend line: one value per date, sorted by date (ISO dates sort as strings); with
/// `extend_to` later than the last date, a `synthetic` copy of the last value at that date.
pub fn trend_series(
    groups: &[TrendGroup],
    target: f64,
    card: &RateCard,
    policy: PricingPolicy,
    extend_to: Option<&str>,
) -> Vec<TrendPoint> {
    let mut out: Vec<TrendPoint> = groups
        .iter()
        .map(|g| TrendPoint {
            date: g.date.clone(),
            synthetic: false,
            value: interpolate_trend(&g.points, target, card, policy),
        })
        .collect();
    crate::sort::sort_by(&mut out, |a, b| a.date.cmp(&b.date));
    if let (Some(end), Some(last)) = (extend_to, out.last().cloned()) {
        if end > last.date.as_str() {
            out.push(TrendPoint {
                date: end.to_string(),
                synthetic: true,
                value: last.value,
            });
        }
    }
    out
}
