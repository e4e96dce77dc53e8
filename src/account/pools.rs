//! Stage 4, counters per endpoint (contract sections 2–4): each series of an engine endpoint
//! is mapped by its engine adapter to canonical counters, bounded (`interval::bound`), and
//! pooled: replica series (`tp_rank`, `pp_rank`, `moe_ep_rank`) of one pool must agree, pools
//! are summed. A priced counter under two alias names, disagreeing replicas, resets,
//! contradicting evidence and non-finite values are reasons here.

use super::endpoints::present_in;
use super::evidence::{Evidence, FamilyMap};
use super::evidence::{SeriesEvidence, SeriesKey};
use super::interval::{bound, Bounded, Interval, Method};
use super::lookup::{of_endpoint, Cursor};
use super::roles::{is_priced_role, Deployment};
use super::verdict::{Reason, ReasonCode};
use super::Ctx;
use crate::engines::{adapter, Counter, CounterMap, Engine, FamilyView, Present, REPLICA_LABELS};
use crate::model::{Labels, Role};
use crate::strmap::StrMap;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// One series of an endpoint as one canonical counter sees it: its family (the rank of its
/// canonical key among the endpoint's, see [`MappedSeries::families`]), its pool (its labels
/// without the replica labels: shared, no copy made, when it has none) and its evidence. An
/// endpoint's list is sorted by counter, family and pool, series in their order within a
/// pool: each run of equal (counter, family, pool) is one pool's replicas. (One flat list:
/// nested maps made three levels of nodes per endpoint.) The bounds are made where a pool is
/// summed, not held here: with them an entry was 64 bytes in WASM, and the list of a capture
/// of 200,000 series (12.8 MB) grew a stream's memory past 64 MB. The family is a rank, not a
/// copy of its name: 20 bytes an entry in WASM, 32 natively.
pub(super) struct Mapped<'a> {
    pub counter: Counter,
    pub family: u32,
    pub pool: Arc<Labels>,
    pub key: &'a SeriesKey,
    pub evidence: &'a SeriesEvidence,
}

/// An endpoint's mapped series, sorted (see [`Mapped`]), and their families' canonical keys.
pub(super) struct MappedSeries<'a> {
    pub list: Vec<Mapped<'a>>,
    /// The canonical keys in order, each once: a [`Mapped::family`] is a place here.
    pub families: Vec<Cow<'a, str>>,
}

impl MappedSeries<'_> {
    pub fn family(&self, m: &Mapped<'_>) -> &str {
        self.families.get(m.family as usize).map_or("", |f| f)
    }
}

/// Per endpoint: each canonical counter's pooled interval and its weakest evidence.
#[derive(Debug, Clone, Default)]
pub struct EndpointCounters {
    pub counters: CounterMap<(Interval, Method)>,
    pub straddles: u32,
    pub gaps: u32,
    /// The intervals are hulls of contradicting evidence (`SeriesContext::distrust`).
    pub hulls: bool,
    /// The run's raw samples were thinned (`evidence_coarsened`): each series kept its own
    /// samples, so the counters' unobserved mass no longer lies in the same stretches of time.
    pub thinned: bool,
}

impl EndpointCounters {
    /// The `n ≤ d` rate argument needs every priced counter bounded by one kind of evidence
    /// with no grid gaps (contract section 4, (r2)), and intervals that are not hulls of
    /// contradicting evidence (their unknown mass lies anywhere) nor drawn from samples
    /// thinned series by series.
    pub fn aligned(&self) -> bool {
        let methods: BTreeSet<u8> = crate::sort::set_of(
            self.counters
                .iter()
                .filter(|(c, _)| c.is_priced())
                .map(|(_, (_, m))| m.rank()),
        );
        !self.hulls && !self.thinned && self.gaps == 0 && methods.len() <= 1
    }
}

/// What the adapters said about the priced endpoints as a whole.
#[derive(Debug, Clone, Default)]
pub struct Counted {
    /// Built in URL order, as `engines` (a many-endpoint run's largest accounting table: in a
    /// `BTreeMap` its nodes came beside the vector it was built from).
    pub per_endpoint: StrMap<EndpointCounters>,
    /// Every priced endpoint reads a CPU-tier hit counter.
    pub cpu_measured_all: bool,
    pub tier_aliases: BTreeSet<(Counter, Counter)>,
    pub ratio_gauges: BTreeSet<String>,
    /// A priced endpoint's engine leaves some hits uncounted (`cpu_tier_uncounted`): the
    /// overall rate is bounded below only.
    pub hits_uncounted: bool,
}

