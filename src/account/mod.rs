//! The accounting core (CONTRACT sections 2–7), engine-agnostic: a pipeline of named
//! stages, each a function from plain types to the next, in the contract's order.
//!
//! | stage | file | contract |
//! | --- | --- | --- |
//! | evidence per series | `evidence.rs` | 1, 4 |
//! | endpoints and engines | `endpoints.rs` | 2, 3 |
//! | roles | `roles.rs` | 3 |
//! | is anything measured | `presence.rs` | 3, 6 |
//! | window | `window.rs` | 4 |
//! | resets (restarts) | `resets.rs` | 4 |
//! | intervals per series | `interval.rs` | 4 |
//! | counters per endpoint, pools | `pools.rs` | 2, 3 |
//! | priced-role sums | `priced.rs` | 3, 4 |
//! | rates | `rates.rs` | 2, 4 |
//! | request scope | `request_scope.rs` | 5 |
//! | scope and CPU component | `scope.rs` | 6 |
//! | token totals | `tokens.rs` | 7 |
//! | telemetry, KV, offload | `telemetry.rs` | 7 |
//! | verdict | `verdict.rs` | 6 |
//! | output and legacy keys | `output.rs` | 7 |
//!
//! Engines map names to canonical counters (`crate::engines`); the verdict reads results and
//! never recomputes them.

pub mod diagnostics;
pub mod endpoints;
pub mod evidence;
pub mod interval;
pub mod output;
pub mod policy;
pub mod pools;
pub mod presence;
pub mod priced;
pub mod rates;
pub mod request_scope;
pub mod resets;
pub mod roles;
pub mod scope;
pub mod telemetry;
pub mod tokens;
pub mod verdict;
pub mod window;

pub use output::Accounting;
pub use policy::Policy;
pub use verdict::{status_of, CpuComponent, Reason, ReasonCode, Status};

use crate::engines::{dynamo, Engine, TierContext};
use crate::inspect::CONTRACT_VERSION;
use crate::read::Run;
use evidence::Evidence;
use interval::{SeriesContext, Window};
use output::*;
use std::collections::BTreeMap;

/// What the stages after the window share: the evidence, the window, the policy, the
/// launcher's offload facts and the endpoints known to have restarted.
pub struct Ctx<'a> {
    pub ev: &'a Evidence,
    pub window: Option<Window>,
    pub policy: &'a Policy,
    pub tiers: TierContext,
    pub restarts: BTreeMap<String, String>,
}

impl Ctx<'_> {
    /// What bounding a series of `endpoint` needs.
    pub fn series_context(&self, endpoint: &str) -> SeriesContext {
        SeriesContext {
            window: self.window,
            coverage: self.ev.coverage.get(endpoint).copied(),
            first_mass_end_ns: self.ev.first_mass_end.get(endpoint).copied(),
            restarted: self.restarts.contains_key(endpoint),
        }
    }
}

fn tier_context(run: &Run) -> TierContext {
    TierContext {
        offloading: run.launch.as_ref().and_then(|l| l.kv_offloading.clone()),
        backend: run.launch.as_ref().and_then(|l| {
            l.kv_offload_backend
                .as_ref()
                .map(|b| b.to_ascii_lowercase())
        }),
    }
}

