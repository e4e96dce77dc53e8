//! The canonical counters over time, for people looking at a run (the visualizer): per
//! endpoint and counter, the timeslices' increments or the raw scrapes' cumulative values,
//! pools summed as `pools.rs` sums them, with the evidence the bounds were made from marked
//! (the profiling window, the warmup phase, edge slices, grid gaps, resets). Display only:
//! nothing here feeds a rate or the verdict, which `pools.rs` and `interval.rs` decide.

use super::evidence::{SeriesEvidence, Slice};
use super::interval::{slice_edges, Window};
use super::pools::{by_counter, by_family, by_pool, map_series};
use super::roles::Deployment;
use super::Ctx;
use crate::engines::{Counter, Engine};
use crate::inspect::InspectedFile;
use crate::model::Role;
use crate::read::run::IgnoredFile;
use crate::read::Run;
use crate::wire::EpochNs;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A series keeps at most this many points; longer ones are merged (slices: consecutive
/// slices of one phase summed; scrapes: every k-th sample kept, resets always kept).
pub const MAX_POINTS: usize = 2000;

/// Clock jitter tolerated between stated slice bounds before a hole counts as a gap (as in
/// `interval.rs`).
const GAP_TOLERANCE_NS: u64 = 1_000_000;

/// A stretch of time, in seconds from the timeline's origin.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct Span {
    pub start_s: f64,
    pub end_s: f64,
}

/// One timeslice of a counter (pools summed): its increase over its stated bounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct SlicePoint {
    pub start_s: f64,
    pub end_s: f64,
    pub increase: f64,
    /// A slice of the warmup phase (`warmup_metrics`).
    pub warmup: bool,
    /// An edge slice of the profiling window: its mass counted toward the upper bound only.
    pub edge: bool,
}

/// One raw cumulative sample of a counter (pools summed).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct SamplePoint {
    pub t_s: f64,
    pub value: f64,
    /// Lower than the sample before it: the counter restarted.
    pub reset: bool,
}

/// One canonical counter of one endpoint over time.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct CounterTimeline {
    pub counter: Counter,
    /// Warmup and profiling timeslices, sorted by start (empty without timeslices).
    pub slices: Vec<SlicePoint>,
    /// Raw cumulative samples, sorted by time (empty without scrapes).
    pub samples: Vec<SamplePoint>,
    /// Holes in the profiling slice grid, the window's start before the first slice and its
    /// end after the last included.
    pub gaps: Vec<Span>,
    /// The slices add up to more than the export's total: AIPerf clamped a reset to 0.
    pub slices_exceed_total: bool,
    /// Points were merged to keep at most [`MAX_POINTS`]: this many original points per point.
    pub merged: u32,
}

/// One engine endpoint's counters over time.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct EndpointTimeline {
    pub endpoint_url: String,
    /// Absent: unresolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub role: Option<Role>,
    pub engine: Engine,
    /// The process restarted inside the window (`process_start_time_seconds`).
    pub restarted: bool,
    pub counters: Vec<CounterTimeline>,
}

/// The canonical counters of every engine endpoint over time.
#[derive(Debug, Clone, PartialEq, Default, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct Timeline {
    /// The instant every `*_s` offset counts from (the earliest time seen), epoch ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub origin_ns: Option<EpochNs>,
    /// The profiling window.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub window: Option<Span>,
    /// The warmup phase (`phase_time_ranges.warmup`, else the warmup slices' extent).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub warmup: Option<Span>,
    pub endpoints: Vec<EndpointTimeline>,
}

/// What a person inspecting a run sees beside its accounting: the files read and ignored, and
/// the counters over time.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct RunDetail {
    pub files: Vec<InspectedFile>,
    pub ignored: Vec<IgnoredFile>,
    pub timeline: Timeline,
}

