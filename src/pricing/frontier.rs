//! Frontier numerics (the dashboard's `calculator/interpolation.ts`, consumer.md c.1) and
//! frontier pricing with per-segment eligibility (CONTRACT section 8).
//!
//! - upper-left Pareto front on (interactivity x, throughput y);
//! - Steffen monotone cubic slopes (d3 `curveMonotoneX`), cubic Hermite evaluation;
//! - no extrapolation: outside the knots a spline returns the end value, and every
//!   interpolated metric is clamped to the min/max of its knots.

use super::point::PointFacts;
use super::policy::{price_point_on, HitRateSource, PricingPolicy};
use super::rate_card::RateCard;
use super::revenue::revenue_per_gpu_hour;
use super::share::ShareSource;
use super::surface::LegacySurface;
use super::{PriceOutcome, PriceStatus, PricingCode, PricingReason};
use serde::Serialize;

/// Upper-left Pareto front of `(x, y)` points: indices in increasing x with strictly
/// decreasing y. Sort by x (ties: higher y first), keep the higher y of equal x, pop while the
/// new y >= the last kept y. Points with a non-finite coordinate are skipped.
pub fn pareto_front_upper_left(points: &[(f64, f64)]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..points.len())
        .filter(|&i| points[i].0.is_finite() && points[i].1.is_finite())
        .collect();
    crate::sort::sort_by(&mut idx, |&a, &b| {
        let (pa, pb) = (points[a], points[b]);
        pa.0.total_cmp(&pb.0)
            .then(pb.1.total_cmp(&pa.1))
            .then(a.cmp(&b))
    });
    let mut kept: Vec<usize> = Vec::new();
    let mut last_x: Option<f64> = None;
    for i in idx {
        let (x, y) = points[i];
        if last_x == Some(x) {
            continue;
        }
        last_x = Some(x);
        while let Some(&k) = kept.last() {
            if y >= points[k].1 {
                kept.pop();
            } else {
                break;
            }
        }
        kept.push(i);
    }
    kept
}

fn sign(v: f64) -> f64 {
    if v < 0.0 {
        -1.0
    } else {
        1.0
    }
}

/// Which slopes a frontier uses: the two differ only on a two-knot frontier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Slopes {
    /// kvledger's rule for `strict` / `theoretical`: two knots give the straight secant (what
    /// d3 `curveMonotoneX` draws on screen).
    Secant,
    /// The dashboard's `monotoneSlopes` (calculator and trend, consumer.md c.1): the end
    /// formulas run in order over a zeroed array, so two knots give 1.5 s and 0.75 s, a cubic.
    Dashboard,
}

/// Steffen monotone slopes at each knot (`xs` strictly increasing). Two knots: the secant
/// (a straight line, as d3 draws it); one knot: 0.
pub fn monotone_slopes(xs: &[f64], ys: &[f64]) -> Vec<f64> {
    slopes(xs, ys, Slopes::Secant)
}

/// The dashboard's `monotoneSlopes` exactly: with two knots
/// m0 = (3 s - 0) / 2 = 1.5 s, then m1 = (3 s - m0) / 2 = 0.75 s.
pub fn dashboard_monotone_slopes(xs: &[f64], ys: &[f64]) -> Vec<f64> {
    slopes(xs, ys, Slopes::Dashboard)
}

fn slopes(xs: &[f64], ys: &[f64], rule: Slopes) -> Vec<f64> {
    let n = xs.len();
    if n < 2 {
        return vec![0.0; n];
    }
    let h: Vec<f64> = (0..n - 1).map(|i| xs[i + 1] - xs[i]).collect();
    let s: Vec<f64> = (0..n - 1)
        .map(|i| {
            if h[i] == 0.0 {
                0.0
            } else {
                (ys[i + 1] - ys[i]) / h[i]
            }
        })
        .collect();
    if n == 2 && rule == Slopes::Secant {
        return vec![s[0], s[0]];
    }
    let mut m = vec![0.0; n];
    for i in 1..n - 1 {
        let p = (s[i - 1] * h[i] + s[i] * h[i - 1]) / (h[i - 1] + h[i]);
        let v = (sign(s[i - 1]) + sign(s[i])) * s[i - 1].abs().min(s[i].abs()).min(0.5 * p.abs());
        m[i] = if v.is_nan() || v == 0.0 { 0.0 } else { v };
    }
    // in this order: with two knots m[1] is still 0 when m[0] is computed (the dashboard's
    // numerics, kept on purpose)
    m[0] = if h[0] != 0.0 {
        (3.0 * s[0] - m[1]) / 2.0
    } else {
        m[1]
    };
    m[n - 1] = (3.0 * s[n - 2] - m[n - 2]) / 2.0;
    m
}

