//! The in-window increase of one counter series as an interval [lo, hi] guaranteed to contain
//! the true increase (CONTRACT section 4), from the strongest evidence present:
//! raw scrapes, then timeslices, then `stats.total` as an upper bound; nothing else bounds it.

use super::evidence::{Coverage, SeriesEvidence, Slice};
use super::policy::Policy;
use serde::Serialize;

/// Which evidence bounded an interval.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum Method {
    RawScrapes,
    Timeslices,
    StatsTotal,
    PhaseTotal,
    /// No evidence bounds the increase: `[0, ∞)`, the value is telemetry.
    Unbounded,
}

impl Method {
    /// Strength order, strongest first: a sum is only as strong as its weakest part.
    pub fn rank(self) -> u8 {
        match self {
            Method::PhaseTotal => 0,
            Method::RawScrapes => 1,
            Method::Timeslices => 2,
            Method::StatsTotal => 3,
            Method::Unbounded => 4,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Method::RawScrapes => "raw_scrapes",
            Method::Timeslices => "timeslices",
            Method::StatsTotal => "stats_total",
            Method::PhaseTotal => "phase_total",
            Method::Unbounded => "unbounded",
        }
    }
}

/// An interval of a non-negative quantity. `hi = f64::INFINITY` means unbounded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
    /// Point estimate inside [lo, hi] (exact when lo == hi).
    pub est: f64,
}

impl Interval {
    pub const ZERO: Interval = Interval {
        lo: 0.0,
        hi: 0.0,
        est: 0.0,
    };

    pub fn exact(v: f64) -> Interval {
        Interval {
            lo: v,
            hi: v,
            est: v,
        }
    }

    pub fn unbounded(est: f64) -> Interval {
        Interval {
            lo: 0.0,
            hi: f64::INFINITY,
            est: est.max(0.0),
        }
    }

    pub fn plus(self, o: Interval) -> Interval {
        Interval {
            lo: self.lo + o.lo,
            hi: self.hi + o.hi,
            est: self.est + o.est,
        }
    }

    pub fn is_bounded(&self) -> bool {
        self.hi.is_finite()
    }

    fn clamp_est(mut self) -> Interval {
        if self.hi < self.lo {
            self.hi = self.lo;
        }
        self.est = self.est.clamp(self.lo, self.hi.max(self.lo));
        self
    }
}

/// Result of bounding one series.
#[derive(Debug, Clone, PartialEq)]
pub struct Bounded {
    pub interval: Interval,
    pub method: Method,
    /// Edge slices whose mass went to hi only.
    pub straddles: u32,
    /// Missing stretches of the slice grid inside the window.
    pub gaps: u32,
    /// A decrease between samples (or a slice sum falling short of the total) inside the window.
    pub reset: bool,
    /// Some value is NaN, infinite or negative.
    pub non_finite: bool,
    /// Two kinds of evidence contradict each other (the interval is their hull). Samples
    /// contradicting each other at one instant are reported per series by the pools stage.
    pub conflict: bool,
}

/// The profiling window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start_ns: u64,
    pub end_ns: u64,
}

fn finite_nonneg(v: f64) -> bool {
    v.is_finite() && v >= 0.0
}

/// Raw cumulative samples: lo between the first sample at/after the start and the last
/// at/before the end; hi between the last at/before the start and the first at/after the end
/// (a counter is never below 0, so a series first seen after the start has hi ≤ its value).
/// A decrease is a restart: the counter began again at 0, so the pair still proves the later
/// value's mass (lo adds it), and the mass between the last sample before the restart and the
/// restart itself was never observed (the caller makes hi unbounded).
fn from_samples(samples: &[(u64, f64)], w: Window) -> Option<(Interval, bool)> {
    if samples.is_empty() {
        return None;
    }
    let before = samples.iter().rev().find(|s| s.0 <= w.start_ns);
    let after = samples.iter().find(|s| s.0 >= w.end_ns);
    let from = before.map_or(0, |s| s.0);
    let to = after.map_or(u64::MAX, |s| s.0);
    let reset = samples
        .windows(2)
        .any(|p| p[0].0 >= from && p[1].0 <= to && p[1].1 < p[0].1);
    let lo: f64 = samples
        .windows(2)
        .filter(|p| p[0].0 >= w.start_ns && p[1].0 <= w.end_ns)
        .map(|p| observed_increment(p[0].1, p[1].1))
        .sum();
    let hi = match after {
        Some(a) => (a.1 - before.map_or(0.0, |b| b.1)).max(lo),
        None => f64::INFINITY,
    };
    let est = match (before, after) {
        (Some(b), Some(a)) if !reset => {
            interpolate(samples, w.end_ns, b, a) - interpolate(samples, w.start_ns, b, a)
        }
        _ => lo,
    };
    Some((Interval { lo, hi, est }.clamp_est(), reset))
}

