//! The accounting core (CONTRACT sections 2–7), engine-agnostic. Engines map names to
//! canonical counters (`crate::engines`); this module decides roles (`roles`), gathers the
//! evidence per series (`evidence`), bounds each in-window increase (`interval`), sums pools,
//! derives rate intervals (`rates`), checks the request scope (`request_scope`) and returns
//! the verdict with every output (`output`). The verdict reads results; it never recomputes.

pub mod diagnostics;
pub mod evidence;
pub mod interval;
pub mod output;
pub mod policy;
pub mod rates;
pub mod request_scope;
pub mod roles;
pub mod verdict;

pub use output::Accounting;
pub use policy::Policy;
pub use verdict::{status_of, CpuComponent, Reason, ReasonCode, Status};

use crate::engines::{
    adapter, detect_engine, dynamo, sglang, trtllm, Counter, Engine, FamilyView, TierContext,
    REPLICA_LABELS,
};
use crate::inspect::{host_port, CONTRACT_VERSION};
use crate::model::{Labels, MetricType, Phase, Role};
use crate::read::names::canonical_family;
use crate::read::Run;
use evidence::{Evidence, SeriesKey};
use interval::{bound, Bounded, Interval, Method, Window};
use output::*;
use rates::{rate, Rate};
use roles::{EndpointFacts, RoleDecision, RoleSource};
use std::collections::{BTreeMap, BTreeSet};

/// Pools of one family: pool labels → the replica series of that pool.
type Pools = BTreeMap<Labels, Vec<(SeriesKey, Bounded)>>;

/// Per endpoint: each canonical counter's pooled interval and evidence method.
#[derive(Debug, Clone, Default)]
struct EndpointCounters {
    counters: BTreeMap<Counter, (Interval, Method)>,
    straddles: u32,
    gaps: u32,
}

fn labels_without_replicas(l: &Labels) -> Labels {
    l.iter()
        .filter(|(k, _)| !REPLICA_LABELS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    if a.is_infinite() || b.is_infinite() {
        return a == b;
    }
    (a - b).abs() <= 1e-6 + 1e-9 * a.abs().max(b.abs())
}

fn agree(a: &Bounded, b: &Bounded) -> bool {
    close(a.interval.lo, b.interval.lo)
        && close(a.interval.hi, b.interval.hi)
        && close(a.interval.est, b.interval.est)
}

fn method_rank(m: Method) -> u8 {
    match m {
        Method::PhaseTotal => 0,
        Method::RawScrapes => 1,
        Method::Timeslices => 2,
        Method::StatsTotal => 3,
        Method::Unbounded => 4,
    }
}

/// The profiling window: `phase_time_ranges.profiling`, else the profiling records.
fn window_of(run: &Run) -> (Option<Window>, WindowSource) {
    if let Some(p) = run
        .server_json
        .as_ref()
        .and_then(|j| j.summary.phase_time_ranges.profiling)
    {
        return (
            Some(Window {
                start_ns: p.start_ns,
                end_ns: p.end_ns,
            }),
            WindowSource::PhaseTimeRanges,
        );
    }
    if let Some(p) = &run.profile {
        let mut start: Option<u64> = None;
        let mut end: Option<u64> = None;
        for r in &p.records {
            if matches!(r.phase, Some(Phase::Profiling) | None) {
                if let Some(s) = r.request_start_ns {
                    start = Some(start.map_or(s, |x| x.min(s)));
                }
                if let Some(e) = r.request_end_ns {
                    end = Some(end.map_or(e, |x| x.max(e)));
                }
            }
        }
        if let (Some(s), Some(e)) = (start, end) {
            if s <= e {
                return (
                    Some(Window {
                        start_ns: s,
                        end_ns: e,
                    }),
                    WindowSource::ProfileRecords,
                );
            }
        }
    }
    (None, WindowSource::None)
}

/// The families an adapter may consult, plus markers for facts that depend on labels or type.
fn present_keys(ev: &Evidence, endpoint: &str, engine: Engine) -> BTreeSet<String> {
    let mut present: BTreeSet<String> = ev
        .families
        .get(endpoint)
        .map(|f| f.keys().cloned().collect())
        .unwrap_or_default();
    match engine {
        Engine::Sglang => {
            let sets: Vec<&Labels> = ev
                .series
                .keys()
                .filter(|k| {
                    k.endpoint_url == endpoint && canonical_family(&k.spelling) == sglang::CACHED
                })
                .map(|k| &k.labels)
                .collect();
            match sglang::breakdown(sets) {
                sglang::Breakdown::Tiers => {
                    present.insert(sglang::MARK_TIERS.to_string());
                }
                sglang::Breakdown::TotalOnly => {
                    present.insert(sglang::MARK_TOTAL_ONLY.to_string());
                }
                sglang::Breakdown::Unlabelled => {}
            }
        }
        Engine::Trtllm => {
            let is_counter = ev
                .families
                .get(endpoint)
                .and_then(|f| f.get(trtllm::CACHED))
                .is_some_and(|i| {
                    !matches!(
                        i.metric_type,
                        Some(MetricType::Histogram | MetricType::Gauge)
                    )
                })
                && ev.series.keys().any(|k| {
                    k.endpoint_url == endpoint && canonical_family(&k.spelling) == trtllm::CACHED
                });
            if is_counter {
                present.insert(trtllm::MARK_CACHED_COUNTER.to_string());
            }
            let fam_type = |k: &str| {
                ev.families
                    .get(endpoint)
                    .and_then(|f| f.get(k))
                    .map(|i| i.metric_type)
            };
            if fam_type(trtllm::CACHED_PER_REQUEST).is_some()
                || fam_type(trtllm::CACHED) == Some(Some(MetricType::Histogram))
            {
                present.insert(trtllm::MARK_CACHED_HISTOGRAM.to_string());
            }
            let tier_present = |c: Counter| {
                ev.series.keys().any(|k| {
                    k.endpoint_url == endpoint
                        && canonical_family(&k.spelling) == trtllm::BY_TIER
                        && k.labels
                            .get("cache_tier")
                            .and_then(|t| trtllm::tier_counter(t))
                            == Some(c)
                })
            };
            if tier_present(Counter::HitCpu) {
                present.insert(trtllm::MARK_HOST_TIER.to_string());
            }
            if tier_present(Counter::HitExternal) {
                present.insert(trtllm::MARK_EXTERNAL_TIER.to_string());
            }
        }
        Engine::Vllm => {
            let external = ev.series.keys().any(|k| {
                k.endpoint_url == endpoint
                    && canonical_family(&k.spelling) == crate::engines::vllm::BY_SOURCE
                    && k.labels
                        .get("source")
                        .is_some_and(|v| v.eq_ignore_ascii_case("external_kv_transfer"))
            });
            if external {
                present.insert(crate::engines::vllm::MARK_EXTERNAL_SOURCE.to_string());
            }
        }
        Engine::Atom => {}
    }
    present
}

struct Ctx<'a> {
    ev: &'a Evidence,
    window: Option<Window>,
    policy: &'a Policy,
    tiers: TierContext,
}

