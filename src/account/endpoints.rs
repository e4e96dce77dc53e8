//! Stage 1, endpoints (contract sections 2–3): every endpoint the run names (exports,
//! `endpoint_info`, timed and untimed captures), the engine each runs (from the metric
//! prefixes it exports; a framework name is only a tie-break hint), and the facts roles are
//! decided from. Also what an engine adapter sees of an endpoint (`present_keys`).

use super::evidence::{Evidence, FamilyMap, LabelSets};
use super::lookup::{insert_sorted, of_family, Cursor};
use super::roles::EndpointFacts;
use crate::engines::{detect_engine, dynamo, sglang, trtllm, Counter, Engine, Present};
use crate::model::{Labels, LaunchFacts, MetricType};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The run's endpoints: role facts for every one, the engine of those that run one.
#[derive(Debug, Clone, Default)]
pub struct Endpoints {
    pub facts: BTreeMap<Arc<str>, EndpointFacts>,
    pub engines: BTreeMap<Arc<str>, Engine>,
}

/// Detect every endpoint's engine and gather its role facts.
pub fn detect(ev: &Evidence, launch: Option<&LaunchFacts>) -> Endpoints {
    let framework = launch.and_then(|l| l.framework.as_deref());
    let mut out = Endpoints::default();
    let no_families = Arc::new(FamilyMap::new());
    let no_sets = Arc::new(LabelSets::default());
    let (mut families_of, mut label_sets_of) =
        (Cursor::new(&ev.families), Cursor::new(&ev.label_sets));
    // Endpoints of one deployment share one family map (`share_equal`): what it says is
    // found once for them all.
    let mut last: Option<(&Arc<FamilyMap>, Option<Engine>, bool)> = None;
    // In URL order, put into the maps at the end (`insert_sorted`).
    let (mut facts, mut engines) = (Vec::new(), Vec::new());
    for url in &ev.endpoints {
        let fams = families_of.get(url).unwrap_or(&no_families);
        let (engine, has_frontend) = match last {
            Some((f, engine, frontend)) if Arc::ptr_eq(f, fams) => (engine, frontend),
            _ => {
                let engine = detect_engine(fams.keys().map(|k| &**k), framework);
                let frontend = fams.keys().any(|k| dynamo::is_frontend_family(k));
                last = Some((fams, engine, frontend));
                (engine, frontend)
            }
        };
        // The evidence's shared set: endpoints of one deployment hold one copy.
        let label_sets = Arc::clone(label_sets_of.get(url).unwrap_or(&no_sets));
        facts.push((
            url.clone(),
            EndpointFacts {
                has_engine: engine.is_some(),
                has_frontend,
                label_sets,
            },
        ));
        if let Some(e) = engine {
            engines.push((url.clone(), e));
        }
    }
    insert_sorted(&mut out.facts, facts);
    insert_sorted(&mut out.engines, engines);
    out
}

/// The families an adapter may consult, plus markers for facts that depend on labels or type.
pub fn present_keys<'a>(ev: &'a Evidence, endpoint: &str, engine: Engine) -> Present<'a> {
    present_in(
        ev,
        endpoint,
        ev.families.get(endpoint).map(|f| &**f),
        engine,
    )
}

/// [`present_keys`] with the endpoint's families at hand.
pub fn present_in<'a>(
    ev: &'a Evidence,
    endpoint: &str,
    families: Option<&'a FamilyMap>,
    engine: Engine,
) -> Present<'a> {
    // Room for the markers added below (four at most: TensorRT-LLM's).
    let mut present = match families {
        Some(f) => Present::of_sorted(f.keys().map(|k| &**k), 4),
        None => Present::default(),
    };
    match engine {
        Engine::Sglang => {
            let sets: Vec<&Labels> = of_family(&ev.series, endpoint, sglang::CACHED)
                .map(|(k, _)| &*k.labels)
                .collect();
            match sglang::breakdown(sets) {
                sglang::Breakdown::Tiers => {
                    present.insert(sglang::MARK_TIERS);
                }
                sglang::Breakdown::TotalOnly => {
                    present.insert(sglang::MARK_TOTAL_ONLY);
                }
                sglang::Breakdown::Unlabelled => {}
            }
        }
        Engine::Trtllm => {
            let is_counter = families
                .and_then(|f| f.get(trtllm::CACHED))
                .is_some_and(|i| {
                    !matches!(
                        i.metric_type,
                        Some(MetricType::Histogram | MetricType::Gauge)
                    )
                })
                && of_family(&ev.series, endpoint, trtllm::CACHED)
                    .next()
                    .is_some();
            if is_counter {
                present.insert(trtllm::MARK_CACHED_COUNTER);
            }
            let fam_type = |k: &str| families.and_then(|f| f.get(k)).map(|i| i.metric_type);
            if fam_type(trtllm::CACHED_PER_REQUEST).is_some()
                || fam_type(trtllm::CACHED) == Some(Some(MetricType::Histogram))
            {
                present.insert(trtllm::MARK_CACHED_HISTOGRAM);
            }
            let tier_present = |c: Counter| {
                of_family(&ev.series, endpoint, trtllm::BY_TIER).any(|(k, _)| {
                    k.labels.get("cache_tier").and_then(trtllm::tier_counter) == Some(c)
                })
            };
            if tier_present(Counter::HitCpu) {
                present.insert(trtllm::MARK_HOST_TIER);
            }
            if tier_present(Counter::HitExternal) {
                present.insert(trtllm::MARK_EXTERNAL_TIER);
            }
        }
        Engine::Vllm => {
            let external =
                of_family(&ev.series, endpoint, crate::engines::vllm::BY_SOURCE).any(|(k, _)| {
                    k.labels
                        .get("source")
                        .is_some_and(|v| v.eq_ignore_ascii_case("external_kv_transfer"))
                });
            if external {
                present.insert(crate::engines::vllm::MARK_EXTERNAL_SOURCE);
            }
        }
        Engine::Atom => {}
    }
    present
}