/// The mass surely added between two cumulative samples: the difference, or after a restart
/// (a decrease) the later value, which the counter reached from 0.
fn observed_increment(a: f64, b: f64) -> f64 {
    if b >= a {
        b - a
    } else {
        b
    }
}

/// Linear interpolation of the cumulative value at `t` between the samples around it.
fn interpolate(samples: &[(u64, f64)], t: u64, first: &(u64, f64), last: &(u64, f64)) -> f64 {
    let prev = samples.iter().rev().find(|s| s.0 <= t).unwrap_or(first);
    let next = samples.iter().find(|s| s.0 >= t).unwrap_or(last);
    if next.0 == prev.0 {
        return prev.1;
    }
    let f = (t - prev.0) as f64 / (next.0 - prev.0) as f64;
    prev.1 + f * (next.1 - prev.1)
}

/// `stats.total` bounds the window increase from above when the endpoint was sampled at or
/// before the window start and at or after its end (and the series itself reaches back: see
/// `bound`).
fn total_covers(cov: Option<Coverage>, w: Window) -> bool {
    matches!(cov, Some(Coverage { first_ns: Some(f), last_ns: Some(l) }) if f <= w.start_ns && l >= w.end_ns)
}

/// The edge slices of a window's slices (those ending after its start or starting at or after
/// it), by index: their mass counts toward hi only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SliceEdges {
    /// The start edge is `0..=start_edge_end`; `None` when the first slice starts after the
    /// window start (a gap, not an edge).
    pub start_edge_end: Option<usize>,
    /// The end edge is `end_edge_start..`.
    pub end_edge_start: usize,
}

/// Where the edges of `slices` are; `None` for no slices.
pub fn slice_edges(
    slices: &[Slice],
    w: Window,
    first_mass_end_ns: Option<u64>,
) -> Option<SliceEdges> {
    let n = slices.len();
    let first = slices.first()?;
    // Start edge: through the first slice in which *any* counter of the endpoint moved (a
    // slice with mass proves a scrape inside it, so every later boundary value is an
    // in-window sample); only if the first slice starts at or before the window start (a
    // later first slice leaves a gap instead).
    let start_edge_end = if first.start_ns > w.start_ns {
        None
    } else if let Some(end) = first_mass_end_ns {
        Some(slices.iter().rposition(|s| s.end_ns <= end).unwrap_or(0))
    } else {
        Some(slices.iter().position(|s| s.total > 0.0).unwrap_or(n - 1))
    };
    // End edge: every slice ending after the window end, and always the last slice.
    let end_edge_start = slices
        .iter()
        .position(|s| s.end_ns > w.end_ns)
        .unwrap_or(n - 1)
        .min(n - 1);
    Some(SliceEdges {
        start_edge_end,
        end_edge_start,
    })
}

