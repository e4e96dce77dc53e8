//! Gather, for every series of a run, all the evidence about it in one place: the export's
//! stats and timeslices (profiling and warmup), and the raw cumulative samples of scrapes.
//! Series identity is (endpoint, family spelling, labels); every collection is ordered, so the
//! result does not depend on file, endpoint or series order.

use super::verdict::{Reason, ReasonCode};
use crate::model::{
    Family, Labels, MetricType, SampleValue, Scrape, Series, ServerMetricsExport, Stats,
};
use crate::read::names::canonical_family;
use crate::read::Run;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// The CSV export's intake (its series read lean).
mod csv;

/// One slice of a counter: its stated bounds and its mass.
pub use crate::model::CounterSlice as Slice;

/// Everything known about one series.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeriesEvidence {
    /// Profiling-phase `stats.total` (or the CSV's), the telemetry value.
    pub stats_total: Option<f64>,
    /// Profiling-phase counter timeslices, sorted by start.
    pub slices: Arc<[Slice]>,
    /// Warmup-phase `stats.total` (schema 1.1 `warmup_metrics`).
    pub warmup_total: Option<f64>,
    /// Warmup-phase timeslices, sorted by start.
    pub warmup_slices: Arc<[Slice]>,
    /// Raw cumulative samples (epoch ns, value), sorted by time; equal times keep the last.
    pub samples: Vec<(u64, f64)>,
    /// From a schema 1.1 export whose totals are phase-scoped.
    pub phase_scoped: bool,
    /// The CSV export's `total` of the same series, when the run has both exports.
    pub csv_total: Option<f64>,
    /// Two raw samples at one timestamp carry different values.
    pub sample_conflict: bool,
    /// Time of the first raw sample that carried the series (earlier ones are the 0s a
    /// lazily created series stood at).
    pub first_sample_ns: Option<u64>,
}

/// Key of one series.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SeriesKey {
    pub endpoint_url: String,
    pub spelling: String,
    /// Shared by every series with the same label set (see `Evidence::intern`).
    pub labels: Arc<Labels>,
}

/// A family as seen on one endpoint. (Which spellings it came under is in the series keys:
/// a set per endpoint and family here cost more than the rest of a many-endpoint CSV.)
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FamilyInfo {
    pub metric_type: Option<MetricType>,
}

/// Coverage of one endpoint's sampling (from `endpoint_info`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Coverage {
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
}

/// All evidence of a run, by series.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    pub series: BTreeMap<SeriesKey, SeriesEvidence>,
    /// Per endpoint: canonical family key → what is known about it.
    pub families: BTreeMap<String, BTreeMap<String, FamilyInfo>>,
    /// Gauge values per series: (avg, max) from stats or from samples.
    pub gauges: BTreeMap<SeriesKey, (Option<f64>, Option<f64>)>,
    /// Histogram (count, sum) per series over the profiling phase.
    pub histograms: BTreeMap<SeriesKey, (Option<f64>, Option<f64>)>,
    pub coverage: BTreeMap<String, Coverage>,
    /// Which export supplied stats: `json`, `csv`, or none.
    pub stats_source: Option<&'static str>,
    /// Per endpoint: end of the earliest slice in which any counter series moved.
    pub first_mass_end: BTreeMap<String, u64>,
    /// Per endpoint: `process_start_time_seconds` (min, max) over the profiling export.
    pub process_start_stats: BTreeMap<String, (f64, f64)>,
    /// Per endpoint: raw `process_start_time_seconds` samples (epoch ns, value).
    pub process_start_samples: BTreeMap<String, Vec<(u64, f64)>>,
    /// Per endpoint: every label set seen on it, timed or not (roles are read from labels).
    pub label_sets: BTreeMap<String, BTreeSet<Arc<Labels>>>,
    /// Every endpoint the run names: in exports, `endpoint_info`, or any scrape.
    pub endpoints: BTreeSet<String>,
    /// Endpoints seen only through captures without a time.
    pub untimed_endpoints: BTreeSet<String>,
    /// Families an export repeated with identical content, merged by the reader.
    pub merged_duplicates: Vec<String>,
    /// Every distinct label set, kept once: a run of many endpoints repeats the same few
    /// sets on each (see [`Evidence::intern`]).
    interned: BTreeSet<Arc<Labels>>,
}

/// The process collector's start time: a change means the process restarted.
pub const PROCESS_START: &str = "process_start_time_seconds";