/// Map, bound, pool and check the counters of one engine endpoint.
fn endpoint_counters(
    ctx: &Ctx<'_>,
    endpoint: &str,
    engine: Engine,
    priced: bool,
    reasons: &mut Vec<Reason>,
) -> EndpointCounters {
    let ad = adapter(engine);
    let present = present_keys(ctx.ev, endpoint, engine);
    let families = ctx.ev.families.get(endpoint);
    // counter → canonical family → pool labels → series bounds
    let mut mapped: BTreeMap<Counter, BTreeMap<String, Pools>> = BTreeMap::new();
    let mut out = EndpointCounters::default();
    let window = ctx.window.unwrap_or(Window {
        start_ns: 0,
        end_ns: u64::MAX,
    });
    for (key, sev) in ctx.ev.series.range(
        SeriesKey {
            endpoint_url: endpoint.to_string(),
            spelling: String::new(),
            labels: Labels::new(),
        }..,
    ) {
        if key.endpoint_url != endpoint {
            break;
        }
        let canon = canonical_family(&key.spelling);
        let mt = families
            .and_then(|f| f.get(&canon))
            .and_then(|i| i.metric_type);
        let view = FamilyView {
            key: &canon,
            spelling: &key.spelling,
            metric_type: mt,
        };
        let counters = ad.map_series(&view, &key.labels, &present, &ctx.tiers);
        if counters.is_empty() {
            continue;
        }
        let coverage = ctx.ev.coverage.get(endpoint).copied();
        let first_mass = ctx.ev.first_mass_end.get(endpoint).copied();
        let b = bound(sev, window, coverage, first_mass, ctx.policy);
        for c in counters {
            mapped
                .entry(c)
                .or_default()
                .entry(canon.clone())
                .or_default()
                .entry(labels_without_replicas(&key.labels))
                .or_default()
                .push((key.clone(), b.clone()));
        }
    }

    for (counter, by_family) in mapped {
        let mut total: Option<Interval> = None;
        let mut weakest = Method::PhaseTotal;
        for (family, pools) in by_family {
            let spellings: BTreeSet<&str> = pools
                .values()
                .flatten()
                .map(|(k, _)| k.spelling.as_str())
                .collect();
            if spellings.len() > 1 {
                let names = spellings.iter().copied().collect::<Vec<_>>().join(", ");
                if counter.is_priced() && priced {
                    reasons.push(
                        Reason::new(
                            ReasonCode::AliasCollision,
                            format!("{} is exported under {} names ({names}): refusing to guess which to price", counter.as_str(), spellings.len()),
                        )
                        .at(endpoint)
                        .metric(family.clone()),
                    );
                } else {
                    reasons.push(
                        Reason::new(
                            ReasonCode::AliasDropped,
                            format!(
                                "{} is exported under {} names ({names}); kept the first",
                                counter.as_str(),
                                spellings.len()
                            ),
                        )
                        .at(endpoint)
                        .metric(family.clone()),
                    );
                }
            }
            let keep = spellings
                .iter()
                .next()
                .map(|s| s.to_string())
                .unwrap_or_default();
            for (_, series) in pools {
                let series: Vec<&(SeriesKey, Bounded)> =
                    series.iter().filter(|(k, _)| k.spelling == keep).collect();
                let Some((_, first)) = series.first() else {
                    continue;
                };
                if series.iter().any(|(_, b)| !agree(b, first)) && priced {
                    reasons.push(
                        Reason::new(
                            ReasonCode::ReplicaDisagreement,
                            format!(
                                "{} replica series of one pool ({}) disagree",
                                series.len(),
                                REPLICA_LABELS.join("/")
                            ),
                        )
                        .at(endpoint)
                        .metric(family.clone()),
                    );
                }
                if priced && series.iter().any(|(_, b)| b.reset) {
                    reasons.push(
                        Reason::new(
                            ReasonCode::CounterReset,
                            "the counter decreased inside the window (a restart): the increase cannot be accounted exactly",
                        )
                        .at(endpoint)
                        .metric(family.clone()),
                    );
                }
                if priced && series.iter().any(|(_, b)| b.non_finite) {
                    reasons.push(
                        Reason::new(
                            ReasonCode::NonFiniteCounter,
                            "a counter value is NaN, infinite or negative",
                        )
                        .at(endpoint)
                        .metric(family.clone()),
                    );
                }
                if method_rank(first.method) > method_rank(weakest) {
                    weakest = first.method;
                }
                out.straddles += first.straddles;
                out.gaps += first.gaps;
                total = Some(total.map_or(first.interval, |t| t.plus(first.interval)));
            }
        }
        if let Some(t) = total {
            out.counters.insert(counter, (t, weakest));
        }
    }
    out
}