/// Timeslices. AIPerf differences a counter at each slice boundary with the last sample at
/// or before it, so the first slice reaches back before the window start and the last reaches
/// forward to the final scrape: those edges add their mass to hi only. Leading slices with no
/// mass (no scrape yet) push the start edge to the first slice that has mass, since that
/// slice's opening sample may still be a pre-window one. Missing grid positions are gaps.
fn from_slices(
    ev: &SeriesEvidence,
    w: Window,
    covered_total: Option<f64>,
    first_mass_end_ns: Option<u64>,
    warmup_proof_allowed: bool,
) -> Option<(Interval, u32, u32, bool)> {
    let slices: Vec<Slice> = ev
        .slices
        .iter()
        .copied()
        .filter(|s| s.end_ns > w.start_ns || s.start_ns >= w.start_ns)
        .collect();
    if slices.is_empty() {
        return None;
    }
    let n = slices.len();
    let edges = slice_edges(&slices, w, first_mass_end_ns)?;
    let first_reaches_back = edges.start_edge_end.is_some();
    let start_edge_end = edges.start_edge_end.unwrap_or(0);
    let end_edge_start = edges.end_edge_start;

    let mut lo = 0.0;
    let mut edge_hi = 0.0;
    let mut straddles = 0u32;
    for (i, s) in slices.iter().enumerate() {
        let in_start_edge = first_reaches_back && i <= start_edge_end;
        let in_end_edge = i >= end_edge_start;
        if in_start_edge || in_end_edge {
            let mut mass = s.total;
            if in_start_edge && i == start_edge_end && warmup_proof_allowed {
                mass -= warmup_proof(ev, s).min(mass);
            }
            edge_hi += mass;
            if s.total > 0.0 {
                straddles += 1;
            }
        } else {
            lo += s.total;
        }
    }

    // Gaps: the window start before the first slice, holes between slices, the window end
    // after the last slice.
    let tol = 1_000_000u64; // 1 ms of clock jitter between stated slice bounds
    let mut gaps = 0u32;
    if slices[0].start_ns > w.start_ns.saturating_add(tol) {
        gaps += 1;
    }
    for p in slices.windows(2) {
        if p[1].start_ns > p[0].end_ns.saturating_add(tol) {
            gaps += 1;
        }
    }
    if slices[n - 1].end_ns.saturating_add(tol) < w.end_ns {
        gaps += 1;
    }
    let sum: f64 = slices.iter().map(|s| s.total).sum();
    let all_sum: f64 = ev.slices.iter().map(|s| s.total).sum();
    let gap_hi = if gaps == 0 {
        0.0
    } else {
        match covered_total {
            Some(t) => (t - all_sum).max(0.0),
            None => f64::INFINITY,
        }
    };
    // Without a reset the slices add up to at most stats.total. AIPerf clamps a total that
    // went negative across a reset to 0 while the other slices keep their mass.
    let reset = match ev.stats_total.get() {
        Some(t) => t + 0.5 + all_sum * 1e-9 < all_sum,
        None => false,
    };
    let hi = lo + edge_hi + gap_hi;
    let est = if hi.is_finite() { (lo + hi) / 2.0 } else { sum };
    Some((Interval { lo, hi, est }.clamp_est(), straddles, gaps, reset))
}

/// Warmup mass proven to sit in the straddling first slice: the warmup increase minus the
/// warmup slices that end before the straddle (CONTRACT section 4, "warmup proof"). Sound only
/// when the warmup total is exactly the warmup phase's increase: AIPerf's differencing ends a
/// phase's total at the endpoint's last update, which can lie after the phase end, and then
/// the difference is profiling mass. It is therefore applied under `trust_phase_totals` only.
fn warmup_proof(ev: &SeriesEvidence, straddle: &Slice) -> f64 {
    let Some(total) = ev.warmup_total() else {
        return 0.0;
    };
    if ev.warmup_slices().is_empty() {
        return 0.0;
    }
    let before: f64 = ev
        .warmup_slices()
        .iter()
        .filter(|s| s.end_ns <= straddle.start_ns)
        .map(|s| s.total)
        .sum();
    (total - before).max(0.0)
}

/// What bounding one series needs to know about its endpoint and the run.
#[derive(Debug, Clone, Copy, Default)]
pub struct SeriesContext {
    /// The profiling window; without one no evidence bounds an in-window increase.
    pub window: Option<Window>,
    /// The endpoint's sampling coverage (`endpoint_info`).
    pub coverage: Option<Coverage>,
    /// End of the endpoint's first slice in which any counter moved (see `from_slices`).
    pub first_mass_end_ns: Option<u64>,
    /// The endpoint's process restarted inside the window (`process_start_time_seconds`).
    pub restarted: bool,
    /// Some series of the run showed two kinds of evidence contradicting each other: one kind
    /// is wrong somewhere, so no kind may narrow another (candidates give their hull).
    pub distrust: bool,
}

