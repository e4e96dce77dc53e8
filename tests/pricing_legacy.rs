//! `legacy` reproduces every number of research/consumer.md section (f) about hit-rate
//! selection, revenue, share, interpolation, lifecycle and profit, each on the surface whose
//! app test it comes from: `token-revenue.test.ts` on the chart, `pricingCacheHitRate` and
//! `interpolateForGPU` on the calculator, `useInterpolatedTrendData` on the trend.

#[path = "pricing_support/mod.rs"]
mod support;

use kvledger::pricing::frontier::interpolate_frontier;
use kvledger::pricing::point::{CacheObservation, ObservedPoint, Workload};
use kvledger::pricing::policy::{
    legacy_measured, price_point, price_point_on, select, select_on, HitRateSource, PricingPolicy,
    LEGACY_FALLBACK_HARDWARE,
};
use kvledger::pricing::revenue::{
    billable_input_rate, estimate_profit, gpu_hours_per_year, money_metrics, revenue_per_gpu_hour,
    split_token_streams, MoneyMetrics, PowerCost, ProfitBasis, ProfitInput, B200_KW_PER_GPU,
    B200_TCO_HYPERSCALER,
};
use kvledger::pricing::share::input_token_share;
use kvledger::pricing::trend::interpolate_trend;
use kvledger::pricing::{LegacySurface, PricingCode, RateCard};
use serde_json::json;
use support::*;

const L: PricingPolicy = PricingPolicy::Legacy;

/// `token-revenue.test.ts` prices chart points.
fn chart(f: &kvledger::pricing::PointFacts, c: &RateCard) -> kvledger::pricing::PriceOutcome {
    price_point_on(f, c, L, LegacySurface::Chart)
}

fn h_of(metrics: serde_json::Value) -> Option<f64> {
    let f = agentic(None, metrics);
    let a = legacy_measured(&f);
    // measuredCacheHitRate is the same on every surface when there is no fallback to apply
    for s in LegacySurface::ALL {
        assert_eq!(select_on(&f, L, s).hit_rate, a);
    }
    a
}

#[test]
fn f1_measured_hit_rate_selection() {
    let cases: Vec<(serde_json::Value, Option<f64>)> = vec![
        (
            json!({"server_gpu_cache_hit_rate": 0.8, "server_external_cache_hit_rate": 0.06, "server_cpu_cache_hit_rate": 0.07}),
            Some(0.86),
        ),
        (
            json!({"server_gpu_cache_hit_rate": 0.77, "server_cpu_cache_hit_rate": 0.055}),
            Some(0.825),
        ),
        (
            json!({"server_gpu_cache_hit_rate": 0.4, "server_external_cache_hit_rate": 0, "server_cpu_cache_hit_rate": 0.5}),
            Some(0.4),
        ),
        (json!({}), None),
        (json!({"server_gpu_cache_hit_rate": 1.2}), Some(1.0)),
        (json!({"server_gpu_cache_hit_rate": -0.2}), Some(0.0)),
        (
            json!({"server_gpu_cache_hit_rate": 0.66, "server_external_cache_hit_rate": 0.25}),
            Some(0.91),
        ),
        (
            json!({"server_gpu_cache_hit_rate": 0.819, "server_external_cache_hit_rate": 0.06, "server_cpu_cache_hit_rate": 0.067}),
            Some(0.879),
        ),
        (
            json!({"server_gpu_cache_hit_rate": 0.771, "server_cpu_cache_hit_rate": 0.055}),
            Some(0.826),
        ),
        (json!({"server_cpu_cache_hit_rate": 0.5}), Some(0.5)),
        (
            json!({"server_external_cache_hit_rate": 0, "server_cpu_cache_hit_rate": 0.5}),
            Some(0.0),
        ),
        (json!({"server_gpu_cache_hit_rate": 0.4}), Some(0.4)),
        (json!({"server_external_cache_hit_rate": 0.3}), Some(0.3)),
        (json!({"server_gpu_cache_hit_rate": 1.185}), Some(1.0)),
    ];
    for (m, want) in cases {
        let got = h_of(m.clone());
        match (got, want) {
            (Some(g), Some(w)) => assert!(close(g, w), "{m}: {g} != {w}"),
            (g, w) => assert_eq!(g, w, "{m}"),
        }
    }
    // a fixed-sequence row: no rate at all (absent, not 0)
    let fixed = row(json!({"isl": 1024, "osl": 1024, "metrics": {"tput_per_gpu": 100.0}})).facts();
    let sel = select(&fixed, L);
    assert_eq!(sel.hit_rate, None);
    assert_eq!(sel.hit_source, HitRateSource::None);
    assert!(sel
        .reasons
        .iter()
        .any(|r| r.code == PricingCode::NoCacheTelemetry));
}

