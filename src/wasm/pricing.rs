//! Pricing bindings (CONTRACT section 8). Convert and map errors only: the logic is in
//! `crate::pricing`. A bad call (unknown card, malformed input) throws an `OptionsError`
//! with code `BAD_OPTIONS`; a point that may not be priced is a `NOT_PRICED` outcome.

use super::{options_error, output_error};
use crate::pricing::frontier::{FrontierInterpolation, FrontierPricing};
use crate::pricing::point::{BenchmarkRow, CacheObservation, PointFacts, PointInput};
use crate::pricing::rate_card::{CardChoice, RateCard};
use crate::pricing::revenue::{self, MoneyMetrics, PowerCost, ProfitEstimate, ProfitInput};
use crate::pricing::trend::TrendPoint;
use crate::pricing::{
    self as core, LegacySurface, PriceOutcome, PricingCode, PricingPolicy, PricingReason,
};
use serde::{Deserialize, Serialize};
use tsify::{Ts, Tsify};
use wasm_bindgen::prelude::*;

/// Options of every pricing call. Every field is optional.
#[derive(Tsify, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PriceOptions {
    /// Default `"strict"`.
    #[tsify(optional)]
    #[serde(default)]
    pub policy: Option<PricingPolicy>,
    /// A shipped card's name (default `"normalized"`); see `rateCards()`.
    #[tsify(optional)]
    #[serde(default)]
    pub card: Option<String>,
    /// A card given inline (instead of `card`).
    #[tsify(optional)]
    #[serde(default)]
    pub rate_card: Option<RateCard>,
    /// `legacy` only: the dashboard surface reproduced, `"chart"`, `"calculator"` (default) or
    /// `"trend"`. Given with another policy it is refused (`BAD_OPTIONS`): `strict` and
    /// `theoretical` do not depend on it. `trendSeries` is the trend surface and accepts only
    /// `"trend"`.
    #[tsify(optional)]
    #[serde(default)]
    pub surface: Option<LegacySurface>,
    /// Frontier calls on rows: the metric key used as x (default `p90_intvty` for agentic
    /// rows, `median_intvty` otherwise).
    #[tsify(optional)]
    #[serde(default)]
    pub x_metric: Option<String>,
}

struct Resolved {
    policy: PricingPolicy,
    card: RateCard,
    surface: LegacySurface,
    /// whether `surface` was given
    surface_given: bool,
    x_metric: Option<String>,
}

fn resolve(options: Option<Ts<PriceOptions>>) -> Result<Resolved, JsValue> {
    let o = match options {
        Some(o) => o
            .to_rust()
            .map_err(|e| options_error(format!("bad options: {e}")))?,
        None => PriceOptions::default(),
    };
    let choice = match (o.card, o.rate_card) {
        (Some(_), Some(_)) => return Err(options_error("give card or rateCard, not both")),
        (Some(n), None) => CardChoice::Name(n),
        (None, Some(c)) => CardChoice::Card(c),
        (None, None) => CardChoice::default(),
    };
    let card = choice.resolve().map_err(|e| options_error(e.message))?;
    let policy = o.policy.unwrap_or_default();
    if let (Some(s), false) = (o.surface, policy == PricingPolicy::Legacy) {
        return Err(options_error(format!(
            "surface {s} applies to the legacy policy only; {} does not depend on it",
            policy.as_str()
        )));
    }
    Ok(Resolved {
        policy,
        card,
        surface: o.surface.unwrap_or_default(),
        surface_given: o.surface.is_some(),
        x_metric: o.x_metric,
    })
}

fn facts(points: Vec<Ts<PointInput>>, x_metric: Option<&str>) -> Result<Vec<PointFacts>, JsValue> {
    points
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let p = p
                .to_rust()
                .map_err(|e| options_error(format!("points[{i}]: {e}")))?;
            let mut f = p.facts();
            if let (Some(key), PointInput::Row(r)) = (x_metric, &p) {
                f.x = r.metric(key);
            }
            Ok(f)
        })
        .collect()
}

