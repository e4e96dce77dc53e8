//! Stage 2b, is anything measured (contract sections 3 and 6): engine metrics on a priced
//! role (`NOT_MEASURED`), the launch facts' priced workers all scraped (`worker_missing`), and
//! some endpoint with the prefill or unified role (`no_priced_role`).

use super::evidence::Evidence;
use super::roles::Deployment;
use super::verdict::{Reason, ReasonCode};
use crate::engines::Engine;
use crate::inspect::host_port;
use crate::model::{LaunchFacts, Role};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Run the checks; returns the priced workers the launch facts list that were not scraped,
/// with their role (their counters are unknown, so the role's sums are unbounded above).
pub fn check(
    ev: &Evidence,
    engines: &BTreeMap<Arc<str>, Engine>,
    dep: &Deployment,
    launch: Option<&LaunchFacts>,
    reasons: &mut Vec<Reason>,
) -> Vec<(String, Role)> {
    let framework = launch.and_then(|l| l.framework.as_deref());
    if engines.is_empty() {
        let unsupported = framework.filter(|f| {
            Engine::from_framework(f).is_none() && !f.to_ascii_lowercase().contains("dynamo")
        });
        reasons.push(match unsupported {
            Some(f) => Reason::new(
                ReasonCode::UnsupportedEngine,
                format!("framework `{f}` has no kvledger adapter and no supported engine metrics were found"),
            ),
            None => Reason::new(
                ReasonCode::NoEngineMetrics,
                "no endpoint exports vLLM, SGLang, TensorRT-LLM or ATOM metrics",
            ),
        });
    } else if !dep.maybe_priced {
        reasons.push(Reason::new(
            ReasonCode::NoEngineMetrics,
            "no prefill or unified endpoint exports engine metrics (decode re-counts prompts: never priced)",
        ));
    }
    let missing = launch
        .map(|l| workers_missing(ev, l, reasons))
        .unwrap_or_default();
    let unresolved = dep
        .decisions
        .iter()
        .any(|(u, d)| d.role.is_none() && engines.contains_key(u));
    if !engines.is_empty() && dep.maybe_priced && dep.priced.is_empty() && !unresolved {
        reasons.push(Reason::new(
            ReasonCode::NoPricedRole,
            "no endpoint has the prefill or unified role",
        ));
    }
    missing
}

/// The priced workers the launch facts list that were not scraped (`worker_missing`).
fn workers_missing(
    ev: &Evidence,
    l: &LaunchFacts,
    reasons: &mut Vec<Reason>,
) -> Vec<(String, Role)> {
    let scraped: BTreeSet<String> = crate::sort::set_of(ev.families.keys().map(|u| host_port(u)));
    let listed: BTreeMap<&String, Role> = crate::sort::map_of(
        l.prefill_endpoints
            .iter()
            .map(|e| (e, Role::Prefill))
            .chain(l.agg_endpoints.iter().map(|e| (e, Role::Unified)))
            .chain(
                l.endpoint_roles
                    .iter()
                    .filter(|(_, r)| matches!(r, Role::Prefill | Role::Unified))
                    .map(|(e, r)| (e, *r)),
            ),
    );
    let mut missing = Vec::new();
    for (hp, role) in listed {
        if !scraped.contains(hp) {
            missing.push((hp.clone(), role));
            reasons.push(
                Reason::new(
                    ReasonCode::WorkerMissing,
                    format!("the launch facts list {hp} as a priced worker but no metrics of it were scraped"),
                )
                .at(hp.clone()),
            );
        }
    }
    missing
}