/// Relative tolerance under which two bounds from different evidence still touch: the
/// numbers come through decimal text and float sums.
fn disjoint(lo: f64, hi: f64) -> bool {
    lo > hi + 1e-6 * hi.abs().max(1.0)
}

/// Candidates for one series' interval, each from one kind of evidence.
struct Candidates {
    items: Vec<(Method, Interval)>,
}

impl Candidates {
    /// Intersect the candidates. Each contains the truth when its evidence is right, so
    /// an empty intersection means some evidence is wrong: keep their hull, never a point
    /// made from nothing, and say so (`conflict`). Under `distrust` (a contradiction seen
    /// elsewhere in the run) no candidate narrows another: the hull, always.
    fn combine(&self, telemetry: f64, distrust: bool) -> Option<(Method, Interval, bool)> {
        let (method, first) = *self.items.last()?;
        let los = || self.items.iter().map(|(_, i)| i.lo);
        let his = || self.items.iter().map(|(_, i)| i.hi);
        let (lo, hi) = (
            los().fold(0.0, f64::max),
            his().fold(f64::INFINITY, f64::min),
        );
        let conflict = disjoint(lo, hi);
        if !(conflict || distrust) {
            let hi = hi.max(lo);
            return Some((
                method,
                Interval {
                    lo,
                    hi,
                    est: first.est,
                }
                .clamp_est(),
                false,
            ));
        }
        let (lo, hi) = (
            los().fold(f64::INFINITY, f64::min),
            his().fold(0.0, f64::max),
        );
        let est = if conflict { (lo + hi) / 2.0 } else { first.est };
        let est = if est.is_finite() { est } else { telemetry };
        Some((method, Interval { lo, hi, est }.clamp_est(), conflict))
    }
}

/// Bound the in-window increase of one series from all its evidence (contract section 4 with
/// the (r2) soundness rules: disjoint evidence keeps the hull, a reset leaves hi unbounded,
/// no window bounds nothing).
pub fn bound(ev: &SeriesEvidence, at: &SeriesContext, policy: &Policy) -> Bounded {
    // Without a window only the samples' values and those after the leading 0s are read.
    let samples = match at.window {
        Some(w) => ev.samples.for_window(w.start_ns, w.end_ns),
        None => ev.samples.carried().collect(),
    };
    let non_finite = ev.stats_total.get().is_some_and(|t| !finite_nonneg(t))
        || ev.csv_total().is_some_and(|t| !finite_nonneg(t))
        || ev.slices.iter().any(|s| !finite_nonneg(s.total))
        || samples.iter().any(|s| !finite_nonneg(s.1));
    let telemetry = ev
        .stats_total
        .get()
        .filter(|t| finite_nonneg(*t))
        .unwrap_or(0.0);
    let csv_disagrees = totals_disagree(ev);
    let slices_disagree = slices_contradict_samples(ev, &samples, &ev.slices)
        || slices_contradict_samples(ev, &samples, ev.warmup_slices());
    let mut result = Bounded {
        interval: Interval::unbounded(telemetry),
        method: Method::Unbounded,
        straddles: 0,
        gaps: 0,
        reset: at.restarted,
        non_finite: non_finite || !telemetry.is_finite(),
        conflict: csv_disagrees || slices_disagree,
    };
    let Some(w) = at.window else {
        return result;
    };
    if policy.trust_phase_totals && ev.phase_scoped && !at.restarted && !result.conflict {
        if let Some(t) = ev.stats_total.get().filter(|t| finite_nonneg(*t)) {
            result.interval = Interval::exact(t);
            result.method = Method::PhaseTotal;
            return result;
        }
    }
    let mut candidates = Candidates { items: Vec::new() };
    let covered_total = covered_total(ev, at, w);
    if let Some(t) = covered_total {
        candidates.items.push((
            Method::StatsTotal,
            Interval {
                lo: 0.0,
                hi: t,
                est: t,
            },
        ));
    }
    if ev.slices.iter().all(|s| finite_nonneg(s.total)) {
        let proof = policy.trust_phase_totals && ev.phase_scoped;
        if let Some((iv, straddles, gaps, reset)) =
            from_slices(ev, w, covered_total, at.first_mass_end_ns, proof)
        {
            candidates.items.push((Method::Timeslices, iv));
            result.straddles = straddles;
            result.gaps = gaps;
            result.reset |= reset;
        }
    }
    let mut finite_samples = samples;
    finite_samples.retain(|s| finite_nonneg(s.1));
    // Samples that contradict each other at one instant bound nothing.
    if !ev.sample_conflict {
        if let Some((iv, reset)) = from_samples(&finite_samples, w) {
            candidates.items.push((Method::RawScrapes, iv));
            result.reset |= reset;
            result.straddles = 0;
            result.gaps = 0;
        }
    }
    if result.reset {
        // AIPerf clamps a decrease to 0 in slices and totals, and the mass before the restart
        // was never observed: every upper bound is void, and only the observed increments
        // (each a lower bound) remain, so the candidates cannot contradict each other.
        candidates.items.retain(|(m, _)| *m != Method::StatsTotal);
        for (_, iv) in candidates.items.iter_mut() {
            iv.hi = f64::INFINITY;
        }
    }
    if let Some((method, iv, conflict)) = candidates.combine(telemetry, at.distrust) {
        result.method = method;
        result.interval = iv;
        result.conflict |= conflict;
    }
    result.non_finite |= !result.interval.est.is_finite();
    result
}

