//! `strict` (the default) refuses ineligible, unmeasured and mix-unknown points with their
//! codes, and prices eligible ones exactly as `legacy` does.

#[path = "pricing_support/mod.rs"]
mod support;

use kvledger::account::verdict::Status;
use kvledger::pricing::point::{
    CacheObservation, ObservedPoint, RateInterval, TierRates, Workload,
};
use kvledger::pricing::policy::{price_point, PricingPolicy};
use kvledger::pricing::{PriceStatus, PricingCode};
use serde_json::json;
use support::*;

const S: PricingPolicy = PricingPolicy::Strict;
const L: PricingPolicy = PricingPolicy::Legacy;
const T: PricingPolicy = PricingPolicy::Theoretical;

fn codes(o: &kvledger::pricing::PriceOutcome) -> Vec<PricingCode> {
    o.reasons
        .iter()
        .filter(|r| r.code.refuses())
        .map(|r| r.code)
        .collect()
}

fn base() -> serde_json::Value {
    json!({"tput_per_gpu": 2000, "input_tput_per_gpu": 1600, "output_tput_per_gpu": 400,
           "server_gpu_cache_hit_rate": 0.8, "server_external_cache_hit_rate": 0.06,
           "server_cpu_cache_hit_rate": 0.07, "theoretical_cache_hit_rate": 0.95})
}

#[test]
fn strict_is_the_default() {
    assert_eq!(PricingPolicy::default(), S);
}

#[test]
fn eligible_rows_price_like_legacy() {
    let mut m = base();
    m["cache_pricing_eligible"] = json!(1);
    for card in [
        normalized(),
        card(2.0, None, 10.0),
        kvledger::pricing::shipped_card("kimi-k3-moonshot").unwrap(),
    ] {
        let f = agentic(Some("b200"), m.clone());
        let s = price_point(&f, &card, S);
        let l = price_point(&f, &card, L);
        assert!(s.priced, "{:?}", s.reasons);
        assert_eq!(s.revenue_per_gpu_hour, l.revenue_per_gpu_hour);
        assert_eq!(s.hit_rate, l.hit_rate);
        assert_eq!(s.input_share, l.input_share);
    }
    // the flag as a boolean on the row, and as the status alone
    for extra in [
        json!({"cache_pricing_eligible": true}),
        json!({"cache_validity_status": "VALID_COMPLETE"}),
    ] {
        let mut r =
            json!({"benchmark_type": "agentic_traces", "hardware": "b200", "metrics": base()});
        for (k, v) in extra.as_object().unwrap() {
            r[k] = v.clone();
        }
        let o = price_point(&row(r).facts(), &normalized(), S);
        assert!(o.priced, "{:?}", o.reasons);
        assert_close(
            o.revenue_per_gpu_hour.unwrap(),
            0.0036 * 2000.0 * (1.0 - 0.9 * 0.86 * 0.8),
        );
    }
}

