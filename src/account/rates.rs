//! Rate intervals (CONTRACT section 4, last paragraph). In any sub-interval of time the hits
//! never exceed the prompt tokens, so for h = (N + n)/(D + d) with the unobserved parts
//! 0 ≤ n ≤ d: lo = N/(D + d_max) and hi = (N + m)/(D + m) with m = min(n_max, d_max).
//!
//! `n ≤ d` holds only when the numerator's unobserved mass lies in the same stretches of time
//! as the denominator's (same evidence, same edges, no gaps of its own). When it does not
//! (`aligned == false`, e.g. a hit series whose slices have a gap the prompt's do not), the
//! bound falls back to what holds regardless: hi = min(1, (N + n_max)/D).
//!
//! `value` is the ratio of the counters' point estimates (the exact values where exact; the
//! telemetry `stats.total` where the evidence bounds nothing; interval midpoints otherwise),
//! clamped into [lo, hi].

use super::interval::Interval;
use super::output::{Rates, TierAlias};
use super::priced::PricedSums;
use super::verdict::{Reason, ReasonCode};
use crate::engines::{Counter, TierContext};
use serde::Serialize;
use std::collections::BTreeSet;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct Rate {
    /// The point estimate; null when the denominator may be 0 (0/0 has no value).
    #[cfg_attr(target_arch = "wasm32", tsify(type = "number | null"))]
    pub value: Option<f64>,
    pub lo: f64,
    pub hi: f64,
}

impl Rate {
    pub fn width(&self) -> f64 {
        self.hi - self.lo
    }
}

/// The rate numerator/denominator, or `None` when the denominator is surely zero.
pub fn rate(num: Interval, den: Interval, aligned: bool) -> Option<Rate> {
    if den.hi <= 0.0 {
        return None;
    }
    let (n, d) = (num.lo, den.lo);
    let n_max = num.hi - num.lo;
    let d_max = den.hi - den.lo;
    let lo = if d_max.is_infinite() || d + d_max <= 0.0 {
        0.0
    } else {
        n / (d + d_max)
    };
    let m = n_max.min(d_max);
    let hi = if num.hi <= 0.0 {
        // No hit at all, whatever the prompt count.
        0.0
    } else if !aligned {
        if d > 0.0 && n_max.is_finite() {
            (n + n_max) / d
        } else {
            1.0
        }
    } else if m.is_infinite() || d + m <= 0.0 {
        1.0
    } else {
        (n + m) / (d + m)
    };
    let lo = lo.clamp(0.0, 1.0);
    let hi = hi.clamp(0.0, 1.0).max(lo);
    let value = (d > 0.0 && den.est > 0.0).then(|| (num.est / den.est).clamp(lo, hi));
    Some(Rate { value, lo, hi })
}

/// Stage 6, the tier rates of the priced role (contract section 2) with their checks: hits
/// surely above prompt tokens (`hits_exceed_prompt`), an overall rate wider than the policy
/// allows (`rate_too_wide`), a denominator that may be 0 (`no_prompt_in_window`).
pub fn tier_rates(
    p: &PricedSums,
    tiers: &TierContext,
    tier_aliases: &BTreeSet<(Counter, Counter)>,
    hits_uncounted: bool,
    max_rate_width: f64,
    reasons: &mut Vec<Reason>,
) -> Rates {
    let mut out = Rates {
        value_rule: "ratio of the counters' point estimates (exact where exact; stats.total telemetry where unbounded; interval midpoints otherwise), clamped into [lo, hi]; null when no prompt token is surely in the window".to_string(),
        tier_aliases: tier_aliases
            .iter()
            .map(|(a, b)| TierAlias {
                tier: *a,
                same_as: *b,
            })
            .collect(),
        ..Rates::default()
    };
    let Some(f) = p.prompt else {
        return out;
    };
    let aligned = p.aligned;
    out.gpu = p.hit_gpu.and_then(|g| rate(g, f, aligned));
    out.cpu = match (p.hit_cpu, tiers.offload_off()) {
        (Some(c), _) => rate(c, f, aligned),
        (None, true) if p.hit_gpu.is_some() => rate(Interval::ZERO, f, aligned),
        _ => None,
    };
    out.external = p.hit_external.and_then(|x| rate(x, f, aligned));
    out.overall = p.hits_all().and_then(|h| rate(h, f, aligned));
    if hits_uncounted {
        // Hits the engine counted as computed may be any part of the rest: never a silent
        // GPU-only overall rate.
        out.overall = out.overall.map(|o| Rate {
            value: None,
            hi: 1.0,
            ..o
        });
    }
    hits_exceed_prompt(p, f, reasons);
    if f.lo <= 0.0 {
        reasons.push(Reason::new(
            ReasonCode::NoPromptInWindow,
            format!(
                "no prompt token is surely inside the window (prompt tokens in [0, {}]): the rate has no value",
                fmt_hi(f.hi)
            ),
        ));
    }
    if let Some(o) = out.overall.filter(|o| o.width() > max_rate_width) {
        reasons.push(Reason::new(
            ReasonCode::RateTooWide,
            format!(
                "the overall rate is only known within [{:.6}, {:.6}] (width {:.6} > max_rate_width {})",
                o.lo,
                o.hi,
                o.width(),
                max_rate_width
            ),
        ));
    }
    out
}