/// Cubic Hermite at `x`; outside `[xs[0], xs[n-1]]` the end value.
pub fn hermite(xs: &[f64], ys: &[f64], ms: &[f64], x: f64) -> f64 {
    let n = xs.len();
    if n == 0 {
        return f64::NAN;
    }
    if n == 1 || x <= xs[0] {
        return ys[0];
    }
    if x >= xs[n - 1] {
        return ys[n - 1];
    }
    // last knot with xs[k] <= x
    let k = xs.partition_point(|&v| v <= x) - 1;
    let k = k.min(n - 2);
    let h = xs[k + 1] - xs[k];
    if h == 0.0 {
        return ys[k];
    }
    let t = (x - xs[k]) / h;
    let (t2, t3) = (t * t, t * t * t);
    let h00 = 2.0 * t3 - 3.0 * t2 + 1.0;
    let h10 = t3 - 2.0 * t2 + t;
    let h01 = -2.0 * t3 + 3.0 * t2;
    let h11 = t3 - t2;
    h00 * ys[k] + h10 * h * ms[k] + h01 * ys[k + 1] + h11 * h * ms[k + 1]
}

/// Monotone cubic through the knots at `x`, clamped to the min/max of `ys` (two knots: the
/// secant).
pub fn spline(xs: &[f64], ys: &[f64], x: f64) -> f64 {
    spline_with(xs, ys, x, Slopes::Secant)
}

/// Monotone cubic through the knots at `x` with the given slopes, clamped to the min/max of
/// `ys`.
pub fn spline_with(xs: &[f64], ys: &[f64], x: f64, rule: Slopes) -> f64 {
    let ms = slopes(xs, ys, rule);
    let v = hermite(xs, ys, &ms, x);
    let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if v.is_nan() {
        return lo;
    }
    v.clamp(lo, hi)
}

/// A frontier knot (or a nearest point) named in a result.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct FrontierKnot {
    /// Index in the caller's input list.
    pub index: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub label: Option<String>,
    pub x: f64,
    pub throughput_per_gpu: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub concurrency: Option<f64>,
    pub priced: bool,
}

/// The interpolated value at one target.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct FrontierInterpolation {
    pub status: PriceStatus,
    pub priced: bool,
    pub policy: PricingPolicy,
    /// The dashboard surface reproduced (present only under `legacy`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub surface: Option<LegacySurface>,
    pub card: String,
    pub target: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub revenue_per_gpu_hour: Option<f64>,
    /// Interpolated throughput per GPU (present whenever the target is inside the knots,
    /// or clamped to them on the `legacy` calculator).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub throughput_per_gpu: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub hit_rate: Option<f64>,
    pub hit_rate_source: HitRateSource,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub input_share: Option<f64>,
    pub share_source: ShareSource,
    /// Interpolated concurrency, rounded (when every knot has one).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub concurrency: Option<f64>,
    pub clamped: bool,
    pub clamped_above: bool,
    pub clamped_below: bool,
    /// The knot(s) the target falls on or between.
    pub segment: Vec<FrontierKnot>,
    /// The frontier knots (Pareto front, increasing x).
    pub frontier: Vec<FrontierKnot>,
    pub reasons: Vec<PricingReason>,
}

/// One segment between consecutive frontier knots.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct FrontierSegment {
    pub from: FrontierKnot,
    pub to: FrontierKnot,
    /// A target strictly inside this segment is priced.
    pub priced: bool,
    pub reasons: Vec<PricingReason>,
}

/// Every point priced, the frontier, and which segments may be priced.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub struct FrontierPricing {
    pub policy: PricingPolicy,
    /// The dashboard surface reproduced (present only under `legacy`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub surface: Option<LegacySurface>,
    pub card: String,
    /// One outcome per input point, in input order.
    pub points: Vec<PriceOutcome>,
    pub frontier: Vec<FrontierKnot>,
    pub segments: Vec<FrontierSegment>,
    /// Input indices below the front (dominated) or without x / throughput.
    pub off_frontier: Vec<u32>,
}