/// Per counter of one endpoint, the evidence of the series it sums: in each family the first
/// spelling (the one `pools.rs` keeps), and of each pool its first replica (replicas must agree).
fn summed_series<'a>(
    ctx: &'a Ctx<'_>,
    url: &str,
    engine: Engine,
) -> Vec<(Counter, Vec<&'a SeriesEvidence>)> {
    let mapped = map_series(ctx, url, engine);
    let mut out = Vec::new();
    for of_counter in by_counter(&mapped.list) {
        let Some(counter) = of_counter.first().map(|m| m.counter) else {
            continue;
        };
        let mut evidence = Vec::new();
        for of_family in by_family(of_counter) {
            let keep = of_family.iter().map(|m| &m.key.spelling).min();
            for replicas in by_pool(of_family) {
                let first = replicas.iter().find(|m| Some(&m.key.spelling) == keep);
                if let Some(m) = first {
                    evidence.push(m.evidence);
                }
            }
        }
        out.push((counter, evidence));
    }
    out
}

/// Slices summed across series by their stated bounds: every series' slices in one list,
/// sorted by bounds (stable: equal bounds keep series order, the order their masses are added
/// in) and merged. Put one by one into a sorted vector, series whose bounds differ made the
/// timeline quadratic (8,000 series of 40 slices each, offset by a microsecond: 25.6 s in Node).
fn sum_slices(series: &[&SeriesEvidence], warmup: bool) -> Vec<Slice> {
    let mut all: Vec<Slice> = series
        .iter()
        .flat_map(|s| slices_of(s, warmup).iter().copied())
        .collect();
    crate::sort::sort_by_key(&mut all, |s| (s.start_ns, s.end_ns));
    let mut out: Vec<Slice> = Vec::with_capacity(all.len());
    for sl in all {
        match out.last_mut() {
            Some(o) if (o.start_ns, o.end_ns) == (sl.start_ns, sl.end_ns) => o.total += sl.total,
            _ => out.push(sl),
        }
    }
    out
}

/// A series' profiling slices, or its warmup ones.
fn slices_of(s: &SeriesEvidence, warmup: bool) -> &[Slice] {
    if warmup {
        s.warmup_slices()
    } else {
        &s.slices
    }
}

/// Samples summed across series by time (the pools of one endpoint come from one scrape):
/// at each instant the series' values in series order. A series' leading 0s (one per scrape
/// before it appeared) are taken once per instant, whichever series has them: adding 0 to a
/// sum leaves it as it is (only a `-0.0` becomes `0.0`, wherever the 0 comes in the order),
/// and makes the instant a point. So the sum costs the samples carried, sorted once.
fn sum_samples(series: &[&SeriesEvidence]) -> Vec<(u64, f64)> {
    let mut all: Vec<(u64, f64)> = series.iter().flat_map(|s| s.samples.carried()).collect();
    // Stable: equal instants keep series order.
    crate::sort::sort_by_key(&mut all, |s| s.0);
    // Series of one endpoint share one array of scrape times: its longest prefix holds the
    // others' 0s (a timeline sums the series of one endpoint: one array, rarely more).
    let mut longest: Vec<(*const u64, &[u64])> = Vec::new();
    for s in series {
        if let Some(src) = s.samples.leading_zeros_source() {
            let times = s.samples.leading_zero_times();
            match longest.iter_mut().find(|(p, _)| *p == src.as_ptr()) {
                Some((_, held)) if times.len() > held.len() => *held = times,
                Some(_) => {}
                None => longest.push((src.as_ptr(), times)),
            }
        }
    }
    let mut zeros: Vec<u64> = longest.into_iter().flat_map(|(_, t)| t).copied().collect();
    zeros.sort_unstable();
    zeros.dedup();
    let mut out: Vec<(u64, f64)> = Vec::with_capacity(all.len() + zeros.len());
    let mut zeros = zeros.into_iter().peekable();
    for (t, v) in all {
        while let Some(z) = zeros.next_if(|z| *z < t) {
            out.push((z, 0.0));
        }
        match out.last_mut() {
            Some(last) if last.0 == t => last.1 += v,
            _ => out.push((t, v)),
        }
        if zeros.next_if_eq(&t).is_some() {
            if let Some(last) = out.last_mut() {
                last.1 += 0.0;
            }
        }
    }
    out.extend(zeros.map(|z| (z, 0.0)));
    out
}

/// Seconds of `t` after `origin` (exact to the nanosecond for runs shorter than ~100 days).
fn secs(t: u64, origin: u64) -> f64 {
    t.saturating_sub(origin) as f64 / 1e9
}

