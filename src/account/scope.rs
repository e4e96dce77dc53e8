//! Stage 8, scope (contract section 6): what pricing needs (`requested_scope`: the priced
//! role of the deployment and the tiers offloading may use) against what the evidence gave
//! (`observed_scope`), the CPU component, and a reason for every difference between the two.

use super::output::{Rates, Scope};
use super::roles::{role_name, Deployment};
use super::verdict::{CpuComponent, Reason, ReasonCode};
use crate::engines::TierContext;
use crate::model::{LaunchFacts, Role};

/// The two scopes and the CPU component.
pub struct Scopes {
    pub requested: Scope,
    pub observed: Scope,
    pub cpu_component: CpuComponent,
}

/// Decide both scopes; `scope_difference` names each requested role or tier not observed
/// and why (a failing reason elsewhere may already refuse the run for it).
pub fn decide(
    dep: &Deployment,
    launch: Option<&LaunchFacts>,
    tiers: &TierContext,
    rates: &Rates,
    cpu_measured_all: bool,
    reasons: &mut Vec<Reason>,
) -> Scopes {
    let cpu_component = if tiers.offload_off() {
        CpuComponent::NotOffloaded
    } else if cpu_measured_all {
        CpuComponent::Measured
    } else {
        CpuComponent::Missing
    };
    let mut observed_tiers = Vec::new();
    if rates.gpu.is_some() {
        observed_tiers.push("gpu".to_string());
    }
    if rates.cpu.is_some() || cpu_component == CpuComponent::NotOffloaded {
        observed_tiers.push("cpu".to_string());
    }
    if rates.external.is_some() {
        observed_tiers.push("external".to_string());
    }
    let mut observed_roles: Vec<Role> = dep.priced.iter().filter_map(|u| dep.role_of(u)).collect();
    crate::sort::sort_by(&mut observed_roles, Ord::cmp);
    observed_roles.dedup();
    let any_prefill = dep
        .decisions
        .values()
        .any(|d| d.role == Some(Role::Prefill));
    let disaggregated = launch.and_then(|l| l.disaggregated).unwrap_or(any_prefill);
    let requested = Scope {
        roles: vec![if disaggregated {
            Role::Prefill
        } else {
            Role::Unified
        }],
        tiers: if tiers.offload_off() {
            vec!["gpu".to_string()]
        } else {
            ["gpu", "cpu", "external"].map(String::from).to_vec()
        },
    };
    let observed = Scope {
        roles: observed_roles,
        tiers: observed_tiers,
    };
    explain_differences(&requested, &observed, tiers, reasons);
    if launch.and_then(|l| l.enable_prefix_caching) == Some(false) {
        reasons.push(Reason::new(
            ReasonCode::PrefixCachingDisabled,
            "the launch facts say prefix caching is disabled: the hit rate is 0 by configuration",
        ));
    }
    Scopes {
        requested,
        observed,
        cpu_component,
    }
}

fn explain_differences(
    requested: &Scope,
    observed: &Scope,
    tiers: &TierContext,
    reasons: &mut Vec<Reason>,
) {
    for role in requested
        .roles
        .iter()
        .filter(|r| !observed.roles.contains(r))
    {
        let why = if observed.roles.is_empty() {
            "no endpoint with that role exports engine metrics (see the role and measurement reasons)".to_string()
        } else {
            format!(
                "the priced endpoints have the role {}",
                observed
                    .roles
                    .iter()
                    .map(|r| role_name(*r))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        reasons.push(Reason::new(
            ReasonCode::ScopeDifference,
            format!("requested role {} not observed: {why}", role_name(*role)),
        ));
    }
    for tier in requested
        .tiers
        .iter()
        .filter(|t| !observed.tiers.contains(t))
    {
        let why = match (tier.as_str(), tiers.offloading.as_deref()) {
            ("gpu", _) => "no GPU-tier hit counter on a priced endpoint".to_string(),
            (_, None) => "the launch facts do not say whether KV offloading was on, and no priced endpoint exports a counter for this tier".to_string(),
            (_, Some(o)) => format!("offloading is `{o}` and no priced endpoint exports a counter for this tier"),
        };
        reasons.push(Reason::new(
            ReasonCode::ScopeDifference,
            format!("requested tier {tier} not observed: {why}"),
        ));
    }
}
