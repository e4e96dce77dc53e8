//! `legacy` per dashboard surface (research/consumer.md c.3b): golden cases that pin each
//! difference between the chart, the calculator and the trend, computed by hand from the
//! notes' formulas (b.1 hit rate, b.2 share, b.3 revenue, c.1 numerics), plus the CLI and
//! the package options that select the surface.
//!
//! Normalized card: R = 0.0036 T (1 - 0.9 h s). Split card in 2 / out 10 (cached 0.2):
//! R = 0.0036 T (s ((1 - h) 2 + 0.2 h) + (1 - s) 10).

#[path = "cli_support/mod.rs"]
mod cli_support;
#[path = "pricing_support/mod.rs"]
mod support;
use cli_support::kvledger as cli;

use kvledger::pricing::frontier::{
    dashboard_monotone_slopes, interpolate_frontier, monotone_slopes, price_frontier,
};
use kvledger::pricing::policy::{price_point_on, HitRateSource, PricingPolicy};
use kvledger::pricing::trend::interpolate_trend;
use kvledger::pricing::{
    FrontierInterpolation, LegacySurface, PointFacts, PriceOutcome, PricingCode, RateCard,
    ShareSource,
};
use serde_json::json;
use support::*;

const L: PricingPolicy = PricingPolicy::Legacy;
const CHART: LegacySurface = LegacySurface::Chart;
const CALC: LegacySurface = LegacySurface::Calculator;
const TREND: LegacySurface = LegacySurface::Trend;

fn point(f: &PointFacts, c: &RateCard, s: LegacySurface) -> PriceOutcome {
    price_point_on(f, c, L, s)
}

fn at(ks: &[PointFacts], x: f64, c: &RateCard, s: LegacySurface) -> FrontierInterpolation {
    interpolate_frontier(ks, x, c, L, s)
}

fn has(reasons: &[kvledger::pricing::PricingReason], code: PricingCode) -> bool {
    reasons.iter().any(|r| r.code == code)
}

/// A GB300 agentic row without measured tiers, theoretical 0.62, at interactivity 40.
fn gb300(metrics: serde_json::Value) -> PointFacts {
    let mut m = metrics;
    m["theoretical_cache_hit_rate"] = json!(0.62);
    m["p90_intvty"] = json!(40.0);
    agentic(Some("gb300"), m)
}

#[test]
fn hit_rate_gb300_fallback_on_the_calculator_only() {
    let n = normalized();
    // T 1000, I 800, O 200: s = 800 / 1000 = 0.8 on every surface
    let f =
        gb300(json!({"tput_per_gpu": 1000, "input_tput_per_gpu": 800, "output_tput_per_gpu": 200}));
    // chart: measuredCacheHitRate only, h none: R = 0.0036 x 1000 = 3.6
    let c = point(&f, &n, CHART);
    assert_eq!((c.hit_rate, c.hit_rate_source), (None, HitRateSource::None));
    assert_close(c.revenue_per_gpu_hour.unwrap(), 3.6);
    assert!(has(&c.reasons, PricingCode::FallbackNotOnSurface));
    // calculator: h = 0.62; p_in = 0.38 x 1 + 0.62 x 0.1 = 0.442;
    // blend = 0.8 x 0.442 + 0.2 x 1 = 0.5536; R = 3.6 x 0.5536 = 1.99296
    let k = point(&f, &n, CALC);
    assert_eq!(k.hit_rate, Some(0.62));
    assert_eq!(k.hit_rate_source, HitRateSource::TheoreticalFallback);
    assert_close(k.revenue_per_gpu_hour.unwrap(), 1.99296);
    // trend: points built without hw, no fallback: 3.6 (point and one-knot frontier)
    let t = point(&f, &n, TREND);
    assert_eq!(t.hit_rate, None);
    assert_close(t.revenue_per_gpu_hour.unwrap(), 3.6);
    assert_close(
        interpolate_trend(std::slice::from_ref(&f), 40.0, &n, L)
            .revenue_per_gpu_hour
            .unwrap(),
        3.6,
    );
    // the calculator frontier at the knot carries the fallback through: 1.99296
    assert_close(
        at(&[f], 40.0, &n, CALC).revenue_per_gpu_hour.unwrap(),
        1.99296,
    );
}