/// Profiling slices' edges as `interval.rs` decides them: a mask over `slices`.
fn edge_mask(slices: &[Slice], w: Option<Window>, first_mass_end_ns: Option<u64>) -> Vec<bool> {
    let Some(w) = w else {
        return vec![false; slices.len()];
    };
    let inside: Vec<usize> = (0..slices.len())
        .filter(|&i| slices[i].end_ns > w.start_ns || slices[i].start_ns >= w.start_ns)
        .collect();
    let kept: Vec<Slice> = inside.iter().map(|&i| slices[i]).collect();
    let mut mask = vec![false; slices.len()];
    if let Some(edges) = slice_edges(&kept, w, first_mass_end_ns) {
        for (j, &i) in inside.iter().enumerate() {
            mask[i] = edges.start_edge_end.is_some_and(|e| j <= e) || j >= edges.end_edge_start;
        }
    }
    mask
}

fn gaps_of(slices: &[Slice], w: Option<Window>, origin: u64) -> Vec<Span> {
    let Some(w) = w else {
        return Vec::new();
    };
    let inside: Vec<&Slice> = slices
        .iter()
        .filter(|s| s.end_ns > w.start_ns || s.start_ns >= w.start_ns)
        .collect();
    let (Some(first), Some(last)) = (inside.first(), inside.last()) else {
        return Vec::new();
    };
    let mut holes = Vec::new();
    if first.start_ns > w.start_ns.saturating_add(GAP_TOLERANCE_NS) {
        holes.push((w.start_ns, first.start_ns));
    }
    for p in inside.windows(2) {
        if p[1].start_ns > p[0].end_ns.saturating_add(GAP_TOLERANCE_NS) {
            holes.push((p[0].end_ns, p[1].start_ns));
        }
    }
    if last.end_ns.saturating_add(GAP_TOLERANCE_NS) < w.end_ns {
        holes.push((last.end_ns, w.end_ns));
    }
    holes
        .into_iter()
        .map(|(a, b)| Span {
            start_s: secs(a, origin),
            end_s: secs(b, origin),
        })
        .collect()
}

/// Consecutive slices of one phase merged `k` at a time (their increases summed).
fn merge_slices(points: Vec<SlicePoint>, k: usize) -> Vec<SlicePoint> {
    let mut out: Vec<SlicePoint> = Vec::with_capacity(points.len() / k + 2);
    let mut run = 0usize;
    for p in points {
        match out.last_mut() {
            Some(last) if run < k && last.warmup == p.warmup => {
                last.end_s = p.end_s;
                last.increase += p.increase;
                last.edge |= p.edge;
                run += 1;
            }
            _ => {
                out.push(p);
                run = 1;
            }
        }
    }
    out
}

/// Every `k`-th sample, and every reset with the sample before it, and the last.
fn thin_samples(points: Vec<SamplePoint>, k: usize) -> Vec<SamplePoint> {
    let n = points.len();
    (0..n)
        .filter(|&i| {
            i % k == 0
                || i + 1 == n
                || points[i].reset
                || points.get(i + 1).is_some_and(|p| p.reset)
        })
        .map(|i| points[i])
        .collect()
}

fn counter_timeline(
    counter: Counter,
    series: &[&SeriesEvidence],
    w: Option<Window>,
    first_mass_end_ns: Option<u64>,
    origin: u64,
) -> CounterTimeline {
    let profiling = sum_slices(series, false);
    let edges = edge_mask(&profiling, w, first_mass_end_ns);
    let point = |s: &Slice, warmup: bool, edge: bool| SlicePoint {
        start_s: secs(s.start_ns, origin),
        end_s: secs(s.end_ns, origin),
        increase: s.total,
        warmup,
        edge,
    };
    // Both lists are sorted; profiling slices are inserted in start order (they normally all
    // follow the warmup ones, so this appends).
    let mut slices: Vec<SlicePoint> = Vec::new();
    for s in sum_slices(series, true) {
        slices.push(point(&s, true, false));
    }
    for (s, &e) in profiling.iter().zip(&edges) {
        let p = point(s, false, e);
        let at = slices.partition_point(|q| q.start_s <= p.start_s);
        slices.insert(at, p);
    }
    let raw = sum_samples(series);
    let mut samples: Vec<SamplePoint> = raw
        .iter()
        .enumerate()
        .map(|(i, &(t, v))| SamplePoint {
            t_s: secs(t, origin),
            value: v,
            reset: i > 0 && v < raw[i - 1].1,
        })
        .collect();
    let n = slices.len().max(samples.len());
    let k = n.div_ceil(MAX_POINTS).max(1);
    if k > 1 {
        slices = merge_slices(slices, k);
        samples = thin_samples(samples, k);
    }
    let slices_exceed_total = series.iter().any(|s| match s.stats_total.get() {
        Some(t) => {
            let sum: f64 = s.slices.iter().map(|x| x.total).sum();
            t + 0.5 + sum * 1e-9 < sum
        }
        None => false,
    });
    CounterTimeline {
        counter,
        slices,
        samples,
        gaps: gaps_of(&profiling, w, origin),
        slices_exceed_total,
        merged: k as u32,
    }
}