/// A counter series' slices with a `total`, sorted by (start, end) (equal keys in file
/// order). A lean read's list is shared when it is already in order (as AIPerf writes it):
/// accounting then keeps no copy of it.
fn slices_of(s: &Series) -> Arc<[Slice]> {
    let key = |c: &Slice| (c.start_ns, c.end_ns);
    if s.timeslices.is_empty() && s.counter_slices.is_sorted_by_key(key) {
        return Arc::clone(&s.counter_slices);
    }
    let mut v: Vec<Slice> = s
        .timeslices
        .iter()
        .filter_map(|t| {
            t.total.map(|total| Slice {
                start_ns: t.start_ns,
                end_ns: t.end_ns,
                total,
            })
        })
        .chain(s.counter_slices.iter().copied())
        .collect();
    v.sort_by_key(key);
    v.into()
}

impl Evidence {
    /// The one shared copy of a label set: keys and label sets hold it, not a copy each.
    fn intern(&mut self, labels: &Labels) -> Arc<Labels> {
        match self.interned.get(labels) {
            Some(l) => Arc::clone(l),
            None => self.intern_shared(&Arc::new(labels.clone())),
        }
    }

    /// [`Evidence::intern`] of a set a reader already shares: kept as it is when new.
    fn intern_shared(&mut self, labels: &Arc<Labels>) -> Arc<Labels> {
        if let Some(l) = self.interned.get(labels) {
            return Arc::clone(l);
        }
        self.interned.insert(Arc::clone(labels));
        Arc::clone(labels)
    }

    fn note_labels(&mut self, endpoint: &str, labels: &Arc<Labels>) {
        let sets = match self.label_sets.get_mut(endpoint) {
            Some(sets) => sets,
            None => self.label_sets.entry(endpoint.to_string()).or_default(),
        };
        if !sets.contains(labels) {
            sets.insert(Arc::clone(labels));
        }
    }

    fn note_family(&mut self, endpoint: &str, spelling: &str, t: Option<MetricType>) {
        let families = match self.families.get_mut(endpoint) {
            Some(f) => f,
            None => self.families.entry(endpoint.to_string()).or_default(),
        };
        let info = families.entry(canonical_family(spelling)).or_default();
        if info.metric_type.is_none() || info.metric_type == Some(MetricType::Unknown) {
            info.metric_type = t.or(info.metric_type);
        }
    }

    fn add_export_family(&mut self, f: &Family, warmup: bool, phase_scoped: bool) {
        for s in &f.series {
            self.note_family(&s.endpoint_url, &f.name, Some(f.metric_type));
            let labels = self.intern_shared(&s.labels);
            self.note_labels(&s.endpoint_url, &labels);
            let key = SeriesKey {
                endpoint_url: s.endpoint_url.clone(),
                spelling: f.name.clone(),
                labels,
            };
            match &s.stats {
                Stats::Counter(c) => {
                    let e = self.series.entry(key).or_default();
                    e.phase_scoped |= phase_scoped;
                    if warmup {
                        e.warmup_total = c.total;
                        e.warmup_slices = slices_of(s);
                    } else {
                        e.stats_total = c.total;
                        e.slices = slices_of(s);
                    }
                }
                Stats::Gauge(g) if !warmup => {
                    if f.name == PROCESS_START {
                        if let (Some(lo), Some(hi)) = (g.min, g.max) {
                            self.process_start_stats
                                .insert(s.endpoint_url.clone(), (lo, hi));
                        }
                    }
                    self.gauges.insert(key, (g.avg, g.max));
                }
                Stats::Histogram(h) if !warmup => {
                    self.histograms.insert(key, (h.count, h.sum));
                }
                _ => {}
            }
        }
    }

    fn add_export(&mut self, export: &ServerMetricsExport, source: &'static str) {
        let phase_scoped = export.metrics_phase.is_some();
        for f in &export.metrics {
            self.add_export_family(f, false, phase_scoped);
        }
        for f in &export.warmup_metrics {
            self.add_export_family(f, true, phase_scoped);
        }
        for (url, info) in &export.summary.endpoint_info {
            self.endpoints.insert(url.clone());
            let c = self.coverage.entry(url.clone()).or_default();
            c.first_ns = info.first_update_ns.or(info.first_fetch_ns).or(c.first_ns);
            c.last_ns = info.last_update_ns.or(info.last_fetch_ns).or(c.last_ns);
        }
        self.stats_source = Some(source);
        self.merged_duplicates.extend(
            export
                .merged_duplicates
                .iter()
                .map(|d| format!("{source}: {d}")),
        );
    }
}

