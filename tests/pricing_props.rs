//! Property tests with a small deterministic PRNG (no extra crates): revenue never rises with
//! the hit rate, clamps hold, and no NaN or infinity escapes.

#[path = "pricing_support/mod.rs"]
mod support;

use kvledger::pricing::frontier::{interpolate_frontier, spline};
use kvledger::pricing::policy::{price_point, PricingPolicy};
use kvledger::pricing::revenue::{
    billable_input_rate, money_metrics, revenue_per_gpu_hour, split_token_streams, PowerCost,
};
use kvledger::pricing::LegacySurface;
use kvledger::pricing::{PointFacts, RateCard};
use support::*;

impl Rng {
    /// A value that is sometimes hostile.
    fn wild(&mut self) -> f64 {
        let v = self.range(-2.0, 3.0);
        self.pick(&[
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -1.0,
            0.0,
            1.5,
            v,
            1e300,
        ])
    }
    fn card(&mut self) -> RateCard {
        let i = self.range(0.0, 20.0);
        let cached = if self.unit() < 0.5 {
            Some(self.range(0.0, i))
        } else {
            None
        };
        card(i, cached, self.range(0.0, 60.0))
    }
}

#[test]
fn revenue_never_increases_with_h() {
    let mut r = Rng(0x5EED);
    for _ in 0..20_000 {
        let c = r.card();
        c.validate().unwrap();
        let p = c.prices();
        assert!(p.cached <= p.input);
        let t = r.range(0.0, 50_000.0);
        let s = r.unit();
        let (h1, h2) = (r.unit(), r.unit());
        let (lo, hi) = if h1 <= h2 { (h1, h2) } else { (h2, h1) };
        let a = revenue_per_gpu_hour(t, Some(s), Some(lo), &p).unwrap();
        let b = revenue_per_gpu_hour(t, Some(s), Some(hi), &p).unwrap();
        assert!(b <= a + 1e-9 * a.abs().max(1.0), "h {lo}->{hi}: {a} -> {b}");
        // no discount is the top
        let none = revenue_per_gpu_hour(t, Some(s), None, &p).unwrap();
        assert!(a <= none + 1e-9 * none.max(1.0));
        assert!(a >= 0.0 && a.is_finite());
    }
}

#[test]
fn a_card_with_cached_above_input_is_rejected() {
    assert!(card(1.0, Some(1.5), 2.0).validate().is_err());
    assert!(card(f64::NAN, None, 2.0).validate().is_err());
    assert!(card(-1.0, None, 2.0).validate().is_err());
}

#[test]
fn no_nan_or_infinity_escapes_and_clamps_hold() {
    let mut r = Rng(42);
    for _ in 0..20_000 {
        let c = r.card();
        let p = c.prices();
        let t = if r.unit() < 0.3 {
            r.wild()
        } else {
            r.range(0.0, 1e5)
        };
        let s = if r.unit() < 0.3 {
            Some(r.wild())
        } else {
            Some(r.unit())
        };
        let h = if r.unit() < 0.3 {
            Some(r.wild())
        } else {
            Some(r.unit())
        };
        if let Some(v) = revenue_per_gpu_hour(t, s, h, &p) {
            assert!(v.is_finite() && v >= 0.0, "t {t} s {s:?} h {h:?}: {v}");
        }
        let b = billable_input_rate(r.wild(), h, r.wild());
        assert!(!b.is_nan());
        let total = r.range(0.0, 1e4);
        let (i, o) = split_token_streams(total, s, h, r.unit());
        assert!(i >= 0.0 && o >= 0.0 && i.is_finite() && o.is_finite());
        assert!(i + o <= total * (1.0 + 1e-12));
        let m = money_metrics(
            Some(r.range(0.0, 100.0)),
            Some(t),
            &PowerCost {
                kw_per_gpu: Some(r.wild()),
                tco_per_gpu_hour: Some(r.wild()),
            },
        );
        for v in [
            m.revenue_per_mw_year,
            m.tokens_per_dollar,
            m.revenue_per_gpu_hour,
        ]
        .into_iter()
        .flatten()
        {
            assert!(!v.is_nan());
        }
    }
}

fn random_frontier(r: &mut Rng) -> Vec<PointFacts> {
    let n = 1 + (r.next() % 6) as usize;
    (0..n)
        .map(|_| {
            let h = if r.unit() < 0.8 { Some(r.unit()) } else { None };
            let e = if r.unit() < 0.8 {
                Some(true)
            } else if r.unit() < 0.5 {
                Some(false)
            } else {
                None
            };
            let s = if r.unit() < 0.9 { Some(r.unit()) } else { None };
            knot(r.range(1.0, 200.0), r.range(0.0, 20_000.0), s, h, e)
        })
        .collect()
}

