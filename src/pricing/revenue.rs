//! Money metrics (consumer.md b.3, b.4): revenue per GPU-hour, per MW-year / GW-year,
//! profit against a TCO tier, tokens per dollar, the profit estimator and the fleet
//! lifecycle's billable-input rule.

use super::rate_card::Prices;
use super::{clamp01, PricingCode, PricingReason};
use serde::{Deserialize, Serialize};

/// Hours in a (365-day) year, as the dashboard uses.
pub const HOURS_PER_YEAR: f64 = 8760.0;

/// Revenue in $ per GPU-hour at throughput `t` (tok/s/GPU), input share `s` and hit rate `h`
/// (consumer.md b.3, the dashboard's `tokenRevenueFromRatesPerGpuHour`):
/// - `t` not > 0 gives 0 (not "not priced");
/// - a missing or non-finite `h` is no discount (h = 0); `h` is clamped to [0, 1];
/// - equal input and output prices with no effective discount need no share;
/// - otherwise an unknown share gives `None` (`no-token-mix`); `s` is clamped to [0, 1].
///
/// `R = t x 3600 x (s x p_in + (1 - s) x p_out) / 1e6`, `p_in = (1 - h) x input + h x cached`.
///
/// A result that is not finite (an infinite or overflowing throughput) is `None`: no NaN or
/// infinity ever leaves this function.
pub fn revenue_per_gpu_hour(t: f64, s: Option<f64>, h: Option<f64>, p: &Prices) -> Option<f64> {
    revenue_unchecked(t, s, h, p).filter(|v| v.is_finite())
}

fn revenue_unchecked(t: f64, s: Option<f64>, h: Option<f64>, p: &Prices) -> Option<f64> {
    if t.is_nan() || t <= 0.0 {
        return Some(0.0);
    }
    let hh = match h {
        Some(v) if v.is_finite() => clamp01(v),
        _ => 0.0,
    };
    if p.input == p.output && !(hh > 0.0 && p.cached != p.input) {
        return Some(t * 3600.0 * p.input / 1e6);
    }
    let s = clamp01(s.filter(|v| v.is_finite())?);
    let p_in = (1.0 - hh) * p.input + hh * p.cached;
    let blend = s * p_in + (1.0 - s) * p.output;
    Some(t * 3600.0 * blend / 1e6)
}

/// Power and cost of one GPU: all-in kW per GPU and a TCO in $ per GPU-hour.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct PowerCost {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub kw_per_gpu: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub tco_per_gpu_hour: Option<f64>,
}

crate::fields!(PowerCost, deny_unknown: true, empty: PowerCost::default(), required: [], [kw_per_gpu, tco_per_gpu_hour]);

/// B200 facts from the dashboard (consumer.md b.4): 1.71 kW all-in per GPU; TCO tiers in
/// $ per GPU-hour.
pub const B200_KW_PER_GPU: f64 = 1.71;
pub const B200_TCO_HYPERSCALER: f64 = 1.73;
pub const B200_TCO_NEOCLOUD: f64 = 2.07;
pub const B200_TCO_RENTAL_3YR: f64 = 2.60;

/// GPU-hours per year of a facility of `unit_kw` kW: `(unit_kw / kw_per_gpu) x 8760`.
pub fn gpu_hours_per_year(unit_kw: f64, kw_per_gpu: f64) -> Option<f64> {
    (kw_per_gpu.is_finite() && kw_per_gpu > 0.0 && unit_kw.is_finite())
        .then(|| unit_kw / kw_per_gpu * HOURS_PER_YEAR)
}

/// Money metrics of one priced point. Every field is absent when the point is not priced
/// (the dashboard deletes sale-priced fields rather than showing stand-in values); yearly
/// metrics need power, profit needs the TCO.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct MoneyMetrics {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub revenue_per_gpu_hour: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub revenue_per_mw_year: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub revenue_per_gw_year: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub profit_per_gpu_hour: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub profit_per_mw_year: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub profit_per_gw_year: Option<f64>,
    /// Total tokens per $1 of the same cache-aware gross revenue: `t x 3600 / R`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub tokens_per_dollar: Option<f64>,
}

/// Money metrics from a revenue `r` ($/GPU-hour; `None` = not priced) at throughput `t`.
pub fn money_metrics(r: Option<f64>, t: Option<f64>, pc: &PowerCost) -> MoneyMetrics {
    let Some(r) = r.filter(|v| v.is_finite()) else {
        return MoneyMetrics::default();
    };
    let kw = pc.kw_per_gpu.filter(|v| v.is_finite() && *v > 0.0);
    let tco = pc.tco_per_gpu_hour.filter(|v| v.is_finite());
    let mw = kw.and_then(|k| gpu_hours_per_year(1_000.0, k));
    let gw = kw.and_then(|k| gpu_hours_per_year(1_000_000.0, k));
    let profit = tco.map(|c| r - c);
    MoneyMetrics {
        revenue_per_gpu_hour: Some(r),
        revenue_per_mw_year: mw.map(|g| r * g),
        revenue_per_gw_year: gw.map(|g| r * g),
        profit_per_gpu_hour: profit,
        profit_per_mw_year: profit.zip(mw).map(|(p, g)| p * g),
        profit_per_gw_year: profit.zip(gw).map(|(p, g)| p * g),
        tokens_per_dollar: t
            .filter(|t| t.is_finite() && *t > 0.0 && r > 0.0)
            .map(|t| t * 3600.0 / r),
    }
}

/// The profit estimator's basis: one GPU for one hour, or one GW of facility for a year.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "kebab-case")]
pub enum ProfitBasis {
    #[default]
    ChipHour,
    GwYear,
}

pub const DEFAULT_UTILIZATION_PCT: f64 = 60.0;
pub const DEFAULT_LAB_SHARE_PCT: f64 = 30.0;

