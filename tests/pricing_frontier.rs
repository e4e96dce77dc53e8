//! Per-segment frontier eligibility (CONTRACT section 8): a target between two eligible knots
//! is priced; next to an ineligible knot it is not, and the knot is named.

#[path = "pricing_support/mod.rs"]
mod support;

use kvledger::pricing::frontier::{
    interpolate_frontier, monotone_slopes, pareto_front_upper_left, price_frontier, spline,
};
use kvledger::pricing::policy::PricingPolicy;
use kvledger::pricing::{LegacySurface, PointFacts, PricingCode};
use support::*;

const S: PricingPolicy = PricingPolicy::Strict;
const L: PricingPolicy = PricingPolicy::Legacy;
const CALC: LegacySurface = LegacySurface::Calculator;

fn at(ks: &[PointFacts], x: f64, p: PricingPolicy) -> kvledger::pricing::FrontierInterpolation {
    interpolate_frontier(ks, x, &normalized(), p, CALC)
}

/// Knots at x = 10, 20, 30, 40 with falling throughput; `bad` ones are ineligible.
fn four(bad: &[usize]) -> Vec<PointFacts> {
    [
        (10.0, 1000.0, 0.9),
        (20.0, 800.0, 0.8),
        (30.0, 500.0, 0.6),
        (40.0, 300.0, 0.5),
    ]
    .iter()
    .enumerate()
    .map(|(i, &(x, t, h))| knot(x, t, Some(0.85), Some(h), Some(!bad.contains(&i))))
    .collect()
}

#[test]
fn numerics() {
    // Pareto: dominated and equal-x lower points dropped
    let pts = [
        (10.0, 100.0),
        (20.0, 120.0),
        (20.0, 90.0),
        (30.0, 50.0),
        (25.0, 40.0),
        (40.0, 60.0),
    ];
    let f = pareto_front_upper_left(&pts);
    let ys: Vec<f64> = f.iter().map(|&i| pts[i].1).collect();
    assert_eq!(f, vec![1, 5]);
    assert!(ys.windows(2).all(|w| w[0] > w[1]));
    // Steffen: monotone data gives a monotone spline without overshoot
    let xs = [0.0, 1.0, 2.0, 3.0];
    let ys = [0.0, 0.1, 0.9, 1.0];
    let m = monotone_slopes(&xs, &ys);
    assert!(m.iter().all(|v| *v >= 0.0));
    let mut prev = -1.0;
    for i in 0..=300 {
        let v = spline(&xs, &ys, i as f64 / 100.0);
        assert!(v >= prev - 1e-12 && (0.0..=1.0).contains(&v));
        prev = v;
    }
    // flat segment: slope 0 at the shared knot (sign(0) = +1 rule, NaN/-0 -> 0)
    let m = monotone_slopes(&[0.0, 1.0, 2.0], &[1.0, 1.0, 0.0]);
    assert_eq!(m[1], 0.0);
    // no extrapolation
    assert_eq!(spline(&xs, &ys, -5.0), 0.0);
    assert_eq!(spline(&xs, &ys, 9.0), 1.0);
}

#[test]
fn all_eligible_equals_all_or_nothing() {
    let ks = four(&[]);
    for x in [10.0, 12.5, 20.0, 27.0, 33.3, 40.0] {
        let s = at(&ks, x, S);
        let l = at(&ks, x, L);
        assert!(s.priced && l.priced, "{x}: {:?}", s.reasons);
        assert_eq!(s.revenue_per_gpu_hour, l.revenue_per_gpu_hour, "{x}");
        assert_eq!(s.hit_rate, l.hit_rate);
        assert_eq!(s.throughput_per_gpu, l.throughput_per_gpu);
    }
}

