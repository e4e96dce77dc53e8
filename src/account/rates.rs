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
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct Rate {
    pub value: f64,
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
    if num.hi <= 0.0 {
        // No hit at all, whatever the prompt count: exactly 0.
        return Some(Rate {
            value: 0.0,
            lo: 0.0,
            hi: 0.0,
        });
    }
    let (n, d) = (num.lo, den.lo);
    let n_max = num.hi - num.lo;
    let d_max = den.hi - den.lo;
    let lo = if d_max.is_infinite() {
        0.0
    } else if d + d_max > 0.0 {
        n / (d + d_max)
    } else {
        0.0
    };
    let m = n_max.min(d_max);
    let hi = if !aligned {
        if d > 0.0 && n_max.is_finite() {
            (n + n_max) / d
        } else {
            1.0
        }
    } else if m.is_infinite() {
        1.0
    } else if d + m > 0.0 {
        (n + m) / (d + m)
    } else {
        1.0
    };
    let (lo, hi) = (
        lo.clamp(0.0, 1.0),
        hi.clamp(0.0, 1.0).max(lo.clamp(0.0, 1.0)),
    );
    let value = if den.est > 0.0 {
        (num.est / den.est).clamp(lo, hi)
    } else {
        (lo + hi) / 2.0
    };
    Some(Rate { value, lo, hi })
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
        assert_eq!((r.value, r.lo, r.hi), (0.9, 0.9, 0.9));
    }

    #[test]
    fn contract_formula() {
        // N = 800 (+ up to 100), D = 1000 (+ up to 150).
        let r = rate(iv(800.0, 900.0), iv(1000.0, 1150.0), true).expect("rate");
        assert!((r.lo - 800.0 / 1150.0).abs() < 1e-12);
        assert!((r.hi - 900.0 / 1100.0).abs() < 1e-12);
        assert!(r.lo <= r.value && r.value <= r.hi);
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
        assert_eq!(r.value, 0.9);
        assert!(rate(Interval::ZERO, Interval::ZERO, true).is_none());
    }
}