/// Input of the profit estimator (consumer.md b.4, `estimateSkuProfit`).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct ProfitInput {
    /// $ per GPU-hour; absent = not priced (`no-token-mix`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub revenue_per_gpu_hour: Option<f64>,
    /// The interpolation clamped the target (`outside-measured-range`).
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub clamped: bool,
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub basis: ProfitBasis,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub kw_per_gpu: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub tco_per_gpu_hour: Option<f64>,
    /// Percent, clamped to [0, 100]; non-finite = default 60.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub utilization_pct: Option<f64>,
    /// Percent, clamped to [0, 100]; non-finite = default 30.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub lab_share_pct: Option<f64>,
}

crate::fields!(ProfitInput, deny_unknown: true, empty: ProfitInput::default(), required: [], [revenue_per_gpu_hour, clamped, basis, kw_per_gpu, tco_per_gpu_hour, utilization_pct, lab_share_pct]);

/// The profit estimator's result.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct ProfitEstimate {
    pub gpu_hours: f64,
    pub revenue: f64,
    pub tco: f64,
    pub gross_margin: f64,
    pub license_fee: f64,
    pub profit: f64,
}

fn pct(v: Option<f64>, default: f64) -> f64 {
    match v {
        Some(x) if x.is_finite() => x.clamp(0.0, 100.0),
        _ => default,
    }
}

/// Skip reasons in the dashboard's order: `outside-measured-range`, `no-power` (GW-year
/// basis only), `no-cost`, `no-token-mix`. Revenue = R x GPU-hours x utilization; TCO =
/// tier x GPU-hours (not scaled by utilization); fee = revenue x lab share; profit may be
/// negative.
pub fn estimate_profit(i: &ProfitInput) -> Result<ProfitEstimate, PricingReason> {
    if i.clamped {
        return Err(PricingReason::new(
            PricingCode::OutsideMeasuredRange,
            "the target is outside the measured frontier",
        ));
    }
    let kw = i.kw_per_gpu.filter(|v| v.is_finite() && *v > 0.0);
    let gpu_hours = match i.basis {
        ProfitBasis::ChipHour => 1.0,
        ProfitBasis::GwYear => match kw.and_then(|k| gpu_hours_per_year(1_000_000.0, k)) {
            Some(g) => g,
            None => {
                return Err(PricingReason::new(
                    PricingCode::NoPower,
                    "no power per GPU for a GW-year basis",
                ))
            }
        },
    };
    let Some(tco) = i.tco_per_gpu_hour.filter(|v| v.is_finite()) else {
        return Err(PricingReason::new(
            PricingCode::NoCost,
            "no TCO for this hardware",
        ));
    };
    let Some(r) = i.revenue_per_gpu_hour.filter(|v| v.is_finite()) else {
        return Err(PricingReason::new(
            PricingCode::NoTokenMix,
            "revenue is not priced (token mix unknown)",
        ));
    };
    let util = pct(i.utilization_pct, DEFAULT_UTILIZATION_PCT) / 100.0;
    let share = pct(i.lab_share_pct, DEFAULT_LAB_SHARE_PCT) / 100.0;
    let revenue = r * gpu_hours * util;
    let tco = tco * gpu_hours;
    let gross_margin = revenue - tco;
    let license_fee = revenue * share;
    Ok(ProfitEstimate {
        gpu_hours,
        revenue,
        tco,
        gross_margin,
        license_fee,
        profit: gross_margin - license_fee,
    })
}

/// Fleet lifecycle (consumer.md b.4): billable input tokens/s =
/// `input x (1 - h x (1 - ratio))`, `h` and `ratio` clamped to [0, 1]; `h` unknown leaves
/// the input unchanged (exactly); input <= 0, NaN or infinite gives 0. `ratio` is the cached price
/// ratio for agentic workloads and 1 otherwise.
pub fn billable_input_rate(input: f64, h: Option<f64>, ratio: f64) -> f64 {
    if !(input > 0.0 && input.is_finite()) {
        return 0.0;
    }
    match h.filter(|v| v.is_finite()) {
        None => input,
        Some(h) => input * (1.0 - clamp01(h) * (1.0 - clamp01(ratio))),
    }
}

/// `(billable input, output)` tokens/s of a total: share unknown bills everything as output;
/// the share is clamped to [0, 1]; a total <= 0, NaN or infinite gives (0, 0).
pub fn split_token_streams(
    total: f64,
    share: Option<f64>,
    h: Option<f64>,
    ratio: f64,
) -> (f64, f64) {
    if !(total > 0.0 && total.is_finite()) {
        return (0.0, 0.0);
    }
    match share.filter(|v| v.is_finite()) {
        None => (0.0, total),
        Some(s) => {
            let s = clamp01(s);
            (billable_input_rate(total * s, h, ratio), total * (1.0 - s))
        }
    }
}

/// Lifecycle availability: `mtbi_days / (mtbi_days + recovery_hours / 24)`; 1 when either
/// is not > 0.
pub fn availability(mtbi_days: f64, recovery_hours: f64) -> f64 {
    if mtbi_days.is_nan() || mtbi_days <= 0.0 || recovery_hours.is_nan() || recovery_hours <= 0.0 {
        return 1.0;
    }
    mtbi_days / (mtbi_days + recovery_hours / 24.0)
}

/// Lifecycle revenue per day: `(billable_in x p_in + out x p_out) / 1e6 x 86400 x availability`.
pub fn lifecycle_revenue_per_day(
    billable_in: f64,
    output: f64,
    price_in: f64,
    price_out: f64,
    availability: f64,
) -> f64 {
    (billable_in * price_in + output * price_out) / 1e6 * 86_400.0 * availability
}
