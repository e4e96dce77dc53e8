//! Property test: the three `legacy` surfaces differ only where docs/pricing.md's surface
//! table says they do. Random dashboard rows (GB300 and other hardware, missing
//! `output_tput_per_gpu`, exact 0 and 1 rates, rates outside [0, 1]) and random frontiers
//! (3-12 knots and 1-2 knots, targets inside, on and outside the knots) are priced by
//! kvledger and by an independent transcription of the dashboard's formulas (consumer.md
//! b.1-b.3, c.1-c.3, c.3b) written below; the two must agree on every surface, and any
//! difference between surfaces must be one the table names.

#[path = "pricing_support/mod.rs"]
mod support;

use kvledger::pricing::frontier::interpolate_frontier;
use kvledger::pricing::policy::{price_point_on, PricingPolicy};
use kvledger::pricing::rate_card::Prices;
use kvledger::pricing::{LegacySurface, PointFacts, PricingCode, RateCard};
use serde_json::{json, Map, Value};
use support::*;

const L: PricingPolicy = PricingPolicy::Legacy;
const CHART: LegacySurface = LegacySurface::Chart;
const CALC: LegacySurface = LegacySurface::Calculator;
const TREND: LegacySurface = LegacySurface::Trend;
const SEEDS: [u64; 3] = [0x5EED, 2026, 0xC0FFEE];
const POINTS_PER_SEED: usize = 20_000;
const FRONTIERS_PER_SEED: usize = 3_000;
const TARGETS_PER_FRONTIER: usize = 6;

impl Rng {
    /// `v`, present with probability `p`.
    fn maybe(&mut self, p: f64, v: impl FnOnce(&mut Self) -> f64) -> Option<f64> {
        if self.unit() < p {
            Some(v(self))
        } else {
            None
        }
    }
    /// A hit rate: exact 0 and 1 often, sometimes outside [0, 1] as real rows are.
    fn rate(&mut self) -> f64 {
        let u = self.unit();
        self.pick(&[0.0, 1.0, u, u, u, 1.185, -0.2])
    }
    fn card(&mut self) -> RateCard {
        if self.unit() < 0.4 {
            return normalized();
        }
        let i = self.range(0.1, 20.0);
        let cached = if self.unit() < 0.5 {
            Some(self.range(0.0, i))
        } else {
            None
        };
        let o = if self.unit() < 0.2 {
            i
        } else {
            self.range(0.1, 60.0)
        };
        card(i, cached, o)
    }
}

/// One dashboard row, as the dashboard's code sees its fields.
#[derive(Clone, Debug)]
struct Row {
    hw: Option<&'static str>,
    btype: Option<&'static str>,
    t: Option<f64>,
    i: Option<f64>,
    o: Option<f64>,
    isl: Option<f64>,
    osl: Option<f64>,
    prompt: Option<f64>,
    gen: Option<f64>,
    g: Option<f64>,
    x: Option<f64>,
    c: Option<f64>,
    theo: Option<f64>,
    at: f64,
}

fn random_row(r: &mut Rng, t: Option<f64>, at: f64) -> Row {
    let tv = t.unwrap_or(0.0);
    let share = r.unit();
    // input/output throughput: consistent, disaggregated (sums to 1-16x T), or missing
    let (i, o) = match r.next() % 6 {
        0 => (Some(share * tv), Some((1.0 - share) * tv)),
        1 => (
            Some(share * tv * r.range(1.0, 16.0)),
            Some((1.0 - share) * tv * r.range(1.0, 16.0)),
        ),
        2 => (Some(share * tv * r.range(0.0, 0.02)), None),
        3 => (Some(share * tv), None),
        4 => (None, Some((1.0 - share) * tv)),
        _ => (None, None),
    };
    let lengths = [0.0, 1024.0, 8192.0];
    Row {
        hw: r.pick(&[
            Some("gb300"),
            Some("gb300"),
            Some("b200"),
            Some("gb200"),
            None,
        ]),
        btype: r.pick(&[Some("agentic_traces"), Some("single_turn"), None]),
        t,
        i,
        o,
        isl: r.maybe(0.4, |r| r.pick(&lengths)),
        osl: r.maybe(0.4, |r| r.pick(&lengths)),
        prompt: r.maybe(0.3, |r| r.range(0.0, 1e6)),
        gen: r.maybe(0.3, |r| r.range(0.0, 1e5)),
        g: r.maybe(0.4, Rng::rate),
        x: r.maybe(0.25, Rng::rate),
        c: r.maybe(0.25, Rng::rate),
        theo: r.maybe(0.6, Rng::rate),
        at,
    }
}