/// Collect the evidence of a run. The JSON export is preferred; the CSV (the same stats,
/// rounded, without timeslices) is read for its totals only when there is no JSON, and
/// otherwise compared with the JSON's.
pub fn collect(run: &Run) -> Evidence {
    let mut ev = Evidence::default();
    if let Some(j) = &run.server_json {
        ev.add_export(j, "json");
        if let Some(c) = &run.server_csv {
            ev.add_csv_totals(c);
        }
    } else if let Some(c) = &run.server_csv {
        ev.add_csv(c);
    }
    add_scrapes(&mut ev, &run.scrapes);
    // A labelled Prometheus counter is created on its first increment: a scrape of the
    // endpoint that does not carry the series yet saw it at 0.
    let mut scrape_times: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for scrape in &run.scrapes {
        if let Some(t) = scrape.timestamp_ns {
            scrape_times
                .entry(&scrape.endpoint_url)
                .or_default()
                .push(t);
        }
    }
    for times in scrape_times.values_mut() {
        times.sort_unstable();
        times.dedup();
    }
    for (key, e) in ev.series.iter_mut() {
        let Some(first) = e.samples.iter().map(|s| s.0).min() else {
            continue;
        };
        e.first_sample_ns = Some(first);
        if let Some(ts) = scrape_times.get(key.endpoint_url.as_str()) {
            e.samples
                .extend(ts.iter().take_while(|t| **t < first).map(|t| (*t, 0.0)));
        }
    }
    for (key, e) in &ev.series {
        if let Some(s) = e.slices.iter().find(|s| s.total > 0.0) {
            let slot = ev
                .first_mass_end
                .entry(key.endpoint_url.clone())
                .or_insert(s.end_ns);
            *slot = (*slot).min(s.end_ns);
        }
    }
    for e in ev.series.values_mut() {
        dedup_samples(e);
    }
    let timed: BTreeSet<&String> = run
        .scrapes
        .iter()
        .filter(|s| s.timestamp_ns.is_some())
        .map(|s| &s.endpoint_url)
        .collect();
    ev.untimed_endpoints = run
        .scrapes
        .iter()
        .filter(|s| s.timestamp_ns.is_none() && !timed.contains(&s.endpoint_url))
        .map(|s| s.endpoint_url.clone())
        .collect();
    let named: Vec<String> = ev
        .families
        .keys()
        .chain(ev.label_sets.keys())
        .cloned()
        .collect();
    ev.endpoints.extend(named);
    ev
}

/// What the evidence itself says about how it was read: exports' repeated families merged
/// (`duplicate_family_merged`) and endpoints seen only in untimed captures (`untimed_capture`).
pub fn notes(ev: &Evidence, reasons: &mut Vec<Reason>) {
    if !ev.merged_duplicates.is_empty() {
        reasons.push(Reason::new(
            ReasonCode::DuplicateFamilyMerged,
            format!(
                "repeated with identical content and merged: {}",
                ev.merged_duplicates.join(", ")
            ),
        ));
    }
    for url in &ev.untimed_endpoints {
        reasons.push(
            Reason::new(
                ReasonCode::UntimedCapture,
                "seen only in a capture without a time: its labels decide roles and engine, its values bound nothing",
            )
            .at(url.clone()),
        );
    }
}

/// Sort a series' samples by time. The same instant twice with the same value is one sample
/// (a re-scrape); with different values the samples contradict each other, and the order of
/// lines must not decide which holds: the series is flagged and keeps the smaller value.
fn dedup_samples(e: &mut SeriesEvidence) {
    e.samples
        .sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut dedup: Vec<(u64, f64)> = Vec::with_capacity(e.samples.len());
    for s in e.samples.drain(..) {
        match dedup.last() {
            Some(last) if last.0 == s.0 => {
                if last.1.to_bits() != s.1.to_bits() && !(last.1.is_nan() && s.1.is_nan()) {
                    e.sample_conflict = true;
                }
            }
            _ => dedup.push(s),
        }
    }
    e.samples = dedup;
}

/// What the raw samples of one series say (a series of one file's table on one endpoint):
/// gathered sample by sample, keyed by labels once at the end.
#[derive(Default)]
struct SeriesIntake {
    /// Counter and untyped values (epoch ns, value).
    samples: Vec<(u64, f64)>,
    /// A gauge's first value and its largest.
    gauge: Option<(f64, f64)>,
    /// The last histogram (count, sum), with the index of its scrape.
    histogram: Option<(usize, Option<f64>, Option<f64>)>,
}

/// Where one intake belongs: its scrape's table, endpoint and series.
struct IntakeOf<'r> {
    scrape: &'r Scrape,
    series: u32,
}

