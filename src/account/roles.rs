//! Roles (CONTRACT section 3): each endpoint becomes `prefill`, `decode`, `unified`,
//! `frontend` or `excluded`, with the source of that decision: `launch` (the launch facts list
//! its `host:port`), `labels` (`dynamo_component`, `disaggregation_mode`, `engine_type`,
//! `engine_role`, a role in the URL path, or frontend-only families), or `single_endpoint`
//! (exactly one engine endpoint and the launch facts say not disaggregated).

use super::verdict::{Reason, ReasonCode};
use crate::inspect::{host_port, role_from_path};
use crate::model::{Labels, LaunchFacts, Role};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum RoleSource {
    Launch,
    Labels,
    SingleEndpoint,
    Unresolved,
}

/// What the role step needs to know about one endpoint.
#[derive(Debug, Clone, Default)]
pub struct EndpointFacts {
    /// Exports engine families (vllm:, sglang:, trtllm_, atom:).
    pub has_engine: bool,
    /// Exports Dynamo frontend families.
    pub has_frontend: bool,
    /// Label sets of its series (role labels are read from them).
    pub label_sets: Vec<Labels>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleDecision {
    pub role: Option<Role>,
    pub source: RoleSource,
}

/// A role named by one label value, if any. Dynamo names its aggregated worker and the
/// decode worker of a P/D deployment alike (`backend`): it is decode only when the run also
/// has a `prefill` component (`disaggregated_run`).
fn role_from_labels(labels: &Labels, disaggregated_run: bool) -> Option<Role> {
    let get = |k: &str| labels.get(k).map(|v| v.to_ascii_lowercase());
    if let Some(c) = get("dynamo_component").or_else(|| get("component")) {
        match c.as_str() {
            "prefill" | "prefill_worker" => return Some(Role::Prefill),
            "backend" if disaggregated_run => return Some(Role::Decode),
            "backend" => return Some(Role::Unified),
            "decode" | "decode_worker" => return Some(Role::Decode),
            "frontend" | "router" => return Some(Role::Frontend),
            _ => {}
        }
    }
    if let Some(m) = get("disaggregation_mode") {
        match m.as_str() {
            "prefill" | "context" | "ctx" => return Some(Role::Prefill),
            "decode" | "generation" | "gen" => return Some(Role::Decode),
            "prefill_and_decode" | "aggregated" | "agg" => return Some(Role::Unified),
            _ => {}
        }
    }
    for key in ["engine_type", "engine_role", "worker_type"] {
        if let Some(v) = get(key) {
            match v.as_str() {
                "prefill" => return Some(Role::Prefill),
                "decode" => return Some(Role::Decode),
                "unified" | "aggregated" => return Some(Role::Unified),
                _ => {}
            }
        }
    }
    None
}

/// The launch facts' role for a `host:port`.
fn role_from_launch(launch: &LaunchFacts, hp: &str) -> Vec<Role> {
    let mut roles = BTreeSet::new();
    if launch.prefill_endpoints.iter().any(|e| e == hp) {
        roles.insert(Role::Prefill);
    }
    if launch.decode_endpoints.iter().any(|e| e == hp) {
        roles.insert(Role::Decode);
    }
    if launch.agg_endpoints.iter().any(|e| e == hp) {
        roles.insert(Role::Unified);
    }
    if let Some(r) = launch.endpoint_roles.get(hp) {
        roles.insert(*r);
    }
    roles.into_iter().collect()
}

/// Decide every endpoint's role. Reasons: `role_conflict` where launch facts and labels
/// disagree, `role_unresolved` for an engine endpoint nothing decides.
pub fn assign(
    endpoints: &BTreeMap<String, EndpointFacts>,
    launch: Option<&LaunchFacts>,
    reasons: &mut Vec<Reason>,
) -> BTreeMap<String, RoleDecision> {
    let launch_lists_roles = launch.is_some_and(|l| {
        !(l.prefill_endpoints.is_empty()
            && l.decode_endpoints.is_empty()
            && l.agg_endpoints.is_empty()
            && l.endpoint_roles.is_empty())
    });
    let engine_endpoints = endpoints.values().filter(|e| e.has_engine).count();
    let disaggregated_run = launch.and_then(|l| l.disaggregated).unwrap_or_else(|| {
        endpoints.values().flat_map(|e| &e.label_sets).any(|l| {
            l.get("dynamo_component")
                .or_else(|| l.get("component"))
                .is_some_and(|c| c.eq_ignore_ascii_case("prefill"))
        })
    });
    let mut out = BTreeMap::new();
    for (url, facts) in endpoints {
        let hp = host_port(url);
        let from_launch = launch.map(|l| role_from_launch(l, &hp)).unwrap_or_default();
        let mut labelled: BTreeSet<Role> = facts
            .label_sets
            .iter()
            .filter_map(|l| role_from_labels(l, disaggregated_run))
            .collect();
        if let Some(r) = role_from_path(url) {
            labelled.insert(r);
        }
        // A Dynamo frontend may re-export its workers' series (with their role labels): the
        // frontend families decide.
        if facts.has_frontend {
            labelled.clear();
            labelled.insert(Role::Frontend);
        }
        let decision = if from_launch.len() > 1 {
            reasons.push(
                Reason::new(
                    ReasonCode::RoleConflict,
                    format!("the launch facts list {hp} under several roles"),
                )
                .at(url.clone()),
            );
            RoleDecision {
                role: None,
                source: RoleSource::Unresolved,
            }
        } else if let Some(r) = from_launch.first() {
            // A frontend (or an excluded endpoint) may re-export its workers' series with their
            // role labels: the launch facts decide.
            let relabels = matches!(r, Role::Frontend | Role::Excluded);
            if !relabels && labelled.iter().any(|l| l != r && *l != Role::Frontend) {
                reasons.push(
                    Reason::new(
                        ReasonCode::RoleConflict,
                        format!(
                            "launch facts say {r:?} but the series labels say {:?}",
                            labelled.iter().collect::<Vec<_>>()
                        )
                        .to_lowercase(),
                    )
                    .at(url.clone()),
                );
                RoleDecision {
                    role: None,
                    source: RoleSource::Unresolved,
                }
            } else {
                RoleDecision {
                    role: Some(*r),
                    source: RoleSource::Launch,
                }
            }
        } else if labelled.len() == 1 {
            RoleDecision {
                role: labelled.first().copied(),
                source: RoleSource::Labels,
            }
        } else if labelled.len() > 1 {
            reasons.push(
                Reason::new(
                    ReasonCode::RoleConflict,
                    format!("series labels name several roles: {labelled:?}").to_lowercase(),
                )
                .at(url.clone()),
            );
            RoleDecision {
                role: None,
                source: RoleSource::Unresolved,
            }
        } else if !facts.has_engine {
            RoleDecision {
                role: Some(Role::Excluded),
                source: if launch_lists_roles {
                    RoleSource::Launch
                } else {
                    RoleSource::Labels
                },
            }
        } else if engine_endpoints == 1
            && launch.is_some_and(|l| l.disaggregated == Some(false))
            && !launch_lists_roles
        {
            RoleDecision {
                role: Some(Role::Unified),
                source: RoleSource::SingleEndpoint,
            }
        } else {
            reasons.push(
                Reason::new(
                    ReasonCode::RoleUnresolved,
                    if launch_lists_roles {
                        format!("{hp} exports engine metrics but no launch list, label or path names its role")
                    } else {
                        format!("{hp}: no launch facts, role label or URL path decides its role")
                    },
                )
                .at(url.clone()),
            );
            RoleDecision {
                role: None,
                source: RoleSource::Unresolved,
            }
        };
        out.insert(url.clone(), decision);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eng(labels: &[(&str, &str)]) -> EndpointFacts {
        EndpointFacts {
            has_engine: true,
            has_frontend: false,
            label_sets: vec![labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()],
        }
    }

    #[test]
    fn launch_first_then_labels_then_single() {
        let mut eps = BTreeMap::new();
        eps.insert("http://10.0.0.1:8000/metrics".to_string(), eng(&[]));
        eps.insert(
            "http://10.0.0.2:8000/metrics".to_string(),
            eng(&[("engine_type", "decode")]),
        );
        let launch = LaunchFacts {
            prefill_endpoints: vec!["10.0.0.1:8000".into()],
            ..Default::default()
        };
        let mut reasons = Vec::new();
        let r = assign(&eps, Some(&launch), &mut reasons);
        assert!(reasons.is_empty(), "{reasons:?}");
        assert_eq!(r["http://10.0.0.1:8000/metrics"].role, Some(Role::Prefill));
        assert_eq!(r["http://10.0.0.1:8000/metrics"].source, RoleSource::Launch);
        assert_eq!(r["http://10.0.0.2:8000/metrics"].role, Some(Role::Decode));
        assert_eq!(r["http://10.0.0.2:8000/metrics"].source, RoleSource::Labels);

        let mut one = BTreeMap::new();
        one.insert("http://h:1/metrics".to_string(), eng(&[]));
        let agg = LaunchFacts {
            disaggregated: Some(false),
            ..Default::default()
        };
        let r = assign(&one, Some(&agg), &mut reasons);
        assert_eq!(r["http://h:1/metrics"].source, RoleSource::SingleEndpoint);
        let r = assign(&one, None, &mut reasons);
        assert_eq!(r["http://h:1/metrics"].role, None);
        assert_eq!(reasons.len(), 1);
        assert_eq!(reasons[0].code, ReasonCode::RoleUnresolved);
    }

    #[test]
    fn conflicts() {
        let mut eps = BTreeMap::new();
        eps.insert(
            "http://10.0.0.1:8000/metrics".to_string(),
            eng(&[("dynamo_component", "backend")]),
        );
        let launch = LaunchFacts {
            prefill_endpoints: vec!["10.0.0.1:8000".into()],
            ..Default::default()
        };
        let mut reasons = Vec::new();
        let r = assign(&eps, Some(&launch), &mut reasons);
        assert_eq!(r["http://10.0.0.1:8000/metrics"].role, None);
        assert_eq!(reasons[0].code, ReasonCode::RoleConflict);
    }

    #[test]
    fn path_roles_and_frontends() {
        let mut eps = BTreeMap::new();
        eps.insert("http://h:1/prefill/metrics".to_string(), eng(&[]));
        eps.insert(
            "http://h:2/metrics".to_string(),
            EndpointFacts {
                has_engine: false,
                has_frontend: true,
                label_sets: vec![],
            },
        );
        let mut reasons = Vec::new();
        let r = assign(&eps, None, &mut reasons);
        assert_eq!(r["http://h:1/prefill/metrics"].role, Some(Role::Prefill));
        assert_eq!(r["http://h:2/metrics"].role, Some(Role::Frontend));
        assert!(reasons.is_empty());
    }
}