struct Front {
    /// the slopes every spline of this front uses
    slopes: Slopes,
    /// input indices of the knots, increasing x
    idx: Vec<usize>,
    xs: Vec<f64>,
    ts: Vec<f64>,
    knots: Vec<FrontierKnot>,
    outcomes: Vec<PriceOutcome>,
}

fn build_front(
    points: &[PointFacts],
    card: &RateCard,
    policy: PricingPolicy,
    surface: LegacySurface,
) -> Front {
    let outcomes: Vec<PriceOutcome> = points
        .iter()
        .map(|p| price_point_on(p, card, policy, surface))
        .collect();
    let xy: Vec<(f64, f64)> = points
        .iter()
        .map(|p| {
            (
                p.x.unwrap_or(f64::NAN),
                p.throughput.filter(|t| *t >= 0.0).unwrap_or(f64::NAN),
            )
        })
        .collect();
    let idx = pareto_front_upper_left(&xy);
    let knots = idx
        .iter()
        .map(|&i| FrontierKnot {
            index: i as u32,
            label: points[i].label.clone(),
            x: xy[i].0,
            throughput_per_gpu: xy[i].1,
            concurrency: points[i].concurrency,
            priced: outcomes[i].priced,
        })
        .collect();
    Front {
        slopes: if policy == PricingPolicy::Legacy {
            Slopes::Dashboard
        } else {
            Slopes::Secant
        },
        xs: idx.iter().map(|&i| xy[i].0).collect(),
        ts: idx.iter().map(|&i| xy[i].1).collect(),
        idx,
        knots,
        outcomes,
    }
}

fn knot_refusals(front: &Front, k: usize) -> Vec<PricingReason> {
    let i = front.idx[k];
    let o = &front.outcomes[i];
    let refusals: Vec<PricingReason> = o
        .reasons
        .iter()
        .filter(|r| r.code.refuses())
        .cloned()
        .map(|mut r| {
            r.knot = Some(i as u32);
            r.detail = format!("knot {i} (x = {}): {}", front.xs[k], r.detail);
            r
        })
        .collect();
    refusals
}

fn chart_refusal() -> PricingReason {
    PricingReason::new(
        PricingCode::SurfaceNotInterpolated,
        "the chart prices its points only: it computes no value between them",
    )
}

fn legacy_chart(policy: PricingPolicy, surface: LegacySurface) -> bool {
    policy == PricingPolicy::Legacy && !surface.interpolates()
}

/// Price every point and tell which frontier segments may be priced: a segment is priced
/// when both of its knots are (never on the `legacy` chart, which does not interpolate).
pub fn price_frontier(
    points: &[PointFacts],
    card: &RateCard,
    policy: PricingPolicy,
    surface: LegacySurface,
) -> FrontierPricing {
    let front = build_front(points, card, policy, surface);
    let segments = (0..front.idx.len().saturating_sub(1))
        .map(|k| {
            let mut reasons = knot_refusals(&front, k);
            reasons.extend(knot_refusals(&front, k + 1));
            if legacy_chart(policy, surface) {
                reasons.push(chart_refusal());
            }
            FrontierSegment {
                from: front.knots[k].clone(),
                to: front.knots[k + 1].clone(),
                priced: reasons.is_empty(),
                reasons,
            }
        })
        .collect();
    let on: std::collections::BTreeSet<usize> = crate::sort::set_of(front.idx.iter().copied());
    FrontierPricing {
        policy,
        surface: (policy == PricingPolicy::Legacy).then_some(surface),
        card: card.name.clone(),
        off_frontier: (0..points.len())
            .filter(|i| !on.contains(i))
            .map(|i| i as u32)
            .collect(),
        frontier: front.knots,
        segments,
        points: front.outcomes,
    }
}

/// Spline of an optional per-knot metric over knots `ks` (indices into the front).
fn spline_over(front: &Front, ks: &[usize], vals: &[Option<f64>], x: f64) -> Option<f64> {
    let xs: Vec<f64> = ks.iter().map(|&k| front.xs[k]).collect();
    let ys: Option<Vec<f64>> = ks.iter().map(|&k| vals[k]).collect();
    let ys = ys?;
    if ys.is_empty() {
        return None;
    }
    Some(spline_with(&xs, &ys, x, front.slopes))
}

