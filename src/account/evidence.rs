//! Gather, for every series of a run, all the evidence about it in one place: the export's
//! stats and timeslices (profiling and warmup), and the raw cumulative samples of scrapes.
//! Series identity is (endpoint, family spelling, labels); every collection is ordered, so the
//! result does not depend on file, endpoint or series order.

use super::fold::{SampleBuf, ScrapeFold};
use super::verdict::{Reason, ReasonCode};
use crate::hash::DigestSet;
use crate::model::server_metrics::CsvSeries;
use crate::model::{
    Family, Labels, LeanSeries, MetricType, OptF64, Scrape, Series, ServerMetricsExport,
};
use crate::read::names::canonical_family;
use crate::read::Run;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The CSV export's intake (its series read lean).
mod csv;
/// Series-keyed evidence in key order.
mod table;
pub(super) use table::AddressMap;
pub use table::SeriesMap;

/// One slice of a counter: its stated bounds and its mass.
pub use crate::model::CounterSlice as Slice;

/// Everything known about one series.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeriesEvidence {
    /// Profiling-phase `stats.total` (or the CSV's), the telemetry value (eight bytes, not
    /// sixteen: a many-series run keeps one per counter).
    pub stats_total: OptF64,
    /// Profiling-phase counter timeslices, sorted by start.
    pub slices: Arc<[Slice]>,
    /// Raw cumulative samples (epoch ns, value), sorted by time, one per instant (compact:
    /// decoded series by series where read).
    pub samples: SampleBuf,
    /// The samples were thinned under memory pressure ([`ScrapeFold::coarsen`]): bounds from
    /// them are sound but wider, and they give a slice boundary's value as a range.
    pub coarsened: bool,
    /// From a schema 1.1 export whose totals are phase-scoped.
    pub phase_scoped: bool,
    /// Two raw samples at one timestamp carry different values.
    pub sample_conflict: bool,
    /// What few series have (a warmup phase, a second export), apart: a many-series run
    /// pays a pointer per series for it, not 48 bytes.
    pub rare: Option<Box<RareEvidence>>,
}

/// Two stats of a gauge (`avg`, `max`) or a histogram (`count`, `sum`), each possibly absent,
/// in sixteen bytes (a many-endpoint run keeps one per gauge and histogram series).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StatPair(OptF64, OptF64);

impl StatPair {
    pub fn new(a: Option<f64>, b: Option<f64>) -> Self {
        StatPair(a.into(), b.into())
    }

    pub fn get(&self) -> (Option<f64>, Option<f64>) {
        (self.0.get(), self.1.get())
    }
}

/// The rarely present evidence of a series (see [`SeriesEvidence::rare`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RareEvidence {
    /// Warmup-phase `stats.total` (schema 1.1 `warmup_metrics`).
    pub warmup_total: Option<f64>,
    /// Warmup-phase timeslices, sorted by start.
    pub warmup_slices: Arc<[Slice]>,
    /// The CSV export's `total` of the same series, when the run has both exports.
    pub csv_total: Option<f64>,
}

impl SeriesEvidence {
    pub fn warmup_total(&self) -> Option<f64> {
        self.rare.as_ref().and_then(|r| r.warmup_total)
    }

    pub fn warmup_slices(&self) -> &[Slice] {
        self.rare.as_ref().map_or(&[], |r| &r.warmup_slices)
    }

    pub fn csv_total(&self) -> Option<f64> {
        self.rare.as_ref().and_then(|r| r.csv_total)
    }

    /// The rare evidence, made empty on first use.
    pub(super) fn rare_mut(&mut self) -> &mut RareEvidence {
        self.rare.get_or_insert_with(Box::default)
    }
}

/// Key of one series. Ordered by endpoint URL, spelling, then labels.
#[derive(Debug, Clone)]
pub struct SeriesKey {
    /// Shared by every series of the endpoint (see [`share_name`]): a many-endpoint run has
    /// ~100k keys, and a copy each was most of the evidence's memory.
    pub endpoint_url: Arc<str>,
    /// Shared like `endpoint_url`.
    pub spelling: Arc<str>,
    /// Shared by every series with the same label set (see `Evidence::intern`).
    pub labels: Arc<Labels>,
}

/// One shared part of two keys: the same copy is equal without a look at its contents (keys
/// share their parts, so most parts compared are one copy).
fn part_cmp<T: Ord + ?Sized>(a: &Arc<T>, b: &Arc<T>) -> std::cmp::Ordering {
    if Arc::ptr_eq(a, b) {
        std::cmp::Ordering::Equal
    } else {
        (**a).cmp(&**b)
    }
}