#[test]
fn f2_gb300_only_theoretical_fallback() {
    let h = |hw: Option<&str>, m| select(&agentic(hw, m), L).hit_rate;
    assert_close(
        h(Some("gb300"), json!({"server_gpu_cache_hit_rate": 0.8, "server_external_cache_hit_rate": 0.06, "theoretical_cache_hit_rate": 0.97})).unwrap(),
        0.86,
    );
    let f = agentic(Some("gb300"), json!({"theoretical_cache_hit_rate": 0.969}));
    let sel = select(&f, L);
    assert_eq!(sel.hit_rate, Some(0.969));
    assert_eq!(sel.hit_source, HitRateSource::TheoreticalFallback);
    assert_eq!(
        h(Some("gb300"), json!({"theoretical_cache_hit_rate": 1.2})),
        Some(1.0)
    );
    assert_eq!(h(Some("gb300"), json!({})), None);
    // theoretical NaN (only possible through a direct observation; JSON has no NaN)
    let nan = ObservedPoint {
        hardware: Some("gb300".into()),
        workload: Workload::PrefixReuse,
        throughput_per_gpu: Some(1000.0),
        cache: Some(CacheObservation {
            theoretical_hit_rate: Some(f64::NAN),
            ..Default::default()
        }),
        ..Default::default()
    }
    .facts();
    assert_eq!(select(&nan, L).hit_rate, None);
    for hw in [
        Some("gb200"),
        Some("b300"),
        Some("b200"),
        Some("mi355x"),
        Some("h200"),
        None,
    ] {
        assert_eq!(
            h(hw, json!({"theoretical_cache_hit_rate": 0.97})),
            None,
            "{hw:?}"
        );
    }
    assert_eq!(LEGACY_FALLBACK_HARDWARE, ["gb300"]);
}

fn point(t: f64, i: f64, o: f64) -> kvledger::pricing::PointFacts {
    agentic(
        None,
        json!({"tput_per_gpu": t, "input_tput_per_gpu": i, "output_tput_per_gpu": o}),
    )
}

#[test]
fn f3_f6_revenue() {
    let out = chart(&point(2000.0, 1600.0, 400.0), &normalized());
    assert!(out.priced);
    assert_close(out.revenue_per_gpu_hour.unwrap(), 7.2);
    let or = card(2.0, None, 10.0);
    let out = chart(&point(1000.0, 800.0, 200.0), &or);
    assert_close(out.input_share.unwrap(), 0.8);
    assert_close(out.revenue_per_gpu_hour.unwrap(), 12.96);
    // cached price absent: 10 % of input
    assert_close(card(2.0, None, 10.0).prices().cached, 0.2);
    // the normalized formula R = 0.0036 T (1 - 0.9 h s)
    let p = normalized().prices();
    let r = revenue_per_gpu_hour(2000.0, Some(0.8), Some(0.5), &p).unwrap();
    assert_close(r, 0.0036 * 2000.0 * (1.0 - 0.9 * 0.5 * 0.8));
    // T not > 0 gives 0, not "not priced"
    assert_eq!(
        revenue_per_gpu_hour(0.0, None, None, &card(2.0, None, 10.0).prices()),
        Some(0.0)
    );
}

#[test]
fn f8_share_unknown_is_not_priced() {
    let or = card(2.0, None, 10.0);
    // isl 8192, osl null, no totals, inconsistent rates
    let f = row(json!({"isl": 8192, "osl": null, "metrics": {"tput_per_gpu": 1000, "input_tput_per_gpu": 5000, "output_tput_per_gpu": 100}})).facts();
    assert_eq!(input_token_share(&f).0, None);
    let o = chart(&f, &or);
    assert!(!o.priced);
    assert_eq!(o.revenue_per_gpu_hour, None);
    assert!(o.reasons.iter().any(|r| r.code == PricingCode::NoTokenMix));
    // prompt without generation
    let f = agentic(
        None,
        json!({"tput_per_gpu": 1000, "total_prompt_tokens": 9000}),
    );
    assert_eq!(input_token_share(&f).0, None);
    assert!(!chart(&f, &or).priced);
    // I = O = 0, no isl/osl/totals, OpenRouter
    let f = agentic(
        None,
        json!({"tput_per_gpu": 1000, "input_tput_per_gpu": 0, "output_tput_per_gpu": 0}),
    );
    assert!(!chart(&f, &or).priced);
    // ... but equal prices need no share (the overview fixture's agentic rows)
    let o = chart(&f, &normalized());
    assert_close(o.revenue_per_gpu_hour.unwrap(), 3.6);
}