/// Whether [`bound`] finds `ev`'s evidence contradicting itself (its `conflict`), bounding
/// only where that can be so. Without slices nothing can contradict the samples, and there is
/// at most one candidate (the raw scrapes: a stats total bounds only beside slices, see
/// [`covered_total`]), which never contradicts itself: only the JSON and CSV totals can
/// disagree. A run's scrapes alone, or its CSV, then cost no decoding of every series'
/// samples (`Ctx::find_distrust` asks this of every series before any is bounded).
pub fn conflicts(ev: &SeriesEvidence, at: &SeriesContext, policy: &Policy) -> bool {
    if ev.slices.is_empty() && ev.warmup_slices().is_empty() {
        return totals_disagree(ev);
    }
    bound(ev, at, policy).conflict
}

/// The JSON export's `stats.total` and its CSV twin's differ beyond the CSV's rounding.
fn totals_disagree(ev: &SeriesEvidence) -> bool {
    match (ev.stats_total.get(), ev.csv_total()) {
        (Some(j), Some(c)) => (j - c).abs() > 1e-4 + 1e-9 * j.abs().max(c.abs()),
        _ => false,
    }
}

/// AIPerf computes each slice from the same scrapes the JSONL holds: the value at a boundary
/// is the last sample at or before it, and the slice is the clamped difference. Where both
/// boundaries have a sample of the series (not a lazily created series' implied 0), a slice
/// that differs from the samples' difference means the export and the scrapes disagree.
///
/// Thinned samples ([`SeriesEvidence::coarsened`]) give the value at a boundary as a range:
/// between two kept samples nothing dropped decreased, so the last sample at or before it lay
/// between them; a slice contradicts them only outside the difference of the ranges.
fn slices_contradict_samples(
    ev: &SeriesEvidence,
    samples: &[(u64, f64)],
    slices: &[Slice],
) -> bool {
    let Some(first) = ev.samples.first_carried_ns() else {
        return false;
    };
    if ev.sample_conflict {
        return false;
    }
    let last_at = |t: u64| {
        let n = samples.partition_point(|s| s.0 <= t);
        n.checked_sub(1)
            .and_then(|i| samples.get(i))
            .filter(|s| s.0 >= first)
            .map(|s| (s, samples.get(n)))
    };
    if ev.coarsened {
        let range = |t: u64| {
            let (prev, next) = last_at(t)?;
            let hi = match next {
                Some(n) if prev.0 != t && n.1.is_finite() && n.1 >= prev.1 => n.1,
                _ => prev.1,
            };
            Some((prev.1, hi))
        };
        return slices
            .iter()
            .any(|s| match (range(s.start_ns), range(s.end_ns)) {
                (Some(a), Some(b))
                    if a.0.is_finite()
                        && a.1.is_finite()
                        && b.0.is_finite()
                        && s.total.is_finite() =>
                {
                    let (lo, hi) = ((b.0 - a.1).max(0.0), (b.1 - a.0).max(0.0));
                    let tol = 1e-6 * hi.abs().max(s.total.abs()).max(1.0);
                    s.total < lo - tol || s.total > hi + tol
                }
                _ => false,
            });
    }
    let at = |t: u64| last_at(t).map(|(s, _)| s.1);
    slices.iter().any(|s| match (at(s.start_ns), at(s.end_ns)) {
        (Some(a), Some(b)) if a.is_finite() && b.is_finite() && s.total.is_finite() => {
            let expected = (b - a).max(0.0);
            (expected - s.total).abs() > 1e-6 * expected.abs().max(s.total.abs()).max(1.0)
        }
        _ => false,
    })
}