/// Count every engine endpoint.
pub fn count(
    ctx: &Ctx<'_>,
    engines: &BTreeMap<Arc<str>, Engine>,
    dep: &Deployment,
    reasons: &mut Vec<Reason>,
) -> Counted {
    let mut out = Counted {
        cpu_measured_all: !dep.priced.is_empty(),
        per_endpoint: StrMap::with_capacity(engines.len()),
        ..Counted::default()
    };
    // Both in URL order, as `engines`.
    let (mut decisions, mut families_of) =
        (Cursor::new(&dep.decisions), Cursor::new(&ctx.ev.families));
    for (url, engine) in engines {
        let role = decisions.get(url).and_then(|d| d.role);
        let priced = is_priced_role(role);
        let families = families_of.get(url).map(|f| &**f);
        let present = present_in(ctx.ev, url, families, *engine);
        let mapped = map_series_present(ctx, url, *engine, families, &present);
        let mut counters = endpoint_counters(ctx, url, &mapped, priced, reasons);
        let assessment = adapter(*engine).assess(url, &present, &ctx.tiers);
        if let Some((_, m)) = counters.counters.get(Counter::Prompt).copied() {
            // A counter created on its first increment is 0 while absent, unless the process
            // restarted: then it may have counted before the restart and vanished with it.
            let absent = if ctx.restarts.contains_key(url) {
                Interval::unbounded(0.0)
            } else {
                Interval::ZERO
            };
            for c in &assessment.zero_when_absent {
                counters.counters.or_insert(*c, (absent, m));
            }
        }
        out.ratio_gauges
            .extend(assessment.ratio_gauges.iter().cloned());
        if priced || dep.withdrawn.contains(&**url) {
            out.hits_uncounted |= assessment
                .reasons
                .iter()
                .any(|r| r.code == ReasonCode::CpuTierUncounted);
            reasons.extend(assessment.reasons);
            out.cpu_measured_all &= assessment.cpu_measured;
            out.tier_aliases.extend(assessment.tier_aliases);
            sample_conflicts(ctx, url, reasons);
            if let Some(why) = ctx.restarts.get(url) {
                reasons.push(
                    Reason::new(ReasonCode::CounterReset, why.clone())
                        .at(&**url)
                        .metric(super::evidence::PROCESS_START),
                );
            }
        }
        if role == Some(Role::Decode) {
            reasons.push(
                Reason::new(
                    ReasonCode::DecodeExcluded,
                    "decode endpoint: re-counts prompts it never served from cache; excluded from rates and totals",
                )
                .at(&**url),
            );
        }
        out.per_endpoint.push_sorted(url.to_string(), counters);
    }
    out
}

/// Any series of a priced endpoint (canonical or diagnostic) with two samples at one
/// timestamp that differ: the scrape file contradicts itself.
fn sample_conflicts(ctx: &Ctx<'_>, endpoint: &str, reasons: &mut Vec<Reason>) {
    let families: BTreeSet<&str> = crate::sort::set_of(
        of_endpoint(&ctx.ev.series, endpoint)
            .filter(|(_, e)| e.sample_conflict)
            .map(|(k, _)| &*k.spelling),
    );
    for family in families {
        reasons.push(
            Reason::new(
                ReasonCode::EvidenceConflict,
                "two raw samples of this counter at one timestamp carry different values: the scrapes contradict each other, so they bound nothing",
            )
            .at(endpoint)
            .metric(family),
        );
    }
}

fn labels_without_replicas(l: &Arc<Labels>) -> Arc<Labels> {
    let is_replica = |k: &str| REPLICA_LABELS.contains(&k);
    if !l.keys().any(is_replica) {
        return Arc::clone(l);
    }
    Arc::new(l.without(is_replica))
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

/// Map the series of one endpoint (see [`Mapped`]).
pub(super) fn map_series<'a>(ctx: &Ctx<'a>, endpoint: &str, engine: Engine) -> MappedSeries<'a> {
    let families = ctx.ev.families.get(endpoint).map(|f| &**f);
    let present = present_in(ctx.ev, endpoint, families, engine);
    map_series_present(ctx, endpoint, engine, families, &present)
}