#[test]
fn f9_f10_money_metrics() {
    let pc = PowerCost {
        kw_per_gpu: Some(B200_KW_PER_GPU),
        tco_per_gpu_hour: Some(B200_TCO_HYPERSCALER),
    };
    // pricing unavailable: every sale-priced field absent
    assert_eq!(
        money_metrics(None, Some(2000.0), &pc),
        MoneyMetrics::default()
    );
    let gh = gpu_hours_per_year(1000.0, 1.71).unwrap();
    assert_close(gh, 1000.0 / 1.71 * 8760.0);
    let m = money_metrics(Some(7.2), Some(2000.0), &pc);
    assert_close(m.revenue_per_mw_year.unwrap(), 7.2 * gh);
    assert_close(m.profit_per_mw_year.unwrap(), (7.2 - 1.73) * gh);
    assert_close(m.profit_per_gw_year.unwrap(), (7.2 - 1.73) * gh * 1000.0);
    assert_close(m.tokens_per_dollar.unwrap(), 2000.0 * 3600.0 / 7.2);
    // no power: no yearly metrics; no TCO: no profit
    let m = money_metrics(Some(7.2), None, &PowerCost::default());
    assert_eq!(m.revenue_per_mw_year, None);
    assert_eq!(m.profit_per_gpu_hour, None);
    assert_eq!(m.tokens_per_dollar, None);
}

fn legacy_at(
    knots: &[kvledger::pricing::PointFacts],
    x: f64,
) -> kvledger::pricing::FrontierInterpolation {
    interpolate_frontier(knots, x, &normalized(), L, LegacySurface::Calculator)
}

#[test]
fn f12_calculator_cached_fraction_all_or_nothing() {
    let e = Some(true);
    let h = legacy_at(
        &[
            knot(20.0, 800.0, Some(0.8), Some(0.4), e),
            knot(60.0, 400.0, Some(0.8), Some(0.8), e),
        ],
        40.0,
    );
    let v = h.hit_rate.unwrap();
    assert!(v > 0.4 && v < 0.8, "{v}");
    let h = legacy_at(
        &[
            knot(20.0, 900.0, Some(0.8), Some(0.1), e),
            knot(40.0, 600.0, Some(0.8), Some(0.9), e),
            knot(60.0, 300.0, Some(0.8), Some(0.2), e),
        ],
        50.0,
    );
    let v = h.hit_rate.unwrap();
    assert!((0.1..=0.9).contains(&v), "{v}");
    let none = legacy_at(
        &[
            knot(20.0, 800.0, Some(0.8), None, None),
            knot(60.0, 400.0, Some(0.8), None, None),
        ],
        40.0,
    );
    assert_eq!(none.hit_rate, None);
    let partial = legacy_at(
        &[
            knot(20.0, 800.0, Some(0.8), Some(0.9), e),
            knot(60.0, 400.0, Some(0.8), None, None),
        ],
        40.0,
    );
    assert_eq!(partial.hit_rate, None);
    assert!(partial
        .reasons
        .iter()
        .any(|r| r.code == PricingCode::PartialFrontierNoDiscount));
    // no discount: priced at the full input price, at the dashboard's two-knot cubic:
    // s = (400 - 800) / 40 = -10, m0 = 1.5 s = -15, m1 = 0.75 s = -7.5, t = 0.5:
    // T = 800 h00 + 40 (-15) h10 + 400 h01 + 40 (-7.5) h11
    //   = 800 (0.5) + (-600)(0.125) + 400 (0.5) + (-300)(-0.125) = 400 - 75 + 200 + 37.5 = 562.5
    // R = 0.0036 x 562.5 = 2.025
    assert_close(partial.throughput_per_gpu.unwrap(), 562.5);
    assert_close(partial.revenue_per_gpu_hour.unwrap(), 2.025);
    let single = legacy_at(&[knot(30.0, 500.0, Some(0.8), Some(0.77), e)], 90.0);
    assert_eq!(single.hit_rate, Some(0.77));
    assert!(single.clamped);
    // clamped flags
    let ks = [
        knot(20.0, 800.0, Some(0.8), Some(0.5), e),
        knot(80.0, 200.0, Some(0.8), Some(0.5), e),
    ];
    for (t, above) in [(200.0, true), (1.0, false)] {
        let r = legacy_at(&ks, t);
        assert!(r.clamped);
        assert_eq!(r.clamped_above, above);
        assert_eq!(r.clamped_below, !above);
        assert!(r.throughput_per_gpu.unwrap() > 0.0);
        assert!(r.revenue_per_gpu_hour.unwrap() > 0.0);
    }
}

