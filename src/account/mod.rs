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
pub mod fold;
pub mod interval;
pub mod lookup;
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
pub mod timeline;
pub mod tokens;
pub mod verdict;
pub mod window;

pub use output::Accounting;
pub use policy::Policy;
pub use verdict::{status_of, CpuComponent, Reason, ReasonCode, Status};

use crate::engines::{dynamo, Engine, TierContext};
use crate::inspect::CONTRACT_VERSION;
use crate::read::Run;
use crate::wire::EpochNs;
use evidence::Evidence;
use interval::{SeriesContext, Window};
use output::*;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What the stages after the window share: the evidence, the window, the policy, the
/// launcher's offload facts and the endpoints known to have restarted.
pub struct Ctx<'a> {
    pub ev: &'a Evidence,
    pub window: Option<Window>,
    pub policy: &'a Policy,
    pub tiers: TierContext,
    pub restarts: BTreeMap<Arc<str>, String>,
    /// Two kinds of evidence contradicted each other somewhere in the run (see
    /// `SeriesContext::distrust`).
    pub distrust: bool,
}

impl Ctx<'_> {
    /// What bounding a series of `endpoint` needs.
    pub fn series_context(&self, endpoint: &str) -> SeriesContext {
        SeriesContext {
            window: self.window,
            coverage: self.ev.coverage.get(endpoint).copied(),
            first_mass_end_ns: self.ev.first_mass_end.get(endpoint).copied(),
            restarted: self.restarts.contains_key(endpoint),
            distrust: self.distrust,
        }
    }

    /// Does any series' evidence contradict itself across kinds? Then no kind narrows another.
    fn find_distrust(mut self) -> Self {
        self.distrust = self.ev.series.iter().any(|(k, e)| {
            interval::conflicts(e, &self.series_context(&k.endpoint_url), self.policy)
        });
        self
    }
}

/// The run's engine: the one every priced endpoint runs, else the one every engine endpoint
/// runs; none when they differ (each endpoint's own engine is in `sources`).
fn run_engine(priced: &[String], engines: &BTreeMap<Arc<str>, Engine>) -> Option<Engine> {
    let same = |mut it: Box<dyn Iterator<Item = Engine> + '_>| {
        let first = it.next()?;
        it.all(|e| e == first).then_some(first)
    };
    if !priced.is_empty() {
        return same(Box::new(
            priced
                .iter()
                .filter_map(|u| engines.get(u.as_str()).copied()),
        ));
    }
    same(Box::new(engines.values().copied()))
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
    let read = Gathered::of(run, fold::Folded::default());
    account(run, read, policy, false).0
}

/// [`account_run`] of a run whose scrape JSONL was folded while it was read
/// (`RunReader::with_fold`, `RunReader::finish_folded`): the same result as the run read
/// whole, unless the fold was thinned to fit memory (then `evidence_coarsened` says so).
/// It takes the run: what only the evidence reads (a CSV's series) is dropped once the
/// evidence holds it, so the two are never in memory together at the peak.
pub fn account_run_folded(run: Run, folded: fold::Folded, policy: &Policy) -> Accounting {
    let (run, read) = Gathered::shedding(run, folded);
    account(&run, read, policy, false).0
}

/// `account_run`, and what the visualizer shows beside it: the files read and ignored, and
/// the canonical counters over time.
pub fn account_run_detailed(run: &Run, policy: &Policy) -> (Accounting, timeline::RunDetail) {
    let read = Gathered::of(run, fold::Folded::default());
    detailed(run, read, policy)
}

/// [`account_run_detailed`] of a run folded while read (see [`account_run_folded`]).
pub fn account_run_detailed_folded(
    run: Run,
    folded: fold::Folded,
    policy: &Policy,
) -> (Accounting, timeline::RunDetail) {
    let (run, read) = Gathered::shedding(run, folded);
    detailed(&run, read, policy)
}

fn detailed(run: &Run, read: Gathered, policy: &Policy) -> (Accounting, timeline::RunDetail) {
    let (accounting, timeline) = account(run, read, policy, true);
    let detail = timeline::RunDetail {
        files: timeline::files_of(run),
        ignored: run.ignored.clone(),
        timeline: timeline.unwrap_or_default(),
    };
    (accounting, detail)
}

/// The first stage's output: the run's evidence and its request records.
struct Gathered {
    ev: evidence::Evidence,
    records: Option<request_scope::RecordFold>,
}

impl Gathered {
    fn of(run: &Run, folded: fold::Folded) -> Gathered {
        let records = Gathered::records(run, folded.records);
        let ev = evidence::collect_with(run, folded.scrapes);
        Gathered { ev, records }
    }

    /// [`Gathered::of`] an owned run, then without the parts no later stage reads: its
    /// scrapes (each dropped once folded) and a CSV's series.
    fn shedding(mut run: Run, folded: fold::Folded) -> (Run, Gathered) {
        let records = Gathered::records(&run, folded.records);
        let ev = evidence::collect_taking(&mut run, folded.scrapes);
        if let Some(csv) = run.server_csv.as_mut() {
            csv.csv_lean = None;
        }
        (run, Gathered { ev, records })
    }

    /// The records folded while read, else the run's profile's.
    fn records(
        run: &Run,
        folded: Option<request_scope::RecordFold>,
    ) -> Option<request_scope::RecordFold> {
        folded.or_else(|| run.profile.as_ref().map(request_scope::RecordFold::of))
    }
}

