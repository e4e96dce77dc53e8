//! Pricing's raw exports (CONTRACT section 8). Each takes its arguments as one JSON object
//! named as the public function's parameters (`{"point": ..., "options": ...}`) and answers
//! an envelope (see the module above). The logic is in `crate::pricing`; a bad call (unknown
//! card, malformed input) is `BAD_OPTIONS` with the path of the fault, a point that may not be
//! priced is a `NOT_PRICED` outcome.

use super::reply;
use crate::options::{from_json, CallError, OptionsError, PriceOptions, TrendGroupInput};
use crate::pricing::point::{
    AccountingView, BenchmarkRow, CacheObservation, ObservedPoint, PointFacts, PointInput,
};
use crate::pricing::rate_card::{CardChoice, RateCard};
use crate::pricing::revenue::{self, PowerCost, ProfitEstimate, ProfitInput};
use crate::pricing::{self as core, LegacySurface, PricingCode, PricingPolicy, PricingReason};
use serde::Serialize;
use wasm_bindgen::prelude::*;

/// The options of a pricing call, resolved.
struct Resolved {
    policy: PricingPolicy,
    card: RateCard,
    surface: LegacySurface,
    /// whether `surface` was given
    surface_given: bool,
    x_metric: Option<String>,
}

fn resolve(options: Option<PriceOptions>) -> Result<Resolved, OptionsError> {
    let o = options.unwrap_or_default();
    let choice = match (o.card, o.rate_card) {
        (Some(_), Some(_)) => {
            return Err(OptionsError::new(
                "options.rate_card",
                "give card or rate_card, not both",
            ))
        }
        (Some(n), None) => CardChoice::Name(n),
        (None, Some(c)) => CardChoice::Card(c),
        (None, None) => CardChoice::default(),
    };
    let card = choice
        .resolve()
        .map_err(|e| OptionsError::new("options.card", e.message))?;
    let policy = o.policy.unwrap_or_default();
    if let (Some(s), false) = (o.surface, policy == PricingPolicy::Legacy) {
        return Err(OptionsError::new(
            "options.surface",
            format!(
                "surface {s} applies to the legacy policy only; {} does not depend on it",
                policy.as_str()
            ),
        ));
    }
    Ok(Resolved {
        policy,
        card,
        surface: o.surface.unwrap_or_default(),
        surface_given: o.surface.is_some(),
        x_metric: o.x_metric,
    })
}

/// A point's facts, its x taken from `x_metric` when given for a row.
fn facts_of(p: &PointInput, x_metric: Option<&str>) -> PointFacts {
    let mut f = p.facts();
    if let (Some(key), PointInput::Row(r)) = (x_metric, p) {
        f.x = r.metric(key);
    }
    f
}

/// The facts of every point of a frontier, with the frontier's x metric.
fn frontier_facts(points: &[PointInput], x_metric: Option<&str>) -> Vec<PointFacts> {
    points.iter().map(|p| facts_of(p, x_metric)).collect()
}

struct PointArgs {
    point: PointInput,
    options: Option<PriceOptions>,
}

crate::fields!(PointArgs, deny_unknown: true, empty: PointArgs { point: PointInput::Observed(ObservedPoint::default()), options: None }, required: [point], [point, options]);

struct RowsArgs {
    rows: Vec<BenchmarkRow>,
    options: Option<PriceOptions>,
}

crate::fields!(RowsArgs, deny_unknown: true, empty: RowsArgs { rows: Vec::new(), options: None }, required: [rows], [rows, options]);

struct FrontierArgs {
    points: Vec<PointInput>,
    options: Option<PriceOptions>,
}

crate::fields!(FrontierArgs, deny_unknown: true, empty: FrontierArgs { points: Vec::new(), options: None }, required: [points], [points, options]);

struct InterpolateArgs {
    points: Vec<PointInput>,
    target: f64,
    options: Option<PriceOptions>,
}

crate::fields!(InterpolateArgs, deny_unknown: true, empty: InterpolateArgs { points: Vec::new(), target: 0.0, options: None }, required: [points, target], [points, target, options]);

struct TrendArgs {
    groups: Vec<TrendGroupInput>,
    target: f64,
    extend_to: Option<String>,
    options: Option<PriceOptions>,
}

crate::fields!(TrendArgs, deny_unknown: true, empty: TrendArgs { groups: Vec::new(), target: 0.0, extend_to: None, options: None }, required: [groups, target], [groups, target, extend_to, options]);

struct MoneyArgs {
    revenue_per_gpu_hour: Option<f64>,
    throughput_per_gpu: Option<f64>,
    power: Option<PowerCost>,
}

crate::fields!(MoneyArgs, deny_unknown: true, empty: MoneyArgs { revenue_per_gpu_hour: None, throughput_per_gpu: None, power: None }, required: [], [revenue_per_gpu_hour, throughput_per_gpu, power]);

struct ProfitArgs {
    input: ProfitInput,
}

crate::fields!(ProfitArgs, deny_unknown: true, empty: ProfitArgs { input: ProfitInput::default() }, required: [input], [input]);

struct BillableArgs {
    input: f64,
    hit_rate: Option<f64>,
    ratio: f64,
}

crate::fields!(BillableArgs, deny_unknown: true, empty: BillableArgs { input: 0.0, hit_rate: None, ratio: 0.0 }, required: [input, ratio], [input, hit_rate, ratio]);

struct SplitArgs {
    total: f64,
    share: Option<f64>,
    hit_rate: Option<f64>,
    ratio: f64,
}

