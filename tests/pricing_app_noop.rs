//! Pricing is an exact no-op on rows without cache telemetry (the dashboard's own fixtures,
//! tests/fixtures/app/ORIGIN.md).

#[path = "pricing_support/mod.rs"]
mod support;

use kvledger::pricing::point::BenchmarkRow;
use kvledger::pricing::policy::{price_point, price_point_on, PricingPolicy};
use kvledger::pricing::revenue::revenue_per_gpu_hour;
use kvledger::pricing::share::input_token_share;
use kvledger::pricing::{shipped_cards, LegacySurface, PricingCode, ShareSource};
use std::collections::BTreeMap;
use support::*;

fn benchmarks() -> Vec<BenchmarkRow> {
    serde_json::from_str(include_str!("fixtures/app/cypress-api-benchmarks.json")).unwrap()
}

fn legacy(
    f: &kvledger::pricing::PointFacts,
    c: &kvledger::pricing::RateCard,
    s: LegacySurface,
) -> kvledger::pricing::PriceOutcome {
    price_point_on(f, c, PricingPolicy::Legacy, s)
}

#[test]
fn cypress_rows_price_identically_under_strict_and_legacy() {
    let rows = benchmarks();
    assert_eq!(rows.len(), 435);
    let mut cards = shipped_cards();
    cards.push(card(2.0, None, 10.0));
    let mut by_share_rule = BTreeMap::new();
    let mut calculator_all_output = 0;
    for c in &cards {
        let p = c.prices();
        for r in &rows {
            let f = r.facts();
            assert!(!f.has_cache_telemetry);
            let s = price_point(&f, c, PricingPolicy::Strict);
            let l = legacy(&f, c, LegacySurface::Chart);
            let t = price_point(&f, c, PricingPolicy::Theoretical);
            assert!(s.priced && l.priced && t.priced, "{:?}", s.reasons);
            assert_eq!(s.hit_rate, None);
            assert_eq!(l.hit_rate, None);
            assert_eq!(s.revenue_per_gpu_hour, l.revenue_per_gpu_hour);
            assert_eq!(t.revenue_per_gpu_hour, l.revenue_per_gpu_hour);
            let trend = legacy(&f, c, LegacySurface::Trend);
            assert_eq!(trend.revenue_per_gpu_hour, l.revenue_per_gpu_hour);
            // the calculator reads a missing output_tput_per_gpu as the total: the two
            // fixture rows without it (isl 1024, osl 8192) are billed as all output
            let calc = legacy(&f, c, LegacySurface::Calculator);
            let tput = r.metric("tput_per_gpu").unwrap();
            if r.metric("output_tput_per_gpu").is_none() {
                calculator_all_output += 1;
                assert_eq!((r.isl, r.osl), (Some(1024.0), Some(8192.0)));
                assert_eq!(calc.input_share, Some(0.0));
                assert_eq!(calc.share_source, ShareSource::OutputDefaultedToTotal);
                assert_close(
                    calc.revenue_per_gpu_hour.unwrap(),
                    tput * 3600.0 * p.output / 1e6,
                );
            } else {
                assert_eq!(calc.revenue_per_gpu_hour, l.revenue_per_gpu_hour);
            }
            assert!(s
                .reasons
                .iter()
                .all(|r| r.code == PricingCode::NoCacheTelemetry));
            // the no-cache formula, bit for bit, with h = 0
            let (share, src) = input_token_share(&f);
            let share = share.unwrap();
            *by_share_rule.entry(format!("{src:?}")).or_insert(0) += 1;
            let no_cache = tput * 3600.0 * (share * p.input + (1.0 - share) * p.output) / 1e6;
            let with_zero = revenue_per_gpu_hour(tput, Some(share), Some(0.0), &p).unwrap();
            assert_eq!(with_zero, s.revenue_per_gpu_hour.unwrap());
            if p.input != p.output {
                assert_eq!(no_cache, s.revenue_per_gpu_hour.unwrap());
            } else {
                assert_eq!(
                    tput * 3600.0 * p.input / 1e6,
                    s.revenue_per_gpu_hour.unwrap()
                );
            }
        }
    }
    // 433 rows carry input/output throughput, but only 198 add up to the total within 1 %
    // (disaggregated and inconsistent rows fall back to ISL:OSL, like the 2 without them)
    let n = cards.len();
    assert_eq!(calculator_all_output, 2 * n);
    assert_eq!(by_share_rule.get("Throughput"), Some(&(198 * n)));
    assert_eq!(by_share_rule.get("SequenceLengths"), Some(&(237 * n)));
}

#[test]
fn overview_rows() {
    let v: BTreeMap<String, Vec<BenchmarkRow>> =
        serde_json::from_str(include_str!("fixtures/app/cypress-api-overview-rows.json")).unwrap();
    let rows: Vec<BenchmarkRow> = v.into_values().flatten().collect();
    let or = card(2.0, None, 10.0);
    let mut agentic = 0;
    for r in &rows {
        let f = r.facts();
        let s = price_point(&f, &normalized(), PricingPolicy::Strict);
        let l = legacy(&f, &normalized(), LegacySurface::Chart);
        if r.benchmark_type.as_deref() == Some("agentic_traces") {
            agentic += 1;
            // h missing and mix unknown (output present, input absent, 1 % rule fails):
            // the chart and trend price it only under equal prices; so does the calculator,
            // since its output default needs output_tput_per_gpu to be missing
            assert!(l.priced);
            for surface in LegacySurface::ALL {
                assert!(!legacy(&f, &or, surface).priced);
            }
            assert!(!s.priced);
            assert!(s
                .reasons
                .iter()
                .any(|r| r.code == PricingCode::CacheUnmeasured));
        } else {
            assert!(s.priced && l.priced);
            assert_eq!(s.revenue_per_gpu_hour, l.revenue_per_gpu_hour);
        }
    }
    assert_eq!(agentic, 3);
}