fn bounds_sum(items: impl Iterator<Item = Interval>) -> Option<Interval> {
    items.fold(None, |acc, i| Some(acc.map_or(i, |a: Interval| a.plus(i))))
}

fn fmt_hi(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.6}")
    } else {
        "unbounded".to_string()
    }
}

/// Account one run under a policy.
pub fn account_run(run: &Run, policy: &Policy) -> Accounting {
    let ev = evidence::collect(run);
    let mut reasons: Vec<Reason> = Vec::new();
    let framework = run.launch.as_ref().and_then(|l| l.framework.clone());
    let tiers = TierContext {
        offloading: run.launch.as_ref().and_then(|l| l.kv_offloading.clone()),
        backend: run.launch.as_ref().and_then(|l| {
            l.kv_offload_backend
                .as_ref()
                .map(|b| b.to_ascii_lowercase())
        }),
    };

    // Endpoints, their engine and the facts roles are decided from.
    let mut endpoint_facts: BTreeMap<String, EndpointFacts> = BTreeMap::new();
    let mut engines: BTreeMap<String, Engine> = BTreeMap::new();
    for (url, fams) in &ev.families {
        let engine = detect_engine(fams.keys().map(String::as_str), framework.as_deref());
        let label_sets: Vec<Labels> = ev
            .series
            .keys()
            .chain(ev.gauges.keys())
            .filter(|k| &k.endpoint_url == url)
            .map(|k| k.labels.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        endpoint_facts.insert(
            url.clone(),
            EndpointFacts {
                has_engine: engine.is_some(),
                has_frontend: fams.keys().any(|k| dynamo::is_frontend_family(k)),
                label_sets,
            },
        );
        if let Some(e) = engine {
            engines.insert(url.clone(), e);
        }
    }
    let decisions = roles::assign(&endpoint_facts, run.launch.as_ref(), &mut reasons);
    let role_of = |url: &str| decisions.get(url).and_then(|d| d.role);
    let is_priced_role = |r: Option<Role>| matches!(r, Some(Role::Prefill | Role::Unified));

    // NOT_MEASURED and the priced-role checks.
    let priced_endpoints: Vec<String> = engines
        .keys()
        .filter(|u| is_priced_role(role_of(u)))
        .cloned()
        .collect();
    let maybe_priced = engines
        .keys()
        .any(|u| is_priced_role(role_of(u)) || role_of(u).is_none());
    if engines.is_empty() {
        let unsupported = framework.as_deref().filter(|f| {
            Engine::from_framework(f).is_none() && !f.to_ascii_lowercase().contains("dynamo")
        });
        match unsupported {
            Some(f) => reasons.push(Reason::new(
                ReasonCode::UnsupportedEngine,
                format!("framework `{f}` has no kvledger adapter and no supported engine metrics were found"),
            )),
            None => reasons.push(Reason::new(
                ReasonCode::NoEngineMetrics,
                "no endpoint exports vLLM, SGLang, TensorRT-LLM or ATOM metrics",
            )),
        }
    } else if !maybe_priced {
        reasons.push(Reason::new(
            ReasonCode::NoEngineMetrics,
            "no prefill or unified endpoint exports engine metrics (decode re-counts prompts: never priced)",
        ));
    }
    if let Some(l) = &run.launch {
        let scraped: BTreeSet<String> = ev.families.keys().map(|u| host_port(u)).collect();
        let listed = l.prefill_endpoints.iter().chain(&l.agg_endpoints).chain(
            l.endpoint_roles
                .iter()
                .filter(|(_, r)| matches!(r, Role::Prefill | Role::Unified))
                .map(|(e, _)| e),
        );
        for hp in listed.collect::<BTreeSet<_>>() {
            if !scraped.contains(hp) {
                reasons.push(
                    Reason::new(
                        ReasonCode::WorkerMissing,
                        format!("the launch facts list {hp} as a priced worker but no metrics of it were scraped"),
                    )
                    .at(hp.clone()),
                );
            }
        }
    }

    let (window, window_source) = window_of(run);
    if window.is_none() {
        reasons.push(Reason::new(
            ReasonCode::WindowMissing,
            "no phase_time_ranges.profiling and no timed profiling records: the window is unknown",
        ));
    }
    let ctx = Ctx {
        ev: &ev,
        window,
        policy,
        tiers: tiers.clone(),
    };

    // Counters per endpoint.
    let mut per_endpoint: BTreeMap<String, EndpointCounters> = BTreeMap::new();
    let mut cpu_measured_all = !priced_endpoints.is_empty();
    let mut tier_aliases: BTreeSet<(Counter, Counter)> = BTreeSet::new();
    let mut ratio_gauges: BTreeSet<String> = BTreeSet::new();
    for (url, engine) in &engines {
        let role = role_of(url);
        let priced = is_priced_role(role);
        let mut counters = endpoint_counters(&ctx, url, *engine, priced, &mut reasons);
        let present = present_keys(&ev, url, *engine);
        let assessment = adapter(*engine).assess(url, &present, &tiers);
        if let Some((_, m)) = counters.counters.get(&Counter::Prompt).copied() {
            for c in &assessment.zero_when_absent {
                counters.counters.entry(*c).or_insert((Interval::ZERO, m));
            }
        }
        ratio_gauges.extend(assessment.ratio_gauges.iter().cloned());
        if priced {
            reasons.extend(assessment.reasons);
            cpu_measured_all &= assessment.cpu_measured;
            tier_aliases.extend(assessment.tier_aliases);
        }
        if priced {
            if let Some(detail) = restart_evidence(&ev, url, window) {
                reasons.push(
                    Reason::new(ReasonCode::CounterReset, detail)
                        .at(url.clone())
                        .metric(evidence::PROCESS_START),
                );
            }
        }
        if role == Some(Role::Decode) {
            reasons.push(
                Reason::new(
                    ReasonCode::DecodeExcluded,
                    "decode endpoint: re-counts prompts it never served from cache; excluded from rates and totals",
                )
                .at(url.clone()),
            );
        }
        per_endpoint.insert(url.clone(), counters);
    }
    for g in dynamo::RATIO_GAUGES {
        if ev.families.values().any(|f| f.contains_key(g)) {
            ratio_gauges.insert(g.to_string());
        }
    }
    if !ratio_gauges.is_empty() {
        reasons.push(
            Reason::new(
                ReasonCode::RatioGaugeTelemetry,
                "ratio gauges are reported as telemetry only: never priced, never averaged into a rate",
            )
            .metric(ratio_gauges.iter().cloned().collect::<Vec<_>>().join(", ")),
        );
    }
    for (url, d) in &decisions {
        if d.role == Some(Role::Frontend) && engines.contains_key(url) {
            reasons.push(
                Reason::new(
                    ReasonCode::FrontendSeparate,
                    "frontend endpoint re-exporting engine series: a separate scope, never priced",
                )
                .at(url.clone()),
            );
        }
    }

    // Priced-role sums.
    let priced_sum = |c: Counter| {
        bounds_sum(
            priced_endpoints
                .iter()
                .filter_map(|u| per_endpoint.get(u))
                .filter_map(|e| e.counters.get(&c).map(|(i, _)| *i)),
        )
    };
    let f = priced_sum(Counter::Prompt);
    let g = priced_sum(Counter::HitGpu);
    let c = priced_sum(Counter::HitCpu);
    let x = priced_sum(Counter::HitExternal);
    let admissions = priced_sum(Counter::Admissions);

    // Evidence summary over priced counters.
    let mut weakest: Option<Method> = None;
    let mut straddles = 0;
    let mut gaps = 0;
    for u in &priced_endpoints {
        if let Some(e) = per_endpoint.get(u) {
            straddles += e.straddles;
            gaps += e.gaps;
            for (counter, (iv, m)) in &e.counters {
                if !counter.is_priced() {
                    continue;
                }
                if weakest.is_none_or(|w| method_rank(*m) > method_rank(w)) {
                    weakest = Some(*m);
                }
                if !iv.is_bounded() && window.is_some() {
                    reasons.push(
                        Reason::new(
                            ReasonCode::IncreaseUnbounded,
                            format!(
                                "no evidence bounds the in-window increase of {} from above ({:?})",
                                counter.as_str(),
                                m
                            )
                            .to_lowercase(),
                        )
                        .at(u.clone()),
                    );
                }
            }
        }
    }

    // The n ≤ d argument of the rate bound needs every priced counter of an endpoint bounded
    // by the same kind of evidence, with no grid gaps of its own.
    let aligned = priced_endpoints
        .iter()
        .filter_map(|u| per_endpoint.get(u))
        .all(|e| {
            let methods: BTreeSet<u8> = e
                .counters
                .iter()
                .filter(|(c, _)| c.is_priced())
                .map(|(_, (_, m))| method_rank(*m))
                .collect();
            e.gaps == 0 && methods.len() <= 1
        });

    // Rates.
    let zero = Interval::ZERO;
    let hits_all = [g, c, x]
        .into_iter()
        .flatten()
        .fold(None, |acc: Option<Interval>, i| {
            Some(acc.map_or(i, |a| a.plus(i)))
        });
    let mut rates_out = Rates {
        value_rule: "ratio of the counters' point estimates (exact where exact; stats.total telemetry where unbounded; interval midpoints otherwise), clamped into [lo, hi]".to_string(),
        ..Rates::default()
    };
    if let Some(f) = f {
        rates_out.gpu = g.and_then(|g| rate(g, f, aligned));
        rates_out.cpu = match (c, tiers.offload_off()) {
            (Some(c), _) => rate(c, f, aligned),
            (None, true) if g.is_some() => rate(zero, f, aligned),
            _ => None,
        };
        rates_out.external = x.and_then(|x| rate(x, f, aligned));
        rates_out.overall = hits_all.and_then(|h| rate(h, f, aligned));
        for (name, r, hit) in [
            ("gpu", rates_out.gpu, g),
            ("cpu", rates_out.cpu, c),
            ("external", rates_out.external, x),
        ] {
            if let (Some(_), Some(h)) = (r, hit) {
                if h.lo > f.hi {
                    reasons.push(Reason::new(
                        ReasonCode::HitsExceedPrompt,
                        format!(
                            "{name} hits ({}) exceed the prompt tokens ({})",
                            h.lo,
                            fmt_hi(f.hi)
                        ),
                    ));
                }
            }
        }
        if let Some(h) = hits_all {
            if h.lo > f.hi && [g, c, x].iter().flatten().count() > 1 {
                reasons.push(Reason::new(
                    ReasonCode::HitsExceedPrompt,
                    format!(
                        "all hits ({}) exceed the prompt tokens ({})",
                        h.lo,
                        fmt_hi(f.hi)
                    ),
                ));
            }
        }
        if let Some(o) = rates_out.overall {
            if o.width() > policy.max_rate_width && window.is_some() {
                reasons.push(Reason::new(
                    ReasonCode::RateTooWide,
                    format!(
                        "the overall rate is only known within [{:.6}, {:.6}] (width {:.6} > max_rate_width {})",
                        o.lo,
                        o.hi,
                        o.width(),
                        policy.max_rate_width
                    ),
                ));
            }
        }
    }
    rates_out.tier_aliases = tier_aliases
        .iter()
        .map(|(a, b)| TierAlias {
            tier: *a,
            same_as: *b,
        })
        .collect();

    // Request scope.
    let client = run.profile.as_ref().map(request_scope::client_scope);
    let engine_counts_admissions = priced_endpoints
        .iter()
        .any(|u| engines.get(u) == Some(&Engine::Atom));
    let request_scope = request_scope::check(
        client.as_ref(),
        f,
        if engine_counts_admissions {
            admissions
        } else {
            None
        },
        policy.conservation_tolerance,
        &mut reasons,
    );

    // CPU component.
    let cpu_component = if tiers.offload_off() {
        CpuComponent::NotOffloaded
    } else if cpu_measured_all {
        CpuComponent::Measured
    } else {
        CpuComponent::Missing
    };

    // Roles block.
    let mut roles_out = Roles {
        source: RoleSource::Unresolved,
        prefill: vec![],
        decode: vec![],
        unified: vec![],
        frontend: vec![],
        excluded: vec![],
        unresolved: vec![],
    };
    let mut sources_used: BTreeSet<RoleSource> = BTreeSet::new();
    for (url, d) in &decisions {
        let list = match d.role {
            Some(Role::Prefill) => &mut roles_out.prefill,
            Some(Role::Decode) => &mut roles_out.decode,
            Some(Role::Unified) => &mut roles_out.unified,
            Some(Role::Frontend) => &mut roles_out.frontend,
            Some(Role::Excluded) => &mut roles_out.excluded,
            None => &mut roles_out.unresolved,
        };
        list.push(url.clone());
        if d.role.is_some() && engines.contains_key(url) {
            sources_used.insert(d.source);
        }
    }
    roles_out.source = if !roles_out.unresolved.is_empty() {
        RoleSource::Unresolved
    } else {
        sources_used
            .into_iter()
            .next()
            .unwrap_or(RoleSource::Unresolved)
    };
    if !engines.is_empty()
        && maybe_priced
        && priced_endpoints.is_empty()
        && roles_out.unresolved.is_empty()
    {
        reasons.push(Reason::new(
            ReasonCode::NoPricedRole,
            "no endpoint has the prefill or unified role",
        ));
    }

    // Sources and per-role counters.
    let mut counters_by_role: BTreeMap<String, BTreeMap<Counter, Interval>> = BTreeMap::new();
    let mut sources = Vec::new();
    for (url, d) in &decisions {
        let e = per_endpoint.get(url);
        let mut counters = Counters::default();
        let mut methods = BTreeMap::new();
        if let Some(e) = e {
            for (c, (iv, m)) in &e.counters {
                counters.set(*c, Bounds::from(*iv));
                methods.insert(c.as_str().to_string(), *m);
                let role_name = d
                    .role
                    .map(|r| format!("{r:?}").to_lowercase())
                    .unwrap_or_else(|| "unresolved".to_string());
                let slot = counters_by_role.entry(role_name).or_default();
                let cur = slot.get(c).copied();
                slot.insert(*c, cur.map_or(*iv, |a| a.plus(*iv)));
            }
        }
        let overall = e.and_then(|e| {
            let f = e.counters.get(&Counter::Prompt)?.0;
            let h = [Counter::HitGpu, Counter::HitCpu, Counter::HitExternal]
                .iter()
                .filter_map(|c| e.counters.get(c).map(|(i, _)| *i))
                .fold(None, |acc: Option<Interval>, i| {
                    Some(acc.map_or(i, |a| a.plus(i)))
                })?;
            let methods: BTreeSet<u8> = e.counters.values().map(|(_, m)| method_rank(*m)).collect();
            rate(h, f, e.gaps == 0 && methods.len() <= 1)
        });
        sources.push(Source {
            endpoint_url: url.clone(),
            role: d.role,
            role_source: d.source,
            engine: engines.get(url).copied(),
            priced: is_priced_role(d.role),
            counters,
            methods,
            overall,
        });
    }
    let counters_out: BTreeMap<String, Counters> = counters_by_role
        .into_iter()
        .map(|(role, m)| {
            let mut cs = Counters::default();
            for (c, iv) in m {
                cs.set(c, Bounds::from(iv));
            }
            (role, cs)
        })
        .collect();

    // Tokens: frontend, else the priced role when aggregated, else the client.
    let tokens = token_totals(&ev, &engines, &decisions, f, client.as_ref(), &ctx);

    // KV cache and offload.
    let kv_cache = kv_cache(&ev, &engines, &decisions);
    let offload = offload(&engines, &ctx);

    // Telemetry.
    let mut telemetry = Telemetry::default();
    for name in &ratio_gauges {
        let vals: Vec<f64> = ev
            .gauges
            .iter()
            .filter(|(k, _)| canonical_family(&k.spelling) == *name)
            .filter_map(|(_, (a, _))| a.filter(|v| v.is_finite()))
            .collect();
        if !vals.is_empty() {
            telemetry
                .ratio_gauges
                .insert(name.clone(), vals.iter().sum::<f64>() / vals.len() as f64);
        }
    }
    telemetry.frontend_hit_rate = frontend_hit_rate(&ev);
    telemetry.vllm_hits_over_queries = vllm_hits_over_queries(&ctx, &priced_endpoints, &engines);

    let theoretical = run.summary.as_ref().and_then(|s| {
        let v = s.theoretical_prefix_cache_hit?;
        let percent = s
            .theoretical_prefix_cache_hit_unit
            .as_deref()
            .is_some_and(|u| u.contains('%') || u.eq_ignore_ascii_case("percent"));
        let v = if percent { v / 100.0 } else { v };
        v.is_finite().then_some(v)
    });

    // The verdict.
    reasons.sort();
    reasons.dedup();
    let status = status_of(&reasons);
    let pricing_eligible = status == Status::ValidComplete;
    let engine = priced_endpoints
        .iter()
        .filter_map(|u| engines.get(u))
        .next()
        .or_else(|| engines.values().next())
        .copied();

    let mut observed_tiers = Vec::new();
    if rates_out.gpu.is_some() {
        observed_tiers.push("gpu".to_string());
    }
    if c.is_some() || cpu_component == CpuComponent::NotOffloaded {
        observed_tiers.push("cpu".to_string());
    }
    if rates_out.external.is_some() {
        observed_tiers.push("external".to_string());
    }
    let mut observed_roles: Vec<Role> =
        priced_endpoints.iter().filter_map(|u| role_of(u)).collect();
    observed_roles.sort();
    observed_roles.dedup();
    let disaggregated = run
        .launch
        .as_ref()
        .and_then(|l| l.disaggregated)
        .unwrap_or(!roles_out.prefill.is_empty());
    let requested_roles = if disaggregated {
        vec![Role::Prefill]
    } else {
        vec![Role::Unified]
    };
    let requested_tiers = if tiers.offload_off() {
        vec!["gpu".to_string()]
    } else {
        vec!["gpu".to_string(), "cpu".to_string(), "external".to_string()]
    };

    let legacy = legacy(
        &rates_out,
        &tokens,
        &kv_cache,
        theoretical,
        pricing_eligible,
        status,
        c,
        x,
    );

    Accounting {
        contract_version: CONTRACT_VERSION.to_string(),
        cache_validity: CacheValidity {
            status,
            pricing_eligible,
            reasons,
            requested_scope: Scope {
                roles: requested_roles,
                tiers: requested_tiers,
            },
            observed_scope: Scope {
                roles: observed_roles,
                tiers: observed_tiers,
            },
            cpu_component,
            roles: roles_out,
            window: WindowInfo {
                start_ns: window.map(|w| w.start_ns),
                end_ns: window.map(|w| w.end_ns),
                source: window_source,
                evidence: weakest,
                straddles,
                gaps,
            },
            request_scope,
            contract_version: CONTRACT_VERSION.to_string(),
        },
        engine,
        rates: rates_out,
        counters: counters_out,
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

/// A restart of the endpoint's process inside the window: its start time changed. Counters
/// restart at 0 then, whether or not a scrape caught them lower than before.
fn restart_evidence(ev: &Evidence, endpoint: &str, window: Option<Window>) -> Option<String> {
    if let Some((lo, hi)) = ev.process_start_stats.get(endpoint) {
        if hi > lo {
            return Some(format!(
                "the process restarted during the profiling phase (process_start_time_seconds went from {lo} to {hi}): its counters restarted at 0"
            ));
        }
    }
    let w = window?;
    let samples = ev.process_start_samples.get(endpoint)?;
    let before = samples
        .iter()
        .rev()
        .find(|s| s.0 <= w.start_ns)
        .or(samples.first())?;
    let after = samples
        .iter()
        .find(|s| s.0 >= w.end_ns)
        .or(samples.last())?;
    let moved = samples
        .iter()
        .filter(|s| s.0 >= before.0 && s.0 <= after.0)
        .any(|s| s.1 != before.1);
    moved.then(|| {
        "the process restarted inside the window (process_start_time_seconds changed): its counters restarted at 0".to_string()
    })
}

/// The estimate of a non-canonical counter family summed over some endpoints.
fn family_estimate(ctx: &Ctx<'_>, endpoints: &[&String], family: &str) -> Option<f64> {
    let window = ctx.window.unwrap_or(Window {
        start_ns: 0,
        end_ns: u64::MAX,
    });
    let mut total = None;
    for (k, sev) in &ctx.ev.series {
        if !endpoints.iter().any(|e| **e == k.endpoint_url)
            || canonical_family(&k.spelling) != family
        {
            continue;
        }
        let cov = ctx.ev.coverage.get(&k.endpoint_url).copied();
        let first_mass = ctx.ev.first_mass_end.get(&k.endpoint_url).copied();
        let b = bound(sev, window, cov, first_mass, ctx.policy);
        total = Some(total.unwrap_or(0.0) + b.interval.est);
    }
    total
}

#[allow(clippy::too_many_arguments)]
fn token_totals(
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

fn kv_cache(
    ev: &Evidence,
    engines: &BTreeMap<String, Engine>,
    decisions: &BTreeMap<String, RoleDecision>,
) -> KvCache {
    let mut endpoints = Vec::new();
    let mut pools: BTreeMap<Role, Option<f64>> = BTreeMap::new();
    for (url, e) in engines {
        let role = decisions.get(url).and_then(|d| d.role);
        let cap = diagnostics::capacity(ev, url, *e);
        let (avg, max) = diagnostics::usage(ev, url, *e);
        if let Some(r) = role {
            let slot = pools.entry(r).or_insert(Some(0.0));
            *slot = match (*slot, cap) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            };
        }
        endpoints.push(KvEndpoint {
            endpoint_url: url.clone(),
            role,
            capacity_tokens: cap,
            usage_avg: avg,
            usage_max: max,
        });
    }
    let prefill = pools.get(&Role::Prefill).copied().flatten();
    let decode = pools.get(&Role::Decode).copied().flatten();
    let unified = pools.get(&Role::Unified).copied().flatten();
    KvCache {
        pool_tokens: if pools.contains_key(&Role::Decode) {
            decode
        } else {
            unified
        },
        prefill_pool_tokens: prefill,
        decode_pool_tokens: decode,
        endpoints,
    }
}

fn offload(engines: &BTreeMap<String, Engine>, ctx: &Ctx<'_>) -> Offload {
    let mut o = Offload::default();
    for (url, e) in engines {
        let Some(fams) = diagnostics::offload_families(*e) else {
            continue;
        };
        let eps = [url];
        let add = |slot: &mut Option<f64>, fam: &str| {
            if fam.is_empty() {
                return;
            }
            if let Some(v) = family_estimate(ctx, &eps, fam) {
                *slot = Some(slot.unwrap_or(0.0) + v);
            }
        };
        add(&mut o.bytes_gpu_to_cpu, fams[0]);
        add(&mut o.bytes_cpu_to_gpu, fams[1]);
        add(&mut o.time_gpu_to_cpu_s, fams[2]);
        add(&mut o.time_cpu_to_gpu_s, fams[3]);
    }
    let bw = |b: Option<f64>, t: Option<f64>| match (b, t) {
        (Some(b), Some(t)) if t > 0.0 => Some(b / t),
        _ => None,
    };
    o.bandwidth_gpu_to_cpu_bytes_per_s = bw(o.bytes_gpu_to_cpu, o.time_gpu_to_cpu_s);
    o.bandwidth_cpu_to_gpu_bytes_per_s = bw(o.bytes_cpu_to_gpu, o.time_cpu_to_gpu_s);
    o
}

fn frontend_hit_rate(ev: &Evidence) -> Option<f64> {
    let sum_of = |fam: &str| -> Option<f64> {
        let v: Vec<f64> = ev
            .histograms
            .iter()
            .filter(|(k, _)| canonical_family(&k.spelling) == fam)
            .filter_map(|(_, (_, s))| *s)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum())
    };
    let cached = sum_of(dynamo::FRONTEND_CACHED)?;
    let input = sum_of(dynamo::FRONTEND_ISL)?;
    (input > 0.0).then(|| cached / input)
}

fn vllm_hits_over_queries(
    ctx: &Ctx<'_>,
    priced: &[String],
    engines: &BTreeMap<String, Engine>,
) -> Option<f64> {
    let eps: Vec<&String> = priced
        .iter()
        .filter(|u| engines.get(*u) == Some(&Engine::Vllm))
        .collect();
    if eps.is_empty() {
        return None;
    }
    let hits = family_estimate(ctx, &eps, crate::engines::vllm::HITS)?;
    let queries = family_estimate(ctx, &eps, crate::engines::vllm::QUERIES)?;
    (queries > 0.0).then(|| hits / queries)
}

#[allow(clippy::too_many_arguments)]
fn legacy(
    rates: &Rates,
    tokens: &Tokens,
    kv: &KvCache,
    theoretical: Option<f64>,
    eligible: bool,
    status: Status,
    c: Option<Interval>,
    x: Option<Interval>,
) -> Legacy {
    let non_gpu = c.is_some() || x.is_some();
    let external = if non_gpu {
        let cpu = rates.cpu.map(|r: Rate| r.value).unwrap_or(0.0);
        let ext = rates.external.map(|r| r.value).unwrap_or(0.0);
        Some(cpu + ext)
    } else {
        None
    };
    let round = |v: f64| -> Option<u64> {
        (v.is_finite() && (0.0..1.8e19).contains(&v)).then(|| v.round() as u64)
    };
    Legacy {
        server_gpu_cache_hit_rate: rates.gpu.map(|r| r.value),
        server_cpu_cache_hit_rate: rates.cpu.map(|r| r.value),
        server_external_cache_hit_rate: external,
        total_prompt_tokens: tokens.prompt_total.and_then(round),
        total_generation_tokens: tokens.generation_total.and_then(round),
        kv_cache_pool_tokens: kv.pool_tokens.and_then(round),
        theoretical_cache_hit_rate: theoretical,
        cache_pricing_eligible: eligible,
        cache_validity_status: status,
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