#[test]
fn frontier_clamps_hold_and_strict_never_exceeds_its_knots() {
    let mut r = Rng(7);
    let policies = [
        PricingPolicy::Strict,
        PricingPolicy::Theoretical,
        PricingPolicy::Legacy,
    ];
    for _ in 0..5_000 {
        let ks = random_frontier(&mut r);
        let c = r.card();
        let target = r.range(-10.0, 220.0);
        for p in policies {
            for mode in [LegacySurface::Calculator, LegacySurface::Trend] {
                let out = interpolate_frontier(&ks, target, &c, p, mode);
                let xs: Vec<f64> = out.frontier.iter().map(|k| k.x).collect();
                let ts: Vec<f64> = out.frontier.iter().map(|k| k.throughput_per_gpu).collect();
                if let Some(t) = out.throughput_per_gpu {
                    let lo = ts.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = ts.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    assert!(t.is_finite() && t >= lo && t <= hi);
                }
                if let Some(h) = out.hit_rate {
                    assert!((0.0..=1.0).contains(&h));
                }
                if let Some(s) = out.input_share {
                    assert!((0.0..=1.0).contains(&s));
                }
                if let Some(v) = out.revenue_per_gpu_hour {
                    assert!(v.is_finite() && v >= 0.0);
                    assert!(out.priced);
                }
                let inside = !xs.is_empty() && target >= xs[0] && target <= xs[xs.len() - 1];
                if (p != PricingPolicy::Legacy || mode == LegacySurface::Trend) && out.priced {
                    assert!(inside || (xs.len() == 1 && (target - xs[0]).abs() <= 1e-6));
                }
                if out.priced && p == PricingPolicy::Strict {
                    // every knot the target touches is priced
                    assert!(out.segment.iter().all(|k| k.priced));
                }
                assert_eq!(
                    out.clamped,
                    out.clamped_above || out.clamped_below || (xs.len() == 1 && out.clamped)
                );
            }
        }
    }
}

#[test]
fn spline_stays_within_knots() {
    let mut r = Rng(99);
    for _ in 0..5_000 {
        let n = 1 + (r.next() % 8) as usize;
        let mut xs: Vec<f64> = (0..n).map(|_| r.range(0.0, 100.0)).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let ys: Vec<f64> = xs.iter().map(|_| r.range(-5.0, 5.0)).collect();
        let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        for _ in 0..20 {
            let v = spline(&xs, &ys, r.range(-10.0, 110.0));
            assert!(v.is_finite() && v >= lo && v <= hi);
        }
        for (x, y) in xs.iter().zip(&ys) {
            assert_close(spline(&xs, &ys, *x), *y);
        }
    }
}

#[test]
fn point_pricing_never_yields_nan() {
    let mut r = Rng(1234);
    let policies = [
        PricingPolicy::Strict,
        PricingPolicy::Theoretical,
        PricingPolicy::Legacy,
    ];
    for _ in 0..10_000 {
        let mut m = serde_json::Map::new();
        for k in [
            "tput_per_gpu",
            "input_tput_per_gpu",
            "output_tput_per_gpu",
            "server_gpu_cache_hit_rate",
            "server_cpu_cache_hit_rate",
            "server_external_cache_hit_rate",
            "theoretical_cache_hit_rate",
            "total_prompt_tokens",
            "total_generation_tokens",
            "cache_pricing_eligible",
        ] {
            if r.unit() < 0.5 {
                let v = r.wild();
                m.insert(
                    k.into(),
                    serde_json::json!(if v.is_finite() { v } else { r.range(0.0, 1.0) }),
                );
            }
        }
        let hw = r.pick(&["gb300", "b200"]);
        let f = agentic(Some(hw), serde_json::Value::Object(m));
        let c = r.card();
        for p in policies {
            let o = price_point(&f, &c, p);
            assert_eq!(o.priced, o.revenue_per_gpu_hour.is_some());
            if let Some(v) = o.revenue_per_gpu_hour {
                assert!(v.is_finite(), "{v}");
            }
            if let Some(h) = o.hit_rate {
                assert!((0.0..=1.0).contains(&h));
            }
            if !o.priced {
                assert!(o.reasons.iter().any(|r| r.code.refuses()));
            }
        }
    }
}