#[test]
fn issue_example_one_gb300_knot_without_share() {
    let n = normalized();
    // T 28980.6, theoretical 0.62, no I/O, no isl/osl, no totals
    let f = gb300(json!({"tput_per_gpu": 28980.6}));
    // trend: h none (no hw), s none, equal prices: R = 0.0036 x 28980.6 = 104.33016
    let t = interpolate_trend(std::slice::from_ref(&f), 40.0, &n, L);
    assert_close(t.revenue_per_gpu_hour.unwrap(), 104.33016);
    assert_eq!(t.hit_rate, None);
    // chart point: the same rule, 104.33016
    assert_close(
        point(&f, &n, CHART).revenue_per_gpu_hour.unwrap(),
        104.33016,
    );
    // calculator: h 0.62, but O = output ?? T = 28980.6 and I = 0, so s = 0: every token at
    // the output price 1: R = 104.33016 (the old single legacy rule, fallback with the b.2
    // share, refused it: s unknown and the discount made the share matter)
    let k = at(std::slice::from_ref(&f), 40.0, &n, CALC);
    assert_eq!(k.hit_rate, Some(0.62));
    assert_eq!(k.input_share, Some(0.0));
    assert_close(k.revenue_per_gpu_hour.unwrap(), 104.33016);
}

#[test]
fn share_calculator_bills_a_row_without_output_throughput_as_all_output() {
    let or = card(2.0, None, 10.0);
    // fixed sequence isl 1024 / osl 8192, T 1000, no input/output throughput
    let f = row(json!({"benchmark_type": "single_turn", "isl": 1024, "osl": 8192, "metrics": {"tput_per_gpu": 1000}})).facts();
    // chart and trend: s = 1024 / 9216 = 1/9 = 0.1111;
    // R = 3.6 x (2/9 + 10 x 8/9) = 3.6 x 82/9 = 32.8
    for s in [CHART, TREND] {
        let o = point(&f, &or, s);
        assert_close(o.input_share.unwrap(), 1.0 / 9.0);
        assert_eq!(o.share_source, ShareSource::SequenceLengths);
        assert_close(o.revenue_per_gpu_hour.unwrap(), 32.8);
    }
    // calculator: I = 0, O = T = 1000, (0 + 1000) / 1000 = 1: s = 0; R = 3.6 x 10 = 36
    let k = point(&f, &or, CALC);
    assert_eq!(k.input_share, Some(0.0));
    assert_eq!(k.share_source, ShareSource::OutputDefaultedToTotal);
    assert_close(k.revenue_per_gpu_hour.unwrap(), 36.0);
    // with I present and O missing: I 600, T 1000, O := 1000, (600 + 1000) / 1000 = 1.6 is
    // not within 1 %, so the calculator falls to isl/osl like the chart: 32.8
    let g = row(json!({"isl": 1024, "osl": 8192, "metrics": {"tput_per_gpu": 1000, "input_tput_per_gpu": 600}})).facts();
    assert_close(point(&g, &or, CALC).revenue_per_gpu_hour.unwrap(), 32.8);
    // agentic, I 8 and O missing, T 1000: (8 + 1000) / 1000 = 1.008 within 1 %:
    // s = 8 / 1008 = 0.0079365; R = 3.6 x (2 s + 10 (1 - s)) = 3.6 x (10 - 8 x 8/1008)
    //   = 3.6 x 9.936508 = 35.771429
    let h = agentic(None, json!({"tput_per_gpu": 1000, "input_tput_per_gpu": 8}));
    let k = point(&h, &or, CALC);
    assert_close(k.input_share.unwrap(), 8.0 / 1008.0);
    assert_close(
        k.revenue_per_gpu_hour.unwrap(),
        3.6 * (10.0 - 64.0 / 1008.0),
    );
    assert!(!point(&h, &or, CHART).priced); // b.2: mix unknown, no-token-mix
}

/// The two knots of the issue, h 0.8 and s 0.5 on both, eligible.
fn two_knots() -> Vec<PointFacts> {
    vec![
        knot(26.32, 14847.83, Some(0.5), Some(0.8), Some(true)),
        knot(39.68, 11188.68, Some(0.5), Some(0.8), Some(true)),
    ]
}