fn hits_exceed_prompt(p: &PricedSums, f: Interval, reasons: &mut Vec<Reason>) {
    let tiers = [
        ("gpu", p.hit_gpu),
        ("cpu", p.hit_cpu),
        ("external", p.hit_external),
    ];
    let present = tiers.iter().filter(|(_, h)| h.is_some()).count();
    let all = p
        .hits_all()
        .filter(|_| present > 1)
        .map(|h| ("all", Some(h)));
    for (name, hit) in tiers.into_iter().chain(all) {
        if let Some(h) = hit.filter(|h| h.lo > f.hi) {
            reasons.push(Reason::new(
                ReasonCode::HitsExceedPrompt,
                format!(
                    "{name} hits ({}) exceed the prompt tokens ({})",
                    h.lo,
                    fmt_hi(f.hi)
                ),
            ));
        }
    }
}

pub(crate) fn fmt_hi(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "unbounded".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(lo: f64, hi: f64) -> Interval {
        Interval {
            lo,
            hi,
            est: if hi.is_finite() { (lo + hi) / 2.0 } else { lo },
        }
    }

    #[test]
    fn exact_counters_give_an_exact_rate() {
        let r = rate(Interval::exact(900.0), Interval::exact(1000.0), true).expect("rate");
        assert_eq!((r.value, r.lo, r.hi), (Some(0.9), 0.9, 0.9));
    }

    #[test]
    fn contract_formula() {
        // N = 800 (+ up to 100), D = 1000 (+ up to 150).
        let r = rate(iv(800.0, 900.0), iv(1000.0, 1150.0), true).expect("rate");
        assert!((r.lo - 800.0 / 1150.0).abs() < 1e-12);
        assert!((r.hi - 900.0 / 1100.0).abs() < 1e-12);
        assert!(r.value.is_some_and(|v| r.lo <= v && v <= r.hi));
    }

    #[test]
    fn truth_is_always_inside() {
        // Brute force: any split with n <= d lies in [lo, hi].
        let (num, den) = (iv(50.0, 80.0), iv(100.0, 140.0));
        let r = rate(num, den, true).expect("rate");
        for d in 0..=40 {
            for n in 0..=d.min(30) {
                let h = (50.0 + n as f64) / (100.0 + d as f64);
                assert!(h >= r.lo - 1e-12 && h <= r.hi + 1e-12, "{h} not in {r:?}");
            }
        }
    }

    #[test]
    fn misaligned_evidence_uses_the_general_bound() {
        // n may exceed d: (50 + 30)/(100 + 0) is possible.
        let r = rate(iv(50.0, 80.0), iv(100.0, 140.0), false).expect("rate");
        assert!((r.hi - 0.8).abs() < 1e-12);
        assert!((r.lo - 50.0 / 140.0).abs() < 1e-12);
    }

    #[test]
    fn unbounded() {
        let r = rate(
            Interval::unbounded(900.0),
            Interval::unbounded(1000.0),
            true,
        )
        .expect("rate");
        assert_eq!((r.lo, r.hi), (0.0, 1.0));
        // The prompt count may be 0: 0/0 has no value.
        assert_eq!(r.value, None);
        assert!(rate(Interval::ZERO, Interval::ZERO, true).is_none());
    }

    #[test]
    fn zero_traffic_has_no_value() {
        // Prompt tokens in [0, 40]: the midpoint of [0, 1] would be a number made from nothing.
        let r = rate(iv(0.0, 10.0), iv(0.0, 40.0), true).expect("rate");
        assert_eq!(r.value, None);
        assert_eq!((r.lo, r.hi), (0.0, 1.0));
        let none = rate(Interval::ZERO, iv(0.0, 40.0), true).expect("rate");
        assert_eq!((none.value, none.lo, none.hi), (None, 0.0, 0.0));
    }
}