impl Row {
    fn facts(&self) -> PointFacts {
        let mut m = Map::new();
        let mut put = |k: &str, v: Option<f64>| {
            if let Some(v) = v {
                m.insert(k.to_string(), json!(v));
            }
        };
        put("tput_per_gpu", self.t);
        put("input_tput_per_gpu", self.i);
        put("output_tput_per_gpu", self.o);
        put("total_prompt_tokens", self.prompt);
        put("total_generation_tokens", self.gen);
        put("server_gpu_cache_hit_rate", self.g);
        put("server_external_cache_hit_rate", self.x);
        put("server_cpu_cache_hit_rate", self.c);
        put("theoretical_cache_hit_rate", self.theo);
        put("p90_intvty", Some(self.at));
        put("median_intvty", Some(self.at));
        let mut v = json!({"isl": self.isl, "osl": self.osl, "metrics": Value::Object(m)});
        if let Some(h) = self.hw {
            v["hardware"] = json!(h);
        }
        if let Some(b) = self.btype {
            v["benchmark_type"] = json!(b);
        }
        row(v).facts()
    }

    // ---- the dashboard, transcribed from consumer.md ----

    /// b.1 `measuredCacheHitRate`.
    fn measured(&self) -> Option<f64> {
        let secondary = self.x.or(self.c);
        if self.g.is_none() && secondary.is_none() {
            return None;
        }
        Some(clamp01(self.g.unwrap_or(0.0) + secondary.unwrap_or(0.0)))
    }

    /// b.1 / c.3b: `pricingCacheHitRate` with `hw` on the calculator; without `hw` (never
    /// falls back) on the trend; `measuredCacheHitRate` on the chart.
    fn hit(&self, s: LegacySurface) -> Option<f64> {
        let fallback = (s == CALC && self.hw == Some("gb300"))
            .then_some(self.theo)
            .flatten()
            .map(clamp01);
        self.measured().or(fallback)
    }

    /// b.2, with the calculator's O = output ?? tput (c.3b).
    fn share(&self, s: LegacySurface) -> Option<f64> {
        let t = self.t.unwrap_or(0.0);
        let i = self.i.unwrap_or(0.0);
        let o = if s == CALC {
            self.o.or(self.t).unwrap_or(0.0)
        } else {
            self.o.unwrap_or(0.0)
        };
        if t > 0.0 && i + o > 0.0 && ((i + o) / t - 1.0).abs() <= 0.01 {
            return Some(i / (i + o));
        }
        if let (Some(a), Some(b)) = (self.isl, self.osl) {
            if a + b > 0.0 {
                return Some(a / (a + b));
            }
        }
        if let (Some(a), Some(b)) = (self.prompt, self.gen) {
            if a + b > 0.0 {
                return Some(a / (a + b));
            }
        }
        None
    }

    fn revenue(&self, s: LegacySurface, p: &Prices) -> Option<f64> {
        revenue(self.t.unwrap_or(0.0), self.share(s), self.hit(s), p)
    }

    /// Where the table says the calculator's point rule differs from the chart's.
    fn gb300_fallback(&self) -> bool {
        self.hw == Some("gb300") && self.measured().is_none() && self.theo.is_some()
    }
    fn output_missing(&self) -> bool {
        self.o.is_none() && self.t.is_some_and(|t| t > 0.0)
    }
}

fn clamp01(v: f64) -> f64 {
    v.clamp(0.0, 1.0)
}

/// b.3 `tokenRevenueFromRatesPerGpuHour`.
fn revenue(t: f64, s: Option<f64>, h: Option<f64>, p: &Prices) -> Option<f64> {
    if t.is_nan() || t <= 0.0 {
        return Some(0.0);
    }
    let hh = h.map(clamp01).unwrap_or(0.0);
    if p.input == p.output && !(hh > 0.0 && p.cached != p.input) {
        return Some(t * 3600.0 * p.input / 1e6);
    }
    let s = clamp01(s?);
    let p_in = (1.0 - hh) * p.input + hh * p.cached;
    Some(t * 3600.0 * (s * p_in + (1.0 - s) * p.output) / 1e6)
}

