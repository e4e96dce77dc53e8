//! Helpers shared by the pricing tests (not a test target itself).
#![allow(dead_code)]

use kvledger::account::verdict::Status;
use kvledger::pricing::point::{
    BenchmarkRow, CacheObservation, ObservedPoint, PointFacts, RateInterval, TierRates, Workload,
};
use kvledger::pricing::{shipped_card, RateCard, UsageConvention};
use serde_json::{json, Value};

pub fn row(v: Value) -> BenchmarkRow {
    serde_json::from_value(v).expect("row")
}

/// An agentic row with these flat metrics.
pub fn agentic(hw: Option<&str>, metrics: Value) -> PointFacts {
    let mut r =
        json!({"benchmark_type": "agentic_traces", "isl": null, "osl": null, "metrics": metrics});
    if let Some(h) = hw {
        r["hardware"] = json!(h);
    }
    row(r).facts()
}

pub fn normalized() -> RateCard {
    shipped_card("normalized").unwrap()
}

/// A split-price card (OpenRouter-like): input `i`, output `o`, cached `c` (None: 10 %).
pub fn card(i: f64, c: Option<f64>, o: f64) -> RateCard {
    RateCard {
        name: "test".into(),
        label: None,
        model: None,
        as_of: "2026-09-23".into(),
        source: None,
        input_per_million: i,
        cached_input_per_million: c,
        cached_input_ratio: None,
        output_per_million: o,
        cache_write_per_million: None,
        usage_convention: UsageConvention::Subset,
        lab_share_pct: None,
    }
}

pub fn rate(v: f64) -> Option<RateInterval> {
    Some(RateInterval {
        value: Some(v),
        lo: None,
        hi: None,
    })
}

/// An observed agentic point at interactivity `x`, throughput `t`, input share `s`, with an
/// overall measured rate `h` and eligibility `eligible` (None: no verdict).
pub fn knot(x: f64, t: f64, s: Option<f64>, h: Option<f64>, eligible: Option<bool>) -> PointFacts {
    let cache = if h.is_none() && eligible.is_none() {
        None
    } else {
        Some(CacheObservation {
            status: eligible.map(|e| {
                if e {
                    Status::ValidComplete
                } else {
                    Status::WindowUnresolved
                }
            }),
            pricing_eligible: eligible,
            reasons: if eligible == Some(false) {
                vec!["rate_too_wide".into()]
            } else {
                vec![]
            },
            rates: h.map(|h| TierRates {
                gpu: rate(h),
                cpu: None,
                external: None,
                overall: rate(h),
            }),
            theoretical_hit_rate: None,
            tokens: None,
        })
    };
    ObservedPoint {
        workload: Workload::PrefixReuse,
        throughput_per_gpu: Some(t),
        input_share: s,
        interactivity: Some(x),
        cache,
        ..Default::default()
    }
    .facts()
}

pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

#[track_caller]
pub fn assert_close(a: f64, b: f64) {
    assert!(close(a, b), "{a} != {b}");
}

/// SplitMix64: the pricing property tests' deterministic random source. Each test adds the
/// draws it needs in its own `impl Rng` block.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}