/// Interpolate and price at `target` (x = interactivity).
///
/// The throughput is splined over the whole front. The hit rate and input share:
/// - `legacy` (calculator, trend): all-or-nothing over the front (every knot has one, or none
///   is used: no discount / unknown share); on the trend any unpriceable knot leaves no
///   value; the `legacy` chart computes nothing between points (`surface-not-interpolated`);
/// - `strict` / `theoretical`: per segment. The knots the target falls on or between must
///   be priced, else the result is not priced and names them; the rate and share are then
///   splined over the maximal run of consecutive priced knots around the target, so an
///   all-priced frontier gives exactly the all-or-nothing result. Points priced with no
///   discount (no cache telemetry by design) count as rate 0 when the run mixes them with
///   measured ones.
///
/// `surface` matters only under `legacy`.
pub fn interpolate_frontier(
    points: &[PointFacts],
    target: f64,
    card: &RateCard,
    policy: PricingPolicy,
    surface: LegacySurface,
) -> FrontierInterpolation {
    let front = build_front(points, card, policy, surface);
    let mut out = FrontierInterpolation {
        status: PriceStatus::NotPriced,
        priced: false,
        policy,
        surface: (policy == PricingPolicy::Legacy).then_some(surface),
        card: card.name.clone(),
        target,
        revenue_per_gpu_hour: None,
        throughput_per_gpu: None,
        hit_rate: None,
        hit_rate_source: HitRateSource::None,
        input_share: None,
        share_source: ShareSource::Unknown,
        concurrency: None,
        clamped: false,
        clamped_above: false,
        clamped_below: false,
        segment: Vec::new(),
        frontier: front.knots.clone(),
        reasons: Vec::new(),
    };
    if legacy_chart(policy, surface) {
        out.reasons.push(chart_refusal());
        return out;
    }
    let Some((x, seg)) = locate(&front, target, policy, surface, &mut out) else {
        return out;
    };
    let n = front.idx.len();
    let all: Vec<usize> = (0..n).collect();
    let t = spline_with(&front.xs, &front.ts, x, front.slopes);
    out.throughput_per_gpu = Some(t);
    let concs: Vec<Option<f64>> = front.knots.iter().map(|k| k.concurrency).collect();
    out.concurrency = spline_over(&front, &all, &concs, x).map(f64::round);

    let rates = if policy == PricingPolicy::Legacy {
        legacy_rates(&front, x, surface, &mut out.reasons)
    } else {
        segment_rates(&front, &seg, x, &mut out.reasons)
    };
    let Some((h, s)) = rates else {
        return out;
    };
    out.hit_rate = h;
    out.hit_rate_source = if h.is_some() {
        HitRateSource::Interpolated
    } else {
        HitRateSource::None
    };
    out.input_share = s;
    out.share_source = if s.is_some() {
        ShareSource::Interpolated
    } else {
        ShareSource::Unknown
    };
    match revenue_per_gpu_hour(t, s, h, &card.prices()) {
        Some(r) => {
            out.revenue_per_gpu_hour = Some(r);
            out.priced = true;
            out.status = PriceStatus::Priced;
        }
        None => out
            .reasons
            .push(super::policy::not_priced_reason(t, s, &card.prices())),
    }
    out
}

/// Where the target falls: the x to evaluate at and the knot(s) it is on or between, with the
/// clamping flags set; `None` (with the refusal pushed) when nothing is computed.
///
/// A single knot matches within `single_knot_tolerance` (1e-6 for `strict`, `theoretical` and
/// the trend; exact for the calculator). Outside the knots only the `legacy` calculator
/// computes a value, at the clamped target.
fn locate(
    front: &Front,
    target: f64,
    policy: PricingPolicy,
    surface: LegacySurface,
    out: &mut FrontierInterpolation,
) -> Option<(f64, Vec<usize>)> {
    let n = front.idx.len();
    if n == 0 {
        out.reasons.push(PricingReason::new(
            PricingCode::EmptyFrontier,
            "no point has both an interactivity and a throughput",
        ));
        return None;
    }
    if !target.is_finite() {
        out.reasons.push(PricingReason::new(
            PricingCode::OutsideMeasuredRange,
            format!("target {target} is not a finite number"),
        ));
        return None;
    }
    let legacy = policy == PricingPolicy::Legacy;
    let tolerance = if legacy {
        surface.single_knot_tolerance()
    } else {
        1e-6
    };
    let (lo, hi) = (front.xs[0], front.xs[n - 1]);
    let single_hit = n == 1 && (target - lo).abs() <= tolerance;
    let below = !single_hit && target < lo;
    let above = !single_hit && target > hi;
    let outside = below || above || (n == 1 && !single_hit);
    out.clamped = outside;
    out.clamped_below = below;
    out.clamped_above = above;
    let x = target.clamp(lo, hi);
    let seg: Vec<usize> = if let Some(k) = front.xs.iter().position(|&v| v == x) {
        vec![k]
    } else if n == 1 {
        vec![0]
    } else {
        let k = front.xs.partition_point(|&v| v <= x) - 1;
        vec![k, k + 1]
    };
    out.segment = seg.iter().map(|&k| front.knots[k].clone()).collect();
    if outside {
        if !(legacy && surface.clamps_target()) {
            out.reasons.push(PricingReason::new(
                PricingCode::OutsideMeasuredRange,
                format!("target {target} is outside the measured range [{lo}, {hi}]"),
            ));
            return None;
        }
        out.reasons.push(PricingReason::new(
            PricingCode::TargetClamped,
            format!("target {target} clamped to {x}"),
        ));
    }
    Some((x, seg))
}