/// c.1 `monotoneSlopes`, in the dashboard's order over a zeroed array.
fn dashboard_slopes(xs: &[f64], ys: &[f64]) -> Vec<f64> {
    let n = xs.len();
    let mut m = vec![0.0; n];
    if n < 2 {
        return m;
    }
    let h: Vec<f64> = (0..n - 1).map(|k| xs[k + 1] - xs[k]).collect();
    let s: Vec<f64> = (0..n - 1).map(|k| (ys[k + 1] - ys[k]) / h[k]).collect();
    let sign = |v: f64| if v < 0.0 { -1.0 } else { 1.0 };
    for k in 1..n - 1 {
        let p = (s[k - 1] * h[k] + s[k] * h[k - 1]) / (h[k - 1] + h[k]);
        let v = (sign(s[k - 1]) + sign(s[k])) * s[k - 1].abs().min(s[k].abs()).min(0.5 * p.abs());
        m[k] = if v.is_nan() || v == 0.0 { 0.0 } else { v };
    }
    m[0] = (3.0 * s[0] - m[1]) / 2.0;
    m[n - 1] = (3.0 * s[n - 2] - m[n - 2]) / 2.0;
    m
}

/// c.1 `hermiteInterpolate`, then clamped to the knots (c.2, c.3).
fn dashboard_spline(xs: &[f64], ys: &[f64], x: f64) -> f64 {
    let n = xs.len();
    let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if n == 1 || x <= xs[0] {
        return ys[0];
    }
    if x >= xs[n - 1] {
        return ys[n - 1];
    }
    let m = dashboard_slopes(xs, ys);
    let k = (0..n - 1).rfind(|&k| xs[k] <= x).unwrap_or(0);
    let h = xs[k + 1] - xs[k];
    let t = (x - xs[k]) / h;
    let (t2, t3) = (t * t, t * t * t);
    let v = (2.0 * t3 - 3.0 * t2 + 1.0) * ys[k]
        + (t3 - 2.0 * t2 + t) * h * m[k]
        + (-2.0 * t3 + 3.0 * t2) * ys[k + 1]
        + (t3 - t2) * h * m[k + 1];
    v.clamp(lo, hi)
}

/// All-or-nothing spline of a per-knot value (c.2, c.3).
fn all_or_nothing(xs: &[f64], vals: &[Option<f64>], x: f64) -> Option<f64> {
    let ys: Option<Vec<f64>> = vals.iter().copied().collect();
    ys.map(|ys| dashboard_spline(xs, &ys, x))
}

/// The dashboard's value at `target` on a frontier surface (calculator or trend), with the
/// calculator's `clamped` flag.
fn dashboard_frontier(
    knots: &[Row],
    target: f64,
    s: LegacySurface,
    p: &Prices,
) -> (Option<f64>, bool) {
    let xs: Vec<f64> = knots.iter().map(|k| k.at).collect();
    let ts: Vec<f64> = knots.iter().map(|k| k.t.unwrap_or(0.0)).collect();
    let n = xs.len();
    let (lo, hi) = (xs[0], xs[n - 1]);
    let clamped = if n == 1 {
        target != lo
    } else {
        target < lo || target > hi
    };
    if s == TREND {
        let outside = if n == 1 {
            (target - lo).abs() > 1e-6
        } else {
            clamped
        };
        // no extrapolation; a point whose own revenue is missing leaves no value
        if outside || knots.iter().any(|k| k.revenue(TREND, p).is_none()) {
            return (None, false);
        }
    }
    let x = target.clamp(lo, hi);
    let t = dashboard_spline(&xs, &ts, x);
    let hs: Vec<Option<f64>> = knots.iter().map(|k| k.hit(s)).collect();
    let ss: Vec<Option<f64>> = knots.iter().map(|k| k.share(s)).collect();
    let r = revenue(
        t,
        all_or_nothing(&xs, &ss, x),
        all_or_nothing(&xs, &hs, x),
        p,
    );
    (r, s == CALC && clamped)
}

fn same(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => close(a, b),
        (a, b) => a == b,
    }
}

#[derive(Default, Debug)]
struct PointCounts {
    cases: usize,
    calc_differs_fallback: usize,
    calc_differs_share: usize,
    calc_same: usize,
}