/// Account one run under a policy: the stages in contract order.
pub fn account_run(run: &Run, policy: &Policy) -> Accounting {
    let mut reasons: Vec<Reason> = Vec::new();
    let launch = run.launch.as_ref();
    let ev = evidence::collect(run);
    let eps = endpoints::detect(&ev, launch);
    let decisions = roles::assign(&eps.facts, launch, &mut reasons);
    let dep = roles::Deployment::new(decisions, &eps.engines);
    let missing = presence::check(&ev, &eps.engines, &dep, launch, &mut reasons);
    evidence::notes(&ev, &mut reasons);
    let window = window::profiling_window(run, &mut reasons);
    window::check_records(run, &window, &mut reasons);
    let ctx = Ctx {
        ev: &ev,
        window: window.window,
        policy,
        tiers: tier_context(run),
        restarts: resets::restarts(&ev, window.window),
    };
    let generation = |u: &str| {
        let e = eps.engines.get(u)?;
        tokens::family_estimate(&ctx, &[&u.to_string()], diagnostics::generation_family(*e))
    };
    let dep = roles::check_shapes(dep, &eps.engines, generation, &mut reasons);
    let counted = pools::count(&ctx, &eps.engines, &dep, &mut reasons);
    let sums = priced::sum(
        &counted.per_endpoint,
        &dep.priced,
        missing.len(),
        &mut reasons,
    );
    let rates = rates::tier_rates(
        &sums,
        &ctx.tiers,
        &counted.tier_aliases,
        counted.hits_uncounted,
        policy.max_rate_width,
        &mut reasons,
    );
    let client = run.profile.as_ref().map(request_scope::client_scope);
    let counts_admissions = dep
        .priced
        .iter()
        .any(|u| eps.engines.get(u) == Some(&Engine::Atom));
    let request_scope = request_scope::check(
        client.as_ref(),
        sums.prompt,
        sums.admissions.filter(|_| counts_admissions),
        policy.conservation_tolerance,
        &mut reasons,
    );
    request_scope::check_benchmark(&run.benchmark_ids, &mut reasons);
    let scopes = scope::decide(
        &dep,
        launch,
        &ctx.tiers,
        &rates,
        counted.cpu_measured_all,
        &mut reasons,
    );
    let (sources, counters) = output::endpoint_sources(&dep, &eps.engines, &counted, &missing);
    let tokens = tokens::token_totals(
        &ev,
        &eps.engines,
        &dep.decisions,
        sums.prompt,
        client.as_ref(),
        &ctx,
    );
    let kv_cache = telemetry::kv_cache(&ev, &eps.engines, &dep.decisions);
    let offload = telemetry::offload(&eps.engines, &ctx);
    let telemetry = telemetry::telemetry(
        &ctx,
        &eps.engines,
        &dep.decisions,
        &dep.priced,
        counted.ratio_gauges.clone(),
        &mut reasons,
    );
    let theoretical = telemetry::theoretical(run.summary.as_ref());

    reasons.sort();
    reasons.dedup();
    let status = status_of(&reasons);
    let pricing_eligible = status == Status::ValidComplete;
    let engine = dep
        .priced
        .iter()
        .chain(eps.engines.keys())
        .find_map(|u| eps.engines.get(u))
        .copied();
    let legacy = legacy(
        &rates,
        &tokens,
        &kv_cache,
        theoretical,
        pricing_eligible,
        status,
        sums.hit_cpu,
        sums.hit_external,
    );
    Accounting {
        contract_version: CONTRACT_VERSION.to_string(),
        cache_validity: CacheValidity {
            status,
            pricing_eligible,
            reasons,
            requested_scope: scopes.requested,
            observed_scope: scopes.observed,
            cpu_component: scopes.cpu_component,
            roles: roles::roles_block(&dep, &eps.engines),
            window: WindowInfo {
                start_ns: window.window.map(|w| w.start_ns),
                end_ns: window.window.map(|w| w.end_ns),
                source: window.source,
                evidence: sums.weakest,
                straddles: sums.straddles,
                gaps: sums.gaps,
            },
            request_scope,
            contract_version: CONTRACT_VERSION.to_string(),
        },
        engine,
        rates,
        counters,
        sources,
        tokens,
        kv_cache,
        offload,
        theoretical_hit_rate: theoretical,
        telemetry,
        policy: policy.clone(),
        legacy,
    }
}

/// Every metric family the accounting reads (canonical counters, diagnostics, telemetry,
/// restart evidence, plus each engine's running-requests gauge so an endpoint's engine is
/// still detected). Readers given this filter skip everything else without building it, so
/// accounting a multi-GB export keeps only what it needs in memory.
pub fn families_read() -> crate::read::FamilyFilter {
    use crate::engines::{atom, sglang, trtllm, vllm};
    let mut names: Vec<&str> = vec![
        evidence::PROCESS_START,
        vllm::BY_SOURCE,
        vllm::QUERIES,
        vllm::HITS,
        vllm::RECOMPUTED,
        "vllm:num_requests_running",
        "vllm:cache_config_info",
        "vllm:gpu_prefix_cache_hit_rate",
        "vllm:cpu_prefix_cache_hit_rate",
        sglang::PROMPT,
        sglang::CACHED,
        "sglang:num_running_reqs",
        "sglang:max_total_num_tokens",
        "sglang:cache_hit_rate",
        trtllm::PROMPT,
        trtllm::CACHED,
        trtllm::BY_TIER,
        trtllm::CACHED_PER_REQUEST,
        trtllm::HIT_RATE_GAUGE,
        "trtllm_num_requests_running",
        "trtllm_kv_cache_max_blocks",
        "trtllm_kv_cache_tokens_per_block",
        "trtllm_kv_cache_config_info",
        atom::FULL,
        atom::CACHED,
        atom::OFFLOAD,
        atom::REQUESTS,
        atom::HIT_RATIO,
        "atom:requests_running",
        dynamo::FRONTEND_ISL,
        dynamo::FRONTEND_OSL,
        dynamo::FRONTEND_OUTPUT_TOKENS,
        dynamo::FRONTEND_CACHED,
        dynamo::FRONTEND_REQUESTS,
    ];
    names.extend(dynamo::RATIO_GAUGES);
    for e in [Engine::Vllm, Engine::Sglang, Engine::Trtllm, Engine::Atom] {
        names.push(diagnostics::prompt_family(e));
        names.push(diagnostics::generation_family(e));
        names.push(diagnostics::usage_family(e));
        if let Some(fams) = diagnostics::offload_families(e) {
            names.extend(fams.iter().copied().filter(|f| !f.is_empty()));
        }
    }
    crate::read::FamilyFilter::only(names)
}