fn part_eq<T: PartialEq + ?Sized>(a: &Arc<T>, b: &Arc<T>) -> bool {
    Arc::ptr_eq(a, b) || **a == **b
}

impl PartialEq for SeriesKey {
    fn eq(&self, other: &Self) -> bool {
        part_eq(&self.endpoint_url, &other.endpoint_url)
            && part_eq(&self.spelling, &other.spelling)
            && part_eq(&self.labels, &other.labels)
    }
}

impl Eq for SeriesKey {}

impl Ord for SeriesKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        part_cmp(&self.endpoint_url, &other.endpoint_url)
            .then_with(|| part_cmp(&self.spelling, &other.spelling))
            .then_with(|| part_cmp(&self.labels, &other.labels))
    }
}

impl PartialOrd for SeriesKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A family as seen on one endpoint. (Which spellings it came under is in the series keys:
/// a set per endpoint and family here cost more than the rest of a many-endpoint CSV.)
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FamilyInfo {
    pub metric_type: Option<MetricType>,
}

/// The families of one endpoint (see [`Evidence::families`]).
pub type FamilyMap = BTreeMap<Arc<str>, FamilyInfo>;

/// The label sets of one endpoint (see [`Evidence::label_sets`]): sorted, each once. A
/// vector, not an ordered set: every source gives an endpoint's sets sorted already (an
/// export's and a CSV's are gathered and sorted, a fold's come by rank), so they are taken
/// as they are or merged in one pass; a B-tree built one set at a time cost a search per set
/// and an allocation per eleven (8.6 % of accounting a capture of 50,000 series).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSets(Vec<Arc<Labels>>);

impl LabelSets {
    /// `sets` as a set (sorted and deduplicated unless they are already).
    pub fn of(mut sets: Vec<Arc<Labels>>) -> Self {
        if !sets.is_sorted_by(|a, b| a < b) {
            sets = sorted_unique(sets);
        }
        LabelSets(sets)
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Arc<Labels>> {
        self.0.iter()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The union of `self` and `other`, or `None` when `other` adds nothing.
    fn union(&self, other: &LabelSets) -> Option<LabelSets> {
        let out = sorted_union(self.iter(), other.iter());
        (out.len() > self.len()).then_some(LabelSets(out))
    }
}

impl<'a> IntoIterator for &'a LabelSets {
    type Item = &'a Arc<Labels>;
    type IntoIter = std::slice::Iter<'a, Arc<Labels>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Label sets gathered per endpoint (by the address of its shared URL, see [`share_name`]),
/// noted once all are there. Noted one by one in the order an export lists them, each took up
/// to a dozen comparisons per level of the endpoint's B-tree; sorted first and noted largest
/// first, each takes one (a node is searched from its smallest key).
#[derive(Default)]
struct GatheredSets {
    at: AddressMap,
    of: Vec<(Arc<str>, Vec<Arc<Labels>>)>,
}

impl GatheredSets {
    fn add(&mut self, endpoint: &Arc<str>, labels: &Arc<Labels>) {
        let address = Arc::as_ptr(endpoint) as *const u8 as usize;
        let i = match self.at.get(&address) {
            Some(&i) => i as usize,
            None => {
                let i = self.of.len();
                self.at
                    .insert(address, u32::try_from(i).unwrap_or(u32::MAX));
                self.of.push((Arc::clone(endpoint), Vec::new()));
                i
            }
        };
        if let Some((_, sets)) = self.of.get_mut(i) {
            // A family after the first mostly repeats the sets of the one before.
            if !sets.last().is_some_and(|l| Arc::ptr_eq(l, labels)) {
                sets.push(Arc::clone(labels));
            }
        }
    }
}

/// `sets` in order, each once.
fn sorted_unique(mut sets: Vec<Arc<Labels>>) -> Vec<Arc<Labels>> {
    crate::sort::sort_by(&mut sets, |a, b| {
        if Arc::ptr_eq(a, b) {
            std::cmp::Ordering::Equal
        } else {
            a.cmp(b)
        }
    });
    sets.dedup_by(|a, b| Arc::ptr_eq(a, b) || a == b);
    sets
}

/// Per endpoint values (in endpoint order) made one shared copy where an endpoint's equals
/// the one before it's: a run of many endpoints of one deployment repeats the same families
/// and label sets on each.
pub(super) fn share_equal<T: PartialEq>(per_endpoint: &mut BTreeMap<Arc<str>, Arc<T>>) {
    let mut last = None;
    for v in per_endpoint.values_mut() {
        share_last(&mut last, v);
    }
}

/// `v` made a copy of `last` when equal to it, else the new `last` (see [`share_equal`]; the
/// CSV intake shares as it takes each endpoint, so the repeats never pile up).
pub(super) fn share_last<T: PartialEq>(last: &mut Option<Arc<T>>, v: &mut Arc<T>) {
    match last {
        Some(l) if Arc::ptr_eq(l, v) || **l == **v => *v = Arc::clone(l),
        _ => *last = Some(Arc::clone(v)),
    }
}

/// Coverage of one endpoint's sampling (from `endpoint_info`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Coverage {
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
}

/// All evidence of a run, by series. The per-endpoint maps are keyed by the URL's one shared
/// copy, the one the endpoint's series keys hold (not a `String` each: a many-endpoint CSV
/// kept four copies of every URL, and stages that walk the endpoints find each one's entries
/// by the copy's address instead of comparing its cold bytes).
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    pub series: SeriesMap<SeriesEvidence>,
    /// Per endpoint: canonical family key (shared, see [`share_name`]: ~20 on each of many
    /// endpoints) → what is known about it. Endpoints with the same families share one map
    /// (see [`share_equal`]): a map each was a sixth of a many-endpoint CSV's memory.
    pub families: BTreeMap<Arc<str>, Arc<FamilyMap>>,
    /// Gauge values per series: (avg, max) from stats or from samples.
    pub gauges: SeriesMap<StatPair>,
    /// Histogram (count, sum) per series over the profiling phase.
    pub histograms: SeriesMap<StatPair>,
    pub coverage: BTreeMap<Arc<str>, Coverage>,
    /// Which export supplied stats: `json`, `csv`, or none.
    pub stats_source: Option<&'static str>,
    /// Per endpoint: end of the earliest slice in which any counter series moved.
    pub first_mass_end: BTreeMap<Arc<str>, u64>,
    /// Per endpoint: `process_start_time_seconds` (min, max) over the profiling export.
    pub process_start_stats: BTreeMap<Arc<str>, (f64, f64)>,
    /// Per endpoint: raw `process_start_time_seconds` samples (epoch ns, value).
    pub process_start_samples: BTreeMap<Arc<str>, Vec<(u64, f64)>>,
    /// Per endpoint: every label set seen on it, timed or not (roles are read from labels).
    /// Shared like `families`.
    pub label_sets: BTreeMap<Arc<str>, Arc<LabelSets>>,
    /// Every endpoint the run names: in exports, `endpoint_info`, or any scrape.
    pub endpoints: BTreeSet<Arc<str>>,
    /// Endpoints seen only through captures without a time.
    pub untimed_endpoints: BTreeSet<Arc<str>>,
    /// Families an export repeated with identical content, merged by the reader.
    pub merged_duplicates: Vec<String>,
    /// Some evidence was thinned to fit the memory budget (see [`ScrapeFold::coarsen`]):
    /// accounting notes `evidence_coarsened`.
    pub coarsened: bool,
    /// Every distinct label set, kept once: a run of many endpoints repeats the same few
    /// sets on each (see [`Evidence::intern_shared`]). Looked up by hash: by order, each
    /// lookup compared whole label maps a dozen times (62 % of accounting a CSV of 20,000
    /// label sets). SipHash: the sets come from uploads.
    interned: DigestSet<Arc<Labels>>,
    /// Every distinct endpoint URL and family spelling of the keys, kept once.
    names: BTreeSet<Arc<str>>,
}

/// The one shared copy in `names` of `name`, made on first sight.
pub(super) fn share_name(names: &mut BTreeSet<Arc<str>>, name: &str) -> Arc<str> {
    if let Some(n) = names.get(name) {
        return Arc::clone(n);
    }
    let n: Arc<str> = Arc::from(name);
    names.insert(Arc::clone(&n));
    n
}

/// The process collector's start time: a change means the process restarted.
pub const PROCESS_START: &str = "process_start_time_seconds";

/// A counter series' slices with a `total`, sorted by (start, end) (equal keys in file
/// order). The read's list is shared when it is already in order (as AIPerf writes it):
/// accounting then keeps no copy of it.
fn slices_of(s: &LeanSeries) -> Arc<[Slice]> {
    let key = |c: &Slice| (c.start_ns, c.end_ns);
    if s.counter_slices.is_sorted_by_key(key) {
        return Arc::clone(&s.counter_slices);
    }
    let mut v = s.counter_slices.to_vec();
    v.sort_by_key(key);
    v.into()
}

impl Evidence {
    /// The one shared copy of a label set, kept as it is when new: keys and label sets hold
    /// it, not a copy each.
    pub(super) fn intern_shared(&mut self, labels: &Arc<Labels>) -> Arc<Labels> {
        if let Some(l) = self.interned.get(labels) {
            return Arc::clone(l);
        }
        self.interned.insert(Arc::clone(labels));
        Arc::clone(labels)
    }

    /// Add label sets to an endpoint's, its sets found once (a scrape fold notes many
    /// endpoints' sets at once). Largest first is fastest (see [`GatheredSets`]). The sets
    /// are then shared with `last` when equal (see [`share_last`]).
    pub(super) fn note_label_sets(
        &mut self,
        endpoint: &Arc<str>,
        labels: LabelSets,
        last: &mut Option<Arc<LabelSets>>,
    ) {
        if labels.is_empty() {
            return;
        }
        let sets = match self.label_sets.get_mut(endpoint) {
            Some(sets) => sets,
            None => self.label_sets.entry(Arc::clone(endpoint)).or_default(),
        };
        if sets.is_empty() {
            *sets = Arc::new(labels);
        } else if let Some(union) = sets.union(&labels) {
            // A shared copy is replaced only when the endpoint has sets it lacks.
            *sets = Arc::new(union);
        }
        share_last(last, sets);
    }

    pub(super) fn note_family(
        &mut self,
        endpoint: &Arc<str>,
        spelling: &str,
        t: Option<MetricType>,
    ) {
        let canonical = canonical_family(spelling);
        let families = std::iter::once((canonical.as_str(), t));
        self.note_canonical_families(endpoint, families, &mut None);
    }

    /// [`Evidence::note_family`] for each of an endpoint's families in order, given by their
    /// canonical keys (a scrape fold makes each key once, not once per endpoint), the
    /// endpoint's map found once. A key's type is the first given that is not unknown. The
    /// map is then shared with `last` when equal (see [`share_last`]).
    pub(super) fn note_canonical_families<'a>(
        &mut self,
        endpoint: &Arc<str>,
        families: impl Iterator<Item = (&'a str, Option<MetricType>)>,
        last: &mut Option<Arc<FamilyMap>>,
    ) {
        let mut families = families.peekable();
        if families.peek().is_none() {
            return;
        }
        let shared = match self.families.get_mut(endpoint) {
            Some(f) => f,
            None => self.families.entry(Arc::clone(endpoint)).or_default(),
        };
        let map = Arc::make_mut(shared);
        for (canonical, t) in families {
            let info = match map.get_mut(canonical) {
                Some(info) => info,
                None => map
                    .entry(share_name(&mut self.names, canonical))
                    .or_default(),
            };
            if info.metric_type.is_none() || info.metric_type == Some(MetricType::Unknown) {
                info.metric_type = t.or(info.metric_type);
            }
        }
        share_last(last, shared);
    }

    /// Some series of family `f` (its name and type), in file order.
    fn add_export_series(
        &mut self,
        f: (&str, MetricType),
        series: &[LeanSeries],
        warmup: bool,
        phase_scoped: bool,
        sets: &mut GatheredSets,
    ) {
        let (name, metric_type) = f;
        let spelling = share_name(&mut self.names, name);
        // The series of one endpoint mostly come together, with one copy of its URL (the
        // reader shares it): the family is noted, and the URL's shared copy found, once per
        // run of them, not per series.
        let mut last: Option<(&Arc<str>, Arc<str>)> = None;
        for s in series {
            let endpoint_url = match &last {
                Some((read, shared)) if Arc::ptr_eq(read, &s.endpoint_url) => Arc::clone(shared),
                _ => {
                    let shared = share_name(&mut self.names, &s.endpoint_url);
                    self.note_family(&shared, name, Some(metric_type));
                    last = Some((&s.endpoint_url, Arc::clone(&shared)));
                    shared
                }
            };
            let key = SeriesKey {
                endpoint_url,
                spelling: Arc::clone(&spelling),
                labels: self.intern_shared(&s.labels),
            };
            sets.add(&key.endpoint_url, &key.labels);
            match metric_type {
                MetricType::Counter => {
                    let e = self.series.entry(key);
                    e.phase_scoped |= phase_scoped;
                    if warmup {
                        let rare = e.rare_mut();
                        rare.warmup_total = s.value(CsvSeries::TOTAL);
                        rare.warmup_slices = slices_of(s);
                    } else {
                        e.stats_total = OptF64::new(s.value(CsvSeries::TOTAL));
                        e.slices = slices_of(s);
                    }
                }
                MetricType::Gauge | MetricType::Unknown if !warmup => {
                    let (lo, hi) = (s.value(CsvSeries::MIN), s.value(CsvSeries::MAX));
                    if name == PROCESS_START {
                        if let (Some(lo), Some(hi)) = (lo, hi) {
                            self.process_start_stats
                                .insert(Arc::clone(&key.endpoint_url), (lo, hi));
                        }
                    }
                    self.gauges
                        .insert(key, StatPair::new(s.value(CsvSeries::AVG), hi));
                }
                MetricType::Histogram if !warmup => {
                    let (count, sum) = (s.value(CsvSeries::COUNT), s.value(CsvSeries::SUM));
                    self.histograms.insert(key, StatPair::new(count, sum));
                }
                _ => {}
            }
        }
    }

    /// Add an export's families, given apart from it (taken out of it, each is dropped once
    /// its series are evidence).
    fn add_export(
        &mut self,
        export: &ServerMetricsExport,
        families: ExportFamilies<'_>,
        source: &'static str,
    ) {
        let phase_scoped = export.metrics_phase.is_some();
        // Room for the profile's series at once: a vector grown by doubling is copied each
        // time, and in WASM the old and new copies are both in linear memory for a moment.
        let of_type = |t: MetricType| -> usize {
            let families = families.metrics.as_slice().iter();
            let families = families.filter(|f| f.metric_type == t);
            families.map(|f| f.series.len() + f.lean_series.len()).sum()
        };
        let (counters, gauges) = (
            of_type(MetricType::Counter),
            of_type(MetricType::Gauge) + of_type(MetricType::Unknown),
        );
        let histograms = of_type(MetricType::Histogram);
        if !admit_tables(counters, gauges + histograms) {
            return;
        }
        self.series.reserve(counters);
        self.gauges.reserve(gauges);
        self.histograms.reserve(histograms);
        let mut sets = GatheredSets::default();
        let ExportFamilies { metrics, warmup } = families;
        metrics.each_series(|f, s| self.add_export_series(f, s, false, phase_scoped, &mut sets));
        warmup.each_series(|f, s| self.add_export_series(f, s, true, phase_scoped, &mut sets));
        // Endpoints of one deployment have the same sets: shared as they are noted.
        let mut last = None;
        for (endpoint, gathered) in sets.of {
            self.note_label_sets(&endpoint, LabelSets::of(gathered), &mut last);
        }
        for (url, info) in &export.summary.endpoint_info {
            let url = share_name(&mut self.names, url);
            self.endpoints.insert(Arc::clone(&url));
            let c = self.coverage.entry(url).or_default();
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
    collect_with(run, ScrapeFold::new())
}

/// [`collect`] with scrapes already folded as they were read (the streaming API's JSONL):
/// the run's own scrapes are folded into `fold` too, so the evidence is the same whichever
/// way a scrape came.
pub fn collect_with(run: &Run, fold: ScrapeFold) -> Evidence {
    let json = run.server_json.as_ref().map(|j| ExportFamilies {
        metrics: Parts::Borrowed(&j.metrics),
        warmup: Parts::Borrowed(&j.warmup_metrics),
    });
    collect_from(run, fold, json, Parts::Borrowed(&run.scrapes))
}

/// [`collect_with`] that takes what only the evidence reads out of the run: the JSON export's
/// families and the scrapes, each dropped once it is evidence. The export model of 80,000
/// series (208 B each) and a capture's samples and table were held beside the evidence
/// through the later stages' peak.
pub fn collect_taking(run: &mut Run, fold: ScrapeFold) -> Evidence {
    let scrapes = std::mem::take(&mut run.scrapes);
    let json = run.server_json.as_mut().map(|j| ExportFamilies {
        metrics: Parts::Owned(std::mem::take(&mut j.metrics)),
        warmup: Parts::Owned(std::mem::take(&mut j.warmup_metrics)),
    });
    collect_from(run, fold, json, Parts::Owned(scrapes))
}

/// Parts of a run the evidence is made from: borrowed, or taken out of the run. One type for
/// both, so the code that reads them is compiled once (a generic copy of each was .wasm
/// bytes).
enum Parts<'a, T> {
    Borrowed(&'a [T]),
    Owned(Vec<T>),
}

impl<T> Parts<'_, T> {
    fn as_slice(&self) -> &[T] {
        match self {
            Parts::Borrowed(s) => s,
            Parts::Owned(v) => v,
        }
    }

    /// `f` of each part in order; an owned part is dropped once `f` has read it.
    fn each(self, mut f: impl FnMut(&T)) {
        match self {
            Parts::Borrowed(s) => s.iter().for_each(f),
            Parts::Owned(v) => v.into_iter().for_each(|x| f(&x)),
        }
    }
}

/// A family's piece of more series than this is given to the evidence a quarter at a time
/// when it is taken, and a full read's series are made lean this many at a time (see
/// [`Parts::each_series`]).
const SHED_SERIES_FROM: usize = 4096;

impl Parts<'_, Family> {
    /// `f` of each family's series in order (the family's name and type, then some of its
    /// series as a lean read keeps them), a family at a time, a piece at a time; a full read's
    /// series are made lean first, [`SHED_SERIES_FROM`] at a time. A taken family's pieces are
    /// dropped as they are given, and a piece of many series is given a quarter at a time,
    /// each quarter dropped and the piece shrunk before the next: the whole family beside all
    /// of its evidence was the peak of an export of 80,000 label sets. Moving the rest down
    /// costs 1.5 copies of the piece.
    fn each_series(self, mut f: impl FnMut((&str, MetricType), &[LeanSeries])) {
        match self {
            Parts::Borrowed(families) => {
                for fam in families {
                    let name_type = (fam.name.as_str(), fam.metric_type);
                    fam.lean_series.pieces().for_each(|p| f(name_type, p));
                    made_lean(&fam.series, |s| f(name_type, s));
                }
            }
            Parts::Owned(families) => {
                for fam in families {
                    let name_type = (fam.name.as_str(), fam.metric_type);
                    for mut piece in fam.lean_series.into_pieces() {
                        let step = if piece.len() > SHED_SERIES_FROM {
                            piece.len().div_ceil(4)
                        } else {
                            piece.len()
                        };
                        while !piece.is_empty() {
                            let k = step.min(piece.len());
                            f(name_type, piece.get(..k).unwrap_or(&[]));
                            piece.drain(..k);
                            piece.shrink_to_fit();
                        }
                    }
                    made_lean(&fam.series, |s| f(name_type, s));
                }
            }
        }
    }
}

/// `f` of a full read's series made lean, [`SHED_SERIES_FROM`] at a time.
fn made_lean(full: &[Series], mut f: impl FnMut(&[LeanSeries])) {
    for some in full.chunks(SHED_SERIES_FROM) {
        f(&some.iter().map(LeanSeries::of).collect::<Vec<_>>());
    }
}

/// An export's families (profiling phase, warmup phase).
struct ExportFamilies<'a> {
    metrics: Parts<'a, Family>,
    warmup: Parts<'a, Family>,
}

fn collect_from<'a>(
    run: &Run,
    mut fold: ScrapeFold,
    json: Option<ExportFamilies<'a>>,
    scrapes: Parts<'a, Scrape>,
) -> Evidence {
    let mut ev = Evidence::default();
    if let (Some(j), Some(families)) = (&run.server_json, json) {
        ev.add_export(j, families, "json");
        if let Some(c) = &run.server_csv {
            ev.add_csv_totals(c);
        }
    } else if let Some(c) = &run.server_csv {
        ev.add_csv(c);
    }
    fold_run_scrapes(&mut fold, scrapes, &run.scrape_files);
    fold.into_evidence(&mut ev);
    ev.series.settle();
    ev.gauges.settle();
    ev.histograms.settle();
    for (key, e) in ev.series.iter() {
        if let Some(s) = e.slices.iter().find(|s| s.total > 0.0) {
            let slot = ev
                .first_mass_end
                .entry(Arc::clone(&key.endpoint_url))
                .or_insert(s.end_ns);
            *slot = (*slot).min(s.end_ns);
        }
    }
    share_equal(&mut ev.families);
    share_equal(&mut ev.label_sets);
    let named = sorted_union(ev.families.keys(), ev.label_sets.keys());
    super::lookup::insert_sorted_set(&mut ev.endpoints, named);
    ev
}