/// The earliest instant any point of the run's counters or phases has.
fn origin_of(ctx: &Ctx<'_>, warmup: Option<Window>) -> Option<u64> {
    let series = ctx.ev.series.values().flat_map(|s| {
        let first_slice = s
            .warmup_slices()
            .first()
            .into_iter()
            .chain(s.slices.first())
            .map(|x| x.start_ns);
        first_slice.chain(s.samples.iter().next().map(|x| x.0))
    });
    series
        .chain(ctx.window.map(|w| w.start_ns))
        .chain(warmup.map(|w| w.start_ns))
        .min()
}

fn warmup_range(run: &Run, ctx: &Ctx<'_>) -> Option<Window> {
    if let Some(r) = run
        .server_json
        .as_ref()
        .and_then(|s| s.summary.phase_time_ranges.warmup)
    {
        return Some(Window {
            start_ns: r.start_ns,
            end_ns: r.end_ns,
        });
    }
    let slices = ctx
        .ev
        .series
        .values()
        .flat_map(|s| s.warmup_slices().iter());
    let start = slices.clone().map(|s| s.start_ns).min()?;
    let end = slices.map(|s| s.end_ns).max()?;
    Some(Window {
        start_ns: start,
        end_ns: end,
    })
}

/// The counters over time of every engine endpoint, by URL.
pub fn build(
    ctx: &Ctx<'_>,
    engines: &BTreeMap<Arc<str>, Engine>,
    dep: &Deployment,
    run: &Run,
) -> Timeline {
    let warmup = warmup_range(run, ctx);
    let origin = origin_of(ctx, warmup).unwrap_or(0);
    let span = |w: Window| Span {
        start_s: secs(w.start_ns, origin),
        end_s: secs(w.end_ns, origin),
    };
    let endpoints = engines
        .iter()
        .map(|(url, engine)| {
            let first_mass_end = ctx.ev.first_mass_end.get(url).copied();
            EndpointTimeline {
                endpoint_url: url.to_string(),
                role: dep.role_of(url),
                engine: *engine,
                restarted: ctx.restarts.contains_key(url),
                counters: summed_series(ctx, url, *engine)
                    .into_iter()
                    .map(|(c, series)| {
                        counter_timeline(c, &series, ctx.window, first_mass_end, origin)
                    })
                    .collect(),
            }
        })
        .collect();
    Timeline {
        origin_ns: (origin > 0).then_some(EpochNs(origin)),
        window: ctx.window.map(span),
        warmup: warmup.map(span),
        endpoints,
    }
}