#[test]
fn two_knot_frontier_is_the_dashboard_cubic_on_calculator_and_trend() {
    let n = normalized();
    // h = 39.68 - 26.32 = 13.36; d = 11188.68 - 14847.83 = -3659.15; s = d / h
    // t = (31.40 - 26.32) / 13.36 = 5.08 / 13.36 = 0.380240
    // slopes 1.5 s and 0.75 s: T = y0 + d (h10 1.5 + h01 + h11 0.75)
    //   = y0 + d (0.25 t^3 - 0.75 t^2 + 1.5 t) = 14847.83 - 3659.15 x 0.475666 = 13107.29
    // the secant: T = y0 + d t = 14847.83 - 3659.15 x 0.380240 = 13456.48
    let (y0, d, t): (f64, f64, f64) = (14847.83, 11188.68 - 14847.83, (31.40 - 26.32) / 13.36);
    let cubic = y0 + d * (0.25 * t * t * t - 0.75 * t * t + 1.5 * t);
    let secant = y0 + d * t;
    assert!((cubic - 13107.29).abs() < 0.01 && (secant - 13456.48).abs() < 0.01);
    // revenue: 0.0036 x (1 - 0.9 x 0.8 x 0.5) = 0.0036 x 0.64 = 0.002304 per tok/s
    for s in [CALC, TREND] {
        let o = at(&two_knots(), 31.40, &n, s);
        assert_close(o.throughput_per_gpu.unwrap(), cubic);
        assert_close(o.revenue_per_gpu_hour.unwrap(), 0.002304 * cubic); // 30.1992
    }
    for p in [PricingPolicy::Strict, PricingPolicy::Theoretical] {
        let o = interpolate_frontier(&two_knots(), 31.40, &n, p, CHART);
        assert_close(o.throughput_per_gpu.unwrap(), secant);
        assert_eq!(o.surface, None);
    }
    let strict = interpolate_frontier(&two_knots(), 31.40, &n, PricingPolicy::Strict, CALC);
    assert_close(strict.revenue_per_gpu_hour.unwrap(), 0.002304 * secant); // 31.0037
                                                                           // the chart computes nothing between its points
    let c = at(&two_knots(), 31.40, &n, CHART);
    assert!(!c.priced);
    assert_eq!(c.reasons[0].code, PricingCode::SurfaceNotInterpolated);
    let fp = price_frontier(&two_knots(), &n, L, CHART);
    assert!(fp.points.iter().all(|p| p.priced));
    assert!(fp.segments.iter().all(|s| !s.priced));
    // the slopes themselves: s = -3659.15 / 13.36 = -273.8885
    let sl = -3659.15 / 13.36;
    let xs = [26.32, 39.68];
    let ys = [14847.83, 11188.68];
    let dm = dashboard_monotone_slopes(&xs, &ys);
    assert_close(dm[0], 1.5 * sl);
    assert_close(dm[1], 0.75 * sl);
    let secant_slopes = monotone_slopes(&xs, &ys);
    assert_close(secant_slopes[0], sl);
    assert_close(secant_slopes[1], sl);
    // at the knots every rule gives the knot
    for s in [CALC, TREND] {
        assert_close(
            at(&two_knots(), 39.68, &n, s).throughput_per_gpu.unwrap(),
            11188.68,
        );
    }
}

#[test]
fn three_or_more_knots_use_the_same_slopes_everywhere() {
    // the end formulas only differ from the secant rule when there is no interior knot
    let xs = [10.0, 20.0, 30.0, 40.0];
    let ys = [1000.0, 800.0, 500.0, 300.0];
    assert_eq!(
        dashboard_monotone_slopes(&xs, &ys),
        monotone_slopes(&xs, &ys)
    );
    // interior m1: s0 = -20, s1 = -30, p = (-20 x 10 - 30 x 10) / 20 = -25;
    // m1 = (-1 - 1) x min(20, 30, 12.5) = -25; m0 = (3 x -20 - (-25)) / 2 = -17.5
    let m = dashboard_monotone_slopes(&xs, &ys);
    assert_close(m[1], -25.0);
    assert_close(m[0], -17.5);
}

#[test]
fn one_knot_calculator_clamps_a_target_1e7_away_trend_matches_it() {
    let n = normalized();
    let one = [knot(30.0, 500.0, Some(0.8), Some(0.77), Some(true))];
    // R = 0.0036 x 500 x (1 - 0.9 x 0.77 x 0.8) = 1.8 x 0.4456 = 0.80208
    let above = at(&one, 30.0 + 1e-7, &n, CALC);
    assert!(above.priced && above.clamped && above.clamped_above && !above.clamped_below);
    assert!(has(&above.reasons, PricingCode::TargetClamped));
    assert_close(above.revenue_per_gpu_hour.unwrap(), 0.80208);
    let below = at(&one, 30.0 - 1e-7, &n, CALC);
    assert!(below.clamped && below.clamped_below);
    let exact = at(&one, 30.0, &n, CALC);
    assert!(exact.priced && !exact.clamped);
    // trend: within 1e-6 is the knot, not clamped; 1e-5 away is no value
    let t = at(&one, 30.0 + 1e-7, &n, TREND);
    assert!(t.priced && !t.clamped);
    assert_close(t.revenue_per_gpu_hour.unwrap(), 0.80208);
    let far = at(&one, 30.0 + 1e-5, &n, TREND);
    assert!(!far.priced);
    assert_eq!(far.reasons[0].code, PricingCode::OutsideMeasuredRange);
    // strict keeps its documented 1e-6 match
    let s = interpolate_frontier(&one, 30.0 + 1e-7, &n, PricingPolicy::Strict, CALC);
    assert!(s.priced && !s.clamped);
    assert!(!at(&one, 30.0 + 1e-7, &n, CHART).priced);
}