/// `stats.total` as an upper bound: the endpoint was sampled around the window and the
/// series' own slices reach back to its start. AIPerf falls back to the first in-window sample
/// as the reference of a series created mid-run, and its total then misses that sample's
/// mass. The CSV's rounded total of the same series, when it disagrees, widens the bound.
fn covered_total(ev: &SeriesEvidence, at: &SeriesContext, w: Window) -> Option<f64> {
    let series_reaches_back = ev
        .slices
        .first()
        .is_some_and(|s| s.start_ns <= w.start_ns.saturating_add(1_000_000));
    if !(series_reaches_back && total_covers(at.coverage, w)) {
        return None;
    }
    let t = ev.stats_total.get().filter(|t| finite_nonneg(*t))?;
    Some(match ev.csv_total().filter(|c| finite_nonneg(*c)) {
        Some(c) => t.max(c),
        None => t,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::account::evidence::RareEvidence;
    use crate::account::fold::SampleBuf;

    const W: Window = Window {
        start_ns: 10_000_000_000,
        end_ns: 20_000_000_000,
    };
    const S: u64 = 1_000_000_000;

    fn at(w: Window, coverage: Option<Coverage>) -> SeriesContext {
        SeriesContext {
            window: Some(w),
            coverage,
            ..SeriesContext::default()
        }
    }

    fn slices(totals: &[f64], start: u64) -> Vec<Slice> {
        totals
            .iter()
            .enumerate()
            .map(|(i, t)| Slice {
                start_ns: start + i as u64 * S,
                end_ns: start + (i as u64 + 1) * S,
                total: *t,
            })
            .collect()
    }

    #[test]
    fn raw_samples_bracket_the_window() {
        let ev = SeriesEvidence {
            samples: vec![
                (9 * S, 100.0),
                (11 * S, 150.0),
                (19 * S, 950.0),
                (21 * S, 1000.0),
            ]
            .into(),
            ..Default::default()
        };
        let b = bound(&ev, &at(W, None), &Policy::default());
        assert_eq!(b.method, Method::RawScrapes);
        assert_eq!((b.interval.lo, b.interval.hi), (800.0, 900.0));
        assert!(!b.reset);
    }

    #[test]
    fn raw_samples_reset_and_unbounded_end() {
        let ev = SeriesEvidence {
            samples: vec![(9 * S, 100.0), (12 * S, 50.0), (19 * S, 60.0)].into(),
            ..Default::default()
        };
        let b = bound(&ev, &at(W, None), &Policy::default());
        assert!(b.reset);
        assert!(!b.interval.is_bounded());
    }

    #[test]
    fn slices_edges_go_to_hi() {
        // 10 slices from the window start, each 100, last one partial (ends after the window).
        let mut s = slices(&[100.0; 10], 10 * S);
        s[9].end_ns = 20 * S + S / 2;
        let ev = SeriesEvidence {
            stats_total: Some(1000.0).into(),
            slices: s.into(),
            ..Default::default()
        };
        let b = bound(&ev, &at(W, None), &Policy::default());
        assert_eq!(b.method, Method::Timeslices);
        assert_eq!((b.interval.lo, b.interval.hi), (800.0, 1000.0));
        assert_eq!(b.straddles, 2);
        assert_eq!(b.gaps, 0);
    }

    #[test]
    fn start_gap_extends_the_edge() {
        let mut t = vec![0.0, 0.0, 300.0];
        t.extend([100.0; 7]);
        let ev = SeriesEvidence {
            slices: slices(&t, 10 * S).into(),
            ..Default::default()
        };
        let b = bound(&ev, &at(W, None), &Policy::default());
        // Slices 0..=2 are the start edge; the last is the end edge.
        assert_eq!(b.interval.lo, 600.0);
        assert_eq!(b.interval.hi, 1000.0);
    }

    #[test]
    fn warmup_proof_tightens_the_straddle() {
        let ev = SeriesEvidence {
            slices: slices(&[150.0, 100.0, 100.0], 10 * S).into(),
            rare: Some(Box::new(RareEvidence {
                warmup_total: Some(500.0),
                warmup_slices: slices(&[200.0, 250.0], 8 * S).into(),
                csv_total: None,
            })),
            ..Default::default()
        };
        let w = Window {
            start_ns: 10 * S,
            end_ns: 13 * S,
        };
        let b = bound(&ev, &at(w, None), &Policy::default());
        // Without trusted phase totals the straddle counts whole toward hi.
        assert_eq!(b.interval.hi, 150.0 + 100.0 + 100.0);
        let trusting = Policy {
            trust_phase_totals: true,
            ..Policy::default()
        };
        let ev = SeriesEvidence {
            phase_scoped: true,
            stats_total: None.into(),
            ..ev
        };
        let b = bound(&ev, &at(w, None), &trusting);
        // straddle 150 of which 500 - 450 = 50 proven warmup; last slice 100 is an edge.
        assert_eq!(b.interval.lo, 100.0);
        assert_eq!(b.interval.hi, 100.0 + 100.0 + 100.0);
    }

    #[test]
    fn gaps_without_a_covering_total_are_unbounded() {
        let mut s = slices(&[100.0; 10], 10 * S);
        s.remove(4);
        let ev = SeriesEvidence {
            stats_total: Some(1000.0).into(),
            slices: s.into(),
            ..Default::default()
        };
        let b = bound(&ev, &at(W, None), &Policy::default());
        assert_eq!(b.gaps, 1);
        assert!(!b.interval.is_bounded());
        let cov = Coverage {
            first_ns: Some(9 * S),
            last_ns: Some(21 * S),
        };
        let b = bound(&ev, &at(W, Some(cov)), &Policy::default());
        assert_eq!(b.interval.hi, 1000.0);
        assert_eq!(b.interval.lo, 700.0);
    }

    #[test]
    fn stats_total_alone() {
        let ev = SeriesEvidence {
            stats_total: Some(500.0).into(),
            ..Default::default()
        };
        let b = bound(&ev, &at(W, None), &Policy::default());
        assert_eq!(b.method, Method::Unbounded);
        assert_eq!(b.interval.est, 500.0);
        let cov = Coverage {
            first_ns: Some(9 * S),
            last_ns: Some(21 * S),
        };
        // The endpoint was sampled around the window, but nothing shows this series was.
        let b = bound(&ev, &at(W, Some(cov)), &Policy::default());
        assert_eq!(b.method, Method::Unbounded);
        let trusting = Policy {
            trust_phase_totals: true,
            ..Policy::default()
        };
        let phase = SeriesEvidence {
            stats_total: Some(500.0).into(),
            phase_scoped: true,
            ..Default::default()
        };
        let b = bound(&phase, &at(W, None), &trusting);
        assert_eq!(b.method, Method::PhaseTotal);
        assert_eq!((b.interval.lo, b.interval.hi), (500.0, 500.0));
    }

    #[test]
    fn nan_is_flagged() {
        let ev = SeriesEvidence {
            stats_total: Some(f64::NAN).into(),
            ..Default::default()
        };
        assert!(bound(&ev, &at(W, None), &Policy::default()).non_finite);
    }

    /// `conflicts` decides as `bound` does on every mix of evidence: with and without
    /// samples (rising, falling, non-finite, clashing, carried or not), totals (JSON, CSV,
    /// agreeing or not, non-finite), slices and warmup slices (agreeing with the samples or
    /// not), windows, coverage, restarts, thinning and phase-scoped totals under either policy.
    #[test]
    fn conflicts_decides_as_bound() {
        let sample_sets: Vec<Vec<(u64, f64)>> = vec![
            vec![],
            vec![(9 * S, 100.0), (15 * S, 400.0), (21 * S, 1000.0)],
            vec![(9 * S, 100.0), (12 * S, 50.0), (19 * S, 60.0)],
            vec![(11 * S, 5.0), (19 * S, f64::NAN)],
            vec![(9 * S, 0.0), (21 * S, f64::INFINITY)],
            vec![(12 * S, 7.0)],
            vec![
                (9 * S, 0.0),
                (11 * S, 100.0),
                (19 * S, 900.0),
                (21 * S, 1000.0),
            ],
        ];
        let totals = [None, Some(900.0), Some(100.0), Some(f64::NAN), Some(-1.0)];
        let csv_totals = [None, Some(900.0), Some(900.00001), Some(3.0)];
        let slice_sets = [
            vec![],
            slices(&[90.0; 10], 10 * S),
            slices(&[1.0; 10], 10 * S),
            slices(&[500.0; 3], 9 * S),
        ];
        let warmups = [vec![], slices(&[200.0, 250.0], 8 * S)];
        let covs = [
            None,
            Some(Coverage {
                first_ns: Some(9 * S),
                last_ns: Some(21 * S),
            }),
        ];
        let trusting = Policy {
            trust_phase_totals: true,
            ..Policy::default()
        };
        let (mut compared, mut found_with_slices) = (0, [0, 0]);
        for samples in &sample_sets {
            for total in totals {
                for csv in csv_totals {
                    for sl in &slice_sets {
                        for warm in &warmups {
                            for flags in 0..32u8 {
                                let rare = (csv.is_some() || !warm.is_empty()).then(|| {
                                    Box::new(RareEvidence {
                                        warmup_total: None,
                                        warmup_slices: warm.clone().into(),
                                        csv_total: csv,
                                    })
                                });
                                let mut buf = SampleBuf::from(samples.clone());
                                if flags & 16 != 0 {
                                    buf.set_first_carried_ns(samples.first().map(|s| s.0));
                                }
                                let ev = SeriesEvidence {
                                    stats_total: total.into(),
                                    slices: sl.clone().into(),
                                    samples: buf,
                                    coarsened: flags & 1 != 0,
                                    phase_scoped: flags & 2 != 0,
                                    sample_conflict: flags & 4 != 0,
                                    rare,
                                };
                                let restarted = flags & 8 != 0;
                                for window in [Some(W), None] {
                                    for coverage in covs {
                                        let at = SeriesContext {
                                            window,
                                            coverage,
                                            restarted,
                                            ..SeriesContext::default()
                                        };
                                        for policy in [&Policy::default(), &trusting] {
                                            let found = conflicts(&ev, &at, policy);
                                            assert_eq!(
                                                found,
                                                bound(&ev, &at, policy).conflict,
                                                "{ev:?} {window:?} {coverage:?} {restarted}"
                                            );
                                            compared += 1;
                                            if found {
                                                found_with_slices[usize::from(!sl.is_empty())] += 1;
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(compared, 7 * 5 * 4 * 4 * 2 * 32 * 8);
        // Both ways of conflicting are among the cases: the totals alone, and the slices.
        assert!(
            found_with_slices.iter().all(|n| *n > 0),
            "{found_with_slices:?}"
        );
    }
}