#[test]
fn points_differ_only_where_the_table_says() {
    let mut n = PointCounts::default();
    for seed in SEEDS {
        let mut r = Rng(seed);
        for _ in 0..POINTS_PER_SEED {
            let tv = r.range(0.0, 30_000.0);
            let t = r.pick(&[Some(tv), Some(tv), Some(0.0), None]);
            let row = random_row(&mut r, t, 10.0);
            let f = row.facts();
            let c = r.card();
            let p = c.prices();
            let out = |s| price_point_on(&f, &c, L, s);
            let (chart, calc, trend) = (out(CHART), out(CALC), out(TREND));
            n.cases += 1;
            // kvledger equals the dashboard on every surface, bit for bit
            for (s, o) in [(CHART, &chart), (CALC, &calc), (TREND, &trend)] {
                let want = row.revenue(s, &p);
                assert_eq!(o.revenue_per_gpu_hour, want, "{s} {row:?}");
                assert_eq!(o.hit_rate, row.hit(s), "{s} {row:?}");
                assert_eq!(o.input_share, row.share(s), "{s} {row:?}");
            }
            // chart and trend share every point rule
            assert_eq!(chart.revenue_per_gpu_hour, trend.revenue_per_gpu_hour);
            assert_eq!(chart.hit_rate, trend.hit_rate);
            assert_eq!(chart.input_share, trend.input_share);
            // the calculator differs only by the GB300 fallback or the output default
            let differs = calc.revenue_per_gpu_hour != chart.revenue_per_gpu_hour
                || calc.hit_rate != chart.hit_rate
                || calc.input_share != chart.input_share;
            if differs {
                assert!(row.gb300_fallback() || row.output_missing(), "{row:?}");
                if calc.hit_rate != chart.hit_rate {
                    assert!(row.gb300_fallback());
                    n.calc_differs_fallback += 1;
                }
                if calc.input_share != chart.input_share {
                    assert!(row.output_missing());
                    n.calc_differs_share += 1;
                }
            } else {
                n.calc_same += 1;
            }
            if row.gb300_fallback() {
                assert!(chart
                    .reasons
                    .iter()
                    .any(|r| r.code == PricingCode::FallbackNotOnSurface));
            }
        }
    }
    eprintln!("point cases: {n:?}");
    assert_eq!(n.cases, SEEDS.len() * POINTS_PER_SEED);
    assert!(n.calc_differs_fallback > 1_000 && n.calc_differs_share > 1_000);
    assert!(n.calc_same > 10_000);
}

/// Knots on an upper-left front (x up, throughput down), sometimes with dominated points.
fn random_frontier(r: &mut Rng, n: usize) -> (Vec<Row>, Vec<Row>) {
    let mut x = r.range(1.0, 20.0);
    let mut t = r.range(5_000.0, 30_000.0);
    let mut knots = Vec::new();
    for _ in 0..n {
        knots.push(random_row(r, Some(t), x));
        x += r.range(0.5, 30.0);
        t *= r.range(0.3, 0.98);
    }
    let mut all = knots.clone();
    if n >= 2 && r.unit() < 0.3 {
        // between two knots and below the lowest throughput: dominated by its left knot
        let k = (r.next() % (n as u64 - 1)) as usize;
        let at = r.range(knots[k].at, knots[k + 1].at);
        all.push(random_row(r, Some(t * 0.5), at));
    }
    (knots, all)
}

fn random_target(r: &mut Rng, knots: &[Row]) -> f64 {
    let (lo, hi) = (knots[0].at, knots[knots.len() - 1].at);
    let k = knots[(r.next() % knots.len() as u64) as usize].at;
    match r.next() % 7 {
        0 => lo - r.range(0.1, 10.0),
        1 => hi + r.range(0.1, 10.0),
        2 => k,
        3 => k + r.pick(&[1e-7, -1e-7, 5e-7, 1e-5]),
        _ => r.range(lo, hi),
    }
}

#[derive(Default, Debug)]
struct FrontierCounts {
    frontiers_3_to_12: usize,
    frontiers_1_to_2: usize,
    targets: usize,
    outside: usize,
    near_single_knot: usize,
    knot_rule: usize,
    trend_gap: usize,
    calc_equals_trend: usize,
    two_knot_cubic_vs_secant: usize,
    three_plus_same_as_strict: usize,
}