#[test]
fn outside_the_knots_calculator_clamps_trend_gives_nothing() {
    let n = normalized();
    let ks = [
        knot(20.0, 800.0, Some(0.5), None, None),
        knot(60.0, 400.0, Some(0.5), None, None),
    ];
    // calculator at 70: clamped to 60, T = 400, h none: R = 0.0036 x 400 = 1.44
    let k = at(&ks, 70.0, &n, CALC);
    assert!(k.clamped_above);
    assert_close(k.revenue_per_gpu_hour.unwrap(), 1.44);
    let t = at(&ks, 70.0, &n, TREND);
    assert!(!t.priced);
    assert_eq!(t.reasons[0].code, PricingCode::OutsideMeasuredRange);
}

#[test]
fn surfaces_agree_on_the_app_revenue_numbers_where_no_rule_differs() {
    // token-revenue.test.ts: T 2000, I 1600, O 400 normalized: 7.2; OpenRouter 2/10,
    // T 1000, I 800, O 200: s 0.8, R = 3.6 x (0.8 x 2 + 0.2 x 10) = 3.6 x 3.6 = 12.96
    let p = |t: f64, i: f64, o: f64| {
        agentic(
            None,
            json!({"tput_per_gpu": t, "input_tput_per_gpu": i, "output_tput_per_gpu": o}),
        )
    };
    for s in LegacySurface::ALL {
        assert_close(
            point(&p(2000.0, 1600.0, 400.0), &normalized(), s)
                .revenue_per_gpu_hour
                .unwrap(),
            7.2,
        );
        assert_close(
            point(&p(1000.0, 800.0, 200.0), &card(2.0, None, 10.0), s)
                .revenue_per_gpu_hour
                .unwrap(),
            12.96,
        );
        assert_eq!(point(&p(1.0, 1.0, 0.0), &normalized(), s).surface, Some(s));
    }
}

#[test]
fn cli_surface_option() {
    let dir = std::env::temp_dir().join(format!("kvledger-surface-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rows = dir.join("rows.json");
    std::fs::write(
        &rows,
        json!([{"benchmark_type": "single_turn", "isl": 1024, "osl": 8192, "metrics": {"tput_per_gpu": 1000}}]).to_string(),
    )
    .unwrap();
    let card_file = dir.join("card.json");
    std::fs::write(
        &card_file,
        json!({"name": "split", "as_of": "2026-09-23", "input_per_million": 2, "output_per_million": 10, "usage_convention": "subset"}).to_string(),
    )
    .unwrap();
    let (r, c) = (rows.to_str().unwrap(), card_file.to_str().unwrap());
    let revenue = |surface: Option<&str>| {
        let mut a = vec![
            "price", "--rows", r, "--card", c, "--policy", "legacy", "--json",
        ];
        if let Some(s) = surface {
            a.extend(["--surface", s]);
        }
        let (code, out, err) = cli(&a);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let v = &v["result"];
        assert_eq!(v["surface"], json!(surface.unwrap_or("calculator")));
        v["outcomes"][0]["revenue_per_gpu_hour"].as_f64().unwrap()
    };
    assert_close(revenue(Some("chart")), 32.8);
    assert_close(revenue(Some("trend")), 32.8);
    assert_close(revenue(Some("calculator")), 36.0);
    assert_close(revenue(None), 36.0); // the default surface
    let (code, _, err) = cli(&["price", "--rows", r, "--surface", "chart"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--surface applies to --policy legacy only"),
        "{err}"
    );
    let (code, _, err) = cli(&[
        "price",
        "--rows",
        r,
        "--policy",
        "legacy",
        "--surface",
        "axis",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("expected chart, calculator or trend"), "{err}");
    let (code, out, _) = cli(&[
        "price",
        "--rows",
        r,
        "--policy",
        "legacy",
        "--surface",
        "trend",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("policy legacy (surface trend)"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