/// The pipeline after the evidence; the timeline is built only when asked for (it does not
/// feed the result).
fn account(
    run: &Run,
    read: Gathered,
    policy: &Policy,
    with_timeline: bool,
) -> (Accounting, Option<timeline::Timeline>) {
    let mut reasons: Vec<Reason> = Vec::new();
    let launch = run.launch.as_ref();
    let Gathered { ev, records } = read;
    let endpoints::Endpoints { facts, engines } = endpoints::detect(&ev, launch);
    let decisions = roles::assign(&facts, launch, &mut reasons);
    // Read by the roles stage only: gone before the stages that add to the peak.
    drop(facts);
    let dep = roles::Deployment::new(decisions, &engines);
    let missing = presence::check(&ev, &engines, &dep, launch, &mut reasons);
    evidence::notes(&ev, &mut reasons);
    let window = window::profiling_window(run, records.as_ref(), &mut reasons);
    window::check_records(records.as_ref(), &window, &mut reasons);
    let ctx = Ctx {
        ev: &ev,
        window: window.window,
        policy,
        tiers: tier_context(run),
        restarts: resets::restarts(&ev, window.window),
        distrust: false,
    }
    .find_distrust();
    let generation = |u: &str| {
        let e = engines.get(u)?;
        tokens::family_estimate(&ctx, &[u], diagnostics::generation_family(*e))
    };
    let dep = roles::check_shapes(dep, &engines, generation, &mut reasons);
    let counted = pools::count(&ctx, &engines, &dep, &mut reasons);
    let timeline = with_timeline.then(|| timeline::build(&ctx, &engines, &dep, run));
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
    let client = records
        .as_ref()
        .map(request_scope::RecordFold::client_scope);
    let counts_admissions = dep
        .priced
        .iter()
        .any(|u| engines.get(u.as_str()) == Some(&Engine::Atom));
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
    let tokens = tokens::token_totals(
        &ev,
        &engines,
        &dep.decisions,
        sums.prompt,
        client.as_ref(),
        &ctx,
    );
    let kv_cache = telemetry::kv_cache(&ev, &engines, &dep.decisions);
    let offload = telemetry::offload(&engines, &ctx);
    let telemetry = telemetry::telemetry(
        &ctx,
        &engines,
        &dep.decisions,
        &dep.priced,
        counted.ratio_gauges.clone(),
        &mut reasons,
    );
    // The evidence is read no further: gone before the output's per-endpoint parts are made,
    // the two never add up at the peak (a many-endpoint run's evidence is most of its memory).
    drop(ctx);
    drop(ev);
    let (sources, counters) = output::endpoint_sources(&dep, &engines, &counted, &missing);
    let parts = Parts {
        theoretical: telemetry::theoretical(run.summary.as_ref()),
        engine: run_engine(&dep.priced, &engines),
        roles: roles::roles_block(&dep, &engines),
        window: WindowInfo {
            start_ns: window.window.map(|w| EpochNs(w.start_ns)),
            end_ns: window.window.map(|w| EpochNs(w.end_ns)),
            source: window.source,
            evidence: sums.weakest,
            straddles: sums.straddles,
            gaps: sums.gaps,
        },
        sums,
        rates,
        scopes,
        request_scope,
        sources,
        counters,
        tokens,
        kv_cache,
        offload,
        telemetry,
    };
    (assemble(parts, reasons, policy), timeline)
}

/// Every stage's result, ready for the verdict and the output.
struct Parts {
    theoretical: Option<f64>,
    engine: Option<Engine>,
    roles: Roles,
    window: WindowInfo,
    sums: priced::PricedSums,
    rates: Rates,
    scopes: scope::Scopes,
    request_scope: RequestScope,
    sources: Vec<Source>,
    counters: BTreeMap<String, Counters>,
    tokens: Tokens,
    kv_cache: KvCache,
    offload: Offload,
    telemetry: Telemetry,
}

/// The verdict from the reasons (the first failing check in contract order), then the result.
fn assemble(p: Parts, mut reasons: Vec<Reason>, policy: &Policy) -> Accounting {
    crate::sort::sort_by(&mut reasons, Ord::cmp);
    reasons.dedup();
    let status = status_of(&reasons);
    let pricing_eligible = status == Status::ValidComplete;
    let legacy = legacy(
        &p.rates,
        &p.tokens,
        &p.kv_cache,
        p.theoretical,
        pricing_eligible,
        status,
        p.sums.hit_cpu,
        p.sums.hit_external,
    );
    Accounting {
        contract_version: CONTRACT_VERSION.to_string(),
        cache_validity: CacheValidity {
            status,
            pricing_eligible,
            reasons,
            requested_scope: p.scopes.requested,
            observed_scope: p.scopes.observed,
            cpu_component: p.scopes.cpu_component,
            roles: p.roles,
            window: p.window,
            request_scope: p.request_scope,
            contract_version: CONTRACT_VERSION.to_string(),
        },
        engine: p.engine,
        rates: p.rates,
        counters: p.counters,
        sources: p.sources,
        tokens: p.tokens,
        kv_cache: p.kv_cache,
        offload: p.offload,
        theoretical_hit_rate: p.theoretical,
        telemetry: p.telemetry,
        policy: policy.clone(),
        legacy,
    }
}

/// Every metric family the accounting reads (canonical counters, diagnostics, telemetry,
/// restart evidence, and every engine-prefixed family so an endpoint's engine is detected
/// from all its evidence). Readers given this filter skip everything else without building it, so
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
    // Every engine-prefixed family too: an endpoint's engine is detected from all it exports
    // (an endpoint exporting only, say, `trtllm:request_success` is still a TensorRT-LLM one).
    crate::read::FamilyFilter::only(names)
        .with_prefixes(ENGINE_PREFIXES)
        .lean()
}

/// The metric-name prefixes that identify an engine (`crate::read::names::engine_prefix`).
const ENGINE_PREFIXES: [&str; 7] = [
    "vllm:",
    "sglang:",
    "trtllm_",
    "trtllm:",
    "tensorrt_llm:",
    "atom:",
    "atom_",
];