/// The files of `run` as `inspect` lists them.
pub fn files_of(run: &Run) -> Vec<InspectedFile> {
    run.files
        .iter()
        .map(|f| InspectedFile {
            name: f.name.clone(),
            kind: f.kind,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::account::fold::SampleBuf;
    use std::sync::Arc;

    /// The sum as every sample, 0s included, added one by one in series order.
    fn sum_one_by_one(series: &[&SeriesEvidence]) -> Vec<(u64, f64)> {
        let mut out: Vec<(u64, f64)> = Vec::new();
        for s in series {
            for (t, v) in s.samples.iter() {
                match out.binary_search_by(|o| o.0.cmp(&t)) {
                    Ok(i) => out[i].1 += v,
                    Err(i) => out.insert(i, (t, v)),
                }
            }
        }
        out
    }

    /// Series of one or two endpoints with leading 0s of different lengths, values of both
    /// signs of zero: the sum taking each instant's 0s once is the one-by-one sum, to the bit.
    /// Slices summed as before: each put into a sorted vector in series order.
    fn sum_slices_one_by_one(series: &[&SeriesEvidence]) -> Vec<Slice> {
        let mut out: Vec<Slice> = Vec::new();
        for s in series {
            for sl in s.slices.iter() {
                let key = (sl.start_ns, sl.end_ns);
                match out.binary_search_by(|o| (o.start_ns, o.end_ns).cmp(&key)) {
                    Ok(i) => out[i].total += sl.total,
                    Err(i) => out.insert(i, *sl),
                }
            }
        }
        out
    }

    /// Bounds shared, offset, nested and repeated within a series, masses whose sum depends on
    /// their order: the merged sort sums each bound's slices in the same order, to the bit.
    #[test]
    fn slices_sum_as_put_one_by_one() {
        let mut rng = crate::synth::rng::Rng::new(13, 0);
        for _ in 0..500 {
            let n = 1 + rng.next_u64() % 5;
            let series: Vec<SeriesEvidence> = (0..n)
                .map(|_| {
                    let k = rng.next_u64() % 6;
                    let mut slices: Vec<Slice> = (0..k)
                        .map(|_| {
                            let start = 100 * (rng.next_u64() % 4) + 7 * (rng.next_u64() % 2);
                            let end = start + 100 * (1 + rng.next_u64() % 2);
                            let total = [0.1, 1e16, -0.0, 3.0, 0.2, f64::NAN]
                                [(rng.next_u64() % 6) as usize];
                            Slice {
                                start_ns: start,
                                end_ns: end,
                                total,
                            }
                        })
                        .collect();
                    slices.sort_by_key(|s| s.start_ns);
                    SeriesEvidence {
                        slices: Arc::from(slices),
                        ..Default::default()
                    }
                })
                .collect();
            let refs: Vec<&SeriesEvidence> = series.iter().collect();
            let bits = |v: Vec<Slice>| -> Vec<(u64, u64, u64)> {
                v.into_iter()
                    .map(|s| (s.start_ns, s.end_ns, s.total.to_bits()))
                    .collect()
            };
            assert_eq!(
                bits(sum_slices(&refs, false)),
                bits(sum_slices_one_by_one(&refs))
            );
        }
    }

    #[test]
    fn leading_zeros_sum_as_explicit_ones() {
        let mut rng = crate::synth::rng::Rng::new(12, 0);
        let shared: [Arc<[u64]>; 2] = [
            Arc::from((0..12u64).map(|i| 100 + 10 * i).collect::<Vec<_>>()),
            Arc::from((0..12u64).map(|i| 105 + 10 * i).collect::<Vec<_>>()),
        ];
        for _ in 0..500 {
            let n = 1 + rng.next_u64() % 4;
            let series: Vec<SeriesEvidence> = (0..n)
                .map(|_| {
                    let times = &shared[(rng.next_u64() % 2) as usize];
                    let from = (rng.next_u64() % 12) as usize;
                    let mut samples = SampleBuf::new();
                    for t in &times[from..] {
                        if rng.next_u64() % 4 != 0 {
                            let v = [0.0, -0.0, 2.0, -0.0, 1.5][(rng.next_u64() % 5) as usize];
                            samples.push(*t, v);
                        }
                    }
                    if let Some(first) = samples.carried().next() {
                        let zeros = times.partition_point(|t| *t < first.0);
                        samples.set_leading_zeros(times, zeros);
                    }
                    SeriesEvidence {
                        samples,
                        ..Default::default()
                    }
                })
                .collect();
            let refs: Vec<&SeriesEvidence> = series.iter().collect();
            let bits = |v: Vec<(u64, f64)>| -> Vec<(u64, u64)> {
                v.into_iter().map(|(t, x)| (t, x.to_bits())).collect()
            };
            assert_eq!(bits(sum_samples(&refs)), bits(sum_one_by_one(&refs)));
        }
    }
}
