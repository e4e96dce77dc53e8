//! Stage 9, token totals (contract section 7): from the Dynamo frontend when its counts agree
//! with the requests, else from the priced role's engine counters when aggregated, else from
//! the client's records; never prefill and decode prompts added together.

use super::diagnostics;
use super::evidence::Evidence;
use super::interval::{bound, Interval};
use super::lookup::{all_of_family, of_endpoint};
use super::output::{TokenSource, Tokens};
use super::request_scope;
use super::roles::RoleDecision;
use super::Ctx;
use crate::engines::{dynamo, Engine};
use crate::model::Role;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The estimate of a non-canonical counter family summed over some endpoints (each counted
/// once), added in series-key order so the sum does not depend on the order given.
pub fn family_estimate(ctx: &Ctx<'_>, endpoints: &[&str], family: &str) -> Option<f64> {
    let endpoints: BTreeSet<&str> = crate::sort::set_of(endpoints.iter().copied());
    let mut total = None;
    for endpoint in endpoints {
        add_estimates(ctx, endpoint, &[family], std::slice::from_mut(&mut total));
    }
    total
}

/// Add the estimate of each series of `endpoint` in one of `families` (canonical names; an
/// empty one is none) to that family's total, in series-key order: one scan of the endpoint's
/// series for all of them, its bounding context made once.
pub fn add_estimates(ctx: &Ctx<'_>, endpoint: &str, families: &[&str], totals: &mut [Option<f64>]) {
    if families.iter().all(|f| f.is_empty()) {
        return;
    }
    let at = ctx.series_context(endpoint);
    let series = &ctx.ev.series;
    // An endpoint's series come by spelling: each spelling's family is found once.
    let mut last: Option<(&Arc<str>, Option<&str>)> = None;
    for (key, sev) in of_endpoint(series, endpoint) {
        let family = match last {
            Some((s, f)) if Arc::ptr_eq(s, &key.spelling) => f,
            _ => {
                let canonical = series.canonical(&key.spelling);
                let f = families
                    .iter()
                    .find(|f| !f.is_empty() && **f == canonical)
                    .copied();
                last = Some((&key.spelling, f));
                f
            }
        };
        let Some(family) = family else {
            continue;
        };
        let est = bound(sev, &at, ctx.policy).interval.est;
        for (f, total) in families.iter().zip(totals.iter_mut()) {
            if *f == family {
                *total = Some(total.unwrap_or(0.0) + est);
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub fn token_totals(
    ev: &Evidence,
    engines: &BTreeMap<Arc<str>, Engine>,
    decisions: &BTreeMap<Arc<str>, RoleDecision>,
    prompt: Option<Interval>,
    client: Option<&request_scope::ClientScope>,
    ctx: &Ctx<'_>,
) -> Tokens {
    // Frontend: the input histogram's sum, used only when its count agrees with the requests.
    let isl: Vec<(Option<f64>, Option<f64>)> = all_of_family(&ev.histograms, dynamo::FRONTEND_ISL)
        .map(|(_, v)| v.get())
        .collect();
    if !isl.is_empty() {
        let count: f64 = isl.iter().filter_map(|v| v.0).sum();
        let sum: f64 = isl.iter().filter_map(|v| v.1).sum();
        let expected = client.map(|c| c.successful as f64);
        if expected.is_none_or(|n| (n - count).abs() < 0.5) && sum.is_finite() {
            let frontends: Vec<&str> = decisions
                .iter()
                .filter(|(_, d)| d.role == Some(Role::Frontend))
                .map(|(u, _)| &**u)
                .collect();
            return Tokens {
                prompt_total: Some(sum),
                generation_total: family_estimate(ctx, &frontends, dynamo::FRONTEND_OUTPUT_TOKENS),
                source: Some(TokenSource::Frontend),
            };
        }
    }
    let unified: Vec<&Arc<str>> = decisions
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
                    family_estimate(ctx, &[&***u], family_of(*e))
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