/// The shipped rate cards (normalized first), dated.
#[wasm_bindgen(js_name = rateCards)]
pub fn rate_cards() -> Result<Vec<Ts<RateCard>>, JsValue> {
    core::shipped_cards()
        .iter()
        .map(|c| c.into_ts().map_err(output_error))
        .collect()
}

/// Every pricing reason code, in a stable order.
#[wasm_bindgen(js_name = pricingReasonCodes)]
pub fn pricing_reason_codes() -> Vec<Ts<PricingCode>> {
    PricingCode::ALL
        .iter()
        .filter_map(|c| c.into_ts().ok())
        .collect()
}

/// Price one point: `{ row: BenchmarkRow }` or `{ observed: ObservedPoint }`.
#[wasm_bindgen(js_name = pricePoint)]
pub fn price_point_js(
    point: Ts<PointInput>,
    options: Option<Ts<PriceOptions>>,
) -> Result<Ts<PriceOutcome>, JsValue> {
    let r = resolve(options)?;
    let p = point
        .to_rust()
        .map_err(|e| options_error(format!("bad point: {e}")))?;
    core::price_point_on(&p.facts(), &r.card, r.policy, r.surface)
        .into_ts()
        .map_err(output_error)
}

/// Price dashboard rows, one outcome per row.
#[wasm_bindgen(js_name = priceRows)]
pub fn price_rows_js(
    rows: Vec<Ts<BenchmarkRow>>,
    options: Option<Ts<PriceOptions>>,
) -> Result<Vec<Ts<PriceOutcome>>, JsValue> {
    let r = resolve(options)?;
    rows.into_iter()
        .enumerate()
        .map(|(i, row)| {
            let row = row
                .to_rust()
                .map_err(|e| options_error(format!("rows[{i}]: {e}")))?;
            core::price_point_on(&row.facts(), &r.card, r.policy, r.surface)
                .into_ts()
                .map_err(output_error)
        })
        .collect()
}

/// Price every point of a frontier and tell which segments may be priced.
#[wasm_bindgen(js_name = priceFrontier)]
pub fn price_frontier_js(
    points: Vec<Ts<PointInput>>,
    options: Option<Ts<PriceOptions>>,
) -> Result<Ts<FrontierPricing>, JsValue> {
    let r = resolve(options)?;
    let f = facts(points, r.x_metric.as_deref())?;
    core::price_frontier(&f, &r.card, r.policy, r.surface)
        .into_ts()
        .map_err(output_error)
}

/// Interpolate along the frontier at `target` (interactivity) and price, with per-segment
/// eligibility.
#[wasm_bindgen(js_name = interpolateFrontier)]
pub fn interpolate_frontier_js(
    points: Vec<Ts<PointInput>>,
    target: f64,
    options: Option<Ts<PriceOptions>>,
) -> Result<Ts<FrontierInterpolation>, JsValue> {
    let r = resolve(options)?;
    let f = facts(points, r.x_metric.as_deref())?;
    core::interpolate_frontier(&f, target, &r.card, r.policy, r.surface)
        .into_ts()
        .map_err(output_error)
}

/// One date's points of a trend line.
#[derive(Tsify, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrendGroupInput {
    pub date: String,
    pub points: Vec<PointInput>,
}