fn knot_values(front: &Front, f: impl Fn(&PriceOutcome) -> Option<f64>) -> Vec<Option<f64>> {
    front.idx.iter().map(|&i| f(&front.outcomes[i])).collect()
}

/// `legacy` calculator / trend: h and s all-or-nothing over the front (consumer.md c.2, c.3);
/// on the trend any unpriceable knot leaves no value. `None`: not priced (reasons pushed).
fn legacy_rates(
    front: &Front,
    x: f64,
    surface: LegacySurface,
    reasons: &mut Vec<PricingReason>,
) -> Option<(Option<f64>, Option<f64>)> {
    let n = front.idx.len();
    if surface == LegacySurface::Trend {
        let refusals: Vec<PricingReason> = (0..n).flat_map(|k| knot_refusals(front, k)).collect();
        if !refusals.is_empty() {
            reasons.extend(refusals);
            return None;
        }
    }
    let all: Vec<usize> = (0..n).collect();
    let knot_h = knot_values(front, |o| o.hit_rate);
    let knot_s = knot_values(front, |o| o.input_share);
    let some_h = knot_h.iter().filter(|v| v.is_some()).count();
    let h = spline_over(front, &all, &knot_h, x);
    if h.is_none() && some_h > 0 {
        reasons.push(PricingReason::new(
            PricingCode::PartialFrontierNoDiscount,
            format!("{some_h} of {n} frontier points have a hit rate: no discount"),
        ));
    }
    let some_s = knot_s.iter().filter(|v| v.is_some()).count();
    let s = spline_over(front, &all, &knot_s, x);
    if s.is_none() && some_s > 0 {
        reasons.push(PricingReason::new(
            PricingCode::PartialFrontierNoShare,
            format!("{some_s} of {n} frontier points have an input share: share unknown"),
        ));
    }
    Some((h, s))
}

/// `strict` / `theoretical`: the knots of the target's segment must be priced; h and s are
/// splined over the maximal run of priced knots around it. `None`: not priced.
fn segment_rates(
    front: &Front,
    seg: &[usize],
    x: f64,
    reasons: &mut Vec<PricingReason>,
) -> Option<(Option<f64>, Option<f64>)> {
    let refusals: Vec<PricingReason> = seg.iter().flat_map(|&k| knot_refusals(front, k)).collect();
    if !refusals.is_empty() {
        reasons.extend(refusals);
        return None;
    }
    let n = front.idx.len();
    let priced = |k: usize| front.outcomes[front.idx[k]].priced;
    let mut a = *seg.first()?;
    while a > 0 && priced(a - 1) {
        a -= 1;
    }
    let mut b = *seg.last().unwrap_or(&a);
    while b + 1 < n && priced(b + 1) {
        b += 1;
    }
    let run: Vec<usize> = (a..=b).collect();
    let knot_h = knot_values(front, |o| o.hit_rate);
    let knot_s = knot_values(front, |o| o.input_share);
    let h = if run.iter().any(|&k| knot_h[k].is_some()) {
        let filled: Vec<Option<f64>> = knot_h.iter().map(|v| Some(v.unwrap_or(0.0))).collect();
        spline_over(front, &run, &filled, x)
    } else {
        None
    };
    Some((h, spline_over(front, &run, &knot_s, x)))
}