/// [`map_series`] with the endpoint's families and [`present_in`] them at hand.
fn map_series_present<'a>(
    ctx: &Ctx<'a>,
    endpoint: &str,
    engine: Engine,
    families: Option<&FamilyMap>,
    present: &Present<'_>,
) -> MappedSeries<'a> {
    let ad = adapter(engine);
    let ev: &'a Evidence = ctx.ev;
    let series = of_endpoint(&ev.series, endpoint);
    // The list and its sort's two index vectors ([`crate::admission`]).
    let per_series = std::mem::size_of::<Mapped<'_>>() + 2 * std::mem::size_of::<usize>();
    if !crate::admission::admit(series.size_hint().0.saturating_mul(per_series)) {
        return MappedSeries {
            list: Vec::new(),
            families: Vec::new(),
        };
    }
    // Mostly one counter a series, if any: room for them at once. Grown by doubling, the
    // vector of an endpoint of 80,000 series was the peak of accounting it (11.5 MB for 7).
    let mut mapped = Vec::with_capacity(series.size_hint().0);
    // An endpoint's series come by spelling: its canonical name and its family's type are
    // found once per run of them.
    let mut canon: Cow<'a, str> = Cow::Borrowed("");
    let mut metric_type = None;
    let mut canon_of: Option<&Arc<str>> = None;
    // Each run's canonical key; a series' `family` is its run's place here until ranked.
    let mut runs: Vec<Cow<'a, str>> = Vec::new();
    for (key, sev) in series {
        if !canon_of.is_some_and(|s| Arc::ptr_eq(s, &key.spelling)) {
            canon = ev.series.canonical(&key.spelling);
            metric_type = families
                .and_then(|f| f.get(&*canon))
                .and_then(|i| i.metric_type);
            canon_of = Some(&key.spelling);
            runs.push(canon.clone());
        }
        let view = FamilyView {
            key: &canon,
            spelling: &key.spelling,
            metric_type,
        };
        let counters = ad.map_series(&view, &key.labels, present, &ctx.tiers);
        if counters.is_empty() {
            continue;
        }
        let pool = labels_without_replicas(&key.labels);
        for counter in counters {
            mapped.push(Mapped {
                counter,
                family: u32::try_from(runs.len().saturating_sub(1)).unwrap_or(u32::MAX),
                pool: Arc::clone(&pool),
                key,
                evidence: sev,
            });
        }
    }
    let (families, rank_of_run) = ranked(runs);
    if !rank_of_run.is_empty() {
        for m in &mut mapped {
            m.family = rank_of_run
                .get(m.family as usize)
                .copied()
                .unwrap_or(m.family);
        }
    }
    // Stable: a pool's replicas stay in series order.
    crate::sort::sort_by(&mut mapped, |a, b| {
        (a.counter, a.family, &a.pool).cmp(&(b.counter, b.family, &b.pool))
    });
    MappedSeries {
        list: mapped,
        families,
    }
}

/// The distinct `names` in order, and each name's place among them (equal names, one place;
/// none when the names are distinct and in order already: each is its own place).
fn ranked<'a>(names: Vec<Cow<'a, str>>) -> (Vec<Cow<'a, str>>, Vec<u32>) {
    // Mostly so already (an endpoint's series come by spelling, each its own family): no sort
    // or vector is made (one of each per endpoint was 2.4 % of accounting a CSV of 25,600
    // endpoints).
    if names.windows(2).all(|w| w[0] < w[1]) {
        return (names, Vec::new());
    }
    let mut order: Vec<usize> = (0..names.len()).collect();
    crate::sort::sort_by(&mut order, |a, b| names.get(*a).cmp(&names.get(*b)));
    let mut rank = vec![0; names.len()];
    let mut distinct: Vec<Cow<'a, str>> = Vec::new();
    for i in order {
        let Some(name) = names.get(i) else { continue };
        if distinct.last() != Some(name) {
            distinct.push(name.clone());
        }
        if let Some(r) = rank.get_mut(i) {
            *r = u32::try_from(distinct.len().saturating_sub(1)).unwrap_or(u32::MAX);
        }
    }
    (distinct, rank)
}

/// The runs of `mapped` (sorted as [`Mapped`] says) with one counter.
pub(super) fn by_counter<'m, 'a>(
    mapped: &'m [Mapped<'a>],
) -> impl Iterator<Item = &'m [Mapped<'a>]> {
    mapped.chunk_by(|a, b| a.counter == b.counter)
}

/// The runs of one counter's series with one family.
pub(super) fn by_family<'m, 'a>(
    series: &'m [Mapped<'a>],
) -> impl Iterator<Item = &'m [Mapped<'a>]> {
    series.chunk_by(|a, b| a.family == b.family)
}

/// The runs of one family's series with one pool: each a pool's replicas.
pub(super) fn by_pool<'m, 'a>(series: &'m [Mapped<'a>]) -> impl Iterator<Item = &'m [Mapped<'a>]> {
    series.chunk_by(|a, b| Arc::ptr_eq(&a.pool, &b.pool) || a.pool == b.pool)
}