#[test]
fn middle_knot_ineligible() {
    let ks = four(&[1]); // x = 20 ineligible
    for x in [15.0, 20.0, 25.0] {
        let r = at(&ks, x, S);
        assert!(!r.priced, "{x}");
        assert!(r.reasons.iter().all(|r| r.knot == Some(1)));
        assert_eq!(r.reasons[0].code, PricingCode::CacheIneligible);
        assert!(r.reasons[0].detail.contains("knot 1"));
    }
    // the segment between the two eligible knots beyond it is priced, from those knots only
    let r = at(&ks, 35.0, S);
    assert!(r.priced);
    let h = r.hit_rate.unwrap();
    assert!((0.5..=0.6).contains(&h), "{h}");
    // legacy ignores eligibility entirely
    assert!(at(&ks, 15.0, L).priced);
    let fp = price_frontier(&ks, &normalized(), S, CALC);
    let seg: Vec<bool> = fp.segments.iter().map(|s| s.priced).collect();
    assert_eq!(seg, vec![false, false, true]);
    assert_eq!(fp.segments[0].reasons[0].knot, Some(1));
}

#[test]
fn end_knot_ineligible() {
    let ks = four(&[3]); // x = 40
    assert!(at(&ks, 15.0, S).priced);
    assert!(at(&ks, 30.0, S).priced);
    let r = at(&ks, 35.0, S);
    assert!(!r.priced);
    assert_eq!(r.reasons[0].knot, Some(3));
    let r = at(&ks, 40.0, S);
    assert!(!r.priced);
    // the first knot, too
    let ks = four(&[0]);
    assert!(!at(&ks, 12.0, S).priced);
    assert!(at(&ks, 20.0, S).priced);
}

#[test]
fn unmeasured_knot_is_named() {
    let mut ks = four(&[]);
    ks[2] = knot(30.0, 500.0, Some(0.85), None, None);
    let r = at(&ks, 25.0, S);
    assert!(!r.priced);
    assert_eq!(r.reasons[0].code, PricingCode::CacheUnmeasured);
    assert_eq!(r.reasons[0].knot, Some(2));
    // legacy: the whole frontier loses its discount
    let l = at(&ks, 15.0, L);
    assert_eq!(l.hit_rate, None);
    assert!(l
        .reasons
        .iter()
        .any(|r| r.code == PricingCode::PartialFrontierNoDiscount));
    // strict prices the eligible segment with its discount
    let s = at(&ks, 15.0, S);
    assert!(s.priced);
    assert!(s.revenue_per_gpu_hour.unwrap() < l.revenue_per_gpu_hour.unwrap());
}

#[test]
fn single_point() {
    let one = [knot(30.0, 500.0, Some(0.8), Some(0.77), Some(true))];
    let r = at(&one, 30.0, S);
    assert!(r.priced);
    assert_eq!(r.hit_rate, Some(0.77));
    assert_close(
        r.revenue_per_gpu_hour.unwrap(),
        0.0036 * 500.0 * (1.0 - 0.9 * 0.77 * 0.8),
    );
    let off = at(&one, 45.0, S);
    assert!(!off.priced);
    assert!(off.clamped && off.clamped_above);
    assert_eq!(off.reasons[0].code, PricingCode::OutsideMeasuredRange);
    // legacy calculator passes the single point through, flagged
    let l = at(&one, 45.0, L);
    assert!(l.priced && l.clamped);
    assert_eq!(l.revenue_per_gpu_hour, r.revenue_per_gpu_hour);
    // a single ineligible point
    let bad = [knot(30.0, 500.0, Some(0.8), Some(0.77), Some(false))];
    let r = at(&bad, 30.0, S);
    assert!(!r.priced);
    assert_eq!(r.reasons[0].knot, Some(0));
}

#[test]
fn outside_range_and_empty() {
    let ks = four(&[]);
    for x in [5.0, 45.0] {
        let r = at(&ks, x, S);
        assert!(!r.priced && r.clamped);
        assert_eq!(r.reasons[0].code, PricingCode::OutsideMeasuredRange);
        assert_eq!(r.throughput_per_gpu, None);
    }
    assert_eq!(at(&[], 10.0, S).reasons[0].code, PricingCode::EmptyFrontier);
}

#[test]
fn dominated_ineligible_point_does_not_matter() {
    let mut ks = four(&[]);
    ks.push(knot(25.0, 100.0, Some(0.85), Some(0.2), Some(false))); // far below the front
    let r = at(&ks, 25.0, S);
    assert!(r.priced);
    let fp = price_frontier(&ks, &normalized(), S, CALC);
    assert_eq!(fp.off_frontier, vec![4]);
    assert!(fp.segments.iter().all(|s| s.priced));
}