/// The items of two sorted sequences, each once, sorted.
fn sorted_union<'a, T: Ord + ?Sized + 'a>(
    a: impl Iterator<Item = &'a Arc<T>>,
    b: impl Iterator<Item = &'a Arc<T>>,
) -> Vec<Arc<T>> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    let mut out = Vec::new();
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x < y => a.next(),
            (Some(x), Some(y)) if x > y => b.next(),
            (Some(_), Some(_)) => {
                b.next();
                a.next()
            }
            (Some(_), None) => a.next(),
            (None, _) => b.next(),
        };
        match next {
            Some(s) => out.push(Arc::clone(s)),
            None => return out,
        }
    }
}

/// Whether the evidence's tables may take `series` counters and `stats` gauges or histograms
/// more (see [`crate::admission`]).
fn admit_tables(series: usize, stats: usize) -> bool {
    crate::admission::admit(
        series
            .saturating_mul(std::mem::size_of::<(SeriesKey, SeriesEvidence)>())
            .saturating_add(stats.saturating_mul(std::mem::size_of::<(SeriesKey, StatPair)>())),
    )
}

/// Fold the run's scrapes (sorted by endpoint, then time, then file) with their files.
fn fold_run_scrapes(fold: &mut ScrapeFold, scrapes: Parts<'_, Scrape>, files: &[String]) {
    // A file is told by its series table, which its scrapes share and no other file's do:
    // two files of one name (the JS API takes any names) are two sources. Told by name, the
    // second's series were taken by the first's table numbers, another series' under each.
    let mut sources = AddressMap::default();
    let mut n = 0usize;
    fold.expect_series(series_expected(scrapes.as_slice()));
    scrapes.each(|scrape| {
        if !fold.admit(scrape) {
            return;
        }
        let file = files.get(n).map_or("", String::as_str);
        let table = Arc::as_ptr(&scrape.table) as usize;
        let source = match sources.get(&table) {
            Some(s) => *s,
            None => {
                let s = fold.source(file);
                sources.insert(table, s);
                s
            }
        };
        fold.take(source, n as u64, scrape, &scrape.table);
        n += 1;
    });
}