crate::fields!(SplitArgs, deny_unknown: true, empty: SplitArgs { total: 0.0, share: None, hit_rate: None, ratio: 0.0 }, required: [total, ratio], [total, share, hit_rate, ratio]);

struct ObservationArgs {
    accounting: AccountingView,
}

crate::fields!(ObservationArgs, deny_unknown: true, empty: ObservationArgs { accounting: <AccountingView as crate::fields::Fields>::empty() }, required: [accounting], [accounting]);

/// The arguments of a call (the root of every path in its errors is the argument's name).
fn args<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, CallError> {
    Ok(from_json("", json)?)
}

#[wasm_bindgen(js_name = rateCards, skip_typescript)]
pub fn rate_cards_raw() -> String {
    reply(Ok(core::shipped_cards()))
}

#[wasm_bindgen(js_name = pricingReasonCodes, skip_typescript)]
pub fn pricing_reason_codes_raw() -> String {
    reply(Ok(PricingCode::ALL))
}

#[wasm_bindgen(js_name = pricePoint, skip_typescript)]
pub fn price_point_raw(json: &str) -> String {
    reply(args::<PointArgs>(json).and_then(|a| {
        let r = resolve(a.options)?;
        let f = a.point.facts();
        Ok(core::price_point_on(&f, &r.card, r.policy, r.surface))
    }))
}

#[wasm_bindgen(js_name = priceRows, skip_typescript)]
pub fn price_rows_raw(json: &str) -> String {
    reply(args::<RowsArgs>(json).and_then(|a| {
        let r = resolve(a.options)?;
        Ok(a.rows
            .iter()
            .map(|row| core::price_point_on(&row.facts(), &r.card, r.policy, r.surface))
            .collect::<Vec<_>>())
    }))
}

#[wasm_bindgen(js_name = priceFrontier, skip_typescript)]
pub fn price_frontier_raw(json: &str) -> String {
    reply(args::<FrontierArgs>(json).and_then(|a| {
        let r = resolve(a.options)?;
        let f = frontier_facts(&a.points, r.x_metric.as_deref());
        Ok(core::price_frontier(&f, &r.card, r.policy, r.surface))
    }))
}

#[wasm_bindgen(js_name = interpolateFrontier, skip_typescript)]
pub fn interpolate_frontier_raw(json: &str) -> String {
    reply(args::<InterpolateArgs>(json).and_then(|a| {
        let r = resolve(a.options)?;
        let f = frontier_facts(&a.points, r.x_metric.as_deref());
        Ok(core::interpolate_frontier(
            &f, a.target, &r.card, r.policy, r.surface,
        ))
    }))
}

#[wasm_bindgen(js_name = trendSeries, skip_typescript)]
pub fn trend_series_raw(json: &str) -> String {
    reply(args::<TrendArgs>(json).and_then(|a| {
        let r = resolve(a.options)?;
        if r.surface_given && r.surface != LegacySurface::Trend {
            return Err(OptionsError::new(
                "options.surface",
                format!(
                    "trendSeries is the trend surface; surface {} is for the other calls",
                    r.surface
                ),
            )
            .into());
        }
        let groups: Vec<core::TrendGroup> = a
            .groups
            .iter()
            .map(|g| core::TrendGroup {
                date: g.date.clone(),
                points: frontier_facts(&g.points, r.x_metric.as_deref()),
            })
            .collect();
        Ok(core::trend_series(
            &groups,
            a.target,
            &r.card,
            r.policy,
            a.extend_to.as_deref(),
        ))
    }))
}

#[wasm_bindgen(js_name = moneyMetrics, skip_typescript)]
pub fn money_metrics_raw(json: &str) -> String {
    reply(args::<MoneyArgs>(json).map(|a| {
        revenue::money_metrics(
            a.revenue_per_gpu_hour,
            a.throughput_per_gpu,
            &a.power.unwrap_or_default(),
        )
    }))
}

/// The profit estimator's result, or its skip reason.
#[derive(Serialize, tsify::Tsify)]
pub struct ProfitResult {
    #[tsify(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate: Option<ProfitEstimate>,
    #[tsify(optional)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip: Option<PricingReason>,
}

#[wasm_bindgen(js_name = estimateProfit, skip_typescript)]
pub fn estimate_profit_raw(json: &str) -> String {
    reply(
        args::<ProfitArgs>(json).map(|a| match revenue::estimate_profit(&a.input) {
            Ok(e) => ProfitResult {
                estimate: Some(e),
                skip: None,
            },
            Err(s) => ProfitResult {
                estimate: None,
                skip: Some(s),
            },
        }),
    )
}

#[wasm_bindgen(js_name = billableInputRate, skip_typescript)]
pub fn billable_input_rate_raw(json: &str) -> String {
    reply(
        args::<BillableArgs>(json)
            .map(|a| revenue::billable_input_rate(a.input, a.hit_rate, a.ratio)),
    )
}

#[wasm_bindgen(js_name = splitTokenStreams, skip_typescript)]
pub fn split_token_streams_raw(json: &str) -> String {
    reply(args::<SplitArgs>(json).map(|a| {
        let (input, output) = revenue::split_token_streams(a.total, a.share, a.hit_rate, a.ratio);
        [input, output]
    }))
}

#[wasm_bindgen(js_name = cacheObservation, skip_typescript)]
pub fn cache_observation_raw(json: &str) -> String {
    reply(args::<ObservationArgs>(json).map(|a| CacheObservation::from(a.accounting)))
}