/// Pool and check the mapped and bounded counters of one engine endpoint.
fn endpoint_counters(
    ctx: &Ctx<'_>,
    endpoint: &str,
    mapped: &MappedSeries<'_>,
    priced: bool,
    reasons: &mut Vec<Reason>,
) -> EndpointCounters {
    let at = ctx.series_context(endpoint);
    let mut out = EndpointCounters {
        hulls: ctx.distrust,
        thinned: ctx.ev.coarsened,
        ..EndpointCounters::default()
    };
    for of_counter in by_counter(&mapped.list) {
        let Some(counter) = of_counter.first().map(|m| m.counter) else {
            continue;
        };
        let mut total: Option<Interval> = None;
        let mut weakest = Method::PhaseTotal;
        for of_family in by_family(of_counter) {
            let Some(family) = of_family.first().map(|m| mapped.family(m)) else {
                continue;
            };
            let keep = alias_check(counter, family, of_family, endpoint, priced, reasons);
            for pool in by_pool(of_family) {
                let series: Vec<Bounded> = pool
                    .iter()
                    .filter(|m| *m.key.spelling == *keep)
                    .map(|m| bound(m.evidence, &at, ctx.policy))
                    .collect();
                let Some(first) = series.first() else {
                    continue;
                };
                if priced {
                    let restarted = ctx.restarts.contains_key(endpoint);
                    series_checks(&series, endpoint, family, restarted, reasons);
                }
                if first.method.rank() > weakest.rank() {
                    weakest = first.method;
                }
                out.straddles += first.straddles;
                out.gaps += first.gaps;
                let pool = replica_hull(&series);
                total = Some(total.map_or(pool, |t| t.plus(pool)));
            }
        }
        if let Some(t) = total {
            out.counters.insert(counter, (t, weakest));
        }
    }
    out
}

/// Replicas of one pool should agree; when they do not, one of them is right and the hull
/// of theirs contains it (the run is refused anyway: `replica_disagreement`).
fn replica_hull(series: &[Bounded]) -> Interval {
    let lo = series
        .iter()
        .map(|b| b.interval.lo)
        .fold(f64::INFINITY, f64::min);
    let hi = series.iter().map(|b| b.interval.hi).fold(0.0, f64::max);
    let est = series.first().map_or(lo, |b| b.interval.est);
    Interval {
        lo,
        hi,
        est: est.clamp(lo, hi.max(lo)),
    }
}

/// One counter under several spellings on one endpoint: refused when priced, else the first
/// spelling is kept. Returns the spelling kept.
fn alias_check<'p>(
    counter: Counter,
    family: &str,
    series: &'p [Mapped<'_>],
    endpoint: &str,
    priced: bool,
    reasons: &mut Vec<Reason>,
) -> &'p str {
    let mut spellings = series.iter().map(|m| &m.key.spelling);
    let Some(first) = spellings.next() else {
        return "";
    };
    // Mostly one spelling (shared by its keys): no set is made for it.
    if spellings.all(|s| Arc::ptr_eq(s, first) || *s == *first) {
        return first;
    }
    let spellings: BTreeSet<&str> = crate::sort::set_of(series.iter().map(|m| &*m.key.spelling));
    let names = spellings.iter().copied().collect::<Vec<_>>().join(", ");
    let n = spellings.len();
    let c = counter.as_str();
    let reason = if counter.is_priced() && priced {
        Reason::new(
            ReasonCode::AliasCollision,
            format!("{c} is exported under {n} names ({names}): refusing to guess which to price"),
        )
    } else {
        Reason::new(
            ReasonCode::AliasDropped,
            format!("{c} is exported under {n} names ({names}); kept the first"),
        )
    };
    reasons.push(reason.at(endpoint).metric(family));
    spellings.iter().next().copied().unwrap_or_default()
}

/// The checks on the replica series of one pool of a priced counter. A restart of the whole
/// endpoint is reported once by `count`; here only what the series itself shows.
fn series_checks(
    series: &[Bounded],
    endpoint: &str,
    family: &str,
    restarted: bool,
    reasons: &mut Vec<Reason>,
) {
    let mut push = |code, detail: String| {
        reasons.push(Reason::new(code, detail).at(endpoint).metric(family));
    };
    if let Some(first) = series.first() {
        if series.iter().any(|b| !agree(b, first)) {
            push(
                ReasonCode::ReplicaDisagreement,
                format!(
                    "{} replica series of one pool ({}) disagree",
                    series.len(),
                    REPLICA_LABELS.join("/")
                ),
            );
        }
    }
    if !restarted && series.iter().any(|b| b.reset) {
        push(
            ReasonCode::CounterReset,
            "the counter decreased inside the window (a restart): the mass before the restart was never observed, so the increase has no upper bound".to_string(),
        );
    }
    if series.iter().any(|b| b.non_finite) {
        push(
            ReasonCode::NonFiniteCounter,
            "a counter value is NaN, infinite or negative".to_string(),
        );
    }
    if series.iter().any(|b| b.conflict) {
        push(
            ReasonCode::EvidenceConflict,
            "two kinds of evidence about this series contradict each other (export vs scrapes, CSV vs JSON, or two values at one timestamp): the interval kept is their hull".to_string(),
        );
    }
}