#[test]
fn frontiers_differ_only_where_the_table_says() {
    let mut n = FrontierCounts::default();
    for seed in SEEDS {
        let mut r = Rng(seed ^ 0xF00D);
        for _ in 0..FRONTIERS_PER_SEED {
            let size = if r.unit() < 0.5 {
                n.frontiers_3_to_12 += 1;
                3 + (r.next() % 10) as usize
            } else {
                n.frontiers_1_to_2 += 1;
                1 + (r.next() % 2) as usize
            };
            let (knots, all) = random_frontier(&mut r, size);
            let facts: Vec<PointFacts> = all.iter().map(Row::facts).collect();
            let c = r.card();
            let p = c.prices();
            for _ in 0..TARGETS_PER_FRONTIER {
                let target = random_target(&mut r, &knots);
                check_target(&knots, &facts, target, &c, &p, &mut n);
            }
        }
    }
    eprintln!("frontier cases (seeds {SEEDS:?}): {n:?}");
    assert_eq!(
        n.targets,
        SEEDS.len() * FRONTIERS_PER_SEED * TARGETS_PER_FRONTIER
    );
    for v in [
        n.outside,
        n.near_single_knot,
        n.knot_rule,
        n.trend_gap,
        n.calc_equals_trend,
        n.two_knot_cubic_vs_secant,
        n.three_plus_same_as_strict,
    ] {
        assert!(v > 100, "{n:?}");
    }
}

fn check_target(
    knots: &[Row],
    facts: &[PointFacts],
    target: f64,
    c: &RateCard,
    p: &Prices,
    n: &mut FrontierCounts,
) {
    n.targets += 1;
    let at = |s| interpolate_frontier(facts, target, c, L, s);
    let (chart, calc, trend) = (at(CHART), at(CALC), at(TREND));
    // the chart computes nothing between points
    assert!(!chart.priced);
    assert_eq!(chart.reasons[0].code, PricingCode::SurfaceNotInterpolated);
    // calculator and trend equal the dashboard
    let (want_calc, clamped) = dashboard_frontier(knots, target, CALC, p);
    assert!(
        same(calc.revenue_per_gpu_hour, want_calc),
        "calc {target} {knots:?}"
    );
    assert_eq!(calc.clamped, clamped);
    let (want_trend, _) = dashboard_frontier(knots, target, TREND, p);
    assert!(
        same(trend.revenue_per_gpu_hour, want_trend),
        "trend {target} {knots:?}"
    );

    // where the table says they may differ
    let (lo, hi) = (knots[0].at, knots[knots.len() - 1].at);
    let single = knots.len() == 1;
    let outside = if single {
        (target - lo).abs() > 1e-6
    } else {
        target < lo || target > hi
    };
    let near_single = single && target != lo && !outside;
    let knot_rule = knots
        .iter()
        .any(|k| k.hit(CALC) != k.hit(TREND) || k.share(CALC) != k.share(TREND));
    let trend_gap = knots.iter().any(|k| k.revenue(TREND, p).is_none());
    n.outside += outside as usize;
    n.near_single_knot += near_single as usize;
    n.knot_rule += knot_rule as usize;
    n.trend_gap += trend_gap as usize;
    if !(outside || knot_rule || trend_gap) {
        n.calc_equals_trend += 1;
        assert_eq!(calc.revenue_per_gpu_hour, trend.revenue_per_gpu_hour);
        assert_eq!(calc.throughput_per_gpu, trend.throughput_per_gpu);
        assert_eq!(calc.clamped, near_single);
        assert!(!trend.clamped);
    }

    // legacy numerics against strict's: the same from 3 knots, the secant with 2
    if !outside && !single {
        let strict = interpolate_frontier(facts, target, c, PricingPolicy::Strict, CALC);
        let t_legacy = trend.throughput_per_gpu.or(calc.throughput_per_gpu);
        if let (Some(a), Some(b)) = (t_legacy, strict.throughput_per_gpu) {
            if knots.len() >= 3 {
                n.three_plus_same_as_strict += 1;
                assert_eq!(a, b);
            } else if target > lo && target < hi {
                n.two_knot_cubic_vs_secant += 1;
                let (y0, y1) = (knots[0].t.unwrap_or(0.0), knots[1].t.unwrap_or(0.0));
                let u = (target - lo) / (hi - lo);
                assert_close(b, y0 + (y1 - y0) * u);
                assert_close(
                    a,
                    y0 + (y1 - y0) * (0.25 * u * u * u - 0.75 * u * u + 1.5 * u),
                );
            }
        }
    }
}