/// Historical-trend pricing: one value per date (no extrapolation), plus a synthetic copy
/// of the last value at `extendTo` when later. Under `legacy` this is the trend surface.
#[wasm_bindgen(js_name = trendSeries)]
pub fn trend_series_js(
    groups: Vec<Ts<TrendGroupInput>>,
    target: f64,
    extend_to: Option<String>,
    options: Option<Ts<PriceOptions>>,
) -> Result<Vec<Ts<TrendPoint>>, JsValue> {
    let r = resolve(options)?;
    if r.surface_given && r.surface != LegacySurface::Trend {
        return Err(options_error(format!(
            "trendSeries is the trend surface; surface {} is for the other calls",
            r.surface
        )));
    }
    let mut gs = Vec::new();
    for (i, g) in groups.into_iter().enumerate() {
        let g = g
            .to_rust()
            .map_err(|e| options_error(format!("groups[{i}]: {e}")))?;
        let pts = g
            .points
            .iter()
            .map(|p| {
                let mut f = p.facts();
                if let (Some(key), PointInput::Row(row)) = (r.x_metric.as_deref(), p) {
                    f.x = row.metric(key);
                }
                f
            })
            .collect();
        gs.push(core::TrendGroup {
            date: g.date,
            points: pts,
        });
    }
    core::trend_series(&gs, target, &r.card, r.policy, extend_to.as_deref())
        .iter()
        .map(|t| t.into_ts().map_err(output_error))
        .collect()
}

/// Money metrics of a revenue ($/GPU-hour; absent = not priced: every field absent).
#[wasm_bindgen(js_name = moneyMetrics)]
pub fn money_metrics_js(
    revenue_per_gpu_hour: Option<f64>,
    throughput_per_gpu: Option<f64>,
    power: Option<Ts<PowerCost>>,
) -> Result<Ts<MoneyMetrics>, JsValue> {
    let pc = match power {
        Some(p) => p
            .to_rust()
            .map_err(|e| options_error(format!("bad power: {e}")))?,
        None => PowerCost::default(),
    };
    revenue::money_metrics(revenue_per_gpu_hour, throughput_per_gpu, &pc)
        .into_ts()
        .map_err(output_error)
}

/// The profit estimator's result, or its skip reason.
#[derive(Tsify, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfitResult {
    #[tsify(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate: Option<ProfitEstimate>,
    #[tsify(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip: Option<PricingReason>,
}

/// Profit estimator (skip reasons `outside-measured-range`, `no-power`, `no-cost`, `no-token-mix`).
#[wasm_bindgen(js_name = estimateProfit)]
pub fn estimate_profit_js(input: Ts<ProfitInput>) -> Result<Ts<ProfitResult>, JsValue> {
    let i = input
        .to_rust()
        .map_err(|e| options_error(format!("bad input: {e}")))?;
    let r = match revenue::estimate_profit(&i) {
        Ok(e) => ProfitResult {
            estimate: Some(e),
            skip: None,
        },
        Err(s) => ProfitResult {
            estimate: None,
            skip: Some(s),
        },
    };
    r.into_ts().map_err(output_error)
}

/// Fleet lifecycle: billable input tokens/s (`h` absent = input unchanged).
#[wasm_bindgen(js_name = billableInputRate)]
pub fn billable_input_rate_js(input: f64, hit_rate: Option<f64>, ratio: f64) -> f64 {
    revenue::billable_input_rate(input, hit_rate, ratio)
}

/// Fleet lifecycle: `[billableInput, output]` tokens/s of a total.
#[wasm_bindgen(js_name = splitTokenStreams)]
pub fn split_token_streams_js(
    total: f64,
    share: Option<f64>,
    hit_rate: Option<f64>,
    ratio: f64,
) -> Vec<f64> {
    let (i, o) = revenue::split_token_streams(total, share, hit_rate, ratio);
    vec![i, o]
}

/// What pricing reads of an `accountRun` result (the verdict, tier rates, theoretical rate
/// and token totals), for `pricePoint({ observed: { cache } })`.
#[wasm_bindgen(js_name = cacheObservation)]
pub fn cache_observation_js(
    #[wasm_bindgen(unchecked_param_type = "Accounting")] accounting: JsValue,
) -> Result<Ts<CacheObservation>, JsValue> {
    let view: crate::pricing::point::AccountingView = serde_wasm_bindgen::from_value(accounting)
        .map_err(|e| options_error(format!("not an accounting result: {e}")))?;
    CacheObservation::from(view).into_ts().map_err(output_error)
}