#[test]
fn f13_historical_trend() {
    let n = normalized();
    let trend = |ks: &[kvledger::pricing::PointFacts], x| interpolate_trend(ks, x, &n, L);
    assert!(!trend(&[], 40.0).priced);
    let ks = [
        knot(20.0, 800.0, Some(0.5), None, None),
        knot(60.0, 400.0, Some(0.5), None, None),
    ];
    // knots price as 2.88 and 1.44
    assert_close(
        price_point(&ks[0], &n, L).revenue_per_gpu_hour.unwrap(),
        2.88,
    );
    assert_close(
        price_point(&ks[1], &n, L).revenue_per_gpu_hour.unwrap(),
        1.44,
    );
    for x in [10.0, 61.0] {
        let r = trend(&ks, x);
        assert!(!r.priced);
        assert_eq!(r.reasons[0].code, PricingCode::OutsideMeasuredRange);
    }
    assert_close(trend(&ks, 20.0).revenue_per_gpu_hour.unwrap(), 2.88);
    assert_close(trend(&ks, 60.0).revenue_per_gpu_hour.unwrap(), 1.44);
    let mid = trend(&ks, 40.0);
    let t40 = mid.throughput_per_gpu.unwrap();
    assert_close(mid.revenue_per_gpu_hour.unwrap(), 0.0036 * t40);
    // two knots: the dashboard's cubic (1.5 s, 0.75 s), 562.5 as in f12, not the secant's 600
    assert_close(t40, 562.5);
    // single point: exact only (within 1e-6)
    let one = [knot(30.0, 500.0, Some(0.5), None, None)];
    assert_close(trend(&one, 30.0 + 5e-7).revenue_per_gpu_hour.unwrap(), 1.8);
    assert!(!trend(&one, 30.1).priced);
    // a frontier point whose revenue is missing: no value for the date
    let or = card(2.0, None, 10.0);
    let gap = [
        knot(20.0, 800.0, Some(0.5), None, None),
        knot(60.0, 400.0, None, None, None),
    ];
    let r = interpolate_trend(&gap, 40.0, &or, L);
    assert!(!r.priced);
    assert!(r
        .reasons
        .iter()
        .any(|r| r.code == PricingCode::NoTokenMix && r.knot == Some(1)));
}

#[test]
fn f14_input_share_rules() {
    let s = |v| input_token_share(&row(v).facts()).0;
    assert_close(s(json!({"metrics": {"tput_per_gpu": 1000, "input_tput_per_gpu": 700, "output_tput_per_gpu": 300}})).unwrap(), 0.7);
    assert_close(
        s(json!({"disagg": true, "isl": 1024, "osl": 1024, "metrics": {"tput_per_gpu": 300, "input_tput_per_gpu": 400, "output_tput_per_gpu": 100}})).unwrap(),
        0.5,
    );
    assert_close(
        s(json!({"benchmark_type": "agentic_traces", "metrics": {"total_prompt_tokens": 9000, "total_generation_tokens": 1000}})).unwrap(),
        0.9,
    );
    assert_eq!(
        s(
            json!({"benchmark_type": "agentic_traces", "disagg": true, "isl": null, "osl": null, "metrics": {"tput_per_gpu": 300, "input_tput_per_gpu": 400, "output_tput_per_gpu": 100}})
        ),
        None
    );
}