/// What has been seen of one file's table on one endpoint: intakes by series, families
/// noted (both indexed by the table's own indices).
#[derive(Default)]
struct Seen {
    intakes: Vec<Option<usize>>,
    families: Vec<bool>,
}

/// Take in the raw scrapes. A series repeats in every scrape, so its key (endpoint, family,
/// labels) is built once per series of each file, not per sample; families and label sets
/// are noted on first sight (noting them again changes nothing).
fn add_scrapes(ev: &mut Evidence, scrapes: &[Scrape]) {
    // (table, endpoint) → what has been seen of it.
    let mut seen: HashMap<(usize, &str), Seen> = HashMap::new();
    let mut intakes: Vec<(IntakeOf<'_>, SeriesIntake)> = Vec::new();
    for (n, scrape) in scrapes.iter().enumerate() {
        let url = scrape.endpoint_url.as_str();
        if !ev.endpoints.contains(url) {
            ev.endpoints.insert(url.to_string());
        }
        let table = std::sync::Arc::as_ptr(&scrape.table) as usize;
        let seen = seen.entry((table, url)).or_insert_with(|| Seen {
            intakes: vec![None; scrape.table.series.len()],
            families: vec![false; scrape.table.families.len()],
        });
        for (group, fam) in scrape.groups.iter().zip(scrape.families()) {
            if let Some(noted) = seen.families.get_mut(group.family as usize) {
                if !*noted {
                    *noted = true;
                    ev.note_family(url, fam.name, fam.metric_type);
                }
            }
            for sample in fam.samples.iter() {
                let Some(slot) = seen.intakes.get_mut(sample.series as usize) else {
                    continue;
                };
                let at = *slot.get_or_insert_with(|| {
                    let labels = ev.intern(sample.labels);
                    ev.note_labels(url, &labels);
                    intakes.push((
                        IntakeOf {
                            scrape,
                            series: sample.series,
                        },
                        SeriesIntake::default(),
                    ));
                    intakes.len() - 1
                });
                let Some(t) = scrape.timestamp_ns else {
                    // An untimed capture shows which families and label sets exist (roles,
                    // engine), not when values held: it bounds nothing.
                    continue;
                };
                let Some((_, intake)) = intakes.get_mut(at) else {
                    continue;
                };
                match sample.value {
                    SampleValue::Scalar { value } if fam.name == PROCESS_START => {
                        match ev.process_start_samples.get_mut(url) {
                            Some(v) => v.push((t, *value)),
                            None => {
                                ev.process_start_samples
                                    .insert(url.to_string(), vec![(t, *value)]);
                            }
                        }
                    }
                    SampleValue::Scalar { value } => {
                        if fam.metric_type == Some(MetricType::Gauge) {
                            let g = intake.gauge.get_or_insert((*value, *value));
                            g.1 = g.1.max(*value);
                        } else {
                            intake.samples.push((t, *value));
                        }
                    }
                    SampleValue::Histogram(h) => {
                        intake.histogram = Some((n, h.count, h.sum));
                    }
                }
            }
        }
    }
    key_intakes(ev, intakes);
}

/// Key each series' intake by (endpoint, family spelling, labels) and merge it into the
/// evidence, in order of first sight (a gauge keeps the first value seen, a histogram the
/// last scrape's).
fn key_intakes(ev: &mut Evidence, intakes: Vec<(IntakeOf<'_>, SeriesIntake)>) {
    let mut last_histogram: BTreeMap<SeriesKey, usize> = BTreeMap::new();
    for (of, intake) in intakes {
        let table = &of.scrape.table;
        let Some(series) = table.series.get(of.series as usize) else {
            continue;
        };
        let Some(family) = table.families.get(series.family as usize) else {
            continue;
        };
        let key = SeriesKey {
            endpoint_url: of.scrape.endpoint_url.clone(),
            spelling: family.name.clone(),
            labels: ev.intern(&series.labels),
        };
        if let Some((first, max)) = intake.gauge {
            let g = ev.gauges.entry(key.clone()).or_insert((None, None));
            g.1 = Some(g.1.map_or(max, |m: f64| m.max(max)));
            g.0 = g.0.or(Some(first));
        }
        if let Some((n, count, sum)) = intake.histogram {
            let later = last_histogram.get(&key).is_none_or(|m| *m < n);
            if later {
                last_histogram.insert(key.clone(), n);
                ev.histograms.insert(key.clone(), (count, sum));
            }
        }
        if !intake.samples.is_empty() {
            ev.series
                .entry(key)
                .or_default()
                .samples
                .extend(intake.samples);
        }
    }
}
