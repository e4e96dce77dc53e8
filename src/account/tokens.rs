//! Stage 9, token totals (contract section 7): from the Dynamo frontend when its counts agree
//! with the requests, else from the priced role's engine counters when aggregated, else from
//! the client's records; never prefill and decode prompts added together.

use super::diagnostics;
use super::evidence::Evidence;
use super::interval::{bound, Interval};
use super::lookup::of_family;
use super::output::{TokenSource, Tokens};
use super::request_scope;
use super::roles::RoleDecision;
use super::Ctx;
use crate::engines::{dynamo, Engine};
use crate::model::Role;
use crate::read::names::canonical_family;
use std::collections::{BTreeMap, BTreeSet};

/// The estimate of a non-canonical counter family summed over some endpoints (each counted
/// once), added in series-key order so the sum does not depend on the order given.
pub fn family_estimate(ctx: &Ctx<'_>, endpoints: &[&String], family: &str) -> Option<f64> {
    let endpoints: BTreeSet<&str> = crate::sort::set_of(endpoints.iter().map(|e| e.as_str()));
    let mut total = None;
    for endpoint in endpoints {
        let at = ctx.series_context(endpoint);
        for (_, sev) in of_family(&ctx.ev.series, endpoint, family) {
            let b = bound(sev, &at, ctx.policy);
            total = Some(total.unwrap_or(0.0) + b.interval.est);
        }
    }
    total
}

#[allow(clippy::too_many_arguments)]
pub fn token_totals(
    ev: &Evidence,
    engines: &BTreeMap<String, Engine>,
    decisions: &BTreeMap<String, RoleDecision>,
    prompt: Option<Interval>,
    client: Option<&request_scope::ClientScope>,
    ctx: &Ctx<'_>,
) -> Tokens {
    // Frontend: the input histogram's sum, used only when its count agrees with the requests.
    let isl: Vec<(Option<f64>, Option<f64>)> = ev
        .histograms
        .iter()
        .filter(|(k, _)| canonical_family(&k.spelling) == dynamo::FRONTEND_ISL)
        .map(|(_, v)| *v)
        .collect();
    if !isl.is_empty() {
        let count: f64 = isl.iter().filter_map(|v| v.0).sum();
        let sum: f64 = isl.iter().filter_map(|v| v.1).sum();
        let expected = client.map(|c| c.successful as f64);
        if expected.is_none_or(|n| (n - count).abs() < 0.5) && sum.is_finite() {
            let frontends: Vec<&String> = decisions
                .iter()
                .filter(|(_, d)| d.role == Some(Role::Frontend))
                .map(|(u, _)| u)
                .collect();
            return Tokens {
                prompt_total: Some(sum),
                generation_total: family_estimate(ctx, &frontends, dynamo::FRONTEND_OUTPUT_TOKENS),
                source: Some(TokenSource::Frontend),
            };
        }
    }
    let unified: Vec<&String> = decisions
        .iter()
        .filter(|(u, d)| d.role == Some(Role::Unified) && engines.contains_key(*u))
        .map(|(u, _)| u)
        .collect();
    let any_prefill = decisions.values().any(|d| d.role == Some(Role::Prefill));
    if !unified.is_empty() && !any_prefill {
        let sum_over = |family_of: fn(Engine) -> &'static str| {
            unified
                .iter()
                .filter_map(|u| {
                    let e = engines.get(*u)?;
                    family_estimate(ctx, &[*u], family_of(*e))
                })
                .fold(None, |acc: Option<f64>, v| Some(acc.unwrap_or(0.0) + v))
        };
        let prompt_total = sum_over(diagnostics::prompt_family).or(prompt.map(|p| p.est));
        if prompt_total.is_some() {
            return Tokens {
                prompt_total,
                generation_total: sum_over(diagnostics::generation_family),
                source: Some(TokenSource::PricedRole),
            };
        }
    }
    match client {
        Some(c) if c.prompt_tokens.is_some() => Tokens {
            prompt_total: c.prompt_tokens.map(|v| v as f64),
            generation_total: c.output_tokens.map(|v| v as f64),
            source: Some(TokenSource::Client),
        },
        _ => Tokens {
            prompt_total: None,
            generation_total: None,
            source: None,
        },
    }
}
