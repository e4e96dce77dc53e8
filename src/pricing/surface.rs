//! The dashboard surface a `legacy` price reproduces (consumer.md c.3b). The dashboard prices
//! the same row three ways; each surface has its own hit-rate rule, share rule, frontier
//! numerics and clamping. `strict` and `theoretical` ignore the surface.

use serde::{Deserialize, Serialize};

/// Which dashboard surface `legacy` reproduces.
///
/// | surface | hit rate | share | frontier |
/// |---|---|---|---|
/// | `chart` | measured only | b.2 | none (points only) |
/// | `calculator` | measured, else GB300 theoretical | b.2 rule 1 with O = output ?? T | dashboard slopes, target clamped and flagged |
/// | `trend` | measured only (its points carry no `hw`) | b.2 | dashboard slopes, no value outside the knots |
///
/// The default is `calculator`: it is the surface behind most priced dashboard numbers (the
/// calculator, Profit Estimator, Fleet Lifecycle and the views API all call
/// `pricingCacheHitRate` with the row's hardware, consumer.md b.1), and its hit-rate rule is
/// the one CONTRACT section 8 names for `legacy`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum LegacySurface {
    /// The chart point (`token-revenue.ts`, `tokenRevenuePerGpuHour`).
    Chart,
    /// The calculator (`throughput-data.ts` then `interpolateForGPU`).
    #[default]
    Calculator,
    /// Historical trends (`interpolated-trend-core.ts`).
    Trend,
}

impl LegacySurface {
    pub const ALL: [LegacySurface; 3] = [
        LegacySurface::Chart,
        LegacySurface::Calculator,
        LegacySurface::Trend,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LegacySurface::Chart => "chart",
            LegacySurface::Calculator => "calculator",
            LegacySurface::Trend => "trend",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        LegacySurface::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Whether the GB300-only theoretical fallback applies. Only the calculator passes the
    /// row's hardware to `pricingCacheHitRate`; the chart calls `measuredCacheHitRate` and the
    /// trend builds its points without `hw`.
    pub fn applies_gb300_fallback(self) -> bool {
        self == LegacySurface::Calculator
    }

    /// Whether a missing `output_tput_per_gpu` is read as the total throughput (the
    /// calculator's `outputThroughput = output_tput_per_gpu ?? tput_per_gpu`, consumer.md a.5).
    pub fn output_defaults_to_total(self) -> bool {
        self == LegacySurface::Calculator
    }

    /// Whether the surface computes a value between frontier points at all.
    pub fn interpolates(self) -> bool {
        self != LegacySurface::Chart
    }

    /// Whether a target outside the knots is clamped (and flagged) rather than refused.
    pub fn clamps_target(self) -> bool {
        self == LegacySurface::Calculator
    }

    /// How far a target may be from a one-knot frontier and still be that knot: the trend
    /// matches within 1e-6 (consumer.md c.3); the calculator only at the exact x, anything
    /// else is clamped (c.3b).
    pub fn single_knot_tolerance(self) -> f64 {
        match self {
            LegacySurface::Trend => 1e-6,
            _ => 0.0,
        }
    }
}

impl std::fmt::Display for LegacySurface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_serialise_as_listed() {
        for s in LegacySurface::ALL {
            assert_eq!(LegacySurface::parse(s.as_str()), Some(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.as_str())
            );
        }
        assert_eq!(LegacySurface::default(), LegacySurface::Calculator);
        assert_eq!(LegacySurface::parse("Chart"), None);
    }
}
