//! The three consumers' path end to end: account a run, hand the result to pricing. An
//! eligible run is priced with its measured rate; an ineligible one is refused with the
//! verdict's reasons, never priced as "no cache".

use kvledger::account::{account_run, Policy};
use kvledger::pricing::point::{CacheObservation, ObservedPoint, PointInput};
use kvledger::pricing::policy::price_point;
use kvledger::pricing::rate_card::shipped_card;
use kvledger::pricing::PricingPolicy;
use kvledger::read::{read_run, run_dir::discover, InputFile, RunOptions};
use std::path::Path;

fn account(dir: &str) -> kvledger::account::Accounting {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let files = discover(&root).expect("run dir");
    let inputs: Vec<InputFile<'_>> = files
        .iter()
        .map(|p| InputFile::path(p.display().to_string(), p.clone()))
        .collect();
    account_run(
        &read_run(&inputs, &RunOptions::default()).expect("run"),
        &Policy::default(),
    )
}

fn point(cache: CacheObservation) -> PointInput {
    PointInput::Observed(ObservedPoint {
        throughput_per_gpu: Some(2000.0),
        input_share: Some(0.9),
        cache: Some(cache),
        ..ObservedPoint::default()
    })
}

#[test]
fn eligible_run_is_priced_with_its_measured_rate() {
    let a = account("examples/synth/vllm-agg-clean");
    assert!(a.cache_validity.pricing_eligible);
    let obs = CacheObservation::from_accounting(&a).expect("observation");
    let card = shipped_card("normalized").expect("card");
    let out = price_point(&point(obs).facts(), &card, PricingPolicy::Strict);
    assert!(out.priced, "{out:?}");
    let h = out.hit_rate.expect("hit rate");
    assert!((h - a.rates.overall.expect("overall").value.expect("a value")).abs() < 1e-12);
}

#[test]
fn ineligible_run_is_refused_not_priced_as_no_cache() {
    let a = account("examples/synth/vllm-agg-counter-reset");
    assert!(!a.cache_validity.pricing_eligible);
    let obs = CacheObservation::from_accounting(&a).expect("observation");
    let card = shipped_card("normalized").expect("card");
    let out = price_point(&point(obs.clone()).facts(), &card, PricingPolicy::Strict);
    assert!(!out.priced);
    assert!(
        out.reasons
            .iter()
            .any(|r| r.code.as_str() == "cache-ineligible"),
        "{out:?}"
    );
    assert!(out.revenue_per_gpu_hour.is_none());
    // Legacy reproduces today's dashboard, which would have priced it.
    let legacy = price_point(&point(obs).facts(), &card, PricingPolicy::Legacy);
    assert!(legacy.priced);
}