#[test]
fn ineligible_is_refused_with_the_verdict_carried() {
    let mut m = base();
    m["cache_pricing_eligible"] = json!(0);
    m["cache_validity_status"] = json!("WINDOW_UNRESOLVED");
    let f = agentic(Some("gb300"), m);
    let o = price_point(&f, &normalized(), S);
    assert_eq!(o.status, PriceStatus::NotPriced);
    assert!(!o.priced);
    assert_eq!(o.revenue_per_gpu_hour, None);
    assert_eq!(codes(&o), vec![PricingCode::CacheIneligible]);
    assert_eq!(
        o.reasons[0].verdict_status.as_deref(),
        Some("WINDOW_UNRESOLVED")
    );
    // legacy ignores the verdict
    assert!(price_point(&f, &normalized(), L).priced);
    // from an accounting observation, with its reason codes
    let obs = ObservedPoint {
        throughput_per_gpu: Some(2000.0),
        input_share: Some(0.8),
        cache: Some(CacheObservation {
            status: Some(Status::RequestScopeUnresolved),
            pricing_eligible: Some(false),
            reasons: vec!["no_request_records".into()],
            rates: Some(TierRates {
                overall: rate(0.5),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let o = price_point(&obs.facts(), &normalized(), S);
    assert_eq!(codes(&o), vec![PricingCode::CacheIneligible]);
    assert_eq!(
        o.reasons[0].verdict_reasons,
        vec!["no_request_records".to_string()]
    );
}

#[test]
fn unmeasured_is_refused_not_priced_as_no_cache() {
    // agentic row without any cache key (the overview fixture's agentic rows)
    let f = agentic(
        Some("b200"),
        json!({"tput_per_gpu": 7500, "output_tput_per_gpu": 830}),
    );
    let o = price_point(&f, &normalized(), S);
    assert_eq!(codes(&o), vec![PricingCode::CacheUnmeasured]);
    // legacy prices it at the fresh price
    let l = price_point(&f, &normalized(), L);
    assert_close(l.revenue_per_gpu_hour.unwrap(), 27.0);
    assert!(l
        .reasons
        .iter()
        .any(|r| r.code == PricingCode::UnmeasuredNoDiscount));
    // eligible verdict but no rate
    let f = agentic(
        None,
        json!({"tput_per_gpu": 2000, "cache_pricing_eligible": 1}),
    );
    assert_eq!(
        codes(&price_point(&f, &normalized(), S)),
        vec![PricingCode::CacheUnmeasured]
    );
    // GB300 with only a theoretical rate: strict refuses (no fallback)
    let f = agentic(
        Some("gb300"),
        json!({"tput_per_gpu": 2000, "theoretical_cache_hit_rate": 0.97}),
    );
    assert_eq!(
        codes(&price_point(&f, &normalized(), S)),
        vec![PricingCode::CacheUnmeasured]
    );
}

#[test]
fn missing_or_malformed_validity_is_refused() {
    let f = agentic(None, base());
    assert_eq!(
        codes(&price_point(&f, &normalized(), S)),
        vec![PricingCode::CacheValidityMissing]
    );
    for bad in [json!("yes"), json!(2), json!(0.5)] {
        let mut m = base();
        m["cache_pricing_eligible"] = bad.clone();
        let o = price_point(&agentic(None, m), &normalized(), S);
        assert_eq!(
            codes(&o),
            vec![PricingCode::CacheValidityMalformed],
            "{bad}"
        );
    }
    let mut m = base();
    m["cache_pricing_eligible"] = json!(true);
    m["cache_validity_status"] = json!("COUNTERS_MISSING");
    assert_eq!(
        codes(&price_point(&agentic(None, m), &normalized(), S)),
        vec![PricingCode::CacheValidityMalformed]
    );
    let mut m = base();
    m["cache_validity_status"] = json!("SOMETHING_ELSE");
    assert_eq!(
        codes(&price_point(&agentic(None, m), &normalized(), S)),
        vec![PricingCode::CacheValidityMalformed]
    );
}

#[test]
fn out_of_range_rate_is_refused_not_clamped() {
    let f = agentic(
        None,
        json!({"tput_per_gpu": 2000, "server_gpu_cache_hit_rate": 1.185, "cache_pricing_eligible": 1}),
    );
    assert_eq!(
        codes(&price_point(&f, &normalized(), S)),
        vec![PricingCode::CacheRateInvalid]
    );
    assert_eq!(price_point(&f, &normalized(), L).hit_rate, Some(1.0));
}

#[test]
fn mix_unknown_is_refused_under_split_prices() {
    let or = card(2.0, None, 10.0);
    let f = agentic(
        None,
        json!({"tput_per_gpu": 2000, "server_gpu_cache_hit_rate": 0.5, "cache_pricing_eligible": 1}),
    );
    let o = price_point(&f, &or, S);
    assert_eq!(codes(&o), vec![PricingCode::NoTokenMix]);
    assert_eq!(o.hit_rate, Some(0.5));
    // under normalized prices with a discount, the share is needed too
    assert_eq!(
        codes(&price_point(&f, &normalized(), S)),
        vec![PricingCode::NoTokenMix]
    );
    // an explicit share outside [0, 1]
    let f = ObservedPoint {
        throughput_per_gpu: Some(1000.0),
        input_share: Some(1.5),
        workload: Workload::FixedSequence,
        ..Default::default()
    }
    .facts();
    assert_eq!(
        codes(&price_point(&f, &or, S)),
        vec![PricingCode::TokenMixInvalid]
    );
    let f = ObservedPoint {
        throughput_per_gpu: None,
        workload: Workload::FixedSequence,
        ..Default::default()
    }
    .facts();
    assert_eq!(
        codes(&price_point(&f, &or, S)),
        vec![PricingCode::NoThroughput]
    );
}

#[test]
fn observation_overall_rate_with_bounds() {
    let obs = ObservedPoint {
        throughput_per_gpu: Some(2000.0),
        input_share: Some(0.8),
        cache: Some(CacheObservation {
            status: Some(Status::ValidComplete),
            pricing_eligible: Some(true),
            rates: Some(TierRates {
                gpu: rate(0.5),
                cpu: rate(0.1),
                external: None,
                overall: Some(RateInterval {
                    value: Some(0.6),
                    lo: Some(0.598),
                    hi: Some(0.602),
                }),
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let f = obs.facts();
    let s = price_point(&f, &normalized(), S);
    let l = price_point(&f, &normalized(), L);
    assert_close(s.hit_rate.unwrap(), 0.6);
    // the legacy block (external carries C + X) gives the same h
    assert_close(l.hit_rate.unwrap(), 0.6);
    assert_close(
        s.revenue_per_gpu_hour.unwrap(),
        l.revenue_per_gpu_hour.unwrap(),
    );
    let b = s.revenue_bounds.unwrap();
    assert!(b.lo <= s.revenue_per_gpu_hour.unwrap() && s.revenue_per_gpu_hour.unwrap() <= b.hi);
    assert_close(b.lo, 0.0036 * 2000.0 * (1.0 - 0.9 * 0.602 * 0.8));
}

#[test]
fn theoretical_policy_for_every_hardware() {
    for hw in ["gb300", "b200", "mi355x"] {
        let o = price_point(&agentic(Some(hw), base()), &normalized(), T);
        assert!(o.priced);
        assert_eq!(o.hit_rate, Some(0.95));
    }
    let f = agentic(
        Some("b200"),
        json!({"tput_per_gpu": 2000, "server_gpu_cache_hit_rate": 0.5}),
    );
    assert_eq!(
        codes(&price_point(&f, &normalized(), T)),
        vec![PricingCode::CacheUnmeasured]
    );
    let f = agentic(
        Some("b200"),
        json!({"tput_per_gpu": 2000, "input_tput_per_gpu": 1000, "output_tput_per_gpu": 1000, "theoretical_cache_hit_rate": 1.3}),
    );
    let o = price_point(&f, &normalized(), T);
    assert_eq!(o.hit_rate, Some(1.0));
}

#[test]
fn fixed_sequence_without_telemetry_is_a_no_op() {
    let f = row(json!({"isl": 1024, "osl": 1024, "metrics": {"tput_per_gpu": 2000, "input_tput_per_gpu": 1000, "output_tput_per_gpu": 1000}})).facts();
    for p in [S, T, L] {
        let o = price_point(&f, &card(2.0, None, 10.0), p);
        assert!(o.priced);
        assert_eq!(o.hit_rate, None);
        assert_close(
            o.revenue_per_gpu_hour.unwrap(),
            2000.0 * 3600.0 * (0.5 * 2.0 + 0.5 * 10.0) / 1e6,
        );
    }
}

#[test]
fn reason_codes_are_stable_strings() {
    let want = [
        "cache-ineligible",
        "cache-unmeasured",
        "no-token-mix",
        "outside-measured-range",
    ];
    for (c, w) in PricingCode::ALL.iter().zip(want) {
        assert_eq!(c.as_str(), w);
        assert!(c.refuses());
    }
}