#[test]
fn f15_f16_lifecycle() {
    assert_eq!(billable_input_rate(13_525.0, None, 0.1), 13_525.0);
    assert_eq!(billable_input_rate(13_525.0, Some(0.92), 1.0), 13_525.0);
    assert_close(
        billable_input_rate(13_525.0, Some(0.92), 0.1),
        13_525.0 * (1.0 - 0.92 * 0.9),
    );
    assert_eq!(billable_input_rate(0.0, Some(0.5), 0.1), 0.0);
    assert_eq!(billable_input_rate(f64::NAN, Some(0.5), 0.1), 0.0);
    let (i, o) = split_token_streams(1000.0, Some(0.9), Some(0.5), 0.1);
    assert_close(i, 495.0);
    assert_close(o, 100.0);
    assert_eq!(
        split_token_streams(1000.0, None, Some(0.5), 0.1),
        (0.0, 1000.0)
    );
    assert_eq!(split_token_streams(1000.0, Some(1.5), None, 0.1).1, 0.0);
    assert_eq!(split_token_streams(1000.0, Some(-0.5), None, 0.1).0, 0.0);
    assert_eq!(split_token_streams(0.0, Some(0.5), None, 0.1), (0.0, 0.0));
    assert_eq!(
        split_token_streams(f64::NAN, Some(0.5), None, 0.1),
        (0.0, 0.0)
    );
}

#[test]
fn f17_profit_estimator() {
    let flat = RateCard {
        name: "flat".into(),
        ..card(1.0, Some(1.0), 1.0)
    };
    let f = ObservedPoint {
        throughput_per_gpu: Some(1000.0),
        input_share: Some(0.8),
        workload: Workload::FixedSequence,
        ..Default::default()
    }
    .facts();
    let r = price_point(&f, &flat, L).revenue_per_gpu_hour.unwrap();
    assert_close(r, 3.6);
    let base = ProfitInput {
        revenue_per_gpu_hour: Some(r),
        kw_per_gpu: Some(1.71),
        tco_per_gpu_hour: Some(1.73),
        ..Default::default()
    };
    let e = estimate_profit(&base).unwrap(); // chip-hour, 60 % utilization, 30 % lab share
    assert_eq!(e.gpu_hours, 1.0);
    assert_close(e.revenue, 3.6 * 0.6);
    assert_close(e.tco, 1.73);
    assert_close(e.license_fee, 3.6 * 0.6 * 0.3);
    assert_close(e.profit, 3.6 * 0.6 - 1.73 - 3.6 * 0.6 * 0.3);
    let gw = estimate_profit(&ProfitInput {
        basis: ProfitBasis::GwYear,
        ..base
    })
    .unwrap();
    assert_close(gw.gpu_hours, 1e6 / 1.71 * 8760.0);
    // skip reasons, in order
    let code = |i: ProfitInput| estimate_profit(&i).unwrap_err().code;
    assert_eq!(
        code(ProfitInput {
            clamped: true,
            revenue_per_gpu_hour: None,
            ..base
        }),
        PricingCode::OutsideMeasuredRange
    );
    assert_eq!(
        code(ProfitInput {
            basis: ProfitBasis::GwYear,
            kw_per_gpu: None,
            ..base
        }),
        PricingCode::NoPower
    );
    assert_eq!(
        code(ProfitInput {
            tco_per_gpu_hour: None,
            ..base
        }),
        PricingCode::NoCost
    );
    // share unknown + split pricing: not priced, so no-token-mix (on the chart: the
    // calculator would read the missing output throughput as the total and bill all output)
    let g = ObservedPoint {
        throughput_per_gpu: Some(1000.0),
        workload: Workload::FixedSequence,
        ..Default::default()
    }
    .facts();
    let unpriced = chart(&g, &card(2.0, None, 10.0));
    assert!(!unpriced.priced);
    assert_eq!(
        code(ProfitInput {
            revenue_per_gpu_hour: unpriced.revenue_per_gpu_hour,
            ..base
        }),
        PricingCode::NoTokenMix
    );
    // percent inputs: clamped, NaN -> default
    let e = estimate_profit(&ProfitInput {
        utilization_pct: Some(150.0),
        lab_share_pct: Some(f64::NAN),
        ..base
    })
    .unwrap();
    assert_close(e.revenue, 3.6);
    assert_close(e.license_fee, 3.6 * 0.3);
}