/// The series `scrapes` (in endpoint order) are expected to name: each endpoint's largest
/// scrape's samples (its scrapes mostly name the same series), every endpoint together.
fn series_expected(scrapes: &[Scrape]) -> usize {
    scrapes
        .chunk_by(|a, b| a.endpoint_url == b.endpoint_url)
        .map(|one| one.iter().map(|s| s.samples.len()).max().unwrap_or(0))
        .fold(0, usize::saturating_add)
}

/// What the evidence itself says about how it was read: exports' repeated families merged
/// (`duplicate_family_merged`), samples thinned to fit the memory budget
/// (`evidence_coarsened`) and endpoints seen only in untimed captures (`untimed_capture`).
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
    if ev.coarsened {
        reasons.push(Reason::new(
            ReasonCode::EvidenceCoarsened,
            "raw samples were thinned, or counter timeslices dropped, to fit the memory budget: every bound still contains the truth, but may be wider than the full evidence gives",
        ));
    }
    for url in &ev.untimed_endpoints {
        reasons.push(
            Reason::new(
                ReasonCode::UntimedCapture,
                "seen only in a capture without a time: its labels decide roles and engine, its values bound nothing",
            )
            .at(&**url),
        );
    }
}

// 64-bit targets: the sizes below count pointers of eight bytes.
#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::*;

    /// An endpoint's label sets gathered in any order, repeated as one copy or as equal
    /// copies, make the set an insert of each would.
    #[test]
    fn gathered_label_sets_are_the_set_of_them() {
        let set = |i: u32| {
            Arc::new(Labels::from([
                ("engine", format!("{}", i * 7 % 23)),
                ("m", "x".into()),
            ]))
        };
        let one = set(3);
        let mut gathered = GatheredSets::default();
        let (a, b): (Arc<str>, Arc<str>) = (Arc::from("http://a"), Arc::from("http://b"));
        let mut by_insert: BTreeMap<&str, BTreeSet<Arc<Labels>>> = BTreeMap::new();
        for i in 0..100u32 {
            let (url, l) = match i % 4 {
                0 => (&a, Arc::clone(&one)),
                1 => (&b, set(i)),
                _ => (&a, set(i / 2)),
            };
            gathered.add(url, &l);
            by_insert
                .entry(if Arc::ptr_eq(url, &a) {
                    "http://a"
                } else {
                    "http://b"
                })
                .or_default()
                .insert(l);
        }
        assert_eq!(gathered.of.len(), 2);
        for (url, sets) in gathered.of {
            let built = LabelSets::of(sets.clone());
            let want = by_insert.get(&*url).map(|s| s.iter().collect::<Vec<_>>());
            assert_eq!(Some(built.iter().collect::<Vec<_>>()), want, "{url}");
            let unique = sorted_unique(sets);
            assert!(unique.windows(2).all(|w| w[0] < w[1]), "{url}");
        }
    }

    #[test]
    fn files_of_one_name_are_two_sources() -> Result<(), crate::error::ReadError> {
        use crate::read::filter::FamilyFilter;
        use crate::read::prometheus_text::read_prometheus_text;
        use crate::read::run::CaptureMeta;
        let capture = |t: u64, rows: &[(&str, u32)]| {
            let mut text = String::from("# TYPE vllm:prompt_tokens_total counter\n");
            for (r, v) in rows {
                text += &format!("vllm:prompt_tokens_total{{r=\"{r}\"}} {v}\n");
            }
            let meta = CaptureMeta {
                endpoint_url: Some("http://e:8000/metrics".into()),
                timestamp_ns: Some(t),
            };
            read_prometheus_text("c.prom", text.as_bytes(), &meta, &FamilyFilter::all())
        };
        let scrapes = vec![
            capture(1_000, &[("1", 5), ("2", 7)])?,
            capture(2_000, &[("3", 1), ("1", 9)])?,
        ];
        let series = |names: [&str; 2]| {
            let mut fold = ScrapeFold::new();
            let files = names.map(String::from);
            fold_run_scrapes(&mut fold, Parts::Borrowed(&scrapes), &files);
            let mut ev = Evidence::default();
            fold.into_evidence(&mut ev);
            ev.series.settle();
            let out: Vec<(String, Vec<(u64, f64)>)> = ev
                .series
                .iter()
                .map(|(k, e)| {
                    (
                        k.labels.get("r").unwrap_or("").to_string(),
                        e.samples.to_vec(),
                    )
                })
                .collect();
            out
        };
        let apart = series(["a/c.prom", "b/c.prom"]);
        assert_eq!(
            apart,
            vec![
                ("1".to_string(), vec![(1_000, 5.0), (2_000, 9.0)]),
                ("2".to_string(), vec![(1_000, 7.0)]),
                ("3".to_string(), vec![(1_000, 0.0), (2_000, 1.0)]),
            ]
        );
        assert_eq!(series(["c.prom", "c.prom"]), apart);
        // Expected: the endpoint's largest scrape (two series), then a second endpoint's one.
        assert_eq!(series_expected(&scrapes), 2);
        let mut other = capture(3_000, &[("9", 1)])?;
        other.endpoint_url = "http://f:8000/metrics".into();
        let more = [scrapes[0].clone(), scrapes[1].clone(), other];
        assert_eq!(series_expected(&more), 3);
        assert_eq!(series_expected(&[]), 0);
        Ok(())
    }

    #[test]
    fn label_sets_noted_twice_are_their_union() {
        let set = |i: u32| Arc::new(Labels::from([("rank", format!("{i:03}"))]));
        let mut ev = Evidence::default();
        let url: Arc<str> = Arc::from("http://a");
        let mut last = None;
        // Out of order and repeated: taken sorted, each once.
        ev.note_label_sets(
            &url,
            LabelSets::of(vec![set(5), set(1), set(5), set(9)]),
            &mut last,
        );
        let first = Arc::clone(&ev.label_sets[&url]);
        // Nothing new: the same shared copy stays.
        ev.note_label_sets(&url, LabelSets::of(vec![set(1), set(9)]), &mut last);
        assert!(Arc::ptr_eq(&first, &ev.label_sets[&url]));
        ev.note_label_sets(
            &url,
            LabelSets::of(vec![set(0), set(5), set(7), set(12)]),
            &mut last,
        );
        let got: Vec<&str> = ev.label_sets[&url]
            .iter()
            .filter_map(|l| l.get("rank"))
            .collect();
        assert_eq!(got, ["000", "001", "005", "007", "009", "012"]);
        // An empty list notes nothing.
        ev.note_label_sets(&Arc::from("http://b"), LabelSets::default(), &mut last);
        assert!(!ev.label_sets.contains_key("http://b"));
    }

    /// What a many-series run keeps per series: a counter's evidence, a gauge's or
    /// histogram's two stats, a lean CSV row. (A series' evidence is 56 bytes natively, 32 in
    /// WASM: its samples are two words, so that a lone sample needs no 88-byte state.)
    #[test]
    fn per_series_evidence_stays_small() {
        assert_eq!(std::mem::size_of::<SeriesEvidence>(), 56);
        assert_eq!(std::mem::size_of::<StatPair>(), 16);
        assert_eq!(
            std::mem::size_of::<crate::model::server_metrics::CsvSeries>(),
            40
        );
    }
}
